//! What every section of the page draws with: the page and its charts,
//! tables, and the percentiles' colours and names.

use std::fmt::Write as _;

use sojourn_core::op::OpKind;

use super::interactive::{chart_spec, script_json};
use crate::run::Unit;
use crate::svg::{esc, Chart, PALETTE};

/// Colours of p50, p99 and p99.9 wherever they appear.
pub(super) const PCT_COLORS: [&str; 3] = [PALETTE[0], PALETTE[1], PALETTE[3]];
pub(super) const PCT_NAMES: [&str; 3] = ["p50", "p99", "p99.9"];
pub(super) const PCT_QS: [f64; 3] = [0.5, 0.99, 0.999];

/// What the chart of time waiting in the client shows, in its title.
pub(super) const WAITING: &str = "waiting in the client (response − service), mean";

/// Plots that share one page, numbered for unique element ids, with the
/// page's one latency unit.
pub(super) struct Page {
    pub(super) html: String,
    pub(super) next: usize,
    pub(super) unit: Unit,
}

impl Page {
    /// A static plot (curves and spectra: not over time).
    pub(super) fn chart(&mut self, c: &Chart) {
        self.next += 1;
        let _ = write!(
            self.html,
            "<figure class=\"chart\">{}</figure>",
            c.svg(self.next)
        );
    }

    /// A plot over time: the SVG, and its data for the script to build an
    /// interactive chart from. A chart with nothing to draw stays static.
    pub(super) fn time_chart(&mut self, c: &Chart) {
        self.live_chart(c, |_| {});
    }

    /// A plot the script rebuilds with uPlot, its data amended by `extra`
    /// (the history's point names and links).
    pub(super) fn live_chart(&mut self, c: &Chart, extra: impl FnOnce(&mut serde_json::Value)) {
        self.next += 1;
        let Some(mut spec) = chart_spec(c) else {
            let _ = write!(
                self.html,
                "<figure class=\"chart\">{}</figure>",
                c.svg(self.next)
            );
            return;
        };
        extra(&mut spec);
        let _ = write!(
            self.html,
            "<figure class=\"chart\" data-chart=\"chart-{id}\">{}\
             <script type=\"application/json\" class=\"chart-data\" id=\"chart-{id}-data\">{}</script></figure>",
            c.svg(self.next),
            script_json(&spec),
            id = self.next
        );
    }
}

/// A table under `head` with a row of `row(item)` per item.
pub(super) fn table_of<T>(
    p: &mut Page,
    head: &[&str],
    items: impl IntoIterator<Item = T>,
    row: impl FnMut(T) -> Vec<String>,
) {
    let head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    let body: Vec<Vec<String>> = items.into_iter().map(row).collect();
    html_table(p, &head, &body);
}

pub(super) fn html_table(p: &mut Page, head: &[String], body: &[Vec<String>]) {
    p.html.push_str("<div class=\"scroll\"><table><thead><tr>");
    for h in head {
        let _ = write!(p.html, "<th>{}</th>", esc(h));
    }
    p.html.push_str("</tr></thead><tbody>");
    for row in body {
        p.html.push_str("<tr>");
        for c in row {
            let numeric = c.replace(',', "").parse::<f64>().is_ok();
            let _ = write!(
                p.html,
                "<td{}>{}</td>",
                if numeric { " class=\"num\"" } else { "" },
                esc(c)
            );
        }
        p.html.push_str("</tr>");
    }
    p.html.push_str("</tbody></table></div>\n");
}

pub(super) fn kind_title(kind: Option<OpKind>) -> String {
    match kind {
        Some(k) => k.name().to_ascii_uppercase(),
        None => "all operations".to_string(),
    }
}
