//! The LIOPS figures of a run of the PGIO/SLOB workload, printed after the
//! YCSB summary and kept in the JSON report:
//!
//! ```text
//! # liops: 56493 selects of 1001 rows, 0 updates of 9 rows in 1000.0 s
//! # rows touched: 56549493 by selects, 0 by updates
//! # LIOPS (rows/s): 56549.5 (selects 56549.5, updates 0.0)
//! # max statement ms: select 89.1, update 0.0
//! # server/s: blks_read (RIOPS) 812.3, blks_hit 55737.2, ...
//! ```
//!
//! Every OK statement touched exactly its range (the workload counts any
//! other row count as UNEXPECTED_STATE), so rows touched are the OK counts
//! times the rows per statement, over the measured period (warm-up left
//! out). Server rates are the counters' change over the whole phase, the
//! samples taken as the phase's sessions start and end, divided by the
//! phase's duration (PGIO samples before its sessions start, which
//! inflates its rates). Every line starts with `#`, never `[`, so parsers
//! of YCSB's summary skip them.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::backend::counters::is_cpu;
use crate::executor::RunOutcome;
use crate::op::OpKind;
use crate::workload::LiopsConfig;

/// What a LIOPS run achieved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LiopsFigures {
    pub selects: u64,
    pub updates: u64,
    pub rows_per_select: u64,
    pub rows_per_update: u64,
    pub rows_selected: u64,
    pub rows_updated: u64,
    /// The measured period the rows per second are over.
    pub seconds: f64,
    /// Rows touched per second by selects and updates: the LIOPS figure.
    pub rows_per_sec: f64,
    pub select_rows_per_sec: f64,
    pub update_rows_per_sec: f64,
    /// The longest successful statement of each kind (service time).
    pub max_select_ms: f64,
    pub max_update_ms: f64,
    /// The server's counters per second of the phase (`blks_read` is
    /// PGIO's RIOPS, `blks_hit` its cache hits per second).
    pub server_per_sec: BTreeMap<String, f64>,
}

impl LiopsFigures {
    pub fn of(cfg: &LiopsConfig, outcome: &RunOutcome) -> LiopsFigures {
        let ok = |kind| {
            outcome
                .total
                .op(kind)
                .map_or(0, |s| s.count() - s.failures())
        };
        let max_ms = |kind| {
            outcome
                .total
                .op(kind)
                .filter(|s| !s.ok.service.is_empty())
                .map_or(0.0, |s| s.ok.service.max() as f64 / 1e6)
        };
        let (selects, updates) = (ok(OpKind::Scan), ok(OpKind::Update));
        let rows_selected = selects * cfg.select_rows();
        let rows_updated = updates * cfg.update_rows();
        let seconds = outcome.measured.as_secs_f64();
        let per_sec = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let phase = outcome.elapsed.as_secs_f64();
        let server_per_sec = outcome
            .server
            .as_ref()
            .filter(|_| phase > 0.0)
            .map(|s| {
                s.deltas
                    .iter()
                    .filter(|(name, _)| !is_cpu(name))
                    .map(|(name, d)| (name.clone(), d / phase))
                    .collect()
            })
            .unwrap_or_default();
        LiopsFigures {
            selects,
            updates,
            rows_per_select: cfg.select_rows(),
            rows_per_update: cfg.update_rows(),
            rows_selected,
            rows_updated,
            seconds,
            rows_per_sec: per_sec(rows_selected + rows_updated),
            select_rows_per_sec: per_sec(rows_selected),
            update_rows_per_sec: per_sec(rows_updated),
            max_select_ms: max_ms(OpKind::Scan),
            max_update_ms: max_ms(OpKind::Update),
            server_per_sec,
        }
    }

    /// The `#` lines printed after the summary.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# liops: {} selects of {} rows, {} updates of {} rows in {:.1} s",
            self.selects, self.rows_per_select, self.updates, self.rows_per_update, self.seconds
        );
        let _ = writeln!(
            out,
            "# rows touched: {} by selects, {} by updates",
            self.rows_selected, self.rows_updated
        );
        let _ = writeln!(
            out,
            "# LIOPS (rows/s): {:.1} (selects {:.1}, updates {:.1})",
            self.rows_per_sec, self.select_rows_per_sec, self.update_rows_per_sec
        );
        let _ = writeln!(
            out,
            "# max statement ms: select {:.1}, update {:.1}",
            self.max_select_ms, self.max_update_ms
        );
        if !self.server_per_sec.is_empty() {
            let named = |n: &str| match n {
                "blks_read" => "blks_read (RIOPS)".to_string(),
                "blks_hit" => "blks_hit (cache hits)".to_string(),
                other => other.to_string(),
            };
            // The block counters first: they are the point of the method.
            let mut names: Vec<&String> = self.server_per_sec.keys().collect();
            names.sort_by_key(|n| (!n.starts_with("blks_"), n.as_str()));
            let parts: Vec<String> = names
                .into_iter()
                .map(|n| format!("{} {:.1}", named(n), self.server_per_sec[n]))
                .collect();
            let _ = writeln!(out, "# server/s: {}", parts.join(", "));
        }
        out
    }
}
