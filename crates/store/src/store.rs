//! The [`Store`] handle: one place that opens a store at a location (a file
//! path or a `postgres://` URL), migrates it, and implements every
//! operation once over the [`Db`] primitives: writing a run as it goes
//! ([`write`]), listing runs ([`list`]), resolving what a user names to
//! runs ([`resolve`]), reading runs back with their histograms ([`load`]),
//! the fleet's agents and shares ([`agents`]), and read-only SQL
//! ([`query`]).
//!
//! Any number of processes may open, create, migrate and write one store
//! at once: every statement and transaction that the database answers
//! "busy" is tried again until the store's wait ([`WAIT`] unless
//! [`Store::open_waiting`] says otherwise) has passed, and creating or
//! migrating the schema happens in one write transaction that takes the
//! schema lock first.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use parking_lot::Mutex;
use sojourn_core::backend::ServerStats;
use sojourn_core::backend::Status;
use sojourn_core::cpu::CpuTimes;
use sojourn_core::executor::{
    Interval, RunOutcome, SegmentOutcome, SegmentVerdict, ThreadUse, ThreadsWhy,
};
use sojourn_core::failures::{self, Reason, Reasons};
use sojourn_core::hist_codec;
use sojourn_core::histograms::{Latencies, LatencySummary, OpStats, Stats};
use sojourn_core::op::OpKind;
use sojourn_core::output::time::rfc3339;
use sojourn_core::rate::Segment;

use crate::db::{retrying, Db, DbError};
use crate::model::{Filter, IntervalDetail, QueryResult, Value};
use crate::schema::{migration_sql, SCHEMA_VERSION, STATUS_COLUMNS};
use crate::sqlite::Mode;
use crate::StoreError;
use sojourn_core::run_record::{
    IntervalFigures, IntervalOp, RunId, RunMeta, RunRecord, RunStatus, RunSummary, RunTotals,
    StoredInterval,
};

mod agents;
mod list;
mod load;
mod query;
mod resolve;
mod write;

pub use agents::{
    AgentInfo, AgentStatus, ClaimedShare, Heartbeat, PhaseSignal, PostedPhase, ShareReport,
    ShareState, ShareView, AGENT_GONE,
};

/// How long the store waits for other processes' locks before an
/// operation fails: long enough for any number of client processes
/// creating one store at once on a loaded machine (each of their writes is
/// a few rows), short enough that a store held by a stuck process costs a
/// run a minute, not the run (it goes to a spool file then).
pub const WAIT: Duration = Duration::from_secs(60);

/// An open results store. Share it between threads freely: calls take
/// `&self` and run one at a time on the store's connection.
pub struct Store {
    /// The location as given, password removed, for messages.
    location: String,
    db: Mutex<Box<dyn Db>>,
    read_only: bool,
    /// How long an operation waits for other processes' locks.
    wait: Duration,
}

/// Whether a location names a PostgreSQL store.
fn is_postgres(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

impl Store {
    /// Open (creating and migrating as needed) the store at `location`: a
    /// SQLite file path (`sqlite:PATH` also works), or a `postgres://` URL
    /// (with the `postgres` feature). Runs left `running` by a process that
    /// no longer exists on this host are marked failed.
    pub fn open(location: &str) -> Result<Store, StoreError> {
        Self::open_waiting(location, WAIT)
    }

    /// [`Store::open`], waiting up to `wait` (instead of [`WAIT`]) for
    /// other processes' locks, in opening and in every operation after.
    pub fn open_waiting(location: &str, wait: Duration) -> Result<Store, StoreError> {
        let store = Self::connect(location, Mode::Store, wait)?;
        store.migrate()?;
        store.mark_dead_runs()?;
        Ok(store)
    }

    /// Open an existing store to show its runs: as [`Store::open`] does,
    /// or, where the store cannot be written (a full disk, a read-only
    /// mount, a lock held past `wait`), read-only, with the error that
    /// stopped the writing. Reading a measured result never depends on
    /// being able to write.
    pub fn open_to_show(
        location: &str,
        wait: Duration,
    ) -> Result<(Store, Option<StoreError>), StoreError> {
        match Self::open_waiting(location, wait) {
            Ok(store) => Ok((store, None)),
            Err(write_error) => match Self::open_read_only(location) {
                Ok(store) => Ok((store, Some(write_error))),
                Err(_) => Err(write_error),
            },
        }
    }

    /// Open an existing store for reading only (`results query`): nothing
    /// is created, migrated or marked, and statements that would write are
    /// refused.
    pub fn open_read_only(location: &str) -> Result<Store, StoreError> {
        let store = Self::connect(location, Mode::ReadOnly, WAIT)?;
        let version = store.schema_version()?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                location: store.location.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        Ok(store)
    }

    pub(crate) fn connect(location: &str, mode: Mode, wait: Duration) -> Result<Store, StoreError> {
        let shown = sojourn_core::redact::redact_url(location);
        let db: Box<dyn Db> = if is_postgres(location) {
            #[cfg(feature = "postgres")]
            {
                let read_only = mode == Mode::ReadOnly;
                Box::new(
                    retrying(wait, || {
                        crate::postgres::Postgres::connect(location, read_only, wait)
                    })
                    .map_err(|e| db_error(&shown, "connecting".to_string(), e))?,
                )
            }
            #[cfg(not(feature = "postgres"))]
            {
                return Err(StoreError::Location {
                    location: shown,
                    reason: "PostgreSQL results stores need sojourn built with the `postgres` \
                             feature (cargo build --features postgres); or give a file path"
                        .into(),
                });
            }
        } else {
            let path = location.strip_prefix("sqlite:").unwrap_or(location);
            if path.is_empty() || path.contains("://") {
                return Err(StoreError::Location {
                    location: shown,
                    reason: "expected a file path (results.sqlite) or a postgres:// URL".into(),
                });
            }
            let path = Path::new(path);
            if matches!(mode, Mode::ReadOnly | Mode::Source) {
                if !path.exists() {
                    return Err(StoreError::Location {
                        location: shown,
                        reason: "no such file; runs are stored there once a load, run or bench \
                                 has been recorded"
                            .into(),
                    });
                }
            } else if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| StoreError::Location {
                    location: shown.clone(),
                    reason: format!("cannot create the folder {}: {e}", parent.display()),
                })?;
            }
            Box::new(
                retrying(wait, || crate::sqlite::Sqlite::open(path, mode, wait))
                    .map_err(|e| db_error(&shown, "opening".to_string(), e))?,
            )
        };
        Ok(Store {
            location: shown,
            db: Mutex::new(db),
            read_only: matches!(mode, Mode::ReadOnly | Mode::Source),
            wait,
        })
    }

    /// The location, password-free.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// How long an operation waits for other processes' locks.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Whether the store has a table of this name.
    pub(crate) fn has_table(&self, name: &str) -> Result<bool, StoreError> {
        let mut db = self.db.lock();
        retrying(self.wait, || db.has_table(name))
            .map_err(|e| self.err(format!("looking for the table {name}"), e))
    }

    pub(crate) fn err(&self, context: impl Into<String>, e: DbError) -> StoreError {
        db_error(&self.location, context.into(), e)
    }

    fn corrupt(&self, run: &str, reason: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            location: self.location.clone(),
            run: run.to_string(),
            reason: reason.into(),
        }
    }

    /// Run `f` in one write transaction: committed if it succeeds, rolled
    /// back otherwise; the whole transaction is tried again while the
    /// database says it is busy, up to the store's wait.
    pub(crate) fn write<T>(
        &self,
        context: impl FnOnce() -> String,
        mut f: impl FnMut(&mut dyn Db) -> Result<T, DbError>,
    ) -> Result<T, StoreError> {
        if self.read_only {
            return Err(StoreError::ReadOnly(format!(
                "{} was opened read-only",
                self.location
            )));
        }
        let mut db = self.db.lock();
        retrying(self.wait, || {
            let result = db
                .begin_write()
                .and_then(|()| f(&mut **db))
                .and_then(|v| db.batch("COMMIT").map(|()| v));
            if result.is_err() {
                let _ = db.batch("ROLLBACK");
            }
            result
        })
        .map_err(|e| self.err(context(), e))
    }

    pub(crate) fn read(
        &self,
        context: impl FnOnce() -> String,
        sql: &str,
        params: &[Value],
    ) -> Result<QueryResult, StoreError> {
        let mut db = self.db.lock();
        retrying(self.wait, || db.query(sql, params)).map_err(|e| self.err(context(), e))
    }

    /// The schema version the store is at (0 for an empty database).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let mut db = self.db.lock();
        retrying(self.wait, || version_in(&mut **db))
            .map_err(|e| self.err("reading the schema version", e))
    }

    /// Bring the schema up to [`SCHEMA_VERSION`]. A store already there
    /// (nearly every open) is only read. Otherwise creating the version
    /// table and every migration happen in one write transaction that
    /// takes the schema lock before it reads the version, so that any
    /// number of processes opening a new store at once create it once,
    /// and the others wait, then find it done.
    pub(crate) fn migrate(&self) -> Result<(), StoreError> {
        let too_new = |found: u32| StoreError::TooNew {
            location: self.location.clone(),
            found,
            supported: SCHEMA_VERSION,
        };
        match self.schema_version()? {
            v if v == SCHEMA_VERSION => return Ok(()),
            v if v > SCHEMA_VERSION => return Err(too_new(v)),
            _ => {}
        }
        let found = self.write(
            || "creating or migrating the schema".into(),
            |db| {
                db.lock_schema()?;
                db.batch("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")?;
                let r = db.query("SELECT MAX(version) FROM schema_version", &[])?;
                let found = r.rows.first().and_then(|row| row.first()).and_then(as_i64);
                let current = found.unwrap_or(0) as u32;
                if current >= SCHEMA_VERSION {
                    // Another process got here first (or the store is
                    // newer): nothing to write.
                    return Ok(current);
                }
                let blob = db.blob_type();
                for n in current + 1..=SCHEMA_VERSION {
                    db.batch(&migration_sql(n as usize, blob))?;
                }
                if found.is_none() {
                    db.exec(
                        "INSERT INTO schema_version (version) VALUES (?)",
                        &[Value::Integer(SCHEMA_VERSION as i64)],
                    )?;
                } else {
                    db.exec(
                        "UPDATE schema_version SET version = ?",
                        &[Value::Integer(SCHEMA_VERSION as i64)],
                    )?;
                }
                Ok(SCHEMA_VERSION)
            },
        )?;
        if found > SCHEMA_VERSION {
            return Err(too_new(found));
        }
        Ok(())
    }
}

/// The schema version of a database (0 for one without the table).
fn version_in(db: &mut dyn Db) -> Result<u32, DbError> {
    if !db.has_table("schema_version")? {
        return Ok(0);
    }
    let r = db.query("SELECT MAX(version) FROM schema_version", &[])?;
    Ok(r.rows
        .first()
        .and_then(|row| row.first())
        .and_then(as_i64)
        .unwrap_or(0) as u32)
}

pub(crate) fn db_error(location: &str, context: String, e: DbError) -> StoreError {
    match e {
        DbError::Sqlite(error) => StoreError::Sqlite {
            location: location.to_string(),
            context,
            error,
        },
        #[cfg(feature = "postgres")]
        DbError::Postgres(error) => StoreError::Postgres {
            location: location.to_string(),
            context,
            detail: {
                // The driver's Display is only its kind ("db error"); the
                // server's message and the I/O cause are its sources.
                let mut parts = Vec::new();
                let mut e: Option<&dyn std::error::Error> = Some(&error);
                while let Some(cur) = e {
                    parts.push(cur.to_string());
                    e = cur.source();
                }
                if error.as_db_error().is_some() && parts.len() > 1 {
                    parts.remove(0);
                }
                parts.join(": ")
            },
            error,
        },
        #[cfg(feature = "postgres")]
        DbError::TimedOut(waited) => StoreError::TimedOut {
            location: location.to_string(),
            context,
            waited,
        },
        #[cfg(feature = "postgres")]
        DbError::Config(reason) => StoreError::Location {
            location: location.to_string(),
            reason,
        },
    }
}

pub(crate) fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

/// Counts above i64::MAX cannot happen (they would take centuries); they
/// are clamped rather than wrapped.
pub(crate) fn int(n: u64) -> Value {
    Value::Integer(n.min(i64::MAX as u64) as i64)
}

pub(crate) fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Real(r) => Some(*r as i64),
        Value::Text(t) => t.parse().ok(),
        _ => None,
    }
}

fn as_u64(v: &Value) -> u64 {
    as_i64(v).unwrap_or(0).max(0) as u64
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Real(r) => Some(*r),
        Value::Text(t) => t.parse().ok(),
        _ => None,
    }
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or_default()
}

/// Seconds since the epoch, to the microsecond.
fn unix(t: SystemTime) -> f64 {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    d.as_micros() as f64 / 1e6
}

fn from_unix(s: f64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros((s * 1e6).round().max(0.0) as u64)
}

fn join_f64(v: &[f64]) -> String {
    v.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn figure_columns(prefix: &str) -> String {
    crate::schema::FIGURES
        .iter()
        .map(|f| format!("{prefix}_{f}_us"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A summary's figures in [`crate::schema::FIGURES`] order.
fn figures(s: &LatencySummary) -> [Value; 9] {
    [
        s.mean_us,
        s.min_us,
        s.max_us,
        s.p50_us,
        s.p90_us,
        s.p95_us,
        s.p99_us,
        s.p99_9_us,
        s.p99_99_us,
    ]
    .map(Value::Real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_to_the_microsecond() {
        let t = UNIX_EPOCH + Duration::from_micros(1_763_723_756_123_456);
        assert_eq!(from_unix(unix(t)), t);
    }
}
