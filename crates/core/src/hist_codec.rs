//! One histogram to bytes and back: HdrHistogram's compressed V2
//! encoding, used for the histograms the results store keeps and for each
//! line's payload in the interval logs that `output::hdrlog`
//! writes (that module owns the log's format; this one only the codec).

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Compressed V2 encoding (the bytes behind a log line's base64 payload).
pub fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    // Serialising into a Vec cannot fail for a valid histogram.
    let _ = V2DeflateSerializer::new().serialize(h, &mut out);
    out
}

/// Decode what [`encode`] wrote (plain or compressed V2).
pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("not an HdrHistogram V2 encoding: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histograms::new_histogram;

    #[test]
    fn round_trip_is_exact() {
        let mut h = new_histogram();
        for v in [1u64, 10, 1000, 123_456, 9_999_999, 3_000_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        let bytes = encode(&h);
        assert!(bytes.len() < 2000);
        let back = decode(&bytes).unwrap();
        assert_eq!(back, h);
        assert!(decode(b"nonsense").is_err());
    }
}
