//! `sojourn capacity` against a database of known capacity: the `memory:`
//! backend's test hook serves at most K operations per second, one at a
//! time, so the search must find K within its precision.

mod util;

use util::*;

#[test]
fn finds_a_known_capacity_within_precision() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cap.json");
    let k = 2000.0;
    let out = sojourn(
        dir.path(),
        &[
            "capacity",
            "memory:?max_ops_per_sec=2000",
            "-P",
            "workloadc",
            "--load",
            "--slo",
            "read.p99<200ms",
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
        ],
    );
    let stdout = ok(&out);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
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
    ] {
        let mut a = vec!["capacity", "null:", "-P", "workloadc"];
        a.extend(args);
        let out = sojourn(dir.path(), &a);
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains(expect), "{}", text(&out.stderr));
    }
}
