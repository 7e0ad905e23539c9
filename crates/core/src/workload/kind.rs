//! What one kind of workload is to the layers above: the one trait each
//! workload's settings implement, so that a new kind is its module and one
//! line of the table in [`super`] (`kinds!`), and the plan, the outputs,
//! `capacity` and the command line ask the kind rather than list kinds.
//!
//! Most methods have the default of YCSB's layout (one table, YCSB's five
//! operations through [`Backend`]); a kind overrides what differs.

use std::future::Future;

use crate::backend::{Backend, BackendError, Schema};
use crate::executor::{Connector, Group, RunConfig};
use crate::properties::{Properties, PropertyError};
use crate::run_record::RunRecord;

use super::config::CoreConfig;
use super::phase::Phase;
use super::steps::{Loaded, ReadyPhase, StepsError};

/// What the plan has settled before it asks a kind to check its own
/// settings against the rest ([`Kind::check`]).
pub struct Settled<'a> {
    pub phase: Phase,
    pub props: &'a Properties,
    /// The property that set the offered rate (`target`, `rate`,
    /// `trace`), if any.
    pub rate_key: Option<&'static str>,
    /// `maxexecutiontime` is set (or the kind's own run time).
    pub deadline: bool,
}

/// What a kind's steps are made for: the phase, its run configuration,
/// the backend, and the connector that opens the backend's connections.
pub struct Readying<'a, B, K> {
    pub phase: Phase,
    pub cfg: &'a RunConfig,
    pub backend: &'a B,
    pub connector: &'a K,
}

/// A connector that opens `B`'s connections.
pub trait Opens<B: Backend>: Connector<Conn = B::Conn> {}

impl<B: Backend, K: Connector<Conn = B::Conn>> Opens<B> for K {}

/// A kind's steps for one phase, or why there are none.
pub type Readied<C> = Result<Box<dyn ReadyPhase<C>>, StepsError>;

/// One kind of workload: its settings, read from properties, and what the
/// rest of sojourn asks of it.
pub trait Kind: Clone + std::fmt::Debug + Send + Sync + Sized + 'static {
    /// `workload=NAME` selects it (YCSB's core workload: also no
    /// `workload` at all).
    const NAME: &'static str;

    /// What it is, in a few words (`Noria's vote workload`), for messages
    /// that name it.
    const TITLE: &'static str;

    /// The properties it reads beyond YCSB's and sojourn's own, for the
    /// warning about unknown names.
    const PROPERTIES: &'static [&'static str];

    /// Prefixes of property names it reads (`script.define.` for each
    /// `-D NAME=VALUE`).
    const PREFIXES: &'static [&'static str] = &[];

    /// Whether its tables are its own, set up (and checked) through its
    /// capability, rather than YCSB's table whose layout
    /// [`Kind::check_layout`] looks at.
    const OWN_TABLES: bool = false;

    /// Whether its properties are known whatever workload runs: a backend
    /// reads the vote workload's `vote.cache` to put a cache in front of
    /// itself.
    const READ_BY_BACKENDS: bool = false;

    /// Its settings for `phase`.
    fn from_properties(p: &Properties, phase: Phase) -> Result<Self, PropertyError>;

    // --- The plan ---

    /// The records it loads, where `recordcount` does not say (YCSB's
    /// settings still type-check with it).
    fn records(&self) -> Option<u64> {
        None
    }

    /// Its connections, where `threadcount` does not decide them.
    fn connections(&self) -> Option<u64> {
        None
    }

    /// How long `phase` lasts, in seconds, where `maxexecutiontime` does
    /// not say.
    fn run_time(&self, phase: Phase) -> Option<f64> {
        let _ = phase;
        None
    }

    /// Load operations: YCSB's `insertcount` unless the kind loads
    /// otherwise (articles, batches of rows).
    fn load_operations(&self, core: &CoreConfig) -> Option<u64> {
        Some(core.insert_count)
    }

    /// Whether it bounds its phases itself (its own counts), so that no
    /// `operationcount` or `maxexecutiontime` is needed.
    fn bounds_itself(&self) -> bool {
        false
    }

    /// Refuse settings that do not go with the rest of the plan.
    fn check(&self, settled: &Settled<'_>) -> Result<(), PropertyError> {
        let _ = settled;
        Ok(())
    }

    /// Whether a NOT_FOUND is an answer rather than a failure when a phase
    /// is judged by its failed operations: a cache's miss (the commands
    /// workload's `GET` of a key not set), which memtier counts as a miss.
    fn misses_are_answers(&self) -> bool {
        false
    }

    /// Whether its connections are paced by rates of their own, so that
    /// the summary shows response time as well.
    fn paced(&self) -> bool {
        false
    }

    /// What share `index` of `n` (each of `connections` connections) sets
    /// beyond the count and rate every share divides: the script
    /// workload's first `:client_id`, so that clients are numbered across
    /// machines.
    fn share_properties(&self, index: u32, n: u32, connections: u64) -> Vec<(String, String)> {
        let _ = (index, n, connections);
        Vec::new()
    }

    /// The executor's groups: `one` (every connection at the plan's
    /// rate and count) unless the kind has pools of its own.
    fn groups(&self, phase: Phase, one: Group) -> Vec<Group> {
        let _ = phase;
        vec![one]
    }

    /// The table its connections are opened on.
    fn schema(&self, core: &CoreConfig) -> Schema {
        Schema::ycsb(&core.table, &core.field_prefix, core.field_count)
    }

    // --- Its data ---

    /// What holds its data, for messages (`… holds data for {what}`).
    fn what(&self, schema: &Schema) -> String {
        format!("table {}", schema.table)
    }

    /// The properties a run must share with the load for its operations
    /// to find the data they expect, for the warning about failures.
    fn data_shape(&self) -> &'static str;

    /// Why a `phase` of it runs from one client machine only, when it
    /// does.
    fn one_client_only(&self, phase: Phase) -> Option<&'static str> {
        let _ = phase;
        None
    }

    /// Whether a second load into tables that hold data would add a
    /// second copy rather than fail on keys already there.
    fn load_appends(&self) -> bool {
        false
    }

    /// What `done` load operations wrote, in its own units.
    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: done,
            unit: "records",
            batches: None,
        }
    }

    /// Whether its tables hold no data (`None`: the backend cannot tell).
    /// A backend that cannot run it refuses it here.
    fn is_empty<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> impl Future<Output = Result<Option<bool>, BackendError>> {
        backend.is_empty(schema)
    }

    /// Whether data already there has the layout its operations expect
    /// (YCSB's table's; nothing to look at for [`Kind::OWN_TABLES`]).
    fn check_layout<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> impl Future<Output = Result<(), BackendError>> {
        async move {
            if Self::OWN_TABLES {
                return Ok(());
            }
            backend.check_layout(schema).await
        }
    }

    /// Create its tables if absent; with `drop`, empty them.
    fn prepare<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
        drop: bool,
    ) -> impl Future<Output = Result<(), BackendError>> {
        backend.prepare(schema, drop)
    }

    /// What a complete load leaves to do once the data is in, said to the
    /// user, or `None`.
    fn after_load(&self) -> Option<String> {
        None
    }

    /// Do what [`Kind::after_load`] says.
    fn finish_load<B: Backend>(
        &self,
        backend: &B,
    ) -> impl Future<Output = Result<(), BackendError>> {
        let _ = backend;
        async { Ok(()) }
    }

    /// What it checks of its data once a complete `phase` is stored, said
    /// to the user, or `None` (TPC-C's consistency conditions).
    fn after_phase(&self, phase: Phase) -> Option<String> {
        let _ = phase;
        None
    }

    /// Check what [`Kind::after_phase`] says: an error names what broke.
    fn verify<B: Backend>(
        &self,
        phase: Phase,
        backend: &B,
    ) -> impl Future<Output = Result<(), BackendError>> {
        let _ = (phase, backend);
        async { Ok(()) }
    }

    /// The steps of `at.phase` on `at.backend`, one per connection of
    /// `at.cfg`.
    fn ready<B: Backend, K: Opens<B>>(
        &self,
        at: Readying<'_, B, K>,
    ) -> impl Future<Output = Readied<B::Conn>>;

    // --- What it adds to the outputs ---

    /// Why `sojourn capacity` does not search it, or `None` where it does.
    fn capacity_refusal(&self) -> Option<&'static str> {
        Some("it has no single offered rate to raise")
    }

    /// What it prints after YCSB's summary of a run phase, so its results
    /// read as its own tool's do (every line starts with `#` or a lower-case
    /// word, never `[`).
    fn run_lines(&self, run: &RunRecord) -> String {
        let _ = run;
        String::new()
    }
}
