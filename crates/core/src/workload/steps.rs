//! What a workload hands the session for one phase: a [`ReadyPhase`] (the
//! [`Steps`], one per connection, typed for the backend's connections),
//! the [`Narrator`] that speaks for it, what a load wrote ([`Loaded`]), and
//! why steps could not be built ([`StepsError`]). A leaf the workloads and
//! the workload table all build on.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::backend::{BackendError, Connection, Status};
use crate::executor::{Meter, Observer, Pool, Progress, RunConfig, RunOutcome, Step, StopHandle};

use super::phase::Phase;

/// A boxed future, for calls that cross a type erasure (once per setup
/// call or phase, never per operation).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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

/// What a load wrote, for messages (`Workload::loaded`).
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

    /// Whether a status line ends the phase, over what followed the last
    /// one (YCSB's does; pgbench prints only whole progress periods).
    fn status_at_end(&self) -> bool {
        true
    }

    /// Said once the phase has ended.
    fn after(&self, _phase: Phase) -> Option<String> {
        None
    }

    /// What the workload settled as the phase was made ready, kept as the
    /// run's labels (pgbench's scale, read from its tables).
    fn labels(&self) -> Vec<(String, String)> {
        Vec::new()
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
