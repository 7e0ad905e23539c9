//! `sojourn suite DIR`: run a folder of PerfKitBenchmarker benchmark
//! configs as PKB's batch runner (the Bigtable walkthrough's docker image)
//! runs it, against a database on this machine, with every stage recorded
//! in the results store.
//!
//! This module owns the batch: which configs run, in what order and how
//! many at once (`unordered_tests` with its concurrency and same-database
//! exclusivity, `ordered_tests` stages, or one after another), the status
//! markers and resuming from them, stopping at the first failure, and PKB's
//! two final messages. Reading the folder is [`folder`]'s, the flags'
//! meaning [`pkb`]'s, one iteration of a benchmark [`stage`]'s, and one
//! client's share of a stage [`client`]'s. See docs/suites.md.

mod client;
mod folder;
mod markers;
mod pkb;
mod stage;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{mpsc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use sojourn_core::executor::StopHandle;

use sojourn_session::{open_store, watch_ctrl_c, Places};

use crate::cli::SuiteArgs;
use crate::progress::Terminal;
use folder::{Flags, Mode};
use markers::{Counts, State};
use pkb::BenchPlan;
use stage::{Env, Interrupted};

pub use client::main as client_main;

/// PKB's final message when every config has passed.
pub const ALL_PASSED: &str = "All tests have passed. To rerun the tests, please clean up the \
                              status markers before executing the invocation command.";
/// PKB's final message otherwise.
pub const SOME_FAILED: &str =
    "Some tests have failures. You can retry by running the same invocation command again.";

/// One config file, mapped: its benchmarks run in order in each iteration.
struct Config {
    file: String,
    benches: Vec<BenchPlan>,
    /// The databases it uses, for unordered exclusivity.
    dbs: Vec<(String, Option<String>)>,
}

impl Config {
    /// Same database: the same sojourn database, or the same Bigtable
    /// instance named by `google_bigtable_instance_name`.
    fn conflicts(&self, other: &Config) -> bool {
        self.dbs.iter().any(|(db, inst)| {
            other
                .dbs
                .iter()
                .any(|(odb, oinst)| db == odb || (inst.is_some() && inst == oinst))
        })
    }
}

/// A database URL as an identity: `sqlite`, `sqlite:` and `sqlite:PATH`
/// name files, compared by absolute path; other URLs compare as written
/// (scheme case aside).
fn db_key(url: &str, default_sqlite: &Path) -> String {
    let url = url.trim();
    let (scheme, rest) = url.split_once(':').unwrap_or((url, ""));
    let scheme = scheme.to_ascii_lowercase();
    if scheme == "sqlite" {
        let p = if rest.is_empty() {
            default_sqlite.to_path_buf()
        } else {
            PathBuf::from(rest)
        };
        let abs = std::path::absolute(&p).unwrap_or(p);
        return format!("sqlite:{}", abs.display());
    }
    format!("{scheme}:{rest}")
}

/// `sqlite` and `sqlite:` name the default file: spelled out, so headers,
/// client processes and exclusivity all see the one path.
fn explicit_db(url: &str, default_sqlite: &Path) -> String {
    let t = url.trim();
    if t.eq_ignore_ascii_case("sqlite") || t.eq_ignore_ascii_case("sqlite:") {
        format!("sqlite:{}", default_sqlite.display())
    } else {
        url.to_string()
    }
}

/// The database URL names a backend this build has (opening touches
/// nothing), so a typo fails before the first config runs, not hours in.
fn check_db(p: &BenchPlan, default_sqlite: &Path) -> Result<()> {
    let Some(stage) = p.load.as_ref().or(p.runs.first()) else {
        return Ok(());
    };
    let props = stage.clients[0].properties()?;
    sojourn_session::open_backend(&p.db_url, &props, default_sqlite, stage.plan.run.workers())
        .map(drop)
}

/// `--agents N`: a suite whose stages run on agents needs the shared store,
/// databases every agent reaches, and no stage of more clients than
/// agents.
fn agents_for(
    n: u32,
    wait: f64,
    store: &sojourn_store::Store,
    configs: &[Config],
) -> Result<crate::options::Agents> {
    if n == 0 {
        bail!("--agents 0: expected 1 or more agents");
    }
    if !(wait > 0.0 && wait.is_finite()) {
        bail!("--agents-wait {wait}: expected a number of seconds above 0");
    }
    store.require_shared()?;
    for c in configs {
        for b in &c.benches {
            crate::fleet::reachable(&b.db_url)
                .with_context(|| format!("{} ({})", c.file, b.benchmark))?;
            for stage in b.load.iter().chain(&b.runs) {
                if stage.clients.len() > n as usize {
                    bail!(
                        "{} ({}): a stage of {} clients (num_vms) needs {} agents, and --agents \
                         says {n} are at hand",
                        c.file,
                        b.benchmark,
                        stage.clients.len(),
                        stage.clients.len()
                    );
                }
            }
        }
    }
    Ok(crate::options::Agents {
        count: n,
        wait: std::time::Duration::from_secs_f64(wait),
    })
}

/// Seeds for stages whose parameters give none: distinct per stage, and
/// recorded with every run so a stage can be repeated.
fn seeds() -> impl FnMut() -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut state = now ^ (u64::from(std::process::id()) << 32);
    // splitmix64: consecutive states give unrelated seeds.
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) >> 1
    }
}

pub fn main(args: SuiteArgs) -> Result<ExitCode> {
    let folder = folder::read(&args.dir)?;
    let mut overrides = Flags::new();
    for f in &args.flags {
        let (k, v) = folder::parse_override(f)?;
        overrides.insert(k, v);
    }
    let places = Places::new(args.data_dir.clone());
    let default_sqlite = places.default_sqlite();
    let results = places.store_location(args.results.as_deref());
    let suite_name = std::path::absolute(&args.dir)
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
        .unwrap_or_else(|| args.dir.display().to_string());
    let (selected, iterations) = selected(&folder);

    // Map every config before anything runs: a bad value in the last
    // config should not cost the hours the first ones take.
    let mapping = Mapping {
        folder: &folder,
        overrides: &overrides,
        suite_name: &suite_name,
        db: args.db.as_deref(),
        default_sqlite: &default_sqlite,
    };
    let mapped = mapping.map(&selected);
    report_unused(&mapped.unused, &mapped.ignored, &mapped.unknown_props);
    if !mapped.errors.is_empty() {
        for e in &mapped.errors {
            eprintln!("error: {e}");
        }
        eprintln!("nothing was run: every config is checked before the first one starts");
        println!("{SOME_FAILED}");
        return Ok(ExitCode::from(1));
    }
    let configs = mapped.configs;

    let records = open_store(&places, &results)
        .with_context(|| format!("opening the results store {results} (--results)"))?;
    let store = records.store().context("the results store did not open")?;
    let agents = match args.agents {
        None => None,
        Some(n) => Some(agents_for(n, args.agents_wait, store, &configs)?),
    };
    let mut counts = resumed_counts(&folder.dir, &configs, iterations)?;
    eprintln!(
        "suite {suite_name}: {} config(s), {}; results in {}",
        configs.len(),
        describe_mode(&folder.mode),
        store.location()
    );

    let stop = StopHandle::new();
    watch_ctrl_c(stop.clone());
    let show = Terminal::new(&args.live, false, &stop, true)?;
    let memory = Mutex::new(HashMap::new());
    let out = Mutex::new(());
    let cmd = sojourn_core::redact::command_line(std::env::args());
    let mut end = BatchEnd::default();
    for (members, concurrency, exclusive) in batches(&folder.mode, &configs) {
        show.together(concurrency > 1);
        let env = Env {
            store,
            records: &records,
            results: &results,
            default_sqlite: &default_sqlite,
            memory: &memory,
            stop: &stop,
            show: &show,
            out: &out,
            command_line: &cmd,
            agents,
        };
        let batch = Batch {
            members: &members,
            concurrency,
            exclusive,
            iterations,
            configs: &configs,
            dir: &folder.dir,
        };
        end = batch.run(&mut counts, &env)?;
        if end.failed || end.interrupted {
            break;
        }
    }
    let done = counts.iter().all(|c| c.passed >= iterations);
    if done && !end.failed && !end.interrupted {
        println!("{ALL_PASSED}");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{SOME_FAILED}");
        Ok(ExitCode::from(if end.interrupted { 130 } else { 1 }))
    }
}

/// The configs the runner's mode runs (each once), and how many times.
fn selected(folder: &folder::Folder) -> (Vec<&folder::ConfigFile>, u32) {
    match &folder.mode {
        Mode::Unordered { num_iterations, .. } => {
            (folder.configs.iter().collect(), *num_iterations)
        }
        Mode::Sequential => (folder.configs.iter().collect(), 1),
        Mode::Ordered { stages } => {
            let mut seen = BTreeSet::new();
            let files: Vec<&folder::ConfigFile> = stages
                .iter()
                .flatten()
                .filter(|f| seen.insert(f.as_str()))
                .filter_map(|f| folder.config(f))
                .collect();
            (files, 1)
        }
    }
}

/// What every benchmark of the suite is mapped with.
struct Mapping<'a> {
    folder: &'a folder::Folder,
    overrides: &'a Flags,
    suite_name: &'a str,
    /// `--db`.
    db: Option<&'a str>,
    default_sqlite: &'a Path,
}

/// Every config mapped, or every error found on the way, and what nothing
/// reads (flag or key: where it was set).
#[derive(Default)]
struct Mapped {
    configs: Vec<Config>,
    errors: Vec<String>,
    unused: BTreeMap<String, BTreeSet<String>>,
    unknown_props: BTreeSet<String>,
    ignored: BTreeMap<String, BTreeSet<String>>,
}

impl Mapping<'_> {
    fn map(&self, selected: &[&folder::ConfigFile]) -> Mapped {
        let mut next_seed = seeds();
        let mut m = Mapped::default();
        for (key, origin) in &self.folder.ignored_runner_keys {
            m.ignored
                .entry(key.clone())
                .or_default()
                .insert(origin.to_string());
        }
        for cf in selected {
            let mut benches = Vec::new();
            for b in &cf.benchmarks {
                for (key, origin) in &b.ignored_keys {
                    m.ignored
                        .entry(key.clone())
                        .or_default()
                        .insert(origin.to_string());
                }
                match self.benchmark(cf, b, &mut next_seed) {
                    Ok(p) => {
                        for (name, origin) in &p.unused {
                            m.unused
                                .entry(name.clone())
                                .or_default()
                                .insert(origin.to_string());
                        }
                        m.unknown_props.extend(p.unknown_properties.iter().cloned());
                        benches.push(p);
                    }
                    Err(e) => m.errors.push(e),
                }
            }
            let dbs = benches
                .iter()
                .map(|b| (db_key(&b.db_url, self.default_sqlite), b.instance.clone()))
                .collect();
            m.configs.push(Config {
                file: cf.file.clone(),
                benches,
                dbs,
            });
        }
        m
    }

    /// One benchmark's plan, or the error line that says why not.
    fn benchmark(
        &self,
        cf: &folder::ConfigFile,
        b: &folder::Benchmark,
        seed: &mut dyn FnMut() -> u64,
    ) -> std::result::Result<BenchPlan, String> {
        if !b.name.to_ascii_lowercase().contains("ycsb") {
            return Err(format!(
                "{}: benchmark {} is not a YCSB benchmark; sojourn suites run PKB's YCSB \
                 benchmarks (names such as cloud_bigtable_ycsb, redis_ycsb)",
                cf.file, b.name
            ));
        }
        let mut flags = self.folder.pkb_flags.clone();
        flags.extend(b.flags.clone());
        flags.extend(self.overrides.clone());
        let mut ctx = pkb::MapContext {
            dir: &self.folder.dir,
            suite: self.suite_name,
            file: &cf.file,
            benchmark: &b.name,
            db: self.db,
            seed,
        };
        pkb::map(&flags, &mut ctx)
            .and_then(|mut p| {
                p.db_url = explicit_db(&p.db_url, self.default_sqlite);
                check_db(&p, self.default_sqlite)?;
                Ok(p)
            })
            .map_err(|e| format!("{} ({}): {e:#}", cf.file, b.name))
    }
}

/// Each config's counts so far, from its marker (a finished one is done
/// whatever num_iterations says now), each said on stderr.
fn resumed_counts(dir: &Path, configs: &[Config], iterations: u32) -> Result<Vec<Counts>> {
    let mut counts = Vec::with_capacity(configs.len());
    for c in configs {
        let state = markers::read(dir, &c.file)?;
        match state {
            State::Fresh => {}
            State::Finished(n) => eprintln!(
                "{}: finished (Failed: {} Passed: {}); skipped",
                c.file, n.failed, n.passed
            ),
            State::Processing(n) => eprintln!(
                "{}: resuming (Failed: {} Passed: {}): {} more iteration(s)",
                c.file,
                n.failed,
                n.passed,
                iterations.saturating_sub(n.passed)
            ),
        }
        if let State::Processing(n) = state {
            if n.passed >= iterations {
                // num_iterations was lowered since: it is finished now.
                markers::write(dir, &c.file, n, iterations)?;
            }
        }
        counts.push(match state {
            State::Finished(n) => Counts {
                passed: n.passed.max(iterations),
                ..n
            },
            other => other.counts(),
        });
    }
    Ok(counts)
}

fn describe_mode(mode: &Mode) -> String {
    match mode {
        Mode::Unordered {
            num_iterations,
            concurrency,
        } => {
            format!("unordered, {num_iterations} iteration(s) each, at most {concurrency} at once")
        }
        Mode::Ordered { stages } => format!("ordered in {} stage(s)", stages.len()),
        Mode::Sequential => "one after another (no runner.yaml)".to_string(),
    }
}

/// The batches the mode runs in order: their configs (by index), how many
/// at once, and whether configs on one database exclude each other.
fn batches(mode: &Mode, configs: &[Config]) -> Vec<(Vec<usize>, usize, bool)> {
    let all: Vec<usize> = (0..configs.len()).collect();
    match mode {
        Mode::Unordered { concurrency, .. } => vec![(all, *concurrency, true)],
        Mode::Sequential => vec![(all, 1, true)],
        Mode::Ordered { stages } => stages
            .iter()
            .map(|files| {
                let members: Vec<usize> = files
                    .iter()
                    .filter_map(|f| configs.iter().position(|c| &c.file == f))
                    .collect();
                let n = members.len();
                (members, n, false)
            })
            .collect(),
    }
}

/// Every flag, benchmark key and property nothing uses, each listed once.
fn report_unused(
    unused: &BTreeMap<String, BTreeSet<String>>,
    ignored: &BTreeMap<String, BTreeSet<String>>,
    unknown_props: &BTreeSet<String>,
) {
    if !unused.is_empty() {
        eprintln!(
            "warning: {} flag(s) are not used by sojourn; each is kept as a label of every result:",
            unused.len()
        );
        for (name, origins) in unused {
            let hint = pkb::suggestion(name)
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            let origins: Vec<&str> = origins.iter().map(String::as_str).collect();
            eprintln!("  {name} ({}){hint}", origins.join(", "));
        }
    }
    if !ignored.is_empty() {
        eprintln!("warning: these keys are not used by sojourn and are ignored:");
        for (key, origins) in ignored {
            let origins: Vec<&str> = origins.iter().map(String::as_str).collect();
            eprintln!("  {key} ({})", origins.join(", "));
        }
    }
    for u in unknown_props {
        eprintln!("warning: {u}; it is ignored");
    }
}

/// How a batch of configs ended.
#[derive(Copy, Clone, Debug, Default)]
struct BatchEnd {
    failed: bool,
    interrupted: bool,
}

/// Configs that run under one rule: at most `concurrency` at once, and
/// with `exclusive`, never two on the same database.
struct Batch<'a> {
    members: &'a [usize],
    concurrency: usize,
    exclusive: bool,
    iterations: u32,
    configs: &'a [Config],
    dir: &'a Path,
}

fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Interrupted>())
}

impl Batch<'_> {
    fn run(&self, counts: &mut [Counts], env: &Env<'_>) -> Result<BatchEnd> {
        let mut remaining: BTreeMap<usize, u32> = self
            .members
            .iter()
            .map(|&i| (i, self.iterations.saturating_sub(counts[i].passed)))
            .collect();
        let mut running: Vec<usize> = Vec::new();
        let mut end = BatchEnd::default();
        let (tx, rx) = mpsc::channel::<(usize, Result<()>)>();
        std::thread::scope(|s| -> Result<BatchEnd> {
            loop {
                if !end.failed && !end.interrupted && !env.stop.is_stopped() {
                    for &i in self.members {
                        if running.len() >= self.concurrency {
                            break;
                        }
                        let left = remaining.get(&i).copied().unwrap_or(0);
                        // A config never runs beside itself: its iterations
                        // are one after another.
                        if left == 0 || running.contains(&i) {
                            continue;
                        }
                        let c = &self.configs[i];
                        if self.exclusive && running.iter().any(|&j| c.conflicts(&self.configs[j]))
                        {
                            continue;
                        }
                        remaining.insert(i, left - 1);
                        running.push(i);
                        let iteration = counts[i].passed + counts[i].failed + 1;
                        eprintln!("{}: iteration {iteration} starting", c.file);
                        let tx = tx.clone();
                        s.spawn(move || {
                            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                c.benches
                                    .iter()
                                    .try_for_each(|b| stage::run_benchmark(b, iteration, env))
                            }))
                            .unwrap_or_else(|_| {
                                Err(anyhow::anyhow!("the stage's thread panicked"))
                            });
                            let _ = tx.send((i, r));
                        });
                    }
                }
                if running.is_empty() {
                    return Ok(end);
                }
                // Every started thread sends exactly once.
                let Ok((i, r)) = rx.recv() else {
                    return Ok(end);
                };
                running.retain(|&j| j != i);
                let file = &self.configs[i].file;
                match r {
                    Ok(()) => {
                        counts[i].passed += 1;
                        markers::write(self.dir, file, counts[i], self.iterations)?;
                        eprintln!(
                            "{file}: iteration passed (Failed: {} Passed: {})",
                            counts[i].failed, counts[i].passed
                        );
                    }
                    Err(e) if is_interrupted(&e) => {
                        // Not finished, so not counted: a rerun repeats it.
                        end.interrupted = true;
                        eprintln!("{file}: interrupted; this iteration is not counted");
                    }
                    Err(e) => {
                        counts[i].failed += 1;
                        markers::write(self.dir, file, counts[i], self.iterations)?;
                        eprintln!(
                            "error: {file}: iteration failed (Failed: {} Passed: {}): {e:#}",
                            counts[i].failed, counts[i].passed
                        );
                        end.failed = true;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_identity() {
        let d = Path::new("/data/sojourn.sqlite");
        assert_eq!(db_key("sqlite", d), db_key("sqlite:", d));
        assert_eq!(
            db_key("SQLITE:/data/sojourn.sqlite", d),
            db_key("sqlite", d)
        );
        assert_ne!(db_key("sqlite:/a.db", d), db_key("sqlite:/b.db", d));
        assert_eq!(db_key("null:", d), db_key("NULL:", d));
        let c = |db: &str, inst: Option<&str>| Config {
            file: String::new(),
            benches: Vec::new(),
            dbs: vec![(db.to_string(), inst.map(str::to_string))],
        };
        assert!(c("a", None).conflicts(&c("a", None)));
        assert!(!c("a", None).conflicts(&c("b", None)));
        assert!(c("a", Some("i")).conflicts(&c("b", Some("i"))));
        assert!(!c("a", Some("i")).conflicts(&c("b", Some("j"))));
    }
}
