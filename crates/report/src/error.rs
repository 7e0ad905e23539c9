//! What can go wrong when reporting on or comparing stored runs, each error
//! naming the run or the value at fault and what would work instead.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ReportError {
    /// The results store refused or could not find something.
    #[error(transparent)]
    Store(#[from] sojourn_store::StoreError),

    /// Nothing was selected.
    #[error("no runs selected: {0}")]
    NoRuns(String),

    /// A run cannot be compared (nothing measured, no common operation).
    #[error("cannot compare: {0}")]
    Compare(String),

    /// An option out of range.
    #[error("{0}")]
    Invalid(String),
}
