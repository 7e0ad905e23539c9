//! A posted phase and its shares through their lives: posting, claiming,
//! the share's states as its agent reports them, the coordinator's common
//! start, stop and end, and what either side reads of the other.

use super::*;

impl Store {
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
