//! Plots as inline SVG, written here by hand so that a report needs no
//! plotting library, no script and no network to be read: line charts with
//! linear or logarithmic axes, the HdrHistogram percentile axis (`1/(1-q)`
//! on a log scale, labelled 0%, 50%, 90%, 99%, ...), a legend, and marks
//! (a shaded warm-up span, a vertical knee line, a horizontal SLO line).
//!
//! Every chart is an `<svg class="plot">` with a `data-kind`, a `<title>`
//! for screen readers and one `<path class="series">` per drawn series, so
//! a test (or a script) can tell that a plot was drawn.

use std::fmt::Write as _;

/// How an axis maps values to positions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Powers of ten; values at or below zero are left out.
    Log,
    /// `1 / (1 - q)` on a log scale, labelled as percentiles.
    Spectrum,
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// A linear axis starts at zero whatever the data.
    pub from_zero: bool,
}

impl Axis {
    pub fn zero_based(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            from_zero: true,
        }
    }

    pub fn log(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            from_zero: false,
        }
    }

    pub fn spectrum() -> Axis {
        Axis {
            label: "percentile (log scale of 1/(1-q))".into(),
            scale: Scale::Spectrum,
            from_zero: false,
        }
    }
}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub dashed: bool,
    /// Points in drawing order; a non-finite y leaves a gap.
    pub points: Vec<(f64, f64)>,
    /// Draw a dot (with a tooltip) at every point.
    pub markers: bool,
}

impl Series {
    pub fn line(name: impl Into<String>, color: &'static str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            color,
            dashed: false,
            points,
            markers: false,
        }
    }

    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }

    pub fn with_markers(mut self) -> Series {
        self.markers = true;
        self
    }
}

/// Something drawn over the data.
#[derive(Clone, Debug)]
pub enum Mark {
    /// A vertical line with a label (the knee).
    VLine {
        x: f64,
        label: String,
        color: &'static str,
    },
    /// A horizontal line with a label (an SLO, a target).
    HLine {
        y: f64,
        label: String,
        color: &'static str,
    },
    /// A shaded range of x (the warm-up).
    Span { from: f64, to: f64, label: String },
}

#[derive(Clone, Debug)]
pub struct Chart {
    /// What the chart shows, for `data-kind` (`throughput`, `percentiles`,
    /// `spectrum`, `latency-throughput`).
    pub kind: &'static str,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
}

/// Colours that stay apart for colour-blind readers (Okabe and Ito).
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

const W: f64 = 760.0;
const H: f64 = 340.0;
const LEFT: f64 = 74.0;
const RIGHT: f64 = W - 178.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = H - 50.0;

/// Text safe inside SVG and HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A tick or tooltip number: short, no exponent (12k, 1.5M, 0.25).
pub fn short_number(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 {
        trim(format!("{v:.0}"))
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        let decimals = (2 - a.log10().floor() as i32).clamp(2, 9) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

/// A percentile label for `1/(1-q)`: 1 -> 0%, 2 -> 50%, 1000 -> 99.9%.
fn percentile_label(x: f64) -> String {
    let q = (1.0 - 1.0 / x) * 100.0;
    let s = format!("{q:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// The range and ticks of one axis.
struct Frame {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Frame {
    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log | Scale::Spectrum => v.log10(),
        }
    }

    /// Where `v` falls between 0 (lo) and 1 (hi).
    fn frac(&self, v: f64) -> f64 {
        (self.t(v) - self.t(self.lo)) / (self.t(self.hi) - self.t(self.lo))
    }

    fn usable(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    fn label(&self, v: f64) -> String {
        match self.scale {
            Scale::Spectrum => percentile_label(v),
            _ => short_number(v),
        }
    }

    fn new(axis: &Axis, values: &[f64]) -> Frame {
        let usable: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0))
            .collect();
        let min = usable.iter().copied().fold(f64::INFINITY, f64::min);
        let max = usable.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match axis.scale {
            Scale::Linear => {
                let (mut lo, mut hi) = if usable.is_empty() {
                    (0.0, 1.0)
                } else {
                    (min, max)
                };
                if axis.from_zero {
                    lo = lo.min(0.0);
                    hi = hi.max(0.0);
                }
                if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
                    let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                    lo -= if axis.from_zero && lo == 0.0 {
                        0.0
                    } else {
                        pad
                    };
                    hi += pad;
                }
                let step = nice_step((hi - lo) / 5.0);
                let lo = (lo / step).floor() * step;
                let hi = (hi / step).ceil() * step;
                let n = ((hi - lo) / step).round() as usize;
                let ticks = (0..=n).map(|i| lo + i as f64 * step).collect();
                Frame {
                    scale: Scale::Linear,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Log | Scale::Spectrum => {
                let (min, max) = if usable.is_empty() {
                    (1.0, 10.0)
                } else {
                    (min, max)
                };
                let mut lo_e = min.log10().floor() as i32;
                let mut hi_e = max.log10().ceil() as i32;
                if axis.scale == Scale::Spectrum {
                    lo_e = 0;
                }
                if hi_e <= lo_e {
                    hi_e = lo_e + 1;
                }
                let mut ticks = Vec::new();
                for e in lo_e..=hi_e {
                    let d = 10f64.powi(e);
                    ticks.push(d);
                    let minor: &[f64] = match axis.scale {
                        Scale::Spectrum if e == 0 => &[2.0],
                        Scale::Log if hi_e - lo_e <= 2 => &[2.0, 5.0],
                        _ => &[],
                    };
                    if e < hi_e {
                        ticks.extend(minor.iter().map(|m| m * d));
                    }
                }
                ticks.sort_by(f64::total_cmp);
                Frame {
                    scale: axis.scale,
                    lo: 10f64.powi(lo_e),
                    hi: 10f64.powi(hi_e),
                    ticks,
                }
            }
        }
    }
}

/// 1, 2 or 5 times a power of ten, near `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

impl Chart {
    /// The chart as an SVG element; `id` must be unique in the page (it
    /// names the clip path and the title).
    pub fn svg(&self, id: usize) -> String {
        let plot = Plot::new(self);
        let mut o = String::new();
        plot.head(&mut o, id);
        plot.spans(&mut o);
        plot.grid(&mut o);
        plot.data(&mut o, id);
        plot.marks(&mut o);
        if !plot.has_data {
            plot.no_data(&mut o);
        }
        plot.legend(&mut o);
        o.push_str("</g></svg>");
        o
    }
}

/// A chart laid out on its frames: where each value falls in the picture.
struct Plot<'a> {
    chart: &'a Chart,
    fx: Frame,
    fy: Frame,
    /// Whether any series has a finite point (marks alone are no data).
    has_data: bool,
}

impl<'a> Plot<'a> {
    /// The frames fit the series' finite points and the marks' lines.
    fn new(chart: &'a Chart) -> Plot<'a> {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for s in &chart.series {
            for &(x, y) in &s.points {
                if x.is_finite() && y.is_finite() {
                    xs.push(x);
                    ys.push(y);
                }
            }
        }
        let has_data = !xs.is_empty();
        for m in &chart.marks {
            match m {
                Mark::VLine { x, .. } => xs.push(*x),
                Mark::HLine { y, .. } => ys.push(*y),
                Mark::Span { .. } => {}
            }
        }
        Plot {
            chart,
            fx: Frame::new(&chart.x, &xs),
            fy: Frame::new(&chart.y, &ys),
            has_data,
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + self.fx.frac(x) * (RIGHT - LEFT)
    }

    fn py(&self, y: f64) -> f64 {
        BOTTOM - self.fy.frac(y) * (BOTTOM - TOP)
    }

    /// The `<svg>` element's opening, its title, clip path and background.
    fn head(&self, o: &mut String, id: usize) {
        let c = self.chart;
        let _ = write!(
            o,
            r##"<svg class="plot" data-kind="{kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" aria-labelledby="plot-title-{id}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12">"##,
            kind = c.kind
        );
        let _ = write!(
            o,
            r##"<title id="plot-title-{id}">{}</title>"##,
            esc(&c.title)
        );
        let _ = write!(
            o,
            r##"<defs><clipPath id="plot-clip-{id}"><rect x="{LEFT}" y="{TOP}" width="{}" height="{}"/></clipPath></defs>"##,
            RIGHT - LEFT,
            BOTTOM - TOP
        );
        let _ = write!(
            o,
            r##"<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/><text class="plot-title" x="{LEFT}" y="22" font-size="14" font-weight="600" fill="#222">{}</text>"##,
            esc(&c.title)
        );
    }

    fn spans(&self, o: &mut String) {
        let c = self.chart;
        // Warm-up spans under everything.
        for m in &c.marks {
            if let Mark::Span { from, to, label } = m {
                let (a, b) = (self.px(from.max(self.fx.lo)), self.px(to.min(self.fx.hi)));
                if b > a {
                    let _ = write!(
                        o,
                        r##"<g class="mark span"><rect x="{a:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#eeeeee"/><text x="{:.1}" y="{:.1}" fill="#777" font-size="11">{}</text></g>"##,
                        b - a,
                        BOTTOM - TOP,
                        a + 4.0,
                        TOP + 14.0,
                        esc(label)
                    );
                }
            }
        }
    }

    /// Grid lines, the frame, tick labels and axis labels.
    fn grid(&self, o: &mut String) {
        let c = self.chart;
        // Grid and tick labels.
        o.push_str(r##"<g class="grid" stroke="#e3e3e3" stroke-width="1">"##);
        for &t in &self.fx.ticks {
            let x = self.px(t);
            let _ = write!(
                o,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{BOTTOM}"/>"##
            );
        }
        for &t in &self.fy.ticks {
            let y = self.py(t);
            let _ = write!(
                o,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}"/>"##
            );
        }
        o.push_str("</g>");
        let _ = write!(
            o,
            r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
            RIGHT - LEFT,
            BOTTOM - TOP
        );
        o.push_str(r##"<g class="ticks" fill="#444" font-size="11">"##);
        let mut last_x_label = f64::NEG_INFINITY;
        for &t in &self.fx.ticks {
            let x = self.px(t);
            // Skip labels that would overlap their left neighbour.
            if x - last_x_label < 34.0 {
                continue;
            }
            last_x_label = x;
            let _ = write!(
                o,
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                BOTTOM + 16.0,
                esc(&self.fx.label(t))
            );
        }
        for &t in &self.fy.ticks {
            let _ = write!(
                o,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT - 6.0,
                self.py(t) + 4.0,
                esc(&self.fy.label(t))
            );
        }
        o.push_str("</g>");
        let _ = write!(
            o,
            r##"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#222">{}</text>"##,
            (LEFT + RIGHT) / 2.0,
            H - 12.0,
            esc(&c.x.label)
        );
        let _ = write!(
            o,
            r##"<text class="axis-label" transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle" fill="#222">{}</text>"##,
            (TOP + BOTTOM) / 2.0,
            esc(&c.y.label)
        );
    }

    fn data(&self, o: &mut String, id: usize) {
        let c = self.chart;
        // The data, clipped to the plot area.
        let _ = write!(o, r##"<g clip-path="url(#plot-clip-{id})">"##);
        for (i, s) in c.series.iter().enumerate() {
            let mut d = String::new();
            let mut pen_down = false;
            let mut drawn = 0;
            for &(x, y) in &s.points {
                if !(self.fx.usable(x) && self.fy.usable(y)) {
                    pen_down = false;
                    continue;
                }
                let _ = write!(
                    d,
                    "{}{:.1} {:.1}",
                    if pen_down { " L" } else { " M" },
                    self.px(x),
                    self.py(y)
                );
                pen_down = true;
                drawn += 1;
            }
            if drawn == 0 {
                continue;
            }
            let dash = if s.dashed {
                r##" stroke-dasharray="6 4""##
            } else {
                ""
            };
            let _ = write!(
                o,
                r##"<path class="series" data-series="{i}" d="{}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round"{dash}><title>{}</title></path>"##,
                d.trim_start(),
                s.color,
                esc(&s.name)
            );
            if s.markers || drawn == 1 {
                for &(x, y) in &s.points {
                    if self.fx.usable(x) && self.fy.usable(y) {
                        let _ = write!(
                            o,
                            r##"<circle data-series="{i}" cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{}: {}, {}</title></circle>"##,
                            self.px(x),
                            self.py(y),
                            s.color,
                            esc(&s.name),
                            short_number(x),
                            short_number(y)
                        );
                    }
                }
            }
        }
        o.push_str("</g>");
    }

    fn marks(&self, o: &mut String) {
        let c = self.chart;
        // Marks over the data, their labels free of the clip.
        for m in &c.marks {
            match m {
                Mark::VLine { x, label, color }
                    if self.fx.usable(*x) && *x >= self.fx.lo && *x <= self.fx.hi =>
                {
                    let xp = self.px(*x);
                    // Labels sit outside the clip; keep them inside the
                    // plot by flipping to the left of the line when the
                    // text (about 7 px a character) would run off.
                    let anchor_right = xp + 5.0 + 7.0 * label.chars().count() as f64 > RIGHT;
                    let _ = write!(
                        o,
                        r##"<g class="mark vline"><line x1="{xp:.1}" y1="{TOP}" x2="{xp:.1}" y2="{BOTTOM}" stroke="{color}" stroke-width="1.5" stroke-dasharray="3 3"/><text x="{:.1}" y="{:.1}" fill="{color}" font-weight="600" text-anchor="{}" stroke="#ffffff" stroke-width="3" paint-order="stroke">{}</text></g>"##,
                        if anchor_right { xp - 5.0 } else { xp + 5.0 },
                        TOP + 14.0,
                        if anchor_right { "end" } else { "start" },
                        esc(label)
                    );
                }
                Mark::HLine { y, label, color }
                    if self.fy.usable(*y) && *y >= self.fy.lo && *y <= self.fy.hi =>
                {
                    let yp = self.py(*y);
                    let _ = write!(
                        o,
                        r##"<g class="mark hline"><line x1="{LEFT}" y1="{yp:.1}" x2="{RIGHT}" y2="{yp:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="8 3 2 3"/><text x="{:.1}" y="{:.1}" fill="{color}" text-anchor="end" stroke="#ffffff" stroke-width="3" paint-order="stroke">{}</text></g>"##,
                        RIGHT - 5.0,
                        yp - 5.0,
                        esc(label)
                    );
                }
                _ => {}
            }
        }
    }

    fn no_data(&self, o: &mut String) {
        let _ = write!(
            o,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#999" font-size="14">no data</text>"##,
            (LEFT + RIGHT) / 2.0,
            (TOP + BOTTOM) / 2.0
        );
    }

    /// The legend, right of the plot area.
    fn legend(&self, o: &mut String) {
        let c = self.chart;
        o.push_str(r##"<g class="legend">"##);
        let mut y = TOP + 8.0;
        for (i, s) in c.series.iter().enumerate() {
            let dash = if s.dashed {
                r##" stroke-dasharray="6 4""##
            } else {
                ""
            };
            let _ = write!(
                o,
                r##"<g class="legend-item" data-series="{i}"><line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}" fill="#222">{}</text></g>"##,
                RIGHT + 12.0,
                RIGHT + 36.0,
                s.color,
                RIGHT + 42.0,
                y + 4.0,
                esc(&s.name)
            );
            y += 18.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        let f = Frame::new(&Axis::zero_based("x"), &[3.0, 947.0]);
        assert_eq!(f.lo, 0.0);
        assert_eq!(f.hi, 1000.0);
        assert_eq!(f.ticks, vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        // Two decades get 2s and 5s between the powers of ten; more do not.
        let f = Frame::new(&Axis::log("y"), &[0.3, 9.0]);
        assert_eq!((f.lo, f.hi), (0.1, 10.0));
        assert!(f.ticks.contains(&0.2) && f.ticks.contains(&5.0));
        let f = Frame::new(&Axis::log("y"), &[0.3, 45.0]);
        assert_eq!(f.ticks, vec![0.1, 1.0, 10.0, 100.0]);
        let f = Frame::new(&Axis::spectrum(), &[1.0, 12_000.0]);
        assert_eq!((f.lo, f.hi), (1.0, 100_000.0));
        assert_eq!(f.label(1000.0), "99.9%");
        assert_eq!(f.label(2.0), "50%");
        assert_eq!(f.label(1.0), "0%");
    }

    #[test]
    fn charts_draw_series_and_escape_text() {
        let c = Chart {
            kind: "throughput",
            title: "reads <&> writes".into(),
            x: Axis::zero_based("time (s)"),
            y: Axis::zero_based("ops/s"),
            series: vec![
                Series::line(
                    "read",
                    PALETTE[0],
                    vec![(0.5, 10.0), (1.5, f64::NAN), (2.5, 12.0)],
                ),
                Series::line("none", PALETTE[1], vec![]),
            ],
            marks: vec![Mark::Span {
                from: 0.0,
                to: 1.0,
                label: "warm-up".into(),
            }],
        };
        let svg = c.svg(3);
        assert!(svg.starts_with("<svg class=\"plot\" data-kind=\"throughput\""));
        assert!(svg.contains("reads &lt;&amp;&gt; writes"));
        // The empty series draws nothing; the gap splits the path into
        // two pieces of one point each: a move to each, no line between.
        assert_eq!(svg.matches("class=\"series\"").count(), 1);
        let d = svg
            .split("class=\"series\"")
            .nth(1)
            .and_then(|p| p.split(" d=\"").nth(1))
            .and_then(|p| p.split('"').next())
            .unwrap_or_else(|| panic!("no path data in {svg}"));
        let commands: Vec<char> = d.chars().filter(char::is_ascii_alphabetic).collect();
        assert_eq!(commands, ['M', 'M'], "path {d:?}");
        assert!(svg.contains("warm-up"));
        assert!(svg.contains("plot-clip-3"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(12_500.0), "12.5k");
        assert_eq!(short_number(2_000_000.0), "2M");
        assert_eq!(short_number(0.05), "0.05");
        assert_eq!(short_number(250.0), "250");
        assert_eq!(short_number(1.5), "1.5");
    }
}
