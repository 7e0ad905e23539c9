//! Agents on one machine (separate processes, a real PostgreSQL results
//! store as their only meeting point, a real Redis as the database): a load
//! cut over three agents inserts every key once; a run's merged histograms
//! and time series are the exact sum of the agents' stored runs, each with
//! its third of the target and a seed of its own; too few agents is a
//! clear error before anything runs; no share in the store holds a
//! password; a capacity search and a suite run their steps and stages on
//! the agents; Ctrl+C at the coordinator stops every agent, and a second
//! Ctrl+C at an agent quits it at once. Agents make
//! the store's database where it is missing (or say what a superuser
//! runs), and one that exited or stopped heartbeating is `gone`: listed
//! so, and neither asked nor counted by `agents stop`. On hosts of
//! their own, with the faults (an agent killed, one cut from the store),
//! see `agents_netns.rs`.
#![cfg(all(feature = "redis", feature = "store-postgres"))]

mod util;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use sojourn_store::{Store, StoredInterval};
use sojourn_testkit::postgres_server::{self as pg, Postgres};
use sojourn_testkit::redis_server::RedisServer;
use util::*;

const REDIS_PASSWORD: &str = "r3dis-agents";

/// An agent process of the test's own, killed when dropped.
struct Agent {
    child: Option<Child>,
    name: String,
}

impl Agent {
    fn start(store: &str, name: &str, data: &std::path::Path) -> Agent {
        Agent::start_with(store, name, data, &[])
    }

    /// An agent with `extra` arguments (its metrics endpoint).
    fn start_with(store: &str, name: &str, data: &std::path::Path, extra: &[&str]) -> Agent {
        let child = bin()
            .args([
                "agent",
                "--results",
                store,
                "--name",
                name,
                "--idle-timeout",
                "300",
            ])
            .args(extra)
            .arg("--data-dir")
            .arg(data)
            .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
            .env("REDIS_PASSWORD", REDIS_PASSWORD)
            // TPC-C's database is on the store's server.
            .env("PGPASSWORD", pg::PASSWORD)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Agent {
            child: Some(child),
            name: name.to_string(),
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Poll (bounded) until `n` agents are registered and alive.
fn wait_for_agents(store: &Store, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let alive = store
            .agents()
            .unwrap()
            .iter()
            .filter(|a| a.heartbeat_age_s < 5.0 && a.state == "idle")
            .count();
        if alive >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{alive} of {n} agents registered"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `sojourn ARGS` as a coordinator of agents meeting in `store`.
fn coordinate(data: &std::path::Path, store: &str, args: &[&str]) -> std::process::Output {
    let mut c = bin();
    c.args(args)
        .args(["--results", store, "--no-progress", "--data-dir"])
        .arg(data)
        .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
        .env_remove("PGPASSWORD");
    c.run_to_end()
}

/// `sojourn ARGS --results STORE` (`agents`, `results`).
fn tool(store: &str, args: &[&str]) -> std::process::Output {
    bin()
        .args(args)
        .args(["--results", store])
        .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
        .env_remove("PGPASSWORD")
        .run_to_end()
}

/// The STATE column of agent `name` in `agents list` of `store`.
fn listed_state(store: &str, name: &str) -> String {
    let listed = ok(&tool(store, &["agents", "list"]));
    let line = listed
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no agent {name}: {listed}"));
    line.split_whitespace()
        .nth(4)
        .unwrap_or_default()
        .to_string()
}

/// `GET /metrics` of an endpoint at `addr`.
fn scrape(addr: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body
}

/// Count of operations in a stored interval.
fn ops(iv: &StoredInterval) -> u64 {
    iv.ops.iter().map(|o| o.count()).sum()
}

#[test]
fn agents_load_run_search_and_run_suites_merged_exactly_and_stop_on_ctrl_c() {
    let Some(pg) = Postgres::start() else { return };
    let Some(redis) = RedisServer::start(Some(REDIS_PASSWORD)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store_url = pg.url_without_password();
    let store = Store::open(&pg.url()).unwrap();
    // a2 serves its figures to Prometheus, as an agent on a node would.
    let metrics_addr = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().to_string()
    };
    let mut agents: Vec<Agent> = (0..3)
        .map(|i| {
            let extra = if i == 2 {
                vec!["--metrics-listen", metrics_addr.as_str()]
            } else {
                vec![]
            };
            Agent::start_with(&store_url, &format!("a{i}"), dir.path(), &extra)
        })
        .collect();
    wait_for_agents(&store, 3);
    let listed = ok(&tool(&store_url, &["agents", "list"]));
    for a in &agents {
        assert!(listed.contains(&a.name), "{listed}");
    }

    // The load: 3,001 records over 3 agents, each key once.
    let db = redis.url();
    let fleet = Fleet {
        store: &store,
        store_url: &store_url,
        db: &db,
        data: dir.path(),
    };
    let load = coordinate(
        dir.path(),
        &store_url,
        &[
            "load",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3001",
            "-p",
            "fieldcount=1",
            "-threads",
            "4",
            "--agents",
            "3",
        ],
    );
    let (stdout, stderr) = (ok(&load), text(&load.stderr));
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "INSERT", "Return=OK"), 3001.0, "{stdout}\n{stderr}");
    assert_eq!(redis.command(&["ZCARD", "_indices"]), ":3001");
    assert_eq!(redis.command(&["DBSIZE"]), ":3002");
    assert!(stderr.contains("all 3 agents connected"), "{stderr}");
    // Every claim said, numbered from 0 as the agents number them.
    for i in 0..3 {
        assert!(
            stderr.contains(&format!("share {i} of 3 claimed by agent a")),
            "{stderr}"
        );
    }

    // The run: 3,000 ops/s offered in total for 2 s.
    let json = dir.path().join("run.json");
    let commands_before = redis.commandstats();
    let run = coordinate(
        dir.path(),
        &store_url,
        &[
            "run",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3001",
            "-p",
            "fieldcount=1",
            "-p",
            "operationcount=0",
            "-p",
            "maxexecutiontime=2",
            "-threads",
            "4",
            "-target",
            "3000",
            "--agents",
            "3",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = (ok(&run), text(&run.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["target_ops_per_sec"], 3000.0, "{report:#}");
    assert_eq!(report["threads"], 12, "-threads is per agent");
    let uri = stderr
        .lines()
        .find_map(|l| l.strip_prefix("recorded as "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no `recorded as` in\n{stderr}"))
        .to_string();
    // The merged stage is the exact sum of the three agents' stored runs.
    let (run_uri, stage) = uri.split_once('/').unwrap();
    let whole = store.load_merged(&uri).unwrap();
    let clients: Vec<_> = store
        .list(&Default::default())
        .unwrap()
        .into_iter()
        .filter(|r| r.meta.run_uri == run_uri && r.meta.stage_index.to_string() == stage)
        .collect();
    assert_eq!(clients.len(), 3);
    let mut sum = sojourn_core::histograms::Stats::default();
    let mut seeds = std::collections::BTreeSet::new();
    for c in &clients {
        let r = store.load(c.meta.id.as_str()).unwrap();
        assert_eq!(
            r.meta().target,
            Some(1000.0),
            "each agent a third of the target"
        );
        seeds.insert(r.summary.totals.as_ref().unwrap().seed);
        sum.add(&r.total);
    }
    assert_eq!(seeds.len(), 3, "a seed each");
    let (w, t) = (
        whole.total.kinds().next().unwrap().1,
        sum.kinds().next().unwrap().1,
    );
    assert_eq!(w.count(), t.count());
    assert_eq!(w.ok.response, t.ok.response, "bucket for bucket");
    assert_eq!(w.ok.service, t.ok.service);
    // Its time series holds every operation once too.
    let merged_ops: u64 = whole.intervals.iter().map(ops).sum();
    assert_eq!(merged_ops, w.count(), "{stdout}");
    let shown = parse_summary(&stdout);
    assert_eq!(get(&shown, "READ", "Operations") as u64, w.count());
    // Counts the merge did not compute: the server's, one HGETALL per
    // read, and the rate asked for over the time measured (Poisson
    // arrivals: within five of their standard deviations).
    let ran = redis.commands_since(&commands_before);
    assert_eq!(ran.get("hgetall").copied(), Some(w.count()), "{ran:?}");
    let measured = report["measured_ms"].as_f64().unwrap() / 1000.0;
    let expected = 3000.0 * measured;
    assert!(
        (w.count() as f64 - expected).abs() <= 5.0 * expected.sqrt(),
        "{} reads in {measured} s at 3,000 ops/s",
        w.count()
    );
    // a2's own endpoint counts its share: what its stored run holds.
    let a2_runs = store
        .query("SELECT run_id FROM agent_shares WHERE agent = 'a2' AND run_id IS NOT NULL")
        .unwrap();
    let a2_run = clients
        .iter()
        .find(|c| {
            a2_runs
                .rows
                .iter()
                .any(|r| r[0].as_text() == Some(c.meta.id.as_str()))
        })
        .expect("a2's run of the stage");
    let a2_count: u64 = store
        .load(a2_run.meta.id.as_str())
        .unwrap()
        .total
        .kinds()
        .map(|(_, k)| k.count())
        .sum();
    let scraped = scrape(&metrics_addr);
    let served: f64 = scraped
        .lines()
        .filter(|l| l.starts_with("sojourn_operations_total{") && l.contains("phase=\"run\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(a2_count > 0 && a2_count < w.count());
    assert_eq!(served, a2_count as f64, "{scraped}");

    // No share the store keeps holds a password.
    let specs = store
        .query("SELECT spec FROM agent_shares")
        .unwrap()
        .rows
        .iter()
        .map(|r| format!("{:?}", r[0]))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(specs.contains("redis://127.0.0.1"), "{specs}");
    for secret in [REDIS_PASSWORD, pg::PASSWORD] {
        assert!(!specs.contains(secret), "{secret} in a share:\n{specs}");
        assert!(!stdout.contains(secret) && !stderr.contains(secret));
    }

    // Too few agents: a clear error, and nothing runs.
    let before = store.list(&Default::default()).unwrap().len();
    let few = coordinate(
        dir.path(),
        &store_url,
        &[
            "run",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3001",
            "-p",
            "operationcount=100",
            "--agents",
            "4",
            "--agents-wait",
            "3",
        ],
    );
    let said = text(&few.stderr);
    assert!(!few.status.success());
    assert!(
        said.contains("4 agents were asked for and 3 answered within 3 s")
            && said.contains("nothing ran"),
        "{said}"
    );
    assert_eq!(
        store.list(&Default::default()).unwrap().len(),
        before,
        "{said}"
    );
    // What agents cannot do: each refused by name, before anything runs.
    let sqlite = dir.path().join("local.sqlite");
    for (db, workload, results, says) in [
        (
            "memory:",
            "workloadc",
            store_url.as_str(),
            "memory: lives on one machine, which agents elsewhere cannot reach",
        ),
        (
            db.as_str(),
            "workloadc",
            sqlite.to_str().unwrap(),
            "agents meet through a PostgreSQL results store every machine reaches",
        ),
        (
            db.as_str(),
            "workloads/keyvalue",
            store_url.as_str(),
            "--agents 2: the keyvalue workload runs from one client machine",
        ),
    ] {
        let out = coordinate(
            dir.path(),
            results,
            &["run", db, "-P", workload, "--agents", "2"],
        );
        let said = text(&out.stderr);
        assert!(
            !out.status.success() && said.contains(says),
            "{workload}: {said}"
        );
        assert!(!said.contains(REDIS_PASSWORD), "{said}");
        assert!(
            said.contains("use --agents 1") || !says.contains("one client"),
            "{said}"
        );
    }
    assert_eq!(store.list(&Default::default()).unwrap().len(), before);
    assert!(!sqlite.exists(), "a refused command made its store");
    wait_for_agents(&store, 3);

    // A capacity search on the agents: each step a phase of theirs,
    // judged merged, every agent's run of it kept with the step's labels.
    let out = coordinate(
        dir.path(),
        &store_url,
        &[
            "capacity",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3001",
            "--slo",
            "read.p50<100ms",
            "--start",
            "2000",
            "--step",
            "0.8",
            "--settle",
            "0.2",
            "--precision",
            "0.45",
            "--confirm",
            "0",
            "-threads",
            "2",
            "--agents",
            "3",
        ],
    );
    let (stdout, said) = (ok(&out), text(&out.stderr));
    assert!(stdout.contains("capacity: "), "{stdout}\n{said}");
    let session = said
        .split_whitespace()
        .find(|w| w.starts_with("cap-"))
        .unwrap_or_else(|| panic!("{said}"))
        .trim_end_matches(';')
        .to_string();
    let steps = store
        .query(&format!(
            "SELECT l.value, COUNT(*), MIN(s.value) FROM run_labels l \
             JOIN run_labels c ON c.run_id = l.run_id AND c.key = 'capacity_session' \
             AND c.value = '{session}' \
             JOIN run_labels s ON s.run_id = l.run_id AND s.key = 'capacity_sustained' \
             WHERE l.key = 'capacity_step' GROUP BY l.value"
        ))
        .unwrap();
    assert!(steps.rows.len() >= 2, "{said}");
    for row in &steps.rows {
        assert_eq!(
            format!("{:?}", row[1]),
            "Integer(3)",
            "three agents a step: {row:?}"
        );
    }
    let report = bin()
        .args([
            "report",
            &session,
            "--format",
            "csv",
            "--table",
            "performance",
            "--results",
            &store_url,
        ])
        .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
        .run_to_end();
    assert_eq!(
        ok(&report).lines().count(),
        1 + steps.rows.len(),
        "a row per step, its agents merged"
    );

    // A suite whose stages run on the agents: num_vms shares a stage.
    let suite = dir.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    std::fs::write(
        suite.join("two.yaml"),
        format!(
            "benchmarks:\n- redis_ycsb:\n    flags:\n      num_vms: 2\n      \
             sojourn_db: redis://127.0.0.1:{}\n      ycsb_record_count: 500\n      \
             ycsb_operation_count: 400\n      ycsb_workload_files: workloadc\n      \
             ycsb_field_count: 1\n      ycsb_threads_per_client: 2\n",
            redis.port()
        ),
    )
    .unwrap();
    let run_suite = |agents: &str| {
        bin()
            .args([
                "suite",
                suite.to_str().unwrap(),
                "--agents",
                agents,
                "--no-progress",
            ])
            .args(["--results", &store_url, "--data-dir"])
            .arg(dir.path())
            .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
            .run_to_end()
    };
    let refused = run_suite("1");
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("a stage of 2 clients (num_vms) needs 2 agents"),
        "{}",
        text(&refused.stderr)
    );
    let out = run_suite("3");
    let (stdout, said) = (ok(&out), text(&out.stderr));
    assert!(stdout.contains("All tests have passed"), "{stdout}\n{said}");
    let stages = store
        .query(
            "SELECT p.phase, COUNT(*) FROM agent_shares s JOIN agent_phases p ON p.id = s.phase_id \
             JOIN run_labels l ON l.run_id = s.run_id AND l.key = 'suite_config' \
             WHERE s.state = 'done' GROUP BY p.phase ORDER BY p.phase",
        )
        .unwrap();
    let shown: Vec<String> = stages
        .rows
        .iter()
        .map(|r| format!("{}:{:?}", r[0].as_text().unwrap(), r[1]))
        .collect();
    assert_eq!(shown, ["load:Integer(2)", "run:Integer(2)"], "{said}");
    wait_for_agents(&store, 3);

    tpcc_over_agents(&pg, dir.path(), &store_url);
    wait_for_agents(&store, 3);

    // Ctrl+C at the coordinator stops every agent's share: the runs are
    // kept as interrupted and merged, and the command exits 130.
    let mut long = long_run(&fleet);
    long.stdout(Stdio::piped()).stderr(Stdio::piped());
    let coordinator = long.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while store
        .query("SELECT COUNT(*) FROM agent_shares WHERE state = 'running'")
        .map(|r| format!("{:?}", r.rows[0][0]))
        .unwrap()
        != "Integer(3)"
    {
        assert!(Instant::now() < deadline, "the shares never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: our child, not yet waited for, so the pid is its.
    unsafe { libc::kill(coordinator.id() as libc::pid_t, libc::SIGINT) };
    let out = sojourn_testkit::process::finish_within(coordinator, Duration::from_secs(60));
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(said.contains("asked every agent to stop"), "{said}");
    let uri = said
        .lines()
        .find_map(|l| l.strip_prefix("recorded as "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("{said}"))
        .to_string();
    let statuses = store
        .query(&format!(
            "SELECT status FROM runs WHERE run_uri || '/' || stage_index = '{uri}'"
        ))
        .unwrap();
    assert_eq!(statuses.rows.len(), 3, "{said}");
    for row in &statuses.rows {
        assert_eq!(row[0].as_text(), Some("interrupted"), "{said}");
    }
    wait_for_agents(&store, 3);

    coordinator_killed(&pg, &fleet);
    agent_quits_at_once(&mut agents[2], &metrics_addr, &redis, &fleet);
}

/// Where a test's agents meet and what they run against.
struct Fleet<'a> {
    store: &'a Store,
    store_url: &'a str,
    db: &'a str,
    data: &'a std::path::Path,
}

/// A 60 s run of workload C at 300 ops/s over three agents, for a test
/// to stop before its end.
fn long_run(fleet: &Fleet) -> std::process::Command {
    let mut long = bin();
    long.args(["run", fleet.db, "-P", "workloadc", "-p", "recordcount=3001"])
        .args(["-p", "operationcount=0", "-p", "maxexecutiontime=60"])
        .args([
            "-target",
            "300",
            "--agents",
            "3",
            "--results",
            fleet.store_url,
        ])
        .args(["--no-progress", "--data-dir"])
        .arg(fleet.data)
        .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD);
    long
}

/// A coordinator killed outright mid-run: its agents give the phase up
/// once its heartbeat is older than the 30 s limit (made so here, as
/// waiting would make it), mark it failed saying why, keep each share's
/// run, and serve again.
fn coordinator_killed(pg: &Postgres, fleet: &Fleet) {
    let store = fleet.store;
    let mut long = long_run(fleet);
    long.stdout(Stdio::null()).stderr(Stdio::null());
    let mut coordinator = long.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let phase = loop {
        let r = store
            .query(
                "SELECT p.id FROM agent_phases p WHERE p.state = 'running' AND \
                 (SELECT COUNT(*) FROM agent_shares s WHERE s.phase_id = p.id \
                  AND s.state = 'running') = 3",
            )
            .unwrap();
        if let Some(p) = r.rows.first().and_then(|r| r[0].as_text()) {
            break p.to_string();
        }
        assert!(Instant::now() < deadline, "the shares never ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let began = Instant::now();
    pg.psql(&format!(
        "UPDATE agent_phases SET heartbeat_unix = heartbeat_unix - 60 WHERE id = '{phase}';"
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    let missing = loop {
        let r = store
            .query(&format!(
                "SELECT missing FROM agent_phases WHERE id = '{phase}' AND state = 'failed' \
                 AND (SELECT COUNT(*) FROM agent_shares s WHERE s.phase_id = '{phase}' \
                      AND s.run_id IS NOT NULL AND s.state <> 'running') = 3"
            ))
            .unwrap();
        if let Some(row) = r.rows.first() {
            break row[0].as_text().unwrap_or_default().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "the agents never gave the phase up"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(missing.contains("the coordinator went silent"), "{missing}");
    // Each share's run is kept, stopped long before its 60 s.
    let runs = store
        .query(&format!(
            "SELECT r.status, r.measured_s FROM runs r JOIN agent_shares s ON s.run_id = r.id \
             WHERE s.phase_id = '{phase}'"
        ))
        .unwrap();
    assert_eq!(runs.rows.len(), 3, "{runs:?}");
    for row in &runs.rows {
        assert_eq!(row[0].as_text(), Some("interrupted"), "{row:?}");
        assert!(
            matches!(row[1], sojourn_store::Value::Real(s) if s > 0.0 && s < 50.0),
            "{row:?}"
        );
    }
    assert!(began.elapsed() < Duration::from_secs(50));
    wait_for_agents(store, 3);
}

/// A second Ctrl+C at an agent quits it at once (130), mid-share, with
/// the database stopped so that the first cannot finish draining (the
/// agent's endpoint shows its operations in flight first): it writes
/// nothing on the way out (its run is left running, it is not marked
/// gone), and the coordinator, stopped too, gives its share up once it
/// has been silent past the liveness limit, naming it.
fn agent_quits_at_once(agent: &mut Agent, metrics: &str, redis: &RedisServer, fleet: &Fleet) {
    let mut long = long_run(fleet);
    long.stdout(Stdio::null()).stderr(Stdio::piped());
    let coordinator = long.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let run = loop {
        let r = fleet
            .store
            .query(&format!(
                "SELECT r.id FROM agent_phases p JOIN agent_shares s ON s.phase_id = p.id \
                 JOIN runs r ON r.run_uri = p.run_uri AND r.stage_index = p.stage_index \
                 AND r.client_index = s.share_index WHERE p.state = 'running' \
                 AND s.state = 'running' AND s.agent = '{}' AND r.status = 'running'",
                agent.name
            ))
            .unwrap();
        if let Some(id) = r.rows.first().and_then(|row| row[0].as_text()) {
            break id.to_string();
        }
        assert!(Instant::now() < deadline, "{} never ran", agent.name);
        std::thread::sleep(Duration::from_millis(20));
    };
    redis.server.pause();
    let in_flight = || {
        scrape(metrics)
            .lines()
            .filter(|l| l.starts_with("sojourn_in_flight_operations{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum::<u64>()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while in_flight() == 0 {
        assert!(Instant::now() < deadline, "nothing in flight");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut child = agent.child.take().unwrap();
    let lines = {
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        rx
    };
    let sigint = |pid: u32| {
        // SAFETY: our children, not yet waited for, so the pids are theirs.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    };
    sigint(child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut said = String::new();
    while !said.contains("interrupted: stopping and draining") {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(l) => said += &format!("{l}\n"),
            Err(e) => panic!("{e}: no word of the first Ctrl+C:\n{said}"),
        }
    }
    sigint(child.id());
    let out = sojourn_testkit::process::finish_within(child, Duration::from_secs(60));
    said.extend(lines.try_iter().map(|l| l + "\n"));
    assert_eq!(out.status.code(), Some(130), "{said}");
    // Nothing written on the way out: the first Ctrl+C's drain never ended.
    let status = fleet
        .store
        .query(&format!("SELECT status FROM runs WHERE id = '{run}'"))
        .unwrap();
    assert_eq!(status.rows[0][0].as_text(), Some("running"), "{said}");
    assert_ne!(listed_state(fleet.store_url, &agent.name), "gone", "{said}");
    redis.server.resume();
    sigint(coordinator.id());
    let out = sojourn_testkit::process::finish_within(coordinator, Duration::from_secs(60));
    let told = text(&out.stderr);
    assert!(!out.status.success(), "{told}");
    assert!(
        told.contains(&format!("agent {} went silent", agent.name))
            && told.contains("run phase is partial"),
        "{told}"
    );
    let failed = fleet
        .store
        .query(&format!(
            "SELECT COUNT(*) FROM runs WHERE id = '{run}' AND status = 'failed'"
        ))
        .unwrap();
    assert_eq!(format!("{:?}", failed.rows[0][0]), "Integer(1)", "{told}");
}

/// TPC-C over three agents, on the store's PostgreSQL server: each agent
/// loads its own warehouse (the items once, by the first), and homes its
/// terminals there in the run; the coordinator checks the consistency
/// conditions once every share is done; and the merged New-Orders are
/// the orders the database holds.
#[cfg(feature = "postgres")]
fn tpcc_over_agents(pg: &Postgres, data: &std::path::Path, store_url: &str) {
    pg.psql("DROP DATABASE IF EXISTS tpcc");
    pg.psql("CREATE DATABASE tpcc");
    let db = pg.url().replace(&format!("/{}", pg::DATABASE), "/tpcc");
    let count = |sql: &str| -> i64 {
        let v = pg.psql(&format!("\\c tpcc\n{sql}"));
        v.trim()
            .parse()
            .unwrap_or_else(|e| panic!("{sql}: {v:?}: {e}"))
    };
    let tpcc = |phase: &str, more: &[&str]| {
        let args = [
            &[
                phase,
                "-P",
                "workloads/tpcc",
                "--db",
                &db,
                "-threads",
                "2",
                "--agents",
                "3",
                "-p",
                "tpcc.check=true",
            ][..],
            more,
        ]
        .concat();
        coordinate(data, store_url, &args)
    };
    let load = tpcc("load", &["-p", "warehouses=3"]);
    let (_, said) = (ok(&load), text(&load.stderr));
    assert!(said.contains("(3 agent runs)"), "{said}");
    assert!(
        said.contains("checking TPC-C's consistency conditions"),
        "{said}"
    );
    tpcc_rows(3, &count);

    let run = tpcc("run", &["-p", "operationcount=600", "--seed", "5"]);
    let (out, said) = (ok(&run), text(&run.stderr));
    assert!(
        said.contains("checking TPC-C's consistency conditions"),
        "{said}"
    );
    let s = parse_summary(&out);
    let done = |kind: &str| get_or_zero(&s, kind, "Return=OK") as i64;
    assert_eq!(tpcc_done(&s), 600, "{out}");
    // Every order a New-Order made, in the database's own count, is one
    // the merged summary counts, and each agent's terminals made theirs
    // at home: every warehouse has new orders.
    let made = done("NEW_ORDER") - done("NEW_ORDER:rollback");
    assert_eq!(count("select count(*) from orders where o_id > 3000"), made);
    for w in 1..=3 {
        let mine = count(&format!(
            "select count(*) from orders where o_id > 3000 and o_w_id = {w}"
        ));
        assert!(mine > 0, "warehouse {w}: no New-Order homed there");
    }
    assert!(
        out.contains("3 warehouse(s)"),
        "tpmC over the three agents' warehouses: {out}"
    );
}

#[cfg(not(feature = "postgres"))]
fn tpcc_over_agents(_: &Postgres, _: &std::path::Path, _: &str) {}

/// `sojourn agent` on a server without the store's database makes it (three
/// agents racing to), and one whose user may not is refused naming the
/// statement to run; agents asked to stop exit and are `gone`, as is one
/// killed outright once its heartbeat is past the liveness limit; a later
/// `agents stop` neither asks nor counts any of them.
#[test]
fn agents_make_their_store_and_are_gone_once_they_exit() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = pg.port();
    let store_url = format!("postgres://{}@127.0.0.1:{port}/fleet", pg::USER);
    let mut agents: Vec<Agent> = ["a1", "a2", "a3"]
        .iter()
        .map(|n| Agent::start(&store_url, n, dir.path()))
        .collect();
    // The agents, not this test, create the database: wait for it first.
    let deadline = Instant::now() + Duration::from_secs(60);
    while pg
        .psql("SELECT COUNT(*) FROM pg_database WHERE datname = 'fleet'")
        .trim()
        != "1"
    {
        assert!(Instant::now() < deadline, "no agent created the store");
        std::thread::sleep(Duration::from_millis(50));
    }
    let store = Store::open(&pg.url().replace("/postgres", "/fleet")).unwrap();
    wait_for_agents(&store, 3);

    // A user without CREATEDB: refused, told what a superuser runs.
    pg.psql(&format!(
        "CREATE ROLE plain LOGIN PASSWORD '{}';",
        pg::PASSWORD
    ));
    let refused = bin()
        .args(["agent", "--results"])
        .arg(format!("postgres://plain@127.0.0.1:{port}/elsewhere"))
        .args(["--name", "p1", "--data-dir"])
        .arg(dir.path())
        .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
        .env_remove("PGPASSWORD")
        .run_to_end();
    let said = text(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("as a superuser, run CREATE DATABASE elsewhere OWNER plain;"),
        "{said}"
    );
    assert!(!said.contains(pg::PASSWORD), "{said}");

    // a3 is killed: it never says it exits. Its last heartbeat is made
    // older than the liveness limit (10 s), as waiting would make it.
    drop(agents.pop());
    pg.psql(
        "\\connect fleet\n\
         UPDATE agents SET heartbeat_unix = heartbeat_unix - 60 WHERE name = 'a3';",
    );
    let stop = tool(&store_url, &["agents", "stop", "--all"]);
    ok(&stop);
    assert!(
        text(&stop.stderr).contains("asked 2 agents to exit"),
        "{}",
        text(&stop.stderr)
    );
    for mut a in agents {
        let child = a.child.take().unwrap();
        let out = sojourn_testkit::process::finish_within(child, Duration::from_secs(60));
        assert!(out.status.success(), "{}: {}", a.name, text(&out.stderr));
    }
    for name in ["a1", "a2", "a3"] {
        assert_eq!(listed_state(&store_url, name), "gone");
    }

    // Nobody left to ask: none asked, none counted.
    let again = tool(&store_url, &["agents", "stop", "--all"]);
    let said = text(&again.stderr);
    assert!(again.status.success(), "{said}");
    assert!(
        said.contains("no agent is alive") && !said.contains("asked"),
        "{said}"
    );
    let asked = store
        .query("SELECT COUNT(*) FROM agents WHERE stop_requested <> 0")
        .unwrap();
    assert_eq!(format!("{:?}", asked.rows[0][0]), "Integer(0)");
    let one = tool(&store_url, &["agents", "stop", "a1"]);
    assert!(
        text(&one.stderr).contains("agent a1 is gone already (it exited"),
        "{}",
        text(&one.stderr)
    );
    let killed = tool(&store_url, &["agents", "stop", "a3"]);
    assert!(
        text(&killed.stderr).contains("agent a3 is gone already (no heartbeat for"),
        "{}",
        text(&killed.stderr)
    );
    let unknown = tool(&store_url, &["agents", "stop", "nobody"]);
    assert!(!unknown.status.success());
    assert!(text(&unknown.stderr).contains("no agent named nobody"));

    // An agent that finds no share for --idle-timeout exits by itself, 0,
    // saying why, and is gone; a timeout that is no time is refused.
    let idle = |timeout: &str| {
        bin()
            .args(["agent", "--results", &store_url, "--name", "idle"])
            .args(["--idle-timeout", timeout, "--data-dir"])
            .arg(dir.path())
            .env("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD)
            .env_remove("PGPASSWORD")
            .run_to_end()
    };
    let began = Instant::now();
    let out = idle("1");
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(": exiting (--idle-timeout)"), "{said}");
    assert!(began.elapsed() >= Duration::from_secs(1), "{said}");
    assert_eq!(listed_state(&store_url, "idle"), "gone");
    let zero = idle("0");
    assert!(!zero.status.success());
    assert!(
        text(&zero.stderr).contains("--idle-timeout 0: expected a number of seconds above 0"),
        "{}",
        text(&zero.stderr)
    );
}
