//! How many runtime threads a pool runs, why, and how busy they were.
//!
//! Each runtime thread polls its own connections: a wake-up reads every
//! answer that arrived and sends what is due, so a thread's system calls are
//! shared by its connections. One thread per core is the most expensive
//! choice when connections are few: each wake-up then serves one or two of
//! them, and every operation pays its own `epoll_wait`, `read` and `write`,
//! so fewer threads cost less client CPU per operation at the same
//! throughput (`bench/redis.py` measures it). The C tools make the same
//! choice: `redis-benchmark` runs one event loop, `pgbench` one
//! thread unless told otherwise.
//!
//! Pipelined sockets shared by many connections (`-p connections=K`) are
//! counted the same way: one thread drives up to four of them, writing
//! every socket's batch in one pass and reading every answer in the next,
//! which on Redis and PostgreSQL's pipeline cost less CPU and fewer
//! context switches per operation than a thread per socket. One slower
//! machine once measured the opposite, which is why the run reports its
//! busiest thread: a thread that sets the pace says how many to ask for.
//!
//! So the pool starts with as few threads as its connections and its rate
//! need, and measures how much of the run each thread spent on a CPU. A
//! thread near saturation may have set the pace; the run then says so and
//! how many threads to ask for. A connection cannot move to another thread
//! once open (its socket, and some drivers' background tasks, belong to the
//! runtime that opened it), so the count is chosen before connecting.

use serde::Serialize;
use std::fmt;

use crate::backend::Threading;

/// Connections one runtime thread serves by default.
pub const CONNECTIONS_PER_THREAD: usize = 16;

/// Pipelined shared sockets one runtime thread drives by default.
pub const SOCKETS_PER_THREAD: usize = 4;

/// Operations per second one runtime thread is given by default: about
/// what one core keeps up with on a database's protocol (Redis,
/// PostgreSQL).
pub const RATE_PER_THREAD: f64 = 100_000.0;

/// Above this share of the run on a CPU, a runtime thread may have set the
/// pace rather than the database.
pub const THREAD_SATURATED: f64 = 0.90;

/// Why a pool runs the threads it does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadsWhy {
    /// `runtime.threads` set the count.
    Set,
    /// One per [`CONNECTIONS_PER_THREAD`] connections, and under a target
    /// one per [`RATE_PER_THREAD`] operations per second, at most one per
    /// core.
    Load,
    /// The connections share pipelined sockets: one per
    /// [`SOCKETS_PER_THREAD`] sockets (and per [`RATE_PER_THREAD`] under a
    /// target), at most one per core.
    Sockets,
    /// The database does its work on the threads that call it (an engine
    /// in the client's process): one per core, as its work needs them.
    InProcess,
}

/// How many runtime threads, and why.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuntimeThreads {
    pub count: usize,
    pub why: ThreadsWhy,
}

impl RuntimeThreads {
    /// The threads for `connections` offered `rate` operations per second
    /// (`None`: closed loop) on `cores` cores, as `threading` asks.
    /// `requested` > 0 is `runtime.threads`. Never more threads than
    /// connections.
    pub fn size(
        requested: usize,
        connections: usize,
        rate: Option<f64>,
        cores: usize,
        threading: Threading,
    ) -> RuntimeThreads {
        let by_rate = rate.map_or(1, |r| (r / RATE_PER_THREAD).ceil().max(1.0) as usize);
        let (count, why) = match threading {
            _ if requested > 0 => (requested, ThreadsWhy::Set),
            Threading::InProcess => (cores, ThreadsWhy::InProcess),
            Threading::Sockets(k) => (
                k.div_ceil(SOCKETS_PER_THREAD).max(by_rate).min(cores),
                ThreadsWhy::Sockets,
            ),
            Threading::Remote => {
                let by_connections = connections.div_ceil(CONNECTIONS_PER_THREAD);
                (by_connections.max(by_rate).min(cores), ThreadsWhy::Load)
            }
        };
        RuntimeThreads {
            count: count.clamp(1, connections.max(1)),
            why,
        }
    }
}

impl ThreadsWhy {
    pub const ALL: [ThreadsWhy; 4] = [
        ThreadsWhy::Set,
        ThreadsWhy::Load,
        ThreadsWhy::Sockets,
        ThreadsWhy::InProcess,
    ];

    /// The name a results store keeps.
    pub fn name(self) -> &'static str {
        match self {
            ThreadsWhy::Set => "set",
            ThreadsWhy::Load => "load",
            ThreadsWhy::Sockets => "sockets",
            ThreadsWhy::InProcess => "in_process",
        }
    }

    /// The reason [`ThreadsWhy::name`] named.
    pub fn parse(name: &str) -> Option<ThreadsWhy> {
        ThreadsWhy::ALL.into_iter().find(|w| w.name() == name)
    }
}

impl fmt::Display for ThreadsWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadsWhy::Set => f.write_str("set by runtime.threads"),
            ThreadsWhy::Load => write!(
                f,
                "one per {CONNECTIONS_PER_THREAD} connections and per {}k operations/s \
                 offered, at most one per core",
                RATE_PER_THREAD / 1000.0
            ),
            ThreadsWhy::Sockets => write!(
                f,
                "one per {SOCKETS_PER_THREAD} shared sockets and per {}k operations/s offered, \
                 at most one per core",
                RATE_PER_THREAD / 1000.0
            ),
            ThreadsWhy::InProcess => {
                f.write_str("one per core: the database works on the client's own threads")
            }
        }
    }
}

/// How the runtime threads of one run were used.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct ThreadUse {
    pub why: ThreadsWhy,
    /// The busiest thread's CPU time over the run's length: near 1, its
    /// loop never idled.
    pub busiest: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_connections_share_a_thread_and_more_or_a_rate_add_threads() {
        let auto = |conns, rate| RuntimeThreads::size(0, conns, rate, 16, Threading::Remote).count;
        assert_eq!(auto(1, None), 1);
        assert_eq!(auto(16, None), 1);
        assert_eq!(auto(17, None), 2);
        assert_eq!(auto(64, None), 4);
        assert_eq!(auto(1000, None), 16, "at most one per core");
        assert_eq!(auto(16, Some(40_000.0)), 1);
        assert_eq!(auto(16, Some(250_000.0)), 3);
        assert_eq!(auto(2, Some(2_000_000.0)), 2, "never more than connections");
        assert_eq!(
            RuntimeThreads::size(0, 16, None, 16, Threading::Remote).why,
            ThreadsWhy::Load
        );
    }

    #[test]
    fn a_reason_reads_back_by_its_name() {
        for why in ThreadsWhy::ALL {
            assert_eq!(ThreadsWhy::parse(why.name()), Some(why));
        }
        assert_eq!(ThreadsWhy::parse("many"), None);
    }

    #[test]
    fn a_set_count_shared_sockets_or_an_in_process_database_override_the_load() {
        let set = RuntimeThreads::size(3, 16, None, 16, Threading::Remote);
        assert_eq!((set.count, set.why), (3, ThreadsWhy::Set));
        let set = RuntimeThreads::size(8, 2, None, 16, Threading::Sockets(2));
        assert_eq!(set.count, 2, "never more than connections");
        let local = RuntimeThreads::size(0, 16, None, 4, Threading::InProcess);
        assert_eq!((local.count, local.why), (4, ThreadsWhy::InProcess));
        assert_eq!(
            RuntimeThreads::size(0, 2, None, 4, Threading::InProcess).count,
            2
        );
        let shared = RuntimeThreads::size(0, 64, None, 16, Threading::Sockets(4));
        assert_eq!((shared.count, shared.why), (1, ThreadsWhy::Sockets));
        let shared = |k, cores| RuntimeThreads::size(0, 64, None, cores, Threading::Sockets(k));
        assert_eq!(shared(5, 16).count, 2);
        assert_eq!(shared(16, 16).count, 4);
        assert_eq!(shared(16, 2).count, 2, "at most one per core");
        let fast = RuntimeThreads::size(0, 64, Some(500_000.0), 16, Threading::Sockets(2));
        assert_eq!(fast.count, 5);
    }
}
