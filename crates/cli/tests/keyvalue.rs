//! The key-value workload (`workload=keyvalue`) end to end against real
//! Redis and PostgreSQL servers: a load that writes every key, a run whose
//! writers continue from the keys found and whose reads all verify, and
//! yb-sample-apps' status line.

mod util;

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
    let out = sojourn(
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
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("num_reads") && stderr.contains("maxexecutiontime"),
        "{stderr}"
    );
}
