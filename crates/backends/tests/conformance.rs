//! The conformance suite against every backend with real storage, reached
//! both directly and through `open` and `with_backend!`.

use sojourn_testkit as util;

use std::path::Path;

use sojourn_core::properties::Properties;

use sojourn_backends::{open, AnyBackend, MemoryBackend, OpenOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_conforms() {
    util::conformance(&MemoryBackend::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_conforms_through_open() {
    let backend = open(
        "memory:",
        &OpenOptions {
            default_sqlite: Path::new("unused.db"),
            ..sojourn_backends::OpenOptions::new(&Properties::new())
        },
    )
    .expect("open");
    assert!(matches!(backend, AnyBackend::Memory(_)));
    backend.visit_async(util::Conform).await;
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use std::path::Path;
    use std::sync::Arc;

    use sojourn_backends::{open, AnyBackend, SqliteBackend};
    use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status};
    use sojourn_core::properties::Properties;

    use super::util;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_conforms() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The parent directories do not exist yet: prepare creates them.
        let path = dir.path().join("a/b/bench.db");
        util::conformance(&SqliteBackend::new(&path)).await;
        assert!(path.exists());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_conforms_through_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bench.db");
        let url = format!("sqlite:{}", path.display());
        let backend = open(
            &url,
            &sojourn_backends::OpenOptions {
                default_sqlite: Path::new("unused.db"),
                ..sojourn_backends::OpenOptions::new(&Properties::new())
            },
        )
        .expect("open");
        assert!(matches!(backend, AnyBackend::Sqlite(_)));
        assert_eq!(backend.describe(), url);
        backend.visit_async(util::Conform).await;
    }

    #[tokio::test]
    async fn missing_file_is_empty_and_is_not_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("absent.db");
        let backend = SqliteBackend::new(&path);
        assert_eq!(
            backend.is_empty(&util::schema()).await.expect("is_empty"),
            Some(true)
        );
        assert!(!path.exists());
        let err = backend
            .connect(util::schema())
            .await
            .err()
            .expect("connecting to a missing file fails");
        assert!(matches!(err, BackendError::Connect { .. }), "{err}");
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(!path.exists());
    }

    #[tokio::test]
    async fn missing_table_is_empty_and_operations_fail_cleanly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bench.db");
        let backend = SqliteBackend::new(&path);
        let other = Schema::ycsb("othertable", "field", 2);
        backend.prepare(&other, false).await.expect("prepare");
        // The file exists, but the workload's table does not.
        let schema = util::schema();
        assert_eq!(
            backend.is_empty(&schema).await.expect("is_empty"),
            Some(true)
        );
        let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
        assert_eq!(
            util::read(&mut conn, "k", Fields::All).await.0,
            Status::Error
        );
        assert_eq!(conn.insert("k", &util::record("k")).await, Status::Error);
        assert!(conn
            .last_error()
            .is_some_and(|e| e.contains("no such table")));
    }

    #[tokio::test]
    async fn table_follows_ycsb_jdbc_layout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bench.db");
        let backend = SqliteBackend::new(&path);
        // A custom field prefix still maps to FIELDi columns.
        let schema = Arc::new(Schema::ycsb("usertable", "attr", 3));
        backend.prepare(&schema, true).await.expect("prepare");
        let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
        let values = [util::fv(0, b"zero"), util::fv(2, &[0xff, 0x00])];
        assert_eq!(conn.insert("user7", &values).await, Status::Ok);
        drop(conn);

        let db = rusqlite::Connection::open(&path).expect("open");
        let columns: Vec<String> = db
            .prepare("SELECT name FROM pragma_table_info('usertable')")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("table_info");
        assert_eq!(columns, ["YCSB_KEY", "FIELD0", "FIELD1", "FIELD2"]);
        let (f0, f1, f2_type): (String, Option<String>, String) = db
            .query_row(
                "SELECT FIELD0, FIELD1, typeof(FIELD2) FROM usertable WHERE YCSB_KEY = 'user7'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("row");
        assert_eq!((f0.as_str(), f1, f2_type.as_str()), ("zero", None, "blob"));
        let mode: String = db
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("journal_mode");
        assert_eq!(mode, "wal");
    }

    #[tokio::test]
    async fn prepare_refuses_a_table_with_too_few_fields_unless_dropping() {
        let dir = tempfile::tempdir().expect("tempdir");
        let backend = SqliteBackend::new(dir.path().join("bench.db"));
        backend
            .prepare(&Schema::ycsb("usertable", "field", 2), false)
            .await
            .expect("prepare");
        let wider = Schema::ycsb("usertable", "field", 4);
        let err = backend
            .prepare(&wider, false)
            .await
            .expect_err("too few fields");
        let message = err.to_string();
        assert!(message.contains("FIELD2, FIELD3"), "{message}");
        backend
            .prepare(&wider, true)
            .await
            .expect("prepare with drop");
        backend.prepare(&wider, false).await.expect("prepare again");
    }
}
