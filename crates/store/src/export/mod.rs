//! Stored runs in the formats other tools read: PerfKitBenchmarker samples
//! ([`pkb`]), HdrHistogram interval logs ([`hdrlog`]), and per-operation
//! summary tables as CSV or JSON ([`table`]).

pub mod hdrlog;
pub mod pkb;
pub mod table;
