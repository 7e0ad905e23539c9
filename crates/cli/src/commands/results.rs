//! `sojourn results`: the runs kept in the results store. `list` shows
//! them (filtered by label, workload, backend, phase, status, time), `show`
//! prints a run's YCSB summary again from its stored histograms (with the
//! same code that printed it after the run), `export` writes PKB samples,
//! CSV, JSON, the JSON report or an HdrHistogram interval log, `query`
//! runs read-only SQL over the tables and views documented in
//! docs/results.md, and `import` stores runs kept in spool files (or
//! another store file).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use sojourn_core::output::time::rfc3339;
use sojourn_core::output::ycsb::Summary;
use sojourn_core::output::{hdrlog, json, pkb, table, Export};
use sojourn_store::{Filter, IntervalDetail, RunRecord, RunStatus, Store, Value};

use crate::cli::{
    ExportArgs, ExportFormat, ImportArgs, ListArgs, QueryArgs, QueryFormat, ResultsArgs,
    ResultsCommand, ShowArgs,
};
use crate::selection::run_filter;
use sojourn_session::{open_existing, open_for_reading, open_store, Places};

pub fn main(a: ResultsArgs) -> Result<ExitCode> {
    let places = Places::new(a.data_dir.clone());
    let results = a.results.as_deref();
    match a.command {
        ResultsCommand::List(l) => list(&open_existing(&places, results)?, l),
        ResultsCommand::Show(s) => show(&open_existing(&places, results)?, s),
        ResultsCommand::Export(e) => export(&open_existing(&places, results)?, e),
        ResultsCommand::Query(q) => query(&open_for_reading(&places, results)?, q),
        ResultsCommand::Import(i) => {
            let location = places.store_location(results);
            let records = open_store(&places, &location).context(if results.is_some() {
                "opening --results"
            } else {
                "opening the default results store (--results PATH to name another)"
            })?;
            let store = records.store().context("the results store did not open")?;
            return import(store, i);
        }
    }?;
    Ok(ExitCode::SUCCESS)
}

/// `results import`: every file's runs, each file on its own, saying what
/// was stored; any file that fails makes the exit status 1.
fn import(store: &Store, a: ImportArgs) -> Result<ExitCode> {
    let mut failed = 0;
    for file in &a.files {
        match store.import(file) {
            Ok(runs) => {
                eprintln!(
                    "imported {} run{} from {} into {}",
                    runs.len(),
                    if runs.len() == 1 { "" } else { "s" },
                    file.display(),
                    store.location()
                );
                for r in &runs {
                    println!("{r}");
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
            }
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn list(store: &Store, a: ListArgs) -> Result<()> {
    let filter = Filter {
        workload: a.workload,
        backend: a.backend,
        phase: a.phase,
        status: a.status.as_deref().and_then(RunStatus::parse),
        limit: a.limit,
        ..run_filter(&a.labels, a.since.as_deref())?
    };
    let runs = store.list(&filter)?;
    let mut rows = vec![[
        "RUN",
        "URI",
        "STARTED (UTC)",
        "PHASE",
        "WORKLOAD",
        "BACKEND",
        "THREADS",
        "TARGET",
        "OPS/S",
        "STATUS",
        "LABELS",
    ]
    .map(String::from)
    .to_vec()];
    for r in &runs {
        let m = &r.meta;
        let started = rfc3339(m.started_at);
        rows.push(vec![
            m.id.as_str().chars().take(8).collect(),
            m.run_uri.clone(),
            started[..19].replace('T', " "),
            // A benchmark's run stages are `URI/N` (N from 1) to a selector.
            match m.stage_index {
                0 => m.phase.clone(),
                n => format!("{} {n}", m.phase),
            },
            m.workloads.join(","),
            m.backend.clone(),
            m.threads.to_string(),
            m.target
                .map(|t| format!("{t}"))
                .unwrap_or_else(|| "-".into()),
            r.totals
                .as_ref()
                .map(|t| format!("{:.1}", t.throughput))
                .unwrap_or_else(|| "-".into()),
            r.status.to_string(),
            m.labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    let mut out = io::stdout().lock();
    print_table(&mut out, &rows)?;
    if runs.is_empty() {
        eprintln!("no stored runs match in {}", store.location());
    }
    Ok(())
}

/// Columns padded to their widest cell, the last one left ragged.
fn print_table(out: &mut dyn Write, rows: &[Vec<String>]) -> io::Result<()> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// A run (or the client processes a run URI names, merged exactly). The
/// interval histograms are decoded only when `intervals` asks for them or
/// the run never stored its totals (its summary is then their sum): a long
/// run has thousands of them.
fn load(store: &Store, run: &str, intervals: bool) -> Result<RunRecord> {
    if !intervals {
        let r = store.load_merged_with(run, IntervalDetail::Figures)?;
        if r.summary.totals.is_some() {
            return Ok(r);
        }
    }
    Ok(store.load_merged_with(run, IntervalDetail::Histograms)?)
}

/// What `run` names, one record per stage (a `bench`'s or a suite
/// benchmark's URI is its load and its runs), each merged over its client
/// processes.
fn load_stages(store: &Store, run: &str, intervals: bool) -> Result<Vec<RunRecord>> {
    if !intervals {
        let r = store.load_stages(run, IntervalDetail::Figures)?;
        if r.iter().all(|r| r.summary.totals.is_some()) {
            return Ok(r);
        }
    }
    Ok(store.load_stages(run, IntervalDetail::Histograms)?)
}

fn show(store: &Store, a: ShowArgs) -> Result<()> {
    let run = load(store, &a.run, false)?;
    let m = run.meta();
    eprintln!(
        "run {} ({}, {} of {} on {}, {}{})",
        m.id,
        m.run_uri,
        m.phase,
        if m.workloads.is_empty() {
            "-".to_string()
        } else {
            m.workloads.join(",")
        },
        m.backend,
        run.summary.status,
        if m.client_count > 1 {
            format!(", {} client processes merged", m.client_count)
        } else {
            String::new()
        }
    );
    if run.summary.totals.is_none() {
        eprintln!(
            "note: the run ended before its totals were stored{}; this summary adds up its {} \
             stored intervals (successful operations' latencies only)",
            run.summary
                .error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default(),
            run.intervals.len()
        );
    }
    // As it was printed after the run: the same format over the same record.
    let mut out = io::stdout().lock();
    Summary.write(std::slice::from_ref(&run), &mut out)?;
    out.flush()?;
    // On stderr, as after the run: stdout stays YCSB's summary.
    if let Some(server) = &run.server {
        eprintln!("server: {}", server.digest());
    }
    for w in &run.warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// The runs `--all`, `--label` and `--since` select, one selector per
/// whole run (its client processes are merged when it is loaded), oldest
/// first; none when none of the three is given.
fn selected(store: &Store, a: &ExportArgs) -> Result<Vec<String>> {
    if !a.all && a.labels.is_empty() && a.since.is_none() {
        return Ok(Vec::new());
    }
    let mut runs = store.list(&run_filter(&a.labels, a.since.as_deref())?)?;
    runs.sort_by_key(|r| r.meta.started_at);
    let mut seen = std::collections::BTreeSet::new();
    Ok(runs
        .into_iter()
        .filter(|r| {
            let m = &r.meta;
            seen.insert((m.run_uri.clone(), m.phase.clone(), m.stage_index))
        })
        .map(|r| r.meta.id.as_str().to_string())
        .collect())
}

fn export(store: &Store, a: ExportArgs) -> Result<()> {
    if a.runs.is_empty() && !a.all && a.labels.is_empty() && a.since.is_none() {
        bail!(
            "results export: name the runs to export (RUN...: a run id or a unique prefix of \
             one, a run URI, URI/STAGE, or `last`), or select them with --all (every run), \
             --label KEY=VALUE or --since WHEN; e.g. `sojourn results export --all --format \
             pkb > samples.json` is a whole BigQuery load"
        );
    }
    let mut names = a.runs.clone();
    names.extend(selected(store, &a)?);
    if names.is_empty() {
        bail!(
            "no run in {} matches --all, --label or --since as given; `sojourn results list` \
             shows what is there",
            store.location()
        );
    }
    // Each stage once, however it was named (two client runs of one
    // stage, its URI, `URI/STAGE`), or a BigQuery load would count it twice.
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for name in &names {
        for r in load_stages(store, name, a.format == ExportFormat::Hdrlog)? {
            let m = r.meta();
            if seen.insert((m.run_uri.clone(), m.phase.clone(), m.stage_index)) {
                runs.push(r);
            }
        }
    }
    let mut sink: Box<dyn Write> = match &a.output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("creating -o {}", path.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    let mut pkb_options = pkb::PkbOptions {
        test: a.pkb_test.clone(),
        ..pkb::PkbOptions::default()
    };
    if let Some(o) = &a.owner {
        pkb_options.owner = o.clone();
    }
    let format: Box<dyn Export> = match a.format {
        ExportFormat::Pkb => Box::new(pkb::Pkb(pkb_options)),
        ExportFormat::Csv => Box::new(table::Csv),
        ExportFormat::Json => Box::new(table::Json),
        ExportFormat::Report => Box::new(json::JsonReport),
        ExportFormat::Hdrlog => Box::new(hdrlog::HdrLog),
    };
    let written = format.write(&runs, &mut sink);
    let where_ = a
        .output
        .as_ref()
        .map_or("stdout".to_string(), |p| p.display().to_string());
    match written.and_then(|()| sink.flush()) {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe && a.output.is_none() => Ok(()),
        r => r.with_context(|| format!("writing the export to {where_}")),
    }
}

fn cell(v: &Value) -> String {
    v.to_string()
}

fn query(store: &Store, a: QueryArgs) -> Result<()> {
    let r = store.query(&a.sql)?;
    let mut out = io::stdout().lock();
    match a.format {
        QueryFormat::Table => {
            let mut rows = vec![r.columns.clone()];
            rows.extend(r.rows.iter().map(|row| row.iter().map(cell).collect()));
            print_table(&mut out, &rows)?;
        }
        QueryFormat::Csv => {
            let quote = |s: String| {
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s
                }
            };
            writeln!(
                out,
                "{}",
                r.columns
                    .iter()
                    .cloned()
                    .map(quote)
                    .collect::<Vec<_>>()
                    .join(",")
            )?;
            for row in &r.rows {
                let cells: Vec<String> = row
                    .iter()
                    .map(|v| match v {
                        Value::Null => String::new(),
                        v => quote(cell(v)),
                    })
                    .collect();
                writeln!(out, "{}", cells.join(","))?;
            }
        }
        QueryFormat::Json => {
            let objects: Vec<serde_json::Map<String, serde_json::Value>> = r
                .rows
                .iter()
                .map(|row| {
                    r.columns
                        .iter()
                        .cloned()
                        .zip(row.iter().map(|v| match v {
                            Value::Blob(b) => serde_json::json!(format!("<{} bytes>", b.len())),
                            v => serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
                        }))
                        .collect()
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &objects)?;
            writeln!(out)?;
        }
    }
    if r.rows.is_empty() && a.format == QueryFormat::Table {
        eprintln!("(no rows)");
    }
    Ok(())
}
