//! The shell assignment format of PGIO's `pgio.conf`, which PGIO reads by
//! sourcing it (`. ./pgio.conf`): turning a file's text into
//! `(key, value, line)` triples, and telling such a file from a Java
//! properties file by its content. Knows nothing about what keys mean.
//!
//! What is read is what a POSIX shell would assign, without running
//! anything: several assignments on a line (`A=1 B=2`, or separated by
//! `;`), `export` before them, single quotes (literal), double quotes
//! (`\` escapes `$`, `` ` ``, `"`, `\` and a newline), backslash escapes and
//! line continuations outside quotes, `#` comments starting a word, and
//! `$NAME` / `${NAME}` of a variable the file assigned earlier, as the shell
//! expands it. Anything that would run a command or read the environment
//! (`$(...)`, backticks, `$HOME`, `|`, a word that is not an assignment) is
//! refused, naming the file, the line and the assignment.
//!
//! Written here rather than taken from a shell-splitting crate: those
//! split words but keep neither which part of a word was quoted (so
//! `'A=1'` would pass for an assignment and `'$x'` for an expansion) nor
//! the line each word came from, which every error here names.

use std::collections::HashMap;
use std::path::Path;

use super::error::PropertyError;
use super::parse::Parsed;
use crate::redact;

/// A file read as shell assignments.
#[derive(Debug)]
pub(super) struct ShellFile {
    pub entries: Vec<Parsed>,
    /// Whether the file uses syntax a Java properties file would read
    /// differently (quotes, `export`, several assignments on a line, `;`,
    /// an expansion): what tells a `pgio.conf` by its content.
    pub shell_syntax: bool,
}

/// Whether `text` is unmistakably shell even where it cannot be read: a
/// line starting with `export NAME`, or holding two `NAME=` words. Such a
/// file's errors are the shell format's, not Java's.
pub(super) fn unmistakably_shell(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        if line.starts_with('#') {
            return false;
        }
        if let Some(rest) = line.strip_prefix("export") {
            if rest.starts_with([' ', '\t']) && starts_with_name(rest.trim_start()) {
                return true;
            }
        }
        // A second `NAME=` after a blank, the first word being one too.
        let mut words = line.split([' ', '\t']).filter(|w| !w.is_empty());
        let first = words.next().is_some_and(is_assignment_word);
        first && words.any(is_assignment_word)
    })
}

fn starts_with_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

fn is_assignment_word(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| is_name(name))
}

/// A shell variable name: letters, digits and `_`, not starting with a
/// digit.
pub(super) fn is_name(s: &str) -> bool {
    starts_with_name(s) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads a whole file. Entries come back in file order; duplicates are kept
/// so the caller decides that the later one wins.
pub(super) fn parse(text: &str, path: &Path) -> Result<ShellFile, PropertyError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        path,
        lines: text.lines().collect(),
        vars: HashMap::new(),
        shell_syntax: false,
    };
    let mut entries = Vec::new();
    while let Some(command) = reader.command()? {
        entries.extend(command);
    }
    Ok(ShellFile {
        entries,
        shell_syntax: reader.shell_syntax,
    })
}

/// One word as read: its value, and, when it starts with an unquoted
/// `NAME=`, that name.
struct Word {
    /// The value after `NAME=`, or the whole word.
    value: String,
    name: Option<String>,
    line: usize,
    /// The word as written, for messages.
    raw: String,
}

struct Reader<'a> {
    chars: Vec<char>,
    pos: usize,
    /// The line `pos` is on (1-based).
    line: usize,
    path: &'a Path,
    lines: Vec<&'a str>,
    /// Variables assigned so far, for `$NAME`.
    vars: HashMap<String, String>,
    shell_syntax: bool,
}

/// Characters that end a word outside quotes.
fn ends_word(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | ';')
}

/// Shell operators: a `pgio.conf` with one runs commands, which sojourn
/// does not do.
fn is_operator(c: char) -> bool {
    matches!(c, '|' | '&' | '<' | '>' | '(' | ')')
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// An error at `line` about `what` (an assignment as written, or a
    /// word), its value hidden when it may hold a secret.
    fn error(&self, line: usize, problem: String, what: &str) -> PropertyError {
        let text = match what.split_once('=') {
            Some((key, value)) if is_name(key) => {
                format!("{key}={}", redact::property_value(key, value))
            }
            _ if what.is_empty() => self
                .lines
                .get(line - 1)
                .map_or(String::new(), |l| redact::text(l.trim())),
            _ => redact::text(what),
        };
        PropertyError::Syntax {
            path: self.path.to_path_buf(),
            line,
            problem,
            text,
        }
    }

    /// Skips blanks, comments and line continuations up to the next word,
    /// the end of a command (a newline or `;`, returned as `true`) or the
    /// end of the text.
    fn skip_blanks(&mut self) -> bool {
        let mut ended = false;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => {
                    self.bump();
                }
                '\\' if self.chars.get(self.pos + 1) == Some(&'\n') => {
                    self.bump();
                    self.bump();
                }
                '\n' => {
                    self.bump();
                    ended = true;
                }
                ';' => {
                    self.bump();
                    self.shell_syntax = true;
                    ended = true;
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                _ => break,
            }
            if ended {
                break;
            }
        }
        ended
    }

    /// The assignments of the next command (`None` at the end of the
    /// text): every word `NAME=value`, or `export` and then words that are
    /// `NAME=value` or `NAME`.
    fn command(&mut self) -> Result<Option<Vec<Parsed>>, PropertyError> {
        // Skip empty commands.
        loop {
            let ended = self.skip_blanks();
            if self.peek().is_none() {
                return Ok(None);
            }
            if !ended {
                break;
            }
        }
        let mut out = Vec::new();
        let mut exported = false;
        let mut first = true;
        loop {
            let word = self.word()?;
            if first && word.name.is_none() && word.raw == "export" {
                exported = true;
                self.shell_syntax = true;
            } else {
                match word.name {
                    Some(name) => {
                        // Assigned at once: a later word on the line sees it.
                        self.vars.insert(name.clone(), word.value.clone());
                        out.push(Parsed {
                            key: name,
                            value: word.value,
                            line: word.line,
                        });
                    }
                    None if exported && is_name(&word.raw) => {}
                    None => return Err(self.not_an_assignment(&word)),
                }
            }
            first = false;
            if self.skip_blanks() || self.peek().is_none() {
                break;
            }
        }
        if out.len() > 1 {
            self.shell_syntax = true;
        }
        Ok(Some(out))
    }

    fn not_an_assignment(&self, word: &Word) -> PropertyError {
        let hint = match word.raw.split_once('=') {
            Some((key, _)) if !key.is_empty() && !is_name(key) => format!(
                ": '{key}' is not a shell variable name (letters, digits and _); sojourn's \
                 own properties such as {key} go in a Java properties file (-P) or -p"
            ),
            _ => String::new(),
        };
        self.error(
            word.line,
            format!(
                "'{}' is not an assignment; a shell-format workload file (PGIO's pgio.conf) \
                 holds NAME=value assignments only, as PGIO sources it{hint}",
                redact::text(&word.raw)
            ),
            &word.raw,
        )
    }

    /// One word, from the current position (a non-blank character).
    fn word(&mut self) -> Result<Word, PropertyError> {
        let line = self.line;
        let start = self.pos;
        let mut value = String::new();
        // The name before an unquoted `=`, while every character so far
        // was unquoted and could be part of one.
        let mut plain = true;
        let mut name: Option<String> = None;
        while let Some(c) = self.peek() {
            if ends_word(c) {
                break;
            }
            let key = name.clone();
            let key = key.as_deref();
            match c {
                '=' if plain && name.is_none() && is_name(&value) => {
                    self.bump();
                    name = Some(std::mem::take(&mut value));
                    continue;
                }
                '\'' => {
                    self.bump();
                    self.shell_syntax = true;
                    loop {
                        match self.bump() {
                            Some('\'') => break,
                            Some(c) => value.push(c),
                            None => return Err(self.unclosed('\'', line, start, key)),
                        }
                    }
                }
                '"' => {
                    self.bump();
                    self.shell_syntax = true;
                    loop {
                        match self.bump() {
                            Some('"') => break,
                            Some('\\') => match self.peek() {
                                Some('\n') => {
                                    self.bump();
                                }
                                Some(e @ ('$' | '`' | '"' | '\\')) => {
                                    self.bump();
                                    value.push(e);
                                }
                                _ => value.push('\\'),
                            },
                            Some('$') => self.expand(&mut value, line, start, key)?,
                            Some('`') => return Err(self.substitution(line, start, key)),
                            Some(c) => value.push(c),
                            None => return Err(self.unclosed('"', line, start, key)),
                        }
                    }
                }
                '\\' => {
                    self.bump();
                    match self.bump() {
                        // A continuation inside a word joins its lines.
                        Some('\n') => {}
                        Some(c) => value.push(c),
                        None => {}
                    }
                }
                '$' => {
                    self.bump();
                    self.expand(&mut value, line, start, key)?;
                }
                '`' => return Err(self.substitution(line, start, key)),
                c if is_operator(c) => {
                    return Err(self.error(
                        line,
                        format!(
                            "'{c}' would run a command; a shell-format workload file (PGIO's \
                             pgio.conf) holds NAME=value assignments only (quote the value if \
                             '{c}' belongs to it)"
                        ),
                        &self.raw(start),
                    ));
                }
                c => {
                    self.bump();
                    value.push(c);
                    continue;
                }
            }
            plain = false;
        }
        Ok(Word {
            value,
            name,
            line,
            raw: self.raw(start),
        })
    }

    /// The text from `start` to the current position.
    fn raw(&self, start: usize) -> String {
        self.chars[start..self.pos].iter().collect()
    }

    /// `$NAME` or `${NAME}`, the `$` just read: the value the file gave
    /// NAME earlier. A lone `$` is itself, as in the shell.
    fn expand(
        &mut self,
        value: &mut String,
        line: usize,
        start: usize,
        key: Option<&str>,
    ) -> Result<(), PropertyError> {
        let braced = self.peek() == Some('{');
        if self.peek() == Some('(') {
            return Err(self.substitution(line, start, key));
        }
        if braced {
            self.bump();
        }
        let mut var = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                var.push(c);
                self.bump();
            } else {
                break;
            }
        }
        if braced {
            if self.peek() != Some('}') || !is_name(&var) {
                return Err(self.error(
                    line,
                    format!(
                        "{}only ${{NAME}} and $NAME of a variable assigned earlier in the file \
                         are expanded (sojourn reads the file without running it)",
                        key.map_or(String::new(), |k| format!("{k}: "))
                    ),
                    &self.raw(start),
                ));
            }
            self.bump();
        } else if var.is_empty() {
            value.push('$');
            return Ok(());
        }
        self.shell_syntax = true;
        match self.vars.get(&var) {
            Some(v) => {
                value.push_str(v);
                Ok(())
            }
            None => Err(self.error(
                line,
                format!(
                    "{}${var} is not assigned earlier in the file; sojourn reads the file \
                     without running it, so it expands only the file's own variables, not the \
                     environment's: write the value itself",
                    key.map_or(String::new(), |k| format!("{k}: "))
                ),
                &self.raw(start),
            )),
        }
    }

    fn substitution(&self, line: usize, start: usize, key: Option<&str>) -> PropertyError {
        self.error(
            line,
            format!(
                "{}command substitution ($(...) or `...`) would run a command; sojourn reads \
                 the file without running it: write the value itself",
                key.map_or(String::new(), |k| format!("{k}: "))
            ),
            &self.raw(start),
        )
    }

    fn unclosed(&self, quote: char, line: usize, start: usize, key: Option<&str>) -> PropertyError {
        self.error(
            line,
            format!(
                "{}the {quote} quote opened on line {line} is never closed",
                key.map_or(String::new(), |k| format!("{k}: "))
            ),
            &self.raw(start),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<(String, String, usize)> {
        parse(text, Path::new("pgio.conf"))
            .unwrap()
            .entries
            .into_iter()
            .map(|p| (p.key, p.value, p.line))
            .collect()
    }

    fn err(text: &str) -> String {
        parse(text, Path::new("pgio.conf")).unwrap_err().to_string()
    }

    fn kv(k: &str, v: &str, line: usize) -> (String, String, usize) {
        (k.to_string(), v.to_string(), line)
    }

    #[test]
    fn several_assignments_quotes_and_comments() {
        assert_eq!(
            read("A=1 B='x y' C=\"q\\\"z\" # trailing\n# whole line\nexport D=4; E=5\n"),
            [
                kv("A", "1", 1),
                kv("B", "x y", 1),
                kv("C", "q\"z", 1),
                kv("D", "4", 3),
                kv("E", "5", 3)
            ]
        );
        // Quotes may join pieces, and continue over lines.
        assert_eq!(
            read("A=a'b c'\"d\"e\nB='1\n2' C=3"),
            [kv("A", "ab cde", 1), kv("B", "1\n2", 2), kv("C", "3", 3)]
        );
        // `export NAME` alone marks a variable; an empty value is one.
        assert_eq!(read("A=\nexport A\n"), [kv("A", "", 1)]);
        assert_eq!(read("A=1 \\\n  B=2"), [kv("A", "1", 1), kv("B", "2", 2)]);
    }

    #[test]
    fn expansions_of_the_files_own_variables() {
        assert_eq!(
            read("H=db\nU=\"postgres://$H:5433/${H}x\" L='$H' M=a$"),
            [
                kv("H", "db", 1),
                kv("U", "postgres://db:5433/dbx", 2),
                kv("L", "$H", 2),
                kv("M", "a$", 2)
            ]
        );
        let e = err("A=$HOME/x");
        assert!(
            e.contains("pgio.conf:1") && e.contains("A: $HOME is not assigned"),
            "{e}"
        );
        let e = err("A=1\nB=$(cat x)");
        assert!(
            e.contains("pgio.conf:2") && e.contains("B: command substitution"),
            "{e}"
        );
        assert!(err("A=`x`").contains("command substitution"));
        assert!(err("A=${B:-1}").contains("only ${NAME}"));
    }

    #[test]
    fn errors_name_the_line_and_assignment_and_hide_secrets() {
        let e = err("A=1\nCONNECT_STRING='postgres://u:hunter2@h/db");
        assert!(
            e.contains("pgio.conf:2") && e.contains("CONNECT_STRING: the ' quote"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
        let e = err("A=1 echo hi");
        assert!(e.contains("'echo' is not an assignment"), "{e}");
        let e = err("liops.batch=10");
        assert!(
            e.contains("'liops.batch' is not a shell variable name"),
            "{e}"
        );
        let e = err("A=1 | B=2");
        assert!(e.contains("'|' would run a command"), "{e}");
        assert!(err("'A'=1").contains("is not an assignment"));
    }

    #[test]
    fn shell_syntax_is_told_apart() {
        let syntax = |t: &str| parse(t, Path::new("x")).unwrap().shell_syntax;
        assert!(!syntax("recordcount=10\n# comment\nworkload=core\n"));
        assert!(syntax("A=1 B=2"));
        assert!(syntax("export A=1"));
        assert!(syntax("A='1'"));
        assert!(syntax("A=1; B=2"));
        assert!(unmistakably_shell("  export UPDATE_PCT=0"));
        assert!(unmistakably_shell("UPDATE_PCT=0 RUN_TIME=1000 X='a"));
        assert!(!unmistakably_shell(
            "# export A=1 B=2\nexportfile=x\nlabel=a b"
        ));
        assert!(!unmistakably_shell("label=a b"));
    }
}
