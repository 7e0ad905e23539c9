//! Shared helpers for the CLI's end-to-end tests: running the binary in a
//! scratch data directory and parsing YCSB's summary back.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::thread::JoinHandle;

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sojourn"));
    c.current_dir(repo_root());
    c
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run sojourn with `args` and a private data directory.
pub fn sojourn(data: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .arg("--no-progress")
        .output()
        .expect("running sojourn")
}

/// Run sojourn as [`sojourn`] does, assert that it failed, and return its
/// stderr (which says why).
pub fn refused(data: &Path, args: &[&str]) -> String {
    let out = sojourn(data, args);
    assert!(
        !out.status.success(),
        "sojourn {args:?} succeeded\nstdout:\n{}",
        text(&out.stdout)
    );
    text(&out.stderr)
}

/// `sojourn report --format csv last` over the store at `results`.
pub fn report_csv_of_last(results: &Path) -> String {
    let out = bin()
        .args(["report", "--results", &results.to_string_lossy()])
        .args(["--format", "csv", "last"])
        .output()
        .expect("running sojourn report");
    ok(&out)
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Assert success and return stdout.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "sojourn failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// YCSB's summary as `group -> measurement -> value`.
pub type Summary = BTreeMap<String, BTreeMap<String, f64>>;

pub fn parse_summary(stdout: &str) -> Summary {
    let mut m = Summary::new();
    for line in stdout.lines() {
        let parts: Vec<&str> = line.splitn(3, ", ").collect();
        if parts.len() != 3 || !parts[0].starts_with('[') || !parts[0].ends_with(']') {
            continue;
        }
        let group = parts[0].trim_matches(|c| c == '[' || c == ']').to_string();
        let value: f64 = parts[2]
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("not a number in summary line {line:?}"));
        m.entry(group)
            .or_default()
            .insert(parts[1].to_string(), value);
    }
    m
}

pub fn get(s: &Summary, group: &str, key: &str) -> f64 {
    *s.get(group)
        .and_then(|g| g.get(key))
        .unwrap_or_else(|| panic!("no [{group}], {key} in summary {s:#?}"))
}

pub fn get_or_zero(s: &Summary, group: &str, key: &str) -> f64 {
    s.get(group)
        .and_then(|g| g.get(key))
        .copied()
        .unwrap_or(0.0)
}

/// Read a spawned sojourn's stderr (piped) until a YCSB status line of the
/// run phase shows it is under way (after the line containing `after`,
/// when given: `bench` loads first); the rest of stderr is collected on a
/// thread, whose result includes what was read here.
pub fn wait_until_running(child: &mut Child, after: Option<&str>) -> JoinHandle<String> {
    let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let mut seen = String::new();
    let mut running = after.is_none();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if after.is_some_and(|a| line.contains(a)) {
            running = true;
        } else if running && line.contains(" sec: ") && line.contains("operations;") {
            break;
        }
    }
    assert!(seen.contains("operations;"), "no status line:\n{seen}");
    std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            seen.push_str(&l);
            seen.push('\n');
        }
        seen
    })
}
