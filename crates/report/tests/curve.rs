//! Runs at several targets make a latency-throughput curve with its knee;
//! the HTML page draws it, and a single run makes none.

use sojourn_report::curve::curves;
use sojourn_report::html::{render, HtmlOptions};
use sojourn_report::tables::CostOptions;
use sojourn_report::Latency;
use sojourn_testkit::runs::Synthetic;

/// A database that serves at most 700 operations per second: below that
/// it keeps up, above it falls behind.
fn at_target(target: f64, seed: u64) -> sojourn_store::RunRecord {
    Synthetic {
        rate: target.min(700.0),
        target: Some(target),
        intervals: 5,
        ..Synthetic::new(seed)
    }
    .stored_run()
}

#[test]
fn runs_at_several_targets_make_a_curve_with_a_knee() {
    let runs: Vec<_> = [800.0, 200.0, 1600.0, 400.0]
        .into_iter()
        .enumerate()
        .map(|(i, t)| at_target(t, i as u64))
        .collect();
    let cs = curves(&runs);
    assert_eq!(cs.len(), 1);
    let c = &cs[0];
    let targets: Vec<f64> = c.points.iter().map(|p| p.target).collect();
    assert_eq!(targets, vec![200.0, 400.0, 800.0, 1600.0]);
    let knee = c.knee.expect("a knee");
    assert_eq!(
        c.points[knee].target, 400.0,
        "the last target it kept up with"
    );
    assert!(c.points[2].achieved < 0.95 * 800.0 && !c.points[2].sustained);

    let html = render(
        &runs,
        &HtmlOptions {
            title: "curve".into(),
            source: "test".into(),
            generated_at: "now".into(),
            latency: Latency::Service,
            cost: CostOptions::default(),
            history: None,
        },
    );
    assert_eq!(html.matches("data-kind=\"latency-throughput\"").count(), 1);
    assert!(html.contains("knee "));
    // Four open-loop runs: per run a throughput plot, percentiles over
    // time, waiting in the client and a spectrum of reads; every run's
    // spectra side by side; the curve.
    assert_eq!(html.matches("<svg class=\"plot\"").count(), 4 * 4 + 2 + 1);

    // One run, or runs in a closed loop, make no curve.
    assert!(curves(&runs[..1]).is_empty());
    let closed: Vec<_> = (0..2)
        .map(|i| {
            Synthetic {
                target: None,
                intervals: 3,
                ..Synthetic::new(i)
            }
            .stored_run()
        })
        .collect();
    assert!(curves(&closed).is_empty());
}

#[test]
fn a_run_with_server_counters_shows_them_per_operation() {
    let mut run = at_target(500.0, 9);
    let opts = HtmlOptions {
        title: "server".into(),
        source: "test".into(),
        generated_at: "now".into(),
        latency: Latency::Service,
        cost: CostOptions::default(),
        history: None,
    };
    assert!(!render(std::slice::from_ref(&run), &opts).contains("Server counters"));
    let mut s = sojourn_core::backend::ServerStats {
        operations: 1000,
        ..Default::default()
    };
    s.deltas.insert("blks_hit".into(), 2500.0);
    s.deltas.insert("server_cpu_s".into(), 0.012);
    run.server = Some(s);
    let html = render(std::slice::from_ref(&run), &opts);
    assert!(
        html.contains("Server counters (1,000 operations)"),
        "{html}"
    );
    assert!(
        html.contains("<td>blks_hit</td><td class=\"num\">2500</td><td class=\"num\">2.500</td>")
    );
    // 0.012 s over 1000 operations: 12 µs each.
    assert!(html.contains("<td>server_cpu_s (µs per op)</td><td class=\"num\">0.01200</td><td class=\"num\">12.00</td>"));
}
