//! The [`Store`] handle: one place that opens a store at a location (a file
//! path or a `postgres://` URL), migrates it, and implements every
//! operation once over the [`Db`] primitives: writing a run as it goes and
//! reading runs back with their histograms.
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
use sojourn_core::executor::{Interval, RunOutcome, ThreadUse, ThreadsWhy};
use sojourn_core::histlog;
use sojourn_core::op::OpKind;
use sojourn_core::output::time::rfc3339;
use sojourn_core::recorder::{Latencies, LatencySummary, OpStats, Stats};

use crate::db::{retrying, Db, DbError};
use crate::model::{Filter, IntervalDetail, QueryResult, Value};
use crate::schema::{migration_sql, SCHEMA_VERSION, STATUS_COLUMNS};
use crate::sqlite::Mode;
use crate::StoreError;
use sojourn_core::record::{
    IntervalFigures, IntervalOp, RunId, RunMeta, RunRecord, RunStatus, RunSummary, RunTotals,
    StoredInterval,
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

    /// Record that a run has begun; its status is `running` until
    /// [`Store::finish_run`] or [`Store::fail_run`].
    pub fn begin_run(&self, meta: &RunMeta) -> Result<RunId, StoreError> {
        // Whoever built the metadata, nothing secret is written.
        let meta = &meta.redacted();
        let id = meta.id.clone();
        self.write(
            || format!("recording the start of run {id}"),
            |db| {
                db.exec(
                    "INSERT INTO runs (id, run_uri, started_at, started_unix, phase, workload, \
                     backend, threads, target, tool_version, host, pid, command_line, status, \
                     client_index, client_count, measurement_interval, percentiles, warmup_s, seed, \
                     stage_index) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &[
                        text(&meta.id.0),
                        text(&meta.run_uri),
                        text(&rfc3339(meta.started_at)),
                        Value::Real(unix(meta.started_at)),
                        text(&meta.phase),
                        text(&meta.workloads.join(",")),
                        text(&meta.backend),
                        int(meta.threads),
                        meta.target.map_or(Value::Null, Value::Real),
                        text(&meta.tool_version),
                        text(&meta.host),
                        int(meta.pid as u64),
                        text(&meta.command_line),
                        text(RunStatus::Running.as_str()),
                        int(meta.client_index as u64),
                        int(meta.client_count as u64),
                        text(&meta.measurement_interval),
                        text(&join_f64(&meta.percentiles)),
                        Value::Real(meta.warmup.as_secs_f64()),
                        int(meta.seed),
                        int(meta.stage_index as u64),
                    ],
                )?;
                for (table, map) in [
                    ("run_properties", &meta.properties),
                    ("run_labels", &meta.labels),
                ] {
                    let sql = format!("INSERT INTO {table} (run_id, key, value) VALUES (?, ?, ?)");
                    for (k, v) in map {
                        db.exec(&sql, &[text(&meta.id.0), text(k), text(v)])?;
                    }
                }
                Ok(())
            },
        )?;
        Ok(id)
    }

    /// Store one time-series interval (one row per operation kind),
    /// committed before returning.
    pub fn write_interval(&self, run: &RunId, interval: &Interval) -> Result<(), StoreError> {
        self.write(
            || format!("storing an interval of run {run}"),
            |db| {
                let r = db.query(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM intervals WHERE run_id = ?",
                    &[text(&run.0)],
                )?;
                let seq = r
                    .rows
                    .first()
                    .and_then(|row| row.first())
                    .and_then(as_i64)
                    .unwrap_or(0);
                let mut params = vec![
                    text(&run.0),
                    Value::Integer(seq),
                    Value::Real(interval.start.as_secs_f64()),
                    Value::Real(interval.length.as_secs_f64()),
                    int(interval.ops_done),
                    Value::Real(interval.cpu.user_s),
                    Value::Real(interval.cpu.system_s),
                    Value::Integer(interval.warmup as i64),
                ];
                match &interval.lag {
                    Some(l) => {
                        params.push(int(l.count));
                        params.extend(figures(l));
                    }
                    None => params.extend((0..10).map(|_| Value::Null)),
                }
                db.exec(
                    "INSERT INTO intervals (run_id, seq, start_s, length_s, ops_done, cpu_user_s, \
                     cpu_system_s, warmup, lag_count, lag_mean_us, lag_min_us, lag_max_us, \
                     lag_p50_us, lag_p90_us, lag_p95_us, lag_p99_us, lag_p99_9_us, lag_p99_99_us) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &params,
                )?;
                let sql = format!(
                    "INSERT INTO interval_ops (run_id, seq, op, {}, service_mean_us, \
                     service_p50_us, service_p99_us, service_p99_9_us, service_max_us, \
                     response_mean_us, response_p50_us, response_p99_us, response_p99_9_us, \
                     response_max_us, service_hist, response_hist) VALUES ({})",
                    STATUS_COLUMNS.join(", "),
                    placeholders(3 + STATUS_COLUMNS.len() + 12)
                );
                for k in &interval.kinds {
                    let mut p = vec![text(&run.0), Value::Integer(seq), text(k.kind.name())];
                    p.extend(k.statuses.iter().map(|&n| int(n)));
                    for s in [&k.service, &k.response] {
                        p.extend(
                            [s.mean_us, s.p50_us, s.p99_us, s.p99_9_us, s.max_us].map(Value::Real),
                        );
                    }
                    p.push(Value::Blob(k.service_hist.clone()));
                    p.push(Value::Blob(k.response_hist.clone()));
                    db.exec(&sql, &p)?;
                }
                Ok(())
            },
        )
    }

    /// Store the totals of a run that ended (per kind: counts by status
    /// and the service and response histograms of successful and failed
    /// operations; rates, client CPU, scheduling lag) and its final status.
    /// The run's start time becomes the outcome's (its first operation).
    pub fn finish_run(
        &self,
        run: &RunId,
        outcome: &RunOutcome,
        status: RunStatus,
        warnings: &[String],
    ) -> Result<(), StoreError> {
        let ended = SystemTime::now();
        let t = RunTotals::of(outcome);
        let changed = self.write(
            || format!("storing the totals of run {run}"),
            |db| {
                // The start becomes the executor's (the first operation's),
                // which the intervals' offsets count from; begin_run could
                // only know the moment the phase began.
                let changed = db.exec(
                    "UPDATE runs SET status = ?, error = NULL, started_at = ?, started_unix = ?, \
                     ended_at = ?, ended_unix = ?, elapsed_s = ?, measured_s = ?, operations = ?, operations_all = ?, \
                     throughput = ?, offered = ?, scheduled = ?, abandoned = ?, stop_reason = ?, \
                     seed = ?, runtime_threads = ?, cpu_user_s = ?, cpu_system_s = ?, lag_hist = ?, \
                     runtime_threads_why = ?, busiest_thread = ? WHERE id = ?",
                    &[
                        text(status.as_str()),
                        text(&rfc3339(outcome.started_at)),
                        Value::Real(unix(outcome.started_at)),
                        text(&rfc3339(ended)),
                        Value::Real(unix(ended)),
                        Value::Real(t.elapsed.as_secs_f64()),
                        Value::Real(t.measured.as_secs_f64()),
                        int(t.operations),
                        int(t.operations_all),
                        Value::Real(t.throughput),
                        t.offered.map_or(Value::Null, Value::Real),
                        int(t.scheduled),
                        int(t.abandoned),
                        text(&t.stop_reason),
                        int(t.seed),
                        int(t.runtime_threads),
                        Value::Real(t.cpu.user_s),
                        Value::Real(t.cpu.system_s),
                        outcome
                            .total
                            .lag
                            .as_deref()
                            .map_or(Value::Null, |h| Value::Blob(histlog::encode(h))),
                        t.thread_use.map_or(Value::Null, |u| text(u.why.name())),
                        t.thread_use.map_or(Value::Null, |u| Value::Real(u.busiest)),
                        text(&run.0),
                    ],
                )?;
                if changed == 0 {
                    return Ok(0);
                }
                db.exec("DELETE FROM run_ops WHERE run_id = ?", &[text(&run.0)])?;
                db.exec("DELETE FROM run_warnings WHERE run_id = ?", &[text(&run.0)])?;
                let sql = format!(
                    "INSERT INTO run_ops (run_id, op, operations, {}, {}, {}, service_hist, \
                     response_hist, failed_service_hist, failed_response_hist) VALUES ({})",
                    STATUS_COLUMNS.join(", "),
                    figure_columns("service"),
                    figure_columns("response"),
                    placeholders(3 + STATUS_COLUMNS.len() + 18 + 4)
                );
                for (kind, s) in outcome.total.kinds() {
                    let mut p = vec![text(&run.0), text(kind.name()), int(s.count())];
                    p.extend(s.statuses.iter().map(|&n| int(n)));
                    p.extend(figures(&LatencySummary::of(&s.ok.service)));
                    p.extend(figures(&LatencySummary::of(&s.ok.response)));
                    p.push(Value::Blob(histlog::encode(&s.ok.service)));
                    p.push(Value::Blob(histlog::encode(&s.ok.response)));
                    match &s.failed {
                        Some(f) => {
                            p.push(Value::Blob(histlog::encode(&f.service)));
                            p.push(Value::Blob(histlog::encode(&f.response)));
                        }
                        None => p.extend([Value::Null, Value::Null]),
                    }
                    db.exec(&sql, &p)?;
                }
                for (i, w) in warnings.iter().enumerate() {
                    db.exec(
                        "INSERT INTO run_warnings (run_id, seq, message) VALUES (?, ?, ?)",
                        &[text(&run.0), int(i as u64), text(w)],
                    )?;
                }
                db.exec(
                    "DELETE FROM run_server_counters WHERE run_id = ?",
                    &[text(&run.0)],
                )?;
                if let Some(server) = &outcome.server {
                    for (name, delta) in &server.deltas {
                        db.exec(
                            "INSERT INTO run_server_counters (run_id, name, delta, operations, per_op) \
                             VALUES (?, ?, ?, ?, ?)",
                            &[
                                text(&run.0),
                                text(name),
                                Value::Real(*delta),
                                int(server.operations),
                                server.per_op(name).map_or(Value::Null, Value::Real),
                            ],
                        )?;
                    }
                }
                Ok(changed)
            },
        )?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun(run.0.clone()));
        }
        self.merge_if_last(run)
    }

    /// When `run` is the last client process of its stage to finish, keep
    /// the stage as a whole: its clients merged exactly, for the views' one
    /// row per run stage. Clients finishing at once may both get here; each
    /// writes the same whole, and the last to commit has seen every client.
    pub(crate) fn merge_if_last(&self, run: &RunId) -> Result<(), StoreError> {
        let rows = self
            .read(
                || format!("reading run {run}"),
                "SELECT run_uri, phase, stage_index, client_count FROM runs WHERE id = ?",
                &[text(&run.0)],
            )?
            .rows;
        let Some(row) = rows.first() else {
            return Ok(());
        };
        let (uri, phase, stage, clients) = (
            row[0].as_text().unwrap_or_default().to_string(),
            row[1].as_text().unwrap_or_default().to_string(),
            as_u64(&row[2]),
            as_u64(&row[3]),
        );
        if clients <= 1 {
            return Ok(());
        }
        let ids: Vec<RunId> = self
            .read(
                || format!("finding the client processes of run {uri}"),
                "SELECT id FROM runs WHERE run_uri = ? AND phase = ? AND stage_index = ? \
                 AND status IN (?, ?) ORDER BY client_index, started_unix",
                &[
                    text(&uri),
                    text(&phase),
                    int(stage),
                    text(RunStatus::Completed.as_str()),
                    text(RunStatus::Interrupted.as_str()),
                ],
            )?
            .rows
            .into_iter()
            .filter_map(|row| row[0].as_text().map(|s| RunId(s.to_string())))
            .collect();
        if (ids.len() as u64) < clients {
            return Ok(());
        }
        let runs = ids
            .iter()
            .map(|id| self.load_id(id, IntervalDetail::Figures))
            .collect::<Result<Vec<_>, _>>()?;
        let whole = crate::merge(&runs)?;
        let Some(totals) = &whole.summary.totals else {
            return Ok(());
        };
        self.write(
            || format!("storing run {uri} as a whole"),
            |db| {
                let key = [text(&uri), text(&phase), int(stage)];
                db.exec(
                    "DELETE FROM merged_ops WHERE run_uri = ? AND phase = ? AND stage_index = ?",
                    &key,
                )?;
                db.exec(
                    "DELETE FROM merged_runs WHERE run_uri = ? AND phase = ? AND stage_index = ?",
                    &key,
                )?;
                db.exec(
                    "INSERT INTO merged_runs (run_uri, phase, stage_index, first_run_id, clients, \
                     operations, measured_s, throughput) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    &[
                        text(&uri),
                        text(&phase),
                        int(stage),
                        text(&ids[0].0),
                        int(clients),
                        int(totals.operations),
                        Value::Real(totals.measured.as_secs_f64()),
                        Value::Real(totals.throughput),
                    ],
                )?;
                for (kind, s) in whole.total.kinds() {
                    let service = LatencySummary::of(&s.ok.service);
                    let response = LatencySummary::of(&s.ok.response);
                    db.exec(
                        "INSERT INTO merged_ops (run_uri, phase, stage_index, op, operations, \
                         service_p50_us, service_p99_us, service_p99_9_us, response_p50_us, \
                         response_p99_us, response_p99_9_us) \
                         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        &[
                            text(&uri),
                            text(&phase),
                            int(stage),
                            text(kind.name()),
                            int(s.count()),
                            Value::Real(service.p50_us),
                            Value::Real(service.p99_us),
                            Value::Real(service.p99_9_us),
                            Value::Real(response.p50_us),
                            Value::Real(response.p99_us),
                            Value::Real(response.p99_9_us),
                        ],
                    )?;
                }
                Ok(())
            },
        )
    }

    /// Mark a run that is still `running` failed, keeping what it stored
    /// so far. A run that already ended keeps its status.
    pub fn fail_run(&self, run: &RunId, error: &str) -> Result<(), StoreError> {
        let ended = SystemTime::now();
        let exists = self.write(
            || format!("marking run {run} failed"),
            |db| {
                db.exec(
                    "UPDATE runs SET status = ?, error = ?, ended_at = ?, ended_unix = ? \
                     WHERE id = ? AND status = ?",
                    &[
                        text(RunStatus::Failed.as_str()),
                        text(error),
                        text(&rfc3339(ended)),
                        Value::Real(unix(ended)),
                        text(&run.0),
                        text(RunStatus::Running.as_str()),
                    ],
                )?;
                let r = db.query("SELECT COUNT(*) FROM runs WHERE id = ?", &[text(&run.0)])?;
                Ok(r.rows.first().and_then(|row| row.first()).and_then(as_i64) == Some(1))
            },
        )?;
        if !exists {
            return Err(StoreError::NoSuchRun(run.0.clone()));
        }
        Ok(())
    }

    /// Add `labels` to a run (replacing a label of the same key): what is
    /// known of a run only once it has been judged, such as a capacity
    /// step's verdict.
    pub fn add_labels(
        &self,
        run: &RunId,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), StoreError> {
        if labels.is_empty() {
            return Ok(());
        }
        let labels = sojourn_core::redact::pairs(labels);
        self.write(
            || format!("labelling run {run}"),
            |db| {
                for (k, v) in &labels {
                    db.exec(
                        "DELETE FROM run_labels WHERE run_id = ? AND key = ?",
                        &[text(&run.0), text(k)],
                    )?;
                    db.exec(
                        "INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)",
                        &[text(&run.0), text(k), text(v)],
                    )?;
                }
                Ok(())
            },
        )
    }

    /// Mark failed every run left `running` by a process that no longer
    /// exists on this host; returns how many. Done on open and list. The
    /// end time is taken from the last stored interval.
    pub fn mark_dead_runs(&self) -> Result<usize, StoreError> {
        if self.read_only {
            return Ok(0);
        }
        let host = sojourn_core::record::host_name();
        let r = self.read(
            || "looking for runs whose process ended".into(),
            "SELECT id, pid, started_unix, \
             (SELECT MAX(start_s + length_s) FROM intervals i WHERE i.run_id = r.id) \
             FROM runs r WHERE status = ? AND host = ?",
            &[text(RunStatus::Running.as_str()), text(&host)],
        )?;
        let mut marked = 0;
        for row in r.rows {
            let (Some(id), Some(pid)) = (row[0].as_text(), as_i64(&row[1])) else {
                continue;
            };
            if crate::ids::pid_alive(pid as u32) {
                continue;
            }
            let started = as_f64(&row[2]).unwrap_or(0.0);
            let ended = started + as_f64(&row[3]).unwrap_or(0.0);
            let error = format!(
                "its process (pid {pid} on {host}) ended without finishing the run; \
                 the intervals stored before that are kept"
            );
            let ended_at = from_unix(ended);
            self.write(
                || format!("marking run {id} failed"),
                |db| {
                    db.exec(
                        "UPDATE runs SET status = ?, error = ?, ended_at = ?, ended_unix = ? \
                         WHERE id = ? AND status = ?",
                        &[
                            text(RunStatus::Failed.as_str()),
                            text(&error),
                            text(&rfc3339(ended_at)),
                            Value::Real(ended),
                            text(id),
                            text(RunStatus::Running.as_str()),
                        ],
                    )
                },
            )?;
            marked += 1;
        }
        Ok(marked)
    }

    /// The runs matching `filter`, oldest first (with a limit: the newest
    /// `limit`, still oldest first).
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        self.mark_dead_runs()?;
        let mut sql = format!("SELECT {RUN_COLUMNS} FROM runs r WHERE 1 = 1");
        let mut params = Vec::new();
        if let Some(p) = &filter.phase {
            sql.push_str(" AND phase = ?");
            params.push(text(p));
        }
        if let Some(s) = filter.status {
            sql.push_str(" AND status = ?");
            params.push(text(s.as_str()));
        }
        if let Some(u) = &filter.run_uri {
            sql.push_str(" AND run_uri = ?");
            params.push(text(u));
        }
        if let Some(t) = filter.since {
            sql.push_str(" AND started_unix >= ?");
            params.push(Value::Real(unix(t)));
        }
        if let Some(t) = filter.until {
            sql.push_str(" AND started_unix < ?");
            params.push(Value::Real(unix(t)));
        }
        for (k, v) in &filter.labels {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.id \
                 AND l.key = ? AND l.value = ?)",
            );
            params.push(text(k));
            params.push(text(v));
        }
        sql.push_str(" ORDER BY started_unix DESC, id DESC");
        let rows = self.read(|| "listing runs".into(), &sql, &params)?.rows;
        let mut out = Vec::new();
        for row in rows {
            let s = self.summary_from_row(&row)?;
            if let Some(w) = &filter.workload {
                if !s.meta.workloads.iter().any(|n| n == w) {
                    continue;
                }
            }
            if let Some(b) = &filter.backend {
                if !s.meta.backend.contains(b.as_str()) {
                    continue;
                }
            }
            out.push(s);
            if filter.limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        out.reverse();
        for s in &mut out {
            self.fill_side_tables(s)?;
        }
        Ok(out)
    }

    fn fill_side_tables(&self, s: &mut RunSummary) -> Result<(), StoreError> {
        let id = s.meta.id.0.clone();
        for (table, which) in [("run_properties", 0), ("run_labels", 1)] {
            let rows = self
                .read(
                    || format!("reading {table} of run {id}"),
                    &format!("SELECT key, value FROM {table} WHERE run_id = ? ORDER BY key"),
                    &[text(&id)],
                )?
                .rows;
            // Redacted on reading too: a store written by an older sojourn
            // may hold a label or property value in clear.
            let map: BTreeMap<String, String> = rows
                .into_iter()
                .filter_map(|r| {
                    let key = r[0].as_text()?;
                    let value = r[1].as_text()?;
                    Some((
                        key.to_string(),
                        sojourn_core::redact::property_value(key, value),
                    ))
                })
                .collect();
            if which == 0 {
                s.meta.properties = map;
            } else {
                s.meta.labels = map;
            }
        }
        Ok(())
    }

    fn summary_from_row(&self, row: &[Value]) -> Result<RunSummary, StoreError> {
        let id = row[0].as_text().unwrap_or_default().to_string();
        let bad = |what: &str| self.corrupt(&id, format!("{what} is missing or not valid"));
        let t = |i: usize| row[i].as_text().unwrap_or_default().to_string();
        let status_text = t(13);
        let status = RunStatus::parse(&status_text).ok_or_else(|| bad("status"))?;
        let totals = as_f64(&row[17]).map(|elapsed| RunTotals {
            elapsed: secs(elapsed),
            measured: secs(as_f64(&row[18]).unwrap_or(0.0)),
            operations: as_u64(&row[19]),
            operations_all: as_u64(&row[20]),
            throughput: as_f64(&row[21]).unwrap_or(0.0),
            offered: as_f64(&row[22]),
            scheduled: as_u64(&row[23]),
            abandoned: as_u64(&row[24]),
            stop_reason: row[25].as_text().unwrap_or_default().to_string(),
            seed: as_u64(&row[26]),
            runtime_threads: as_u64(&row[27]),
            thread_use: row[38]
                .as_text()
                .and_then(ThreadsWhy::parse)
                .zip(as_f64(&row[39]))
                .map(|(why, busiest)| ThreadUse { why, busiest }),
            cpu: CpuTimes {
                user_s: as_f64(&row[28]).unwrap_or(0.0),
                system_s: as_f64(&row[29]).unwrap_or(0.0),
            },
        });
        let workload = t(5);
        Ok(RunSummary {
            meta: RunMeta {
                id: RunId(id.clone()),
                run_uri: t(1),
                stage_index: as_u64(&row[37]) as u32,
                started_at: from_unix(as_f64(&row[3]).ok_or_else(|| bad("start time"))?),
                phase: t(4),
                workloads: if workload.is_empty() {
                    Vec::new()
                } else {
                    workload.split(',').map(str::to_string).collect()
                },
                properties: BTreeMap::new(),
                backend: t(6),
                threads: as_u64(&row[7]),
                target: as_f64(&row[8]),
                labels: BTreeMap::new(),
                tool_version: t(9),
                host: t(10),
                client_index: as_u64(&row[30]) as u32,
                client_count: as_u64(&row[31]) as u32,
                pid: as_u64(&row[11]) as u32,
                command_line: t(12),
                measurement_interval: t(32),
                percentiles: t(33)
                    .split(',')
                    .filter_map(|p| p.trim().parse().ok())
                    .collect(),
                warmup: secs(as_f64(&row[34]).unwrap_or(0.0)),
                seed: as_u64(&row[26]),
            },
            status,
            ended_at: as_f64(&row[16]).map(from_unix),
            error: row[14].as_text().map(str::to_string),
            totals,
            intervals: as_u64(&row[35]),
        })
    }

    /// Every client run that `run` names: a full run id, a unique prefix
    /// of one (at least 4 characters), a run URI of one stage (all client
    /// processes of that run), `URI/STAGE` for one stage of a benchmark's
    /// URI (its index, or `load` or `run` where only one stage is that),
    /// or `last` for the newest run.
    pub fn resolve_all(&self, run: &str) -> Result<Vec<RunId>, StoreError> {
        let ids = |r: QueryResult| -> Vec<RunId> {
            r.rows
                .into_iter()
                .filter_map(|row| row[0].as_text().map(|s| RunId(s.to_string())))
                .collect()
        };
        if run == "last" || run == "latest" {
            let found = ids(self.read(
                || "finding the newest run".into(),
                "SELECT id FROM runs ORDER BY started_unix DESC, id DESC LIMIT 1",
                &[],
            )?);
            return if found.is_empty() {
                Err(StoreError::NoSuchRun(run.to_string()))
            } else {
                Ok(found)
            };
        }
        let exact = ids(self.read(
            || format!("finding run {run}"),
            "SELECT id FROM runs WHERE id = ?",
            &[text(run)],
        )?);
        if !exact.is_empty() {
            return Ok(exact);
        }
        if let Some((uri, part)) = run.rsplit_once('/') {
            let stages = self.stages_of(uri)?;
            if !stages.is_empty() {
                let chosen: Vec<&Stage> = match part.parse::<u64>() {
                    Ok(i) => stages.iter().filter(|s| s.index == i).collect(),
                    Err(_) => stages.iter().filter(|s| s.phase == part).collect(),
                };
                return match chosen[..] {
                    [stage] => self.clients_of(uri, stage),
                    _ => Err(self.stages_error(uri, &stages)),
                };
            }
        }
        let stages = self.stages_of(run)?;
        match &stages[..] {
            [] => {}
            [stage] => return self.clients_of(run, stage),
            // `bench` and suites give a benchmark's stages one URI, as PKB
            // does; one run of it is one of those stages.
            _ => return Err(self.stages_error(run, &stages)),
        }
        if run.chars().count() >= 4 {
            let by_prefix = ids(self.read(
                || format!("finding run {run}"),
                "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY started_unix",
                &[int(run.len() as u64), text(run)],
            )?);
            match by_prefix.len() {
                0 => {}
                1 => return Ok(by_prefix),
                n => {
                    return Err(StoreError::Ambiguous {
                        prefix: run.to_string(),
                        count: n,
                        examples: by_prefix
                            .iter()
                            .take(3)
                            .map(|r| r.0.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
                }
            }
        } else if !run.is_empty() {
            return Err(StoreError::ShortPrefix(run.to_string()));
        }
        Err(StoreError::NoSuchRun(run.to_string()))
    }

    /// The stages a run URI covers, load first, then each run stage in
    /// order (none: no run has that URI).
    fn stages_of(&self, uri: &str) -> Result<Vec<Stage>, StoreError> {
        Ok(self
            .read(
                || format!("finding run {uri}"),
                "SELECT DISTINCT phase, stage_index FROM runs WHERE run_uri = ? \
                 ORDER BY phase, stage_index",
                &[text(uri)],
            )?
            .rows
            .into_iter()
            .map(|row| Stage {
                phase: row[0].as_text().unwrap_or_default().to_string(),
                index: as_u64(&row[1]),
            })
            .collect())
    }

    /// What to say when a run URI names several stages where one is meant.
    pub(crate) fn stages_error(&self, uri: &str, stages: &[Stage]) -> StoreError {
        StoreError::Stages {
            uri: uri.to_string(),
            count: stages.len(),
            // By index; by phase where an index is not the stage's own (a
            // store from before indices: `bench`'s load and run both 0).
            stages: stages
                .iter()
                .map(|s| {
                    if stages.iter().filter(|o| o.index == s.index).count() == 1 {
                        format!("{uri}/{} ({})", s.index, s.phase)
                    } else {
                        format!("{uri}/{}", s.phase)
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The client processes of one stage of the run URI `uri`.
    fn clients_of(&self, uri: &str, stage: &Stage) -> Result<Vec<RunId>, StoreError> {
        Ok(self
            .read(
                || format!("finding the {stage} of run {uri}"),
                "SELECT id FROM runs WHERE run_uri = ? AND phase = ? AND stage_index = ? \
                 ORDER BY client_index, started_unix",
                &[text(uri), text(&stage.phase), int(stage.index)],
            )?
            .rows
            .into_iter()
            .filter_map(|row| row[0].as_text().map(|s| RunId(s.to_string())))
            .collect())
    }

    /// Every client process of the run stage `id` belongs to (its run URI,
    /// phase and stage index), when it had several; else `id` alone. So
    /// `last`, or the id of one client, names the whole run, as a PKB user
    /// means it.
    fn whole_run(&self, id: &RunId) -> Result<Vec<RunId>, StoreError> {
        let all: Vec<RunId> = self
            .read(
                || format!("finding the client processes of run {id}"),
                "SELECT c.id FROM runs r JOIN runs c ON c.run_uri = r.run_uri AND c.phase = r.phase \
                 AND c.stage_index = r.stage_index \
                 WHERE r.id = ? AND r.client_count > 1 ORDER BY c.client_index, c.started_unix",
                &[text(&id.0)],
            )?
            .rows
            .into_iter()
            .filter_map(|row| row[0].as_text().map(|s| RunId(s.to_string())))
            .collect();
        Ok(if all.is_empty() {
            vec![id.clone()]
        } else {
            all
        })
    }

    /// The one run that `run` names (see [`Store::resolve_all`]); a run
    /// URI shared by several client processes is ambiguous here.
    pub fn resolve(&self, run: &str) -> Result<RunId, StoreError> {
        let mut all = self.resolve_all(run)?;
        if all.len() > 1 {
            return Err(StoreError::Ambiguous {
                prefix: run.to_string(),
                count: all.len(),
                examples: all
                    .iter()
                    .take(3)
                    .map(|r| r.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(all.remove(0))
    }

    /// Everything stored about a run, every histogram decoded (see
    /// [`IntervalDetail`] for the memory that takes).
    pub fn load(&self, run: &str) -> Result<RunRecord, StoreError> {
        self.load_with(run, IntervalDetail::Histograms)
    }

    /// A run, its interval histograms decoded or not.
    pub fn load_with(&self, run: &str, detail: IntervalDetail) -> Result<RunRecord, StoreError> {
        let id = self.resolve(run)?;
        self.load_id(&id, detail)
    }

    /// Every client run that `run` names (see [`Store::resolve_all`]),
    /// merged exactly into one ([`crate::merge`]).
    pub fn load_merged(&self, run: &str) -> Result<RunRecord, StoreError> {
        self.load_merged_with(run, IntervalDetail::Histograms)
    }

    /// What `run` names, one merged record per stage: a run URI that
    /// `bench` or a suite gave a benchmark's stages (as PKB gives one URI
    /// to them) is each of them, load first; anything else is
    /// [`Store::load_merged_with`]'s one record.
    pub fn load_stages(
        &self,
        run: &str,
        detail: IntervalDetail,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let stages = self.stages_of(run)?;
        if stages.len() < 2 {
            return Ok(vec![self.load_merged_with(run, detail)?]);
        }
        stages
            .iter()
            .map(|stage| {
                let runs = self
                    .clients_of(run, stage)?
                    .iter()
                    .map(|id| self.load_id(id, detail))
                    .collect::<Result<Vec<_>, _>>()?;
                crate::merge(&runs)
            })
            .collect()
    }

    /// [`Store::load_merged`], its interval histograms decoded or not.
    pub fn load_merged_with(
        &self,
        run: &str,
        detail: IntervalDetail,
    ) -> Result<RunRecord, StoreError> {
        let mut ids = self.resolve_all(run)?;
        if let [id] = &ids[..] {
            ids = self.whole_run(id)?;
        }
        let runs = ids
            .iter()
            .map(|id| self.load_id(id, detail))
            .collect::<Result<Vec<_>, _>>()?;
        crate::merge(&runs)
    }

    fn load_id(&self, id: &RunId, detail: IntervalDetail) -> Result<RunRecord, StoreError> {
        let key = [text(&id.0)];
        let rows = self
            .read(
                || format!("reading run {id}"),
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE id = ?"),
                &key,
            )?
            .rows;
        let row = rows
            .first()
            .ok_or_else(|| StoreError::NoSuchRun(id.0.clone()))?;
        let mut summary = self.summary_from_row(row)?;
        self.fill_side_tables(&mut summary)?;
        let lag_hist = row[36].clone();

        let warnings = self
            .read(
                || format!("reading the warnings of run {id}"),
                "SELECT message FROM run_warnings WHERE run_id = ? ORDER BY seq",
                &key,
            )?
            .rows
            .into_iter()
            .filter_map(|r| r[0].as_text().map(str::to_string))
            .collect();

        let decode = |v: &Value, what: &str| -> Result<Option<Histogram<u64>>, StoreError> {
            match v {
                Value::Blob(b) => histlog::decode(b)
                    .map(Some)
                    .map_err(|e| self.corrupt(&id.0, format!("{what}: {e}"))),
                Value::Null => Ok(None),
                _ => Err(self.corrupt(&id.0, format!("{what} is not a histogram"))),
            }
        };
        let required = |v: &Value, what: &str| -> Result<Histogram<u64>, StoreError> {
            decode(v, what)?.ok_or_else(|| self.corrupt(&id.0, format!("{what} is missing")))
        };
        let kind_of = |v: &Value| -> Result<OpKind, StoreError> {
            let name = v.as_text().unwrap_or_default();
            OpKind::ALL
                .into_iter()
                .find(|k| k.name() == name)
                .ok_or_else(|| self.corrupt(&id.0, format!("unknown operation kind {name:?}")))
        };
        let statuses = |row: &[Value], from: usize| -> [u64; Status::COUNT] {
            let mut s = [0u64; Status::COUNT];
            for (i, n) in s.iter_mut().enumerate() {
                *n = as_u64(&row[from + i]);
            }
            s
        };

        let mut total = Stats::default();
        let ops = self
            .read(
                || format!("reading the totals of run {id}"),
                &format!(
                    "SELECT op, {}, service_hist, response_hist, failed_service_hist, \
                     failed_response_hist FROM run_ops WHERE run_id = ?",
                    STATUS_COLUMNS.join(", ")
                ),
                &key,
            )?
            .rows;
        let h = 1 + STATUS_COLUMNS.len();
        for row in &ops {
            let kind = kind_of(&row[0])?;
            let what = |w: &str| format!("{} {w} histogram", kind.name());
            let failed = match (
                decode(&row[h + 2], &what("failed service"))?,
                decode(&row[h + 3], &what("failed response"))?,
            ) {
                (Some(service), Some(response)) => Some(Box::new(Latencies { service, response })),
                _ => None,
            };
            total.set_op(
                kind,
                OpStats {
                    ok: Latencies {
                        service: required(&row[h], &what("service"))?,
                        response: required(&row[h + 1], &what("response"))?,
                    },
                    failed,
                    statuses: statuses(row, 1),
                },
            );
        }
        total.lag = decode(&lag_hist, "scheduling lag histogram")?.map(Box::new);
        total.ops_done = summary.totals.as_ref().map_or(0, |t| t.operations);

        let mut intervals: Vec<StoredInterval> = self
            .read(
                || format!("reading the time series of run {id}"),
                "SELECT seq, start_s, length_s, ops_done, cpu_user_s, cpu_system_s, warmup, \
                 lag_count, lag_mean_us, lag_min_us, lag_max_us, lag_p50_us, lag_p90_us, \
                 lag_p95_us, lag_p99_us, lag_p99_9_us, lag_p99_99_us \
                 FROM intervals WHERE run_id = ? ORDER BY seq",
                &key,
            )?
            .rows
            .into_iter()
            .map(|r| {
                let f = |i: usize| as_f64(&r[i]).unwrap_or(0.0);
                let lag = as_i64(&r[7]).map(|count| LatencySummary {
                    count: count as u64,
                    mean_us: f(8),
                    min_us: f(9),
                    max_us: f(10),
                    p50_us: f(11),
                    p90_us: f(12),
                    p95_us: f(13),
                    p99_us: f(14),
                    p99_9_us: f(15),
                    p99_99_us: f(16),
                    ci95_us: Default::default(),
                });
                let mut stats = Stats::default();
                stats.ops_done = as_u64(&r[3]);
                StoredInterval {
                    start: secs(f(1)),
                    length: secs(f(2)),
                    ops_done: as_u64(&r[3]),
                    cpu: CpuTimes {
                        user_s: f(4),
                        system_s: f(5),
                    },
                    warmup: as_i64(&r[6]).unwrap_or(0) != 0,
                    ops: Vec::new(),
                    stats,
                    lag,
                }
            })
            .collect();
        let decode_all = detail == IntervalDetail::Histograms;
        let iops = self
            .read(
                || format!("reading the time series of run {id}"),
                &format!(
                    "SELECT seq, op, {}, service_mean_us, service_p50_us, service_p99_us, \
                     service_p99_9_us, service_max_us, response_mean_us, response_p50_us, \
                     response_p99_us, response_p99_9_us, response_max_us{} FROM interval_ops \
                     WHERE run_id = ? ORDER BY seq",
                    STATUS_COLUMNS.join(", "),
                    if decode_all {
                        ", service_hist, response_hist"
                    } else {
                        ""
                    }
                ),
                &key,
            )?
            .rows;
        let fig = 2 + STATUS_COLUMNS.len();
        let h = fig + 10;
        for row in &iops {
            let seq = as_u64(&row[0]) as usize;
            let kind = kind_of(&row[1])?;
            let Some(iv) = intervals.get_mut(seq) else {
                return Err(self.corrupt(&id.0, format!("interval {seq} has no time-series row")));
            };
            let figures = |at: usize| IntervalFigures {
                mean_us: as_f64(&row[at]).unwrap_or(0.0),
                p50_us: as_f64(&row[at + 1]).unwrap_or(0.0),
                p99_us: as_f64(&row[at + 2]).unwrap_or(0.0),
                p99_9_us: as_f64(&row[at + 3]).unwrap_or(0.0),
                max_us: as_f64(&row[at + 4]).unwrap_or(0.0),
            };
            iv.ops.push(IntervalOp {
                kind,
                statuses: statuses(row, 2),
                service: figures(fig),
                response: figures(fig + 5),
            });
            if !decode_all {
                continue;
            }
            let what = |w: &str| format!("interval {seq} {} {w} histogram", kind.name());
            iv.stats.set_op(
                kind,
                OpStats {
                    ok: Latencies {
                        service: required(&row[h], &what("service"))?,
                        response: required(&row[h + 1], &what("response"))?,
                    },
                    failed: None,
                    statuses: statuses(row, 2),
                },
            );
        }
        for iv in &mut intervals {
            iv.ops.sort_by_key(|o| o.kind);
        }
        let server = self.load_server(id)?;
        Ok(RunRecord {
            self_check: None,
            summary,
            warnings,
            total,
            intervals,
            server,
        })
    }

    /// The run's server counters, `None` if none were stored.
    fn load_server(&self, id: &RunId) -> Result<Option<ServerStats>, StoreError> {
        let rows = self
            .read(
                || format!("reading the server counters of run {id}"),
                "SELECT name, delta, operations FROM run_server_counters WHERE run_id = ? ORDER BY name",
                &[text(&id.0)],
            )?
            .rows;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut s = ServerStats::default();
        for r in rows {
            let name = r[0].as_text().unwrap_or_default().to_string();
            s.deltas.insert(name, as_f64(&r[1]).unwrap_or(0.0));
            s.operations = as_u64(&r[2]);
        }
        Ok(Some(s))
    }

    /// Read-only SQL over the store's tables and views (see
    /// docs/results.md). Statements that would change the store are
    /// refused before they run.
    pub fn query(&self, sql: &str) -> Result<QueryResult, StoreError> {
        // Only query statements: a PRAGMA or SET could lift the database's
        // own read-only guard for the next statement.
        let first = first_keyword(sql).to_ascii_uppercase();
        if !matches!(first.as_str(), "SELECT" | "WITH" | "VALUES" | "EXPLAIN") {
            return Err(StoreError::ReadOnly(format!(
                "{sql:?} is not a query; only SELECT, WITH ... SELECT, VALUES and EXPLAIN are \
                 accepted"
            )));
        }
        if let Some(f) = server_function(sql) {
            return Err(StoreError::ReadOnly(format!(
                "{f}() is a server function (files, sessions, settings), not a query of the \
                 results; query the store's tables and views"
            )));
        }
        let mut db = self.db.lock();
        if let Some(ro) = db.is_read_only(sql) {
            match ro {
                Ok(true) => {}
                Ok(false) => {
                    return Err(StoreError::ReadOnly(format!(
                        "{sql:?} would change the store; only queries (SELECT, WITH ... SELECT) \
                         are accepted"
                    )))
                }
                Err(e) => return Err(self.err("preparing the query", e)),
            }
        }
        db.query_read_only(sql)
            .map_err(|e| self.err("running the query", e))
    }
}

/// One stage of a run URI: the load, or one of its run stages.
pub(crate) struct Stage {
    phase: String,
    index: u64,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            0 => f.write_str(&self.phase),
            i => write!(f, "{} stage {i}", self.phase),
        }
    }
}

/// The `runs` columns [`Store::summary_from_row`] reads, by position.
const RUN_COLUMNS: &str = "id, run_uri, started_at, started_unix, phase, workload, backend, \
     threads, target, tool_version, host, pid, command_line, status, error, ended_at, \
     ended_unix, elapsed_s, measured_s, operations, operations_all, throughput, offered, \
     scheduled, abandoned, stop_reason, seed, runtime_threads, cpu_user_s, cpu_system_s, \
     client_index, client_count, measurement_interval, percentiles, warmup_s, \
     (SELECT COUNT(*) FROM intervals i WHERE i.run_id = r.id), lag_hist, stage_index, \
     runtime_threads_why, busiest_thread";

/// The first word of a statement, after whitespace and SQL comments.
/// The first call in `sql` of a server's administrative function: a read-
/// only transaction does not stop PostgreSQL's `pg_read_file`,
/// `pg_terminate_backend`, `lo_export` or `dblink`, so `results query`
/// refuses every `pg_*`, `lo_*`, `dblink*` and `set_config` call.
fn server_function(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut i = 0;
    while i < bytes.len() {
        if !ident(bytes[i]) || (i > 0 && ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && ident(bytes[i]) {
            i += 1;
        }
        let name = &lower[start..i];
        let mut j = i;
        if bytes.get(j) == Some(&b'"') {
            j += 1;
        }
        while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        let called = bytes.get(j) == Some(&b'(');
        let administrative =
            ["pg_", "lo_", "dblink"].iter().any(|p| name.starts_with(p)) || name == "set_config";
        if called && administrative {
            return Some(name.to_string());
        }
    }
    None
}

fn first_keyword(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
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
    fn server_functions_are_found() {
        for sql in [
            "SELECT pg_read_file('/etc/passwd')",
            "select x from (select PG_TERMINATE_BACKEND (1) as x) t",
            "SELECT \"pg_catalog\".\"pg_read_file\"('x')",
            "SELECT lo_export(1, '/tmp/x')",
            "SELECT set_config('x', 'y', false)",
        ] {
            assert!(server_function(sql).is_some(), "{sql}");
        }
        for sql in [
            "SELECT * FROM runs",
            "SELECT my_pg_stats FROM t",
            "SELECT count(*) FROM run_labels WHERE key = 'pg_x'",
        ] {
            assert_eq!(server_function(sql), None, "{sql}");
        }
    }

    #[test]
    fn first_keywords_skip_comments() {
        assert_eq!(first_keyword("  -- note\n /* x */ select 1"), "select");
        assert_eq!(
            first_keyword("WITH a AS (SELECT 1) SELECT * FROM a"),
            "WITH"
        );
        assert_eq!(first_keyword("PRAGMA query_only = 0"), "PRAGMA");
        assert_eq!(first_keyword(""), "");
    }

    #[test]
    fn times_round_trip_to_the_microsecond() {
        let t = UNIX_EPOCH + Duration::from_micros(1_763_723_756_123_456);
        assert_eq!(from_unix(unix(t)), t);
    }
}
