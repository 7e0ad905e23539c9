//! An embedded database must not steal the schedule: a SQLite call that
//! blocks (a write waiting for the database's write lock) must not hold
//! back the sends of another connection paced by the same runtime thread,
//! or the response times reported would include the tool's own queueing.
#![cfg(feature = "sqlite")]

use std::sync::Arc;
use std::time::Duration;

use sojourn_backends::SqliteBackend;
use sojourn_core::backend::{Backend, Connection, FieldValue, Fields, Schema, Status};
use sojourn_core::executor::{
    self, BackendConnector, Group, Meter, Quiet, RunConfig, Step, StopHandle,
};
use sojourn_core::op::OpKind;
use sojourn_core::schedule::Arrival;

/// Reads or updates the one record.
struct OneKind(OpKind);

impl<C: Connection> Step<C> for OneKind {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let t = m.start();
        let s = match self.0 {
            OpKind::Read => conn.read("user1", Fields::All, &mut Vec::new()).await,
            _ => {
                let v = [FieldValue {
                    field: 0,
                    value: b"y".to_vec(),
                }];
                conn.update("user1", &v).await
            }
        };
        m.record(self.0, s, t);
    }
}

#[test]
fn a_writer_waiting_for_the_lock_does_not_hold_back_a_reader_on_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let backend = SqliteBackend::new(&path);
    let schema = Arc::new(Schema::ycsb("usertable", "field", 1));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        backend.prepare(&schema, false).await.unwrap();
        let mut c = backend.connect(schema.clone()).await.unwrap();
        let v = [FieldValue {
            field: 0,
            value: b"x".to_vec(),
        }];
        assert_eq!(c.insert("user1", &v).await, Status::Ok);
    });
    // Another process's writer holds SQLite's write lock for a second
    // (readers go on, in WAL mode); the hold is the fault, not a wait for
    // anything.
    let lock = rusqlite::Connection::open(&path).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let holder = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        lock.execute_batch("COMMIT").unwrap();
    });
    // One writer at 20/s and one reader at 1,000/s for a second and a
    // half, both paced by the one runtime thread.
    let cfg = RunConfig {
        groups: vec![
            Group {
                workers: 1,
                target: Some(sojourn_core::rate::Target::constant(20.0)),
                operation_count: Some(30),
            },
            Group {
                workers: 1,
                target: Some(sojourn_core::rate::Target::constant(1_000.0)),
                operation_count: Some(1_500),
            },
        ],
        arrival: Arrival::Uniform,
        seed: 3,
        runtime_threads: 1,
        ..RunConfig::default()
    };
    let connector = BackendConnector {
        backend: &backend,
        schema,
    };
    let steps = vec![OneKind(OpKind::Update), OneKind(OpKind::Read)];
    let o = executor::with_pool(&connector, &cfg, |pool| {
        pool.run(steps, &cfg, &StopHandle::new(), &Quiet)
    })
    .unwrap()
    .unwrap();
    holder.join().unwrap();
    let update = o.total.op(OpKind::Update).unwrap();
    let read = o.total.op(OpKind::Read).unwrap();
    assert_eq!(update.count_of(Status::Ok), 30);
    assert_eq!(read.count_of(Status::Ok), 1_500);
    // The fault happened: the first update waited most of the second.
    let ms = |ns: u64| ns as f64 / 1e6;
    assert!(
        ms(update.ok.service.max()) >= 700.0,
        "update service max {} ms",
        ms(update.ok.service.max())
    );
    // The reader kept its schedule meanwhile: had it waited behind the
    // writer's statement, a fifth of its reads would have waited up to a
    // second.
    let p99 = ms(read.ok.response.value_at_quantile(0.99));
    assert!(p99 < 100.0, "read response p99 {p99} ms");
}
