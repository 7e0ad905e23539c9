//! The `memory:` backend: an in-process ordered map with real database
//! semantics, plus test hooks that make it misbehave on purpose.
//!
//! It owns the data of every table of one [`MemoryBackend`] (and of its
//! clones): a `BTreeMap` per table behind a reader-writer lock, so scans are
//! in key order and concurrent reads never wait for each other. Writers hold
//! the lock only for the map operation itself; values are copied before the
//! lock is taken.
//!
//! The hooks ([`MemoryOptions`]) let the core's tests drive the pipeline into
//! the situations a benchmark must report honestly:
//!
//! - **stall**: the whole database freezes once, after a number of
//!   operations, for a fixed time; every operation that begins or is still in
//!   progress during the freeze completes when it ends.
//! - **service rate**: the database is a single FIFO server of a fixed
//!   capacity, so offering more than that capacity builds a queue.
//!
//! With no hook configured the only cost is one `Option` check per operation.
//! A request the [`guard`](super::guard) refuses (a field the table lacks)
//! never reaches the hooks, as it would never reach a server.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::time::{sleep_until, Instant};

use super::guard::{Failure, Guard, Operations, Read, Scan, Settle};
use super::{Backend, BackendError, FieldValue, Fields, Row, Schema, Status, Threading};

/// Longest stall or service time a hook accepts; anything longer is surely a
/// typo, and the bound keeps `Instant` arithmetic far from overflow.
const MAX_HOOK_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// The query keys `memory:?...` accepts, for error messages.
const QUERY_KEYS: &str = "stall_at (or stall_after_ops), stall_ms, max_ops_per_sec";

/// Test hooks of the `memory:` backend. The default has none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryOptions {
    /// Freeze the database once, when this many operations have begun: the
    /// operation after them is the first to wait.
    pub stall_after_ops: Option<u64>,
    /// How long the freeze lasts.
    pub stall: Duration,
    /// Serve at most this many operations per second, one at a time, first
    /// come first served.
    pub max_ops_per_sec: Option<f64>,
}

impl MemoryOptions {
    /// Parse the query part of a `memory:` URL (without the `?`), e.g.
    /// `stall_at=5000&stall_ms=200` or `max_ops_per_sec=1000`.
    pub fn from_query(query: &str) -> Result<MemoryOptions, BackendError> {
        let mut options = MemoryOptions::default();
        let mut stall_ms = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                BackendError::Config(format!(
                    "memory: option `{pair}` has no value; expected key=value with key one of {QUERY_KEYS}"
                ))
            })?;
            match key {
                "stall_at" | "stall_after_ops" => {
                    options.stall_after_ops = Some(parse_number(key, value)?);
                }
                "stall_ms" => stall_ms = Some(parse_number::<u64>(key, value)?),
                "max_ops_per_sec" => options.max_ops_per_sec = Some(parse_number(key, value)?),
                _ => {
                    return Err(BackendError::Config(format!(
                        "unknown memory: option `{key}`; accepted: {QUERY_KEYS}"
                    )))
                }
            }
        }
        match (options.stall_after_ops, stall_ms) {
            (Some(_), Some(ms)) => options.stall = Duration::from_millis(ms),
            (None, None) => {}
            // Half a stall configuration is almost certainly a typo; silently
            // running without the stall would make a test pass for the wrong
            // reason.
            (Some(_), None) => {
                return Err(BackendError::Config(
                    "memory: option stall_at needs stall_ms".to_string(),
                ))
            }
            (None, Some(_)) => {
                return Err(BackendError::Config(
                    "memory: option stall_ms needs stall_at".to_string(),
                ))
            }
        }
        options.validate()?;
        Ok(options)
    }

    /// The query string that [`MemoryOptions::from_query`] reads back to
    /// these options (empty when there are no hooks).
    pub fn to_query(&self) -> String {
        let mut query = String::new();
        if let Some(n) = self.stall_after_ops {
            let _ = write!(query, "stall_at={n}&stall_ms={}", self.stall.as_millis());
        }
        if let Some(k) = self.max_ops_per_sec {
            if !query.is_empty() {
                query.push('&');
            }
            let _ = write!(query, "max_ops_per_sec={k}");
        }
        query
    }

    fn validate(&self) -> Result<(), BackendError> {
        if self.stall > MAX_HOOK_DURATION {
            return Err(BackendError::Config(format!(
                "memory: stall of {:?} is longer than the {:?} allowed",
                self.stall, MAX_HOOK_DURATION
            )));
        }
        if let Some(k) = self.max_ops_per_sec {
            service_interval(k)?;
        }
        Ok(())
    }
}

fn parse_number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, BackendError> {
    value.parse().map_err(|_| {
        BackendError::Config(format!(
            "memory: option {key} has value `{value}`, which is not a valid number"
        ))
    })
}

/// Time one operation occupies the server at `k` operations per second.
fn service_interval(k: f64) -> Result<Duration, BackendError> {
    let invalid = || {
        BackendError::Config(format!(
            "memory: max_ops_per_sec must be a positive number of at least {}, not {k}",
            1.0 / MAX_HOOK_DURATION.as_secs_f64()
        ))
    };
    if !(k.is_finite() && k > 0.0) {
        return Err(invalid());
    }
    let interval = Duration::try_from_secs_f64(1.0 / k).map_err(|_| invalid())?;
    if interval > MAX_HOOK_DURATION {
        return Err(invalid());
    }
    Ok(interval)
}

/// One record: values by field index; `None` for a field never written.
type Record = Vec<Option<Vec<u8>>>;
type Table = RwLock<BTreeMap<String, Record>>;

struct Stall {
    after: u64,
    duration: Duration,
    begun: AtomicU64,
    until: OnceLock<Instant>,
}

struct RateLimit {
    interval: Duration,
    next_free: Mutex<Instant>,
}

/// The configured hooks; only built when at least one is set.
struct Hooks {
    stall: Option<Stall>,
    rate: Option<RateLimit>,
}

impl Hooks {
    fn new(options: &MemoryOptions) -> Result<Option<Hooks>, BackendError> {
        options.validate()?;
        let stall = options.stall_after_ops.map(|after| Stall {
            after,
            duration: options.stall,
            begun: AtomicU64::new(0),
            until: OnceLock::new(),
        });
        let rate = match options.max_ops_per_sec {
            Some(k) => Some(RateLimit {
                interval: service_interval(k)?,
                next_free: Mutex::new(Instant::now()),
            }),
            None => None,
        };
        if stall.is_none() && rate.is_none() {
            return Ok(None);
        }
        Ok(Some(Hooks { stall, rate }))
    }

    /// Wait until the operation that begins now may complete.
    ///
    /// The wait comes before the map operation, so an operation observes the
    /// data as of its completion, as it would on a database that queued it.
    /// Waits use tokio's timer, whose granularity is 1 ms: an operation may
    /// complete up to about a millisecond after its computed completion
    /// time. Completion times are absolute (the rate limiter's schedule
    /// never depends on when a task actually woke up), so that error never
    /// accumulates into the throughput, which is what the capacity tests
    /// measure. Where it would cap the throughput (operations queue for a
    /// slot less than a tick away), [`wait_briefly`] waits instead.
    async fn gate(&self) {
        let now = Instant::now();
        let mut done = now;
        let mut queued = false;
        if let Some(stall) = &self.stall {
            if stall.begun.fetch_add(1, Ordering::Relaxed) == stall.after {
                let _ = stall.until.set(now + stall.duration);
            }
            if let Some(&until) = stall.until.get() {
                done = done.max(until);
            }
        }
        if let Some(rate) = &self.rate {
            // A frozen server serves nothing, so the queue resumes at the
            // end of the freeze rather than catching up instantly.
            let mut next_free = rate.next_free.lock();
            let slot = (*next_free).max(done);
            queued = slot > now;
            *next_free = slot + rate.interval;
            done = *next_free;
        }
        if queued && done <= now + TIMER_TICK {
            wait_briefly(done).await;
        } else if done > now {
            sleep_until(done).await;
        }
        // A freeze that began while this operation waited for its service
        // slot holds it too: it is in progress during the freeze.
        if let Some(until) = self.stall.as_ref().and_then(|s| s.until.get()) {
            if *until > Instant::now() {
                sleep_until(*until).await;
            }
        }
    }
}

/// The granularity of tokio's timer.
const TIMER_TICK: Duration = Duration::from_millis(1);

/// A wait shorter than the timer's tick, by yielding to the runtime until
/// `until`. The timer would round it up to a whole tick, and a connection
/// would then complete at most about 1,000 operations a second whatever
/// `max_ops_per_sec` allows. It costs CPU, so it is only for operations
/// that queued behind others (the limit is what holds them back) and only
/// where each connection's share of the rate is above about 1,000 a
/// second.
async fn wait_briefly(until: Instant) {
    while Instant::now() < until {
        tokio::task::yield_now().await;
    }
}

struct Shared {
    tables: Mutex<HashMap<String, Arc<Table>>>,
    hooks: Option<Arc<Hooks>>,
    options: MemoryOptions,
}

impl Shared {
    fn table(&self, name: &str) -> Arc<Table> {
        let mut tables = self.tables.lock();
        if let Some(table) = tables.get(name) {
            return Arc::clone(table);
        }
        let table = Arc::new(Table::default());
        tables.insert(name.to_string(), Arc::clone(&table));
        table
    }
}

/// An in-process database. Clones share the same data and hooks.
#[derive(Clone)]
pub struct MemoryBackend {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for MemoryBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBackend")
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryBackend {
    fn default() -> MemoryBackend {
        MemoryBackend::new()
    }
}

impl MemoryBackend {
    /// An empty database without hooks.
    pub fn new() -> MemoryBackend {
        MemoryBackend {
            shared: Arc::new(Shared {
                tables: Mutex::default(),
                hooks: None,
                options: MemoryOptions::default(),
            }),
        }
    }

    /// An empty database with the given hooks.
    pub fn with_options(options: MemoryOptions) -> Result<MemoryBackend, BackendError> {
        let hooks = Hooks::new(&options)?.map(Arc::new);
        Ok(MemoryBackend {
            shared: Arc::new(Shared {
                tables: Mutex::default(),
                hooks,
                options,
            }),
        })
    }

    /// An empty database with hooks from the query part of a `memory:` URL.
    pub fn from_query(query: &str) -> Result<MemoryBackend, BackendError> {
        MemoryBackend::with_options(MemoryOptions::from_query(query)?)
    }

    pub fn options(&self) -> &MemoryOptions {
        &self.shared.options
    }
}

impl Backend for MemoryBackend {
    type Conn = MemoryConnection;

    fn describe(&self) -> String {
        let query = self.shared.options.to_query();
        if query.is_empty() {
            "memory:".to_string()
        } else {
            format!("memory:?{query}")
        }
    }

    // The map is read and written on the calling thread.
    fn threading(&self) -> Threading {
        Threading::InProcess
    }

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        let table = self.shared.table(&schema.table);
        if drop {
            // Swap the map out so the old records are freed after the lock
            // is released, not while every connection waits.
            let old = std::mem::take(&mut *table.write());
            std::mem::drop(old);
        }
        Ok(())
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        let table = self.shared.tables.lock().get(&schema.table).cloned();
        let empty = match table {
            Some(table) => table.read().is_empty(),
            None => true,
        };
        Ok(Some(empty))
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<MemoryConnection, BackendError> {
        Ok(MemoryConnection {
            table: self.shared.table(&schema.table),
            guard: Guard::new(schema.field_count(), None),
            hooks: self.shared.hooks.clone(),
            words: None,
        })
    }
}

/// A connection of [`MemoryBackend`].
pub struct MemoryConnection {
    table: Arc<Table>,
    guard: Guard,
    hooks: Option<Arc<Hooks>>,
    /// Always empty: nothing here fails with words.
    words: Option<String>,
}

fn copy_fields(record: &Record, fields: Fields<'_>, out: &mut Vec<FieldValue>) {
    match fields {
        Fields::All => {
            out.extend(record.iter().enumerate().filter_map(|(field, value)| {
                value.as_ref().map(|v| FieldValue {
                    field,
                    value: v.clone(),
                })
            }));
        }
        Fields::Some(list) => {
            out.extend(list.iter().filter_map(|&field| {
                record
                    .get(field)
                    .and_then(Option::as_ref)
                    .map(|v| FieldValue {
                        field,
                        value: v.clone(),
                    })
            }));
        }
    }
}

/// Nothing here fails: every operation has a status.
type Never = std::convert::Infallible;

impl Settle for MemoryConnection {
    type Error = Never;

    fn guard(&self) -> Guard {
        self.guard
    }

    fn failure_text(&mut self) -> &mut Option<String> {
        &mut self.words
    }

    fn settle(&mut self, failure: Failure<Never>) -> Status {
        match failure {
            // No timeout is set: a map operation cannot be abandoned.
            Failure::TimedOut(_) => Status::Error,
            Failure::Failed(never) => match never {},
        }
    }
}

impl MemoryConnection {
    /// Wait for the hooks' say, if any, before touching the map.
    async fn gate(&self) {
        if let Some(hooks) = &self.hooks {
            hooks.gate().await;
        }
    }
}

impl Operations for MemoryConnection {
    async fn read_op(&mut self, read: Read<'_>) -> Result<Status, Never> {
        let Read { key, fields, out } = read;
        self.gate().await;
        let table = self.table.read();
        Ok(match table.get(key) {
            Some(record) => {
                copy_fields(record, fields, out);
                Status::Ok
            }
            None => Status::NotFound,
        })
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> Result<Status, Never> {
        self.gate().await;
        let table = self.table.read();
        let range = table.range::<str, _>((Bound::Included(scan.start_key), Bound::Unbounded));
        for (key, record) in range.take(scan.count) {
            let mut row = Row {
                key: key.clone(),
                fields: Vec::new(),
            };
            copy_fields(record, scan.fields, &mut row.fields);
            scan.out.push(row);
        }
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> Result<Status, Never> {
        self.gate().await;
        let new_values: Vec<(usize, Vec<u8>)> =
            values.iter().map(|v| (v.field, v.value.clone())).collect();
        let mut table = self.table.write();
        let Some(record) = table.get_mut(key) else {
            return Ok(Status::NotFound);
        };
        for (field, value) in new_values {
            // A record written through a schema with fewer fields grows.
            if field >= record.len() {
                record.resize(field + 1, None);
            }
            record[field] = Some(value);
        }
        Ok(Status::Ok)
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> Result<Status, Never> {
        self.gate().await;
        let mut record: Record = vec![None; self.guard.field_count()];
        for v in values {
            record[v.field] = Some(v.value.clone());
        }
        let key = key.to_string();
        // The replaced record, if any, is freed outside the lock.
        let _old = self.table.write().insert(key, record);
        Ok(Status::Ok)
    }

    async fn delete_op(&mut self, key: &str) -> Result<Status, Never> {
        self.gate().await;
        let removed = self.table.write().remove(key);
        Ok(Status::found(removed.is_some()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_round_trips() {
        let options = MemoryOptions::from_query("stall_at=5000&stall_ms=200").expect("valid");
        assert_eq!(options.stall_after_ops, Some(5000));
        assert_eq!(options.stall, Duration::from_millis(200));
        assert_eq!(options.max_ops_per_sec, None);
        assert_eq!(options.to_query(), "stall_at=5000&stall_ms=200");

        let options = MemoryOptions::from_query("max_ops_per_sec=1000").expect("valid");
        assert_eq!(options.max_ops_per_sec, Some(1000.0));
        assert_eq!(options.to_query(), "max_ops_per_sec=1000");

        assert_eq!(
            MemoryOptions::from_query("").expect("valid"),
            MemoryOptions::default()
        );
    }

    #[test]
    fn bad_queries_are_refused() {
        for query in [
            "stall_at=5",
            "stall_ms=5",
            "stall_at=x&stall_ms=5",
            "max_ops_per_sec=0",
            "max_ops_per_sec=-3",
            "max_ops_per_sec=NaN",
            "max_ops_per_sec=1e-300",
            "stall_at=1&stall_ms=999999999999",
            "colour=blue",
            "stall_at",
        ] {
            assert!(MemoryOptions::from_query(query).is_err(), "{query}");
        }
        let message = MemoryOptions::from_query("colour=blue")
            .expect_err("unknown key")
            .to_string();
        assert!(message.contains("stall_ms"), "{message}");
    }

    #[test]
    fn describe_shows_the_hooks() {
        assert_eq!(MemoryBackend::new().describe(), "memory:");
        let backend = MemoryBackend::from_query("max_ops_per_sec=250").expect("valid");
        assert_eq!(backend.describe(), "memory:?max_ops_per_sec=250");
    }
}
