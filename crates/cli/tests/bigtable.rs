//! End to end on the Bigtable emulator: `load` then `run` of workloads A
//! and E through the binary (by URL and by YCSB's properties), and runs at
//! a target rate that go on through a stalled emulator (SIGSTOP longer than
//! the operation timeout) and through a killed and restarted one.
#![cfg(feature = "bigtable")]

mod util;

use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use sojourn_testkit::bigtable_server::BigtableEmulator;
use util::*;

const OPS: f64 = 2000.0;

fn with_emulator(cmd: &mut Command, emulator: &BigtableEmulator) {
    cmd.env("BIGTABLE_EMULATOR_HOST", emulator.host());
}

fn run_ok(emulator: &BigtableEmulator, data: &std::path::Path, args: &[&str]) -> Summary {
    let mut cmd = bin();
    cmd.args(args)
        .arg("--data-dir")
        .arg(data)
        .arg("--no-progress");
    with_emulator(&mut cmd, emulator);
    parse_summary(&ok(&cmd.run_to_end()))
}

fn load_and_run(emulator: &BigtableEmulator, db: &[&str], workload: &str) -> Summary {
    let dir = tempfile::tempdir().unwrap();
    let mut load = vec!["load"];
    load.extend_from_slice(db);
    load.extend_from_slice(&["-P", workload, "-threads", "4"]);
    let s = run_ok(emulator, dir.path(), &load);
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0, "{workload} load");
    let mut run = vec!["run"];
    run.extend_from_slice(db);
    run.extend_from_slice(&[
        "-P",
        workload,
        "-p",
        "operationcount=2000",
        "-threads",
        "8",
        "--seed",
        "7",
    ]);
    run_ok(emulator, dir.path(), &run)
}

#[test]
fn workload_a_by_url() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    let s = load_and_run(
        &emulator,
        &["--db", "bigtable://proj/inst/usertable"],
        "workloads/workloada",
    );
    let (r, u) = (
        get_or_zero(&s, "READ", "Return=OK"),
        get_or_zero(&s, "UPDATE", "Return=OK"),
    );
    assert_eq!(r + u, OPS, "every operation succeeded: {s:#?}");
    assert!(r > 700.0 && u > 700.0, "{r} reads, {u} updates");
    assert!(get(&s, "OVERALL", "Throughput(ops/sec)") > 0.0);
}

#[test]
fn workload_e_by_ycsb_properties() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    let s = load_and_run(
        &emulator,
        &[
            "googlebigtable",
            "-p",
            "google.bigtable.project.id=proj",
            "-p",
            "google.bigtable.instance.id=inst",
            "-p",
            "table=ycsbtable",
            "-p",
            "columnfamily=cf",
        ],
        "workloads/workloade",
    );
    let (scans, inserts) = (
        get_or_zero(&s, "SCAN", "Return=OK"),
        get_or_zero(&s, "INSERT", "Return=OK"),
    );
    assert_eq!(scans + inserts, OPS, "every operation succeeded: {s:#?}");
    assert!(
        scans > 1600.0 && inserts > 30.0,
        "{scans} scans, {inserts} inserts"
    );
}

/// Spawn sojourn against the emulator and return it once its stderr shows
/// a status line; the rest of stderr is collected on a thread.
fn spawn_until_running(
    emulator: &BigtableEmulator,
    data: &std::path::Path,
    args: &[&str],
) -> (Child, JoinHandle<String>) {
    let mut cmd = bin();
    cmd.args(args)
        .arg("--data-dir")
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    with_emulator(&mut cmd, emulator);
    let mut child = cmd.spawn().unwrap();
    let rest = wait_until_running(&mut child, None);
    (child, rest)
}

const TIMEOUT_MS: f64 = 200.0;

fn load_small(emulator: &BigtableEmulator, data: &std::path::Path) {
    let s = run_ok(
        emulator,
        data,
        &[
            "load",
            "bigtable://proj/inst/usertable",
            "-P",
            "workloada",
            "-p",
            "recordcount=500",
        ],
    );
    assert_eq!(get(&s, "INSERT", "Return=OK"), 500.0);
}

/// 400 ops/s of workload A for 2400 operations (6 s) with a 200 ms
/// operation timeout.
fn faulty_run_args() -> Vec<&'static str> {
    vec![
        "run",
        "bigtable://proj/inst/usertable",
        "-P",
        "workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=2400",
        "-p",
        "timeout.ms=200",
        "-target",
        "400",
        "-threads",
        "4",
        "-s",
        "-p",
        "status.interval=0.2",
        "-p",
        "measurement.interval=both",
    ]
}

fn finish(child: Child, rest: JoinHandle<String>) -> (Summary, String) {
    let out = util::finish(child);
    let stderr = rest.join().unwrap();
    assert!(
        out.status.success(),
        "sojourn failed ({:?}):\n{stderr}",
        out.status
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("[OVERALL], RunTime(ms)"), "{stdout}");
    (parse_summary(&stdout), stderr)
}

fn total(s: &Summary, status: &str) -> f64 {
    ["READ", "UPDATE"]
        .iter()
        .map(|g| get_or_zero(s, g, &format!("Return={status}")))
        .sum()
}

#[test]
fn a_stalled_emulator_times_operations_out_and_the_run_goes_on() {
    let Some(emulator) = BigtableEmulator::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    load_small(&emulator, dir.path());
    let (child, rest) = spawn_until_running(&emulator, dir.path(), &faulty_run_args());
    emulator.pause();
    // The stall itself: five operation timeouts.
    std::thread::sleep(Duration::from_millis(1000));
    emulator.resume();
    let (s, _) = finish(child, rest);

    let (ok, errors) = (total(&s, "OK"), total(&s, "ERROR"));
    assert_eq!(ok + errors, 2400.0, "{s:#?}");
    // Each of the 4 connections has a request stuck for the timeout, again
    // and again while the emulator is stopped.
    assert!(errors >= 4.0, "{s:#?}");
    assert!(ok > 1500.0, "{s:#?}");
    let failed_max = ["READ-FAILED", "UPDATE-FAILED"]
        .iter()
        .map(|g| get_or_zero(&s, g, "MaxLatency(us)"))
        .fold(0.0, f64::max);
    assert!(
        failed_max >= TIMEOUT_MS * 1000.0 * 0.9,
        "timed-out operations take the timeout: {s:#?}"
    );
    // Operations queued behind the stall show it in response time.
    let intended_max = ["Intended-READ", "Intended-UPDATE"]
        .iter()
        .map(|g| get_or_zero(&s, g, "MaxLatency(us)"))
        .fold(0.0, f64::max);
    assert!(intended_max >= 500_000.0, "{s:#?}");
}

#[test]
fn a_killed_and_restarted_emulator_gives_errors_then_not_found() {
    let Some(mut emulator) = BigtableEmulator::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    load_small(&emulator, dir.path());
    let (child, rest) = spawn_until_running(&emulator, dir.path(), &faulty_run_args());
    emulator.server.kill();
    // Down for a moment: connections fail and back off.
    std::thread::sleep(Duration::from_millis(500));
    emulator.restart();
    // The emulator is in memory: the table is gone. Create it again (empty)
    // so that the rest of the run reads absent rows.
    let backend = sojourn_backends::BigtableBackend::new(
        sojourn_backends::bigtable::BigtableConfig::emulator(&emulator.host(), "proj", "inst"),
    );
    let schema = sojourn_core::backend::Schema::ycsb("usertable", "field", 10);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(sojourn_core::backend::Backend::prepare(
            &backend, &schema, false,
        ))
        .expect("recreating the table");
    let (s, _) = finish(child, rest);

    let (ok, errors, not_found) = (total(&s, "OK"), total(&s, "ERROR"), total(&s, "NOT_FOUND"));
    assert_eq!(ok + errors + not_found, 2400.0, "{s:#?}");
    assert!(ok > 0.0, "before the kill: {s:#?}");
    assert!(errors > 0.0, "while it was down: {s:#?}");
    assert!(not_found > 500.0, "after the restart: {s:#?}");
}
