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

/// memcached's own counters (`stats`), by name.
fn stats(server: &MemcachedServer) -> std::collections::BTreeMap<String, u64> {
    use std::io::{BufRead, Write};
    let s = std::net::TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    (&s).write_all(b"stats\r\n").unwrap();
    std::io::BufReader::new(&s)
        .lines()
        .map_while(Result::ok)
        .take_while(|l| l != "END")
        .filter_map(|l| {
            let mut w = l.split(' ').skip(1);
            Some((w.next()?.to_string(), w.next()?.parse().ok()?))
        })
        .collect()
}

/// `sojourn memtier -P memcache_text`: exactly the sets and gets it says,
/// a get of a key not there a miss, as memcached counts them.
#[test]
fn memtier_s_command_line_on_memcached() {
    let Some(server) = MemcachedServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("memtier.json");
    let port = server.port().to_string();
    let before = stats(&server);
    let line = format!(
        "-P memcache_text -s 127.0.0.1 -p {port} --ratio 1:10 -n 550 -c 2 -t 2 -d 32 \
         --key-maximum 99 --json-out-file {}",
        json.display()
    );
    let out = peer_line(dir.path(), "memtier", &line, &[]);
    let stdout = ok(&out);
    assert!(stdout.contains("\nALL STATS\n"), "{stdout}");
    let after = stats(&server);
    let delta = |k: &str| after[k] - before.get(k).copied().unwrap_or(0);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let st = &doc["ALL STATS"];
    // 550 requests on each of 4 connections: 50 cycles of 1 set, 10 gets.
    assert_eq!(delta("cmd_set"), 200);
    assert_eq!(delta("cmd_get"), 2000);
    assert_eq!(st["Sets"]["Count"], 200);
    assert_eq!(st["Gets"]["Count"], 2000);
    // Hits and misses as memcached counted them: the rates' shares of the
    // GETs' (memtier's JSON gives rates, to two places).
    let g = &st["Gets"];
    let share = |k: &str| g[k].as_f64().unwrap() / g["Ops/sec"].as_f64().unwrap() * 2000.0;
    let near = |a: f64, b: u64| (a - b as f64).abs() < 0.5;
    assert!(near(share("Hits/sec"), delta("get_hits")), "{g} {after:?}");
    assert!(
        near(share("Misses/sec"), delta("get_misses")),
        "{g} {after:?}"
    );
    assert!(delta("get_misses") > 0 && delta("get_hits") > 0);
    assert!(after["curr_items"] <= 100);
    // The pipelined path, a multi-get of 2 keys counting as 2 gets.
    let before = stats(&server);
    let line = format!(
        "-P memcache_text -s 127.0.0.1 -p {port} --ratio 1:4 --multiget-keys 2 -n 300 -c 2 \
         -t 1 --pipeline 4"
    );
    ok(&peer_line(dir.path(), "memtier", &line, &[]));
    let after = stats(&server);
    let delta = |k: &str| after[k] - before.get(k).copied().unwrap_or(0);
    // 600 requests in cycles of 1 set and 2 gets of 2 keys each: 200 sets
    // and 400 gets, memcached counting each key of a get.
    assert_eq!((delta("cmd_set"), delta("cmd_get")), (200, 800));
}
