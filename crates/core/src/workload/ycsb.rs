//! YCSB's CoreWorkload: which operation comes next, on which key, with which
//! fields and values, for the load phase (inserts in key order from
//! `insertstart`) and the run phase (the read/update/insert/scan/
//! read-modify-write mix). Keys, key choice and value layout follow YCSB so
//! that data loaded by either tool can be run by the other.
//!
//! Per-connection state (RNG, generators, buffers) lives in [`CoreWorker`];
//! what all connections share (insert counters, the sequential cursor) lives
//! in [`CoreShared`]. A worker's RNG is seeded from the run seed and its
//! connection index, so the same seed gives each connection the same
//! operations in the same order (keys that depend on other connections'
//! inserts, as `latest` does, follow the shared insert counter).

use crate::backend::Backend;
use crate::properties::{Properties, PropertyError};

use super::kind::Kind;
use super::steps::{Steps, StepsError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand_core::RngCore;

use crate::backend::{Connection, FieldValue, Row, Schema, Status};
use crate::executor::{Meter, Step};
use crate::generator::{
    next_f64, rng_for, AcknowledgedCounter, Counter, Discrete, Exponential, HistogramGen, Hotspot,
    LengthGen, Rng, ScrambledZipfian, Sequential, SkewedLatest, UniformGen, Zipfian,
};
use crate::keys::build_key_name;
use crate::op::{FieldChoice, OpKind, Operation};

use super::config::{
    CoreConfig, FieldLengthDistribution, RequestDistribution, ScanLengthDistribution,
};
use super::phase::Phase;
use crate::workload::kind::{Opens, Readied, Readying};

/// What every connection of one run shares.
pub struct CoreShared {
    pub cfg: CoreConfig,
    pub schema: Arc<Schema>,
    load_keys: Counter,
    txn_inserts: AcknowledgedCounter,
    sequential: Option<Sequential>,
    length_histogram: Option<HistogramGen>,
}

impl CoreShared {
    pub fn new(cfg: CoreConfig) -> Result<Arc<CoreShared>, String> {
        let schema = Arc::new(Schema::ycsb(&cfg.table, &cfg.field_prefix, cfg.field_count));
        let length_histogram = match &cfg.field_length_distribution {
            FieldLengthDistribution::Histogram(path) => {
                Some(HistogramGen::from_file(path).map_err(|e| e.to_string())?)
            }
            _ => None,
        };
        let sequential = (cfg.request_distribution == RequestDistribution::Sequential)
            .then(|| Sequential::new(cfg.insert_start, cfg.insert_start + cfg.insert_count - 1));
        Ok(Arc::new(CoreShared {
            load_keys: Counter::new(cfg.insert_start),
            txn_inserts: AcknowledgedCounter::new(cfg.record_count),
            sequential,
            length_histogram,
            schema,
            cfg,
        }))
    }

    /// One worker's generator state for `phase`.
    pub fn worker(self: &Arc<Self>, phase: Phase, seed: u64, index: usize) -> CoreWorker {
        let cfg = &self.cfg;
        let mut rng = rng_for(seed, index as u64);
        let lo = cfg.insert_start;
        let hi = cfg.insert_start + cfg.insert_count - 1;
        let keys = match cfg.request_distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform(UniformGen::new(lo, hi)),
            RequestDistribution::Zipfian => {
                let expected_new =
                    (cfg.operation_count as f64 * cfg.proportions.insert * 2.0) as u64;
                KeyChooser::Zipfian(ScrambledZipfian::new(lo, hi + 1 + expected_new))
            }
            RequestDistribution::Latest => {
                KeyChooser::Latest(SkewedLatest::new(self.txn_inserts.last()))
            }
            RequestDistribution::Hotspot => KeyChooser::Hotspot(Hotspot::new(
                lo,
                hi,
                cfg.hotspot_data_fraction,
                cfg.hotspot_opn_fraction,
            )),
            RequestDistribution::Sequential => KeyChooser::Sequential,
            RequestDistribution::Exponential => KeyChooser::Exponential(Exponential::new(
                cfg.exponential_percentile,
                cfg.record_count as f64 * cfg.exponential_frac,
            )),
        };
        let field_len = match &cfg.field_length_distribution {
            FieldLengthDistribution::Constant => LengthGen::Constant(cfg.field_length),
            FieldLengthDistribution::Uniform => {
                LengthGen::Uniform(UniformGen::new(cfg.min_field_length, cfg.field_length))
            }
            FieldLengthDistribution::Zipfian => {
                LengthGen::Zipfian(Zipfian::new(cfg.min_field_length, cfg.field_length))
            }
            FieldLengthDistribution::Histogram(_) => LengthGen::Histogram(
                self.length_histogram
                    .clone()
                    .expect("histogram loaded in CoreShared::new"),
            ),
        };
        let scan_len = match cfg.scan_length_distribution {
            ScanLengthDistribution::Uniform => {
                LengthGen::Uniform(UniformGen::new(cfg.min_scan_length, cfg.max_scan_length))
            }
            ScanLengthDistribution::Zipfian => {
                LengthGen::Zipfian(Zipfian::new(cfg.min_scan_length, cfg.max_scan_length))
            }
        };
        let p = &cfg.proportions;
        let ops = Discrete::new(vec![
            (OpKind::Read, p.read),
            (OpKind::Update, p.update),
            (OpKind::Insert, p.insert),
            (OpKind::Scan, p.scan),
            (OpKind::ReadModifyWrite, p.read_modify_write),
        ]);
        // Burn one draw so that stream 0 of seed s and stream 1 of seed s
        // never line up by accident in short tests.
        let _ = rng.next_u64();
        CoreWorker {
            shared: self.clone(),
            phase,
            rng,
            ops,
            keys,
            field_len,
            scan_len,
            field_pick: UniformGen::new(0, cfg.field_count as u64 - 1),
            op: Operation::default(),
            read_buf: Vec::new(),
            scan_buf: Vec::new(),
            value_scratch: Vec::new(),
        }
    }
}

enum KeyChooser {
    Uniform(UniformGen),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Sequential,
    Exponential(Exponential),
}

/// One connection's workload state.
pub struct CoreWorker {
    shared: Arc<CoreShared>,
    phase: Phase,
    rng: Rng,
    ops: Discrete<OpKind>,
    keys: KeyChooser,
    field_len: LengthGen,
    scan_len: LengthGen,
    field_pick: UniformGen,
    op: Operation,
    read_buf: Vec<FieldValue>,
    scan_buf: Vec<Row>,
    value_scratch: Vec<u8>,
}

impl CoreWorker {
    /// The next operation this worker would run, without running it.
    /// (Used by tests of reproducibility; the executor uses [`Step`].)
    pub fn next_operation(&mut self) -> &Operation {
        match self.phase {
            Phase::Load => self.prepare_load(),
            Phase::Run => self.prepare_run(),
        }
        &self.op
    }

    fn prepare_load(&mut self) {
        let keynum = self.shared.load_keys.next();
        self.op.kind = OpKind::Insert;
        self.set_key(keynum);
        self.fill_values(true);
    }

    fn prepare_run(&mut self) {
        let kind = self.ops.next(&mut self.rng);
        self.op.kind = kind;
        match kind {
            OpKind::Insert => {
                let keynum = self.shared.txn_inserts.next();
                self.set_key(keynum);
                self.fill_values(true);
            }
            OpKind::Update => {
                let keynum = self.next_keynum();
                self.set_key(keynum);
                let all = self.shared.cfg.write_all_fields;
                self.fill_values(all);
            }
            // Read, scan, read-modify-write, delete: the chooser draws
            // YCSB's kinds only.
            _ => {
                let keynum = self.next_keynum();
                self.set_key(keynum);
                let choice = if self.shared.cfg.read_all_fields {
                    FieldChoice::All
                } else {
                    FieldChoice::One(self.field_pick.next(&mut self.rng) as usize)
                };
                self.op.set_read_fields(choice);
                if kind == OpKind::Scan {
                    self.op.scan_length = self.scan_len.next(&mut self.rng).max(1) as usize;
                }
                if kind == OpKind::ReadModifyWrite {
                    let all = self.shared.cfg.write_all_fields;
                    self.fill_values(all);
                }
            }
        }
    }

    /// YCSB's nextKeynum: draw until the key has been inserted (for every
    /// distribution but exponential, which counts back from the latest).
    fn next_keynum(&mut self) -> u64 {
        let last = self.shared.txn_inserts.last();
        let rng = &mut self.rng;
        // YCSB redraws without limit; bound it so a misconfigured key range
        // degrades to the newest key rather than spinning forever.
        for _ in 0..10_000 {
            let k = match &mut self.keys {
                KeyChooser::Uniform(g) => g.next(rng),
                KeyChooser::Zipfian(g) => g.next(rng),
                KeyChooser::Latest(g) => return g.next(rng, last),
                KeyChooser::Hotspot(g) => g.next(rng),
                KeyChooser::Sequential => self
                    .shared
                    .sequential
                    .as_ref()
                    .expect("sequential chooser present")
                    .next(),
                KeyChooser::Exponential(g) => {
                    let back = g.next(rng);
                    if back > last {
                        continue;
                    }
                    return last - back;
                }
            };
            if k <= last {
                return k;
            }
        }
        last
    }

    fn set_key(&mut self, keynum: u64) {
        let cfg = &self.shared.cfg;
        self.op.keynum = keynum;
        build_key_name(
            keynum,
            cfg.zero_padding,
            !cfg.ordered_inserts,
            &mut self.op.key,
        );
    }

    /// Values for all fields, or for one field chosen at random.
    fn fill_values(&mut self, all: bool) {
        let n = if all { self.shared.cfg.field_count } else { 1 };
        let one = if all {
            0
        } else {
            self.field_pick.next(&mut self.rng) as usize
        };
        let integrity = self.shared.cfg.data_integrity;
        let shared = self.shared.clone();
        let key = std::mem::take(&mut self.op.key);
        let values = self.op.reset_values(n);
        for (i, v) in values.iter_mut().enumerate() {
            v.field = if all { i } else { one };
            let len = self.field_len.next(&mut self.rng) as usize;
            if integrity {
                deterministic_value(&key, &shared.schema.field_names[v.field], len, &mut v.value);
            } else {
                random_value(&mut self.rng, len, &mut v.value);
            }
        }
        self.op.key = key;
    }

    /// Read the current operation's key into `read_buf` and record it:
    /// timed from `started` to the moment the database answered, so that
    /// verifying the values (`dataintegrity`) is not counted as database
    /// latency. Returns the read's status.
    async fn read_current<C: Connection>(
        &mut self,
        conn: &mut C,
        m: &mut Meter,
        started: Instant,
    ) -> Status {
        FieldValue::recycle(&mut self.read_buf);
        let op = &self.op;
        let status = conn.read(&op.key, op.fields(), &mut self.read_buf).await;
        if status != Status::Ok || !self.shared.cfg.data_integrity {
            m.record_on(conn, OpKind::Read, status, started);
            return status;
        }
        let answered = Instant::now();
        let verified = verify(
            &self.shared,
            &mut self.value_scratch,
            &self.op.key,
            &self.read_buf,
        );
        m.record_span(OpKind::Read, verified, started, answered);
        verified
    }

    async fn load_one<C: Connection>(&mut self, conn: &mut C, m: &mut Meter) {
        self.prepare_load();
        let (limit, interval) = (
            self.shared.cfg.insertion_retry_limit,
            self.shared.cfg.insertion_retry_interval,
        );
        let mut tries = 0;
        loop {
            let t = m.start();
            let status = conn.insert(&self.op.key, self.op.values()).await;
            m.record_on(conn, OpKind::Insert, status, t);
            if status.is_ok() || tries >= limit {
                break;
            }
            tries += 1;
            // YCSB's back-off: the interval, jittered by +-20%.
            let jitter = 0.8 + 0.4 * next_f64(&mut self.rng);
            tokio::time::sleep(Duration::from_secs_f64(interval.as_secs_f64() * jitter)).await;
        }
    }

    async fn run_one<C: Connection>(&mut self, conn: &mut C, m: &mut Meter) {
        self.prepare_run();
        let op = &self.op;
        match op.kind {
            OpKind::Read => {
                let t = m.start();
                self.read_current(conn, m, t).await;
            }
            OpKind::Update => {
                let t = m.start();
                let status = conn.update(&op.key, op.values()).await;
                m.record_on(conn, OpKind::Update, status, t);
            }
            OpKind::Insert => {
                let t = m.start();
                let status = conn.insert(&op.key, op.values()).await;
                m.record_on(conn, OpKind::Insert, status, t);
                // YCSB acknowledges whatever the outcome, so a failed insert
                // cannot hold back the latest key forever.
                self.shared.txn_inserts.acknowledge(op.keynum);
            }
            OpKind::Scan => {
                self.scan_buf.clear();
                let t = m.start();
                let status = conn
                    .scan(&op.key, op.scan_length, op.fields(), &mut self.scan_buf)
                    .await;
                m.record_on(conn, OpKind::Scan, status, t);
            }
            OpKind::ReadModifyWrite => {
                let t0 = m.start();
                let read = self.read_current(conn, m, t0).await;
                let op = &self.op;
                let t1 = m.start();
                let update = conn.update(&op.key, op.values()).await;
                m.record_on(conn, OpKind::Update, update, t1);
                let whole = if read.is_ok() { update } else { read };
                m.record_whole(OpKind::ReadModifyWrite, whole, t0);
            }
            // Delete, the one kind left of the six the chooser draws.
            _ => {
                let t = m.start();
                let status = conn.delete(&op.key).await;
                m.record_on(conn, OpKind::Delete, status, t);
            }
        }
    }
}

impl<C: Connection> Step<C> for CoreWorker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self.phase {
            Phase::Load => self.load_one(conn, meter).await,
            Phase::Run => self.run_one(conn, meter).await,
        }
    }
}

/// Printable ASCII, as YCSB's RandomByteIterator writes: random bytes mapped
/// onto 64 printable characters (a mask and an add the compiler vectorises).
pub fn random_value(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(len, 0);
    rng.fill_bytes(out);
    for b in out.iter_mut() {
        *b = b' ' + (*b & 63);
    }
}

/// YCSB's buildDeterministicValue: `key:field`, then `:` and the Java
/// `String.hashCode` of everything so far, repeated, cut to `len`.
pub fn deterministic_value(key: &str, field: &str, len: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(key.as_bytes());
    out.push(b':');
    out.extend_from_slice(field.as_bytes());
    // Java's hashCode folds h = 31*h + c over the whole string; keeping it
    // incrementally avoids rehashing the growing prefix each round.
    let mut h: i32 = 0;
    let mut hashed = 0;
    while out.len() < len {
        for &c in &out[hashed..] {
            h = h.wrapping_mul(31).wrapping_add(c as i32);
        }
        hashed = out.len();
        out.push(b':');
        out.extend_from_slice(itoa::Buffer::new().format(h).as_bytes());
    }
    out.truncate(len);
}

/// Check values read against what `dataintegrity` wrote: YCSB's verifyRow.
/// An empty result is an ERROR, any mismatch UNEXPECTED_STATE.
fn verify(shared: &CoreShared, scratch: &mut Vec<u8>, key: &str, got: &[FieldValue]) -> Status {
    if got.is_empty() {
        return Status::Error;
    }
    for fv in got {
        let Some(name) = shared.schema.field_names.get(fv.field) else {
            return Status::UnexpectedState;
        };
        deterministic_value(key, name, shared.cfg.field_length as usize, scratch);
        if *scratch != fv.value {
            return Status::UnexpectedState;
        }
    }
    Status::Ok
}

/// YCSB's core workload as a kind of the registry: every default is
/// YCSB's layout, and it is the one `capacity` searches.
impl Kind for CoreConfig {
    const NAME: &'static str = "core";
    const TITLE: &'static str = "YCSB's core workload";
    // YCSB's own properties, known whatever runs.
    const PROPERTIES: &'static [&'static str] = &[];

    fn from_properties(p: &Properties, _phase: Phase) -> Result<CoreConfig, PropertyError> {
        CoreConfig::from_properties(p)
    }

    fn data_shape(&self) -> &'static str {
        "recordcount, insertstart, insertorder, fieldcount"
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        None
    }

    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (phase, cfg) = (at.phase, at.cfg);
        let shared = CoreShared::new(self.clone()).map_err(StepsError::Workload)?;
        let steps = (0..cfg.workers())
            .map(|i| shared.worker(phase, cfg.seed, i))
            .collect();
        Ok(Box::new(Steps::new(steps, cfg.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java: ("user1:field0").hashCode() and so on, computed the slow way.
    fn java_hash(s: &[u8]) -> i32 {
        s.iter()
            .fold(0i32, |h, &c| h.wrapping_mul(31).wrapping_add(c as i32))
    }

    #[test]
    fn deterministic_value_follows_ycsb() {
        let mut v = Vec::new();
        deterministic_value("user1", "field0", 40, &mut v);
        // Rebuild it the way YCSB's loop does, rehashing the whole prefix.
        let mut expect = b"user1:field0".to_vec();
        while expect.len() < 40 {
            let h = java_hash(&expect);
            expect.push(b':');
            expect.extend_from_slice(h.to_string().as_bytes());
        }
        expect.truncate(40);
        assert_eq!(v, expect);
        deterministic_value("user1", "field0", 5, &mut v);
        assert_eq!(v, b"user1");
    }

    #[test]
    fn random_values_are_printable_and_sized() {
        let mut rng = rng_for(1, 0);
        let mut v = Vec::new();
        for len in [0, 1, 7, 8, 9, 100, 1000] {
            random_value(&mut rng, len, &mut v);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&b| (b' '..=b'_').contains(&b)));
        }
    }
}
