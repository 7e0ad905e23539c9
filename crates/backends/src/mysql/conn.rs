//! The workers' side of MySQL's client protocol, spoken by sojourn itself:
//! a connection that prepares statements, executes them with the binary
//! protocol and hands each row to the caller as slices of its own read
//! buffer, and sends the few text statements the workloads need
//! (transactions, LIOPS' multi-row inserts).
//!
//! Why not mysql_async here (it still opens the setup connections): a
//! point select through it cost a dozen allocations, boxed futures and a
//! `Row`, and the driver was half of sojourn's user time; with this
//! client sojourn costs less client CPU per point select than sysbench in
//! the same runs (`bench/peers.py --only mysql` prints the figures).
//! The pieces of the protocol that are not on the hot path (the greeting,
//! the handshake response, the authentication plugins' scrambles and RSA)
//! are mysql_common's, the crate mysql_async is built on.
//!
//! One request in flight per connection, as YCSB's JDBC binding does.
//! Requests are written in one `write` and answers read with as few
//! `read`s as the kernel allows; nothing is allocated per operation once
//! the buffers have grown to the largest answer.

use std::fmt;
use std::io;

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::packets::{AuthPlugin, HandshakePacket, HandshakeResponse, SslRequest};
use mysql_common::proto::{MyDeserialize, MySerialize};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

pub use super::protocol::Error;
use super::protocol::{lenenc, put_lenenc};
use super::row::{column_definition, column_name, Column, Row};

/// TLS for a connection: the connector and the name the server's
/// certificate must carry.
#[derive(Clone)]
pub(super) struct Tls {
    pub connector: TlsConnector,
    pub server_name: ServerName<'static>,
}

/// What a connection needs: where, who, which database, and TLS.
#[derive(Clone)]
pub(super) struct Config {
    /// Host and port.
    pub addr: (String, u16),
    pub user: String,
    pub password: Option<String>,
    pub database: Option<String>,
    pub tls: Option<Tls>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password.
        f.debug_struct("Config")
            .field("addr", &self.addr)
            .field("user", &self.user)
            .field("database", &self.database)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

/// A statement prepared on one connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Statement {
    id: u32,
    params: u16,
    /// Where the connection keeps its result's columns.
    slot: u32,
}

/// A parameter of an execution.
#[derive(Clone, Copy, Debug)]
pub(super) enum Param<'a> {
    Bytes(&'a [u8]),
    UInt(u64),
    Null,
}

/// Where the answers to a command go: each row of a result, and the end
/// of each statement's answer (a result's, or an OK's, which has no
/// columns). A closure takes the rows alone.
pub(super) trait Answers {
    fn row(&mut self, row: Row<'_>) -> Result<(), Error>;

    /// One statement's answer is complete; `columns` names its result's
    /// columns where the connection names them (see [`Conn::name_columns`]).
    fn end(&mut self, columns: &[String]) {
        let _ = columns;
    }
}

impl<F: FnMut(Row<'_>) -> Result<(), Error>> Answers for F {
    fn row(&mut self, row: Row<'_>) -> Result<(), Error> {
        self(row)
    }
}

/// The largest payload of one packet; longer ones are split, which this
/// client neither needs nor does.
const MAX_PAYLOAD: usize = 0xff_ffff;
/// What the handshake announces as the largest packet it accepts.
const MAX_PACKET: u32 = 16 * 1024 * 1024;
/// utf8mb4_general_ci.
const COLLATION: u8 = 45;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;

/// A connection's byte stream: plain TCP, or TLS over TCP.
enum Stream {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// One connection to a MySQL or MariaDB server.
pub(super) struct Conn {
    stream: Stream,
    io: Buffers,
    caps: CapabilityFlags,
    /// Whether MariaDB leaves out the columns of an execution whose
    /// columns it described before (`MARIADB_CLIENT_CACHE_METADATA`).
    cached_columns: bool,
    /// The columns of each prepared statement's result as last described,
    /// by [`Statement::slot`]; slot 0 holds a text query's.
    columns: Vec<Vec<Column>>,
    /// Their names, by slot, where `named` (scripts keep results by
    /// column name; the YCSB operations read columns by position and
    /// allocate nothing for names).
    names: Vec<Vec<String>>,
    named: bool,
    /// Slots of closed statements, to reuse.
    free_slots: Vec<u32>,
}

/// A connection's buffers and packet framing, apart from its stream so
/// that the handshake can use them on the plain socket before TLS.
struct Buffers {
    /// Bytes read and not yet consumed are `rbuf[start..end]`.
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// The request being built: a 4-byte header, then the payload.
    wbuf: Vec<u8>,
    /// The sequence number of the next packet this client writes.
    seq: u8,
    /// Where the packet being built starts in `wbuf` (after the closes
    /// that ride along with a command).
    packet_start: usize,
    /// Statements to close on the server, sent with the next command.
    to_close: Vec<u32>,
}

/// What this client asks for (and gets where the server offers it).
fn wanted() -> CapabilityFlags {
    CapabilityFlags::CLIENT_LONG_PASSWORD
        // Updates count matched rows, so writing the value already there is
        // OK and only a missing key is NOT_FOUND (as with JDBC's default).
        | CapabilityFlags::CLIENT_FOUND_ROWS
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
        | CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
}

impl Conn {
    /// Connect, agree on TLS and authenticate.
    pub async fn connect(cfg: &Config) -> Result<Conn, Error> {
        let mut tcp = TcpStream::connect((cfg.addr.0.as_str(), cfg.addr.1)).await?;
        // Each request is complete when written: Nagle would only delay it.
        tcp.set_nodelay(true)?;
        let mut io = Buffers {
            rbuf: vec![0; 16 * 1024],
            start: 0,
            end: 0,
            wbuf: Vec::with_capacity(1024),
            seq: 0,
            packet_start: 0,
            to_close: Vec::new(),
        };
        let (start, end) = io.packet(&mut tcp).await?;
        let payload = &io.rbuf[start..end];
        if payload.first() == Some(&0xff) {
            return Err(server_error(payload));
        }
        let greeting = HandshakePacket::deserialize((), &mut mysql_common::io::ParseBuf(payload))
            .map_err(|e| Error::protocol(format!("the server's greeting: {e}")))?;
        let offered = greeting.capabilities();
        let mut caps = wanted() & offered;
        // A MariaDB server (one that leaves out CLIENT_MYSQL, which is
        // CLIENT_LONG_PASSWORD's bit) describes an execution's columns only
        // when they changed since it last did, as MariaDB's own connectors
        // ask it to, which makes a YCSB point select's answer shorter.
        let mariadb = if !offered.contains(CapabilityFlags::CLIENT_LONG_PASSWORD) {
            greeting.mariadb_ext_capabilities() & MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA
        } else {
            MariadbCapabilities::empty()
        };
        if cfg.database.is_none() {
            caps.remove(CapabilityFlags::CLIENT_CONNECT_WITH_DB);
        }
        let nonce = greeting.nonce();
        let version = greeting.server_version_parsed().unwrap_or((0, 0, 0));
        let plugin = greeting
            .auth_plugin()
            .map(AuthPlugin::into_owned)
            .unwrap_or(AuthPlugin::MysqlNativePassword);
        let stream = match &cfg.tls {
            None => Stream::Tcp(tcp),
            Some(tls) => {
                if !offered.contains(CapabilityFlags::CLIENT_SSL) {
                    return Err(Error::protocol(
                        "the server does not offer TLS, which ssl-mode asks for",
                    ));
                }
                caps.insert(CapabilityFlags::CLIENT_SSL);
                io.begin_packet();
                SslRequest::new(caps, MAX_PACKET, COLLATION)
                    .with_mariadb_capabilities(mariadb)
                    .serialize(&mut io.wbuf);
                io.send(&mut tcp, false).await?;
                let tls_stream = tls
                    .connector
                    .connect(tls.server_name.clone(), tcp)
                    .await
                    .map_err(|e| {
                        io::Error::new(
                            e.kind(),
                            format!("TLS with {}:{}: {e}", cfg.addr.0, cfg.addr.1),
                        )
                    })?;
                Stream::Tls(Box::new(tls_stream))
            }
        };
        let mut conn = Conn {
            stream,
            io,
            caps,
            cached_columns: !mariadb.is_empty(),
            columns: vec![Vec::new()],
            names: vec![Vec::new()],
            named: false,
            free_slots: Vec::new(),
        };
        let password = cfg.password.as_deref();
        let scramble = plugin.gen_data(password, &nonce);
        let response = HandshakeResponse::new(
            scramble.as_deref().map(<[u8]>::to_vec),
            version,
            Some(cfg.user.as_bytes().to_vec()),
            cfg.database.as_ref().map(|d| d.as_bytes().to_vec()),
            Some(plugin.clone()),
            caps,
            None,
            MAX_PACKET,
        )
        .with_mariadb_ext_capabilities(mariadb);
        conn.io.begin_packet();
        response.serialize(&mut conn.io.wbuf);
        conn.send().await?;
        conn.authenticate(plugin, nonce, password).await?;
        Ok(conn)
    }

    /// Answer the server until it accepts or refuses: plugin switches and
    /// caching_sha2_password's fast and full paths.
    async fn authenticate(
        &mut self,
        mut plugin: AuthPlugin<'static>,
        mut nonce: Vec<u8>,
        password: Option<&str>,
    ) -> Result<(), Error> {
        loop {
            let (start, end) = self.packet().await?;
            let payload = self.io.rbuf[start..end].to_vec();
            match payload.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => return Err(server_error(&payload)),
                Some(0xfe) => {
                    // Switch plugin: name, NUL, then the new nonce.
                    let rest = &payload[1..];
                    let name_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    plugin = AuthPlugin::from_bytes(&rest[..name_end]).into_owned();
                    nonce = rest.get(name_end + 1..).unwrap_or_default().to_vec();
                    if nonce.last() == Some(&0) {
                        nonce.pop();
                    }
                    let data = plugin.gen_data(password, &nonce);
                    self.io.begin_packet();
                    if let Some(data) = data {
                        data.serialize(&mut self.io.wbuf);
                    }
                    self.send().await?;
                }
                Some(0x01) if matches!(plugin, AuthPlugin::CachingSha2Password) => {
                    match payload.get(1) {
                        // Fast path: the server had the password cached;
                        // its OK follows.
                        Some(0x03) => {}
                        Some(0x04) => self.full_sha2(password, &nonce).await?,
                        _ => return Err(Error::protocol("caching_sha2_password: unexpected data")),
                    }
                }
                _ => {
                    return Err(Error::protocol(format!(
                        "authentication with {:?} is not supported by sojourn's MySQL client",
                        String::from_utf8_lossy(plugin.as_bytes())
                    )))
                }
            }
        }
    }

    /// caching_sha2_password's full authentication: the password in clear
    /// over TLS, else encrypted with the server's RSA key.
    async fn full_sha2(&mut self, password: Option<&str>, nonce: &[u8]) -> Result<(), Error> {
        let mut clear = password.unwrap_or("").as_bytes().to_vec();
        clear.push(0);
        if matches!(self.stream, Stream::Tls(_)) {
            self.io.begin_packet();
            self.io.wbuf.extend_from_slice(&clear);
            return self.send().await;
        }
        // Ask for the public key.
        self.io.begin_packet();
        self.io.wbuf.push(0x02);
        self.send().await?;
        let (start, end) = self.packet().await?;
        let payload = &self.io.rbuf[start..end];
        if payload.first() != Some(&0x01) {
            return Err(Error::protocol(
                "caching_sha2_password: the server sent no public key",
            ));
        }
        let key = payload[1..].to_vec();
        for (i, b) in clear.iter_mut().enumerate() {
            *b ^= nonce[i % nonce.len().max(1)];
        }
        let encrypted = mysql_common::crypto::encrypt(&clear, &key);
        self.io.begin_packet();
        self.io.wbuf.extend_from_slice(&encrypted);
        self.send().await
    }

    /// Prepare `sql` on this connection.
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        self.io.command(COM_STMT_PREPARE, sql.as_bytes());
        self.send().await?;
        let (start, end) = self.packet().await?;
        let p = &self.io.rbuf[start..end];
        match p.first() {
            Some(0x00) if p.len() >= 9 => {}
            Some(0xff) => return Err(server_error(p)),
            _ => return Err(Error::protocol("an unexpected answer to a prepare")),
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let columns = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.columns.push(Vec::new());
                self.names.push(Vec::new());
                (self.columns.len() - 1) as u32
            }
        };
        // The parameters' definitions (and an EOF after each group where
        // the server still sends them), then the columns', kept for the
        // executions that MariaDB does not describe again.
        for _ in 0..params {
            self.packet().await?;
        }
        if params > 0 && !self.deprecate_eof() {
            self.packet().await?;
        }
        self.read_columns(slot as usize, columns.into()).await?;
        if columns > 0 && !self.deprecate_eof() {
            self.packet().await?;
        }
        Ok(Statement { id, params, slot })
    }

    /// From now on, read the names of the columns results describe, for
    /// [`Answers::end`]. Statements prepared before keep their unnamed
    /// description until the server describes them again.
    pub fn name_columns(&mut self) {
        self.named = true;
    }

    /// Execute `stmt` with `params`, handing each row of its result to
    /// `row`. Returns the rows the server says it affected.
    pub async fn execute(
        &mut self,
        stmt: &Statement,
        params: &[Param<'_>],
        row: impl FnMut(Row<'_>) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        self.execute_answers(stmt, params, row).await
    }

    /// [`Self::execute`], its answers to `answers`.
    pub async fn execute_answers(
        &mut self,
        stmt: &Statement,
        params: &[Param<'_>],
        mut answers: impl Answers,
    ) -> Result<u64, Error> {
        if params.len() != stmt.params as usize {
            return Err(Error::protocol(format!(
                "the statement takes {} parameters, not {}",
                stmt.params,
                params.len()
            )));
        }
        let w = &mut self.io;
        w.command(COM_STMT_EXECUTE, &stmt.id.to_le_bytes());
        // No cursor, one iteration.
        w.wbuf.push(0);
        w.wbuf.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            // The NULL bitmap, then the types, bound anew.
            let bitmap = w.wbuf.len();
            w.wbuf.resize(bitmap + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Param::Null) {
                    w.wbuf[bitmap + i / 8] |= 1 << (i % 8);
                }
            }
            w.wbuf.push(1);
            for p in params {
                match p {
                    Param::Bytes(_) => w.wbuf.extend_from_slice(&[0xfd, 0x00]),
                    Param::UInt(_) => w.wbuf.extend_from_slice(&[0x08, 0x80]),
                    Param::Null => w.wbuf.extend_from_slice(&[0x06, 0x00]),
                }
            }
            for p in params {
                match p {
                    Param::Bytes(b) => {
                        put_lenenc(&mut w.wbuf, b.len() as u64);
                        w.wbuf.extend_from_slice(b);
                    }
                    Param::UInt(v) => w.wbuf.extend_from_slice(&v.to_le_bytes()),
                    Param::Null => {}
                }
            }
        }
        self.send().await?;
        self.results(Some(stmt.slot), &mut answers).await
    }

    /// Close `stmt` on the server, with the next command (a close has no
    /// answer, so it costs no round trip).
    pub fn close_later(&mut self, stmt: Statement) {
        self.io.to_close.push(stmt.id);
        self.free_slots.push(stmt.slot);
    }

    /// Run `sql` as text; rows are read and dropped. Returns the rows the
    /// server says it affected.
    pub async fn query(&mut self, sql: &str) -> Result<u64, Error> {
        self.query_answers(sql, |_: Row<'_>| Ok(())).await
    }

    /// Run `sql` as text, handing its answers (text rows) to `answers`.
    pub async fn query_answers(
        &mut self,
        sql: &str,
        mut answers: impl Answers,
    ) -> Result<u64, Error> {
        self.io.command(COM_QUERY, sql.as_bytes());
        self.send().await?;
        self.results(None, &mut answers).await
    }

    /// Say goodbye, without waiting for an answer.
    pub async fn quit(mut self) {
        self.io.command(COM_QUIT, &[]);
        let _ = self.send().await;
        let _ = match &mut self.stream {
            Stream::Tcp(s) => s.shutdown().await,
            Stream::Tls(s) => s.shutdown().await,
        };
    }

    /// Read every result of the request just sent: an OK, an error, or
    /// result sets (several where a statement returns more than one).
    /// `statement` is the executed statement's slot, `None` for a text
    /// query.
    async fn results(
        &mut self,
        statement: Option<u32>,
        answers: &mut impl Answers,
    ) -> Result<u64, Error> {
        let mut affected = 0;
        loop {
            let (start, end) = self.packet().await?;
            let p = &self.io.rbuf[start..end];
            let status = match p.first() {
                Some(0x00) => {
                    let (n, status) = ok_packet(p)?;
                    affected += n;
                    answers.end(&[]);
                    status
                }
                Some(0xff) => return Err(server_error(p)),
                Some(0xfb) => {
                    return Err(Error::protocol(
                        "the server asked for a local file, which sojourn never sends",
                    ))
                }
                Some(_) => {
                    let (count, head) =
                        lenenc(p).ok_or_else(|| Error::protocol("a result without columns"))?;
                    // With cached columns a byte says whether they follow.
                    let described = !self.cached_columns || p.get(head) != Some(&0);
                    let status = self
                        .result_set(count as usize, described, statement, answers)
                        .await?;
                    let slot = statement.unwrap_or(0) as usize;
                    answers.end(&self.names[slot]);
                    status
                }
                None => return Err(Error::protocol("an empty packet")),
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(affected);
            }
        }
    }

    /// The columns (unless the server left them out as `described` before)
    /// and rows of one result set of `count` columns; returns the server
    /// status of its end.
    async fn result_set(
        &mut self,
        count: usize,
        described: bool,
        statement: Option<u32>,
        answers: &mut impl Answers,
    ) -> Result<u16, Error> {
        let binary = statement.is_some();
        let slot = statement.unwrap_or(0) as usize;
        if described {
            self.read_columns(slot, count).await?;
        } else if self.columns[slot].len() != count {
            return Err(Error::protocol(format!(
                "the server left out the description of {count} columns, where the statement \
                 was described with {}",
                self.columns[slot].len()
            )));
        }
        if !self.deprecate_eof() {
            self.packet().await?;
        }
        let bitmap = (count + 7 + 2) / 8;
        loop {
            let (start, end) = self.packet().await?;
            let p = &self.io.rbuf[start..end];
            match p.first() {
                // The end: an EOF, or with CLIENT_DEPRECATE_EOF an OK
                // packet with EOF's header.
                Some(0xfe) if p.len() < MAX_PAYLOAD => return Ok(end_status(p, self.caps)),
                Some(0xff) => return Err(server_error(p)),
                Some(0x00) if binary => {
                    if p.len() < 1 + bitmap {
                        return Err(Error::protocol("a row shorter than its NULL bitmap"));
                    }
                    answers.row(Row {
                        columns: &self.columns[slot],
                        nulls: &p[1..1 + bitmap],
                        values: &p[1 + bitmap..],
                        text: false,
                    })?;
                }
                _ if !binary => answers.row(Row {
                    columns: &self.columns[slot],
                    nulls: &[],
                    values: p,
                    text: true,
                })?,
                _ => return Err(Error::protocol("an unexpected packet in a result")),
            }
        }
    }

    /// Read `count` column definitions as the columns of `slot` (and
    /// their names, where `named`).
    async fn read_columns(&mut self, slot: usize, count: usize) -> Result<(), Error> {
        let mut columns = std::mem::take(&mut self.columns[slot]);
        let mut names = std::mem::take(&mut self.names[slot]);
        columns.clear();
        names.clear();
        for _ in 0..count {
            let (start, end) = self.packet().await?;
            let p = &self.io.rbuf[start..end];
            columns.push(column_definition(p)?);
            if self.named {
                names.push(column_name(p)?);
            }
        }
        self.columns[slot] = columns;
        self.names[slot] = names;
        Ok(())
    }

    fn deprecate_eof(&self) -> bool {
        self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF)
    }

    async fn send(&mut self) -> Result<(), Error> {
        match &mut self.stream {
            Stream::Tcp(s) => self.io.send(s, false).await,
            // rustls holds what it encrypted until flushed.
            Stream::Tls(s) => self.io.send(s.as_mut(), true).await,
        }
    }

    async fn packet(&mut self) -> Result<(usize, usize), Error> {
        match &mut self.stream {
            Stream::Tcp(s) => self.io.packet(s).await,
            Stream::Tls(s) => self.io.packet(s.as_mut()).await,
        }
    }
}

impl Buffers {
    /// Start a packet (its header is filled in by `send`).
    fn begin_packet(&mut self) {
        self.wbuf.clear();
        self.packet_start = 0;
        self.wbuf.extend_from_slice(&[0, 0, 0, 0]);
    }

    /// Start a command: a fresh sequence, the command byte, `body`; after
    /// the closes waiting to go, each a whole packet of its own.
    fn command(&mut self, command: u8, body: &[u8]) {
        self.wbuf.clear();
        for id in self.to_close.drain(..) {
            // Length 5, sequence 0, COM_STMT_CLOSE and the id.
            self.wbuf.extend_from_slice(&[5, 0, 0, 0, COM_STMT_CLOSE]);
            self.wbuf.extend_from_slice(&id.to_le_bytes());
        }
        self.seq = 0;
        self.packet_start = self.wbuf.len();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0]);
        self.wbuf.push(command);
        self.wbuf.extend_from_slice(body);
    }

    /// Write the packet built in `wbuf` in one write.
    async fn send(
        &mut self,
        stream: &mut (impl AsyncWrite + Unpin),
        flush: bool,
    ) -> Result<(), Error> {
        let at = self.packet_start;
        let len = self.wbuf.len() - at - 4;
        if len >= MAX_PAYLOAD {
            return Err(Error::protocol(format!(
                "a request of {len} bytes: sojourn's MySQL client sends at most 16 MiB"
            )));
        }
        self.wbuf[at..at + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.wbuf[at + 3] = self.seq;
        self.seq = self.seq.wrapping_add(1);
        stream.write_all(&self.wbuf).await?;
        if flush {
            stream.flush().await?;
        }
        Ok(())
    }

    /// The next packet's payload, as a range of `rbuf`.
    async fn packet(
        &mut self,
        stream: &mut (impl AsyncRead + Unpin),
    ) -> Result<(usize, usize), Error> {
        loop {
            let have = &self.rbuf[self.start..self.end];
            if have.len() >= 4 {
                let len = u32::from_le_bytes([have[0], have[1], have[2], 0]) as usize;
                if len == MAX_PAYLOAD {
                    return Err(Error::protocol(
                        "an answer of 16 MiB or more: sojourn's MySQL client reads smaller ones",
                    ));
                }
                if have.len() >= 4 + len {
                    self.seq = have[3].wrapping_add(1);
                    let payload = (self.start + 4, self.start + 4 + len);
                    self.start += 4 + len;
                    return Ok(payload);
                }
                if 4 + len > self.rbuf.len() {
                    self.rbuf.resize(4 + len, 0);
                }
            }
            self.fill(stream).await?;
        }
    }

    /// Read what the socket has, after what is buffered.
    async fn fill(&mut self, stream: &mut (impl AsyncRead + Unpin)) -> Result<(), Error> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.start > 0 && self.end == self.rbuf.len() {
            self.rbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.rbuf.len() {
            let len = self.rbuf.len();
            self.rbuf.resize(len * 2, 0);
        }
        let n = stream.read(&mut self.rbuf[self.end..]).await?;
        if n == 0 {
            return Err(Error::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        self.end += n;
        Ok(())
    }
}

/// An ERR packet as an error.
fn server_error(p: &[u8]) -> Error {
    if p.len() < 3 {
        return Error::protocol("a truncated error");
    }
    let code = u16::from_le_bytes([p[1], p[2]]);
    let (state, message) = match p.get(3) {
        Some(b'#') if p.len() >= 9 => (String::from_utf8_lossy(&p[4..9]).into_owned(), &p[9..]),
        _ => ("HY000".to_string(), &p[3..]),
    };
    Error::Server {
        code,
        state,
        message: String::from_utf8_lossy(message).into_owned(),
    }
}

/// An OK packet's affected rows and server status.
fn ok_packet(p: &[u8]) -> Result<(u64, u16), Error> {
    let truncated = || Error::protocol("a truncated OK");
    let (affected, a) = lenenc(&p[1..]).ok_or_else(truncated)?;
    let (_, b) = lenenc(&p[1 + a..]).ok_or_else(truncated)?;
    let at = 1 + a + b;
    let status = p.get(at..at + 2).ok_or_else(truncated)?;
    Ok((affected, u16::from_le_bytes([status[0], status[1]])))
}

/// The server status at the end of a result set.
fn end_status(p: &[u8], caps: CapabilityFlags) -> u16 {
    if caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
        ok_packet(p).map_or(0, |(_, s)| s)
    } else {
        // EOF: header, warnings (2), status (2).
        p.get(3..5).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
    }
}

#[cfg(test)]
mod tests;
