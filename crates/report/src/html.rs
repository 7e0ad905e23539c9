//! The HTML report: one self-contained file (styles, SVG plots, the uPlot
//! chart library and a few lines of script inline; nothing fetched) that a
//! browser opens from disk.
//!
//! Layout: the walkthrough's two tables; latency against throughput for
//! every curve ([`crate::curve`]), knee marked; the percentile spectrum of
//! every run side by side when there are a few; then per run its facts
//! and offered, achieved and target throughput over time, time waiting in
//! the client over time (open loop), and, per operation kind,
//! p50/p99/p99.9 of service and response time over time and the
//! percentile spectrum.
//!
//! Every plot is drawn in Rust as SVG ([`crate::svg`]), so the page reads
//! without script and prints as vectors. The time series also carry their
//! data as JSON (`<script type="application/json">` beside the SVG), from
//! which the script builds a uPlot chart in the SVG's place: values on
//! hover, drag to zoom a time range, double-click to reset, a click on a
//! legend entry hides its line. Once the page has loaded the script sets
//! `data-rendered` on `<body>` to the number of SVG plots with a drawn
//! line, and with `#selftest` in the URL it hovers every uPlot chart and
//! writes what the legends show into `data-selftest`, which the tests read
//! in a headless browser (which cannot hover).

use std::fmt::Write as _;

use sojourn_store::RunRecord;

use crate::curve;
use crate::history::History;
use crate::run::{self, Latency, Unit};
use crate::svg::{esc, PALETTE};
use crate::tables::{self, CostOptions};

mod curves;
mod history;
mod interactive;
mod page;
mod run_section;

use interactive::{SCRIPT, UPLOT_CSS, UPLOT_JS, UPLOT_LICENSE, UPLOT_VERSION};
use page::{html_table, Page};

/// What the page says about where it came from, and the tables' settings.
#[derive(Clone, Debug)]
pub struct HtmlOptions {
    pub title: String,
    /// The results store, password-free.
    pub source: String,
    /// When the report was made (RFC 3339).
    pub generated_at: String,
    /// Which latency the performance table shows.
    pub latency: Latency,
    pub cost: CostOptions,
    /// The runs' history, drawn first (`report --history`).
    pub history: Option<History>,
}

/// The whole page.
pub fn render(runs: &[RunRecord], opts: &HtmlOptions) -> String {
    let mut p = Page {
        html: String::new(),
        next: 0,
        unit: Unit::of(runs),
    };
    let names = run::names(runs);
    let _ = write!(
        p.html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"sojourn {}\">\n<title>{}</title>\n<style>{UPLOT_CSS}</style>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&opts.title)
    );
    let _ = writeln!(
        p.html,
        "<header><h1>{}</h1><p class=\"sub\">{} run{} from <code>{}</code>; made {} by sojourn {}. \
         <b>Service time</b>: from the actual send to the reply. <b>Response time</b>: from the \
         intended (scheduled) send to the reply, including any wait in the client when the \
         database falls behind; it is what a user would see.</p></header>",
        esc(&opts.title),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        esc(&opts.source),
        esc(&opts.generated_at),
        env!("CARGO_PKG_VERSION"),
    );
    nav(&mut p, runs, &names, opts.history.is_some());
    if let Some(h) = &opts.history {
        history::section(&mut p, h);
    }
    tables_section(&mut p, runs, &names, opts);
    let curves = curve::curves(runs);
    if !curves.is_empty() {
        p.html
            .push_str("<section id=\"curves\"><h2>Latency against throughput</h2>\n");
        for c in &curves {
            curves::curve_section(&mut p, c, runs, &names);
        }
        p.html.push_str("</section>\n");
    }
    groups_section(&mut p, runs);
    if (2..=PALETTE.len()).contains(&runs.len()) {
        curves::spectra_section(&mut p, runs, &names);
    }
    let open = runs.len() <= 4;
    for (r, name) in runs.iter().zip(&names) {
        run_section::run_section(&mut p, r, name, open);
    }
    // uPlot (MIT) with its licence, then the page's own script.
    let _ = write!(
        p.html,
        "<script>/*! uPlot {UPLOT_VERSION}, inlined unchanged; its licence:\n{UPLOT_LICENSE}*/\n{UPLOT_JS}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
    p.html
}

/// Runs that are repetitions of one configuration (`--repeat`, `ab`): per
/// group, each figure's mean, spread and range between repetitions, as
/// `sojourn compare` judges them; with two groups, their comparison.
fn groups_section(p: &mut Page, runs: &[RunRecord]) {
    let mut groups: Vec<(String, Vec<RunRecord>)> = Vec::new();
    for r in runs {
        let Some(g) = r.meta().labels.get("repeat_group") else {
            continue;
        };
        match groups.iter_mut().find(|(id, _)| id == g) {
            Some((_, members)) => members.push(r.clone()),
            None => groups.push((g.clone(), vec![r.clone()])),
        }
    }
    if groups.is_empty() {
        return;
    }
    p.html
        .push_str("<section id=\"groups\"><h2>Groups of repetitions</h2>\n");
    for (id, members) in &groups {
        let _ = write!(
            p.html,
            "<h3>Group {} ({} repetitions)</h3>",
            esc(&id.chars().take(8).collect::<String>()),
            members.len()
        );
        let head = ["figure", "mean", "sd", "min", "max"].map(String::from);
        let body: Vec<Vec<String>> = crate::groups::spreads(members)
            .into_iter()
            .map(|f| {
                vec![
                    format!("{} ({})", f.metric, f.unit),
                    tables::readable(f.mean),
                    tables::readable(f.sd),
                    tables::readable(f.min),
                    tables::readable(f.max),
                ]
            })
            .collect();
        html_table(p, &head, &body);
    }
    if let [(_, a), (_, b)] = groups.as_slice() {
        let c = crate::groups::compare_groups(a, b, Default::default());
        p.html
            .push_str("<h3>The second group against the first</h3>");
        let head = ["figure", "change", "95% CI", "p (Holm)", "verdict"].map(String::from);
        let body: Vec<Vec<String>> = c
            .figures
            .iter()
            .map(|f| {
                vec![
                    format!("{} ({})", f.metric, f.unit),
                    f.change_pct.map_or("-".into(), |v| format!("{v:+.1}%")),
                    f.change_ci95_pct
                        .map_or("-".into(), |[lo, hi]| format!("[{lo:+.1}%, {hi:+.1}%]")),
                    f.p_holm.map_or("-".into(), |p| format!("{p:.3}")),
                    if f.marked {
                        format!("{:?}", f.verdict).to_lowercase()
                    } else {
                        String::new()
                    },
                ]
            })
            .collect();
        html_table(p, &head, &body);
        for n in &c.notes {
            let _ = write!(p.html, "<p class=\"note\">{}</p>", esc(n));
        }
    }
    p.html.push_str("</section>\n");
}

fn nav(p: &mut Page, runs: &[RunRecord], names: &[String], history: bool) {
    p.html.push_str("<nav>");
    if history {
        p.html
            .push_str("<a href=\"#history\"><b>History</b></a> · ");
    }
    p.html.push_str("<b>Runs:</b> ");
    for (i, (r, name)) in runs.iter().zip(names).enumerate() {
        if i > 0 {
            p.html.push_str(" · ");
        }
        p.html.push_str(&run_link(r, name));
    }
    p.html.push_str("</nav>\n");
}

/// A link to a run's section by its name, its id on hover.
fn run_link(r: &RunRecord, name: &str) -> String {
    format!(
        "<a href=\"#run-{id}\" title=\"run {id}\">{}</a>",
        esc(name),
        id = esc(r.id().as_str())
    )
}

fn tables_section(p: &mut Page, runs: &[RunRecord], names: &[String], opts: &HtmlOptions) {
    p.html
        .push_str("<section id=\"tables\"><h2>Performance</h2>\n");
    performance_table(p, runs, names, opts.latency);
    let _ = writeln!(
        p.html,
        "<p class=\"note\">Latencies in {}: {} time of successful operations, warm-up \
         excluded. Target and actual throughput in operations per second in total; a stage \
         that mixes operations has a row per operation. The walkthrough's wider table: \
         <code>sojourn report --format md</code>.</p>",
        match p.unit {
            Unit::Micros => "microseconds (µs)",
            Unit::Millis => "milliseconds (ms)",
        },
        opts.latency.name()
    );
    // Only runs that carry a price (Bigtable's, or one given) are costed.
    let rows = tables::cost(runs, &opts.cost);
    if !rows.is_empty() {
        p.html.push_str("<h2>Resource and cost</h2>\n");
        let (head, body) = tables::cost_cells(&rows, false);
        html_table(p, &head, &body);
        let _ = writeln!(
            p.html,
            "<p class=\"note\">Monthly cost = nodes × ${} per node-hour × 24 × 30 + table GB × \
             storage $/GB-month (0.17 ssd, 0.026 hdd unless given); table GB = (fieldlength + \
             39) × fieldcount × recordcount / 2<sup>30</sup>. Operations per dollar at the \
             actual rate over a 30-day month.</p>",
            opts.cost.node_hour_price
        );
    }
    // The runs as the page names them.
    let unpriced: Vec<String> = runs
        .iter()
        .zip(names)
        .filter(|(r, _)| tables::node_hour_price(r, &opts.cost).is_none())
        .map(|(_, name)| name.clone())
        .collect();
    if !unpriced.is_empty() {
        let _ = writeln!(
            p.html,
            "<p class=\"note\">{}</p>",
            esc(&tables::unpriced_note(&unpriced))
        );
    }
    p.html.push_str("</section>\n");
}

/// The performance table as the page shows it: a row per run and
/// operation, so that it fits the page whatever the operations; the
/// workload's settings in one cell.
fn performance_table(p: &mut Page, runs: &[RunRecord], names: &[String], latency: Latency) {
    let unit = p.unit.name();
    let _ = write!(
        p.html,
        "<div class=\"scroll\"><table class=\"performance\"><thead><tr><th>run</th>\
         <th>workload</th><th>phase</th><th>target ops/s</th><th>actual ops/s</th>\
         <th>operation</th><th>p50 {unit}</th><th>p99 {unit}</th><th>p99.9 {unit}</th>\
         <th>records</th><th>distribution</th><th>threads</th></tr></thead><tbody>"
    );
    let rows = tables::performance(runs, latency);
    for ((r, row), name) in runs.iter().zip(&rows).zip(names) {
        let ops: Vec<&tables::KindLatency> =
            row.latency.iter().filter_map(|(_, l)| l.as_ref()).collect();
        let span = ops.len().max(1);
        let _ = write!(
            p.html,
            "<tr><td rowspan=\"{span}\">{}</td><td rowspan=\"{span}\">{}</td>\
             <td rowspan=\"{span}\">{}</td><td rowspan=\"{span}\" class=\"num\">{}</td>\
             <td rowspan=\"{span}\" class=\"num\">{}</td>",
            run_link(r, name),
            esc(&row.workload),
            esc(&row.operation),
            row.target_throughput
                .map_or(String::new(), tables::readable),
            tables::readable(row.actual_throughput),
        );
        let setup = [
            format!(
                "<td rowspan=\"{span}\" class=\"num\">{}</td>",
                tables::grouped(row.recordcount as f64)
            ),
            format!("<td rowspan=\"{span}\">{}</td>", esc(&row.distribution)),
            format!(
                "<td rowspan=\"{span}\" class=\"num\" title=\"{} client process(es)\">{}</td>",
                row.clients,
                row.threads * u64::from(row.clients)
            ),
        ]
        .concat();
        if ops.is_empty() {
            let _ = write!(p.html, "<td></td><td></td><td></td><td></td>{setup}</tr>");
        }
        for (i, l) in ops.iter().enumerate() {
            if i > 0 {
                p.html.push_str("<tr>");
            }
            let _ = write!(p.html, "<td>{}</td>", esc(&l.operation));
            for ns in [l.p50_ns, l.p99_ns, l.p99_9_ns] {
                let _ = write!(
                    p.html,
                    "<td class=\"num\">{}</td>",
                    tables::readable(p.unit.of_ns(ns as f64))
                );
            }
            if i == 0 {
                p.html.push_str(&setup);
            }
            p.html.push_str("</tr>");
        }
    }
    p.html.push_str("</tbody></table></div>\n");
}

const STYLE: &str = include_str!("html/style.css");

#[cfg(test)]
mod tests {
    use super::interactive::{round_significant, CHART_DIGITS};
    use super::page::WAITING;
    use super::*;
    use serde_json::{json, Value};
    use sojourn_core::op::OpKind;
    use sojourn_testkit::runs::Synthetic;

    fn page(runs: &[RunRecord]) -> String {
        render(
            runs,
            &HtmlOptions {
                title: "t".into(),
                source: "test".into(),
                generated_at: "now".into(),
                latency: Latency::Service,
                cost: CostOptions::default(),
                history: None,
            },
        )
    }

    /// Every interactive chart's data, as the page's script reads it.
    fn specs(html: &str) -> Vec<Value> {
        html.split("<script type=\"application/json\" class=\"chart-data\" id=\"")
            .skip(1)
            .map(|s| {
                let json = s.split_once("\">").unwrap().1.split("</script>").next();
                serde_json::from_str(json.unwrap()).unwrap()
            })
            .collect()
    }

    fn series<'a>(spec: &'a Value, label: &str) -> Option<&'a Value> {
        spec["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["label"] == label)
    }

    fn ys(series: &Value) -> Vec<f64> {
        series["y"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect()
    }

    /// An open-loop run at a constant target: its throughput chart has the
    /// target as a line at the target over the whole run, and its chart of
    /// waiting in the client shows the synthetic run's wait (response
    /// exceeds service by 0.2 ms on average); every time series carries
    /// its data for the interactive chart and keeps its SVG.
    #[test]
    fn time_series_carry_their_data_and_the_target_and_wait() {
        let run = Synthetic {
            intervals: 6,
            ..Synthetic::new(4)
        }
        .stored_run();
        let html = page(std::slice::from_ref(&run));
        let specs = specs(&html);
        // Throughput, waiting, and read's percentiles over time.
        assert_eq!(specs.len(), 3, "{specs:?}");
        assert_eq!(html.matches("data-chart=\"chart-").count(), 3);
        assert_eq!(html.matches("<svg class=\"plot\"").count(), 4);
        assert!(html.contains(&format!("<script>/*! uPlot {UPLOT_VERSION}")));
        assert!(html.contains("Permission is hereby granted"));

        let tput = &specs[0];
        assert!(tput["title"]
            .as_str()
            .unwrap()
            .ends_with("offered, achieved and target throughput over time"));
        let target = series(tput, "target").expect("a target line");
        assert_eq!(ys(target), vec![500.0, 500.0]);
        assert_eq!(target["x"], json!([0.0, 6.0]));
        let achieved = ys(series(tput, "achieved, all operations").unwrap());
        assert_eq!(achieved.len(), 6);
        for (y, iv) in achieved.iter().zip(&run.intervals) {
            assert_eq!(*y, round_significant(iv.ops_done as f64, CHART_DIGITS));
        }
        // The synthetic run stores no offered counts: no offered line.
        assert!(series(tput, "offered (released by the schedule)").is_none());

        let wait = &specs[1];
        assert!(wait["title"].as_str().unwrap().contains(WAITING));
        // In the page's one unit: ms, as the run's p99 is over a
        // millisecond (1 ms mean service time).
        assert_eq!(Unit::of(std::slice::from_ref(&run)), Unit::Millis);
        assert_eq!(wait["y"]["label"], "mean response − mean service time (ms)");
        let reads = ys(series(wait, "read").unwrap());
        assert_eq!(reads.len(), 6);
        for (y, iv) in reads.iter().zip(&run.intervals) {
            let ok = &iv.stats.op(OpKind::Read).unwrap().ok;
            let want = (ok.response.mean() - ok.service.mean()) / 1e6;
            assert_eq!(*y, round_significant(want, CHART_DIGITS));
            assert!((0.150..0.250).contains(y), "{y} ms");
        }

        let pct = &specs[2];
        assert_eq!(pct["y"]["log"], true);
        assert_eq!(pct["series"].as_array().unwrap().len(), 6);
    }

    /// A closed loop has no target and nothing waits: neither is drawn.
    #[test]
    fn a_closed_loop_has_no_target_and_no_wait() {
        let run = Synthetic {
            intervals: 4,
            target: None,
            ..Synthetic::new(5)
        }
        .stored_run();
        let html = page(std::slice::from_ref(&run));
        let specs = specs(&html);
        assert_eq!(specs.len(), 2, "throughput and percentiles");
        assert!(specs[0]["title"]
            .as_str()
            .unwrap()
            .ends_with(": achieved throughput over time"));
        let labels: Vec<&str> = specs[0]["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["achieved, all operations", "achieved, read"]);
        assert!(!html.contains(WAITING));
    }

    /// With a rate profile the target follows it: 1,000 operations per
    /// second for two seconds, then 2,000.
    #[test]
    fn the_target_follows_a_rate_profile() {
        let mut run = Synthetic {
            intervals: 4,
            ..Synthetic::new(6)
        }
        .stored_run();
        run.summary
            .meta
            .properties
            .insert("rate".into(), "hold 1000 for 2s, hold 2000 for 2s".into());
        run.summary.meta.target = Some(1500.0);
        let specs = specs(&page(std::slice::from_ref(&run)));
        let t = series(&specs[0], "target (rate profile)").expect("the profile");
        assert!(series(&specs[0], "target").is_none());
        let xs: Vec<f64> = t["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        for (x, y) in xs.iter().zip(ys(t)) {
            assert_eq!(y, if *x < 2.0 { 1000.0 } else { 2000.0 }, "at {x} s");
        }
        assert!(xs.first() == Some(&0.0) && xs.last().is_some_and(|x| *x > 3.9));
    }
}
