//! The report's interactive side: uPlot, inlined unchanged, the data of
//! each chart over time as JSON safe inside `<script>`, and the page's
//! script that builds the uPlot charts from it (and, with `#selftest` in
//! the URL, hovers each one for the tests, which a headless browser
//! cannot do).

use serde_json::{json, Value};

use crate::svg::{Chart, Mark, Scale};

/// uPlot, inlined into every report (see `assets/README.md`).
pub(super) const UPLOT_VERSION: &str = "1.6.32";
pub(super) const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
pub(super) const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
pub(super) const UPLOT_LICENSE: &str = include_str!("../../assets/uplot/LICENSE");

/// How many significant digits the interactive charts keep: their hover
/// shows the number as stored; enough for any target a run names and more
/// than the histograms resolve (three), without the binary noise of a
/// quotient's last digits.
pub(super) const CHART_DIGITS: i32 = 6;

/// `v` to `digits` significant digits, as the nearest double.
pub(super) fn round_significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = digits - 1 - v.abs().log10().floor() as i32;
    if e >= 0 {
        let m = 10f64.powi(e);
        (v * m).round() / m
    } else {
        let m = 10f64.powi(-e);
        (v / m).round() * m
    }
}

/// A time-series chart's data and settings for the page's script (uPlot):
/// per series its own x and y (uPlot joins them on x, so a rate profile's
/// fine steps sit beside interval midpoints), `null` where the SVG leaves
/// a gap, the warm-up spans and the vertical lines (the history's change
/// points). `None` when no series has a point.
pub(super) fn chart_spec(c: &Chart) -> Option<Value> {
    let log = c.y.scale == Scale::Log;
    let mut points = 0usize;
    let series: Vec<Value> = c
        .series
        .iter()
        .map(|s| {
            let mut xs = Vec::with_capacity(s.points.len());
            let mut ys = Vec::with_capacity(s.points.len());
            for &(x, y) in s.points.iter().filter(|(x, _)| x.is_finite()) {
                xs.push(json!((x * 1000.0).round() / 1000.0));
                if y.is_finite() && (!log || y > 0.0) {
                    points += 1;
                    ys.push(json!(round_significant(y, CHART_DIGITS)));
                } else {
                    ys.push(Value::Null);
                }
            }
            json!({
                "label": s.name,
                "color": s.color,
                "dashed": s.dashed,
                "x": xs,
                "y": ys,
            })
        })
        .collect();
    if points == 0 {
        return None;
    }
    let spans: Vec<Value> = c
        .marks
        .iter()
        .filter_map(|m| match m {
            Mark::Span { from, to, label } => Some(json!({
                "from": from, "to": to, "label": label
            })),
            _ => None,
        })
        .collect();
    let lines: Vec<Value> = c
        .marks
        .iter()
        .filter_map(|m| match m {
            Mark::VLine { x, label, color } => Some(json!({
                "x": x, "label": label, "color": color
            })),
            _ => None,
        })
        .collect();
    Some(json!({
        "title": c.title,
        "x": { "label": c.x.label },
        "y": { "label": c.y.label, "log": log, "zero": c.y.from_zero && !log },
        "series": series,
        "spans": spans,
        "lines": lines,
    }))
}

/// JSON that is safe inside `<script>`: no `<`, `>` or `&` anywhere (in
/// JSON they can only be inside strings, where `\u003c` means the same),
/// so no label can close the element or open a comment, and the line and
/// paragraph separators escaped for older parsers.
pub(super) fn script_json(v: &Value) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page's script: the uPlot charts built from each time series' data,
/// the legend toggles, `data-rendered`, and the `#selftest` hover check
/// (with what overflows the window, `data-overflow`).
pub(super) const SCRIPT: &str = r#"
(function () {
  var body = document.body;
  var plots = document.querySelectorAll('svg.plot');
  var drawn = 0;
  plots.forEach(function (svg) {
    if (svg.querySelector('path.series')) { drawn += 1; }
    svg.querySelectorAll('.legend-item').forEach(function (item) {
      item.addEventListener('click', function () {
        var off = item.classList.toggle('off');
        svg.querySelectorAll('[data-series="' + item.getAttribute('data-series') + '"]').forEach(function (el) {
          if (el !== item) { el.style.display = off ? 'none' : ''; }
        });
      });
    });
  });
  body.setAttribute('data-plots', String(plots.length));
  body.setAttribute('data-rendered', String(drawn));

  // The charts over time, rebuilt with uPlot from the data beside each SVG;
  // the SVG stays (hidden) for printing, and shows wherever this fails.
  if (typeof uPlot !== 'function') { return; }
  var value = function (u, v) { return v == null ? '--' : String(v); };
  function size(fig) {
    var w = fig.clientWidth > 0 ? fig.clientWidth : 760;
    return { width: w, height: Math.round(Math.max(220, Math.min(400, w * 0.42))) };
  }
  // Warm-up spans under the grid and lines, as the SVG draws them.
  function spans(spec) {
    return function (u) {
      var ctx = u.ctx, b = u.bbox, px = uPlot.pxRatio;
      ctx.save();
      spec.spans.forEach(function (m) {
        var a = Math.max(b.left, u.valToPos(m.from, 'x', true));
        var z = Math.min(b.left + b.width, u.valToPos(m.to, 'x', true));
        if (!(z > a)) { return; }
        ctx.fillStyle = '#eeeeee';
        ctx.fillRect(a, b.top, z - a, b.height);
        ctx.fillStyle = '#777777';
        ctx.font = Math.round(11 * px) + 'px system-ui, sans-serif';
        ctx.fillText(m.label, a + 4 * px, b.top + 14 * px);
      });
      ctx.restore();
    };
  }
  // Vertical lines over the data (the history's change points), labelled.
  function lines(spec) {
    return function (u) {
      var ctx = u.ctx, b = u.bbox, px = uPlot.pxRatio;
      ctx.save();
      spec.lines.forEach(function (m) {
        var x = u.valToPos(m.x, 'x', true);
        if (!(x >= b.left && x <= b.left + b.width)) { return; }
        ctx.strokeStyle = m.color;
        ctx.lineWidth = 1.5 * px;
        ctx.setLineDash([4 * px, 3 * px]);
        ctx.beginPath();
        ctx.moveTo(x, b.top);
        ctx.lineTo(x, b.top + b.height);
        ctx.stroke();
        ctx.fillStyle = m.color;
        ctx.font = Math.round(11 * px) + 'px system-ui, sans-serif';
        ctx.textAlign = 'left';
        ctx.textBaseline = 'alphabetic';
        ctx.fillText(m.label, x + 4 * px, b.top + b.height - 6 * px);
      });
      ctx.restore();
    };
  }
  // A history's x is a point's position; it is shown as the point's key.
  function named(names) {
    return {
      value: function (u, v) { return v == null ? '--' : (names[v - 1] != null ? names[v - 1] : String(v)); },
      ticks: function (u, splits) {
        return splits.map(function (v) { return Number.isInteger(v) && names[v - 1] != null ? names[v - 1] : ''; });
      }
    };
  }
  function build(fig) {
    var spec = JSON.parse(fig.querySelector('script.chart-data').textContent);
    // Each series has its own x; joined, a series' missing points are
    // undefined (lines pass over them) and its gaps stay null (a break).
    var data = uPlot.join(spec.series.map(function (s) { return [s.x, s.y]; }));
    var names = spec.x.names ? named(spec.x.names) : null;
    var series = [{ label: spec.x.label, value: names ? names.value : value }];
    spec.series.forEach(function (s) {
      var o = { label: s.label, stroke: s.color, width: 2, value: value };
      if (s.dashed) { o.dash = [6, 4]; }
      series.push(o);
    });
    var y = spec.y.log ? { distr: 3, log: 10 } : {
      range: function (u, min, max) {
        var lo = min == null ? 0 : (spec.y.zero ? Math.min(0, min) : min);
        var hi = max == null ? 1 : max;
        if (hi <= lo) { hi = lo + (lo === 0 ? 1 : Math.abs(lo) * 0.1); }
        return [lo, hi + (hi - lo) * 0.05];
      }
    };
    var grid = { stroke: '#e3e3e3', width: 1 };
    var xAxis = { label: spec.x.label, stroke: '#444444', grid: grid, ticks: grid };
    if (names) {
      // Whole positions only, so that every tick is a point's key.
      xAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
      xAxis.values = names.ticks;
    }
    var opts = {
      title: spec.title,
      width: size(fig).width,
      height: size(fig).height,
      scales: { x: { time: false }, y: y },
      axes: [
        xAxis,
        { label: spec.y.label, stroke: '#444444', grid: grid, ticks: grid, size: 60 }
      ],
      series: series,
      hooks: { drawClear: [spans(spec)], draw: [lines(spec)] }
    };
    var u = new uPlot(opts, data, fig);
    fig.classList.add('live');
    if (spec.links) {
      // A click on a point opens the section of its (first) run.
      u.over.addEventListener('click', function () {
        var x = u.cursor.idx == null ? null : u.data[0][u.cursor.idx];
        var id = Number.isInteger(x) ? spec.links[x - 1] : null;
        var run = id ? document.getElementById('run-' + id) : null;
        if (!run) { return; }
        var details = run.querySelector('details');
        if (details) { details.open = true; }
        location.hash = 'run-' + id;
      });
    }
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        var s = size(fig);
        if (fig.clientWidth > 0 && Math.abs(s.width - u.width) > 1) { u.setSize(s); }
      }).observe(fig);
    }
    return { id: fig.getAttribute('data-chart'), u: u };
  }
  var built = [];
  document.querySelectorAll('figure.chart[data-chart]').forEach(function (fig) {
    built.push(build(fig));
  });

  // What a hover shows, for a browser that cannot hover: on each chart the
  // cursor moves to the middle point of its first series, and every
  // series' legend value is written down with the x it belongs to.
  if (location.hash !== '#selftest') { return; }
  Promise.resolve().then(function () {
    var out = [];
    built.forEach(function (c) {
      var u = c.u, si = 1, at = null;
      for (; si < u.data.length && at === null; si++) {
        var idx = [];
        u.data[si].forEach(function (v, i) { if (v != null) { idx.push(i); } });
        if (idx.length) { at = [si, idx[Math.floor(idx.length / 2)], idx.length]; }
      }
      if (at === null) { out.push(c.id + '|none'); return; }
      u.setCursor({ left: u.valToPos(u.data[0][at[1]], 'x'), top: u.valToPos(u.data[at[0]][at[1]], 'y') });
      var rows = u.root.querySelectorAll('.u-legend .u-series');
      for (var s = 1; s < u.series.length; s++) {
        var i = u.cursor.idxs ? u.cursor.idxs[s] : u.cursor.idx;
        var x = i == null ? '' : String(u.data[0][i]);
        out.push([c.id, s - 1, x, rows[s].querySelector('.u-value').textContent, s === at[0] ? at[2] : ''].join('|'));
      }
    });
    // What does not fit the window: a table scrolled sideways in its box,
    // or the page itself wider than the window.
    var wide = [];
    document.querySelectorAll('.scroll').forEach(function (d) {
      if (d.offsetParent !== null && d.scrollWidth > d.clientWidth + 1) {
        var t = d.querySelector('table');
        wide.push(t && t.className ? t.className : 'table');
      }
    });
    var root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1) { wide.push('page'); }
    body.setAttribute('data-overflow', wide.join(','));
    body.setAttribute('data-page-width', String(root.clientWidth));
    body.setAttribute('data-uplot', String(document.querySelectorAll('.uplot').length));
    body.setAttribute('data-resources', String(performance.getEntriesByType('resource').length));
    body.setAttribute('data-selftest', out.join(';'));
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_a_script_cannot_end_it() {
        let hostile = "</script><script>alert(1)</script><!-- & \u{2028} \"";
        let v = json!({ "label": hostile, "x": [1.5] });
        let s = script_json(&v);
        for c in ['<', '>', '&', '\u{2028}'] {
            assert!(!s.contains(c), "{c:?} in {s}");
        }
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        // The inlined library and its licence hold nothing that would end
        // their elements early either (the licence sits in a comment).
        for text in [UPLOT_JS, UPLOT_CSS, UPLOT_LICENSE] {
            assert!(!text.contains("</"));
        }
        assert!(!UPLOT_LICENSE.contains("*/"));
        assert!(UPLOT_JS.contains(&format!("(v{UPLOT_VERSION})")));
    }

    #[test]
    fn rounding_keeps_significant_digits() {
        assert_eq!(round_significant(123_456.0, 4), 123_500.0);
        assert_eq!(round_significant(0.012_345_6, 4), 0.01235);
        assert_eq!(round_significant(-9.999_9, 4), -10.0);
        assert_eq!(round_significant(0.0, 4), 0.0);
    }
}
