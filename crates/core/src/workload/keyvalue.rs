//! yb-sample-apps' key-value workload (`CassandraKeyValue`), selected with
//! `workload=keyvalue`: a pool of writers and a pool of readers, each with
//! its own connections and optional target rate, over keys `key:<n>`.
//!
//! Writers insert new keys in sequence until `num_unique_keys`, then update
//! random keys already written. Readers read among the keys confirmed
//! written: uniformly, or (`read_distribution=latest`) skewed towards the
//! newest, as in the seed's "recent-data read heavy" phase. Every value
//! carries a checksum over its key and payload, verified on every read; a
//! mismatch is counted as UNEXPECTED_STATE.
//!
//! The load phase is the writers alone inserting every key; the run phase
//! continues from the keys already present (found by a binary search of
//! reads, see [`written_keys`], or given as `max_written_key`).
//!
//! Data goes through the same [`Connection`] as YCSB's workload: one record
//! per key, one field (`v`), so every key-value backend serves it as is, in
//! YCSB's layout. A backend with a layout of its own for it (yb-sample-apps'
//! `k`/`v` table over CQL) lists [`KeyValueSupport`] in its extensions and
//! sets that table up itself; the operations stay YCSB's five.

use crate::backend::{Backend, BackendError};
use crate::executor::{Connector, RunConfig};

use super::kind::{Kind, Settled};
use super::{Loaded, ReadyPhase, Steps, StepsError};
use std::sync::{Arc, Mutex};

use rand_core::RngCore;

use crate::backend::{Connection, FieldValue, Fields, Schema, Status};
use crate::executor::{Group, Meter, Progress, Step};
use crate::generator::{below, rng_for, AcknowledgedCounter, Rng, SkewedLatest};
use crate::op::OpKind;
use crate::properties::{Origin, Properties, PropertyError};
use crate::workload::capability::{Capability, Support};

use super::{Narrator, Phase};

/// The property names this workload reads, for unknown-key checks.
pub const KEYVALUE_PROPERTIES: &[&str] = &[
    "num_unique_keys",
    "num_writes",
    "num_reads",
    "num_threads_write",
    "num_threads_read",
    "value_size",
    "read_distribution",
    "read_rate",
    "write_rate",
    "max_written_key",
    "read_only",
    "nouuid",
    "uuid",
];

/// YCSB's settings that have a counterpart here, or no meaning, each with
/// what does that job in this workload: given by the user (in a file, with
/// `-p` or a flag), they are refused rather than silently ignored, so a
/// YCSB command line never runs a different size or mix than it says.
pub const NOT_READ: &[(&str, &str)] = &[
    ("recordcount", "the number of keys is num_unique_keys"),
    (
        "operationcount",
        "each pool has its own count, num_writes and num_reads (-1: until maxexecutiontime)",
    ),
    (
        "threadcount",
        "the connections (YCSB's -threads) are the pools' own, num_threads_write and \
         num_threads_read",
    ),
    ("fieldcount", "a value is one field, v, of value_size bytes"),
    ("fieldlength", "a value's size is value_size"),
    ("minfieldlength", "a value's size is value_size"),
    ("fieldlengthdistribution", "a value's size is value_size"),
    ("fieldlengthhistogram", "a value's size is value_size"),
    ("fieldnameprefix", "a value is one field, v"),
    (
        "requestdistribution",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "hotspotdatafraction",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "hotspotopnfraction",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "exponential.percentile",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "exponential.frac",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    ("readproportion", MIX),
    ("updateproportion", MIX),
    ("insertproportion", MIX),
    ("scanproportion", MIX),
    ("readmodifywriteproportion", MIX),
    (
        "insertstart",
        "writers continue from the keys already written (found, or max_written_key)",
    ),
    (
        "insertcount",
        "a load inserts num_unique_keys keys, at most num_writes of them",
    ),
    (
        "insertorder",
        "keys are key:<n>, inserted in order (nouuid/uuid)",
    ),
    (
        "zeropadding",
        "keys are key:<n>, inserted in order (nouuid/uuid)",
    ),
    ("readallfields", "a value is one field, v, read whole"),
    ("readallfieldsbyname", "a value is one field, v, read whole"),
    ("writeallfields", "a value is one field, v, written whole"),
    (
        "dataintegrity",
        "every read checks its value's checksum (a mismatch is UNEXPECTED_STATE)",
    ),
    ("minscanlength", "the workload does not scan"),
    ("maxscanlength", "the workload does not scan"),
    ("scanlengthdistribution", "the workload does not scan"),
];

/// What sets the mix of reads and writes here.
const MIX: &str = "the mix is the pools': num_threads_read and num_threads_write connections, \
     at read_rate and write_rate";

/// Refuses YCSB's settings this workload does not read ([`NOT_READ`]) that
/// the user gave; sojourn's own defaults (origin [`Origin::Default`]) pass.
/// The error names the first such key (in file order, then command line)
/// with where it was set and the property that does its job here, and
/// lists any others, each with its counterpart too.
pub fn refuse_unread(p: &Properties) -> Result<(), PropertyError> {
    let mut given: Vec<(&str, &Origin, &str)> = NOT_READ
        .iter()
        .filter_map(|(key, job)| {
            let e = p.entry(key)?;
            (e.origin != Origin::Default).then_some((*key, &e.origin, *job))
        })
        .collect();
    given.sort_by_key(|(key, origin, _)| {
        let place = match origin {
            Origin::File { line, .. } => (0, *line),
            Origin::CommandLine => (1, 0),
            _ => (2, 0),
        };
        (place, *key)
    });
    let Some(((key, _, job), rest)) = given.split_first() else {
        return Ok(());
    };
    let also = if rest.is_empty() {
        String::new()
    } else {
        let others: Vec<String> = rest
            .iter()
            .map(|(k, _, job)| format!("{}: {job}", p.describe(k)))
            .collect();
        format!("; also not read: {}", others.join("; "))
    };
    Err(p.invalid(
        key,
        format!(
            "is a YCSB setting that the key-value workload (workload=keyvalue) does not \
             read: {job} (docs/keyvalue.md){also}"
        ),
    ))
}

/// The key-value workload's capability: a table of the backend's own
/// layout for it. Optional: without it the workload uses YCSB's layout.
pub struct KeyValue;

impl Capability for KeyValue {
    type Config = KeyValueConfig;
    type Step = KeyValueWorker;
    // Never shown: a backend without it runs the workload in YCSB's layout.
    const REFUSAL: &'static str = "has no key-value table of its own";
}

/// A backend's key-value table, if it has one of its own.
pub type KeyValueSupport<B> = Support<B, KeyValue>;

/// Whether the `workload` property selects this workload.
pub fn is_keyvalue(p: &Properties) -> bool {
    p.get_str("workload", "core")
        .eq_ignore_ascii_case("keyvalue")
}

/// Which written keys readers pick.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReadDistribution {
    Uniform,
    /// Skewed towards the most recently written keys (YCSB's `latest`).
    Latest,
}

/// The workload's settings, with yb-sample-apps' names.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyValueConfig {
    pub table: String,
    pub num_unique_keys: u64,
    /// Writes to perform; `None` until the deadline (yb's -1).
    pub num_writes: Option<u64>,
    pub num_reads: Option<u64>,
    pub num_threads_write: usize,
    pub num_threads_read: usize,
    pub value_size: usize,
    pub read_distribution: ReadDistribution,
    /// Operations per second of each pool in total; `None` is closed loop.
    pub read_rate: Option<f64>,
    pub write_rate: Option<f64>,
    /// Keys `0..n` are known to be written; `None`: find out.
    pub max_written_key: Option<u64>,
    /// Prepended to `key:<n>` (`<uuid>:key:<n>`); empty with `nouuid`.
    pub key_prefix: String,
}

/// The smallest value that still holds a checksum, its separator and a
/// byte of payload.
const MIN_VALUE_SIZE: u64 = 10;

impl KeyValueConfig {
    /// Read the workload's properties; `table` keeps YCSB's name for the
    /// table (default `keyvalue` here, so a YCSB table is not touched).
    pub fn from_properties(p: &Properties, phase: Phase) -> Result<Self, PropertyError> {
        refuse_unread(p)?;
        let count = |key: &str| -> Result<Option<u64>, PropertyError> {
            match p.get_i64(key, -1)? {
                -1 => Ok(None),
                n if n >= 0 => Ok(Some(n as u64)),
                _ => Err(p.invalid(key, "must be a count, or -1 for no limit")),
            }
        };
        let rate = |key: &str| -> Result<Option<f64>, PropertyError> {
            match p.entry(key) {
                None => Ok(None),
                Some(_) => {
                    let r = p.get_f64(key, 0.0)?;
                    if !(r > 0.0 && r.is_finite()) {
                        return Err(p.invalid(
                            key,
                            "must be operations per second above 0; leave it out for a closed loop",
                        ));
                    }
                    Ok(Some(r))
                }
            }
        };
        let threads = |key: &str, default: u64| -> Result<usize, PropertyError> {
            Ok(p.get_u64_in(key, default, 0..=10_000)? as usize)
        };
        let num_unique_keys = p.get_u64("num_unique_keys", 1_000_000)?;
        if num_unique_keys == 0 {
            return Err(p.invalid("num_unique_keys", "must be at least 1"));
        }
        let value_size = p.get_u64("value_size", 256)?;
        if !(MIN_VALUE_SIZE..=16 << 20).contains(&value_size) {
            return Err(p.invalid(
                "value_size",
                format!(
                    "must be between {MIN_VALUE_SIZE} bytes (a checksum and a byte) and 16 MiB"
                ),
            ));
        }
        let read_distribution =
            match p.get_choice("read_distribution", "uniform", &["uniform", "latest"])? {
                "latest" => ReadDistribution::Latest,
                _ => ReadDistribution::Uniform,
            };
        let read_only = p.get_bool("read_only", false)?;
        let mut num_threads_write = threads("num_threads_write", 2)?;
        let mut num_threads_read = threads("num_threads_read", 24)?;
        match phase {
            // Loading is writing: readers have nothing to read yet.
            Phase::Load => num_threads_read = 0,
            Phase::Run if read_only => num_threads_write = 0,
            Phase::Run => {}
        }
        if num_threads_write + num_threads_read == 0 {
            return Err(p.invalid(
                if phase == Phase::Load {
                    "num_threads_write"
                } else {
                    "num_threads_read"
                },
                "leaves no connection to run: give the writers or readers at least one",
            ));
        }
        let key_prefix = if p.get_bool("nouuid", true)? {
            String::new()
        } else {
            match p.get("uuid") {
                Some(u) if !u.trim().is_empty() => format!("{}:", u.trim()),
                _ => {
                    return Err(p.invalid(
                        "nouuid",
                        "is false, so keys need a prefix: set -p uuid=... (the same one for load and run)",
                    ))
                }
            }
        };
        Ok(KeyValueConfig {
            table: p.get_str("table", "keyvalue").to_string(),
            num_unique_keys,
            num_writes: count("num_writes")?,
            num_reads: count("num_reads")?,
            num_threads_write,
            num_threads_read,
            value_size: value_size as usize,
            read_distribution,
            read_rate: rate("read_rate")?,
            write_rate: rate("write_rate")?,
            max_written_key: count("max_written_key")?,
            key_prefix,
        })
    }

    /// Refuse a phase that would never end: a pool with no count of its own
    /// and no `maxexecutiontime`.
    pub fn check_ends(
        &self,
        phase: Phase,
        deadline: bool,
        p: &Properties,
    ) -> Result<(), PropertyError> {
        if deadline || phase == Phase::Load {
            return Ok(());
        }
        for (threads, count, key) in [
            (self.num_threads_write, self.num_writes, "num_writes"),
            (self.num_threads_read, self.num_reads, "num_reads"),
        ] {
            if threads > 0 && count.is_none() {
                return Err(p.invalid(
                    key,
                    "is -1 (no limit) and maxexecutiontime is not set, so the run would never end; set one of them",
                ));
            }
        }
        Ok(())
    }

    /// The layout: one record per key with one field, `v`.
    pub fn schema(&self) -> Schema {
        Schema {
            table: self.table.clone(),
            field_names: vec!["v".to_string()],
            more_tables: Vec::new(),
        }
    }

    pub fn key(&self, n: u64) -> String {
        let mut k = String::with_capacity(self.key_prefix.len() + 24);
        k.push_str(&self.key_prefix);
        k.push_str("key:");
        k.push_str(itoa::Buffer::new().format(n));
        k
    }

    /// Connections: writers first, then readers.
    pub fn workers(&self) -> usize {
        self.num_threads_write + self.num_threads_read
    }

    /// The executor's groups for a phase that starts with `written` keys
    /// present: writers, then readers, leaving out an empty pool.
    pub fn groups(&self, phase: Phase, written: u64) -> Vec<Group> {
        let writes = match phase {
            Phase::Load => {
                let left = self.num_unique_keys.saturating_sub(written);
                Some(self.num_writes.map_or(left, |n| n.min(left)))
            }
            Phase::Run => self.num_writes,
        };
        [
            (self.num_threads_write, self.write_rate, writes),
            (self.num_threads_read, self.read_rate, self.num_reads),
        ]
        .into_iter()
        .filter(|&(w, _, _)| w > 0)
        .map(|(workers, target, operation_count)| Group {
            workers,
            target: target.map(crate::rate::Target::constant),
            operation_count,
        })
        .collect()
    }
}

/// How many keys are written: the first `n` with `key:n` missing, by a
/// binary search over reads (about 40 reads for 10^12 keys). Writers insert
/// in order, so the keys present are a prefix; a few may be missing near
/// its end where inserts were cut off, which the search may land on, in
/// which case writers retry from there.
pub async fn written_keys<C: Connection>(
    conn: &mut C,
    cfg: &KeyValueConfig,
) -> Result<u64, Status> {
    let mut out = Vec::new();
    if !present(conn, cfg, 0, &mut out).await? {
        return Ok(0);
    }
    // Every key below `lo` is present; `hi` is absent (or the end).
    let (mut lo, mut hi) = (1u64, cfg.num_unique_keys);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if present(conn, cfg, mid, &mut out).await? {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

async fn present<C: Connection>(
    conn: &mut C,
    cfg: &KeyValueConfig,
    n: u64,
    out: &mut Vec<FieldValue>,
) -> Result<bool, Status> {
    out.clear();
    match conn.read(&cfg.key(n), Fields::All, out).await {
        Status::Ok => Ok(true),
        Status::NotFound => Ok(false),
        other => Err(other),
    }
}

/// What the workers of one phase share: the insert counter, whose
/// acknowledged part is what readers may read.
pub struct KeyValueShared {
    cfg: KeyValueConfig,
    inserts: AcknowledgedCounter,
    /// Keys present before the phase began.
    start: u64,
}

impl KeyValueShared {
    /// Writers continue from `written` keys already present.
    pub fn new(cfg: KeyValueConfig, written: u64) -> Arc<KeyValueShared> {
        Arc::new(KeyValueShared {
            cfg,
            inserts: AcknowledgedCounter::new(written),
            start: written,
        })
    }

    pub fn config(&self) -> &KeyValueConfig {
        &self.cfg
    }

    /// Keys confirmed written: every key below this one is (yb's
    /// `maxWrittenKey` + 1).
    pub fn written(&self) -> u64 {
        let last = self.inserts.last();
        if last == self.start.wrapping_sub(1) {
            self.start
        } else {
            (last + 1).min(self.cfg.num_unique_keys)
        }
    }

    /// The worker for connection `index` (writers first), seeded from the
    /// run seed and the index.
    pub fn worker(self: &Arc<Self>, seed: u64, index: usize) -> KeyValueWorker {
        let role = if index < self.cfg.num_threads_write {
            Role::Writer
        } else {
            Role::Reader
        };
        KeyValueWorker {
            shared: self.clone(),
            role,
            rng: rng_for(seed, index as u64),
            latest: SkewedLatest::new(self.written().max(1)),
            value: Vec::with_capacity(self.cfg.value_size),
            out: Vec::with_capacity(1),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Role {
    Writer,
    Reader,
}

/// One connection's state.
pub struct KeyValueWorker {
    shared: Arc<KeyValueShared>,
    role: Role,
    rng: Rng,
    latest: SkewedLatest,
    value: Vec<u8>,
    out: Vec<FieldValue>,
}

impl<C: Connection> Step<C> for KeyValueWorker {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        match self.role {
            Role::Writer => self.write(conn, m).await,
            Role::Reader => self.read(conn, m).await,
        }
    }
}

impl KeyValueWorker {
    /// The writer's next operation: new keys first; once every key has
    /// been handed out, an overwrite of a random key whose insert has been
    /// acknowledged. Keys handed out but still in flight are never
    /// overwritten: the update could reach the database before the insert
    /// (NOT_FOUND, or an insert's duplicate key).
    fn next_write(&mut self) -> (OpKind, u64) {
        let shared = &*self.shared;
        let cfg = &shared.cfg;
        if shared.written() < cfg.num_unique_keys {
            let n = shared.inserts.next();
            if n < cfg.num_unique_keys {
                return (OpKind::Insert, n);
            }
        }
        // Read after taking a number: the inserts acknowledged meanwhile
        // widen the choice.
        let written = shared.written().max(1);
        (OpKind::Update, below(&mut self.rng, written))
    }

    async fn write<C: Connection>(&mut self, conn: &mut C, m: &mut Meter) {
        let (kind, n) = self.next_write();
        let shared = &*self.shared;
        let cfg = &shared.cfg;
        let key = cfg.key(n);
        fill_value(&mut self.rng, &key, cfg.value_size, &mut self.value);
        let values = [FieldValue {
            field: 0,
            value: std::mem::take(&mut self.value),
        }];
        let t = m.start();
        let status = match kind {
            OpKind::Insert => conn.insert(&key, &values).await,
            _ => conn.update(&key, &values).await,
        };
        m.record_on(conn, kind, status, t);
        let [FieldValue { value, .. }] = values;
        self.value = value;
        if kind == OpKind::Insert {
            // Acknowledged whatever the outcome, as YCSB does: a failed
            // insert must not hold back every later key from readers (they
            // find it missing, and count that).
            shared.inserts.acknowledge(n);
        }
    }

    async fn read<C: Connection>(&mut self, conn: &mut C, m: &mut Meter) {
        let shared = &*self.shared;
        let written = shared.written();
        let n = match shared.cfg.read_distribution {
            // Nothing written yet: key 0, which is reported NOT_FOUND.
            _ if written == 0 => 0,
            ReadDistribution::Uniform => below(&mut self.rng, written),
            // `written - 1` is the newest key; the skewed draw is in
            // 1..=last, so the newest is the likeliest.
            ReadDistribution::Latest => self.latest.next(&mut self.rng, written - 1),
        };
        let key = shared.cfg.key(n);
        self.out.clear();
        let t = m.start();
        let mut status = conn.read(&key, Fields::All, &mut self.out).await;
        let ended = std::time::Instant::now();
        if status == Status::Ok && !self.out.iter().any(|f| verify(&key, &f.value)) {
            status = Status::UnexpectedState;
        }
        m.record_span_on(conn, OpKind::Read, status, t, ended);
    }
}

/// A value of `size` bytes for `key`: 8 hex digits of a CRC-32 over the key
/// and the payload, `:`, then printable random payload (printable so that
/// SQL backends can keep it in a text column).
pub fn fill_value(rng: &mut Rng, key: &str, size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(9, b'0');
    out[8] = b':';
    while out.len() < size {
        let mut r = rng.next_u64();
        for _ in 0..8 {
            if out.len() == size {
                break;
            }
            out.push(b'a' + (r % 26) as u8);
            r /= 26;
        }
    }
    let sum = checksum(key, &out[9..]);
    out[..8].copy_from_slice(format!("{sum:08x}").as_bytes());
}

/// Whether `value` is one [`fill_value`] made for `key`.
pub fn verify(key: &str, value: &[u8]) -> bool {
    if value.len() < 9 || value[8] != b':' {
        return false;
    }
    let Ok(hex) = std::str::from_utf8(&value[..8]) else {
        return false;
    };
    u32::from_str_radix(hex, 16).is_ok_and(|sum| sum == checksum(key, &value[9..]))
}

fn checksum(key: &str, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(key.as_bytes());
    h.update(payload);
    h.finalize()
}

/// What the key-value workload says about a phase: the keys written before
/// it and at its end (yb-sample-apps' `maxWrittenKey`), and yb-sample-apps'
/// status line in place of YCSB's.
pub struct Narration {
    shared: Arc<KeyValueShared>,
    line: Mutex<ProgressLine>,
}

impl Narration {
    pub fn new(shared: Arc<KeyValueShared>) -> Narration {
        Narration {
            shared,
            line: Mutex::new(ProgressLine::default()),
        }
    }
}

impl Narrator for Narration {
    fn before(&self, phase: Phase) -> Option<String> {
        let written = self.shared.written();
        (phase == Phase::Run || written > 0)
            .then(|| format!("{}: {written} keys written before this phase", phase.name()))
    }

    fn status_line(&self, p: &Progress<'_>) -> Option<String> {
        let mut line = self.line.lock().unwrap_or_else(|e| e.into_inner());
        Some(line.line(p, self.shared.written()))
    }

    fn after(&self, phase: Phase) -> Option<String> {
        Some(format!(
            "{}: maxWrittenKey {}",
            phase.name(),
            self.shared.written() as i64 - 1
        ))
    }
}

/// yb-sample-apps' progress line, from the intervals the executor reports:
/// `Read: x ops/sec (y ms/op), n total ops | Write: ... | Uptime: t ms |
/// maxWrittenKey: k`, then which time `ms/op` is: response time, from each
/// operation's intended start (yb-sample-apps times the call alone, which
/// is the same in a closed loop; a pool at a rate also waits its turn).
/// What the status line's `ms/op` is, said at its end.
pub const MS_PER_OP: &str = "ms/op: response time (from the intended start)";

#[derive(Default)]
pub struct ProgressLine {
    reads: u64,
    writes: u64,
}

impl ProgressLine {
    pub fn line(&mut self, p: &Progress<'_>, written: u64) -> String {
        let secs = p.interval_length.as_secs_f64();
        let part = |kinds: &[OpKind], total: &mut u64| {
            let (mut n, mut ns) = (0u64, 0f64);
            for k in kinds {
                if let Some(s) = p.interval.op(*k) {
                    let all = s.all();
                    n += s.count();
                    ns += all.response.mean() * all.response.len() as f64;
                }
            }
            *total += n;
            let rate = if secs > 0.0 { n as f64 / secs } else { 0.0 };
            let ms = if n > 0 { ns / n as f64 / 1e6 } else { 0.0 };
            format!("{rate:.2} ops/sec ({ms:.2} ms/op), {total} total ops")
        };
        let read = part(&[OpKind::Read], &mut self.reads);
        let write = part(&[OpKind::Insert, OpKind::Update], &mut self.writes);
        format!(
            "Read: {read} | Write: {write} | Uptime: {} ms | maxWrittenKey: {} | {MS_PER_OP}",
            p.elapsed.as_millis(),
            written as i64 - 1
        )
    }
}

impl Kind for KeyValueConfig {
    const NAME: &'static str = "keyvalue";
    const TITLE: &'static str = "the key-value workload";
    const PROPERTIES: &'static [&'static str] = KEYVALUE_PROPERTIES;

    fn from_properties(p: &Properties, phase: Phase) -> Result<Self, PropertyError> {
        KeyValueConfig::from_properties(p, phase)
    }

    fn records(&self) -> Option<u64> {
        Some(self.num_unique_keys)
    }

    /// The reader and writer pools decide the connections.
    fn connections(&self) -> Option<u64> {
        Some(self.workers() as u64)
    }

    fn bounds_itself(&self) -> bool {
        true
    }

    /// A rate for the whole phase would leave the pools' own unapplied
    /// (a suite's `ycsb_target_qps` among them) while the phase looks
    /// throttled; and a pool with no count needs a time limit.
    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        if let Some(key) = s.rate_key {
            return Err(s.props.invalid(
                key,
                "does not apply to workload=keyvalue, whose writer and reader pools have rates \
                 of their own: set write_rate and read_rate",
            ));
        }
        self.check_ends(s.phase, s.deadline, s.props)
    }

    fn paced(&self) -> bool {
        self.read_rate.is_some() || self.write_rate.is_some()
    }

    /// The reader and writer pools, each at its own rate; a load skips
    /// the keys it finds already written (see [`Kind::ready`]).
    fn groups(&self, phase: Phase, _one: Group) -> Vec<Group> {
        self.groups(phase, 0)
    }

    fn schema(&self, _core: &super::CoreConfig) -> Schema {
        self.schema()
    }

    fn data_shape(&self) -> &'static str {
        "num_unique_keys, value_size, nouuid/uuid"
    }

    fn one_client_only(&self, _phase: Phase) -> Option<&'static str> {
        Some(
            "the keyvalue workload runs from one client machine (its writers continue from \
             the keys already written, which every client would insert)",
        )
    }

    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: done,
            unit: "keys",
            batches: None,
        }
    }

    async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        match KeyValueSupport::find(backend) {
            Some(own) => own.is_empty(backend, self).await,
            None => backend.is_empty(schema).await,
        }
    }

    async fn check_layout<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        match KeyValueSupport::find(backend) {
            // Its own table is checked by its own setup.
            Some(_) => Ok(()),
            None => backend.check_layout(schema).await,
        }
    }

    async fn prepare<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        match KeyValueSupport::find(backend) {
            Some(own) => own.prepare(backend, self, drop).await,
            None => backend.prepare(schema, drop).await,
        }
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        // The search offers one target to every connection; what would
        // scale the two pools' own rates is the experimenter's choice.
        Some(
            "workload=keyvalue has a writer and a reader pool with rates of their own: run \
             `sojourn run -p read_rate=N -p write_rate=M` at rising rates (see docs/keyvalue.md)",
        )
    }

    /// The writers continue from the keys already in the database:
    /// `max_written_key`, or found by a search of reads over a connection
    /// of its own from `connector` (opened only then, and closed before
    /// the phase starts).
    async fn ready<B, K>(
        &self,
        phase: Phase,
        cfg: &RunConfig,
        _backend: &B,
        connector: &K,
    ) -> Result<Box<dyn ReadyPhase<B::Conn>>, StepsError>
    where
        B: Backend,
        K: Connector<Conn = B::Conn>,
    {
        let written = match self.max_written_key {
            Some(w) => w,
            None => {
                let mut conn = connector.connect().await?;
                written_keys(&mut conn, self)
                    .await
                    .map_err(StepsError::WrittenKeys)?
            }
        };
        let shared = KeyValueShared::new(self.clone(), written);
        let steps = (0..cfg.workers())
            .map(|i| shared.worker(cfg.seed, i))
            .collect();
        let cfg = RunConfig {
            groups: self.groups(phase, written),
            ..cfg.clone()
        };
        Ok(Box::new(
            Steps::new(steps, cfg).narrated(Arc::new(Narration::new(shared))),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::Origin;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        let mut p = Properties::new();
        for (k, v) in pairs {
            p.set(k, v, Origin::Flag("-p"));
        }
        p
    }

    #[test]
    fn values_verify_for_their_key_only() {
        let mut rng = rng_for(1, 2);
        let mut v = Vec::new();
        fill_value(&mut rng, "key:7", 64, &mut v);
        assert_eq!(v.len(), 64);
        assert!(verify("key:7", &v));
        assert!(!verify("key:8", &v), "a value read under another key");
        let mut bad = v.clone();
        bad[40] = if bad[40] == b'a' { b'b' } else { b'a' };
        assert!(!verify("key:7", &bad), "one flipped byte");
        assert!(!verify("key:7", &v[..5]));
        assert!(v[9..].iter().all(u8::is_ascii_lowercase));
    }

    #[test]
    fn defaults_and_phases() {
        let c = KeyValueConfig::from_properties(&props(&[]), Phase::Run).unwrap();
        assert_eq!(c.num_unique_keys, 1_000_000);
        assert_eq!((c.num_threads_write, c.num_threads_read), (2, 24));
        assert_eq!(c.key(42), "key:42");
        assert_eq!(c.value_size, 256);
        let load = KeyValueConfig::from_properties(&props(&[]), Phase::Load).unwrap();
        assert_eq!(load.num_threads_read, 0);
        assert_eq!(
            load.groups(Phase::Load, 400_000),
            vec![Group {
                workers: 2,
                target: None,
                operation_count: Some(600_000)
            }]
        );
        let ro = props(&[("read_only", "true"), ("read_rate", "500")]);
        let c = KeyValueConfig::from_properties(&ro, Phase::Run).unwrap();
        assert_eq!(
            c.groups(Phase::Run, 10),
            vec![Group {
                workers: 24,
                target: Some(crate::rate::Target::constant(500.0)),
                operation_count: None
            }]
        );
    }

    #[test]
    fn bad_values_name_the_property() {
        for (k, v, want) in [
            ("value_size", "4", "value_size"),
            ("read_rate", "0", "read_rate"),
            ("num_reads", "-2", "num_reads"),
            ("read_distribution", "zipf", "read_distribution"),
            ("nouuid", "false", "uuid"),
        ] {
            let e = KeyValueConfig::from_properties(&props(&[(k, v)]), Phase::Run)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{k}={v}: {e}");
        }
        let c = KeyValueConfig::from_properties(
            &props(&[("nouuid", "false"), ("uuid", "abc")]),
            Phase::Run,
        )
        .unwrap();
        assert_eq!(c.key(3), "abc:key:3");
    }

    #[test]
    fn ycsb_settings_the_user_gave_are_refused_naming_the_counterpart() {
        let file = Properties::read_str(
            "workload=keyvalue\nnum_reads=10\nrecordcount=1000\nfieldcount=1\n",
            std::path::Path::new("kv.properties"),
        )
        .unwrap();
        let e = KeyValueConfig::from_properties(&file, Phase::Run)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("kv.properties:3: recordcount = '1000': ")
                && e.contains("num_unique_keys")
                && e.contains(
                    "also not read: fieldcount = '1' (kv.properties:4): a value is one field, v"
                ),
            "{e}"
        );
        let e = KeyValueConfig::from_properties(&props(&[("operationcount", "5")]), Phase::Run)
            .unwrap_err()
            .to_string();
        assert!(e.contains("num_writes and num_reads"), "{e}");
        let mut threads = Properties::new();
        threads.set("threadcount", "8", Origin::Flag("--threads"));
        let e = KeyValueConfig::from_properties(&threads, Phase::Load)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--threads: threadcount = '8'")
                && e.contains("num_threads_write and num_threads_read"),
            "{e}"
        );
        // sojourn's own defaults are not the user's.
        let mut defaults = Properties::new();
        defaults.set("recordcount", "1000", Origin::Default);
        defaults.set("threadcount", "32", Origin::Default);
        KeyValueConfig::from_properties(&defaults, Phase::Run).unwrap();
    }

    #[test]
    fn written_moves_over_acknowledged_inserts_only() {
        let cfg = KeyValueConfig::from_properties(&props(&[("num_unique_keys", "10")]), Phase::Run)
            .unwrap();
        let s = KeyValueShared::new(cfg, 3);
        assert_eq!(s.written(), 3);
        let (a, b) = (s.inserts.next(), s.inserts.next());
        assert_eq!((a, b), (3, 4));
        s.inserts.acknowledge(b);
        assert_eq!(s.written(), 3, "key 3 is not confirmed yet");
        s.inserts.acknowledge(a);
        assert_eq!(s.written(), 5);
    }

    #[test]
    fn writers_overwrite_only_acknowledged_keys() {
        let cfg = KeyValueConfig::from_properties(&props(&[("num_unique_keys", "10")]), Phase::Run)
            .unwrap();
        let s = KeyValueShared::new(cfg, 0);
        let mut w = s.worker(7, 0);
        // Every key handed out, only 0..=3 acknowledged: 4..=9 are in flight.
        for want in 0..10 {
            assert_eq!(w.next_write(), (OpKind::Insert, want));
        }
        for n in 0..4 {
            s.inserts.acknowledge(n);
        }
        let mut seen = [false; 4];
        for _ in 0..400 {
            let (kind, n) = w.next_write();
            assert_eq!(kind, OpKind::Update);
            assert!(n < 4, "overwrote key {n}, whose insert is in flight");
            seen[n as usize] = true;
        }
        assert!(seen.iter().all(|&b| b), "{seen:?}");
        // Once all are acknowledged, every key may be overwritten.
        for n in 4..10 {
            s.inserts.acknowledge(n);
        }
        assert!((0..400).any(|_| w.next_write().1 == 9));
    }
}
