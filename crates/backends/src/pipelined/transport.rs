//! [`Transport`], a connection's way to the server over its own socket or
//! a shared one; [`Sockets`], where a backend's connections go; and how a
//! failed operation is settled.

use std::sync::Arc;

use sojourn_core::backend::guard::Failure;
use sojourn_core::backend::{BackendError, Status};

use super::config::{Framing, WireConfig, WireError};
use super::link::Link;
use super::mux::{MuxHandle, MuxPool};
use crate::pool::{Sharing, SETUP_TIMEOUT};

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
            type Error = $crate::pipelined::transport::OpError;

            fn guard(&self) -> sojourn_core::backend::guard::Guard {
                self.guard
            }

            fn settle(
                &mut self,
                failure: sojourn_core::backend::guard::Failure<
                    $crate::pipelined::transport::OpError,
                >,
            ) -> sojourn_core::backend::Status {
                $crate::pipelined::transport::settle(&mut self.last_error, failure)
            }

            fn failure_text(&mut self) -> &mut Option<String> {
                &mut self.last_error
            }
        }
    };
}
pub(crate) use settled_by_the_transport;

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
