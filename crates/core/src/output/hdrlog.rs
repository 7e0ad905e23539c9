//! HdrHistogram interval logs as Java's `HistogramLogWriter` writes them,
//! for `HistogramLogProcessor` and the HdrHistogram plotters:
//!
//! ```text
//! #[Logged with sojourn 0.1.0: run 0193..., read/update]
//! #[Histogram log format version 1.3]
//! #[StartTime: 1763723756.123 (seconds since epoch), Fri Nov 21 11:15:56 UTC 2025]
//! #[BaseTime: 1763723756.123 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=read-service,0.000,1.000,2.097,HISTFAAAA...
//! ```
//!
//! One line per interval, operation kind and latency kind (tags
//! `read-service`, `read-response`, ...), timestamps in seconds since
//! BaseTime (the run's first operation), the maximum in milliseconds (Java's
//! default `maxValueUnitRatio` of 10^6 on nanosecond values), and the
//! interval's histogram in the compressed V2 encoding, in nanoseconds.
//! Several runs in one log get their run id's first 8 characters as a tag
//! prefix (`0193ab12-read-service`), all relative to the earliest start.

use std::io;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;

use crate::run_record::RunRecord;

use super::export::Export;

/// Java's `maxValueUnitRatio`: nanoseconds to milliseconds.
const MAX_VALUE_UNIT_RATIO: f64 = 1e6;

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// `java.util.Date.toString()` in UTC: `Fri Nov 21 11:15:56 UTC 2025`.
fn java_date(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let s = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    let days = s.div_euclid(86_400);
    let rem = s.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{} {} {d:02} {:02}:{:02}:{:02} UTC {y}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Write one log covering `runs` (normally one run, or the client
/// processes of one run merged first): one tag per operation kind and
/// latency kind.
pub fn write(runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
    let Some(base) = runs.iter().map(|r| r.meta().started_at).min() else {
        return Ok(());
    };
    let ids: Vec<&str> = runs.iter().map(|r| r.id().as_str()).collect();
    writeln!(
        out,
        "#[Logged with sojourn {}: run {}]",
        env!("CARGO_PKG_VERSION"),
        ids.join(" ")
    )?;
    writeln!(out, "#[Histogram log format version 1.3]")?;
    writeln!(
        out,
        "#[StartTime: {:.3} (seconds since epoch), {}]",
        secs(base),
        java_date(base)
    )?;
    writeln!(out, "#[BaseTime: {:.3} (seconds since epoch)]", secs(base))?;
    writeln!(
        out,
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
    )?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut lines: Vec<(f64, String)> = Vec::new();
    for run in runs {
        let prefix = if runs.len() > 1 {
            format!("{}-", &run.id().as_str()[..run.id().as_str().len().min(8)])
        } else {
            String::new()
        };
        let offset = run
            .meta()
            .started_at
            .duration_since(base)
            .unwrap_or_default()
            .as_secs_f64();
        for iv in &run.intervals {
            let start = offset + iv.start.as_secs_f64();
            for (kind, s) in iv.stats.kinds() {
                for (latency, h) in [("service", &s.ok.service), ("response", &s.ok.response)] {
                    let max = if h.is_empty() { 0 } else { h.max() };
                    lines.push((
                        start,
                        format!(
                            "Tag={prefix}{}-{latency},{start:.3},{:.3},{:.3},{}",
                            kind.name(),
                            iv.length.as_secs_f64(),
                            max as f64 / MAX_VALUE_UNIT_RATIO,
                            b64.encode(crate::hist_codec::encode(h))
                        ),
                    ));
                }
            }
        }
    }
    // Java's readers expect intervals in start order; a stable sort keeps
    // the kinds of one interval in YCSB's order.
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (_, line) in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// One interval log of every run's histograms.
pub struct HdrLog;

impl Export for HdrLog {
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
        write(runs, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_as_java_prints_them() {
        assert_eq!(java_date(UNIX_EPOCH), "Thu Jan 01 00:00:00 UTC 1970");
        let t = UNIX_EPOCH + Duration::from_secs(1_441_812_279);
        assert_eq!(java_date(t), "Wed Sep 09 15:24:39 UTC 2015");
    }
}
