//! Database backends of sojourn, and the choice among them.
//!
//! This crate owns the mapping from a backend URL (`null:`, `memory:`,
//! `sqlite:PATH`, ...) to a concrete [`Backend`]. Each real database lives in
//! its own module behind a cargo feature; the driver-free `null:` and
//! `memory:` backends live in `sojourn-core` and are re-exported here.
//!
//! The executor is generic over `B: Backend`, so the choice is an enum,
//! [`AnyBackend`], and [`with_backend!`] turns it back into a concrete type
//! at one place in the caller: every operation is then a direct,
//! monomorphised call, with no dynamic dispatch on the hot path.

use std::path::Path;

pub use sojourn_core::backend::memory::{MemoryBackend, MemoryOptions};
pub use sojourn_core::backend::null::{NullBackend, NullConnection};
use sojourn_core::backend::Backend;

#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod url;

#[cfg(feature = "sqlite")]
pub use sqlite::SqliteBackend;
pub use url::{accepted_forms, redact_url, OpenError};

/// One backend of any kind compiled into this build.
#[derive(Debug)]
pub enum AnyBackend {
    Null(NullBackend),
    Memory(MemoryBackend),
    #[cfg(feature = "sqlite")]
    Sqlite(SqliteBackend),
}

impl AnyBackend {
    /// What the backend points at; never contains a password.
    pub fn describe(&self) -> String {
        crate::with_backend!(self, |b| b.describe())
    }
}

/// Open the backend a URL names.
///
/// Accepted forms: `null:` (also the YCSB binding names `null` and `basic`),
/// `memory:` with an optional query of test hooks
/// (`memory:?stall_at=5000&stall_ms=200`, `memory:?max_ops_per_sec=1000`),
/// `sqlite:PATH` (relative or absolute), and `sqlite:` or `sqlite` for
/// `default_sqlite_path`. Opening does not touch the database: that happens
/// in [`Backend::prepare`], [`Backend::is_empty`] and [`Backend::connect`].
pub fn open(url: &str, default_sqlite_path: &Path) -> Result<AnyBackend, OpenError> {
    match url::parse(url)? {
        url::Target::Null => Ok(AnyBackend::Null(NullBackend)),
        url::Target::Memory { query } => MemoryBackend::from_query(query)
            .map(AnyBackend::Memory)
            .map_err(|e| OpenError::Invalid {
                url: redact_url(url.trim()),
                message: e.to_string(),
            }),
        #[cfg(feature = "sqlite")]
        url::Target::Sqlite { path } => Ok(AnyBackend::Sqlite(SqliteBackend::new(
            path.map_or(default_sqlite_path, Path::new),
        ))),
        // `url::parse` reports a backend that is not compiled in, so this
        // arm is unreachable; it only keeps the match exhaustive.
        #[cfg(not(feature = "sqlite"))]
        url::Target::Sqlite { .. } => {
            let _ = default_sqlite_path;
            Err(OpenError::NotCompiled {
                scheme: "sqlite".to_string(),
                feature: "sqlite",
                accepted: accepted_forms(),
            })
        }
    }
}

/// Evaluate an expression with a binding to the concrete backend inside an
/// [`AnyBackend`] (or a reference to one), so generic code runs
/// monomorphised for whichever backend was chosen:
///
/// ```
/// use sojourn_backends::{open, with_backend};
/// use sojourn_core::backend::Backend;
///
/// let backend = open("memory:", std::path::Path::new("sojourn.db"))?;
/// let description = with_backend!(&backend, |b| b.describe());
/// assert_eq!(description, "memory:");
/// # Ok::<(), sojourn_backends::OpenError>(())
/// ```
///
/// The expression is expanded once per backend, so it may `.await` and may
/// call functions generic over `B: Backend`.
#[cfg(feature = "sqlite")]
#[macro_export]
macro_rules! with_backend {
    ($any:expr, |$b:ident| $body:expr) => {
        match $any {
            $crate::AnyBackend::Null($b) => $body,
            $crate::AnyBackend::Memory($b) => $body,
            $crate::AnyBackend::Sqlite($b) => $body,
        }
    };
}

// Defined per feature set because a `#[cfg]` inside the expansion would be
// evaluated against the *calling* crate's features.
#[cfg(not(feature = "sqlite"))]
#[macro_export]
macro_rules! with_backend {
    ($any:expr, |$b:ident| $body:expr) => {
        match $any {
            $crate::AnyBackend::Null($b) => $body,
            $crate::AnyBackend::Memory($b) => $body,
        }
    };
}
