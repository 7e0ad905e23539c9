//! The key-value workload (`workload=keyvalue`) end to end against real
//! Redis and PostgreSQL servers: a load that writes every key, a run whose
//! writers continue from the keys found and whose reads all verify,
//! yb-sample-apps' status line, and the shipped `suites/yb-keyvalue` run by
//! `sojourn suite` (and refused on several client processes); and
//! yb-sample-apps' own command lines (`--workload RedisKeyValue --nodes
//! ...`) on Redis, PostgreSQL and a Cassandra node, their connections
//! spread over the nodes, their refusals, and their `--password` kept out
//! of every output and the results store.

mod util;

use std::path::Path;

use sojourn_core::backend::Status;
use sojourn_core::op::OpKind;
use sojourn_store::{Filter, RunStatus, Store};
use sojourn_testkit::postgres_server::Postgres;
use sojourn_testkit::redis_server::RedisServer;
use util::*;

/// Load 2,000 keys, then run 4,000 reads beside 500 writes, each pool at
/// its own rate, with 300 new keys left to insert: the writers insert
/// them, then update 200 keys already written.
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
                "num_unique_keys=2300",
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
    let stdout = ok(&out);
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "READ", "Return=OK"), 4000.0, "every read verifies");
    assert_eq!(get(&s, "INSERT", "Return=OK"), 300.0);
    assert_eq!(get(&s, "UPDATE", "Return=OK"), 200.0);
    assert_eq!(get_or_zero(&s, "READ", "Return=UNEXPECTED_STATE"), 0.0);
    assert_eq!(get_or_zero(&s, "READ", "Return=NOT_FOUND"), 0.0);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("run: 2000 keys written before this phase"),
        "{stderr}"
    );
    // The run's writers took keys 2000..2299, and say so.
    assert!(stderr.contains("maxWrittenKey 2299"), "{stderr}");
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
    // Which time ms/op is, said on the line.
    assert!(
        line.ends_with("| ms/op: response time (from the intended start)"),
        "{line}"
    );
    pools_are_the_stored_histograms(dir.path(), &stdout);
}

/// One pool's figures worked out from a stored run's histograms: its
/// operations, and the merged histograms of its kinds' successful
/// operations (service, response).
struct Pool {
    operations: u64,
    service: hdrhistogram::Histogram<u64>,
    response: hdrhistogram::Histogram<u64>,
}

fn pool(run: &sojourn_store::RunRecord, kinds: &[OpKind]) -> Pool {
    let new = || hdrhistogram::Histogram::<u64>::new(3).unwrap();
    let mut p = Pool {
        operations: 0,
        service: new(),
        response: new(),
    };
    for k in kinds {
        if let Some(o) = run.total.op(*k) {
            p.operations += o.count();
            p.service.add(&o.ok.service).unwrap();
            p.response.add(&o.ok.response).unwrap();
        }
    }
    p
}

/// The number after `label` in `line`, up to a space, `)` or `,`.
fn number_after(line: &str, label: &str) -> f64 {
    let rest = &line[line
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {line}"))
        + label.len()..];
    let end = rest.find([' ', ')', ',', ';']).unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("{label:?} in {line}"))
}

/// The run's `# reads/sec` and `# writes/sec` lines (yb-sample-apps'
/// headline figures) carry the stored run's figures: each pool's
/// operations over the measured period, and the mean and p99 of its
/// kinds' merged histograms, service and response time (the pools ran at
/// rates, so the summary shows both); `results show` prints the same
/// lines, the JSON report's `pools` and PKB's `reads`/`writes` samples
/// the same figures.
fn pools_are_the_stored_histograms(dir: &Path, stdout: &str) {
    let store = Store::open(&dir.join("results.sqlite").to_string_lossy()).unwrap();
    let listed = store.list(&Filter::default()).unwrap();
    let id = listed
        .iter()
        .find(|r| r.meta.phase == "run")
        .expect("a stored run phase")
        .meta
        .id
        .as_str()
        .to_string();
    let run = store.load(&id).unwrap();
    let seconds = run.measured().as_secs_f64();
    let pool_lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("# reads/sec: ") || l.starts_with("# writes/sec: "))
        .collect();
    assert_eq!(pool_lines.len(), 2, "{stdout}");
    let close = |got: f64, want: f64, digits: i32| {
        let half = 0.5 * 10f64.powi(-digits) * (1.0 + 1e-9);
        assert!(
            (got - want).abs() <= half,
            "printed {got}, the store's {want}"
        );
    };
    let mut pkb_figures = Vec::new();
    for (line, name, kinds, connections) in [
        (pool_lines[0], "reads", &[OpKind::Read][..], 3),
        (
            pool_lines[1],
            "writes",
            &[OpKind::Insert, OpKind::Update][..],
            2,
        ),
    ] {
        let p = pool(&run, kinds);
        assert!(line.starts_with(&format!("# {name}/sec: ")), "{line}");
        close(
            number_after(line, "/sec: "),
            p.operations as f64 / seconds,
            2,
        );
        assert!(
            line.contains(&format!(
                "({} {name} in {seconds:.2} s, {connections} connections",
                p.operations
            )),
            "{line}"
        );
        if name == "writes" {
            assert!(line.contains(": 300 inserts, 200 updates)"), "{line}");
        }
        for (time, h) in [("service", &p.service), ("response", &p.response)] {
            let at = &line[line.find(&format!("{time} time mean ")).unwrap()..];
            close(number_after(at, "mean "), h.mean() / 1e6, 3);
            close(
                number_after(at, "p99 "),
                h.value_at_quantile(0.99) as f64 / 1e6,
                3,
            );
        }
        pkb_figures.push((name, p));
    }

    // `results show` prints the same lines.
    let shown = bin()
        .args(["results", "show", &id, "--results"])
        .arg(dir.join("results.sqlite"))
        .run_to_end();
    let shown = ok(&shown);
    for line in &pool_lines {
        assert!(shown.lines().any(|l| l == *line), "{line} in\n{shown}");
    }

    // The JSON report and PKB's samples: the same figures, unrounded.
    let export = |format: &str| {
        ok(&bin()
            .args(["results", "export", &id, "--format", format, "--results"])
            .arg(dir.join("results.sqlite"))
            .run_to_end())
    };
    let report: serde_json::Value = serde_json::from_str(&export("report")).unwrap();
    let pools = report["pools"]
        .as_array()
        .expect("pools in the JSON report");
    let samples: Vec<serde_json::Value> = export("pkb")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sample = |metric: &str| {
        samples
            .iter()
            .find(|s| s["metric"] == metric)
            .unwrap_or_else(|| panic!("no PKB sample {metric}"))["value"]
            .as_f64()
            .unwrap()
    };
    for (i, (name, p)) in pkb_figures.iter().enumerate() {
        let j = &pools[i];
        assert_eq!(j["pool"], *name);
        assert_eq!(j["operations"].as_u64(), Some(p.operations));
        let rate = p.operations as f64 / seconds;
        assert!((j["ops_per_sec"].as_f64().unwrap() - rate).abs() <= 1e-9 * rate);
        assert!((sample(&format!("{name} Throughput")) - rate).abs() <= 1e-9 * rate);
        for (time, group, h) in [
            ("service", name.to_string(), &p.service),
            ("response", format!("intended-{name}"), &p.response),
        ] {
            let mean_us = h.mean() / 1e3;
            let p99_us = h.value_at_quantile(0.99) as f64 / 1e3;
            let eq = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(eq(j[time]["mean_us"].as_f64().unwrap(), mean_us), "{j}");
            assert!(eq(j[time]["p99_us"].as_f64().unwrap(), p99_us), "{j}");
            assert!(eq(
                sample(&format!("{group} AverageLatency")),
                mean_us / 1e3
            ));
            assert!(eq(
                sample(&format!("{group} 99thPercentileLatency")),
                p99_us / 1e3
            ));
        }
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

/// YCSB's settings that the workload does not read (`recordcount`,
/// `operationcount`, `-threads`, ...) are refused before anything runs,
/// in a workload file, with `-p` or with `-threads`, each error naming
/// where the key was set and the key-value property that does its job;
/// nothing reaches the database.
#[test]
fn ycsb_settings_it_does_not_read_are_refused() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let kv = |extra: &[&str]| -> String {
        let mut args = vec!["load", "--db", &url, "-P", "workloads/keyvalue"];
        args.extend_from_slice(extra);
        refused(dir.path(), &args)
    };
    // YCSB's own command line, as the user gave it.
    let e = kv(&["-p", "recordcount=1000", "-p", "operationcount=2000"]);
    let line = e
        .lines()
        .find(|l| l.contains("operationcount"))
        .unwrap_or_else(|| panic!("{e}"));
    assert!(
        line.contains("-p on the command line: operationcount = '2000': ")
            && line.contains("num_writes and num_reads")
            && line.contains(
                "also not read: recordcount = '1000' (-p on the command line): the number of \
                 keys is num_unique_keys"
            ),
        "{line}"
    );
    let e = kv(&["-threads", "8"]);
    assert!(
        e.contains("--threads: threadcount = '8': ")
            && e.contains("num_threads_write and num_threads_read"),
        "{e}"
    );
    // In a file: the file's line.
    let file = dir.path().join("kv-ycsb");
    std::fs::write(
        &file,
        "workload=keyvalue\nnum_unique_keys=100\nrequestdistribution=zipfian\nrecordcount=100\n",
    )
    .unwrap();
    let e = refused(
        dir.path(),
        &["load", "--db", &url, "-P", file.to_str().unwrap()],
    );
    assert!(
        e.contains(&format!(
            "{}:3: requestdistribution = 'zipfian': ",
            file.display()
        )) && e.contains("read_distribution")
            && e.contains(&format!(
                "also not read: recordcount = '100' ({}:4): the number of keys is \
                 num_unique_keys",
                file.display()
            )),
        "{e}"
    );
    assert_eq!(server.command(&["DBSIZE"]), ":0", "nothing was written");
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
    let folder = shipped_suite(dir.path(), "yb-keyvalue");
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
    let folder = shipped_suite(dir.path(), "yb-keyvalue");
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

/// yb-sample-apps' load line and read-heavy line (the large-dataset
/// benchmark's, scaled down), as its users write them with `--workload`,
/// run by `sojourn load` and `sojourn run` on `nodes`, with `auth` (its
/// `--username`/`--password`, if any). Returns what the load said on
/// stderr and the run on stdout and stderr, each phase's counts checked
/// against the flags: every key inserted once, every read verified.
fn yb_lines(dir: &Path, app: &str, nodes: &str, auth: &[&str]) -> [String; 3] {
    let yb = |phase: &'static str, flags: &[&'static str]| -> Vec<String> {
        [phase, "--workload", app, "--nodes", nodes]
            .iter()
            .chain(flags)
            .chain(auth)
            .map(|s| s.to_string())
            .collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        sojourn(dir, &args)
    };
    let load = run(yb(
        "load",
        &[
            "--nouuid",
            "--value_size",
            "256",
            "--num_unique_keys",
            "3000",
            "--num_writes",
            "3000",
            "--num_threads_write",
            "8",
            "--num_threads_read",
            "1",
        ],
    ));
    let s = parse_summary(&ok(&load));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 3000.0, "{s:?}");
    assert_eq!(get_or_zero(&s, "UPDATE", "Operations"), 0.0);
    assert!(
        get_or_zero(&s, "READ", "Operations") == 0.0,
        "a load has no readers"
    );
    let load_stderr = text(&load.stderr);

    // Random-data read heavy: readers over every key beside a writer
    // updating them; each pool's count as the flags say.
    let out = run(yb(
        "run",
        &[
            "--nouuid",
            "--value_size",
            "256",
            "--num_unique_keys",
            "3000",
            "--num_threads_write",
            "1",
            "--num_threads_read",
            "8",
            "--num_reads",
            "6000",
            "--num_writes",
            "300",
        ],
    ));
    let stdout = ok(&out);
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "READ", "Return=OK"), 6000.0, "every read verifies");
    assert_eq!(get(&s, "READ", "Operations"), 6000.0);
    assert_eq!(get_or_zero(&s, "READ", "Return=UNEXPECTED_STATE"), 0.0);
    assert_eq!(get_or_zero(&s, "READ", "Return=NOT_FOUND"), 0.0);
    assert_eq!(get(&s, "UPDATE", "Return=OK"), 300.0);
    assert_eq!(get_or_zero(&s, "INSERT", "Operations"), 0.0);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("run: 3000 keys written before this phase"),
        "{stderr}"
    );
    [load_stderr, stdout, stderr]
}

/// On Redis: the lines run as yb-sample-apps' RedisKeyValue does (SET and
/// GET of one string per key) over two addresses of one server; and two
/// servers as two nodes each get a share of the load's connections.
#[test]
fn yb_sample_apps_lines_on_redis() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = server.port();
    let nodes = format!("127.0.0.1:{port},localhost:{port}");
    let [load, stdout, stderr] = yb_lines(dir.path(), "RedisKeyValue", &nodes, &[]);
    // yb-sample-apps' commands: a string per key, no YCSB index.
    assert_eq!(server.command(&["DBSIZE"]), ":3000");
    assert!(server.command(&["GET", "key:0"]).len() == 256);
    assert!(stdout.contains("# reads/sec: "), "{stdout}");
    // The defaults taken from yb-sample-apps where they differ from
    // workloads/keyvalue's, in one note: the load left out --num_reads
    // (RedisKeyValue's -1 against the file's 100000); the run gave all.
    let notes = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| l.starts_with("note: "))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        notes(&load),
        [
            "note: yb-sample-apps' RedisKeyValue defaults used, where workloads/keyvalue has \
          others (in brackets): --num_reads -1 (100000)"
        ]
    );
    assert_eq!(notes(&stderr), Vec::<String>::new());

    // Two servers as two nodes: the writers' connections alternate
    // between them, so each holds some of the keys and together all.
    let Some(other) = RedisServer::start(None) else {
        return;
    };
    let nodes = format!("127.0.0.1:{port},127.0.0.1:{}", other.port());
    let load = sojourn(
        dir.path(),
        &[
            "load",
            "--workload",
            "RedisKeyValue",
            "--nodes",
            &nodes,
            "--nouuid",
            "--num_unique_keys",
            "2000",
            "--num_threads_write",
            "4",
            "--drop",
        ],
    );
    let s = parse_summary(&ok(&load));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 2000.0);
    let keys = |s: &RedisServer| -> u64 { s.command(&["DBSIZE"])[1..].parse().unwrap() };
    let (a, b) = (keys(&server), keys(&other));
    assert!(a > 0 && b > 0 && a + b == 2000, "{a} and {b} keys");
}

/// On PostgreSQL, yb-sample-apps' SqlInserts table over two addresses of
/// one server, as `--username` and `--password` log in; the password is
/// in no output and nowhere in the results store, and neither is a wrong
/// one in the error it gets.
#[test]
fn yb_sample_apps_lines_on_postgres() {
    use sojourn_testkit::postgres_server::{PASSWORD, USER};
    let Some(server) = Postgres::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = server.port();
    let nodes = format!("127.0.0.1:{port},localhost:{port}");
    let auth = ["--username", USER, "--password", PASSWORD];
    let [load, stdout, stderr] = yb_lines(dir.path(), "SqlInserts", &nodes, &auth);
    assert_eq!(
        server
            .psql("SELECT count(*) FROM PostgresqlKeyValue")
            .trim(),
        "3000"
    );
    for (what, out) in [("load", &load), ("stdout", &stdout), ("stderr", &stderr)] {
        assert!(!out.contains(PASSWORD), "the password in {what}:\n{out}");
    }
    assert!(stderr.contains("--password ***"), "{stderr}");
    let store = std::fs::read(dir.path().join("results.sqlite")).unwrap();
    let store = String::from_utf8_lossy(&store);
    assert!(store.contains("SqlInserts"), "the command line is stored");
    assert!(
        !store.contains(PASSWORD),
        "the password in the results store"
    );

    let wrong = "wr0ng-Pa55word";
    let e = refused(
        dir.path(),
        &[
            "load",
            "--workload",
            "SqlInserts",
            "--nodes",
            &nodes,
            "--username",
            USER,
            "--password",
            wrong,
            "--num_unique_keys",
            "10",
        ],
    );
    assert!(e.contains("password") && !e.contains(wrong), "{e}");
}

/// yb-sample-apps' flags that sojourn does not read, and the two
/// spellings mixed, are refused before anything runs, naming the flag.
#[test]
fn yb_sample_apps_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let yb = [
        "run",
        "--workload",
        "CassandraKeyValue",
        "--nodes",
        "127.0.0.1:1",
    ];
    let with = |more: &[&str]| refused(dir.path(), &[&yb[..], more].concat());
    let e = with(&["--batch_size", "16", "--num_reads", "10"]);
    assert!(
        e.contains("--batch_size: a flag of yb-sample-apps that sojourn does not read")
            && e.contains("--num_unique_keys, --num_writes, --num_reads"),
        "{e}"
    );
    let e = with(&["-P", "workloads/keyvalue"]);
    assert!(e.contains("leave out -P"), "{e}");
    let e = with(&["-p", "num_reads=5"]);
    assert!(e.contains("give that instead"), "{e}");
    let e = refused(
        dir.path(),
        &[
            "run",
            "--workload",
            "RedisKeyValue",
            "--nodes",
            "127.0.0.1:1",
        ],
    );
    assert!(
        e.contains("--num_reads -1 (yb-sample-apps' RedisKeyValue default)")
            && e.contains("--run_time"),
        "{e}"
    );
    let e = refused(
        dir.path(),
        &["run", "--workload", "SqlUpdates", "--nodes", "h"],
    );
    assert!(
        e.contains("CassandraKeyValue, RedisKeyValue and SqlInserts"),
        "{e}"
    );
}

/// On a Cassandra node, CassandraKeyValue's lines in yb-sample-apps' own
/// keyspace and table (`ybdemo_keyspace.CassandraKeyValue`, `k`/`v`), as
/// `--username` and `--password` log in, the password in no output.
#[test]
fn yb_sample_apps_lines_on_cassandra() {
    use sojourn_testkit::cassandra_server::{CassandraServer, PASSWORD, USER};
    let Some(node) = CassandraServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let auth = ["--username", USER, "--password", PASSWORD];
    let [load, stdout, stderr] = yb_lines(dir.path(), "CassandraKeyValue", &node.host(), &auth);
    for (what, out) in [("load", &load), ("stdout", &stdout), ("stderr", &stderr)] {
        assert!(!out.contains(PASSWORD), "the password in {what}:\n{out}");
    }
    // yb-sample-apps' keyspace, as the stored runs name their database.
    let store = Store::open(&dir.path().join("results.sqlite").to_string_lossy()).unwrap();
    for r in store.list(&Filter::default()).unwrap() {
        let want = format!("cassandra://{USER}:***@{}/ybdemo_keyspace (", node.host());
        assert!(r.meta.backend.starts_with(&want), "{}", r.meta.backend);
    }
}
