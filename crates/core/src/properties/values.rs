//! Reading one value as a number: the separators and signs accepted, the
//! texts saying what would have been, and the error naming the entry.

use crate::redact;

use super::entry::{Entry, Origin};
use super::error::PropertyError;

pub(super) const ACCEPT_U64: &str =
    "a whole number from 0 to 18446744073709551615, e.g. 1000 or 1_000";
pub(super) const ACCEPT_I64: &str =
    "a whole number from -9223372036854775808 to 9223372036854775807, e.g. -5 or 1_000";
pub(super) const ACCEPT_F64: &str = "a finite decimal number, e.g. 0.95, 100 or 1e6";
pub(super) const ACCEPT_BOOL: &str = "true or false (any case)";
pub(super) const ACCEPT_F64_LIST: &str =
    "a comma-separated list of finite numbers, e.g. 95,99,99.9";

pub(super) fn invalid_value(
    key: &str,
    entry: &Entry,
    mut problem: String,
    accepted: String,
) -> PropertyError {
    // Java keeps `1000 # records` whole as the value; say why, since the
    // writer evidently expected an end-of-line comment.
    if entry.value.contains(" #") && matches!(entry.origin, Origin::File { .. }) {
        problem.push_str(" ('#' starts a comment only at the beginning of a line)");
    }
    PropertyError::Invalid {
        origin: Box::new(entry.origin.clone()),
        key: key.to_string(),
        // What an error shows is printed and may be logged: no secret.
        value: redact::property_value(key, &entry.value),
        problem,
        accepted,
    }
}

/// Below this normalized Damerau-Levenshtein similarity a known name is
/// more likely a different word than a typo, and suggesting it would mislead.
/// 0.7 keeps one or two slips in a ten-letter name and rejects names that
/// merely share a few letters.
const SUGGEST_SIMILARITY: f64 = 0.7;

pub(super) fn nearest(key: &str, known: &[&str]) -> Option<String> {
    let key = key.to_ascii_lowercase();
    known
        .iter()
        .map(|name| {
            let score = strsim::normalized_damerau_levenshtein(&key, &name.to_ascii_lowercase());
            (score, *name)
        })
        .filter(|(score, _)| *score >= SUGGEST_SIMILARITY)
        // On a tie the earlier name in `known` wins, so results are stable.
        .fold(None, |best: Option<(f64, &str)>, candidate| match best {
            Some(best) if best.0 >= candidate.0 => Some(best),
            _ => Some(candidate),
        })
        .map(|(_, name)| name.to_string())
}

/// Removes `_` digit separators, accepting one only between two digits so
/// that stray punctuation (`_`, `1_`, `-_1`) is still rejected.
pub(super) fn strip_separators(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c == '_' {
            let before = i.checked_sub(1).map(|j| bytes[j]);
            let after = bytes.get(i + 1).copied();
            let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
            if !digit(before) || !digit(after) {
                return None;
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Splits an optional sign from the ASCII digits of a whole number, or says
/// why it is not one.
pub(super) fn split_integer(raw: &str) -> Result<(bool, String), String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err("is empty".into());
    }
    let not_whole = || "is not a whole number".to_string();
    let cleaned = strip_separators(s).ok_or_else(not_whole)?;
    let (negative, digits) = match cleaned.as_bytes().first() {
        Some(b'-') => (true, &cleaned[1..]),
        Some(b'+') => (false, &cleaned[1..]),
        _ => (false, &cleaned[..]),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_whole());
    }
    Ok((negative, digits.to_string()))
}

pub(super) const NEGATIVE: &str = "must not be negative";
pub(super) const TOO_LARGE: &str = "is too large";

pub(super) fn parse_u64(raw: &str) -> Result<u64, String> {
    let (negative, digits) = split_integer(raw)?;
    if negative && digits.bytes().any(|b| b != b'0') {
        return Err(NEGATIVE.into());
    }
    digits.parse().map_err(|_| TOO_LARGE.into())
}

pub(super) fn parse_i64(raw: &str) -> Result<i64, String> {
    let (negative, digits) = split_integer(raw)?;
    let signed = if negative {
        format!("-{digits}")
    } else {
        digits
    };
    signed.parse().map_err(|_| "is out of range".into())
}

pub(super) fn parse_f64(raw: &str) -> Result<f64, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err("is empty".into());
    }
    let not_number = || "is not a number".to_string();
    let cleaned = strip_separators(s).ok_or_else(not_number)?;
    // Java's `d`/`f` suffix, only after a digit or point so `inf` and words
    // ending in f are not mangled into something that parses.
    let body = match cleaned.strip_suffix(['d', 'D', 'f', 'F']) {
        Some(body) if body.ends_with(|c: char| c.is_ascii_digit() || c == '.') => body,
        _ => &cleaned[..],
    };
    // Rust also reads `inf`, `infinity` and `nan`; no property means those.
    let value: f64 = body.parse().map_err(|_| not_number())?;
    if value.is_nan() {
        return Err(not_number());
    }
    if !value.is_finite() {
        return Err("is not finite".into());
    }
    Ok(value)
}
