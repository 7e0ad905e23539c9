//! The Bigtable backend against the official emulator: the conformance
//! suite, YCSB's layout both ways, table creation, timeouts on a stalled
//! server and recovery after a restart.
#![cfg(feature = "bigtable")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use googleapis_tonic_google_bigtable_v2::google::bigtable::v2 as data;
use sojourn_backends::bigtable::{BigtableConfig, Server};
use sojourn_backends::{open, AnyBackend, BigtableBackend, OpenOptions};
use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status};
use sojourn_core::properties::Properties;
use sojourn_testkit as util;
use sojourn_testkit::bigtable_server::BigtableEmulator;

use util::{fv, record, schema};

fn backend(emulator: &BigtableEmulator) -> BigtableBackend {
    BigtableBackend::new(BigtableConfig::emulator(&emulator.host(), "proj", "inst"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    util::conformance(&backend(&emulator)).await;
}

/// The executor runs each connection on a current-thread runtime.
#[tokio::test]
async fn conforms_on_a_current_thread_runtime() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    util::conformance(&backend(&emulator)).await;
}

/// What `BIGTABLE_EMULATOR_HOST` in this process's environment makes of
/// a backend that would otherwise talk to Google with `key_file`: the
/// tests do not set it (the CLI tests set it for the child only), but a
/// user's shell may, and the tests must hold either way.
fn expected_target(key_file: Option<&str>) -> Server {
    match std::env::var(sojourn_backends::bigtable::EMULATOR_ENV) {
        Ok(host) if !host.trim().is_empty() => Server::Emulator(host.trim().to_string()),
        _ => Server::Google {
            key_file: key_file.map(str::to_string),
        },
    }
}

#[tokio::test]
async fn url_and_ycsb_properties() {
    // Nothing connects: these only open backends and read their settings.
    let none = Path::new("unused.db");
    let b = open(
        "bigtable://proj/inst/tbl",
        &OpenOptions {
            default_sqlite: none,
            ..OpenOptions::new(&Properties::new())
        },
    )
    .expect("open");
    let AnyBackend::Bigtable(b) = b else {
        panic!("not bigtable")
    };
    assert_eq!(b.describe(), "bigtable://proj/inst/tbl");
    let c = b.config();
    assert_eq!(c.target, expected_target(None));
    assert_eq!(
        (c.table.as_deref(), c.family.as_str(), c.presplit, c.timeout),
        (Some("tbl"), "cf", 200, Duration::from_secs(2))
    );

    let mut props = Properties::new();
    for p in [
        "google.bigtable.project.id=p2",
        "google.bigtable.instance.id=i2",
        "google.bigtable.auth.json.keyfile=/k.json",
        "columnfamily=fam",
        "bigtable.presplit=10",
        "bigtable.checkexists=false",
        "timeout.ms=500",
    ] {
        props.set_arg(p).unwrap();
    }
    let AnyBackend::Bigtable(b) = open(
        "googlebigtable",
        &OpenOptions {
            default_sqlite: none,
            ..OpenOptions::new(&props)
        },
    )
    .expect("open") else {
        panic!("not bigtable")
    };
    assert_eq!(b.describe(), "bigtable://p2/i2");
    let c = b.config();
    assert_eq!(
        (c.project.as_str(), c.instance.as_str(), c.table.as_deref()),
        ("p2", "i2", None)
    );
    assert_eq!(c.target, expected_target(Some("/k.json")));
    assert_eq!((c.family.as_str(), c.presplit), ("fam", 10));
    assert!(!c.check_exists);
    assert_eq!(c.timeout, Duration::from_millis(500));

    let err = open(
        "bigtable",
        &OpenOptions {
            default_sqlite: none,
            ..OpenOptions::new(&Properties::new())
        },
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("google.bigtable.project.id"),
        "{err}"
    );
    let mut props = Properties::new();
    props.set_arg("bigtable.presplit=many").unwrap();
    let err = open(
        "bigtable://p/i",
        &OpenOptions {
            default_sqlite: none,
            ..OpenOptions::new(&props)
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("bigtable.presplit"), "{err}");
}

#[tokio::test]
async fn no_emulator_is_a_connect_error() {
    let closed = util::servers::closed_port();
    let b = BigtableBackend::new(BigtableConfig::emulator(
        &format!("127.0.0.1:{}", closed.port()),
        "p",
        "i",
    ));
    let err = b.connect(schema()).await.err().expect("nothing listens");
    assert!(matches!(err, BackendError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("emulator at 127.0.0.1"), "{err}");
}

async fn data_client(
    emulator: &BigtableEmulator,
) -> data::bigtable_client::BigtableClient<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", emulator.host()))
        .unwrap()
        .connect()
        .await
        .expect("connect");
    data::bigtable_client::BigtableClient::new(channel)
}

fn set_cell(family: &str, qualifier: &str, value: &[u8]) -> data::Mutation {
    data::Mutation {
        mutation: Some(data::mutation::Mutation::SetCell(data::mutation::SetCell {
            family_name: family.into(),
            column_qualifier: qualifier.into(),
            timestamp_micros: -1,
            value: value.into(),
        })),
    }
}

/// Rows written the way YCSB's binding writes them (family `cf`, one
/// column per field named after it, several versions of a cell) read back
/// through sojourn, and sojourn's writes read back the same way.
#[tokio::test]
async fn layout_is_ycsbs() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    let backend = backend(&emulator);
    let schema = Arc::new(Schema::ycsb("usertable", "field", 3));
    backend.prepare(&schema, false).await.expect("prepare");
    let table_name = "projects/proj/instances/inst/tables/usertable".to_string();
    let mut client = data_client(&emulator).await;
    for value in [&b"old"[..], b"new"] {
        client
            .mutate_row(data::MutateRowRequest {
                table_name: table_name.clone(),
                row_key: b"user5".to_vec(),
                mutations: vec![
                    set_cell("cf", "field2", value),
                    set_cell("cf", "other", b"unknown"),
                ],
                ..Default::default()
            })
            .await
            .expect("mutate");
    }
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(
        util::read(&mut conn, "user5", Fields::All).await,
        (Status::Ok, vec![fv(2, b"new")])
    );
    assert_eq!(
        util::read(&mut conn, "user5", Fields::Some(&[0])).await,
        (Status::Ok, vec![])
    );

    assert_eq!(
        conn.insert("user6", &[fv(0, b"zero"), fv(1, &[0, 0xff])])
            .await,
        Status::Ok
    );
    let mut stream = client
        .read_rows(data::ReadRowsRequest {
            table_name,
            rows: Some(data::RowSet {
                row_keys: vec![b"user6".to_vec()],
                row_ranges: vec![],
            }),
            ..Default::default()
        })
        .await
        .expect("read")
        .into_inner();
    let mut cells = Vec::new();
    while let Some(r) = stream.message().await.expect("message") {
        for c in r.chunks {
            if let Some(q) = c.qualifier {
                cells.push((c.family_name.unwrap_or_default(), q, c.value));
            }
        }
    }
    assert_eq!(
        cells,
        [
            ("cf".to_string(), b"field0".to_vec(), b"zero".to_vec()),
            ("cf".to_string(), b"field1".to_vec(), vec![0, 0xff]),
        ]
    );
}

/// A table that exists without the family gets it; YCSB's `table` names
/// the table when the URL does not.
#[tokio::test]
async fn prepare_adds_a_missing_family_and_uses_the_workload_table() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    let mut config = BigtableConfig::emulator(&emulator.host(), "proj", "inst");
    config.family = "other".into();
    let other = BigtableBackend::new(config);
    let schema = Arc::new(Schema::ycsb("t2", "field", 2));
    other.prepare(&schema, false).await.expect("prepare");
    let backend = backend(&emulator);
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(true)
    );
    backend.prepare(&schema, false).await.expect("prepare");
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &[fv(1, b"v")]).await, Status::Ok);
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, vec![fv(1, b"v")])
    );
    // A table missing altogether is an error status, not NOT_FOUND.
    let missing = Arc::new(Schema::ycsb("absent", "field", 2));
    let mut conn = backend.connect(missing).await.expect("connect");
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await.0,
        Status::Error
    );
    assert!(conn.last_error().is_some_and(|e| e.contains("NOT_FOUND")));
}

#[tokio::test]
async fn blind_writes_as_ycsb_does() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    let mut config = BigtableConfig::emulator(&emulator.host(), "proj", "inst");
    config.check_exists = false;
    let backend = BigtableBackend::new(config);
    let schema = schema();
    backend.prepare(&schema, true).await.expect("prepare");
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.update("new", &[fv(0, b"x")]).await, Status::Ok);
    assert_eq!(
        util::read(&mut conn, "new", Fields::All).await,
        (Status::Ok, vec![fv(0, b"x")])
    );
    assert_eq!(conn.delete("never").await, Status::Ok);
}

/// A stalled server (SIGSTOP) makes operations time out as ERROR after
/// `timeout`, and they succeed again once it resumes; a killed and
/// restarted emulator (which loses its data) gives ERROR while it is down
/// and NOT_FOUND after, without reconnecting by hand.
#[tokio::test]
async fn stall_and_restart() {
    let Some(mut emulator) = BigtableEmulator::start() else {
        return;
    };
    let mut config = BigtableConfig::emulator(&emulator.host(), "proj", "inst");
    config.timeout = Duration::from_millis(300);
    let backend = BigtableBackend::new(config);
    let schema = schema();
    backend.prepare(&schema, true).await.expect("prepare");
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(conn.insert("k", &record("k")).await, Status::Ok);

    emulator.pause();
    let start = Instant::now();
    let status = util::read(&mut conn, "k", Fields::All).await.0;
    let waited = start.elapsed();
    emulator.resume();
    assert_eq!(status, Status::Error);
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert!(conn.last_error().is_some_and(|e| e.contains("no answer")));
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, record("k"))
    );

    emulator.server.kill();
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await.0,
        Status::Error
    );
    emulator.restart();
    backend
        .prepare(&schema, false)
        .await
        .expect("prepare again");
    // Failures while it was down put the connection in backoff (at most a
    // second); poll until it has reconnected, boundedly.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let s = util::read(&mut conn, "k", Fields::All).await.0;
        if s != Status::Error || Instant::now() > deadline {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status, Status::NotFound, "{:?}", conn.last_error());
    assert_eq!(conn.insert("k", &record("k")).await, Status::Ok);
    assert_eq!(
        util::read(&mut conn, "k", Fields::All).await,
        (Status::Ok, record("k"))
    );
}
