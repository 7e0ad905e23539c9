//! End to end against a real Cassandra 5.0 node: the shipped
//! `suites/yb-keyvalue` (yb-sample-apps' key-value workload in its own
//! table) with every read verified, YCSB's own `cassandra-cql` command
//! line on a table made by plain CQL, a wrong password and an unreachable
//! node, and runs through a node stalled past the timeout and one killed
//! and restarted.
//!
//! One node serves the whole file (it takes seconds to start), so the
//! checks run in turn in one test, the restart last.
#![cfg(feature = "cassandra")]

mod running;
mod util;

use std::path::Path;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use sojourn_core::backend::Status;
use sojourn_core::op::OpKind;
use sojourn_store::{Filter, RunStatus, Store};
use sojourn_testkit::cassandra_server::{self as cs, CassandraServer};
use util::*;

/// A runtime and a session of the test's own, as a user's cqlsh.
struct Cql {
    rt: tokio::runtime::Runtime,
    session: Session,
}

impl Cql {
    fn new(node: &CassandraServer) -> Cql {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let session = rt
            .block_on(
                SessionBuilder::new()
                    .known_node(node.host())
                    .user(cs::USER, cs::PASSWORD)
                    .build(),
            )
            .expect("a session");
        Cql { rt, session }
    }

    fn run(&self, cql: &str) {
        self.rt
            .block_on(self.session.query_unpaged(cql, ()))
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }

    fn count(&self, table: &str) -> i64 {
        let cql = format!("SELECT count(*) FROM {table}");
        let rows = self
            .rt
            .block_on(self.session.query_unpaged(cql.as_str(), ()))
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
        rows.into_rows_result()
            .unwrap()
            .first_row::<(i64,)>()
            .unwrap()
            .0
    }
}

/// YCSB's properties for the node: `-p hosts=... -p port=...` and the
/// rest of the connection, as its users type them.
fn ycsb_properties(node: &CassandraServer) -> Vec<String> {
    [
        "hosts=127.0.0.1".to_string(),
        format!("port={}", node.port()),
        "cassandra.keyspace=ycsb".to_string(),
        format!("cassandra.username={}", cs::USER),
        format!("cassandra.password={}", cs::PASSWORD),
        "cassandra.readconsistencylevel=ONE".to_string(),
        "cassandra.writeconsistencylevel=ONE".to_string(),
    ]
    .into_iter()
    .flat_map(|p| ["-p".to_string(), p])
    .collect()
}

fn args<'a>(head: &[&'a str], tail: &'a [String]) -> Vec<&'a str> {
    head.iter()
        .copied()
        .chain(tail.iter().map(String::as_str))
        .collect()
}

fn no_secret(out: &std::process::Output) {
    for shown in [text(&out.stdout), text(&out.stderr)] {
        assert!(!shown.contains(cs::PASSWORD), "password shown:\n{shown}");
    }
}

#[test]
fn cassandra_end_to_end() {
    let Some(mut node) = CassandraServer::start() else {
        return;
    };
    let cql = Cql::new(&node);
    ycsb_command_line_on_a_table_made_by_plain_cql(&node, &cql);
    shipped_key_value_suite(&node, &cql);
    refusals_are_clear_and_keep_the_password(&node);
    survives_a_stall(&node);
    survives_a_crash_and_restart(&mut node);
}

/// The table of YCSB's documentation for its binding, made by plain
/// CQL; YCSB's `load` and `run` command lines, word for word, with
/// workloads A, C and E.
fn ycsb_command_line_on_a_table_made_by_plain_cql(node: &CassandraServer, cql: &Cql) {
    cql.run(
        "CREATE KEYSPACE IF NOT EXISTS ycsb WITH replication = \
         {'class': 'SimpleStrategy', 'replication_factor': 1}",
    );
    cql.run(
        "CREATE TABLE ycsb.usertable (y_id varchar PRIMARY KEY, field0 varchar, \
         field1 varchar, field2 varchar, field3 varchar, field4 varchar, field5 varchar, \
         field6 varchar, field7 varchar, field8 varchar, field9 varchar)",
    );
    let dir = tempfile::tempdir().unwrap();
    let p = ycsb_properties(node);
    let load = sojourn(
        dir.path(),
        &args(
            &[
                "load",
                "cassandra-cql",
                "-P",
                "workloads/workloada",
                "-p",
                "recordcount=500",
                "-s",
            ],
            &p,
        ),
    );
    let s = parse_summary(&ok(&load));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 500.0);
    no_secret(&load);
    // Not one property of YCSB's binding is unknown here.
    let stderr = text(&load.stderr);
    assert!(!stderr.contains("unknown"), "{stderr}");
    assert_eq!(cql.count("ycsb.usertable"), 500);
    for (workload, kinds) in [
        ("workloads/workloadc", &["READ"][..]),
        ("workloads/workloada", &["READ", "UPDATE"][..]),
        ("workloads/workloade", &["SCAN", "INSERT"][..]),
    ] {
        let run = sojourn(
            dir.path(),
            &args(
                &[
                    "run",
                    "cassandra-cql",
                    "-P",
                    workload,
                    "-p",
                    "recordcount=500",
                    "-p",
                    "operationcount=600",
                    "-threads",
                    "4",
                ],
                &p,
            ),
        );
        let s = parse_summary(&ok(&run));
        no_secret(&run);
        let done: f64 = kinds.iter().map(|k| get_or_zero(&s, k, "Return=OK")).sum();
        assert_eq!(done, 600.0, "{workload}: every operation OK: {s:#?}");
    }
    // bench over that table with more fields than it has: refused before
    // anything runs, naming the fieldcount that matches it.
    let out = sojourn(
        dir.path(),
        &args(
            &[
                "bench",
                "cassandra-cql",
                "-P",
                "workloads/workloada",
                "-p",
                "recordcount=500",
                "-p",
                "fieldcount=12",
            ],
            &p,
        ),
    );
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no column field10, field11") && err.contains("-p fieldcount=10 matches"),
        "{err}"
    );
    assert!(!text(&out.stdout).contains("Return="), "nothing ran: {err}");
}

/// suites/yb-keyvalue, unchanged but for `--db` and its scale: three
/// stages on yb-sample-apps' own table, every read verified.
fn shipped_key_value_suite(node: &CassandraServer, cql: &Cql) {
    let dir = tempfile::tempdir().unwrap();
    let suite = shipped_suite(dir.path(), "yb-keyvalue");
    let results = dir.path().join("results.sqlite");
    let out = bin()
        .arg("suite")
        .arg(&suite)
        .arg("--results")
        .arg(&results)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--no-progress")
        .args(["--db", &node.url("ybdemo_keyspace")])
        .args([
            "--flag",
            "ycsb_load_parameters=num_writes=2000,write_rate=1000",
            "--flag",
            "sojourn_parameters=num_unique_keys=20000",
            "--flag",
            "ycsb_timelimit=1",
        ])
        .run_to_end();
    let stdout = ok(&out);
    no_secret(&out);
    assert!(stdout.contains("All tests have passed"), "{stdout}");
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 3, "{runs:#?}");
    let mut inserted = 0;
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
        assert!(!r.meta.backend.contains(cs::PASSWORD), "{r:#?}");
        let stored = store.load(r.meta.id.as_str()).unwrap();
        let ops =
            |kind: OpKind, status: Status| stored.total.op(kind).map_or(0, |o| o.count_of(status));
        inserted += ops(OpKind::Insert, Status::Ok);
        let reads = stored.total.op(OpKind::Read).map_or(0, |o| o.count());
        assert_eq!(
            ops(OpKind::Read, Status::Ok),
            reads,
            "every read verified: {r:#?}"
        );
        if r.meta.phase == "run" {
            assert!(reads > 0, "{r:#?}");
        }
    }
    // Every acknowledged insert is a row of yb-sample-apps' table.
    assert_eq!(cql.count("ybdemo_keyspace.keyvalue"), inserted as i64);
}

fn refusals_are_clear_and_keep_the_password(node: &CassandraServer) {
    let dir = tempfile::tempdir().unwrap();
    let secret = "wr0ng-Pa55word";
    let url = format!("cassandra://{}:{secret}@{}/ycsb", cs::USER, node.host());
    let err = refused(
        dir.path(),
        &["run", "--db", &url, "-P", "workloads/workloadc"],
    );
    assert!(!err.contains(secret) && !err.contains("panicked"), "{err}");
    assert!(err.contains("password"), "{err}");
    let closed = sojourn_testkit::servers::closed_port();
    let url = format!("cassandra://127.0.0.1:{}/ycsb", closed.port());
    let err = refused(
        dir.path(),
        &["run", "--db", &url, "-P", "workloads/workloadc"],
    );
    assert!(
        err.contains(&format!("127.0.0.1:{}", closed.port())) && !err.contains("panicked"),
        "{err}"
    );
}

/// Start a paced run of workload C over the table the YCSB check
/// loaded, and return it once its first status line is out.
fn start_run(
    node: &CassandraServer,
    data: &Path,
    extra: &[&str],
) -> (std::process::Child, std::thread::JoinHandle<String>) {
    let p = ycsb_properties(node);
    let mut argv = args(
        &[
            "run",
            "cassandra-cql",
            "-P",
            "workloads/workloadc",
            "-p",
            "recordcount=500",
        ],
        &p,
    );
    argv.extend(["-threads", "4", "-p", "timeout.ms=500", "-s"]);
    argv.extend(["-p", "status.interval=0.2"]);
    argv.extend_from_slice(extra);
    running::spawn_until_running(data, &argv)
}

fn survives_a_stall(node: &CassandraServer) {
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(
        node,
        dir.path(),
        &["-p", "operationcount=2000", "-target", "500"],
    );
    node.pause();
    // The outage: the length of the injected fault, not a synchronisation.
    std::thread::sleep(std::time::Duration::from_secs(2));
    node.resume();
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    no_secret(&out);
    let s = parse_summary(&text(&out.stdout));
    let (done, errors) = (
        get_or_zero(&s, "READ", "Return=OK"),
        get(&s, "READ", "Return=ERROR"),
    );
    assert_eq!(done + errors, 2000.0, "{s:#?}");
    assert!(errors >= 4.0 && done >= 1000.0, "{s:#?}");
    assert!(
        get(&s, "READ-FAILED", "MinLatency(us)") >= 450_000.0,
        "errors took the timeout: {s:#?}"
    );
    assert_stall_blamed_on_the_database(&stderr);
}

/// A node killed under a run, then started again (its JVM takes seconds):
/// operations fail as ERROR meanwhile, the driver reconnects in the
/// background, and the run reads again before its deadline.
fn survives_a_crash_and_restart(node: &mut CassandraServer) {
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(
        node,
        dir.path(),
        &[
            "-p",
            "maxexecutiontime=25",
            "-p",
            "operationcount=100000",
            "-target",
            "100",
        ],
    );
    node.kill();
    node.restart();
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    no_secret(&out);
    let s = parse_summary(&text(&out.stdout));
    let done = get_or_zero(&s, "READ", "Return=OK");
    let errors = get(&s, "READ", "Return=ERROR");
    assert!(errors >= 4.0, "the outage caused errors: {s:#?}");
    // Under a second of reads came before the kill: the rest came after
    // the node was back.
    assert!(
        done >= 300.0,
        "reads went on after the restart: {s:#?}\n{stderr}"
    );
}
