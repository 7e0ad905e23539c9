//! What the connection and the row reader share of MySQL's protocol: why
//! a request failed, and length-encoded integers.

use std::io;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server refused it; the connection goes on.
    #[error("ERROR {code} ({state}): {message}")]
    Server {
        code: u16,
        state: String,
        message: String,
    },
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server said something this client cannot follow.
    #[error("{0}")]
    Protocol(String),
}

impl Error {
    /// Whether the connection is of no further use.
    pub fn is_fatal(&self) -> bool {
        match self {
            // The server shutting down, the connection killed.
            Error::Server { code, .. } => matches!(code, 1053 | 1927 | 4031),
            Error::Io(_) | Error::Protocol(_) => true,
        }
    }

    pub(super) fn protocol(what: impl Into<String>) -> Error {
        Error::Protocol(what.into())
    }
}

/// A length-encoded integer at the start of `b`: its value and its size.
pub(super) fn lenenc(b: &[u8]) -> Option<(u64, usize)> {
    let le = |n: usize| -> Option<u64> {
        let bytes = b.get(1..1 + n)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(bytes);
        Some(u64::from_le_bytes(v))
    };
    match *b.first()? {
        0xfc => Some((le(2)?, 3)),
        0xfd => Some((le(3)?, 4)),
        0xfe => Some((le(8)?, 9)),
        n => Some((n as u64, 1)),
    }
}

pub(super) fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}
