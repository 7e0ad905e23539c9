//! The [`Store`] handle: one place that opens a store at a location (a file
//! path or a `postgres://` URL), and the operations every kind of store
//! offers: writing a run as it goes and reading runs back.

use sojourn_core::executor::{Interval, RunOutcome};

use crate::model::{Filter, QueryResult, RunId, RunMeta, RunStatus, RunSummary, StoredRun};
use crate::StoreError;

/// An open results store. Cheap to share between threads: calls take
/// `&self` and are serialised inside.
pub struct Store {
    /// The location as given, password removed, for messages.
    location: String,
}

impl Store {
    /// Open (creating and migrating as needed) the store at `location`: a
    /// SQLite file path, or a `postgres://` URL (with the `postgres`
    /// feature). Runs left `running` by a process that no longer exists on
    /// this host are marked failed.
    pub fn open(location: &str) -> Result<Store, StoreError> {
        Err(StoreError::Unsupported(format!(
            "results store {location}: not yet implemented"
        )))
    }

    /// Open an existing store for reading only (`results query`): nothing
    /// is created, migrated or marked.
    pub fn open_read_only(location: &str) -> Result<Store, StoreError> {
        Self::open(location)
    }

    /// The location, password-free.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The schema version the store is at.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Record that a run has begun; its status is `running` until
    /// [`Store::finish_run`] or [`Store::fail_run`].
    pub fn begin_run(&self, meta: &RunMeta) -> Result<RunId, StoreError> {
        let _ = meta;
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Store one time-series interval (one row per operation kind),
    /// committed before returning.
    pub fn write_interval(&self, run: &RunId, interval: &Interval) -> Result<(), StoreError> {
        let _ = (run, interval);
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Store the totals of a run that ended (per kind: counts by status
    /// and the service and response histograms of successful and failed
    /// operations; rates, client CPU, scheduling lag) and its final status.
    pub fn finish_run(
        &self,
        run: &RunId,
        outcome: &RunOutcome,
        status: RunStatus,
        warnings: &[String],
    ) -> Result<(), StoreError> {
        let _ = (run, outcome, status, warnings);
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Mark a run failed, keeping what it stored so far.
    pub fn fail_run(&self, run: &RunId, error: &str) -> Result<(), StoreError> {
        let _ = (run, error);
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Mark failed every run left `running` by a process that no longer
    /// exists on this host; returns how many. Done on open and list.
    pub fn mark_dead_runs(&self) -> Result<usize, StoreError> {
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// The runs matching `filter`, oldest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        let _ = filter;
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// The run that `run` names: a full id, a unique prefix of one, a run
    /// URI (when one process ran it), or `last` for the newest run.
    pub fn resolve(&self, run: &str) -> Result<RunId, StoreError> {
        let _ = run;
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Everything stored about a run, histograms decoded.
    pub fn load(&self, run: &str) -> Result<StoredRun, StoreError> {
        let _ = run;
        Err(StoreError::Unsupported("not yet implemented".into()))
    }

    /// Read-only SQL over the store's tables and views (see
    /// docs/results.md).
    pub fn query(&self, sql: &str) -> Result<QueryResult, StoreError> {
        let _ = sql;
        Err(StoreError::Unsupported("not yet implemented".into()))
    }
}
