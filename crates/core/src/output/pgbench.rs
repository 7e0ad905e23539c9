//! A script run as pgbench reports one (`--format pgbench`, and what
//! `sojourn pgbench` prints): pgbench's summary lines, in its order and
//! formats, so that what parses pgbench's output reads sojourn's; then
//! sojourn's own lines, each starting with `#`: response time as well as
//! service time, and where the run is kept.
//!
//! Where pgbench's figures and sojourn's differ in meaning the lines say
//! sojourn's: `latency average` is the transactions' response time (from
//! their intended start under a rate, as pgbench's is under `-R`), and
//! there is no connection time (sojourn opens its connections before the
//! run). A run of another workload is printed as YCSB's summary.

use std::io::{self, Write};

use hdrhistogram::Histogram;

use super::export::Export;
use crate::histograms::{new_histogram, OpStats, Stats};
use crate::op::OpKind;
use crate::run_record::RunRecord;
use crate::workload::script::{self, SCALE_LABEL};

/// The export (see the module doc).
pub struct PgbenchSummary;

impl Export for PgbenchSummary {
    fn write(&self, runs: &[RunRecord], out: &mut dyn Write) -> io::Result<()> {
        for run in runs {
            let props = &run.meta().properties;
            match props.get("script") {
                Some(list) if run.meta().phase == "run" => summary(run, list, out)?,
                // A load prints nothing here, as `pgbench -i` prints
                // nothing on stdout.
                Some(_) => {}
                None => super::ycsb::Summary.write(std::slice::from_ref(run), out)?,
            }
        }
        Ok(())
    }
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn summary(run: &RunRecord, list: &str, out: &mut dyn Write) -> io::Result<()> {
    let m = run.meta();
    let prop = |k: &str| m.properties.get(k).map(String::as_str);
    let scripts = script::listed(list);
    let total = run.totals_or_intervals();
    let ops: Vec<(&script::Listed, Option<&OpStats>)> = scripts
        .iter()
        .map(|s| (s, OpKind::find(&s.name).and_then(|k| total.op(k))))
        .collect();
    let done: u64 = ops.iter().map(|(_, o)| o.map_or(0, ok_count)).sum();
    let failed: u64 = ops.iter().map(|(_, o)| o.map_or(0, |o| o.failures())).sum();
    let clients = m.threads.max(1);
    let title = match scripts.as_slice() {
        [one] => one.title.clone(),
        _ => "multiple scripts".into(),
    };
    writeln!(out, "transaction type: {title}")?;
    let scale = m
        .labels
        .get(SCALE_LABEL)
        .map(String::as_str)
        .or(prop("script.scale"))
        .unwrap_or("1");
    writeln!(out, "scaling factor: {scale}")?;
    writeln!(
        out,
        "query mode: {}",
        prop("script.protocol").unwrap_or("prepared")
    )?;
    writeln!(out, "number of clients: {clients}")?;
    let threads = prop("runtime.threads")
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|&t| t > 0)
        .unwrap_or(1)
        .min(clients);
    writeln!(out, "number of threads: {threads}")?;
    let max_tries = prop("script.max_tries").unwrap_or("1");
    writeln!(out, "maximum number of tries: {max_tries}")?;
    let count = prop("operationcount")
        .and_then(|c| c.parse::<u64>().ok())
        .filter(|&c| c > 0);
    match (count, prop("maxexecutiontime")) {
        (Some(c), _) => {
            writeln!(out, "number of transactions per client: {}", c / clients)?;
            writeln!(out, "number of transactions actually processed: {done}/{c}")?;
        }
        (None, d) => {
            writeln!(out, "duration: {} s", d.unwrap_or("0"))?;
            writeln!(out, "number of transactions actually processed: {done}")?;
        }
    }
    let all = done + failed;
    writeln!(
        out,
        "number of failed transactions: {failed} ({:.3}%)",
        100.0 * failed as f64 / all as f64
    )?;
    if max_tries != "1" {
        let retries: Vec<Retries> = scripts.iter().map(|s| Retries::of(s, &total)).collect();
        Retries::sum(&retries).write("", all, out)?;
    }
    if done == 0 {
        return own_lines(run, &total, &ops, out);
    }
    let whole = merged(ops.iter().filter_map(|(_, o)| *o));
    if let Some(limit) = prop("script.latency_limit_ms").and_then(|l| l.parse::<f64>().ok()) {
        let late = late(&whole.0, limit);
        writeln!(
            out,
            "number of transactions above the {limit:.1} ms latency limit: {late}/{done} ({:.3}%)",
            100.0 * late as f64 / done as f64
        )?;
    }
    writeln!(out, "latency average = {:.3} ms", ms(whole.0.mean()))?;
    writeln!(out, "latency stddev = {:.3} ms", ms(whole.0.stdev()))?;
    if let Some(lag) = total.lag.as_deref().filter(|l| !l.is_empty()) {
        writeln!(
            out,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            ms(lag.mean()),
            ms(lag.max() as f64)
        )?;
    }
    let secs = run.measured().as_secs_f64();
    writeln!(
        out,
        "tps = {:.6} (without initial connection time)",
        done as f64 / secs.max(1e-9)
    )?;
    let per_statement = prop("script.report") == Some("statements");
    if per_statement || scripts.len() > 1 {
        let weights: u64 = scripts.iter().map(|s| u64::from(s.weight)).sum();
        for (i, (s, o)) in ops.iter().enumerate() {
            let n = o.map_or(0, ok_count);
            let f = o.map_or(0, |o| o.failures());
            writeln!(out, "SQL script {}: {}", i + 1, s.title)?;
            writeln!(
                out,
                " - weight: {} (targets {:.1}% of total)",
                s.weight,
                100.0 * f64::from(s.weight) / weights.max(1) as f64
            )?;
            writeln!(
                out,
                " - {n} transactions ({:.1}% of total, tps = {:.6})",
                100.0 * n as f64 / done as f64,
                n as f64 / secs.max(1e-9)
            )?;
            writeln!(
                out,
                " - number of failed transactions: {f} ({:.3}%)",
                100.0 * f as f64 / (n + f).max(1) as f64
            )?;
            if max_tries != "1" {
                Retries::of(s, &total).write(" - ", n + f, out)?;
            }
            if let Some(o) = o.filter(|o| !o.ok.response.is_empty()) {
                writeln!(
                    out,
                    " - latency average = {:.3} ms",
                    ms(o.ok.response.mean())
                )?;
                writeln!(
                    out,
                    " - latency stddev = {:.3} ms",
                    ms(o.ok.response.stdev())
                )?;
            }
            if per_statement {
                statements(s, &total, out)?;
            }
        }
    }
    own_lines(run, &total, &ops, out)
}

/// pgbench's `-r` lines of one script: each command's average latency
/// and failures, by its first line (meta-commands, which take no time of
/// the database's, at 0.000).
fn statements(s: &script::Listed, total: &Stats, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, " - statement latencies in milliseconds and failures:")?;
    let Some(text) = &s.text else {
        return Ok(());
    };
    let mut names = script::compile::Names::default();
    let Ok(commands) = script::compile::compile(&s.title, text, &mut |n| names.slot(n)) else {
        return Ok(());
    };
    let first_lines = first_lines(text);
    for (n, ((c, _), line)) in commands.iter().zip(first_lines).enumerate() {
        let (latency, failures) = match c {
            script::compile::Command::Sql(_) => {
                let o = OpKind::find(&format!("{}:{}", s.name, n + 1)).and_then(|k| total.op(k));
                (
                    o.map_or(0.0, |o| ms(o.ok.service.mean())),
                    o.map_or(0, |o| o.failures()),
                )
            }
            _ => (0.0, 0),
        };
        writeln!(out, "   {latency:11.3}  {failures:10}  {line}")?;
    }
    Ok(())
}

/// Each command's first line, in order, as `-r` shows it.
fn first_lines(text: &str) -> Vec<String> {
    script::lex::pieces(text)
        .into_iter()
        .filter(|p| {
            !matches!(p, script::lex::Piece::Meta { name, .. } if name == "gset" || name == "aset")
        })
        .map(|p| match p {
            script::lex::Piece::Sql { text, .. } => {
                text.lines().next().unwrap_or("").trim_end().to_string()
            }
            script::lex::Piece::Meta { source, .. } => {
                source.lines().next().unwrap_or("").trim_end().to_string()
            }
        })
        .collect()
}

/// sojourn's own lines: the percentiles of response and service time of
/// every script, and the queueing between them.
fn own_lines(
    run: &RunRecord,
    total: &Stats,
    ops: &[(&script::Listed, Option<&OpStats>)],
    out: &mut dyn Write,
) -> io::Result<()> {
    let (response, service) = merged(ops.iter().filter_map(|(_, o)| *o));
    if response.is_empty() {
        return Ok(());
    }
    let q = |h: &Histogram<u64>, p: f64| ms(h.value_at_quantile(p) as f64);
    writeln!(
        out,
        "# sojourn: response time p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms; \
         service time p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms",
        q(&response, 0.5),
        q(&response, 0.99),
        q(&response, 0.999),
        ms(response.max() as f64),
        q(&service, 0.5),
        q(&service, 0.99),
        q(&service, 0.999),
    )?;
    if let Some(lag) = total.lag.as_deref().filter(|l| !l.is_empty()) {
        writeln!(
            out,
            "# sojourn: schedule lag p99 {:.3} ms (response time counts from each \
             transaction's intended start, as pgbench's latency does under -R)",
            q(lag, 0.99)
        )?;
    }
    let _ = run;
    Ok(())
}

/// A script's retries: the transactions that took more than one try
/// (`NAME:retried`) and the tries run again (`NAME:retry`).
#[derive(Default)]
struct Retries {
    retried: u64,
    retries: u64,
}

impl Retries {
    fn of(s: &script::Listed, total: &Stats) -> Retries {
        let count = |suffix: &str| {
            OpKind::find(&format!("{}:{suffix}", s.name))
                .and_then(|k| total.op(k))
                .map_or(0, OpStats::count)
        };
        Retries {
            retried: count("retried"),
            retries: count("retry"),
        }
    }

    fn sum(all: &[Retries]) -> Retries {
        Retries {
            retried: all.iter().map(|r| r.retried).sum(),
            retries: all.iter().map(|r| r.retries).sum(),
        }
    }

    /// pgbench's two lines, each after `lead`, of `transactions` in all.
    fn write(&self, lead: &str, transactions: u64, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "{lead}number of transactions retried: {} ({:.3}%)",
            self.retried,
            100.0 * self.retried as f64 / transactions.max(1) as f64
        )?;
        writeln!(out, "{lead}total number of retries: {}", self.retries)
    }
}

fn ok_count(o: &OpStats) -> u64 {
    o.count() - o.failures()
}

/// The successful transactions' response and service time, every script
/// merged.
fn merged<'a>(ops: impl Iterator<Item = &'a OpStats>) -> (Histogram<u64>, Histogram<u64>) {
    let (mut r, mut s) = (new_histogram(), new_histogram());
    for o in ops {
        let _ = r.add(&o.ok.response);
        let _ = s.add(&o.ok.service);
    }
    (r, s)
}

/// Transactions slower than `limit_ms`.
fn late(h: &Histogram<u64>, limit_ms: f64) -> u64 {
    let limit = (limit_ms * 1e6) as u64;
    h.iter_recorded()
        .filter(|v| v.value_iterated_to() > limit)
        .map(|v| v.count_at_value())
        .sum()
}
