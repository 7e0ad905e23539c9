//! `sojourn agent` (serve the shares coordinators post in a shared results
//! store) and `sojourn agents list|stop`. What an agent does is the
//! session's (`sojourn_session::agent`); this is its command line.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sojourn_core::executor::StopHandle;
use sojourn_session::agent::{serve, AgentOptions};
use sojourn_session::{watch_ctrl_c, Places};
use sojourn_store::Store;

use crate::cli::{AgentArgs, AgentsArgs, AgentsCommand};

pub fn main(a: AgentArgs) -> Result<ExitCode> {
    let places = Places::new(a.data_dir);
    let idle_timeout = match a.idle_timeout {
        Some(s) if !(s > 0.0 && s.is_finite()) => {
            bail!("--idle-timeout {s}: expected a number of seconds above 0")
        }
        s => s.map(Duration::from_secs_f64),
    };
    let opts = AgentOptions {
        spool_dirs: places.spool_dirs(&a.results),
        results: a.results,
        name: a.name.unwrap_or_else(sojourn_store::host_name),
        idle_timeout,
        watch: crate::progress::metrics(&a.metrics)?
            .map(|m| Box::new(crate::metrics::Only(m)) as Box<dyn sojourn_session::Show>),
    };
    let stop = StopHandle::new();
    watch_ctrl_c(stop.clone());
    serve(&opts, stop)?;
    Ok(ExitCode::SUCCESS)
}

pub fn agents(a: AgentsArgs) -> Result<ExitCode> {
    let url = a
        .results
        .context("name the shared results store: --results postgres://... (or $SOJOURN_RESULTS)")?;
    let store = Store::open(&url)?;
    store.require_shared()?;
    match a.command {
        AgentsCommand::List => {
            let agents = store.agents()?;
            println!(
                "{:<24} {:<24} {:<10} {:>5} {:<8} {:>10} {:>12}",
                "NAME", "HOST", "VERSION", "CORES", "STATE", "HEARTBEAT", "CLOCK"
            );
            for ag in &agents {
                println!(
                    "{:<24} {:<24} {:<10} {:>5} {:<8} {:>8.1} s {:>12}",
                    ag.name,
                    ag.host,
                    ag.version,
                    ag.cores,
                    ag.state,
                    ag.heartbeat_age_s,
                    ag.clock_offset_us
                        .map_or("-".to_string(), |o| format!("{:+.2} ms", o / 1e3))
                );
            }
            if agents.is_empty() {
                eprintln!("no agent is registered in {}", store.location());
            }
        }
        AgentsCommand::Stop { name, all } => {
            let asked = store.request_agents_stop(if all { None } else { name.as_deref() })?;
            if asked == 0 {
                bail!(
                    "no agent named {} in {}; `sojourn agents list` shows them",
                    name.unwrap_or_default(),
                    store.location()
                );
            }
            eprintln!(
                "asked {asked} agent{} to exit once its share is done",
                if asked == 1 { "" } else { "s" }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
