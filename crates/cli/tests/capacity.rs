//! `sojourn capacity` against a database of known capacity: the `memory:`
//! backend's test hook serves at most K operations per second, one at a
//! time, so the search must find K within its precision.

mod util;

use util::*;

/// A search of `db` (a `memory:` URL) with the settings the tests share
/// and `extra` flags: its output and its `--json` report.
fn memory_search(
    dir: &std::path::Path,
    db: &str,
    extra: &[&str],
) -> (std::process::Output, serde_json::Value) {
    let json = dir.join("cap.json");
    let mut args = vec![
        "capacity",
        db,
        "-P",
        "workloadc",
        "--load",
        "--slo",
        "read.p90<200ms",
        "--step",
        "1.5",
        "--settle",
        "0.3",
        "-threads",
        "16",
        "--seed",
        "1",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = sojourn(dir, &args);
    let report = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(serde_json::Value::Null);
    (out, report)
}

#[test]
fn finds_a_known_capacity_within_precision() {
    let dir = tempfile::tempdir().unwrap();
    let k = 2000.0;
    let (out, r) = memory_search(dir.path(), "memory:?max_ops_per_sec=2000", &[]);
    let stdout = ok(&out);
    let cap = r["capacity_ops_per_sec"].as_f64().expect("a capacity");
    assert!(
        (cap - k).abs() <= 0.05 * k,
        "capacity {cap} for K={k}\n{stdout}\n{}",
        text(&out.stderr)
    );
    let [lo, hi] = [
        r["bracket_ops_per_sec"][0].as_f64().unwrap(),
        r["bracket_ops_per_sec"][1].as_f64().unwrap(),
    ];
    assert!(
        lo <= hi && (hi - lo) <= 0.05 * (hi + lo) + 1.0,
        "bracket {lo}..{hi}"
    );
    let steps = r["steps"].as_array().unwrap();
    assert!(steps.len() >= 4, "ramped and bisected: {}", steps.len());
    // Steps well below K held; steps well above it missed. (Within 5% of K
    // a short step may go either way: the backlog grows slowly.)
    for s in steps {
        let t = s["target"].as_f64().unwrap();
        let sustained = s["sustained"].as_bool().unwrap();
        if t <= 0.95 * k {
            assert!(sustained, "step at {t} should hold");
        }
        if t >= 1.1 * k {
            assert!(!sustained, "step at {t} should miss");
        }
    }
    assert!(stdout.contains("latency-throughput curve"), "{stdout}");
    assert!(
        stdout.contains(&format!("capacity: {cap:.0} ops/s sustained")),
        "{stdout}"
    );
}

/// A database of capacity 2,000 ops/s that stops answering for a second
/// once, during the step at 1,600: that step misses, is tried again and
/// holds, and the search still finds 2,000 within its precision.
#[test]
fn a_transient_stall_is_tried_again_not_believed() {
    let dir = tempfile::tempdir().unwrap();
    // Load 1,000 records, then steps of 1.8 s at 800 (about 1,440
    // operations) and 1,600 ops/s: the stall falls 1,000 operations into
    // the second.
    let (out, r) = memory_search(
        dir.path(),
        "memory:?max_ops_per_sec=2000&stall_at=3440&stall_ms=1000",
        &["--start", "800"],
    );
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    let steps = r["steps"].as_array().unwrap();
    let at_1600: Vec<bool> = steps
        .iter()
        .filter(|s| s["target"].as_f64() == Some(1600.0))
        .map(|s| s["sustained"].as_bool().unwrap())
        .collect();
    assert_eq!(at_1600[..2], [false, true], "{stderr}");
    assert!(
        stderr.contains("trying it again (one miss may be a transient)"),
        "{stderr}"
    );
    let cap = r["capacity_ops_per_sec"].as_f64().expect("a capacity");
    assert!(
        (cap - 2000.0).abs() <= 0.05 * 2000.0,
        "capacity {cap}\n{stderr}"
    );
    // The result was confirmed, and the output says what the +- means.
    let [held, missed] = [0, 1].map(|i| r["capacity_tries"][i].as_u64().unwrap());
    assert!(held >= 3 && missed <= 1, "{held} {missed}");
    assert!(stdout.contains("missed twice; +-"), "{stdout}");
    assert!(
        stdout.contains("the capacity lies between the two targets"),
        "{stdout}"
    );
}

/// A step too short for its SLO's percentile says nothing either way: it
/// is marked so and never counted as held; the search goes up, where steps
/// hold more operations, and stops where that would pass a target that
/// failed; the last line says why nothing was found.
#[test]
fn a_step_with_too_few_operations_is_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    // About 60 ops/s: a step of 1.5 s holds at most some 90 operations,
    // where a p90 needs 100, and above 60 ops/s steps miss.
    let k = 60.0;
    let (out, r) = memory_search(
        dir.path(),
        "memory:?max_ops_per_sec=60",
        &["--start", "20", "-p", "recordcount=50"],
    );
    let (stdout, stderr) = (ok(&out), text(&out.stderr));
    let steps = r["steps"].as_array().unwrap();
    let too_few: Vec<&serde_json::Value> = steps
        .iter()
        .filter(|s| s["too_few_operations"] == true)
        .collect();
    assert!(too_few.len() >= 2, "{stderr}");
    for s in steps {
        assert_eq!(s["sustained"], false, "{s}");
        let c = &s["checks"][0];
        assert_eq!(c["holds"], false, "{c}");
        if s["too_few_operations"] == true {
            assert!(c["operations"].as_u64().unwrap() < 100, "{c}");
        } else {
            // Only a step the throughput fails is judged: a miss.
            assert!(s["target"].as_f64().unwrap() > k, "{s}");
        }
    }
    assert!(
        stderr.contains("too few operations to judge: read.p90<200ms:")
            && stderr.contains("100 needed")
            && stderr.contains("trying a higher target, whose steps hold more"),
        "{stderr}"
    );
    assert_eq!(r["capacity_ops_per_sec"], serde_json::Value::Null);
    let last = stdout.lines().last().unwrap();
    assert!(
        last.starts_with("capacity: no step could be judged")
            && last.contains("too few operations to judge read.p90<200ms")
            && last.contains("lengthen --step"),
        "{stdout}"
    );
    // The curve gives those steps their own verdict, not "missed".
    assert!(
        stdout
            .lines()
            .any(|l| l.ends_with("  too few operations to judge")),
        "{stdout}"
    );
}

#[test]
fn bad_slos_and_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expect) in [
        (vec!["--slo", "read.p99"], "read.p99<10ms"),
        (
            vec!["--slo", "read.p99<10ms", "--precision", "2"],
            "--precision",
        ),
        (vec!["--slo", "read.p99<10ms", "--step=-1"], "--step"),
        (
            vec!["--slo", "read.p99<10ms", "--confirm", "99"],
            "--confirm 99: expected 0 to 20",
        ),
    ] {
        let mut a = vec!["capacity", "null:", "-P", "workloadc"];
        a.extend(args);
        let out = sojourn(dir.path(), &a);
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains(expect), "{}", text(&out.stderr));
    }
}

/// A short search on `memory:` (capacity 2,000 ops/s) with `extra` flags;
/// returns the command's output.
fn short_search(data: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "capacity",
        "memory:?max_ops_per_sec=2000",
        "-P",
        "workloadc",
        "-p",
        "recordcount=200",
        "-p",
        "db.passwd=s3cretPW",
        "--load",
        "--slo",
        "read.p90<200ms",
        "--start",
        "800",
        "--step",
        "0.3",
        "--settle",
        "0.1",
        "--precision",
        "0.4",
        "-threads",
        "4",
        "--seed",
        "1",
    ];
    args.extend_from_slice(extra);
    sojourn(data, &args)
}

/// `sojourn results query` over the store at `results`, as CSV rows.
fn query(results: &std::path::Path, sql: &str) -> Vec<String> {
    let out = bin()
        .args(["results", "--results", results.to_str().unwrap()])
        .args(["query", "--format", "csv", sql])
        .run_to_end();
    ok(&out).lines().skip(1).map(str::to_string).collect()
}

#[test]
fn steps_are_recorded_in_the_store_results_names_with_a_redacted_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.sqlite");
    let out = short_search(dir.path(), &["--results", file.to_str().unwrap()]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    // Every step went to --results, none to the default store.
    assert!(!dir.path().join("results.sqlite").exists());
    let steps = query(
        &file,
        "SELECT COUNT(*) FROM runs r JOIN run_labels l ON l.run_id = r.id \
         WHERE l.key = 'capacity_step'",
    );
    let n: usize = steps[0].parse().unwrap();
    assert!(n >= 2, "{n} steps stored\n{stderr}");
    let verdicts = query(
        &file,
        "SELECT COUNT(*) FROM run_labels WHERE key = 'capacity_sustained'",
    );
    assert_eq!(verdicts[0].parse::<usize>().unwrap(), n);
    // The command line is stored as `run` stores it: the secret property
    // masked by the one redaction rule, nothing of it left anywhere.
    let lines = query(&file, "SELECT DISTINCT command_line FROM runs");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("db.passwd=***"), "{lines:?}");
    let everything = query(
        &file,
        "SELECT command_line || backend FROM runs UNION ALL SELECT value FROM run_properties \
         UNION ALL SELECT value FROM run_labels",
    );
    assert!(
        everything.iter().all(|v| !v.contains("s3cretPW")),
        "{everything:?}"
    );
    let run_file = dir.path().join("run.sqlite");
    ok(&sojourn(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloadc",
            "-p",
            "recordcount=10",
            "-p",
            "operationcount=10",
            "-p",
            "db.passwd=s3cretPW",
            "--results",
            run_file.to_str().unwrap(),
        ],
    ));
    let run_line = query(&run_file, "SELECT DISTINCT command_line FROM runs");
    let masked = |l: &str| {
        l.split(' ')
            .filter(|a| a.contains("db.passwd"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(masked(&lines[0]), masked(&run_line[0]));
}

#[test]
fn no_store_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = short_search(dir.path(), &["--no-store"]);
    let stdout = ok(&out);
    assert!(stdout.contains("capacity:"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("recorded"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !left.iter().any(|f| f.to_string_lossy().contains("results")),
        "{left:?}"
    );
}
