//! A script file's pieces ([`lex`](super::lex)) made into the commands a
//! client runs: SQL with its `:var` uses found (as `$n` parameters, or as
//! places to write values into, by protocol), expressions parsed,
//! `\sleep` checked, `\if` blocks matched, `\gset`/`\aset` attached to
//! their SQL. Every error names the file and line (and the column, for an
//! expression), and what would be accepted; `\shell` and `\setshell` are
//! refused with the reason.

use super::expr::{self, Expr};
use super::lex::{self, Piece};

/// How SQL goes to the server (`-M`, `script.protocol`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Values written into the text, one simple query.
    Simple,
    /// `$n` parameters, an unnamed statement each time.
    Extended,
    /// `$n` parameters, each statement prepared once per connection.
    Prepared,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }
}

/// Where an SQL command's text and values go.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    /// A variable's value, by slot.
    Var(usize),
}

/// Which results a command keeps as variables.
#[derive(Clone, Debug, PartialEq)]
pub enum Keep {
    /// `\gset [prefix]`: the one row of the last result.
    One(String),
    /// `\aset [prefix]`: the last row of every result.
    All(String),
    /// Every row of each result, in order, into no variable (TPC-C's
    /// lists of items, stock and customers).
    Rows,
}

impl Keep {
    /// Whether every row is kept, not only the last.
    pub fn every_row(&self) -> bool {
        matches!(self, Keep::Rows)
    }
}

/// One command of a script.
#[derive(Clone, Debug)]
pub enum Command {
    Sql(Sql),
    Set {
        slot: usize,
        expr: Expr,
    },
    /// `\sleep`: a count of microseconds, or a variable's value times
    /// `scale` microseconds.
    Sleep {
        amount: Amount,
        unit_us: i64,
    },
    /// `\if`: when false, enter the branch at `next`.
    If {
        expr: Expr,
        next: usize,
    },
    /// `\elif`: entered from a false branch, test; reached after a taken
    /// branch, go past `end`.
    Elif {
        expr: Expr,
        next: usize,
        end: usize,
    },
    Else {
        end: usize,
    },
    EndIf,
    StartPipeline,
    EndPipeline,
}

/// How long a `\sleep` is.
#[derive(Clone, Debug, PartialEq)]
pub enum Amount {
    Count(i64),
    Var(usize),
}

/// An SQL command: its text in parts (text and variables, in order), the
/// text with `$n` in the variables' place (for the extended protocols)
/// and with `?` there (for databases whose parameters are positional),
/// and what it keeps.
#[derive(Clone, Debug)]
pub struct Sql {
    pub parts: Vec<Part>,
    pub numbered: String,
    pub positional: String,
    /// The variables of `$1..$n`, in order.
    pub params: Vec<usize>,
    pub keep: Option<Keep>,
    /// The first line of its source, for messages and `-r`.
    pub first_line: String,
    pub line: usize,
}

/// Why a script cannot run: `file:line[: col N]: what`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ScriptError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Variable names by slot, each taken once: what [`compile`]'s `slot`
/// asks of.
#[derive(Clone, Debug, Default)]
pub struct Names(pub Vec<String>);

impl Names {
    /// The slot of `name`, made if new.
    pub fn slot(&mut self, name: &str) -> usize {
        match self.0.iter().position(|m| m == name) {
            Some(i) => i,
            None => {
                self.0.push(name.to_string());
                self.0.len() - 1
            }
        }
    }
}

/// A script's commands, compiled; `slot` gives a variable's slot by name.
pub fn compile(
    file: &str,
    text: &str,
    slot: &mut dyn FnMut(&str) -> usize,
) -> Result<Vec<(Command, usize)>, ScriptError> {
    let mut c = Compiler {
        file,
        out: Vec::new(),
        open: Vec::new(),
        pipeline: None,
    };
    for piece in lex::pieces(text) {
        match piece {
            Piece::Sql { text, line } => {
                c.out.push((Command::Sql(sql(&text, line, slot)), line));
            }
            Piece::Meta {
                name,
                args,
                source,
                line,
            } => {
                let meta = Meta {
                    name: &name,
                    args: &args,
                    source: &source,
                    line,
                };
                if let Some(command) = c.meta(&meta, slot)? {
                    c.out.push((command, line));
                }
            }
        }
    }
    c.finish()
}

/// One meta command (`\set`, `\if`, ...) as the lexer gave it.
struct Meta<'a> {
    name: &'a str,
    args: &'a [String],
    source: &'a str,
    line: usize,
}

impl Meta<'_> {
    /// The expression after the command's first `skip + 1` words, as its
    /// source wrote it.
    fn rest(&self, skip: usize) -> String {
        let body = self.source.trim_start_matches('\\');
        let mut s = body;
        for _ in 0..=skip {
            s = s.trim_start();
            s = &s[s.find(char::is_whitespace).unwrap_or(s.len())..];
        }
        s.trim_start().replace("\\\n", " ").replace("\\\r\n", " ")
    }
}

/// A script being compiled: the commands so far and the blocks still open.
struct Compiler<'f> {
    file: &'f str,
    out: Vec<(Command, usize)>,
    /// Open `\if` blocks: the index of their last branch command, and
    /// whether an `\else` was seen; every branch command of the block.
    open: Vec<(usize, bool, Vec<usize>)>,
    /// The line of the `\startpipeline` of the pipeline open, if one is.
    pipeline: Option<usize>,
}

impl Compiler<'_> {
    fn err(&self, line: usize, message: String) -> ScriptError {
        ScriptError {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    /// The command a meta command compiles to; `None` for one that only
    /// changes the command before it (`\gset`, `\aset`).
    fn meta(
        &mut self,
        m: &Meta<'_>,
        slot: &mut dyn FnMut(&str) -> usize,
    ) -> Result<Option<Command>, ScriptError> {
        let (name, args, source, line) = (m.name, m.args, m.source, m.line);
        let command = match name {
            "set" => self.set(m, slot)?,
            "sleep" => sleep(args, slot)
                .map_err(|e| self.err(line, format!("{e} in command \"sleep\": {source}")))?,
            "if" | "elif" => self.branch(m, slot)?,
            "else" | "endif" if !args.is_empty() => {
                return Err(self.err(line, format!("unexpected argument in command \"{name}\"")));
            }
            "else" => self.else_branch(line)?,
            "endif" => self.endif(line)?,
            "gset" | "aset" => {
                self.keep(m)?;
                return Ok(None);
            }
            "startpipeline" | "endpipeline" if !args.is_empty() => {
                return Err(self.err(line, format!("unexpected argument in command \"{name}\"")));
            }
            "startpipeline" => {
                if let Some(at) = self.pipeline {
                    return Err(
                        self.err(line, format!("already in pipeline mode (since line {at})"))
                    );
                }
                self.pipeline = Some(line);
                Command::StartPipeline
            }
            "endpipeline" => {
                if self.pipeline.take().is_none() {
                    return Err(self.err(
                        line,
                        "\\endpipeline without matching \\startpipeline".into(),
                    ));
                }
                Command::EndPipeline
            }
            "shell" | "setshell" => {
                return Err(self.err(
                    line,
                    format!(
                        "\\{name} runs a shell command in the middle of a transaction, \
                         which sojourn does not do: its time would be the client's, not \
                         the database's; compute the value with \\set, or give it with \
                         -D NAME=VALUE"
                    ),
                ))
            }
            other => {
                return Err(self.err(
                    line,
                    format!(
                        "invalid command in command \"{other}\"; the commands are \\set, \
                         \\sleep, \\if, \\elif, \\else, \\endif, \\gset, \\aset, \
                         \\startpipeline and \\endpipeline"
                    ),
                ))
            }
        };
        Ok(Some(command))
    }

    /// Where an expression failed to parse, in pgbench's words.
    fn parse_error(&self, m: &Meta<'_>, e: expr::ParseError) -> ScriptError {
        self.err(
            m.line,
            format!(
                "{} in command \"{}\" (at column {}): {}",
                e.message,
                m.name,
                e.at + 1,
                m.source
            ),
        )
    }

    /// `\set VAR EXPR`.
    fn set(
        &self,
        m: &Meta<'_>,
        slot: &mut dyn FnMut(&str) -> usize,
    ) -> Result<Command, ScriptError> {
        let (source, line) = (m.source, m.line);
        let Some(var) = m.args.first() else {
            return Err(self.err(
                line,
                format!("missing argument in command \"set\": {source}"),
            ));
        };
        if !valid_name(var) {
            return Err(self.err(line, format!("invalid variable name: \"{var}\"")));
        }
        let text = m.rest(1);
        if text.trim().is_empty() {
            return Err(self.err(
                line,
                format!("missing expression in command \"set\": {source}"),
            ));
        }
        let expr = expr::parse(&text, slot).map_err(|e| self.parse_error(m, e))?;
        Ok(Command::Set {
            slot: slot(var),
            expr,
        })
    }

    /// `\if EXPR` opens a block; `\elif EXPR` adds a branch to the open one.
    fn branch(
        &mut self,
        m: &Meta<'_>,
        slot: &mut dyn FnMut(&str) -> usize,
    ) -> Result<Command, ScriptError> {
        let (name, line) = (m.name, m.line);
        let index = self.out.len();
        let text = m.rest(0);
        if text.trim().is_empty() {
            return Err(self.err(line, format!("missing expression in command \"{name}\"")));
        }
        let expr = expr::parse(&text, slot).map_err(|e| self.parse_error(m, e))?;
        if name == "if" {
            self.open.push((index, false, vec![index]));
            return Ok(Command::If { expr, next: 0 });
        }
        let Some((last, seen_else, branches)) = self.open.last_mut() else {
            return Err(self.err(line, "\\elif without matching \\if".into()));
        };
        if *seen_else {
            return Err(self.err(line, "\\elif after \\else".into()));
        }
        link(&mut self.out, *last, index);
        *last = index;
        branches.push(index);
        Ok(Command::Elif {
            expr,
            next: 0,
            end: 0,
        })
    }

    /// `\else`: the open block's last branch.
    fn else_branch(&mut self, line: usize) -> Result<Command, ScriptError> {
        let index = self.out.len();
        let Some((last, seen_else, branches)) = self.open.last_mut() else {
            return Err(self.err(line, "\\else without matching \\if".into()));
        };
        if *seen_else {
            return Err(self.err(line, "\\else after \\else".into()));
        }
        *seen_else = true;
        link(&mut self.out, *last, index);
        *last = index;
        branches.push(index);
        Ok(Command::Else { end: 0 })
    }

    /// `\endif`: closes the open block, every branch of it now knowing
    /// where the block ends.
    fn endif(&mut self, line: usize) -> Result<Command, ScriptError> {
        let index = self.out.len();
        let Some((last, _, branches)) = self.open.pop() else {
            return Err(self.err(line, "\\endif without matching \\if".into()));
        };
        link(&mut self.out, last, index);
        for b in branches {
            match &mut self.out[b].0 {
                Command::Elif { end, .. } | Command::Else { end } => *end = index,
                _ => {}
            }
        }
        Ok(Command::EndIf)
    }

    /// `\gset [PREFIX]` / `\aset [PREFIX]`: what the SQL command before it
    /// keeps of its answer.
    fn keep(&mut self, m: &Meta<'_>) -> Result<(), ScriptError> {
        let (name, args, line) = (m.name, m.args, m.line);
        if self.pipeline.is_some() {
            return Err(self.err(
                line,
                format!(
                    "\\{name} cannot be used in pipeline mode: the results are not \
                     there before \\endpipeline"
                ),
            ));
        }
        if args.len() > 1 {
            return Err(self.err(line, format!("too many arguments in command \"{name}\"")));
        }
        let prefix = args.first().cloned().unwrap_or_default();
        match self.out.last_mut() {
            Some((Command::Sql(s), _)) if s.keep.is_none() => {
                s.keep = Some(if name == "gset" {
                    Keep::One(prefix)
                } else {
                    Keep::All(prefix)
                });
                Ok(())
            }
            _ => Err(self.err(line, format!("\\{name} must follow an SQL command"))),
        }
    }

    /// The script's commands, once every block and pipeline it opened is
    /// closed.
    fn finish(self) -> Result<Vec<(Command, usize)>, ScriptError> {
        if let Some((first, _, _)) = self.open.first() {
            return Err(self.err(self.out[*first].1, "\\if without matching \\endif".into()));
        }
        if let Some(at) = self.pipeline {
            return Err(self.err(at, "\\startpipeline without matching \\endpipeline".into()));
        }
        if self.out.is_empty() {
            return Err(self.err(1, "empty command list: the script has no command".into()));
        }
        Ok(self.out)
    }
}

/// Make the branch command at `from` enter `to` when its condition fails.
fn link(out: &mut [(Command, usize)], from: usize, to: usize) {
    match &mut out[from].0 {
        Command::If { next, .. } | Command::Elif { next, .. } => *next = to,
        _ => {}
    }
}

/// A pgbench variable name: a letter, `_` or a non-ASCII byte first, then
/// digits too.
pub fn valid_name(name: &str) -> bool {
    let mut b = name.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80)
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
}

fn starts_name(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn in_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// An SQL command's text with its `:name` uses found, as pgbench finds
/// them: anywhere in the text (quotes included), a run of colons that
/// starts no name (`::int`) left alone.
fn sql(text: &str, line: usize, slot: &mut dyn FnMut(&str) -> usize) -> Sql {
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut numbered = String::with_capacity(text.len());
    let mut positional = String::with_capacity(text.len());
    let mut params = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b':' {
            if b.get(i + 1).is_some_and(|&c| starts_name(c)) {
                let mut j = i + 1;
                while j < b.len() && in_name(b[j]) {
                    j += 1;
                }
                let s = slot(&text[i + 1..j]);
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                parts.push(Part::Var(s));
                params.push(s);
                numbered.push_str(&format!("${}", params.len()));
                positional.push('?');
                i = j;
                continue;
            }
            let mut j = i;
            while j < b.len() && b[j] == b':' {
                j += 1;
            }
            literal.push_str(&text[i..j]);
            numbered.push_str(&text[i..j]);
            positional.push_str(&text[i..j]);
            i = j;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
        literal.push(ch);
        numbered.push(ch);
        positional.push(ch);
        i += ch.len_utf8();
    }
    if !literal.is_empty() {
        parts.push(Part::Text(literal));
    }
    Sql {
        parts,
        numbered,
        positional,
        params,
        keep: None,
        first_line: text.lines().next().unwrap_or("").trim_end().to_string(),
        line,
    }
}

fn sleep(args: &[String], slot: &mut dyn FnMut(&str) -> usize) -> Result<Command, String> {
    let (first, unit) = match args {
        [] => return Err("missing argument".into()),
        [a] => (a.as_str(), None),
        [a, u] => (a.as_str(), Some(u.as_str())),
        _ => return Err("too many arguments".into()),
    };
    let (amount, unit) = if let Some(var) = first.strip_prefix(':') {
        (Amount::Var(slot(var)), unit)
    } else {
        let digits_end = first
            .char_indices()
            .find(|&(k, c)| !(c.is_ascii_digit() || (k == 0 && (c == '-' || c == '+'))))
            .map_or(first.len(), |(k, _)| k);
        let (n, rest) = first.split_at(digits_end);
        let n: i64 = n
            .parse()
            .map_err(|_| format!("invalid sleep time, must be an integer ({first})"))?;
        let unit = match (rest, unit) {
            ("", u) => u,
            (r, None) => Some(r),
            (_, Some(_)) => {
                return Err(format!("invalid sleep time, must be an integer ({first})"))
            }
        };
        (Amount::Count(n), unit)
    };
    let unit_us = match unit.map(str::to_ascii_lowercase).as_deref() {
        None | Some("s") => 1_000_000,
        Some("ms") => 1_000,
        Some("us") => 1,
        Some(other) => {
            return Err(format!(
                "unrecognized time unit, must be us, ms or s ({other})"
            ))
        }
    };
    Ok(Command::Sleep { amount, unit_us })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(text: &str) -> Result<(Vec<Command>, Vec<String>), ScriptError> {
        let mut names = Names::default();
        let c = compile("t.sql", text, &mut |n| names.slot(n))?;
        Ok((c.into_iter().map(|(c, _)| c).collect(), names.0))
    }

    #[test]
    fn sql_uses_of_variables_become_parameters_and_parts() {
        let (c, names) =
            compiled("SELECT :a, ':b', :a::int, x::text FROM t WHERE y = :_c;").unwrap();
        let Command::Sql(s) = &c[0] else { panic!() };
        assert_eq!(names, ["a", "b", "_c"]);
        assert_eq!(
            s.numbered,
            "SELECT $1, '$2', $3::int, x::text FROM t WHERE y = $4;"
        );
        assert_eq!(
            s.positional,
            "SELECT ?, '?', ?::int, x::text FROM t WHERE y = ?;"
        );
        assert_eq!(s.params, [0, 1, 0, 2]);
        assert_eq!(s.parts[0], Part::Text("SELECT ".into()));
        assert_eq!(s.parts[1], Part::Var(0));
    }

    #[test]
    fn branches_are_linked_and_errors_name_the_line() {
        let (c, _) = compiled(
            "\\if :x > 1\n\\set y 1\n\\elif :x > 0\n\\set y 2\n\\else\n\\set y 3\n\\endif\n",
        )
        .unwrap();
        assert!(matches!(c[0], Command::If { next: 2, .. }));
        assert!(matches!(
            c[2],
            Command::Elif {
                next: 4,
                end: 6,
                ..
            }
        ));
        assert!(matches!(c[4], Command::Else { end: 6 }));
        let e = compiled("SELECT 1;\n\\else\n").unwrap_err();
        assert_eq!(e.to_string(), "t.sql:2: \\else without matching \\if");
        let e = compiled("\\if true\nSELECT 1;\n").unwrap_err();
        assert_eq!(e.to_string(), "t.sql:1: \\if without matching \\endif");
        let e = compiled("\n\\set x 1 +\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.sql:2: syntax error in command \"set\" (at column 4): \\set x 1 +"
        );
        let e = compiled("\\shell ls\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.sql:1: \\shell runs a shell command"),
            "{e}"
        );
        let e = compiled("\\set x 1\n\\gset\n").unwrap_err();
        assert_eq!(e.to_string(), "t.sql:2: \\gset must follow an SQL command");
        assert!(compiled("-- nothing\n").is_err());
    }

    #[test]
    fn pipelines_open_and_close_once_and_keep_nothing() {
        let (c, _) =
            compiled("\\startpipeline\nSELECT 1;\nSELECT 2;\n\\endpipeline\nSELECT 3 \\gset\n")
                .unwrap();
        assert!(matches!(c[0], Command::StartPipeline) && matches!(c[3], Command::EndPipeline));
        for (text, words) in [
            (
                "\\startpipeline\nSELECT 1 AS one \\gset\n\\endpipeline\n",
                "t.sql:2: \\gset cannot be used in pipeline mode",
            ),
            (
                "\\startpipeline\n\\startpipeline\n",
                "t.sql:2: already in pipeline mode (since line 1)",
            ),
            (
                "SELECT 1;\n\\endpipeline\n",
                "t.sql:2: \\endpipeline without matching \\startpipeline",
            ),
            (
                "SELECT 1;\n\\startpipeline\nSELECT 2;\n",
                "t.sql:2: \\startpipeline without matching \\endpipeline",
            ),
        ] {
            let e = compiled(text).unwrap_err().to_string();
            assert!(e.starts_with(words), "{e}");
        }
    }

    #[test]
    fn sleeps_and_keeps() {
        let (c, _) =
            compiled("\\sleep 10 ms\n\\sleep 300us\n\\sleep :d\nSELECT 1 AS one \\gset p_\n")
                .unwrap();
        assert!(matches!(
            c[0],
            Command::Sleep {
                amount: Amount::Count(10),
                unit_us: 1_000
            }
        ));
        assert!(matches!(
            c[1],
            Command::Sleep {
                amount: Amount::Count(300),
                unit_us: 1
            }
        ));
        assert!(matches!(
            c[2],
            Command::Sleep {
                amount: Amount::Var(0),
                unit_us: 1_000_000
            }
        ));
        assert!(matches!(&c[3], Command::Sql(s) if s.keep == Some(Keep::One("p_".into()))));
        let e = compiled("\\sleep 1 hour\n").unwrap_err();
        assert!(e.message.contains("unrecognized time unit"), "{e}");
    }
}
