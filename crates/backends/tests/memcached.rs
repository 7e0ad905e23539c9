//! The memcached backend against a real `memcached`: the conformance suite
//! (scans NOT_IMPLEMENTED) in both topologies, with YCSB's updates and the
//! checked ones, YCSB's server work per update, the item layout, partial
//! updates by compare-and-swap, and a server killed and restarted.
#![cfg(feature = "memcached")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use sojourn_backends::memcached::MemcachedBackend;
use sojourn_backends::{Open, OpenOptions};
use sojourn_core::backend::{Backend, Connection, Fields, Status, Threading};
use sojourn_core::properties::Properties;
use sojourn_testkit::memcached_server::MemcachedServer;
use sojourn_testkit::{conformance_as, fv, read, record, schema, ScanOrder, Writes};

fn props(pairs: &[&str]) -> Properties {
    let mut p = Properties::new();
    for kv in pairs {
        p.set_arg(kv).unwrap();
    }
    p
}

/// The backend of `url` (or `memcached` for YCSB's properties), for a run
/// of `workers` connections.
fn open(url: &str, pairs: &[&str], workers: usize) -> MemcachedBackend {
    let props = props(pairs);
    MemcachedBackend::open(
        url,
        &OpenOptions {
            workers,
            ..OpenOptions::new(&props)
        },
    )
    .expect("open")
}

fn backend(server: &MemcachedServer, pairs: &[&str]) -> MemcachedBackend {
    open(&server.url(), pairs, 1)
}

#[tokio::test]
async fn conformance() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    conformance_as(
        &backend(&server, &[]),
        ScanOrder::NotImplemented,
        Writes::Replace,
    )
    .await;
    let checked = backend(&server, &["memcached.checked=true"]);
    assert!(checked.describe().ends_with("(memcached.checked=true)"));
    conformance_as(&checked, ScanOrder::NotImplemented, Writes::Checked).await;
}

/// memcached's own counters of a server (`stats`).
async fn stats(server: &MemcachedServer) -> std::collections::HashMap<String, u64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    s.write_all(b"stats\r\n").await.unwrap();
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    while !text.ends_with(b"END\r\n") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "stats ended early");
        text.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("STAT ")?.split(' ');
            Some((w.next()?.to_string(), w.next()?.trim().parse().ok()?))
        })
        .collect()
}

/// An update costs the server what YCSB's binding costs it, one `replace`
/// and nothing else; the checked variant reads first (`gets`, then `cas`).
#[tokio::test]
async fn an_update_is_one_replace_as_under_ycsb() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let schema = schema();
    for (pairs, gets, sets) in [(&[][..], 0, 50), (&["memcached.checked=true"][..], 50, 50)] {
        let b = backend(&server, pairs);
        b.prepare(&schema, true).await.unwrap();
        let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
        assert_eq!(c.insert("k", &record("k")).await, Status::Ok);
        let before = stats(&server).await;
        for i in 0..50 {
            let v = format!("v{i}");
            assert_eq!(c.update("k", &[fv(1, v.as_bytes())]).await, Status::Ok);
        }
        let after = stats(&server).await;
        let delta = |k: &str| after[k] - before[k];
        assert_eq!(
            (delta("cmd_get"), delta("cmd_set")),
            (gets, sets),
            "{pairs:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_multiplexed() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let b = open(&server.url(), &["connections=2"], 8);
    assert!(b.describe().ends_with("(8 in flight over 2 connections)"));
    assert_eq!(b.threading(), Threading::Sockets(2));
    conformance_as(&b, ScanOrder::NotImplemented, Writes::Replace).await;
}

#[tokio::test]
async fn ycsb_property_and_partial_updates() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let b = open(
        "memcached",
        &[
            &format!("memcached.hosts=127.0.0.1:{}", server.port()),
            "memcached.checked=true",
        ],
        1,
    );
    assert_eq!(
        b.describe(),
        format!("{} (memcached.checked=true)", server.url())
    );
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut c1 = b.connect(Arc::clone(&schema)).await.unwrap();
    let mut c2 = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c1.insert("k", &record("k")).await, Status::Ok);
    // Concurrent updates of different fields both survive (gets/cas).
    let (a, b2) = tokio::join!(
        async {
            for i in 0..200 {
                assert_eq!(
                    c1.update("k", &[fv(1, format!("a{i}").as_bytes())]).await,
                    Status::Ok
                );
            }
        },
        async {
            for i in 0..200 {
                assert_eq!(
                    c2.update("k", &[fv(2, format!("b{i}").as_bytes())]).await,
                    Status::Ok
                );
            }
        }
    );
    let ((), ()) = (a, b2);
    assert_eq!(
        read(&mut c1, "k", Fields::All).await,
        (
            Status::Ok,
            vec![
                fv(0, b"k/f0"),
                fv(1, b"a199"),
                fv(2, b"b199"),
                fv(3, b"k/f3")
            ]
        )
    );
    // Updating every field is a plain replace; duplicates: the last wins.
    let all = [
        fv(3, b"3"),
        fv(0, b"0"),
        fv(1, b"x"),
        fv(2, b"2"),
        fv(1, b"1"),
    ];
    assert_eq!(c1.update("k", &all).await, Status::Ok);
    assert_eq!(
        read(&mut c1, "k", Fields::All).await,
        (
            Status::Ok,
            vec![fv(0, b"0"), fv(1, b"1"), fv(2, b"2"), fv(3, b"3")]
        )
    );
    assert_eq!(c1.update("absent", &all).await, Status::NotFound);
    // Keys beyond memcached's limit are refused, not truncated.
    let long = "x".repeat(300);
    assert_eq!(c1.insert(&long, &record("x")).await, Status::BadRequest);
    assert_eq!(
        read(&mut c1, &long, Fields::All).await.0,
        Status::BadRequest
    );
}

#[tokio::test]
async fn kill_and_restart() {
    let Some(mut server) = MemcachedServer::start() else {
        return;
    };
    let b = backend(&server, &["timeout.ms=500"]);
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c.insert("a", &record("a")).await, Status::Ok);
    server.server.kill();
    for _ in 0..3 {
        assert_eq!(read(&mut c, "a", Fields::All).await.0, Status::Error);
    }
    server.restart();
    let t = Instant::now();
    loop {
        match read(&mut c, "a", Fields::All).await.0 {
            Status::NotFound => break,
            Status::Error => {}
            other => panic!("{other:?}"),
        }
        assert!(t.elapsed() < Duration::from_secs(10), "never reconnected");
    }
    assert_eq!(c.insert("a", &record("a")).await, Status::Ok);
    assert_eq!(
        read(&mut c, "a", Fields::All).await,
        (Status::Ok, record("a"))
    );
}

#[tokio::test]
async fn stopped_server_times_out_then_recovers() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let b = backend(&server, &["timeout.ms=200"]);
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c.insert("a", &record("a")).await, Status::Ok);
    server.server.pause();
    let t = Instant::now();
    assert_eq!(read(&mut c, "a", Fields::All).await.0, Status::Error);
    assert!(
        t.elapsed() >= Duration::from_millis(190),
        "{:?}",
        t.elapsed()
    );
    server.server.resume();
    let t = Instant::now();
    loop {
        let (status, fields) = read(&mut c, "a", Fields::All).await;
        if status == Status::Ok {
            assert_eq!(fields, record("a"));
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "never recovered");
    }
}
