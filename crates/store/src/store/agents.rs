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

use super::*;

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

    /// Post a phase and its shares, for agents to claim.
    pub fn post_phase(&self, p: &PostedPhase<'_>) -> Result<(), StoreError> {
        self.require_shared()?;
        self.write(
            || format!("posting phase {}", p.id),
            |db| {
                db.exec(
                    &format!(
                        "INSERT INTO agent_phases (id, created_unix, coordinator, version, run_uri, \
                         stage_index, phase, shares, state, heartbeat_unix, stop_requested) \
                         VALUES (?, {NOW}, ?, ?, ?, ?, ?, ?, 'posted', {NOW}, 0)"
                    ),
                    &[
                        text(p.id),
                        text(p.coordinator),
                        text(p.version),
                        text(p.run_uri),
                        int(u64::from(p.stage_index)),
                        text(p.phase),
                        int(p.specs.len() as u64),
                    ],
                )?;
                for (i, spec) in p.specs.iter().enumerate() {
                    db.exec(
                        "INSERT INTO agent_shares (phase_id, share_index, spec, state) \
                         VALUES (?, ?, ?, 'posted')",
                        &[text(p.id), int(i as u64), text(spec)],
                    )?;
                }
                Ok(())
            },
        )
    }

    /// Claim the oldest share of a posted phase of `a`'s version that `a`
    /// holds no share of, if there is one.
    pub fn claim_share(&self, a: &AgentInfo) -> Result<Option<ClaimedShare>, StoreError> {
        // Idle agents ask often: a read first, so that asking costs the
        // store no write transaction while nothing is posted.
        let posted = self.read(
            || "looking for posted shares".into(),
            "SELECT 1 FROM agent_shares WHERE state = 'posted' LIMIT 1",
            &[],
        )?;
        if posted.rows.is_empty() {
            return Ok(None);
        }
        let r = self.write(
            || format!("agent {} claiming a share", a.name),
            |db| {
                db.query(
                    &format!(
                        "UPDATE agent_shares SET state = 'claimed', agent = ?, incarnation = ?, \
                         claimed_unix = {NOW} \
                         WHERE (phase_id, share_index) = ( \
                             SELECT s.phase_id, s.share_index FROM agent_shares s \
                             JOIN agent_phases p ON p.id = s.phase_id \
                             WHERE s.state = 'posted' AND p.state = 'posted' AND p.version = ? \
                             AND NOT EXISTS (SELECT 1 FROM agent_shares o \
                                 WHERE o.phase_id = s.phase_id AND o.agent = ?) \
                             ORDER BY p.created_unix, s.share_index LIMIT 1 \
                             FOR UPDATE OF s SKIP LOCKED) \
                         RETURNING phase_id, share_index, spec, \
                             (SELECT shares FROM agent_phases WHERE id = phase_id)"
                    ),
                    &[
                        text(&a.name),
                        text(&a.incarnation),
                        text(&a.version),
                        text(&a.name),
                    ],
                )
            },
        )?;
        Ok(r.rows.first().map(|row| ClaimedShare {
            phase_id: opt_text(&row[0]).unwrap_or_default(),
            index: as_u64(&row[1]) as u32,
            spec: opt_text(&row[2]).unwrap_or_default(),
            shares: as_u64(&row[3]) as u32,
        }))
    }

    /// Phases posted by a coordinator of another version than `version`
    /// and still waiting: `(phase id, its version)`, for the agent to say
    /// why it does not take them.
    pub fn foreign_phases(&self, version: &str) -> Result<Vec<(String, String)>, StoreError> {
        let r = self.read(
            || "looking for phases of other versions".into(),
            "SELECT id, version FROM agent_phases WHERE state = 'posted' AND version <> ?",
            &[text(version)],
        )?;
        Ok(r.rows
            .iter()
            .map(|row| {
                (
                    opt_text(&row[0]).unwrap_or_default(),
                    opt_text(&row[1]).unwrap_or_default(),
                )
            })
            .collect())
    }

    /// Share 0's setup of the database is done (`ready`), or why not.
    pub fn report_setup(&self, phase: &str, setup: &str) -> Result<(), StoreError> {
        self.write(
            || format!("reporting the setup of phase {phase}"),
            |db| {
                db.exec(
                    "UPDATE agent_phases SET setup = ? WHERE id = ?",
                    &[text(setup), text(phase)],
                )
            },
        )?;
        Ok(())
    }

    /// Move the share from `from` to `to` for the incarnation that holds
    /// it, with the columns `set` (and their values) besides; whether it
    /// was still there to move (a share the coordinator gave up on is not).
    fn move_share(
        &self,
        (phase, index, incarnation): (&str, u32, &str),
        from: &[ShareState],
        to: ShareState,
        set: &str,
        values: &[Value],
    ) -> Result<bool, StoreError> {
        let states: Vec<String> = from.iter().map(|s| format!("'{}'", s.as_str())).collect();
        let mut params = vec![text(to.as_str())];
        params.extend_from_slice(values);
        params.extend([text(phase), int(u64::from(index)), text(incarnation)]);
        let changed = self.write(
            || format!("share {index} of phase {phase}: {}", to.as_str()),
            |db| {
                db.exec(
                    &format!(
                        "UPDATE agent_shares SET state = ?{set} \
                         WHERE phase_id = ? AND share_index = ? AND incarnation = ? \
                         AND state IN ({})",
                        states.join(", ")
                    ),
                    &params,
                )
            },
        )?;
        Ok(changed == 1)
    }

    /// The share's connections are open: it waits for the common start.
    pub fn share_ready(
        &self,
        phase: &str,
        index: u32,
        incarnation: &str,
    ) -> Result<bool, StoreError> {
        self.move_share(
            (phase, index, incarnation),
            &[ShareState::Claimed],
            ShareState::Ready,
            &format!(", ready_unix = {NOW}"),
            &[],
        )
    }

    /// The share's run began.
    pub fn share_running(
        &self,
        phase: &str,
        index: u32,
        incarnation: &str,
    ) -> Result<bool, StoreError> {
        self.move_share(
            (phase, index, incarnation),
            &[ShareState::Ready],
            ShareState::Running,
            "",
            &[],
        )
    }

    /// The share recorded its run.
    pub fn share_done(
        &self,
        phase: &str,
        index: u32,
        incarnation: &str,
        report: &ShareReport<'_>,
    ) -> Result<bool, StoreError> {
        self.move_share(
            (phase, index, incarnation),
            &[ShareState::Claimed, ShareState::Ready, ShareState::Running],
            ShareState::Done,
            &format!(
                ", done_unix = {NOW}, run_id = ?, \
                 start_lateness_us = CAST(? AS DOUBLE PRECISION), \
                 clock_offset_us = CAST(? AS DOUBLE PRECISION)"
            ),
            &[
                text(report.run_id),
                report.start_lateness_us.map_or(Value::Null, Value::Real),
                report.clock_offset_us.map_or(Value::Null, Value::Real),
            ],
        )
    }

    /// The share failed, and why.
    pub fn share_failed(
        &self,
        phase: &str,
        index: u32,
        incarnation: &str,
        error: &str,
    ) -> Result<bool, StoreError> {
        self.move_share(
            (phase, index, incarnation),
            &[ShareState::Claimed, ShareState::Ready, ShareState::Running],
            ShareState::Failed,
            &format!(", done_unix = {NOW}, error = ?"),
            &[text(error)],
        )
    }

    /// The coordinator gives up on a share whose agent went silent (or
    /// that no agent claimed): `lost` if an agent held it, `cancelled`
    /// if none did. Whether it was still open.
    pub fn give_up_share(&self, phase: &str, index: u32, why: &str) -> Result<bool, StoreError> {
        let changed = self.write(
            || format!("giving up share {index} of phase {phase}"),
            |db| {
                db.exec(
                    &format!(
                        "UPDATE agent_shares SET \
                         state = CASE WHEN state = 'posted' THEN 'cancelled' ELSE 'lost' END, \
                         done_unix = {NOW}, error = ? \
                         WHERE phase_id = ? AND share_index = ? \
                         AND state IN ('posted', 'claimed', 'ready', 'running')"
                    ),
                    &[text(why), text(phase), int(u64::from(index))],
                )
            },
        )?;
        Ok(changed == 1)
    }

    /// What an agent at the phase's gate, or running its share, needs.
    pub fn phase_signal(&self, phase: &str) -> Result<PhaseSignal, StoreError> {
        let r = self.read(
            || format!("reading phase {phase}"),
            &format!(
                "SELECT state, setup, start_unix, stop_requested, {NOW} - heartbeat_unix \
                 FROM agent_phases WHERE id = ?"
            ),
            &[text(phase)],
        )?;
        let row = r
            .rows
            .first()
            .ok_or_else(|| self.corrupt(phase, "no such phase"))?;
        Ok(PhaseSignal {
            state: opt_text(&row[0]).unwrap_or_default(),
            setup: opt_text(&row[1]),
            start_unix: as_f64(&row[2]),
            stop_requested: as_u64(&row[3]) != 0,
            coordinator_age_s: as_f64(&row[4]).unwrap_or(f64::INFINITY),
        })
    }

    /// Every share of the phase, with its agent's liveness.
    pub fn phase_shares(&self, phase: &str) -> Result<Vec<ShareView>, StoreError> {
        let r = self.read(
            || format!("reading the shares of phase {phase}"),
            &format!(
                "SELECT s.share_index, s.state, s.agent, {NOW} - a.heartbeat_unix, s.run_id, \
                 s.error, s.clock_offset_us, s.start_lateness_us \
                 FROM agent_shares s LEFT JOIN agents a \
                 ON a.name = s.agent AND a.incarnation = s.incarnation \
                 WHERE s.phase_id = ? ORDER BY s.share_index"
            ),
            &[text(phase)],
        )?;
        Ok(r.rows
            .iter()
            .map(|row| ShareView {
                index: as_u64(&row[0]) as u32,
                state: row[1]
                    .as_text()
                    .and_then(ShareState::parse)
                    .unwrap_or(ShareState::Failed),
                agent: opt_text(&row[2]),
                agent_age_s: as_f64(&row[3]),
                run_id: opt_text(&row[4]),
                error: opt_text(&row[5]),
                clock_offset_us: as_f64(&row[6]),
                start_lateness_us: as_f64(&row[7]),
            })
            .collect())
    }

    /// The coordinator is alive.
    pub fn phase_heartbeat(&self, phase: &str) -> Result<(), StoreError> {
        self.write(
            || format!("heartbeat of phase {phase}"),
            |db| {
                db.exec(
                    &format!("UPDATE agent_phases SET heartbeat_unix = {NOW} WHERE id = ?"),
                    &[text(phase)],
                )
            },
        )?;
        Ok(())
    }

    /// Every share is ready: start the phase `lead_s` seconds from now on
    /// the store server's clock. Returns the start.
    pub fn start_phase(&self, phase: &str, lead_s: f64) -> Result<f64, StoreError> {
        self.write(
            || format!("starting phase {phase}"),
            |db| {
                db.exec(
                    &format!(
                        "UPDATE agent_phases SET state = 'running', \
                         start_unix = {NOW} + CAST(? AS DOUBLE PRECISION) WHERE id = ?"
                    ),
                    &[Value::Real(lead_s), text(phase)],
                )
            },
        )?;
        self.phase_signal(phase)?
            .start_unix
            .ok_or_else(|| self.corrupt(phase, "no start after starting it"))
    }

    /// Ask the phase's agents to stop (Ctrl+C at the coordinator).
    pub fn stop_phase(&self, phase: &str) -> Result<(), StoreError> {
        self.write(
            || format!("stopping phase {phase}"),
            |db| {
                db.exec(
                    "UPDATE agent_phases SET stop_requested = 1 WHERE id = ?",
                    &[text(phase)],
                )
            },
        )?;
        Ok(())
    }

    /// The phase is over: `done`, `failed` or `cancelled`, with what is
    /// missing from it, if anything.
    pub fn end_phase(
        &self,
        phase: &str,
        state: &str,
        missing: Option<&str>,
    ) -> Result<(), StoreError> {
        self.write(
            || format!("ending phase {phase}"),
            |db| {
                db.exec(
                    "UPDATE agent_phases SET state = ?, missing = ? WHERE id = ?",
                    &[text(state), missing.map_or(Value::Null, text), text(phase)],
                )
            },
        )?;
        Ok(())
    }

    /// An agent saw the coordinator go silent: the phase failed (once;
    /// whoever sees it first says so).
    pub fn abandon_phase(&self, phase: &str, why: &str) -> Result<(), StoreError> {
        self.write(
            || format!("abandoning phase {phase}"),
            |db| {
                db.exec(
                    "UPDATE agent_phases SET state = 'failed', missing = COALESCE(missing, ?) \
                     WHERE id = ? AND state IN ('posted', 'running')",
                    &[text(why), text(phase)],
                )
            },
        )?;
        Ok(())
    }
}
