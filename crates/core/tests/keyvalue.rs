//! The key-value workload end to end on the `memory:` backend, its steps
//! built by `Workload::ready` as every command builds them: a load that
//! writes every key, a run whose reads all verify, `latest` reads that
//! concentrate on the newest keys, reader and writer pools held to their
//! own rates, and a `target` refused.

use std::sync::{Arc, Mutex};

use sojourn_core::backend::memory::MemoryBackend;
use sojourn_core::backend::{
    Backend, BackendError, Connection, FieldValue, Fields, Row, Schema, Status,
};
use sojourn_core::executor::{self, BackendConnector, Quiet, RunOutcome, StopHandle};
use sojourn_core::op::OpKind;
use sojourn_core::plan::Plan;
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::Phase;

static SERIAL: Mutex<()> = Mutex::new(());

/// Records the number of every key read, then passes the call on.
struct Spy<C> {
    inner: C,
    reads: Arc<Mutex<Vec<u64>>>,
}

impl<C: Connection> Connection for Spy<C> {
    async fn read(&mut self, key: &str, f: Fields<'_>, out: &mut Vec<FieldValue>) -> Status {
        let n = key.rsplit(':').next().unwrap().parse().unwrap();
        self.reads.lock().unwrap().push(n);
        self.inner.read(key, f, out).await
    }
    async fn scan(&mut self, k: &str, n: usize, f: Fields<'_>, out: &mut Vec<Row>) -> Status {
        self.inner.scan(k, n, f, out).await
    }
    async fn update(&mut self, key: &str, values: &[FieldValue]) -> Status {
        self.inner.update(key, values).await
    }
    async fn insert(&mut self, key: &str, values: &[FieldValue]) -> Status {
        self.inner.insert(key, values).await
    }
    async fn delete(&mut self, key: &str) -> Status {
        self.inner.delete(key).await
    }
}

/// `memory:` (a clone shares the data) with every connection spied on.
struct SpyBackend {
    backend: MemoryBackend,
    reads: Arc<Mutex<Vec<u64>>>,
}

impl Backend for SpyBackend {
    type Conn = Spy<<MemoryBackend as Backend>::Conn>;
    fn describe(&self) -> String {
        self.backend.describe()
    }
    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        self.backend.prepare(schema, drop).await
    }
    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        self.backend.is_empty(schema).await
    }
    async fn connect(&self, schema: Arc<Schema>) -> Result<Self::Conn, BackendError> {
        Ok(Spy {
            inner: self.backend.connect(schema).await?,
            reads: self.reads.clone(),
        })
    }
}

/// A plan of the workload with `pairs` set, seed 7 and evenly spaced
/// arrivals.
fn plan(phase: Phase, pairs: &[(&str, &str)]) -> Plan {
    let mut p = Properties::new();
    for (k, v) in [
        ("workload", "keyvalue"),
        ("seed", "7"),
        ("arrival", "uniform"),
    ]
    .iter()
    .chain(pairs)
    {
        p.set(k, v, Origin::Flag("-p"));
    }
    Plan::from_properties(&p, phase, &[]).unwrap()
}

/// Run one phase of the workload as the command line does (its steps and
/// groups from `Workload::ready`, which finds the keys already written);
/// returns the outcome, the keys read and the keys written at the end (as
/// the phase's closing `maxWrittenKey` line says).
fn phase(backend: &MemoryBackend, plan: Plan) -> (RunOutcome, Vec<u64>, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let schema = Arc::new(plan.schema.clone());
    rt.block_on(backend.prepare(&schema, false)).unwrap();
    let reads = Arc::new(Mutex::new(Vec::new()));
    let spy = SpyBackend {
        backend: backend.clone(),
        reads: reads.clone(),
    };
    let connector = BackendConnector {
        backend: &spy,
        schema,
    };
    let ready = rt
        .block_on(plan.workload.ready(plan.phase, &plan.run, &spy, &connector))
        .unwrap();
    let narrator = ready.narrator().expect("the keyvalue workload narrates");
    reads.lock().unwrap().clear();
    let cfg = ready.config().clone();
    let outcome = executor::with_pool(&connector, &cfg, |pool| {
        ready.run(pool, &StopHandle::new(), &Quiet)
    })
    .unwrap()
    .unwrap();
    let keys = std::mem::take(&mut *reads.lock().unwrap());
    let last: i64 = narrator
        .after(plan.phase)
        .and_then(|l| l.rsplit(' ').next().map(|n| n.parse().unwrap()))
        .expect("a maxWrittenKey line");
    (outcome, keys, (last + 1) as u64)
}

fn count(o: &RunOutcome, kind: OpKind, status: Status) -> u64 {
    o.total.op(kind).map_or(0, |s| s.count_of(status))
}

#[test]
fn load_writes_every_key_and_run_reads_verify() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = MemoryBackend::new();
    let keys = [("num_unique_keys", "5000"), ("value_size", "100")];
    let (load, _, written) = phase(&b, plan(Phase::Load, &keys));
    assert_eq!(count(&load, OpKind::Insert, Status::Ok), 5000);
    assert_eq!(written, 5000);

    let run = [
        keys[0],
        keys[1],
        ("num_threads_write", "1"),
        ("num_threads_read", "3"),
        ("num_reads", "6000"),
        ("num_writes", "1000"),
    ];
    let (o, reads, written) = phase(&b, plan(Phase::Run, &run));
    // The run found the 5000 keys by its binary search, so its writers
    // only update: every key exists and every read verifies.
    assert_eq!(written, 5000);
    assert_eq!(count(&o, OpKind::Update, Status::Ok), 1000);
    assert_eq!(count(&o, OpKind::Insert, Status::Ok), 0);
    assert_eq!(count(&o, OpKind::Read, Status::Ok), 6000);
    assert_eq!(o.total.failures(), 0);
    assert_eq!(reads.len(), 6000);
    assert!(reads.iter().all(|&n| n < 5000));
}

#[test]
fn a_corrupted_value_is_unexpected_state() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = MemoryBackend::new();
    let keys = [("num_unique_keys", "1"), ("value_size", "32")];
    phase(&b, plan(Phase::Load, &keys));
    // Overwrite key 0 with a value that is not its own.
    let schema = plan(Phase::Load, &keys).schema;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = b.connect(Arc::new(schema)).await.unwrap();
        let v = FieldValue {
            field: 0,
            value: b"00000000:not-the-checksum".to_vec(),
        };
        assert_eq!(c.update("key:0", &[v]).await, Status::Ok);
    });
    let run = [
        keys[0],
        keys[1],
        ("read_only", "true"),
        ("num_threads_read", "1"),
        ("num_reads", "10"),
    ];
    let (o, _, _) = phase(&b, plan(Phase::Run, &run));
    assert_eq!(count(&o, OpKind::Read, Status::UnexpectedState), 10);
}

#[test]
fn latest_reads_concentrate_on_the_newest_keys() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = MemoryBackend::new();
    let keys = [("num_unique_keys", "10000"), ("value_size", "16")];
    phase(&b, plan(Phase::Load, &keys));
    let share_newest_tenth = |dist: &str| {
        let run = [
            keys[0],
            keys[1],
            ("read_only", "true"),
            ("num_threads_read", "2"),
            ("num_reads", "20000"),
            ("read_distribution", dist),
        ];
        let (o, reads, _) = phase(&b, plan(Phase::Run, &run));
        assert_eq!(count(&o, OpKind::Read, Status::Ok), 20000, "{dist}");
        reads.iter().filter(|&&n| n >= 9000).count() as f64 / reads.len() as f64
    };
    let uniform = share_newest_tenth("uniform");
    let latest = share_newest_tenth("latest");
    // Uniform: a tenth of the reads, within sampling noise (sd 0.2%).
    assert!((uniform - 0.1).abs() < 0.015, "uniform: {uniform}");
    // Latest (zipfian over recency, theta 0.99): most reads.
    assert!(latest > 0.6, "latest: {latest}");
}

#[test]
fn reader_and_writer_rates_are_held_apart() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = MemoryBackend::new();
    let base = [("num_unique_keys", "100000"), ("value_size", "16")];
    phase(
        &b,
        plan(Phase::Load, &[base[0], base[1], ("num_writes", "1000")]),
    );
    let run = [
        base[0],
        base[1],
        ("num_threads_write", "1"),
        ("num_threads_read", "2"),
        ("read_rate", "3000"),
        ("write_rate", "300"),
        ("maxexecutiontime", "2"),
    ];
    let (o, _, written) = phase(&b, plan(Phase::Run, &run));
    let secs = o.measured.as_secs_f64();
    let reads = count(&o, OpKind::Read, Status::Ok) as f64 / secs;
    let inserts = count(&o, OpKind::Insert, Status::Ok);
    assert!((reads / 3000.0 - 1.0).abs() < 0.05, "reads/s {reads}");
    assert!(
        ((inserts as f64 / secs) / 300.0 - 1.0).abs() < 0.05,
        "inserts/s {}",
        inserts as f64 / secs
    );
    // The writers went on from the keys the load wrote.
    assert_eq!(written, 1000 + inserts);
    assert_eq!(o.total.failures(), 0);
}

#[test]
fn a_target_is_refused_for_the_pools_rates() {
    let mut p = Properties::new();
    for (k, v) in [("workload", "keyvalue"), ("target", "1000")] {
        p.set(k, v, Origin::Flag("-p"));
    }
    let e = Plan::from_properties(&p, Phase::Run, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("target") && e.contains("read_rate"), "{e}");
}
