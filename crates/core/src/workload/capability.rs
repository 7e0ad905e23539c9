//! How a workload that needs more than YCSB's five operations reaches a
//! backend that runs it, from code generic over every backend.
//!
//! The workload names its capability with a marker type ([`Capability`]:
//! what setting its tables up takes, its step type) and a connection trait
//! of its own operations (`VoteConnection`, `LiopsConnection`). A backend
//! that runs it implements [`Runs`] for its tables and the connection
//! trait for its connections, and lists `Support::<Self, K>::new()` in its
//! [`Backend::extensions`]. [`Support::of`] finds it there, or says why the
//! backend cannot run the workload. The erasure costs one box per setup
//! call and per phase, never per operation: a phase's steps run on the
//! backend's own connection type.

use std::future::Future;
use std::sync::Arc;

use crate::backend::{Backend, BackendError};
use crate::executor::{RunConfig, Step};

use super::steps::{BoxFuture, Narrator, ReadyPhase, Steps};

/// A workload's capability, named by a marker type.
pub trait Capability: 'static {
    /// What setting the workload's tables up takes (a trait object where
    /// several workloads share the capability).
    type Config: ?Sized + Sync + 'static;
    /// One connection's steps.
    type Step: Send + 'static;
    /// What a backend without the capability answers, after its
    /// description: which workload it cannot run, and where it runs.
    const REFUSAL: &'static str;
}

/// A backend that runs the workload of capability `K`: its tables.
pub trait Runs<K: Capability>: Backend {
    /// Create the workload's tables if absent (indexes a load builds
    /// after the data aside); with `drop`, remove them first.
    fn prepare_tables(
        &self,
        cfg: &K::Config,
        drop: bool,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Whether no data is loaded (`None`: cannot tell); an error when the
    /// tables exist in a form this configuration cannot use.
    fn tables_empty(
        &self,
        cfg: &K::Config,
    ) -> impl Future<Output = Result<Option<bool>, BackendError>> + Send;

    /// After a complete load: what is built once the data is in.
    fn finish_load(
        &self,
        cfg: &K::Config,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = cfg;
        async { Ok(()) }
    }

    /// Before a run, where the workload asks: what tidies the tables up
    /// (pgbench's vacuum).
    fn before_run(&self, cfg: &K::Config) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = cfg;
        async { Ok(()) }
    }

    /// How many records the loaded data holds, by the workload's own
    /// measure (pgbench's scale is its branches), where the workload asks;
    /// `None`: cannot tell.
    fn records(
        &self,
        cfg: &K::Config,
    ) -> impl Future<Output = Result<Option<u64>, BackendError>> + Send {
        let _ = cfg;
        async { Ok(None) }
    }
}

/// Backend `B`'s support of capability `K`, as code generic over every
/// backend reaches it.
pub struct Support<B: Backend, K: Capability>(Arc<dyn Erased<B, K>>);

impl<B: Backend, K: Capability> Clone for Support<B, K> {
    fn clone(&self) -> Self {
        Support(self.0.clone())
    }
}

impl<B, K> Support<B, K>
where
    B: Runs<K>,
    K: Capability,
    K::Step: Step<B::Conn>,
{
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Support(Arc::new(Native))
    }
}

impl<B: Backend, K: Capability> Support<B, K> {
    /// `backend`'s support, or why it has none.
    pub fn of(backend: &B) -> Result<Self, BackendError> {
        Self::find(backend)
            .ok_or_else(|| BackendError::Config(format!("{} {}", backend.describe(), K::REFUSAL)))
    }

    /// `backend`'s support, if it offers one: for a workload that runs
    /// on every backend and lets one that offers it set its tables up.
    pub fn find(backend: &B) -> Option<Self> {
        backend.extensions().get::<Self>().cloned()
    }

    pub fn prepare<'a>(
        &self,
        backend: &'a B,
        cfg: &'a K::Config,
        drop: bool,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        self.0.prepare(backend, cfg, drop)
    }

    pub fn is_empty<'a>(
        &self,
        backend: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<Option<bool>, BackendError>> {
        self.0.is_empty(backend, cfg)
    }

    pub fn finish_load<'a>(
        &self,
        backend: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        self.0.finish_load(backend, cfg)
    }

    pub fn records<'a>(
        &self,
        backend: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<Option<u64>, BackendError>> {
        self.0.records(backend, cfg)
    }

    pub fn before_run<'a>(
        &self,
        backend: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        self.0.before_run(backend, cfg)
    }

    /// A phase of these steps, run on the backend's own connection type.
    pub fn phase(&self, steps: Vec<K::Step>, cfg: RunConfig) -> Box<dyn ReadyPhase<B::Conn>> {
        self.0.phase(steps, cfg, None)
    }

    /// [`Support::phase`], with what the workload says about it.
    pub fn narrated_phase(
        &self,
        steps: Vec<K::Step>,
        cfg: RunConfig,
        narrator: Arc<dyn Narrator>,
    ) -> Box<dyn ReadyPhase<B::Conn>> {
        self.0.phase(steps, cfg, Some(narrator))
    }
}

/// [`Runs`]'s calls for a backend type known to implement it, behind a
/// type that is not.
trait Erased<B: Backend, K: Capability>: Send + Sync {
    fn prepare<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
        drop: bool,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
    fn is_empty<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<Option<bool>, BackendError>>;
    fn finish_load<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
    fn records<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<Option<u64>, BackendError>>;
    fn before_run<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
    fn phase(
        &self,
        steps: Vec<K::Step>,
        cfg: RunConfig,
        narrator: Option<Arc<dyn Narrator>>,
    ) -> Box<dyn ReadyPhase<B::Conn>>;
}

struct Native;

impl<B, K> Erased<B, K> for Native
where
    B: Runs<K>,
    K: Capability,
    K::Step: Step<B::Conn>,
{
    fn prepare<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
        drop: bool,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(b.prepare_tables(cfg, drop))
    }

    fn is_empty<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<Option<bool>, BackendError>> {
        Box::pin(b.tables_empty(cfg))
    }

    fn finish_load<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(b.finish_load(cfg))
    }

    fn records<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<Option<u64>, BackendError>> {
        Box::pin(b.records(cfg))
    }

    fn before_run<'a>(
        &self,
        b: &'a B,
        cfg: &'a K::Config,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(b.before_run(cfg))
    }

    fn phase(
        &self,
        steps: Vec<K::Step>,
        cfg: RunConfig,
        narrator: Option<Arc<dyn Narrator>>,
    ) -> Box<dyn ReadyPhase<B::Conn>> {
        match narrator {
            Some(n) => Box::new(Steps::new(steps, cfg).narrated(n)),
            None => Box::new(Steps::new(steps, cfg)),
        }
    }
}
