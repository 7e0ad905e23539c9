//! `sojourn report`: the walkthrough's tables carry exactly the stored
//! numbers, a capacity session is stored step by step and reported as a
//! curve, and the HTML report renders in a real headless browser with
//! every plot drawn and no script error.

mod util;

use std::path::Path;
use std::process::Command;

use sojourn_store::Store;
use sojourn_testkit::runs::{meta_for, store_outcome, Synthetic};
use util::*;

/// Parse CSV rows (no quoted commas in what these tests read).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn cell<'a>(rows: &'a [Vec<String>], row: usize, column: &str) -> &'a str {
    let i = rows[0]
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column:?} in {:?}", rows[0]));
    &rows[row][i]
}

fn num(rows: &[Vec<String>], row: usize, column: &str) -> f64 {
    cell(rows, row, column)
        .parse()
        .unwrap_or_else(|_| panic!("{column}: {:?}", cell(rows, row, column)))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

#[test]
fn tables_carry_the_stored_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let store = Store::open(path.to_str().unwrap()).unwrap();
    let walkthrough = Synthetic {
        update_fraction: 0.5,
        intervals: 10,
        ..Synthetic::new(1)
    };
    let o1 = walkthrough.outcome();
    let id1 = store_outcome(
        &store,
        &meta_for(
            &o1,
            "memory:",
            &[
                ("fieldlength", "1024"),
                ("fieldcount", "1"),
                ("recordcount", "5000000"),
                ("requestdistribution", "zipfian"),
            ],
            &[
                ("experiment", "latency_test"),
                ("bigtable_node_count", "3"),
                ("bigtable_storage_type", "hdd"),
            ],
        ),
        &o1,
        &walkthrough.series(),
    );
    let closed = Synthetic {
        intervals: 10,
        target: None,
        ..Synthetic::new(2)
    };
    let o2 = closed.outcome();
    let id2 = store_outcome(
        &store,
        &meta_for(&o2, "memory:", &[], &[]),
        &o2,
        &closed.series(),
    );
    let results = path.to_str().unwrap();

    let out = bin()
        .args(["report", "--results", results, "--format", "csv"])
        .args([id1.as_str(), id2.as_str()])
        .run_to_end();
    let text = ok(&out);
    let (perf, cost) = text.split_once("\n\n").expect("two tables");
    let perf = csv_rows(perf);
    let cost = csv_rows(cost);
    assert_eq!(perf.len(), 3, "{text}");
    assert_eq!(cost.len(), 3, "{text}");

    for (row, id) in [(1, &id1), (2, &id2)] {
        let r = store.load(id.as_str()).unwrap();
        let t = r.summary.totals.as_ref().unwrap();
        assert_eq!(num(&perf, row, "actual ops/s"), t.throughput);
        assert!(id.as_str().starts_with(cell(&perf, row, "run")));
        for (kind, op) in r.total.kinds() {
            for (q, p) in [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")] {
                let column = format!("{} {p} ms", kind.name());
                let stored = op.ok.service.value_at_quantile(q) as f64 / 1e6;
                assert_eq!(num(&perf, row, &column), stored, "{column}");
            }
        }
    }
    assert_eq!(cell(&perf, 1, "experiment"), "latency_test");
    assert_eq!(cell(&perf, 1, "operation"), "run");
    assert_eq!(num(&perf, 1, "target ops/s"), 500.0);
    assert_eq!(cell(&perf, 2, "target ops/s"), "");
    assert_eq!(cell(&perf, 1, "distribution"), "zipfian");
    assert_eq!(cell(&perf, 2, "distribution"), "uniform");
    assert_eq!(num(&perf, 1, "recordcount"), 5_000_000.0);
    assert_eq!(num(&perf, 2, "fieldcount"), 10.0);
    assert_eq!(cell(&perf, 2, "update p50 ms"), "", "run 2 has no updates");

    // The same figures as the store's own `performance` view.
    let view = store
        .query(&format!(
            "SELECT operation, p50_latency_ms, p99_latency_ms, actual_throughput \
             FROM performance WHERE run_id = '{id1}' ORDER BY operation"
        ))
        .unwrap();
    for row in &view.rows {
        let op = row[0].as_text().unwrap();
        let f = |v: &sojourn_store::Value| match v {
            sojourn_store::Value::Real(r) => *r,
            other => panic!("{other:?}"),
        };
        assert!(close(num(&perf, 1, &format!("{op} p50 ms")), f(&row[1])));
        assert!(close(num(&perf, 1, &format!("{op} p99 ms")), f(&row[2])));
        assert!(close(num(&perf, 1, "actual ops/s"), f(&row[3])));
    }

    // Cost: the walkthrough's formula with the run's labels.
    let gb = (1024.0 + 39.0) * 5_000_000.0 / (1u64 << 30) as f64;
    assert_eq!(num(&cost, 1, "nodes"), 3.0);
    assert_eq!(cell(&cost, 1, "storage"), "hdd");
    assert!(close(num(&cost, 1, "table GB"), gb));
    let monthly = 3.0 * 0.65 * 24.0 * 30.0 + gb * 0.026;
    assert!(close(num(&cost, 1, "monthly cost $"), monthly));
    let tput = num(&perf, 1, "actual ops/s");
    assert!(close(
        num(&cost, 1, "ops per $"),
        tput * 30.0 * 24.0 * 3600.0 / monthly
    ));
    // No labels: one node, SSD, an empty table (recordcount 0).
    assert_eq!(num(&cost, 2, "nodes"), 1.0);
    assert_eq!(cell(&cost, 2, "storage"), "ssd");
    assert!(close(num(&cost, 2, "monthly cost $"), 0.65 * 24.0 * 30.0));

    // Prices and nodes from the command line win over labels.
    let out = bin()
        .args([
            "report",
            "--results",
            results,
            "--format",
            "csv",
            "--table",
            "cost",
        ])
        .args([
            "--nodes",
            "5",
            "--node-hour-price",
            "1",
            "--storage-gb-month-price",
            "0.5",
        ])
        .arg(id1.as_str())
        .run_to_end();
    let cost = csv_rows(&ok(&out));
    assert_eq!(cost.len(), 2);
    assert!(close(
        num(&cost, 1, "monthly cost $"),
        5.0 * 24.0 * 30.0 + gb * 0.5
    ));

    // Response time on request; runs picked by label.
    let out = bin()
        .args([
            "report",
            "--results",
            results,
            "--format",
            "csv",
            "--table",
            "performance",
        ])
        .args([
            "--latency",
            "response",
            "--label",
            "experiment=latency_test",
        ])
        .run_to_end();
    let perf = csv_rows(&ok(&out));
    assert_eq!(perf.len(), 2, "only the labelled run");
    let r = store.load(id1.as_str()).unwrap();
    let read = r.total.op(sojourn_core::op::OpKind::Read).unwrap();
    assert_eq!(
        num(&perf, 1, "read p99 ms"),
        read.ok.response.value_at_quantile(0.99) as f64 / 1e6
    );

    // Markdown: both tables, rounded for reading.
    let out = bin()
        .args([
            "report",
            "--results",
            results,
            "--format",
            "md",
            id1.as_str(),
        ])
        .run_to_end();
    let md = ok(&out);
    assert!(md.contains("## Performance") && md.contains("## Resource and cost"));
    assert!(
        md.contains("| latency_test | workloadc | run | 500.0 |"),
        "{md}"
    );
    assert!(
        md.contains(&format!("| 3 | hdd | {gb:.3} | 1404.00 |")),
        "{md}"
    );
}

#[test]
fn naming_nothing_or_an_unknown_run_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let store = Store::open(path.to_str().unwrap()).unwrap();
    let short = Synthetic {
        intervals: 3,
        ..Synthetic::new(3)
    };
    let o = short.outcome();
    store_outcome(
        &store,
        &meta_for(&o, "memory:", &[], &[]),
        &o,
        &short.series(),
    );
    let results = path.to_str().unwrap();
    let out = bin()
        .args(["report", "--results", results, "--format", "md"])
        .run_to_end();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--label"),
        "{}",
        text(&out.stderr)
    );
    let out = bin()
        .args([
            "report",
            "--results",
            results,
            "--format",
            "md",
            "nosuchrun",
        ])
        .run_to_end();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("sojourn results list"),
        "{}",
        text(&out.stderr)
    );
    let out = bin()
        .args(["report", "--results"])
        .arg(dir.path().join("absent.sqlite"))
        .args(["--format", "md", "last"])
        .run_to_end();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no such file"),
        "{}",
        text(&out.stderr)
    );
}

/// The headless browser, or `None` when the run leaves Chromium out.
fn chromium() -> Option<std::path::PathBuf> {
    use sojourn_testkit::needs::{find_binary, Need};
    find_binary(Need::Chromium, "chromium", &[])
}

fn headless(chromium: &Path, profile: &Path) -> Command {
    let mut c = Command::new("timeout");
    c.arg("180").arg(chromium).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// A capacity search's steps are stored as a session; its report has the
/// curve with the knee, per-step time series and spectra, and a browser
/// draws all of it.
#[test]
fn a_capacity_session_reports_as_html_that_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(
        dir.path(),
        &[
            "capacity",
            "memory:?max_ops_per_sec=2000",
            "-P",
            "workloada",
            "-p",
            "recordcount=200",
            "--load",
            "--slo",
            "read.p50<200ms",
            "--start",
            "500",
            "--step",
            "0.6",
            "--settle",
            "0.2",
            "--precision",
            "0.2",
            "-threads",
            "8",
            "--seed",
            "1",
        ],
    );
    ok(&out);
    let stderr = text(&out.stderr);
    let session = stderr
        .split_whitespace()
        .find(|w| w.starts_with("cap-"))
        .unwrap_or_else(|| panic!("no session named in\n{stderr}"))
        .to_string();
    let steps: usize = stderr
        .split("recorded ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no step count in\n{stderr}"));
    assert!(steps >= 3, "{stderr}");

    // Every step is a stored run of the session.
    let data = dir.path().to_str().unwrap();
    let out = bin()
        .args([
            "report",
            "--data-dir",
            data,
            "--format",
            "csv",
            "--table",
            "performance",
        ])
        .arg(&session)
        .run_to_end();
    let rows = csv_rows(&ok(&out));
    assert_eq!(rows.len(), steps + 1);

    let html_path = dir.path().join("report.html");
    let out = bin()
        .args(["report", "--data-dir", data, &session, "-o"])
        .arg(&html_path)
        .run_to_end();
    ok(&out);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let plots = html.matches("<svg class=\"plot\"").count();
    // Per step: throughput, and per kind (read, update) percentiles over
    // time and a spectrum; the curve for read, update and all; with up to
    // seven runs, every run's spectra side by side (2 kinds x 2 latencies).
    let side_by_side = if steps <= 7 { 4 } else { 0 };
    assert_eq!(plots, steps * 5 + 3 + side_by_side, "plots in the report");
    for title in [
        "READ: latency against throughput",
        "achieved throughput over time",
        "READ: latency percentiles over time",
        "UPDATE: percentile spectrum",
        "knee ",
        "SLO read.p50&lt;200ms",
    ] {
        assert!(html.contains(title), "{title:?} missing");
    }
    for external in ["<script src", "<link", "url(http", "@import"] {
        assert!(!html.contains(external), "not self-contained: {external}");
    }
    assert!(
        !html.contains("NaN") && !html.contains("inf\""),
        "no broken numbers"
    );

    let Some(chromium) = chromium() else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html_path.display());
    let out = headless(&chromium, profile.path())
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = text(&out.stdout);
    let log = text(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert!(
        dom.contains(&format!("data-plots=\"{plots}\"")),
        "the page's script did not run to the end\n{log}"
    );
    assert!(
        dom.contains(&format!("data-rendered=\"{plots}\"")),
        "not every plot has a drawn line"
    );
    assert!(!log.contains(":CONSOLE"), "console output:\n{log}");
    assert!(!log.contains("Uncaught"), "script error:\n{log}");

    // And as a picture: a real PNG of some size.
    let png = dir.path().join("report.png");
    let out = headless(&chromium, profile.path())
        .arg("--window-size=1400,3000")
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 50_000,
        "{} bytes",
        bytes.len()
    );
}
