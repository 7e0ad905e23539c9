//! A pgbench script file cut into its commands, as pgbench cuts it: an SQL
//! command runs to an unquoted `;` outside parentheses (which it keeps),
//! to the backslash of a meta-command, or to the end of the file; a
//! meta-command runs from its backslash to the end of its line (a
//! backslash before the newline continues it). Quotes (`'…'`, `E'…'`,
//! `"…"`, `$tag$…$tag$`) and comments (`-- …`, nested `/* … */`) hide `;`
//! and `\`; `\;` and `\:` put a literal `;` or `:` in the SQL. Blank lines
//! and comments before a command's text are dropped.

/// One command of a script file, with where it starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// SQL text as it is sent (before `:var` substitution).
    Sql { text: String, line: usize },
    /// A meta-command: its name (lower case), its words, and its source
    /// text from the backslash on (for messages and `-r`).
    Meta {
        name: String,
        args: Vec<String>,
        source: String,
        line: usize,
    },
}

/// Cut `text` into pieces. Never fails: what pgbench would send as is
/// (an open quote at the end of the file) goes to the server as is.
pub fn pieces(text: &str) -> Vec<Piece> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut sql = String::new();
    let mut sql_line = 1;
    let mut line = 1;
    let mut depth = 0i32;
    let mut i = 0;
    let push_sql = |sql: &mut String, line: usize, out: &mut Vec<Piece>| {
        if !sql.trim().is_empty() {
            out.push(Piece::Sql {
                text: std::mem::take(sql),
                line,
            });
        }
        sql.clear();
    };
    while i < b.len() {
        let c = b[i];
        let blank = sql.trim().is_empty();
        // Before a command's text: blanks and `--` comments are dropped.
        if blank {
            if c == b'\n' {
                line += 1;
                i += 1;
                sql.clear();
                continue;
            }
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if b[i..].starts_with(b"--") {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            sql_line = line;
        }
        match c {
            b'\\' if matches!(b.get(i + 1), Some(b';') | Some(b':')) => {
                sql.push(b[i + 1] as char);
                i += 2;
            }
            b'\\' => {
                push_sql(&mut sql, sql_line, &mut out);
                let (meta, end, lines) = meta_command(text, i, line);
                out.push(meta);
                line += lines;
                i = end;
                depth = 0;
            }
            b';' if depth <= 0 => {
                sql.push(';');
                i += 1;
                push_sql(&mut sql, sql_line, &mut out);
                depth = 0;
            }
            b'(' => {
                depth += 1;
                sql.push('(');
                i += 1;
            }
            b')' => {
                depth -= 1;
                sql.push(')');
                i += 1;
            }
            b'\'' | b'"' | b'$' | b'-' | b'/' | b'E' | b'e' => {
                let end = quoted_end(b, i);
                line += b[i..end].iter().filter(|&&x| x == b'\n').count();
                sql.push_str(&text[i..end]);
                i = end;
            }
            _ => {
                if c == b'\n' {
                    line += 1;
                }
                let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                sql.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    push_sql(&mut sql, sql_line, &mut out);
    out
}

/// Where the quoted string or comment that starts at `i` ends (one past
/// it); `i + 1` when `b[i]` starts none.
fn quoted_end(b: &[u8], i: usize) -> usize {
    let rest = &b[i..];
    let after = |n: usize| (i + n).min(b.len());
    match rest[0] {
        b'\'' => string_end(b, i + 1, false),
        b'E' | b'e' if rest.get(1) == Some(&b'\'') && !word_before(b, i) => {
            string_end(b, i + 2, true)
        }
        b'"' => match b[i + 1..].iter().position(|&x| x == b'"') {
            Some(p) => i + 1 + p + 1,
            None => b.len(),
        },
        b'-' if rest.get(1) == Some(&b'-') => match b[i..].iter().position(|&x| x == b'\n') {
            Some(p) => i + p,
            None => b.len(),
        },
        b'/' if rest.get(1) == Some(&b'*') => {
            let mut nest = 1;
            let mut j = i + 2;
            while j < b.len() && nest > 0 {
                if b[j..].starts_with(b"/*") {
                    nest += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    nest -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            j
        }
        b'$' if !word_before(b, i) => match dollar_tag(&b[i..]) {
            Some(tag) => {
                let body = i + tag.len();
                match find(&b[body..], tag) {
                    Some(p) => body + p + tag.len(),
                    None => b.len(),
                }
            }
            None => after(1),
        },
        _ => after(1),
    }
}

/// One past the closing quote of a string whose body starts at `j`
/// (`''` is a quote within it; with `escapes`, so is `\'`).
fn string_end(b: &[u8], mut j: usize, escapes: bool) -> usize {
    while j < b.len() {
        match b[j] {
            b'\\' if escapes => j += 2,
            b'\'' if b.get(j + 1) == Some(&b'\'') => j += 2,
            b'\'' => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// Whether `b[i]` continues a word (so `x$1` or `sE'` is no quote).
fn word_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// `$tag$` (or `$$`) at the start of `b`, if it is one.
fn dollar_tag(b: &[u8]) -> Option<&[u8]> {
    let end = b[1..].iter().position(|&x| x == b'$')? + 1;
    let tag = &b[1..end];
    let ok = tag
        .iter()
        .enumerate()
        .all(|(k, &x)| x == b'_' || x.is_ascii_alphabetic() || (k > 0 && x.is_ascii_digit()));
    ok.then(|| &b[..=end])
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The meta-command whose backslash is at `start` (on line `line`), the
/// offset past its end, and the newlines it took (continuations and the
/// one that ends it).
fn meta_command(text: &str, start: usize, line: usize) -> (Piece, usize, usize) {
    let b = text.as_bytes();
    let mut j = start + 1;
    let mut lines = 0;
    let mut body = String::new();
    while j < b.len() {
        if b[j] == b'\\' && b.get(j + 1) == Some(&b'\n') {
            body.push(' ');
            lines += 1;
            j += 2;
            continue;
        }
        if b[j] == b'\\' && b[j + 1..].starts_with(b"\r\n") {
            body.push(' ');
            lines += 1;
            j += 3;
            continue;
        }
        if b[j] == b'\n' {
            lines += 1;
            j += 1;
            break;
        }
        let ch = text[j..].chars().next().unwrap_or('\u{fffd}');
        body.push(ch);
        j += ch.len_utf8();
    }
    let source = text[start..j].trim_end_matches(['\n', '\r']).to_string();
    let mut words = body.split_ascii_whitespace().map(str::to_string);
    let name = words.next().unwrap_or_default().to_ascii_lowercase();
    let piece = Piece::Meta {
        name,
        args: words.collect(),
        source,
        line,
    };
    (piece, j, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str, line: usize) -> Piece {
        Piece::Sql {
            text: text.into(),
            line,
        }
    }

    fn names(p: &[Piece]) -> Vec<String> {
        p.iter()
            .map(|p| match p {
                Piece::Sql { text, .. } => text.clone(),
                Piece::Meta { name, args, .. } => format!("\\{name} {}", args.join(" ")),
            })
            .collect()
    }

    #[test]
    fn commands_end_at_semicolons_outside_quotes_and_parentheses() {
        let p = pieces("SELECT 1\n   ,\n   2;;\nSELECT (3+\n4);\n");
        assert_eq!(
            p,
            [
                sql("SELECT 1\n   ,\n   2;", 1),
                sql(";", 3),
                sql("SELECT (3+\n4);", 4)
            ]
        );
        let q = pieces("SELECT 'a;b', \"c;d\", $$;$$, $x$;\\$x$, E'\\';x' /* ; /* ; */ */;\n");
        assert_eq!(q.len(), 1, "{q:?}");
        assert!(matches!(&q[0], Piece::Sql { text, .. } if text.ends_with("*/;")));
    }

    #[test]
    fn meta_commands_run_to_the_end_of_their_line() {
        let p = pieces(
            "-- a comment\n\n\\set aid random(1, 100000 * :scale)\n\\SET x 1 + \\\n  2\nBEGIN;\n  \\sleep 10 ms\n",
        );
        assert_eq!(
            names(&p),
            [
                "\\set aid random(1, 100000 * :scale)",
                "\\set x 1 + 2",
                "BEGIN;",
                "\\sleep 10 ms"
            ]
        );
        match &p[1] {
            Piece::Meta { source, line, .. } => {
                assert_eq!((source.as_str(), *line), ("\\SET x 1 + \\\n  2", 4))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&p[2], Piece::Sql { line: 6, .. }));
        assert!(matches!(&p[3], Piece::Meta { line: 7, .. }));
    }

    #[test]
    fn gset_ends_the_sql_before_it_and_escapes_stay_literal() {
        let p = pieces("SELECT 4 AS four \\gset p_\nSELECT 2 \\; SELECT 3::int AS \\:x;\n");
        assert_eq!(
            names(&p),
            [
                "SELECT 4 AS four ",
                "\\gset p_",
                "SELECT 2 ; SELECT 3::int AS :x;"
            ]
        );
        // A last command without `;` is kept; blank and comment-only
        // lines make nothing.
        assert_eq!(names(&pieces("\n-- x\nSELECT 5")), ["SELECT 5"]);
        assert!(pieces("  \n-- only a comment\n").is_empty());
    }
}
