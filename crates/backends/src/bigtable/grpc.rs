//! A small gRPC client over one HTTP/2 connection (the `h2` crate), for the
//! Bigtable backend: a call writes the request's headers and its one
//! length-prefixed message, then reads the response messages and the
//! `grpc-status` trailer.
//!
//! Why not tonic's `Channel`: it queues each request to a worker task
//! (tower's `Buffer`) and hyper spawns a task per request to stream its
//! body, so a unary call costs several task wake-ups besides the
//! connection's own. Here the caller's task drives the call and the only
//! other task is the connection, spawned on the caller's runtime (with the
//! executor's runtime threads, the same thread).

use std::future::poll_fn;
use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE, TE};
use http::{HeaderMap, Method, Request, Uri};

/// gRPC status codes this backend tells apart.
pub mod code {
    pub const OK: i32 = 0;
    pub const CANCELLED: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const NOT_FOUND: i32 = 5;
    pub const ALREADY_EXISTS: i32 = 6;
    pub const UNAVAILABLE: i32 = 14;

    /// The code's name, as gRPC spells it.
    pub fn name(code: i32) -> &'static str {
        const NAMES: [&str; 17] = [
            "OK",
            "CANCELLED",
            "UNKNOWN",
            "INVALID_ARGUMENT",
            "DEADLINE_EXCEEDED",
            "NOT_FOUND",
            "ALREADY_EXISTS",
            "PERMISSION_DENIED",
            "RESOURCE_EXHAUSTED",
            "FAILED_PRECONDITION",
            "ABORTED",
            "OUT_OF_RANGE",
            "UNIMPLEMENTED",
            "INTERNAL",
            "UNAVAILABLE",
            "DATA_LOSS",
            "UNAUTHENTICATED",
        ];
        usize::try_from(code)
            .ok()
            .and_then(|i| NAMES.get(i))
            .copied()
            .unwrap_or("UNKNOWN_CODE")
    }
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The connection failed or closed: the call may not have reached the
    /// server, and the connection is unusable.
    Transport(String),
    /// The server answered with a non-OK status.
    Status { code: i32, message: String },
    /// The answer was not well-formed gRPC or protobuf.
    Protocol(String),
}

impl CallError {
    /// The gRPC code: transport failures count as `UNAVAILABLE`.
    pub fn code(&self) -> i32 {
        match self {
            CallError::Transport(_) => code::UNAVAILABLE,
            CallError::Status { code, .. } => *code,
            CallError::Protocol(_) => code::UNKNOWN,
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Transport(m) => write!(f, "connection failed: {m}"),
            CallError::Status { code, message } => write!(f, "{}: {message}", code::name(*code)),
            CallError::Protocol(m) => write!(f, "malformed answer: {m}"),
        }
    }
}

fn transport(e: impl std::fmt::Display) -> CallError {
    CallError::Transport(e.to_string())
}

/// Where to connect and how.
#[derive(Clone)]
pub struct Endpoint {
    /// `host:port`.
    authority: String,
    /// TLS with this server name, or plaintext.
    tls: Option<(
        tokio_rustls::TlsConnector,
        rustls::pki_types::ServerName<'static>,
    )>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("authority", &self.authority)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl Endpoint {
    /// Plaintext HTTP/2 to `host:port` (the emulator).
    pub fn plaintext(authority: &str) -> Endpoint {
        Endpoint {
            authority: authority.to_string(),
            tls: None,
        }
    }

    /// TLS to `host` on port 443, trusting the system's CA roots.
    pub fn tls(host: &str) -> Result<Endpoint, String> {
        let loaded = rustls_native_certs::load_native_certs();
        let mut roots = rustls::RootCertStore::empty();
        for cert in loaded.certs {
            // A certificate the store cannot parse is skipped, as browsers do.
            let _ = roots.add(cert);
        }
        if roots.is_empty() {
            return Err(format!(
                "no CA certificates found in the system store ({} errors); install \
                 ca-certificates",
                loaded.errors.len()
            ));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec()];
        let name = rustls::pki_types::ServerName::try_from(host.to_string())
            .map_err(|e| format!("{host}: {e}"))?;
        Ok(Endpoint {
            authority: format!("{host}:443"),
            tls: Some((tokio_rustls::TlsConnector::from(Arc::new(config)), name)),
        })
    }

    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The full URI of a method, e.g. `/google.bigtable.v2.Bigtable/ReadRows`.
    pub fn uri(&self, path: &str) -> Result<Uri, String> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.authority)
            .parse()
            .map_err(|e| format!("bad address {}: {e}", self.authority))
    }

    /// Open a connection; its driver is spawned on the current runtime.
    pub async fn connect(&self) -> Result<Conn, CallError> {
        let tcp = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| transport(format!("{}: {e}", self.authority)))?;
        let _ = tcp.set_nodelay(true);
        let mut builder = h2::client::Builder::new();
        // Large windows so that a scan's answer is never held up by flow
        // control, whatever its size.
        builder
            .initial_window_size(4 << 20)
            .initial_connection_window_size(8 << 20)
            .max_frame_size(1 << 20);
        let send = match &self.tls {
            None => {
                let (send, connection) = builder.handshake(tcp).await.map_err(transport)?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                send
            }
            Some((connector, name)) => {
                let tls = connector
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| transport(format!("TLS: {e}")))?;
                let (send, connection) = builder.handshake(tls).await.map_err(transport)?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                send
            }
        };
        Ok(Conn {
            send,
            body: BytesMut::with_capacity(1024),
            pending: BytesMut::new(),
        })
    }
}

/// One HTTP/2 connection. Calls take `&mut self`: one at a time.
pub struct Conn {
    send: h2::client::SendRequest<Bytes>,
    /// The request body being built (reused: its buffer comes back once the
    /// frame that carried it is written).
    body: BytesMut,
    /// Response bytes that do not yet hold a whole message.
    pending: BytesMut,
}

const GRPC: HeaderValue = HeaderValue::from_static("application/grpc");
const TRAILERS: HeaderValue = HeaderValue::from_static("trailers");

impl Conn {
    /// The request body buffer: write one protobuf message into it after
    /// calling this, then [`Conn::call`].
    pub fn message(&mut self) -> &mut BytesMut {
        self.body.clear();
        // gRPC's prefix: not compressed, then the length (filled in `call`).
        self.body.put_bytes(0, 5);
        &mut self.body
    }

    /// Send the message built with [`Conn::message`] to `uri` with `headers`
    /// added, and call `on_message` with each response message.
    pub async fn call(
        &mut self,
        uri: &Uri,
        headers: &[(HeaderName, HeaderValue)],
        mut on_message: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), CallError> {
        let len = u32::try_from(self.body.len() - 5)
            .map_err(|_| CallError::Protocol("request too large".into()))?;
        self.body[1..5].copy_from_slice(&len.to_be_bytes());
        let body = self.body.split().freeze();

        poll_fn(|cx| self.send.poll_ready(cx))
            .await
            .map_err(transport)?;
        let mut request = Request::new(());
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri.clone();
        let h = request.headers_mut();
        h.insert(CONTENT_TYPE, GRPC);
        h.insert(TE, TRAILERS);
        for (name, value) in headers {
            h.insert(name.clone(), value.clone());
        }
        let (response, mut stream) = self.send.send_request(request, false).map_err(transport)?;
        stream.send_data(body, true).map_err(transport)?;
        let response = response.await.map_err(stream_error)?;
        let (parts, mut body) = response.into_parts();
        // "Trailers-only": an error (or an empty answer) in the headers.
        if let Some(status) = grpc_status(&parts.headers)? {
            return status;
        }
        if parts.status != http::StatusCode::OK {
            return Err(CallError::Protocol(format!("HTTP status {}", parts.status)));
        }
        self.pending.clear();
        while let Some(data) = body.data().await {
            let data = data.map_err(stream_error)?;
            let _ = body.flow_control().release_capacity(data.len());
            if self.pending.is_empty() {
                let mut data = data;
                split_messages(&mut data, &mut on_message)?;
                if data.has_remaining() {
                    self.pending.extend_from_slice(&data);
                }
            } else {
                self.pending.extend_from_slice(&data);
                let mut all = self.pending.split().freeze();
                split_messages(&mut all, &mut on_message)?;
                self.pending.extend_from_slice(&all);
            }
        }
        if !self.pending.is_empty() {
            return Err(CallError::Protocol("truncated message".into()));
        }
        let trailers = body.trailers().await.map_err(stream_error)?;
        match trailers.as_ref().map(grpc_status).transpose()?.flatten() {
            Some(status) => status,
            None => Err(CallError::Protocol("no grpc-status trailer".into())),
        }
    }
}

/// A stream-level failure: a reset stream leaves the connection usable,
/// anything else (an I/O error, GOAWAY) is the connection's end.
fn stream_error(e: h2::Error) -> CallError {
    match e.reason() {
        Some(reason) if e.is_reset() && !e.is_go_away() => CallError::Status {
            code: if reason == h2::Reason::REFUSED_STREAM {
                code::UNAVAILABLE
            } else {
                code::CANCELLED
            },
            message: format!("stream reset: {e}"),
        },
        _ => transport(e),
    }
}

/// Call `f` with each whole length-prefixed message at the front of `buf`,
/// leaving an incomplete one in it.
fn split_messages(
    buf: &mut Bytes,
    f: &mut impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), CallError> {
    while buf.len() >= 5 {
        if buf[0] != 0 {
            return Err(CallError::Protocol("compressed message".into()));
        }
        let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if buf.len() < 5 + len {
            break;
        }
        f(&buf[5..5 + len]).map_err(CallError::Protocol)?;
        buf.advance(5 + len);
    }
    Ok(())
}

/// The call's outcome if `headers` carry `grpc-status`.
#[allow(clippy::type_complexity)]
fn grpc_status(headers: &HeaderMap) -> Result<Option<Result<(), CallError>>, CallError> {
    let Some(status) = headers.get("grpc-status") else {
        return Ok(None);
    };
    let code: i32 = status
        .to_str()
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| CallError::Protocol(format!("grpc-status {status:?}")))?;
    if code == code::OK {
        return Ok(Some(Ok(())));
    }
    let message = headers
        .get("grpc-message")
        .map(|m| percent_decode(m.as_bytes()))
        .unwrap_or_default();
    Ok(Some(Err(CallError::Status { code, message })))
}

/// gRPC percent-encodes `grpc-message`.
fn percent_decode(s: &[u8]) -> String {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_split_at_their_prefixes() {
        let mut seen = Vec::new();
        let mut f = |m: &[u8]| {
            seen.push(m.to_vec());
            Ok(())
        };
        let mut buf = Bytes::from_static(b"\0\0\0\0\x02ab\0\0\0\0\0\0\0\0\0\x03x");
        split_messages(&mut buf, &mut f).unwrap();
        let mut compressed = Bytes::from_static(b"\x01\0\0\0\0");
        assert!(split_messages(&mut compressed, &mut f).is_err());
        assert_eq!(seen, [b"ab".to_vec(), vec![]]);
        assert_eq!(&buf[..], b"\0\0\0\0\x03x");
    }

    #[test]
    fn status_from_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(grpc_status(&h).unwrap(), None);
        h.insert("grpc-status", HeaderValue::from_static("5"));
        h.insert(
            "grpc-message",
            HeaderValue::from_static("table %22t%22 not found"),
        );
        assert_eq!(
            grpc_status(&h).unwrap(),
            Some(Err(CallError::Status {
                code: code::NOT_FOUND,
                message: "table \"t\" not found".into()
            }))
        );
        h.insert("grpc-status", HeaderValue::from_static("0"));
        assert_eq!(grpc_status(&h).unwrap(), Some(Ok(())));
        assert_eq!(percent_decode(b"100%"), "100%");
        assert_eq!(code::name(14), "UNAVAILABLE");
    }
}
