//! A phase's record in the results store: begun before its first
//! operation, each time-series interval written as it closes (by a thread
//! of its own, so a slow store never holds up the run's clock), then the
//! totals and final status, or the run marked failed.
//!
//! A measured run is never dropped. The store waits for other processes'
//! locks (up to [`sojourn_store::WAIT`]); when it still cannot take the
//! run (locked for longer, a full disk, PostgreSQL unreachable, or a
//! default store that did not open), the run, or the rest of it, goes to a
//! [`Spool`] file in the first of the store's spool folders that takes it,
//! and stderr says where and how it is brought in (the next command that
//! opens the store imports it). A run that cannot be kept anywhere fails
//! the phase once it has been shown.
//!
//! A suite's client process needs its run in the store, which the suite
//! merges: a store that cannot begin it fails the client before it
//! measures, and a run that had to be spooled fails it after.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{mpsc, Mutex, MutexGuard};

use anyhow::{bail, Result};
use sojourn_core::executor::{Interval, RunOutcome};
use sojourn_core::output::Warning;
use sojourn_core::redact;
use sojourn_store::{RunId, RunMeta, RunStatus, Spool, Store, StoreError};

use crate::places::RunStore;
use crate::show::Show;

/// Where a run's rows are going now.
enum Target<'s> {
    /// Not recorded (--no-store, a capacity probe).
    Nowhere,
    /// The store, which has `written` of the run's intervals.
    Store { store: &'s Store, written: u64 },
    /// A spool file: the store could not take the run (from the start, or
    /// from some interval on).
    Spool(Spool),
    /// Neither the store nor any spool folder took it: why.
    Lost(String),
}

/// Where a finished run was kept.
pub(crate) enum Kept {
    /// Not recorded.
    Nothing,
    /// In the store.
    Store(RunId),
    /// In a spool file, waiting to be imported.
    Spool(RunId, PathBuf),
}

/// The run being recorded, if it is.
pub(crate) struct Recording<'s> {
    records: Option<&'s RunStore>,
    meta: Option<RunMeta>,
    required: bool,
    target: Mutex<Target<'s>>,
    /// Where its warnings go: through the display, which may own the
    /// terminal while the run goes on.
    show: &'s dyn Show,
}

impl<'s> Recording<'s> {
    /// Nothing is recorded.
    pub(crate) fn none(show: &'s dyn Show) -> Recording<'s> {
        Recording {
            records: None,
            meta: None,
            required: false,
            target: Mutex::new(Target::Nowhere),
            show,
        }
    }

    /// Record that `meta`'s run has begun: in the store, else in a spool
    /// file (unless the run is `required` in the store, which is an error
    /// then: nothing has been measured yet).
    pub(crate) fn begin(
        records: &'s RunStore,
        required: bool,
        meta: &RunMeta,
        show: &'s dyn Show,
    ) -> Result<Recording<'s>> {
        let mut rec = Recording {
            records: Some(records),
            meta: Some(meta.clone()),
            required,
            target: Mutex::new(Target::Nowhere),
            show,
        };
        let target = match records.store() {
            Some(store) => match store.begin_run(meta) {
                Ok(_) => Target::Store { store, written: 0 },
                Err(e) if required => return Err(e.into()),
                Err(e) => rec.spool(0, &e.to_string()),
            },
            // Why it did not open was said when it was opened.
            None => rec.spool(
                0,
                &format!("results store {} is not open", records.location()),
            ),
        };
        *rec.target.get_mut().unwrap_or_else(|e| e.into_inner()) = target;
        Ok(rec)
    }

    /// The store's location, password-free, if the run is recorded.
    pub(crate) fn location(&self) -> Option<&str> {
        self.records.map(|r| r.location())
    }

    pub(crate) fn id(&self) -> Option<&RunId> {
        self.meta.as_ref().map(|m| &m.id)
    }

    fn target(&self) -> MutexGuard<'_, Target<'s>> {
        self.target.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A spool file for the run, of which the store has the first
    /// `written` intervals, because of `why`; said on stderr.
    fn spool(&self, written: u64, why: &str) -> Target<'s> {
        let (Some(records), Some(meta)) = (self.records, &self.meta) else {
            return Target::Nowhere;
        };
        let mut errors = Vec::new();
        for dir in records.spool_dirs() {
            match Spool::create(dir, meta, written) {
                Ok(spool) => {
                    self.show.note(&format!(
                        "warning: {why}; run {} {} kept in the spool file {} instead",
                        meta.id,
                        if written == 0 {
                            "is".to_string()
                        } else {
                            format!("from interval {written} on is")
                        },
                        spool.path().display()
                    ));
                    return Target::Spool(spool);
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        let lost = if errors.is_empty() {
            format!("{why}; and there is no spool folder for it")
        } else {
            format!(
                "{why}; and no spool file could be made: {}",
                errors.join("; ")
            )
        };
        self.show.note(&format!("warning: {lost}"));
        Target::Lost(lost)
    }

    /// Run `f` with a sender whose intervals a writer thread stores as
    /// they arrive (`None` when nothing is recorded); returns once every
    /// interval is written, before the totals are.
    pub(crate) fn writing<T>(&self, f: impl FnOnce(Option<mpsc::Sender<Interval>>) -> T) -> T {
        if matches!(*self.target(), Target::Nowhere | Target::Lost(_)) {
            return f(None);
        }
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<Interval>();
            scope.spawn(move || {
                let mut warned = false;
                for iv in rx {
                    if let Err(e) = self.write_interval(&iv) {
                        if !std::mem::replace(&mut warned, true) {
                            self.show.note(&format!(
                                "warning: {e}; the run goes on, but its stored time series will have gaps"
                            ));
                        }
                    }
                }
            });
            f(Some(tx))
        })
    }

    /// Store one interval where the run is going; a store that fails
    /// sends it, and the rest of the run, to a spool file.
    fn write_interval(&self, iv: &Interval) -> Result<(), StoreError> {
        let Some(id) = self.id() else { return Ok(()) };
        let mut target = self.target();
        if let Target::Store { store, written } = &mut *target {
            match store.write_interval(id, iv) {
                Ok(()) => {
                    *written += 1;
                    return Ok(());
                }
                Err(e) => {
                    let written = *written;
                    *target = self.spool(written, &e.to_string());
                }
            }
        }
        match &*target {
            Target::Spool(spool) => spool.store().write_interval(id, iv),
            _ => Ok(()),
        }
    }

    /// Mark the run failed: the phase failed after it began.
    pub(crate) fn fail(&self, error: &anyhow::Error) {
        let Some(id) = self.id() else { return };
        let message = redact::text(&format!("{error:#}"));
        let target = std::mem::replace(&mut *self.target(), Target::Nowhere);
        match target {
            Target::Store { store, .. } => {
                if let Err(se) = store.fail_run(id, &message) {
                    self.show.note(&format!("warning: {se}"));
                }
            }
            Target::Spool(spool) => {
                let marked = spool.store().fail_run(id, &message);
                match marked.and_then(|()| spool.close()) {
                    Ok(path) => self.show.note(&self.kept_note(id, &path)),
                    Err(se) => self.show.note(&format!("warning: {se}")),
                }
            }
            Target::Nowhere | Target::Lost(_) => {}
        }
    }

    /// Store the totals, the final status, the warnings and `labels`
    /// where the run is going (a store that fails now sends the run to a
    /// spool file). An error when the run is kept nowhere, or is `required`
    /// in the store and is not there.
    pub(crate) fn finish(
        &self,
        outcome: &RunOutcome,
        warnings: &[Warning],
        labels: &BTreeMap<String, String>,
    ) -> Result<Kept> {
        let Some(id) = self.id() else {
            return Ok(Kept::Nothing);
        };
        let status = if outcome.interrupted() {
            RunStatus::Interrupted
        } else {
            RunStatus::Completed
        };
        let warnings: Vec<String> = warnings
            .iter()
            .map(|w| redact::text(&w.to_string()))
            .collect();
        let store_in = |store: &Store| {
            store
                .add_labels(id, labels)
                .and_then(|()| store.finish_run(id, outcome, status, &warnings))
        };
        let mut target = std::mem::replace(&mut *self.target(), Target::Nowhere);
        if let Target::Store { store, written } = target {
            match store_in(store) {
                Ok(()) => return Ok(Kept::Store(id.clone())),
                Err(e) => target = self.spool(written, &e.to_string()),
            }
        }
        let path = match target {
            Target::Spool(spool) => match store_in(spool.store()).and_then(|()| spool.close()) {
                Ok(path) => path,
                Err(e) => bail!(
                    "run {id} could not be stored anywhere: the spool file failed too: {e}; the \
                     summary above is all that is kept of it"
                ),
            },
            Target::Lost(why) => bail!(
                "run {id} could not be stored anywhere ({why}); the summary above is all that \
                 is kept of it"
            ),
            Target::Nowhere | Target::Store { .. } => return Ok(Kept::Nothing),
        };
        self.show.note(&self.kept_note(id, &path));
        if self.required {
            bail!(
                "run {id} is in the spool file {}, not in the results store, where it is needed",
                path.display()
            );
        }
        Ok(Kept::Spool(id.clone(), path))
    }

    /// How a spooled run gets into the store.
    fn kept_note(&self, id: &RunId, path: &std::path::Path) -> String {
        let location = self.records.map_or("", |r| r.location());
        format!(
            "run {id} is kept in {path}: the next sojourn command that opens {location} imports \
             it, or `sojourn results import {path}` does",
            path = path.display()
        )
    }
}
