//! The lean client of YCSB's five operations on a PostgreSQL connection
//! with a socket of its own (the default topology, plain TCP): a prepared
//! statement's `Bind`, `Execute` and `Sync` go out in one `write`, and its
//! reply (everything up to `ReadyForQuery`) is read into one buffer and
//! parsed in place.
//!
//! Why not tokio-postgres here: it serves a client through a task of its
//! own, so that a query is a request sent to that task over a channel, a
//! reply channel made per query, the task's wake-ups both ways and a
//! `Row` allocated per row. That was a large share of the client's CPU time
//! per operation, and made the client cost more CPU per operation than
//! pgbench (libpq) does; this path costs what pgbench does or less
//! (`bench/peers.py`). tokio-postgres still
//! makes the connection (its handshake and authentication, on our socket,
//! see [`Lean::open`]) and serves everything else: TLS, several hosts,
//! shared sockets, setup, and the vote and LIOPS workloads.
//!
//! Messages are encoded by `postgres-protocol`; replies are parsed here,
//! in place, because its parser splits a buffer per message.

use std::fmt;

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use sojourn_core::backend::{FieldValue, Row};
use sojourn_core::workload::script::{Kept, KeptResult, Params, Protocol, Query};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_postgres::config::{Host, TargetSessionAttrs};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Config, NoTls};

use super::params::Param;
use crate::shapes::{ByShape, Layout, Op};
use crate::sql::{self, Dialect};
use crate::text;

/// Why a call failed.
#[derive(Debug)]
pub enum LeanError {
    /// The server's `ErrorResponse`: the connection is still in step.
    Server(String),
    /// The socket failed or the bytes made no sense: the connection is
    /// given up.
    Broken(String),
}

impl fmt::Display for LeanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeanError::Server(text) | LeanError::Broken(text) => f.write_str(text),
        }
    }
}

fn broken(e: impl fmt::Display) -> LeanError {
    LeanError::Broken(e.to_string())
}

/// Whether a connection configured so can be served by [`Lean`]: plain
/// TCP to one host, taken as it is (tokio-postgres alone picks among
/// several hosts, and checks `target_session_attrs`).
pub(super) fn serves(config: &Config, tls: bool) -> bool {
    !tls && matches!(config.get_hosts(), [Host::Tcp(_)])
        && config.get_hostaddrs().is_empty()
        && config.get_ports().len() <= 1
        && config.get_target_session_attrs() == TargetSessionAttrs::Any
}

/// A statement prepared on the server, and its parameters' types (which
/// say how a field value is encoded, see [`Param`]).
struct Prepared {
    name: String,
    types: Vec<Type>,
}

/// The socket and its buffers.
struct Io {
    tcp: TcpStream,
    out: BytesMut,
    reply: Vec<u8>,
    /// Statements prepared so far, for fresh names: a statement forgotten
    /// after an error keeps its name on the server.
    prepared: u64,
}

/// A script's statement prepared on the server (`-M prepared`), and the
/// names of its result's columns (for `\gset`).
struct ScriptStatement {
    name: String,
    columns: Vec<String>,
}

/// A connection: its socket and the statements prepared on it.
pub(super) struct Lean {
    io: Io,
    shaped: ByShape<Prepared>,
    delete: Option<Prepared>,
    /// A script's statements, by their number in the run.
    script: Vec<Option<ScriptStatement>>,
    /// `Close` messages of statements the cache let go of, sent with the
    /// next request.
    closing: BytesMut,
    /// A script's pipeline (`\startpipeline`): its commands' messages,
    /// sent with one `Sync` at its end.
    pipe: BytesMut,
}

impl Lean {
    /// Connect: tokio-postgres makes the handshake (startup, any
    /// authentication, the server's parameters) on our socket, and its
    /// client and connection are dropped before they send anything more;
    /// the server then waits for our first query.
    pub(super) async fn open(config: &Config) -> Result<Box<Lean>, LeanError> {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(host)) => host.as_str(),
            _ => return Err(broken("not a TCP host")),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let mut tcp = TcpStream::connect((host, port))
            .await
            .map_err(|e| broken(format!("{host}:{port}: {e}")))?;
        // Each request is complete when written: Nagle would only delay it.
        tcp.set_nodelay(true).map_err(broken)?;
        let (client, connection) =
            config
                .connect_raw(&mut tcp, NoTls)
                .await
                .map_err(|e| match e.as_db_error() {
                    Some(_) => LeanError::Server(super::sqlstate::error_text(&e)),
                    None => broken(super::sqlstate::error_text(&e)),
                })?;
        drop(client);
        drop(connection);
        Ok(Box::new(Lean {
            io: Io {
                tcp,
                out: BytesMut::with_capacity(1024),
                reply: Vec::with_capacity(16 * 1024),
                prepared: 0,
            },
            shaped: ByShape::default(),
            delete: None,
            script: Vec::new(),
            closing: BytesMut::new(),
            pipe: BytesMut::new(),
        }))
    }

    /// Forget the prepared statements (the table may have been recreated
    /// under them).
    pub(super) fn forget_statements(&mut self) {
        self.shaped = ByShape::default();
        self.delete = None;
        self.script.clear();
    }

    /// One SQL command of a script, as pgbench's libpq sends it: a simple
    /// query of its text; or its text parsed (once per connection when
    /// prepared), bound to text parameters whose types the server infers,
    /// and executed, in one write. Results come back as text; those the
    /// script keeps go to `kept`.
    pub(super) async fn script(&mut self, q: &Query<'_>, kept: &mut Kept) -> Result<(), LeanError> {
        kept.results.clear();
        let keep = q.keep.is_some();
        let every = q.keep.is_some_and(|k| k.every_row());
        let Lean { io, script, .. } = self;
        let mut columns: Option<&[String]> = None;
        match q.protocol {
            Protocol::Simple => {
                frontend::query(q.text, &mut io.out).map_err(broken)?;
            }
            Protocol::Extended => {
                frontend::parse("", q.text, [], &mut io.out).map_err(broken)?;
                bind_text(&mut io.out, "", q.params)?;
                if keep {
                    frontend::describe(b'P', "", &mut io.out).map_err(broken)?;
                }
                frontend::execute("", 0, &mut io.out).map_err(broken)?;
                frontend::sync(&mut io.out);
            }
            Protocol::Prepared => {
                let stmt = prepared_script(script, io, q).await?;
                bind_text(&mut io.out, &stmt.name, q.params)?;
                frontend::execute("", 0, &mut io.out).map_err(broken)?;
                frontend::sync(&mut io.out);
                columns = Some(&stmt.columns);
            }
        }
        io.call().await?;
        io.script_replies(columns, keep.then_some(kept), every)
    }

    /// Add a script's command to the pipeline, as libpq's pipeline mode
    /// does: parsed (or prepared once per connection, which takes a round
    /// trip of its own, as pgbench prepares a pipeline's commands before
    /// it), bound and executed, with no `Sync` and nothing sent yet.
    pub(super) async fn queue(&mut self, q: &Query<'_>) -> Result<(), LeanError> {
        match q.protocol {
            Protocol::Simple => {
                return Err(LeanError::Server(
                    "pipeline mode needs the extended protocol".into(),
                ))
            }
            Protocol::Extended => {
                frontend::parse("", q.text, [], &mut self.pipe).map_err(broken)?;
                bind_text(&mut self.pipe, "", q.params)?;
            }
            Protocol::Prepared => {
                let Lean {
                    io, script, pipe, ..
                } = self;
                let stmt = prepared_script(script, io, q).await?;
                bind_text(pipe, &stmt.name, q.params)?;
            }
        }
        frontend::execute("", 0, &mut self.pipe).map_err(broken)
    }

    /// Send the pipeline with its `Sync` and read the answers: how many
    /// commands completed before one failed (the server skips the rest),
    /// and the failure.
    pub(super) async fn end_pipeline(&mut self, done: &mut usize) -> Result<(), LeanError> {
        *done = 0;
        let io = &mut self.io;
        io.out.extend_from_slice(&self.pipe);
        self.pipe.clear();
        frontend::sync(&mut io.out);
        io.call().await?;
        for message in Messages::new(&io.reply) {
            match message? {
                (b'C' | b'I', _) => *done += 1,
                (b'E', body) => return Err(LeanError::Server(error_text(body))),
                _ => {}
            }
        }
        Ok(())
    }

    /// Drop a pipeline not sent (its transaction failed before its end).
    pub(super) fn discard_pipeline(&mut self) {
        self.pipe.clear();
    }

    /// Run the statement of `op` over `columns` with `params`; `row` gets
    /// each row's columns (`None` for NULL). Returns the rows the command
    /// reports.
    pub(super) async fn run<'p>(
        &mut self,
        layout: &Layout,
        op: Op,
        columns: &[usize],
        params: impl IntoIterator<Item = Param<'p>>,
        row: impl FnMut(&mut Columns<'_>) -> Result<(), LeanError>,
    ) -> Result<u64, LeanError> {
        let Lean {
            io,
            shaped,
            closing,
            ..
        } = self;
        let sql = || layout.sql(Dialect::Postgres, op, columns);
        let retire = |old: Prepared| {
            // Best effort, answered before the next request's reply.
            let _ = frontend::close(b'S', &old.name, closing);
        };
        let stmt = shaped
            .get_retiring(
                layout,
                op,
                columns,
                // Boxed: preparing is rare, and its state would size
                // every operation's future.
                async || Box::pin(io.prepare(&sql())).await,
                retire,
            )
            .await?;
        io.out.extend_from_slice(closing);
        closing.clear();
        io.execute(stmt, params, row).await
    }

    /// Delete `key`; returns the rows deleted.
    pub(super) async fn delete(&mut self, table: &str, key: &str) -> Result<u64, LeanError> {
        if self.delete.is_none() {
            let sql = sql::delete(Dialect::Postgres, table);
            self.delete = Some(Box::pin(self.io.prepare(&sql)).await?);
        }
        let stmt = self.delete.as_ref().expect("prepared above");
        self.io.execute(stmt, [Param::Key(key)], |_| Ok(())).await
    }

    /// A statement without parameters, through the simple protocol.
    pub(super) async fn simple(&mut self, query: &str) -> Result<(), LeanError> {
        frontend::query(query, &mut self.io.out).map_err(broken)?;
        self.io.call().await?;
        self.io.replies(|_| Ok(())).map(|_| ())
    }
}

impl Drop for Io {
    /// Say goodbye as libpq does (`Terminate`), if the socket takes it now:
    /// the server then ends the session without waiting to find the socket
    /// closed.
    fn drop(&mut self) {
        let mut bye = BytesMut::new();
        frontend::terminate(&mut bye);
        let _ = self.tcp.try_write(&bye);
    }
}

impl Io {
    /// Send what is in `out`, and read until the reply's `ReadyForQuery`.
    async fn call(&mut self) -> Result<(), LeanError> {
        self.tcp.write_all(&self.out).await.map_err(broken)?;
        self.out.clear();
        self.reply.clear();
        let mut scanned = 0;
        loop {
            match ready_at(&self.reply, scanned) {
                Ok(()) => return Ok(()),
                Err(next) => scanned = next,
            }
            self.reply.reserve(8 * 1024);
            let n = self.tcp.read_buf(&mut self.reply).await.map_err(broken)?;
            if n == 0 {
                return Err(broken("the server closed the connection"));
            }
        }
    }

    async fn prepare(&mut self, sql: &str) -> Result<Prepared, LeanError> {
        let (name, types, _) = self.parse_and_describe(sql).await?;
        Ok(Prepared { name, types })
    }

    /// Prepare a script's statement, leaving the server to infer its
    /// parameters' types; learn its result's column names.
    async fn prepare_script(&mut self, sql: &str) -> Result<ScriptStatement, LeanError> {
        let (name, _, columns) = self.parse_and_describe(sql).await?;
        Ok(ScriptStatement { name, columns })
    }

    /// Prepare `sql` under a fresh name, and learn its parameters' types
    /// and its result's column names.
    async fn parse_and_describe(
        &mut self,
        sql: &str,
    ) -> Result<(String, Vec<Type>, Vec<String>), LeanError> {
        let name = format!("sojourn{}", self.prepared);
        self.prepared += 1;
        frontend::parse(&name, sql, [], &mut self.out).map_err(broken)?;
        frontend::describe(b'S', &name, &mut self.out).map_err(broken)?;
        frontend::sync(&mut self.out);
        self.call().await?;
        let (mut types, mut columns) = (Vec::new(), Vec::new());
        for message in Messages::new(&self.reply) {
            let (tag, body) = message?;
            match tag {
                b't' => {
                    let mut body = Reader(body);
                    for _ in 0..body.u16()? {
                        let oid = body.u32()?;
                        types.push(Type::from_oid(oid).unwrap_or(Type::UNKNOWN));
                    }
                }
                b'T' => columns = field_names(body)?,
                b'E' => return Err(LeanError::Server(error_text(body))),
                _ => {}
            }
        }
        Ok((name, types, columns))
    }

    /// Go through a script command's reply: the server's error as one;
    /// where results are kept, each result's column names (from the reply,
    /// else `columns`), row count and last row (with `every`, all rows).
    fn script_replies(
        &self,
        columns: Option<&[String]>,
        mut kept: Option<&mut Kept>,
        every: bool,
    ) -> Result<(), LeanError> {
        let mut current: Option<KeptResult> = None;
        for message in Messages::new(&self.reply) {
            let (tag, body) = message?;
            match tag {
                b'E' => return Err(LeanError::Server(error_text(body))),
                _ if kept.is_none() => {}
                b'T' => {
                    current = Some(KeptResult {
                        columns: field_names(body)?,
                        ..KeptResult::default()
                    })
                }
                b'D' => {
                    let r = current.get_or_insert_with(|| KeptResult {
                        columns: columns.map(<[String]>::to_vec).unwrap_or_default(),
                        ..KeptResult::default()
                    });
                    let mut values = Vec::new();
                    let mut row = Columns::new(body)?;
                    while let Some(v) = row.next()? {
                        values.push(v.map(|b| String::from_utf8_lossy(b).into_owned()));
                    }
                    r.add_row(values, every);
                }
                b'C' | b'I' => {
                    if let Some(k) = kept.as_deref_mut() {
                        k.results.push(current.take().unwrap_or_else(|| KeptResult {
                            columns: columns.map(<[String]>::to_vec).unwrap_or_default(),
                            ..KeptResult::default()
                        }));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    async fn execute<'p>(
        &mut self,
        stmt: &Prepared,
        params: impl IntoIterator<Item = Param<'p>>,
        row: impl FnMut(&mut Columns<'_>) -> Result<(), LeanError>,
    ) -> Result<u64, LeanError> {
        let mut types = stmt.types.iter();
        let bound = frontend::bind(
            "",
            &stmt.name,
            [1], // every parameter in binary
            params,
            |param, out| {
                let ty = types.next().unwrap_or(&Type::UNKNOWN);
                match param.to_sql(ty, out)? {
                    tokio_postgres::types::IsNull::No => Ok(postgres_protocol::IsNull::No),
                    tokio_postgres::types::IsNull::Yes => Ok(postgres_protocol::IsNull::Yes),
                }
            },
            [1], // every column in binary: a text column's bytes as stored
            &mut self.out,
        );
        if let Err(e) = bound {
            self.out.clear();
            return Err(LeanError::Server(match e {
                frontend::BindError::Conversion(e) => e.to_string(),
                frontend::BindError::Serialization(e) => e.to_string(),
            }));
        }
        frontend::execute("", 0, &mut self.out).map_err(broken)?;
        frontend::sync(&mut self.out);
        self.call().await?;
        self.replies(row)
    }

    /// Go through the reply: rows to `row`, the server's error as one,
    /// the rows the command reports as the result.
    fn replies(
        &self,
        mut row: impl FnMut(&mut Columns<'_>) -> Result<(), LeanError>,
    ) -> Result<u64, LeanError> {
        let mut count = 0;
        let mut error = None;
        for message in Messages::new(&self.reply) {
            let (tag, body) = message?;
            match tag {
                b'D' => {
                    let mut columns = Columns::new(body)?;
                    row(&mut columns)?;
                }
                b'C' => count = rows_of_tag(body),
                b'E' => error = Some(error_text(body)),
                _ => {}
            }
        }
        match error {
            Some(text) => Err(LeanError::Server(text)),
            None => Ok(count),
        }
    }
}

/// `Ok` when `buf` holds a whole reply (its last message is
/// `ReadyForQuery`), else where to go on scanning once more has arrived.
fn ready_at(buf: &[u8], mut at: usize) -> Result<(), usize> {
    while let Some(header) = buf.get(at..at + 5) {
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        let end = at + 1 + len;
        if end > buf.len() {
            break;
        }
        if header[0] == b'Z' {
            return Ok(());
        }
        at = end;
    }
    Err(at)
}

/// The messages of a whole reply: (tag, body).
struct Messages<'a>(&'a [u8]);

impl<'a> Messages<'a> {
    fn new(buf: &'a [u8]) -> Messages<'a> {
        Messages(buf)
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<(u8, &'a [u8]), LeanError>;

    fn next(&mut self) -> Option<Self::Item> {
        let buf = self.0;
        let header = buf.get(..5)?;
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        let Some(body) = len.checked_sub(4).and_then(|n| buf.get(5..5 + n)) else {
            self.0 = &[];
            return Some(Err(broken("a message longer than the reply")));
        };
        self.0 = &buf[1 + len..];
        Some(Ok((header[0], body)))
    }
}

/// Big-endian fields of a message body.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], LeanError> {
        if self.0.len() < n {
            return Err(broken("a message shorter than its fields"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u16(&mut self) -> Result<u16, LeanError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, LeanError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The columns of one `DataRow`, in order.
pub(super) struct Columns<'a> {
    body: Reader<'a>,
    left: u16,
}

impl<'a> Columns<'a> {
    fn new(body: &'a [u8]) -> Result<Columns<'a>, LeanError> {
        let mut body = Reader(body);
        let left = body.u16()?;
        Ok(Columns { body, left })
    }

    /// The next column: `Some(None)` for NULL, `None` past the last.
    pub(super) fn next(&mut self) -> Result<Option<Option<&'a [u8]>>, LeanError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let len = self.body.u32()? as i32;
        if len < 0 {
            return Ok(Some(None));
        }
        Ok(Some(Some(self.body.take(len as usize)?)))
    }

    /// The next columns as the values of `fields`, into `out` (a NULL is
    /// no value, as with the other backends).
    pub(super) fn fields(
        &mut self,
        fields: &[usize],
        out: &mut Vec<FieldValue>,
    ) -> Result<(), LeanError> {
        for &field in fields {
            if let Some(Some(stored)) = self.next()? {
                out.push(text::decoded_field(field, stored));
            }
        }
        Ok(())
    }

    /// A scan's row: the key, then `fields`.
    pub(super) fn row(&mut self, fields: &[usize]) -> Result<Row, LeanError> {
        let key = match self.next()? {
            Some(Some(k)) => String::from_utf8_lossy(k).into_owned(),
            _ => String::new(),
        };
        let mut values = Vec::with_capacity(fields.len());
        self.fields(fields, &mut values)?;
        Ok(Row {
            key,
            fields: values,
        })
    }
}

/// A script's statement `q.id` on this connection, prepared on first use.
async fn prepared_script<'s>(
    script: &'s mut Vec<Option<ScriptStatement>>,
    io: &mut Io,
    q: &Query<'_>,
) -> Result<&'s ScriptStatement, LeanError> {
    if script.get(q.id).is_none_or(Option::is_none) {
        // Boxed: preparing is rare (once per statement and connection),
        // and its state would size every call.
        let stmt = Box::pin(io.prepare_script(q.text)).await?;
        if script.len() <= q.id {
            script.resize_with(q.id + 1, || None);
        }
        script[q.id] = Some(stmt);
    }
    Ok(script[q.id].as_ref().expect("prepared above"))
}

/// Bind `params` to `statement` as text (NULL for `None`), its results
/// asked for as text.
fn bind_text(out: &mut BytesMut, statement: &str, params: Params<'_>) -> Result<(), LeanError> {
    let bound = frontend::bind(
        "",
        statement,
        [0], // every parameter as text
        params.iter(),
        |p, out| match p {
            Some(t) => {
                out.extend_from_slice(t.as_bytes());
                Ok(postgres_protocol::IsNull::No)
            }
            None => Ok(postgres_protocol::IsNull::Yes),
        },
        [0], // every column as text
        out,
    );
    bound.map_err(|e| {
        out.clear();
        broken(match e {
            frontend::BindError::Conversion(e) => e.to_string(),
            frontend::BindError::Serialization(e) => e.to_string(),
        })
    })
}

/// The column names of a `RowDescription`.
fn field_names(body: &[u8]) -> Result<Vec<String>, LeanError> {
    let mut r = Reader(body);
    let n = r.u16()?;
    let mut names = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let end =
            r.0.iter()
                .position(|&b| b == 0)
                .ok_or_else(|| broken("a column name without its end"))?;
        names.push(String::from_utf8_lossy(r.take(end)?).into_owned());
        // The name's end, then table, column, type, size, modifier and
        // format.
        r.take(1 + 4 + 2 + 4 + 2 + 4 + 2)?;
    }
    Ok(names)
}

/// The rows a `CommandComplete` tag reports: its last word (`UPDATE 1`,
/// `INSERT 0 1`, `SELECT 1`), 0 when it has none.
fn rows_of_tag(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    tag.rsplit(|&b| b == b' ')
        .next()
        .and_then(|n| std::str::from_utf8(n).ok())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// An `ErrorResponse` as one line, as [`super::sqlstate::error_text`] words
/// tokio-postgres's: severity, message and SQLSTATE.
fn error_text(body: &[u8]) -> String {
    let (mut severity, mut code, mut message) = ("ERROR".into(), String::new(), String::new());
    for field in body.split(|&b| b == 0) {
        let Some((&kind, value)) = field.split_first() else {
            continue;
        };
        let value = String::from_utf8_lossy(value).into_owned();
        match kind {
            b'S' => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            _ => {}
        }
    }
    format!("{severity}: {message} (SQLSTATE {code})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn a_reply_is_whole_at_its_ready_for_query() {
        let mut reply = message(b'2', b"");
        reply.extend(message(b'C', b"SELECT 1\0"));
        let z = message(b'Z', b"I");
        let scanned = ready_at(&reply, 0).unwrap_err();
        assert_eq!(scanned, reply.len());
        reply.extend_from_slice(&z[..3]);
        assert_eq!(ready_at(&reply, scanned), Err(scanned));
        reply.extend_from_slice(&z[3..]);
        assert_eq!(ready_at(&reply, scanned), Ok(()));
    }

    #[test]
    fn command_tags_give_their_row_counts() {
        assert_eq!(rows_of_tag(b"UPDATE 3\0"), 3);
        assert_eq!(rows_of_tag(b"INSERT 0 1\0"), 1);
        assert_eq!(rows_of_tag(b"DELETE 0\0"), 0);
        assert_eq!(rows_of_tag(b"SET\0"), 0);
    }

    #[test]
    fn a_row_gives_its_columns_and_nulls() {
        let mut body = 3u16.to_be_bytes().to_vec();
        body.extend(2u32.to_be_bytes());
        body.extend(b"k1");
        body.extend((-1i32).to_be_bytes());
        body.extend(3u32.to_be_bytes());
        body.extend(b"abc");
        let mut columns = Columns::new(&body).unwrap();
        let row = columns.row(&[0, 1]).unwrap();
        assert_eq!(row.key, "k1");
        assert_eq!(row.fields.len(), 1, "the NULL is no value");
        assert_eq!(row.fields[0].field, 1);
        assert_eq!(&row.fields[0].value[..], b"abc");
        assert!(columns.next().unwrap().is_none());
        let mut short = Columns::new(&body[..9]).unwrap();
        assert!(short.row(&[0, 1]).is_err(), "a truncated row is an error");
    }

    #[test]
    fn an_error_response_reads_as_tokio_postgres_words_it() {
        let body = b"SERROR\0VERROR\0C42P01\0Mrelation \"t\" does not exist\0\0";
        assert_eq!(
            error_text(body),
            "ERROR: relation \"t\" does not exist (SQLSTATE 42P01)"
        );
    }
}
