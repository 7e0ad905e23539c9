//! The Redis backend against a real `redis-server`: the conformance suite
//! (hash layout, both topologies, on current-thread and multi-thread
//! runtimes), YCSB's data layout, the string layout, authentication, and
//! what happens when the server stalls, forgets its scripts or restarts.
#![cfg(feature = "redis")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use sojourn_backends::redis::{
    java_hash, RedisBackend, INSERT_SCRIPT, INSERT_SHA, UPDATE_SCRIPT, UPDATE_SHA,
};
use sojourn_backends::{Open, OpenError, OpenOptions};
use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status, Threading};
use sojourn_core::properties::Properties;
use sojourn_testkit::redis_server::RedisServer;
use sojourn_testkit::{conformance_as, fv, read, record, scan, schema, ScanOrder, Writes};

fn props(pairs: &[&str]) -> Properties {
    let mut p = Properties::new();
    for kv in pairs {
        p.set_arg(kv).unwrap();
    }
    p
}

/// The backend of `url` (or `redis` for YCSB's properties), for a run of
/// `workers` connections.
fn open(url: &str, props: &Properties, workers: usize) -> Result<RedisBackend, OpenError> {
    RedisBackend::open(
        url,
        &OpenOptions {
            workers,
            ..OpenOptions::new(props)
        },
    )
}

fn backend(server: &RedisServer, pairs: &[&str], workers: usize) -> RedisBackend {
    open(&server.url(), &props(pairs), workers).expect("open")
}

fn score(key: &str) -> f64 {
    f64::from(java_hash(key))
}

#[tokio::test]
async fn conformance_hash_layout() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    // YCSB's writes by default; records kept whole with redis.checked.
    conformance_as(
        &backend(&server, &[], 1),
        ScanOrder::Score(score),
        Writes::Upsert,
    )
    .await;
    let checked = backend(&server, &["redis.checked=true"], 1);
    assert!(checked.describe().ends_with("(redis.checked=true)"));
    conformance_as(&checked, ScanOrder::Score(score), Writes::Checked).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_multiplexed_multi_thread() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let b = backend(&server, &["connections=2"], 8);
    assert!(b.describe().ends_with("(8 in flight over 2 connections)"));
    conformance_as(&b, ScanOrder::Score(score), Writes::Upsert).await;
}

#[tokio::test]
async fn conformance_multiplexed_current_thread() {
    let Some(server) = RedisServer::start(Some("s3cret pass")) else {
        return;
    };
    let b = backend(&server, &["connections=3"], 8);
    conformance_as(&b, ScanOrder::Score(score), Writes::Upsert).await;
}

#[tokio::test]
async fn multiplexed_connections_share_sockets() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let b = backend(&server, &["connections=2"], 16);
    // The backend reports its sockets; the executor sizes threads by them.
    assert_eq!(b.threading(), Threading::Sockets(2));
    assert_eq!(backend(&server, &[], 16).threading(), Threading::Remote);
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut conns = Vec::new();
    for _ in 0..16 {
        conns.push(b.connect(Arc::clone(&schema)).await.unwrap());
    }
    // Two sockets, plus the one asking.
    assert_eq!(client_count(&server), 3);
    // 16 operations in flight at once, each getting its own reply.
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            tokio::spawn(async move {
                for j in 0..50 {
                    let key = format!("k{i}-{j}");
                    assert_eq!(c.insert(&key, &record(&key)).await, Status::Ok);
                    assert_eq!(
                        read(&mut c, &key, Fields::All).await,
                        (Status::Ok, record(&key))
                    );
                }
                c
            })
        })
        .collect();
    let mut conns = Vec::new();
    for t in tasks {
        conns.push(t.await.unwrap());
    }
    assert_eq!(server.command(&["DBSIZE"]), ":801");
    drop(conns);
}

/// Clients connected now, from `CLIENT LIST` (which counts its own).
fn client_count(server: &RedisServer) -> usize {
    let info = server.command(&["CLIENT", "LIST"]);
    info.lines().filter(|l| l.contains("addr=")).count()
}

#[tokio::test]
async fn hash_layout_is_ycsbs() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let b = backend(&server, &[], 1);
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    let key = "user6284781860667377211";
    assert_eq!(c.insert(key, &record(key)).await, Status::Ok);
    // One hash per record, no table prefix, fields by name.
    assert_eq!(server.command(&["TYPE", key]), "+hash");
    assert_eq!(
        server.command(&["HGET", key, "field2"]),
        format!("{key}/f2")
    );
    // Indexed by Java's String.hashCode(), as YCSB's binding does.
    assert_eq!(
        server.command(&["ZSCORE", "_indices", key]),
        java_hash(key).to_string()
    );
    assert_eq!(java_hash(key), -594_971_599);
    // A record written by YCSB (HMSET + ZADD) reads back and scans.
    server.command(&["HSET", "user1", "field0", "a", "field3", "d"]);
    server.command(&["ZADD", "_indices", &java_hash("user1").to_string(), "user1"]);
    assert_eq!(
        read(&mut c, "user1", Fields::All).await,
        (Status::Ok, vec![fv(0, b"a"), fv(3, b"d")])
    );
    let (status, rows) = scan(&mut c, "user1", 1, Fields::All).await;
    assert_eq!(status, Status::Ok);
    assert_eq!(rows[0].key, "user1");
    // An update of a missing record creates it, as YCSB's HMSET does.
    assert_eq!(c.update("fresh", &[fv(2, b"z")]).await, Status::Ok);
    assert_eq!(server.command(&["HGET", "fresh", "field2"]), "z");
    assert_eq!(c.delete("fresh").await, Status::Ok);
    // redis.checked runs scripts, whose digests are what the server
    // computes.
    let checked = backend(&server, &["redis.checked=true"], 1);
    let mut c = checked.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c.update("fresh", &[fv(2, b"z")]).await, Status::NotFound);
    assert_eq!(server.command(&["EXISTS", "fresh"]), ":0");
    assert_eq!(
        server.command(&["SCRIPT", "LOAD", UPDATE_SCRIPT]),
        UPDATE_SHA
    );
    assert_eq!(
        server.command(&["SCRIPT", "LOAD", INSERT_SCRIPT]),
        INSERT_SHA
    );
    // A server that lost the scripts still runs them.
    assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
    assert_eq!(c.update("user1", &[fv(1, b"b")]).await, Status::Ok);
    assert_eq!(server.command(&["HGET", "user1", "field1"]), "b");
    assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
    assert_eq!(c.insert("user2", &[fv(1, b"x")]).await, Status::Ok);
    assert_eq!(server.command(&["HGET", "user2", "field1"]), "x");
}

#[tokio::test]
async fn string_layout() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let b = backend(&server, &["redis.mode=string"], 1);
    assert!(b.describe().contains("redis.mode=string"));
    // One value per key: more fields are refused, not dropped.
    match b.prepare(&schema(), true).await {
        Err(BackendError::Config(m)) => assert!(m.contains("fieldcount=1"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(b.connect(schema()).await.is_err());
    let one = Arc::new(Schema::ycsb("usertable", "field", 1));
    b.prepare(&one, true).await.unwrap();
    assert_eq!(b.is_empty(&one).await.unwrap(), Some(true));
    let mut c = b.connect(Arc::clone(&one)).await.unwrap();
    assert_eq!(
        read(&mut c, "k", Fields::All).await,
        (Status::NotFound, vec![])
    );
    // SET creates a missing record, as the string-mode YCSB builds do;
    // redis.checked updates only records that exist (SET ... XX).
    assert_eq!(c.update("k", &[fv(0, b"x")]).await, Status::Ok);
    assert_eq!(server.command(&["GET", "k"]), "x");
    assert_eq!(c.delete("k").await, Status::Ok);
    let checked = backend(&server, &["redis.mode=string", "redis.checked=true"], 1);
    let mut cc = checked.connect(Arc::clone(&one)).await.unwrap();
    assert_eq!(cc.update("k", &[fv(0, b"x")]).await, Status::NotFound);
    assert_eq!(c.update("k", &[]).await, Status::NotFound);
    assert_eq!(c.delete("k").await, Status::NotFound);
    assert_eq!(server.command(&["EXISTS", "k"]), ":0");
    let value = [0u8, 0xff, b'\r', b'\n', b'v'];
    assert_eq!(c.insert("k", &[fv(0, &value)]).await, Status::Ok);
    assert_eq!(server.command(&["TYPE", "k"]), "+string");
    assert_eq!(
        read(&mut c, "k", Fields::All).await,
        (Status::Ok, vec![fv(0, &value)])
    );
    assert_eq!(
        read(&mut c, "k", Fields::Some(&[0])).await,
        (Status::Ok, vec![fv(0, &value)])
    );
    assert_eq!(
        read(&mut c, "k", Fields::Some(&[])).await,
        (Status::Ok, vec![])
    );
    assert_eq!(c.update("k", &[fv(0, b"new")]).await, Status::Ok);
    assert_eq!(server.command(&["GET", "k"]), "new");
    assert_eq!(c.update("k", &[]).await, Status::Ok);
    assert_eq!(c.insert("k", &[fv(1, b"x")]).await, Status::BadRequest);
    assert_eq!(c.insert("k2", &[]).await, Status::BadRequest);
    assert_eq!(
        scan(&mut c, "k", 10, Fields::All).await,
        (Status::NotImplemented, vec![])
    );
    assert_eq!(b.is_empty(&one).await.unwrap(), Some(false));
    assert_eq!(c.delete("k").await, Status::Ok);
    assert_eq!(
        read(&mut c, "k", Fields::All).await,
        (Status::NotFound, vec![])
    );
}

#[tokio::test]
async fn authentication() {
    let Some(server) = RedisServer::start(Some("p@ss:word")) else {
        return;
    };
    let schema = schema();
    // Password in the URL (percent-encoded), or as YCSB's property.
    let port = server.port();
    let url = format!("redis://:p%40ss%3Aword@127.0.0.1:{port}/2");
    let b = open(&url, &props(&[]), 1).unwrap();
    assert_eq!(b.describe(), format!("redis://127.0.0.1:{port}/2"));
    b.prepare(&schema, true).await.unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c.insert("a", &record("a")).await, Status::Ok);
    // Database 2, not 0.
    assert_eq!(server.command(&["DBSIZE"]), ":0");
    let b = open(
        "redis",
        &props(&[
            "redis.host=127.0.0.1",
            &format!("redis.port={port}"),
            "redis.password=p@ss:word",
        ]),
        1,
    )
    .unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c.insert("b", &record("b")).await, Status::Ok);
    assert_eq!(server.command(&["DBSIZE"]), ":2");
    // A wrong password fails at connect, without showing any password.
    let b = open(
        &format!("redis://:wrong-pw@127.0.0.1:{port}"),
        &props(&[]),
        1,
    )
    .unwrap();
    let e = b.connect(Arc::clone(&schema)).await.err().expect("refused");
    let message = e.to_string();
    assert!(
        message.contains("WRONGPASS") || message.contains("invalid"),
        "{message}"
    );
    assert!(
        !message.contains("wrong-pw") && !message.contains("p@ss"),
        "{message}"
    );
    assert!(!format!("{b:?}").contains("wrong-pw"));
    let e = b.is_empty(&schema).await.expect_err("refused").to_string();
    assert!(!e.contains("wrong-pw"), "{e}");
    // No password for a server that wants one: refused at connect too.
    let b = open(&format!("redis://127.0.0.1:{port}"), &props(&[]), 1).unwrap();
    let Err(e) = b.connect(Arc::clone(&schema)).await else {
        panic!("connected without a password");
    };
    assert!(e.to_string().contains("NOAUTH"), "{e}");
}

/// A server paused longer than the timeout: operations fail with ERROR
/// after the timeout, not before and not much later, and once it resumes
/// the same connections work again (late replies are discarded, not taken
/// for the answers to later requests).
async fn stall_and_recover(pairs: &[&str], workers: usize) {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let mut all = vec!["timeout.ms=300"];
    all.extend_from_slice(pairs);
    let b = backend(&server, &all, workers);
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    for k in ["a", "b"] {
        assert_eq!(c.insert(k, &record(k)).await, Status::Ok);
    }
    assert_eq!(server.command(&["CLIENT", "PAUSE", "1200"]), "+OK");
    for _ in 0..2 {
        let t = Instant::now();
        assert_eq!(read(&mut c, "a", Fields::All).await.0, Status::Error);
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(290) && took < Duration::from_millis(1000),
            "{took:?}"
        );
    }
    assert!(
        c.last_error().unwrap().contains("no reply"),
        "{:?}",
        c.last_error()
    );
    // Once the pause is over, the next reads get their own replies.
    let t = Instant::now();
    loop {
        let (status, fields) = read(&mut c, "b", Fields::All).await;
        if status == Status::Ok {
            assert_eq!(fields, record("b"));
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "never recovered");
    }
    assert_eq!(
        read(&mut c, "a", Fields::All).await,
        (Status::Ok, record("a"))
    );
    assert_eq!(read(&mut c, "zz", Fields::All).await.0, Status::NotFound);
}

#[tokio::test]
async fn stall_dedicated() {
    stall_and_recover(&[], 1).await;
}

#[tokio::test]
async fn stall_multiplexed() {
    stall_and_recover(&["connections=1"], 4).await;
}

/// The server killed and restarted on the same port: operations fail with
/// ERROR (never a panic or a hang), then reconnect by themselves.
async fn kill_and_restart(pairs: &[&str], workers: usize) {
    let Some(mut server) = RedisServer::start(Some("pw")) else {
        return;
    };
    let mut all = vec!["timeout.ms=500"];
    all.extend_from_slice(pairs);
    let b = backend(&server, &all, workers);
    let schema = schema();
    b.prepare(&schema, true).await.unwrap();
    let mut c = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(c.insert("a", &record("a")).await, Status::Ok);
    server.server.kill();
    let t = Instant::now();
    for _ in 0..3 {
        assert_eq!(read(&mut c, "a", Fields::All).await.0, Status::Error);
    }
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    server.restart();
    let t = Instant::now();
    loop {
        // Nothing was persisted: the restarted server is empty.
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
async fn restart_dedicated() {
    kill_and_restart(&[], 1).await;
}

#[tokio::test]
async fn restart_multiplexed() {
    kill_and_restart(&["connections=2"], 4).await;
}

#[tokio::test]
async fn unreachable_server_is_a_connect_error() {
    let closed = sojourn_testkit::servers::closed_port();
    let b = open(
        &format!("redis://127.0.0.1:{}", closed.port()),
        &props(&[]),
        1,
    )
    .unwrap();
    assert!(matches!(
        b.connect(schema()).await,
        Err(BackendError::Connect { .. })
    ));
    assert!(b.is_empty(&schema()).await.is_err());
}

fn tls_props(server: &RedisServer, extra: &[&str]) -> Properties {
    let files = server.tls.as_ref().expect("a TLS server");
    let mut p = props(extra);
    p.set_arg(&format!("redis.tls.ca={}", files.ca.display()))
        .unwrap();
    p.set_arg(&format!("redis.tls.cert={}", files.client_cert.display()))
        .unwrap();
    p.set_arg(&format!("redis.tls.key={}", files.client_key.display()))
        .unwrap();
    p
}

#[tokio::test]
async fn tls_with_client_certificates() {
    let Some(server) = RedisServer::start_tls(true) else {
        return;
    };
    let url = server.url();
    assert!(url.starts_with("rediss://"));
    let b = open(&url, &tls_props(&server, &[]), 1).unwrap();
    assert_eq!(b.describe(), url);
    conformance_as(&b, ScanOrder::Score(score), Writes::Upsert).await;
    // Pipelined over TLS too.
    let b = open(&url, &tls_props(&server, &["connections=1"]), 4).unwrap();
    conformance_as(&b, ScanOrder::Score(score), Writes::Upsert).await;
    // The property form.
    let port = server.port();
    let b = open(
        "redis",
        &tls_props(
            &server,
            &[
                "redis.host=127.0.0.1",
                &format!("redis.port={port}"),
                "redis.tls=true",
            ],
        ),
        1,
    )
    .unwrap();
    let mut c = b.connect(schema()).await.unwrap();
    assert_eq!(c.insert("t", &record("t")).await, Status::Ok);
    assert_eq!(
        read(&mut c, "t", Fields::All).await,
        (Status::Ok, record("t"))
    );
}

#[tokio::test]
async fn tls_refusals() {
    let Some(server) = RedisServer::start_tls(true) else {
        return;
    };
    let files = server.tls.clone().unwrap();
    let url = server.url();
    let refused = |pairs: Vec<String>| {
        let url = url.clone();
        async move {
            let pairs: Vec<&str> = pairs.iter().map(String::as_str).collect();
            let b = open(&url, &props(&pairs), 1).unwrap();
            match b.connect(schema()).await {
                Ok(_) => panic!("connected with {pairs:?}"),
                Err(e) => e.to_string(),
            }
        }
    };
    // A server certificate nobody we trust signed.
    let e = refused(vec![]).await;
    assert!(
        e.contains("certificate") || e.contains("Certificate"),
        "{e}"
    );
    // No client certificate for a server that demands one.
    let e = refused(vec![format!("redis.tls.ca={}", files.ca.display())]).await;
    assert!(
        e.contains("CertificateRequired") || e.contains("closed"),
        "{e}"
    );
    // Encryption without verification still needs the client certificate,
    // and works with it.
    let b = open(
        &url,
        &props(&[
            "redis.tls.insecure=true",
            &format!("redis.tls.cert={}", files.client_cert.display()),
            &format!("redis.tls.key={}", files.client_key.display()),
        ]),
        1,
    )
    .unwrap();
    let mut c = b.connect(schema()).await.unwrap();
    assert_eq!(read(&mut c, "nope", Fields::All).await.0, Status::NotFound);
    // TLS settings without TLS are a mistake, and so is a missing key.
    assert!(open(
        &url.replace("rediss", "redis"),
        &props(&["redis.tls.insecure=true"]),
        1
    )
    .is_err());
    let cert = format!("redis.tls.cert={}", files.client_cert.display());
    assert!(open(&url, &props(&[&cert]), 1).is_err());
    let e = open(&url, &props(&["redis.tls.ca=/nonexistent.pem"]), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent.pem"), "{e}");
}
