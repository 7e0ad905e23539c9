//! Agents on hosts of their own: network namespaces on a private bridge
//! for the database (Redis), the results store (PostgreSQL), three agents
//! and the coordinator, every path to the database 2 ms slow each way.
//! The load inserts every key once; a run's merged histograms are the
//! bucket-for-bucket sum of the agents' stored runs, its offered total the
//! target, its clocks agree; an agent cut from the store for seconds loses
//! nothing; one cut for longer than a write waits spools its run, imports
//! it later, and the stage then counts every read the server served once;
//! an agent killed mid-run leaves a partial stage that names it; too few
//! agents is a clear error before anything runs.
#![cfg(all(feature = "redis", feature = "store-postgres"))]

mod util;

use std::collections::BTreeMap;
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

/// The test's own look at the store from `coord`, once `sql` counts
/// something (polled, bounded): what a fault waits for before it strikes.
fn once_counted(coord: &Host, url: &str, sql: &str, what: &str) -> Store {
    let s = coord.run(|| Store::open(url).unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&s, sql) == 0 {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    s
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

/// A database (Redis, 2 ms away each way) on a host of its own, the
/// results store (PostgreSQL) on another, a coordinator and agents on the
/// rest. Fields drop in order: the servers before their hosts.
struct Fleet {
    redis: RedisServer,
    _pg: Postgres,
    /// `redis://` on the database's host.
    db: String,
    /// The store's URL as the agents and the coordinator have it (the
    /// password in their environment).
    store_url: String,
    /// With the password, for the test's own looks at the store.
    store_password_url: String,
    /// The test's own look at the store, from the coordinator's host.
    store: Store,
    dir: tempfile::TempDir,
    lan: Lan,
}

impl Fleet {
    /// The servers up on `db` and `store`; `None` when the run leaves
    /// network namespaces or a server out.
    fn stand_up(agents: &[&str]) -> Option<Fleet> {
        let mut names = vec!["db", "store", "coord"];
        names.extend(agents);
        let lan = Lan::new(&names)?;
        let (db_host, store_host) = (lan.host("db"), lan.host("store"));
        let redis = db_host.run(|| RedisServer::start(Some(REDIS_PASSWORD)))?;
        let pg_server = store_host.run(Postgres::start)?;
        db_host.forward(redis.port(), LATENCY);
        store_host.forward(pg_server.port(), Duration::ZERO);
        let db = format!("redis://{}:{}", db_host.addr, redis.port());
        let at = format!("{}:{}/{}", store_host.addr, pg_server.port(), pg::DATABASE);
        let store_url = format!("postgres://{}@{at}", pg::USER);
        let with_password = format!("postgres://{}:{}@{at}", pg::USER, pg::PASSWORD);
        let store = lan
            .host("coord")
            .run(|| Store::open(&with_password).unwrap());
        Some(Fleet {
            redis,
            _pg: pg_server,
            db,
            store_url,
            store_password_url: with_password,
            store,
            dir: tempfile::tempdir().unwrap(),
            lan,
        })
    }

    fn host(&self, name: &str) -> &Host {
        self.lan.host(name)
    }

    fn agent(&self, name: &str) -> Agent {
        Agent::start(self.host(name), &self.store_url, self.dir.path())
    }

    /// A `sojourn` command run to its end on the coordinator's host.
    fn coordinate(&self, args: &[&str]) -> Output {
        let mut c = self.coordinator(args);
        self.host("coord")
            .run(move || output_within(&mut c, None, RUN_LIMIT))
    }

    /// The command [`Fleet::coordinate`] runs, with the store and a data
    /// directory of the coordinator's own.
    fn coordinator(&self, args: &[&str]) -> Command {
        let mut c = command(args);
        c.args(["--results", &self.store_url, "--no-progress", "--data-dir"])
            .arg(self.dir.path().join("coord"));
        c
    }

    /// Redis's own count of the commands it ran.
    fn commandstats(&self) -> BTreeMap<String, u64> {
        self.host("db").run(|| self.redis.commandstats())
    }

    /// The commands Redis ran since `before` ([`Fleet::commandstats`]).
    fn commands_since(&self, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
        self.host("db").run(|| self.redis.commands_since(before))
    }
}

/// Workload C over 2,000 keys of one field.
const WORKLOAD: [&str; 6] = [
    "-P",
    "workloadc",
    "-p",
    "recordcount=2000",
    "-p",
    "fieldcount=1",
];

#[test]
fn agents_on_hosts_of_their_own_merge_exactly_and_survive_faults() {
    let names = ["a0", "a1", "a2"];
    let Some(fleet) = Fleet::stand_up(&names) else {
        return;
    };
    let (db_host, store_host, coord) = (fleet.host("db"), fleet.host("store"), fleet.host("coord"));
    let (redis, db, store_url, store) = (&fleet.redis, &fleet.db, &fleet.store_url, &fleet.store);
    let mut agents: Vec<Agent> = names.iter().map(|n| fleet.agent(n)).collect();
    wait_for_agents(store, &names);
    let coordinate = |args: &[&str]| fleet.coordinate(args);

    // The load: every key once, from three hosts.
    let mut load = vec!["load", db.as_str()];
    load.extend(WORKLOAD);
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
    run.extend(WORKLOAD);
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
    let (out, lateness) = sojourn_testkit::lateness::measured(|| coordinate(&run));
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
        // One machine's clock, a LAN's round trips: within milliseconds,
        // and what the machine's scheduling added; far from the second
        // that ignoring the common start, or a unit, would be off by.
        let bound = lateness.bound(Duration::from_millis(50), Duration::from_millis(250));
        for v in [&row[1], &row[2]] {
            let us = match v {
                Value::Real(r) => *r,
                v => panic!("{v:?}"),
            };
            assert!(
                us.abs() < bound.as_secs_f64() * 1e6,
                "{us} µs off; {lateness}: {stderr}"
            );
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
    long.extend(WORKLOAD);
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
    let (a1, store_host_c) = (fleet.host("a1").clone(), store_host.clone());
    let cutter = std::thread::spawn({
        let store_url = fleet.store_password_url.clone();
        let coord = coord.clone();
        move || {
            once_counted(
                &coord,
                &store_url,
                "SELECT COUNT(*) FROM agent_shares WHERE state = 'running' AND agent = 'a1'",
                "a1 never ran",
            );
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
    partial.extend(WORKLOAD);
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
        let store_url = fleet.store_password_url.clone();
        let coord = coord.clone();
        std::thread::spawn(move || {
            // Its run begun in the store, then killed.
            once_counted(
                &coord,
                &store_url,
                "SELECT COUNT(*) FROM agent_shares s JOIN agent_phases p ON p.id = s.phase_id \
                 JOIN runs r ON r.run_uri = p.run_uri AND r.stage_index = p.stage_index \
                 AND r.client_index = s.share_index \
                 WHERE s.agent = 'a0' AND s.state = 'running' AND r.status = 'running'",
                "a0 never ran",
            );
        })
    };
    let handle = {
        let mut c = fleet.coordinator(&partial);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
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
        store,
        &format!(
            "SELECT s.share_index FROM agent_shares s JOIN agent_phases p ON p.id = s.phase_id \
             WHERE s.agent = 'a0' AND p.run_uri = '{uri}' AND p.stage_index = {index}"
        ),
    );
    let shown = {
        let mut c = command(&["results", "show", &stage, "--results", store_url]);
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
            store,
            &format!(
                "SELECT COUNT(*) FROM runs WHERE run_uri = '{uri}' AND stage_index = {index} \
                 AND client_index = {lost} AND status = 'failed'"
            )
        ),
        1
    );

    // Too few agents (a0 is gone): a clear error, and nothing runs.
    let before = count(store, "SELECT COUNT(*) FROM runs");
    let mut few = vec!["run", db.as_str()];
    few.extend(WORKLOAD);
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
    assert_eq!(count(store, "SELECT COUNT(*) FROM runs"), before, "{said}");
    // Back under its name, a0 runs nothing of the lost share again.
    agents[0] = fleet.agent("a0");
    wait_for_agents(store, &names);
    assert_eq!(
        count(
            store,
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

/// An agent cut from the store for longer than a write waits for it
/// (`sojourn_store::WAIT`, 60 s): the coordinator gives its share up once
/// it has been silent for 10 s, and the stage is partial; the agent keeps
/// the rest of its run in a spool file and imports it once the store
/// answers; then the stage counts every read the database served, once.
#[test]
fn an_agent_cut_from_the_store_past_its_wait_spools_its_run_and_it_counts_once() {
    let Some(fleet) = Fleet::stand_up(&["a0", "a1"]) else {
        return;
    };
    let coord = fleet.host("coord");
    // Loaded from the coordinator's host itself.
    let mut load = vec!["load", fleet.db.as_str()];
    load.extend(WORKLOAD);
    ok(&fleet.coordinate(&load));
    let mut agents = [fleet.agent("a0"), fleet.agent("a1")];
    wait_for_agents(&fleet.store, &["a0", "a1"]);
    let before = fleet.commandstats();

    let spool = fleet.dir.path().join("a0").join("spool");
    let cutter = std::thread::spawn({
        let (a0, store_host) = (fleet.host("a0").clone(), fleet.host("store").clone());
        let (coord, url, spool) = (
            coord.clone(),
            fleet.store_password_url.clone(),
            spool.clone(),
        );
        move || {
            // Some of the run in the store first, the rest cut off.
            once_counted(
                &coord,
                &url,
                "SELECT COUNT(*) FROM intervals i JOIN runs r ON r.id = i.run_id \
                 JOIN agent_phases p ON r.run_uri = p.run_uri AND r.stage_index = p.stage_index \
                 JOIN agent_shares s ON s.phase_id = p.id AND r.client_index = s.share_index \
                 WHERE s.agent = 'a0' AND s.state = 'running' AND r.status = 'running'",
                "a0 stored nothing",
            );
            a0.cut_from(&store_host);
            // Until the write has waited its 60 s and the run is spooled.
            let deadline = Instant::now() + Duration::from_secs(180);
            while !holds_a_file(&spool) {
                assert!(Instant::now() < deadline, "a0 spooled nothing");
                std::thread::sleep(Duration::from_millis(200));
            }
            a0.restore(&store_host);
        }
    });
    let mut run = vec!["run", fleet.db.as_str()];
    run.extend(WORKLOAD);
    run.extend(["-p", "operationcount=0", "-p", "maxexecutiontime=4"]);
    run.extend(["-p", "timeseries.interval=0.5", "-target", "300"]);
    run.extend(["-threads", "4", "--agents", "2"]);
    let out = fleet.coordinate(&run);
    let said = text(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("agent a0 went silent") && said.contains("run phase is partial"),
        "{said}"
    );
    let stage = recorded(&said);
    cutter.join().unwrap();

    // The spooled run reaches the store under the share's client index.
    let (uri, index) = stage.split_once('/').unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let completed = format!(
        "SELECT COUNT(*) FROM runs WHERE run_uri = '{uri}' AND stage_index = {index} \
         AND status = 'completed'"
    );
    while count(&fleet.store, &completed) == 0 {
        assert!(Instant::now() < deadline, "the spooled run never came");
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = agents[0].stop();
    assert!(
        log.contains("kept in the spool file") && log.contains("imported the run kept in"),
        "{log}"
    );
    // The stage as the store shows it now: every read the server served.
    let shown = {
        let mut c = command(&["results", "show", &stage, "--results", &fleet.store_url]);
        coord.run(move || output_within(&mut c, None, RUN_LIMIT))
    };
    let reads = get(&parse_summary(&ok(&shown)), "READ", "Operations") as u64;
    let ran = fleet.commands_since(&before);
    assert_eq!(ran.get("hgetall").copied(), Some(reads), "{ran:?}\n{log}");
    // Four seconds at 300 ops/s, within five standard deviations.
    assert!(
        (reads as f64 - 1200.0).abs() < 5.0 * 1200f64.sqrt(),
        "{reads} reads"
    );
    // Every interval of a0's once, those written before the cut and
    // those spooled after it: four seconds of half-second intervals.
    let int = |sql: &str| {
        let r = fleet.store.query(sql).unwrap();
        r.rows[0]
            .iter()
            .map(|v| match v {
                Value::Integer(n) => *n,
                Value::Real(r) => *r as i64,
                v => panic!("{sql}: {v:?}"),
            })
            .collect::<Vec<i64>>()
    };
    let stage_runs = format!(
        "FROM intervals i JOIN runs r ON r.id = i.run_id WHERE r.run_uri = '{uri}' \
         AND r.stage_index = {index} AND r.status = 'completed'"
    );
    let a0 = int(&format!(
        "SELECT COUNT(*), COUNT(DISTINCT i.start_s) {stage_runs} AND r.client_index = \
         (SELECT s.share_index FROM agent_shares s JOIN agent_phases p ON p.id = s.phase_id \
          WHERE s.agent = 'a0' AND p.run_uri = '{uri}' AND p.stage_index = {index})"
    ));
    assert_eq!(a0[0], a0[1], "{log}");
    assert!((7..=10).contains(&a0[0]), "{} intervals\n{log}", a0[0]);
    // And the stage's intervals hold each read once.
    let ops = int(&format!("SELECT SUM(i.ops_done) {stage_runs}"))[0];
    assert_eq!(ops as u64, reads, "{log}");
}

/// Whether a folder holds a file, at any depth.
fn holds_a_file(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let path = e.path();
            path.is_file() || holds_a_file(&path)
        })
    })
}
