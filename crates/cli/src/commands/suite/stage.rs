//! One iteration of one benchmark: set the database up (emptied before a
//! load, as PKB's fresh table is; checked for data before a run), run the
//! load and the run stages in order, each with one client in this process
//! or with `num_vms` client processes started at one instant and merged
//! exactly from the results store, print each stage's YCSB summary, and
//! fail the iteration on an error rate above `ycsb_max_error_rate` or an
//! incomplete load.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use sojourn_backends::AnyBackend;
use sojourn_core::backend::ServerStats;
use sojourn_core::executor::StopHandle;
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_core::output::{workload_lines, ycsb};
use sojourn_core::plan::Plan;
use sojourn_session::{open_backend, RunStore, RunTags, Session};
use sojourn_store::{RunId, RunRecord, RunStatus, Store};

use super::pkb::{BenchPlan, StagePlan};
use crate::progress::Terminal;
use sojourn_core::workload::Phase;
use sojourn_session::fleet::{AgentShare, Coordinator, Posting, Setup};
use sojourn_session::share::{run_share, ShareRun, ShareSpec};

/// A stage stopped by Ctrl+C: not a failure of the config, and not a
/// finished iteration either.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// What every stage of the suite shares.
pub struct Env<'a> {
    pub store: &'a Store,
    /// The store again, with where its clients spool a run it cannot take.
    pub records: &'a RunStore,
    /// The store's location, for client processes.
    pub results: &'a str,
    pub default_sqlite: &'a Path,
    /// `memory:` databases live in this process: one per URL, shared by
    /// every stage and config that names it, as a server would be.
    pub memory: &'a Mutex<HashMap<String, Arc<AnyBackend>>>,
    pub stop: &'a StopHandle,
    pub show: &'a Terminal,
    /// One stage's output at a time, so concurrent configs do not
    /// interleave their summaries.
    pub out: &'a Mutex<()>,
    pub command_line: &'a str,
    /// `--agents N`: every stage's clients are agents on other machines.
    pub agents: Option<crate::options::Agents>,
}

fn is_memory(url: &str) -> bool {
    url.trim().to_ascii_lowercase().starts_with("memory")
}

/// The backend for a stage, opened with the stage's properties (backends
/// read settings such as `redis.mode` from them) for its clients'
/// connections; `memory:` databases are shared instead.
fn backend_for(env: &Env<'_>, url: &str, stage: &StagePlan) -> Result<Arc<AnyBackend>> {
    let props = stage.clients[0].properties()?;
    let open = || open_backend(url, &props, env.default_sqlite, stage.plan.run.workers());
    if is_memory(url) {
        let mut m = env.memory.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = m.get(url) {
            return Ok(b.clone());
        }
        let b = Arc::new(open()?);
        m.insert(url.to_string(), b.clone());
        return Ok(b);
    }
    Ok(Arc::new(open()?))
}

/// What a stage asks of the workload's tables before or after it runs.
enum TableStep {
    /// Whether they hold no data (`None`: the backend cannot tell).
    IsEmpty,
    /// Create them, emptied first: a load starts from an empty table, as
    /// on PKB's fresh instance, so the data set is exactly what it loads.
    Prepare,
    /// After a complete load: what the workload builds once its data is
    /// in (LIOPS's index).
    FinishLoad,
    /// Whether data kept from before has the layout the stages expect.
    CheckLayout,
}

/// Do `step` to the tables of `plan`'s workload in `backend`.
fn tables(
    env: &Env<'_>,
    backend: &Arc<AnyBackend>,
    plan: &Plan,
    step: TableStep,
) -> Result<Option<bool>> {
    let props = Default::default();
    let session = Session::new(
        None,
        RunTags::new(Vec::new()),
        &props,
        env.stop.clone(),
        env.show,
    );
    let db = session.database(backend.clone())?;
    match step {
        TableStep::IsEmpty => db.is_empty(plan),
        TableStep::Prepare => db.prepare(plan, true).map(|()| None),
        TableStep::FinishLoad => db.finish_load(plan).map(|()| None),
        TableStep::CheckLayout => db.check_layout(plan).map(|()| None),
    }
}

/// Run one iteration (`iteration` counts from 1) of one benchmark.
pub fn run_benchmark(plan: &BenchPlan, iteration: u32, env: &Env<'_>) -> Result<()> {
    let mut labels = plan.labels.clone();
    labels.insert("suite_iteration".into(), iteration.to_string());
    // One URI for the iteration's stages, as PKB gives one to a benchmark
    // run: the load is stage 0, the runs count from 1.
    let run_uri = sojourn_store::new_run_uri();
    let at = |index| StageAt {
        run_uri: &run_uri,
        index,
    };
    if env.agents.is_some() {
        return run_on_agents(plan, &labels, iteration, env, &run_uri);
    }
    if let Some(load) = &plan.load {
        let backend = backend_for(env, &plan.db_url, load)?;
        let describe = backend.describe();
        // A reload drops what is there, so whether (and how) the tables
        // hold data does not matter then.
        let keep = !plan.reload_database
            && tables(env, &backend, &load.plan, TableStep::IsEmpty)? == Some(false);
        if keep {
            tables(env, &backend, &load.plan, TableStep::CheckLayout).with_context(|| {
                format!(
                    "{}: {describe} already holds data for {}, of another layout",
                    plan.file,
                    load.plan.workload.what(&load.plan.schema)
                )
            })?;
            eprintln!(
                "{}: {describe} already holds data for {} and ycsb_reload_database is false; \
                 skipping the load stage",
                plan.file,
                load.plan.workload.what(&load.plan.schema)
            );
        } else {
            tables(env, &backend, &load.plan, TableStep::Prepare)?;
            let stats =
                run_stage(plan, load, at(0), &labels, iteration, env, None)?.unwrap_or_default();
            check_load(plan, load, &stats)?;
            if stats.failures() == 0 {
                tables(env, &backend, &load.plan, TableStep::FinishLoad)?;
            }
        }
        sleep_after_load(plan.sleep_after_load, env.stop)?;
    }
    for (i, run) in plan.runs.iter().enumerate() {
        let backend = backend_for(env, &plan.db_url, run)?;
        if tables(env, &backend, &run.plan, TableStep::IsEmpty)? == Some(true) {
            bail!(
                "{}: {} holds no data for {}, so there is nothing to run against: load it first \
                 (a config without ycsb_skip_load_stage, in an earlier ordered stage)",
                plan.file,
                backend.describe(),
                run.plan.workload.what(&run.plan.schema)
            );
        }
        let stats = run_stage(plan, run, at(i as u32 + 1), &labels, iteration, env, None)?
            .unwrap_or_default();
        check_error_rate(&stats, plan.max_error_rate, &run.plan, &plan.file, "run")?;
    }
    Ok(())
}

/// `ycsb_sleep_after_load_in_sec`, cut short by Ctrl+C.
fn sleep_after_load(d: Duration, stop: &StopHandle) -> Result<()> {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.is_stopped() {
            return Err(Interrupted.into());
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
    Ok(())
}

/// PKB fails a run whose operations fail more often than
/// `ycsb_max_error_rate` (non-OK returns over all, per operation); and,
/// as every phase, one past `-p max_error_rate` of `phase` (by default,
/// one where every operation of a kind failed).
pub fn check_error_rate(
    stats: &Stats,
    max: f64,
    phase: &Plan,
    file: &str,
    stage: &str,
) -> Result<()> {
    for (kind, s) in stats.kinds() {
        let (failed, total) = (s.failures(), s.count());
        if total > 0 && failed as f64 / total as f64 > max {
            bail!(
                "{file}: {stage} stage: {failed} of {total} {} operations failed ({:.2}%), above \
                 ycsb_max_error_rate {max}",
                kind.ycsb_name(),
                100.0 * failed as f64 / total as f64
            );
        }
    }
    if let Some(f) = phase.too_many_failed(stats) {
        bail!("{file}: {stage} stage: {f}");
    }
    Ok(())
}

fn describe_stage(plan: &BenchPlan, stage: &StagePlan, iteration: u32) -> String {
    let clients = stage.clients.len();
    let target = match stage.target_total {
        Some(t) => format!(", target {t} ops/s"),
        None => String::new(),
    };
    format!(
        "== {} ({}) iteration {iteration}: {} {} (workload_index {}), {} thread{} x {clients} client{}{target} on {} ==",
        plan.file,
        plan.benchmark,
        stage.phase.name(),
        stage.workload_name,
        stage.workload_index,
        stage.threads_per_client,
        if stage.threads_per_client == 1 { "" } else { "s" },
        if clients == 1 { "" } else { "s" },
        sojourn_backends::redact_url(&plan.db_url)
    )
}

/// Where a stage is recorded: its benchmark's run URI and its place there.
#[derive(Clone, Copy)]
struct StageAt<'a> {
    run_uri: &'a str,
    index: u32,
}

/// A load fails on a failed insert when `ycsb_fail_on_incomplete_loading`
/// says so, and on an error rate past `ycsb_max_error_rate`.
fn check_load(plan: &BenchPlan, load: &StagePlan, stats: &Stats) -> Result<()> {
    let failed_inserts = stats.op(OpKind::Insert).map_or(0, |s| s.failures());
    if plan.fail_on_incomplete_loading && failed_inserts > 0 {
        bail!(
            "{}: {failed_inserts} inserts failed, so the table is incompletely loaded \
             (ycsb_fail_on_incomplete_loading is true)",
            plan.file
        );
    }
    check_error_rate(stats, plan.max_error_rate, &load.plan, &plan.file, "load")
}

/// Run one stage with all its clients (with share 0's database setup
/// when the clients are agents); print its summary; return its statistics
/// (merged over the clients), or `None` when that setup skipped the stage.
fn run_stage(
    plan: &BenchPlan,
    stage: &StagePlan,
    at: StageAt<'_>,
    labels: &BTreeMap<String, String>,
    iteration: u32,
    env: &Env<'_>,
    setup: Option<Setup>,
) -> Result<Option<Stats>> {
    if env.stop.is_stopped() {
        return Err(Interrupted.into());
    }
    let specs = share_specs(plan, stage, at, labels, env);
    let n = specs.len();
    let tag = format!("{} #{iteration} {}", plan.file, stage.phase.name());
    let ran = match (env.agents, setup) {
        (Some(agents), Some(setup)) => {
            match on_agents(plan, stage, at, &specs, env, agents, setup, &tag)? {
                Some(ran) => ran,
                None => return Ok(None),
            }
        }
        _ if n == 1 => {
            let backend = backend_for(env, &plan.db_url, stage)?;
            let how = ShareRun {
                backend: Some(backend),
                records: env.records,
                store_required: true,
                stop: env.stop,
                show: env.show,
            };
            let share = run_share(&specs[0], how, &mut || Ok(None))?;
            let run_id = share.run_id.context("the stage's run was not stored")?;
            let mut summary = ycsb::summary(&share.record);
            summary.push_str(&workload_lines(&share.record));
            Ran {
                ids: vec![run_id],
                summary,
                interrupted: share.outcome.interrupted(),
                warnings: share.warnings.iter().map(|w| w.to_string()).collect(),
                server: share.outcome.server,
                stats: share.outcome.total,
            }
        }
        _ => {
            let ids = spawn_clients(&specs, &tag, env)?;
            // By the ids the clients reported, not by run URI: a URI is short
            // enough that another stage in the same store could share it.
            let runs = ids
                .iter()
                .map(|id| env.store.load(id.as_str()))
                .collect::<Result<Vec<_>, _>>()?;
            Ran::merged(ids, &sojourn_store::merge(&runs)?)
        }
    };
    ran.print(&describe_stage(plan, stage, iteration), &tag, at, env)?;
    if ran.interrupted {
        return Err(Interrupted.into());
    }
    Ok(Some(ran.stats))
}

/// Each client's share of the stage.
fn share_specs(
    plan: &BenchPlan,
    stage: &StagePlan,
    at: StageAt<'_>,
    labels: &BTreeMap<String, String>,
    env: &Env<'_>,
) -> Vec<ShareSpec> {
    let mut labels = labels.clone();
    labels.extend(stage.labels.clone());
    let n = stage.clients.len() as u32;
    stage
        .clients
        .iter()
        .enumerate()
        .map(|(i, recipe)| ShareSpec {
            phase: stage.phase.name().to_string(),
            recipe: recipe.clone(),
            db_url: plan.db_url.clone(),
            default_sqlite: env.default_sqlite.to_path_buf(),
            results: env.results.to_string(),
            labels: labels.clone(),
            run_uri: at.run_uri.to_string(),
            stage_index: at.index,
            client_index: i as u32,
            client_count: n,
            command_line: env.command_line.to_string(),
            workloads: Vec::new(),
            spool_dirs: env.records.spool_dirs().to_vec(),
        })
        .collect()
}

/// The stage posted to the agents, share 0 setting the database up; `None`
/// when that setup skipped it.
#[allow(clippy::too_many_arguments)]
fn on_agents(
    plan: &BenchPlan,
    stage: &StagePlan,
    at: StageAt<'_>,
    specs: &[ShareSpec],
    env: &Env<'_>,
    agents: crate::options::Agents,
    setup: Setup,
    tag: &str,
) -> Result<Option<Ran>> {
    let n = specs.len();
    let shares = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| AgentShare {
            share: ShareSpec {
                db_url: sojourn_core::redact::without_password(&spec.db_url),
                recipe: crate::fleet::for_agents(&spec.recipe),
                spool_dirs: Vec::new(),
                ..spec.clone()
            },
            setup: (i == 0).then_some(setup),
            finish_load: n == 1 && stage.phase == Phase::Load,
        })
        .collect();
    let coordinator = Coordinator {
        store: env.store,
        wait: agents.wait,
        stop: env.stop,
        show: env.show,
    };
    let g = coordinator.run(&Posting {
        run_uri: at.run_uri.to_string(),
        stage_index: at.index,
        phase: stage.phase,
        shares,
    })?;
    if let Some(why) = g.skipped {
        eprintln!(
            "{}: {why} and ycsb_reload_database is false; skipping the {} stage",
            plan.file,
            stage.phase.name()
        );
        return Ok(None);
    }
    let Some(merged) = g.merged else {
        bail!("{tag}: no agent recorded a run: {}", g.missing.join("; "));
    };
    if !g.missing.is_empty() {
        bail!("{tag}: the stage is partial: {}", g.missing.join("; "));
    }
    let ids = g.runs.iter().map(|r| r.id().clone()).collect();
    Ok(Some(Ran::merged(ids, &merged)))
}

/// A stage as it ran: its client runs, totals, YCSB summary and what is
/// said beside it.
struct Ran {
    ids: Vec<RunId>,
    stats: Stats,
    summary: String,
    interrupted: bool,
    warnings: Vec<String>,
    server: Option<ServerStats>,
}

impl Ran {
    /// The stage from its clients' runs, merged.
    fn merged(ids: Vec<RunId>, merged: &RunRecord) -> Ran {
        let mut summary = ycsb::summary(merged);
        summary.push_str(&workload_lines(merged));
        Ran {
            ids,
            stats: merged.total.clone(),
            summary,
            interrupted: merged.summary.status == RunStatus::Interrupted,
            warnings: merged.warnings.clone(),
            server: merged.server.clone(),
        }
    }

    /// The stage's header and summary on stdout (one stage at a time),
    /// the server's figures, the warnings and where it is recorded on
    /// stderr.
    fn print(&self, header: &str, tag: &str, at: StageAt<'_>, env: &Env<'_>) -> Result<()> {
        let _one_at_a_time = env.out.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        writeln!(out, "{header}")?;
        write!(out, "{}", self.summary)?;
        out.flush()?;
        // As `sojourn run` does: on stderr, so that stdout stays what
        // YCSB's parsers read.
        if let Some(s) = &self.server {
            eprintln!("{tag}: server: {}", s.digest());
        }
        for w in &self.warnings {
            eprintln!("warning: {tag}: {w}");
        }
        // The stage's selector, and the ids `results list` shows in its
        // RUN column (its URI column holds the run URI).
        eprintln!(
            "{tag}: recorded as {}/{} (run URI {}, stage {}; client run{} {}) in {}",
            at.run_uri,
            at.index,
            at.run_uri,
            at.index,
            if self.ids.len() == 1 { "" } else { "s" },
            self.ids
                .iter()
                .map(|id| id.as_str().chars().take(8).collect::<String>())
                .collect::<Vec<_>>()
                .join(", "),
            env.store.location()
        );
        Ok(())
    }
}

/// One iteration of a benchmark whose clients are agents: the database
/// is set up by share 0's agent (emptied before a load unless
/// `ycsb_reload_database` is false, checked for data before a run),
/// since this machine may not reach it.
fn run_on_agents(
    plan: &BenchPlan,
    labels: &BTreeMap<String, String>,
    iteration: u32,
    env: &Env<'_>,
    run_uri: &str,
) -> Result<()> {
    let at = |index| StageAt { run_uri, index };
    if let Some(load) = &plan.load {
        let setup = Setup::Load {
            drop: plan.reload_database,
            skip_if_data: !plan.reload_database,
        };
        if let Some(stats) = run_stage(plan, load, at(0), labels, iteration, env, Some(setup))? {
            check_load(plan, load, &stats)?;
        }
        sleep_after_load(plan.sleep_after_load, env.stop)?;
    }
    for (i, run) in plan.runs.iter().enumerate() {
        let stats = run_stage(
            plan,
            run,
            at(i as u32 + 1),
            labels,
            iteration,
            env,
            Some(Setup::Run),
        )?
        .unwrap_or_default();
        check_error_rate(&stats, plan.max_error_rate, &run.plan, &plan.file, "run")?;
    }
    Ok(())
}

/// A started client process and what it told us.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
    stderr_tail: Arc<Mutex<Vec<String>>>,
    forwarder: Option<std::thread::JoinHandle<()>>,
}

/// How many of a client's last stderr lines an error quotes.
const TAIL: usize = 20;

impl Client {
    fn spawn(spec: &ShareSpec, tag: &str) -> Result<Client> {
        let exe = std::env::current_exe().context("finding the sojourn binary to start clients")?;
        let mut child = Command::new(&exe)
            .arg("suite-client")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting a client process ({})", exe.display()))?;
        let mut stdin = child.stdin.take().context("client stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("client stdout")?).lines();
        let stderr = child.stderr.take().context("client stderr")?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        let prefix = format!("[{tag} client {}] ", spec.client_index);
        let keep = tail.clone();
        let forwarder = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("{prefix}{line}");
                let mut t = keep.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == TAIL {
                    t.remove(0);
                }
                t.push(line);
            }
        });
        let mut line = serde_json::to_string(spec)?;
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .context("sending a client its spec")?;
        stdin.flush()?;
        Ok(Client {
            child,
            stdin: Some(stdin),
            stdout,
            stderr_tail: tail,
            forwarder: Some(forwarder),
        })
    }

    /// The next line the client prints, or why there is none.
    fn expect(&mut self, what: &str) -> Result<String> {
        match self.stdout.next() {
            Some(Ok(l)) => Ok(l),
            _ => {
                // It ended: wait for it, so its stderr is all in the tail.
                let status = self.child.wait().ok();
                if let Some(f) = self.forwarder.take() {
                    let _ = f.join();
                }
                let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
                bail!(
                    "a client process ended ({}) before it said {what}; its last messages:\n  {}",
                    status.map_or("status unknown".to_string(), |s| s.to_string()),
                    tail.join("\n  ")
                )
            }
        }
    }

    /// Stop a client that is no longer wanted (one of ours, by its pid).
    fn abandon(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(f) = self.forwarder.take() {
            let _ = f.join();
        }
    }
}

/// Start one client process per spec, release them at one instant once
/// all are connected, and wait for their run ids.
fn spawn_clients(specs: &[ShareSpec], tag: &str, env: &Env<'_>) -> Result<Vec<RunId>> {
    let mut clients: Vec<Client> = Vec::with_capacity(specs.len());
    let result = (|| -> Result<Vec<RunId>> {
        for spec in specs {
            clients.push(Client::spawn(spec, tag)?);
        }
        for c in clients.iter_mut() {
            let l = c.expect("ready")?;
            if l != "ready" {
                bail!("a client process said {l:?} instead of ready");
            }
        }
        if env.stop.is_stopped() {
            return Err(Interrupted.into());
        }
        // Far enough ahead for every client to record its start first.
        let start = SystemTime::now() + Duration::from_millis(250);
        let micros = start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros();
        for c in clients.iter_mut() {
            if let Some(stdin) = c.stdin.as_mut() {
                writeln!(stdin, "go {micros}")
                    .and_then(|_| stdin.flush())
                    .context("releasing a client process")?;
            }
        }
        let pids: Vec<u32> = clients.iter().map(|c| c.child.id()).collect();
        let finished = AtomicBool::new(false);
        let ids = std::thread::scope(|scope| {
            // Ctrl+C reaches the clients from the terminal; a stop that
            // reaches only the suite (kill -INT) is passed on to them.
            scope.spawn(|| {
                while !finished.load(Ordering::Relaxed) {
                    if env.stop.is_stopped() {
                        for &pid in &pids {
                            // SAFETY: signalling a child this stage started
                            // and has not yet waited for, so the pid is ours.
                            unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
                        }
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let mut ids = Vec::with_capacity(clients.len());
            let result = (|| -> Result<()> {
                for c in clients.iter_mut() {
                    let l = c.expect("done")?;
                    match l.strip_prefix("done ") {
                        Some(id) => ids.push(RunId(id.trim().to_string())),
                        None => bail!("a client process said {l:?} instead of `done RUN_ID`"),
                    }
                }
                Ok(())
            })();
            finished.store(true, Ordering::Relaxed);
            result.map(|()| ids)
        })?;
        for c in clients.iter_mut() {
            c.stdin.take();
            let status = c.child.wait().context("waiting for a client process")?;
            if let Some(f) = c.forwarder.take() {
                let _ = f.join();
            }
            // 130: interrupted, which the merged run's status says too.
            if !status.success() && status.code() != Some(130) {
                bail!("a client process ended with {status} after its run");
            }
        }
        Ok(ids)
    })();
    if result.is_err() {
        for c in clients.iter_mut() {
            c.abandon();
        }
    }
    result.with_context(|| format!("{tag}: running {} client processes", specs.len()))
}
