//! Watching a run as it happens: the dashboard in a real terminal (a tmux
//! server of the test's own, its screen read back), and the Prometheus
//! endpoint scraped while a run goes on and once it has ended, its
//! exposition checked by Prometheus's own promtool.

mod util;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sojourn_testkit::needs::{find_binary, Need};
use util::*;

/// Long enough for a debug build on a busy machine, far short of a hang.
const WAIT: Duration = Duration::from_secs(120);
/// How often a condition on a screen or an endpoint is looked at again.
const POLL: Duration = Duration::from_millis(100);

/// A tmux server of this test's own (its socket in the test's folder),
/// killed when the test ends.
struct Tmux {
    bin: PathBuf,
    socket: PathBuf,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("-S").arg(&self.socket);
        c
    }

    fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once `ready` holds for it; fails with the screen if it
    /// never does.
    fn screen_when(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let s = self.screen();
            if ready(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "never {what}; the screen:\n{s}");
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

/// The row of `op` in the dashboard's table of operations: its cells.
fn table_row(screen: &str, op: &str) -> Vec<String> {
    let line = screen
        .lines()
        .rev()
        .find(|l| {
            l.trim_start_matches('│')
                .trim_start()
                .starts_with(&format!("{op} "))
        })
        .unwrap_or_else(|| panic!("no {op} row on the screen:\n{screen}"));
    line.trim_matches(|c: char| c == '│' || c.is_whitespace())
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The clock of the progress bar ("2.3 s of 100 s"), drawn over the bar.
fn elapsed(screen: &str) -> Option<f64> {
    let line = screen.lines().find(|l| l.contains(" s of 100 s"))?;
    let before = line.split(" s of 100 s").next()?;
    let digits: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

fn wait_for_file(path: &Path, tmux: &Tmux) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never written; the screen:\n{}",
            path.display(),
            tmux.screen()
        );
        std::thread::sleep(POLL);
    }
}

#[test]
fn the_dashboard_draws_the_run_stops_on_a_key_and_gives_the_terminal_back() {
    let Some(bin) = find_binary(Need::Tmux, "tmux", &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    ok(&sojourn(
        data,
        &["load", "-P", "workloada", "-p", "recordcount=200"],
    ));
    let tmux = Tmux {
        bin,
        socket: data.join("tmux.sock"),
    };
    // The summary goes to a file, as `sojourn run … > result.txt`: the
    // dashboard draws on stderr, the pane's terminal. The terminal's modes
    // are taken before and after.
    let script = format!(
        "cd '{d}' && stty -g > before && '{bin}' run --data-dir '{d}' -P workloada \
         -p operationcount=0 -p maxexecutiontime=100 -target 400 -threads 2 --json run.json \
         > out.txt; \
         echo $? > rc; stty -g > after; exec sleep 300",
        d = data.display(),
        bin = env!("CARGO_BIN_EXE_sojourn"),
    );
    let started = tmux
        .cmd()
        .args(["new-session", "-d", "-s", "t", "-x", "160", "-y", "50"])
        .arg(script)
        .current_dir(repo_root())
        .status()
        .unwrap();
    assert!(started.success());
    // Live: what the old bar never printed (p99.9, the offered rate), and
    // at least two seconds of it.
    let live = tmux.screen_when("drew a live frame", |s| {
        s.contains("svc p99.9")
            && s.contains("offered")
            && s.contains("operations so far")
            && elapsed(s).is_some_and(|t| t >= 2.0)
    });
    assert!(live.contains("target 400 ops/s"), "{live}");
    assert!(live.contains("2 connections"), "{live}");
    let running = table_row(&live, "READ");
    assert!(running[1].parse::<u64>().unwrap() > 0, "{running:?}");
    let live_cpu = live
        .split(" µs/op")
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no client CPU per operation: {live}"));
    // q stops the run as Ctrl+C does.
    let sent = tmux
        .cmd()
        .args(["send-keys", "-t", "t", "q"])
        .status()
        .unwrap();
    assert!(sent.success());
    let rc = wait_for_file(&data.join("rc"), &tmux);
    assert_eq!(rc.trim(), "130", "{}", tmux.screen());
    let before = std::fs::read_to_string(data.join("before")).unwrap();
    let after = wait_for_file(&data.join("after"), &tmux);
    assert_eq!(before, after, "the terminal's modes were not given back");
    // The last frame stays, with the summary's figures.
    let last = tmux.screen();
    assert!(last.contains("the phase has ended"), "{last}");
    let summary = parse_summary(&std::fs::read_to_string(data.join("out.txt")).unwrap());
    // The live CPU is an interval's, the run's is the whole run's: the
    // same order of magnitude (a counter stuck at 0 or in the wrong unit
    // is not).
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("run.json")).unwrap()).unwrap();
    let whole = run["client_cpu"]["us_per_op"].as_f64().unwrap();
    assert!(
        live_cpu > whole / 10.0 && live_cpu < whole * 10.0,
        "the dashboard drew {live_cpu} µs/op of client CPU, the run used {whole}"
    );
    for op in ["READ", "UPDATE"] {
        let row = table_row(&last, op);
        assert_eq!(
            row[1].parse::<f64>().unwrap(),
            get(&summary, op, "Operations"),
            "{op}: {row:?}\n{last}"
        );
        assert_eq!(
            row[4].parse::<f64>().unwrap(),
            get(&summary, op, "99thPercentileLatency(us)"),
            "{op} service p99: {row:?}\n{last}"
        );
    }
    let overall = get(&summary, "OVERALL", "Throughput(ops/sec)");
    assert!(
        last.contains(&format!("Throughput {overall:.1} ops/s")),
        "{overall}\n{last}"
    );
    // Kept, marked interrupted.
    let store = sojourn_store::Store::open(data.join("results.sqlite").to_str().unwrap()).unwrap();
    let run = store.load("last").unwrap();
    assert_eq!(run.summary.status, sojourn_store::RunStatus::Interrupted);
}

/// GET `url`'s body (a plain HTTP/1.1 request, the connection closed).
fn get_body(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    body.to_string()
}

/// `name{labels}` → value, for the samples of the exposition.
fn samples(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn sum_of(s: &BTreeMap<String, f64>, prefix: &str) -> f64 {
    s.iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, v)| v)
        .sum()
}

#[test]
fn metrics_are_served_while_a_run_goes_on_and_end_equal_to_the_summary() {
    let Some(promtool) = find_binary(Need::Prometheus, "promtool", &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let (child, mut stderr, url) = serving_metrics(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloada",
            "-p",
            "recordcount=500",
            "-p",
            "operationcount=4000",
            "-target",
            "1000",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    // While the run goes on, its counters increase.
    let ran = |s: &BTreeMap<String, f64>| sum_of(s, "sojourn_operations_total{phase=\"run\"");
    let deadline = Instant::now() + WAIT;
    let first = loop {
        let s = samples(&get_body(&url));
        if ran(&s) > 0.0 {
            break s;
        }
        assert!(Instant::now() < deadline, "the run never showed");
        std::thread::sleep(POLL);
    };
    let second = loop {
        let s = samples(&get_body(&url));
        if ran(&s) > ran(&first) {
            break s;
        }
        assert!(Instant::now() < deadline, "the run's counters never grew");
        std::thread::sleep(POLL);
    };
    assert!(
        sum_of(&second, "sojourn_client_cpu_seconds_total{phase=\"run\"")
            >= sum_of(&first, "sojourn_client_cpu_seconds_total{phase=\"run\"")
    );
    // Once the command is done, the final figures wait for one scrape.
    stderr.with("serving the final figures");
    let last = get_body(&url);
    let out = finish(child);
    assert!(out.status.success(), "{}", stderr.said);
    // Prometheus's own rules: names, types, help, histogram layout.
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(last.as_bytes())
        .unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool: {}{}\n{last}",
        text(&checked.stdout),
        text(&checked.stderr)
    );
    let s = samples(&last);
    let summary = parse_summary(&text(&out.stdout));
    for op in ["read", "update"] {
        let group = op.to_uppercase();
        let labels = format!("phase=\"run\",workload=\"workloada\",operation=\"{op}\"");
        assert_eq!(
            s[&format!("sojourn_operations_total{{{labels},status=\"OK\"}}")],
            get(&summary, &group, "Return=OK"),
            "{last}"
        );
        for hist in ["service", "response"] {
            assert_eq!(
                s[&format!("sojourn_{hist}_time_seconds_count{{{labels}}}")],
                get(&summary, &group, "Operations"),
                "{last}"
            );
            assert_eq!(
                s[&format!("sojourn_{hist}_time_seconds_bucket{{{labels},le=\"+Inf\"}}")],
                get(&summary, &group, "Operations"),
            );
        }
    }
    let offered = s["sojourn_offered_operations_total{phase=\"run\",workload=\"workloada\"}"];
    assert_eq!(offered, 4000.0, "{last}");
    // The CPU counter sums the intervals' CPU; the run's own figure is
    // taken once from start to end, a moment after the last interval.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let run = std::iter::once(&report)
        .chain(report.as_array().into_iter().flatten())
        .find(|r| r["phase"] == "run")
        .expect("the JSON report has the run phase");
    let whole = run["client_cpu"]["user_s"].as_f64().unwrap()
        + run["client_cpu"]["system_s"].as_f64().unwrap();
    let counted = sum_of(&s, "sojourn_client_cpu_seconds_total{phase=\"run\"");
    assert!(whole > 0.01, "{run}");
    assert!(
        counted <= whole + 1e-6 && whole - counted < 0.02 + 0.05 * whole,
        "the CPU counter says {counted} s, the run {whole} s\n{last}"
    );
    assert_eq!(
        s["sojourn_phase_info{phase=\"run\",workload=\"workloada\",database=\"memory:\"}"], 0.0,
        "{last}"
    );
}

/// A spawned command's stderr, line by line, each wait under a deadline.
struct StderrLines {
    rx: mpsc::Receiver<String>,
    said: String,
}

impl StderrLines {
    fn of(child: &mut std::process::Child) -> StderrLines {
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StderrLines {
            rx,
            said: String::new(),
        }
    }

    /// The next line containing `what`.
    fn with(&mut self, what: &str) -> String {
        loop {
            let line = self
                .rx
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no line with {what:?}; stderr:\n{}", self.said));
            self.said.push_str(&line);
            self.said.push('\n');
            if line.contains(what) {
                return line;
            }
        }
    }
}

/// sojourn with `args`, serving metrics on a free port of its own (the
/// final figures kept until scraped once): the process, its stderr's
/// lines, and the endpoint's URL once it says it.
fn serving_metrics(data: &Path, args: &[&str]) -> (std::process::Child, StderrLines, String) {
    let mut child = bin()
        .args(args)
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60"])
        .args(["--no-progress", "--data-dir"])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = StderrLines::of(&mut child);
    let url = stderr
        .with("metrics: Prometheus metrics at ")
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    (child, stderr, url)
}

/// The dashboard's panels (those in collapsed rows too), rows left out.
fn dashboard_panels(dashboard: &serde_json::Value) -> Vec<&serde_json::Value> {
    let mut out = Vec::new();
    let top = dashboard["panels"]
        .as_array()
        .expect("the dashboard has panels");
    for p in top {
        if p["type"] == "row" {
            out.extend(p["panels"].as_array().into_iter().flatten());
        } else {
            out.push(p);
        }
    }
    out
}

/// Every query of the dashboard: (panel title, PromQL as Grafana holds it).
/// The dashboard's queries: (panel title, expr, legend).
fn dashboard_queries(dashboard: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for p in dashboard_panels(dashboard) {
        let title = p["title"].as_str().unwrap_or("").to_string();
        assert!(!title.is_empty(), "a panel with no title: {p}");
        let targets = p["targets"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        assert!(!targets.is_empty(), "panel {title:?} has no queries");
        for t in targets {
            let expr = t["expr"].as_str().unwrap_or("");
            assert!(
                !expr.is_empty(),
                "panel {title:?}: a query with no expr: {t}"
            );
            let legend = t["legendFormat"].as_str().unwrap_or("").to_string();
            out.push((title.clone(), expr.to_string(), legend));
        }
    }
    out
}

/// The dashboard's query variables: (name, the selector and the label of
/// its `label_values(SELECTOR, LABEL)`).
fn dashboard_variables(dashboard: &serde_json::Value) -> Vec<(String, String, String)> {
    let list = dashboard["templating"]["list"]
        .as_array()
        .expect("the dashboard has variables");
    list.iter()
        .filter(|v| v["type"] == "query")
        .map(|v| {
            let name = v["name"].as_str().unwrap().to_string();
            let q = v["definition"].as_str().unwrap();
            let inner = q
                .strip_prefix("label_values(")
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or_else(|| panic!("${name}: expected label_values(SELECTOR, LABEL): {q}"));
            let (selector, label) = inner.rsplit_once(',').unwrap();
            (name, selector.trim().to_string(), label.trim().to_string())
        })
        .collect()
}

/// The metric names a PromQL expression reads: what is left once strings,
/// label matchers, ranges, Grafana variables, numbers, functions,
/// aggregations and their label lists and keywords are taken out.
fn metric_names(expr: &str) -> Vec<String> {
    const KEYWORDS: [&str; 25] = [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "and",
        "or",
        "unless",
        "offset",
        "inf",
        "nan",
    ];
    const LABEL_LISTS: [&str; 6] = [
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    let c: Vec<char> = expr.chars().collect();
    let skip_to = |from: usize, close: char| -> usize {
        let mut i = from + 1;
        let mut quote = None;
        while i < c.len() {
            match (quote, c[i]) {
                (Some(_), '\\') => i += 1,
                (Some(q), ch) if ch == q => quote = None,
                (None, '"' | '\'' | '`') => quote = Some(c[i]),
                (None, ch) if ch == close => return i + 1,
                _ => {}
            }
            i += 1;
        }
        panic!("{expr}: {close} missing");
    };
    let word = |from: usize| -> usize {
        (from..c.len())
            .find(|&j| !(c[j].is_ascii_alphanumeric() || c[j] == '_' || c[j] == ':'))
            .unwrap_or(c.len())
    };
    let mut names = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '"' || ch == '\'' || ch == '`' {
            i = skip_to(i, ch);
        } else if ch == '{' {
            i = skip_to(i, '}');
        } else if ch == '[' {
            i = skip_to(i, ']');
        } else if ch == '$' || ch.is_ascii_digit() || ch == '.' {
            i = word(i + 1);
        } else if ch.is_ascii_alphabetic() || ch == '_' || ch == ':' {
            let end = word(i);
            let w: String = c[i..end].iter().collect();
            let next = (end..c.len()).find(|&j| !c[j].is_whitespace());
            let called = next.is_some_and(|j| c[j] == '(');
            i = end;
            if called && LABEL_LISTS.contains(&w.as_str()) {
                i = skip_to(next.unwrap(), ')');
            } else if !called && !KEYWORDS.contains(&w.as_str()) {
                names.push(w);
            }
        } else {
            i += 1;
        }
    }
    names
}

/// The Grafana dashboard and docs/metrics.md against what a real run's
/// endpoint serves: every metric a panel or a variable reads is served,
/// every variable a query uses is defined, and the doc's table lists
/// exactly the families served.
#[test]
fn the_grafana_dashboard_and_the_metrics_doc_name_only_series_the_endpoint_serves() {
    // The reader of expressions is not vacuous.
    assert_eq!(
        metric_names(
            "histogram_quantile(0.99, sum by (le, op) (rate(a_bucket{x=~\"$v\", y!=\"}\"}[$__rate_interval]))) \
             / on (i) group_left (j) b_total * 1e3 - sum(c) by (k) or vector(0)"
        ),
        ["a_bucket", "b_total", "c"]
    );
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("grafana/sojourn.json")).unwrap();
    let dashboard: serde_json::Value =
        serde_json::from_str(&text).expect("grafana/sojourn.json is valid JSON");
    assert!(
        dashboard["schemaVersion"].as_u64().is_some(),
        "no schemaVersion"
    );
    let variables = dashboard["templating"]["list"].as_array().unwrap();
    assert!(
        variables.iter().any(|v| v["name"] == "datasource"
            && v["type"] == "datasource"
            && v["query"] == "prometheus"),
        "no Prometheus data source variable"
    );
    let queries = dashboard_queries(&dashboard);
    assert!(dashboard_panels(&dashboard).len() >= 8, "{text}");

    // What a real run serves once it has ended: every family there is
    // (open loop for the offered count, the target and the lag).
    let dir = tempfile::tempdir().unwrap();
    let (child, mut stderr, url) = serving_metrics(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloada",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=1000",
            "-target",
            "1000",
        ],
    );
    stderr.with("serving the final figures");
    let exposition = get_body(&url);
    let out = finish(child);
    assert!(out.status.success(), "{}", stderr.said);
    let served: std::collections::BTreeSet<String> = samples(&exposition)
        .keys()
        .map(|k| k.split('{').next().unwrap().to_string())
        .collect();
    let families: std::collections::BTreeSet<String> = exposition
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    assert!(families.len() >= 10, "{exposition}");

    // Every panel reads series that exist, with variables that exist.
    let defined: Vec<&str> = variables
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for (title, expr, _) in &queries {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "panel {title:?}: no metric in {expr}");
        for name in names {
            assert!(
                served.contains(&name),
                "panel {title:?} reads {name}, which the endpoint does not serve: {expr}\n\
                 served: {served:?}"
            );
        }
        for var in expr.split('$').skip(1) {
            let name: String = var
                .trim_start_matches('{')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            assert!(
                name == "__rate_interval"
                    || name == "__interval"
                    || defined.contains(&name.as_str()),
                "panel {title:?} uses ${name}, which is no variable of the dashboard: {expr}"
            );
        }
    }
    // The variables list label values the series have (`instance` and
    // `job` are Prometheus's own, on every scraped series).
    for (name, selector, label) in dashboard_variables(&dashboard) {
        for metric in metric_names(&selector) {
            assert!(
                served.contains(&metric),
                "${name} reads {metric}: not served"
            );
            let has_label = exposition
                .lines()
                .filter(|l| l.starts_with(&format!("{metric}{{")))
                .any(|l| l.contains(&format!("{label}=\"")));
            assert!(
                has_label || label == "instance" || label == "job",
                "${name} lists {label}, which {metric} does not carry:\n{exposition}"
            );
        }
    }

    // docs/metrics.md's table: each family once, nothing else.
    let doc = std::fs::read_to_string(root.join("docs/metrics.md")).unwrap();
    let documented: std::collections::BTreeSet<String> = doc
        .lines()
        .filter(|l| l.starts_with("| `sojourn_"))
        .map(|l| {
            l["| `".len()..]
                .split(['`', '{', ' '])
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    for name in &documented {
        assert!(
            families.contains(name) || served.contains(name),
            "docs/metrics.md lists {name}, which the endpoint does not serve; it serves {families:?}"
        );
    }
    for family in &families {
        assert!(
            documented.contains(family),
            "the endpoint serves {family}, which docs/metrics.md's table does not list"
        );
    }
    // And its PromQL examples read served series.
    let mut in_promql = false;
    let mut examples = 0;
    for line in doc.lines() {
        if line.starts_with("```") {
            in_promql = line == "```promql";
            continue;
        }
        if !in_promql || line.trim_start().starts_with('#') {
            continue;
        }
        for name in metric_names(line) {
            examples += 1;
            // A family with no series yet (no operation failed) is still
            // declared, so a query of it reads a name the endpoint knows.
            assert!(
                served.contains(&name) || families.contains(&name),
                "docs/metrics.md's example reads {name}, which the endpoint does not serve: {line}"
            );
        }
    }
    assert!(examples > 0, "no PromQL examples in docs/metrics.md");
}

/// A Prometheus server of the test's own (its storage in the test's
/// folder), killed when the test ends.
struct PrometheusServer {
    child: std::process::Child,
    addr: String,
}

impl PrometheusServer {
    /// Start `bin` scraping every second the targets listed in
    /// `dir/targets.json` (read again whenever the file changes, and every
    /// second: a change notice can be missed on a busy machine).
    fn start(bin: &Path, dir: &Path) -> PrometheusServer {
        std::fs::write(dir.join("targets.json"), "[]").unwrap();
        std::fs::write(
            dir.join("prometheus.yml"),
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: sojourn\n    file_sd_configs:\n      \
                 - files: ['{}']\n        refresh_interval: 1s\n",
                dir.join("targets.json").display()
            ),
        )
        .unwrap();
        let mut child = Command::new(bin)
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg("--web.listen-address=127.0.0.1:0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut log = StderrLines::of(&mut child);
        // Its log names the port it took.
        let listening = log.with("\"Listening on\"");
        let addr = listening
            .split_whitespace()
            .find_map(|w| w.strip_prefix("address="))
            .unwrap_or_else(|| panic!("no address in {listening}"))
            .to_string();
        log.with("ready to receive web requests");
        // The rest of its log is read (and dropped) so that it never blocks.
        std::thread::spawn(move || while log.rx.recv().is_ok() {});
        PrometheusServer { child, addr }
    }

    /// GET `path_and_query` of the HTTP API: its JSON.
    fn api(&self, path_and_query: &str) -> serde_json::Value {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        // HTTP/1.0: the answer is not chunked, and ends with the connection.
        write!(
            s,
            "GET {path_and_query} HTTP/1.0\r\nHost: {}\r\n\r\n",
            self.addr
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{path_and_query}: {e}: {response}"))
    }
}

impl Drop for PrometheusServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `s` as a URL query value.
fn url_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A dashboard query as Grafana sends it with every variable at "All"
/// and a one-second scrape interval (`$__rate_interval` is then 4 s).
fn as_grafana_sends(expr: &str) -> String {
    let q = expr
        .replace("$__rate_interval", "4s")
        .replace("$workload", ".*")
        .replace("$phase", ".*")
        .replace("$instance", ".*");
    assert!(!q.contains('$'), "a variable left in {q}");
    q
}

/// A quantile panel's query draws the quantile its legend names: the
/// panel's own expression over the run's final totals (its `rate` taken
/// out) equals that quantile of the same buckets as Prometheus
/// interpolates it, and the bucket it falls in holds the run summary's
/// own percentile (HDR's, from every operation).
fn quantile_is_the_legend_s(
    server: &PrometheusServer,
    title: &str,
    expr: &str,
    legend: &str,
    summary: &serde_json::Value,
    at: f64,
) {
    let name = legend.rsplit(' ').next().unwrap();
    let q: f64 = name
        .strip_prefix('p')
        .and_then(|p| p.parse().ok())
        .map(|p: f64| p / 100.0)
        .unwrap_or_else(|| panic!("panel {title:?}: legend {legend:?} names no quantile"));
    let totals = expr
        .replacen("(rate(", "((", 1)
        .replacen("[$__rate_interval]", "", 1);
    let inner = totals
        .split_once(", ")
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap();
    let instant = |query: &str| -> Vec<serde_json::Value> {
        let v = server.api(&format!(
            "/api/v1/query?query={}&time={at:.3}",
            url_encoded(&as_grafana_sends(query))
        ));
        assert_eq!(v["status"], "success", "Prometheus refused {query}: {v}");
        v["data"]["result"].as_array().unwrap().clone()
    };
    let value = |series: &serde_json::Value| -> f64 {
        series["value"][1].as_str().unwrap().parse().unwrap()
    };
    let op_of =
        |series: &serde_json::Value| series["metric"]["operation"].as_str().map(str::to_string);
    let answers = instant(&totals);
    assert!(!answers.is_empty(), "panel {title:?}: nothing for {totals}");
    let buckets = instant(inner);
    for answer in &answers {
        let op = op_of(answer);
        let mut les: Vec<(f64, f64)> = buckets
            .iter()
            .filter(|b| op_of(b) == op)
            .map(|b| {
                let le = b["metric"]["le"].as_str().unwrap();
                (le.parse::<f64>().unwrap_or(f64::INFINITY), value(b))
            })
            .collect();
        les.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total = les.last().unwrap().1;
        let rank = q * total;
        let i = les.iter().position(|&(_, c)| c >= rank).unwrap();
        let (lo, below) = if i == 0 { (0.0, 0.0) } else { les[i - 1] };
        let (hi, count) = les[i];
        assert!(
            hi.is_finite(),
            "panel {title:?} {op:?}: {name} beyond the last bucket"
        );
        let want = lo + (hi - lo) * (rank - below) / (count - below);
        let got = value(answer);
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "panel {title:?} {op:?}: the query draws {got} s, the buckets' {name} is {want} s: {expr}"
        );
        let key = format!("{}_us", name.replace('.', "_"));
        let figures = match (title.split(' ').next().unwrap(), &op) {
            ("Response", Some(op)) => &summary["ops"][op]["response"],
            ("Service", Some(op)) => &summary["ops"][op]["service"],
            ("Schedule", None) => &summary["scheduling_lag"],
            other => panic!("panel {title:?}: which summary figure is {other:?}?"),
        };
        let own = figures[&key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} in {figures}"))
            / 1e6;
        // HDR keeps three significant digits: 1% either side of a bucket.
        assert!(
            own >= lo * 0.99 && own <= hi * 1.01,
            "panel {title:?} {op:?}: the run's {name} {own} s is outside the bucket {lo}..{hi} s"
        );
    }
}

/// The dashboard's every query, run by a real Prometheus over a real run
/// it scraped (open loop on a rate profile, on a SQLite file loaded with
/// half the keys the run reads, so that some operations fail): each
/// parses and draws something, and each variable lists values.
#[test]
fn every_query_of_the_grafana_dashboard_draws_a_real_run_in_prometheus() {
    let Some(prometheus) = find_binary(Need::Prometheus, "prometheus", &[]) else {
        return;
    };
    let text = std::fs::read_to_string(repo_root().join("grafana/sojourn.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    ok(&sojourn(
        dir.path(),
        &["load", &db, "-P", "workloada", "-p", "recordcount=100"],
    ));
    let summary = dir.path().join("run.json");
    let server = PrometheusServer::start(&prometheus, dir.path());
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let (child, mut stderr, url) = serving_metrics(
        dir.path(),
        &[
            "run",
            &db,
            "-P",
            "workloada",
            "-p",
            "recordcount=200",
            "-p",
            "requestdistribution=uniform",
            "-p",
            "operationcount=0",
            "--rate",
            "ramp 200..600 in 3s, hold 600 for 5s",
            "--json",
            summary.to_str().unwrap(),
        ],
    );
    let target = url
        .strip_prefix("http://")
        .unwrap()
        .trim_end_matches("/metrics");
    // Written whole, then renamed: Prometheus never reads half a file.
    let targets = dir.path().join("targets.json");
    std::fs::write(
        dir.path().join("targets.tmp"),
        format!("[{{\"targets\": [\"{target}\"]}}]"),
    )
    .unwrap();
    std::fs::rename(dir.path().join("targets.tmp"), &targets).unwrap();
    // The command ends once Prometheus has scraped its final figures.
    stderr.with("serving the final figures");
    let out = finish(child);
    assert!(out.status.success(), "{}", stderr.said);
    let ended = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let range = |q: &str| -> Vec<serde_json::Value> {
        let v = server.api(&format!(
            "/api/v1/query_range?query={}&start={started:.3}&end={ended:.3}&step=1",
            url_encoded(q)
        ));
        assert_eq!(v["status"], "success", "Prometheus refused {q}: {v}");
        v["data"]["result"].as_array().unwrap().clone()
    };
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let mut quantiles = 0;
    for (title, expr, legend) in dashboard_queries(&dashboard) {
        if expr.starts_with("histogram_quantile(") {
            quantile_is_the_legend_s(&server, &title, &expr, &legend, &json, ended);
            quantiles += 1;
        }
        let q = as_grafana_sends(&expr);
        let result = range(&q);
        let drawn = result.iter().any(|series| {
            series["values"].as_array().unwrap().iter().any(|p| {
                p[1].as_str()
                    .unwrap()
                    .parse::<f64>()
                    .is_ok_and(f64::is_finite)
            })
        });
        assert!(
            drawn,
            "panel {title:?} draws nothing of the run: {q}\nPrometheus answered {result:?}"
        );
    }
    assert_eq!(quantiles, 7, "the dashboard's quantile panels");
    for (name, selector, label) in dashboard_variables(&dashboard) {
        let q = format!("count by ({label}) ({})", as_grafana_sends(&selector));
        let values: Vec<String> = range(&q)
            .iter()
            .filter_map(|s| s["metric"][&label].as_str().map(str::to_string))
            .collect();
        assert!(
            values.iter().any(|v| !v.is_empty()),
            "${name} lists no values: {q}"
        );
    }
}
