//! [`Channel`]: one HTTP/2 connection that comes back after failures, with
//! its timeout and backoff, and [`Failure`], why a call got no answer.

use std::future::Future;
use std::time::Duration;

use bytes::BytesMut;
use http::Uri;
use prost::Message;

use super::auth::Auth;
use super::grpc::{self, CallError};
use crate::backoff::Backoff;

/// The first wait after a failed connection attempt.
pub(super) const BACKOFF_FIRST: Duration = Duration::from_millis(10);

/// Why an operation did not get an answer (what `last_error` tells).
#[derive(Debug)]
pub enum Failure {
    Call(CallError),
    Timeout(Duration),
    /// Reconnecting failed recently; waiting out the backoff.
    Down,
    Auth(String),
}

impl Failure {
    pub(super) fn code(&self) -> Option<i32> {
        match self {
            Failure::Call(e) => Some(e.code()),
            _ => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Call(e) => e.fmt(f),
            Failure::Timeout(d) => write!(f, "no answer within {d:?}"),
            Failure::Down => write!(f, "not connected (reconnecting, with backoff)"),
            Failure::Auth(m) => f.write_str(m),
        }
    }
}

/// One HTTP/2 connection that comes back after failures: calls with a
/// timeout, reconnects with backoff, adds the auth headers.
pub(super) struct Channel {
    pub(super) endpoint: grpc::Endpoint,
    pub(super) conn: Option<grpc::Conn>,
    pub(super) auth: Auth,
    /// `None` on a connection's link, whose operations the guard bounds.
    pub(super) timeout: Option<Duration>,
    pub(super) backoff: Backoff,
}

/// `call`, failing at `limit` where there is one.
pub(super) async fn within<T>(
    limit: Option<Duration>,
    call: impl Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, call)
            .await
            .unwrap_or(Err(Failure::Timeout(limit))),
        None => call.await,
    }
}

impl Channel {
    pub(super) async fn connect(&mut self) -> Result<(), Failure> {
        if self.backoff.blocked() {
            return Err(Failure::Down);
        }
        let endpoint = &self.endpoint;
        let connected = within(self.timeout, async {
            endpoint.connect().await.map_err(Failure::Call)
        })
        .await;
        match connected {
            Ok(conn) => {
                self.conn = Some(conn);
                Ok(())
            }
            Err(f) => {
                self.backoff.failed();
                Err(f)
            }
        }
    }

    /// One call: `write` puts the request message in the buffer, and
    /// `on_message` gets each response message.
    pub(super) async fn call(
        &mut self,
        uri: &Uri,
        write: impl FnOnce(&mut BytesMut),
        on_message: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), Failure> {
        if self.conn.is_none() {
            self.connect().await?;
        }
        let headers = self.auth.headers().await.map_err(Failure::Auth)?;
        let conn = self.conn.as_mut().expect("connected above");
        write(conn.message());
        let called = within(self.timeout, async {
            conn.call(uri, headers, on_message)
                .await
                .map_err(Failure::Call)
        })
        .await;
        match &called {
            Ok(()) => self.backoff.succeeded(),
            Err(Failure::Call(CallError::Transport(_))) => {
                // The connection is gone: the next call reconnects.
                self.conn = None;
                self.backoff.failed();
            }
            // A timeout leaves the connection: a stalled server may come
            // back.
            Err(_) => {}
        }
        called
    }

    /// A call with prost messages, for the admin API.
    pub(super) async fn unary<Req: Message, Resp: Message + Default>(
        &mut self,
        uri: &Uri,
        request: &Req,
    ) -> Result<Resp, Failure> {
        let mut response = None;
        self.call(
            uri,
            |buf| request.encode_raw(buf),
            |msg| {
                response = Some(Resp::decode(msg).map_err(|e| e.to_string())?);
                Ok(())
            },
        )
        .await?;
        Ok(response.unwrap_or_default())
    }
}
