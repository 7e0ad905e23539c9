//! What the commands that read the store share: which stored runs a
//! `--label`/`--since` selection names, and how `--by`, `--figure`,
//! `--max-pvalue` and `--min-change` make a history of them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use sojourn_report::history::Plan;
use sojourn_session::parse_label;
use sojourn_store::Filter;

use crate::cli::SeriesArgs;

/// `--since`: a date or date-time in UTC, or a time ago.
fn parse_since(s: &str, now: SystemTime) -> Result<SystemTime> {
    let bad = || {
        anyhow::anyhow!(
            "--since {s:?}: expected a date (2025-11-21), a UTC date-time \
             (2025-11-21T10:00:00Z) or a time ago (90s, 30m, 2h, 7d, 2w)"
        )
    };
    if let Some(unit) = s.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        if let Ok(n) = s[..s.len() - 1].parse::<u64>() {
            let secs = match unit {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86_400,
                'w' => 7 * 86_400,
                _ => return Err(bad()),
            };
            return Ok(now - Duration::from_secs(n.saturating_mul(secs)));
        }
    }
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, t.trim_end_matches('Z')),
        None => (s, ""),
    };
    let nums = |text: &str, sep: char| -> Option<Vec<i64>> {
        text.split(sep).map(|p| p.parse::<i64>().ok()).collect()
    };
    let d = nums(date, '-').filter(|d| d.len() == 3).ok_or_else(bad)?;
    let t = if time.is_empty() {
        vec![0, 0, 0]
    } else {
        let mut t = nums(time, ':')
            .filter(|t| (2..=3).contains(&t.len()))
            .ok_or_else(bad)?;
        t.resize(3, 0);
        t
    };
    let (y, m, day) = (d[0], d[1], d[2]);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || t[0] > 23 || t[1] > 59 || t[2] > 60 {
        return Err(bad());
    }
    // Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2];
    if secs < 0 {
        return Err(bad());
    }
    Ok(UNIX_EPOCH + Duration::from_secs(secs as u64))
}

/// The filter of `--label KEY=VALUE` and `--since WHEN`.
pub fn run_filter(labels: &[String], since: Option<&str>) -> Result<Filter> {
    Ok(Filter {
        labels: labels
            .iter()
            .map(|l| parse_label(l))
            .collect::<Result<_>>()?,
        since: since
            .map(|s| parse_since(s, SystemTime::now()))
            .transpose()?,
        ..Filter::default()
    })
}

/// The history `history` and `report --history` make of their runs.
pub fn series_plan(s: &SeriesArgs, last: Option<usize>) -> Result<Plan> {
    Ok(Plan::new(
        s.by.clone(),
        &s.figures,
        s.max_pvalue,
        s.min_change,
        last,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_dates_and_ages() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            parse_since("2h", now).unwrap(),
            now - Duration::from_secs(7200)
        );
        assert_eq!(
            parse_since("1970-01-02", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(86_400)
        );
        assert_eq!(
            parse_since("2020-12-29T17:39:19Z", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(1_609_263_559)
        );
        assert_eq!(
            parse_since("2000-02-29 00:00", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(951_782_400)
        );
        for bad in ["yesterday", "2h30", "2020-13-01", "5y", ""] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
    }
}
