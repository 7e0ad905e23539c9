//! The MySQL/MariaDB backend against a real MariaDB started for each test:
//! the conformance suite (through the URL and through YCSB's JDBC
//! properties, on multi-thread and current-thread runtimes), the table it
//! creates, authentication, TLS, timeouts and reconnection.
#![cfg(feature = "mysql")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sojourn_backends::{open, AnyBackend, MysqlBackend, Open, OpenOptions};
use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status};
use sojourn_core::properties::{Origin, Properties};
use sojourn_testkit::mariadb_server::{Mariadb, DATABASE, PASSWORD, USER};
use sojourn_testkit::{self as util, fv};

fn props(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.set(k, v, Origin::CommandLine);
    }
    p
}

fn backend(url: &str, pairs: &[(&str, &str)]) -> MysqlBackend {
    MysqlBackend::open(url, &OpenOptions::new(&props(pairs))).expect("open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_through_jdbc_properties() {
    let Some(db) = Mariadb::start() else { return };
    let jdbc = format!("jdbc:mysql://127.0.0.1:{}/{DATABASE}", db.port());
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
    assert!(matches!(any, AnyBackend::Mysql(_)));
    assert_eq!(any.describe(), jdbc);
    any.visit_async(util::Conform).await;
}

#[tokio::test]
async fn conforms_on_a_current_thread_runtime() {
    let Some(db) = Mariadb::start() else { return };
    util::conformance(&backend(&db.url(), &[])).await;
}

#[tokio::test]
async fn statements_the_cache_lets_go_are_closed_on_the_server() {
    let Some(db) = Mariadb::start() else { return };
    let b = backend(&db.url(), &[]);
    let schema = Arc::new(Schema::ycsb("usertable", "field", 10));
    b.prepare(&schema, true).await.expect("prepare");
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("user1", &[fv(3, b"three")]).await, Status::Ok);
    // Reads of 90 different field lists: more than a connection keeps
    // prepared (64), so it lets the first ones go.
    for a in 0..10 {
        for c in (0..10).filter(|&c| c != a) {
            let (status, values) = util::read(&mut conn, "user1", Fields::Some(&[a, c])).await;
            assert_eq!(status, Status::Ok);
            assert_eq!(values.len(), usize::from(a == 3 || c == 3), "{a} {c}");
        }
    }
    let prepared = |db: &Mariadb| -> u64 {
        let row = db.sql("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'");
        row.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    // The 64 it let go of were closed with the reads that followed: what
    // is left is the other 26 lists and the insert (91 without closing).
    assert_eq!(prepared(&db), 27);
    drop(conn);
}

#[tokio::test]
async fn table_follows_ycsb_jdbc_layout_and_is_shared_with_plain_sql() {
    let Some(db) = Mariadb::start() else { return };
    let b = backend(&db.url(), &[]);
    let schema = Arc::new(Schema::ycsb("usertable", "attr", 3));
    b.prepare(&schema, true).await.expect("prepare");
    assert_eq!(
        db.sql(
            "SELECT column_name, column_type FROM information_schema.columns \
             WHERE table_schema = DATABASE() AND table_name = 'usertable' \
             ORDER BY ordinal_position"
        ),
        "YCSB_KEY\tvarchar(255)\nFIELD0\ttext\nFIELD1\ttext\nFIELD2\ttext\n"
    );
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    let values = [fv(0, b"zero"), fv(2, &[0xff, 0x00])];
    assert_eq!(conn.insert("user7", &values).await, Status::Ok);
    assert_eq!(
        db.sql("SELECT FIELD0, FIELD1 IS NULL, FIELD2 = CONCAT(CHAR(1), 'ff00') FROM usertable"),
        "zero\t1\t1\n"
    );
    db.sql("UPDATE usertable SET FIELD1 = 'from sql' WHERE YCSB_KEY = 'user7'");
    assert_eq!(
        util::read(&mut conn, "user7", Fields::Some(&[1])).await,
        (Status::Ok, vec![fv(1, b"from sql")])
    );
    // Writing the value already there still finds the record.
    assert_eq!(
        conn.update("user7", &[fv(1, b"from sql")]).await,
        Status::Ok
    );
    // Keys compare byte by byte: case matters.
    assert_eq!(conn.insert("USER7", &[fv(0, b"upper")]).await, Status::Ok);
    assert_eq!(
        util::read(&mut conn, "user7", Fields::Some(&[0])).await,
        (Status::Ok, vec![fv(0, b"zero")])
    );

    let wider = Schema::ycsb("usertable", "field", 5);
    let err = b.prepare(&wider, false).await.expect_err("too few fields");
    assert!(err.to_string().contains("FIELD3, FIELD4"), "{err}");
    b.prepare(&wider, true).await.expect("drop and recreate");
    assert_eq!(b.is_empty(&wider).await.expect("is_empty"), Some(true));
    let absent = Schema::ycsb("nosuchtable", "field", 1);
    assert_eq!(b.is_empty(&absent).await.expect("is_empty"), Some(true));
}

#[tokio::test]
async fn wrong_password_is_a_connect_error_that_does_not_show_it() {
    let Some(db) = Mariadb::start() else { return };
    let url = format!(
        "mysql://{USER}:not-the-password@127.0.0.1:{}/{DATABASE}",
        db.port()
    );
    let err = backend(&url, &[])
        .connect(util::schema())
        .await
        .err()
        .expect("bad password refused");
    let text = err.to_string();
    assert!(matches!(err, BackendError::Connect { .. }), "{text}");
    assert!(text.contains("Access denied"), "{text}");
    assert!(!text.contains("not-the-password"), "{text}");
    let b = backend(&db.url_without_password(), &[("db.passwd", PASSWORD)]);
    b.connect(util::schema()).await.expect("db.passwd");
}

#[tokio::test]
async fn tls_modes() {
    let Some(db) = Mariadb::start_tls() else {
        return;
    };
    let base = db.url();
    // The test user must use TLS.
    let err = backend(&base, &[])
        .connect(util::schema())
        .await
        .err()
        .expect("no TLS refused");
    assert!(err.to_string().contains("Access denied"), "{err}");
    util::conformance(&backend(&format!("{base}?ssl-mode=REQUIRED"), &[])).await;
    let ca = db.ca_cert();
    let url = format!("{base}?ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca.display());
    backend(&url, &[])
        .connect(util::schema())
        .await
        .expect("verify_identity with the CA");
    let other = tempfile::tempdir().expect("tempdir");
    let other_ca = sojourn_testkit::postgres_server::tls_files(other.path()).ca;
    let url = format!("{base}?ssl-mode=VERIFY_CA&ssl-ca={}", other_ca.display());
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
    let Some(db) = Mariadb::start() else { return };
    let b = backend(&db.url(), &[("timeout.ms", "300")]);
    let schema = util::schema();
    b.prepare(&schema, true).await.expect("prepare");
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &util::record("k")).await, Status::Ok);

    db.pause();
    let start = Instant::now();
    let status = util::read(&mut conn, "k", Fields::All).await;
    let took = start.elapsed();
    let again = conn.update("k", &[fv(0, b"x")]).await;
    db.resume();
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
    let Some(mut db) = Mariadb::start() else {
        return;
    };
    // A timeout far beyond what seeing a closed connection takes: two
    // failures that waited it out would take 20 s, two that saw the
    // server go take milliseconds, and a busy machine's scheduling cannot
    // bring the one near the other.
    let b = backend(&db.url(), &[("timeout.ms", "10000")]);
    let schema = util::schema();
    b.prepare(&schema, true).await.expect("prepare");
    let mut conn = b.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &util::record("k")).await, Status::Ok);

    db.kill();
    let start = Instant::now();
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await.0,
        Status::Error
    );
    assert_eq!(conn.delete("k").await, Status::Error);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    db.restart();
    read_until_ok(&mut conn, "k").await;
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, util::record("k"))
    );
}
