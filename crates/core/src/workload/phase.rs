//! The two phases every workload knows, load and run: the one enum the
//! plan, the workloads and the session agree on, kept in a leaf file so
//! none of them has to import another for it.

/// Whether a worker loads data or runs the operation mix.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Load,
    Run,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Run => "run",
        }
    }
}
