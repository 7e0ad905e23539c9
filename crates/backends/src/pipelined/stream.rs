//! A connection's byte stream (plain TCP or TLS), opening it with its
//! handshake, and the buffered reads and bounded writes on it.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use sojourn_core::backend::guard::poll_deadline;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::config::{Framing, WireConfig, WireError};

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
    pub(super) fn buffers_writes(&self) -> bool {
        !matches!(self, Stream::Tcp(_))
    }
}

const INITIAL_READ_BUFFER: usize = 16 * 1024;

/// Bytes read from a socket and not yet consumed: `buf[start..end]`.
#[derive(Debug)]
pub(super) struct ReadBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuffer {
    pub(super) fn new() -> ReadBuffer {
        ReadBuffer {
            buf: vec![0; INITIAL_READ_BUFFER],
            start: 0,
            end: 0,
        }
    }

    pub(super) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    pub(super) fn consume(&mut self, n: usize) {
        self.start += n;
        debug_assert!(self.start <= self.end);
        if self.start >= self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    pub(super) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Read what the socket has into the free space, making room first.
    /// `Ready(Ok(0))` is end of stream.
    pub(super) fn poll_fill(
        &mut self,
        stream: &mut Stream,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
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
pub(super) async fn write_all(
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
