//! LIOPS as one of the plan's workload kinds: the [`Liops`] capability
//! that ties the settings to the step, its [`Kind`] settings, the tables
//! it sets up, and the steps it builds for a phase.

use super::config::LoopIn;
use super::config::{LiopsConfig, LIOPS_PROPERTIES};
use super::worker::{LiopsShared, LiopsWorker, ServerRun};
use crate::backend::Backend;
use crate::backend::{BackendError, BackendResult, Schema};
use crate::properties::{Properties, PropertyError};
use crate::run_record::RunRecord;
use crate::workload::capability::{Capability, Support};
use crate::workload::config::CoreConfig;
use crate::workload::kind::{Kind, Settled};
use crate::workload::kind::{Opens, Readied, Readying};
use crate::workload::phase::Phase;
use crate::workload::steps::Loaded;

/// The LIOPS workload's capability: a backend that runs it implements
/// [`Runs<Liops>`](crate::workload::capability::Runs) for its tables (and the index a load builds after
/// the data, in `finish_load`) and
/// [`LiopsConnection`](super::connection::LiopsConnection) for its
/// connections.
pub struct Liops;

impl Capability for Liops {
    type Config = LiopsConfig;
    type Step = LiopsWorker;
    const REFUSAL: &'static str = "does not run the LIOPS workload (workload=liops); it runs on \
         PostgreSQL (postgres://) and MySQL/MariaDB (mysql://)";
}

/// A backend's LIOPS support (see [`Support`]).
pub type LiopsSupport<B> = Support<B, Liops>;

impl Kind for LiopsConfig {
    const NAME: &'static str = "liops";
    const TITLE: &'static str = "the LIOPS workload";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = LIOPS_PROPERTIES;

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        LiopsConfig::from_properties(p)
    }

    fn records(&self) -> Option<u64> {
        Some(self.scale)
    }

    /// PGIO's sessions, NUM_THREADS per table, in both phases (so `bench`
    /// keeps one pool of connections).
    fn connections(&self) -> Option<u64> {
        Some(self.run_sessions() as u64)
    }

    fn run_time(&self, phase: Phase) -> Option<f64> {
        self.run_time.filter(|_| phase == Phase::Run)
    }

    fn load_operations(&self, _core: &CoreConfig) -> Option<u64> {
        Some(self.load_batches())
    }

    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        match s.phase {
            Phase::Load if !self.create_base_table => Err(s.props.invalid(
                "CREATE_BASE_TABLE",
                format!(
                    "asks PGIO's setup to reuse its seed table (pgio_base), which sojourn does \
                     not keep: each load writes {} table(s) itself. Set it to TRUE or leave it \
                     out to load; to use tables already loaded, run without loading (`sojourn \
                     run`)",
                    self.schemas
                ),
            )),
            Phase::Load => Ok(()),
            Phase::Run => self.check_server_loop(s.props, s.rate_key),
        }
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        self.schema()
    }

    fn what(&self, _schema: &Schema) -> String {
        format!("LIOPS table {}", self.table(1))
    }

    fn data_shape(&self) -> &'static str {
        "SCALE and NUM_SCHEMAS, loaded once: `sojourn load --drop` loads it again from scratch"
    }

    fn one_client_only(&self, _phase: Phase) -> Option<&'static str> {
        Some("the LIOPS workload runs from one client machine (NUM_SCHEMAS x NUM_THREADS sessions)")
    }

    /// The tables have no unique key (as PGIO's have none), so a second
    /// load would add a second copy: a load starts from empty tables.
    fn load_appends(&self) -> bool {
        true
    }

    /// Each load operation is a batch of rows.
    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: self.rows_in_batches(done),
            unit: "rows",
            batches: Some(done),
        }
    }

    async fn is_empty<B: Backend>(&self, backend: &B, _: &Schema) -> BackendResult<Option<bool>> {
        LiopsSupport::of(backend)?.is_empty(backend, self).await
    }

    async fn prepare<B: Backend>(&self, backend: &B, _: &Schema, drop: bool) -> BackendResult<()> {
        LiopsSupport::of(backend)?
            .prepare(backend, self, drop)
            .await
    }

    /// The index is built after the data, as PGIO does: faster, and a
    /// compact btree.
    fn after_load(&self) -> Option<String> {
        Some(format!(
            "building the index on mykey of {} table(s) and analyzing them",
            self.schemas
        ))
    }

    async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        LiopsSupport::of(backend)?.finish_load(backend, self).await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        // PGIO measures what a fixed set of sessions achieves back to
        // back; its setup (tables, index) is not the core workload's.
        Some(
            "for workload=liops, run `sojourn run` with more NUM_SCHEMAS or NUM_THREADS, or \
             with --target N",
        )
    }

    fn run_lines(&self, run: &RunRecord) -> String {
        crate::output::liops::LiopsFigures::of(self, run).text()
    }

    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (phase, cfg, backend) = (at.phase, at.cfg, at.backend);
        let support = LiopsSupport::of(backend)?;
        let seed = cfg.seed;
        // The seed fixes the load order and each session's ranges.
        let server = (phase == Phase::Run && self.loop_in == LoopIn::Server).then(|| ServerRun {
            duration: cfg.max_execution_time,
            warmup: cfg.warmup,
            operation_count: cfg.operation_count(),
        });
        let shared = match server {
            Some(run) => LiopsShared::with_server_loop(self.clone(), seed, run),
            None => LiopsShared::new(self.clone(), seed),
        };
        let steps = (0..cfg.workers())
            .map(|i| shared.worker(phase, seed, i))
            .collect();
        let mut cfg = cfg.clone();
        if server.is_some() {
            // Each session takes its one step, whatever the count: the
            // count is the loops' to keep (shared out above).
            for g in &mut cfg.groups {
                g.operation_count = None;
            }
        }
        Ok(support.phase(steps, cfg))
    }
}
