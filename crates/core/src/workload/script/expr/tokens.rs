//! The expression lexer: pgbench's tokens, keywords and literals, each
//! with its byte offset for error messages.

use super::ast::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Int(i64),
    /// 9223372036854775808, which only a minus makes an integer.
    MaxPlusOne,
    Double(f64),
    Var(String),
    Ident(String),
    Op(&'static str),
    Kw(&'static str),
    End,
}

pub(super) const KEYWORDS: &[&str] = &[
    "and", "or", "not", "is", "isnull", "notnull", "case", "when", "then", "else", "end", "null",
    "true", "false",
];

pub(super) fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let alnum = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let at = i;
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let int_end = j;
            if j < b.len() && b[j] == b'.' {
                j += 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
            }
            if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                let mut k = j + 1;
                if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                    k += 1;
                }
                if k < b.len() && b[k].is_ascii_digit() {
                    while k < b.len() && b[k].is_ascii_digit() {
                        k += 1;
                    }
                    j = k;
                }
            }
            let word = &text[i..j];
            if j == int_end {
                match word.parse::<i64>() {
                    Ok(n) => out.push((Tok::Int(n), at)),
                    Err(_) if word == "9223372036854775808" => out.push((Tok::MaxPlusOne, at)),
                    Err(_) => {
                        return Err(ParseError {
                            message: "bigint constant overflow".into(),
                            at,
                        })
                    }
                }
            } else {
                let d: f64 = word.parse().map_err(|_| ParseError {
                    message: "double constant overflow".into(),
                    at,
                })?;
                // strtod's ERANGE: out of range, or below the normal range.
                let mantissa_nonzero = word
                    .split(['e', 'E'])
                    .next()
                    .is_some_and(|m| m.bytes().any(|c| (b'1'..=b'9').contains(&c)));
                if d.is_infinite() || (mantissa_nonzero && (d == 0.0 || !d.is_normal())) {
                    return Err(ParseError {
                        message: "double constant overflow".into(),
                        at,
                    });
                }
                out.push((Tok::Double(d), at));
            }
            i = j;
            continue;
        }
        if c == b':' {
            let mut j = i + 1;
            while j < b.len() && alnum(b[j]) {
                j += 1;
            }
            if j == i + 1 {
                return Err(ParseError {
                    message: "unexpected character (:)".into(),
                    at,
                });
            }
            out.push((Tok::Var(text[i + 1..j].to_string()), at));
            i = j;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let mut j = i;
            while j < b.len() && alnum(b[j]) {
                j += 1;
            }
            let word = &text[i..j];
            let lower = word.to_ascii_lowercase();
            match KEYWORDS.iter().find(|k| **k == lower) {
                Some(k) => out.push((Tok::Kw(k), at)),
                None => out.push((Tok::Ident(lower), at)),
            }
            i = j;
            continue;
        }
        let two = text.get(i..i + 2).unwrap_or("");
        let op: Option<&'static str> = match two {
            "<>" | "!=" => Some("<>"),
            "<=" => Some("<="),
            ">=" => Some(">="),
            "<<" => Some("<<"),
            ">>" => Some(">>"),
            _ => None,
        };
        if let Some(op) = op {
            out.push((Tok::Op(op), at));
            i += 2;
            continue;
        }
        let one: &'static str = match c {
            b'+' => "+",
            b'-' => "-",
            b'*' => "*",
            b'/' => "/",
            b'%' => "%",
            b'(' => "(",
            b')' => ")",
            b',' => ",",
            b'=' => "=",
            b'<' => "<",
            b'>' => ">",
            b'|' => "|",
            b'&' => "&",
            b'#' => "#",
            b'~' => "~",
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(ParseError {
                    message: format!("unexpected character ({ch})"),
                    at,
                });
            }
        };
        out.push((Tok::Op(one), at));
        i += 1;
    }
    out.push((Tok::End, text.len()));
    Ok(out)
}
