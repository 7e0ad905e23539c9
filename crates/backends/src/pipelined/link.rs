//! [`Link`]: one socket of one sojourn connection, a request (or a
//! pipelined batch) in flight at a time, with reconnection and the
//! replies owed by timed-out requests.

use std::future::poll_fn;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use sojourn_core::backend::guard::poll_deadline;
use tokio::time::{sleep_until, Instant, Sleep};

use super::config::{Framing, WireConfig, WireError};
use super::stream::{open, write_all, ReadBuffer, Stream};
use crate::backoff::Backoff;

/// First wait after a failed connection attempt, doubled per failure.
pub(super) const BACKOFF_FIRST: Duration = Duration::from_millis(10);

/// Replies owed to timed-out requests that a [`Link`] will still read and
/// discard; beyond this it closes the connection instead.
const MAX_STALE: usize = 1024;

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
            backoff: Backoff::new(BACKOFF_FIRST),
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
    pub(super) async fn call(
        &mut self,
        request: &[u8],
        replies: usize,
    ) -> Result<&[u8], WireError> {
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
        if self.backoff.next() > Instant::now() {
            if self.backoff.next() >= deadline {
                sleep_until(deadline).await;
                return Err(WireError::Connect(
                    "waiting before the next reconnection attempt".into(),
                ));
            }
            sleep_until(self.backoff.next()).await;
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
