//! Why a PostgreSQL operation failed, from either client.

use sojourn_core::backend::Status;

use super::lean::LeanError;

pub(super) type PgResult = Result<Status, PgError>;

/// Why an operation failed, from either client.
#[derive(Debug)]
pub enum PgError {
    Driver(tokio_postgres::Error),
    Lean(LeanError),
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> PgError {
        PgError::Driver(e)
    }
}

impl From<LeanError> for PgError {
    fn from(e: LeanError) -> PgError {
        PgError::Lean(e)
    }
}
