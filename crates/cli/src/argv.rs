//! The command line as typed, made ready for clap: YCSB's one-dash long
//! options, and yb-sample-apps' flags that sojourn does not read marked to
//! be refused by name.

use std::ffi::OsString;

/// YCSB writes long options with one dash. Rewrite exactly those so clap
/// sees its usual forms; anything else is left for clap to judge.
pub fn normalise_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args
        .into_iter()
        .map(|a| match a.to_str() {
            Some("-threads") => "--threads".into(),
            Some("-target") => "--target".into(),
            Some("-db") => "--db".into(),
            Some("-seed") => "--seed".into(),
            _ => a,
        })
        .collect();
    // yb-sample-apps' flags that are not read, to be refused by name.
    crate::compat::ybapps::mark_unread_flags(args)
}
