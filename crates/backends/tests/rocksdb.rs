//! The RocksDB backend: the conformance suite, YCSB's on-disk layout both
//! ways, opening through URLs and YCSB's property, and the errors for a
//! missing or locked database.
#![cfg(feature = "rocksdb")]

use std::path::Path;
use std::sync::Arc;

use sojourn_backends::rocksdb::{decode, encode};
use sojourn_backends::{open, AnyBackend, OpenOptions, RocksBackend};
use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status};
use sojourn_core::properties::Properties;
use sojourn_testkit as util;

use util::{fv, record, schema};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms() {
    let dir = tempfile::tempdir().expect("tempdir");
    util::conformance(&RocksBackend::new(dir.path().join("a/b/db"))).await;
}

/// The executor runs each connection on a current-thread runtime.
#[tokio::test]
async fn conforms_on_a_current_thread_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    util::conformance(&RocksBackend::new(dir.path().join("db"))).await;
}

#[tokio::test]
async fn opens_by_url_and_by_ycsb_property() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let url = format!("rocksdb:{}", path.display());
    let backend = open(
        &url,
        &OpenOptions {
            default_sqlite: Path::new("unused.db"),
            ..OpenOptions::new(&Properties::new())
        },
    )
    .expect("open");
    assert!(matches!(backend, AnyBackend::Rocksdb(_)));
    assert_eq!(backend.describe(), url);
    backend.visit_async(util::Conform).await;

    let mut props = Properties::new();
    props
        .set_arg(&format!("rocksdb.dir={}", path.display()))
        .unwrap();
    let backend = open(
        "rocksdb",
        &OpenOptions {
            default_sqlite: Path::new("unused.db"),
            ..OpenOptions::new(&props)
        },
    )
    .expect("open");
    assert_eq!(backend.describe(), url);

    let err = open(
        "rocksdb",
        &OpenOptions {
            default_sqlite: Path::new("unused.db"),
            ..OpenOptions::new(&Properties::new())
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("rocksdb.dir"), "{err}");
}

#[tokio::test]
async fn is_empty_does_not_create_and_connect_needs_a_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("absent");
    let backend = RocksBackend::new(&path);
    assert_eq!(
        backend.is_empty(&schema()).await.expect("is_empty"),
        Some(true)
    );
    assert!(!path.exists());
    let err = backend.connect(schema()).await.err().expect("no database");
    assert!(matches!(err, BackendError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("sojourn load"), "{err}");
    assert!(!path.exists());
}

#[tokio::test]
async fn a_second_handle_on_the_same_directory_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = RocksBackend::new(dir.path());
    first.prepare(&schema(), false).await.expect("prepare");
    let second = RocksBackend::new(dir.path());
    let err = second
        .prepare(&schema(), false)
        .await
        .expect_err("the directory is locked");
    assert!(
        err.to_string().contains("in use by another process"),
        "{err}"
    );
    assert!(err.to_string().contains("LOCK"), "{err}");
}

#[test]
fn records_use_ycsbs_encoding() {
    let mut out = Vec::new();
    encode([(&b"field1"[..], &b"xyz"[..])], &mut out);
    assert_eq!(out, b"\0\0\0\x06field1\0\0\0\x03xyz");
    assert_eq!(decode(&out), Some(vec![(&b"field1"[..], &b"xyz"[..])]));
}

/// What sojourn writes is what YCSB's binding reads: a column family named
/// after the table, listed in `CF_NAMES`, and records in its encoding.
#[tokio::test]
async fn layout_is_ycsbs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = Arc::new(Schema::ycsb("usertable", "field", 3));
    {
        let backend = RocksBackend::new(dir.path());
        backend.prepare(&schema, true).await.expect("prepare");
        let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
        let values = [fv(2, b"two"), fv(0, &[0xff, 0])];
        assert_eq!(conn.insert("user7", &values).await, Status::Ok);
        assert_eq!(conn.update("user7", &[fv(1, b"one")]).await, Status::Ok);
    }
    let names = std::fs::read_to_string(dir.path().join("CF_NAMES")).expect("CF_NAMES");
    assert_eq!(names, "default\nusertable\n");

    let opts = rocksdb::Options::default();
    let families = rocksdb::DB::list_cf(&opts, dir.path()).expect("list_cf");
    assert_eq!(families, ["default", "usertable"]);
    let db = rocksdb::DB::open_cf(&opts, dir.path(), &families).expect("open");
    let cf = db.cf_handle("usertable").expect("cf");
    let raw = db.get_cf(cf, "user7").expect("get").expect("record");
    // Updates rewrite the record in field order.
    let mut expected = Vec::new();
    encode(
        [
            (&b"field0"[..], &[0xff, 0][..]),
            (b"field1", b"one"),
            (b"field2", b"two"),
        ],
        &mut expected,
    );
    assert_eq!(raw, expected);
}

/// Records as YCSB writes them (fields in hash order, possibly fields this
/// workload does not know) read back, and an update keeps the unknown ones.
#[tokio::test]
async fn reads_records_written_by_ycsb() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let db = rocksdb::DB::open_cf(&opts, dir.path(), ["default", "usertable"]).expect("open");
        let cf = db.cf_handle("usertable").expect("cf");
        let mut record = Vec::new();
        encode(
            [
                (&b"field3"[..], &b"v3"[..]),
                (b"extra", b"kept"),
                (b"field0", b"v0"),
            ],
            &mut record,
        );
        db.put_cf(cf, "user1", &record).expect("put");
        db.put_cf(cf, "user2", b"\0\0\0\x09trunc").expect("put");
    }
    let backend = RocksBackend::new(dir.path());
    assert_eq!(
        backend.is_empty(&schema()).await.expect("is_empty"),
        Some(false)
    );
    let mut conn = backend.connect(schema()).await.expect("connect");
    assert_eq!(
        util::read(&mut conn, "user1", Fields::All).await,
        (Status::Ok, vec![fv(0, b"v0"), fv(3, b"v3")])
    );
    assert_eq!(conn.update("user1", &[fv(3, b"new")]).await, Status::Ok);
    assert_eq!(
        util::read(&mut conn, "user1", Fields::Some(&[3, 0])).await,
        (Status::Ok, vec![fv(3, b"new"), fv(0, b"v0")])
    );
    // A malformed record is an error, not a panic or a silent success.
    assert_eq!(
        util::read(&mut conn, "user2", Fields::All).await,
        (Status::Error, vec![])
    );
    assert!(conn.last_error().is_some_and(|e| e.contains("user2")));
    assert_eq!(conn.update("user2", &[fv(0, b"x")]).await, Status::Error);
    let (status, rows) = util::scan(&mut conn, "user1", 10, Fields::All).await;
    assert_eq!((status, rows.len()), (Status::Error, 0));
    drop(conn);
    drop(backend);

    let opts = rocksdb::Options::default();
    let db = rocksdb::DB::open_cf(&opts, dir.path(), ["default", "usertable"]).expect("open");
    let cf = db.cf_handle("usertable").expect("cf");
    let raw = db.get_cf(cf, "user1").expect("get").expect("record");
    let fields = decode(&raw).expect("well formed");
    assert_eq!(
        fields,
        vec![
            (&b"field0"[..], &b"v0"[..]),
            (b"field3", b"new"),
            (b"extra", b"kept")
        ]
    );
}

/// Concurrent updates of different fields of one record all land: the
/// read-merge-write of an update is serialised per key.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_of_one_record_are_not_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let backend = Arc::new(RocksBackend::new(dir.path()));
    let schema = schema();
    backend.prepare(&schema, true).await.expect("prepare");
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("hot", &record("hot")).await, Status::Ok);
    const ROUNDS: usize = 300;
    let mut tasks = Vec::new();
    for field in 0..util::FIELD_COUNT {
        let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let value = format!("{field}:{round}");
                assert_eq!(
                    conn.update("hot", &[fv(field, value.as_bytes())]).await,
                    Status::Ok
                );
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let expected: Vec<_> = (0..util::FIELD_COUNT)
        .map(|f| fv(f, format!("{f}:{}", ROUNDS - 1).as_bytes()))
        .collect();
    assert_eq!(
        util::read(&mut conn, "hot", Fields::All).await,
        (Status::Ok, expected)
    );
}
