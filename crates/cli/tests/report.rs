//! `sojourn report`: the walkthrough's tables carry exactly the stored
//! numbers, a capacity session is stored step by step and reported as a
//! curve, and the HTML report renders in a real headless browser with
//! every plot drawn and no script error; its charts over time become
//! interactive (uPlot, inlined) offline, and a hover shows the stored
//! values.

mod util;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

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
    // Run 2 is no Bigtable run: the walkthrough's node price is not its
    // own, so it has no cost row, and stderr says why.
    assert_eq!(cost.len(), 2, "{text}");
    assert!(id1.as_str().starts_with(cell(&cost, 1, "run")));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "No cost for {}: it is not a Bigtable run",
            &id2.as_str()[..13]
        )) && stderr.contains("--node-hour-price"),
        "{stderr}"
    );

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
    // Figures as a reader writes them: 3 x 0.65 x 720 is 1404.0000000000002
    // in floating point.
    assert_eq!(cell(&cost, 1, "nodes $/month"), "1404");
    let tput = num(&perf, 1, "actual ops/s");
    assert!(close(
        num(&cost, 1, "ops per $"),
        tput * 30.0 * 24.0 * 3600.0 / monthly
    ));
    // A price given costs every run. No labels: one node, SSD, an empty
    // table (recordcount 0).
    let out = bin()
        .args([
            "report",
            "--results",
            results,
            "--format",
            "csv",
            "--table",
            "cost",
            "--node-hour-price",
            "0.65",
        ])
        .args([id1.as_str(), id2.as_str()])
        .run_to_end();
    let cost = csv_rows(&ok(&out));
    assert_eq!(cost.len(), 3);
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

/// `suites/redis-whitepaper`, unchanged but for its scale, against a real
/// Redis, then the whitepaper's table (`--table summary`): per stage its
/// QPS and the mean and p99 of its stored histograms in microseconds,
/// and per operation where a stage mixes them (Uniform 50/50's read and
/// update); the load stage is workload A's, as the whitepaper's script
/// loads; and no Bigtable price on a Redis run.
#[test]
fn the_whitepaper_table_carries_the_stored_histograms() {
    let Some(server) = sojourn_testkit::redis_server::RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = shipped_suite(dir.path(), "redis-whitepaper");
    let results = dir.path().join("results.sqlite");
    let out = bin()
        .arg("suite")
        .arg(&suite)
        .arg("--results")
        .arg(&results)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--no-progress", "--db", &server.url()])
        .args([
            "--flag",
            "ycsb_record_count=2000",
            "--flag",
            "ycsb_timelimit=1",
        ])
        .args([
            "--flag",
            "ycsb_threads_per_client=4",
            "--flag",
            "ycsb_preload_threads=4",
        ])
        .run_to_end();
    let stdout = ok(&out);
    assert!(stdout.contains("All tests have passed"), "{stdout}");

    let store = Store::open(results.to_str().unwrap()).unwrap();
    let listed = store.list(&sojourn_store::Filter::default()).unwrap();
    assert_eq!(listed.len(), 4, "{listed:#?}");
    let report = |args: &[&str]| {
        bin()
            .arg("report")
            .arg("--results")
            .arg(&results)
            .args(["--label", "suite=redis-whitepaper"])
            .args(args)
            .run_to_end()
    };
    let csv = ok(&report(&["--format", "csv", "--table", "summary"]));
    let rows = csv_rows(&csv);
    let column = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (op, qps, avg, p99) = (
        column("operation"),
        column("QPS"),
        column("Average latency (µs)"),
        column("99th percentile latency (µs)"),
    );
    let same = |got: &str, want: f64| {
        let got: f64 = got.parse().unwrap();
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1e-9),
            "table {got}, store {want}"
        );
    };
    let mut mixed = 0;
    for summary in &listed {
        let id = summary.meta.id.as_str();
        let run = store.load(id).unwrap();
        let stage: Vec<&Vec<String>> = rows[1..]
            .iter()
            .filter(|r| id.starts_with(r[0].as_str()))
            .collect();
        let kinds: Vec<_> = run.total.kinds().filter(|(_, o)| o.count() > 0).collect();
        assert!(!kinds.is_empty());
        // The stage's row: its throughput, every kind's histogram merged.
        let mut all = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for (_, o) in &kinds {
            all.add(&o.ok.service).unwrap();
        }
        same(
            &stage[0][qps],
            run.summary.totals.as_ref().unwrap().throughput,
        );
        same(&stage[0][avg], all.mean() / 1e3);
        same(&stage[0][p99], all.value_at_quantile(0.99) as f64 / 1e3);
        if kinds.len() == 1 {
            assert_eq!(stage.len(), 1);
            assert_eq!(stage[0][op], kinds[0].0.name());
            continue;
        }
        // A mixed stage: a row per operation, each its own histogram.
        mixed += 1;
        assert_eq!(stage[0][op], "all");
        assert_eq!(stage.len(), kinds.len() + 1);
        let seconds = run.measured().as_secs_f64();
        for (row, (kind, o)) in stage[1..].iter().zip(&kinds) {
            assert_eq!(row[op], kind.name());
            same(&row[qps], o.count() as f64 / seconds);
            same(&row[avg], o.ok.service.mean() / 1e3);
            same(&row[p99], o.ok.service.value_at_quantile(0.99) as f64 / 1e3);
        }
        let names: Vec<&str> = kinds.iter().map(|(k, _)| k.name()).collect();
        assert_eq!(names, ["read", "update"], "Uniform 50/50");
    }
    assert_eq!(mixed, 1, "{csv}");
    // The load is workload A's, as the whitepaper's script loads.
    let load = listed.iter().find(|r| r.meta.phase == "load").unwrap();
    assert_eq!(load.meta.workloads, ["workloada"]);

    // Markdown: the whitepaper's Read: and Update:, and no cost table for
    // these Redis runs (the walkthrough's price is Bigtable's).
    let md = ok(&report(&["--format", "md", "--table", "summary"]));
    assert!(
        md.contains("| all |") && md.contains("| Read: |") && md.contains("| Update: |"),
        "{md}"
    );
    let md = ok(&report(&["--format", "md"]));
    assert!(md.contains("## Performance"), "{md}");
    assert!(
        !md.contains("## Resource and cost") && !md.contains("Monthly cost"),
        "{md}"
    );
    assert!(md.contains("they are not Bigtable runs"), "{md}");
    let out = report(&["--format", "csv", "--table", "cost"]);
    assert_eq!(ok(&out), "", "no cost rows for Redis runs");

    // The HTML report reads like the experiment: the runs named by the
    // suite's experiments, only the runs that have an operation in its
    // charts, one latency unit, no counter that did not change.
    let html_path = dir.path().join("report.html");
    ok(&report(&["-o", html_path.to_str().unwrap()]));
    let html = std::fs::read_to_string(&html_path).unwrap();
    let experiments = ["load", "uniform_read", "zipfian_read", "uniform_50_50"];
    for e in experiments {
        assert!(html.contains(&format!("\">{e}</a>")), "{e} not named");
        assert!(
            html.contains(&format!("<h2>Run {e}: ")),
            "{e} has no heading"
        );
    }
    for summary in &listed {
        let id = summary.meta.id.as_str();
        assert!(
            !html.contains(&format!(">{}<", &id[..13])),
            "{id} named by id"
        );
    }
    let legends = |title: &str| -> Vec<String> {
        let plot = html
            .split("<svg class=\"plot\"")
            .find(|p| p.contains(&format!(">{title}</title>")))
            .unwrap_or_else(|| panic!("no chart {title:?}"));
        plot.split("<g class=\"legend-item\"")
            .skip(1)
            .map(|g| {
                g.split("fill=\"#222\">")
                    .nth(1)
                    .unwrap()
                    .split('<')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(
        legends("INSERT: response time percentile spectrum, load only"),
        ["load"]
    );
    assert_eq!(
        legends("READ: service time percentile spectrum, the 3 runs that have it"),
        ["uniform_read", "zipfian_read", "uniform_50_50"]
    );
    // One unit, chosen from the data: µs while every operation's p99 is
    // under a millisecond (Redis's, unless the machine is busy), ms above.
    let largest_p99 = listed
        .iter()
        .flat_map(|s| {
            let run = store.load(s.meta.id.as_str()).unwrap();
            run.total
                .kinds()
                .flat_map(|(_, o)| {
                    [&o.ok.service, &o.ok.response].map(|h| h.value_at_quantile(0.99))
                })
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap();
    let (unit, other) = if largest_p99 >= 1_000_000 {
        ("ms", "µs")
    } else {
        ("µs", "ms")
    };
    assert!(
        html.contains(&format!("<th>p99 {unit}</th>")),
        "the table's unit"
    );
    assert!(
        html.contains(&format!("({unit}, log scale)")),
        "the charts' unit"
    );
    for wrong in [
        format!("({other},"),
        format!("({other})"),
        format!(" {other}</th>"),
    ] {
        assert!(!html.contains(&wrong), "{wrong:?} on a page in {unit}");
    }
    let md = ok(&report(&["--format", "md", "--table", "performance"]));
    assert!(
        md.contains(&format!("| read p50 {unit} |")) && !md.contains(&format!(" {other} |")),
        "{md}"
    );
    let zero_row = regex::Regex::new(r#"<tr><td>[a-z_]+</td><td class="num">0</td>"#).unwrap();
    assert!(!zero_row.is_match(&html), "a counter row of 0");
    assert!(
        html.contains("counters unchanged: calls_del,"),
        "the unchanged ones named"
    );

    let Some(chromium) = chromium() else {
        return;
    };
    check_interactive(&chromium, &html_path, &html);
    // At 1280 pixels nothing scrolls sideways.
    let profile = tempfile::tempdir().unwrap();
    let out = headless(&chromium, profile.path())
        .arg("--window-size=1280,1000")
        .arg("--dump-dom")
        .arg(format!("file://{}#selftest", html_path.display()))
        .output()
        .unwrap();
    let dom = text(&out.stdout);
    assert!(
        out.status.success(),
        "chromium failed: {}",
        text(&out.stderr)
    );
    let width: u32 = body_attribute(&dom, "data-page-width")
        .and_then(|w| w.parse().ok())
        .expect("the page's width");
    assert!((1200..=1280).contains(&width), "a window of {width} pixels");
    assert_eq!(
        body_attribute(&dom, "data-overflow"),
        Some(""),
        "wider than {width} pixels"
    );
}

/// A run on the embedded SQLite database is no Bigtable run either: its
/// tables have no cost unless a price is given.
#[test]
fn a_sqlite_run_has_no_cost_table_unless_priced() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    ok(&sojourn(
        dir.path(),
        &[
            "bench",
            "--db",
            &db,
            "-P",
            "workloads/workloada",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=400",
        ],
    ));
    let report = |extra: &[&str]| {
        let mut args = vec!["report", "last", "--format", "md", "--data-dir"];
        args.push(dir.path().to_str().unwrap());
        args.extend_from_slice(extra);
        ok(&bin().args(&args).run_to_end())
    };
    let md = report(&[]);
    assert!(md.contains("## Performance"), "{md}");
    assert!(!md.contains("## Resource and cost"), "{md}");
    assert!(md.contains("it is not a Bigtable run"), "{md}");
    let md = report(&["--node-hour-price", "1.5"]);
    assert!(
        md.contains("## Resource and cost") && md.contains("$1.5 per node-hour"),
        "{md}"
    );
    assert!(
        md.contains("| 1 | ssd |") && md.contains("| 1080.00 |"),
        "{md}"
    );
    // The HTML report's tables alike.
    let html = dir.path().join("report.html");
    ok(&bin()
        .args(["report", "last", "--data-dir"])
        .arg(dir.path())
        .arg("-o")
        .arg(&html)
        .run_to_end());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Performance</h2>"));
    assert!(!page.contains("Resource and cost"));
    assert!(page.contains("it is not a Bigtable run"));
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

/// Every interactive chart's data in a report, by chart id (`chart-N`),
/// read as the page's script reads it.
fn chart_specs(html: &str) -> Vec<(String, serde_json::Value)> {
    html.split("<script type=\"application/json\" class=\"chart-data\" id=\"")
        .skip(1)
        .map(|s| {
            let (id, rest) = s.split_once("\">").expect("a chart's data");
            let json = rest.split("</script>").next().unwrap();
            let spec = serde_json::from_str(json).unwrap_or_else(|e| panic!("{id}: {e} in {json}"));
            (id.trim_end_matches("-data").to_string(), spec)
        })
        .collect()
}

/// The series of an interactive chart called `label`.
fn chart_series<'a>(spec: &'a serde_json::Value, label: &str) -> Option<&'a serde_json::Value> {
    spec["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
}

/// A series' points, `None` for a gap.
fn chart_points(series: &serde_json::Value) -> Vec<(f64, Option<f64>)> {
    let xs = series["x"].as_array().unwrap();
    let ys = series["y"].as_array().unwrap();
    assert_eq!(xs.len(), ys.len());
    xs.iter()
        .zip(ys)
        .map(|(x, y)| (x.as_f64().unwrap(), y.as_f64()))
        .collect()
}

/// The value of `name="..."` on the dumped page's `<body>`.
fn body_attribute<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let body = dom.split("<body").nth(1)?.split('>').next()?;
    let at = body.find(&format!(" {name}=\""))? + name.len() + 3;
    body[at..].split('"').next()
}

/// The report's interactive charts, checked in Chromium with the network
/// cut off: the page fetches nothing, every chart over time is built by
/// uPlot beside its static SVG (kept as the fallback without script), and
/// a hover (the page's `#selftest`, since `--dump-dom` cannot hover) shows
/// in every legend the value stored at that point in the chart's JSON.
/// Returns the charts' data.
fn check_interactive(
    chromium: &Path,
    html_path: &Path,
    html: &str,
) -> Vec<(String, serde_json::Value)> {
    let specs = chart_specs(html);
    assert!(!specs.is_empty(), "no interactive chart");
    for (id, _) in &specs {
        let figure = html
            .split(&format!("<figure class=\"chart\" data-chart=\"{id}\">"))
            .nth(1)
            .unwrap_or_else(|| panic!("no figure for {id}"));
        assert!(
            figure.starts_with("<svg class=\"plot\""),
            "{id}: the static SVG comes first, as the fallback"
        );
    }
    // Nothing to fetch: no address in anything a browser loads from (the
    // library's minified text names its home page in a comment only), and
    // no script call that could fetch.
    let attrs =
        regex::Regex::new(r#"(?i)\b(src|href|action|poster|data)\s*=\s*["']?([^"'\s>]*)"#).unwrap();
    for c in attrs.captures_iter(html) {
        let v = c[2].to_ascii_lowercase();
        assert!(
            !(v.starts_with("http:") || v.starts_with("https:") || v.starts_with("//")),
            "fetched from the network: {}",
            &c[0]
        );
    }
    // (`url(#id)` is the SVG's reference to its own clip path.)
    let fetches = regex::Regex::new(
        r#"(?i)(url\(\s*['"]?[^#'"\s)]|@import|import\(|fetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|<link|<iframe|<img)"#,
    )
    .unwrap();
    if let Some(m) = fetches.find(html) {
        panic!(
            "could fetch: {:?}",
            &html[m.start().saturating_sub(60)..(m.end() + 60).min(html.len())]
        );
    }

    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}#selftest", html_path.display());
    let out = headless(chromium, profile.path())
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = text(&out.stdout);
    let log = text(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert!(!log.contains(":CONSOLE"), "console output:\n{log}");
    assert!(!log.contains("Uncaught"), "script error:\n{log}");
    let selftest = body_attribute(&dom, "data-selftest")
        .unwrap_or_else(|| panic!("the self-test did not run\n{log}"));
    assert_eq!(
        body_attribute(&dom, "data-resources"),
        Some("0"),
        "the page loaded resources"
    );
    // Every chart was built, beside its SVG.
    assert_eq!(
        body_attribute(&dom, "data-uplot"),
        Some(specs.len().to_string().as_str())
    );
    assert_eq!(dom.matches("class=\"uplot").count(), specs.len());
    assert_eq!(dom.matches("class=\"chart live\"").count(), specs.len());

    // Each hover: `chart|series|x|legend value|points`, one per series.
    let mut hovered = std::collections::BTreeMap::<&str, usize>::new();
    for entry in selftest.split(';') {
        let f: Vec<&str> = entry.split('|').collect();
        assert_eq!(f.len(), 5, "{entry}");
        let (_, spec) = specs
            .iter()
            .find(|(id, _)| id == f[0])
            .unwrap_or_else(|| panic!("{entry}: no such chart"));
        let series = &spec["series"][f[1].parse::<usize>().unwrap()];
        let points = chart_points(series);
        if !f[4].is_empty() {
            // The series the cursor was put on: all its points are there.
            let n: usize = f[4].parse().unwrap();
            assert_eq!(n, points.iter().filter(|p| p.1.is_some()).count());
            assert!(n > 0, "{entry}");
        }
        if f[3] == "--" {
            continue;
        }
        let x: f64 = f[2].parse().unwrap_or_else(|_| panic!("{entry}"));
        let shown: f64 = f[3]
            .parse()
            .unwrap_or_else(|_| panic!("{entry}: the legend shows no number"));
        let stored = points
            .iter()
            .find(|p| p.0 == x)
            .and_then(|p| p.1)
            .unwrap_or_else(|| panic!("{entry}: nothing stored at x = {x}"));
        assert_eq!(shown, stored, "{entry}: {}", series["label"]);
        *hovered.entry(f[0]).or_default() += 1;
    }
    for (id, _) in &specs {
        assert!(
            hovered.get(id.as_str()).is_some_and(|n| *n > 0),
            "{id} showed no value on hover"
        );
    }
    specs
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
    // Per step: throughput, waiting in the client, and per kind (read,
    // update) percentiles over time and a spectrum; the curve for read,
    // update and all; with up to seven runs, every run's spectra side by
    // side (2 kinds x 2 latencies).
    let side_by_side = if steps <= 7 { 4 } else { 0 };
    assert_eq!(plots, steps * 6 + 3 + side_by_side, "plots in the report");
    for title in [
        "READ: latency against throughput",
        "offered, achieved and target throughput over time",
        "waiting in the client (response − service), mean",
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

    // Interactive: per step its throughput, waiting and two kinds'
    // percentiles over time; each step's target a constant line at the
    // step's target, as the performance table has it.
    let specs = check_interactive(&chromium, &html_path, &html);
    assert_eq!(specs.len(), steps * 4);
    let throughput: Vec<&serde_json::Value> = specs
        .iter()
        .map(|(_, s)| s)
        .filter(|s| {
            s["title"]
                .as_str()
                .unwrap()
                .contains("throughput over time")
        })
        .collect();
    assert_eq!(throughput.len(), steps);
    for (i, spec) in throughput.iter().enumerate() {
        let target = num(&rows, i + 1, "target ops/s");
        let line = chart_points(chart_series(spec, "target").expect("a target line"));
        assert!(
            line.iter().all(|p| p.1 == Some(target)),
            "step {i}: {line:?} against {target}"
        );
        assert!(chart_series(spec, "offered (released by the schedule)").is_some());
    }
}

/// A run that follows a rate profile past the database's capacity (the
/// `memory:` backend serving 2,000 operations per second): its report
/// draws the profile's target as it went, the load the schedule offered
/// and what was achieved on one axis, and the time operations waited in
/// the client growing as the backlog builds; in Chromium, offline, every
/// chart over time is interactive and its hover shows the stored values.
#[test]
fn a_rate_profile_run_reports_target_offered_achieved_and_waiting_interactively() {
    let dir = tempfile::tempdir().unwrap();
    // 2,500 operations below capacity, then 5,000 offered while 4,000 can
    // be served: a backlog of 1,000 operations (half a second) at the end.
    // The machine's scheduling delay meanwhile bounds the client's wait.
    let (out, lateness) = sojourn_testkit::lateness::measured(|| {
        sojourn(
            dir.path(),
            &[
                "bench",
                "memory:?max_ops_per_sec=2000",
                "-P",
                "workloads/workloadc",
                "-p",
                "recordcount=100",
                "-p",
                "operationcount=0",
                "--rate",
                "ramp 1000..1500 in 2s, ramp 2000..3000 in 2s",
                "-threads",
                "16",
                "--seed",
                "3",
            ],
        )
    });
    ok(&out);
    let html_path = dir.path().join("report.html");
    ok(&bin()
        .args(["report", "last", "-o"])
        .arg(&html_path)
        .arg("--data-dir")
        .arg(dir.path())
        .run_to_end());
    let html = std::fs::read_to_string(&html_path).unwrap();
    let specs = chart_specs(&html);
    let chart = |title: &str| {
        specs
            .iter()
            .map(|(_, s)| s)
            .find(|s| s["title"].as_str().unwrap().contains(title))
            .unwrap_or_else(|| panic!("no chart {title:?}"))
    };
    let profile = |x: f64| {
        if x < 2.0 {
            1000.0 + 250.0 * x
        } else {
            2000.0 + 500.0 * (x - 2.0)
        }
    };

    // The target follows the profile from its start to its end.
    let tput = chart("offered, achieved and target throughput over time");
    assert!(chart_series(tput, "target").is_none());
    let target = chart_points(chart_series(tput, "target (rate profile)").expect("the profile"));
    assert_eq!(target[0].0, 0.0);
    assert!(target.last().unwrap().0 > 3.99, "{target:?}");
    for (x, y) in &target {
        let y = y.expect("a target everywhere");
        assert!((y - profile(*x)).abs() < 0.01, "target {y} at {x} s");
    }
    // Offered follows the target; achieved stops at capacity.
    let offered = chart_points(chart_series(tput, "offered (released by the schedule)").unwrap());
    let achieved = chart_points(chart_series(tput, "achieved, all operations").unwrap());
    // Means over the intervals whose midpoints fall in `lo..hi` seconds:
    // of the series, and of the profile at those midpoints.
    let mean = |pts: &[(f64, Option<f64>)], lo: f64, hi: f64| {
        let inside: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p.0 > lo && p.0 < hi)
            .filter_map(|p| Some((p.0, p.1?)))
            .collect();
        assert!(!inside.is_empty(), "no points in {lo}..{hi} s");
        let n = inside.len() as f64;
        (
            inside.iter().map(|p| p.1).sum::<f64>() / n,
            inside.iter().map(|p| profile(p.0)).sum::<f64>() / n,
        )
    };
    for (lo, hi) in [(0.1, 1.9), (2.1, 3.9)] {
        let (offered, planned) = mean(&offered, lo, hi);
        assert!(
            (offered / planned - 1.0).abs() < 0.15,
            "offered {offered} against the profile's {planned} in {lo}..{hi} s"
        );
    }
    let (offered_late, _) = mean(&offered, 2.1, 3.9);
    let (achieved_late, _) = mean(&achieved, 2.1, 3.9);
    assert!(
        achieved_late < 2000.0 * 1.1 && offered_late > 1.1 * achieved_late,
        "past capacity: offered {offered_late}, achieved {achieved_late}"
    );

    // Waiting in the client: little below capacity, the backlog's half a
    // second near the end.
    let wait = chart("waiting in the client (response − service), mean");
    let unit = wait["y"]["label"].as_str().unwrap();
    let ms = match unit.rsplit('(').next().unwrap().trim_end_matches(')') {
        "s" => 1e3,
        "ms" => 1.0,
        "µs" => 1e-3,
        "ns" => 1e-6,
        other => panic!("unit {other:?} in {unit:?}"),
    };
    let reads = chart_points(chart_series(wait, "read").unwrap());
    let early = reads
        .iter()
        .filter(|p| p.0 < 1.9)
        .filter_map(|p| p.1)
        .fold(0.0, f64::max)
        * ms;
    let late = reads
        .iter()
        .filter(|p| p.0 > 3.0)
        .filter_map(|p| p.1)
        .fold(0.0, f64::max)
        * ms;
    // Below capacity a client waits for nothing but its own scheduling:
    // 50 ms and what the machine added, never as much as the backlog's
    // 150 ms and more.
    let bound = lateness.bound(Duration::from_millis(50), Duration::from_millis(100));
    let bound = bound.as_secs_f64() * 1e3;
    assert!(
        early < bound,
        "waiting below capacity: {early} ms; {lateness}"
    );
    assert!(late > 150.0, "waiting with the backlog: {late} ms");

    let Some(chromium) = chromium() else {
        return;
    };
    // Throughput, waiting and read's percentiles over time.
    assert_eq!(check_interactive(&chromium, &html_path, &html).len(), 3);
}

/// `report --history`: twelve commits of runs whose throughput drops 10%
/// at c07 draw, per figure, a chart whose points are the history's means
/// (as `sojourn history` computes them from the store), named by commit
/// and linked to their runs' sections, with the change point marked at
/// c07; in Chromium a hover shows those values.
#[test]
fn a_history_report_charts_the_stored_points_and_marks_the_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let results = path.to_str().unwrap();
    let store = Store::open(results).unwrap();
    for c in 1..=12u32 {
        let commit = format!("c{c:02}");
        let run = Synthetic {
            rate: if c < 7 { 500.0 } else { 450.0 },
            intervals: 20,
            ..Synthetic::new(u64::from(c))
        };
        let o = run.outcome();
        let labels = [("commit", commit.as_str()), ("suite", "h")];
        store_outcome(
            &store,
            &meta_for(&o, "memory:", &[], &labels),
            &o,
            &run.series(),
        );
    }
    drop(store);
    let select = ["--results", results, "--label", "suite=h", "--by", "commit"];

    let out = bin()
        .arg("history")
        .args(select)
        .args(["--figure", "throughput", "--format", "json"])
        .run_to_end();
    let history: serde_json::Value = serde_json::from_str(&ok(&out)).expect("JSON");
    let points = history["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 12);
    let changes = history["series"][0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{history}");
    assert_eq!(changes[0]["key"], "c07");

    // Without --history, --by has nothing to shape; with it, only HTML.
    let out = bin().arg("report").args(select).run_to_end();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("add --history"),
        "{}",
        text(&out.stderr)
    );
    let out = bin()
        .arg("report")
        .args(select)
        .args(["--history", "--format", "md"])
        .run_to_end();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("sojourn history --format md"));

    let html_path = dir.path().join("history.html");
    let out = bin()
        .arg("report")
        .args(select)
        .args([
            "--history",
            "--figure",
            "throughput",
            "--figure",
            "read.p99",
            "-o",
        ])
        .arg(&html_path)
        .run_to_end();
    ok(&out);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let specs = chart_specs(&html);
    let spec = &specs
        .iter()
        .find(|(_, s)| s["title"] == "throughput over commit")
        .unwrap_or_else(|| panic!("no history chart of throughput"))
        .1;
    assert!(specs
        .iter()
        .any(|(_, s)| s["title"] == "read.p99 over commit"));
    let names: Vec<&str> = spec["x"]["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let commits: Vec<String> = (1..=12).map(|c| format!("c{c:02}")).collect();
    assert_eq!(names, commits);
    // Point i (from 1) is the history's point i: its mean, to the six
    // significant digits the charts keep, and a link to its run.
    let drawn = chart_points(chart_series(spec, "throughput").unwrap());
    assert_eq!(drawn.len(), 12);
    for (i, ((x, y), p)) in drawn.iter().zip(points).enumerate() {
        assert_eq!(*x, (i + 1) as f64);
        let mean = p["mean"].as_f64().unwrap();
        let y = y.unwrap();
        assert!(
            (y - mean).abs() <= 5e-6 * mean,
            "point {}: {y} drawn, {mean} stored",
            i + 1
        );
        let run = p["runs"][0].as_str().unwrap();
        assert_eq!(spec["links"][i], run);
        assert!(
            html.contains(&format!("id=\"run-{run}\"")),
            "no section for {run}"
        );
        assert!(
            html.contains(&format!("<a href=\"#run-{run}\">")),
            "{run} not linked"
        );
    }
    // The regimes' means, broken at the change, marked between c06 and c07.
    let regime = chart_points(chart_series(spec, "regime mean").unwrap());
    let before = changes[0]["before"]["mean"].as_f64().unwrap();
    let after = changes[0]["after"]["mean"].as_f64().unwrap();
    for (x, y) in &regime {
        match *x {
            x if x < 6.5 => assert!((y.unwrap() - before).abs() <= 5e-6 * before),
            x if x > 6.5 => assert!((y.unwrap() - after).abs() <= 5e-6 * after),
            _ => assert_eq!(*y, None, "the regimes' line breaks at the change"),
        }
    }
    let lines = spec["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["x"], 6.5);
    let label = lines[0]["label"].as_str().unwrap();
    assert!(
        label.starts_with("c07 -") && label.ends_with('%'),
        "{label}"
    );
    assert!(html.contains("<td>c07</td>") && html.contains("<td>worse</td>"));

    let Some(chromium) = chromium() else {
        return;
    };
    check_interactive(&chromium, &html_path, &html);
}
