//! Running operations: N concurrent workers, each with its own connection,
//! driven either back to back (closed loop) or by one global schedule (open
//! loop), with every operation's service and response time recorded.
//!
//! Runtime threads: the connections are spread round-robin over a few OS
//! threads (as few as the load needs, at most one per core; see
//! [`RuntimeThreads`]), each running a single-threaded tokio runtime that
//! opens its own connections and polls their sockets. Nothing on the hot
//! path crosses threads: no operation needs a futex wake-up, which on a
//! virtual machine costs more CPU than the operation itself.
//!
//! Open loop: there is one schedule for the whole run (so `-target 10000`
//! offers 10,000 operations per second in total), dealt round-robin to the
//! threads: thread t takes arrivals t, t+T, t+2T, ... Each thread's pacer
//! task sleeps on a timerfd (microsecond precision, where tokio's own timer
//! has 1 ms) until its next arrival and wakes an idle worker. A worker takes
//! an arrival only once it is due, so when every worker is busy, arrivals
//! wait in the client without being materialised and their wait counts in
//! response time: the queue is the schedule itself. A worker that takes an
//! arrival and sees the next one due wakes a peer, so a burst fans out.
//!
//! Closed loop: workers claim operations from a shared budget in chunks and
//! yield between chunks, so connections share the work even when a backend
//! never suspends (`null:`).
//!
//! The calling thread coordinates: it releases all threads at one start
//! instant once every connection is open, collects an interval of results
//! every `interval`, and handles the deadline, Ctrl+C and the drain timeout.
//!
//! What a worker does per operation is a [`Step`]: the workload decides the
//! operation and calls the connection; the [`Meter`] records timings. A
//! [`Pool`] holds connections open across runs and is typed by the
//! connection alone, so each run brings steps of its own type (a load, then
//! a run; the steps of a capacity search; a workload's own step type found
//! through a backend's extensions) and every step is a direct call.

mod aggregate;
mod config;
mod meter;
mod observer;
mod outcome;
mod pool;
mod runtime_thread;
mod segments;
mod shared;
mod step;
mod thread_ctx;
mod threads;

pub use config::{Group, RunConfig, StopHandle, DEFAULT_LAG_BUDGET};
pub use meter::Meter;
pub use observer::{Interval, IntervalKind, KeepSeries, Observer, Progress, Quiet, SlowestAnswer};
pub use outcome::{RunOutcome, StopReason};
pub use pool::{run, with_pool, Pool};
pub use runtime_thread::spawn_beside;
pub use segments::{knee, SegmentOutcome, SegmentSlo, SegmentVerdict};
pub use step::{BackendConnector, Connector, Step};
pub use threads::{
    RuntimeThreads, ThreadUse, ThreadsWhy, CONNECTIONS_PER_THREAD, RATE_PER_THREAD,
    THREAD_SATURATED,
};
