//! The three shapes a phase's offered rate takes: a constant rate, a
//! profile, or a trace's own start times.

use super::profile::Profile;

/// What a `Target` holds.
#[derive(Debug, PartialEq)]
pub(super) enum Shape {
    Constant(f64),
    Profile(Profile),
    /// Intended start times in nanoseconds after the start, in order.
    Trace {
        label: String,
        instants: Vec<u64>,
    },
}
