//! sojourn-report: what sojourn makes of stored runs for people to read.
//!
//! - [`tables`]: the PerfKitBenchmarker walkthrough's two tables
//!   (performance; resource and cost, for runs that carry a price) and the
//!   Redis/Tair whitepaper's (summary) as Markdown or CSV.
//! - [`html`]: one self-contained HTML file with hand-written SVG plots per
//!   run and operation (throughput and latency percentiles over time, the
//!   percentile spectrum) and, for runs at several targets or a capacity
//!   session, latency against throughput with the knee marked ([`curve`]).
//! - [`compare`]: two runs side by side with the change in every figure and
//!   whether it is significant (Welch's t-test on batch means, confidence
//!   intervals of percentiles), as text or JSON.
//! - [`select`]: which stored runs a command line names.
//!
//! The statistics themselves are driver-free and live in
//! [`sojourn_core::stats`]; this crate only reads [`sojourn_store`]'s
//! [`RunRecord`](sojourn_store::RunRecord)s and renders, and knows nothing
//! of terminals beyond an on/off switch for colour.

pub mod changepoint;
pub mod compare;
pub mod curve;
mod error;
pub mod groups;
pub mod history;
pub mod html;
pub mod run;
pub mod select;
mod svg;
pub mod tables;

pub use error::ReportError;
pub use run::Latency;
