//! A peer tool's options read as its own `getopt_long` reads them:
//! `-x VALUE`, `-xVALUE`, `--long VALUE`, `--long=VALUE`, flags without a
//! value. An option the tool has but sojourn does not read is refused
//! naming it and the options that are read; the first argument that is
//! not an option (redis-benchmark's command) ends the options where the
//! tool says so.

use anyhow::{bail, Result};

/// One option: its letter, if it has one, its long name, whether it
/// takes a value.
#[derive(Copy, Clone, Debug)]
pub struct Opt {
    pub short: Option<char>,
    pub long: &'static str,
    pub valued: bool,
}

/// An option that takes a value.
pub const fn valued(short: Option<char>, long: &'static str) -> Opt {
    Opt {
        short,
        long,
        valued: true,
    }
}

/// An option without a value.
pub const fn flag(short: Option<char>, long: &'static str) -> Opt {
    Opt {
        short,
        long,
        valued: false,
    }
}

/// The options given, in order, each by its long name, and the arguments
/// that are not options.
#[derive(Debug)]
pub struct Read {
    pub options: Vec<(&'static str, Option<String>)>,
    pub rest: Vec<String>,
}

/// Read `args` for `tool`. With `rest_from_first`, the first argument that
/// is not an option and everything after it are `rest` (redis-benchmark's
/// command); otherwise such arguments are refused.
pub fn read(tool: &str, args: &[String], opts: &[Opt], rest_from_first: bool) -> Result<Read> {
    let list = || {
        opts.iter()
            .map(|o| match o.short {
                Some(c) => format!("-{c}/--{}", o.long),
                None => format!("--{}", o.long),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Read {
        options: Vec::new(),
        rest: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let (opt, inline) = if let Some(long) = a.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(o) = opts.iter().find(|o| o.long == name) else {
                bail!(
                    "{tool} option --{name} is not one sojourn reads; it reads {}",
                    list()
                );
            };
            (o, inline)
        } else if let Some(short) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            let c = short.chars().next().unwrap_or('-');
            let rest = &short[c.len_utf8()..];
            let Some(o) = opts.iter().find(|o| o.short == Some(c)) else {
                bail!(
                    "{tool} option -{c} is not one sojourn reads; it reads {}",
                    list()
                );
            };
            if !o.valued && !rest.is_empty() {
                bail!("{tool} option -{c} takes no value (in {a})");
            }
            (o, (!rest.is_empty()).then(|| rest.to_string()))
        } else if rest_from_first {
            out.rest = args[i - 1..].to_vec();
            break;
        } else {
            bail!("{tool} takes no argument {a:?} outside its options");
        };
        let value = match (opt.valued, inline) {
            (true, Some(v)) => Some(v),
            (true, None) => {
                let Some(v) = args.get(i) else {
                    bail!("{tool} option --{} needs a value", opt.long);
                };
                i += 1;
                Some(v.clone())
            }
            (false, Some(_)) => bail!("{tool} option --{} takes no value", opt.long),
            (false, None) => None,
        };
        out.options.push((opt.long, value));
    }
    Ok(out)
}

/// Print what `--help` says for a peer tool's command line: what it is,
/// the options read, where the rest is said. (A reader that stops reading,
/// `| head`, is no error.)
pub fn print_help(command: &str, what: &str, opts: &[Opt]) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", help(command, what, opts));
}

fn help(command: &str, what: &str, opts: &[Opt]) -> String {
    let list: Vec<String> = opts
        .iter()
        .map(|o| {
            let value = if o.valued { " VALUE" } else { "" };
            match o.short {
                Some(c) => format!("  -{c}, --{}{value}", o.long),
                None => format!("      --{}{value}", o.long),
            }
        })
        .collect();
    format!(
        "Usage: sojourn {command} [OPTIONS]\n\n{what}\n\nOptions read (any other is refused, \
         naming it):\n{}\n\nSee docs/commands.md.",
        list.join("\n")
    )
}

/// Whether `args` ask for help: `--help` before any argument that is not
/// an option.
pub fn asks_help(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| a.starts_with('-'))
        .any(|a| a == "--help")
}

/// `value` as a number of the kind `T`, or an error naming the option.
pub fn number<T: std::str::FromStr>(tool: &str, option: &str, value: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("{tool} option --{option}: {value:?} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: &[Opt] = &[
        valued(Some('n'), "requests"),
        flag(Some('q'), "quiet"),
        valued(None, "ratio"),
    ];

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn getopt_s_forms() {
        let r = read(
            "t",
            &args("-n 5 -n6 --ratio=1:2 --ratio 3:4 -q"),
            OPTS,
            false,
        )
        .unwrap();
        let got: Vec<(&str, Option<&str>)> =
            r.options.iter().map(|(k, v)| (*k, v.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("requests", Some("5")),
                ("requests", Some("6")),
                ("ratio", Some("1:2")),
                ("ratio", Some("3:4")),
                ("quiet", None)
            ]
        );
        let r = read("t", &args("-q SET k v -n 3"), OPTS, true).unwrap();
        assert_eq!(r.rest, ["SET", "k", "v", "-n", "3"]);
    }

    #[test]
    fn refusals_name_the_option() {
        let e = read("t", &args("--nope 1"), OPTS, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--nope is not one sojourn reads") && e.contains("-n/--requests"));
        assert!(read("t", &args("-x"), OPTS, false).is_err());
        assert!(read("t", &args("-qx"), OPTS, false).is_err());
        assert!(read("t", &args("-n"), OPTS, false)
            .unwrap_err()
            .to_string()
            .contains("needs a value"));
        assert!(read("t", &args("SET"), OPTS, false).is_err());
        assert!(number::<u32>("t", "requests", "x").is_err());
    }
}
