//! The PostgreSQL backend against a real server started for each test:
//! the conformance suite (through the URL and through YCSB's JDBC
//! properties, on multi-thread and current-thread runtimes), the table it
//! creates, authentication, TLS, timeouts and reconnection.
#![cfg(feature = "postgres")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sojourn_backends::{open, AnyBackend, Open, OpenOptions, PostgresBackend};
use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status, Threading};
use sojourn_core::properties::{Origin, Properties};
use sojourn_testkit::postgres_server::{Postgres, PASSWORD, USER};
use sojourn_testkit::{self as util, fv};

fn props(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.set(k, v, Origin::CommandLine);
    }
    p
}

/// The backend of `url` and `pairs`, for a run of `workers` connections.
fn backend_for(url: &str, pairs: &[(&str, &str)], workers: usize) -> PostgresBackend {
    let props = props(pairs);
    PostgresBackend::open(
        url,
        &OpenOptions {
            workers,
            ..OpenOptions::new(&props)
        },
    )
    .expect("open")
}

fn backend(url: &str, pairs: &[(&str, &str)]) -> PostgresBackend {
    backend_for(url, pairs, 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_through_jdbc_properties() {
    let Some(pg) = Postgres::start() else { return };
    let jdbc = format!("jdbc:postgresql://127.0.0.1:{}/postgres", pg.port());
    let p = props(&[
        ("db.url", &jdbc),
        ("db.user", USER),
        ("db.passwd", PASSWORD),
    ]);
    let any = open(
        "jdbc",
        &OpenOptions {
            default_sqlite: Path::new("unused"),
            ..OpenOptions::new(&p)
        },
    )
    .expect("open");
    assert!(matches!(any, AnyBackend::Postgres(_)));
    assert_eq!(any.describe(), jdbc);
    any.visit_async(util::Conform).await;
}

/// The executor connects on each worker thread's own current-thread
/// runtime: the connection's driver task must live there.
#[tokio::test]
async fn conforms_on_a_current_thread_runtime() {
    let Some(pg) = Postgres::start() else { return };
    util::conformance(&backend(&pg.url(), &[])).await;
}

#[tokio::test]
async fn table_follows_ycsb_jdbc_layout_and_is_shared_with_plain_sql() {
    let Some(pg) = Postgres::start() else { return };
    let b = backend(&pg.url(), &[]);
    let schema = Arc::new(Schema::ycsb("usertable", "attr", 3));
    b.prepare(&schema, true).await.expect("prepare");
    assert_eq!(
        pg.psql(
            "SELECT column_name, data_type FROM information_schema.columns \
             WHERE table_name = 'usertable' ORDER BY ordinal_position"
        ),
        "ycsb_key|character varying\nfield0|text\nfield1|text\nfield2|text\n"
    );
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    let values = [fv(0, b"zero"), fv(2, &[0xff, 0x00])];
    assert_eq!(conn.insert("user7", &values).await, Status::Ok);
    // Plain values are stored as they are; others escaped as documented.
    assert_eq!(
        pg.psql("SELECT FIELD0, FIELD1 IS NULL, FIELD2 = E'\\x01ff00' FROM usertable"),
        "zero|t|t\n"
    );
    pg.psql("UPDATE usertable SET FIELD1 = 'from psql' WHERE YCSB_KEY = 'user7'");
    assert_eq!(
        util::read(&mut conn, "user7", Fields::Some(&[1])).await,
        (Status::Ok, vec![fv(1, b"from psql")])
    );

    // A table with fewer fields than the workload is refused up front.
    let wider = Schema::ycsb("usertable", "field", 5);
    let err = b.prepare(&wider, false).await.expect_err("too few fields");
    assert!(err.to_string().contains("FIELD3, FIELD4"), "{err}");
    b.prepare(&wider, true).await.expect("drop and recreate");
    assert_eq!(b.is_empty(&wider).await.expect("is_empty"), Some(true));

    // A table that does not exist is empty; an unusable name is refused.
    let absent = Schema::ycsb("nosuchtable", "field", 1);
    assert_eq!(b.is_empty(&absent).await.expect("is_empty"), Some(true));
    let bad = Schema::ycsb("user table", "field", 1);
    let err = b
        .prepare(&bad, false)
        .await
        .expect_err("a name with a space");
    assert!(
        err.to_string()
            .contains("table name `user table` is not a plain SQL identifier"),
        "{err}"
    );
}

#[tokio::test]
async fn wrong_password_is_a_connect_error_that_does_not_show_it() {
    let Some(pg) = Postgres::start() else { return };
    let url = format!(
        "postgres://{USER}:not-the-password@127.0.0.1:{}/postgres",
        pg.port()
    );
    let b = backend(&url, &[]);
    let err = b
        .connect(util::schema())
        .await
        .err()
        .expect("bad password refused");
    let text = err.to_string();
    assert!(matches!(err, BackendError::Connect { .. }), "{text}");
    assert!(text.contains("password authentication failed"), "{text}");
    assert!(!text.contains("not-the-password"), "{text}");
    // The password may come from db.passwd instead of the URL.
    let b = backend(&pg.url_without_password(), &[("db.passwd", PASSWORD)]);
    b.connect(util::schema()).await.expect("db.passwd");
}

#[tokio::test]
async fn tls_modes() {
    let Some(pg) = Postgres::start_tls() else {
        return;
    };
    let base = pg.url();
    // The server takes TLS connections only.
    let plain = backend(&base, &[]);
    let err = plain
        .connect(util::schema())
        .await
        .err()
        .expect("no TLS refused");
    assert!(err.to_string().contains("no encryption"), "{err}");

    util::conformance(&backend(&format!("{base}?sslmode=require"), &[])).await;

    let ca = pg.ca_cert();
    let full = format!("{base}?sslmode=verify-full&sslrootcert={}", ca.display());
    backend(&full, &[])
        .connect(util::schema())
        .await
        .expect("verify-full with the CA");
    // The certificate names 127.0.0.1, not localhost: verify-full refuses
    // the name, verify-ca does not look at it.
    let by_name = |mode: &str| {
        format!(
            "postgres://{USER}:{PASSWORD}@localhost:{}/postgres?sslmode={mode}&sslrootcert={}",
            pg.port(),
            ca.display()
        )
    };
    let err = backend(&by_name("verify-full"), &[])
        .connect(util::schema())
        .await
        .err()
        .expect("wrong name refused");
    assert!(err.to_string().contains("certificate"), "{err}");
    backend(&by_name("verify-ca"), &[])
        .connect(util::schema())
        .await
        .expect("verify-ca ignores the name");
    // A CA that did not sign the server's certificate.
    let other = tempfile::tempdir().expect("tempdir");
    let other_ca = sojourn_testkit::postgres_server::tls_files(other.path()).ca;
    let url = format!(
        "{base}?sslmode=verify-ca&sslrootcert={}",
        other_ca.display()
    );
    let err = backend(&url, &[])
        .connect(util::schema())
        .await
        .err()
        .expect("a CA that did not sign the certificate refused");
    assert!(matches!(err, BackendError::Connect { .. }), "{err}");
    assert!(
        err.to_string().contains("invalid peer certificate"),
        "{err}"
    );
}

/// Reads until one succeeds, each bounded by the operation timeout; how
/// many attempts that took.
async fn read_until_ok<C: Connection>(conn: &mut C, key: &str) -> usize {
    for attempt in 1..=100 {
        if util::read(conn, key, Fields::All).await.0 == Status::Ok {
            return attempt;
        }
    }
    panic!("no successful read after 100 attempts");
}

#[tokio::test]
async fn a_stalled_server_times_out_and_the_connection_recovers() {
    let Some(pg) = Postgres::start() else { return };
    let b = backend(&pg.url(), &[("timeout.ms", "300")]);
    let schema = util::schema();
    b.prepare(&schema, true).await.expect("prepare");
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &util::record("k")).await, Status::Ok);

    pg.pause();
    let start = Instant::now();
    let status = util::read(&mut conn, "k", Fields::All).await;
    let took = start.elapsed();
    // Reconnecting while paused: the TCP handshake completes (the kernel
    // does it) but the server never answers.
    let again = conn.update("k", &[fv(0, b"x")]).await;
    pg.resume();
    assert_eq!(status, (Status::Error, vec![]));
    assert_eq!(again, Status::Error);
    assert!(
        took >= Duration::from_millis(290) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert!(conn.last_error().is_some_and(|e| e.contains("timed out")));
    read_until_ok(&mut conn, "k").await;
    assert_eq!(
        util::read(&mut conn, "k", Fields::Some(&[0])).await,
        (Status::Ok, vec![fv(0, b"k/f0")])
    );
}

#[tokio::test]
async fn a_restarted_server_is_reconnected_to_and_keeps_its_data() {
    let Some(mut pg) = Postgres::start() else {
        return;
    };
    let b = backend(&pg.url(), &[("timeout.ms", "1000")]);
    let schema = util::schema();
    b.prepare(&schema, true).await.expect("prepare");
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &util::record("k")).await, Status::Ok);

    pg.kill();
    let start = Instant::now();
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await.0,
        Status::Error
    );
    // Refused connections fail fast, not after the timeout.
    assert_eq!(conn.delete("k").await, Status::Error);
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    pg.restart();
    read_until_ok(&mut conn, "k").await;
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, util::record("k"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multiplexed_topology_conforms_and_shares_sockets() {
    let Some(pg) = Postgres::start() else { return };
    let mux = [("connections", "2")];
    util::conformance(&backend_for(&pg.url(), &mux, 8)).await;

    let url = format!("{}?application_name=mux", pg.url());
    let b = backend_for(&url, &mux, 8);
    assert!(b.describe().ends_with("(8 in flight over 2 connections)"));
    assert_eq!(b.threading(), Threading::Sockets(2));
    assert_eq!(backend_for(&url, &[], 8).threading(), Threading::Remote);
    let schema = util::schema();
    let mut conns = Vec::new();
    for _ in 0..8 {
        conns.push(b.connect(Arc::clone(&schema)).await.expect("connect"));
    }
    // All eight in flight at once, over two sockets.
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            tokio::spawn(async move {
                let key = format!("m{i}");
                assert_eq!(c.insert(&key, &util::record(&key)).await, Status::Ok);
                assert_eq!(
                    util::read(&mut c, &key, Fields::All).await,
                    (Status::Ok, util::record(&key))
                );
                c
            })
        })
        .collect();
    let mut conns = Vec::new();
    for t in tasks {
        conns.push(t.await.expect("task"));
    }
    let sockets = pg.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mux'");
    assert_eq!(sockets.trim(), "2");

    // A stall fails what is in flight on a shared socket; every user then
    // recovers on a new one.
    let b = backend_for(&url, &[("connections", "2"), ("timeout.ms", "300")], 4);
    let mut conns = Vec::new();
    for _ in 0..4 {
        conns.push(b.connect(Arc::clone(&schema)).await.expect("connect"));
    }
    pg.pause();
    let stalled = util::read(&mut conns[0], "m0", Fields::All).await.0;
    pg.resume();
    assert_eq!(stalled, Status::Error);
    for c in &mut conns {
        read_until_ok(c, "m1").await;
    }
}

/// The server processes of the benchmark's own connections.
fn client_pids(pg: &Postgres) -> String {
    pg.psql(
        "SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_activity \
         WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    )
}

/// YCSB's operations on a socket of its own (the lean client): a server
/// error, here the table dropped under its prepared statements, fails
/// that operation with the server's words and leaves the connection in
/// step; the next operations prepare again on the same connection.
#[tokio::test]
async fn a_server_error_fails_one_operation_and_keeps_the_connection() {
    let Some(pg) = Postgres::start() else { return };
    let b = backend(&pg.url(), &[]);
    let schema = util::schema();
    b.prepare(&schema, true).await.expect("prepare");
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &util::record("k")).await, Status::Ok);
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, util::record("k"))
    );
    let pids = client_pids(&pg);
    assert!(!pids.is_empty());

    pg.psql(&format!("DROP TABLE {}", schema.table));
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Error, vec![])
    );
    let error = conn.last_error().expect("an error").to_string();
    assert!(
        error.starts_with("ERROR: ") && error.ends_with("(SQLSTATE 42P01)"),
        "{error}"
    );

    b.prepare(&schema, true).await.expect("prepare again");
    assert_eq!(conn.insert("k", &util::record("k")).await, Status::Ok);
    assert_eq!(conn.update("k", &[fv(1, b"new")]).await, Status::Ok);
    assert_eq!(
        conn.update("absent", &[fv(1, b"new")]).await,
        Status::NotFound
    );
    let mut expected = util::record("k");
    expected[1] = fv(1, b"new");
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, expected)
    );
    assert_eq!(conn.delete("k").await, Status::Ok);
    assert_eq!(conn.delete("k").await, Status::NotFound);
    assert_eq!(client_pids(&pg), pids, "the connection was kept");
}
