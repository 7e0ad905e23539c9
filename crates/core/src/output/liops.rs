//! The LIOPS figures of a run of the PGIO/SLOB workload, printed after the
//! YCSB summary and kept in the JSON report:
//!
//! ```text
//! # liops: 56493 selects of 1001 rows, 0 updates of 9 rows in 1000.0 s
//! # rows touched: 56549493 by selects, 0 by updates
//! # LIOPS (rows/s): 56549.5 (selects 56549.5, updates 0.0); PGIO's select_blk_touch_cnt / Run time: 56493.0
//! # max statement ms: select 89.1, update 0.0
//! # server/s: blks_read (RIOPS) 812.3, blks_hit 55737.2, ...
//! ```
//!
//! With `liops.loop=server` the statement times are the server's own
//! (taken around each statement inside its loop), and the lines that name
//! a time say so: `# max statement ms (server-measured): ...` and a
//! `# statement times: server-measured ...` line, which also says how few
//! calls the client made.
//!
//! Every OK statement touched exactly its range (the workload counts any
//! other row count as UNEXPECTED_STATE), so rows touched are the OK counts
//! times the rows per statement, over the measured period (warm-up left
//! out). Server rates are the counters' change over the whole phase, the
//! samples taken as the phase's sessions start and end, divided by the
//! phase's duration (PGIO samples before its sessions start, which
//! inflates its rates).
//!
//! Then PGIO's own report, its names and units, so a PGIO user compares
//! like with like ([`PgioFigures`]): `runit.sh`'s per-session columns
//! summed over the sessions (maxima for the times), and its summary line:
//!
//! ```text
//! # pgio: loop_iterations | sql_selects | sql_updates | sql_select_max_tm | sql_update_max_tm | select_blk_touch_cnt | update_blk_touch_cnt
//! # pgio:           56493 |       56493 |           0 |        0.08912000 |        0.00000000 |             56493000 |                    0
//! # pgio: DBNAME:  yugabyte. 1 schemas, 1 threads(each). Run time: 1000 seconds. RIOPS >812< CACHE_HITS/s >55737<
//! ```
//!
//! Every line starts with `#`, never `[`, so parsers of YCSB's summary
//! skip them.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::backend::counters::is_cpu;
use crate::op::OpKind;
use crate::run_record::RunRecord;
use crate::workload::liops::LoopIn;
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
    /// PGIO's own rate: `select_blk_touch_cnt` per second of the phase
    /// (its `Run time`), the figure PGIO's write-ups quote.
    pub pgio_select_blk_per_sec: f64,
    /// The longest successful statement of each kind (service time).
    pub max_select_ms: f64,
    pub max_update_ms: f64,
    /// Where the sessions' loops ran (`liops.loop`): `client` or `server`.
    #[serde(rename = "loop")]
    pub loop_in: LoopIn,
    /// What measured the statement times in the histograms: `client`
    /// (sojourn, around each call) or `server` (the server's own loop,
    /// around each statement, no round trip in them).
    pub statement_times: LoopIn,
    /// Calls the client made in the run: one per session in the server
    /// loop, one per statement in the client loop.
    pub client_calls: u64,
    /// The server's counters per second of the phase (`blks_read` is
    /// PGIO's RIOPS, `blks_hit` its cache hits per second).
    pub server_per_sec: BTreeMap<String, f64>,
    /// The same run in PGIO's report's terms.
    pub pgio: PgioFigures,
}

/// A LIOPS run as PGIO's `runit.sh` reports one: the columns its sessions
/// return (`mypgio`'s `pgio_return`), summed over the sessions as PGIO's
/// summaries do, the longest statements the longest of any session; then
/// its summary line's figures. Counted as PGIO counts, so the figures read
/// against a PGIO run's: a statement's blocks are `WORK_UNIT` (or
/// `UPDATE_WORK_UNIT`), one fewer than the rows its `BETWEEN k AND k +
/// WORK_UNIT` touches (sojourn's rows touched). sojourn counts in
/// `sql_selects` and `sql_updates` only statements that touched their whole
/// range, and every statement in `loop_iterations`, so a difference is
/// statements that failed or found rows missing (PGIO stops at an error
/// and does not check row counts).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PgioFigures {
    /// Statements run, OK or not.
    pub loop_iterations: u64,
    pub sql_selects: u64,
    pub sql_updates: u64,
    /// The longest select and update, seconds to 10 ns (PGIO's
    /// `numeric(12,8)`), from the service-time histograms (three
    /// significant digits).
    pub sql_select_max_tm: f64,
    pub sql_update_max_tm: f64,
    /// `sql_selects × WORK_UNIT`.
    pub select_blk_touch_cnt: u64,
    /// `sql_updates × UPDATE_WORK_UNIT`.
    pub update_blk_touch_cnt: u64,
    /// The summary line's database: the one the run connected to, else
    /// `DBNAME`.
    pub dbname: String,
    pub schemas: u32,
    pub threads_per_schema: u32,
    /// The phase's duration in whole seconds, as PGIO's `Run time`.
    pub run_time_s: u64,
    /// `blks_read` and `blks_hit` per second of the phase, whole, as PGIO
    /// prints them; absent when the server does not count blocks.
    #[serde(rename = "RIOPS")]
    pub riops: Option<u64>,
    #[serde(rename = "CACHE_HITS_per_sec")]
    pub cache_hits_per_sec: Option<u64>,
}

impl PgioFigures {
    /// The column names of `runit.sh`'s session report, in its order.
    pub const COLUMNS: [&'static str; 7] = [
        "loop_iterations",
        "sql_selects",
        "sql_updates",
        "sql_select_max_tm",
        "sql_update_max_tm",
        "select_blk_touch_cnt",
        "update_blk_touch_cnt",
    ];

    /// The `# pgio:` lines.
    pub fn text(&self) -> String {
        let cells = [
            self.loop_iterations.to_string(),
            self.sql_selects.to_string(),
            self.sql_updates.to_string(),
            format!("{:.8}", self.sql_select_max_tm),
            format!("{:.8}", self.sql_update_max_tm),
            self.select_blk_touch_cnt.to_string(),
            self.update_blk_touch_cnt.to_string(),
        ];
        let values: Vec<String> = Self::COLUMNS
            .iter()
            .zip(&cells)
            .map(|(name, cell)| format!("{cell:>width$}", width = name.len()))
            .collect();
        let mut out = String::new();
        let _ = writeln!(out, "# pgio: {}", Self::COLUMNS.join(" | "));
        let _ = writeln!(out, "# pgio: {}", values.join(" | "));
        let _ = write!(
            out,
            "# pgio: DBNAME:  {}. {} schemas, {} threads(each). Run time: {} seconds.",
            self.dbname, self.schemas, self.threads_per_schema, self.run_time_s
        );
        if let (Some(riops), Some(hits)) = (self.riops, self.cache_hits_per_sec) {
            let _ = write!(out, " RIOPS >{riops}< CACHE_HITS/s >{hits}<");
        }
        out.push('\n');
        out
    }
}

/// Milliseconds as PGIO's `numeric(12,8)` seconds: to 10 ns, so the JSON
/// report holds what the text shows.
fn pgio_seconds(ms: f64) -> f64 {
    (ms * 1e5).round() / 1e8
}

/// The database a (redacted) URL names: its path, up to the query.
fn database_of(url: &str) -> Option<&str> {
    let after = &url[url.find("://")? + 3..];
    let after = &after[after.rfind('@').map_or(0, |i| i + 1)..];
    let path = &after[after.find('/')? + 1..];
    let db = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    (!db.is_empty()).then_some(db)
}

impl LiopsFigures {
    pub fn of(cfg: &LiopsConfig, run: &RunRecord) -> LiopsFigures {
        let ok = |kind| run.total.op(kind).map_or(0, |s| s.count() - s.failures());
        let max_ms = |kind| {
            run.total
                .op(kind)
                .filter(|s| !s.ok.service.is_empty())
                .map_or(0.0, |s| s.ok.service.max() as f64 / 1e6)
        };
        let all = |kind| run.total.op(kind).map_or(0, |s| s.count());
        let (selects, updates) = (ok(OpKind::Scan), ok(OpKind::Update));
        let rows_selected = selects * cfg.select_rows();
        let rows_updated = updates * cfg.update_rows();
        let seconds = run.measured().as_secs_f64();
        let per_sec = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let phase = run
            .summary
            .totals
            .as_ref()
            .map_or(seconds, |t| t.elapsed.as_secs_f64());
        let server_per_sec: BTreeMap<String, f64> = run
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
        let whole = |name: &str| server_per_sec.get(name).map(|v| v.floor() as u64);
        let pgio = PgioFigures {
            loop_iterations: all(OpKind::Scan) + all(OpKind::Update),
            sql_selects: selects,
            sql_updates: updates,
            sql_select_max_tm: pgio_seconds(max_ms(OpKind::Scan)),
            sql_update_max_tm: pgio_seconds(max_ms(OpKind::Update)),
            select_blk_touch_cnt: selects * cfg.work_unit,
            update_blk_touch_cnt: updates * cfg.update_work_unit,
            dbname: database_of(&run.meta().backend)
                .map(String::from)
                .or_else(|| cfg.dbname.clone())
                .unwrap_or_else(|| "-".to_string()),
            schemas: cfg.schemas,
            threads_per_schema: cfg.threads_per_schema,
            run_time_s: phase.round() as u64,
            riops: whole("blks_read"),
            cache_hits_per_sec: whole("blks_hit"),
        };
        let server_loop = cfg.loop_in == LoopIn::Server;
        // PGIO's Run time is the phase's; a run under a second (tests)
        // gets no rate rather than an infinite one.
        let pgio_select_blk_per_sec = if phase > 0.0 {
            pgio.select_blk_touch_cnt as f64 / phase
        } else {
            0.0
        };
        LiopsFigures {
            pgio_select_blk_per_sec,
            loop_in: cfg.loop_in,
            statement_times: cfg.loop_in,
            client_calls: if server_loop {
                cfg.run_sessions() as u64
            } else {
                pgio.loop_iterations
            },
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
            pgio,
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
            "# LIOPS (rows/s): {:.1} (selects {:.1}, updates {:.1}); PGIO's select_blk_touch_cnt \
             / Run time: {:.1}",
            self.rows_per_sec,
            self.select_rows_per_sec,
            self.update_rows_per_sec,
            self.pgio_select_blk_per_sec
        );
        let server = self.statement_times == LoopIn::Server;
        if server {
            let _ = writeln!(
                out,
                "# statement times: server-measured (inside the server's loop, no round trip); \
                 {} client call(s) for {} statements",
                self.client_calls, self.pgio.loop_iterations
            );
        }
        let _ = writeln!(
            out,
            "# max statement ms{}: select {:.1}, update {:.1}",
            if server { " (server-measured)" } else { "" },
            self.max_select_ms,
            self.max_update_ms
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
        out.push_str(&self.pgio.text());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_is_the_urls_path() {
        assert_eq!(database_of("postgres://u:***@h:5433/yb?x=1"), Some("yb"));
        assert_eq!(database_of("postgres://u:a/b@h/db"), Some("db"));
        assert_eq!(database_of("postgres://h"), None);
        assert_eq!(database_of("postgres://h/"), None);
        assert_eq!(database_of("memory:"), None);
    }

    #[test]
    fn pgio_lines_are_runit_columns_under_their_names() {
        let f = PgioFigures {
            loop_iterations: 56_493,
            sql_selects: 56_493,
            sql_updates: 0,
            sql_select_max_tm: 0.08912,
            sql_update_max_tm: 0.0,
            select_blk_touch_cnt: 56_493_000,
            update_blk_touch_cnt: 0,
            dbname: "yugabyte".into(),
            schemas: 1,
            threads_per_schema: 1,
            run_time_s: 1000,
            riops: Some(812),
            cache_hits_per_sec: Some(55_737),
        };
        let text = f.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines.iter().all(|l| l.starts_with("# pgio: ")));
        let names: Vec<&str> = lines[0][8..].split(" | ").collect();
        let values: Vec<&str> = lines[1][8..].split(" | ").map(str::trim).collect();
        assert_eq!(names, PgioFigures::COLUMNS);
        assert_eq!(
            values,
            [
                "56493",
                "56493",
                "0",
                "0.08912000",
                "0.00000000",
                "56493000",
                "0"
            ]
        );
        assert_eq!(lines[0].len(), lines[1].len());
        assert_eq!(
            lines[2],
            "# pgio: DBNAME:  yugabyte. 1 schemas, 1 threads(each). Run time: 1000 seconds. \
             RIOPS >812< CACHE_HITS/s >55737<"
        );
        let no_blocks = PgioFigures { riops: None, ..f };
        assert!(no_blocks.text().ends_with("Run time: 1000 seconds.\n"));
    }
}
