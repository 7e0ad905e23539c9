//! Rate profiles and trace replay end to end, against a database of known
//! capacity: the `memory:` backend's test hook serves at most K operations
//! per second, so a profile that ramps through K must show response time
//! rising where the arithmetic says, segment by segment, in the summary,
//! the JSON report, the store and the PKB export.

mod util;

use util::*;

/// `memory:` serving 2,000 operations per second.
const K: f64 = 2000.0;

/// `bench` of workload C (100 records) on `memory:` serving `K`, 16
/// connections, following the rate profile `profile` to its end, with
/// `extra` arguments: its output and its JSON report.
fn bench_profile(
    dir: &std::path::Path,
    profile: &str,
    seed: &str,
    extra: &[&str],
) -> (std::process::Output, serde_json::Value) {
    let json = dir.join("run.json");
    let db = format!("memory:?max_ops_per_sec={K}");
    let mut args = vec![
        "bench",
        &db,
        "-P",
        "workloads/workloadc",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=0",
        "--rate",
        profile,
        "-threads",
        "16",
        "--seed",
        seed,
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
fn a_ramp_through_capacity_shows_the_backlog_in_its_own_segments() {
    let dir = tempfile::tempdir().unwrap();
    // Below K, then through it (the second ramp offers 1,000 more than K
    // serves by its end: a backlog of 1/2 x 2 s x 1,000 = 1,000 operations,
    // half a second of K), then below again while it drains.
    let profile = "ramp 1000..2000 in 2s, ramp 2000..3000 in 2s, hold 1000 for 2s";
    let (out, report) = bench_profile(dir.path(), profile, "5", &[]);
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    // The load wrote every record at full speed; the run followed the
    // profile to its end.
    assert!(stderr.contains("loaded 100 records"), "{stderr}");
    assert!(!stderr.contains("ends the phase"), "{stderr}");
    let segment_lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("# segment "))
        .collect();
    assert_eq!(segment_lines.len(), 3, "{stdout}");
    assert!(
        segment_lines[1]
            .starts_with("# segment 2 of 3, 2.0-4.0 s, ramp 2000..3000 in 2s: target 2500 ops/s"),
        "{stdout}"
    );
    // PKB's parser still reads the summary: no segment line looks like one
    // of YCSB's.
    assert!(!stdout
        .lines()
        .any(|l| l.starts_with("[") && l.contains("segment")));

    let segs = report["segments"]
        .as_array()
        .expect("segments in the JSON report");
    assert_eq!(segs.len(), 3);
    let p99 = |s: &serde_json::Value| s["ops"]["read"]["response"]["p99_us"].as_f64().unwrap();
    let max = |s: &serde_json::Value| s["ops"]["read"]["response"]["max_us"].as_f64().unwrap();
    // Through capacity the backlog peaks near 1/2 x 2 s x (3,000 - K)
    // operations, which take 0.5 s of K to serve: the last arrival of
    // the ramp waits that long, give or take the Poisson arrivals' spread
    // and the machine's own delays.
    let backlog_us = 0.5 * 2.0 * (3000.0 - K) / K * 1e6;
    // Below it, no queue to speak of: well under that (a queue that the
    // profile's first segment built or kept would be of its size).
    assert!(p99(&segs[0]) < backlog_us / 5.0, "{}", segs[0]);
    assert!(
        max(&segs[1]) > 0.5 * backlog_us && max(&segs[1]) < 2.4 * backlog_us,
        "ramp through capacity: {} against {backlog_us} µs",
        segs[1]
    );
    // Everything offered was served in the end; the run follows the whole
    // profile (2 x 1,500 + 2 x 2,500 + 2,000 = 10,000 operations offered).
    let ops: u64 = segs.iter().map(|s| s["operations"].as_u64().unwrap()).sum();
    assert!((ops as f64 - 10_000.0).abs() < 5.0 * 100.0, "{ops}");
    assert_eq!(report["operations"].as_u64().unwrap(), ops);
    let target = report["target_ops_per_sec"].as_f64().unwrap();
    assert!(
        (target - 10_000.0 / 6.0).abs() < 1.0,
        "the mean offered rate: {target}"
    );
    for (s, want) in segs.iter().zip([1500.0, 2500.0, 1000.0]) {
        assert_eq!(s["target_ops_per_sec"].as_f64().unwrap(), want);
    }
    // The first segment ran at its offered rate (K was never reached).
    let achieved = segs[0]["achieved_ops_per_sec"].as_f64().unwrap();
    assert!((achieved - 1500.0).abs() < 150.0, "{achieved}");

    // The store keeps the segments: `results show` prints them again and
    // the PKB export labels each segment's samples.
    let shown = ok(&bin()
        .args(["results", "show", "last", "--data-dir"])
        .arg(dir.path())
        .run_to_end());
    let shown_lines: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("# segment "))
        .collect();
    assert_eq!(shown_lines, segment_lines, "{shown}");
    let pkb = ok(&bin()
        .args(["results", "export", "last", "--format", "pkb", "--data-dir"])
        .arg(dir.path())
        .run_to_end());
    let with_segment: Vec<serde_json::Value> = pkb
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|s| s["labels"].as_str().unwrap().contains("|segment:2|"))
        .collect();
    let throughput = with_segment
        .iter()
        .find(|s| s["metric"] == "overall Throughput")
        .expect("segment 2's throughput sample");
    assert!(throughput["labels"]
        .as_str()
        .unwrap()
        .contains("|segment_label:ramp 2000..3000 in 2s|"));
    assert!(with_segment
        .iter()
        .any(|s| s["metric"] == "intended-read p99 latency"));

    // The HTML report draws the profile's target as it went, the load the
    // schedule released in each interval (drawn only where the store kept
    // it) beside what was achieved, and a table of the segments.
    let html = ok(&bin()
        .args(["report", "last", "--data-dir"])
        .arg(dir.path())
        .run_to_end());
    for want in [
        "target (rate profile)",
        "offered (released by the schedule)",
        "Segments of the rate profile",
        "ramp 2000..3000 in 2s",
    ] {
        assert!(html.contains(want), "{want:?} missing from the report");
    }
    // `compare` sets segment beside segment (the run against itself here:
    // every segment is there, none changed).
    let compared = ok(&bin()
        .args(["compare", "last", "last", "--format", "json", "--data-dir"])
        .arg(dir.path())
        .run_to_end());
    let c: serde_json::Value = serde_json::from_str(&compared).unwrap();
    let ops: Vec<&str> = c["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["operation"].as_str().unwrap())
        .collect();
    assert!(
        ops.contains(&"segment 2 (ramp 2000..3000 in 2s) read"),
        "{ops:?}"
    );
    assert!(c["operations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["figures"].as_array().unwrap())
        .all(|f| f["verdict"] == "unchanged"));
}

#[test]
fn a_trace_is_replayed_and_bad_profiles_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // 300 arrivals over 1.5 s, replayed at twice the speed.
    let trace = dir.path().join("arrivals.txt");
    let lines: String = (0..300)
        .map(|i| format!("{:.4}\n", i as f64 * 0.005))
        .collect();
    std::fs::write(&trace, lines).unwrap();
    let json = dir.path().join("t.json");
    let out = sojourn(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloads/workloadc",
            "-p",
            "recordcount=10",
            "-p",
            "operationcount=0",
            "--trace",
            trace.to_str().unwrap(),
            "-p",
            "trace.speed=2",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    ok(&out);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["operations"].as_u64(), Some(300));
    let runtime = report["runtime_ms"].as_f64().unwrap();
    // The last arrival is due at 1.495 s / 2: the run lasts at least
    // that, and ends well before 1.495 s, where it would end if the speed
    // were ignored (what is left between is the machine's own delays).
    assert!((747.0..1400.0).contains(&runtime), "{runtime}");

    let bad = |args: &[&str]| {
        let mut a = vec!["run", "memory:", "-P", "workloads/workloadc"];
        a.extend_from_slice(args);
        refused(dir.path(), &a)
    };
    let e = bad(&["--rate", "hold 100 for 10s, hold -5 for 3s"]);
    assert!(
        e.contains("--rate") && e.contains("segment 2 ('hold -5 for 3s'): rate -5 is negative"),
        "{e}"
    );
    let e = bad(&["--rate", "hold 1k for 5s", "-target", "100"]);
    assert!(e.contains("leave one out"), "{e}");
    std::fs::write(dir.path().join("bad.txt"), "0\n1\n0.5\n").unwrap();
    let e = bad(&["--trace", dir.path().join("bad.txt").to_str().unwrap()]);
    assert!(
        e.contains("bad.txt:3: 0.5 comes before the line above it"),
        "{e}"
    );
    let e = refused(
        dir.path(),
        &[
            "run",
            "memory:",
            "-P",
            "workloads/keyvalue",
            "--rate",
            "hold 1k for 5s",
        ],
    );
    assert!(e.contains("write_rate and read_rate"), "{e}");
    // A load does not follow a profile: said, not ignored.
    let e = refused(
        dir.path(),
        &[
            "load",
            "memory:",
            "-P",
            "workloads/workloadc",
            "--rate",
            "hold 1k for 5s",
        ],
    );
    assert!(e.contains("shapes a run phase"), "{e}");
    // A workload file's operation count cuts a profile short: warned,
    // naming the file.
    let out = sojourn(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloads/workloadc",
            "-p",
            "recordcount=10",
            "--rate",
            "hold 500 for 10s",
        ],
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("operationcount = '1000' (workloads/workloadc:")
            && stderr.contains("ends the phase after 1000 operations, before the rate's 5000"),
        "{stderr}"
    );
}

/// Noria's method in one command: a staircase judged step by step stops at
/// the first step whose response time leaves its SLO, and names the knee.
#[test]
fn a_staircase_stops_at_the_first_step_that_misses_its_slo() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = bench_profile(
        dir.path(),
        "stairs 600..4200 by 600 every 1s",
        "3",
        &["-p", "rate.slo=read.p90<100ms"],
    );
    let stdout = ok(&out);
    assert_eq!(report["stop_reason"], "slo_missed", "{stdout}");
    let knee = report["knee_ops_per_sec"].as_f64().expect("a knee");
    // K serves 2,000 ops/s; the steps stand a tenth either side of it
    // (at exactly K a step may hold or miss): 1,800 holds, with a p90 of
    // milliseconds, and 2,400 builds a backlog of 400 operations in its
    // second, which K serves in 0.2 s: the wait grows to 200 ms, its
    // second half waits over the SLO's 100 ms and its p90 near 180 ms. A
    // busy machine only adds waiting.
    assert_eq!(knee, 1800.0, "knee {knee}\n{stdout}");
    let segs = report["segments"].as_array().unwrap();
    let missed: Vec<f64> = segs
        .iter()
        .filter(|s| s["held"] == false)
        .map(|s| s["target_ops_per_sec"].as_f64().unwrap())
        .collect();
    assert_eq!(
        missed.len(),
        1,
        "one step missed, and the run stopped: {stdout}"
    );
    assert_eq!(missed[0], 2400.0, "{missed:?} after a knee of {knee}");
    // Steps past the missed one never ran to their end: none is judged,
    // and the last steps (3,600 and 4,200 ops/s) were never offered.
    assert!(segs
        .iter()
        .skip_while(|s| s["held"] != false)
        .skip(1)
        .all(|s| s.get("held").is_none()));
    assert_eq!(segs.last().unwrap()["operations"].as_u64(), Some(0));
    assert!(
        stdout.contains(&format!("# knee: {knee:.0} ops/s (stairs step "))
            && stdout.contains("the highest rate that held read.p90<100ms"),
        "{stdout}"
    );
    assert!(stdout.contains("; missed: read.p90<100ms"), "{stdout}");
}

/// A step is judged on the share served of what it offered: the arrivals
/// its Poisson schedule released, not its target times its length. Seed
/// 20 draws 557 arrivals in the first second at 600 a second (5% below
/// 600 happens about one time in nine); each is served, so the step holds.
#[test]
fn a_step_s_served_share_is_of_the_arrivals_it_released() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = bench_profile(
        dir.path(),
        "hold 600 for 1s, hold 600 for 0.2s",
        "20",
        &["-p", "rate.slo=read.p90<100ms"],
    );
    let stdout = ok(&out);
    let first = &report["segments"][0];
    let ops = first["operations"].as_u64().unwrap();
    assert!(ops < 570, "seed 20 offers fewer than 95% of 600: {first:#}");
    assert_eq!(first["held"], true, "{stdout}");
    assert_ne!(report["stop_reason"], "slo_missed", "{stdout}");
}

/// A profile followed to its end is what ended the run, in the JSON report
/// and in the store; a count or a time limit that ends it first is named
/// instead.
#[test]
fn a_profile_run_to_its_end_stops_by_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let bench = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "bench",
            "memory:",
            "-P",
            "workloads/workloadc",
            "-p",
            "recordcount=10",
            "-p",
            "rate=hold 400 for 500ms, hold 200 for 500ms",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let stdout = ok(&sojourn(dir.path(), &args));
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    let r = bench(&["-p", "operationcount=0"]);
    assert_eq!(r["stop_reason"], "profile_end", "{r}");
    assert_eq!(r["interrupted"], false, "{r}");
    let stored = ok(&bin()
        .args([
            "results",
            "export",
            "last",
            "--format",
            "report",
            "--data-dir",
        ])
        .arg(dir.path())
        .run_to_end());
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["stop_reason"], "profile_end", "{stored}");
    // A time limit past the profile's end still leaves the profile to end it.
    let r = bench(&["-p", "operationcount=0", "-p", "maxexecutiontime=30"]);
    assert_eq!(r["stop_reason"], "profile_end", "{r}");
    // Ended before the profile: by the count, by the time limit.
    let r = bench(&["-p", "operationcount=50"]);
    assert_eq!(r["stop_reason"], "operation_count", "{r}");
    assert_eq!(r["operations"].as_u64(), Some(50), "{r}");
    let r = bench(&["-p", "operationcount=0", "-p", "maxexecutiontime=0.3"]);
    assert_eq!(r["stop_reason"], "max_execution_time", "{r}");
}
