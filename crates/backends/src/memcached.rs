//! The memcached backend: `memcached://host[:port]`, or YCSB's `memcached`
//! with `-p memcached.hosts=host:port`, over memcached's text protocol.
//!
//! Layout: one item per record, under YCSB's key `{table}-{key}`, holding
//! the record's fields in sojourn's record encoding (below). Not YCSB's
//! layout: its binding stores a JSON object per item, which costs more to
//! write and parse than the data it carries; items YCSB wrote read back as
//! ERROR ("not a sojourn record") rather than as wrong data. Scans are
//! NOT_IMPLEMENTED: memcached has no order to scan in (as with YCSB).
//!
//! Record encoding, version 1: the byte `0x01`, then for each field in
//! ascending field index, the index as an unsigned LEB128 varint, the
//! value's length as an unsigned LEB128 varint, and the value's bytes. One
//! 100-byte field costs 3 bytes of overhead.
//!
//! Keys are sent as they are when every byte is printable ASCII other than
//! `%` (YCSB's keys always are); any other byte (space, control, non-ASCII)
//! and `%` itself are written `%XX`, since the text protocol ends a key at
//! a space. A key longer than memcached's 250 bytes once escaped is
//! BAD_REQUEST.
//!
//! Operations: read is `get`; insert is `set` (replacing the whole record,
//! like the other backends); delete is `delete`. An update is one `replace`
//! of the fields it writes, as YCSB's memcached binding sends it: it
//! stores only if the item exists (an absent record is NOT_FOUND), and the
//! record is then those fields alone, so after an update of one field a
//! read of all of them returns that one field, as under YCSB.
//!
//! `memcached.checked=true` keeps records whole at a price: an update of
//! some fields is then a read-modify-write made atomic with
//! compare-and-swap: `gets`, merge, `cas`, retried (up to 16 times, with
//! random pauses after the second) while another client changed the item
//! in between, so concurrent updates of different fields never lose each
//! other's writes. That is two round trips and two commands per update
//! where YCSB sends one. An update of every field is one `replace` either
//! way.
//!
//! `prepare` with drop is `flush_all`, which empties the whole server (all
//! tables), followed by a run of the LRU crawler that reclaims the flushed
//! items (memcached counts them until something touches them); `is_empty`
//! asks the whole server (`curr_items == 0`). memcached has no authentication or TLS in this
//! backend (SASL needs the binary protocol, which memcached deprecates).
//!
//! The client is [`crate::pipelined`]'s, not a crate's: `async-memcached` (the
//! maintained async one) has neither `gets`/`cas` nor `replace`, and
//! allocates a value and a key per request; this shares the Redis backend's
//! I/O core, with its timeouts, reconnection and `-p connections=K`
//! pipelining. Per-operation timeout: `timeout.ms` (default 2000), else
//! YCSB's `memcached.opTimeoutMillis`.

mod commands;
mod vote;

use std::sync::Arc;
use std::time::Duration;

use sojourn_core::backend::guard::{Bodies, Guard, Read, Scan};
use sojourn_core::backend::{
    Backend, BackendError, Extensions, FieldValue, Fields, Schema, ServerCounters, Status,
    Threading,
};
use sojourn_core::workload::commands::CommandsSupport;
use sojourn_core::workload::vote::VoteSupport;

use crate::pipelined::{
    self, Framing, Handshake, OpError, OpResult, Sockets, Transport, WireConfig, SETUP_TIMEOUT,
};
use crate::pool::{PoolOptions, Sharing, DEFAULT_TIMEOUT};
use crate::{url, Open, OpenOptions};

const DEFAULT_PORT: u16 = 11211;
/// memcached's limit on key length.
const MAX_KEY: usize = 250;
/// Attempts of a partial update's gets/cas before it reports ERROR.
const CAS_ATTEMPTS: usize = 16;
const RECORD_VERSION: u8 = 1;

/// Replies of memcached's text protocol: one line, or `VALUE` (and `STAT`)
/// blocks up to `END`.
pub(crate) struct Text;

impl Framing for Text {
    fn reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
        let mut pos = 0;
        loop {
            let Some(nl) = buf[pos..].iter().position(|&b| b == b'\n') else {
                return Ok(None);
            };
            let eol = pos + nl;
            // Replies end lines with CRLF; tolerate a bare LF (the LRU
            // crawler's metadump uses one).
            let line = &buf[pos..eol];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            pos = eol + 1;
            if let Some(header) = line.strip_prefix(b"VALUE ") {
                let bytes = value_length(header)?;
                let end = pos + bytes + 2;
                if buf.len() < end {
                    return Ok(None);
                }
                if &buf[end - 2..end] != b"\r\n" {
                    return Err("a value does not end with CRLF".into());
                }
                pos = end;
            } else if !line.starts_with(b"STAT ") {
                return Ok(Some(pos));
            }
        }
    }
}

/// The `<bytes>` of `VALUE <key> <flags> <bytes> [<cas>]`.
fn value_length(header: &[u8]) -> Result<usize, String> {
    header
        .split(|&b| b == b' ')
        .nth(2)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|b| b.parse().ok())
        .ok_or_else(|| format!("bad VALUE line {:?}", String::from_utf8_lossy(header)))
}

/// One `VALUE` block: the data and, for `gets`, the CAS unique.
struct Value<'a> {
    data: &'a [u8],
    cas: Option<u64>,
}

/// A retrieval reply: its first value, or `None` for `END`; a server error
/// as `Err`.
fn parse_get(reply: &[u8]) -> Result<Option<Value<'_>>, String> {
    let eol = reply
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or("reply without a line")?;
    let line = &reply[..eol];
    if line == b"END" {
        return Ok(None);
    }
    let Some(header) = line.strip_prefix(b"VALUE ") else {
        return Err(String::from_utf8_lossy(line).into_owned());
    };
    let bytes = value_length(header)?;
    let cas = header
        .split(|&b| b == b' ')
        .nth(3)
        .and_then(|c| std::str::from_utf8(c).ok())
        .and_then(|c| c.parse().ok());
    let start = eol + 2;
    let data = reply.get(start..start + bytes).ok_or("value cut short")?;
    Ok(Some(Value { data, cas }))
}

/// The number `stats` gives for `name`.
fn stat_in(stats: &[u8], name: &[u8]) -> Option<f64> {
    stats
        .split(|&b| b == b'\n')
        .find_map(|line| {
            line.strip_prefix(b"STAT ")?
                .strip_prefix(name)?
                .strip_prefix(b" ")
        })
        .and_then(|n| std::str::from_utf8(n).ok())
        .and_then(|n| n.trim().parse::<f64>().ok())
}

/// memcached's counters as server counters: `get_hits` and `get_misses`
/// as memcached names them, `rusage_user`/`rusage_system` as the other
/// backends' `server_user_cpu_s`/`server_sys_cpu_s`.
pub(crate) fn stats_counters(stats: &[u8]) -> ServerCounters {
    let mut c = ServerCounters::new();
    for (theirs, ours) in [
        (&b"get_hits"[..], "get_hits"),
        (b"get_misses", "get_misses"),
        (b"cmd_get", "cmd_get"),
        (b"cmd_set", "cmd_set"),
        (b"rusage_user", "server_user_cpu_s"),
        (b"rusage_system", "server_sys_cpu_s"),
    ] {
        if let Some(v) = stat_in(stats, theirs) {
            c.set(ours, v);
        }
    }
    if let (Some(u), Some(s)) = (
        c.values.get("server_user_cpu_s"),
        c.values.get("server_sys_cpu_s"),
    ) {
        let cpu = u + s;
        c.set("server_cpu_s", cpu);
    }
    c
}

/// The first line of a reply, without CRLF.
fn first_line(reply: &[u8]) -> &[u8] {
    let end = reply
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(reply.len());
    &reply[..end]
}

fn push_leb128(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn leb128_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

fn read_leb128(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

/// The encoded size of a record of these (field, value) pairs.
fn record_len<'a>(fields: impl Iterator<Item = (usize, &'a [u8])>) -> usize {
    1 + fields
        .map(|(f, v)| leb128_len(f as u64) + leb128_len(v.len() as u64) + v.len())
        .sum::<usize>()
}

/// Encode (field, value) pairs, which must be in ascending field order.
fn encode_record<'a>(out: &mut Vec<u8>, fields: impl Iterator<Item = (usize, &'a [u8])>) {
    out.push(RECORD_VERSION);
    for (f, v) in fields {
        push_leb128(out, f as u64);
        push_leb128(out, v.len() as u64);
        out.extend_from_slice(v);
    }
}

/// The fields of an encoded record as (field, range of its value), in the
/// order stored; an error for anything that is not a whole record.
fn decode_all(
    data: &[u8],
    fields: &mut Vec<(usize, std::ops::Range<usize>)>,
) -> Result<(), String> {
    fields.clear();
    if data.first() != Some(&RECORD_VERSION) {
        return Err("the item is not a sojourn record".into());
    }
    let mut pos = 1;
    while pos < data.len() {
        let bad = || "a truncated or corrupt sojourn record".to_string();
        let field = read_leb128(data, &mut pos).ok_or_else(bad)?;
        let len = read_leb128(data, &mut pos).ok_or_else(bad)?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= data.len())
            .ok_or_else(bad)?;
        fields.push((usize::try_from(field).map_err(|_| bad())?, pos..end));
        pos = end;
    }
    Ok(())
}

/// `{table}-{key}` as a text-protocol key (see the module notes).
fn encode_key(out: &mut Vec<u8>, table: &str, key: &str) -> Result<(), ()> {
    let start = out.len();
    for &b in table.as_bytes().iter().chain(b"-").chain(key.as_bytes()) {
        if (0x21..=0x7e).contains(&b) && b != b'%' {
            out.push(b);
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
    if out.len() - start > MAX_KEY {
        return Err(());
    }
    Ok(())
}

/// Everything a memcached backend is configured with.
#[derive(Clone, Debug)]
pub struct MemcachedOptions {
    pub host: String,
    pub port: u16,
    pub timeout: Duration,
    /// The run's connections over fewer sockets (pipelined); `None` for a
    /// socket per connection.
    pub sharing: Option<Sharing>,
    /// `memcached.checked`: partial updates merged into the record by
    /// `gets`/`cas` rather than replacing it with the fields written.
    pub checked: bool,
}

impl MemcachedOptions {
    pub fn new(host: &str, port: u16) -> MemcachedOptions {
        MemcachedOptions {
            host: host.to_string(),
            port,
            timeout: DEFAULT_TIMEOUT,
            sharing: None,
            checked: false,
        }
    }

    /// From a `memcached://host[:port]` URL, or YCSB's binding name
    /// `memcached` with `memcached.hosts`, and the run's properties and
    /// connections.
    pub fn from_url(url: &str, options: &OpenOptions<'_>) -> Result<MemcachedOptions, String> {
        let props = options.props;
        let authority = match url::split(url).1 {
            None | Some("") => {
                let hosts = props.get_str("memcached.hosts", "localhost").trim();
                if hosts.contains(',') {
                    return Err(format!(
                        "memcached.hosts lists several servers ({hosts}); sojourn drives one \
                         memcached server per run"
                    ));
                }
                hosts
            }
            Some(rest) => {
                let rest = rest.strip_prefix("//").ok_or(
                    "expected memcached://host[:port], or `memcached` with \
                     -p memcached.hosts=host:port",
                )?;
                let rest = rest.strip_suffix('/').unwrap_or(rest);
                if rest.contains(['/', '?', '#', '@']) {
                    return Err(
                        "expected memcached://host[:port] with no path, options or user".into(),
                    );
                }
                rest
            }
        };
        let (host, port) = pipelined::split_host_port(authority, DEFAULT_PORT)?;
        let pool = PoolOptions::from_properties(
            props,
            Some("memcached.opTimeoutMillis"),
            options.workers,
        )?;
        let checked = props
            .get_bool("memcached.checked", false)
            .map_err(|e| e.to_string())?;
        Ok(MemcachedOptions {
            timeout: pool.timeout,
            sharing: pool.sharing,
            checked,
            ..MemcachedOptions::new(&host, port)
        })
    }
}

/// A memcached server.
#[derive(Debug)]
pub struct MemcachedBackend {
    opts: MemcachedOptions,
    sockets: Sockets<Text>,
}

impl MemcachedBackend {
    pub fn new(opts: MemcachedOptions) -> MemcachedBackend {
        let cfg = WireConfig {
            addr: pipelined::addr(&opts.host, opts.port),
            timeout: opts.timeout,
            connect_timeout: SETUP_TIMEOUT,
            handshake: Handshake::default(),
            tls: None,
        };
        let target = format!("memcached://{}", cfg.addr);
        let sockets = Sockets::new(cfg, opts.sharing, target);
        MemcachedBackend { opts, sockets }
    }

    fn target(&self) -> String {
        self.sockets.target().to_string()
    }

    async fn setup_call(&self, command: &[u8]) -> Result<Vec<u8>, BackendError> {
        let mut link = self.sockets.setup().await?;
        link.request().extend_from_slice(command);
        link.call(1)
            .await
            .map(<[u8]>::to_vec)
            .map_err(|e| BackendError::Setup {
                target: self.target(),
                message: e.to_string(),
            })
    }

    /// A number from `stats`.
    async fn stat(&self, name: &[u8]) -> Result<u64, BackendError> {
        let stats = self.setup_call(b"stats\r\n").await?;
        stat_in(&stats, name)
            .map(|n| n as u64)
            .ok_or_else(|| self.setup_error(&stats))
    }

    /// With `drop`, empty the server; otherwise check that it answers.
    async fn flush_or_ping(&self, drop: bool) -> Result<(), BackendError> {
        if drop {
            let reply = self.setup_call(b"flush_all\r\n").await?;
            if first_line(&reply) != b"OK" {
                return Err(self.setup_error(&reply));
            }
            self.reclaim_flushed().await?;
        } else {
            let reply = self.setup_call(b"version\r\n").await?;
            if !reply.starts_with(b"VERSION") {
                return Err(self.setup_error(&reply));
            }
        }
        Ok(())
    }

    /// Flushed items stay counted in `curr_items` until something touches
    /// them; run the LRU crawler over everything, which reclaims them, and
    /// wait (bounded) until it is done, so that `is_empty` can trust the
    /// count. A server without the crawler keeps its stale count.
    async fn reclaim_flushed(&self) -> Result<(), BackendError> {
        let deadline = tokio::time::Instant::now() + SETUP_TIMEOUT;
        let pause = Duration::from_millis(5);
        loop {
            let reply = self.setup_call(b"lru_crawler crawl all\r\n").await?;
            match first_line(&reply) {
                b"OK" => break,
                // Already crawling (memcached crawls on its own too).
                line if line.starts_with(b"BUSY") && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                }
                _ => return Ok(()),
            }
        }
        while self.stat(b"lru_crawler_running").await? != 0 {
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(pause).await;
        }
        Ok(())
    }

    fn setup_error(&self, reply: &[u8]) -> BackendError {
        BackendError::Setup {
            target: self.target(),
            message: String::from_utf8_lossy(first_line(reply)).into_owned(),
        }
    }
}

impl Open for MemcachedBackend {
    const FORMS: &'static [&'static str] = &[
        "memcached://host[:port]",
        "`memcached` with -p memcached.hosts=H:P",
    ];

    /// See [`MemcachedOptions::from_url`]; nothing is contacted yet.
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<MemcachedBackend, String> {
        sojourn_core::workload::vote::refuse_cache(options.props)?;
        MemcachedOptions::from_url(url, options).map(MemcachedBackend::new)
    }
}

impl Backend for MemcachedBackend {
    type Conn = MemcachedConnection;

    fn describe(&self) -> String {
        let checked = self
            .opts
            .checked
            .then(|| "memcached.checked=true".to_string());
        let sharing = self.opts.sharing.map(|s| s.to_string());
        crate::pool::describe(self.target(), checked.into_iter().chain(sharing))
    }

    fn threading(&self) -> Threading {
        crate::pool::threading(self.opts.sharing)
    }

    async fn prepare(&self, _schema: &Schema, drop: bool) -> Result<(), BackendError> {
        self.flush_or_ping(drop).await
    }

    /// What memcached's `stats` count of the run's requests: hits and
    /// misses of gets, and the server's CPU time.
    async fn server_counters(&self, _: &Schema) -> Result<Option<ServerCounters>, BackendError> {
        let stats = self.setup_call(b"stats\r\n").await?;
        Ok(Some(stats_counters(&stats)))
    }

    fn extensions(&self) -> Extensions<Self> {
        Extensions::new()
            .with(VoteSupport::<Self>::new())
            .with(CommandsSupport::<Self>::new())
    }

    async fn is_empty(&self, _schema: &Schema) -> Result<Option<bool>, BackendError> {
        Ok(Some(self.stat(b"curr_items").await? == 0))
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<MemcachedConnection, BackendError> {
        let transport = self.sockets.transport().await?;
        Ok(MemcachedConnection {
            t: transport,
            table: schema.table.clone(),
            // The transport bounds each call itself.
            guard: Guard::new(schema.field_count(), None),
            timeout: self.opts.timeout,
            checked: self.opts.checked,
            order: Vec::new(),
            decoded: Vec::new(),
            old: Vec::new(),
            jitter: seed(),
            last_error: None,
        })
    }
}

/// A nonzero seed that differs between connections.
fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    h.finish() | 1
}

fn reply_err(reply: &[u8]) -> OpError {
    OpError::error(String::from_utf8_lossy(first_line(reply)))
}

/// A connection of [`MemcachedBackend`].
pub struct MemcachedConnection {
    t: Transport<Text>,
    table: String,
    guard: Guard,
    /// The operation timeout, which also bounds a partial update's retries.
    timeout: Duration,
    /// Partial updates by `gets`/`cas` (`memcached.checked`).
    checked: bool,
    /// Indices into an update's values, in field order, last value winning.
    order: Vec<usize>,
    /// Field ranges of a decoded record.
    decoded: Vec<(usize, std::ops::Range<usize>)>,
    /// The record a partial update read, copied out of the reply buffer.
    old: Vec<u8>,
    /// xorshift state for compare-and-swap retry pauses.
    jitter: u64,
    last_error: Option<String>,
}

/// The storage commands this backend sends.
#[derive(Copy, Clone)]
enum Store {
    Set,
    Replace,
    Cas(u64),
}

impl MemcachedConnection {
    /// The most recent error on this connection, for diagnosing ERROR
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Start a command `<name> <key>` in the request buffer.
    fn start(&mut self, name: &[u8], key: &str) -> OpResult<()> {
        let req = self.t.request();
        req.extend_from_slice(name);
        req.push(b' ');
        encode_key(req, &self.table, key).map_err(|()| OpError {
            status: Status::BadRequest,
            message: format!("key longer than memcached's {MAX_KEY} bytes"),
        })
    }

    /// `order` := indices of `values` sorted by field, one per field (the
    /// last given wins).
    fn order_values(&mut self, values: &[FieldValue]) {
        self.order.clear();
        self.order.extend(0..values.len());
        if !values.windows(2).all(|w| w[0].field < w[1].field) {
            self.order.sort_by_key(|&i| values[i].field);
            // Keep the last of equal fields: walk backwards, drop repeats.
            let mut keep = Vec::with_capacity(self.order.len());
            for &i in self.order.iter().rev() {
                if keep
                    .last()
                    .is_none_or(|&j: &usize| values[j].field != values[i].field)
                {
                    keep.push(i);
                }
            }
            keep.reverse();
            self.order = keep;
        }
    }

    /// Append ` 0 0 <bytes>[ <cas>]\r\n<record>\r\n` for `fields`.
    fn finish_store<'a>(
        &mut self,
        store: Store,
        fields: impl Iterator<Item = (usize, &'a [u8])> + Clone,
    ) {
        let len = record_len(fields.clone());
        let req = self.t.request_continue();
        req.extend_from_slice(b" 0 0 ");
        req.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
        if let Store::Cas(unique) = store {
            req.push(b' ');
            req.extend_from_slice(itoa::Buffer::new().format(unique).as_bytes());
        }
        req.extend_from_slice(b"\r\n");
        encode_record(req, fields);
        req.extend_from_slice(b"\r\n");
    }

    async fn store(
        &mut self,
        command: &[u8],
        store: Store,
        key: &str,
        values: &[FieldValue],
    ) -> OpResult<Status> {
        self.order_values(values);
        self.start(command, key)?;
        let order = std::mem::take(&mut self.order);
        self.finish_store(
            store,
            order
                .iter()
                .map(|&i| (values[i].field, &values[i].value[..])),
        );
        self.order = order;
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"STORED" => Ok(Status::Ok),
            b"NOT_STORED" | b"NOT_FOUND" => Ok(Status::NotFound),
            _ => Err(reply_err(reply)),
        }
    }
}

impl Bodies for MemcachedConnection {
    async fn scan_now(&mut self, _: Scan<'_>) -> OpResult<Status> {
        // memcached has no order to scan in.
        Ok(Status::NotImplemented)
    }

    async fn insert_now(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        self.store(b"set", Store::Set, key, values).await
    }

    async fn read_now(&mut self, read: Read<'_>) -> OpResult<Status> {
        let Read { key, fields, out } = read;
        self.start(b"get", key)?;
        self.t.request_continue().extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        let Some(value) = parse_get(reply).map_err(OpError::error)? else {
            return Ok(Status::NotFound);
        };
        decode_all(value.data, &mut self.decoded).map_err(OpError::error)?;
        match fields {
            Fields::All => {
                for (field, range) in &self.decoded {
                    out.push(FieldValue::copied(*field, &value.data[range.clone()]));
                }
            }
            Fields::Some(list) => {
                for &want in list {
                    if let Some((_, range)) = self.decoded.iter().find(|(f, _)| *f == want) {
                        out.push(FieldValue::copied(want, &value.data[range.clone()]));
                    }
                }
            }
        }
        Ok(Status::Ok)
    }

    async fn update_now(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        if values.is_empty() {
            let mut none = Vec::new();
            let read = Read {
                key,
                fields: Fields::Some(&[]),
                out: &mut none,
            };
            return self.read_now(read).await;
        }
        self.order_values(values);
        if !self.checked || self.order.len() == self.guard.field_count() {
            // YCSB's one `replace`; with every field written, the old
            // record does not matter anyway.
            return self.store(b"replace", Store::Replace, key, values).await;
        }
        let started = tokio::time::Instant::now();
        for attempt in 0..CAS_ATTEMPTS {
            if started.elapsed() >= self.timeout {
                return Err(OpError::error(format!(
                    "no compare-and-swap succeeded within {:?}",
                    self.timeout
                )));
            }
            if attempt >= 2 {
                // Two clients updating one item can fall into lockstep
                // (both read, one wins, both read again...); a random pause
                // of up to a few round trips breaks it.
                self.jitter = self.jitter ^ (self.jitter << 13);
                self.jitter ^= self.jitter >> 7;
                self.jitter ^= self.jitter << 17;
                let micros = self.jitter % (50u64 << attempt.min(6));
                tokio::time::sleep(Duration::from_micros(micros)).await;
            }
            self.start(b"gets", key)?;
            self.t.request_continue().extend_from_slice(b"\r\n");
            let reply = self.t.call(1).await?;
            let Some(value) = parse_get(reply).map_err(OpError::error)? else {
                return Ok(Status::NotFound);
            };
            let unique = value
                .cas
                .ok_or_else(|| OpError::error("gets returned no CAS value"))?;
            self.old.clear();
            self.old.extend_from_slice(value.data);
            decode_all(&self.old, &mut self.decoded).map_err(OpError::error)?;
            // Merge: old fields not updated, and the new values, in field
            // order.
            self.start(b"cas", key)?;
            let (old, decoded, order) = (
                std::mem::take(&mut self.old),
                std::mem::take(&mut self.decoded),
                std::mem::take(&mut self.order),
            );
            let merged = Merge {
                old: &old,
                decoded: &decoded,
                values,
                order: &order,
                i: 0,
                j: 0,
            };
            self.finish_store(Store::Cas(unique), merged);
            (self.old, self.decoded, self.order) = (old, decoded, order);
            let reply = self.t.call(1).await?;
            match first_line(reply) {
                b"STORED" => return Ok(Status::Ok),
                b"NOT_FOUND" => return Ok(Status::NotFound),
                b"EXISTS" => continue,
                _ => return Err(reply_err(reply)),
            }
        }
        Err(OpError::error(format!(
            "the item kept changing during {CAS_ATTEMPTS} compare-and-swap attempts"
        )))
    }

    async fn delete_now(&mut self, key: &str) -> OpResult<Status> {
        self.start(b"delete", key)?;
        self.t.request_continue().extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"DELETED" => Ok(Status::Ok),
            b"NOT_FOUND" => Ok(Status::NotFound),
            _ => Err(reply_err(reply)),
        }
    }
}

/// The fields of an old record merged with new values (which win), in
/// field order. Both inputs are in field order.
#[derive(Clone)]
struct Merge<'a> {
    old: &'a [u8],
    decoded: &'a [(usize, std::ops::Range<usize>)],
    values: &'a [FieldValue],
    order: &'a [usize],
    i: usize,
    j: usize,
}

impl<'a> Iterator for Merge<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        let old = self.decoded.get(self.i);
        let new = self.order.get(self.j).map(|&k| &self.values[k]);
        match (old, new) {
            (Some((fa, ra)), Some(v)) if *fa < v.field => {
                self.i += 1;
                Some((*fa, &self.old[ra.clone()]))
            }
            (Some((fa, _)), Some(v)) => {
                if *fa == v.field {
                    self.i += 1;
                }
                self.j += 1;
                Some((v.field, &v.value[..]))
            }
            (Some((fa, ra)), None) => {
                self.i += 1;
                Some((*fa, &self.old[ra.clone()]))
            }
            (None, Some(v)) => {
                self.j += 1;
                Some((v.field, &v.value[..]))
            }
            (None, None) => None,
        }
    }
}

pipelined::settled_by_the_transport!(MemcachedConnection);

#[cfg(test)]
mod tests {
    use sojourn_core::properties::Properties;

    use super::*;

    #[test]
    fn url_forms() {
        let props = Properties::new();
        let open = |url| MemcachedBackend::open(url, &OpenOptions::new(&props));
        assert_eq!(
            open("memcached").unwrap().describe(),
            "memcached://localhost:11211"
        );
        assert_eq!(
            open("memcached://h:1").unwrap().describe(),
            "memcached://h:1"
        );
        assert!(open("memcached:h").is_err());
    }
}
