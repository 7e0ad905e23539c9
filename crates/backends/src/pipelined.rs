//! The pipelined TCP client shared by the Redis and memcached backends: servers
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
//!
//! The parts: [`config`] (framing, handshake, errors), [`stream`] (TCP
//! and TLS, opening with the handshake), [`link`] (a socket of one's own),
//! [`mux`] (a shared socket and its driver), [`transport`] (either of them
//! behind one type, and settling failures), [`vote`] (the caches' vote
//! operations).

mod config;
mod link;
mod mux;
mod stream;
pub(crate) mod transport;
mod vote;

pub(crate) use crate::pool::SETUP_TIMEOUT;
pub(crate) use crate::url::split_host_port;
pub(crate) use config::{Framing, Handshake, Tls, WireConfig};
pub(crate) use stream::addr;
pub use transport::OpError;
pub(crate) use transport::{settled_by_the_transport, OpResult, Sockets, Transport};
pub(crate) use vote::vote_on_a_cache;
