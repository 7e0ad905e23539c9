//! What can go wrong with a results store, each error naming the store,
//! the run or the value at fault and what is accepted instead.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// The location is neither a file path nor a supported URL.
    #[error("results store {location}: {reason}")]
    Location { location: String, reason: String },

    /// The database refused an operation. The driver's error is in the
    /// message (and not also a `source`, which would print it twice).
    #[error("results store {location}: {context}: {error}")]
    Sqlite {
        location: String,
        context: String,
        error: rusqlite::Error,
    },

    #[cfg(feature = "postgres")]
    #[error("results store {location}: {context}: {detail}")]
    Postgres {
        location: String,
        context: String,
        /// The server's own message when there is one (the driver's
        /// Display says only "db error").
        detail: String,
        error: tokio_postgres::Error,
    },

    /// The database did not answer within the store's wait.
    #[cfg(feature = "postgres")]
    #[error(
        "results store {location}: {context}: no answer within {:.0} s",
        waited.as_secs_f64()
    )]
    TimedOut {
        location: String,
        context: String,
        waited: std::time::Duration,
    },

    /// The store was written by a newer sojourn.
    #[error(
        "results store {location} has schema version {found}, newer than the {supported} this \
         sojourn knows; upgrade sojourn or use another --results store"
    )]
    TooNew {
        location: String,
        found: u32,
        supported: u32,
    },

    /// No run matches what was asked for.
    #[error("no run {0:?} in the results store; `sojourn results list` shows the stored runs")]
    NoSuchRun(String),

    /// A run id prefix too short to name a run by.
    #[error(
        "{0:?} is too short to name a run: give at least 4 characters of its id \
         (`sojourn results list` shows them), its run URI, or `last`"
    )]
    ShortPrefix(String),

    /// A run URI names several stages of one benchmark.
    #[error(
        "run URI {uri} covers {count} stages of one benchmark ({stages}): name one as \
         {uri}/STAGE, or export them all with `sojourn results export {uri}`"
    )]
    Stages {
        uri: String,
        count: usize,
        /// Each stage's selector and what it ran: `{uri}/0 (load)`.
        stages: String,
    },

    /// A run id prefix matches several runs.
    #[error("{prefix:?} matches {count} runs ({examples}); give more of the run id")]
    Ambiguous {
        prefix: String,
        count: usize,
        examples: String,
    },

    /// Stored data that cannot be read back (a damaged histogram, an
    /// unknown operation kind).
    #[error("results store {location}: run {run}: {reason}")]
    Corrupt {
        location: String,
        run: String,
        reason: String,
    },

    /// Runs that cannot be merged (different histogram settings, none).
    #[error("cannot merge these runs: {0}")]
    Merge(String),

    /// `results query` was given a statement that would change the store.
    #[error("results query is read-only: {0}")]
    ReadOnly(String),

    /// Something the store or this build does not offer.
    #[error("{0}")]
    Unsupported(String),
}
