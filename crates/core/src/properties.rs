//! YCSB-style configuration: the merged `key=value` properties from `-P`
//! files, `-p` arguments and flags, each remembering where it came from.
//!
//! Everything downstream reads its settings through [`Properties`], so this
//! module owns two promises. First, precedence matches YCSB: files are merged
//! in order and a later file wins, while `-p` arguments and flags win over
//! every file whatever order they were given in. Second, no bad value goes
//! unexplained: a typed getter that rejects a value returns a
//! [`PropertyError`] naming where the value was set (`path:line`, `-p`, a
//! flag), the key, the value and what would have been accepted, and
//! [`Properties::unknown_keys`] catches misspelt names that YCSB would
//! silently ignore.
//!
//! Where YCSB's Java parsing is lax in ways that hide mistakes (anything but
//! `true` is `false`; `Integer.parseInt` fails with a bare stack trace), we
//! are stricter and say so; where files in the wild depend on the Java
//! format, we follow it (the `parse` submodule owns the file format).
//!
//! A `-P` file may also be PGIO's `pgio.conf`, shell assignments that PGIO
//! sources (the `shell` submodule reads them). Which format a file is, is
//! told by its name (`pgio.conf`) or its content ([`FileFormat::of`]);
//! either way it gives the same entries, each with its line.

mod parse;
mod shell;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};

use crate::redact;

/// Every property name YCSB's client, core workload and measurements read,
/// plus sojourn's own. Used to warn about names that are none of these.
pub const CORE_PROPERTIES: &[&str] = &[
    // CoreWorkload: record shape
    "table",
    "fieldcount",
    "fieldnameprefix",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "fieldlengthhistogram",
    // counts and key naming
    "recordcount",
    "operationcount",
    "insertstart",
    "insertcount",
    "zeropadding",
    "insertorder",
    // operation mix
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    // fields
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "dataintegrity",
    // distributions
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
    // Client
    "workload",
    "db",
    "exporter",
    "exportfile",
    "threadcount",
    "target",
    "maxexecutiontime",
    "dotransactions",
    "status",
    "status.interval",
    "label",
    "debug",
    // measurements
    "measurementtype",
    "measurement.interval",
    "measurement.trackjvm",
    "measurement.histogram.verbose",
    "measurement.raw.output_file",
    "measurement.raw.no_summary",
    "histogram.buckets",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "hdrhistogram.output.path",
    "timeseries.granularity",
    "reportlatencyforeacherror",
    "latencytrackederrors",
    // sojourn
    "seed",
    "warmup",
    "arrival",
    "dropdata",
    "timeout.ms",
];

/// Prefixes under which YCSB passes whole families of settings through
/// (`htrace.*` configures its tracer), so any name under them is expected.
pub const CORE_PROPERTY_PREFIXES: &[&str] = &["htrace."];

/// Where a property's value was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A `-P` file, with the line the entry starts on (1-based).
    File { path: PathBuf, line: usize },
    /// A `-p key=value` argument.
    CommandLine,
    /// A dedicated flag, such as `--threads`, that sets a property.
    Flag(&'static str),
    /// Set by sojourn itself as a default.
    Default,
}

impl Origin {
    /// Whether the user chose this value on the command line; those values
    /// are never overridden by a `-P` file.
    fn is_command_line(&self) -> bool {
        matches!(self, Origin::CommandLine | Origin::Flag(_))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::CommandLine => f.write_str("-p on the command line"),
            Origin::Flag(flag) => f.write_str(flag),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// One property's value and where it was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub value: String,
    pub origin: Origin,
}

/// A property name that nothing reads, found by [`Properties::unknown_keys`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKey {
    pub key: String,
    pub origin: Origin,
    /// The closest known name, when one is close enough to be a likely typo.
    pub suggestion: Option<String>,
}

impl fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: unknown property '{}'",
            self.origin,
            printable(&self.key)
        )?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " (did you mean '{suggestion}'?)")?;
        }
        Ok(())
    }
}

/// Why properties could not be read or a value could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PropertyError {
    // The OS's reason is in the message, not a source too: a chain
    // printer would say it twice.
    #[error("cannot read properties file {}: {reason}", path.display())]
    Read {
        path: PathBuf,
        reason: std::io::Error,
    },
    #[error("{}:{line}: {problem}: {}", path.display(), printable(.text))]
    Syntax {
        path: PathBuf,
        line: usize,
        problem: String,
        /// The offending physical line, as written.
        text: String,
    },
    // Origins are boxed to keep `Result<_, PropertyError>` small on the
    // success path, which every typed getter returns.
    #[error("{origin}: {} = '{}' {problem}; accepted: {accepted}", printable(.key), printable(.value))]
    Invalid {
        origin: Box<Origin>,
        key: String,
        value: String,
        problem: String,
        accepted: String,
    },
    #[error(
        "-p '{}' {problem}; the accepted form is -p key=value (for example -p recordcount=1000)",
        printable(.arg)
    )]
    Argument { arg: String, problem: String },
    /// A file a property names, wrong where the message says
    /// (`FILE:LINE: ...`): a script's.
    #[error("{0}")]
    File(String),
    /// A value that is well-formed on its own but unusable, e.g. in
    /// combination with another property; `value` is `None` when the key was
    /// not set at all.
    #[error("{origin}: {}{}: {message}", printable(.key), show_value(.value))]
    Rejected {
        origin: Box<Origin>,
        key: String,
        value: Option<String>,
        message: String,
    },
}

fn show_value(value: &Option<String>) -> String {
    match value {
        Some(value) => format!(" = '{}'", printable(value)),
        None => " (not set)".to_string(),
    }
}

/// What a user typed, fit to echo in a message: control characters
/// escaped (a stray escape sequence must not reach the terminal) and a
/// very long text cut (a 4 MB key is not worth 4 MB of error).
pub fn printable(s: &str) -> String {
    const LONGEST: usize = 120;
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == LONGEST {
            out.push_str(&format!("… ({} characters in all)", s.chars().count()));
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

const ACCEPT_U64: &str = "a whole number from 0 to 18446744073709551615, e.g. 1000 or 1_000";
const ACCEPT_I64: &str =
    "a whole number from -9223372036854775808 to 9223372036854775807, e.g. -5 or 1_000";
const ACCEPT_F64: &str = "a finite decimal number, e.g. 0.95, 100 or 1e6";
const ACCEPT_BOOL: &str = "true or false (any case)";
const ACCEPT_F64_LIST: &str = "a comma-separated list of finite numbers, e.g. 95,99,99.9";

/// How a `-P` file is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// Java's `.properties`, as YCSB reads workload files.
    Java,
    /// Shell assignments, as PGIO sources its `pgio.conf`.
    Shell,
}

impl FileFormat {
    /// The format of `text` read from `path`: shell when the file is named
    /// `pgio.conf` (or `...pgio.conf`), when a line starts with `export
    /// NAME` or holds several `NAME=` words, or when the whole text reads
    /// as shell assignments and uses quotes, `;` or an expansion, which
    /// Java would keep as part of the values; Java otherwise, so every
    /// YCSB workload file reads as it always has.
    pub fn of(text: &str, path: &Path) -> FileFormat {
        let named = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("pgio.conf"));
        if named || shell::unmistakably_shell(text) {
            return FileFormat::Shell;
        }
        match shell::parse(text, path) {
            Ok(file) if file.shell_syntax => FileFormat::Shell,
            _ => FileFormat::Java,
        }
    }
}

/// Below this normalized Damerau-Levenshtein similarity a known name is
/// more likely a different word than a typo, and suggesting it would mislead.
/// 0.7 keeps one or two slips in a ten-letter name and rejects names that
/// merely share a few letters.
const SUGGEST_SIMILARITY: f64 = 0.7;

/// The merged properties; for each key the last value set wins, except that
/// a `-P` file never overrides a command-line value (see
/// [`Properties::load_str`]).
#[derive(Clone, Debug, Default)]
pub struct Properties {
    entries: BTreeMap<String, Entry>,
}

impl Properties {
    pub fn new() -> Self {
        Self::default()
    }

    /// Merges a `-P` file ([`Properties::read_file`], then
    /// [`Properties::merge`]).
    pub fn load_file(&mut self, path: &Path) -> Result<(), PropertyError> {
        let file = Properties::read_file(path)?;
        self.merge(file);
        Ok(())
    }

    /// Merges `text` as if read from `path` ([`Properties::read_str`], then
    /// [`Properties::merge`]). Nothing is merged if the text has a syntax
    /// error.
    pub fn load_str(&mut self, text: &str, path: &Path) -> Result<(), PropertyError> {
        let file = Properties::read_str(text, path)?;
        self.merge(file);
        Ok(())
    }

    /// One `-P` file's own properties, not yet merged. The file is read as
    /// UTF-8, or, if it is not valid UTF-8, as ISO-8859-1 (Latin-1): that
    /// is the encoding Java's `Properties.load` assumes, so files written
    /// for YCSB with accented characters still read as their authors meant.
    pub fn read_file(path: &Path) -> Result<Properties, PropertyError> {
        let bytes = std::fs::read(path).map_err(|reason| PropertyError::Read {
            path: path.to_path_buf(),
            reason,
        })?;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => err.into_bytes().iter().map(|&b| char::from(b)).collect(),
        };
        Properties::read_str(&text, path)
    }

    /// The properties of `text` as if read from `path` (which names the
    /// entries' origins and tells a `pgio.conf`, see [`FileFormat::of`]).
    /// A later entry for a key wins over an earlier one.
    pub fn read_str(text: &str, path: &Path) -> Result<Properties, PropertyError> {
        let parsed = match FileFormat::of(text, path) {
            FileFormat::Java => parse::parse(text, path)?,
            FileFormat::Shell => shell::parse(text, path)?.entries,
        };
        let mut file = Properties::new();
        for p in parsed {
            let origin = Origin::File {
                path: path.to_path_buf(),
                line: p.line,
            };
            file.set(&p.key, &p.value, origin);
        }
        Ok(file)
    }

    /// Merges a file's properties ([`Properties::read_file`]): its entries
    /// win over earlier files', while values set by `-p` or a flag are
    /// kept, because YCSB applies the command line after all files
    /// whatever order the arguments came in.
    pub fn merge(&mut self, file: Properties) {
        for (key, entry) in file.entries {
            if self
                .entries
                .get(&key)
                .is_some_and(|e| e.origin.is_command_line())
            {
                continue;
            }
            self.entries.insert(key, entry);
        }
    }

    /// Sets a value unconditionally.
    pub fn set(&mut self, key: &str, value: &str, origin: Origin) {
        self.entries.insert(
            key.to_string(),
            Entry {
                value: value.to_string(),
                origin,
            },
        );
    }

    /// Applies one `-p key=value` argument. The key is split at the first
    /// `=`, so values may contain `=`; the key is trimmed, the value kept
    /// verbatim since the shell already delimited it.
    pub fn set_arg(&mut self, arg: &str) -> Result<(), PropertyError> {
        let problem = |problem: &str| PropertyError::Argument {
            arg: arg.to_string(),
            problem: problem.to_string(),
        };
        let Some((key, value)) = arg.split_once('=') else {
            return Err(problem("has no '='"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(problem("has no property name before '='"));
        }
        self.set(key, value, Origin::CommandLine);
        Ok(())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|entry| entry.value.as_str())
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// All properties, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries
            .iter()
            .map(|(key, entry)| (key.as_str(), entry))
    }

    pub fn remove(&mut self, key: &str) -> Option<Entry> {
        self.entries.remove(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A whole number that must not be negative, such as a count. Blanks
    /// around it and `_` between digits are allowed.
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, PropertyError> {
        self.typed(key, default, ACCEPT_U64, parse_u64)
    }

    /// A whole number in `range`, for a key whose values have one: both a
    /// value out of it and one that is not a whole number are refused
    /// naming that range (`UPDATE_PCT` says "0 to 100", not the range of
    /// every number).
    pub fn get_u64_in(
        &self,
        key: &str,
        default: u64,
        range: impl RangeBounds<u64>,
    ) -> Result<u64, PropertyError> {
        let lo = match range.start_bound() {
            Bound::Included(&n) => n,
            Bound::Excluded(&n) => n.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let hi = match range.end_bound() {
            Bound::Included(&n) => n,
            Bound::Excluded(&n) => n.saturating_sub(1),
            Bound::Unbounded => u64::MAX,
        };
        let accepted = if hi == u64::MAX {
            format!("a whole number of at least {lo}")
        } else {
            format!("a whole number from {lo} to {hi}")
        };
        self.typed(key, default, &accepted, |raw| match parse_u64(raw) {
            Ok(n) if n < lo => Err(format!("is below {lo}")),
            Ok(n) if n > hi => Err(format!("is above {hi}")),
            Ok(n) => Ok(n),
            Err(problem) if problem == NEGATIVE && lo > 0 => Err(format!("is below {lo}")),
            Err(problem) if problem == TOO_LARGE => Err(format!("is above {hi}")),
            Err(problem) => Err(problem),
        })
    }

    pub fn get_i64(&self, key: &str, default: i64) -> Result<i64, PropertyError> {
        self.typed(key, default, ACCEPT_I64, parse_i64)
    }

    /// A finite number. Also accepts Java's `d`/`f` suffixes (`0.5d`), which
    /// `Double.parseDouble` allows and so old files may contain.
    pub fn get_f64(&self, key: &str, default: f64) -> Result<f64, PropertyError> {
        self.typed(key, default, ACCEPT_F64, parse_f64)
    }

    /// `true` or `false` in any case. Java reads anything else as `false`,
    /// which turns `readallfields=yes` into the opposite of what was meant,
    /// so other values are an error here.
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, PropertyError> {
        self.typed(key, default, ACCEPT_BOOL, |raw| {
            let s = raw.trim();
            if s.eq_ignore_ascii_case("true") {
                Ok(true)
            } else if s.eq_ignore_ascii_case("false") {
                Ok(false)
            } else {
                Err("is not a boolean".to_string())
            }
        })
    }

    pub fn get_str<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    /// One of `accepted`, matched ignoring case and surrounding blanks;
    /// returns the spelling from `accepted` so callers can compare exactly.
    /// An absent key returns `default` as given.
    pub fn get_choice<'a>(
        &'a self,
        key: &str,
        default: &'a str,
        accepted: &[&'a str],
    ) -> Result<&'a str, PropertyError> {
        let Some(entry) = self.entries.get(key) else {
            return Ok(default);
        };
        let wanted = entry.value.trim();
        accepted
            .iter()
            .find(|choice| choice.eq_ignore_ascii_case(wanted))
            .copied()
            .ok_or_else(|| {
                let problem = if wanted.is_empty() {
                    "is empty".to_string()
                } else {
                    "is not one of the accepted values".to_string()
                };
                invalid_value(key, entry, problem, accepted.join(", "))
            })
    }

    /// A comma-separated list of finite numbers, such as
    /// `hdrhistogram.percentiles=95,99`.
    pub fn get_f64_list(&self, key: &str, default: &[f64]) -> Result<Vec<f64>, PropertyError> {
        let Some(entry) = self.entries.get(key) else {
            return Ok(default.to_vec());
        };
        if entry.value.trim().is_empty() {
            return Err(invalid_value(
                key,
                entry,
                "is empty".into(),
                ACCEPT_F64_LIST.into(),
            ));
        }
        entry
            .value
            .split(',')
            .map(|item| {
                parse_f64(item).map_err(|problem| {
                    let problem = if item.trim().is_empty() {
                        "has an empty item".to_string()
                    } else {
                        format!("has an item '{}' that {problem}", item.trim())
                    };
                    invalid_value(key, entry, problem, ACCEPT_F64_LIST.into())
                })
            })
            .collect()
    }

    /// Keys that are neither in `known` nor under one of `known_prefixes`,
    /// sorted by key, each with the closest known name when it is close
    /// enough to be a likely typo (compared ignoring case).
    pub fn unknown_keys(&self, known: &[&str], known_prefixes: &[&str]) -> Vec<UnknownKey> {
        self.entries
            .iter()
            .filter(|(key, _)| {
                !known.contains(&key.as_str())
                    && !known_prefixes.iter().any(|prefix| key.starts_with(prefix))
            })
            .map(|(key, entry)| UnknownKey {
                key: key.clone(),
                origin: entry.origin.clone(),
                suggestion: nearest(key, known),
            })
            .collect()
    }

    /// An error about `key`'s value that no single typed getter can see, such
    /// as a conflict with another property. Names where the value was set,
    /// or that it was not set; to name other properties involved, include
    /// [`Properties::describe`] of them in `message`.
    pub fn invalid(&self, key: &str, message: impl Into<String>) -> PropertyError {
        let entry = self.entries.get(key);
        PropertyError::Rejected {
            origin: Box::new(entry.map_or(Origin::Default, |entry| entry.origin.clone())),
            key: key.to_string(),
            value: entry.map(|entry| redact::property_value(key, &entry.value)),
            message: message.into(),
        }
    }

    /// `key = 'value' (origin)`, or `key (not set)`: for messages that
    /// mention several properties.
    pub fn describe(&self, key: &str) -> String {
        match self.entries.get(key) {
            Some(entry) => format!(
                "{key} = '{}' ({})",
                redact::property_value(key, &entry.value),
                entry.origin
            ),
            None => format!("{key} (not set)"),
        }
    }

    fn typed<T>(
        &self,
        key: &str,
        default: T,
        accepted: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, PropertyError> {
        match self.entries.get(key) {
            None => Ok(default),
            Some(entry) => parse(&entry.value)
                .map_err(|problem| invalid_value(key, entry, problem, accepted.to_string())),
        }
    }
}

fn invalid_value(key: &str, entry: &Entry, mut problem: String, accepted: String) -> PropertyError {
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

fn nearest(key: &str, known: &[&str]) -> Option<String> {
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
fn strip_separators(s: &str) -> Option<String> {
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
fn split_integer(raw: &str) -> Result<(bool, String), String> {
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

const NEGATIVE: &str = "must not be negative";
const TOO_LARGE: &str = "is too large";

fn parse_u64(raw: &str) -> Result<u64, String> {
    let (negative, digits) = split_integer(raw)?;
    if negative && digits.bytes().any(|b| b != b'0') {
        return Err(NEGATIVE.into());
    }
    digits.parse().map_err(|_| TOO_LARGE.into())
}

fn parse_i64(raw: &str) -> Result<i64, String> {
    let (negative, digits) = split_integer(raw)?;
    let signed = if negative {
        format!("-{digits}")
    } else {
        digits
    };
    signed.parse().map_err(|_| "is out of range".into())
}

fn parse_f64(raw: &str) -> Result<f64, String> {
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

/// Properties as `-p KEY=VALUE` on the command line would give them, for
/// the core's own tests.
#[cfg(test)]
pub(crate) fn command_line(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.set(k, v, Origin::CommandLine);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_only_between_digits() {
        assert_eq!(strip_separators("1_000").as_deref(), Some("1000"));
        assert_eq!(strip_separators("_1"), None);
        assert_eq!(strip_separators("1_"), None);
        assert_eq!(strip_separators("1__0"), None);
        assert_eq!(strip_separators("-_1"), None);
    }

    #[test]
    fn core_properties_are_unique() {
        let mut names = CORE_PROPERTIES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CORE_PROPERTIES.len());
    }

    #[test]
    fn messages_echo_input_printably_and_briefly() {
        let mut p = Properties::new();
        p.set("record\x1b[31mcount", "x", Origin::CommandLine);
        let huge = "k".repeat(4 << 20);
        p.set(&huge, "1", Origin::CommandLine);
        p.set("recordcount", "1\x07", Origin::CommandLine);
        let unknown: Vec<String> = p
            .unknown_keys(&["recordcount"], &[])
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(unknown.len(), 2);
        for u in &unknown {
            assert!(!u.chars().any(|c| c.is_control()), "{u:?}");
            assert!(u.len() < 400, "{} bytes", u.len());
        }
        assert!(unknown.iter().any(|u| u.contains("record\\u{1b}[31mcount")));
        assert!(unknown
            .iter()
            .any(|u| u.contains("4194304 characters in all")));
        let e = p.get_u64("recordcount", 0).unwrap_err().to_string();
        assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
        assert!(e.contains("1\\u{7}"), "{e}");
    }
}
