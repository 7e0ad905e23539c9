//! End to end against a real `memcached`: YCSB's command line
//! (`memcached -p memcached.hosts=...`), workloads A and E (whose scans are
//! NOT_IMPLEMENTED), and runs that go on, and print their summary, while
//! the server is stopped or killed and restarted.
#![cfg(feature = "memcached")]

mod running;
mod util;

use std::time::Duration;

use running::spawn_until_running;
use sojourn_testkit::memcached_server::MemcachedServer;
use util::*;

fn run(data: &std::path::Path, args: &[&str]) -> Summary {
    parse_summary(&ok(&sojourn(data, args)))
}

#[test]
fn workloads_a_and_e() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hosts = format!("memcached.hosts=127.0.0.1:{}", server.port());
    let s = run(
        dir.path(),
        &[
            "load",
            "memcached",
            "-P",
            "workloads/workloada",
            "-p",
            &hosts,
            "-threads",
            "4",
        ],
    );
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0);
    let s = run(
        dir.path(),
        &[
            "run",
            "memcached",
            "-P",
            "workloads/workloada",
            "-p",
            &hosts,
            "-p",
            "operationcount=4000",
            "-threads",
            "8",
        ],
    );
    let (reads, updates) = (get(&s, "READ", "Return=OK"), get(&s, "UPDATE", "Return=OK"));
    assert_eq!(reads + updates, 4000.0, "{s:#?}");
    assert!(reads > 1500.0 && updates > 1500.0, "{s:#?}");
    // Workload E: memcached cannot scan; inserts still work. Every scan
    // failing would fail the phase: max_error_rate=none runs it as YCSB.
    let s = run(
        dir.path(),
        &[
            "run",
            "--db",
            &server.url(),
            "-P",
            "workloads/workloade",
            "-p",
            "operationcount=1000",
            "-threads",
            "4",
            "-p",
            "connections=2",
            "-p",
            "max_error_rate=none",
        ],
    );
    let scans = get(&s, "SCAN", "Return=NOT_IMPLEMENTED");
    let inserts = get(&s, "INSERT", "Return=OK");
    assert_eq!(scans + inserts, 1000.0, "{s:#?}");
    assert!(scans > 850.0, "{s:#?}");
}

fn start_run(
    server: &MemcachedServer,
    data: &std::path::Path,
    ops: u64,
) -> (std::process::Child, std::thread::JoinHandle<String>) {
    let url = server.url();
    run(data, &["load", "--db", &url, "-P", "workloadc"]);
    spawn_until_running(
        data,
        &[
            "run",
            "--db",
            &url,
            "-P",
            "workloadc",
            "-p",
            &format!("operationcount={ops}"),
            "-target",
            "1000",
            "-threads",
            "4",
            "-p",
            "timeout.ms=300",
            "-s",
            "-p",
            "status.interval=0.2",
        ],
    )
}

#[test]
fn server_stopped_longer_than_the_timeout() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(&server, dir.path(), 3000);
    server.server.pause();
    std::thread::sleep(Duration::from_millis(1000));
    server.server.resume();
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    let errors = get(&s, "READ", "Return=ERROR");
    assert_eq!(get(&s, "READ", "Return=OK") + errors, 3000.0, "{s:#?}");
    assert!(errors >= 4.0, "{s:#?}");
    assert!(
        get(&s, "READ-FAILED", "MinLatency(us)") >= 250_000.0,
        "{s:#?}"
    );
    assert!(
        get(&s, "Intended-READ", "MaxLatency(us)") >= 700_000.0,
        "{s:#?}"
    );
}

#[test]
fn server_killed_and_restarted() {
    let Some(mut server) = MemcachedServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(&server, dir.path(), 3000);
    server.server.kill();
    // The outage: the length of the injected fault, not a synchronisation.
    std::thread::sleep(Duration::from_millis(600));
    server.restart();
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    let errors = get(&s, "READ", "Return=ERROR");
    let missing = get(&s, "READ", "Return=NOT_FOUND");
    assert_eq!(
        get_or_zero(&s, "READ", "Return=OK") + errors + missing,
        3000.0,
        "{s:#?}"
    );
    assert!(errors >= 4.0 && missing > 500.0, "{s:#?}");
}
