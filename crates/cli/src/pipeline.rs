//! The one pipeline every load and run ends in: `sojourn load`, `run` and
//! `bench` themselves, and the seed tools' translations (`compat/`), which
//! hand it their plans. It validates every plan before the
//! database is touched, hand the phases to the session, and show each one
//! as it ends: YCSB's summary (or the JSON report) on stdout, the server's
//! figures and the warnings on stderr, the JSON report file. What a phase
//! is from start to finish is the session's. `--repeat N` runs the run
//! phase as a [`RepeatGroup`] of repetitions, which `ab` alternates too.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use sojourn_core::failures::TooManyFailed;
use sojourn_core::output::json::JsonReport;
use sojourn_core::output::{Export, Warning};
use sojourn_core::plan::Plan;
use sojourn_core::run_record::RunRecord;
use sojourn_core::workload::Phase;
use sojourn_session::{watch_ctrl_c, Database, Measured, PhaseSpec, Session};

use crate::cli::{Format, PhaseArgs};
use crate::options::Options;
use crate::progress::Terminal;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Load,
    Run,
    Bench,
}

pub fn main(args: PhaseArgs, mode: Mode) -> Result<ExitCode> {
    main_then(args, mode, None)
}

/// What a command does with each run phase's record once it is printed
/// and stored (`sojourn vote --histogram` writes from it).
pub type AfterRun<'a> = &'a mut dyn FnMut(&RunRecord) -> Result<()>;

/// [`main`], then `after_run` with the record of each run phase.
pub fn main_then(
    args: PhaseArgs,
    mode: Mode,
    mut after_run: Option<AfterRun<'_>>,
) -> Result<ExitCode> {
    let opts = Options::new(args)?;
    if mode == Mode::Load && opts.repeat > 1 {
        bail!("--repeat repeats a run phase: use it with `sojourn run` or `sojourn bench`");
    }
    if mode == Mode::Load {
        // Silently loading at full speed would leave the flag unapplied.
        for key in ["rate", "trace"] {
            if opts.props.get(key).is_some_and(|v| !v.trim().is_empty()) {
                bail!(
                    "{}: a rate profile or trace shapes a run phase; a load writes its records \
                     as fast as the database takes them (or at -target N). Use it with \
                     `sojourn run` or `sojourn bench`, whose load ignores it",
                    opts.props.describe(key)
                );
            }
        }
    }
    // Every plan is validated before the database is touched.
    let load = match mode {
        Mode::Load | Mode::Bench => Some(opts.plan(Phase::Load)?),
        Mode::Run => None,
    };
    let run = match mode {
        Mode::Run | Mode::Bench => Some(opts.plan(Phase::Run)?),
        Mode::Load => None,
    };
    let first = load.as_ref().or(run.as_ref()).context("no phase to run")?;
    for u in &first.unknown {
        eprintln!("warning: {}", Warning::UnknownProperty(u.clone()));
    }
    let drop = opts.props.get_bool("dropdata", false)?;
    if let Some(agents) = opts.agents {
        return crate::fleet::main(&opts, agents, load.as_ref(), run.as_ref(), drop);
    }
    let store = opts.store.open(&opts.places)?;
    let stop = sojourn_core::executor::StopHandle::new();
    let show = Terminal::new(&opts.live, opts.format == Format::Json, &stop, true)?;
    let session = Session::new(store.as_ref(), opts.tags.clone(), &opts.props, stop, &show);
    // Sockets shared by connections are sized for the larger phase.
    let workers = [&load, &run]
        .into_iter()
        .flatten()
        .map(|p| p.run.workers())
        .max()
        .unwrap_or(1);
    let db = session.open_database(&opts.db_url, &opts.places.default_sqlite(), workers)?;
    watch_ctrl_c(session.stop().clone());
    let describe = db.describe().to_string();
    if opts.repeat > 1 {
        let run = run.as_ref().context("--repeat needs a run phase")?;
        return repeated(&opts, &db, load.as_ref(), run, drop, &describe, after_run);
    }
    let bench = load.is_some() && run.is_some();
    let mut code = ExitCode::SUCCESS;
    let mut failed = None;
    db.load_and_run(load.as_ref(), run.as_ref(), drop, &mut |plan, m| {
        let interrupted = m.outcome.interrupted();
        if interrupted {
            code = ExitCode::from(130);
        }
        failed = plan.too_many_failed(&m.outcome.all);
        if bench && plan.phase == Phase::Load {
            loaded(&describe, plan, m)?;
        } else {
            let record = after_run.is_some().then(|| m.record());
            let said = (plan.phase == Phase::Load).then(|| loaded_line(&describe, plan, &m));
            report(m, &opts)?;
            if let Some(said) = said {
                eprintln!("{said}");
            }
            if let (Some(after), Some(record)) = (after_run.as_mut(), &record) {
                after(record)?;
            }
        }
        // A failed load leaves nothing for the run to find.
        Ok(!interrupted && failed.is_none())
    })?;
    match failed {
        Some(f) if code == ExitCode::SUCCESS => Err(f.into()),
        _ => Ok(code),
    }
}

/// `--repeat N`: a load (bench's) once, then the run phase N times, each
/// repetition a run of its own (its own run URI, the next seed) labelled
/// `repeat_group` and `repetition` and handed to `after_run`, and the
/// group's spread at the end.
fn repeated(
    opts: &Options,
    db: &Database<'_>,
    load: Option<&Plan>,
    run: &Plan,
    drop: bool,
    describe: &str,
    mut after_run: Option<AfterRun<'_>>,
) -> Result<ExitCode> {
    if let Some(load) = load {
        let (mut go_on, mut failed) = (true, None);
        db.load_and_run(Some(load), None, drop, &mut |plan, m| {
            go_on = !m.outcome.interrupted();
            failed = plan.too_many_failed(&m.outcome.all);
            loaded(describe, plan, m)?;
            Ok(go_on && failed.is_none())
        })?;
        if !go_on {
            return Ok(ExitCode::from(130));
        }
        if let Some(f) = failed {
            return Err(f.into());
        }
    }
    db.check_tables(None, Some(run), false)?;
    let mut group = RepeatGroup::new(opts.repeat);
    let mut code = ExitCode::SUCCESS;
    for i in 0..opts.repeat {
        if i > 0 && !opts.repeat_pause.is_zero() {
            std::thread::sleep(opts.repeat_pause);
        }
        let went_on = group.repetition(opts, db, run, None)?;
        if let (Some(after), Some(record)) = (after_run.as_mut(), group.records.last()) {
            after(record)?;
        }
        if !went_on {
            code = ExitCode::from(130);
            break;
        }
    }
    group.finish(opts)?;
    eprintln!(
        "recorded {} repetitions as group {}: compare it with another group by \
         `sojourn compare {} OTHER_GROUP`",
        group.records.len(),
        group.id,
        group.id
    );
    match group.failed.take() {
        Some((i, f)) if code == ExitCode::SUCCESS => {
            Err(anyhow::Error::new(f).context(format!("repetition {i} of {}", opts.repeat)))
        }
        _ => Ok(code),
    }
}

/// Repetitions of one configuration, recorded as one group.
pub struct RepeatGroup {
    pub id: String,
    of: u32,
    pub records: Vec<RunRecord>,
    /// The first repetition (counted from 1) that failed by its failed
    /// operations, and how.
    pub failed: Option<(u32, TooManyFailed)>,
}

impl RepeatGroup {
    pub fn new(of: u32) -> RepeatGroup {
        RepeatGroup {
            id: sojourn_store::new_run_uri(),
            of,
            records: Vec::new(),
            failed: None,
        }
    }

    /// The next repetition of `run`: a run of its own (its own run URI,
    /// the next seed) labelled `repeat_group` and `repetition`, printed
    /// (`brief`: one line on stderr instead of the summary) and stored.
    /// False when it was interrupted.
    pub fn repetition(
        &mut self,
        opts: &Options,
        db: &Database<'_>,
        run: &Plan,
        brief: Option<&str>,
    ) -> Result<bool> {
        let i = self.records.len() as u32;
        let n = self.of;
        let mut cfg = run.run.clone();
        cfg.seed = run.run.seed.wrapping_add(u64::from(i));
        let labels = BTreeMap::from([
            ("repeat_group".to_string(), self.id.clone()),
            ("repetition".to_string(), format!("{}/{n}", i + 1)),
        ]);
        let spec = PhaseSpec {
            run: Some(cfg),
            labels,
            run_uri: Some(sojourn_store::new_run_uri()),
            ..PhaseSpec::default()
        };
        let text = opts.format != Format::Json;
        let records = &mut self.records;
        let failed = &mut self.failed;
        let interrupted = db.connect(run, |conns| {
            let m = conns.run(run, spec)?;
            let interrupted = m.outcome.interrupted();
            if let (None, Some(f)) = (&failed, run.too_many_failed(&m.outcome.all)) {
                *failed = Some((i + 1, f));
            }
            records.push(m.record());
            match brief {
                Some(name) => eprintln!(
                    "{name} repetition {} of {n}: {:.0} ops/s",
                    i + 1,
                    m.outcome.throughput()
                ),
                None if text => {
                    println!("# repetition {} of {n}", i + 1);
                    print_report(&m, opts, false)?;
                }
                None => {}
            }
            if brief.is_some() || !text {
                print_warnings(&m);
            }
            recorded(m)?;
            Ok(interrupted)
        })?;
        Ok(!interrupted)
    }

    /// The group's spread (text) or its reports (JSON), and the JSON file.
    pub fn finish(&self, opts: &Options) -> Result<()> {
        let mut stdout = std::io::stdout().lock();
        match opts.format {
            Format::Text | Format::Pgbench | Format::Memtier | Format::RedisBenchmark => {
                writeln!(stdout, "# group {}", self.id)?;
                write!(
                    stdout,
                    "{}",
                    sojourn_report::groups::spread_lines(&self.records)
                )?;
            }
            Format::Json => JsonReport.write(&self.records, &mut stdout)?,
        }
        stdout.flush()?;
        if let Some(path) = &opts.json {
            let mut out = Vec::new();
            JsonReport.write(&self.records, &mut out)?;
            std::fs::write(path, out)
                .with_context(|| format!("writing the JSON report to {}", path.display()))?;
        }
        Ok(())
    }
}

/// `bench` says what it loaded (in the workload's units: records, or
/// LIOPS rows, which load in batches) and goes on to the run.
fn loaded(describe: &str, plan: &Plan, m: Measured<'_>) -> Result<()> {
    eprintln!("{}", loaded_line(describe, plan, &m));
    let o = &m.outcome;
    if let Some(s) = &o.server {
        eprintln!("server: {}", s.digest());
    }
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
    recorded(m)
}

/// What a load wrote and where: `loaded 1000 records into sqlite:… in
/// 0.12 s (8333 records/s)`.
fn loaded_line(describe: &str, plan: &Plan, m: &Measured<'_>) -> String {
    let o = &m.outcome;
    // Writes that failed (a retried insert counts each try) wrote nothing.
    let written: u64 = o.all.kinds().map(|(_, s)| s.count() - s.failures()).sum();
    let loaded = plan.workload.loaded(written);
    let secs = o.elapsed.as_secs_f64();
    let failed = o.all.failures();
    format!(
        "loaded {loaded} into {describe} in {secs:.2} s ({:.0} {}/s){}",
        loaded.count as f64 / secs.max(1e-9),
        loaded.unit,
        if failed > 0 {
            format!("; {failed} writes failed")
        } else {
            String::new()
        }
    )
}

/// Print the summary and warnings, write the JSON report, then store the
/// totals: whatever fails, what was measured is printed first and stored.
fn report(m: Measured<'_>, opts: &Options) -> Result<()> {
    let printed = print_report(&m, opts, true);
    let stored = m.finish(&BTreeMap::new()).map(|done| {
        if let (Some(id), Some(store)) = (done.run_id, done.store) {
            eprintln!(
                "recorded as run {id} in {store}; its charts: `sojourn report {id} --results \
                 {store} -o report.html`"
            );
        }
    });
    printed.and(stored)
}

/// Not in the summary itself: stdout stays the lines YCSB prints, for the
/// parsers that read it (PerfKitBenchmarker's).
fn print_warnings(m: &Measured<'_>) {
    if let Some(s) = &m.outcome.server {
        eprintln!("server: {}", s.digest());
    }
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
}

/// Store the phase's totals and say where.
fn recorded(m: Measured<'_>) -> Result<()> {
    let done = m.finish(&BTreeMap::new())?;
    if let (Some(id), Some(store)) = (done.run_id, done.store) {
        eprintln!("recorded as run {id} in {store}");
    }
    Ok(())
}

/// `json_file`: also write the JSON report file (a group writes its own).
fn print_report(m: &Measured<'_>, opts: &Options, json_file: bool) -> Result<()> {
    let runs = [m.record()];
    let format = opts.format.export();
    // The summary goes out first: a failure to write the JSON file must not
    // lose what was measured.
    let mut stdout = std::io::stdout().lock();
    format.write(&runs, &mut stdout)?;
    stdout.flush()?;
    print_warnings(m);
    if let Some(path) = opts.json.as_ref().filter(|_| json_file) {
        let mut text = Vec::new();
        JsonReport.write(&runs, &mut text)?;
        std::fs::write(path, text)
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    Ok(())
}
