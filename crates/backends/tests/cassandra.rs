//! The CQL backend against a real Cassandra 5.0 node: the conformance
//! suite (YCSB's upserting writes, scans in token order), a table loaded
//! in YCSB's layout through plain CQL read as workloads C and E read it,
//! yb-sample-apps' key-value table, and the errors of a wrong password, an
//! unreachable node and a stalled one.
//!
//! One node serves the whole file (it takes seconds to start), so the
//! checks run in turn in one test.
#![cfg(feature = "cassandra")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use sojourn_backends::cassandra::CassandraBackend;
use sojourn_backends::{Open, OpenOptions};
use sojourn_core::backend::{Backend, BackendError, Connection, Fields, Schema, Status};
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::capability::Support;
use sojourn_core::workload::keyvalue::{fill_value, verify, KeyValue, KeyValueConfig};
use sojourn_core::workload::Phase;
use sojourn_testkit::cassandra_server::{self as cs, CassandraServer};
use sojourn_testkit::{conformance_as, fv, read, scan, ScanOrder, Writes};

fn props(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.set(k, v, Origin::Flag("-p"));
    }
    p
}

fn backend(url: &str, pairs: &[(&str, &str)]) -> CassandraBackend {
    let p = props(pairs);
    CassandraBackend::open(url, &OpenOptions::new(&p)).expect("a valid URL")
}

/// A session of the test's own, as a user's cqlsh would be.
async fn cql(node: &CassandraServer) -> Session {
    SessionBuilder::new()
        .known_node(node.host())
        .user(cs::USER, cs::PASSWORD)
        .build()
        .await
        .expect("a session")
}

async fn run(session: &Session, cql: &str) {
    session
        .query_unpaged(cql, ())
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e}"));
}

#[test]
fn cassandra_backend() {
    let Some(mut node) = CassandraServer::start() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        conforms(&node).await;
        tokens_are_the_servers(&node).await;
        reads_a_table_loaded_by_plain_cql(&node).await;
        key_value_table_is_yb_sample_apps(&node).await;
        refusals_say_why_without_the_password(&node).await;
        encrypts_when_asked(&node).await;
    });
    stalled_node_times_out_and_recovers(&mut node, &rt);
}

async fn conforms(node: &CassandraServer) {
    let b = backend(&node.url("conformance"), &[]);
    assert!(
        b.describe().starts_with(
            &node
                .url_without_password("conformance")
                .replace(&format!("{}@", cs::USER), &format!("{}:***@", cs::USER))
        ),
        "{}",
        b.describe()
    );
    // The keyspace does not exist yet: empty, not an error.
    let schema = sojourn_testkit::schema();
    assert_eq!(b.is_empty(&schema).await.unwrap(), Some(true));
    conformance_as(&b, ScanOrder::Token(cs::token), Writes::Blind).await;
}

/// The test's model of the ring is the server's.
async fn tokens_are_the_servers(node: &CassandraServer) {
    let session = cql(node).await;
    let keys = [
        "user1",
        "a",
        "user6284781860667377211",
        "key:123456789012345",
        "exactly16bytes!!",
        "seventeen bytes!!",
        "\u{e9}t\u{e9}",
    ];
    run(&session, "CREATE KEYSPACE IF NOT EXISTS tokens WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").await;
    run(
        &session,
        "CREATE TABLE IF NOT EXISTS tokens.t (k varchar PRIMARY KEY)",
    )
    .await;
    for key in keys {
        session
            .query_unpaged("INSERT INTO tokens.t (k) VALUES (?)", (key,))
            .await
            .unwrap();
        let (server,): (i64,) = session
            .query_unpaged("SELECT token(k) FROM tokens.t WHERE k = ?", (key,))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .first_row()
            .unwrap();
        assert_eq!(cs::token(key), server, "token of {key:?}");
    }
}

/// YCSB's DDL and plain inserts, then reads of every key (workload C)
/// and scans from keys in token order (workload E), every value checked.
async fn reads_a_table_loaded_by_plain_cql(node: &CassandraServer) {
    let session = cql(node).await;
    run(&session, "CREATE KEYSPACE IF NOT EXISTS ycsb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").await;
    run(&session, "DROP TABLE IF EXISTS ycsb.usertable").await;
    let mut ddl = String::from("CREATE TABLE ycsb.usertable (y_id varchar PRIMARY KEY");
    for f in 0..10 {
        ddl.push_str(&format!(", field{f} varchar"));
    }
    ddl.push(')');
    run(&session, &ddl).await;
    let insert = session
        .prepare(
            "INSERT INTO ycsb.usertable (y_id, field0, field1, field2, field3, field4, field5, \
             field6, field7, field8, field9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .await
        .unwrap();
    let value = |key: &str, f: usize| format!("{key}-{f}-").repeat(4);
    let mut keys = Vec::new();
    for n in 0..200u64 {
        let mut key = String::new();
        sojourn_core::keys::build_key_name(n, 1, true, &mut key);
        let v: Vec<String> = (0..10).map(|f| value(&key, f)).collect();
        let row = (
            key.as_str(),
            &v[0],
            &v[1],
            &v[2],
            &v[3],
            &v[4],
            &v[5],
            &v[6],
            &v[7],
            &v[8],
            &v[9],
        );
        session.execute_unpaged(&insert, row).await.unwrap();
        keys.push(key);
    }

    let b = backend(
        "cassandra-cql",
        &[
            ("hosts", "127.0.0.1"),
            ("port", &node.port().to_string()),
            ("cassandra.username", cs::USER),
            ("cassandra.password", cs::PASSWORD),
        ],
    );
    let schema = Arc::new(Schema::ycsb("usertable", "field", 10));
    assert_eq!(b.is_empty(&schema).await.unwrap(), Some(false));
    // Preparing without drop keeps what is there.
    b.prepare(&schema, false).await.unwrap();
    let mut conn = b.connect(Arc::clone(&schema)).await.unwrap();
    for key in &keys {
        let (status, fields) = read(&mut conn, key, Fields::All).await;
        assert_eq!(status, Status::Ok, "{key}");
        let want: Vec<_> = (0..10).map(|f| fv(f, value(key, f).as_bytes())).collect();
        assert_eq!(fields, want, "{key}");
    }
    let order = ScanOrder::Token(cs::token);
    for start in [&keys[0], &keys[57], &keys[199]] {
        let (status, rows) = scan(&mut conn, start, 50, Fields::Some(&[3])).await;
        assert_eq!(status, Status::Ok);
        let got: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(got, order.expect(&keys, start, 50), "scan from {start}");
        for r in &rows {
            assert_eq!(r.fields, vec![fv(3, value(&r.key, 3).as_bytes())]);
        }
    }
    // A scan longer than a page (5,000 rows) is fetched page by page.
    let (status, rows) = scan(&mut conn, "", 10_000, Fields::Some(&[])).await;
    assert_eq!((status, rows.len()), (Status::Ok, keys.len()));

    // A table made for fewer fields is refused before anything runs.
    let wider = Schema::ycsb("usertable", "field", 12);
    let e = b.prepare(&wider, false).await.unwrap_err();
    assert!(e.to_string().contains("no column field10, field11"), "{e}");
}

/// The key-value workload's table is yb-sample-apps' own (`k`, `v blob`),
/// made through the workload's capability; values round-trip as bytes.
async fn key_value_table_is_yb_sample_apps(node: &CassandraServer) {
    let b = backend(&node.url("ybdemo_keyspace"), &[]);
    let cfg = KeyValueConfig::from_properties(&props(&[("num_unique_keys", "100")]), Phase::Load)
        .unwrap();
    let support = Support::<CassandraBackend, KeyValue>::of(&b).expect("offered");
    support.prepare(&b, &cfg, true).await.unwrap();
    assert_eq!(support.is_empty(&b, &cfg).await.unwrap(), Some(true));
    let session = cql(node).await;
    let columns = session
        .query_unpaged(
            "SELECT column_name, type FROM system_schema.columns \
             WHERE keyspace_name = 'ybdemo_keyspace' AND table_name = 'keyvalue'",
            (),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let mut columns: Vec<(String, String)> = columns
        .rows::<(String, String)>()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    columns.sort();
    assert_eq!(
        columns,
        [("k".into(), "text".into()), ("v".into(), "blob".into())]
    );
    let mut conn = b.connect(Arc::new(cfg.schema())).await.unwrap();
    let mut rng = sojourn_core::generator::rng_for(1, 2);
    let mut value = Vec::new();
    fill_value(&mut rng, "key:7", 256, &mut value);
    assert_eq!(conn.insert("key:7", &[fv(0, &value)]).await, Status::Ok);
    let (status, fields) = read(&mut conn, "key:7", Fields::All).await;
    assert_eq!(status, Status::Ok);
    assert!(verify("key:7", &fields[0].value));
    let stored = session
        .query_unpaged(
            "SELECT v FROM ybdemo_keyspace.keyvalue WHERE k = 'key:7'",
            (),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .first_row::<(Vec<u8>,)>()
        .unwrap()
        .0;
    assert_eq!(stored, value, "kept as the bytes they are");
    assert_eq!(support.is_empty(&b, &cfg).await.unwrap(), Some(false));
}

async fn refusals_say_why_without_the_password(node: &CassandraServer) {
    let schema = sojourn_testkit::schema();
    let secret = "not-the-Pa55word";
    let wrong = format!("cassandra://{}:{secret}@{}/ycsb", cs::USER, node.host());
    let e = backend(&wrong, &[])
        .prepare(&schema, false)
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, BackendError::Connect { .. }), "{text}");
    assert!(!text.contains(secret), "{text}");
    assert!(text.to_lowercase().contains("password"), "{text}");
    let closed = sojourn_testkit::servers::closed_port();
    let nowhere = backend(
        &format!("cassandra://127.0.0.1:{}/ycsb", closed.port()),
        &[],
    );
    let started = Instant::now();
    let e = nowhere.is_empty(&schema).await.unwrap_err().to_string();
    assert!(e.contains(&format!("127.0.0.1:{}", closed.port())), "{e}");
    assert!(started.elapsed() < Duration::from_secs(15), "{e}");
    // A table the keyspace lacks is named.
    let b = backend(&node.url("ycsb"), &[]);
    let missing = Arc::new(Schema::ycsb("nosuchtable", "field", 2));
    let e = b.connect(missing).await.err().expect("refused").to_string();
    assert!(e.contains("no table ycsb.nosuchtable"), "{e}");
}

/// `cassandra.useSSL=true`: TLS, the node checked against the authority
/// given, or the system's, which do not know the test's.
async fn encrypts_when_asked(node: &CassandraServer) {
    let ca = node.tls_ca.display().to_string();
    let b = backend(
        &node.url("secure"),
        &[("cassandra.useSSL", "true"), ("cassandra.tls.ca", &ca)],
    );
    assert!(b.describe().ends_with("TLS)"), "{}", b.describe());
    let schema = sojourn_testkit::schema();
    b.prepare(&schema, true).await.unwrap();
    let mut conn = b.connect(Arc::clone(&schema)).await.unwrap();
    assert_eq!(conn.insert("k", &[fv(1, b"over TLS")]).await, Status::Ok);
    assert_eq!(
        read(&mut conn, "k", Fields::All).await,
        (Status::Ok, vec![fv(1, b"over TLS")])
    );
    let unknown = backend(&node.url("secure"), &[("cassandra.useSSL", "true")]);
    let e = unknown.is_empty(&schema).await.unwrap_err().to_string();
    assert!(e.contains("UnknownIssuer"), "{e}");
    let e = CassandraBackend::open(
        &node.url("secure"),
        &OpenOptions::new(&props(&[("cassandra.tls.ca", &ca)])),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("cassandra.useSSL=true"), "{e}");
}

/// Operations on a stopped node fail as ERROR within the timeout; once
/// it runs again, the same connection works.
fn stalled_node_times_out_and_recovers(node: &mut CassandraServer, rt: &tokio::runtime::Runtime) {
    let b = backend(&node.url("conformance"), &[("timeout.ms", "300")]);
    let schema = sojourn_testkit::schema();
    let mut conn = rt.block_on(async {
        b.prepare(&schema, true).await.unwrap();
        let mut conn = b.connect(Arc::clone(&schema)).await.unwrap();
        assert_eq!(conn.insert("k", &[fv(0, b"v")]).await, Status::Ok);
        conn
    });
    node.pause();
    rt.block_on(async {
        let started = Instant::now();
        assert_eq!(read(&mut conn, "k", Fields::All).await.0, Status::Error);
        assert!(started.elapsed() < Duration::from_secs(2));
    });
    node.resume();
    rt.block_on(async {
        // The first operations after the stall may still meet its backlog;
        // within a bound, reads find the record again.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (status, fields) = read(&mut conn, "k", Fields::All).await;
            if status == Status::Ok {
                assert_eq!(fields, vec![fv(0, b"v")]);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no read succeeded after the stall"
            );
        }
    });
}
