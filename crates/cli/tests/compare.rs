//! `sojourn compare`: a real 20% drop in throughput (the `memory:`
//! backend capped at 1000 and at 800 operations per second, closed loop)
//! is flagged as worse, the other way round as better, with colour only
//! when asked for; two runs drawn from one distribution are not flagged.
//! And `sojourn history` over such runs (the `history` module below).

mod util;

use sojourn_core::backend::memory::MemoryBackend;
use sojourn_core::workload::Phase;
use sojourn_store::{RunId, Store};
use sojourn_testkit::runs::{
    memory_run, meta_for, store_outcome, workload_properties, CappedRun, Synthetic,
};
use util::*;

/// The tests' runs measure throughput: one run (or one history's series)
/// at a time, so that they do not take each other's CPU.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A closed-loop run of workload C against a `memory:` backend that
/// serves at most `cap` operations per second, stored.
fn capped_run(store: &Store, cap: u32, seed: u64) -> RunId {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let backend = MemoryBackend::from_query(&format!("max_ops_per_sec={cap}")).unwrap();
    let seed = seed.to_string();
    let common = [
        ("recordcount", "200"),
        ("threadcount", "8"),
        ("seed", seed.as_str()),
    ];
    let load = workload_properties(&repo_root(), "workloadc", &common);
    memory_run(&backend, &load, Phase::Load);
    let mut run_props = common.to_vec();
    run_props.extend([
        ("operationcount", "100000000"),
        ("maxexecutiontime", "3"),
        ("timeseries.interval", "0.2"),
    ]);
    let props = workload_properties(&repo_root(), "workloadc", &run_props);
    let (o, series) = memory_run(&backend, &props, Phase::Run);
    let describe = format!("memory:?max_ops_per_sec={cap}");
    store_outcome(
        store,
        &meta_for(&o, &describe, &run_props, &[]),
        &o,
        &series,
    )
}

fn compare_json(results: &str, a: &RunId, b: &RunId) -> serde_json::Value {
    let out = bin()
        .args(["compare", "--results", results, "--format", "json"])
        .args([a.as_str(), b.as_str()])
        .run_to_end();
    serde_json::from_str(&ok(&out)).expect("JSON")
}

fn figure<'a>(c: &'a serde_json::Value, op: &str, metric: &str) -> &'a serde_json::Value {
    c["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operation"] == op)
        .and_then(|o| {
            o["figures"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["metric"] == metric)
        })
        .unwrap_or_else(|| panic!("no {op} {metric} in {c:#}"))
}

/// One run per side: the drop shows, beyond each run's own sampling error,
/// but no verdict on the configurations is claimed (run-to-run noise is
/// not in either run); groups of repetitions are tested in groups.rs.
#[test]
fn a_real_drop_between_single_runs_is_shown_and_not_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let store = Store::open(path.to_str().unwrap()).unwrap();
    let fast = capped_run(&store, 1000, 1);
    let slow = capped_run(&store, 800, 2);
    let results = path.to_str().unwrap();

    let c = compare_json(results, &fast, &slow);
    let t = figure(&c, "all", "throughput");
    assert_eq!(t["beyond_sampling_error"], true, "{t:#}");
    assert_eq!(t["significant"], false);
    assert_eq!(t["verdict"], "unchanged");
    assert_eq!(t["better"], "higher");
    let change = t["change_pct"].as_f64().unwrap();
    assert!((-24.0..-16.0).contains(&change), "change {change}%");
    assert_eq!(t["test"]["method"], "welch");
    assert!(t["test"]["p"].as_f64().unwrap() < 0.01);
    assert!(t["test"]["batches"][0].as_u64().unwrap() >= 5);
    // Eight connections in a closed loop queue for the slower server: each
    // read waits longer.
    let m = figure(&c, "read", "response mean");
    assert_eq!(m["beyond_sampling_error"], true, "{m:#}");
    assert!(m["change_pct"].as_f64().unwrap() > 15.0);
    assert!(c["caveats"].as_array().unwrap().iter().any(|c| c
        .as_str()
        .unwrap()
        .contains("one run per side cannot separate")));

    // Text: `~` marks it, never "better" or "worse"; colour only on request.
    let out = bin()
        .args(["compare", "--results", results, "--color", "always"])
        .args([fast.as_str(), slow.as_str()])
        .run_to_end();
    let coloured = ok(&out);
    assert!(
        coloured.contains("m~\x1b[0m")
            && !coloured.contains("* worse")
            && !coloured.contains("* better"),
        "{coloured}"
    );
    assert!(coloured.contains("\x1b[1;33m"), "marked in yellow");
    for args in [vec!["--color", "never"], vec![]] {
        let out = bin()
            .args(["compare", "--results", results])
            .args(&args)
            .args([fast.as_str(), slow.as_str()])
            .env("NO_COLOR", "1")
            .run_to_end();
        let plain = ok(&out);
        assert!(plain.contains("caveat: one run per side"));
        assert!(!plain.contains('\x1b'), "no colour: {args:?}");
    }
}

#[test]
fn runs_from_one_distribution_are_not_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let store = Store::open(path.to_str().unwrap()).unwrap();
    let mut ids = Vec::new();
    for seed in [21, 22] {
        let drifting = Synthetic {
            update_fraction: 0.5,
            intervals: 20,
            drift_sd: 0.2,
            phi: 0.5,
            ..Synthetic::new(seed)
        };
        let o = drifting.outcome();
        ids.push(store_outcome(
            &store,
            &meta_for(&o, "memory:", &[], &[]),
            &o,
            &drifting.series(),
        ));
    }
    let results = path.to_str().unwrap();
    let c = compare_json(results, &ids[0], &ids[1]);
    let mut tested = 0;
    for op in c["operations"].as_array().unwrap() {
        for f in op["figures"].as_array().unwrap() {
            assert_eq!(
                f["beyond_sampling_error"], false,
                "{} {f:#}",
                op["operation"]
            );
            assert_eq!(f["verdict"], "unchanged");
            tested += (f["test"]["method"] != "none") as usize;
        }
    }
    // all: throughput; read and update: throughput, two means, four
    // percentiles of each latency (p99.9 of 5,000 operations is not
    // tested).
    let expected = 1 + 2 * (1 + 2 + 6);
    assert!(tested >= expected, "{tested} figures tested");
    let out = bin()
        .args([
            "compare",
            "--results",
            results,
            ids[0].as_str(),
            ids[1].as_str(),
        ])
        .run_to_end();
    let t = ok(&out);
    assert!(
        !t.contains(" ~ ") && !t.contains("* better") && !t.contains("* worse"),
        "{t}"
    );
    assert!(t.contains("Welch") && t.contains("95% CIs overlap"), "{t}");
}

mod history {
    //! `sojourn history` on stored runs: forty closed-loop runs of a `memory:`
    //! backend capped at 1,000 operations per second, labelled
    //! `commit=c01..c40`, the cap dropping 10% at c21, show one change point
    //! at c21, worse, about −10%, and `--check` fails on them; forty runs of
    //! one cap show none and pass; repetitions of a commit are one point.

    use super::*;

    /// A short closed-loop run against `memory:` capped at `cap`
    /// operations per second, stored with `labels`.
    fn labelled_run(store: &Store, cap: u32, seed: u64, labels: &[(&str, &str)]) {
        let run = CappedRun::new(&repo_root(), cap, seed, "0.2", "0.05");
        run.store(store, &run.meta(labels));
    }

    /// `commits` commits of `repeat` runs each in a fresh store, the cap
    /// given by `cap(commit)` (from 1); the store's path.
    fn series(
        dir: &std::path::Path,
        commits: u32,
        repeat: u32,
        cap: impl Fn(u32) -> u32,
    ) -> String {
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let path = dir.join("results.sqlite");
        let store = Store::open(path.to_str().unwrap()).unwrap();
        for c in 1..=commits {
            let commit = format!("c{c:02}");
            for r in 0..repeat {
                labelled_run(
                    &store,
                    cap(c),
                    u64::from(c * 10 + r),
                    &[("commit", &commit), ("suite", "nightly")],
                );
            }
        }
        path.to_str().unwrap().to_string()
    }

    fn history(results: &str, extra: &[&str]) -> std::process::Output {
        bin()
            .args([
                "history",
                "--results",
                results,
                "--label",
                "suite=nightly",
                "--by",
                "commit",
            ])
            .args(extra)
            .run_to_end()
    }

    /// The throughput's history as JSON, with `extra` arguments.
    fn json(results: &str, extra: &[&str]) -> serde_json::Value {
        let mut args = vec!["--figure", "throughput", "--format", "json"];
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&history(results, &args))).expect("JSON")
    }

    /// `out`'s stderr says `words`.
    fn says(out: &std::process::Output, words: &str) {
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(words),
            "{words:?} in {}",
            text_of(out)
        );
    }

    /// `out` ended with status `code`, its stderr saying `words`.
    fn ended(out: &std::process::Output, code: i32, words: &str) {
        assert_eq!(out.status.code(), Some(code), "{}", text_of(out));
        says(out, words);
    }

    #[test]
    fn a_drop_at_one_commit_is_one_change_point_there_and_fails_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let results = series(dir.path(), 40, 1, |c| if c < 21 { 1000 } else { 900 });
        let h = json(&results, &[]);
        let s = &h["series"][0];
        assert_eq!(s["figure"], "throughput");
        assert_eq!(s["points"].as_array().unwrap().len(), 40);
        let changes = s["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{changes:#?}");
        let c = &changes[0];
        assert_eq!(c["key"], "c21", "{c:#}");
        assert_eq!(c["verdict"], "worse", "{c:#}");
        let pct = c["change_pct"].as_f64().unwrap();
        assert!((-12.0..=-8.0).contains(&pct), "about -10%: {c:#}");
        let ci = c["change_ci95_pct"]
            .as_array()
            .unwrap_or_else(|| panic!("{c:#}"));
        assert!(
            ci[0].as_f64().unwrap() <= pct && pct <= ci[1].as_f64().unwrap(),
            "{c:#}"
        );

        let text = ok(&history(&results, &["--figure", "throughput"]));
        assert!(text.contains("change at c21 (1 run(s))"), "{text}");
        assert!(text.contains("worse"), "{text}");
        let md = ok(&history(
            &results,
            &["--figure", "throughput", "--format", "md"],
        ));
        let csv = ok(&history(
            &results,
            &["--figure", "throughput", "--format", "csv"],
        ));
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 41, "a head and a row per point: {csv}");
        assert!(
            rows[0].starts_with("figure,unit,point,key,runs,mean"),
            "{csv}"
        );
        let c21 = rows
            .iter()
            .find(|r| r.contains(",21,c21,"))
            .expect("c21's row");
        assert!(c21.contains(",yes,") && c21.ends_with(",worse"), "{c21}");
        assert!(
            md.contains("| throughput | c21 |") && md.contains("**worse**"),
            "{md}"
        );

        let check = history(&results, &["--figure", "throughput", "--check"]);
        ended(&check, 1, "check failed: throughput: ");
    }

    #[test]
    fn one_configuration_throughout_shows_no_change_and_passes() {
        let dir = tempfile::tempdir().unwrap();
        let results = series(dir.path(), 40, 1, |_| 1000);
        let h = json(&results, &[]);
        assert_eq!(
            h["series"][0]["changes"].as_array().unwrap().len(),
            0,
            "{h:#}"
        );
        ended(
            &history(&results, &["--figure", "throughput", "--check"]),
            0,
            "check passed",
        );
        // Every figure: a 0.2-second run's p99 rests on two reads, and on a
        // shared machine the newest run alone can be an outlier; the check
        // then says so and asks for repetitions (exit 2), but never fails.
        let all = history(&results, &["--check"]);
        match all.status.code() {
            Some(0) => says(&all, "check passed"),
            Some(2) => says(&all, "but only at the newest point"),
            _ => panic!("passed or undecided: {}", text_of(&all)),
        }
        let bad = history(&results, &["--figure", "read.p1000"]);
        assert!(!bad.status.success());
        says(&bad, "figure 'read.p1000'");
    }

    #[test]
    fn repetitions_of_a_commit_are_one_point() {
        let dir = tempfile::tempdir().unwrap();
        let results = series(dir.path(), 16, 3, |c| if c < 9 { 1000 } else { 900 });
        let h = json(&results, &[]);
        let s = &h["series"][0];
        let points = s["points"].as_array().unwrap();
        assert_eq!(points.len(), 16);
        assert!(
            points
                .iter()
                .all(|p| p["runs"].as_array().unwrap().len() == 3),
            "{s:#}"
        );
        let changes = s["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(changes[0]["key"], "c09");
        let last = json(&results, &["--last", "4"]);
        assert_eq!(
            last["series"][0]["points"][0]["key"], "c13",
            "--last 4: {last:#}"
        );
    }

    fn text_of(o: &std::process::Output) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }
}
