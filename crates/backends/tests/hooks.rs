//! The `null:` backend, and the `memory:` backend's stall and rate hooks.
//!
//! Timing assertions check the deterministic lower bound tightly and the
//! upper bound generously, so a loaded machine cannot fail them.

use sojourn_testkit as util;

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use sojourn_backends::{MemoryBackend, MemoryOptions, NullBackend};
use sojourn_core::backend::{Backend, Connection, Fields, Status};

use util::{fv, schema};

#[tokio::test]
async fn null_answers_ok_and_fills_nothing() {
    let backend = NullBackend;
    let schema = schema();
    assert_eq!(backend.describe(), "null:");
    backend.prepare(&schema, true).await.expect("prepare");
    assert_eq!(backend.is_empty(&schema).await.expect("is_empty"), None);
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    let mut fields = Vec::new();
    let mut rows = Vec::new();
    assert_eq!(conn.read("k", Fields::All, &mut fields).await, Status::Ok);
    assert_eq!(
        conn.read("k", Fields::Some(&[1]), &mut fields).await,
        Status::Ok
    );
    assert_eq!(conn.scan("k", 10, Fields::All, &mut rows).await, Status::Ok);
    assert!(fields.is_empty());
    assert!(rows.is_empty());
    assert_eq!(conn.insert("k", &[fv(0, b"v")]).await, Status::Ok);
    assert_eq!(conn.update("k", &[fv(0, b"v")]).await, Status::Ok);
    assert_eq!(conn.delete("k").await, Status::Ok);
    assert_eq!(conn.read("k", Fields::All, &mut fields).await, Status::Ok);
    assert!(fields.is_empty());
}

const STALL: Duration = Duration::from_millis(300);
/// Far below the stall, far above an unhindered in-memory operation.
const FAST: Duration = Duration::from_millis(200);
/// Generous: a stalled operation ends at the end of the freeze plus timer
/// granularity and scheduling delay.
const SLACK: Duration = Duration::from_secs(2);

async fn timed<F: Future<Output = Status>>(op: F) -> (Status, Duration) {
    let start = Instant::now();
    let status = op.await;
    (status, start.elapsed())
}

#[tokio::test]
async fn stall_freezes_every_connection_once() {
    const N: u64 = 5;
    let backend = MemoryBackend::with_options(MemoryOptions {
        stall_after_ops: Some(N),
        stall: STALL,
        max_ops_per_sec: None,
    })
    .expect("options");
    let schema = schema();
    backend.prepare(&schema, true).await.expect("prepare");
    let mut a = backend.connect(Arc::clone(&schema)).await.expect("connect");
    let mut b = backend.connect(Arc::clone(&schema)).await.expect("connect");
    let mut c = backend.connect(Arc::clone(&schema)).await.expect("connect");

    for i in 0..N {
        let key = format!("user{i}");
        let (status, took) = timed(a.insert(&key, &[fv(0, b"v")])).await;
        assert_eq!(status, Status::Ok);
        assert!(
            took < FAST,
            "operation {} before the stall took {took:?}",
            i + 1
        );
    }

    // Operation N+1, on another connection, starts the freeze; start it
    // (one poll) so that c's read provably begins during the freeze.
    let values = [fv(0, b"v")];
    let start = Instant::now();
    let mut first = pin!(b.insert("user-b", &values));
    let polled = poll_fn(|cx| Poll::Ready(first.as_mut().poll(cx))).await;
    assert!(
        polled.is_pending(),
        "operation N+1 completed without stalling"
    );
    let mut out = Vec::new();
    let ((status_b, took_b), (status_c, took_c)) =
        tokio::join!(async { (first.await, start.elapsed()) }, async {
            (
                c.read("user0", Fields::All, &mut out).await,
                start.elapsed(),
            )
        },);
    assert_eq!((status_b, status_c), (Status::Ok, Status::Ok));
    assert_eq!(out, vec![fv(0, b"v")]);
    for (who, took) in [
        ("operation N+1", took_b),
        ("a read during the freeze", took_c),
    ] {
        assert!(took >= STALL, "{who} took only {took:?}");
        assert!(took < STALL + SLACK, "{who} took {took:?}");
    }

    // It happens once.
    for i in 0..20 {
        let (status, took) = timed(a.update("user0", &[fv(1, b"w")])).await;
        assert_eq!(status, Status::Ok);
        assert!(took < FAST, "operation {i} after the stall took {took:?}");
    }
}

#[tokio::test]
async fn stall_at_zero_freezes_the_first_operation() {
    let backend = MemoryBackend::from_query("stall_at=0&stall_ms=300").expect("options");
    let mut conn = backend.connect(schema()).await.expect("connect");
    let (status, took) = timed(conn.delete("absent")).await;
    assert_eq!(status, Status::NotFound);
    assert!(took >= STALL && took < STALL + SLACK, "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_is_one_server_for_all_connections() {
    const K: f64 = 1000.0;
    const CONNECTIONS: usize = 4;
    const OPS: usize = 200;
    let backend = MemoryBackend::with_options(MemoryOptions {
        max_ops_per_sec: Some(K),
        ..MemoryOptions::default()
    })
    .expect("options");
    let schema = schema();
    let mut conns = Vec::new();
    for _ in 0..CONNECTIONS {
        conns.push(backend.connect(Arc::clone(&schema)).await.expect("connect"));
    }
    let start = Instant::now();
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(c, mut conn)| {
            tokio::spawn(async move {
                for i in 0..OPS / CONNECTIONS {
                    let key = format!("c{c}-{i}");
                    assert_eq!(conn.insert(&key, &[fv(0, b"v")]).await, Status::Ok);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    let took = start.elapsed();
    // 200 operations through one server at 1000/s end 0.2 s after the
    // first began; a limit per connection would take a quarter of that.
    assert!(
        took >= Duration::from_millis(190),
        "{OPS} operations took {took:?}"
    );
    assert!(
        took < Duration::from_millis(200) + SLACK,
        "{OPS} operations took {took:?}"
    );
}

#[tokio::test]
async fn hooks_show_in_describe() {
    let backend = MemoryBackend::from_query("stall_at=5000&stall_ms=200").expect("options");
    assert_eq!(backend.describe(), "memory:?stall_at=5000&stall_ms=200");
    assert_eq!(backend.options().stall_after_ops, Some(5000));
}
