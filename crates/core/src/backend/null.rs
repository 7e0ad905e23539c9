//! The `null:` backend: a database that does nothing and answers `OK`.
//!
//! Like YCSB's `BasicDB` (bindings `basic` and `null`), it measures the
//! client's own cost per operation: workload generation, scheduling,
//! recording. Every method is therefore a ready future with no allocation, no
//! lock and no shared state, so the numbers it produces are the floor any
//! real backend adds to.

use std::future::{ready, Future};
use std::sync::Arc;

use super::{Backend, BackendError, Connection, FieldValue, Fields, Row, Schema, Status};

/// A backend that stores nothing. Reads return no fields, scans no rows.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NullBackend;

/// A connection of [`NullBackend`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NullConnection;

impl NullBackend {
    pub fn new() -> NullBackend {
        NullBackend
    }
}

impl Backend for NullBackend {
    type Conn = NullConnection;

    fn describe(&self) -> String {
        "null:".to_string()
    }

    fn prepare(
        &self,
        _schema: &Schema,
        _drop: bool,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        ready(Ok(()))
    }

    /// Unknown: a `run` against `null:` must not be refused for lack of data.
    fn is_empty(
        &self,
        _schema: &Schema,
    ) -> impl Future<Output = Result<Option<bool>, BackendError>> + Send {
        ready(Ok(None))
    }

    fn connect(
        &self,
        _schema: Arc<Schema>,
    ) -> impl Future<Output = Result<NullConnection, BackendError>> + Send {
        ready(Ok(NullConnection))
    }
}

impl Connection for NullConnection {
    fn read(
        &mut self,
        _key: &str,
        _fields: Fields<'_>,
        _out: &mut Vec<FieldValue>,
    ) -> impl Future<Output = Status> + Send {
        ready(Status::Ok)
    }

    fn scan(
        &mut self,
        _start_key: &str,
        _count: usize,
        _fields: Fields<'_>,
        _out: &mut Vec<Row>,
    ) -> impl Future<Output = Status> + Send {
        ready(Status::Ok)
    }

    fn update(
        &mut self,
        _key: &str,
        _values: &[FieldValue],
    ) -> impl Future<Output = Status> + Send {
        ready(Status::Ok)
    }

    fn insert(
        &mut self,
        _key: &str,
        _values: &[FieldValue],
    ) -> impl Future<Output = Status> + Send {
        ready(Status::Ok)
    }

    fn delete(&mut self, _key: &str) -> impl Future<Output = Status> + Send {
        ready(Status::Ok)
    }
}
