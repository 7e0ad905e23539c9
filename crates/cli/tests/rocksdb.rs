//! End to end on RocksDB: `load` then `run` of workloads A and E through
//! the binary, by URL and by YCSB's `rocksdb.dir` property, and the error a
//! second process gets while another holds the database.
#![cfg(feature = "rocksdb")]

mod util;

use util::*;

const OPS: f64 = 3000.0;

fn load_and_run(db: &[&str], data: &std::path::Path, workload: &str) -> Summary {
    let mut load = vec!["load"];
    load.extend_from_slice(db);
    load.extend_from_slice(&["-P", workload, "-threads", "4"]);
    let s = parse_summary(&ok(&sojourn(data, &load)));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0, "{workload} load");
    let mut run = vec!["run"];
    run.extend_from_slice(db);
    run.extend_from_slice(&[
        "-P",
        workload,
        "-p",
        "operationcount=3000",
        "-threads",
        "8",
        "--seed",
        "7",
    ]);
    parse_summary(&ok(&sojourn(data, &run)))
}

#[test]
fn workload_a_by_url() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("rocksdb:{}", dir.path().join("db").display());
    let s = load_and_run(&["--db", &url], dir.path(), "workloads/workloada");
    let (r, u) = (
        get_or_zero(&s, "READ", "Return=OK"),
        get_or_zero(&s, "UPDATE", "Return=OK"),
    );
    assert_eq!(r + u, OPS, "every operation succeeded: {s:#?}");
    assert!(r > 1000.0 && u > 1000.0, "{r} reads, {u} updates");
    assert!(get(&s, "OVERALL", "Throughput(ops/sec)") > 0.0);
    assert!(
        get(&s, "READ", "99thPercentileLatency(us)")
            >= get(&s, "READ", "95thPercentileLatency(us)")
    );
}

#[test]
fn workload_e_by_ycsb_property() {
    let dir = tempfile::tempdir().unwrap();
    let prop = format!("rocksdb.dir={}", dir.path().join("db").display());
    let s = load_and_run(&["rocksdb", "-p", &prop], dir.path(), "workloads/workloade");
    let (scans, inserts) = (
        get_or_zero(&s, "SCAN", "Return=OK"),
        get_or_zero(&s, "INSERT", "Return=OK"),
    );
    assert_eq!(scans + inserts, OPS, "every operation succeeded: {s:#?}");
    assert!(
        scans > 2500.0 && inserts > 50.0,
        "{scans} scans, {inserts} inserts"
    );
}

/// RocksDB lets one process open a directory: while this test process has
/// it open, `sojourn load` fails at once with a message that says why.
#[test]
fn a_second_process_gets_a_clear_error() {
    use sojourn_core::backend::{Backend, Schema};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let holder = sojourn_backends::RocksBackend::new(&path);
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(holder.prepare(&Schema::ycsb("usertable", "field", 10), false))
        .expect("prepare");

    let url = format!("rocksdb:{}", path.display());
    let out = sojourn(
        dir.path(),
        &["load", "--db", &url, "-P", "workloads/workloada"],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("in use by another process"), "{err}");
    assert!(err.contains(&url), "{err}");
    assert!(!text(&out.stdout).contains("[OVERALL]"));
    drop(holder);

    // Once it is closed, the same command works.
    let s = parse_summary(&ok(&sojourn(
        dir.path(),
        &["load", "--db", &url, "-P", "workloads/workloada"],
    )));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0);
}
