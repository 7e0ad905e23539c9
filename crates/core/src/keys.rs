//! Key names: YCSB's `fnvhash64` and the `user<digits>` naming scheme.
//!
//! Keys must be byte-for-byte the ones YCSB 0.17.0 writes, so that a database
//! loaded by YCSB can be run against by sojourn and the other way round. That
//! means hashing the keynum's 8 little-endian bytes with FNV-1a and taking
//! Java's `Math.abs` of the signed result (go-ycsb hashes big-endian bytes and
//! so names different keys).
//!
//! [`build_key_name`] runs once per operation, so it formats into a
//! caller-owned buffer and allocates nothing once that buffer has grown.

/// FNV-1a 64-bit offset basis.
const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
/// FNV-1a 64-bit prime.
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 little-endian bytes of `v`,
/// then Java's `Math.abs`.
///
/// The result is non-negative except for the one hash equal to `i64::MIN`,
/// which Java's `abs` leaves negative; we keep that (wrapping) behaviour so
/// the key names agree.
pub fn fnvhash64(v: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS_64;
    for byte in v.to_le_bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(FNV_PRIME_64);
    }
    (h as i64).wrapping_abs()
}

/// Write YCSB's name for record `keynum` into `out` (cleared first):
/// `"user"`, then zeros up to `zeropadding` characters, then the decimal of
/// `fnvhash64(keynum)` when `hashed` (YCSB's `insertorder=hashed`) or of
/// `keynum` itself.
///
/// As in Java, the padding counts every character of the number, including
/// the minus sign of the single negative hash. Does not allocate when `out`
/// already has room for the key (24 bytes plus padding suffice).
pub fn build_key_name(keynum: u64, zeropadding: usize, hashed: bool, out: &mut String) {
    out.clear();
    out.push_str("user");
    if hashed {
        let h = fnvhash64(keynum as i64);
        push_padded_decimal(out, h.unsigned_abs(), h < 0, zeropadding);
    } else {
        push_padded_decimal(out, keynum, false, zeropadding);
    }
}

/// Append `magnitude` (with a leading `-` when `negative`) zero-padded on the
/// left to `width` characters, sign included.
fn push_padded_decimal(out: &mut String, magnitude: u64, negative: bool, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(magnitude);
    let len = digits.len() + usize::from(negative);
    for _ in len..width {
        out.push('0');
    }
    if negative {
        out.push('-');
    }
    out.push_str(digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(keynum: u64, zeropadding: usize, hashed: bool) -> String {
        let mut s = String::new();
        build_key_name(keynum, zeropadding, hashed, &mut s);
        s
    }

    #[test]
    fn ycsb_check_values() {
        assert_eq!(key(0, 1, true), "user6284781860667377211");
        assert_eq!(key(1, 1, true), "user8517097267634966620");
        assert_eq!(key(2, 1, true), "user1820151046732198393");
    }

    #[test]
    fn negative_hash_is_padded_like_java() {
        // Java pads `Long.toString(v)`, sign included. No known keynum hashes
        // to i64::MIN, so exercise the formatter directly.
        let mut s = String::new();
        push_padded_decimal(&mut s, i64::MIN.unsigned_abs(), true, 22);
        assert_eq!(s, "00-9223372036854775808");
        s.clear();
        push_padded_decimal(&mut s, 0, false, 3);
        assert_eq!(s, "000");
        s.clear();
        push_padded_decimal(&mut s, u64::MAX, false, 0);
        assert_eq!(s, "18446744073709551615");
    }

    #[test]
    fn reuses_capacity() {
        let mut s = String::with_capacity(64);
        let before = s.as_ptr();
        for k in 0..1000 {
            build_key_name(k, 30, k % 2 == 0, &mut s);
            assert_eq!(s.as_ptr(), before);
        }
    }
}
