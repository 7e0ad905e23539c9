//! The LIOPS workload (PGIO's method) end to end against real PostgreSQL
//! and MariaDB: rows are one per block in random key order with their
//! index, selects touch WORK_UNIT + 1 rows and the server's own counters
//! agree, UPDATE_PCT is held, the LIOPS lines and JSON figures follow the
//! summary, runs are stored and reported, the shipped suite runs, and a
//! backend without the workload says which ones have it. A PGIO user's
//! own `pgio.conf` (shell assignments, its CONNECT_STRING the database)
//! loads and runs as it is, and PGIO's report figures come with the run,
//! its JSON report and its stored copy. PGIO's in-server loop
//! (`liops.loop=server`, a pgio.conf's default) counts exactly what the
//! server touched, from one client call per session; MariaDB refuses it.
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
    // Rows gone from a table: selects over them say UNEXPECTED_STATE
    // (every one, which would fail the phase but for max_error_rate=none).
    pg.psql("DELETE FROM pgio1 WHERE mykey % 10 = 0; DELETE FROM pgio2 WHERE mykey % 10 = 0");
    let (stdout, stderr) = liops(
        data,
        "run",
        &pg.url(),
        &["operationcount=50", "max_error_rate=none"],
    );
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "SCAN", "Return=UNEXPECTED_STATE"), 50.0, "{stdout}");
    assert!(stderr.contains("UNEXPECTED_STATE"), "{stderr}");
    // The warning names this workload's own keys, not YCSB's.
    assert!(
        stderr.contains(
            "loaded with the same workload (SCALE and NUM_SCHEMAS, loaded once: \
             `sojourn load --drop` loads it again from scratch)"
        ) && !stderr.contains("recordcount"),
        "{stderr}"
    );
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
            "-p",
            "max_error_rate=none",
            "--results",
            &results.to_string_lossy(),
        ],
    ));
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].meta.workloads, vec!["liops".to_string()]);
}

/// The sum of pg_stat_statements' `calls` of statements whose text starts
/// with `start`, top-level ones (sent by a client) or nested ones (run by
/// the in-server loop).
fn statement_calls(pg: &Postgres, start: &str, toplevel: bool) -> u64 {
    pg.psql(&format!(
        "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements \
         WHERE toplevel = {toplevel} AND query LIKE '{start}%'"
    ))
    .trim()
    .parse()
    .unwrap()
}

#[test]
fn postgres_server_loop_counts_what_the_server_touched() {
    // pg_stat_statements counts the statements the clients sent apart
    // from those the loop ran inside the server.
    let Some(pg) = Postgres::start_with(&[
        "shared_preload_libraries=pg_stat_statements",
        "pg_stat_statements.track=all",
    ]) else {
        return;
    };
    pg.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    liops(data, "load", &pg.url(), &["dropdata=true"]);
    // The load made each table's loop.
    assert_eq!(
        pg.psql(
            "SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE prokind = 'p'"
        )
        .trim(),
        "pgio1_liops,pgio2_liops"
    );

    // Selects only, for RUN_TIME: 4 sessions, 4 calls from the client.
    pg.psql("SELECT pg_stat_statements_reset()");
    let json_path = data.join("server.json");
    let (stdout, _) = liops_with(
        data,
        "run",
        &pg.url(),
        &["liops.loop=server", "UPDATE_PCT=0", "RUN_TIME=1"],
        &["--json", &json_path.to_string_lossy()],
    );
    assert_pkb_parseable(&stdout);
    let s = parse_summary(&stdout);
    let runtime = get(&s, "OVERALL", "RunTime(ms)");
    assert!(
        (1000.0..3000.0).contains(&runtime),
        "{runtime} ms\n{stdout}"
    );
    let selects = get(&s, "SCAN", "Return=OK");
    assert!(selects > 100.0, "{stdout}");
    assert_eq!(get(&s, "SCAN", "Operations"), selects);
    assert!(!s.contains_key("UPDATE"), "{stdout}");
    let pgio = pgio_columns(&stdout);
    assert_eq!(pgio["sql_selects"], selects);
    assert_eq!(pgio["loop_iterations"], selects);
    assert_eq!(pgio["select_blk_touch_cnt"], selects * WORK_UNIT as f64);
    // The client sent one CALL per session and no select; the server ran
    // exactly the selects the loops counted.
    assert_eq!(statement_calls(&pg, "CALL pgio", true), 4);
    assert_eq!(
        statement_calls(&pg, "SELECT COUNT(*), SUM(scratch)", true),
        0
    );
    assert_eq!(
        statement_calls(&pg, "SELECT count(*), sum(scratch)", false) as f64,
        selects
    );
    // The rows the server fetched through the index are the rows the
    // loops' selects touched; a few transactions for thousands of selects.
    let json = json_at(&json_path);
    let rows = selects as u64 * (WORK_UNIT + 1);
    assert_eq!(json["liops"]["rows_selected"], rows);
    assert_index_fetches(server_delta(&json, "table_idx_tup_fetch"), rows, 4);
    let commits = server_delta(&json, "xact_commit");
    assert!(
        commits < 50.0 && commits * 20.0 < selects,
        "{commits} commits"
    );
    // Labelled as the server's times; the client made 4 calls.
    assert_eq!(json["liops"]["loop"], "server");
    assert_eq!(json["liops"]["statement_times"], "server");
    assert_eq!(json["liops"]["client_calls"], 4);
    assert!(
        stdout.contains(&format!(
            "# statement times: server-measured (inside the server's loop, no round trip); \
             4 client call(s) for {selects} statements"
        )) && stdout.contains("# max statement ms (server-measured): select "),
        "{stdout}"
    );
    // PGIO's own rate in the headline: its block count over the run time.
    let rate = json["liops"]["pgio_select_blk_per_sec"].as_f64().unwrap();
    assert_eq!(
        figure(&stdout, "# LIOPS (rows/s):"),
        (rows as f64 / json["liops"]["seconds"].as_f64().unwrap() * 10.0).round() / 10.0
    );
    let blk = pgio["select_blk_touch_cnt"];
    assert!(
        (rate * runtime / 1000.0 - blk).abs() <= blk * 0.02,
        "{rate}/s over {runtime} ms for {blk} blocks"
    );
    let headline = stdout.lines().find(|l| l.starts_with("# LIOPS")).unwrap();
    assert!(
        headline.ends_with(&format!(
            "PGIO's select_blk_touch_cnt / Run time: {rate:.1}"
        )),
        "{headline}"
    );
    // The server's times fill the histograms: every statement, each far
    // shorter than the run.
    let max_us = get(&s, "SCAN", "MaxLatency(us)");
    assert!(max_us > 0.0 && max_us < 1e6, "{max_us}");
    assert!(get(&s, "SCAN", "AverageLatency(us)") <= max_us);

    // A fifth of each session's statements update, each committed: the
    // server changed the rows the loops' counts say.
    let json_path = data.join("updates.json");
    let (stdout, _) = liops_with(
        data,
        "run",
        &pg.url(),
        &["liops.loop=server", "UPDATE_PCT=20", "RUN_TIME=1"],
        &["--json", &json_path.to_string_lossy(), "--no-store"],
    );
    let s = parse_summary(&stdout);
    let pgio = pgio_columns(&stdout);
    let (selects, updates) = (get(&s, "SCAN", "Return=OK"), get(&s, "UPDATE", "Return=OK"));
    assert_eq!(
        (pgio["sql_selects"], pgio["sql_updates"]),
        (selects, updates)
    );
    assert_eq!(pgio["loop_iterations"], selects + updates);
    let all = selects + updates;
    assert!(
        (all / 5.0 - 4.0..=all / 5.0).contains(&updates),
        "{updates} of {all}"
    );
    let json = json_at(&json_path);
    assert_eq!(
        server_delta(&json, "table_tup_updated"),
        updates * (UPDATE_WORK_UNIT + 1) as f64
    );

    // operationcount bounds the loops too, shared out over the sessions.
    let (stdout, _) = liops_with(
        data,
        "run",
        &pg.url(),
        &["liops.loop=server", "RUN_TIME=60", "operationcount=10"],
        &["--no-store"],
    );
    assert_eq!(pgio_columns(&stdout)["loop_iterations"], 10.0, "{stdout}");

    // Rows gone: the loops' statements that miss them are UNEXPECTED_STATE.
    pg.psql("DELETE FROM pgio1 WHERE mykey % 10 = 0; DELETE FROM pgio2 WHERE mykey % 10 = 0");
    let (stdout, _) = liops_with(
        data,
        "run",
        &pg.url(),
        &[
            "liops.loop=server",
            "RUN_TIME=1",
            "operationcount=40",
            "max_error_rate=none",
        ],
        &["--no-store"],
    );
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "SCAN", "Return=UNEXPECTED_STATE"), 40.0, "{stdout}");
    assert_eq!(figure(&stdout, "# rows touched:"), 0.0);
    assert_eq!(pgio_columns(&stdout)["loop_iterations"], 40.0);

    // At a rate it cannot run in the server: no client paces it.
    let e = refused(
        data,
        &[
            "run",
            &pg.url(),
            "-P",
            "workloads/liops",
            "-p",
            "liops.loop=server",
            "--target",
            "100",
            "--no-store",
        ],
    );
    assert!(
        e.contains("liops.loop = 'server'") && e.contains("target = '100'"),
        "{e}"
    );
}

#[test]
fn mariadb_load_and_run() {
    let Some(db) = Mariadb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = liops(
        dir.path(),
        "bench",
        &db.url(),
        &["dropdata=true", "UPDATE_PCT=10", "operationcount=300"],
    );
    // Rows, not load operations: 2 tables of 3,000 rows in batches of 700
    // (5 a table).
    assert!(
        stderr.contains(&format!("loaded {} rows in 10 batches into ", 2 * SCALE)),
        "{stderr}"
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
    // A second load would append a second copy of every row (the tables
    // have no unique key): refused, naming --drop, the tables untouched.
    let results = dir.path().join("results.sqlite");
    let e = refused(
        dir.path(),
        &[
            "load",
            &db.url(),
            "-P",
            "workloads/liops",
            "-p",
            "NUM_SCHEMAS=2",
            "-p",
            &format!("SCALE={SCALE}"),
            "--results",
            &results.to_string_lossy(),
        ],
    );
    assert!(
        e.contains(
            "already holds data for LIOPS table pgio1: a second load would add a second copy"
        ) && e.contains("Add --drop to load again from scratch"),
        "{e}"
    );
    assert!(
        !e.contains(sojourn_testkit::mariadb_server::PASSWORD),
        "{e}"
    );
    for t in ["pgio1", "pgio2"] {
        assert_eq!(
            db.sql(&format!("SELECT COUNT(*) FROM {t}")).trim(),
            SCALE.to_string()
        );
    }
    // With --drop it loads again, once.
    liops(dir.path(), "load", &db.url(), &["dropdata=true"]);
    assert_eq!(
        db.sql("SELECT COUNT(*) FROM pgio1").trim(),
        SCALE.to_string()
    );
    // MySQL has no in-server loop: refused before anything runs, naming
    // the property, where it was set, and what is accepted; a pgio.conf
    // (whose default it is) says so too.
    let e = refused(
        dir.path(),
        &[
            "run",
            &db.url(),
            "-P",
            "workloads/liops",
            "-p",
            "liops.loop=server",
            "-p",
            "RUN_TIME=1",
            "--no-store",
        ],
    );
    assert!(
        e.contains("liops.loop = 'server' (-p on the command line)")
            && e.contains("has no in-server loop")
            && e.contains("accepted here: liops.loop=client"),
        "{e}"
    );
    let conf = dir.path().join("pgio.conf");
    std::fs::write(&conf, format!("SCALE={SCALE} NUM_SCHEMAS=2 RUN_TIME=1\n")).unwrap();
    let conf = conf.to_string_lossy().into_owned();
    let e = refused(dir.path(), &["run", &db.url(), "-P", &conf, "--no-store"]);
    assert!(
        e.contains(&format!("liops.loop = 'server' ({conf}:1)"))
            && e.contains("accepted here: liops.loop=client"),
        "{e}"
    );
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
        .run_to_end();
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

/// PGIO's `runit.sh` columns from the `# pgio:` lines of `stdout`, by name.
fn pgio_columns(stdout: &str) -> std::collections::BTreeMap<String, f64> {
    let rows: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# pgio: "))
        .filter(|l| l.contains(" | "))
        .collect();
    assert_eq!(rows.len(), 2, "PGIO's header and row in\n{stdout}");
    rows[0]
        .split(" | ")
        .zip(rows[1].split(" | "))
        .map(|(name, value)| (name.trim().to_string(), value.trim().parse().unwrap()))
        .collect()
}

/// The test server's URL as sojourn shows it, the password hidden.
fn redacted(pg: &Postgres) -> String {
    format!(
        "postgres://{}:***@127.0.0.1:{}/{}",
        pg::USER,
        pg.port(),
        pg::DATABASE
    )
}

/// The `# pgio:` lines of `stdout`.
fn pgio_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("# pgio: "))
        .collect()
}

/// The write-up's `pgio.conf`, as its `echo` writes it: one line of shell
/// assignments, with CONNECT_STRING pointed at `url`.
fn writeup_pgio_conf(url: &str) -> String {
    format!(
        "UPDATE_PCT=0 RUN_TIME=1000 NUM_SCHEMAS=1 NUM_THREADS=1 WORK_UNIT=1000 \
         UPDATE_WORK_UNIT=8 SCALE=1000000 DBNAME=yugabyte CONNECT_STRING='{url}' \
         CREATE_BASE_TABLE=TRUE\n"
    )
}

/// Every line of stdout is YCSB's (`[`) or a comment (`#`): what
/// PerfKitBenchmarker's parser reads stays parseable.
fn assert_pkb_parseable(stdout: &str) {
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            line.starts_with('[') || line.starts_with('#'),
            "{line:?} in\n{stdout}"
        );
    }
}

#[test]
fn postgres_writeup_pgio_conf_loads_and_runs_as_written() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let conf = data.join("pgio.conf");
    std::fs::write(&conf, writeup_pgio_conf(&pg.url())).unwrap();
    let conf = conf.to_string_lossy().into_owned();
    let results = data.join("results.sqlite");
    let results = results.to_string_lossy().into_owned();
    // No --db and no workload=liops: the file says both. SCALE is the one
    // change, on the command line: the write-up's 1,000,000 rows are 8 GB.
    let phase = |mode: &str, extra: &[&str]| {
        let mut args = vec![
            mode,
            "-P",
            &conf,
            "-p",
            "SCALE=3000",
            "--seed",
            "5",
            "--results",
            &results,
        ];
        args.extend(extra);
        let out = sojourn(data, &args);
        let stdout = ok(&out);
        let stderr = text(&out.stderr);
        assert!(
            !stdout.contains(pg::PASSWORD) && !stderr.contains(pg::PASSWORD),
            "password in output:\n{stdout}\n{stderr}"
        );
        (stdout, stderr)
    };
    let (_, stderr) = phase("load", &["-p", "dropdata=true"]);
    assert!(
        stderr.contains(&format!(
            "note: database: {} from CONNECT_STRING ({conf}:1)",
            redacted(&pg)
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("unknown property"), "{stderr}");
    assert_eq!(pg.psql("SELECT count(*) FROM pgio1").trim(), "3000");

    // RUN_TIME=1000 is the time limit; 300 statements end it first.
    let json_path = data.join("run.json");
    let json_arg = json_path.to_string_lossy().into_owned();
    let (stdout, _) = phase("run", &["-p", "operationcount=300", "--json", &json_arg]);
    assert_pkb_parseable(&stdout);
    // A pgio.conf runs PGIO's in-server loop: one call for the session.
    assert!(
        stdout.contains("# statement times: server-measured")
            && stdout.contains("1 client call(s) for 300 statements"),
        "{stdout}"
    );
    let s = parse_summary(&stdout);
    let pgio = pgio_columns(&stdout);
    assert_eq!(
        pgio["sql_selects"],
        get(&s, "SCAN", "Return=OK"),
        "{stdout}"
    );
    assert_eq!(pgio["sql_selects"], 300.0);
    assert_eq!(pgio["loop_iterations"], 300.0);
    assert_eq!(pgio["sql_updates"], 0.0);
    // PGIO counts WORK_UNIT blocks a select, one fewer than the rows its
    // BETWEEN reads, which sojourn's rows touched count.
    assert_eq!(pgio["select_blk_touch_cnt"], 300.0 * 1000.0);
    assert_eq!(
        figure(&stdout, "# rows touched:"),
        pgio["select_blk_touch_cnt"] + pgio["sql_selects"]
    );
    assert_eq!(pgio["update_blk_touch_cnt"], 0.0);
    let max_us = get(&s, "SCAN", "MaxLatency(us)");
    assert!(
        (pgio["sql_select_max_tm"] * 1e6 - max_us).abs() <= 1.0,
        "{} s against {max_us} us",
        pgio["sql_select_max_tm"]
    );
    assert_eq!(pgio["sql_update_max_tm"], 0.0);
    // The server read exactly those rows through the index.
    let json = json_at(&json_path);
    assert_index_fetches(server_delta(&json, "table_idx_tup_fetch"), 300 * 1001, 1);
    // PGIO's summary line: the database connected to, its counters.
    let line = pgio_lines(&stdout)[2];
    assert!(
        line.starts_with("# pgio: DBNAME:  postgres. 1 schemas, 1 threads(each). Run time: "),
        "{line}"
    );
    let j = &json["liops"]["pgio"];
    let hits = json["liops"]["server_per_sec"]["blks_hit"]
        .as_f64()
        .unwrap();
    assert_eq!(j["CACHE_HITS_per_sec"], hits.floor() as u64);
    assert!(
        line.contains(&format!("CACHE_HITS/s >{}<", hits.floor())),
        "{line}"
    );
    for (name, value) in &pgio {
        assert_eq!(j[name].as_f64(), Some(*value), "{name} in {j:#}");
    }
    assert_eq!(json["liops"]["loop"], "server");

    // The stored run gives the same PGIO figures: `results show` prints
    // the same lines, the JSON report exported from the store the same
    // object, and no password was kept.
    let shown = ok(&bin()
        .args(["results", "--results", &results, "show", "last"])
        .output()
        .unwrap());
    assert_eq!(pgio_lines(&shown), pgio_lines(&stdout), "{shown}");
    let exported = ok(&bin()
        .args(["results", "--results", &results, "export", "last"])
        .args(["--format", "report"])
        .output()
        .unwrap());
    let stored: serde_json::Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(stored["liops"]["pgio"], json["liops"]["pgio"]);
    assert_eq!(stored["liops"], json["liops"]);
    let store = Store::open(&results).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.meta.workloads, ["pgio.conf"]);
        assert_eq!(r.meta.properties["workload"], "liops");
        let kept = &r.meta.properties["CONNECT_STRING"];
        assert!(
            !kept.contains(pg::PASSWORD) && kept.contains("***"),
            "{kept}"
        );
    }
}

#[test]
fn postgres_multi_line_pgio_file_keyword_string_and_db_wins() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // Not named pgio.conf: its shell syntax tells it. A keyword string
    // with no dbname, which DBNAME fills in.
    let file = data.join("yb-settings");
    std::fs::write(
        &file,
        format!(
            "# PGIO settings for the lab cluster\n\
             export UPDATE_PCT=20   # a fifth of the statements update\n\
             NUM_SCHEMAS=2; NUM_THREADS=2\n\
             WORK_UNIT=\"{WORK_UNIT}\" UPDATE_WORK_UNIT='{UPDATE_WORK_UNIT}'\n\
             SCALE={SCALE}\n\
             DBNAME=\"{db}\"\n\
             CONNECT_STRING=\"host=127.0.0.1 port={port} user=sojourn \
             password='{password}'\"\n\
             RUN_TIME=60\n\
             export CONNECT_STRING DBNAME\n",
            db = pg::DATABASE,
            port = pg.port(),
            password = pg::PASSWORD,
        ),
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let results = data.join("results.sqlite");
    let results = results.to_string_lossy().into_owned();
    let json_path = data.join("bench.json");
    let json_arg = json_path.to_string_lossy().into_owned();
    let out = sojourn(
        data,
        &[
            "bench",
            "-P",
            &file,
            "-p",
            "dropdata=true",
            "-p",
            "operationcount=400",
            "-p",
            "liops.batch=700",
            "--seed",
            "3",
            "--results",
            &results,
            "--json",
            &json_arg,
        ],
    );
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        !stdout.contains(pg::PASSWORD) && !stderr.contains(pg::PASSWORD),
        "password in output:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "note: database: postgres://sojourn:***@127.0.0.1:{}/{} from CONNECT_STRING \
             ({file}:7), its database name from DBNAME ({file}:6)",
            pg.port(),
            pg::DATABASE
        )),
        "{stderr}"
    );
    assert_pkb_parseable(&stdout);
    let s = parse_summary(&stdout);
    let pgio = pgio_columns(&stdout);
    let (selects, updates) = (get(&s, "SCAN", "Return=OK"), get(&s, "UPDATE", "Return=OK"));
    assert_eq!(
        (pgio["sql_selects"], pgio["sql_updates"]),
        (selects, updates)
    );
    assert_eq!(pgio["loop_iterations"], 400.0);
    assert!((70.0..=90.0).contains(&updates), "{updates}\n{stdout}");
    assert_eq!(pgio["select_blk_touch_cnt"], selects * WORK_UNIT as f64);
    assert_eq!(
        pgio["update_blk_touch_cnt"],
        updates * UPDATE_WORK_UNIT as f64
    );
    // The server changed the rows the updates' blocks and ranges say.
    let json = json_at(&json_path);
    assert_eq!(
        server_delta(&json, "table_tup_updated"),
        pgio["update_blk_touch_cnt"] + pgio["sql_updates"]
    );
    assert!(pgio_lines(&stdout)[2].contains("2 schemas, 2 threads(each)"));
    // The keyword string is stored without its password.
    let store = Store::open(&results).unwrap();
    for r in store.list(&Filter::default()).unwrap() {
        assert_eq!(r.meta.properties["workload"], "liops");
        let kept = &r.meta.properties["CONNECT_STRING"];
        assert!(
            !kept.contains(pg::PASSWORD) && kept.contains("password=***"),
            "{kept}"
        );
    }

    // --db wins over a CONNECT_STRING, and the note says so: this one
    // points at a port nothing listens on.
    let elsewhere = data.join("pgio.conf");
    std::fs::write(
        &elsewhere,
        format!(
            "SCALE={SCALE} NUM_SCHEMAS=2 NUM_THREADS=1 WORK_UNIT={WORK_UNIT}\n\
             CONNECT_STRING='postgres://nobody:{}@127.0.0.1:1/none'\n",
            pg::PASSWORD
        ),
    )
    .unwrap();
    let elsewhere = elsewhere.to_string_lossy().into_owned();
    let out = sojourn(
        data,
        &[
            "run",
            "-P",
            &elsewhere,
            "--db",
            &pg.url(),
            "-p",
            "operationcount=20",
            "--no-store",
        ],
    );
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains(pg::PASSWORD), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "note: database: {} from --db, which wins over CONNECT_STRING ({elsewhere}:2)",
            redacted(&pg)
        )),
        "{stderr}"
    );
    assert_eq!(pgio_columns(&stdout)["sql_selects"], 20.0, "{stdout}");
}

#[test]
fn pgio_files_that_cannot_be_used_say_where_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let write = |name: &str, body: &str| {
        let path = data.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_string_lossy().into_owned()
    };
    let refuse = |file: &str, mode: &str| {
        refused(data, &[mode, "--db", "memory:", "-P", file, "--no-store"])
    };
    // The write-up's file, with a mistake in one of its assignments: the
    // range named is UPDATE_PCT's own.
    let conf = write(
        "pgio.conf",
        "UPDATE_PCT=abc RUN_TIME=1000 NUM_SCHEMAS=1 SCALE=1000000\n",
    );
    let e = refuse(&conf, "run");
    assert!(
        e.contains(&format!(
            "{conf}:1: UPDATE_PCT = 'abc' is not a whole number; accepted: a whole number \
             from 0 to 100"
        )),
        "{e}"
    );
    let conf = write("pgio.conf", "RUN_TIME=1\nUPDATE_PCT=150 SCALE=1000000\n");
    let e = refuse(&conf, "run");
    assert!(
        e.contains(&format!(
            "{conf}:2: UPDATE_PCT = '150' is above 100; accepted: a whole number from 0 to 100"
        )),
        "{e}"
    );
    // YCSB's and PGIO's keys in one file.
    let mixed = write(
        "mixed.properties",
        "UPDATE_PCT=0\nSCALE=1000\nrecordcount=1000\nreadproportion=0.5\n",
    );
    let e = refuse(&mixed, "load");
    assert!(
        e.contains(&format!(
            "{mixed}:3: recordcount = '1000': is a setting of YCSB's core workload"
        )) && e.contains(&format!("UPDATE_PCT ({mixed}:1)"))
            && e.contains("workload=liops"),
        "{e}"
    );
    // An unclosed quote names its line and key, and keeps the password.
    let conf = write(
        "pgio.conf",
        "UPDATE_PCT=0\nCONNECT_STRING='postgres://u:hunter2@h/db SCALE=1000\n",
    );
    let e = refuse(&conf, "run");
    assert!(
        e.contains(&format!(
            "{conf}:2: CONNECT_STRING: the ' quote opened on line 2 is never closed"
        )),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
    // psql's own arguments are not a connect string sojourn reads.
    let conf = write("pgio.conf", "SCALE=1000 CONNECT_STRING=pg10\n");
    let e = refused(data, &["run", "-P", &conf, "--no-store"]);
    assert!(
        e.contains(&format!("{conf}:1: CONNECT_STRING = 'pg10'"))
            && e.contains("libpq keyword string"),
        "{e}"
    );
    // CREATE_BASE_TABLE=FALSE asks for a seed table sojourn does not keep.
    let conf = write("pgio.conf", "SCALE=1000 CREATE_BASE_TABLE=FALSE\n");
    let e = refuse(&conf, "load");
    assert!(
        e.contains(&format!(
            "{conf}:1: CREATE_BASE_TABLE = 'FALSE': asks PGIO's setup to reuse"
        )) && e.contains("Set it to TRUE"),
        "{e}"
    );
    // One sentence, one space between its words where the source wrapped.
    let refusal = e.lines().find(|l| l.contains("CREATE_BASE_TABLE")).unwrap();
    assert!(!refusal.contains("  "), "{refusal}");
    // A command, not an assignment.
    let conf = write("pgio.conf", "SCALE=1000\necho hi\n");
    let e = refuse(&conf, "run");
    assert!(
        e.contains(&format!("{conf}:2: 'echo' is not an assignment")),
        "{e}"
    );
}
