//! A phase run by agents on many machines, seen from the command that
//! coordinates it: its shares posted in the results store (PostgreSQL, the
//! only meeting point), claimed by agents, started at one instant once
//! every agent is connected, watched through heartbeats, and its runs
//! merged exactly. What an agent does with its share is [`crate::agent`].
//!
//! Failure semantics:
//! - An agent is alive while it heartbeats ([`HEARTBEAT`]); one silent for
//!   [`DEAD_AFTER`] while it holds a share has lost it: the share is given
//!   up, its run (if it began) marked failed, and the merged stage is
//!   partial, naming it. A share is never run twice: a restarted agent finds
//!   its share lost, and a run of a lost share that reaches the store later
//!   (from a spool) counts once, as any client's run does.
//! - Too few agents: the phase waits for every share to be claimed and
//!   connected, as long as something changes within the wait; then it is
//!   cancelled, before anything ran, naming who answered and who did not.
//! - A coordinator that goes silent for [`COORDINATOR_SILENT`]: its agents
//!   stop their shares and fail the phase.
//! - Ctrl+C at the coordinator stops every agent's share (kept as
//!   interrupted); a second quits the coordinator at once.
//! - Setup (table checks, creating or emptying tables) is done once, by the
//!   agent holding share 0, before any share connects: the coordinator may
//!   not reach the database at all.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use sojourn_core::executor::StopHandle;
use sojourn_core::workload::Phase;
use sojourn_store::{PostedPhase, RunId, RunRecord, RunStatus, ShareState, ShareView, Store};

use crate::share::ShareSpec;
use crate::Show;

/// How often agents and coordinators say they are alive.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// An agent silent this long has lost the share it holds.
pub const DEAD_AFTER: Duration = Duration::from_secs(10);
/// A coordinator silent this long has gone: its agents stop.
pub const COORDINATOR_SILENT: Duration = Duration::from_secs(30);
/// How far ahead of now the common start is set once every share is
/// ready: time for every agent's next look at the phase (they look every
/// [`GATE_POLL`]) over a store a few milliseconds away.
pub const START_LEAD: Duration = Duration::from_millis(1000);
/// How often an agent at the gate looks for the start.
pub const GATE_POLL: Duration = Duration::from_millis(50);

/// The database setup the agent of share 0 does before any share
/// connects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Setup {
    /// A load: create the tables (emptied first with `drop`); with
    /// `skip_if_data` (`bench`), skip the load when they hold data.
    Load { drop: bool, skip_if_data: bool },
    /// A run: refuse empty tables.
    Run,
}

/// What a coordinator posts for each agent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentShare {
    pub share: ShareSpec,
    /// Share 0's setup of the database.
    #[serde(default)]
    pub setup: Option<Setup>,
    /// The only share of a complete load builds what the workload builds
    /// once its data is in (LIOPS's index) after its run.
    #[serde(default)]
    pub finish_load: bool,
}

/// What setup said, as the store keeps it.
pub const SETUP_READY: &str = "ready";
pub const SETUP_SKIPPED: &str = "skipped: ";
pub const SETUP_FAILED: &str = "failed: ";

/// A phase to post: one share per agent.
pub struct Posting {
    pub run_uri: String,
    pub stage_index: u32,
    pub phase: Phase,
    pub shares: Vec<AgentShare>,
}

/// What the agents did.
pub struct Gathered {
    /// Every share at its end (clock offsets, lateness, why one failed).
    pub shares: Vec<ShareView>,
    /// The runs of the shares that recorded one, in share order.
    pub runs: Vec<RunRecord>,
    /// Those runs merged exactly; `None` when no share recorded a run.
    pub merged: Option<RunRecord>,
    /// Each share without a run, and why.
    pub missing: Vec<String>,
    /// Setup skipped the phase (`bench` on tables that hold data): why.
    pub skipped: Option<String>,
}

/// The command that coordinates: posts, waits, starts, watches, merges.
pub struct Coordinator<'a> {
    /// The shared store (PostgreSQL).
    pub store: &'a Store,
    /// How long to wait for the agents with nothing changing.
    pub wait: Duration,
    pub stop: &'a StopHandle,
    pub show: &'a dyn Show,
}

impl Coordinator<'_> {
    /// Run `p` on the agents and gather what they did.
    pub fn run(&self, p: &Posting) -> Result<Gathered> {
        let store = self.store;
        store.require_shared()?;
        let specs = p
            .shares
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<_>, _>>()?;
        let id = sojourn_store::new_run_id();
        let coordinator = format!("{} pid {}", sojourn_store::host_name(), std::process::id());
        let n = p.shares.len();
        store.post_phase(&PostedPhase {
            id: &id,
            coordinator: &coordinator,
            version: env!("CARGO_PKG_VERSION"),
            run_uri: &p.run_uri,
            stage_index: p.stage_index,
            phase: p.phase.name(),
            specs: &specs,
        })?;
        self.show.note(&format!(
            "{}: posted {n} share{} in {} (run URI {}); waiting for {n} agent{}",
            p.phase.name(),
            if n == 1 { "" } else { "s" },
            store.location(),
            p.run_uri,
            if n == 1 { "" } else { "s" },
        ));
        match self.start(&id, n)? {
            Started::Running => {}
            Started::Skipped(why) => {
                return Ok(Gathered {
                    shares: store.phase_shares(&id)?,
                    runs: Vec::new(),
                    merged: None,
                    missing: Vec::new(),
                    skipped: Some(why),
                })
            }
        }
        let shares = self.watch(&id, p)?;
        self.gather(&id, p, shares)
    }

    /// Wait until every share is ready, then set the common start; or
    /// cancel the phase, saying why.
    fn start(&self, id: &str, n: usize) -> Result<Started> {
        let store = self.store;
        let mut progress = Instant::now();
        let mut seen: Vec<(ShareState, Option<String>)> = Vec::new();
        let mut beat = Instant::now();
        loop {
            if beat.elapsed() >= HEARTBEAT {
                store.phase_heartbeat(id)?;
                beat = Instant::now();
            }
            let signal = store.phase_signal(id)?;
            let shares = store.phase_shares(id)?;
            let now: Vec<(ShareState, Option<String>)> =
                shares.iter().map(|s| (s.state, s.agent.clone())).collect();
            if now != seen {
                // Said when a share first has an agent, whatever state it
                // reached since the last look: an agent that claims and
                // connects within one look is never seen `claimed`. Shares
                // are numbered from 0, as the agents' logs number them.
                for s in &shares {
                    let before = seen.get(s.index as usize).and_then(|x| x.1.as_deref());
                    if let Some(agent) = s.agent.as_deref().filter(|a| before != Some(*a)) {
                        self.show.note(&format!(
                            "share {} of {n} claimed by agent {agent}",
                            s.index
                        ));
                    }
                }
                seen = now;
                progress = Instant::now();
            }
            match signal.setup.as_deref() {
                Some(s) if s.starts_with(SETUP_FAILED) => {
                    self.cancel(id, &shares, "its setup failed")?;
                    bail!(
                        "setting up the database (share 0's agent) {}",
                        &s[SETUP_FAILED.len()..]
                    );
                }
                Some(s) if s.starts_with(SETUP_SKIPPED) => {
                    self.cancel(id, &shares, "its setup skipped it")?;
                    return Ok(Started::Skipped(s[SETUP_SKIPPED.len()..].to_string()));
                }
                _ => {}
            }
            if let Some(s) = shares.iter().find(|s| s.state.ended()) {
                self.cancel(id, &shares, "a share failed before the start")?;
                bail!(
                    "share {} (agent {}) failed before the start: {}; nothing ran",
                    s.index,
                    s.agent.as_deref().unwrap_or("?"),
                    s.error.as_deref().unwrap_or("no reason given")
                );
            }
            if let Some(s) = shares.iter().find(|s| s.state.held() && silent(s)) {
                self.cancel(id, &shares, "an agent went silent before the start")?;
                bail!(
                    "agent {} claimed share {} and went silent before the start; nothing ran",
                    s.agent.as_deref().unwrap_or("?"),
                    s.index
                );
            }
            if shares.iter().all(|s| s.state == ShareState::Ready) {
                let start = store.start_phase(id, START_LEAD.as_secs_f64())?;
                self.show.note(&format!(
                    "all {n} agents connected; starting at {:.3} on the store's clock ({:.1} s from now)",
                    start,
                    START_LEAD.as_secs_f64()
                ));
                return Ok(Started::Running);
            }
            if self.stop.is_stopped() {
                self.cancel(id, &shares, "interrupted before the start")?;
                bail!("interrupted before the start; nothing ran");
            }
            if progress.elapsed() > self.wait {
                self.cancel(id, &shares, "too few agents")?;
                bail!("{}", self.too_few(&shares)?);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Why the agents did not all answer, for the error.
    fn too_few(&self, shares: &[ShareView]) -> Result<String> {
        let n = shares.len();
        let answered: Vec<String> = shares
            .iter()
            .filter_map(|s| {
                s.agent
                    .as_ref()
                    .map(|a| format!("{a} (share {}, {})", s.index, s.state.as_str()))
            })
            .collect();
        let version = env!("CARGO_PKG_VERSION");
        let mut others = Vec::new();
        for a in self.store.agents()? {
            if shares.iter().any(|s| s.agent.as_deref() == Some(&a.name)) {
                continue;
            }
            let why = if a.state == sojourn_store::AGENT_GONE {
                "exited".to_string()
            } else if a.version != version {
                format!("runs sojourn {}, not {version}", a.version)
            } else if a.heartbeat_age_s > DEAD_AFTER.as_secs_f64() {
                format!("silent for {:.0} s", a.heartbeat_age_s)
            } else {
                format!("alive but {}", a.state)
            };
            others.push(format!("{} ({why})", a.name));
        }
        Ok(format!(
            "{n} agent{} were asked for and {} answered within {:.0} s{}{}; nothing ran. \
             Start more agents (`sojourn agent --results ...`, or scale the agents' StatefulSet), \
             or ask for fewer with --agents",
            if n == 1 { "" } else { "s" },
            answered.len(),
            self.wait.as_secs_f64(),
            if answered.is_empty() {
                String::new()
            } else {
                format!(": {}", answered.join(", "))
            },
            if others.is_empty() {
                "; no other agent is registered in the store".to_string()
            } else {
                format!("; other agents in the store: {}", others.join(", "))
            }
        ))
    }

    /// Give up every open share of a phase that never started.
    fn cancel(&self, id: &str, shares: &[ShareView], why: &str) -> Result<()> {
        for s in shares.iter().filter(|s| !s.state.ended()) {
            self.store.give_up_share(id, s.index, why)?;
        }
        self.store.end_phase(id, "cancelled", Some(why))?;
        Ok(())
    }

    /// Watch the running phase until every share has ended: heartbeat,
    /// pass Ctrl+C on, give up shares whose agents went silent.
    fn watch(&self, id: &str, p: &Posting) -> Result<Vec<ShareView>> {
        let store = self.store;
        let mut stopping = false;
        let mut beat = Instant::now();
        loop {
            if beat.elapsed() >= HEARTBEAT {
                store.phase_heartbeat(id)?;
                beat = Instant::now();
            }
            if self.stop.is_stopped() && !stopping {
                store.stop_phase(id)?;
                stopping = true;
                self.show
                    .note("asked every agent to stop; waiting for their runs to drain");
            }
            let shares = store.phase_shares(id)?;
            for s in shares.iter().filter(|s| s.state.held() && silent(s)) {
                let agent = s.agent.as_deref().unwrap_or("?");
                let why = format!(
                    "agent {agent} went silent (no heartbeat for {:.0} s)",
                    s.agent_age_s.unwrap_or(f64::INFINITY)
                );
                if store.give_up_share(id, s.index, &why)? {
                    self.show
                        .note(&format!("share {}: {why}; giving it up", s.index));
                    store.fail_client_runs(
                        &p.run_uri,
                        p.phase.name(),
                        p.stage_index,
                        s.index,
                        &why,
                    )?;
                }
            }
            if shares.iter().all(|s| s.state.ended()) {
                return Ok(shares);
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Merge the runs the shares recorded and keep the stage whole (or
    /// partial, saying what is missing).
    fn gather(&self, id: &str, p: &Posting, shares: Vec<ShareView>) -> Result<Gathered> {
        let store = self.store;
        let n = shares.len() as u64;
        let mut runs = Vec::new();
        let mut ids = Vec::new();
        let mut missing = Vec::new();
        for s in &shares {
            match (&s.state, &s.run_id) {
                (ShareState::Done, Some(run)) => {
                    let r = store.load(run)?;
                    ids.push(RunId(run.clone()));
                    runs.push(r);
                }
                _ => missing.push(format!(
                    "client {} of {n} (agent {}): {}{}",
                    s.index,
                    s.agent.as_deref().unwrap_or("none"),
                    s.state.as_str(),
                    s.error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                )),
            }
        }
        let said = (!missing.is_empty()).then(|| missing.join("; "));
        let merged = if runs.is_empty() {
            None
        } else {
            store.keep_whole(
                &p.run_uri,
                p.phase.name(),
                u64::from(p.stage_index),
                &ids,
                n,
                said.as_deref(),
            )?;
            let mut whole = sojourn_store::merge(&runs)?;
            if let Some(m) = &said {
                whole.warnings.push(format!("partial run: {m}"));
            }
            Some(whole)
        };
        let state = if missing.is_empty() { "done" } else { "failed" };
        store.end_phase(id, state, said.as_deref())?;
        Ok(Gathered {
            shares,
            runs,
            merged,
            missing,
            skipped: None,
        })
    }
}

enum Started {
    Running,
    Skipped(String),
}

/// Whether a share's agent has been silent past [`DEAD_AFTER`] (or was
/// replaced by a newer incarnation of its name).
fn silent(s: &ShareView) -> bool {
    s.agent_age_s
        .is_none_or(|age| age > DEAD_AFTER.as_secs_f64())
}

/// The clocks of a gathered phase: each agent's offset from the store
/// server's clock and how late its first operation left after the common
/// start, and whether either is large against the run or its intervals.
#[derive(Clone, Debug, PartialEq)]
pub struct Skew {
    /// Largest |offset| of any agent, in seconds.
    pub offset_s: f64,
    /// Largest lateness of any agent's start, in seconds.
    pub lateness_s: f64,
}

impl Skew {
    pub fn of(shares: &[ShareView]) -> Skew {
        let max = |f: &dyn Fn(&ShareView) -> Option<f64>| {
            shares
                .iter()
                .filter_map(f)
                .map(f64::abs)
                .fold(0.0, f64::max)
                / 1e6
        };
        Skew {
            offset_s: max(&|s| s.clock_offset_us),
            lateness_s: max(&|s| s.start_lateness_us),
        }
    }

    /// A warning when the clocks' disagreement is a tenth of an interval
    /// or of the run, or more: intervals merge by wall-clock start, so a
    /// skew that large puts one agent's operations in another's interval.
    pub fn warning(&self, interval: Duration, run: Duration) -> Option<String> {
        let worst = self.offset_s.max(self.lateness_s);
        let bound = interval.min(run).as_secs_f64() / 10.0;
        (worst > bound).then(|| {
            format!(
                "agents' clocks disagree with the store server's by up to {:.1} ms and their \
                 starts were up to {:.1} ms late, over a tenth of the {:.1} s {}: merged \
                 intervals mix operations of neighbouring ones. Keep the agents' clocks \
                 NTP-synchronised (a few ms) or lengthen timeseries.interval",
                self.offset_s * 1e3,
                self.lateness_s * 1e3,
                interval.min(run).as_secs_f64(),
                if interval <= run { "interval" } else { "run" }
            )
        })
    }
}

/// The shares of a gathered phase by agent, for messages.
pub fn agents_of(shares: &[ShareView]) -> BTreeMap<u32, String> {
    shares
        .iter()
        .filter_map(|s| s.agent.clone().map(|a| (s.index, a)))
        .collect()
}

/// Whether every run of the gathered phase completed.
pub fn complete(g: &Gathered) -> bool {
    g.missing.is_empty()
        && g.merged
            .as_ref()
            .is_some_and(|m| m.summary.status == RunStatus::Completed)
}
