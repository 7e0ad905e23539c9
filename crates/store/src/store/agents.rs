//! Where agents on many machines meet: a PostgreSQL results store is the
//! queue, the rendezvous and the place the runs go; there is no other
//! channel between a coordinator and its agents.
//!
//! - An agent registers under its name (a pod's name survives a restart,
//!   so each start of it is an *incarnation* of its own) and heartbeats.
//!   Every time here is the store server's clock (`clock_timestamp()`),
//!   so liveness never depends on a machine's own clock, and ages are
//!   computed by the server.
//! - A coordinator posts a phase and its shares (one per agent, each a
//!   spec without secrets), then heartbeats the phase. An agent claims one
//!   share at a time with `FOR UPDATE SKIP LOCKED` (never two of one
//!   phase, never one of another version's phase), says when it is ready
//!   (connected), waits for the common start the coordinator sets once
//!   every share is ready, and reports the run it recorded, or why none.
//! - Stops go through the rows too: a phase's `stop_requested` (the
//!   coordinator's Ctrl+C), an agent's (`sojourn agents stop`).
//! - An agent that exits says so (state `gone`); one that could not (killed,
//!   cut off) is gone once its heartbeat is older than the caller's
//!   liveness limit. Neither is listed as alive nor asked to stop: its row
//!   stays, so that `sojourn agents list` shows who was there and when.
//!
//! States of a share: `posted` → `claimed` → `ready` → `running` → `done`,
//! or `failed` (the agent said why), `lost` (its agent went silent; its
//! run, if any, is failed), `cancelled` (the phase never started). A share
//! is claimed once and never run twice: a restarted agent finds it lost.
//! Only PostgreSQL stores do this ([`Store::require_shared`]).
//!
//! Here: the rows' types and each agent's own row; a phase and its shares
//! are in [`phases`].

use super::*;

mod phases;

/// The store server's clock, in seconds since the epoch.
const NOW: &str = "extract(epoch from clock_timestamp())::float8";

/// Who an agent is.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentInfo {
    /// Its name: `--name`, else the host name (a pod's name).
    pub name: String,
    /// This start of it.
    pub incarnation: String,
    pub host: String,
    pub pid: u32,
    pub cores: u32,
    /// Its sojourn version: a coordinator's phases are claimed only by
    /// agents of its own version.
    pub version: String,
}

/// An agent as the store knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentStatus {
    pub name: String,
    pub incarnation: String,
    pub host: String,
    pub cores: u32,
    pub version: String,
    /// `idle`, `running`, or [`AGENT_GONE`] once it exited; see
    /// [`AgentStatus::state_within`] for one whose heartbeat stopped.
    pub state: String,
    /// Seconds since its last heartbeat, on the store server's clock.
    pub heartbeat_age_s: f64,
    /// Its clock minus the store server's, as it last measured.
    pub clock_offset_us: Option<f64>,
}

/// The state of an agent that exited (or, as [`AgentStatus::state_within`]
/// shows it, stopped heartbeating).
pub const AGENT_GONE: &str = "gone";

impl AgentStatus {
    /// Whether it heartbeats: not exited, and its last heartbeat at most
    /// `alive` old.
    pub fn is_alive(&self, alive: Duration) -> bool {
        self.state != AGENT_GONE && self.heartbeat_age_s <= alive.as_secs_f64()
    }

    /// Its state as it is now: [`AGENT_GONE`] when it is not alive (an agent
    /// killed, or cut off from the store, never said so), else as stored.
    pub fn state_within(&self, alive: Duration) -> &str {
        if self.is_alive(alive) {
            &self.state
        } else {
            AGENT_GONE
        }
    }
}

/// What a heartbeat tells the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    /// `sojourn agents stop` asked it to exit.
    pub stop_requested: bool,
    /// Another process registered under its name since.
    pub replaced: bool,
}

/// A share's state (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareState {
    Posted,
    Claimed,
    Ready,
    Running,
    Done,
    Failed,
    Lost,
    Cancelled,
}

impl ShareState {
    pub const ALL: [ShareState; 8] = [
        ShareState::Posted,
        ShareState::Claimed,
        ShareState::Ready,
        ShareState::Running,
        ShareState::Done,
        ShareState::Failed,
        ShareState::Lost,
        ShareState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ShareState::Posted => "posted",
            ShareState::Claimed => "claimed",
            ShareState::Ready => "ready",
            ShareState::Running => "running",
            ShareState::Done => "done",
            ShareState::Failed => "failed",
            ShareState::Lost => "lost",
            ShareState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<ShareState> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Whether the share will change no more.
    pub fn ended(self) -> bool {
        matches!(
            self,
            ShareState::Done | ShareState::Failed | ShareState::Lost | ShareState::Cancelled
        )
    }

    /// Whether an agent holds it (and must be alive for it to end well).
    pub fn held(self) -> bool {
        matches!(
            self,
            ShareState::Claimed | ShareState::Ready | ShareState::Running
        )
    }
}

/// A phase a coordinator posts: one share spec per agent.
pub struct PostedPhase<'a> {
    pub id: &'a str,
    /// Who posted it, for messages (`host pid`).
    pub coordinator: &'a str,
    pub version: &'a str,
    pub run_uri: &'a str,
    pub stage_index: u32,
    /// `load` or `run`.
    pub phase: &'a str,
    /// Each share's spec (JSON, no secret), in share order.
    pub specs: &'a [String],
}

/// A share an agent claimed.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimedShare {
    pub phase_id: String,
    pub index: u32,
    pub shares: u32,
    pub spec: String,
}

/// What an agent waiting at its phase's gate, or running, needs to know.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseSignal {
    /// `posted`, `running`, `stopping`, `done`, `failed`, `cancelled`.
    pub state: String,
    /// What share 0's setup said: `ready`, `skipped: ...`, `failed: ...`;
    /// `None` until it is done.
    pub setup: Option<String>,
    /// The common start, on the store server's clock.
    pub start_unix: Option<f64>,
    pub stop_requested: bool,
    /// Seconds since the coordinator's last heartbeat.
    pub coordinator_age_s: f64,
}

/// One share as the coordinator watches it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareView {
    pub index: u32,
    pub state: ShareState,
    pub agent: Option<String>,
    /// Seconds since its agent's last heartbeat (the incarnation that
    /// claimed it; `None` once another has replaced it).
    pub agent_age_s: Option<f64>,
    pub run_id: Option<String>,
    pub error: Option<String>,
    pub clock_offset_us: Option<f64>,
    pub start_lateness_us: Option<f64>,
}

/// A share's final report from its agent.
pub struct ShareReport<'a> {
    pub run_id: &'a str,
    /// How late its first operation left after the common start.
    pub start_lateness_us: Option<f64>,
    pub clock_offset_us: Option<f64>,
}

fn opt_text(v: &Value) -> Option<String> {
    v.as_text().map(str::to_string)
}

impl Store {
    /// Agents meet only in a store many machines reach: PostgreSQL.
    pub fn require_shared(&self) -> Result<(), StoreError> {
        if is_postgres(&self.location) {
            Ok(())
        } else {
            Err(StoreError::Location {
                location: self.location.clone(),
                reason: "agents meet through a PostgreSQL results store, which every machine \
                         reaches: give --results postgres://USER@HOST/DB (its password in \
                         $SOJOURN_RESULTS_PASSWORD)"
                    .into(),
            })
        }
    }

    /// The store server's clock, in seconds since the epoch.
    pub fn server_clock(&self) -> Result<f64, StoreError> {
        self.require_shared()?;
        let r = self.read(
            || "reading the store server's clock".into(),
            &format!("SELECT {NOW}"),
            &[],
        )?;
        r.rows
            .first()
            .and_then(|row| as_f64(&row[0]))
            .ok_or_else(|| self.corrupt("-", "no clock reading"))
    }

    /// Register `a` (a new incarnation replaces an older one of its name).
    pub fn register_agent(&self, a: &AgentInfo) -> Result<(), StoreError> {
        self.require_shared()?;
        self.write(
            || format!("registering agent {}", a.name),
            |db| {
                db.exec(
                    &format!(
                        "INSERT INTO agents (name, incarnation, host, pid, cores, version, \
                         started_unix, heartbeat_unix, state, stop_requested) \
                         VALUES (?, ?, ?, ?, ?, ?, {NOW}, {NOW}, 'idle', 0) \
                         ON CONFLICT (name) DO UPDATE SET incarnation = EXCLUDED.incarnation, \
                         host = EXCLUDED.host, pid = EXCLUDED.pid, cores = EXCLUDED.cores, \
                         version = EXCLUDED.version, started_unix = EXCLUDED.started_unix, \
                         heartbeat_unix = EXCLUDED.heartbeat_unix, state = 'idle', \
                         stop_requested = 0, clock_offset_us = NULL"
                    ),
                    &[
                        text(&a.name),
                        text(&a.incarnation),
                        text(&a.host),
                        int(u64::from(a.pid)),
                        int(u64::from(a.cores)),
                        text(&a.version),
                    ],
                )
            },
        )?;
        Ok(())
    }

    /// The agent `a` is alive, in `state`; its clock's offset from the
    /// store server's, when measured.
    pub fn agent_heartbeat(
        &self,
        a: &AgentInfo,
        state: &str,
        clock_offset_us: Option<f64>,
    ) -> Result<Heartbeat, StoreError> {
        let changed = self.write(
            || format!("heartbeat of agent {}", a.name),
            |db| {
                db.exec(
                    &format!(
                        "UPDATE agents SET heartbeat_unix = {NOW}, state = ?, \
                         clock_offset_us = COALESCE(CAST(? AS DOUBLE PRECISION), clock_offset_us) \
                         WHERE name = ? AND incarnation = ?"
                    ),
                    &[
                        text(state),
                        clock_offset_us.map_or(Value::Null, Value::Real),
                        text(&a.name),
                        text(&a.incarnation),
                    ],
                )
            },
        )?;
        if changed == 0 {
            return Ok(Heartbeat {
                stop_requested: false,
                replaced: true,
            });
        }
        let r = self.read(
            || format!("reading agent {}", a.name),
            "SELECT stop_requested FROM agents WHERE name = ?",
            &[text(&a.name)],
        )?;
        Ok(Heartbeat {
            stop_requested: r.rows.first().is_some_and(|row| as_u64(&row[0]) != 0),
            replaced: false,
        })
    }

    /// The agent `a` exits: it is [`AGENT_GONE`] (unless a newer incarnation of
    /// its name has registered since, which stays as it is).
    pub fn agent_gone(&self, a: &AgentInfo) -> Result<(), StoreError> {
        self.require_shared()?;
        self.write(
            || format!("saying agent {} exits", a.name),
            |db| {
                db.exec(
                    "UPDATE agents SET state = ?, stop_requested = 0 \
                     WHERE name = ? AND incarnation = ?",
                    &[text(AGENT_GONE), text(&a.name), text(&a.incarnation)],
                )
            },
        )?;
        Ok(())
    }

    /// Every registered agent, by name.
    pub fn agents(&self) -> Result<Vec<AgentStatus>, StoreError> {
        self.require_shared()?;
        let r = self.read(
            || "listing the agents".into(),
            &format!(
                "SELECT name, incarnation, host, cores, version, state, {NOW} - heartbeat_unix, \
                 clock_offset_us FROM agents ORDER BY name"
            ),
            &[],
        )?;
        Ok(r.rows
            .iter()
            .map(|row| AgentStatus {
                name: opt_text(&row[0]).unwrap_or_default(),
                incarnation: opt_text(&row[1]).unwrap_or_default(),
                host: opt_text(&row[2]).unwrap_or_default(),
                cores: as_u64(&row[3]) as u32,
                version: opt_text(&row[4]).unwrap_or_default(),
                state: opt_text(&row[5]).unwrap_or_default(),
                heartbeat_age_s: as_f64(&row[6]).unwrap_or(f64::INFINITY),
                clock_offset_us: as_f64(&row[7]),
            })
            .collect())
    }

    /// Ask the agent `name` (every agent with `None`) to exit, if it is
    /// alive (see [`AgentStatus::is_alive`]); returns how many were asked.
    /// One that is gone is not asked: it would never read the request, and
    /// counting it would say more agents are stopping than are.
    pub fn request_agents_stop(
        &self,
        name: Option<&str>,
        alive: Duration,
    ) -> Result<u64, StoreError> {
        self.require_shared()?;
        let live = format!("state <> ? AND {NOW} - heartbeat_unix <= CAST(? AS DOUBLE PRECISION)");
        let (gone, limit) = (text(AGENT_GONE), Value::Real(alive.as_secs_f64()));
        self.write(
            || "asking agents to stop".into(),
            |db| match name {
                Some(n) => db.exec(
                    &format!("UPDATE agents SET stop_requested = 1 WHERE {live} AND name = ?"),
                    &[gone.clone(), limit.clone(), text(n)],
                ),
                None => db.exec(
                    &format!("UPDATE agents SET stop_requested = 1 WHERE {live}"),
                    &[gone.clone(), limit.clone()],
                ),
            },
        )
    }
}
