//! A commands run as memtier_benchmark reports one (`--format memtier`,
//! and what `sojourn memtier` prints): its run information lines and its
//! "ALL STATS" table (Type, Ops/sec, Hits/sec, Misses/sec, Avg. Latency,
//! the percentiles asked, KB/sec), in its layout and number formats; and
//! [`json`], the shape of its `--json-out-file`.
//!
//! A run of SET and GET templates alone (memtier's `--ratio`) is shown as
//! memtier shows its own: rows Sets, Gets, Waits and Totals, a GET of a
//! key not there counted as a miss. Other templates get a row each, named
//! as memtier names an arbitrary command's (`HSET` → `Hsets`).
//!
//! Where the figures differ in meaning the table says sojourn's: latency
//! is response time (from the intended start under a rate, where memtier
//! times from the send), and KB/sec is `---` (sojourn does not count the
//! bytes on the wire). A run of another workload is printed as YCSB's
//! summary.

use std::io::{self, Write};

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use super::export::Export;
use crate::backend::Status;
use crate::histograms::{new_histogram, OpStats, Stats};
use crate::op::OpKind;
use crate::run_record::RunRecord;

/// The export (see the module doc).
pub struct MemtierSummary;

impl Export for MemtierSummary {
    fn write(&self, runs: &[RunRecord], out: &mut dyn Write) -> io::Result<()> {
        for run in runs {
            if !is_commands(run) {
                super::ycsb::Summary.write(std::slice::from_ref(run), out)?;
                continue;
            }
            info_lines(run, out)?;
            table(run, "ALL STATS", out)?;
            own_lines(run, out)?;
        }
        Ok(())
    }
}

/// sojourn's own lines after the table, each starting with `#`: service
/// time beside the table's response time, and the failures memtier's
/// table has no column for, in the database's words.
fn own_lines(run: &RunRecord, out: &mut dyn Write) -> io::Result<()> {
    let total = run.totals_or_intervals();
    let mut service = new_histogram();
    for (_, s) in total.kinds() {
        let _ = service.add(&s.all().service);
    }
    if !service.is_empty() {
        let q = |p: f64| ms(service.value_at_quantile(p) as f64);
        writeln!(
            out,
            "# sojourn: latency above is response time{}; service time p50 {:.3} ms, p99 {:.3} ms, \
             p99.9 {:.3} ms",
            if run.meta().target.is_some() {
                ", from each request's intended start"
            } else {
                ""
            },
            q(0.5),
            q(0.99),
            q(0.999)
        )?;
    }
    let start = run.meta().started_at;
    for (kind, s) in total.kinds() {
        for c in s.causes(start) {
            if c.status == Status::NotFound.ycsb_name() {
                continue;
            }
            writeln!(
                out,
                "# sojourn: {} failed {}: {}",
                memtier_name(kind.name()),
                c.count,
                c.text.as_deref().unwrap_or(c.status)
            )?;
        }
    }
    Ok(())
}

fn is_commands(run: &RunRecord) -> bool {
    run.meta()
        .properties
        .get("workload")
        .is_some_and(|w| w.eq_ignore_ascii_case("commands"))
}

/// One row of the table: its name and the operations it sums.
struct Row {
    name: String,
    stats: Option<OpStats>,
    /// Hits and misses, where shown (the GETs of a ratio run, and its
    /// totals, which are the GETs').
    hits: Option<(u64, u64)>,
}

/// The run's threads, connections per thread and requests per client (or
/// seconds), as memtier's options gave them.
struct Shape {
    threads: u64,
    per_thread: u64,
    requests: Option<u64>,
    seconds: u64,
}

fn prop<'a>(run: &'a RunRecord, key: &str) -> Option<&'a str> {
    run.meta().properties.get(key).map(String::as_str)
}

fn num(run: &RunRecord, key: &str) -> Option<u64> {
    prop(run, key).and_then(|v| v.trim().parse().ok())
}

fn shape(run: &RunRecord) -> Shape {
    let workers = run.meta().threads.max(1);
    let threads = num(run, "runtime.threads").filter(|&t| t > 0).unwrap_or(1);
    // Pipelined: the sockets are the connections memtier counts.
    let sockets = num(run, "connections").unwrap_or(workers);
    let per_thread = (sockets / threads).max(1);
    let requests = num(run, "operationcount")
        .filter(|&n| n > 0)
        .map(|n| n / (threads * per_thread));
    let seconds = num(run, "maxexecutiontime").unwrap_or(0);
    Shape {
        threads,
        per_thread,
        requests,
        seconds,
    }
}

fn info_lines(run: &RunRecord, out: &mut dyn Write) -> io::Result<()> {
    let s = shape(run);
    writeln!(out, "{:<9} Threads", s.threads)?;
    writeln!(out, "{:<9} Connections per thread", s.per_thread)?;
    match s.requests {
        Some(n) => writeln!(out, "{n:<9} Requests per client"),
        None => writeln!(out, "{:<9} Seconds", s.seconds),
    }
}

/// The rows memtier would print for the run.
fn rows(total: &Stats) -> Vec<Row> {
    let kinds: Vec<(OpKind, &OpStats)> = total.kinds().collect();
    let names: Vec<&str> = kinds.iter().map(|(k, _)| k.name()).collect();
    let ratio = !names.is_empty() && names.iter().all(|n| matches!(*n, "SET" | "GET"));
    let op = |name: &str| OpKind::find(name).and_then(|k| total.op(k)).cloned();
    let mut rows = Vec::new();
    let mut hits = None;
    if ratio {
        let gets = op("GET");
        hits = Some(gets.as_ref().map_or((0, 0), |g| {
            (g.count_of(Status::Ok), g.count_of(Status::NotFound))
        }));
        rows.push(Row {
            name: "Sets".into(),
            stats: op("SET"),
            hits: None,
        });
        rows.push(Row {
            name: "Gets".into(),
            stats: gets,
            hits,
        });
        rows.push(Row {
            name: "Waits".into(),
            stats: None,
            hits: None,
        });
    } else {
        // In the order the templates named their kinds.
        for (k, stats) in kinds {
            rows.push(Row {
                name: memtier_name(k.name()),
                stats: Some(stats.clone()),
                hits: None,
            });
        }
    }
    let mut all = OpStats::new();
    for r in rows.iter().filter_map(|r| r.stats.as_ref()) {
        all.add(r);
    }
    rows.push(Row {
        name: "Totals".into(),
        stats: Some(all),
        hits,
    });
    rows
}

/// memtier's name for a command's row: `HGETALL` → `Hgetalls`.
pub fn memtier_name(command: &str) -> String {
    let base = command
        .split('-')
        .next()
        .unwrap_or(command)
        .to_ascii_lowercase();
    let mut c = base.chars();
    match c.next() {
        Some(f) => format!("{}{}s", f.to_ascii_uppercase(), c.as_str()),
        None => "s".into(),
    }
}

/// Every operation's latency, failed or not (memtier times them all).
fn latencies(s: &OpStats) -> Histogram<u64> {
    s.all().response
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// memtier's column title for percentile `q`: `p50`, `p99.9` (its
/// digits counted in single precision, as memtier counts them).
fn percentile_title(q: f64) -> String {
    let q = q as f32;
    let mut digits = 0;
    let mut frac = q - q.trunc();
    while frac.abs() > 0.001 && digits < 3 {
        frac *= 10.0;
        digits += 1;
        frac -= frac.trunc();
    }
    format!("p{q:.digits$}")
}

fn percentiles(run: &RunRecord) -> Vec<f64> {
    let p = &run.meta().percentiles;
    if p.is_empty() {
        vec![50.0, 99.0, 99.9]
    } else {
        p.clone()
    }
}

fn table(run: &RunRecord, header: &str, out: &mut dyn Write) -> io::Result<()> {
    let total = run.totals_or_intervals();
    let secs = run.measured().as_secs_f64().max(1e-9);
    let rows = rows(&total);
    let qs = percentiles(run);
    let type_width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(6) + 1;
    let ratio = rows.iter().any(|r| r.hits.is_some());
    // Column widths as memtier's: each printed width plus one blank.
    let mut widths = vec![type_width, 12];
    if ratio {
        widths.extend([12, 12]);
    }
    widths.push(15);
    widths.extend(qs.iter().map(|_| 15));
    widths.push(12);
    writeln!(out, "\n\n{header}")?;
    writeln!(
        out,
        "{}",
        "=".repeat(widths.iter().map(|w| w + 1).sum::<usize>())
    )?;
    let mut head = format!("{:<type_width$} {:>12} ", "Type", "Ops/sec");
    if ratio {
        head.push_str(&format!("{:>12} {:>12} ", "Hits/sec", "Misses/sec"));
    }
    head.push_str(&format!("{:>15} ", "Avg. Latency"));
    for q in &qs {
        head.push_str(&format!(
            "{:>15} ",
            format!("{} Latency", percentile_title(*q))
        ));
    }
    head.push_str(&format!("{:>12} ", "KB/sec"));
    writeln!(out, "{head}")?;
    writeln!(
        out,
        "{}",
        widths.iter().map(|w| "-".repeat(w + 1)).collect::<String>()
    )?;
    for r in &rows {
        let mut line = format!("{:<type_width$} ", r.name);
        let ops = r.stats.as_ref().map_or(0, OpStats::count);
        line.push_str(&format!("{:>12.2} ", ops as f64 / secs));
        if ratio {
            match r.hits {
                Some((h, m)) => line.push_str(&format!(
                    "{:>12.2} {:>12.2} ",
                    h as f64 / secs,
                    m as f64 / secs
                )),
                None => line.push_str(&format!("{:>12} {:>12} ", "---", "---")),
            }
        }
        match r.stats.as_ref().filter(|s| s.count() > 0) {
            Some(s) => {
                let h = latencies(s);
                line.push_str(&format!("{:>15.5} ", ms(h.mean())));
                for q in &qs {
                    let v = h.value_at_quantile(q / 100.0) as f64;
                    line.push_str(&format!("{:>15.5} ", ms(v)));
                }
            }
            None => {
                for _ in 0..=qs.len() {
                    line.push_str(&format!("{:>15} ", "---"));
                }
            }
        }
        line.push_str(&format!("{:>12} ", "---"));
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// memtier's JSON (`--json-out-file`): `configuration`, `run information`
/// and `ALL STATS` with its `Runtime` and a member per row, each with the
/// fields memtier writes. Sizes on the wire are not counted: the KB/sec
/// fields are null. `configuration` holds what the run's properties say,
/// never a password (`authenticate` is empty or `****`).
pub fn json(run: &RunRecord, configuration: Value) -> Value {
    let total = run.totals_or_intervals();
    let secs = run.measured().as_secs_f64().max(1e-9);
    let s = shape(run);
    let qs = percentiles(run);
    let started_ms = run
        .meta()
        .started_at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let duration_ms = run.measured().as_millis() as u64;
    let mut stats = Map::new();
    stats.insert(
        "Runtime".into(),
        json!({
            "Start time": started_ms,
            "Finish time": started_ms + duration_ms,
            "Total duration": duration_ms,
            "Time unit": "MILLISECONDS",
            "Interrupted": if run.summary.status == crate::run_record::RunStatus::Interrupted {
                "true"
            } else {
                "false"
            },
        }),
    );
    for r in rows(&total) {
        let empty = OpStats::new();
        let o = r.stats.as_ref().unwrap_or(&empty);
        let h = latencies(o);
        let count = o.count();
        let (hits, misses) = r.hits.unwrap_or((0, 0));
        let (hits_sec, misses_sec) = (hits as f64 / secs, misses as f64 / secs);
        let some = count > 0;
        let mean = if some { ms(h.mean()) } else { 0.0 };
        let mut pct = Map::new();
        for q in &qs {
            let v = if some {
                ms(h.value_at_quantile(q / 100.0) as f64)
            } else {
                0.0
            };
            // memtier writes `p%.3f` into seven bytes: `p50.00`.
            let mut key = format!("p{q:.3}");
            key.truncate(6);
            pct.insert(key, round3(v).into());
        }
        stats.insert(
            r.name.clone(),
            json!({
                "Count": count,
                "Ops/sec": round2(count as f64 / secs),
                "Hits/sec": round2(hits_sec),
                "Misses/sec": round2(misses_sec),
                "Connection Errors/sec": 0.0,
                "Connection Errors": 0,
                "Latency": round3(mean),
                "Average Latency": round3(mean),
                // In milliseconds, as memtier's.
                "Accumulated Latency": if some { (h.mean() * count as f64 / 1e6) as u64 } else { 0 },
                "Min Latency": if some { round3(ms(h.min() as f64)) } else { 0.0 },
                "Max Latency": if some { round3(ms(h.max() as f64)) } else { 0.0 },
                "KB/sec": Value::Null,
                "KB/sec RX/TX": Value::Null,
                "KB/sec RX": Value::Null,
                "KB/sec TX": Value::Null,
                "Time-Serie": {},
                "Percentile Latencies": pct,
            }),
        );
    }
    let mut info = Map::new();
    info.insert("Threads".into(), s.threads.into());
    info.insert("Connections per thread".into(), s.per_thread.into());
    match s.requests {
        Some(n) => info.insert("Requests per client".into(), n.into()),
        None => info.insert("Seconds".into(), s.seconds.into()),
    };
    info.insert("Format version".into(), 2.into());
    json!({
        "configuration": configuration,
        "run information": info,
        "ALL STATS": stats,
    })
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_titles_as_memtier_writes_them() {
        assert_eq!(memtier_name("HGETALL"), "Hgetalls");
        assert_eq!(memtier_name("SET-2"), "Sets");
        assert_eq!(percentile_title(50.0), "p50");
        assert_eq!(percentile_title(99.9), "p99.9");
    }
}
