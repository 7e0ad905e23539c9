//! sojourn-session: one phase of a benchmark from start to finish, for
//! every way to run one. `load`, `run` and `bench`, each step of a capacity
//! search and each client of a suite stage all go through here:
//!
//! 1. the workload's tables are checked and set up ([`Database`]);
//! 2. connections are opened once for the phases that share them
//!    ([`Database::connect`]);
//! 3. for each phase ([`Connections::run`]): the workload builds its steps,
//!    the run begins in the results store, the server's counters are
//!    sampled, the executor runs with the caller's display and the store's
//!    interval writer watching, the counters are sampled again and the
//!    warnings drawn; the caller shows the result, then
//!    [`Measured::finish`] stores the totals.
//!
//! It also owns where things live ([`Places`], [`StoreChoice`], and the
//! [`RunStore`] a command records into: the store, and the spool folders
//! that keep a run it cannot take, imported when it is next opened), how runs
//! are named and tagged ([`RunTags`]) and Ctrl+C ([`watch_ctrl_c`]). The
//! caller (the command line) decides only what to show: a [`Show`] gives
//! each phase its live display and takes the session's notes.
//!
//! Errors are `anyhow` with context: this is the application's own layer,
//! whose errors are sentences for the person at the terminal.

pub mod agent;
mod database;
pub mod fleet;
mod phase;
mod places;
pub mod share;
mod show;
mod signals;
mod store_writer;
mod tags;

pub use database::{Connections, Database};
pub use phase::{Measured, PhaseSpec};
pub use places::{open_existing, open_for_reading, open_store, Places, RunStore, StoreChoice};
pub use show::{PhaseView, Show, Silent, Watch};
pub use signals::{before_quit, quit_now, watch_ctrl_c, INTERRUPTED};
pub use tags::{parse_label, RunTags};

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use sojourn_backends::{AnyBackend, OpenOptions};
use sojourn_core::executor::StopHandle;
use sojourn_core::properties::Properties;
use sojourn_store::Store;

/// What every phase a command runs shares: where runs are recorded and how
/// they are tagged, the properties they were planned from, the stop
/// handle Ctrl+C pulls, and how phases are shown.
pub struct Session<'a> {
    records: Option<&'a RunStore>,
    store_required: bool,
    tags: RunTags,
    props: &'a Properties,
    stop: StopHandle,
    show: &'a dyn Show,
}

impl<'a> Session<'a> {
    /// Runs recorded in `records` (`None`: not recorded) with `tags`,
    /// planned from `props`.
    pub fn new(
        records: Option<&'a RunStore>,
        tags: RunTags,
        props: &'a Properties,
        stop: StopHandle,
        show: &'a dyn Show,
    ) -> Session<'a> {
        Session {
            records,
            store_required: false,
            tags,
            props,
            stop,
            show,
        }
    }

    /// Every run must reach the store: failing to write it is an error
    /// (a suite's client processes, whose runs the suite merges).
    pub fn store_required(mut self) -> Session<'a> {
        self.store_required = true;
        self
    }

    /// The store runs are recorded in, if it is open.
    pub fn store(&self) -> Option<&'a Store> {
        self.records.and_then(|r| r.store())
    }

    pub fn tags(&self) -> &RunTags {
        &self.tags
    }

    pub fn stop(&self) -> &StopHandle {
        &self.stop
    }

    pub fn show(&self) -> &'a dyn Show {
        self.show
    }

    /// Open the database `url` names for phases of `workers` connections
    /// (`default_sqlite`: where `sqlite` without a path points). Nothing is
    /// contacted yet.
    pub fn open_database(
        &self,
        url: &str,
        default_sqlite: &Path,
        workers: usize,
    ) -> Result<Database<'_>> {
        let backend = open_backend(url, self.props, default_sqlite, workers)?;
        Database::new(self, Arc::new(backend))
    }

    /// The database `backend` (one already open, such as an in-process
    /// `memory:` database a suite shares between its stages).
    pub fn database(&self, backend: Arc<AnyBackend>) -> Result<Database<'_>> {
        Database::new(self, backend)
    }
}

/// Open the backend `url` names with the run's properties (backends read
/// their settings, `redis.mode` and the like, from them).
pub fn open_backend(
    url: &str,
    props: &Properties,
    default_sqlite: &Path,
    workers: usize,
) -> Result<AnyBackend> {
    sojourn_backends::open(
        url,
        &OpenOptions {
            props,
            default_sqlite,
            workers,
        },
    )
    .with_context(|| {
        format!(
            "opening the database {}",
            sojourn_core::redact::redact_url(url)
        )
    })
}
