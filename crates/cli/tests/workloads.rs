//! End to end: `load` then `run` of every shipped workload on the embedded
//! SQLite database, with the YCSB summary parsed back and checked.

mod util;

use util::*;

const OPS: f64 = 4000.0;

/// Five standard deviations of a binomial count: wide enough never to fail
/// by chance, narrow enough to catch a wrong mix.
fn within(count: f64, p: f64) -> bool {
    let sd = (OPS * p * (1.0 - p)).sqrt();
    (count - OPS * p).abs() <= 5.0 * sd + 1.0
}

fn load_and_run(workload: &str) -> Summary {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("w.sqlite").display());
    let load = sojourn(
        dir.path(),
        &["load", "--db", &db, "-P", workload, "-threads", "2"],
    );
    let s = parse_summary(&ok(&load));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 1000.0, "{workload} load");
    let run = sojourn(
        dir.path(),
        &[
            "run",
            "--db",
            &db,
            "-P",
            workload,
            "-p",
            "operationcount=4000",
            "-threads",
            "2",
            "--seed",
            "42",
        ],
    );
    parse_summary(&ok(&run))
}

fn ok_count(s: &Summary, group: &str) -> f64 {
    get_or_zero(s, group, "Return=OK")
}

#[test]
fn workload_a_b_c_x_mixes() {
    for (w, read, update) in [
        ("workloads/workloada", 0.5, 0.5),
        ("workloads/workloadb", 0.95, 0.05),
        ("workloads/workloadc", 1.0, 0.0),
        ("workloads/workloadx", 0.0, 1.0),
    ] {
        let s = load_and_run(w);
        let (r, u) = (ok_count(&s, "READ"), ok_count(&s, "UPDATE"));
        assert_eq!(r + u, OPS, "{w}: every operation succeeded: {s:#?}");
        assert!(within(r, read), "{w}: {r} reads");
        assert!(within(u, update), "{w}: {u} updates");
        if r > 0.0 {
            assert_eq!(get(&s, "READ", "Operations"), r);
            assert!(
                get(&s, "READ", "99thPercentileLatency(us)")
                    >= get(&s, "READ", "95thPercentileLatency(us)")
            );
        }
        assert!(get(&s, "OVERALL", "Throughput(ops/sec)") > 0.0);
    }
}

#[test]
fn workload_d_reads_latest_and_inserts() {
    let s = load_and_run("workloads/workloadd");
    let (r, i) = (ok_count(&s, "READ"), ok_count(&s, "INSERT"));
    assert_eq!(r + i, OPS, "{s:#?}");
    assert!(within(i, 0.05), "{i} inserts");
}

/// Workload D's reads favour the newest records ("latest"): with only the
/// newest tenth of the records loaded (keys 900 to 999 of 1000, by YCSB's
/// `insertstart`/`insertcount`), a read finds its record only when it
/// picked one of those or one the run inserted; every other read finds
/// nothing, which the summary counts apart.
#[test]
fn workload_d_reads_favour_the_newest_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.sqlite").display());
    let w = "workloads/workloadd";
    let load = sojourn(
        dir.path(),
        &[
            "load",
            "--db",
            &db,
            "-P",
            w,
            "-p",
            "insertstart=900",
            "-p",
            "insertcount=100",
        ],
    );
    let s = parse_summary(&ok(&load));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 100.0, "{s:#?}");
    let run = sojourn(
        dir.path(),
        &[
            "run",
            "--db",
            &db,
            "-P",
            w,
            "-p",
            "operationcount=4000",
            "-threads",
            "2",
            "--seed",
            "42",
        ],
    );
    let s = parse_summary(&ok(&run));
    let found = ok_count(&s, "READ");
    let missing = get_or_zero(&s, "READ", "Return=NOT_FOUND");
    let inserts = ok_count(&s, "INSERT");
    assert_eq!(found + missing + inserts, OPS, "{s:#?}");
    assert!(within(inserts, 0.05), "{inserts} inserts");
    // Uniform choice over the 1000-odd keys would find about one read in
    // six (the hundred loaded plus the 200-odd inserted); "latest"
    // (zipfian over recency, theta 0.99) puts zeta(100)/zeta(1000) = 0.69
    // of its reads on the newest hundred keys alone, more as inserts come.
    let share = found / (found + missing);
    assert!(share > 0.6, "{share:.3} of reads found a record: {s:#?}");
}

#[test]
fn workload_e_scans_and_inserts() {
    let s = load_and_run("workloads/workloade");
    let (sc, i) = (ok_count(&s, "SCAN"), ok_count(&s, "INSERT"));
    assert_eq!(sc + i, OPS, "{s:#?}");
    assert!(within(sc, 0.95), "{sc} scans");
}

#[test]
fn workload_f_read_modify_write_counts_its_parts() {
    let s = load_and_run("workloads/workloadf");
    let rmw = ok_count(&s, "READ-MODIFY-WRITE");
    // As in YCSB, a read-modify-write's read and update are measured under
    // READ and UPDATE too.
    assert_eq!(ok_count(&s, "READ"), OPS, "{s:#?}");
    assert_eq!(ok_count(&s, "UPDATE"), rmw);
    assert!(within(rmw, 0.5), "{rmw} read-modify-writes");
}

#[test]
fn hashed_keys_match_ycsb() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.sqlite");
    let db = format!("sqlite:{}", file.display());
    ok(&sojourn(
        dir.path(),
        &[
            "load",
            "--db",
            &db,
            "-P",
            "workloads/workloada",
            "-p",
            "recordcount=3",
            "-p",
            "insertorder=hashed",
        ],
    ));
    let conn = rusqlite::Connection::open(&file).unwrap();
    let mut st = conn
        .prepare("SELECT YCSB_KEY FROM usertable ORDER BY YCSB_KEY")
        .unwrap();
    let keys: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        keys,
        [
            "user1820151046732198393",
            "user6284781860667377211",
            "user8517097267634966620"
        ]
    );
}

#[test]
fn data_integrity_verifies_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("d.sqlite").display());
    let di = [
        "-P",
        "workloada",
        "-p",
        "dataintegrity=true",
        "-p",
        "operationcount=2000",
    ];
    ok(&sojourn(
        dir.path(),
        &[&["load", "--db", &db][..], &di].concat(),
    ));
    let s = parse_summary(&ok(&sojourn(
        dir.path(),
        &[&["run", "--db", &db][..], &di].concat(),
    )));
    assert!(ok_count(&s, "READ") > 0.0);
    assert_eq!(
        get_or_zero(&s, "READ", "Return=UNEXPECTED_STATE"),
        0.0,
        "{s:#?}"
    );

    // Data written without integrity values fails verification, counted
    // and reported: every read fails, so the phase fails (exit status 1)
    // once its summary is printed and it is stored.
    let db2 = format!("sqlite:{}", dir.path().join("r.sqlite").display());
    ok(&sojourn(
        dir.path(),
        &["load", "--db", &db2, "-P", "workloadc"],
    ));
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "--db",
            &db2,
            "-P",
            "workloadc",
            "-p",
            "dataintegrity=true",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    assert_eq!(get(&s, "READ", "Return=UNEXPECTED_STATE"), 1000.0);
    assert!(
        stderr.contains("1000 of 1000 READ operations did not succeed: 1000 × UNEXPECTED_STATE"),
        "a warning names the status: {stderr}"
    );
    assert!(stderr.contains("recorded as run"), "{stderr}");
}

#[test]
fn bench_loads_once_then_runs() {
    let dir = tempfile::tempdir().unwrap();
    let first = sojourn(dir.path(), &["bench", "-P", "workloada"]);
    let s = parse_summary(&ok(&first));
    assert_eq!(ok_count(&s, "READ") + ok_count(&s, "UPDATE"), 1000.0);
    assert!(
        text(&first.stderr).contains("loaded 1000 records"),
        "{}",
        text(&first.stderr)
    );
    assert!(
        dir.path().join("sojourn.sqlite").exists(),
        "default database in the data directory"
    );
    let second = sojourn(dir.path(), &["bench", "-P", "workloada"]);
    ok(&second);
    assert!(
        text(&second.stderr).contains("skipping load"),
        "{}",
        text(&second.stderr)
    );
}

#[test]
fn json_report_has_rates_cpu_and_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let out = sojourn(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloada",
            "-p",
            "operationcount=3000",
            "-target",
            "3000",
            "--seed",
            "5",
            "--format",
            "json",
            "--json",
            file.to_str().unwrap(),
        ],
    );
    let stdout = ok(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    let f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["operations"], f["operations"]);
    assert_eq!(v["operations"], 3000);
    assert_eq!(v["seed"], 5);
    assert_eq!(v["target_ops_per_sec"], 3000.0);
    let achieved = v["achieved_ops_per_sec"].as_f64().unwrap();
    assert!(achieved > 2500.0 && achieved < 3500.0, "{achieved}");
    // Offered is what the schedule released over the run: all 3,000.
    let offered = v["offered_ops_per_sec"].as_f64().unwrap() * v["runtime_ms"].as_f64().unwrap();
    assert!((offered / 1000.0 - 3000.0).abs() < 0.01, "{offered}");
    let cpu = &v["client_cpu"];
    let seconds = cpu["user_s"].as_f64().unwrap() + cpu["system_s"].as_f64().unwrap();
    assert!(seconds > 0.0, "{cpu}");
    let per_op = cpu["us_per_op"].as_f64().unwrap();
    assert!(
        (per_op - seconds * 1e6 / 3000.0).abs() < 1e-6 * per_op,
        "{cpu}"
    );
    // One lag per arrival: the schedule's lateness in releasing it.
    let lag = &v["scheduling_lag"];
    assert_eq!(lag["count"], 3000, "{lag}");
    assert!(lag["p99_us"].as_f64().unwrap() >= lag["p50_us"].as_f64().unwrap());
    for kind in ["read", "update"] {
        let op = &v["ops"][kind];
        assert!(op["count"].as_u64().unwrap() > 1000);
        for lat in ["service", "response"] {
            let l = &op[lat];
            let ps: Vec<f64> = [
                "p50_us",
                "p90_us",
                "p95_us",
                "p99_us",
                "p99_9_us",
                "p99_99_us",
                "max_us",
            ]
            .iter()
            .map(|k| l[k].as_f64().unwrap())
            .collect();
            assert!(
                ps.windows(2).all(|w| w[0] <= w[1]),
                "{kind} {lat} percentiles ascend: {ps:?}"
            );
        }
        // Response time includes service time.
        assert!(op["response"]["p50_us"].as_f64() >= op["service"]["p50_us"].as_f64());
    }
}

#[test]
fn huge_keyspace_starts_at_once() {
    // 3e10 records, 1000 operations. Scrambled zipfian (workload A) draws
    // from YCSB's fixed inner zipfian; "latest" builds a zipfian over the
    // whole key space, whose zeta is O(1) here and would be O(n) (many
    // minutes) done YCSB's way. The deadline fails a regression instead of
    // hanging the suite; each run takes well under a second.
    for distribution in ["zipfian", "latest"] {
        let dir = tempfile::tempdir().unwrap();
        let requests = format!("requestdistribution={distribution}");
        let out = sojourn_within(
            dir.path(),
            &[
                "run",
                "null:",
                "-P",
                "workloada",
                "-p",
                "recordcount=30000000000",
                "-p",
                "operationcount=1000",
                "-p",
                &requests,
            ],
            std::time::Duration::from_secs(60),
        );
        let s = parse_summary(&ok(&out));
        assert_eq!(
            ok_count(&s, "READ") + ok_count(&s, "UPDATE"),
            1000.0,
            "{distribution}"
        );
    }
}

#[test]
fn status_lines_end_with_one_at_the_end_of_a_short_run() {
    let dir = tempfile::tempdir().unwrap();
    // 300 operations take well under the default 10 s status interval:
    // without a line at the end, `-s` would print none.
    let out = sojourn(
        dir.path(),
        &[
            "bench",
            "-P",
            "workloadc",
            "-p",
            "recordcount=100",
            "-p",
            "operationcount=300",
            "-s",
        ],
    );
    ok(&out);
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" current ops/sec;"))
        .collect();
    // The load's and the run's, each counting every operation it did.
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].contains(" sec: 100 operations; "), "{stderr}");
    assert!(lines[1].contains(" sec: 300 operations; "), "{stderr}");
    // The run read, and its line says how long the reads took.
    assert!(lines[1].contains("[READ: Count=300, "), "{stderr}");
}

/// pgbench's scripts on SQLite: `-b tpcb-like`'s tables loaded at the
/// scale asked, each transaction's four writes made (every balance's sum
/// the sum of the history's deltas), and a script of one's own keeping a
/// value with `\gset` and branching on it.
#[test]
fn pgbench_scripts_run_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pgbench.sqlite");
    let db = format!("sqlite:{}", path.display());
    let load = sojourn(
        dir.path(),
        &["load", "--db", &db, "-b", "tpcb-like", "--scale", "2"],
    );
    ok(&load);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let one = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(one("SELECT count(*) FROM pgbench_accounts"), 200_000);
    assert_eq!(one("SELECT count(*) FROM pgbench_tellers"), 20);
    assert_eq!(one("SELECT count(*) FROM pgbench_branches"), 2);
    assert_eq!(one("SELECT max(aid) FROM pgbench_accounts"), 200_000);

    let run = sojourn(
        dir.path(),
        &[
            "run",
            "--db",
            &db,
            "-b",
            "tpcb-like",
            "-p",
            "operationcount=300",
            "-threads",
            "2",
            "--seed",
            "5",
        ],
    );
    let s = parse_summary(&ok(&run));
    assert_eq!(get(&s, "tpcb-like", "Return=OK"), 300.0, "{s:#?}");
    assert_eq!(one("SELECT count(*) FROM pgbench_history"), 300);
    assert_pgbench_balances(&one);
    gset_and_if_script(dir.path(), &db, &one);
}

/// TPC-C on SQLite (see `tpcc_end_to_end`).
#[test]
fn tpcc_runs_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpcc.sqlite");
    let db = format!("sqlite:{}", path.display());
    let value = |sql: &str| -> f64 {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row(sql, [], |r| r.get::<_, f64>(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let exec = |sql: &str| {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(sql).unwrap();
    };
    tpcc_end_to_end(dir.path(), &db, &value, &exec);

    // The spec's terminals: ten per warehouse, each waiting its keying
    // and think times (a hundredth of them), make at most the spec's
    // ceiling, 12.86 tpmC a warehouse (here 1,286), and about that much
    // on a database that keeps up. Twenty terminals over 8 s make about
    // 343 New-Orders, give or take 11.
    let run = sojourn(
        dir.path(),
        &[
            "run",
            "-P",
            "workloads/tpcc",
            "-p",
            "warehouses=2",
            "-p",
            "tpcc.wait=true",
            "-p",
            "tpcc.wait_scale=0.01",
            "-p",
            "maxexecutiontime=8",
            "--db",
            &db,
        ],
    );
    let out = ok(&run);
    let line = out
        .lines()
        .find(|l| l.starts_with("# tpcc: tpmC"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("of 1286 tpmC each"), "{line}");
    let tpmc: f64 = line["# tpcc: tpmC ".len()..]
        .split(' ')
        .next()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        (0.7 * 2572.0..=1.15 * 2572.0).contains(&tpmc),
        "{tpmc} tpmC against 2572 at most: {line}"
    );
    // Each transaction's response time is reported beside its service
    // time: it counts from the terminal's intended submission.
    assert!(out.contains("[Intended-NEW_ORDER], Operations"), "{out}");
}

/// A TPC-C load resumes by district: one that finds a warehouse and all
/// but one of its districts loads the missing district and the new
/// warehouse, and nothing twice; the consistency conditions then hold.
#[test]
fn tpcc_load_resumes_by_district() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpcc.sqlite");
    let db = format!("sqlite:{}", path.display());
    let count = |sql: &str| -> i64 {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row(sql, [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let load = |more: &[&str]| {
        let args = [&["load", "-P", "workloads/tpcc", "--db", &db][..], more].concat();
        sojourn(dir.path(), &args)
    };
    ok(&load(&["-p", "warehouses=1"]));
    // District 7 of warehouse 1 as if its load never committed: its rows,
    // its tenth of the stock and of the items gone.
    let conn = rusqlite::Connection::open(&path).unwrap();
    for sql in [
        "delete from district where d_w_id = 1 and d_id = 7",
        "delete from customer where c_w_id = 1 and c_d_id = 7",
        "delete from history where h_w_id = 1 and h_d_id = 7",
        "delete from orders where o_w_id = 1 and o_d_id = 7",
        "delete from order_line where ol_w_id = 1 and ol_d_id = 7",
        "delete from new_order where no_w_id = 1 and no_d_id = 7",
        "delete from stock where s_w_id = 1 and s_i_id between 60001 and 70000",
        "delete from item where i_id between 60001 and 70000",
    ] {
        conn.execute(sql, []).unwrap();
    }
    drop(conn);
    let again = refused(dir.path(), &["load", "-P", "workloads/tpcc", "--db", &db]);
    assert!(again.contains("--drop"), "{again}");

    let resumed = load(&[
        "-p",
        "warehouses=2",
        "-p",
        "tpcc.resume=true",
        "-p",
        "tpcc.check=true",
    ]);
    let said = text(&resumed.stderr);
    let s = parse_summary(&ok(&resumed));
    assert_eq!(get(&s, "INSERT", "Return=OK"), 11.0, "{said}");
    assert!(
        said.contains("checking TPC-C's consistency conditions"),
        "{said}"
    );
    tpcc_rows(2, &count);
    assert_eq!(
        count("select count(*) from order_line"),
        count("select sum(o_ol_cnt) from orders")
    );
}
