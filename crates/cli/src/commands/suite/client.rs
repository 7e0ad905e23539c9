//! The hidden `sojourn suite-client` process: one client of a suite stage
//! on this machine, which the suite starts once per client when
//! `num_vms` > 1 (a stage with one client runs its share in the suite's
//! own process; agents on other machines run theirs the same way, see
//! `sojourn_session::share`). That process reads its [`ShareSpec`] as
//! one JSON line on stdin (not the command line, where a database password
//! would show in `ps`), opens every connection, prints `ready`, waits for
//! `go MICROS` (the common start instant, in microseconds since the epoch),
//! runs, and prints `done RUN_ID`. Its stdin closing (the suite died) stops
//! the run, which is then kept as interrupted.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use sojourn_core::executor::StopHandle;
use sojourn_session::share::{run_share, ShareRun, ShareSpec};
use sojourn_session::{watch_ctrl_c, RunStore, Silent};
use sojourn_store::Store;

/// `sojourn suite-client`: one client process of a multi-client stage.
pub fn main() -> Result<ExitCode> {
    // Stdin's reads share one buffer, so each line is read whole wherever
    // it is read from; after `go`, a thread only watches for its end.
    let mut first = String::new();
    if std::io::stdin().read_line(&mut first)? == 0 {
        bail!("suite-client reads its spec as one JSON line on stdin; it is started by `sojourn suite`");
    }
    let spec: ShareSpec =
        serde_json::from_str(&first).context("reading the suite client's spec from stdin")?;
    let store = Store::open(&spec.results).context("opening the results store")?;
    let records = RunStore::new(store, spec.spool_dirs.clone());
    let stop = StopHandle::new();
    watch_ctrl_c(stop.clone());
    let mut gate = || -> Result<Option<SystemTime>> {
        let mut out = std::io::stdout();
        writeln!(out, "ready")?;
        out.flush()?;
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line)? == 0 {
            bail!("the suite went away before the stage started");
        }
        let micros: u64 = line
            .strip_prefix("go ")
            .and_then(|m| m.trim().parse().ok())
            .with_context(|| format!("expected `go MICROS` from the suite, got {line:?}"))?;
        let watch = stop.clone();
        std::thread::spawn(move || {
            // Nothing more is sent; the end of stdin means the suite died.
            let mut l = String::new();
            while matches!(std::io::stdin().read_line(&mut l), Ok(n) if n > 0) {
                l.clear();
            }
            watch.stop();
        });
        Ok(Some(UNIX_EPOCH + Duration::from_micros(micros)))
    };
    let how = ShareRun {
        backend: None,
        records: &records,
        store_required: true,
        stop: &stop,
        show: &Silent,
    };
    let share = run_share(&spec, how, &mut gate)?;
    let id = share.run_id.context("the client's run was not stored")?;
    // Warnings are stored with the run; the suite prints them once, with
    // the merged summary.
    writeln!(std::io::stdout(), "done {id}")?;
    Ok(if share.outcome.interrupted() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
