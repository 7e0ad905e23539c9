//! End to end against real PostgreSQL, Redis and MariaDB servers: the database's own
//! counters, sampled around each phase, show reads and no writes for a
//! read-only run and writes for an update run, in the JSON report; and a
//! stored run gives them back through `results show`.
#![cfg(all(feature = "postgres", feature = "redis"))]

mod util;

use serde_json::Value;
use sojourn_testkit::postgres_server::Postgres;
use sojourn_testkit::redis_server::RedisServer;
use util::*;

/// The JSON report of a phase (`--format json`), asserting success.
fn report(data: &std::path::Path, args: &[&str]) -> Value {
    let args: Vec<&str> = args.iter().copied().chain(["--format", "json"]).collect();
    let stdout = ok(&sojourn(data, &args));
    serde_json::from_str(&stdout).expect("a JSON report")
}

fn delta(r: &Value, name: &str) -> f64 {
    r["server"]["deltas"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no server counter {name} in {}", r["server"]))
}

#[test]
fn postgres_read_only_run_reads_and_writes_nothing() {
    let Some(db) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = db.url();
    let common = ["-p", "recordcount=300", "--no-store"];
    let load: Vec<&str> = ["load", &url, "-P", "workloads/workloadc", "--drop"]
        .into_iter()
        .chain(common)
        .collect();
    let l = report(dir.path(), &load);
    // A load this short may finish before the workers publish their counts
    // (see the next comment), so only the presence of figures is certain.
    assert_eq!(l["server"]["operations"].as_u64(), Some(300), "{l}");

    // Two seconds: PostgreSQL publishes a busy backend's counts at most
    // once a second, so a longer run is sure to publish some of its reads.
    let run = |workload: &str, extra: &[&str]| {
        let args: Vec<&str> = ["run", url.as_str(), "-P", workload]
            .into_iter()
            .chain(common)
            .chain([
                "-p",
                "operationcount=100000000",
                "-p",
                "maxexecutiontime=2",
                "-threads",
                "2",
            ])
            .chain(extra.iter().copied())
            .collect();
        report(dir.path(), &args)
    };
    let r = run("workloads/workloadc", &[]);
    assert!(r["operations"].as_u64().unwrap() > 0);
    assert!(delta(&r, "tup_fetched") > 0.0, "{}", r["server"]);
    assert!(delta(&r, "table_idx_tup_fetch") > 0.0, "{}", r["server"]);
    assert!(delta(&r, "xact_commit") > 0.0, "{}", r["server"]);
    // The table's own counters see only the benchmark: exactly no writes.
    assert_eq!(delta(&r, "table_tup_updated"), 0.0, "{}", r["server"]);
    assert_eq!(delta(&r, "table_tup_inserted"), 0.0, "{}", r["server"]);
    // The server is local, so its processes' CPU time is read.
    assert!(delta(&r, "server_cpu_s") > 0.0, "{}", r["server"]);
    assert!(
        r["server"]["per_op"]["server_cpu_us_per_op"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    let u = run(
        "workloads/workloada",
        &["-p", "readproportion=0", "-p", "updateproportion=1"],
    );
    assert!(delta(&u, "table_tup_updated") > 0.0, "{}", u["server"]);
    assert!(delta(&u, "tup_updated") > 0.0, "{}", u["server"]);
}

#[test]
fn redis_read_only_run_hits_and_writes_nothing() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = format!("redis.port={}", server.port());
    let common = [
        "-p",
        "redis.host=127.0.0.1",
        "-p",
        port.as_str(),
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=500",
        "-threads",
        "2",
    ];
    let phase = |cmd: &str, workload: &str, extra: &[&str], store: &[&str]| {
        let args: Vec<&str> = [cmd, "redis", "-P", workload]
            .into_iter()
            .chain(common)
            .chain(extra.iter().copied())
            .chain(store.iter().copied())
            .collect();
        report(dir.path(), &args)
    };
    let l = phase("load", "workloads/workloadc", &[], &["--no-store"]);
    // YCSB's own server work for an insert: one HSET and one ZADD, no script.
    assert_eq!(delta(&l, "calls_hset"), 300.0, "{}", l["server"]);
    assert_eq!(delta(&l, "calls_zadd"), 300.0, "{}", l["server"]);
    assert_eq!(delta(&l, "calls_evalsha"), 0.0, "{}", l["server"]);

    // Recorded in the data directory's own store.
    let r = phase("run", "workloads/workloadc", &[], &[]);
    assert_eq!(r["operations"].as_u64(), Some(500));
    // Every read finds its record.
    assert!(delta(&r, "keyspace_hits") >= 500.0, "{}", r["server"]);
    assert_eq!(delta(&r, "keyspace_misses"), 0.0, "{}", r["server"]);
    assert!(delta(&r, "calls_hgetall") >= 500.0, "{}", r["server"]);
    for write in [
        "calls_hset",
        "calls_hmset",
        "calls_evalsha",
        "calls_del",
        "calls_zadd",
    ] {
        assert_eq!(delta(&r, write), 0.0, "{write}: {}", r["server"]);
    }
    // The server's CPU time (user plus system, from INFO) grew: 500
    // commands and the server's own timer take far more than INFO's
    // microsecond resolution.
    let cpu = delta(&r, "server_cpu_s");
    assert!(cpu > 0.0, "{}", r["server"]);
    let parts = delta(&r, "server_user_cpu_s") + delta(&r, "server_sys_cpu_s");
    assert!(
        (cpu - parts).abs() < 1e-9,
        "{cpu} != {parts}: {}",
        r["server"]
    );
    assert_eq!(r["server"]["operations"].as_u64(), Some(500));
    let per_op = r["server"]["per_op"]["server_cpu_us_per_op"]
        .as_f64()
        .unwrap();
    assert!(
        (per_op - cpu * 1e6 / 500.0).abs() < 1e-6 * per_op.max(1.0),
        "{per_op} µs/op for {cpu} s over 500 operations"
    );
    assert!(
        (r["server"]["per_op"]["keyspace_hits_per_op"]
            .as_f64()
            .unwrap()
            - 1.0)
            .abs()
            < 0.1
    );

    // The stored run shows the same figures again.
    let shown = bin()
        .args(["results", "show", "last", "--data-dir"])
        .arg(dir.path())
        .run_to_end();
    ok(&shown);
    let stderr = text(&shown.stderr);
    let hits = format!(
        "keyspace_hits {:.2}",
        r["server"]["per_op"]["keyspace_hits_per_op"]
            .as_f64()
            .unwrap()
    );
    assert!(stderr.contains(&hits), "{hits} not in:\n{stderr}");

    let u = phase(
        "run",
        "workloads/workloada",
        &["-p", "readproportion=0", "-p", "updateproportion=1"],
        &["--no-store"],
    );
    // An update is one HSET, as YCSB sends it.
    assert_eq!(delta(&u, "calls_hset"), 500.0, "{}", u["server"]);
    assert_eq!(delta(&u, "calls_evalsha"), 0.0, "{}", u["server"]);

    // Checked writes (an update of a missing key is NOT_FOUND) go through
    // a script, which the server counts as well.
    let c = phase(
        "run",
        "workloads/workloada",
        &[
            "-p",
            "readproportion=0",
            "-p",
            "updateproportion=1",
            "-p",
            "redis.checked=true",
        ],
        &["--no-store"],
    );
    assert!(delta(&c, "calls_evalsha") >= 500.0, "{}", c["server"]);
}

#[cfg(feature = "mysql")]
#[test]
fn mariadb_read_only_run_reads_rows_and_updates_none() {
    use sojourn_testkit::mariadb_server::Mariadb;
    let Some(db) = Mariadb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = db.url();
    let common = [
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=500",
        "-threads",
        "2",
        "--no-store",
    ];
    let phase = |cmd: &str, workload: &str, extra: &[&str]| {
        let args: Vec<&str> = [cmd, url.as_str(), "-P", workload]
            .into_iter()
            .chain(common)
            .chain(extra.iter().copied())
            .collect();
        report(dir.path(), &args)
    };
    let l = phase("load", "workloads/workloadc", &["--drop"]);
    assert!(delta(&l, "com_stmt_execute") >= 300.0, "{}", l["server"]);
    let r = phase("run", "workloads/workloadc", &[]);
    // One key lookup per read, at least.
    assert!(delta(&r, "handler_read_key") >= 500.0, "{}", r["server"]);
    // One statement per operation: no extra round trip (a reset, a
    // status query, a re-prepare) rides along with a read.
    assert_eq!(delta(&r, "com_stmt_execute"), 500.0, "{}", r["server"]);
    assert_eq!(delta(&r, "handler_update"), 0.0, "{}", r["server"]);
    assert_eq!(delta(&r, "handler_delete"), 0.0, "{}", r["server"]);
    let u = phase(
        "run",
        "workloads/workloada",
        &["-p", "readproportion=0", "-p", "updateproportion=1"],
    );
    assert!(delta(&u, "handler_update") > 0.0, "{}", u["server"]);
}
