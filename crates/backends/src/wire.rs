//! The TCP client core shared by the Redis and memcached backends: servers
//! that answer requests strictly in order on one connection, so that a
//! connection is a byte pipe with a framing rule for replies.
//!
//! It owns connecting (with a protocol handshake such as `AUTH`), the
//! per-operation deadline (so the operation guard of these backends sets no
//! timeout of its own), what happens to a reply that comes after its
//! deadline, reconnecting with backoff, how a failed operation is settled,
//! and the two topologies:
//!
//! - [`Link`]: one connection per sojourn connection, one request (or one
//!   pipelined batch) in flight. This is YCSB's topology and the default.
//! - [`MuxHandle`]: many sojourn connections share one socket; their
//!   requests are pipelined and the replies handed back in order by a small
//!   driver task per socket (`-p connections=K`).
//!
//! Why not a general driver crate: the kernel dominates the cost of a
//! request on loopback (a `write`, a `read` and the wake-ups around them),
//! and what a client can save is exactly there. A [`Link`] costs one `write`
//! and one `read` per request: readiness is cached by tokio, a read that
//! does not fill the buffer marks the socket drained (so the next read waits
//! for epoll rather than probing with a failing `read`), and buffers are
//! reused so that nothing is allocated per request. The deadline does not
//! touch tokio's timer wheel per request either (see [`poll_deadline`]);
//! on a multiplexed socket the driver times its requests with one timer
//! and one clock read per batch.
//! The multiplexed path batches every request submitted in one scheduler
//! pass into a single `write`, where channel-per-request designs pay one
//! task hop and often one syscall per request.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::io;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll, Waker};
use std::time::Duration;

use sojourn_core::backend::guard::{poll_deadline, Failure};
use sojourn_core::backend::{BackendError, Status};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::{sleep_until, Instant, Sleep};

use crate::pool::Sharing;
pub(crate) use crate::pool::SETUP_TIMEOUT;
pub(crate) use crate::url::split_host_port;

/// TLS for a connection: the rustls connector and the name the server's
/// certificate must carry. Only the Redis backend offers TLS; without it
/// this type has no values, so `WireConfig::tls` can only be `None`.
#[cfg(feature = "redis")]
#[derive(Clone)]
pub(crate) struct Tls {
    pub connector: tokio_rustls::TlsConnector,
    pub server_name: rustls::pki_types::ServerName<'static>,
}

#[cfg(feature = "redis")]
impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

#[cfg(not(feature = "redis"))]
#[derive(Clone, Debug)]
pub(crate) enum Tls {}

/// A connection's byte stream: plain TCP, or TLS over TCP.
pub(crate) enum Stream {
    Tcp(TcpStream),
    #[cfg(feature = "redis")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "redis")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "redis")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "redis")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "redis")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

impl Stream {
    /// Whether a write may leave bytes in a user-space buffer that only a
    /// flush sends (TLS); a plain socket's flush does nothing.
    fn buffers_writes(&self) -> bool {
        !matches!(self, Stream::Tcp(_))
    }
}

/// How replies are delimited in a protocol.
pub(crate) trait Framing: Send + Sync + 'static {
    /// The length of the first complete reply at the start of `buf`, `None`
    /// when more bytes are needed, an error when the bytes cannot be a
    /// reply (the connection is then out of step and is closed).
    fn reply_len(buf: &[u8]) -> Result<Option<usize>, String>;
}

/// Requests sent on every new connection before any operation (`AUTH`,
/// `SELECT`, `SCRIPT LOAD`).
#[derive(Clone, Debug)]
pub(crate) struct Handshake {
    pub request: Vec<u8>,
    pub replies: usize,
    /// The first `strict` replies must pass `check` or the connection
    /// attempt fails with its message; later ones are best effort.
    pub strict: usize,
    pub check: fn(&[u8]) -> Result<(), String>,
}

impl Default for Handshake {
    fn default() -> Self {
        Handshake {
            request: Vec::new(),
            replies: 0,
            strict: 0,
            check: |_| Ok(()),
        }
    }
}

/// Where and how to connect.
#[derive(Clone, Debug)]
pub(crate) struct WireConfig {
    /// `host:port` (a name is resolved at each connection attempt).
    pub addr: String,
    /// Per-operation deadline, from the call until its last reply.
    pub timeout: Duration,
    /// Bound on opening a connection outside an operation (setup, and the
    /// multiplexed driver's reconnects).
    pub connect_timeout: Duration,
    pub handshake: Handshake,
    pub tls: Option<Tls>,
}

/// Why a call failed. Every kind is an `ERROR` status for the operation;
/// the message is kept for diagnostics.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WireError {
    #[error("no reply within {0:?}")]
    Timeout(Duration),
    #[error("connection lost: {0}")]
    Lost(String),
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// First wait after a failed connection attempt, doubled per failure.
const BACKOFF_FIRST: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Replies owed to timed-out requests that a [`Link`] will still read and
/// discard; beyond this it closes the connection instead.
const MAX_STALE: usize = 1024;

const INITIAL_READ_BUFFER: usize = 16 * 1024;

/// Reconnect pacing: attempts no sooner than `next`, with the wait doubling
/// up to [`BACKOFF_MAX`] while attempts fail.
#[derive(Debug)]
struct Backoff {
    next: Instant,
    delay: Duration,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            next: Instant::now(),
            delay: BACKOFF_FIRST,
        }
    }

    fn failed(&mut self) {
        self.next = Instant::now() + self.delay;
        self.delay = (self.delay * 2).min(BACKOFF_MAX);
    }

    fn succeeded(&mut self) {
        self.delay = BACKOFF_FIRST;
    }
}

/// Bytes read from a socket and not yet consumed: `buf[start..end]`.
#[derive(Debug)]
struct ReadBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuffer {
    fn new() -> ReadBuffer {
        ReadBuffer {
            buf: vec![0; INITIAL_READ_BUFFER],
            start: 0,
            end: 0,
        }
    }

    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        debug_assert!(self.start <= self.end);
        if self.start >= self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Read what the socket has into the free space, making room first.
    /// `Ready(Ok(0))` is end of stream.
    fn poll_fill(&mut self, stream: &mut Stream, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let len = self.buf.len() * 2;
                self.buf.resize(len, 0);
            }
        }
        let mut rb = tokio::io::ReadBuf::new(&mut self.buf[self.end..]);
        ready!(Pin::new(stream).poll_read(cx, &mut rb))?;
        let n = rb.filled().len();
        self.end += n;
        Poll::Ready(Ok(n))
    }
}

/// Write all of `bytes`, or fail at `deadline`. Returns how much was
/// written when it fails, so the caller knows whether the stream is still
/// in step.
async fn write_all(
    stream: &mut Stream,
    bytes: &[u8],
    timer: &mut Pin<Box<Sleep>>,
    deadline: Instant,
    timeout: Duration,
) -> Result<(), (usize, WireError)> {
    let mut written = 0;
    while written < bytes.len() {
        let result = poll_fn(
            |cx| match Pin::new(&mut *stream).poll_write(cx, &bytes[written..]) {
                Poll::Ready(r) => Poll::Ready(r.map_err(|e| WireError::Lost(e.to_string()))),
                Poll::Pending => match poll_deadline(timer, deadline, cx) {
                    Poll::Ready(()) => Poll::Ready(Err(WireError::Timeout(timeout))),
                    Poll::Pending => Poll::Pending,
                },
            },
        )
        .await;
        match result {
            Ok(0) => {
                return Err((
                    written,
                    WireError::Lost("the socket accepts no more bytes".into()),
                ))
            }
            Ok(n) => written += n,
            Err(e) => return Err((written, e)),
        }
    }
    if stream.buffers_writes() {
        // TLS may hold encrypted bytes the socket would not take yet.
        poll_fn(|cx| match Pin::new(&mut *stream).poll_flush(cx) {
            Poll::Ready(r) => Poll::Ready(r.map_err(|e| WireError::Lost(e.to_string()))),
            Poll::Pending => match poll_deadline(timer, deadline, cx) {
                Poll::Ready(()) => Poll::Ready(Err(WireError::Timeout(timeout))),
                Poll::Pending => Poll::Pending,
            },
        })
        .await
        .map_err(|e| (written, e))?;
    }
    Ok(())
}

/// `host:port` as a socket address string (IPv6 in brackets).
pub(crate) fn addr(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Open a connection and run the handshake, all within `limit`.
pub(crate) async fn open<F: Framing>(cfg: &WireConfig, limit: Duration) -> Result<Stream, String> {
    match tokio::time::timeout(limit, open_inner::<F>(cfg)).await {
        Ok(result) => result,
        Err(_) => Err(format!("no answer from {} within {limit:?}", cfg.addr)),
    }
}

async fn open_inner<F: Framing>(cfg: &WireConfig) -> Result<Stream, String> {
    let tcp = TcpStream::connect(&cfg.addr)
        .await
        .map_err(|e| format!("{}: {e}", cfg.addr))?;
    // Requests are small and each is complete when written: Nagle would
    // only add delay.
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut stream = match &cfg.tls {
        None => Stream::Tcp(tcp),
        #[cfg(feature = "redis")]
        Some(tls) => Stream::Tls(Box::new(
            tls.connector
                .connect(tls.server_name.clone(), tcp)
                .await
                .map_err(|e| format!("TLS with {}: {e}", cfg.addr))?,
        )),
        #[cfg(not(feature = "redis"))]
        Some(never) => match *never {},
    };
    let hs = &cfg.handshake;
    if hs.replies == 0 && hs.request.is_empty() {
        return Ok(stream);
    }
    let mut timer = Box::pin(tokio::time::sleep(Duration::ZERO));
    let far = Instant::now() + Duration::from_secs(24 * 3600);
    write_all(&mut stream, &hs.request, &mut timer, far, Duration::MAX)
        .await
        .map_err(|(_, e)| e.to_string())?;
    let mut rbuf = ReadBuffer::new();
    for i in 0..hs.replies {
        let len = loop {
            if let Some(n) = F::reply_len(rbuf.data())? {
                break n;
            }
            let n = poll_fn(|cx| rbuf.poll_fill(&mut stream, cx))
                .await
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the server closed the connection during the handshake".into());
            }
        };
        if i < hs.strict {
            (hs.check)(&rbuf.data()[..len])?;
        }
        rbuf.consume(len);
    }
    Ok(stream)
}

/// One connection used by one sojourn connection: a request, or a batch of
/// pipelined requests, then its replies.
///
/// A request that times out after it was fully written leaves its replies
/// owed; they are read and discarded before the next call's replies, so a
/// server that stalls and recovers keeps its connections. A connection that
/// fails is closed, and the next call reconnects, waiting out a backoff
/// (within its own deadline) while attempts keep failing.
pub(crate) struct Link<F> {
    cfg: Arc<WireConfig>,
    stream: Option<Stream>,
    rbuf: ReadBuffer,
    /// Bytes of the previous call's replies, consumed by the next call.
    returned: usize,
    stale: usize,
    timer: Pin<Box<Sleep>>,
    backoff: Backoff,
    _framing: PhantomData<F>,
}

impl<F: Framing> Link<F> {
    /// Connect now (bounded by the configured connect timeout); a failure
    /// here is a setup error rather than an operation's status.
    pub(crate) async fn connect(cfg: Arc<WireConfig>) -> Result<Link<F>, String> {
        let stream = open::<F>(&cfg, cfg.connect_timeout).await?;
        Ok(Link {
            cfg,
            stream: Some(stream),
            rbuf: ReadBuffer::new(),
            returned: 0,
            stale: 0,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            backoff: Backoff::new(),
            _framing: PhantomData,
        })
    }

    fn close(&mut self) {
        self.stream = None;
        self.rbuf.clear();
        self.returned = 0;
        self.stale = 0;
    }

    /// Send `request` and wait for `replies` replies; returns them, back to
    /// back, valid until the next call.
    async fn call(&mut self, request: &[u8], replies: usize) -> Result<&[u8], WireError> {
        let deadline = Instant::now() + self.cfg.timeout;
        self.rbuf.consume(std::mem::take(&mut self.returned));
        if self.stream.is_none() {
            self.reconnect(deadline).await?;
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(WireError::Lost("not connected".into()));
        };
        if let Err((written, e)) =
            write_all(stream, request, &mut self.timer, deadline, self.cfg.timeout).await
        {
            // A request cut short leaves the stream out of step; one not
            // started at all owes nothing.
            if written > 0 || !matches!(e, WireError::Timeout(_)) {
                self.close();
            }
            return Err(e);
        }
        match self.read_replies(replies, deadline).await {
            Ok(len) => {
                self.returned = len;
                Ok(&self.rbuf.data()[..len])
            }
            Err(e) => Err(e),
        }
    }

    /// Read until `replies` complete replies follow the stale ones; returns
    /// their total length at the start of the buffer.
    async fn read_replies(
        &mut self,
        replies: usize,
        deadline: Instant,
    ) -> Result<usize, WireError> {
        let mut pos = 0;
        let mut have = 0;
        loop {
            while self.stale > 0 {
                match F::reply_len(self.rbuf.data()) {
                    Ok(Some(n)) => {
                        self.rbuf.consume(n);
                        self.stale -= 1;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        self.close();
                        return Err(WireError::Protocol(e));
                    }
                }
            }
            if self.stale == 0 {
                while have < replies {
                    match F::reply_len(&self.rbuf.data()[pos..]) {
                        Ok(Some(n)) => {
                            pos += n;
                            have += 1;
                        }
                        Ok(None) => break,
                        Err(e) => {
                            self.close();
                            return Err(WireError::Protocol(e));
                        }
                    }
                }
                if have == replies {
                    return Ok(pos);
                }
            }
            let Some(stream) = self.stream.as_mut() else {
                return Err(WireError::Lost("not connected".into()));
            };
            let (rbuf, timer) = (&mut self.rbuf, &mut self.timer);
            let filled = poll_fn(|cx| match rbuf.poll_fill(stream, cx) {
                Poll::Ready(r) => Poll::Ready(Some(r)),
                Poll::Pending => poll_deadline(timer, deadline, cx).map(|()| None),
            })
            .await;
            match filled {
                Some(Ok(0)) => {
                    self.close();
                    return Err(WireError::Lost("closed by the server".into()));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    self.close();
                    return Err(WireError::Lost(e.to_string()));
                }
                None => {
                    // The replies already complete are dropped now; the
                    // rest are owed and discarded as they arrive.
                    if self.stale == 0 {
                        self.rbuf.consume(pos);
                        self.stale = replies - have;
                    } else {
                        self.stale += replies;
                    }
                    if self.stale > MAX_STALE {
                        self.close();
                    }
                    return Err(WireError::Timeout(self.cfg.timeout));
                }
            }
        }
    }

    /// Open a new connection, no sooner than the backoff allows and no
    /// later than `deadline`.
    async fn reconnect(&mut self, deadline: Instant) -> Result<(), WireError> {
        self.close();
        if self.backoff.next > Instant::now() {
            if self.backoff.next >= deadline {
                sleep_until(deadline).await;
                return Err(WireError::Connect(
                    "waiting before the next reconnection attempt".into(),
                ));
            }
            sleep_until(self.backoff.next).await;
        }
        let limit = deadline.saturating_duration_since(Instant::now());
        match open::<F>(&self.cfg, limit).await {
            Ok(stream) => {
                self.backoff.succeeded();
                self.stream = Some(stream);
                Ok(())
            }
            Err(e) => {
                self.backoff.failed();
                Err(WireError::Connect(e))
            }
        }
    }
}

/// An operation's failure: its status (`ERROR`, or `BAD_REQUEST` for a
/// request the protocol cannot carry), and what happened.
#[derive(Debug)]
pub struct OpError {
    pub status: Status,
    pub message: String,
}

impl OpError {
    pub(crate) fn error(message: impl Into<String>) -> OpError {
        OpError {
            status: Status::Error,
            message: message.into(),
        }
    }
}

impl From<WireError> for OpError {
    fn from(e: WireError) -> OpError {
        OpError::error(e.to_string())
    }
}

pub(crate) type OpResult<T> = Result<T, OpError>;

/// The status of a failed operation, its message kept for `last_error`.
/// The transports bound their calls themselves, and reconnect by
/// themselves, so there is nothing else to repair.
pub(crate) fn settle(last_error: &mut Option<String>, failure: Failure<OpError>) -> Status {
    let (status, message) = match failure {
        Failure::Failed(e) => (e.status, e.message),
        Failure::TimedOut(limit) => (Status::Error, WireError::Timeout(limit).to_string()),
    };
    *last_error = Some(message);
    status
}

/// A connection's way to the server, and the request it is building.
pub(crate) struct Transport<F> {
    out: Vec<u8>,
    socket: Socket<F>,
}

/// [`Settle`](sojourn_core::backend::guard::Settle) for a connection with
/// `guard` and `last_error` fields, its failures settled by [`settle`].
macro_rules! settled_by_the_transport {
    ($conn:ty) => {
        impl sojourn_core::backend::guard::Settle for $conn {
            type Error = $crate::wire::OpError;

            fn guard(&self) -> sojourn_core::backend::guard::Guard {
                self.guard
            }

            fn settle(
                &mut self,
                failure: sojourn_core::backend::guard::Failure<$crate::wire::OpError>,
            ) -> sojourn_core::backend::Status {
                $crate::wire::settle(&mut self.last_error, failure)
            }

            fn failure_text(&mut self) -> &mut Option<String> {
                &mut self.last_error
            }
        }
    };
}
pub(crate) use settled_by_the_transport;

/// The vote workload's operations of a cache's connection (Redis,
/// memcached), from its inherent `insert_article_now`, `vote_now` and
/// `article_now`, each under the guard. `vote.variant` does not apply: a
/// cache keeps a count, not Vote rows. (A macro because the trait belongs
/// to `sojourn-core`.)
macro_rules! vote_on_a_cache {
    ($conn:ty) => {
        impl sojourn_core::workload::vote::VoteConnection for $conn {
            async fn insert_article(
                &mut self,
                _: sojourn_core::workload::vote::VoteVariant,
                id: u64,
                title: &str,
            ) -> sojourn_core::backend::Status {
                let insert = async |c: &mut Self| c.insert_article_now(id, title).await;
                sojourn_core::backend::guard::call(self, insert).await
            }

            async fn vote(
                &mut self,
                _: sojourn_core::workload::vote::VoteVariant,
                article: u64,
                _user: u64,
            ) -> sojourn_core::backend::Status {
                let vote = async |c: &mut Self| c.vote_now(article).await;
                sojourn_core::backend::guard::call(self, vote).await
            }

            async fn article(
                &mut self,
                _: sojourn_core::workload::vote::VoteVariant,
                id: u64,
                out: &mut sojourn_core::workload::vote::ArticleRow,
            ) -> sojourn_core::backend::Status {
                let read = async |c: &mut Self| c.article_now(id, out).await;
                sojourn_core::backend::guard::call(self, read).await
            }
        }
    };
}
pub(crate) use vote_on_a_cache;

/// One socket of a connection's own, or a share of a pipelined one.
enum Socket<F> {
    Own(Link<F>),
    Shared(MuxHandle<F>),
}

impl<F: Framing> Transport<F> {
    fn new(socket: Socket<F>) -> Transport<F> {
        Transport {
            out: Vec::with_capacity(512),
            socket,
        }
    }

    /// The buffer to encode the next request into, empty.
    pub(crate) fn request(&mut self) -> &mut Vec<u8> {
        self.out.clear();
        &mut self.out
    }

    /// The request being built, to append to.
    #[cfg_attr(not(any(feature = "memcached", feature = "redis")), allow(dead_code))]
    pub(crate) fn request_continue(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Send the request and wait for its `replies` replies, back to back,
    /// valid until the next call.
    pub(crate) async fn call(&mut self, replies: usize) -> Result<&[u8], WireError> {
        match &mut self.socket {
            Socket::Own(l) => l.call(&self.out, replies).await,
            Socket::Shared(m) => m.call(&self.out, replies).await,
        }
    }
}

/// Where a backend's connections go: the configuration, the sockets its
/// connections share with `connections=K`, and the server as errors name
/// it.
pub(crate) struct Sockets<F> {
    cfg: Arc<WireConfig>,
    pool: Option<MuxPool<F>>,
    target: String,
}

impl<F> std::fmt::Debug for Sockets<F> {
    // Not derived: the handshake holds the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sockets")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl<F: Framing> Sockets<F> {
    /// Sockets to `target` (its URL without a password) by `cfg`.
    pub(crate) fn new(cfg: WireConfig, sharing: Option<Sharing>, target: String) -> Sockets<F> {
        let cfg = Arc::new(cfg);
        let pool = sharing.map(|s| MuxPool::new(Arc::clone(&cfg), s.per_socket()));
        Sockets { cfg, pool, target }
    }

    /// The server, as errors name it.
    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// A connection's transport, connected now: a failure here is a setup
    /// error rather than an operation's status.
    pub(crate) async fn transport(&self) -> Result<Transport<F>, BackendError> {
        let socket = match &self.pool {
            Some(pool) => pool.handle().await.map(Socket::Shared),
            None => Link::connect(Arc::clone(&self.cfg)).await.map(Socket::Own),
        };
        socket
            .map(Transport::new)
            .map_err(|m| self.connect_error(m))
    }

    /// A connection of its own for setup commands, whose calls may take
    /// [`SETUP_TIMEOUT`] (or the operation timeout, if longer).
    pub(crate) async fn setup(&self) -> Result<Transport<F>, BackendError> {
        let mut cfg = (*self.cfg).clone();
        cfg.timeout = SETUP_TIMEOUT.max(cfg.timeout);
        let link = Link::connect(Arc::new(cfg)).await;
        link.map(|l| Transport::new(Socket::Own(l)))
            .map_err(|m| self.connect_error(m))
    }

    fn connect_error(&self, message: String) -> BackendError {
        BackendError::Connect {
            target: self.target.clone(),
            message,
        }
    }
}

// ---------------------------------------------------------------------------
// Multiplexed connections.

/// One pipelined socket shared by several [`MuxHandle`]s, driven by a task.
struct Mux {
    state: Mutex<MuxState>,
}

struct MuxState {
    /// Requests submitted and not yet taken by the driver.
    pending: Vec<u8>,
    /// Requests written or about to be, in order, awaiting replies.
    queue: VecDeque<Entry>,
    slots: Vec<Slot>,
    connected: bool,
    driver: Option<Waker>,
    /// Whether the driver has been woken since it last looked at `pending`.
    driver_notified: bool,
    handles: usize,
    last_error: Option<String>,
}

/// A submitted request: whose it is, how many replies it has, and when it
/// times out.
struct Entry {
    slot: usize,
    generation: u64,
    replies: usize,
    received: usize,
    /// Set by the driver when it first sees the request (see
    /// [`DriverIo::stamp`]).
    due: Option<Instant>,
}

/// One handle's mailbox. A request belongs to the slot's current
/// generation; a handle that gives up on a request moves to the next
/// generation, so a late reply for the old one is dropped.
struct Slot {
    generation: u64,
    reply: Vec<u8>,
    done: Option<Result<(), WireError>>,
    waker: Option<Waker>,
}

fn lock(m: &Mutex<MuxState>) -> MutexGuard<'_, MuxState> {
    // A panic while holding the lock cannot leave the queue half-updated
    // in a way that matters more than losing the run, so carry on.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MuxState {
    fn wake_driver(&mut self) {
        if !self.driver_notified {
            self.driver_notified = true;
            if let Some(w) = &self.driver {
                w.wake_by_ref();
            }
        }
    }

    /// Fail every request awaiting a reply and forget unsent ones.
    fn fail_all(&mut self, message: &str, wake: &mut Vec<Waker>) {
        self.connected = false;
        self.last_error = Some(message.to_string());
        self.pending.clear();
        for entry in self.queue.drain(..) {
            let slot = &mut self.slots[entry.slot];
            if slot.generation == entry.generation {
                slot.done = Some(Err(WireError::Lost(message.to_string())));
                wake.extend(slot.waker.take());
            }
        }
    }
}

/// Sockets shared by the handles created on one thread: with thread-per-core
/// execution a socket and everything that uses it stay on one runtime.
/// Each thread fills its sockets up to `per_socket` handles, so N handles
/// over K sockets make K sockets when every thread's share of the handles
/// divides evenly, and at most one more per thread otherwise.
pub(crate) struct MuxPool<F> {
    cfg: Arc<WireConfig>,
    per_socket: usize,
    open: Mutex<Vec<(std::thread::ThreadId, Arc<Mux>, usize)>>,
    _framing: PhantomData<F>,
}

impl<F: Framing> MuxPool<F> {
    /// Each socket is shared by up to `per_socket` handles.
    pub(crate) fn new(cfg: Arc<WireConfig>, per_socket: usize) -> MuxPool<F> {
        MuxPool {
            cfg,
            per_socket: per_socket.max(1),
            open: Mutex::new(Vec::new()),
            _framing: PhantomData,
        }
    }

    /// A handle on a socket of this thread with room, or on a new socket
    /// (whose driver task runs beside the handle's worker, see
    /// [`sojourn_core::executor::spawn_beside`]).
    pub(crate) async fn handle(&self) -> Result<MuxHandle<F>, String> {
        let me = std::thread::current().id();
        let existing = {
            let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            open.retain(|(_, mux, _)| lock(&mux.state).handles > 0);
            open.iter_mut()
                .find(|(thread, _, users)| *thread == me && *users < self.per_socket)
                .map(|(_, mux, users)| {
                    *users += 1;
                    Arc::clone(mux)
                })
        };
        let mux = match existing {
            Some(mux) => mux,
            None => {
                let stream = open::<F>(&self.cfg, self.cfg.connect_timeout).await?;
                // Created with its first handle counted, so that neither
                // the driver nor a concurrent `handle` sees it unused.
                let mux = Arc::new(Mux {
                    state: Mutex::new(MuxState {
                        pending: Vec::with_capacity(4096),
                        queue: VecDeque::new(),
                        slots: Vec::new(),
                        connected: true,
                        driver: None,
                        driver_notified: false,
                        handles: 0,
                        last_error: None,
                    }),
                });
                let slot = add_slot(&mux);
                sojourn_core::executor::spawn_beside(drive::<F>(
                    Arc::clone(&mux),
                    Arc::clone(&self.cfg),
                    stream,
                ));
                self.open
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((me, Arc::clone(&mux), 1));
                return Ok(self.make_handle(mux, slot));
            }
        };
        let slot = add_slot(&mux);
        Ok(self.make_handle(mux, slot))
    }

    fn make_handle(&self, mux: Arc<Mux>, slot: usize) -> MuxHandle<F> {
        MuxHandle {
            mux,
            cfg: Arc::clone(&self.cfg),
            slot,
            reply: Vec::new(),
            timer: None,
            _framing: PhantomData,
        }
    }
}

/// One sojourn connection's share of a multiplexed socket.
pub(crate) struct MuxHandle<F> {
    mux: Arc<Mux>,
    cfg: Arc<WireConfig>,
    slot: usize,
    reply: Vec<u8>,
    /// Bounds a wait for the driver to reconnect; a request on a connected
    /// socket is timed by the driver.
    timer: Option<Pin<Box<Sleep>>>,
    _framing: PhantomData<F>,
}

impl<F> Drop for MuxHandle<F> {
    fn drop(&mut self) {
        let mut st = lock(&self.mux.state);
        st.handles -= 1;
        st.slots[self.slot].generation += 1;
        st.slots[self.slot].waker = None;
        if st.handles == 0 {
            // Let the driver see there is nobody left and close the socket.
            st.driver_notified = false;
            st.wake_driver();
        }
    }
}

impl<F: Framing> MuxHandle<F> {
    /// Submit `out` and wait for its `replies` replies. The driver times
    /// the request from when it first sees it, in the scheduler pass of
    /// the call: a clock read per batch rather than one per request, and
    /// no timer polled per request.
    async fn call(&mut self, out: &[u8], replies: usize) -> Result<&[u8], WireError> {
        let mut submitted = false;
        // Only a wait for a reconnection reads the clock here.
        let mut deadline = None;
        let (mux, slot, reply, timer) = (
            self.mux.as_ref(),
            self.slot,
            &mut self.reply,
            &mut self.timer,
        );
        let timeout = self.cfg.timeout;
        let result = poll_fn(|cx| {
            let mut st = lock(&mux.state);
            if !submitted {
                if st.connected {
                    let s = &mut st.slots[slot];
                    s.generation += 1;
                    s.done = None;
                    s.reply.clear();
                    let generation = s.generation;
                    st.pending.extend_from_slice(out);
                    st.queue.push_back(Entry {
                        slot,
                        generation,
                        replies,
                        received: 0,
                        due: None,
                    });
                    st.wake_driver();
                    submitted = true;
                } else {
                    // Woken by the driver when it reconnects.
                    register(&mut st.slots[slot].waker, cx);
                    let message = st.last_error.clone().unwrap_or_default();
                    drop(st);
                    let deadline = *deadline.get_or_insert_with(|| Instant::now() + timeout);
                    let timer = timer.get_or_insert_with(|| Box::pin(sleep_until(deadline)));
                    return match poll_deadline(timer, deadline, cx) {
                        Poll::Ready(()) => Poll::Ready(Err(WireError::Connect(message))),
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
            let s = &mut st.slots[slot];
            if let Some(done) = s.done.take() {
                std::mem::swap(&mut s.reply, reply);
                return Poll::Ready(done);
            }
            register(&mut s.waker, cx);
            Poll::Pending
        })
        .await;
        result.map(|()| &self.reply[..])
    }
}

/// Count a new handle on `mux` and give it a slot.
fn add_slot(mux: &Mux) -> usize {
    let mut st = lock(&mux.state);
    st.handles += 1;
    st.slots.push(Slot {
        generation: 0,
        reply: Vec::new(),
        done: None,
        waker: None,
    });
    st.slots.len() - 1
}

fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        *slot = Some(cx.waker().clone());
    }
}

enum DriveEnd {
    Shutdown,
    Broken(String),
}

/// The task behind one multiplexed socket: writes what handles submitted,
/// reads replies and hands each to its handle, reconnects when the socket
/// fails, and ends when the last handle is dropped.
async fn drive<F: Framing>(mux: Arc<Mux>, cfg: Arc<WireConfig>, stream: Stream) {
    let mut stream = Some(stream);
    let mut backoff = Backoff::new();
    let mut io = DriverIo {
        out: Vec::with_capacity(4096),
        written: 0,
        rbuf: ReadBuffer::new(),
        yielded: false,
        unflushed: false,
        wake: Vec::new(),
        timeout: cfg.timeout,
        timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
        armed: false,
    };
    loop {
        match stream.as_mut() {
            Some(s) => {
                let end = poll_fn(|cx| io.poll::<F>(&mux, s, cx)).await;
                match end {
                    DriveEnd::Shutdown => return,
                    DriveEnd::Broken(message) => {
                        stream = None;
                        io.out.clear();
                        io.written = 0;
                        io.unflushed = false;
                        io.rbuf.clear();
                        let mut st = lock(&mux.state);
                        st.fail_all(&message, &mut io.wake);
                        drop(st);
                        io.wake.drain(..).for_each(Waker::wake);
                        backoff.failed();
                    }
                }
            }
            None => {
                if lock(&mux.state).handles == 0 {
                    return;
                }
                sleep_until(backoff.next).await;
                match open::<F>(&cfg, cfg.connect_timeout).await {
                    Ok(s) => {
                        backoff.succeeded();
                        stream = Some(s);
                        let mut st = lock(&mux.state);
                        st.connected = true;
                        for slot in &mut st.slots {
                            io.wake.extend(slot.waker.take());
                        }
                        drop(st);
                        io.wake.drain(..).for_each(Waker::wake);
                    }
                    Err(e) => {
                        lock(&mux.state).last_error = Some(e);
                        backoff.failed();
                    }
                }
            }
        }
    }
}

/// The driver's buffers, kept across polls and reconnects.
struct DriverIo {
    /// Requests taken from the shared state, `out[written..]` still to write.
    out: Vec<u8>,
    written: usize,
    rbuf: ReadBuffer,
    /// Whether the driver has already let other tasks run once since
    /// requests became pending (see below).
    yielded: bool,
    /// Whether written bytes may still sit in the TLS layer.
    unflushed: bool,
    wake: Vec<Waker>,
    /// Requests' deadlines: one timer for the socket, armed no later than
    /// the earliest deadline of a request still owed a reply, and moved
    /// only when it fires (about once per timeout period while replies
    /// come in time).
    timeout: Duration,
    timer: Pin<Box<Sleep>>,
    armed: bool,
}

impl DriverIo {
    fn poll<F: Framing>(
        &mut self,
        mux: &Mux,
        stream: &mut Stream,
        cx: &mut Context<'_>,
    ) -> Poll<DriveEnd> {
        {
            let mut st = lock(&mux.state);
            if st.handles == 0 {
                return Poll::Ready(DriveEnd::Shutdown);
            }
            register(&mut st.driver, cx);
            st.driver_notified = false;
            self.stamp(&mut st);
            if self.written == self.out.len() && !st.pending.is_empty() {
                if self.yielded {
                    self.out.clear();
                    self.written = 0;
                    std::mem::swap(&mut self.out, &mut st.pending);
                    self.yielded = false;
                } else {
                    // Batch: the first submission of a scheduler pass wakes
                    // the driver; going to the back of the run queue once
                    // lets the other handles woken in the same pass submit
                    // too, so one write carries them all.
                    self.yielded = true;
                    st.driver_notified = true;
                    cx.waker().wake_by_ref();
                }
            }
        }
        self.expire(mux, cx);
        while self.written < self.out.len() {
            match Pin::new(&mut *stream).poll_write(cx, &self.out[self.written..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(DriveEnd::Broken("the socket accepts no more bytes".into()))
                }
                Poll::Ready(Ok(n)) => {
                    self.written += n;
                    self.unflushed = stream.buffers_writes();
                }
                Poll::Ready(Err(e)) => return Poll::Ready(DriveEnd::Broken(e.to_string())),
                Poll::Pending => break,
            }
        }
        if self.written == self.out.len() && self.unflushed {
            match Pin::new(&mut *stream).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(e)) => return Poll::Ready(DriveEnd::Broken(e.to_string())),
                Poll::Pending => {}
            }
        }
        loop {
            match self.rbuf.poll_fill(stream, cx) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(DriveEnd::Broken("closed by the server".into()))
                }
                Poll::Ready(Ok(_)) => {
                    if let Err(e) = self.deliver::<F>(mux) {
                        return Poll::Ready(DriveEnd::Broken(e));
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(DriveEnd::Broken(e.to_string())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Give the requests submitted since the last look their deadline, a
    /// timeout from now, and arm the timer for them if it is not armed.
    fn stamp(&mut self, st: &mut MuxState) {
        if st.queue.back().is_none_or(|e| e.due.is_some()) {
            return;
        }
        let due = Instant::now() + self.timeout;
        for entry in st.queue.iter_mut().rev() {
            if entry.due.is_some() {
                break;
            }
            entry.due = Some(due);
        }
        if !self.armed {
            self.timer.as_mut().reset(due);
            self.armed = true;
        }
    }

    /// When the timer fires: fail the requests past their deadline and
    /// move the timer to the next deadline. Failing one moves its slot to
    /// the next generation, which drops its replies when they come and
    /// leaves it alone at the next firing.
    fn expire(&mut self, mux: &Mux, cx: &mut Context<'_>) {
        while self.armed && self.timer.as_mut().poll(cx).is_ready() {
            self.armed = false;
            let now = Instant::now();
            let mut st = lock(&mux.state);
            let MuxState { queue, slots, .. } = &mut *st;
            for entry in queue.iter() {
                match entry.due {
                    Some(due) if due <= now => {
                        let slot = &mut slots[entry.slot];
                        if slot.generation == entry.generation {
                            slot.generation += 1;
                            slot.done = Some(Err(WireError::Timeout(self.timeout)));
                            if let Some(w) = &slot.waker {
                                w.wake_by_ref();
                            }
                        }
                    }
                    Some(due) => {
                        self.timer.as_mut().reset(due);
                        self.armed = true;
                        break;
                    }
                    None => break,
                }
            }
        }
    }

    /// Hand every complete reply in the buffer to its request's handle.
    fn deliver<F: Framing>(&mut self, mux: &Mux) -> Result<(), String> {
        let mut st = lock(&mux.state);
        let mut result = Ok(());
        loop {
            let len = match F::reply_len(self.rbuf.data()) {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let st = &mut *st;
            let Some(entry) = st.queue.front_mut() else {
                result = Err("a reply nobody asked for".to_string());
                break;
            };
            entry.received += 1;
            let slot = &mut st.slots[entry.slot];
            let current = slot.generation == entry.generation;
            if current {
                slot.reply.extend_from_slice(&self.rbuf.data()[..len]);
            }
            if entry.received == entry.replies {
                if current {
                    slot.done = Some(Ok(()));
                    // Woken in place, under the lock: the handle keeps its
                    // registered waker, so neither side clones one per
                    // operation (the wake itself only queues the task).
                    if let Some(w) = &slot.waker {
                        w.wake_by_ref();
                    }
                }
                st.queue.pop_front();
            }
            self.rbuf.consume(len);
        }
        result
    }
}
