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
         -p operationcount=0 -p maxexecutiontime=100 -target 400 -threads 2 > out.txt; \
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
    let mut child = bin()
        .args([
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
            "--metrics-listen",
            "127.0.0.1:0",
            "--metrics-linger",
            "120",
            "--data-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = String::new();
    let mut line_with = |what: &str| -> String {
        loop {
            let line = rx
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no line with {what:?}; stderr:\n{said}"));
            said.push_str(&line);
            said.push('\n');
            if line.contains(what) {
                return line;
            }
        }
    };
    let url = line_with("metrics: Prometheus metrics at ")
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
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
    line_with("serving the final figures");
    let last = get_body(&url);
    let out = finish(child);
    assert!(out.status.success(), "{said}");
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
    assert_eq!(
        s["sojourn_phase_info{phase=\"run\",workload=\"workloada\",database=\"memory:\"}"], 0.0,
        "{last}"
    );
}
