//! memcached's text protocol as this backend speaks it: where a reply
//! ends, `VALUE` blocks, error lines, and keys escaped for the protocol.

use crate::pipelined::{Framing, OpError};

/// memcached's limit on key length.
pub(super) const MAX_KEY: usize = 250;

/// Replies of memcached's text protocol: one line, or `VALUE` (and `STAT`)
/// blocks up to `END`.
pub(crate) struct Text;

impl Framing for Text {
    fn reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
        let mut pos = 0;
        loop {
            let Some(nl) = buf[pos..].iter().position(|&b| b == b'\n') else {
                return Ok(None);
            };
            let eol = pos + nl;
            // Replies end lines with CRLF; tolerate a bare LF (the LRU
            // crawler's metadump uses one).
            let line = &buf[pos..eol];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            pos = eol + 1;
            if let Some(header) = line.strip_prefix(b"VALUE ") {
                let bytes = value_length(header)?;
                let end = pos + bytes + 2;
                if buf.len() < end {
                    return Ok(None);
                }
                if &buf[end - 2..end] != b"\r\n" {
                    return Err("a value does not end with CRLF".into());
                }
                pos = end;
            } else if !line.starts_with(b"STAT ") {
                return Ok(Some(pos));
            }
        }
    }
}

/// The `<bytes>` of `VALUE <key> <flags> <bytes> [<cas>]`.
pub(super) fn value_length(header: &[u8]) -> Result<usize, String> {
    header
        .split(|&b| b == b' ')
        .nth(2)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|b| b.parse().ok())
        .ok_or_else(|| format!("bad VALUE line {:?}", String::from_utf8_lossy(header)))
}

/// One `VALUE` block: the data and, for `gets`, the CAS unique.
pub(super) struct Value<'a> {
    pub(super) data: &'a [u8],
    pub(super) cas: Option<u64>,
}

/// A retrieval reply: its first value, or `None` for `END`; a server error
/// as `Err`.
pub(super) fn parse_get(reply: &[u8]) -> Result<Option<Value<'_>>, String> {
    let eol = reply
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or("reply without a line")?;
    let line = &reply[..eol];
    if line == b"END" {
        return Ok(None);
    }
    let Some(header) = line.strip_prefix(b"VALUE ") else {
        return Err(String::from_utf8_lossy(line).into_owned());
    };
    let bytes = value_length(header)?;
    let cas = header
        .split(|&b| b == b' ')
        .nth(3)
        .and_then(|c| std::str::from_utf8(c).ok())
        .and_then(|c| c.parse().ok());
    let start = eol + 2;
    let data = reply.get(start..start + bytes).ok_or("value cut short")?;
    Ok(Some(Value { data, cas }))
}

/// The first line of a reply, without CRLF.
pub(super) fn first_line(reply: &[u8]) -> &[u8] {
    let end = reply
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(reply.len());
    &reply[..end]
}

/// `{table}-{key}` as a text-protocol key (see the module notes).
pub(super) fn encode_key(out: &mut Vec<u8>, table: &str, key: &str) -> Result<(), ()> {
    let start = out.len();
    for &b in table.as_bytes().iter().chain(b"-").chain(key.as_bytes()) {
        if (0x21..=0x7e).contains(&b) && b != b'%' {
            out.push(b);
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
    if out.len() - start > MAX_KEY {
        return Err(());
    }
    Ok(())
}

pub(super) fn reply_err(reply: &[u8]) -> OpError {
    OpError::error(String::from_utf8_lossy(first_line(reply)))
}
