//! How a PostgreSQL connection reaches the server: its socket of its own
//! (served by the lean client or by tokio-postgres) or a socket shared with
//! other connections, each (re)opened no sooner than its backoff allows.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use sojourn_core::executor::spawn_beside;
use tokio::task::AbortHandle;
use tokio_postgres::{Client, NoTls};

use super::lean::Lean;
use super::options::Inner;
use super::statements::Statements;
use crate::sql::{Backoff, RECONNECT_FIRST};

/// An open client and the task driving its socket.
pub(super) struct Live {
    pub(super) client: Client,
    task: AbortHandle,
}

impl Live {
    /// Give up on a connection whose state is unknown (an operation timed
    /// out in the middle): stop its task, which closes the socket, rather
    /// than wait for answers that may never come.
    pub(super) fn abandon(&self) {
        self.task.abort();
    }

    pub(super) fn healthy(&self) -> bool {
        !self.client.is_closed()
    }

    /// Publishes a session's statistics now (PostgreSQL 15+).
    pub(super) const FLUSH_STATS: &str = "SELECT pg_stat_force_next_flush()";

    /// Publish this session's statistics now rather than up to a second
    /// later. PostgreSQL 15+ publishes a session's counts when it goes
    /// idle, at most once a second; forced, as this very statement ends,
    /// before the reply. Setup and sampling sessions call this before
    /// closing, so that what they did (an EXISTS over the workload's
    /// table, an ANALYZE) never lands in the next phase's server figures.
    /// Older servers lack the function and publish on their own schedule:
    /// the error is harmless.
    /// Waits `limit` at most.
    pub(super) async fn publish_stats(&self, limit: Duration) {
        let flush = self.client.batch_execute(Self::FLUSH_STATS);
        let _ = tokio::time::timeout(limit, flush).await;
    }
}

/// Open a client and spawn its connection task beside the worker that will
/// use it (see [`spawn_beside`]).
pub(super) async fn open_client(inner: &Inner) -> Result<Live, tokio_postgres::Error> {
    let (client, task) = match &inner.tls {
        None => {
            let (client, conn) = inner.config.connect(NoTls).await?;
            (client, spawn_beside(conn))
        }
        Some(tls) => {
            let (client, conn) = inner.config.connect(tls.clone()).await?;
            (client, spawn_beside(conn))
        }
    };
    Ok(Live {
        client,
        task: task.abort_handle(),
    })
}

/// The sockets of the multiplexed topology (`-p connections=K`), shared by
/// the sojourn connections assigned to each: tokio-postgres pipelines the
/// requests of every user of a client over its one socket, in order.
pub(super) struct Pool {
    pub(super) slots: Vec<tokio::sync::Mutex<Slot>>,
    pub(super) next: AtomicUsize,
}

#[derive(Default)]
pub(super) struct Slot {
    live: Option<Arc<Live>>,
    /// Bumped at each new client, so that a user that found the client
    /// broken replaces that one and not a newer one another user opened.
    generation: u64,
    backoff: Option<Backoff>,
}

/// How a sojourn connection reaches the server.
pub(super) enum Link {
    /// A socket of its own, one request in flight, served by [`Lean`].
    Lean {
        /// Boxed: its statement caches would make every link as large.
        conn: Option<Box<Lean>>,
        backoff: Backoff,
    },
    /// A socket of its own, one request in flight.
    Own {
        live: Option<Live>,
        backoff: Backoff,
    },
    /// A socket shared with other sojourn connections.
    Shared {
        pool: Arc<Pool>,
        slot: usize,
        /// The client in use and its generation.
        current: Option<(Arc<Live>, u64)>,
        /// The generation last found broken, to be replaced.
        broken: Option<u64>,
    },
}

impl Link {
    /// The client to use, (re)opened if need be, no sooner than the backoff
    /// allows; `statements` are emptied when the client changes.
    pub(super) async fn ready<'a>(
        &'a mut self,
        statements: &mut Statements,
        inner: &Inner,
    ) -> Result<&'a Client, tokio_postgres::Error> {
        if matches!(self, Link::Lean { .. }) {
            // An operation only tokio-postgres serves (the workload's
            // properties said YCSB's): the socket is handed over for good.
            *self = Link::Own {
                live: None,
                backoff: Backoff::new(RECONNECT_FIRST),
            };
        }
        match self {
            Link::Lean { .. } => unreachable!("replaced above"),
            Link::Own { live, backoff } => {
                if !live.as_ref().is_some_and(Live::healthy) {
                    if let Some(old) = live.take() {
                        old.abandon();
                    }
                    *statements = Statements::default();
                    backoff.wait_turn().await;
                    // Boxed, as every rare path under an operation: the
                    // handshake's state would otherwise enlarge, and be
                    // copied with, every operation's future.
                    *live = Some(Box::pin(open_client(inner)).await?);
                    backoff.succeeded();
                }
                Ok(&live.as_ref().expect("opened above").client)
            }
            Link::Shared {
                pool,
                slot,
                current,
                broken,
            } => {
                if !current.as_ref().is_some_and(|(l, _)| l.healthy()) {
                    let stale = current.take().map(|(_, g)| g).or(broken.take());
                    *statements = Statements::default();
                    let mut s = pool.slots[*slot].lock().await;
                    let usable =
                        s.live.as_ref().is_some_and(|l| l.healthy()) && stale != Some(s.generation);
                    if !usable {
                        if let Some(old) = s.live.take() {
                            old.abandon();
                        }
                        let backoff = s
                            .backoff
                            .get_or_insert_with(|| Backoff::new(RECONNECT_FIRST));
                        backoff.wait_turn().await;
                        let live = Box::pin(open_client(inner)).await?;
                        s.backoff
                            .get_or_insert_with(|| Backoff::new(RECONNECT_FIRST))
                            .succeeded();
                        s.generation += 1;
                        s.live = Some(Arc::new(live));
                    }
                    let live = s.live.clone().expect("opened above");
                    *current = Some((live, s.generation));
                }
                Ok(&current.as_ref().expect("adopted above").0.client)
            }
        }
    }

    /// The connection in use, if it is open; never opens one.
    pub(super) fn current(&self) -> Option<&Live> {
        match self {
            Link::Lean { .. } => None,
            Link::Own { live, .. } => live.as_ref(),
            Link::Shared { current, .. } => current.as_ref().map(|(l, _)| &**l),
        }
        .filter(|l| l.healthy())
    }

    /// Give up on the client in use: its state is unknown or it is broken.
    pub(super) fn abandon(&mut self) {
        match self {
            Link::Lean { conn, .. } => *conn = None,
            Link::Own { live, .. } => {
                if let Some(old) = live.take() {
                    old.abandon();
                }
            }
            Link::Shared {
                current, broken, ..
            } => {
                if let Some((live, generation)) = current.take() {
                    // Its other users' requests are stuck behind this one
                    // or lost with the socket: they fail too.
                    live.abandon();
                    *broken = Some(generation);
                }
            }
        }
    }
}
