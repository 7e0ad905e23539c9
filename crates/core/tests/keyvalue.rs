//! The key-value workload end to end on the `memory:` backend: a load that
//! writes every key, a run whose reads all verify, `latest` reads that
//! concentrate on the newest keys, and reader and writer pools held to
//! their own rates.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sojourn_core::backend::memory::MemoryBackend;
use sojourn_core::backend::{Backend, Connection, FieldValue, Fields, Row, Status};
use sojourn_core::executor::{self, Connector, Quiet, RunConfig, RunOutcome, StopHandle};
use sojourn_core::op::OpKind;
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::schedule::Arrival;
use sojourn_core::workload::keyvalue::{written_keys, KeyValueConfig, KeyValueShared};
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

struct SpyConnector<'a> {
    backend: &'a MemoryBackend,
    cfg: &'a KeyValueConfig,
    reads: Arc<Mutex<Vec<u64>>>,
}

impl Connector for SpyConnector<'_> {
    type Conn = Spy<<MemoryBackend as Backend>::Conn>;
    async fn connect(&self) -> Result<Self::Conn, sojourn_core::backend::BackendError> {
        Ok(Spy {
            inner: self.backend.connect(Arc::new(self.cfg.schema())).await?,
            reads: self.reads.clone(),
        })
    }
}

fn config(phase: Phase, pairs: &[(&str, &str)]) -> KeyValueConfig {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.set(k, v, Origin::Flag("-p"));
    }
    KeyValueConfig::from_properties(&p, phase).unwrap()
}

/// Run one phase of the workload; returns the outcome, the keys read and
/// the keys written at the end.
fn phase(
    backend: &MemoryBackend,
    cfg: KeyValueConfig,
    phase: Phase,
    max_time: Option<Duration>,
) -> (RunOutcome, Vec<u64>, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let schema = cfg.schema();
    rt.block_on(backend.prepare(&schema, false)).unwrap();
    let reads = Arc::new(Mutex::new(Vec::new()));
    let connector = SpyConnector {
        backend,
        cfg: &cfg,
        reads: reads.clone(),
    };
    let written = rt
        .block_on(async {
            let mut c = connector.connect().await.unwrap();
            written_keys(&mut c, &cfg).await
        })
        .unwrap();
    reads.lock().unwrap().clear();
    let groups = cfg.groups(phase, written);
    let shared = KeyValueShared::new(cfg.clone(), written);
    let steps = (0..cfg.workers()).map(|i| shared.worker(7, i)).collect();
    let run = RunConfig {
        threads: cfg.workers(),
        arrival: Arrival::Uniform,
        max_execution_time: max_time,
        seed: 7,
        ..RunConfig::default()
    };
    let outcome = executor::with_pool(&connector, cfg.workers(), 0, |pool| {
        pool.run_groups(steps, &groups, &run, &StopHandle::new(), &Quiet)
    })
    .unwrap()
    .unwrap();
    let keys = std::mem::take(&mut *reads.lock().unwrap());
    (outcome, keys, shared.written())
}

fn count(o: &RunOutcome, kind: OpKind, status: Status) -> u64 {
    o.total.op(kind).map_or(0, |s| s.count_of(status))
}

#[test]
fn load_writes_every_key_and_run_reads_verify() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = MemoryBackend::new();
    let keys = [("num_unique_keys", "5000"), ("value_size", "100")];
    let (load, _, written) = phase(&b, config(Phase::Load, &keys), Phase::Load, None);
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
    let (o, reads, written) = phase(&b, config(Phase::Run, &run), Phase::Run, None);
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
    phase(&b, config(Phase::Load, &keys), Phase::Load, None);
    // Overwrite key 0 with a value that is not its own.
    let cfg = config(Phase::Run, &keys);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = b.connect(Arc::new(cfg.schema())).await.unwrap();
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
    let (o, _, _) = phase(&b, config(Phase::Run, &run), Phase::Run, None);
    assert_eq!(count(&o, OpKind::Read, Status::UnexpectedState), 10);
}

#[test]
fn latest_reads_concentrate_on_the_newest_keys() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = MemoryBackend::new();
    let keys = [("num_unique_keys", "10000"), ("value_size", "16")];
    phase(&b, config(Phase::Load, &keys), Phase::Load, None);
    let share_newest_tenth = |dist: &str| {
        let run = [
            keys[0],
            keys[1],
            ("read_only", "true"),
            ("num_threads_read", "2"),
            ("num_reads", "20000"),
            ("read_distribution", dist),
        ];
        let (o, reads, _) = phase(&b, config(Phase::Run, &run), Phase::Run, None);
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
        config(Phase::Load, &[base[0], base[1], ("num_writes", "1000")]),
        Phase::Load,
        None,
    );
    let run = [
        base[0],
        base[1],
        ("num_threads_write", "1"),
        ("num_threads_read", "2"),
        ("read_rate", "3000"),
        ("write_rate", "300"),
    ];
    let (o, _, written) = phase(
        &b,
        config(Phase::Run, &run),
        Phase::Run,
        Some(Duration::from_secs(2)),
    );
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
