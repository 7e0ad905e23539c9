//! Docs that cannot drift: every shell command shown in README.md,
//! docs/*.md and suites/README.md runs, in document order within its file,
//! against this test's own servers, and every output line a doc shows
//! appears in what its command printed, in that shape.
//!
//! What counts as a command: each line of a fenced block marked `sh`,
//! `bash` or `shell` (a line ending in `\` goes on to the next; `#` lines
//! are comments), and each `$ ` line of a `console` block, whose other
//! lines are that command's output. A command in an indented block, or in
//! a fenced block of another kind, fails the test: it would go unchecked.
//!
//! What counts as output: a `console` block's lines after a command, and a
//! `text` block (or one with no kind) right after a command's block, with
//! only blank lines between: the output of that block's last command. Any
//! other `text` block fails the test unless marked not compared (below):
//! every output a doc shows is compared, or said not to be and why. A
//! command whose shown output says an error (`error:`, `Error:`) must
//! exit with a failure; any other must exit with 0.
//!
//! Markers, HTML comments a reader of the rendered page does not see:
//! - `<!-- not run: REASON -->` on the line before a block: its commands
//!   are not run (the test command itself, the peer benchmarks that
//!   install and run other tools for minutes, a store failure). The test
//!   counts these ([`NOT_RUN`]), so none is added silently. A `text`
//!   block right after it is that command's output, not compared.
//! - `<!-- not compared: REASON -->` on the line before a `text` block:
//!   not a command's output (a peer tool's command line, a file), or one
//!   this test cannot make (a terminal's drawing, minutes of a peer
//!   benchmark); counted too ([`NOT_COMPARED`]).
//! - `<!-- doc-test: COMMAND -->`: a command run at that point and not
//!   shown, setting up what the next shown command reads (runs to compare).
//! - `<!-- doc-test: let NAME = COMMAND -->`: NAME, as a whole word in
//!   the file's later commands, stands for what COMMAND prints (a run id
//!   where the doc writes `RUN_A`). COMMAND finds in `$DOC_TEST_OUTPUT`,
//!   a file of what the latest shown command printed (stdout, then
//!   stderr), what a reader copies from it into the placeholder (`grep -o
//!   'session cap-[0-9a-f]*' "$DOC_TEST_OUTPUT"`).
//!
//! The docs in [`SELF_CONTAINED`] run as a reader pastes them: no hidden
//! command, and each `let` reads `$DOC_TEST_OUTPUT`, so every run, label
//! and placeholder a shown command uses comes from a shown command before
//! it.
//!
//! How a shown command is adapted before it runs ([`adapt`]), the same for
//! every file:
//! - `cargo run --release --` is the binary under test, `sojourn` on PATH;
//! - the servers' default ports (Redis 6379, memcached 11211, PostgreSQL
//!   5432 and YugabyteDB's 5433, MariaDB 3306), in URLs, properties and
//!   pgbench's `-p PORT`, become the test servers' ports, and the host
//!   `host` in a URL is 127.0.0.1. The servers have the
//!   doc's user `bench` with the password `PASSWORD` (and PGIO's
//!   `yugabyte`/`yugabyte`) and its databases `db`, `ycsb`, `bench`,
//!   `yugabyte`. No password variable (`PGPASSWORD`, `MYSQL_PWD`,
//!   `REDIS_PASSWORD`, `SOJOURN_RESULTS_PASSWORD`, `CASSANDRA_PASSWORD`)
//!   is set but by the doc itself: in a command the reader sees, or,
//!   where the doc's prose tells the reader to set it, in a hidden
//!   `doc-test` line of its source;
//! - sizes are scaled down: every count the doc or a workload or suite
//!   file it reads gives (records, operations, keys, articles, writes,
//!   reads) is at most 1,000, PGIO's `SCALE` at most 4,000 rows, and
//!   every duration (`maxexecutiontime`, `RUN_TIME`, `ycsb_timelimit`) at
//!   most 1 s; `capacity` gets `--step 0.5 --settle 0.2 --precision 0.2`
//!   unless it names a step. The files read are copies, scaled so, beside
//!   the commands;
//! - hosts of the example domain (`results.example.com`) are 127.0.0.1;
//!   the database `results` does not exist until sojourn creates it (the
//!   results store's), as on a new server;
//! - a line that only sets shell variables (`STORE=...`, `export A=1
//!   B=2`) runs again, as written, before each of its file's later
//!   commands (each runs in a bash of its own): as in the one terminal a
//!   reader pastes a page into, a variable set without `export` is the
//!   shell's alone, so a doc that forgets its `export` fails;
//! - a command ending in `&` runs in the background (an agent), and is
//!   stopped as by Ctrl+C once its file's other commands are done;
//! - each file runs in a scratch directory of its own (its `HOME` and
//!   `SOJOURN_DATA_DIR`; `/tmp/` is in it; `~/pkb_configs` and
//!   `../pkb_configs`, a user's own PKB folder, are a copy of
//!   `suites/walkthrough-sequential`), on servers emptied before it.
//!
//! Output lines match in shape: every number may differ, in the shape the
//! doc shows it (a short integer stays an integer, a figure of four
//! significant digits may gain or lose its fraction, a sign appears only
//! where the doc shows one and may be either), runs of spaces may differ
//! in length, `...` stands for anything, and a run of hex digits (an id)
//! may be any id. Each shown line must match a whole line of the command's
//! stdout or stderr, in order, and a line saying an error that the doc
//! does not show fails. The test prints how many commands' output it
//! compared; [`COMPARED`] is the least it may be. `DOC_TEST_ONLY=FILE`
//! (`docs/rates.md`) runs one file, to try a change to it.
//!
//! A written runner rather than `trycmd`: the commands need ports known
//! only once the servers are up, credentials, scaled sizes, hidden setup
//! and ids from earlier commands, none of which a static snapshot holds.

mod util;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use regex::Regex;
use sojourn_testkit::mariadb_server::Mariadb;
use sojourn_testkit::memcached_server::MemcachedServer;
use sojourn_testkit::needs::{self, Need};
use sojourn_testkit::postgres_server::Postgres;
use sojourn_testkit::process::try_output_within;
use sojourn_testkit::redis_server::RedisServer;
use util::*;

/// The blocks marked `<!-- not run: ... -->` in all the docs.
const NOT_RUN: usize = 12;

/// The `text` blocks marked `<!-- not compared: ... -->` in all the docs.
const NOT_COMPARED: usize = 9;

/// Commands whose shown output the test compares: it only goes up.
const COMPARED: usize = 25;

/// Docs whose shown commands depend on no hidden one (see the module's
/// doc).
const SELF_CONTAINED: [&str; 2] = ["docs/reports.md", "docs/distributed.md"];

/// What the latest shown command printed, for a `let` to read: a file in
/// the scratch HOME, named to commands by this variable.
const OUTPUT_VAR: &str = "DOC_TEST_OUTPUT";

/// The password, user and databases of the docs' own examples.
const PASSWORD: &str = "PASSWORD";

/// Where sojourn and the clients take passwords from: set for a command
/// only where its doc sets them.
const PASSWORD_VARS: [&str; 5] = [
    "PGPASSWORD",
    "MYSQL_PWD",
    "REDIS_PASSWORD",
    "SOJOURN_RESULTS_PASSWORD",
    "CASSANDRA_PASSWORD",
];
const USER: &str = "bench";
const DATABASES: [&str; 5] = ["db", "ycsb", "bench", "yugabyte", "results"];
/// Of those, the PostgreSQL database that sojourn creates (a results
/// store's), dropped between files and never made by the test.
const CREATED_BY_SOJOURN: &str = "results";

/// How long one documented command may take before it counts as hung.
const COMMAND_LIMIT: Duration = Duration::from_secs(180);

/// One thing a doc asks for, in document order.
#[derive(Clone, Debug, PartialEq)]
enum Item {
    /// A command, shown or hidden, and the output lines the doc shows for
    /// it (line number and text).
    Run {
        line: usize,
        command: String,
        hidden: bool,
        output: Vec<(usize, String)>,
    },
    /// `let NAME = COMMAND`.
    Let {
        line: usize,
        name: String,
        command: String,
    },
    /// A block marked not run, with why.
    NotRun {
        line: usize,
        reason: String,
        commands: Vec<String>,
    },
    /// A `text` block marked not compared, with why.
    NotCompared { line: usize, reason: String },
}

const MARK_NOT_RUN: &str = "<!-- not run:";
const MARK_NOT_COMPARED: &str = "<!-- not compared:";
const MARK_HIDDEN: &str = "<!-- doc-test:";

/// The items of a markdown file, or what is wrong with it (a command the
/// test would miss, a marker that marks nothing).
fn parse(md: &str) -> Result<Vec<Item>, String> {
    let lines: Vec<&str> = md.lines().collect();
    let mut items = Vec::new();
    let mut not_run: Option<(usize, String)> = None;
    let mut not_compared: Option<(usize, String)> = None;
    // The line after the latest block's closing fence.
    let mut after_block = 0;
    let mut i = 0;
    while i < lines.len() {
        let n = i + 1;
        let line = lines[i];
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix(MARK_NOT_RUN) {
            let reason = rest
                .strip_suffix("-->")
                .ok_or_else(|| format!("line {n}: a not-run marker ends on its line with -->"))?;
            not_run = Some((n, reason.trim().to_string()));
            i += 1;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(MARK_NOT_COMPARED) {
            let reason = rest.strip_suffix("-->").ok_or_else(|| {
                format!("line {n}: a not-compared marker ends on its line with -->")
            })?;
            not_compared = Some((n, reason.trim().to_string()));
            i += 1;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(MARK_HIDDEN) {
            let body = rest
                .strip_suffix("-->")
                .ok_or_else(|| format!("line {n}: a doc-test marker ends on its line with -->"))?
                .trim();
            match body.strip_prefix("let ") {
                Some(l) => {
                    let (name, command) = l
                        .split_once(" = ")
                        .ok_or_else(|| format!("line {n}: expected `let NAME = COMMAND`"))?;
                    items.push(Item::Let {
                        line: n,
                        name: name.trim().to_string(),
                        command: command.trim().to_string(),
                    });
                }
                None => items.push(Item::Run {
                    line: n,
                    command: body.to_string(),
                    hidden: true,
                    output: Vec::new(),
                }),
            }
            i += 1;
            continue;
        }
        // A fence, also indented inside a list item (its lines then carry
        // that indentation too).
        if let Some(info) = line.trim_start().strip_prefix("```") {
            let indent = line.len() - line.trim_start().len();
            let info = info.trim();
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                end += 1;
            }
            if end == lines.len() {
                return Err(format!("line {n}: a code block that never closes"));
            }
            let body: Vec<&str> = lines[start..end]
                .iter()
                .map(|l| {
                    let cut = l.len() - l.trim_start().len();
                    &l[cut.min(indent)..]
                })
                .collect();
            let body = &body[..];
            if let Some((mark, reason)) = not_compared.take() {
                if mark + 1 != n || !matches!(info, "text" | "") {
                    return Err(format!(
                        "line {mark}: a not-compared marker belongs on the line just before a \
                         ```text block"
                    ));
                }
                items.push(Item::NotCompared { line: n, reason });
                i = end + 1;
                after_block = i;
                continue;
            }
            if matches!(info, "text" | "") && !body.iter().any(|l| looks_like_command(l)) {
                let right_after = after_block > 0
                    && n > after_block
                    && lines[after_block..i].iter().all(|l| l.trim().is_empty());
                match items.last_mut() {
                    Some(Item::Run {
                        hidden: false,
                        output,
                        ..
                    }) if right_after => output.extend(
                        body.iter()
                            .enumerate()
                            .filter(|(_, l)| !l.trim().is_empty())
                            .map(|(k, l)| (start + k + 1, l.to_string())),
                    ),
                    // The output of a command that is not run.
                    Some(Item::NotRun { .. }) if right_after => {}
                    _ => {
                        return Err(format!(
                            "line {n}: a ```text block that is not right after the command \
                             whose output it shows: put it there (or show the command and its \
                             output in a ```console block), or mark it \
                             `<!-- not compared: why -->`"
                        ))
                    }
                }
                i = end + 1;
                after_block = i;
                continue;
            }
            let block = match info {
                "sh" | "bash" | "shell" => shell_block(start, body),
                "console" => console_block(start, body),
                _ => {
                    if let Some((k, l)) =
                        body.iter().enumerate().find(|(_, l)| looks_like_command(l))
                    {
                        return Err(format!(
                            "line {}: `{}` is in a ```{info} block, so no test runs it: make the \
                             block ```sh (or ```console with its output), or mark it not run",
                            start + k + 1,
                            l.trim()
                        ));
                    }
                    Vec::new()
                }
            };
            match not_run.take() {
                Some((mark, reason)) => {
                    if mark + 1 != n {
                        return Err(format!(
                            "line {mark}: a not-run marker belongs on the line just before its block"
                        ));
                    }
                    items.push(Item::NotRun {
                        line: n,
                        reason,
                        commands: block
                            .into_iter()
                            .filter_map(|it| match it {
                                Item::Run { command, .. } => Some(command),
                                _ => None,
                            })
                            .collect(),
                    });
                }
                None => items.extend(block),
            }
            i = end + 1;
            after_block = i;
            continue;
        }
        for (mark, what) in [(&not_run, "not-run"), (&not_compared, "not-compared")] {
            if let Some((mark, _)) = mark {
                if !trimmed.is_empty() {
                    return Err(format!(
                        "line {mark}: a {what} marker with no block after it"
                    ));
                }
            }
        }
        // An indented code block (after a blank line) holding a command.
        if line.starts_with("    ")
            && i > 0
            && lines[i - 1].trim().is_empty()
            && looks_like_command(line)
        {
            return Err(format!(
                "line {n}: `{}` is in an indented block, so no test runs it: put it in a \
                 fenced ```sh block",
                line.trim()
            ));
        }
        i += 1;
    }
    if let Some((mark, _)) = not_run.or(not_compared) {
        return Err(format!("line {mark}: a marker with no block after it"));
    }
    Ok(items)
}

/// Whether a line of a block reads as a command someone would type.
fn looks_like_command(line: &str) -> bool {
    let t = line.trim_start().trim_start_matches("$ ");
    let first = t
        .split_whitespace()
        .find(|w| !w.contains('='))
        .unwrap_or("");
    matches!(first, "sojourn" | "cargo" | "scripts/test" | "python3")
}

/// A shell block's commands, continued lines joined.
fn shell_block(start: usize, body: &[&str]) -> Vec<Item> {
    let mut items = Vec::new();
    let mut k = 0;
    while k < body.len() {
        let line = body[k];
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            k += 1;
            continue;
        }
        let first = start + k + 1;
        let mut command = line.to_string();
        while (command.ends_with('\\') || open_quote(&command)) && k + 1 < body.len() {
            k += 1;
            command.push('\n');
            command.push_str(body[k]);
        }
        items.push(Item::Run {
            line: first,
            command,
            hidden: false,
            output: Vec::new(),
        });
        k += 1;
    }
    items
}

/// Whether a shell command line leaves a quote open (the command goes on
/// on the next line, as a multi-line SQL query does).
fn open_quote(command: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut after_space = true;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\\') | (Some('"'), '\\') => {
                chars.next();
            }
            // A comment to the end of the line (`# sojourn's own jobs`).
            (None, '#') if after_space => while chars.next().is_some_and(|c| c != '\n') {},
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        after_space = c.is_whitespace();
    }
    quote.is_some()
}

/// A console block's `$ ` commands, each with the lines after it as its
/// output.
fn console_block(start: usize, body: &[&str]) -> Vec<Item> {
    let mut items = Vec::new();
    let mut k = 0;
    while k < body.len() {
        let line = body[k];
        if let Some(c) = line.strip_prefix("$ ") {
            let first = start + k + 1;
            let mut command = c.to_string();
            while (command.ends_with('\\') || open_quote(&command)) && k + 1 < body.len() {
                k += 1;
                command.push('\n');
                command.push_str(body[k]);
            }
            items.push(Item::Run {
                line: first,
                command,
                hidden: false,
                output: Vec::new(),
            });
        } else if !line.trim().is_empty() {
            if let Some(Item::Run { output, .. }) = items.last_mut() {
                output.push((start + k + 1, line.to_string()));
            }
        }
        k += 1;
    }
    items
}

/// A shown output line as a pattern of its shape (see the module's doc).
fn shape(line: &str) -> Regex {
    shape_fixing(line, &[])
}

/// [`shape`], where an integer the doc shows that is the first of a pair
/// in `fixed` is the second exactly (see [`fixed_counts`]).
fn shape_fixing(line: &str, fixed: &[(u64, u64)]) -> Regex {
    const DAYS: &str = "Mon|Tue|Wed|Thu|Fri|Sat|Sun";
    const MONTHS: &str = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec";
    let mut re = String::from(r"^\s*");
    let chars: Vec<char> = line.trim().chars().collect();
    let run = |from: usize, f: &dyn Fn(char) -> bool| {
        (from..chars.len())
            .find(|&j| !f(chars[j]))
            .unwrap_or(chars.len())
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_word = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if c.is_whitespace() {
            i = run(i, &|c| c.is_whitespace());
            re.push_str(r"\s+");
            continue;
        }
        if chars[i..].starts_with(&['.', '.', '.']) {
            re.push_str(".*");
            i += 3;
            continue;
        }
        if starts_word && c.is_ascii_hexdigit() {
            // Hex digits and hyphens holding a digit and a letter: an id.
            let end = run(i, &|c| c.is_ascii_hexdigit() || c == '-');
            let word = &chars[i..end];
            let ends_word = end == chars.len() || !chars[end].is_ascii_alphanumeric();
            if ends_word
                && word.len() >= 6
                && word.iter().any(|c| c.is_ascii_digit())
                && word.iter().any(|c| c.is_ascii_alphabetic())
            {
                re.push_str(r"[0-9a-f-]+");
                i = end;
                continue;
            }
        }
        // A number's sign is part of its value: a change shown as +28.1%
        // may come out as -3.4%. A number shown without one has none.
        if starts_word
            && matches!(c, '+' | '-')
            && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())
        {
            re.push_str("[+-]");
            i += 1;
            continue;
        }
        if starts_word && c.is_ascii_digit() {
            // Figures are printed to four significant digits, so 737.8 may
            // come out as 1356 and 1013 as 983.2: a decimal, or an integer
            // of four digits or more, is any decimal or integer. A shorter
            // integer is an integer (a count, a port, a percentage), in
            // groups of three or not (the same count may have more digits).
            // A version keeps its parts.
            let from = i;
            i = run(i, &|c| c.is_ascii_digit());
            while chars.get(i) == Some(&',') && run(i + 1, &|c| c.is_ascii_digit()) == i + 4 {
                i += 4;
            }
            let digits = chars[from..i].iter().filter(|c| c.is_ascii_digit()).count();
            let value: Option<u64> = chars[from..i]
                .iter()
                .filter(|c| c.is_ascii_digit())
                .collect::<String>()
                .parse()
                .ok();
            let exact = value.and_then(|v| fixed.iter().find(|(shown, _)| *shown == v));
            let integer =
                chars.get(i) != Some(&'.') || !chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if let (Some((_, ran)), true) = (exact, integer) {
                // In groups of three or not.
                let digits = ran.to_string();
                let mut grouped = String::new();
                for (k, d) in digits.chars().enumerate() {
                    if k > 0 && (digits.len() - k) % 3 == 0 {
                        grouped.push_str(",?");
                    }
                    grouped.push(d);
                }
                re.push_str(&grouped);
                continue;
            }
            let mut parts = 0;
            let mut j = i;
            while chars.get(j) == Some(&'.') && chars.get(j + 1).is_some_and(char::is_ascii_digit) {
                parts += 1;
                j = run(j + 1, &|c| c.is_ascii_digit());
            }
            if parts >= 2 {
                re.push_str(r"[0-9]+");
                re.push_str(&r"\.[0-9]+".repeat(parts));
            } else if parts == 1 || digits >= 4 {
                re.push_str(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?");
            } else {
                re.push_str(r"[0-9]+(?:,[0-9]{3})*");
            }
            i = j;
            continue;
        }
        if starts_word && c.is_ascii_alphabetic() {
            // A day or month name in a date is any day or month.
            let end = run(i, &|c| c.is_ascii_alphanumeric());
            let word: String = chars[i..end].iter().collect();
            if let Some(names) = [DAYS, MONTHS]
                .into_iter()
                .find(|n| n.split('|').any(|d| d == word))
            {
                re.push_str(&format!("(?:{names})"));
                i = end;
                continue;
            }
        }
        re.push_str(&regex::escape(&c.to_string()));
        i += 1;
    }
    re.push_str(r"\s*$");
    Regex::new(&re).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

/// A line of `stdout` or `stderr` that says an error (`error:`, `Error:`,
/// `ERROR`) and that no shown line matches: a command that fails yet
/// exits 0 prints what the doc does not show.
fn unshown_error(shown: &[(usize, String)], stdout: &str, stderr: &str) -> Option<String> {
    let shapes: Vec<Regex> = shown.iter().map(|(_, l)| shape(l)).collect();
    stdout
        .lines()
        .chain(stderr.lines())
        .find(|l| says_error(l) && !shapes.iter().any(|re| re.is_match(l)))
        .map(str::to_string)
}

/// Whether a line says an error (`error:`, `Error:`, `ERROR`).
fn says_error(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("error:") || t.starts_with("Error:") || t.starts_with("ERROR")
}

/// Whether every shown line matches a line of `stdout` or `stderr`, each
/// stream in order; the first that does not, if any.
fn first_missing<'a>(
    shown: &'a [(usize, String)],
    fixed: &[(u64, u64)],
    stdout: &str,
    stderr: &str,
) -> Option<&'a (usize, String)> {
    let streams = [
        stdout.lines().collect::<Vec<_>>(),
        stderr.lines().collect::<Vec<_>>(),
    ];
    let mut at = [0usize; 2];
    'shown: for s in shown {
        let re = shape_fixing(&s.1, if says_measured(&s.1) { fixed } else { &[] });
        for (k, lines) in streams.iter().enumerate() {
            if let Some(j) = (at[k]..lines.len()).find(|&j| re.is_match(lines[j])) {
                at[k] = j + 1;
                continue 'shown;
            }
        }
        return Some(s);
    }
    None
}

/// The largest count and duration a doc's command may ask for.
const CAPS: [(&str, u64); 18] = [
    ("recordcount", 1000),
    ("operationcount", 1000),
    ("insertcount", 1000),
    ("ycsb_record_count", 1000),
    ("ycsb_operation_count", 1000),
    ("vote.articles", 1000),
    ("num_unique_keys", 1000),
    ("num_writes", 1000),
    ("num_reads", 1000),
    ("SCALE", 4000),
    ("maxexecutiontime", 1),
    ("RUN_TIME", 1),
    ("ycsb_timelimit", 1),
    ("--ops", 1000),
    ("--records", 1000),
    ("--run_time", 1),
    ("--runtime", 1),
    ("--articles", 1000),
];

/// The test servers' ports, by the default port a doc writes.
struct Ports(BTreeMap<u16, u16>);

/// A command or file text adapted to the test's servers and sizes (see the
/// module's doc).
fn adapt(text: &str, ports: &Ports, scratch: &Path) -> String {
    let mut t = text.replace("cargo run --release --", "sojourn");
    t = t.replace("@host:", "@127.0.0.1:");
    // Example hosts (`results.example.com`) are the test's own.
    let example = Regex::new(r"\b[a-z0-9-]+(\.[a-z0-9-]+)*\.example\.com\b").unwrap();
    t = example.replace_all(&t, "127.0.0.1").into_owned();
    // In URLs and properties (`:5432`, `=6379`), and pgbench's `-p 5432`.
    let port = Regex::new(r"([:=]|-p |--port[ =])(6379|11211|5432|5433|3306)\b").unwrap();
    t = port
        .replace_all(&t, |c: &regex::Captures| {
            let default: u16 = c[2].parse().unwrap();
            match ports.0.get(&default) {
                Some(p) => format!("{}{p}", &c[1]),
                None => c[0].to_string(),
            }
        })
        .into_owned();
    t = t.replace("/tmp/", &format!("{}/tmp/", scratch.display()));
    t = sized()
        .replace_all(&t, |c: &regex::Captures| {
            let cap = CAPS.iter().find(|(k, _)| *k == &c[2]).unwrap().1;
            let value = &c[4];
            let over = match value.parse::<u64>() {
                Ok(v) => v > cap,
                Err(_) => true,
            };
            if over {
                format!("{}{}{}{cap}", &c[1], &c[2], &c[3])
            } else {
                c[0].to_string()
            }
        })
        .into_owned();
    if t.contains("sojourn capacity") && !t.contains("--step") {
        t.push_str(" --step 0.5 --settle 0.2 --precision 0.2");
    }
    t
}

/// A count or duration of [`CAPS`] in a command or file: its name (2),
/// what joins it to its value (3), the value (4).
fn sized() -> Regex {
    let keys: Vec<String> = CAPS.iter().map(|(k, _)| regex::escape(k)).collect();
    Regex::new(&format!(
        r"(^|[^A-Za-z_.])({})(\s*[=:]\s*|\s+)([0-9]+[A-Za-z]*)\b",
        keys.join("|")
    ))
    .unwrap()
}

/// Whether a shown line tells what ran (YCSB's `[...]` lines, sojourn's
/// `#` lines, a warning's counts), where a number equal to a count the
/// command asked for is that count; a note or an error echoes settings
/// and defaults instead (`--num_reads -1 (100000)`).
fn says_measured(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('[') || t.starts_with('#') || t.starts_with("warning:")
}

/// The counts a doc's command asks for (of 100 or more, where a number
/// in a line that [`says_measured`] equal to one is that count, not a
/// coincidence), each with the count its adapted command asks for: a
/// shown number equal to the first must be the second exactly.
fn fixed_counts(command: &str, adapted: &str) -> Vec<(u64, u64)> {
    let counts = |text: &str| -> Vec<(String, u64)> {
        sized()
            .captures_iter(text)
            .filter(|c| CAPS.iter().any(|(k, cap)| *k == &c[2] && *cap >= 1000))
            .filter_map(|c| Some((c[2].to_string(), c[4].parse().ok()?)))
            .collect()
    };
    let run = counts(adapted);
    counts(command)
        .into_iter()
        .filter(|(_, shown)| *shown >= 100)
        .filter_map(|(key, shown)| {
            let (_, ran) = run.iter().find(|(k, _)| *k == key)?;
            Some((shown, *ran))
        })
        .collect()
}

/// Whether a command runs in the background (`... &`, not `&&`).
fn background(command: &str) -> bool {
    let t = command.trim_end();
    t.ends_with('&') && !t.ends_with("&&")
}

/// What a command needs: the servers whose default ports it names, or
/// the suite folder it runs names.
fn needs_of(command: &str, repo: &Path) -> Vec<Need> {
    let mut text = command.to_string();
    if let Some(dir) = command
        .split_whitespace()
        .skip_while(|w| *w != "suite")
        .nth(1)
        .filter(|d| d.starts_with("suites/"))
    {
        if let Ok(entries) = std::fs::read_dir(repo.join(dir)) {
            for e in entries.flatten() {
                text.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
    }
    let mut needs = Vec::new();
    for (port, need) in [
        ("6379", Need::Redis),
        ("11211", Need::Memcached),
        ("5432", Need::Postgres),
        ("5433", Need::Postgres),
        ("3306", Need::Mariadb),
    ] {
        if text.contains(port) && !needs.contains(&need) {
            needs.push(need);
        }
    }
    needs
}

/// The test's servers, each with the docs' user and databases.
struct Servers {
    pg: Option<Postgres>,
    maria: Option<Mariadb>,
    redis: Option<RedisServer>,
    memcached: Option<MemcachedServer>,
}

impl Servers {
    fn start() -> Servers {
        let pg = Postgres::start();
        if let Some(pg) = &pg {
            pg.psql(&format!(
                "CREATE ROLE {USER} LOGIN SUPERUSER PASSWORD '{PASSWORD}';\n\
                 CREATE ROLE yugabyte LOGIN SUPERUSER PASSWORD 'yugabyte';\n"
            ));
        }
        let maria = Mariadb::start();
        if let Some(m) = &maria {
            m.sql(&format!(
                "CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; \
                 GRANT ALL ON *.* TO '{USER}'@'%';"
            ));
        }
        Servers {
            pg,
            maria,
            redis: RedisServer::start(Some(PASSWORD)),
            memcached: MemcachedServer::start(),
        }
    }

    fn ports(&self) -> Ports {
        let mut m = BTreeMap::new();
        if let Some(s) = &self.redis {
            m.insert(6379, s.port());
        }
        if let Some(s) = &self.memcached {
            m.insert(11211, s.port());
        }
        if let Some(s) = &self.pg {
            m.insert(5432, s.port());
            m.insert(5433, s.port());
        }
        if let Some(s) = &self.maria {
            m.insert(3306, s.port());
        }
        Ports(m)
    }

    fn has(&self, need: Need) -> bool {
        match need {
            Need::Postgres => self.pg.is_some(),
            Need::Mariadb => self.maria.is_some(),
            Need::Redis => self.redis.is_some(),
            Need::Memcached => self.memcached.is_some(),
            _ => false,
        }
    }

    /// Empty every database, as a new user's would be.
    fn empty(&self) {
        if let Some(pg) = &self.pg {
            let mut sql = String::new();
            for d in DATABASES {
                sql.push_str(&format!("DROP DATABASE IF EXISTS {d} WITH (FORCE);\n"));
                if d != CREATED_BY_SOJOURN {
                    sql.push_str(&format!("CREATE DATABASE {d} OWNER {USER};\n"));
                }
            }
            pg.psql(&sql);
        }
        if let Some(m) = &self.maria {
            let mut sql = String::new();
            for d in DATABASES {
                sql.push_str(&format!(
                    "DROP DATABASE IF EXISTS {d}; CREATE DATABASE {d}; "
                ));
            }
            m.sql(&sql);
        }
        if let Some(r) = &self.redis {
            assert_eq!(r.command(&["FLUSHALL"]).trim(), "+OK");
        }
        if let Some(m) = &self.memcached {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", m.port())).unwrap();
            s.write_all(b"flush_all\r\n").unwrap();
            let mut reply = [0u8; 4];
            std::io::Read::read_exact(&mut s, &mut reply).unwrap();
            assert_eq!(&reply, b"OK\r\n");
        }
    }
}

/// Copy `from` into `to`, each file's text adapted.
fn copy_adapted(from: &Path, to: &Path, ports: &Ports, scratch: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_adapted(&p, &dest, ports, scratch);
        } else {
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(dest, adapt(&text, ports, scratch)).unwrap();
        }
    }
}

/// One file's scratch place: its HOME, the commands' directory, the
/// binary on PATH.
struct Scratch {
    _dir: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
}

impl Scratch {
    fn new(repo: &Path, ports: &Ports) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let work = home.join("work");
        for d in ["tmp", "data", "work"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        copy_adapted(
            &repo.join("workloads"),
            &work.join("workloads"),
            ports,
            &home,
        );
        copy_adapted(&repo.join("suites"), &work.join("suites"), ports, &home);
        copy_adapted(
            &repo.join("suites/walkthrough-sequential"),
            &home.join("pkb_configs"),
            ports,
            &home,
        );
        Scratch {
            _dir: dir,
            home,
            work,
        }
    }

    /// `command` for bash, in the scratch directory and its environment,
    /// after the lines `shell` of its file that set shell variables before
    /// it, as they were written: a variable set without `export` stays the
    /// shell's, as in the reader's terminal.
    fn bash(&self, command: &str, shell: &[String]) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_sojourn"));
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut script = shell.join("\n");
        script.push('\n');
        script.push_str(command);
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(script)
            .current_dir(&self.work)
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("SOJOURN_DATA_DIR", self.home.join("data"))
            .env(OUTPUT_VAR, self.output())
            .env_remove("SOJOURN_RESULTS");
        // Only what the doc sets: a block that forgets its `export` fails.
        for secret in PASSWORD_VARS {
            cmd.env_remove(secret);
        }
        cmd
    }

    /// Where the latest shown command's output is kept.
    fn output(&self) -> PathBuf {
        self.home.join("doc-test-output")
    }

    /// Start `command` (one that ends in `&`) in the background, as the
    /// shell would, with its output kept in a file; it is stopped (as by
    /// Ctrl+C) once the file's commands are done.
    fn start(&self, command: &str, shell: &[String]) -> Child {
        let log = std::fs::File::create(self.home.join(format!("bg-{}.log", std::process::id())))
            .unwrap();
        let mut cmd = self.bash(
            &format!("exec {}", command.trim_end().trim_end_matches('&')),
            shell,
        );
        cmd.stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        cmd.spawn().unwrap()
    }

    fn run(&self, command: &str, shell: &[String]) -> Result<std::process::Output, String> {
        let mut cmd = self.bash(command, shell);
        match try_output_within(&mut cmd, None, COMMAND_LIMIT) {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(overran)) => Err(overran.to_string()),
            Err(e) => Err(format!("bash: {e}")),
        }
    }
}

/// Whether a command only sets shell variables (`STORE=URL`, `export A=1
/// B=2`): values are single words, as the docs write them.
fn only_sets_variables(command: &str) -> bool {
    let words = command
        .trim()
        .strip_prefix("export ")
        .unwrap_or(command.trim());
    let name = Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").unwrap();
    words
        .split_whitespace()
        .all(|w| w.split_once('=').is_some_and(|(k, _)| name.is_match(k)))
}

/// The docs the test reads, in the order it runs them.
fn doc_files(repo: &Path) -> Vec<PathBuf> {
    let mut files = vec![repo.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files.push(repo.join("suites/README.md"));
    files
}

/// The tail of a command's output, for a failure's message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[test]
fn every_documented_command_runs_as_shown() {
    let repo = repo_root().canonicalize().unwrap();
    let files = doc_files(&repo);
    let mut parsed = Vec::new();
    let (mut not_run, mut not_compared) = (Vec::new(), Vec::new());
    for f in &files {
        let rel = f.strip_prefix(&repo).unwrap().display().to_string();
        let items =
            parse(&std::fs::read_to_string(f).unwrap()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for it in &items {
            match it {
                Item::NotRun { line, reason, .. } => {
                    not_run.push(format!("{rel}:{line}: {reason}"))
                }
                Item::NotCompared { line, reason } => {
                    not_compared.push(format!("{rel}:{line}: {reason}"))
                }
                _ => {}
            }
        }
        parsed.push((rel, items));
    }
    assert_eq!(
        not_run.len(),
        NOT_RUN,
        "the blocks marked not run changed; each needs a reason a reviewer accepts, \
         then NOT_RUN updated:\n{}",
        not_run.join("\n")
    );
    assert_eq!(
        not_compared.len(),
        NOT_COMPARED,
        "the text blocks marked not compared changed; each needs a reason a reviewer accepts, \
         then NOT_COMPARED updated:\n{}",
        not_compared.join("\n")
    );
    // `DOC_TEST_ONLY=docs/rates.md` runs one file's commands, to try a
    // change to it; the counts below are then not judged.
    let only = std::env::var("DOC_TEST_ONLY").ok();
    if let Some(only) = &only {
        parsed.retain(|(rel, _)| rel == only);
        assert!(!parsed.is_empty(), "DOC_TEST_ONLY={only}: no such doc");
    }
    let servers = Servers::start();
    let ports = servers.ports();
    let mut failures = Vec::new();
    let mut ran = 0;
    let (mut compared, mut compared_lines) = (0, 0);
    for (rel, items) in &parsed {
        let file_started = Instant::now();
        let mut started: Vec<Child> = Vec::new();
        servers.empty();
        let scratch = Scratch::new(&repo, &ports);
        let mut names: Vec<(String, String)> = Vec::new();
        let mut shell: Vec<String> = Vec::new();
        for it in items {
            let (line, command, output, bind, shown) = match it {
                Item::Run {
                    line,
                    command,
                    output,
                    hidden,
                } => (*line, command, output.as_slice(), None, !hidden),
                Item::Let {
                    line,
                    name,
                    command,
                } => (*line, command, &[][..], Some(name), false),
                Item::NotRun { .. } | Item::NotCompared { .. } => continue,
            };
            let missing: Vec<Need> = needs_of(command, &repo)
                .into_iter()
                .filter(|n| !servers.has(*n))
                .collect();
            if !missing.is_empty() {
                for n in missing {
                    assert!(needs::left_out(n), "{} was not started", n.name());
                }
                continue;
            }
            let mut adapted = adapt(command, &ports, &scratch.home);
            for (name, value) in &names {
                let word =
                    Regex::new(&format!(r"(^|[^\w-]){}([^\w-]|$)", regex::escape(name))).unwrap();
                adapted = word
                    .replace_all(&adapted, |c: &regex::Captures| {
                        format!("{}{value}{}", &c[1], &c[2])
                    })
                    .into_owned();
            }
            ran += 1;
            if only_sets_variables(&adapted) {
                shell.push(adapted.clone());
            }
            if background(&adapted) {
                eprintln!(
                    "{rel}:{line}: in the background: {}",
                    command.lines().next().unwrap_or("")
                );
                started.push(scratch.start(&adapted, &shell));
                continue;
            }
            let began = Instant::now();
            let out = scratch.run(&adapted, &shell);
            eprintln!(
                "{rel}:{line}: {:.1} s: {}",
                began.elapsed().as_secs_f64(),
                command.lines().next().unwrap_or("")
            );
            let out = match out {
                Ok(out) => out,
                Err(e) => {
                    failures.push(format!(
                        "{rel}:{line}: {command}\n  ran as: {adapted}\n  {e}"
                    ));
                    continue;
                }
            };
            let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
            if shown {
                std::fs::write(scratch.output(), format!("{stdout}{stderr}")).unwrap();
            }
            // A command whose shown output says an error must fail with it.
            let fails = output.iter().any(|(_, l)| says_error(l));
            if fails && out.status.success() {
                failures.push(format!(
                    "{rel}:{line}: {command}\n  the doc shows it failing, and it exited with 0"
                ));
            }
            if !fails && !out.status.success() {
                failures.push(format!(
                    "{rel}:{line}: {command}\n  ran as: {adapted}\n  exited with {}\n  stdout:\n{}\n  stderr:\n{}",
                    out.status,
                    tail(&stdout),
                    tail(&stderr)
                ));
                continue;
            }
            if stderr.contains("panicked") {
                failures.push(format!(
                    "{rel}:{line}: {command}\n  panicked:\n{}",
                    tail(&stderr)
                ));
            }
            if !output.is_empty() {
                compared += 1;
                compared_lines += output.len();
            }
            if let Some(said) = unshown_error(output, &stdout, &stderr) {
                failures.push(format!(
                    "{rel}:{line}: `{command}` said `{said}`, an error the doc does not show\n  \
                     stderr:\n{}",
                    tail(&stderr)
                ));
            }
            if let Some((n, shown)) =
                first_missing(output, &fixed_counts(command, &adapted), &stdout, &stderr)
            {
                failures.push(format!(
                    "{rel}:{n}: the doc shows `{shown}` as output of `{command}`, and no line of \
                     its output has that shape\n  stdout:\n{stdout}\n  stderr:\n{}",
                    tail(&stderr)
                ));
            }
            if let Some(name) = bind {
                let value = stdout.trim().to_string();
                if value.is_empty() || value.contains('\n') {
                    failures.push(format!(
                        "{rel}:{line}: `let {name}` expects one line of output from `{command}`, got {stdout:?}"
                    ));
                }
                names.push((name.clone(), value));
            }
        }
        for child in started.drain(..) {
            // SAFETY: a child of ours, not yet waited for.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            let out = sojourn_testkit::process::finish_within(child, COMMAND_LIMIT);
            if !out.status.success() && out.status.code() != Some(130) {
                failures.push(format!(
                    "{rel}: a background command ended with {}",
                    out.status
                ));
            }
        }
        eprintln!("{rel}: {:.1} s", file_started.elapsed().as_secs_f64());
    }
    eprintln!(
        "compared the output shown of {compared} of the {ran} commands run ({compared_lines} lines)"
    );
    assert!(
        only.is_some() || ran > 50,
        "only {ran} documented commands ran"
    );
    assert!(
        failures.is_empty(),
        "{} documented command(s) did not run as shown:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        only.is_some() || compared >= COMPARED,
        "{compared} commands' output compared, fewer than the {COMPARED} compared before"
    );
}

/// A reader pastes these docs' commands in order: nothing they use may
/// come from a command the rendered page does not show.
#[test]
fn self_contained_docs_hide_no_command() {
    let repo = repo_root();
    for rel in SELF_CONTAINED {
        let items = parse(&std::fs::read_to_string(repo.join(rel)).unwrap())
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let mut shown_before = false;
        for it in &items {
            match it {
                Item::Run {
                    line,
                    command,
                    hidden: true,
                    ..
                } => panic!(
                    "{rel}:{line}: `{command}` runs hidden; show it, so a reader runs it too"
                ),
                Item::Run { .. } => shown_before = true,
                Item::Let {
                    line,
                    name,
                    command,
                } => assert!(
                    shown_before && command.contains(&format!("\"${OUTPUT_VAR}\"")),
                    "{rel}:{line}: `let {name}` must read what a shown command before it \
                     printed (\"${OUTPUT_VAR}\"), as a reader copies it: {command}"
                ),
                Item::NotRun { .. } | Item::NotCompared { .. } => {}
            }
        }
        assert!(shown_before, "{rel} shows no command");
    }
}

#[test]
fn blocks_commands_and_markers_are_read_as_documented() {
    let md = "text\n\n```sh\nsojourn load -P w \\\n  -p a=1\n# a comment\nsojourn run -P w   # why\n```\n\
              <!-- doc-test: sojourn bench -P w -->\n\
              <!-- doc-test: let RUN_A = sojourn results list -->\n\
              <!-- not run: it is the test command -->\n```sh\nscripts/test\n```\n\
              ```console\n$ sojourn results show last\n[OVERALL], Throughput(ops/sec), 12.5\n\n$ sojourn x\n```\n\
              ```text\n# liops: 1 selects\n```\n";
    let items = parse(md).unwrap();
    assert_eq!(
        items,
        vec![
            Item::Run {
                line: 4,
                command: "sojourn load -P w \\\n  -p a=1".into(),
                hidden: false,
                output: vec![]
            },
            Item::Run {
                line: 7,
                command: "sojourn run -P w   # why".into(),
                hidden: false,
                output: vec![]
            },
            Item::Run {
                line: 9,
                command: "sojourn bench -P w".into(),
                hidden: true,
                output: vec![]
            },
            Item::Let {
                line: 10,
                name: "RUN_A".into(),
                command: "sojourn results list".into()
            },
            Item::NotRun {
                line: 12,
                reason: "it is the test command".into(),
                commands: vec!["scripts/test".into()]
            },
            Item::Run {
                line: 16,
                command: "sojourn results show last".into(),
                hidden: false,
                output: vec![(17, "[OVERALL], Throughput(ops/sec), 12.5".into())]
            },
            // A text block right after a command's block is its output.
            Item::Run {
                line: 19,
                command: "sojourn x".into(),
                hidden: false,
                output: vec![(22, "# liops: 1 selects".into())]
            },
        ]
    );
    // Any other text block is marked not compared, with why.
    let marked = "```sh\nsojourn x\n```\n\nprose\n<!-- not compared: why -->\n```text\n1\n```\n";
    assert_eq!(
        parse(marked).unwrap()[1],
        Item::NotCompared {
            line: 7,
            reason: "why".into()
        }
    );
    let after_prose = "```sh\nsojourn x\n```\n\nprose\n\n```text\n1\n```\n";
    assert!(parse(after_prose)
        .unwrap_err()
        .contains("line 7: a ```text block"));
    let not_run = "<!-- not run: why -->\n```sh\nsojourn x\n```\n```\nout\n```\n";
    assert_eq!(parse(not_run).unwrap().len(), 1);
    // Commands nobody would run are refused, with where they are.
    let indented = "text\n\n    sojourn run -P w\n";
    assert!(parse(indented).unwrap_err().contains("line 3"));
    let quoted = "```sh\nsojourn results query \"SELECT a,\n  b FROM t\"\nsojourn x\n```\n";
    let items = parse(quoted).unwrap();
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(matches!(&items[0], Item::Run { command, .. } if command.ends_with("b FROM t\"")));
    let in_text = "```text\nsojourn run -P w\n```\n";
    assert!(parse(in_text).unwrap_err().contains("```text block"));
    let stray = "<!-- not run: why -->\nsome text\n```sh\nsojourn x\n```\n";
    assert!(parse(stray).is_err());
}

#[test]
fn output_lines_match_in_shape_not_in_figures() {
    let shown = "[READ], 99thPercentileLatency(us), 1234";
    assert!(shape(shown).is_match("[READ], 99thPercentileLatency(us), 87"));
    assert!(!shape(shown).is_match("[UPDATE], 99thPercentileLatency(us), 87"));
    let spaced = "throughput (ops/s)   496.4  [461.2, 531.6]  +91.8%";
    assert!(shape(spaced).is_match("throughput (ops/s) 12.0    [1.5, 3.25]  +1.0%"));
    // A change may go either way from run to run; its words may not.
    assert!(shape(spaced).is_match("throughput (ops/s) 12.0 [1.5, 3.25] -1.0%"));
    assert!(!shape(spaced).is_match("throughput (ops/s) 12.0 [1.5, 3.25] -1.0% * better"));
    let id = "recorded as run 6e1af3e8-... in /data/results.sqlite";
    assert!(shape(id).is_match("recorded as run 0a9b8c7d-1234-5678 in /data/results.sqlite"));
    assert!(!shape(id).is_match("recorded as run 0a9b8c7d-1234 in another.sqlite"));
    // A word with hex letters in it is a word, not an id.
    assert!(!shape("# pgio: DBNAME:  yugabyte.").is_match("# pgio: DBNAME: yb."));
    assert!(shape("A: a646f8dc-46b8-4a01-ac7e-ef5659266866  run")
        .is_match("A: 0b1c2d3e-aaaa-1111-bbbb-000011112222 run"));
    let date = "#[StartTime: 1763723756.123 (seconds since epoch), Fri Nov 21 11:15:56 UTC 2025]";
    assert!(shape(date).is_match(
        "#[StartTime: 1795657875.759 (seconds since epoch), Thu Dec 26 01:51:15 UTC 2026]"
    ));
    assert!(!shape(date).is_match(
        "#[StartTime: 1795657875.759 (seconds since epoch), Day Nov 26 01:51:15 UTC 2026]"
    ));
    // A short integer is shown as one; a figure of four significant
    // digits may gain or lose its fraction; a sign only where shown.
    assert!(!shape("loaded 100 records").is_match("loaded 100.5 records"));
    assert!(shape("loaded 1,000 records").is_match("loaded 87 records"));
    assert!(shape("loaded 87 records").is_match("loaded 12,345 records"));
    assert!(shape("| Read | 202323 | 157.8 | 737.8 |").is_match("| Read | 111272 | 276.2 | 1356 |"));
    assert!(shape("1013  [961.0, 1066]").is_match("983.2  [920.0, 1047]"));
    assert!(!shape("p99 1.25 ms").is_match("p99 -1.25 ms"));
    assert!(!shape("p99 1.25 ms").is_match("p99 fast ms"));
    assert!(shape("version 1.2.3.").is_match("version 10.0.21."));
    assert!(!shape("version 1.2.3").is_match("version 10.0"));
    let lines = [(1, "a 1".to_string()), (2, "b 2".to_string())];
    assert_eq!(first_missing(&lines, &[], "x\na 5\n", "b 7\n"), None);
    assert_eq!(
        first_missing(&lines, &[], "b 2\na 5\n", ""),
        Some(&lines[1])
    );
    // A count the command asked for is that count, as the test scaled it.
    let doc = "sojourn load -P w -p recordcount=100000 --num_writes 5000";
    let fixed = fixed_counts(doc, &adapt(doc, &Ports(BTreeMap::new()), Path::new("/")));
    assert_eq!(fixed, [(100_000, 1000), (5000, 1000)]);
    let loaded = "[INSERT], Operations, 100000 in 0.67 s; 5,000 writes";
    assert!(
        shape_fixing(loaded, &fixed).is_match("[INSERT], Operations, 1000 in 3.5 s; 1,000 writes")
    );
    assert!(
        !shape_fixing(loaded, &fixed).is_match("[INSERT], Operations, 999 in 3.5 s; 1,000 writes")
    );
    assert!(
        !shape_fixing(loaded, &fixed).is_match("[INSERT], Operations, 10000 in 3.5 s; 1000 writes")
    );
    assert!(shape(loaded).is_match("[INSERT], Operations, 999 in 3.5 s; 1,000 writes"));
}

/// The lines that set variables run before each later command as
/// written: `export` or not matters, as in the reader's terminal.
#[test]
fn a_variable_set_without_export_stays_the_shell_s() {
    let scratch = Scratch::new(&repo_root(), &Ports(BTreeMap::new()));
    let seen = |set: &str| {
        assert!(only_sets_variables(set));
        let out = scratch
            .run(r#"echo "[$X] [$(printenv X)]""#, &[set.to_string()])
            .unwrap();
        text(&out.stdout).trim().to_string()
    };
    assert_eq!(seen("X=1"), "[1] []");
    assert_eq!(seen("export X=1 Y=2"), "[1] [1]");
    assert!(!only_sets_variables("X=1 sojourn run"));
}

#[test]
fn commands_are_scaled_and_pointed_at_the_test_servers() {
    let ports = Ports(BTreeMap::from([
        (5432, 40001),
        (5433, 40001),
        (6379, 40002),
    ]));
    let scratch = Path::new("/s");
    let a = adapt(
        "PGPASSWORD=PASSWORD sojourn load postgres://bench@127.0.0.1:5432/ycsb -P workloada \
         -p recordcount=100000 -p operationcount=500 -p maxexecutiontime=30",
        &ports,
        scratch,
    );
    assert_eq!(
        a,
        "PGPASSWORD=PASSWORD sojourn load postgres://bench@127.0.0.1:40001/ycsb -P workloada \
         -p recordcount=1000 -p operationcount=500 -p maxexecutiontime=1"
    );
    assert_eq!(
        adapt(
            "CONNECT_STRING='postgres://yugabyte:yugabyte@host:5433/yugabyte' SCALE=1000000 RUN_TIME=1000",
            &ports,
            scratch
        ),
        "CONNECT_STRING='postgres://yugabyte:yugabyte@127.0.0.1:40001/yugabyte' SCALE=4000 RUN_TIME=1"
    );
    assert_eq!(
        adapt(
            "SCALE=256M\nycsb_timelimit: 60\nnum_writes=500000,write_rate=8500",
            &ports,
            scratch
        ),
        "SCALE=4000\nycsb_timelimit: 1\nnum_writes=1000,write_rate=8500"
    );
    assert_eq!(
        adapt(
            "sojourn capacity --db redis://127.0.0.1:6379 --slo 'read.p99<1ms'",
            &ports,
            scratch
        ),
        "sojourn capacity --db redis://127.0.0.1:40002 --slo 'read.p99<1ms' --step 0.5 --settle 0.2 \
         --precision 0.2"
    );
    assert_eq!(
        adapt(
            "cargo run --release -- bench --db sqlite:/tmp/b.sqlite",
            &ports,
            scratch
        ),
        "sojourn bench --db sqlite:/s/tmp/b.sqlite"
    );
    // A server the run leaves out keeps its port, and the command is not run.
    assert_eq!(
        adapt("memcached://127.0.0.1:11211", &ports, scratch),
        "memcached://127.0.0.1:11211"
    );
    assert_eq!(
        needs_of(
            "sojourn run memcached -p memcached.hosts=127.0.0.1:11211",
            Path::new("/")
        ),
        [Need::Memcached]
    );
}
