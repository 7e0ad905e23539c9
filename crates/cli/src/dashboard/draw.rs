//! One frame of the dashboard from its state: the header and the clock,
//! the throughput and latency charts (and the curve of earlier phases),
//! the table of operations, and the line of lag, CPU and errors.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Cell, Chart, Dataset, Gauge, GraphType, LegendPosition, Paragraph, Row, Table,
};
use ratatui::Frame;

use super::{Series, State};

pub(super) fn frame(f: &mut Frame<'_>, s: &State, note: Option<&str>) {
    let [header, clock, charts, table, footer, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(6),
        Constraint::Length(s.ops.len().max(1) as u16 + 3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                s.title.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!(
                " · {} connection{} · {}",
                s.connections,
                if s.connections == 1 { "" } else { "s" },
                match &s.target_text {
                    Some(t) => format!("target {t} ops/s"),
                    None => "closed loop".to_string(),
                }
            )),
        ])),
        header,
    );
    progress(f, clock, s);
    let columns: Vec<Constraint> = if s.earlier.is_empty() {
        vec![Constraint::Percentage(50); 2]
    } else {
        vec![
            Constraint::Percentage(34),
            Constraint::Percentage(33),
            Constraint::Percentage(33),
        ]
    };
    let areas = Layout::horizontal(columns).split(charts);
    throughput(f, areas[0], s);
    latency(f, areas[1], s);
    if let Some(&area) = areas.get(2) {
        curve(f, area, s);
    }
    operations(f, table, s);
    f.render_widget(Paragraph::new(status_line(s)), footer);
    let selected = s.ops.get(s.selected).map_or("", |o| o.kind.ycsb_name());
    let keys_text = if s.final_throughput.is_some() {
        "the phase has ended: figures over its measured period (warm-up left out), as the summary"
            .to_string()
    } else if s.stopping {
        sojourn_session::INTERRUPTED.to_string()
    } else {
        format!(
            "q stop (partial results kept) · ←/→ operation shown: {selected} · Ctrl+C twice quits"
        )
    };
    let bottom = match note {
        // Printed in full under the frame once the phase ends.
        Some(n) => Paragraph::new(n.to_string()).style(Style::default().fg(Color::Yellow)),
        None => Paragraph::new(keys_text).style(Style::default().fg(Color::DarkGray)),
    };
    f.render_widget(bottom, keys);
}

/// Elapsed time and what is left, as a bar.
fn progress(f: &mut Frame<'_>, area: Rect, s: &State) {
    let elapsed = s.elapsed.as_secs_f64();
    // The run ends at the first of its time limit and its profile's end.
    let by_time = s
        .max_execution_time
        .into_iter()
        .chain(s.length)
        .min()
        .map(|m| (elapsed / m.as_secs_f64().max(1e-9), m.as_secs_f64()));
    let by_ops = s
        .expected_ops
        .filter(|&n| n > 0)
        .map(|n| (s.ops_done as f64 / n as f64, n));
    let ratio = by_time
        .map(|t| t.0)
        .into_iter()
        .chain(by_ops.map(|o| o.0))
        .fold(0.0f64, f64::max)
        .clamp(0.0, 1.0);
    let mut label = format!("{elapsed:.1} s");
    if let Some((_, of)) = by_time {
        label.push_str(&format!(" of {of:.0} s"));
    }
    label.push_str(&format!(" · {} ops", group(s.ops_done)));
    if let Some((_, of)) = by_ops {
        label.push_str(&format!(" of {}", group(of)));
    }
    if let Some((t, measured)) = s.final_throughput {
        label.push_str(&format!(
            " · Throughput {t:.1} ops/s over {:.1} s measured",
            measured.as_secs_f64()
        ));
    }
    f.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(label)
            .gauge_style(Style::default().fg(Color::Blue).bg(Color::Black)),
        area,
    );
}

/// Achieved, offered and target operations per second on one axis.
fn throughput(f: &mut Frame<'_>, area: Rect, s: &State) {
    let mut sets = vec![line("achieved", Color::Cyan, &s.achieved)];
    if !s.offered.is_empty() {
        sets.push(line("offered", Color::Yellow, &s.offered));
    }
    if !s.target.is_empty() {
        sets.push(line("target", Color::DarkGray, &s.target));
    }
    let now = s.achieved.last().map_or(0.0, |p| p.1);
    let title = format!("ops/s · now {}", group(now.round() as u64));
    chart(f, area, title, sets, &[&s.achieved, &s.offered, &s.target]);
}

/// The selected operation's response p50, p99, p99.9 and service p99.
fn latency(f: &mut Frame<'_>, area: Rect, s: &State) {
    let Some(op) = s.ops.get(s.selected) else {
        f.render_widget(Block::bordered().title("latency (ms)"), area);
        return;
    };
    let sets = vec![
        line("response p50", Color::Green, &op.response_p50),
        line("response p99", Color::Yellow, &op.response_p99),
        line("response p99.9", Color::Red, &op.response_p999),
        line("service p99", Color::Magenta, &op.service_p99),
    ];
    let title = format!("{} latency (ms)", op.kind.ycsb_name());
    chart(
        f,
        area,
        title,
        sets,
        &[
            &op.response_p50,
            &op.response_p99,
            &op.response_p999,
            &op.service_p99,
        ],
    );
}

/// Each earlier phase's throughput against its worst response p99.
fn curve(f: &mut Frame<'_>, area: Rect, s: &State) {
    let data: &Series = &s.earlier;
    let x_max = data.iter().map(|p| p.0).fold(0.0f64, f64::max).max(1.0);
    let y_max = data.iter().map(|p| p.1).fold(0.0f64, f64::max).max(0.001);
    let set = Dataset::default()
        .name("phases so far")
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(Style::default().fg(Color::Cyan))
        .data(data);
    f.render_widget(
        Chart::new(vec![set])
            .block(Block::bordered().title("p99 response (ms) vs ops/s"))
            .x_axis(axis(0.0, x_max * 1.05))
            .y_axis(axis(0.0, y_max * 1.1)),
        area,
    );
}

fn line<'a>(name: &'a str, color: Color, data: &'a Series) -> Dataset<'a> {
    Dataset::default()
        .name(name)
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(Style::default().fg(color))
        .data(data)
}

fn axis<'a>(low: f64, high: f64) -> Axis<'a> {
    Axis::default()
        .bounds([low, high])
        .labels([short(low), short((low + high) / 2.0), short(high)])
        .style(Style::default().fg(Color::DarkGray))
}

fn chart(f: &mut Frame<'_>, area: Rect, title: String, sets: Vec<Dataset<'_>>, all: &[&Series]) {
    let points = || all.iter().flat_map(|s| s.iter());
    let x_min = points().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = points().map(|p| p.0).fold(0.0f64, f64::max);
    let y_max = points().map(|p| p.1).fold(0.0f64, f64::max);
    let x_min = if x_min.is_finite() { x_min } else { 0.0 };
    f.render_widget(
        Chart::new(sets)
            .block(Block::bordered().title(title))
            .legend_position(Some(LegendPosition::TopLeft))
            .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)))
            .x_axis(axis(x_min, x_max.max(x_min + 1.0)))
            .y_axis(axis(0.0, (y_max * 1.1).max(1e-3))),
        area,
    );
}

/// Per operation: counts, rate, and percentiles in µs as the summary
/// prints them.
fn operations(f: &mut Frame<'_>, area: Rect, s: &State) {
    let secs = s
        .final_throughput
        .map_or(s.elapsed, |(_, measured)| measured)
        .as_secs_f64();
    let us = |h: &hdrhistogram::Histogram<u64>, q: f64| {
        if h.is_empty() {
            "-".to_string()
        } else {
            (h.value_at_quantile(q) / 1000).to_string()
        }
    };
    let rows = s.ops.iter().enumerate().filter_map(|(i, view)| {
        let op = s.totals.op(view.kind)?;
        let ok = op.ok.response.len();
        let failed = op.count() - ok;
        let style = if i == s.selected {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        let row = Row::new(vec![
            Cell::from(view.kind.ycsb_name()),
            Cell::from(ok.to_string()),
            Cell::from(if secs > 0.0 {
                format!("{:.1}", ok as f64 / secs)
            } else {
                "-".into()
            }),
            Cell::from(us(&op.ok.service, 0.5)),
            Cell::from(us(&op.ok.service, 0.99)),
            Cell::from(us(&op.ok.service, 0.999)),
            Cell::from(us(&op.ok.response, 0.5)),
            Cell::from(us(&op.ok.response, 0.99)),
            Cell::from(us(&op.ok.response, 0.999)),
            Cell::from(failed.to_string()),
        ])
        .style(style);
        Some(row)
    });
    let header = Row::new(vec![
        "operation",
        "ok",
        "ops/s",
        "svc p50",
        "svc p99",
        "svc p99.9",
        "resp p50",
        "resp p99",
        "resp p99.9",
        "failed",
    ])
    .style(Style::default().add_modifier(Modifier::UNDERLINED));
    let widths = [
        Constraint::Length(17),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(10),
        Constraint::Length(6),
    ];
    let title = if s.final_throughput.is_some() {
        "operations over the measured period (latency in µs)"
    } else {
        "operations so far (latency in µs)"
    };
    f.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(Block::bordered().title(title)),
        area,
    );
}

/// Lag, client CPU, errors by status and the commonest in the database's
/// words.
fn status_line(s: &State) -> Line<'static> {
    let mut parts = Vec::new();
    if let Some(lag) = s.lag_p99_us {
        parts.push(format!("schedule lag p99 {lag:.0} µs"));
    }
    if let Some((cores, per_op)) = s.cpu {
        parts.push(format!(
            "client CPU {:.0}% of a core, {per_op:.1} µs/op",
            cores * 100.0
        ));
    }
    let errors = s.errors();
    if errors.is_empty() {
        parts.push("no errors".into());
    } else {
        let list: Vec<String> = errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        parts.push(format!("errors: {}", list.join(", ")));
        if let Some((n, text)) = s.top_reason() {
            parts.push(format!("{n} × {text}"));
        }
    }
    parts.push("server figures in the summary".into());
    let style = if errors.is_empty() {
        Style::default()
    } else {
        Style::default().fg(Color::Red)
    };
    Line::from(Span::styled(parts.join(" · "), style))
}

/// 12345 as "12,345".
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An axis label: few characters.
fn short(v: f64) -> String {
    match v.abs() {
        a if a >= 1e6 => format!("{:.1}M", v / 1e6),
        a if a >= 1e4 => format!("{:.0}k", v / 1e3),
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 1.0 => format!("{v:.1}"),
        _ => format!("{v:.3}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }
}
