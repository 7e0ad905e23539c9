//! The `rocksdb:PATH` backend: an embedded RocksDB database, laid out as
//! YCSB's RocksDB binding lays it out so that a directory loaded by either
//! tool runs with the other (`sojourn run rocksdb -p rocksdb.dir=PATH`).
//!
//! Layout (YCSB's `RocksDBClient`):
//! - one column family per YCSB table, named after it (`usertable`), and a
//!   `CF_NAMES` file in the directory listing the column families one per
//!   line (`default` first), which YCSB reads to reopen the database;
//! - key = the YCSB key's bytes; value = the record's fields, each encoded
//!   as `u32 name length (big-endian) | name bytes | u32 value length
//!   (big-endian) | value bytes`, in any order. sojourn writes them in field
//!   index order; reading accepts any order, and keeps fields whose names
//!   the workload does not know (they survive an update untouched).
//!
//! Operations: read = one `get` (absent key: `NOT_FOUND`); insert = one
//! `put` of the whole record (an existing key is replaced, as YCSB does);
//! update and delete read the record first so that an absent key is
//! `NOT_FOUND` rather than created or silently ignored, and merge the new
//! fields into the old ones; scan = an iterator positioned with `seek` at
//! the start key. Writes to the same key from different connections are
//! serialised by a small set of striped locks, so that an update's
//! read-merge-write cannot lose a concurrent insert or update (YCSB's
//! binding has that race).
//!
//! One database handle (`Arc<DB>`) is shared by the backend and all its
//! connections: RocksDB allows one open handle per directory per process,
//! and its handle is thread-safe. Another process holding the directory
//! (RocksDB's `LOCK` file) makes opening fail with an error saying so.
//!
//! No compression library is compiled in (see `Cargo.toml`): YCSB's values
//! are random and would not compress, and each library lengthens the build.
//! `timeout.ms` does not apply: a RocksDB call cannot be abandoned midway.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ::rocksdb::{ColumnFamily, DBPinnableSlice, Options, ReadOptions, WriteOptions, DB};
use sojourn_core::backend::guard::{Failure, Guard, Operations, Read, Scan, Settle};
use sojourn_core::backend::{
    Backend, BackendError, FieldValue, Fields, Row, Schema, Status, Threading,
};

use crate::{url, Open, OpenOptions};

/// Locks striping the key space for writes. Enough that 16 to 64
/// connections rarely share one, few enough to cost nothing.
const WRITE_LOCKS: usize = 256;

/// The file in which YCSB's binding records the column families to open.
const CF_NAMES_FILE: &str = "CF_NAMES";

/// Memtable budget given to RocksDB's level-style tuning, as YCSB does.
const MEMTABLE_BUDGET: usize = 512 << 20;

/// An embedded RocksDB database in a directory.
#[derive(Debug)]
pub struct RocksBackend {
    path: PathBuf,
    /// The open database, shared with every connection; opened on first use.
    shared: Mutex<Option<Arc<Shared>>>,
}

/// What the backend and its connections share.
struct Shared {
    db: DB,
    locks: Box<[Mutex<()>]>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl Shared {
    /// The write lock for `key` (FNV-1a over its bytes picks the stripe).
    fn lock(&self, key: &[u8]) -> MutexGuard<'_, ()> {
        let mut h: u32 = 0x811c_9dc5;
        for &b in key {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        // A panic elsewhere cannot leave `()` inconsistent.
        self.locks[h as usize % self.locks.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

fn db_options(create: bool) -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(create);
    opts.create_missing_column_families(true);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    opts.increase_parallelism(i32::try_from(cores).unwrap_or(2));
    opts.optimize_level_style_compaction(MEMTABLE_BUDGET);
    opts
}

impl RocksBackend {
    pub fn new(path: impl Into<PathBuf>) -> RocksBackend {
        RocksBackend {
            path: path.into(),
            shared: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, setup: bool, message: impl ToString) -> BackendError {
        let target = self.describe();
        let message = message.to_string();
        if setup {
            BackendError::Setup { target, message }
        } else {
            BackendError::Connect { target, message }
        }
    }

    /// Whether a RocksDB database exists at the path (its `CURRENT` file).
    fn exists(&self) -> bool {
        self.path.join("CURRENT").is_file()
    }

    /// The shared handle, opening the database if it is not open yet, and
    /// with `table`'s column family created if `create_table` (or an error
    /// if it is missing and other handles make it impossible to add).
    fn open(
        &self,
        table: &str,
        create_db: bool,
        create_table: bool,
    ) -> Result<Arc<Shared>, BackendError> {
        let setup = create_db || create_table;
        let mut slot = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            if !create_db && !self.exists() {
                return Err(self.error(
                    setup,
                    "no RocksDB database there; `sojourn load` creates it",
                ));
            }
            if create_db {
                std::fs::create_dir_all(&self.path).map_err(|e| {
                    self.error(setup, format!("cannot create {}: {e}", self.path.display()))
                })?;
            }
            let opts = db_options(create_db);
            // RocksDB must be given every column family the database has.
            let mut families = if self.exists() {
                DB::list_cf(&opts, &self.path).map_err(|e| self.open_error(setup, e))?
            } else {
                vec![::rocksdb::DEFAULT_COLUMN_FAMILY_NAME.to_string()]
            };
            if create_table && !families.iter().any(|f| f == table) {
                families.push(table.to_string());
            }
            let db =
                DB::open_cf(&opts, &self.path, &families).map_err(|e| self.open_error(setup, e))?;
            *slot = Some(Arc::new(Shared {
                db,
                locks: (0..WRITE_LOCKS).map(|_| Mutex::new(())).collect(),
            }));
            if create_table {
                self.write_cf_names(&families)?;
            }
        }
        let shared = slot.as_mut().expect("opened above");
        if create_table && shared.db.cf_handle(table).is_none() {
            // Adding a column family needs the only handle (`&mut DB`); it
            // is, before any connection exists.
            let Some(owned) = Arc::get_mut(shared) else {
                return Err(self.error(
                    true,
                    format!(
                        "column family {table} is missing and connections hold the \
                         database open; create it before connecting"
                    ),
                ));
            };
            owned
                .db
                .create_cf(table, &db_options(false))
                .map_err(|e| self.error(true, e))?;
            let mut families = DB::list_cf(&db_options(false), &self.path)
                .map_err(|e| self.open_error(true, e))?;
            families.sort();
            self.write_cf_names(&families)?;
        }
        Ok(Arc::clone(shared))
    }

    fn open_error(&self, setup: bool, e: ::rocksdb::Error) -> BackendError {
        let message = e.into_string();
        if message.contains("LOCK") || message.to_ascii_lowercase().contains("lock") {
            self.error(
                setup,
                format!(
                    "the database is in use by another process: RocksDB lets one process \
                     open a directory at a time, and its LOCK file is held ({message})"
                ),
            )
        } else {
            self.error(setup, message)
        }
    }

    /// YCSB's binding reopens a database with the column families its
    /// `CF_NAMES` file lists (one per line, `default` first).
    fn write_cf_names(&self, families: &[String]) -> Result<(), BackendError> {
        let mut text = format!("{}\n", ::rocksdb::DEFAULT_COLUMN_FAMILY_NAME);
        for f in families {
            if f != ::rocksdb::DEFAULT_COLUMN_FAMILY_NAME {
                text.push_str(f);
                text.push('\n');
            }
        }
        std::fs::write(self.path.join(CF_NAMES_FILE), text)
            .map_err(|e| self.error(true, format!("cannot write {CF_NAMES_FILE}: {e}")))
    }
}

impl Open for RocksBackend {
    const FORMS: &'static [&'static str] =
        &["rocksdb:PATH (or `rocksdb` with -p rocksdb.dir=PATH)"];

    /// `rocksdb:PATH`, or `rocksdb` with YCSB's `-p rocksdb.dir=PATH` (the
    /// URL's path wins when both are given).
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<RocksBackend, String> {
        let props = options.props;
        if props.contains("rocksdb.optionsfile") {
            return Err(
                "rocksdb.optionsfile (YCSB's RocksDB options file) is not supported; \
                 sojourn opens RocksDB with YCSB's default tuning"
                    .to_string(),
            );
        }
        let path = url::split(url)
            .1
            .filter(|p| !p.is_empty())
            .or_else(|| props.get("rocksdb.dir").map(str::trim))
            .filter(|p| !p.is_empty())
            .ok_or("RocksDB needs a directory: write rocksdb:PATH or pass -p rocksdb.dir=PATH")?;
        Ok(RocksBackend::new(path))
    }
}

impl Backend for RocksBackend {
    type Conn = RocksConnection;

    fn describe(&self) -> String {
        format!("rocksdb:{}", self.path.display())
    }

    // Every get and put runs on the calling runtime thread (see
    // `RocksConnection`): the engine's speed is the threads'.
    fn threading(&self) -> Threading {
        Threading::InProcess
    }

    // Setup runs inline, like every RocksDB call here: it happens once,
    // before the measured phase.
    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        let shared = self.open(&schema.table, true, true)?;
        if drop {
            // Connections may hold the column family, so it is emptied in
            // place rather than dropped: one range tombstone over every key,
            // then a compaction that discards the files.
            let cf = shared
                .db
                .cf_handle(&schema.table)
                .ok_or_else(|| self.error(true, NO_FAMILY))?;
            let (first, last) = {
                let mut it = shared.db.raw_iterator_cf(cf);
                it.seek_to_first();
                let first = it.key().map(<[u8]>::to_vec);
                it.seek_to_last();
                let last = it.key().map(<[u8]>::to_vec);
                it.status().map_err(|e| self.error(true, e))?;
                (first, last)
            };
            if let (Some(first), Some(last)) = (first, last) {
                shared
                    .db
                    .delete_range_cf(cf, &first, &last)
                    .and_then(|()| shared.db.delete_cf(cf, &last))
                    .map_err(|e| self.error(true, e))?;
                shared.db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
            }
        }
        Ok(())
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        let open = self
            .shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        // Not creating a database just to find it empty.
        if !open && !self.exists() {
            return Ok(Some(true));
        }
        let shared = self.open(&schema.table, false, false)?;
        let Some(cf) = shared.db.cf_handle(&schema.table) else {
            return Ok(Some(true));
        };
        let mut it = shared.db.raw_iterator_cf(cf);
        it.seek_to_first();
        let empty = !it.valid();
        it.status().map_err(|e| self.error(false, e))?;
        Ok(Some(empty))
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<RocksConnection, BackendError> {
        let shared = self.open(&schema.table, false, false)?;
        if shared.db.cf_handle(&schema.table).is_none() {
            return Err(self.error(
                false,
                format!(
                    "table (column family) {} does not exist; `sojourn load` creates it",
                    schema.table
                ),
            ));
        }
        Ok(RocksConnection::new(shared, schema))
    }
}

/// One field as stored: name and value, borrowed from an encoded record.
type Entry<'a> = (&'a [u8], &'a [u8]);

/// The next field of an encoded record and the rest, or `Err` if the
/// bytes are not a well-formed record.
fn next_entry(buf: &[u8]) -> Result<Option<(Entry<'_>, &[u8])>, ()> {
    if buf.is_empty() {
        return Ok(None);
    }
    let (name, rest) = take_chunk(buf)?;
    let (value, rest) = take_chunk(rest)?;
    Ok(Some(((name, value), rest)))
}

fn take_chunk(buf: &[u8]) -> Result<(&[u8], &[u8]), ()> {
    let (len, rest) = buf.split_first_chunk::<4>().ok_or(())?;
    let len = u32::from_be_bytes(*len) as usize;
    if rest.len() < len {
        return Err(());
    }
    Ok(rest.split_at(len))
}

fn put_chunk(out: &mut Vec<u8>, bytes: &[u8]) {
    // Lengths of 4 GiB or more are refused before encoding
    // (`lengths_ok`); field names are short.
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// Encode `(name, value)` pairs in YCSB's record format.
pub fn encode<'a>(fields: impl IntoIterator<Item = Entry<'a>>, out: &mut Vec<u8>) {
    for (name, value) in fields {
        put_chunk(out, name);
        put_chunk(out, value);
    }
}

/// Decode a record in YCSB's format; `None` if it is malformed.
pub fn decode(mut buf: &[u8]) -> Option<Vec<Entry<'_>>> {
    let mut v = Vec::new();
    while let Some((entry, rest)) = next_entry(buf).ok()? {
        v.push(entry);
        buf = rest;
    }
    Some(v)
}

/// A connection of [`RocksBackend`].
///
/// RocksDB calls run inline in the async methods rather than on
/// `spawn_blocking`: a get or put on a local database takes microseconds,
/// the executor gives every connection its own task (so a call only ever
/// holds up its own worker), and no lock is held across an `.await`. A
/// hand-off to a blocking pool would cost more than the call.
pub struct RocksConnection {
    shared: Arc<Shared>,
    guard: Guard,
    schema: Arc<Schema>,
    read_opts: ReadOptions,
    write_opts: WriteOptions,
    scratch: Scratch,
    last_error: Option<String>,
}

/// Buffers reused across calls, so that an operation allocates only the
/// values it returns.
struct Scratch {
    /// The record being written.
    buf: Vec<u8>,
    /// Per field index, where its value lies in the stored record.
    slots: Vec<Option<(usize, usize)>>,
    /// Per field index, which of an update's values sets it.
    updates: Vec<Option<usize>>,
}

/// Where `field_name` is in the schema. A linear search: YCSB records have
/// about ten fields, and comparing short names beats hashing them.
fn field_index(schema: &Schema, name: &[u8]) -> Option<usize> {
    schema.field_names.iter().position(|f| f.as_bytes() == name)
}

fn offset_in(record: &[u8], part: &[u8]) -> (usize, usize) {
    (
        part.as_ptr() as usize - record.as_ptr() as usize,
        part.len(),
    )
}

fn at(record: &[u8], (start, len): (usize, usize)) -> &[u8] {
    &record[start..start + len]
}

impl Scratch {
    /// Fill `slots` with where each known field's value is in `record`,
    /// passing fields the schema does not know to `unknown`; `false` if the
    /// record is malformed.
    fn index_record<'r>(
        &mut self,
        schema: &Schema,
        record: &'r [u8],
        mut unknown: impl FnMut(Entry<'r>),
    ) -> bool {
        self.slots.iter_mut().for_each(|s| *s = None);
        let mut rest = record;
        loop {
            match next_entry(rest) {
                Ok(None) => return true,
                Ok(Some(((name, value), tail))) => {
                    match field_index(schema, name) {
                        Some(i) => self.slots[i] = Some(offset_in(record, value)),
                        None => unknown((name, value)),
                    }
                    rest = tail;
                }
                Err(()) => return false,
            }
        }
    }

    /// Append the requested fields of `record` to `out`, in the order asked
    /// (index order for all fields); `false` if the record is malformed.
    fn push_fields(
        &mut self,
        schema: &Schema,
        record: &[u8],
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> bool {
        if !self.index_record(schema, record, |_| {}) {
            return false;
        }
        let mut push = |field: usize| {
            if let Some(slot) = self.slots[field] {
                out.push(FieldValue {
                    field,
                    value: at(record, slot).to_vec(),
                });
            }
        };
        match fields {
            Fields::All => (0..schema.field_count()).for_each(&mut push),
            Fields::Some(list) => list.iter().copied().for_each(&mut push),
        }
        true
    }
}

fn malformed(key: &[u8]) -> String {
    format!(
        "record {} is not in YCSB's RocksDB format",
        String::from_utf8_lossy(key)
    )
}

const NO_FAMILY: &str = "the table's column family is missing";

/// The workload's table as one operation uses it: its column family, read
/// and written with the connection's options, errors as their messages.
struct Table<'a> {
    shared: &'a Shared,
    cf: &'a ColumnFamily,
    read_opts: &'a ReadOptions,
    write_opts: &'a WriteOptions,
}

impl Table<'_> {
    fn get(&self, key: &str) -> Result<Option<DBPinnableSlice<'_>>, String> {
        let db = &self.shared.db;
        db.get_pinned_cf_opt(self.cf, key, self.read_opts)
            .map_err(::rocksdb::Error::into_string)
    }

    fn put(&self, key: &str, record: &[u8]) -> Result<(), String> {
        let db = &self.shared.db;
        db.put_cf_opt(self.cf, key, record, self.write_opts)
            .map_err(::rocksdb::Error::into_string)
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        let db = &self.shared.db;
        db.delete_cf_opt(self.cf, key, self.write_opts)
            .map_err(::rocksdb::Error::into_string)
    }

    /// The write lock of `key`'s stripe.
    fn lock(&self, key: &str) -> MutexGuard<'_, ()> {
        self.shared.lock(key.as_bytes())
    }
}

/// A failed RocksDB call, as its message.
type RocksResult = Result<Status, String>;

impl Settle for RocksConnection {
    type Error = String;

    fn failure_text(&mut self) -> &mut Option<String> {
        &mut self.last_error
    }

    fn guard(&self) -> Guard {
        self.guard
    }

    fn settle(&mut self, failure: Failure<String>) -> Status {
        self.last_error = Some(match failure {
            Failure::Failed(message) => message,
            // No timeout is set: a RocksDB call cannot be abandoned.
            Failure::TimedOut(limit) => format!("timed out after {} ms", limit.as_millis()),
        });
        Status::Error
    }
}

impl RocksConnection {
    fn new(shared: Arc<Shared>, schema: Arc<Schema>) -> RocksConnection {
        let n = schema.field_count();
        RocksConnection {
            shared,
            guard: Guard::new(n, None),
            schema,
            read_opts: ReadOptions::default(),
            write_opts: WriteOptions::default(),
            scratch: Scratch {
                buf: Vec::new(),
                slots: vec![None; n],
                updates: vec![None; n],
            },
            last_error: None,
        }
    }

    /// The most recent RocksDB error on this connection, for diagnosing
    /// `ERROR` statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The table, the schema and the buffers, for one operation.
    fn table(&mut self) -> Result<(Table<'_>, &Schema, &mut Scratch), String> {
        let RocksConnection {
            shared,
            schema,
            read_opts,
            write_opts,
            scratch,
            ..
        } = self;
        let shared: &Shared = shared;
        let cf = shared
            .db
            .cf_handle(&schema.table)
            .ok_or_else(|| NO_FAMILY.to_string())?;
        let table = Table {
            shared,
            cf,
            read_opts,
            write_opts,
        };
        Ok((table, schema, scratch))
    }
}

impl Operations for RocksConnection {
    async fn read_op(&mut self, read: Read<'_>) -> RocksResult {
        let (table, schema, scratch) = self.table()?;
        let Some(record) = table.get(read.key)? else {
            return Ok(Status::NotFound);
        };
        if !scratch.push_fields(schema, &record, read.fields, read.out) {
            return Err(malformed(read.key.as_bytes()));
        }
        Ok(Status::Ok)
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> RocksResult {
        let (table, schema, scratch) = self.table()?;
        if scan.count == 0 {
            return Ok(Status::Ok);
        }
        let before = scan.out.len();
        let db = &table.shared.db;
        let mut it = db.raw_iterator_cf_opt(table.cf, ReadOptions::default());
        it.seek(scan.start_key.as_bytes());
        while scan.out.len() - before < scan.count {
            let (Some(key), Some(record)) = (it.key(), it.value()) else {
                break;
            };
            let mut row = Row {
                key: String::from_utf8_lossy(key).into_owned(),
                fields: Vec::with_capacity(schema.field_count()),
            };
            if !scratch.push_fields(schema, record, scan.fields, &mut row.fields) {
                return Err(malformed(key));
            }
            scan.out.push(row);
            it.next();
        }
        it.status().map_err(::rocksdb::Error::into_string)?;
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> RocksResult {
        if !lengths_ok(values) {
            return Ok(Status::BadRequest);
        }
        let (table, schema, scratch) = self.table()?;
        let _guard = table.lock(key);
        let Some(record) = table.get(key)? else {
            return Ok(Status::NotFound);
        };
        if values.is_empty() {
            return Ok(Status::Ok);
        }
        // The new record: every known field (its new value, else the old
        // one) in index order, then the fields the workload does not know,
        // as they were.
        let mut unknown = Vec::new();
        if !scratch.index_record(schema, &record, |entry| unknown.push(entry)) {
            return Err(malformed(key.as_bytes()));
        }
        scratch.updates.iter_mut().for_each(|u| *u = None);
        for (i, v) in values.iter().enumerate() {
            scratch.updates[v.field] = Some(i);
        }
        scratch.buf.clear();
        for (field, name) in schema.field_names.iter().enumerate() {
            let value = match (scratch.updates[field], scratch.slots[field]) {
                (Some(i), _) => values[i].value.as_slice(),
                (None, Some(slot)) => at(&record, slot),
                (None, None) => continue,
            };
            encode([(name.as_bytes(), value)], &mut scratch.buf);
        }
        encode(unknown, &mut scratch.buf);
        table.put(key, &scratch.buf)?;
        Ok(Status::Ok)
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> RocksResult {
        if !lengths_ok(values) {
            return Ok(Status::BadRequest);
        }
        let (table, schema, scratch) = self.table()?;
        scratch.buf.clear();
        let names = &schema.field_names;
        let fields = values
            .iter()
            .map(|v| (names[v.field].as_bytes(), &v.value[..]));
        encode(fields, &mut scratch.buf);
        let _guard = table.lock(key);
        table.put(key, &scratch.buf)?;
        Ok(Status::Ok)
    }

    async fn delete_op(&mut self, key: &str) -> RocksResult {
        let (table, _, _) = self.table()?;
        let _guard = table.lock(key);
        if table.get(key)?.is_none() {
            return Ok(Status::NotFound);
        }
        table.delete(key)?;
        Ok(Status::Ok)
    }
}

/// Whether every value fits the format's 32-bit length: the guard checks
/// the fields, this backend's format the sizes.
fn lengths_ok(values: &[FieldValue]) -> bool {
    values.iter().all(|v| u32::try_from(v.value.len()).is_ok())
}

#[cfg(test)]
mod tests {
    use sojourn_core::properties::Properties;

    use super::*;

    #[test]
    fn url_forms() {
        let none = Properties::new();
        let mut dir = Properties::new();
        dir.set_arg("rocksdb.dir=/from/props").unwrap();
        let path = |url, props| {
            RocksBackend::configure(url, &OpenOptions::new(props)).map(|b| b.path().to_owned())
        };
        assert_eq!(path("rocksdb:/tmp/db", &dir), Ok("/tmp/db".into()));
        for url in ["RocksDB", "rocksdb:"] {
            assert_eq!(path(url, &dir), Ok("/from/props".into()), "{url}");
            let e = path(url, &none).unwrap_err();
            assert!(e.contains("rocksdb.dir"), "{e}");
        }
    }

    #[test]
    fn record_format_is_ycsbs() {
        let mut out = Vec::new();
        encode([(&b"field0"[..], &b"ab"[..]), (b"f1", b"")], &mut out);
        assert_eq!(
            out,
            [
                &[0, 0, 0, 6][..],
                b"field0",
                &[0, 0, 0, 2],
                b"ab",
                &[0, 0, 0, 2],
                b"f1",
                &[0, 0, 0, 0]
            ]
            .concat()
        );
        assert_eq!(
            decode(&out),
            Some(vec![(&b"field0"[..], &b"ab"[..]), (b"f1", b"")])
        );
        assert_eq!(decode(&[]), Some(vec![]));
        assert_eq!(decode(&out[..out.len() - 1]), None);
        assert_eq!(decode(&[0, 0, 0, 9, b'x']), None);
        assert_eq!(decode(&[0, 0]), None);
    }
}
