//! What the pipelined client is given and what it answers: the framing
//! rule of a protocol, the handshake and address of a connection, TLS, and
//! the ways a call fails.

use std::time::Duration;

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
