//! What is wrong with a `--rate` profile or a `--trace` file.

use std::path::PathBuf;

/// A bad `--rate` profile or `--trace` file.
#[derive(Debug, thiserror::Error)]
pub enum RateError {
    #[error("segment {index} ('{text}'): {problem}")]
    Segment {
        index: usize,
        text: String,
        problem: String,
    },
    #[error("{problem}")]
    Whole { problem: String },
    #[error("cannot read trace {}: {reason}", path.display())]
    Read { path: PathBuf, reason: String },
    #[error("{}:{line}: {problem}", file.display())]
    Trace {
        file: PathBuf,
        line: usize,
        problem: String,
    },
}
