//! A command template as memtier_benchmark's `--command` and
//! redis-benchmark's trailing command take one: words separated by blanks
//! (double or single quotes keep blanks in a word), in which placeholders
//! stand for what each operation draws anew:
//!
//! - `__key__`: a key from the template's key pattern, `key_prefix` then
//!   its number (memtier's `memtier-1234`);
//! - `__data__`: a value of the size asked (`data_size`, or a size range);
//! - `__rand_int__`: redis-benchmark's random number, twelve digits
//!   zero-padded, below `random_range` (`-r`); with no range it stays as
//!   written, as redis-benchmark leaves it;
//! - `__expiry__`: an expiry in seconds from `expiry_range` (memtier's
//!   `--expiry-range`, which its own SET sends as `SETEX`).
//!
//! A placeholder may sit inside a word (`key:__rand_int__`). Rendering
//! writes the words of one operation into [`Args`], a buffer reused from
//! one operation to the next, so the hot path does not allocate.

/// One piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Piece {
    Lit(Box<[u8]>),
    Key,
    Data,
    RandInt,
    Expiry,
}

const PLACEHOLDERS: [(&str, Piece); 4] = [
    ("__key__", Piece::Key),
    ("__data__", Piece::Data),
    ("__rand_int__", Piece::RandInt),
    ("__expiry__", Piece::Expiry),
];

/// A parsed template: its words, each a list of pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub(super) words: Vec<Vec<Piece>>,
    /// The command word as written (`SET`, `hset`).
    pub(super) command: String,
}

impl Template {
    /// Parse `text`; an error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Template, String> {
        let words = split(text)?;
        let Some(first) = words.first() else {
            return Err("is empty: a command needs at least its name".into());
        };
        if PLACEHOLDERS.iter().any(|(p, _)| first.contains(p)) {
            return Err(format!(
                "starts with a placeholder ({first}): the first word names the command"
            ));
        }
        Ok(Template {
            command: first.clone(),
            words: words.iter().map(|w| pieces(w)).collect(),
        })
    }

    /// The command word, upper case: what its operations are named by.
    pub fn name(&self) -> String {
        self.command.to_ascii_uppercase()
    }

    /// The command word as written.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// How many keys one operation draws.
    #[cfg(test)]
    fn keys(&self) -> usize {
        self.count(&Piece::Key)
    }

    /// Whether it holds `__rand_int__`.
    #[cfg(test)]
    fn has_rand_int(&self) -> bool {
        self.count(&Piece::RandInt) > 0
    }

    #[cfg(test)]
    fn count(&self, piece: &Piece) -> usize {
        self.words.iter().flatten().filter(|p| *p == piece).count()
    }
}

/// The words of `text`, quotes removed.
fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else {
            return Ok(words);
        };
        let mut word = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err(format!("has a {c} that is not closed")),
                    Some('\\') if c == '"' => match chars.next() {
                        Some(e) => word.push(e),
                        None => return Err("ends with a backslash".into()),
                    },
                    Some(q) if q == c => break,
                    Some(other) => word.push(other),
                }
            }
            if chars.peek().is_some_and(|n| !n.is_whitespace()) {
                return Err(format!(
                    "has a quoted word followed by other characters ({word}...)"
                ));
            }
        } else {
            while let Some(n) = chars.next_if(|n| !n.is_whitespace()) {
                word.push(n);
            }
        }
        words.push(word);
    }
}

fn pieces(word: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = word;
    'outer: while !rest.is_empty() {
        for (at, _) in rest.match_indices("__") {
            let tail = &rest[at..];
            if let Some((p, piece)) = PLACEHOLDERS.iter().find(|(p, _)| tail.starts_with(p)) {
                if at > 0 {
                    out.push(Piece::Lit(rest.as_bytes()[..at].into()));
                }
                out.push(piece.clone());
                rest = &tail[p.len()..];
                continue 'outer;
            }
        }
        out.push(Piece::Lit(rest.as_bytes().into()));
        break;
    }
    if out.is_empty() {
        out.push(Piece::Lit(Box::new([])));
    }
    out
}

/// One operation's words, in one buffer reused across operations.
#[derive(Clone, Debug, Default)]
pub struct Args {
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl Args {
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    /// Append a whole word.
    pub fn push(&mut self, word: &[u8]) {
        self.buf.extend_from_slice(word);
        self.end_word();
    }

    /// The word being written, to append to; [`Args::end_word`] closes it.
    pub(super) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    pub(super) fn end_word(&mut self) {
        self.ends.push(self.buf.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Word `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.buf[start..end])
    }

    /// The words in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(|i| self.get(i).unwrap_or_default())
    }
}

impl std::fmt::Display for Args {
    /// The words as one line, for messages (values cut short).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, w) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            let shown = &w[..w.len().min(40)];
            f.write_str(&String::from_utf8_lossy(shown))?;
            if w.len() > 40 {
                write!(f, "...({} bytes)", w.len())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_quotes_and_placeholders() {
        let t = Template::parse(r#"HSET __key__ "a field" pre__data__post 'x y' key:__rand_int__"#)
            .unwrap();
        assert_eq!(t.name(), "HSET");
        assert_eq!(t.keys(), 1);
        assert!(t.has_rand_int());
        assert_eq!(t.words.len(), 6);
        assert_eq!(t.words[2], vec![Piece::Lit(b"a field"[..].into())]);
        assert_eq!(
            t.words[3],
            vec![
                Piece::Lit(b"pre"[..].into()),
                Piece::Data,
                Piece::Lit(b"post"[..].into())
            ]
        );
        assert_eq!(t.words[4], vec![Piece::Lit(b"x y"[..].into())]);
        assert_eq!(
            t.words[5],
            vec![Piece::Lit(b"key:"[..].into()), Piece::RandInt]
        );
        // Underscores that are not a placeholder stay as they are.
        let t = Template::parse("SET a__b __key__x__key__").unwrap();
        assert_eq!(t.words[1], vec![Piece::Lit(b"a__b"[..].into())]);
        assert_eq!(
            t.words[2],
            vec![Piece::Key, Piece::Lit(b"x"[..].into()), Piece::Key]
        );
        assert_eq!(t.keys(), 2);
        assert_eq!(
            Template::parse("SET \"\" v").unwrap().words[1],
            vec![Piece::Lit(Box::new([]))]
        );
    }

    #[test]
    fn what_is_wrong_is_said() {
        assert!(Template::parse("  ").unwrap_err().contains("empty"));
        assert!(Template::parse("__key__ GET")
            .unwrap_err()
            .contains("first word"));
        assert!(Template::parse("SET \"k v")
            .unwrap_err()
            .contains("not closed"));
        assert!(Template::parse("SET \"k\"v").is_err());
    }

    #[test]
    fn args_hold_words_back_to_back() {
        let mut a = Args::default();
        a.push(b"GET");
        a.buf().extend_from_slice(b"memtier-");
        a.buf().extend_from_slice(b"7");
        a.end_word();
        a.push(b"");
        assert_eq!(a.len(), 3);
        let words: Vec<&[u8]> = a.iter().collect();
        assert_eq!(words, [&b"GET"[..], b"memtier-7", b""]);
        assert_eq!(a.to_string(), "GET memtier-7 ");
        a.clear();
        assert!(a.is_empty());
    }
}
