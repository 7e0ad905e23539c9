//! Agents on hosts of their own: network namespaces on a private bridge
//! for the database (Redis), the results store (PostgreSQL), three agents
//! and the coordinator, every path to the database 2 ms slow each way.
//! The load inserts every key once; a run's merged histograms are the
//! bucket-for-bucket sum of the agents' stored runs, its offered total the
//! target, its clocks agree; an agent cut from the store for seconds loses
//! nothing; an agent killed mid-run leaves a partial stage that names it;
//! too few agents is a clear error before anything runs.
#![cfg(all(feature = "redis", feature = "store-postgres"))]

mod util;

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use sojourn_store::{Store, Value};
use sojourn_testkit::netns::{Host, Lan};
use sojourn_testkit::postgres_server::{self as pg, Postgres};
use sojourn_testkit::process::{finish_within, output_within};
use sojourn_testkit::redis_server::RedisServer;
use util::*;

const REDIS_PASSWORD: &str = "r3dis-netns";
/// Each way, between any host and the database.
const LATENCY: Duration = Duration::from_millis(2);

/// A `sojourn` command run in `host`, with the store's password and the
/// database's in its environment only.
fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sojourn"));
    c.args(args)
        .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
        .env("REDIS_PASSWORD", REDIS_PASSWORD)
        .env_remove("PGPASSWORD")
        .env_remove("SOJOURN_RESULTS");
    c
}

/// An agent process in a host of its own.
struct Agent {
    child: Option<Child>,
}

impl Agent {
    fn start(host: &Host, store: &str, data: &std::path::Path) -> Agent {
        let name = host.name.clone();
        let mut c = command(&["agent", "--results", store, "--name", &name]);
        c.arg("--data-dir")
            .arg(data.join(&name))
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        Agent {
            child: Some(host.run(move || c.spawn().unwrap())),
        }
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = finish_within(c, RUN_LIMIT);
        }
    }

    /// Stop it as Ctrl+C does; what it said on stderr.
    fn stop(&mut self) -> String {
        let c = self.child.take().unwrap();
        // SAFETY: our child, not yet waited for, so the pid is its.
        unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
        text(&finish_within(c, RUN_LIMIT).stderr)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Poll (bounded) until the agents named are registered, idle and alive.
fn wait_for_agents(store: &Store, names: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let agents = store.agents().unwrap();
        let idle = names
            .iter()
            .filter(|n| {
                agents
                    .iter()
                    .any(|a| &a.name == *n && a.state == "idle" && a.heartbeat_age_s < 5.0)
            })
            .count();
        if idle == names.len() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{idle} of {} agents idle: {agents:?}",
            names.len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One integer a query returns.
fn count(store: &Store, sql: &str) -> i64 {
    match &store.query(sql).unwrap().rows[0][0] {
        Value::Integer(i) => *i,
        v => panic!("{sql}: {v:?}"),
    }
}

/// The stage a coordinator's stderr says it recorded (`URI/STAGE`).
fn recorded(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("recorded as "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no `recorded as` in\n{stderr}"))
        .to_string()
}

#[test]
fn agents_on_hosts_of_their_own_merge_exactly_and_survive_faults() {
    let Some(lan) = Lan::new(&["db", "store", "coord", "a0", "a1", "a2"]) else {
        return;
    };
    let (db_host, store_host, coord) = (lan.host("db"), lan.host("store"), lan.host("coord"));
    let Some(redis) = db_host.run(|| RedisServer::start(Some(REDIS_PASSWORD))) else {
        return;
    };
    let Some(pg_server) = store_host.run(Postgres::start) else {
        return;
    };
    db_host.forward(redis.port(), LATENCY);
    store_host.forward(pg_server.port(), Duration::ZERO);
    let db = format!("redis://{}:{}", db_host.addr, redis.port());
    let store_url = format!(
        "postgres://{}@{}:{}/{}",
        pg::USER,
        store_host.addr,
        pg_server.port(),
        pg::DATABASE
    );
    let with_password = format!(
        "postgres://{}:{}@{}:{}/{}",
        pg::USER,
        pg::PASSWORD,
        store_host.addr,
        pg_server.port(),
        pg::DATABASE
    );
    // The test's own look at the store, from the coordinator's host.
    let store = coord.run(|| Store::open(&with_password).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let names = ["a0", "a1", "a2"];
    let mut agents: Vec<Agent> = names
        .iter()
        .map(|n| Agent::start(lan.host(n), &store_url, dir.path()))
        .collect();
    wait_for_agents(&store, &names);
    let coordinate = |args: &[&str]| -> Output {
        let mut c = command(args);
        c.args(["--results", &store_url, "--no-progress", "--data-dir"])
            .arg(dir.path().join("coord"));
        coord.run(move || output_within(&mut c, None, RUN_LIMIT))
    };
    let workload = [
        "-P",
        "workloadc",
        "-p",
        "recordcount=2000",
        "-p",
        "fieldcount=1",
    ];

    // The load: every key once, from three hosts.
    let mut load = vec!["load", db.as_str()];
    load.extend(workload);
    load.extend(["-threads", "4", "--agents", "3"]);
    let out = coordinate(&load);
    let (stdout, stderr) = (ok(&out), text(&out.stderr));
    assert_eq!(
        get(&parse_summary(&stdout), "INSERT", "Return=OK"),
        2000.0,
        "{stderr}"
    );
    assert_eq!(
        db_host.run(|| redis.command(&["ZCARD", "_indices"])),
        ":2000"
    );

    // A run at 1,500 ops/s in total: the merge is the exact sum of the
    // stored shares, the offered total the target, the clocks close.
    let mut run = vec!["run", db.as_str()];
    run.extend(workload);
    run.extend([
        "-p",
        "operationcount=0",
        "-p",
        "maxexecutiontime=3",
        "-threads",
        "4",
        "-target",
        "1500",
        "--agents",
        "3",
        "--format",
        "json",
    ]);
    let out = coordinate(&run);
    let (stdout, stderr) = (ok(&out), text(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["target_ops_per_sec"], 1500.0, "{report:#}");
    let offered = report["offered_ops_per_sec"].as_f64().unwrap();
    assert!((offered - 1500.0).abs() < 1500.0 * 0.1, "offered {offered}");
    let stage = recorded(&stderr);
    let whole = store.load_merged(&stage).unwrap();
    let (uri, index) = stage.split_once('/').unwrap();
    let mut sum = sojourn_core::histograms::Stats::default();
    let shares = store
        .query(&format!(
            "SELECT s.run_id, s.clock_offset_us, s.start_lateness_us FROM agent_shares s \
             JOIN agent_phases p ON p.id = s.phase_id \
             WHERE p.run_uri = '{uri}' AND p.stage_index = {index} ORDER BY s.share_index"
        ))
        .unwrap();
    assert_eq!(shares.rows.len(), 3);
    for row in &shares.rows {
        let id = row[0].as_text().unwrap();
        sum.add(&store.load(id).unwrap().total);
        // One machine's clock, a LAN's round trips: within milliseconds.
        for v in [&row[1], &row[2]] {
            let us = match v {
                Value::Real(r) => *r,
                v => panic!("{v:?}"),
            };
            assert!(us.abs() < 50_000.0, "{us} µs off: {stderr}");
        }
    }
    let (w, t) = (
        whole.total.kinds().next().unwrap().1,
        sum.kinds().next().unwrap().1,
    );
    assert_eq!((w.count(), &w.ok.response), (t.count(), &t.ok.response));
    // Every path to the database is 4 ms round trip or more.
    assert!(w.ok.service.min() >= 4_000_000, "{}", w.ok.service.min());
    assert!(!stderr.contains("clocks disagree"), "{stderr}");

    // An agent cut from the store for seconds loses nothing: its run
    // and every interval reach the store once the network is back.
    let mut long = vec!["run", db.as_str()];
    long.extend(workload);
    long.extend([
        "-p",
        "operationcount=0",
        "-p",
        "maxexecutiontime=6",
        "-p",
        "timeseries.interval=0.5",
        "-threads",
        "2",
        "-target",
        "600",
        "--agents",
        "3",
    ]);
    let (a1, store_host_c) = (lan.host("a1").clone(), store_host.clone());
    let cutter = std::thread::spawn({
        let store_url = with_password.clone();
        let coord = coord.clone();
        move || {
            let s = coord.run(|| Store::open(&store_url).unwrap());
            let deadline = Instant::now() + Duration::from_secs(60);
            while count(
                &s,
                "SELECT COUNT(*) FROM agent_shares WHERE state = 'running' AND agent = 'a1'",
            ) == 0
            {
                assert!(Instant::now() < deadline, "a1 never ran");
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(500));
            a1.cut_from(&store_host_c);
            std::thread::sleep(Duration::from_secs(3));
            a1.restore(&store_host_c);
        }
    });
    let out = coordinate(&long);
    cutter.join().unwrap();
    let (stdout, stderr) = (ok(&out), text(&out.stderr));
    let stage = recorded(&stderr);
    let (uri, index) = stage.split_once('/').unwrap();
    let runs = store
        .query(&format!(
            "SELECT id, status, (SELECT COUNT(*) FROM intervals i WHERE i.run_id = r.id) \
             FROM runs r WHERE run_uri = '{uri}' AND stage_index = {index}"
        ))
        .unwrap();
    assert_eq!(runs.rows.len(), 3, "{stderr}");
    for row in &runs.rows {
        assert_eq!(row[1].as_text(), Some("completed"), "{row:?}\n{stderr}");
        let intervals = match row[2] {
            Value::Integer(i) => i,
            _ => 0,
        };
        // Six seconds of half-second intervals, every one kept.
        assert!(
            (11..=14).contains(&intervals),
            "{intervals} intervals: {row:?}"
        );
    }
    let merged = store.load_merged(&stage).unwrap();
    let ops: u64 = merged.total.kinds().map(|(_, s)| s.count()).sum();
    assert_eq!(
        get(&parse_summary(&stdout), "READ", "Operations") as u64,
        ops
    );

    // An agent killed mid-run: the stage is partial and names it.
    let mut partial = vec!["run", db.as_str()];
    partial.extend(workload);
    partial.extend([
        "-p",
        "operationcount=0",
        "-p",
        "maxexecutiontime=14",
        "-target",
        "300",
        "--agents",
        "3",
    ]);
    let killer = {
        let store_url = with_password.clone();
        let coord = coord.clone();
        std::thread::spawn(move || {
            let s = coord.run(|| Store::open(&store_url).unwrap());
            let deadline = Instant::now() + Duration::from_secs(60);
            // Its run begun in the store, then killed.
            while count(
                &s,
                "SELECT COUNT(*) FROM agent_shares s JOIN agent_phases p ON p.id = s.phase_id \
                 JOIN runs r ON r.run_uri = p.run_uri AND r.stage_index = p.stage_index \
                 AND r.client_index = s.share_index \
                 WHERE s.agent = 'a0' AND s.state = 'running' AND r.status = 'running'",
            ) == 0
            {
                assert!(Instant::now() < deadline, "a0 never ran");
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let handle = {
        let mut c = command(&partial);
        c.args(["--results", &store_url, "--no-progress", "--data-dir"])
            .arg(dir.path().join("coord"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        coord.run(move || c.spawn().unwrap())
    };
    killer.join().unwrap();
    agents[0].kill();
    let out = finish_within(handle, RUN_LIMIT);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("agent a0 went silent") && stderr.contains("run phase is partial"),
        "{stderr}"
    );
    // `results show` gives what the coordinator printed: the others' runs
    // merged, the lost one named; its own run is failed, not counted.
    let stage = recorded(&stderr);
    let (uri, index) = stage.split_once('/').unwrap();
    let lost = count(
        &store,
        &format!(
            "SELECT s.share_index FROM agent_shares s JOIN agent_phases p ON p.id = s.phase_id \
             WHERE s.agent = 'a0' AND p.run_uri = '{uri}' AND p.stage_index = {index}"
        ),
    );
    let shown = {
        let mut c = command(&["results", "show", &stage, "--results", &store_url]);
        coord.run(move || output_within(&mut c, None, RUN_LIMIT))
    };
    let said = text(&shown.stderr);
    assert!(
        said.contains(&format!(
            "partial run: client {lost} of 3 (agent a0): lost: agent a0 went silent"
        )),
        "{said}"
    );
    assert_eq!(
        get(&parse_summary(&ok(&shown)), "READ", "Operations"),
        get(&parse_summary(&text(&out.stdout)), "READ", "Operations")
    );
    assert_eq!(
        count(
            &store,
            &format!(
                "SELECT COUNT(*) FROM runs WHERE run_uri = '{uri}' AND stage_index = {index} \
                 AND client_index = {lost} AND status = 'failed'"
            )
        ),
        1
    );

    // Too few agents (a0 is gone): a clear error, and nothing runs.
    let before = count(&store, "SELECT COUNT(*) FROM runs");
    let mut few = vec!["run", db.as_str()];
    few.extend(workload);
    few.extend([
        "-p",
        "operationcount=100",
        "--agents",
        "3",
        "--agents-wait",
        "3",
    ]);
    let out = coordinate(&few);
    let said = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains("3 agents were asked for and 2 answered") && said.contains("a0 (silent for"),
        "{said}"
    );
    assert_eq!(count(&store, "SELECT COUNT(*) FROM runs"), before, "{said}");
    // Back under its name, a0 runs nothing of the lost share again.
    agents[0] = Agent::start(lan.host("a0"), &store_url, dir.path());
    wait_for_agents(&store, &names);
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM agent_shares WHERE agent = 'a0' AND state IN ('claimed', 'ready', 'running')"
        ),
        0
    );
    for (i, a) in agents.iter_mut().enumerate() {
        let log = a.stop();
        assert!(
            !log.contains(REDIS_PASSWORD) && !log.contains(pg::PASSWORD),
            "{log}"
        );
        if i == 1 {
            // The cut was real: a1 saw the store go and come back.
            assert!(
                log.contains("the store does not answer")
                    && log.contains("the store answers again"),
                "{log}"
            );
        }
    }
}
