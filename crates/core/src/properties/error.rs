//! What goes wrong with properties: a value a getter rejects or a name
//! nothing reads ([`PropertyError`], [`UnknownKey`]), worded to name where
//! the value was set and what would have been accepted.

use std::fmt;
use std::path::PathBuf;

use super::entry::Origin;

/// A property name that nothing reads, found by `Properties::unknown_keys`.
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
