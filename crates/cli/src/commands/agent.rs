//! `sojourn agent` (serve the shares coordinators post in a shared results
//! store) and `sojourn agents list|stop`. What an agent does is the
//! session's (`sojourn_session::agent`); this is its command line.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sojourn_core::executor::StopHandle;
use sojourn_session::agent::{serve, AgentOptions};
use sojourn_session::fleet::DEAD_AFTER;
use sojourn_session::{watch_ctrl_c, Places};
use sojourn_store::{AgentStatus, Store, AGENT_GONE};

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
                    ag.state_within(DEAD_AFTER),
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
            let name = name.filter(|_| !all);
            let asked = store.request_agents_stop(name.as_deref(), DEAD_AFTER)?;
            if asked > 0 {
                eprintln!(
                    "asked {asked} {} to exit once {} share is done",
                    if asked == 1 { "agent" } else { "agents" },
                    if asked == 1 { "its" } else { "their" }
                );
                return Ok(ExitCode::SUCCESS);
            }
            // Nothing alive to ask: what is wanted is already so, unless
            // the name is wrong.
            match name {
                None => eprintln!(
                    "no agent is alive in {}: none to ask; `sojourn agents list` shows who was \
                     there",
                    store.location()
                ),
                Some(n) => match store.agents()?.into_iter().find(|a| a.name == n) {
                    Some(a) => eprintln!("agent {n} is gone already ({}): not asked", gone(&a)),
                    None => bail!(
                        "no agent named {n} in {}; `sojourn agents list` shows them",
                        store.location()
                    ),
                },
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How an agent that is not alive went.
fn gone(a: &AgentStatus) -> String {
    if a.state == AGENT_GONE {
        format!("it exited {:.0} s ago", a.heartbeat_age_s)
    } else {
        format!("no heartbeat for {:.0} s", a.heartbeat_age_s)
    }
}
