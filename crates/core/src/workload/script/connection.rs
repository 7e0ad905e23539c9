//! What a backend's connections implement to run SQL scripts: one command
//! with its parameters ([`Query`], [`Params`]), what it keeps of the answer
//! ([`Kept`]) and the [`ScriptConnection`] trait.

use super::compile::{Keep, Protocol};
use super::tables::Dialect;
use crate::backend::{Connection, Status};
use std::future::Future;

/// One SQL command as a connection runs it.
pub struct Query<'a> {
    /// Its text: values written in (simple protocol), or `$n` parameters.
    pub text: &'a str,
    /// The parameters' texts, for the extended protocols.
    pub params: Params<'a>,
    pub protocol: Protocol,
    /// The statement's number among the run's (`prepared`: prepared once
    /// per connection under it).
    pub id: usize,
    /// Which results the script keeps (`\gset`, `\aset`).
    pub keep: Option<&'a Keep>,
}

/// A command's parameters: each a range of one text (`None`: NULL), so
/// that a statement's values are written into one buffer the client
/// keeps, with nothing allocated per statement.
#[derive(Copy, Clone, Debug)]
pub struct Params<'a> {
    pub text: &'a str,
    pub ranges: &'a [Option<(usize, usize)>],
}

impl<'a> Params<'a> {
    pub const NONE: Params<'static> = Params {
        text: "",
        ranges: &[],
    };

    /// Each parameter's text, `None` for NULL.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&'a str>> + '_ {
        let text = self.text;
        self.ranges.iter().map(move |r| r.map(|(a, b)| &text[a..b]))
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// What a command kept of its results: per result, the column names and
/// its last row (`None` values are NULL), and its row count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kept {
    pub results: Vec<KeptResult>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeptResult {
    pub columns: Vec<String>,
    pub last_row: Option<Vec<Option<String>>>,
    pub rows: u64,
    /// Every row, in order, where the command kept them all
    /// ([`Keep::Rows`]).
    pub all_rows: Vec<Vec<Option<String>>>,
}

impl KeptResult {
    /// A row of the result: counted, kept as the last, and with `every`
    /// kept among all.
    pub fn add_row(&mut self, values: Vec<Option<String>>, every: bool) {
        self.rows += 1;
        if every {
            self.all_rows.push(values.clone());
        }
        self.last_row = Some(values);
    }
}

/// A script's SQL on one connection.
pub trait ScriptConnection: Connection {
    /// Run `q`; where it keeps results, fill `kept` (emptied first). A
    /// failure is a status, its words for [`Connection::take_failure`].
    fn execute(&mut self, q: &Query<'_>, kept: &mut Kept) -> impl Future<Output = Status> + Send;

    /// A transaction failed: leave any transaction block it left open,
    /// so the next one starts clean.
    fn abandon_transaction(&mut self) -> impl Future<Output = ()> + Send;

    /// Whether the latest failure is one pgbench tries again: a
    /// serialization failure or a deadlock (SQLSTATE 40001, 40P01).
    /// Read before the failure's words are taken.
    fn conflicted(&mut self) -> bool {
        false
    }

    /// The SQL it speaks, where pgbench's tables differ.
    fn dialect(&self) -> Dialect;

    /// Whether it pipelines: between `\startpipeline` and `\endpipeline`
    /// its commands are [queued](ScriptConnection::queue) and sent, and
    /// their answers read, at [the end](ScriptConnection::end_pipeline).
    /// Where not, each command runs on its own.
    fn pipelines(&self) -> bool {
        false
    }

    /// Add `q` to the pipeline (preparing it first where it must be).
    fn queue(&mut self, q: &Query<'_>) -> impl Future<Output = Status> + Send {
        let _ = q;
        async { Status::NotImplemented }
    }

    /// Send the pipeline and read its answers: how many of its commands
    /// succeeded, in order, and the status of the one after them (which
    /// failed, the rest skipped by the server) or of the whole.
    fn end_pipeline(&mut self) -> impl Future<Output = (usize, Status)> + Send {
        async { (0, Status::NotImplemented) }
    }
}
