//! End to end against a real `redis-server`: YCSB's command line as a YCSB
//! user types it, workloads A and E, the string layout, the multiplexed
//! topology, passwords kept out of every output, and runs that go on (and
//! print their summary) while the server pauses or restarts.
#![cfg(feature = "redis")]

mod running;
mod util;

use std::time::Duration;

use running::spawn_until_running;
use sojourn_testkit::redis_server::RedisServer;
use util::*;

fn host_port(server: &RedisServer) -> [String; 4] {
    [
        "-p".into(),
        "redis.host=127.0.0.1".into(),
        "-p".into(),
        format!("redis.port={}", server.port()),
    ]
}

fn run(data: &std::path::Path, args: &[&str]) -> Summary {
    parse_summary(&ok(&sojourn(data, args)))
}

fn with(base: &[&str], extra: &[String]) -> Vec<String> {
    base.iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn workload_a_as_a_ycsb_user_types_it() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hp = host_port(&server);
    let load = with(
        &[
            "load",
            "redis",
            "-P",
            "workloads/workloada",
            "-threads",
            "4",
        ],
        &hp,
    );
    let s = run(dir.path(), &strs(&load));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0);
    // YCSB's layout: 1000 hashes and the _indices sorted set.
    assert_eq!(server.command(&["DBSIZE"]), ":1001");
    assert_eq!(server.command(&["ZCARD", "_indices"]), ":1000");
    let args = with(
        &[
            "run",
            "redis",
            "-P",
            "workloads/workloada",
            "-p",
            "operationcount=4000",
            "-threads",
            "16",
        ],
        &hp,
    );
    let s = run(dir.path(), &strs(&args));
    let reads = get(&s, "READ", "Return=OK");
    let updates = get(&s, "UPDATE", "Return=OK");
    assert_eq!(reads + updates, 4000.0, "{s:#?}");
    assert!(reads > 1500.0 && updates > 1500.0, "{s:#?}");
    assert!(get(&s, "OVERALL", "Throughput(ops/sec)") > 0.0);
    // Exactly the issue's command line.
    let args = with(&["run", "redis", "-P", "workloads/workloadc"], &hp);
    let mut args = args;
    args.extend(["-threads".to_string(), "16".to_string()]);
    let s = run(dir.path(), &strs(&args));
    assert_eq!(get(&s, "READ", "Return=OK"), 1000.0);
}

#[test]
fn workload_e_scans_ycsbs_index() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("redis://127.0.0.1:{}", server.port());
    let s = run(
        dir.path(),
        &[
            "load",
            "--db",
            &url,
            "-P",
            "workloads/workloade",
            "-threads",
            "4",
        ],
    );
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0);
    let s = run(
        dir.path(),
        &[
            "run",
            "--db",
            &url,
            "-P",
            "workloads/workloade",
            "-p",
            "operationcount=2000",
            "-threads",
            "4",
        ],
    );
    let scans = get(&s, "SCAN", "Return=OK");
    let inserts = get(&s, "INSERT", "Return=OK");
    assert_eq!(scans + inserts, 2000.0, "{s:#?}");
    assert!(scans > 1700.0 && inserts > 30.0, "{s:#?}");
    // Inserted records are indexed too.
    assert_eq!(
        server.command(&["ZCARD", "_indices"]),
        format!(":{}", 1000.0 + inserts)
    );
}

#[test]
fn passwords_stay_out_of_every_output() {
    let secret = "Tr0ub4dor&3";
    let Some(server) = RedisServer::start(Some(secret)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let hp = host_port(&server);
    // From the environment, as YCSB users of secrets managers do.
    let load = with(&["load", "redis", "-P", "workloadc", "-s"], &hp);
    let out = bin()
        .args(&load)
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--no-progress")
        .env("REDIS_PASSWORD", secret)
        .run_to_end();
    let stdout = ok(&out);
    assert_eq!(get(&parse_summary(&stdout), "INSERT", "Return=OK"), 1000.0);
    assert!(!text(&out.stderr).contains(secret));
    // As YCSB's property, and in a URL.
    let mut args = with(&["run", "redis", "-P", "workloadc"], &hp);
    args.extend(["--json".into(), json.display().to_string()]);
    args.extend(["-p".into(), format!("redis.password={secret}")]);
    let out = sojourn(dir.path(), &strs(&args));
    let stdout = ok(&out);
    let report = std::fs::read_to_string(&json).unwrap();
    for shown in [&stdout, &text(&out.stderr), &report] {
        assert!(!shown.contains(secret), "password shown:\n{shown}");
    }
    let url = format!("redis://:{secret}@127.0.0.1:{}", server.port());
    let out = sojourn(
        dir.path(),
        &["run", "--db", &url, "-P", "workloadc", "--format", "json"],
    );
    let stdout = ok(&out);
    assert!(stdout.contains(&format!(
        "\"backend\": \"redis://127.0.0.1:{}\"",
        server.port()
    )));
    assert!(!stdout.contains(secret) && !text(&out.stderr).contains(secret));
    // A wrong password is a clear error, without the password.
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "redis",
            "-P",
            "workloadc",
            "-p",
            &hp[1],
            "-p",
            &hp[3],
            "-p",
            "redis.password=nope-nope",
        ],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("WRONGPASS") || err.contains("invalid"),
        "{err}"
    );
    assert!(
        !err.contains("nope-nope") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn string_layout_multiplexed() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hp = host_port(&server);
    let common = ["-p", "redis.mode=string", "-p", "fieldcount=1"];
    let mut load = with(&["load", "redis", "-P", "workloadc"], &hp);
    load.extend(common.iter().map(|s| s.to_string()));
    assert_eq!(
        get(&run(dir.path(), &strs(&load)), "INSERT", "Return=OK"),
        1000.0
    );
    assert_eq!(server.command(&["DBSIZE"]), ":1000");
    let json = dir.path().join("m.json");
    let mut args = with(
        &[
            "run",
            "redis",
            "-P",
            "workloada",
            "-threads",
            "16",
            "-p",
            "connections=2",
            "-p",
            "operationcount=5000",
            "--json",
            json.to_str().unwrap(),
        ],
        &hp,
    );
    args.extend(common.iter().map(|s| s.to_string()));
    let s = run(dir.path(), &strs(&args));
    assert_eq!(
        get(&s, "READ", "Return=OK") + get(&s, "UPDATE", "Return=OK"),
        5000.0,
        "{s:#?}"
    );
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(
        report.contains("(redis.mode=string; 16 in flight over 2 connections)"),
        "{report}"
    );
    // More than one field cannot be one string: refused up front.
    let out = sojourn(
        dir.path(),
        &strs(&with(
            &["run", "redis", "-P", "workloadc", "-p", "redis.mode=string"],
            &hp,
        )),
    );
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("fieldcount=1"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// Strings where a run reads hashes (a whitepaper suite's data, then an
/// ordinary workload A): `bench` refuses before any operation, naming the
/// setting that reads them; `run` fails every operation, says why as Redis
/// said it (in the warning, the JSON report and the store), exits 1, and
/// loses nothing; the pipelined path says the same.
#[test]
fn string_data_read_as_hashes() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hp = host_port(&server);
    let mut load = with(&["load", "redis", "-P", "workloadc"], &hp);
    load.extend(["-p", "redis.mode=string", "-p", "fieldcount=1"].map(String::from));
    assert_eq!(
        get(&run(dir.path(), &strs(&load)), "INSERT", "Return=OK"),
        1000.0
    );

    let err = refused(
        dir.path(),
        &strs(&with(&["bench", "redis", "-P", "workloada"], &hp)),
    );
    assert!(
        err.contains("-p redis.mode=string") && err.contains("--drop") && err.contains("strings"),
        "{err}"
    );
    assert!(!err.contains("Return="), "nothing ran: {err}");
    assert_eq!(server.command(&["DBSIZE"]), ":1000");

    const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    let json = dir.path().join("run.json");
    let args = with(
        &[
            "run",
            "redis",
            "-P",
            "workloada",
            "-p",
            "operationcount=500",
            "--json",
            json.to_str().unwrap(),
        ],
        &hp,
    );
    let out = sojourn(dir.path(), &strs(&args));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}
{stderr}"
    );
    let s = parse_summary(&stdout);
    let (reads, updates) = (
        get(&s, "READ", "Return=ERROR"),
        get(&s, "UPDATE", "Return=ERROR"),
    );
    assert_eq!(reads + updates, 500.0, "{s:#?}");
    assert!(
        stderr.contains(&format!(
            "{reads} of {reads} READ operations did not succeed: {reads} × {WRONGTYPE} (first at "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: the phase failed: ") && stderr.contains("every one of them"),
        "{stderr}"
    );
    assert!(stderr.contains("recorded as run"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (op, n) in [("read", reads), ("update", updates)] {
        let f = &report["ops"][op]["failures"][0];
        assert_eq!(f["text"], WRONGTYPE, "{report}");
        assert_eq!(f["count"].as_f64(), Some(n), "{report}");
        assert!(f["first_at_s"].as_f64().is_some_and(|t| t >= 0.0), "{f}");
    }
    // The report shows them too, from the store.
    let html = dir.path().join("r.html");
    ok(&bin()
        .args(["report", "last", "-o", html.to_str().unwrap(), "--data-dir"])
        .arg(dir.path())
        .run_to_end());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h3>Failed operations</h3>") && page.contains(WRONGTYPE),
        "the report's failures table"
    );
    let rows = query_rows(
        dir.path(),
        "SELECT op, failures, first_text FROM run_failures ORDER BY op",
    );
    assert_eq!(
        rows,
        serde_json::json!([
            {"op": "read", "failures": reads as u64, "first_text": WRONGTYPE},
            {"op": "update", "failures": updates as u64, "first_text": WRONGTYPE},
        ])
    );

    let mut pipelined = with(
        &[
            "run",
            "redis",
            "-P",
            "workloadc",
            "-threads",
            "8",
            "-p",
            "connections=2",
            "-p",
            "operationcount=400",
        ],
        &hp,
    );
    pipelined.extend(["-p", "max_error_rate=none"].map(String::from));
    let out = sojourn(dir.path(), &strs(&pipelined));
    let stderr = ok(&out).to_string() + &text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "400 of 400 READ operations did not succeed: 400 × {WRONGTYPE}"
        )),
        "-p max_error_rate=none exits 0 whatever fails, and the words are the same: {stderr}"
    );

    // Repetitions and a capacity search carry the failed phase to their
    // own exit status, once everything is shown.
    let repeated = with(
        &[
            "run",
            "redis",
            "-P",
            "workloadc",
            "-p",
            "operationcount=50",
            "--repeat",
            "2",
        ],
        &hp,
    );
    let out = sojourn(dir.path(), &strs(&repeated));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("recorded 2 repetitions as group")
            && err.contains("error: repetition 1 of 2: the phase failed: 50 of 50 READ"),
        "{err}"
    );
    let capacity = with(
        &[
            "capacity",
            "redis",
            "-P",
            "workloadc",
            "--slo",
            "read.p90<200ms",
            "--start",
            "400",
            "--step",
            "0.3",
            "--settle",
            "0",
        ],
        &hp,
    );
    let out = sojourn(dir.path(), &strs(&capacity));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        text(&out.stdout).contains("latency-throughput curve")
            && err.contains("error: step 1 (target 400.0): the phase failed: ")
            && err.contains(" every one of them; most often: ")
            && err.contains(&format!(" × {WRONGTYPE}. What was measured")),
        "one step, shown, then the failure: {err}"
    );
}

/// A run at 1000 ops/s against `server`, with a 500 ms operation timeout,
/// started after loading 1000 records; returns it once it is running.
fn start_run(
    server: &RedisServer,
    data: &std::path::Path,
    ops: u64,
) -> (std::process::Child, std::thread::JoinHandle<String>) {
    let hp = host_port(server);
    let load = with(&["load", "redis", "-P", "workloadc"], &hp);
    run(data, &strs(&load));
    let args = with(
        &[
            "run",
            "redis",
            "-P",
            "workloadc",
            "-p",
            &format!("operationcount={ops}"),
            "-target",
            "1000",
            "-threads",
            "4",
            "-p",
            "timeout.ms=500",
            "-s",
            "-p",
            "status.interval=0.2",
        ],
        &hp,
    );
    spawn_until_running(data, &strs(&args))
}

#[test]
fn server_pause_longer_than_the_timeout() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(&server, dir.path(), 5000);
    // YCSB 0.17 exits with status 0 and no summary here.
    assert_eq!(server.command(&["CLIENT", "PAUSE", "2000"]), "+OK");
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    let okc = get(&s, "READ", "Return=OK");
    let errors = get(&s, "READ", "Return=ERROR");
    assert_eq!(okc + errors, 5000.0, "{s:#?}");
    // Each connection times out about every 500 ms during the pause.
    assert!((4.0..=40.0).contains(&errors), "{errors} errors: {s:#?}");
    // Errors took the timeout; queued operations show the whole stall.
    assert!(
        get(&s, "READ-FAILED", "MinLatency(us)") >= 450_000.0,
        "{s:#?}"
    );
    assert!(
        get(&s, "Intended-READ", "MaxLatency(us)") >= 1_400_000.0,
        "{s:#?}"
    );
    assert!(get(&s, "OVERALL", "RunTime(ms)") >= 4500.0);
    assert_stall_blamed_on_the_database(&stderr);
}

#[test]
fn server_killed_and_restarted() {
    let Some(mut server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(&server, dir.path(), 4000);
    server.server.kill();
    // The outage: the length of the injected fault, not a synchronisation.
    std::thread::sleep(Duration::from_millis(800));
    server.restart();
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    let okc = get_or_zero(&s, "READ", "Return=OK");
    let errors = get(&s, "READ", "Return=ERROR");
    // The restarted server is empty (nothing persisted).
    let missing = get(&s, "READ", "Return=NOT_FOUND");
    assert_eq!(okc + errors + missing, 4000.0, "{s:#?}");
    assert!(errors >= 4.0 && missing > 1000.0, "{s:#?}");
    // Another server answered the last reading of the counters: said, and
    // no server figures drawn from the two.
    assert!(
        stderr.contains("restarted") && !stderr.lines().any(|l| l.starts_with("server: ")),
        "{stderr}"
    );
    // Operations queued while the server was down.
    assert!(
        get(&s, "Intended-READ-FAILED", "MaxLatency(us)") >= 300_000.0
            || get(&s, "Intended-READ", "MaxLatency(us)") >= 300_000.0,
        "{s:#?}"
    );
}

#[test]
fn connections_cut_by_the_server() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = start_run(&server, dir.path(), 4000);
    let cut = || {
        let n = server.command(&["CLIENT", "KILL", "TYPE", "normal"]);
        n.trim_start_matches(':').parse::<u64>().unwrap()
    };
    // Every connection of the run, each time.
    assert!(cut() >= 4);
    // The gap between the two cuts: the fault's shape, not a
    // synchronisation.
    std::thread::sleep(Duration::from_millis(500));
    assert!(cut() >= 4);
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    let okc = get(&s, "READ", "Return=OK");
    let errors = get_or_zero(&s, "READ", "Return=ERROR");
    // Every operation counted once, by its status; the run went on over
    // new connections.
    assert_eq!(okc + errors, 4000.0, "{s:#?}\n{stderr}");
    assert!(errors <= 40.0 && okc >= 3900.0, "{s:#?}");
}

#[test]
fn tls_end_to_end() {
    let Some(server) = RedisServer::start_tls(true) else {
        return;
    };
    let files = server.tls.clone().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let tls = [
        "-p".to_string(),
        format!("redis.tls.ca={}", files.ca.display()),
        "-p".to_string(),
        format!("redis.tls.cert={}", files.client_cert.display()),
        "-p".to_string(),
        format!("redis.tls.key={}", files.client_key.display()),
    ];
    let load = with(
        &["load", "--db", &url, "-P", "workloadc", "-threads", "4"],
        &tls,
    );
    assert_eq!(
        get(&run(dir.path(), &strs(&load)), "INSERT", "Return=OK"),
        1000.0
    );
    let args = with(
        &[
            "run",
            "--db",
            &url,
            "-P",
            "workloada",
            "-threads",
            "8",
            "-p",
            "connections=2",
        ],
        &tls,
    );
    let s = run(dir.path(), &strs(&args));
    assert_eq!(
        get(&s, "READ", "Return=OK") + get(&s, "UPDATE", "Return=OK"),
        1000.0,
        "{s:#?}"
    );
}

#[test]
fn workload_a_costs_the_server_what_ycsb_costs_it() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let shape = ["-p", "recordcount=2000", "-p", "fieldcount=1"];
    let mut load = vec!["load", "--db", &url, "-P", "workloada", "-threads", "4"];
    load.extend(shape);
    ok(&sojourn(dir.path(), &load));
    let before = server.commandstats();
    let mut run = vec!["run", "--db", &url, "-P", "workloada", "-threads", "4"];
    run.extend(shape);
    run.extend(["-p", "operationcount=20000", "--seed", "3"]);
    ok(&sojourn(dir.path(), &run));
    let delta = server.commands_since(&before);
    assert!(
        !delta
            .keys()
            .any(|k| k.starts_with("eval") || k.starts_with("script")),
        "{delta:?}"
    );
    // Reads and updates, one command each; the run's own connections add
    // a handshake each (PING, INFO for the server's counters, ...).
    let per_op = delta.values().sum::<u64>() as f64 / 20_000.0;
    assert!(per_op <= 1.05, "{per_op} commands per operation: {delta:?}");
    assert!(
        delta.get("hgetall").copied().unwrap_or(0) + delta.get("hset").copied().unwrap_or(0)
            >= 20_000,
        "{delta:?}"
    );
}

/// memtier's JSON as `--json-out-file` wrote it.
fn memtier_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn count(stats: &serde_json::Value, row: &str) -> u64 {
    stats[row]["Count"]
        .as_u64()
        .unwrap_or_else(|| panic!("{row}: {stats:#}"))
}

/// A key of `prefix` then a number, its number.
fn key_number(key: &str, prefix: &str) -> u64 {
    key.strip_prefix(prefix)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{key:?} is not {prefix}N"))
}

/// memtier's and redis-benchmark's command lines against one server: each
/// makes exactly the commands it says, over the keys and values it says,
/// and prints (and writes) what its tool does.
#[test]
fn memtier_and_redis_benchmark_command_lines() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    memtier_ratio(&server, dir.path());
    memtier_commands(&server, dir.path());
    redis_benchmark_tests(&server, dir.path());
    memtier_rate_limit_through_a_stall(&server, dir.path());
    let refused = peer_tool(dir.path(), "memtier", &["--cluster-mode"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("--cluster-mode is not one sojourn reads"),
        "{}",
        text(&refused.stderr)
    );
}

fn memtier_ratio(server: &RedisServer, data: &std::path::Path) {
    server.command(&["FLUSHALL"]);
    let json = data.join("ratio.json");
    let port = server.port().to_string();
    let before = server.commandstats();
    let line = format!(
        "-s 127.0.0.1 -p {port} --ratio 1:10 --key-pattern R:R -n 2000 -c 4 -t 2 -d 64 \
         --key-maximum 999 --json-out-file {}",
        json.display()
    );
    let out = peer_line(data, "memtier", &line, &[]);
    let stdout = ok(&out);
    let ran = server.commands_since(&before);
    let doc = memtier_json(&json);
    let stats = &doc["ALL STATS"];
    let (sets, gets) = (count(stats, "Sets"), count(stats, "Gets"));
    // The server ran what sojourn counted, and memtier's cycle: 2,000
    // requests on each of 8 connections, 1 SET then 10 GETs.
    assert_eq!((ran["set"], ran["get"]), (sets, gets), "{ran:?}");
    assert_eq!((sets, gets), (8 * 182, 8 * 1818));
    assert_eq!(count(stats, "Totals"), 16_000);
    // Keys within the range, values of the size asked.
    let keys: u64 = server.command(&["DBSIZE"])[1..].parse().unwrap();
    assert!((1..=1000).contains(&keys), "{keys}");
    for _ in 0..20 {
        let key = server.command(&["RANDOMKEY"]);
        assert!(key_number(&key, "memtier-") <= 999);
        assert_eq!(server.command(&["STRLEN", &key]), ":64");
    }
    // memtier's JSON shape: its members and each row's fields.
    assert_eq!(doc["configuration"]["ratio"], "1:10");
    assert_eq!(doc["run information"]["Threads"], 2);
    assert_eq!(doc["run information"]["Connections per thread"], 4);
    assert_eq!(doc["run information"]["Requests per client"], 2000);
    for field in ["Start time", "Finish time", "Total duration", "Time unit"] {
        assert!(stats["Runtime"].get(field).is_some(), "{field}: {doc:#}");
    }
    for row in ["Sets", "Gets", "Waits", "Totals"] {
        for field in [
            "Count",
            "Ops/sec",
            "Hits/sec",
            "Misses/sec",
            "Latency",
            "Average Latency",
            "Accumulated Latency",
            "Min Latency",
            "Max Latency",
            "KB/sec",
            "Percentile Latencies",
        ] {
            assert!(stats[row].get(field).is_some(), "{row} {field}: {doc:#}");
        }
    }
    let pct = &stats["Gets"]["Percentile Latencies"];
    let (p50, p999) = (
        pct["p50.00"].as_f64().unwrap(),
        pct["p99.90"].as_f64().unwrap(),
    );
    assert!(p50 > 0.0 && p50 <= p999, "{pct}");
    // Every GET is a hit or a miss; the server's keys were all set here.
    let g = &stats["Gets"];
    let f = |k: &str| g[k].as_f64().unwrap();
    assert!(
        (f("Hits/sec") + f("Misses/sec") - f("Ops/sec")).abs() < 0.05,
        "{g}"
    );
    assert!(f("Misses/sec") > 0.0 && f("Hits/sec") > 0.0, "{g}");
    // The table as memtier prints it.
    assert!(stdout.contains("2         Threads\n4         Connections per thread\n"));
    assert!(stdout.contains("\nALL STATS\n"), "{stdout}");
    for row in ["Sets ", "Gets ", "Waits ", "Totals "] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "{row}: {stdout}"
        );
    }
    assert!(stdout.contains("p99.9 Latency"), "{stdout}");
    // The pipelined path: 8 requests in flight on each of 2 sockets, 500
    // requests per socket as memtier counts them.
    let before = server.commandstats();
    let line = format!(
        "-s 127.0.0.1 -p {port} --ratio 1:3 -n 500 -c 2 -t 1 --pipeline 8 --key-maximum 999"
    );
    ok(&peer_line(data, "memtier", &line, &[]));
    let ran = server.commands_since(&before);
    assert_eq!(ran["set"] + ran["get"], 1000, "{ran:?}");
    assert!((200..=300).contains(&ran["set"]), "{ran:?}");
}

fn memtier_commands(server: &RedisServer, data: &std::path::Path) {
    server.command(&["FLUSHALL"]);
    let json = data.join("commands.json");
    let port = server.port().to_string();
    let before = server.commandstats();
    let line = format!(
        "-p {port} -s 127.0.0.1 -n 400 -c 2 -t 1 -d 16 --key-maximum 99 --json-out-file {}",
        json.display()
    );
    let templates = [
        "--command",
        "HSET __key__ f __data__",
        "--command-ratio",
        "1",
        "--command",
        "HGET __key__ f",
        "--command-ratio",
        "3",
    ];
    ok(&peer_line(data, "memtier", &line, &templates));
    let ran = server.commands_since(&before);
    let stats = &memtier_json(&json)["ALL STATS"];
    assert_eq!(
        (ran["hset"], ran["hget"]),
        (count(stats, "Hsets"), count(stats, "Hgets"))
    );
    assert_eq!((ran["hset"], ran["hget"]), (200, 600), "{ran:?}");
    for _ in 0..10 {
        let key = server.command(&["RANDOMKEY"]);
        assert!(key_number(&key, "memtier-") <= 99);
        assert_eq!(server.command(&["HGET", &key, "f"]).len(), 16);
    }
}

fn redis_benchmark_tests(server: &RedisServer, data: &std::path::Path) {
    server.command(&["FLUSHALL"]);
    let port = server.port().to_string();
    let before = server.commandstats();
    let out = peer_tool(
        data,
        "redis-benchmark",
        &[
            "-p", &port, "-t", "set,get", "-n", "10000", "-r", "1000", "-q", "-c", "8",
        ],
    );
    let stdout = ok(&out);
    let ran = server.commands_since(&before);
    assert_eq!((ran["set"], ran["get"]), (10_000, 10_000), "{ran:?}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for (line, test) in lines.iter().zip(["SET", "GET"]) {
        let rest = line
            .strip_prefix(&format!("{test}: "))
            .unwrap_or_else(|| panic!("{line}"));
        let (rps, p50) = rest
            .split_once(" requests per second, p50=")
            .unwrap_or_else(|| panic!("{line}"));
        let p50 = p50
            .strip_suffix(" msec")
            .unwrap_or_else(|| panic!("{line}"));
        assert!(rps.parse::<f64>().unwrap() > 0.0, "{line}");
        assert_eq!(p50.split_once('.').map(|(_, d)| d.len()), Some(3), "{line}");
    }
    // redis-benchmark's key space: key:NNNNNNNNNNNN below -r.
    let keys: u64 = server.command(&["DBSIZE"])[1..].parse().unwrap();
    assert!((1..=1000).contains(&keys), "{keys}");
    let key = server.command(&["RANDOMKEY"]);
    let n = key_number(&key, "key:");
    assert!(n < 1000 && key.len() == "key:".len() + 12, "{key}");
    assert_eq!(server.command(&["STRLEN", &key]), ":3");
    // --csv: the header, then a row per test.
    let csv = ok(&peer_tool(
        data,
        "redis-benchmark",
        &["-p", &port, "-t", "incr", "-n", "500", "--csv"],
    ));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[0].starts_with("\"test\",\"rps\",\"avg_latency_ms\""),
        "{csv}"
    );
    assert!(rows[1].starts_with("\"INCR\",\""), "{csv}");
    assert_eq!(rows[1].split(',').count(), 8, "{csv}");
    assert_eq!(server.command(&["GET", "counter:__rand_int__"]), "500");
}

/// `--rate-limiting`: an open loop whose latency counts from each
/// request's intended start, so a stalled server's backlog shows in it.
fn memtier_rate_limit_through_a_stall(server: &RedisServer, data: &std::path::Path) {
    use std::process::Stdio;
    let json = data.join("rate.json");
    let port = server.port().to_string();
    let before = server.commandstats();
    let child = bin()
        .args([
            "memtier",
            "-p",
            &port,
            "-s",
            "127.0.0.1",
            "--rate-limiting",
            "100",
            "-c",
            "2",
            "-t",
            "1",
            "--test-time",
            "3",
            "--ratio",
            "1:1",
            "--key-maximum",
            "99",
            "--json-out-file",
            json.to_str().unwrap(),
        ])
        .env("SOJOURN_DATA_DIR", data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run is under way once the server has served its first SET.
    let deadline = std::time::Instant::now() + RUNNING_LIMIT;
    while !server.commands_since(&before).contains_key("set") {
        assert!(
            std::time::Instant::now() < deadline,
            "no SET reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The stall: the length of the injected fault.
    assert_eq!(server.command(&["CLIENT", "PAUSE", "1000"]), "+OK");
    let out = finish(child);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let totals = &memtier_json(&json)["ALL STATS"]["Totals"];
    let n = totals["Count"].as_u64().unwrap();
    // 200 requests a second for 3 s, a Poisson count: within 4.5 sd.
    assert!((490..=710).contains(&n), "{totals}");
    // Requests due during the pause waited for it: up to its whole length.
    let max = totals["Max Latency"].as_f64().unwrap();
    assert!(max >= 800.0, "{totals}");
    let p99 = totals["Percentile Latencies"]["p99.00"].as_f64().unwrap();
    assert!(p99 >= 500.0, "{totals}");
}
