//! How any bytes are kept in a text column (SQL `TEXT`, CQL `varchar`),
//! for the backends whose YCSB layout stores values as text.
//!
//! A text column holds valid UTF-8 (PostgreSQL also refuses NUL bytes;
//! MySQL refuses invalid UTF-8 in a utf8mb4 column; CQL's `varchar`
//! validates UTF-8 and `ascii` ASCII), while a backend must round-trip any
//! bytes. A value that is valid UTF-8, has no NUL and does not start with
//! byte 0x01 is stored as it is: every value YCSB or sojourn generates is
//! ASCII, so the tables stay readable by YCSB and by people. Any other
//! value is stored as 0x01 followed by its bytes in lower-case hex; reading
//! reverses that. A stored text that starts with 0x01 but is not valid hex
//! (written by another tool) is returned as it is.

/// The first byte of a value stored in escaped form.
const ESCAPE: u8 = 0x01;

/// Whether `value` is stored in a text column as it is.
pub(crate) fn is_plain(value: &[u8]) -> bool {
    value.first() != Some(&ESCAPE) && !value.contains(&0) && std::str::from_utf8(value).is_ok()
}

/// Append the stored form of a value that is not [`is_plain`].
pub(crate) fn escape_into(value: &[u8], out: &mut impl Extend<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend(std::iter::once(ESCAPE));
    out.extend(
        value
            .iter()
            .flat_map(|&b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
    );
}

/// The stored form of `value`: itself when plain (nothing copied).
pub(crate) fn encode(value: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if is_plain(value) {
        std::borrow::Cow::Borrowed(value)
    } else {
        let mut out = Vec::with_capacity(1 + 2 * value.len());
        escape_into(value, &mut out);
        std::borrow::Cow::Owned(out)
    }
}

/// The value whose stored form is `stored`.
pub(crate) fn decode(stored: &[u8]) -> Vec<u8> {
    match stored.split_first() {
        Some((&ESCAPE, hex)) if hex.len() % 2 == 0 => {
            let digit = |c: u8| match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            };
            hex.chunks_exact(2)
                .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
                .collect::<Option<Vec<u8>>>()
                .unwrap_or_else(|| stored.to_vec())
        }
        _ => stored.to_vec(),
    }
}

/// Field `field` of a read, whose stored form is `stored` (a driver's
/// buffer): a plain value is copied into a buffer reused across reads.
pub(crate) fn decoded_field(field: usize, stored: &[u8]) -> sojourn_core::backend::FieldValue {
    match stored.first() {
        Some(&ESCAPE) => sojourn_core::backend::FieldValue {
            field,
            value: decode(stored),
        },
        _ => sojourn_core::backend::FieldValue::copied(field, stored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        for v in [
            &b"plain ascii"[..],
            b"",
            "h\u{e9}llo".as_bytes(),
            &[0x00, 0xff],
            b"nul\0inside",
            &[0x01, b'a', b'b'],
            &[0xc3, 0x28],
        ] {
            let stored = encode(v);
            assert!(std::str::from_utf8(&stored).is_ok() && !stored.contains(&0));
            assert_eq!(decode(&stored), v);
            assert_eq!(decoded_field(3, &stored).value, v);
        }
        assert_eq!(&*encode(b"abc"), b"abc");
        assert_eq!(&*encode(&[0xff]), b"\x01ff");
        // Foreign text starting with 0x01 that is not our escape.
        assert_eq!(decode(b"\x01zz"), b"\x01zz");
        assert_eq!(decode(b"\x01a"), b"\x01a");
    }
}
