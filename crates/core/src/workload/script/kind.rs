//! Scripts as one of the plan's workload kinds: the [`Script`] capability
//! that pgbench's scripts and TPC-C share, the step a script run takes
//! ([`SqlStep`]), its [`Kind`] settings and the steps it builds for a phase.

use super::config::{ScriptConfig, DEFINE_PREFIX, FILE_PREFIX, SCRIPT_PROPERTIES};
use super::connection::ScriptConnection;
use super::tables::Tables;
use super::tables::ACCOUNTS;
use super::worker::{ScriptWorker, Shared};
use crate::backend::{Backend, BackendError, BackendResult, Schema};
use crate::properties::{Properties, PropertyError};
use crate::workload::capability::{Capability, Support};
use crate::workload::config::CoreConfig;
use crate::workload::kind::{Kind, Settled};
use crate::workload::kind::{Opens, Readied, Readying};
use crate::workload::phase::Phase;
use crate::workload::steps::Loaded;
use std::sync::Arc;

/// The capability of the workloads written in SQL: a backend that runs
/// them implements [`Runs<Script>`](crate::workload::capability::Runs) (running the
/// setup SQL of [`SqlTables`](super::tables::SqlTables) in its dialect) and
/// [`ScriptConnection`](super::connection::ScriptConnection).
/// pgbench's scripts and TPC-C both run through it, so that a database
/// runs SQL text and grows nothing for either.
pub struct Script;

impl Capability for Script {
    type Config = Tables;
    type Step = SqlStep;
    const REFUSAL: &'static str =
        "does not run SQL workloads (pgbench's scripts, TPC-C); they run on PostgreSQL \
         (postgres://), MySQL and MariaDB (mysql://) and SQLite (sqlite:)";
}

/// One connection's steps of a workload written in SQL.
pub enum SqlStep {
    Script(ScriptWorker),
    Tpcc(crate::workload::tpcc::TpccWorker),
}

impl<C: ScriptConnection> crate::executor::Step<C> for SqlStep {
    async fn step(&mut self, conn: &mut C, meter: &mut crate::executor::Meter) {
        match self {
            SqlStep::Script(w) => w.step(conn, meter).await,
            SqlStep::Tpcc(w) => w.step(conn, meter).await,
        }
    }
}

/// A backend's script support (see [`Support`]).
pub type ScriptSupport<B> = Support<B, Script>;

impl Kind for ScriptConfig {
    const NAME: &'static str = "script";
    const TITLE: &'static str = "pgbench-style scripts";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = SCRIPT_PROPERTIES;
    const PREFIXES: &'static [&'static str] = &[DEFINE_PREFIX, FILE_PREFIX];

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        ScriptConfig::from_properties(p)
    }

    /// pgbench's accounts at the scale given.
    fn records(&self) -> Option<u64> {
        Some(self.scale.unwrap_or(1) as u64 * ACCOUNTS)
    }

    /// A second load would find pgbench's tables there: a load starts
    /// from none (`--drop`), as `pgbench -i` drops them first.
    fn load_appends(&self) -> bool {
        true
    }

    /// A load makes pgbench's tables: one operation per unit of scale
    /// (100,000 accounts each).
    fn load_operations(&self, _core: &CoreConfig) -> Option<u64> {
        Some(self.scale.unwrap_or(1) as u64)
    }

    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        if s.phase == Phase::Load && !self.builtins_only() {
            return Err(s.props.invalid(
                "script",
                "names a script of your own, whose tables are your own: load them yourself \
                 (sojourn loads pgbench's tables for its builtins: -b tpcb-like --scale N), \
                 then `sojourn run`",
            ));
        }
        Ok(())
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        Schema {
            table: "pgbench_accounts".into(),
            field_names: Vec::new(),
            more_tables: vec![
                "pgbench_branches".into(),
                "pgbench_tellers".into(),
                "pgbench_history".into(),
            ],
        }
    }

    fn what(&self, _schema: &Schema) -> String {
        "pgbench's tables (pgbench_accounts, ...)".into()
    }

    fn data_shape(&self) -> &'static str {
        "the scale (-s / --scale) for pgbench's builtins; a script's own tables for its own"
    }

    fn one_client_only(&self, phase: Phase) -> Option<&'static str> {
        (phase == Phase::Load)
            .then_some("a script's load (pgbench's tables) runs from one client machine")
    }

    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: done * ACCOUNTS,
            unit: "accounts",
            batches: Some(done),
        }
    }

    async fn is_empty<B: Backend>(&self, backend: &B, _: &Schema) -> BackendResult<Option<bool>> {
        let support = ScriptSupport::of(backend)?;
        if !self.builtins_only() {
            // A script's own tables are its own: nothing to look at.
            return Ok(None);
        }
        support.is_empty(backend, &self.tables()).await
    }

    async fn prepare<B: Backend>(&self, backend: &B, _: &Schema, drop: bool) -> BackendResult<()> {
        ScriptSupport::of(backend)?
            .prepare(backend, &self.tables(), drop)
            .await
    }

    fn after_load(&self) -> Option<String> {
        Some("adding pgbench's primary keys and analyzing the tables".into())
    }

    async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        ScriptSupport::of(backend)?
            .finish_load(backend, &self.tables())
            .await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        None
    }

    fn share_properties(&self, index: u32, _n: u32, connections: u64) -> Vec<(String, String)> {
        vec![(
            "script.client_offset".into(),
            (self.client_offset + u64::from(index) * connections).to_string(),
        )]
    }

    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (phase, cfg, backend) = (at.phase, at.cfg, at.backend);
        let support = ScriptSupport::of(backend)?;
        // pgbench's builtins run at the scale the tables were loaded at.
        let scale = match (self.scale, phase, self.builtins_only()) {
            (Some(s), _, _) => s,
            (None, Phase::Run, true) => support
                .records(backend, &self.tables())
                .await?
                .map_or(1, |n| n as i64),
            (None, _, _) => 1,
        };
        let mut narration = super::narrate::Narration::new(&self.compiled, scale);
        narration.retries = self.max_tries != 1;
        narration.latency_limit = self.latency_limit.is_some();
        if self.vacuum && phase == Phase::Run {
            narration.vacuum = Some(
                support
                    .before_run(backend, &self.tables())
                    .await
                    .map_err(|e| e.to_string()),
            );
        }
        let shared = Arc::new(Shared::new(self, scale, cfg.seed, cfg.workers()));
        let steps = (0..cfg.workers())
            .map(|i| SqlStep::Script(ScriptWorker::new(&shared, phase, i)))
            .collect();
        Ok(support.narrated_phase(steps, cfg.clone(), Arc::new(narration)))
    }
}

/// The label a script run keeps its scale in.
pub const SCALE_LABEL: &str = "pgbench_scale";
