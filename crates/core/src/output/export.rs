//! What every export format implements ([`Export`]), and the workload a
//! run ran as the formats read it back from its properties.

use std::io;

use crate::properties::{Origin, Properties};
use crate::run_record::RunRecord;
use crate::workload::{Phase, Workload};

/// One export format.
pub trait Export {
    /// Write `runs` in this format.
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()>;
}

/// The workload a run ran, as far as the formats need it: the vote,
/// LIOPS and key-value workloads print figures of their own. Read from the
/// run's properties, so stored runs give it too; `None` for YCSB's core
/// workload, which prints nothing of its own.
pub fn workload_of(run: &RunRecord) -> Option<Workload> {
    let mut p = Properties::new();
    for (k, v) in &run.meta().properties {
        p.set(k, v, Origin::Default);
    }
    crate::workload::kind_name(&p)?;
    let phase = if run.meta().phase == Phase::Load.name() {
        Phase::Load
    } else {
        Phase::Run
    };
    Workload::from_properties(&p, phase).ok()
}
