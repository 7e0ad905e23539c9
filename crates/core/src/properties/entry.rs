//! One property's value and where it was set ([`Origin`]): a `-P` file
//! and line, `-p`, or a flag.

use std::fmt;
use std::path::PathBuf;

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
    pub(super) fn is_command_line(&self) -> bool {
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
