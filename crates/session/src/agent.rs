//! `sojourn agent`: a client machine that runs the shares coordinators post
//! in a PostgreSQL results store (see [`crate::fleet`] for the other side
//! and the failure semantics).
//!
//! It registers, heartbeats every [`HEARTBEAT`] on a connection of its own
//! (measuring its clock's offset from the store server's as it goes),
//! claims one share at a time, and runs it as every phase runs: share 0
//! sets the database up first, every share connects, says it is ready,
//! waits for the common start, runs, and reports the run it recorded. A
//! run the store cannot take in time is spooled and imported once the
//! store answers again, then reported: nothing measured is lost.
//!
//! It stops a share when the coordinator asks (Ctrl+C there), when the
//! coordinator goes silent, or on Ctrl+C here; it exits when asked
//! (`sojourn agents stop`), when another process registers under its name,
//! or after an idle timeout; leaving, it marks itself gone in the store,
//! so that `sojourn agents list` and `agents stop` no longer count it. A
//! second Ctrl+C quits at once and writes nothing more (the store may be
//! what it waits on): like one killed outright, it is gone once its
//! heartbeat is [`DEAD_AFTER`](crate::fleet::DEAD_AFTER) old, and the
//! coordinator gives its share up then.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use sojourn_core::executor::StopHandle;
use sojourn_core::plan::Plan;
use sojourn_core::redact;
use sojourn_store::{AgentInfo, ClaimedShare, ShareReport, Store};

use crate::fleet::{
    AgentShare, Setup, COORDINATOR_SILENT, GATE_POLL, HEARTBEAT, SETUP_FAILED, SETUP_READY,
    SETUP_SKIPPED,
};
use crate::share::{run_share, ShareRun};
use crate::{Database, PhaseView, RunStore, RunTags, Session, Show, Silent, Watch};

/// How long a call on the agent's control connection waits for the store
/// before it counts as unreachable (a heartbeat's worth, twice).
const CONTROL_WAIT: Duration = Duration::from_secs(2);

/// How often an idle agent looks for a posted share: a coordinator waits
/// at most this long for it, and the store takes one read per look.
const IDLE_POLL: Duration = Duration::from_millis(500);
/// How often an idle agent says which posted phases it leaves to agents of
/// their version.
const FOREIGN_LOOK: Duration = Duration::from_secs(10);

/// How an agent is run.
pub struct AgentOptions {
    /// The shared store (PostgreSQL).
    pub results: String,
    /// Its name (a pod's name, the host name).
    pub name: String,
    /// Exit after this long without a share; `None`: never.
    pub idle_timeout: Option<Duration>,
    /// Where runs the store cannot take are spooled.
    pub spool_dirs: Vec<std::path::PathBuf>,
    /// What watches each share's phase beside the log (the command line's
    /// Prometheus endpoint); its notes are not used.
    pub watch: Option<Box<dyn Show>>,
}

/// The agent's log: its stderr, each line naming it.
struct Log<'o> {
    name: String,
    watch: Option<&'o dyn Show>,
}

impl Show for Log<'_> {
    fn watch<'v>(&'v self, phase: &PhaseView) -> Box<dyn Watch + 'v> {
        static SILENT: Silent = Silent;
        self.watch.unwrap_or(&SILENT).watch(phase)
    }

    fn note(&self, line: &str) {
        eprintln!("agent {}: {line}", self.name);
    }
}

/// What the heartbeat thread and the share being run share.
#[derive(Default)]
struct Current {
    /// The share running now: its phase and its stop handle.
    share: Mutex<Option<(String, StopHandle)>>,
    /// `idle` or `running`.
    running: AtomicBool,
    /// The agent's clock minus the store server's, in µs.
    offset_us: Mutex<Option<f64>>,
}

/// Serve shares until told to stop. `stop` is Ctrl+C: the first stops
/// the share being run (and the agent after it), as on any command.
pub fn serve(opts: &AgentOptions, stop: StopHandle) -> Result<()> {
    let log = Log {
        name: opts.name.clone(),
        watch: opts.watch.as_deref(),
    };
    // Claims, heartbeats and the phase's signals share one connection,
    // which gives up on a silent store within CONTROL_WAIT (and connects
    // again once it answers); the run's own writes have the other.
    let control = Arc::new(Store::open_waiting(&opts.results, CONTROL_WAIT)?);
    control.require_shared()?;
    let records = RunStore::new(Store::open(&opts.results)?, opts.spool_dirs.clone());
    let info = AgentInfo {
        name: opts.name.clone(),
        incarnation: sojourn_store::new_run_id(),
        host: sojourn_store::host_name(),
        pid: std::process::id(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    control.register_agent(&info)?;
    log.note(&format!(
        "registered in {} (sojourn {}, {} cores, incarnation {})",
        control.location(),
        info.version,
        info.cores,
        &info.incarnation[..8]
    ));
    let current = Arc::new(Current::default());
    let exit = StopHandle::new();
    let beats = {
        let (current, exit, stop, info) =
            (current.clone(), exit.clone(), stop.clone(), info.clone());
        let control = control.clone();
        let name = opts.name.clone();
        std::thread::Builder::new()
            .name("sojourn-heartbeat".into())
            .spawn(move || {
                heartbeat(
                    &control,
                    &info,
                    &current,
                    &exit,
                    &stop,
                    &Log { name, watch: None },
                )
            })
            .context("starting the heartbeat thread")?
    };
    let mut idle_since = Instant::now();
    let mut told_versions = std::collections::BTreeSet::new();
    let mut last_look = None;
    let result = (|| -> Result<()> {
        loop {
            if exit.is_stopped() || stop.is_stopped() {
                return Ok(());
            }
            let claim = match control.claim_share(&info) {
                Ok(c) => c,
                Err(e) => {
                    log.note(&format!("claiming a share: {e}; trying again"));
                    std::thread::sleep(HEARTBEAT);
                    continue;
                }
            };
            let Some(claim) = claim else {
                let look = last_look.is_none_or(|t: Instant| t.elapsed() >= FOREIGN_LOOK);
                if let Some(foreign) = look
                    .then(|| control.foreign_phases(&info.version).ok())
                    .flatten()
                {
                    last_look = Some(Instant::now());
                    for (phase, version) in foreign {
                        if told_versions.insert(phase.clone()) {
                            log.note(&format!(
                                "not taking phase {phase}: its coordinator runs sojourn \
                                 {version}, this agent {} (agents take only their own \
                                 version's phases)",
                                info.version
                            ));
                        }
                    }
                }
                if opts.idle_timeout.is_some_and(|t| idle_since.elapsed() >= t) {
                    log.note(&format!(
                        "no share for {:.0} s: exiting (--idle-timeout)",
                        idle_since.elapsed().as_secs_f64()
                    ));
                    return Ok(());
                }
                std::thread::sleep(IDLE_POLL);
                continue;
            };
            let share_stop = StopHandle::new();
            *current.share.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((claim.phase_id.clone(), share_stop.clone()));
            current.running.store(true, Ordering::SeqCst);
            let outcome = run_claim(
                &claim,
                &info,
                &control,
                &records,
                &current,
                &share_stop,
                &log,
            );
            current.running.store(false, Ordering::SeqCst);
            *current.share.lock().unwrap_or_else(|e| e.into_inner()) = None;
            if let Err(e) = outcome {
                let e = redact::text(&format!("{e:#}"));
                log.note(&format!(
                    "share {} of phase {}: {e}",
                    claim.index, claim.phase_id
                ));
                // Said once; if the store is away, the coordinator finds
                // the share lost instead.
                let _ = control.share_failed(&claim.phase_id, claim.index, &info.incarnation, &e);
            }
            idle_since = Instant::now();
        }
    })();
    exit.stop();
    let _ = beats.join();
    // After the last heartbeat, which would set it idle again. A store
    // that does not answer now leaves the heartbeat's age to say it.
    if let Err(e) = control.agent_gone(&info) {
        log.note(&format!("saying it exits: {e}"));
    }
    result
}

/// The heartbeat thread: liveness, the clock's offset, and the stops that
/// reach the agent through the store.
fn heartbeat(
    store: &Store,
    info: &AgentInfo,
    current: &Current,
    exit: &StopHandle,
    stop: &StopHandle,
    log: &Log,
) {
    let mut last_offset = None::<Instant>;
    let mut unreachable_since: Option<Instant> = None;
    while !exit.is_stopped() {
        let started = Instant::now();
        if last_offset.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
            if let Some(o) = clock_offset_us(store) {
                *current.offset_us.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
                last_offset = Some(Instant::now());
            }
        }
        let offset = *current.offset_us.lock().unwrap_or_else(|e| e.into_inner());
        let state = if current.running.load(Ordering::SeqCst) {
            "running"
        } else {
            "idle"
        };
        match store.agent_heartbeat(info, state, offset) {
            Ok(beat) => {
                if let Some(since) = unreachable_since.take() {
                    log.note(&format!(
                        "the store answers again after {:.1} s",
                        since.elapsed().as_secs_f64()
                    ));
                }
                if beat.replaced {
                    log.note("another process registered under this agent's name: exiting");
                    exit.stop();
                    stop_share(current);
                } else if beat.stop_requested && !exit.is_stopped() {
                    log.note("asked to stop (`sojourn agents stop`): exiting after the share");
                    exit.stop();
                    stop_share(current);
                }
                watch_phase(store, current, log);
            }
            Err(_) => {
                if unreachable_since.is_none() {
                    log.note("the store does not answer; heartbeats wait for it");
                    unreachable_since = Some(Instant::now());
                }
            }
        }
        if stop.is_stopped() {
            exit.stop();
        }
        std::thread::sleep(HEARTBEAT.saturating_sub(started.elapsed()));
    }
}

/// Stop the share being run, if any.
fn stop_share(current: &Current) {
    if let Some((_, s)) = &*current.share.lock().unwrap_or_else(|e| e.into_inner()) {
        s.stop();
    }
}

/// Stop the share when its phase asks, has ended, or its coordinator went
/// silent (the phase is then failed).
fn watch_phase(store: &Store, current: &Current, log: &Log) {
    let Some((phase, stop)) = current
        .share
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
    else {
        return;
    };
    let Ok(signal) = store.phase_signal(&phase) else {
        return;
    };
    if stop.is_stopped() {
        return;
    }
    if signal.stop_requested {
        log.note(&format!("phase {phase}: the coordinator asked to stop"));
        stop.stop();
    } else if signal.coordinator_age_s > COORDINATOR_SILENT.as_secs_f64() {
        let why = format!(
            "the coordinator went silent ({:.0} s without a heartbeat)",
            signal.coordinator_age_s
        );
        log.note(&format!("phase {phase}: {why}; stopping"));
        let _ = store.abandon_phase(&phase, &why);
        stop.stop();
    } else if !matches!(signal.state.as_str(), "posted" | "running") {
        stop.stop();
    }
}

/// The agent's clock minus the store server's, in µs: of three readings,
/// the one with the shortest round trip, taken at its midpoint.
fn clock_offset_us(store: &Store) -> Option<f64> {
    (0..3)
        .filter_map(|_| {
            let before = SystemTime::now();
            let server = store.server_clock().ok()?;
            let after = SystemTime::now();
            let rtt = after.duration_since(before).ok()?;
            let mid = secs(before) + rtt.as_secs_f64() / 2.0;
            Some((rtt, (mid - server) * 1e6))
        })
        .min_by_key(|(rtt, _)| *rtt)
        .map(|(_, o)| o)
}

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Run one claimed share to its report.
fn run_claim(
    claim: &ClaimedShare,
    info: &AgentInfo,
    control: &Store,
    records: &RunStore,
    current: &Current,
    stop: &StopHandle,
    log: &Log,
) -> Result<()> {
    let job: AgentShare = serde_json::from_str(&claim.spec).context("reading the share's spec")?;
    let phase = &claim.phase_id;
    log.note(&format!(
        "claimed share {} of {} of phase {phase} ({} of run URI {})",
        claim.index, claim.shares, job.share.phase, job.share.run_uri
    ));
    match job.setup {
        Some(setup) => {
            let said = match set_up(&job, setup, log) {
                Ok(None) => SETUP_READY.to_string(),
                Ok(Some(skipped)) => format!("{SETUP_SKIPPED}{skipped}"),
                Err(e) => format!("{SETUP_FAILED}{}", redact::text(&format!("{e:#}"))),
            };
            persist(control, log, "reporting the setup", || {
                control.report_setup(phase, &said)
            })?;
            if said != SETUP_READY {
                bail!("not run: setup {said}");
            }
        }
        None => wait_for_setup(control, phase, stop, log)?,
    }
    let mut started_at: Option<SystemTime> = None;
    let mut gate = || -> Result<Option<SystemTime>> {
        if !persist(control, log, "saying the share is ready", || {
            control.share_ready(phase, claim.index, &info.incarnation)
        })? {
            bail!("the coordinator gave the share up before it was ready");
        }
        loop {
            let signal = persist(control, log, "looking for the start", || {
                control.phase_signal(phase)
            })?;
            if let Some(start) = signal.start_unix {
                persist(control, log, "saying the share runs", || {
                    control.share_running(phase, claim.index, &info.incarnation)
                })?;
                let at = UNIX_EPOCH + Duration::from_secs_f64(start);
                started_at = Some(at);
                return Ok(Some(at));
            }
            if stop.is_stopped() || signal.stop_requested || signal.state != "posted" {
                bail!("the phase ended before it started ({})", signal.state);
            }
            if signal.coordinator_age_s > COORDINATOR_SILENT.as_secs_f64() {
                bail!("the coordinator went silent before the start");
            }
            std::thread::sleep(GATE_POLL);
        }
    };
    let how = ShareRun {
        backend: None,
        records,
        store_required: false,
        stop,
        show: log,
    };
    let share = run_share(&job.share, how, &mut gate)?;
    let lateness_us = started_at.map(|at| match share.outcome.started_at.duration_since(at) {
        Ok(d) => d.as_secs_f64() * 1e6,
        Err(e) => -e.duration().as_secs_f64() * 1e6,
    });
    let run_id = match (&share.run_id, &share.spooled) {
        (Some(id), _) => id.clone(),
        (None, Some(file)) => import_when_back(records, file, log)?,
        (None, None) => bail!("the share's run was kept nowhere"),
    };
    if job.finish_load && !share.outcome.interrupted() && share.outcome.all.failures() == 0 {
        finish_load(&job, log)?;
    }
    let offset = *current.offset_us.lock().unwrap_or_else(|e| e.into_inner());
    let reported = persist(control, log, "reporting the run", || {
        control.share_done(
            phase,
            claim.index,
            &info.incarnation,
            &ShareReport {
                run_id: run_id.as_str(),
                start_lateness_us: lateness_us,
                clock_offset_us: offset,
            },
        )
    })?;
    log.note(&format!(
        "share {} of phase {phase}: run {run_id}, {} operations in {:.1} s{}",
        claim.index,
        share.outcome.all.ops_done,
        share.outcome.elapsed.as_secs_f64(),
        if reported {
            ""
        } else {
            " (the coordinator had given the share up; the run is in the store)"
        }
    ));
    Ok(())
}

/// `f` until the store answers it: a store unreachable for a while (a
/// network cut, a restart) must not cost a share what it measured, so
/// the agent says so once and tries again, for up to [`PATIENCE`].
fn persist<T>(
    store: &Store,
    log: &Log,
    what: &str,
    mut f: impl FnMut() -> Result<T, sojourn_store::StoreError>,
) -> Result<T> {
    let started = Instant::now();
    let mut said = false;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            // The store answers and still refuses: a real error.
            Err(e) if store.server_clock().is_ok() => return Err(e.into()),
            Err(e) if started.elapsed() < PATIENCE => {
                if !said {
                    log.note(&format!(
                        "{what}: the store does not answer ({e}); trying again"
                    ));
                    said = true;
                }
                std::thread::sleep(HEARTBEAT);
            }
            Err(e) => bail!(
                "{what}: the store did not answer for {:.0} s: {e}",
                PATIENCE.as_secs_f64()
            ),
        }
    }
}

/// How long an agent keeps trying to tell the store what its share did.
const PATIENCE: Duration = Duration::from_secs(300);

/// Share 0's setup: the workload's table checks as `load`, `run` and
/// `bench` make them. `Some(why)` when the phase is to be skipped.
fn set_up(job: &AgentShare, setup: Setup, log: &Log) -> Result<Option<String>> {
    with_database(job, log, |db, plan| match setup {
        Setup::Load { drop, skip_if_data } => {
            let loading = db.check_tables(Some(plan), skip_if_data.then_some(plan), drop)?;
            Ok((!loading).then(|| {
                format!(
                    "{} already holds data for {}",
                    db.describe(),
                    plan.workload.what(&plan.schema)
                )
            }))
        }
        Setup::Run => {
            db.check_tables(None, Some(plan), false)?;
            Ok(None)
        }
    })
}

/// What a complete load leaves to build (LIOPS's index).
fn finish_load(job: &AgentShare, log: &Log) -> Result<()> {
    with_database(job, log, |db, plan| db.finish_load(plan))
}

/// `f` over the share's database, opened as `load`, `run` and `bench` open
/// it, with the share's plan.
fn with_database<T>(
    job: &AgentShare,
    log: &Log,
    f: impl FnOnce(&Database<'_>, &Plan) -> Result<T>,
) -> Result<T> {
    let (props, plan) = job.share.plan()?;
    let backend = Arc::new(job.share.open_backend(&props, &plan)?);
    let session = Session::new(
        None,
        RunTags::new(Vec::new()),
        &props,
        StopHandle::new(),
        log,
    );
    let db = session.database(backend)?;
    f(&db, &plan)
}

/// Wait until share 0's agent has set the database up.
fn wait_for_setup(control: &Store, phase: &str, stop: &StopHandle, log: &Log) -> Result<()> {
    loop {
        let signal = persist(control, log, "waiting for the setup", || {
            control.phase_signal(phase)
        })?;
        match signal.setup.as_deref() {
            Some(SETUP_READY) => return Ok(()),
            Some(other) => bail!("not run: setup {other}"),
            None => {}
        }
        if stop.is_stopped() || signal.stop_requested || signal.state != "posted" {
            bail!(
                "the phase ended before its setup was done ({})",
                signal.state
            );
        }
        if signal.coordinator_age_s > COORDINATOR_SILENT.as_secs_f64() {
            bail!("the coordinator went silent before the start");
        }
        std::thread::sleep(GATE_POLL);
    }
}

/// A run spooled because the store did not answer at its end: import it
/// once the store answers again (trying for as long as it takes, saying
/// so), then report it.
fn import_when_back(
    records: &RunStore,
    file: &std::path::Path,
    log: &Log,
) -> Result<sojourn_store::RunId> {
    let store = records
        .store()
        .context("no store to import the spooled run into")?;
    let mut said = false;
    loop {
        match store.import(file) {
            Ok(ids) => {
                log.note(&format!(
                    "imported the run kept in {} into {}",
                    file.display(),
                    store.location()
                ));
                return ids.into_iter().next().context("the spool file held no run");
            }
            // The store answers and still refuses the file: what is lost
            // is said, and the file stays for `sojourn results import`.
            Err(e) if store.server_clock().is_ok() => bail!(
                "the run kept in {} could not be imported into {}: {e}; it stays there \
                 (`sojourn results import {}` tries again)",
                file.display(),
                store.location(),
                file.display()
            ),
            Err(e) => {
                if !said {
                    log.note(&format!(
                        "the run is kept in {}; importing it once the store answers ({e})",
                        file.display()
                    ));
                    said = true;
                }
                std::thread::sleep(HEARTBEAT * 2);
            }
        }
    }
}
