//! The database a session benchmarks: the workload's tables checked and
//! set up, connections opened for the phases that share them, and the
//! `load`/`run`/`bench` sequence. The backend's concrete type is known
//! only inside: callers hold a [`Database`] and [`Connections`], and every
//! operation of a phase is still a direct call on the backend's own
//! connection type.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use sojourn_backends::{AnyBackend, Visitor};
use sojourn_core::backend::Backend;
use sojourn_core::executor::{self, BackendConnector};
use sojourn_core::plan::Plan;
use sojourn_core::workload::Phase;

use crate::phase::{self, Bound, Measured, PhaseSpec};
use crate::Session;

/// A database opened for a session.
pub struct Database<'s> {
    session: &'s Session<'s>,
    backend: Arc<AnyBackend>,
    describe: String,
    rt: tokio::runtime::Runtime,
}

impl<'s> Database<'s> {
    pub(crate) fn new(session: &'s Session<'s>, backend: Arc<AnyBackend>) -> Result<Database<'s>> {
        // Setup calls (table checks, server samples, the key-value
        // workload's search for written keys) run here; the executor
        // starts runtime threads of its own for the phases.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        Ok(Database {
            session,
            describe: backend.describe(),
            backend,
            rt,
        })
    }

    /// What the database is, for messages; never holds a password.
    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// Whether the tables of `plan`'s workload hold no data (`None`: the
    /// backend cannot tell). A backend that cannot run the workload
    /// refuses it here, before anything runs.
    pub fn is_empty(&self, plan: &Plan) -> Result<Option<bool>> {
        struct IsEmpty<'a>(&'a Plan, &'a tokio::runtime::Runtime);
        impl Visitor for IsEmpty<'_> {
            type Output = Result<Option<bool>>;
            fn visit<B: Backend>(self, b: &B) -> Self::Output {
                let IsEmpty(plan, rt) = self;
                Ok(rt.block_on(plan.workload.is_empty(b, &plan.schema))?)
            }
        }
        self.backend.visit(IsEmpty(plan, &self.rt))
    }

    /// Whether the data already there has the layout `plan`'s operations
    /// expect; an error saying what would match it if not.
    pub fn check_layout(&self, plan: &Plan) -> Result<()> {
        struct Layout<'a>(&'a Plan, &'a tokio::runtime::Runtime);
        impl Visitor for Layout<'_> {
            type Output = Result<()>;
            fn visit<B: Backend>(self, b: &B) -> Self::Output {
                let Layout(plan, rt) = self;
                Ok(rt.block_on(plan.workload.check_layout(b, &plan.schema))?)
            }
        }
        self.backend.visit(Layout(plan, &self.rt))
    }

    /// Create the workload's tables if absent; with `drop`, empty them.
    pub fn prepare(&self, plan: &Plan, drop: bool) -> Result<()> {
        struct Prepare<'a>(&'a Plan, &'a tokio::runtime::Runtime, bool);
        impl Visitor for Prepare<'_> {
            type Output = Result<()>;
            fn visit<B: Backend>(self, b: &B) -> Self::Output {
                let Prepare(plan, rt, drop) = self;
                Ok(rt.block_on(plan.workload.prepare(b, &plan.schema, drop))?)
            }
        }
        self.backend.visit(Prepare(plan, &self.rt, drop))
    }

    /// After a complete load: what the workload builds once its data is
    /// in (LIOPS's index), said as it goes.
    pub fn finish_load(&self, plan: &Plan) -> Result<()> {
        let Some(what) = plan.workload.after_load() else {
            return Ok(());
        };
        struct Finish<'a>(&'a Plan, &'a tokio::runtime::Runtime);
        impl Visitor for Finish<'_> {
            type Output = Result<()>;
            fn visit<B: Backend>(self, b: &B) -> Self::Output {
                let Finish(plan, rt) = self;
                Ok(rt.block_on(plan.workload.finish_load(b))?)
            }
        }
        self.narrated(&what, "done", Finish(plan, &self.rt))
    }

    /// After a complete phase, stored: what the workload checks of its
    /// data (TPC-C's consistency conditions), said as it goes; an error
    /// names what broke.
    pub fn verify(&self, plan: &Plan) -> Result<()> {
        let Some(what) = plan.workload.after_phase(plan.phase) else {
            return Ok(());
        };
        struct Verify<'a>(&'a Plan, &'a tokio::runtime::Runtime);
        impl Visitor for Verify<'_> {
            type Output = Result<()>;
            fn visit<B: Backend>(self, b: &B) -> Self::Output {
                let Verify(plan, rt) = self;
                Ok(rt.block_on(plan.workload.verify(plan.phase, b))?)
            }
        }
        self.narrated(&what, "checked", Verify(plan, &self.rt))
    }

    /// Run `v` on the backend, saying `what...` before it and how long it
    /// took (`{done} in N s`) after.
    fn narrated<V: Visitor<Output = Result<()>>>(
        &self,
        what: &str,
        done: &str,
        v: V,
    ) -> Result<()> {
        let show = self.session.show;
        let started = Instant::now();
        show.note(&format!("{what}..."));
        self.backend.visit(v)?;
        show.note(&format!(
            "{done} in {:.1} s",
            started.elapsed().as_secs_f64()
        ));
        Ok(())
    }

    /// The checks every workload shares before `load`, `run` or `bench`:
    /// a load prepares the tables (emptied first with `drop`); `bench`
    /// skips loading data that is already there (unless dropping); a run
    /// refuses an empty database. Returns whether the load should run.
    pub fn check_tables(
        &self,
        load: Option<&Plan>,
        run: Option<&Plan>,
        drop: bool,
    ) -> Result<bool> {
        let any = load.or(run).context("no phase to run")?;
        let what = any.workload.what(&any.schema);
        let describe = &self.describe;
        let mut loading = false;
        if let Some(load) = load {
            // With --drop, what is there is about to go: not even tables of
            // another layout (which `is_empty` refuses) matter.
            let empty = if drop { None } else { self.is_empty(load)? };
            if let (Some(run), Some(false)) = (run, empty) {
                // Data of another layout would fail every operation of
                // the run: refused now, saying what would match it.
                self.check_layout(run).with_context(|| {
                    format!("{describe} already holds data for {what}, of another layout")
                })?;
                eprintln!("{describe} already holds data for {what}; skipping load");
            } else if empty == Some(false) && load.workload.load_appends() {
                bail!(
                    "{describe} already holds data for {what}: a second load would add a \
                     second copy of every row (the tables have no unique key), and every \
                     statement of the next run would then fail. Add --drop to load again \
                     from scratch, or run on the data already there (`sojourn run`)"
                );
            } else {
                self.prepare(load, drop)?;
                loading = true;
            }
        }
        if let Some(run) = run.filter(|_| !loading) {
            if self.is_empty(run)? == Some(true) {
                bail!(
                    "{describe} holds no data for {what}: run `sojourn load` with the same \
                     workload first, or `sojourn bench` to load and run"
                );
            }
        }
        Ok(loading)
    }

    /// Open the connections `plan` runs on (its workers, spread over its
    /// runtime threads) and hand them to `f`, which may run several phases
    /// on them; they close when `f` returns.
    pub fn connect<T>(
        &self,
        plan: &Plan,
        f: impl FnOnce(&mut Connections<'_, 's>) -> Result<T>,
    ) -> Result<T> {
        struct Connect<'a, 's, F> {
            db: &'a Database<'s>,
            plan: &'a Plan,
            f: F,
        }
        impl<'s, T, F> Visitor for Connect<'_, 's, F>
        where
            F: FnOnce(&mut Connections<'_, 's>) -> Result<T>,
        {
            type Output = Result<T>;
            fn visit<B: Backend>(self, backend: &B) -> Result<T> {
                let Connect { db, plan, f } = self;
                let connector = BackendConnector {
                    backend,
                    schema: Arc::new(plan.schema.clone()),
                };
                let run = &plan.run;
                executor::with_pool(&connector, run, |pool| {
                    let mut bound = Bound {
                        backend,
                        connector: &connector,
                        pool,
                        rt: &db.rt,
                        describe: &db.describe,
                    };
                    f(&mut Connections {
                        session: db.session,
                        bound: &mut bound,
                    })
                })?
            }
        }
        self.backend.visit(Connect { db: self, plan, f })
    }

    /// `load`, `run` or `bench`: the table checks, then each phase that
    /// should run, on one set of connections when the phases use as many
    /// (else each on its own: the key-value load has writers only). After
    /// each phase, `present` shows it and stores it, and says whether to go
    /// on (not after an interrupted load). A complete load leaves the
    /// workload to finish its tables (LIOPS's index) first.
    pub fn load_and_run(
        &self,
        load: Option<&Plan>,
        run: Option<&Plan>,
        drop: bool,
        present: &mut dyn FnMut(&Plan, Measured<'s>) -> Result<bool>,
    ) -> Result<()> {
        let loading = self.check_tables(load, run, drop)?;
        let phases: Vec<&Plan> = [load.filter(|_| loading), run]
            .into_iter()
            .flatten()
            .collect();
        let Some(first) = phases.first() else {
            return Ok(());
        };
        let mut step = |conns: &mut Connections<'_, 's>, plan: &Plan| -> Result<bool> {
            let brief = plan.phase == Phase::Load && run.is_some();
            // A run after a load is the benchmark's second stage, as a
            // suite numbers them, so each stage of the URI has an index.
            let stage_index = (plan.phase == Phase::Run && load.is_some()).then_some(1);
            let m = conns.run(
                plan,
                PhaseSpec {
                    brief,
                    stage_index,
                    ..PhaseSpec::default()
                },
            )?;
            let complete = !m.outcome.interrupted() && m.outcome.all.failures() == 0;
            if plan.phase == Phase::Load && complete {
                self.finish_load(plan)?;
            }
            let go_on = present(plan, m)?;
            // Checked once the phase is stored, so a check that fails
            // loses nothing measured.
            if complete || plan.phase == Phase::Run {
                self.verify(plan)?;
            }
            Ok(go_on)
        };
        if phases
            .iter()
            .all(|p| p.run.workers() == first.run.workers())
        {
            return self.connect(first, |conns| {
                for plan in &phases {
                    if !step(conns, plan)? {
                        break;
                    }
                }
                Ok(())
            });
        }
        for plan in &phases {
            if !self.connect(plan, |conns| step(conns, plan))? {
                break;
            }
        }
        Ok(())
    }
}

/// Connections open on a database, for one phase after another.
pub struct Connections<'c, 's> {
    session: &'s Session<'s>,
    bound: &'c mut dyn RunPhase<'s>,
}

impl<'s> Connections<'_, 's> {
    /// Run one phase of `plan` on these connections (see [`PhaseSpec`]).
    pub fn run(&mut self, plan: &Plan, spec: PhaseSpec<'_>) -> Result<Measured<'s>> {
        self.bound.run(self.session, plan, spec)
    }
}

/// [`phase::run`] for a backend type the caller does not know.
trait RunPhase<'s> {
    fn run(
        &mut self,
        session: &'s Session<'s>,
        plan: &Plan,
        spec: PhaseSpec<'_>,
    ) -> Result<Measured<'s>>;
}

impl<'s, B: Backend> RunPhase<'s> for Bound<'_, B> {
    fn run(
        &mut self,
        session: &'s Session<'s>,
        plan: &Plan,
        spec: PhaseSpec<'_>,
    ) -> Result<Measured<'s>> {
        phase::run(self, session, plan, spec)
    }
}
