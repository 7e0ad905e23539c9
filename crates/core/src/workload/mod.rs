//! Workloads: what operations a run performs, and what setting up their
//! data takes. YCSB's core workload is the first; yb-sample-apps' key-value
//! workload runs on YCSB's five operations too, while Noria's vote and
//! PGIO's LIOPS need operations of their own, which each defines as a
//! capability trait that backends implement (see [`vote`], [`liops`]).
//!
//! [`Workload`] is the one type the layers above hold: the plan's choice,
//! with its settings. For a phase on a backend it sets the tables up and
//! builds a [`ReadyPhase`]: the steps, one per connection, already typed
//! for that backend's connections, which the session runs on a pool
//! without knowing which workload they are.

pub mod capability;
pub mod config;
pub mod core;
pub mod keyvalue;
pub mod liops;
pub mod pgio;
pub mod vote;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::backend::{Backend, BackendError, Connection, Schema, Status};
use crate::executor::{
    Connector, Meter, Observer, Pool, Progress, RunConfig, RunOutcome, Step, StopHandle,
};
use crate::properties::Properties;

pub use self::config::{CoreConfig, RequestDistribution};
pub use self::core::{CoreShared, CoreWorker, Phase};
pub use self::keyvalue::{KeyValueConfig, KeyValueShared, KeyValueSupport, KeyValueWorker};
pub use self::liops::{LiopsConfig, LiopsShared, LiopsSupport, LiopsWorker};
pub use self::vote::{VoteConfig, VoteShared, VoteSupport, VoteVariant, VoteWorker};

/// A boxed future, for calls that cross a type erasure (once per setup
/// call or phase, never per operation).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The workload a plan selected, with its settings.
#[derive(Clone, Debug)]
pub enum Workload {
    /// YCSB's CoreWorkload (the default).
    Core(CoreConfig),
    /// yb-sample-apps' key-value workload (`workload=keyvalue`).
    KeyValue(KeyValueConfig),
    /// Noria's vote benchmark (`workload=vote`).
    Vote(VoteConfig),
    /// The PGIO/SLOB method (`workload=liops`).
    Liops(LiopsConfig),
}

/// The name of the workload the `workload` property selects, when it is
/// not YCSB's core one (whose runs are named by their workload files).
pub fn kind_name(p: &Properties) -> Option<&'static str> {
    if vote::is_vote(p) {
        Some("vote")
    } else if keyvalue::is_keyvalue(p) {
        Some("keyvalue")
    } else if liops::is_liops(p) {
        Some("liops")
    } else {
        None
    }
}

/// Why a phase's steps could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StepsError {
    #[error("{0}")]
    Workload(String),
    #[error("{0}")]
    Backend(#[from] BackendError),
    #[error(
        "finding the keys already written: a read returned {}; \
         set -p max_written_key=N to skip the search",
        .0.ycsb_name()
    )]
    WrittenKeys(Status),
}

impl Workload {
    /// `core`, `keyvalue`, `vote` or `liops`.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Core(_) => "core",
            Workload::KeyValue(_) => "keyvalue",
            Workload::Vote(_) => "vote",
            Workload::Liops(_) => "liops",
        }
    }

    /// What holds the workload's data, for messages: words for every
    /// backend, tables or not (`… holds data for {what}`).
    pub fn what(&self, schema: &Schema) -> String {
        match self {
            Workload::Vote(_) => "the vote workload's articles".to_string(),
            Workload::Liops(l) => format!("LIOPS table {}", l.table(1)),
            Workload::Core(_) | Workload::KeyValue(_) => format!("table {}", schema.table),
        }
    }

    /// The properties a run must share with the load for its operations to
    /// find the data they expect, for the warning about failed operations.
    pub fn data_shape(&self) -> &'static str {
        match self {
            Workload::Core(_) => "recordcount, insertstart, insertorder, fieldcount",
            Workload::KeyValue(_) => "num_unique_keys, value_size, nouuid/uuid",
            Workload::Vote(_) => "vote.articles, vote.variant",
            Workload::Liops(_) => {
                "SCALE and NUM_SCHEMAS, loaded once: `sojourn load --drop` loads it again from scratch"
            }
        }
    }

    /// Why a `phase` of this workload runs from one client machine only,
    /// when it does: the vote workload's load has no key range to split
    /// (each client would insert every article), the key-value workload's
    /// writers continue from the keys already written (which every client
    /// would insert), and LIOPS's sessions are `NUM_SCHEMAS` x
    /// `NUM_THREADS` on one client.
    pub fn one_client_only(&self, phase: Phase) -> Option<&'static str> {
        match self {
            Workload::KeyValue(_) => Some(
                "the keyvalue workload runs from one client machine (its writers continue from \
                 the keys already written, which every client would insert)",
            ),
            Workload::Vote(_) if phase == Phase::Load => {
                Some("the vote workload loads from one client machine (each would insert every article)")
            }
            Workload::Liops(_) => Some(
                "the LIOPS workload runs from one client machine (NUM_SCHEMAS x NUM_THREADS sessions)",
            ),
            _ => None,
        }
    }

    /// Whether a second load into tables that hold data would add a second
    /// copy of them rather than fail on keys already there: the LIOPS
    /// tables have no unique key (as PGIO's have none), so a load must
    /// start from empty tables.
    pub fn load_appends(&self) -> bool {
        matches!(self, Workload::Liops(_))
    }

    /// What `done` load operations wrote, in the workload's own units:
    /// records, articles, or LIOPS rows (each load operation is a batch).
    pub fn loaded(&self, done: u64) -> Loaded {
        match self {
            Workload::Liops(l) => Loaded {
                count: l.rows_in_batches(done),
                unit: "rows",
                batches: Some(done),
            },
            Workload::Vote(_) => Loaded {
                count: done,
                unit: "articles",
                batches: None,
            },
            Workload::KeyValue(_) => Loaded {
                count: done,
                unit: "keys",
                batches: None,
            },
            Workload::Core(_) => Loaded {
                count: done,
                unit: "records",
                batches: None,
            },
        }
    }

    /// Whether the workload's tables hold no data (`None`: the backend
    /// cannot tell). A backend that cannot run the workload refuses it
    /// here, before any operation would fail.
    pub async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        match self {
            Workload::Vote(v) => {
                VoteSupport::of(backend)?
                    .is_empty(backend, &v.variant)
                    .await
            }
            Workload::Liops(l) => LiopsSupport::of(backend)?.is_empty(backend, l).await,
            Workload::KeyValue(kv) => match KeyValueSupport::find(backend) {
                Some(own) => own.is_empty(backend, kv).await,
                None => backend.is_empty(schema).await,
            },
            Workload::Core(_) => backend.is_empty(schema).await,
        }
    }

    /// Whether data already there has the layout this workload's
    /// operations expect ([`Backend::check_layout`]); YCSB's layout only
    /// (the other workloads' tables are checked by their own setup).
    pub async fn check_layout<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        match self {
            Workload::KeyValue(_) if KeyValueSupport::find(backend).is_some() => Ok(()),
            Workload::Core(_) | Workload::KeyValue(_) => backend.check_layout(schema).await,
            Workload::Vote(_) | Workload::Liops(_) => Ok(()),
        }
    }

    /// Create the workload's tables if absent; with `drop`, empty them.
    pub async fn prepare<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        match self {
            Workload::Vote(v) => {
                VoteSupport::of(backend)?
                    .prepare(backend, &v.variant, drop)
                    .await
            }
            Workload::Liops(l) => LiopsSupport::of(backend)?.prepare(backend, l, drop).await,
            Workload::KeyValue(kv) => match KeyValueSupport::find(backend) {
                Some(own) => own.prepare(backend, kv, drop).await,
                None => backend.prepare(schema, drop).await,
            },
            Workload::Core(_) => backend.prepare(schema, drop).await,
        }
    }

    /// What a complete load leaves to do once the data is in, described
    /// for the user, or `None` when there is nothing (only LIOPS builds
    /// its index after the data, as PGIO does: faster, and a compact
    /// btree).
    pub fn after_load(&self) -> Option<String> {
        match self {
            Workload::Liops(l) => Some(format!(
                "building the index on mykey of {} table(s) and analyzing them",
                l.schemas
            )),
            _ => None,
        }
    }

    /// Do what [`Workload::after_load`] describes.
    pub async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        match self {
            Workload::Liops(l) => LiopsSupport::of(backend)?.finish_load(backend, l).await,
            _ => Ok(()),
        }
    }

    /// The steps of `phase` on `backend`, one per connection of `cfg`,
    /// ready to run on a pool of the backend's connections. The key-value
    /// workload's writers continue from the keys already in the database:
    /// `max_written_key`, or found by a search of reads over a connection
    /// of its own from `connector` (opened only then, and closed before the
    /// phase starts).
    pub async fn ready<B, K>(
        &self,
        phase: Phase,
        cfg: &RunConfig,
        backend: &B,
        connector: &K,
    ) -> Result<Box<dyn ReadyPhase<B::Conn>>, StepsError>
    where
        B: Backend,
        K: Connector<Conn = B::Conn>,
    {
        let n = cfg.workers();
        let seed = cfg.seed;
        Ok(match self {
            Workload::Core(core) => {
                let shared = CoreShared::new(core.clone()).map_err(StepsError::Workload)?;
                let steps = (0..n).map(|i| shared.worker(phase, seed, i)).collect();
                Box::new(Steps::new(steps, cfg.clone()))
            }
            Workload::KeyValue(kv) => {
                let written = match kv.max_written_key {
                    Some(w) => w,
                    None => {
                        let mut conn = connector.connect().await?;
                        keyvalue::written_keys(&mut conn, kv)
                            .await
                            .map_err(StepsError::WrittenKeys)?
                    }
                };
                let shared = KeyValueShared::new(kv.clone(), written);
                let steps = (0..n).map(|i| shared.worker(seed, i)).collect();
                let cfg = RunConfig {
                    groups: kv.groups(phase, written),
                    ..cfg.clone()
                };
                Box::new(
                    Steps::new(steps, cfg).narrated(Arc::new(keyvalue::Narration::new(shared))),
                )
            }
            Workload::Vote(v) => {
                let support = VoteSupport::of(backend)?;
                let shared = VoteShared::new(v.clone());
                let steps = (0..n).map(|i| shared.worker(phase, seed, i)).collect();
                support.phase(steps, cfg.clone())
            }
            Workload::Liops(l) => {
                let support = LiopsSupport::of(backend)?;
                // The seed fixes the load order and each session's ranges.
                let server =
                    (phase == Phase::Run && l.loop_in == liops::LoopIn::Server).then(|| {
                        liops::ServerRun {
                            duration: cfg.max_execution_time,
                            warmup: cfg.warmup,
                            operation_count: cfg.operation_count(),
                        }
                    });
                let shared = match server {
                    Some(run) => LiopsShared::with_server_loop(l.clone(), seed, run),
                    None => LiopsShared::new(l.clone(), seed),
                };
                let steps = (0..n).map(|i| shared.worker(phase, seed, i)).collect();
                let mut cfg = cfg.clone();
                if server.is_some() {
                    // Each session takes its one step, whatever the count:
                    // the count is the loops' to keep (shared out above).
                    for g in &mut cfg.groups {
                        g.operation_count = None;
                    }
                }
                support.phase(steps, cfg)
            }
        })
    }
}

/// What a load wrote, for messages ([`Workload::loaded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub count: u64,
    /// `records`, `rows`, `articles`, `keys`.
    pub unit: &'static str,
    /// The load operations, where each wrote many rows.
    pub batches: Option<u64>,
}

impl std::fmt::Display for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.count, self.unit)?;
        if let Some(b) = self.batches {
            write!(f, " in {b} batch{}", if b == 1 { "" } else { "es" })?;
        }
        Ok(())
    }
}

/// One phase of a workload on one backend, its steps built for the
/// backend's connection type `C`: what the session runs.
pub trait ReadyPhase<C> {
    /// How the phase is driven: the plan's, with the operation counts the
    /// workload settled (the key-value load skips keys already written).
    fn config(&self) -> &RunConfig;

    /// What the workload says as the phase goes, if anything.
    fn narrator(&self) -> Option<Arc<dyn Narrator>>;

    /// Run the phase on `pool`. Blocks until it ends.
    fn run(
        self: Box<Self>,
        pool: &mut Pool<C>,
        stop: &StopHandle,
        observer: &dyn Observer,
    ) -> Result<RunOutcome, BackendError>;
}

/// What a workload says about a phase beside YCSB's output (the key-value
/// workload: the keys written, and yb-sample-apps' own status line).
pub trait Narrator: Send + Sync {
    /// Said before the phase starts.
    fn before(&self, _phase: Phase) -> Option<String> {
        None
    }

    /// A status line in place of YCSB's (`-s`), over the period `p`.
    fn status_line(&self, _p: &Progress<'_>) -> Option<String> {
        None
    }

    /// Said once the phase has ended.
    fn after(&self, _phase: Phase) -> Option<String> {
        None
    }
}

/// The steps of a phase, one per connection, with how they are driven.
pub struct Steps<S> {
    steps: Vec<Publish<S>>,
    cfg: RunConfig,
    narrator: Option<Arc<dyn Narrator>>,
}

impl<S> Steps<S> {
    pub fn new(steps: Vec<S>, cfg: RunConfig) -> Steps<S> {
        Steps {
            steps: steps.into_iter().map(Publish).collect(),
            cfg,
            narrator: None,
        }
    }

    pub fn narrated(mut self, narrator: Arc<dyn Narrator>) -> Steps<S> {
        self.narrator = Some(narrator);
        self
    }
}

impl<C: Connection, S: Step<C>> ReadyPhase<C> for Steps<S> {
    fn config(&self) -> &RunConfig {
        &self.cfg
    }

    fn narrator(&self) -> Option<Arc<dyn Narrator>> {
        self.narrator.clone()
    }

    fn run(
        self: Box<Self>,
        pool: &mut Pool<C>,
        stop: &StopHandle,
        observer: &dyn Observer,
    ) -> Result<RunOutcome, BackendError> {
        pool.run(self.steps, &self.cfg, stop, observer)
    }
}

/// A workload's step that, as its connection's last act of a phase, has
/// the server publish the session's statistics (see
/// [`Connection::publish_stats`]), whatever the workload.
struct Publish<S>(S);

impl<C: Connection, S: Step<C>> Step<C> for Publish<S> {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        self.0.step(conn, meter).await
    }

    async fn finish(&mut self, conn: &mut C) {
        self.0.finish(conn).await;
        conn.publish_stats().await;
    }
}
