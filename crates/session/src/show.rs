//! How a phase is shown while it runs: the command line's part of a
//! phase (its progress bar, dashboard, metrics endpoint), as the session
//! calls it. Apart from the phase pipeline so that the store writer can
//! say what happened to a run without importing the pipeline.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sojourn_core::executor::{Observer, RunOutcome};
use sojourn_core::plan::MeasurementInterval;
use sojourn_core::rate::Target;
use sojourn_core::workload::{Narrator, Phase};

/// How phases are shown while they run; the command line's part.
pub trait Show: Sync {
    /// The live display of one phase (a progress bar, YCSB's status lines,
    /// nothing), called once per interval.
    fn watch<'v>(&'v self, phase: &PhaseView) -> Box<dyn Watch + 'v>;

    /// A line about the phase for the person running it (on stderr, never
    /// among the summary's lines on stdout).
    fn note(&self, line: &str) {
        eprintln!("{line}");
    }
}

/// A phase's live display.
pub trait Watch: Observer {
    /// The phase has ended, with `outcome` unless it failed: clear what is
    /// drawn, or draw the totals a last time.
    fn finish(&self, _outcome: Option<&RunOutcome>) {}
}

/// What a display needs to know of the phase it shows.
pub struct PhaseView {
    pub phase: Phase,
    /// Operations the phase will perform, when it has a count.
    pub expected_ops: Option<u64>,
    pub status_interval: Duration,
    pub measurement_interval: MeasurementInterval,
    /// The workload's own status line, if it has one.
    pub narrator: Option<Arc<dyn Narrator>>,
    /// The workload's name, as the run is stored.
    pub workload: String,
    /// The database, password-free.
    pub database: String,
    /// Connections the phase runs on.
    pub connections: usize,
    /// The rate each group offers (constant, a profile or a trace); empty
    /// when any group runs in a closed loop.
    pub targets: Vec<Target>,
    /// The run's labels (a suite's stage and iteration, a capacity step).
    pub labels: BTreeMap<String, String>,
}

/// Shows nothing and says nothing: a suite's client processes.
pub struct Silent;

struct NoWatch;
impl Observer for NoWatch {}
impl Watch for NoWatch {}

impl Show for Silent {
    fn watch<'v>(&'v self, _: &PhaseView) -> Box<dyn Watch + 'v> {
        Box::new(NoWatch)
    }

    fn note(&self, _: &str) {}
}
