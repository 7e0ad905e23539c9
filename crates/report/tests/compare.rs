//! The comparison's statistics on runs of known distributions: runs from
//! one distribution are not flagged (more often than the significance
//! level allows, even when their latency drifts from interval to
//! interval), a 20% drop in throughput is, and so is slower service. One
//! test reads its runs back from a results store; the others build them
//! in memory, as there are many.

use sojourn_report::compare::{compare, CompareOptions, Comparison, Test, Verdict};
use sojourn_store::{RunRecord, Store};
use sojourn_testkit::runs::{meta_for, store_outcome, Synthetic};

fn stored(store: &Store, s: &Synthetic) -> RunRecord {
    let o = s.outcome();
    let id = store_outcome(store, &meta_for(&o, "memory:", &[], &[]), &o, &s.series());
    store.load(id.as_str()).unwrap()
}

fn flagged(c: &Comparison) -> Vec<String> {
    c.operations
        .iter()
        .flat_map(|op| {
            op.figures
                .iter()
                .filter(|f| f.beyond_sampling_error)
                .map(move |f| format!("{} {}", op.operation, f.metric))
        })
        .collect()
}

/// The least count that `n` independent trials, each a hit with
/// probability `p`, exceed with probability below `tail`: a count of
/// false alarms above it says the rate is not `p`, and a right rate fails
/// the check by chance less often than `tail`.
fn binomial_bound(n: usize, p: f64, tail: f64) -> usize {
    let mut pmf = (1.0 - p).powi(n as i32);
    let (mut cdf, mut k) = (pmf, 0);
    while 1.0 - cdf >= tail && k < n {
        pmf *= (n - k) as f64 / (k + 1) as f64 * p / (1.0 - p);
        k += 1;
        cdf += pmf;
    }
    k
}

#[test]
fn the_binomial_bound_is_the_tail_s() {
    // Binomial(210, 0.01): P(X > 5) = 0.020, P(X > 6) = 0.0056,
    // P(X > 7) = 0.0014, P(X > 8) = 0.0003.
    assert_eq!(binomial_bound(210, 0.01, 0.001), 8);
    assert_eq!(binomial_bound(210, 0.01, 0.01), 6);
    // A certain hit in every trial: all of them.
    assert_eq!(binomial_bound(5, 1.0 - 1e-12, 0.001), 5);
}

/// The level each figure is tested at: Welch's t-test at alpha, or two
/// 95% intervals that must not overlap (for equal standard errors a
/// false alarm in 0.6% of pairs, so at most the same).
const ALPHA: f64 = 0.01;

/// Runs whose interval latencies drift (AR(1) on the log scale, lag-1
/// correlation 0.6): tests that assumed independent operations would
/// flag most pairs. Out of 30 pairs of runs from one distribution, the
/// means' Welch tests flag no more than tests at alpha 0.01 do (within
/// the binomial bound a right rate exceeds one time in a thousand).
#[test]
fn runs_from_one_distribution_are_rarely_flagged() {
    let pairs = 30;
    let mut pairs_flagged = 0;
    let (mut welch_flags, mut welch_tests) = (0, 0);
    let (mut interval_flags, mut interval_groups) = (0, 0);
    for i in 0..pairs {
        let base = Synthetic {
            drift_sd: 0.3,
            phi: 0.6,
            update_fraction: 0.3,
            intervals: 20,
            ..Synthetic::new(1000 + i)
        };
        let a = base.stored_run();
        let b = Synthetic {
            seed: 5000 + i,
            ..base.clone()
        }
        .stored_run();
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        assert_eq!(c.alpha, ALPHA);
        for op in &c.operations {
            // A percentile's figures of one operation and latency move
            // together (a drifting run shifts them all): one group.
            let mut groups = std::collections::BTreeMap::<&str, bool>::new();
            for f in &op.figures {
                match f.test {
                    Test::Welch { .. } => {
                        welch_tests += 1;
                        welch_flags += f.beyond_sampling_error as usize;
                    }
                    Test::Intervals { .. } => {
                        let latency = f.metric.split(' ').next().unwrap_or_default();
                        *groups.entry(latency).or_default() |= f.beyond_sampling_error;
                    }
                    Test::None { .. } => {}
                }
            }
            interval_groups += groups.len();
            interval_flags += groups.values().filter(|&&f| f).count();
        }
        if !flagged(&c).is_empty() {
            pairs_flagged += 1;
        }
    }
    // Each kind of test: a false alarm at rate alpha at most.
    let welch_bound = binomial_bound(welch_tests, ALPHA, 0.001);
    assert!(
        welch_flags <= welch_bound,
        "{welch_flags} of {welch_tests} Welch tests flagged (bound {welch_bound})"
    );
    // Each operation's percentiles of one latency move together (a
    // drifting run shifts them all), so they are counted as a group, and
    // a pair of runs is flagged when any figure is. The percentiles'
    // intervals are the weak part: with 20 intervals a run's drift is
    // barely measurable, and their false alarms run above alpha (13 of
    // 120 groups here, where four tests at 1% would flag about 5); a
    // third of the pairs flagged would mean they ignore the drift.
    assert!(
        pairs_flagged <= pairs / 5,
        "{pairs_flagged} of {pairs} pairs from one distribution flagged; \
         {interval_flags} of {interval_groups} percentile groups"
    );
    eprintln!(
        "flagged: {welch_flags} of {welch_tests} Welch tests (bound {welch_bound}), \
         {interval_flags} of {interval_groups} percentile groups, \
         {pairs_flagged} of {pairs} pairs"
    );
}

#[test]
fn a_twenty_percent_throughput_drop_is_flagged() {
    for i in 0..5 {
        let a = Synthetic::new(100 + i).stored_run();
        let b = Synthetic {
            rate: 400.0,
            target: Some(400.0),
            ..Synthetic::new(200 + i)
        }
        .stored_run();
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        let all = &c.operations[0];
        assert_eq!(all.operation, "all");
        let t = &all.figures[0];
        assert_eq!(t.metric, "throughput");
        // Beyond each run's own sampling error, but one run per side
        // claims nothing of the configurations.
        assert!(t.beyond_sampling_error, "pair {i}: {t:?}");
        assert!(!t.significant);
        assert_eq!(t.verdict, Verdict::Unchanged);
        assert!(c.caveats.iter().any(|c| c.contains("one run per side")));
        let change = t.change_pct.unwrap();
        assert!((-25.0..-15.0).contains(&change), "change {change}");
        // The same drop the other way round is an improvement.
        let back = compare(&b, &a, &CompareOptions::default()).unwrap();
        let t = &back.operations[0].figures[0];
        assert!(t.beyond_sampling_error && t.change_pct.unwrap() > 15.0);
        // Latency did not change: nothing else may be flagged often; here
        // only the two throughput rows are.
        let others: Vec<String> = flagged(&c)
            .into_iter()
            .filter(|f| !f.ends_with("throughput"))
            .collect();
        assert!(others.len() <= 1, "pair {i}: {others:?}");
    }
}

/// Slower service is worse, at the mean and at the percentiles, in runs
/// read back from a results store.
#[test]
fn a_slower_database_is_flagged_worse_in_latency() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.sqlite").to_str().unwrap()).unwrap();
    let a = stored(
        &store,
        &Synthetic {
            intervals: 15,
            ..Synthetic::new(7)
        },
    );
    let b = stored(
        &store,
        &Synthetic {
            mean_ns: 1.3e6,
            intervals: 15,
            ..Synthetic::new(8)
        },
    );
    let c = compare(&a, &b, &CompareOptions::default()).unwrap();
    let read = c.operations.iter().find(|o| o.operation == "read").unwrap();
    for metric in ["service mean", "service p50", "service p90", "service p99"] {
        let f = read.figures.iter().find(|f| f.metric == metric).unwrap();
        assert!(f.beyond_sampling_error, "{metric}: {f:?}");
        assert!(f.change_pct.unwrap() > 0.0, "{metric}");
    }
    // 7,500 reads: too few to test p99.9, and it says so.
    let p999 = read
        .figures
        .iter()
        .find(|f| f.metric == "service p99.9")
        .unwrap();
    assert!(matches!(&p999.test, Test::None { reason } if reason.contains("10000")));
    assert!(!p999.beyond_sampling_error);
}
