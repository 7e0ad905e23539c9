//! Multiplexed connections (`-p connections=K`): several sojourn
//! connections share one socket; their requests are pipelined and the
//! replies handed back in order by a driver task per socket.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use sojourn_core::backend::guard::poll_deadline;
use tokio::io::AsyncWrite;
use tokio::time::{sleep_until, Instant, Sleep};

use super::config::{Framing, WireConfig, WireError};
use super::link::BACKOFF_FIRST;
use super::stream::{open, ReadBuffer, Stream};
use crate::backoff::Backoff;

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
    pub(super) async fn call(&mut self, out: &[u8], replies: usize) -> Result<&[u8], WireError> {
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
    let mut backoff = Backoff::new(BACKOFF_FIRST);
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
                sleep_until(backoff.next()).await;
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
