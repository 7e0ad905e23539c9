//! The LIOPS workload (PGIO's method) end to end against real PostgreSQL
//! and MariaDB: rows are one per block in random key order with their
//! index, selects touch WORK_UNIT + 1 rows and the server's own counters
//! agree, UPDATE_PCT is held, the LIOPS lines and JSON figures follow the
//! summary, runs are stored and reported, the shipped suite runs, and a
//! backend without the workload says which ones have it.
#![cfg(all(feature = "postgres", feature = "mysql"))]

mod util;

use std::path::Path;

use sojourn_store::{Filter, RunStatus, Store};
use sojourn_testkit::mariadb_server::Mariadb;
use sojourn_testkit::postgres_server::{self as pg, Postgres};
use util::*;

const SCALE: u64 = 3000;
const WORK_UNIT: u64 = 100;
const UPDATE_WORK_UNIT: u64 = 8;

/// `sojourn ARGS` of the shipped LIOPS workload scaled down (2 tables of
/// 3,000 rows, 2 sessions per table), with extra `-p` properties.
fn liops(data: &Path, mode: &str, url: &str, extra: &[&str]) -> (String, String) {
    liops_with(data, mode, url, extra, &[])
}

/// As [`liops`], with more arguments after the properties (`--json FILE`,
/// `--no-store` instead of the store under `data`).
fn liops_with(
    data: &Path,
    mode: &str,
    url: &str,
    extra: &[&str],
    flags: &[&str],
) -> (String, String) {
    let results = data.join("results.sqlite");
    let scale = format!("SCALE={SCALE}");
    let work = format!("WORK_UNIT={WORK_UNIT}");
    let update = format!("UPDATE_WORK_UNIT={UPDATE_WORK_UNIT}");
    let mut args = vec![
        mode,
        url,
        "-P",
        "workloads/liops",
        "-p",
        "NUM_SCHEMAS=2",
        "-p",
        "NUM_THREADS=2",
        "-p",
        &scale,
        "-p",
        &work,
        "-p",
        &update,
        // Loaded in several batches per table.
        "-p",
        "liops.batch=700",
        "--seed",
        "5",
    ];
    let results = results.to_string_lossy();
    // Runs go to the one store, unless the flags say `--no-store`.
    if !flags.contains(&"--no-store") {
        args.extend(["--results", &results]);
    }
    for p in extra {
        args.extend(["-p", p]);
    }
    args.extend(flags);
    let out = sojourn(data, &args);
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        !stdout.contains(pg::PASSWORD) && !stderr.contains(pg::PASSWORD),
        "password in output:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

/// The server's index fetches over the LIOPS tables account for the `rows`
/// the selects read, plus the planner's own: planning a range that reaches
/// past the column's histogram reads the index's end, a fetch or two per
/// plan, and each of `sessions` plans its statement with the actual values
/// for its first five executions. Unpublished session counts would fall
/// short; a select touching one row too many would add hundreds.
fn assert_index_fetches(fetched: f64, rows: u64, sessions: u64) {
    let rows = rows as f64;
    let probes = (20 * sessions) as f64;
    assert!(
        (rows..=rows + probes).contains(&fetched),
        "{fetched} index fetches for {rows} rows selected by {sessions} session(s)"
    );
}

/// The figure after `label` on the `# ...` line that starts with it.
fn figure(stdout: &str, label: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in\n{stdout}"));
    line[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.trim_end_matches(',').parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in {line:?}"))
}

/// The JSON report written to `path`.
fn json_at(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The JSON report's server counter delta `name`.
fn server_delta(json: &serde_json::Value, name: &str) -> f64 {
    json["server"]["deltas"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no server delta {name} in {:#}", json["server"]))
}

#[test]
fn postgres_rows_per_block_ranges_and_counters() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let (_, stderr) = liops(data, "load", &pg.url(), &["dropdata=true"]);
    assert!(stderr.contains("building the index on mykey"), "{stderr}");
    for t in ["pgio1", "pgio2"] {
        assert_eq!(
            pg.psql(&format!(
                "SELECT count(DISTINCT mykey), min(mykey), max(mykey) FROM {t}"
            ))
            .trim(),
            format!("{SCALE}|1|{SCALE}")
        );
        // One row per 8 KB block (fillfactor 10).
        let per_row: f64 = pg
            .psql(&format!(
                "SELECT pg_relation_size('{t}')::float8 / count(*) FROM {t}"
            ))
            .trim()
            .parse()
            .unwrap();
        assert!(
            (8100.0..=8300.0).contains(&per_row),
            "{t}: {per_row} bytes per row"
        );
        assert_eq!(
            pg.psql(&format!(
                "SELECT indexdef FROM pg_indexes WHERE tablename = '{t}'"
            ))
            .trim(),
            format!("CREATE INDEX {t}_mykey ON public.{t} USING btree (mykey)")
        );
        // Stored in random key order: in block order, neighbours are
        // rarely consecutive keys.
        let consecutive: u64 = pg
            .psql(&format!(
                "SELECT count(*) FROM (SELECT mykey - lag(mykey) OVER (ORDER BY ctid) AS d \
                 FROM {t}) x WHERE d = 1"
            ))
            .trim()
            .parse()
            .unwrap();
        assert!(
            consecutive < 30,
            "{t}: {consecutive} rows follow their key's neighbour"
        );
    }

    // Selects only: each reads WORK_UNIT + 1 rows, nothing is updated,
    // and the server saw exactly those row fetches.
    let json_path = data.join("select.json");
    let (stdout, _) = liops_with(
        data,
        "run",
        &pg.url(),
        &["UPDATE_PCT=0", "operationcount=400"],
        &["--json", &json_path.to_string_lossy()],
    );
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "SCAN", "Return=OK"), 400.0, "{stdout}");
    assert!(!s.contains_key("UPDATE"), "{stdout}");
    let rows = 400 * (WORK_UNIT + 1);
    assert_eq!(figure(&stdout, "# rows touched:"), rows as f64, "{stdout}");
    assert!(stdout.contains(&format!("# liops: 400 selects of {} rows", WORK_UNIT + 1)));
    assert!(figure(&stdout, "# LIOPS (rows/s):") > 0.0);
    assert!(
        stdout.contains("# server/s: blks_hit (cache hits)"),
        "{stdout}"
    );
    let json = json_at(&json_path);
    assert_eq!(json["liops"]["rows_selected"], rows);
    assert_eq!(json["liops"]["rows_updated"], 0);
    assert_eq!(server_delta(&json, "table_tup_updated"), 0.0);
    // Every row a select read, fetched through the index: the sessions
    // published their counters as the phase ended.
    assert_index_fetches(server_delta(&json, "table_idx_tup_fetch"), rows, 4);

    // UPDATE_PCT=20: a fifth of the operations update, and the server
    // changed exactly the rows they say.
    let (stdout, _) = liops(
        data,
        "run",
        &pg.url(),
        &["UPDATE_PCT=20", "operationcount=1000", "warmup=0"],
    );
    let s = parse_summary(&stdout);
    let updates = get(&s, "UPDATE", "Return=OK");
    let selects = get(&s, "SCAN", "Return=OK");
    assert_eq!(updates + selects, 1000.0, "{stdout}");
    // Each session updates 1 in 5 of its own operations; the sessions
    // share the 1,000 unevenly, so allow a few either way.
    assert!(
        (190.0..=210.0).contains(&updates),
        "{updates} updates\n{stdout}"
    );
    assert_eq!(
        figure(&stdout, "# rows touched:"),
        selects * (WORK_UNIT + 1) as f64,
        "{stdout}"
    );
    let json_path = data.join("update.json");
    let (stdout, _) = liops_with(
        data,
        "run",
        &pg.url(),
        &["UPDATE_PCT=50", "operationcount=100"],
        &["--json", &json_path.to_string_lossy(), "--no-store"],
    );
    let s = parse_summary(&stdout);
    let updates = get(&s, "UPDATE", "Return=OK");
    let json = json_at(&json_path);
    assert_eq!(
        server_delta(&json, "table_tup_updated"),
        updates * (UPDATE_WORK_UNIT + 1) as f64,
        "{stdout}"
    );

    // The load and the runs are stored under the workload's name, and the
    // report shows the statement kinds.
    let results = data.join("results.sqlite");
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed);
        assert_eq!(r.meta.workloads, vec!["liops".to_string()]);
    }
    let load = runs.iter().find(|r| r.meta.phase == "load").unwrap();
    // 3,000 rows in batches of 700: 5 per table.
    assert_eq!(load.totals.as_ref().unwrap().operations, 10);
    let report = report_csv_of_last(&results);
    assert!(report.contains("liops"), "{report}");
    assert!(
        report.contains("scan") && report.contains("update"),
        "{report}"
    );
}

#[test]
fn postgres_run_time_and_missing_rows() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // `bench` loads, then runs for RUN_TIME (no operationcount).
    let (stdout, _) = liops(
        data,
        "bench",
        &pg.url(),
        &["NUM_THREADS=1", "RUN_TIME=1", "operationcount=0"],
    );
    let s = parse_summary(&stdout);
    let runtime = get(&s, "OVERALL", "RunTime(ms)");
    assert!(
        (1000.0..3000.0).contains(&runtime),
        "{runtime} ms\n{stdout}"
    );
    assert!(get(&s, "SCAN", "Return=OK") > 0.0);
    // Rows gone from a table: selects over them say UNEXPECTED_STATE.
    pg.psql("DELETE FROM pgio1 WHERE mykey % 10 = 0; DELETE FROM pgio2 WHERE mykey % 10 = 0");
    let (stdout, stderr) = liops(data, "run", &pg.url(), &["operationcount=50"]);
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "SCAN", "Return=UNEXPECTED_STATE"), 50.0, "{stdout}");
    assert!(stderr.contains("UNEXPECTED_STATE"), "{stderr}");
    assert_eq!(figure(&stdout, "# rows touched:"), 0.0);

    // A workload chosen by `-p workload=liops` alone, with no workload
    // file, is stored under its name like one read from `-P`.
    let results = data.join("by-property.sqlite");
    let scale = format!("SCALE={SCALE}");
    ok(&sojourn(
        data,
        &[
            "run",
            &pg.url(),
            "-p",
            "workload=liops",
            "-p",
            "NUM_SCHEMAS=2",
            "-p",
            &scale,
            "-p",
            "operationcount=5",
            "--results",
            &results.to_string_lossy(),
        ],
    ));
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].meta.workloads, vec!["liops".to_string()]);
}

#[test]
fn mariadb_load_and_run() {
    let Some(db) = Mariadb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = liops(
        dir.path(),
        "bench",
        &db.url(),
        &["dropdata=true", "UPDATE_PCT=10", "operationcount=300"],
    );
    let s = parse_summary(&stdout);
    let (selects, updates) = (get(&s, "SCAN", "Return=OK"), get(&s, "UPDATE", "Return=OK"));
    assert_eq!(selects + updates, 300.0, "{stdout}");
    assert!((20.0..=40.0).contains(&updates), "{updates}\n{stdout}");
    assert_eq!(
        figure(&stdout, "# rows touched:"),
        selects * (WORK_UNIT + 1) as f64
    );
    assert_eq!(
        db.sql("SELECT COUNT(DISTINCT mykey), MIN(mykey), MAX(mykey) FROM pgio2")
            .trim(),
        format!("{SCALE}\t1\t{SCALE}")
    );
    assert!(db.sql("SHOW INDEX FROM pgio1").contains("pgio1_mykey"));
}

#[test]
fn shipped_suite_runs_against_postgres() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("pgio-single-session");
    std::fs::create_dir(&suite).unwrap();
    for f in ["runner.yaml", "load.yaml", "select.yaml"] {
        std::fs::copy(
            repo_root().join("suites/pgio-single-session").join(f),
            suite.join(f),
        )
        .unwrap();
    }
    let results = dir.path().join("results.sqlite");
    let out = bin()
        .arg("suite")
        .arg(&suite)
        .args(["--db", &pg.url()])
        .arg("--results")
        .arg(&results)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--no-progress")
        .args(["--flag", "ycsb_timelimit=1"])
        .args([
            "--flag",
            "sojourn_parameters=NUM_SCHEMAS=1,NUM_THREADS=1,WORK_UNIT=1000,UPDATE_PCT=0,SCALE=4000",
        ])
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert!(
        stdout.contains("All tests have passed"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("# liops: "), "{stdout}");
    assert!(stdout.contains("selects of 1001 rows"), "{stdout}");
    assert_eq!(pg.psql("SELECT count(*) FROM pgio1").trim(), "4000");
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    let mut experiments: Vec<&str> = runs
        .iter()
        .map(|r| r.meta.labels["experiment"].as_str())
        .collect();
    experiments.sort();
    assert_eq!(experiments, ["load", "single-session"]);
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
        assert_eq!(r.meta.threads, 1);
    }
    // The suite samples the server's counters around each stage as `sojourn
    // run` does: the LIOPS lines show them, stderr has the digest, and the
    // stored run keeps them, exact to the row.
    let stderr = text(&out.stderr);
    assert!(stdout.contains("# server/s: blks_hit"), "{stdout}");
    assert!(
        stderr.contains("single-session") && stderr.contains("server: "),
        "{stderr}"
    );
    let select = runs
        .iter()
        .find(|r| r.meta.labels["experiment"] == "single-session")
        .unwrap();
    let select = store.load(select.meta.id.as_str()).unwrap();
    let scans = get(&parse_summary(&stdout), "SCAN", "Return=OK");
    assert!(scans > 0.0, "{stdout}");
    let server = select.server.expect("the run stage's server counters");
    assert_index_fetches(server.deltas["table_idx_tup_fetch"], scans as u64 * 1001, 1);
}

#[test]
fn backends_without_the_workload_say_which_have_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(
        dir.path(),
        &[
            "load",
            "--db",
            "memory:",
            "-P",
            "workloads/liops",
            "--no-store",
        ],
    );
    assert!(
        err.contains("memory:") && err.contains("does not run the LIOPS workload"),
        "{err}"
    );
    assert!(
        err.contains("PostgreSQL") && err.contains("MySQL/MariaDB"),
        "{err}"
    );
    let err = refused(
        dir.path(),
        &[
            "run",
            "--db",
            "memory:",
            "--workload",
            "liops",
            "-p",
            "UPDATE_PCT=150",
        ],
    );
    assert!(
        err.contains("UPDATE_PCT") && err.contains("0 to 100"),
        "{err}"
    );
    let err = refused(
        dir.path(),
        &[
            "capacity",
            "--db",
            "memory:",
            "-P",
            "workloads/liops",
            "--slo",
            "scan.p99<10ms",
        ],
    );
    assert!(err.contains("workload=liops"), "{err}");
}
