//! sojourn's output as PerfKitBenchmarker reads it: `ycsb.py` captures a
//! client's stderr then its stdout, and its parser (`ycsb_stats.py`) takes
//! the stage from the last `Command line:` line before the summary (`load`
//! when it holds `-load`, else `run`) and each `[GROUP], key, value` line
//! of the summary, dropping the `Intended-` and `-FAILED` groups. The rules
//! are re-stated here from that description, not taken from PKB.

mod util;

use std::collections::BTreeMap;

use util::*;

/// What PKB's parser makes of one captured output.
struct Parsed {
    stage: &'static str,
    command_line: String,
    groups: BTreeMap<String, BTreeMap<String, f64>>,
}

fn pkb_parse(captured: &str) -> Parsed {
    let mut lines = captured.lines().map(str::trim);
    let mut command_line = String::new();
    let first = loop {
        let line = lines.next().expect("a summary starting with [OVERALL]");
        if line.starts_with("[OVERALL]") {
            break line;
        }
        if let Some(rest) = line.strip_prefix("Command line:") {
            command_line = rest.trim().to_string();
        }
    };
    let mut groups: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in std::iter::once(first).chain(lines) {
        let parts: Vec<&str> = line.split(',').map(str::trim).collect();
        let [group, key, value] = parts[..] else {
            continue;
        };
        let Some(group) = group.strip_prefix('[').and_then(|g| g.strip_suffix(']')) else {
            continue;
        };
        if group.starts_with("Intended") || group.ends_with("-FAILED") {
            continue;
        }
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        groups
            .entry(group.to_string())
            .or_default()
            .insert(key.to_string(), value);
    }
    let stage = if command_line.split(' ').any(|a| a == "-load") {
        "load"
    } else {
        "run"
    };
    Parsed {
        stage,
        command_line,
        groups,
    }
}

fn captured(out: &std::process::Output) -> String {
    ok(out);
    format!("{}{}", text(&out.stderr), text(&out.stdout))
}

#[test]
fn pkbs_parser_reads_the_stage_groups_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    let load = pkb_parse(&captured(&sojourn(
        dir.path(),
        &[
            "load",
            &db,
            "-P",
            "workloada",
            "-p",
            "recordcount=300",
            "-p",
            "db.passwd=s3cret",
            "-threads",
            "2",
        ],
    )));
    assert_eq!(load.stage, "load", "{}", load.command_line);
    assert!(
        load.command_line.contains("-P workloada"),
        "{}",
        load.command_line
    );
    assert!(
        !load.command_line.contains("s3cret"),
        "{}",
        load.command_line
    );
    assert_eq!(load.groups["INSERT"]["Operations"], 300.0);
    assert_eq!(load.groups["INSERT"]["Return=OK"], 300.0);
    assert!(load.groups["OVERALL"]["Throughput(ops/sec)"] > 0.0);

    let run = pkb_parse(&captured(&sojourn(
        dir.path(),
        &[
            "run",
            &db,
            "-P",
            "workloada",
            "-p",
            "recordcount=300",
            "-p",
            "operationcount=500",
            "-p",
            "measurement.interval=both",
        ],
    )));
    assert_eq!(run.stage, "run", "{}", run.command_line);
    let ops = |g: &str| run.groups.get(g).map_or(0.0, |m| m["Operations"]);
    assert_eq!(ops("READ") + ops("UPDATE"), 500.0);
    // The Intended- groups sojourn prints are dropped, as PKB drops them,
    // and what remains has YCSB's keys.
    assert!(run.groups.keys().all(|g| !g.starts_with("Intended")));
    for key in [
        "AverageLatency(us)",
        "MinLatency(us)",
        "MaxLatency(us)",
        "95thPercentileLatency(us)",
    ] {
        assert!(
            run.groups["READ"].contains_key(key),
            "{key}: {:?}",
            run.groups["READ"]
        );
    }
    // A bench (load, then run) prints a Command line for each phase; the
    // parser, given the output of each, gets both stages right.
    let bench = text(
        &sojourn(
            dir.path(),
            &[
                "bench",
                "memory:",
                "-P",
                "workloadc",
                "-p",
                "recordcount=100",
                "-p",
                "operationcount=100",
            ],
        )
        .stderr,
    );
    let lines: Vec<&str> = bench
        .lines()
        .filter(|l| l.starts_with("Command line:"))
        .collect();
    assert_eq!(lines.len(), 2, "{bench}");
    assert!(
        lines[0].ends_with(" -load") && lines[1].ends_with(" -t"),
        "{lines:?}"
    );
}
