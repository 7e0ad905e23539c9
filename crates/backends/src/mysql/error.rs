//! Why a request to MySQL failed, as the connection and the row reader
//! both say it.

use std::io;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server refused it; the connection goes on.
    #[error("ERROR {code} ({state}): {message}")]
    Server {
        code: u16,
        state: String,
        message: String,
    },
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server said something this client cannot follow.
    #[error("{0}")]
    Protocol(String),
}

impl Error {
    /// Whether the connection is of no further use.
    pub fn is_fatal(&self) -> bool {
        match self {
            // The server shutting down, the connection killed.
            Error::Server { code, .. } => matches!(code, 1053 | 1927 | 4031),
            Error::Io(_) | Error::Protocol(_) => true,
        }
    }

    pub(super) fn protocol(what: impl Into<String>) -> Error {
        Error::Protocol(what.into())
    }
}
