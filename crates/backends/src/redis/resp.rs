//! RESP2, the Redis serialization protocol: encoding commands, finding
//! where a reply ends (RESP3's types too, for a template that switches a
//! connection over with `HELLO 3`), and walking a reply's items without
//! allocating.

use crate::pipelined::Framing;

/// Replies framed as RESP2 (what Redis, Valkey and Tair speak unless a
/// client asks for RESP3 with `HELLO 3`, which sojourn never does).
pub(crate) struct Resp;

impl Framing for Resp {
    fn reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
        let mut pos = 0;
        // Items still to read: nested arrays add their elements, so a
        // reply of any depth is walked without recursion.
        let mut remaining: u64 = 1;
        while remaining > 0 {
            let Some(&kind) = buf.get(pos) else {
                return Ok(None);
            };
            let Some(eol) = line_end(buf, pos + 1)? else {
                return Ok(None);
            };
            let line = &buf[pos + 1..eol];
            pos = eol + 2;
            remaining -= 1;
            match kind {
                // RESP3's line types: null, double, boolean, big number.
                b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => {}
                // Bulk strings, and RESP3's blob error and verbatim string.
                b'$' | b'!' | b'=' => {
                    let n = parse_int(line)?;
                    if n >= 0 {
                        let end = pos + n as usize + 2;
                        if buf.len() < end {
                            return Ok(None);
                        }
                        if &buf[end - 2..end] != b"\r\n" {
                            return Err("a bulk string does not end with CRLF".into());
                        }
                        pos = end;
                    } else if n != -1 {
                        return Err(format!("bulk string of length {n}"));
                    }
                }
                // Arrays, and RESP3's sets and pushes; maps and attributes
                // hold pairs, and an attribute precedes the reply it
                // annotates.
                b'*' | b'~' | b'>' | b'%' | b'|' => {
                    let n = parse_int(line)?;
                    let per = if matches!(kind, b'%' | b'|') { 2 } else { 1 };
                    if n > 0 {
                        remaining += per * n as u64;
                    } else if n < -1 || (n == -1 && kind != b'*') {
                        return Err(format!("aggregate of length {n}"));
                    }
                    if kind == b'|' {
                        remaining += 1;
                    }
                }
                _ => return Err(format!("unexpected reply type byte {kind:#04x}")),
            }
        }
        Ok(Some(pos))
    }
}

/// Index of the `\r` of the CRLF ending the line that starts at `from`;
/// `None` when the line is not complete yet.
fn line_end(buf: &[u8], from: usize) -> Result<Option<usize>, String> {
    let Some(rest) = buf.get(from..) else {
        return Ok(None);
    };
    match rest.iter().position(|&b| b == b'\n') {
        None => Ok(None),
        Some(nl) if nl > 0 && rest[nl - 1] == b'\r' => Ok(Some(from + nl - 1)),
        Some(_) => Err("a reply line ends with a bare LF".into()),
    }
}

fn parse_int(line: &[u8]) -> Result<i64, String> {
    let (neg, digits) = match line.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, line),
    };
    if digits.is_empty() || digits.len() > 18 {
        return Err(format!("bad number {:?}", String::from_utf8_lossy(line)));
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(format!("bad number {:?}", String::from_utf8_lossy(line)));
        }
        n = n * 10 + i64::from(d - b'0');
    }
    Ok(if neg { -n } else { n })
}

/// One item of a reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Item<'a> {
    Simple(&'a [u8]),
    Error(&'a [u8]),
    Int(i64),
    /// `None` is the null bulk string (a missing value).
    Bulk(Option<&'a [u8]>),
    /// The number of items that follow as elements; `None` is a null array.
    Array(Option<usize>),
}

/// Walks the items of replies that [`Resp::reply_len`] found complete.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub(crate) fn next(&mut self) -> Result<Item<'a>, String> {
        let buf = self.buf;
        let kind = *buf.get(self.pos).ok_or("reply ended early")?;
        let eol = line_end(buf, self.pos + 1)?.ok_or("reply ended early")?;
        let line = &buf[self.pos + 1..eol];
        self.pos = eol + 2;
        Ok(match kind {
            b'+' => Item::Simple(line),
            b'-' => Item::Error(line),
            b':' => Item::Int(parse_int(line)?),
            b'$' => match parse_int(line)? {
                n if n >= 0 => {
                    let end = self.pos + n as usize;
                    let value = buf.get(self.pos..end).ok_or("reply ended early")?;
                    self.pos = end + 2;
                    Item::Bulk(Some(value))
                }
                _ => Item::Bulk(None),
            },
            b'*' => match parse_int(line)? {
                n if n >= 0 => Item::Array(Some(n as usize)),
                _ => Item::Array(None),
            },
            _ => return Err(format!("unexpected reply type byte {kind:#04x}")),
        })
    }
}

/// Start a command of `argc` arguments (the command name included).
pub(crate) fn command(out: &mut Vec<u8>, argc: usize) {
    out.push(b'*');
    out.extend_from_slice(itoa::Buffer::new().format(argc).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Append one argument.
pub(crate) fn arg(out: &mut Vec<u8>, value: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(value.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

pub(crate) fn arg_int(out: &mut Vec<u8>, value: i64) {
    arg(out, itoa::Buffer::new().format(value).as_bytes());
}

/// A whole command from its arguments.
pub(crate) fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    command(out, args.len());
    for a in args {
        arg(out, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len(s: &[u8]) -> Result<Option<usize>, String> {
        Resp::reply_len(s)
    }

    #[test]
    fn framing() {
        assert_eq!(len(b"+OK\r\n"), Ok(Some(5)));
        assert_eq!(len(b"+OK\r\n+OK\r\n"), Ok(Some(5)));
        assert_eq!(len(b"+OK\r"), Ok(None));
        assert_eq!(len(b""), Ok(None));
        assert_eq!(len(b":-12\r\n"), Ok(Some(6)));
        assert_eq!(len(b"$3\r\nabc\r\n"), Ok(Some(9)));
        assert_eq!(len(b"$3\r\nab"), Ok(None));
        assert_eq!(len(b"$3\r\nabc\r"), Ok(None));
        assert_eq!(len(b"$-1\r\n"), Ok(Some(5)));
        assert_eq!(len(b"$0\r\n\r\n"), Ok(Some(6)));
        assert_eq!(len(b"*0\r\n"), Ok(Some(4)));
        assert_eq!(len(b"*-1\r\n"), Ok(Some(5)));
        let nested = b"*2\r\n*2\r\n$1\r\na\r\n:1\r\n$-1\r\n";
        assert_eq!(len(nested), Ok(Some(nested.len())));
        for cut in 0..nested.len() {
            assert_eq!(len(&nested[..cut]), Ok(None), "cut at {cut}");
        }
        // Binary values may contain CR, LF and NUL.
        assert_eq!(len(b"$4\r\n\r\n\0\n\r\n"), Ok(Some(10)));
        assert!(len(b"?x\r\n").is_err());
        assert!(len(b"$3\r\nabcde").is_err());
        assert!(len(b"$x\r\n").is_err());
        assert!(len(b"*-2\r\n").is_err());
        assert!(len(b"+OK\n").is_err());
        // RESP3.
        let map = b"%2\r\n+a\r\n:1\r\n+b\r\n,2.5\r\n";
        assert_eq!(len(map), Ok(Some(map.len())));
        assert_eq!(len(&map[..map.len() - 1]), Ok(None));
        assert_eq!(len(b"_\r\n"), Ok(Some(3)));
        assert_eq!(len(b"#t\r\n"), Ok(Some(4)));
        assert_eq!(len(b"!3\r\nERR\r\n"), Ok(Some(9)));
        let set = b"~2\r\n(12345678901234567890\r\n=7\r\ntxt:abc\r\n";
        assert_eq!(len(set), Ok(Some(set.len())));
        let attributed = b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n";
        assert_eq!(len(attributed), Ok(Some(attributed.len())));
        assert_eq!(len(&attributed[..attributed.len() - 3]), Ok(None));
        assert!(len(b"%-1\r\n").is_err());
    }

    #[test]
    fn reading() {
        let mut r = Reader::new(b"*3\r\n$2\r\nab\r\n$-1\r\n:7\r\n-ERR no\r\n+OK\r\n");
        assert_eq!(r.next(), Ok(Item::Array(Some(3))));
        assert_eq!(r.next(), Ok(Item::Bulk(Some(&b"ab"[..]))));
        assert_eq!(r.next(), Ok(Item::Bulk(None)));
        assert_eq!(r.next(), Ok(Item::Int(7)));
        assert_eq!(r.next(), Ok(Item::Error(&b"ERR no"[..])));
        assert_eq!(r.next(), Ok(Item::Simple(&b"OK"[..])));
        assert!(r.next().is_err());
    }

    #[test]
    fn encoding() {
        let mut out = Vec::new();
        encode(&mut out, &[b"GET", b"k\r\n"]);
        arg_int(&mut out, -5);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$3\r\nk\r\n\r\n$2\r\n-5\r\n");
    }
}
