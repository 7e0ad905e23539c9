//! The key-value workload (`workload=keyvalue`) end to end against real
//! Redis and PostgreSQL servers: a load that writes every key, a run whose
//! writers continue from the keys found and whose reads all verify,
//! yb-sample-apps' status line, and the shipped `suites/yb-keyvalue` run by
//! `sojourn suite` (and refused on several client processes).

mod util;

use std::path::{Path, PathBuf};

use sojourn_core::backend::Status;
use sojourn_core::op::OpKind;
use sojourn_store::{Filter, RunStatus, Store};
use sojourn_testkit::postgres_server::Postgres;
use sojourn_testkit::redis_server::RedisServer;
use util::*;

/// Load 2,000 keys, then run 4,000 reads beside 500 writes, each pool at
/// its own rate, with 1,000 new keys left to insert: the writers insert
/// 500 of them.
fn load_then_run(url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--db",
        url,
        "-P",
        "workloads/keyvalue",
        "-p",
        "value_size=64",
        "--seed",
        "3",
    ];
    let args = |extra: &[&'static str]| -> Vec<&str> {
        common
            .iter()
            .copied()
            .chain(extra.iter().copied())
            .collect()
    };
    let load = ok(&sojourn(
        dir.path(),
        &[
            &["load"][..],
            &args(&["-p", "num_unique_keys=2000", "--drop"]),
        ]
        .concat(),
    ));
    let s = parse_summary(&load);
    assert_eq!(get(&s, "INSERT", "Return=OK"), 2000.0);

    let out = sojourn(
        dir.path(),
        &[
            &["run", "-s"][..],
            &args(&[
                "-p",
                "num_unique_keys=3000",
                "-p",
                "num_reads=4000",
                "-p",
                "num_writes=500",
                "-p",
                "num_threads_read=3",
                "-p",
                "num_threads_write=2",
                // Two seconds at these rates: long enough for status lines.
                "-p",
                "read_rate=2000",
                "-p",
                "write_rate=250",
                "-p",
                "status.interval=0.5",
            ]),
        ]
        .concat(),
    );
    let s = parse_summary(&ok(&out));
    assert_eq!(get(&s, "READ", "Return=OK"), 4000.0, "every read verifies");
    assert_eq!(get(&s, "INSERT", "Return=OK"), 500.0);
    assert_eq!(get_or_zero(&s, "UPDATE", "Return=OK"), 0.0);
    assert_eq!(get_or_zero(&s, "READ", "Return=UNEXPECTED_STATE"), 0.0);
    assert_eq!(get_or_zero(&s, "READ", "Return=NOT_FOUND"), 0.0);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("run: 2000 keys written before this phase"),
        "{stderr}"
    );
    // The run's writers took keys 2000..2499, and say so.
    assert!(stderr.contains("maxWrittenKey 2499"), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("Read: "))
        .unwrap_or_else(|| panic!("no yb-sample-apps status line in {stderr}"));
    for part in [
        "ops/sec (",
        "ms/op), ",
        "total ops | Write: ",
        "| maxWrittenKey: ",
    ] {
        assert!(line.contains(part), "{line}");
    }
}

#[test]
fn redis() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    load_then_run(&format!("redis://127.0.0.1:{}", server.port()));
}

#[test]
fn postgres() {
    let Some(server) = Postgres::start() else {
        return;
    };
    load_then_run(&server.url());
}

#[test]
fn a_run_that_would_never_end_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = refused(
        dir.path(),
        &[
            "run",
            "--db",
            "memory:",
            "-P",
            "workloads/keyvalue",
            "-p",
            "num_reads=-1",
        ],
    );
    assert!(
        stderr.contains("num_reads") && stderr.contains("maxexecutiontime"),
        "{stderr}"
    );
}

/// The shipped suite folder, copied unchanged into `dir` (the suite writes
/// its markers beside the configs).
fn copy_suite(dir: &Path) -> PathBuf {
    let suite = dir.join("yb-keyvalue");
    std::fs::create_dir(&suite).unwrap();
    let shipped = repo_root().join("suites/yb-keyvalue");
    for e in std::fs::read_dir(&shipped).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), suite.join(e.file_name())).unwrap();
    }
    suite
}

/// `sojourn suite` on the copied folder, with its own store and data
/// directory.
fn suite(dir: &Path, suite: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .arg("suite")
        .arg(suite)
        .arg("--results")
        .arg(dir.join("results.sqlite"))
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--no-progress")
        .args(args)
        .run_to_end()
}

/// The three stages of suites/yb-keyvalue against a real Redis, scaled
/// down: 3,000 keys loaded at 2,000 inserts/s, then one second of each
/// read-heavy stage at the shipped rates.
#[test]
fn shipped_suite_runs_against_redis() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_suite(dir.path());
    let write_rate = 2000.0;
    let out = suite(
        dir.path(),
        &folder,
        &[
            "--db",
            &server.url(),
            "--flag",
            "ycsb_load_parameters=num_writes=3000,write_rate=2000",
            "--flag",
            "sojourn_parameters=num_unique_keys=20000",
            "--flag",
            "ycsb_timelimit=1",
        ],
    );
    let stdout = ok(&out);
    assert!(
        stdout.contains("All tests have passed"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let store = Store::open(&dir.path().join("results.sqlite").to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    let mut experiments: Vec<&str> = runs
        .iter()
        .map(|r| r.meta.labels["experiment"].as_str())
        .collect();
    experiments.sort();
    assert_eq!(
        experiments,
        ["random_read_heavy", "recent_read_heavy", "steady_load"]
    );
    let mut inserted = 0;
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
        let stored = store.load(r.meta.id.as_str()).unwrap();
        let ops =
            |kind: OpKind, status: Status| stored.total.op(kind).map_or(0, |o| o.count_of(status));
        inserted += ops(OpKind::Insert, Status::Ok);
        // Every value read matched its key; every key read was there.
        let reads = stored.total.op(OpKind::Read).map_or(0, |o| o.count());
        assert_eq!(ops(OpKind::Read, Status::UnexpectedState), 0, "{r:#?}");
        assert_eq!(ops(OpKind::Read, Status::Ok), reads, "{r:#?}");
        let totals = r.totals.as_ref().unwrap();
        match r.meta.labels["experiment"].as_str() {
            "steady_load" => {
                assert_eq!(r.meta.phase, "load");
                assert_eq!(totals.operations, 3000);
                // Poisson arrivals: 3,000 of them vary by about 2%.
                let rate = totals.throughput;
                assert!(
                    (0.8 * write_rate..=1.1 * write_rate).contains(&rate),
                    "{rate:.0} inserts/s for a write_rate of {write_rate}"
                );
            }
            "recent_read_heavy" => {
                assert!(reads > 0, "{r:#?}");
                // The writers go on inserting keys beyond the load's.
                assert!(ops(OpKind::Insert, Status::Ok) > 0, "{r:#?}");
            }
            _ => assert_eq!(r.meta.phase, "run"),
        }
    }
    // Every acknowledged insert is a key in Redis (YCSB's index of keys
    // holds each once).
    assert_eq!(
        server.command(&["ZCARD", "_indices"]),
        format!(":{inserted}")
    );
}

/// A keyvalue stage on two client processes would insert the same keys
/// twice: every config of the folder is refused before anything runs.
#[test]
fn the_shipped_suite_on_two_clients_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_suite(dir.path());
    let out = suite(dir.path(), &folder, &["--flag", "num_vms=2"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    for config in [
        "steady-load.yaml",
        "random-read-heavy.yaml",
        "recent-read-heavy.yaml",
    ] {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("error: {config}")))
            .unwrap_or_else(|| panic!("no error for {config}:\n{stderr}"));
        assert!(
            line.contains("keyvalue") && line.contains("set num_vms: 1"),
            "{line}"
        );
    }
    assert!(stderr.contains("nothing was run"), "{stderr}");
    assert!(text(&out.stdout).contains("Some tests have failures"));
}

/// `sojourn capacity` offers one target to every connection: it refuses
/// the workload's two pools and says what to run instead.
#[test]
fn capacity_refuses_the_workload_and_says_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = refused(
        dir.path(),
        &[
            "capacity",
            "--db",
            "memory:",
            "-P",
            "workloads/keyvalue",
            "--slo",
            "read.p99<10ms",
        ],
    );
    assert!(
        stderr.contains("workload=keyvalue") && stderr.contains("read_rate"),
        "{stderr}"
    );
}
