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

mod entry;
mod error;
mod names;
mod parse;
mod shell;
mod values;

#[cfg(test)]
mod tests;

pub use entry::{Entry, Origin};
pub use error::{printable, PropertyError, UnknownKey};
pub use names::{
    CLIENT_PROPERTIES, CORE_PROPERTIES, CORE_PROPERTY_PREFIXES, CORE_WORKLOAD_PROPERTIES,
};
use values::*;

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::path::Path;

use crate::redact;

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
