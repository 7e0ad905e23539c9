//! `sojourn compare`: a real 20% drop in throughput (the `memory:`
//! backend capped at 1000 and at 800 operations per second, closed loop)
//! is flagged as worse, the other way round as better, with colour only
//! when asked for; two runs drawn from one distribution are not flagged.

mod util;

use sojourn_core::backend::memory::MemoryBackend;
use sojourn_core::workload::Phase;
use sojourn_store::{RunId, Store};
use sojourn_testkit::runs::{memory_run, meta_for, store_outcome, workload_properties, Synthetic};
use util::*;

/// A closed-loop run of workload C against a `memory:` backend that
/// serves at most `cap` operations per second, stored.
fn capped_run(store: &Store, cap: u32, seed: u64) -> RunId {
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
