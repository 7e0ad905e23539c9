//! The Java `.properties` text format: turning a file's text into
//! `(key, value, line)` triples. Knows nothing about what keys mean.
//!
//! Follows `java.util.Properties.load` so that workload files written for
//! YCSB read the same here, with three deliberate differences, each because a
//! real file is more likely to contain a mistake than to rely on the Java
//! behaviour:
//! - unescaped trailing whitespace of a value is dropped (Java keeps it, so
//!   `recordcount=1000 ` fails to parse as a number there);
//! - a line with no key (`=value`) is an error rather than an empty key;
//! - a malformed `\u` escape or a lone UTF-16 surrogate is an error naming the
//!   line (Java throws without saying where).

use std::path::Path;

use super::error::PropertyError;

/// One `key=value` pair as written in a file, with the line it starts on
/// (1-based; a value continued over several lines keeps its first line).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// Java's whitespace for this format: space, tab and form feed. Other
/// Unicode spaces are ordinary characters, as in Java.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Splits on `\n`, `\r\n` and a lone `\r`, as Java does, so files saved on
/// any platform number their lines the same way an editor does.
fn physical_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['\r', '\n']) {
            Some(at) => {
                lines.push(&rest[..at]);
                let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[at + skip..];
            }
            None => {
                lines.push(rest);
                break;
            }
        }
    }
    lines
}

/// A line continues onto the next when it ends in an odd number of
/// backslashes: an even number is that many escaped backslashes.
fn continues(line: &str) -> bool {
    line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Parses a whole file. Entries come back in file order; duplicates are kept
/// so the caller decides that the later one wins.
pub(super) fn parse(text: &str, path: &Path) -> Result<Vec<Parsed>, PropertyError> {
    // Editors on Windows put a byte-order mark first; Java would make it part
    // of the first key, which then silently never matches.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = physical_lines(text);
    let mut out = Vec::new();
    let mut next = 0;
    while next < lines.len() {
        let first_line = next;
        let first = lines[next].trim_start_matches(is_blank);
        next += 1;
        // Only the first physical line can be a comment: a `#` at the start
        // of a continuation line is part of the value, as in Java.
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = Logical::default();
        let mut segment = first;
        let mut segment_line = first_line;
        loop {
            let cont = continues(segment);
            let body = if cont {
                &segment[..segment.len() - 1]
            } else {
                segment
            };
            logical.push(body, segment_line + 1);
            if !cont || next >= lines.len() {
                break;
            }
            segment = lines[next].trim_start_matches(is_blank);
            segment_line = next;
            next += 1;
        }
        if logical.chars.is_empty() {
            continue;
        }
        let located = Located {
            path,
            lines: &lines,
        };
        out.push(logical.parse(&located, first_line + 1)?);
    }
    Ok(out)
}

/// What an error needs to point at the offending physical line.
struct Located<'a> {
    path: &'a Path,
    lines: &'a [&'a str],
}

impl Located<'_> {
    fn error(&self, line: usize, problem: &str) -> PropertyError {
        let text = self.lines.get(line - 1).copied().unwrap_or_default();
        PropertyError::Syntax {
            path: self.path.to_path_buf(),
            line,
            problem: problem.to_string(),
            text: text.to_string(),
        }
    }
}

/// A logical line: the characters of its physical lines with continuations
/// removed, each remembering which physical line it came from so that an
/// error inside a long continued value points at the right line.
#[derive(Default)]
struct Logical {
    chars: Vec<char>,
    line_of: Vec<usize>,
}

impl Logical {
    fn push(&mut self, body: &str, line: usize) {
        for c in body.chars() {
            self.chars.push(c);
            self.line_of.push(line);
        }
    }

    fn parse(&self, at: &Located<'_>, line: usize) -> Result<Parsed, PropertyError> {
        let chars = &self.chars;
        let mut pos = 0;

        let mut key = String::new();
        while pos < chars.len() {
            let c = chars[pos];
            if c == '=' || c == ':' || is_blank(c) {
                break;
            }
            if c == '\\' {
                pos = self.unescape(pos, &mut key, at)?;
            } else {
                key.push(c);
                pos += 1;
            }
        }
        if key.is_empty() {
            return Err(at.error(line, "no property name before the separator"));
        }

        // The separator is blanks, or one `=`/`:` with optional blanks around
        // it; so `a = = b` has the value `= b`, as in Java.
        while pos < chars.len() && is_blank(chars[pos]) {
            pos += 1;
        }
        if pos < chars.len() && (chars[pos] == '=' || chars[pos] == ':') {
            pos += 1;
            while pos < chars.len() && is_blank(chars[pos]) {
                pos += 1;
            }
        }

        let mut value = String::new();
        // Byte length of the value up to its last character that is not an
        // unescaped blank; `\ ` stays the way to end a value with a space.
        let mut keep = 0;
        while pos < chars.len() {
            let c = chars[pos];
            if c == '\\' {
                pos = self.unescape(pos, &mut value, at)?;
                keep = value.len();
            } else {
                value.push(c);
                if !is_blank(c) {
                    keep = value.len();
                }
                pos += 1;
            }
        }
        value.truncate(keep);

        Ok(Parsed { key, value, line })
    }

    /// Decodes the escape starting at the backslash at `pos` into `out` and
    /// returns the position after it.
    fn unescape(
        &self,
        pos: usize,
        out: &mut String,
        at: &Located<'_>,
    ) -> Result<usize, PropertyError> {
        let chars = &self.chars;
        let Some(&c) = chars.get(pos + 1) else {
            // A backslash ending the file: Java drops it.
            return Ok(pos + 1);
        };
        let decoded = match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0c',
            'u' => return self.unicode(pos, out, at),
            other => other,
        };
        out.push(decoded);
        Ok(pos + 2)
    }

    /// `\uXXXX`, where Java's escapes are UTF-16 code units: a character
    /// outside the BMP is written as a surrogate pair of two escapes.
    fn unicode(
        &self,
        pos: usize,
        out: &mut String,
        at: &Located<'_>,
    ) -> Result<usize, PropertyError> {
        let line = self.line_of[pos];
        let high = self.hex4(pos + 2).ok_or_else(|| {
            at.error(
                line,
                "malformed \\u escape: expected exactly 4 hex digits, as in \\u00e9",
            )
        })?;
        let unpaired = || {
            at.error(
                line,
                "\\u escape is half of a UTF-16 surrogate pair without the other half",
            )
        };
        match high {
            0xD800..=0xDBFF => {
                let follows =
                    self.chars.get(pos + 6) == Some(&'\\') && self.chars.get(pos + 7) == Some(&'u');
                let low = if follows { self.hex4(pos + 8) } else { None };
                match low {
                    Some(low @ 0xDC00..=0xDFFF) => {
                        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        out.push(char::from_u32(code).ok_or_else(unpaired)?);
                        Ok(pos + 12)
                    }
                    _ => Err(unpaired()),
                }
            }
            0xDC00..=0xDFFF => Err(unpaired()),
            _ => {
                out.push(char::from_u32(high).ok_or_else(unpaired)?);
                Ok(pos + 6)
            }
        }
    }

    fn hex4(&self, from: usize) -> Option<u32> {
        let digits = self.chars.get(from..from + 4)?;
        digits
            .iter()
            .try_fold(0u32, |acc, c| Some(acc * 16 + c.to_digit(16)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> (String, String) {
        let mut parsed = parse(text, Path::new("t")).unwrap();
        assert_eq!(parsed.len(), 1, "{text:?} -> {parsed:?}");
        let p = parsed.remove(0);
        (p.key, p.value)
    }

    #[test]
    fn physical_lines_handle_every_terminator() {
        assert_eq!(physical_lines("a\nb\r\nc\rd"), ["a", "b", "c", "d"]);
        assert_eq!(physical_lines("a\n"), ["a"]);
        assert_eq!(physical_lines("\n\n"), ["", ""]);
        assert!(physical_lines("").is_empty());
    }

    #[test]
    fn separators_inside_keys_need_escapes() {
        assert_eq!(one(r"a\=b=c"), ("a=b".into(), "c".into()));
        assert_eq!(one(r"a\:b:c"), ("a:b".into(), "c".into()));
        assert_eq!(one(r"a\ b c"), ("a b".into(), "c".into()));
        assert_eq!(one("a==b"), ("a".into(), "=b".into()));
        assert_eq!(one("a = = b"), ("a".into(), "= b".into()));
    }

    #[test]
    fn escaped_trailing_space_is_kept() {
        assert_eq!(one("a=b\\  \t"), ("a".into(), "b ".into()));
        assert_eq!(one("a=b \t "), ("a".into(), "b".into()));
    }

    #[test]
    fn surrogate_pairs_combine() {
        assert_eq!(one(r"k=\uD83D\uDE00"), ("k".into(), "\u{1F600}".into()));
        assert!(parse(r"k=\uD83D", Path::new("t")).is_err());
        assert!(parse(r"k=\uDE00x", Path::new("t")).is_err());
        assert!(parse(r"k=\uD83D\u0041", Path::new("t")).is_err());
    }

    #[test]
    fn continuation_error_points_at_the_physical_line() {
        let err = parse("a=1\\\n  2\\\n  \\u12", Path::new("w")).unwrap_err();
        match err {
            PropertyError::Syntax { line, text, .. } => {
                assert_eq!(line, 3);
                assert_eq!(text, "  \\u12");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
