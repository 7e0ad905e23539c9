//! The workload files shipped in `workloads/`, built into the binary so that
//! `-P workloada` works from any directory, as PerfKitBenchmarker's configs
//! name them.

use std::path::Path;

pub const SHIPPED: &[(&str, &str)] = &[
    ("workloada", include_str!("../../../workloads/workloada")),
    ("workloadb", include_str!("../../../workloads/workloadb")),
    ("workloadc", include_str!("../../../workloads/workloadc")),
    ("workloadd", include_str!("../../../workloads/workloadd")),
    ("workloade", include_str!("../../../workloads/workloade")),
    ("workloadf", include_str!("../../../workloads/workloadf")),
    ("workloadx", include_str!("../../../workloads/workloadx")),
    ("vote", include_str!("../../../workloads/vote")),
    ("keyvalue", include_str!("../../../workloads/keyvalue")),
    ("liops", include_str!("../../../workloads/liops")),
    ("tpcc", include_str!("../../../workloads/tpcc")),
];

/// The shipped workload a missing `-P` path names, if any
/// (`workloada` or `workloads/workloada`).
pub fn shipped(path: &Path) -> Option<&'static str> {
    if path.exists() {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    let parent_ok = path
        .parent()
        .is_none_or(|p| p.as_os_str().is_empty() || p.ends_with("workloads"));
    if !parent_ok {
        return None;
    }
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
