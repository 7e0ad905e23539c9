//! What a PGIO `pgio.conf` means beyond the LIOPS workload's settings:
//! that a workload file holding PGIO's keys is a LIOPS workload (and holds
//! no other workload's keys), and which database its `CONNECT_STRING` and
//! `DBNAME` name, and that such a file runs PGIO's in-server loop
//! (`liops.loop=server`) unless it says otherwise. The file format itself is the properties module's; the
//! settings are [`LiopsConfig`](super::liops::LiopsConfig)'s.

use std::fmt::Write;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::properties::{Origin, Properties, PropertyError, CORE_WORKLOAD_PROPERTIES};
use crate::redact;

use super::kind::Kind;
use super::liops::{LiopsConfig, LIOPS_PROPERTIES};

/// The settings of PGIO's `pgio.conf`, as PGIO names them: the LIOPS
/// workload's property names but sojourn's own `liops.*`.
pub fn pgio_keys() -> impl Iterator<Item = &'static str> {
    LIOPS_PROPERTIES
        .iter()
        .copied()
        .filter(|k| !k.starts_with("liops."))
}

/// Whose setting `key` is when it is another workload's, not LIOPS's.
fn other_workload(key: &str) -> Option<String> {
    if key == "threadcount" {
        return Some(
            "YCSB's client (-threads), which a LIOPS workload replaces by NUM_THREADS sessions \
             per table"
                .into(),
        );
    }
    // YCSB's client properties are every workload's, and a LIOPS workload
    // reads `operationcount` too (`workloads/liops` sets it).
    if CORE_WORKLOAD_PROPERTIES.contains(&key) && key != "operationcount" {
        return Some("YCSB's core workload, which a LIOPS workload does not read".into());
    }
    super::kind_properties()
        .filter(|(name, _, _)| *name != LiopsConfig::NAME)
        .find(|(_, _, props)| props.contains(&key))
        .map(|(name, title, _)| format!("{title} (workload={name})"))
}

/// Entries of `file` in file order (by line, then key).
fn in_file_order(file: &Properties) -> Vec<(&str, &Origin)> {
    let mut all: Vec<(&str, &Origin)> = file.iter().map(|(k, e)| (k, &e.origin)).collect();
    all.sort_by_key(|(k, origin)| {
        let line = match origin {
            Origin::File { line, .. } => *line,
            _ => 0,
        };
        (line, *k)
    });
    all
}

/// Merges one `-P` file's properties ([`Properties::read_file`]) into
/// `props` as a workload file. A file holding the LIOPS workload's keys
/// (PGIO's `UPDATE_PCT`, `SCALE`, ...) is a LIOPS workload: it selects
/// `workload=liops` when nothing has chosen a workload, and holding another
/// workload's keys or naming another workload too is an error naming both
/// keys and where they are.
pub fn merge_file(props: &mut Properties, file: Properties) -> Result<(), PropertyError> {
    let order = in_file_order(&file);
    let liops = order
        .iter()
        .find(|(k, _)| LIOPS_PROPERTIES.contains(k))
        .map(|(k, origin)| (k.to_string(), (*origin).clone()));
    if let Some((pgio_key, pgio_origin)) = &liops {
        let because = format!(
            "this file also holds {pgio_key} ({pgio_origin}), a setting of PGIO's pgio.conf, \
             which makes it a LIOPS workload (workload=liops); a workload file is one \
             workload's: keep PGIO's settings ({}) apart from other workloads'",
            pgio_keys().collect::<Vec<_>>().join(", ")
        );
        if let Some(w) = file.entry("workload") {
            if !w.value.trim().eq_ignore_ascii_case("liops") {
                return Err(file.invalid(
                    "workload",
                    format!("selects another workload than LIOPS, but {because}"),
                ));
            }
        }
        if let Some((key, whose)) = order
            .iter()
            .find_map(|(k, _)| other_workload(k).map(|whose| (*k, whose)))
        {
            return Err(file.invalid(key, format!("is a setting of {whose}, and {because}")));
        }
    }
    let sets_loop = file.contains("liops.loop");
    props.merge(file);
    if let Some((_, origin)) = liops {
        if !props.contains("workload") {
            props.set("workload", "liops", origin.clone());
        }
        // PGIO runs each session's loop in the server, so that is what a
        // PGIO user measures: a file of its keys does the same unless it
        // says otherwise (`workloads/liops` says client). A later file or
        // `-p` still wins.
        if !sets_loop && !props.contains("liops.loop") {
            props.set("liops.loop", "server", origin);
        }
    }
    Ok(())
}

/// The database a `pgio.conf` names.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectString {
    /// `CONNECT_STRING` as a URL (may hold a password: redact before
    /// printing).
    pub url: String,
    /// Where `CONNECT_STRING` was set.
    pub origin: Origin,
    /// Where `DBNAME` was set, when it gave the database name the connect
    /// string lacked.
    pub dbname_from: Option<Origin>,
}

/// What percent-encoding leaves alone in a URL's user, password and
/// database name: RFC 3986's unreserved characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn encode(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// `CONNECT_STRING` as a database URL, `DBNAME` filling in the database
/// name it lacks; `None` when it is not set. PGIO passes it to `psql`, so
/// it may be a URL (`postgres://user:password@host:5432/db`) or a libpq
/// keyword string (`host=h port=5432 user=u password=p dbname=db`); other
/// `psql` arguments (`-h host pgio`, a bare database name) are refused,
/// saying which forms are read.
pub fn connect_url(p: &Properties) -> Result<Option<ConnectString>, PropertyError> {
    let Some(entry) = p.entry("CONNECT_STRING") else {
        return Ok(None);
    };
    let raw = entry.value.trim();
    let dbname = p
        .get("DBNAME")
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| (d, p.entry("DBNAME").map(|e| e.origin.clone())));
    const FORMS: &str = "sojourn reads a URL (postgres://user:password@host:5432/db) or a libpq \
                         keyword string (host=h port=5432 user=u password=p dbname=db); or give \
                         the database with --db";
    let (url, filled) = if raw.contains("://") {
        from_url(raw, dbname.as_ref().map(|(d, _)| *d))
    } else if raw.contains('=') {
        let pairs = keywords(raw).map_err(|problem| {
            p.invalid(
                "CONNECT_STRING",
                format!("is not a libpq keyword string: {problem}; {FORMS}"),
            )
        })?;
        from_keywords(&pairs, dbname.as_ref().map(|(d, _)| *d))
            .map_err(|problem| p.invalid("CONNECT_STRING", format!("{problem}; {FORMS}")))?
    } else {
        return Err(p.invalid(
            "CONNECT_STRING",
            format!(
                "is neither a URL nor a keyword string (PGIO hands it to psql as its \
                 arguments, which sojourn does not run); {FORMS}"
            ),
        ));
    };
    Ok(Some(ConnectString {
        url,
        origin: entry.origin.clone(),
        dbname_from: if filled {
            dbname.and_then(|(_, origin)| origin)
        } else {
            None
        },
    }))
}

/// `url` with `dbname` as its path when it has none; and whether it was
/// filled in.
fn from_url(url: &str, dbname: Option<&str>) -> (String, bool) {
    let (head, rest) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let authority_start = head.find("://").map_or(0, |i| i + 3);
    let after = &head[authority_start..];
    // The password may hold `/` or `@`: the host starts after the last `@`.
    let host_start = after.rfind('@').map_or(0, |i| i + 1);
    let has_db = after[host_start..]
        .find('/')
        .is_some_and(|i| !after[host_start + i + 1..].trim_matches('/').is_empty());
    match dbname {
        Some(db) if !has_db => {
            let base = head.trim_end_matches('/');
            (format!("{base}/{}{rest}", encode(db)), true)
        }
        _ => (url.to_string(), false),
    }
}

/// A libpq keyword string's `key = value` pairs: values unquoted up to a
/// blank, or in single quotes, `\` escaping the next character in both.
fn keywords(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut chars = s.chars().peekable();
    let mut pairs = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("'{key}' has no '=' after it"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(format!("the quoted value of {key} is never closed")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

/// The URL of a keyword string's pairs; whether `dbname` filled in its
/// database. Keywords other than the address, user, password and database
/// go to the URL's query, where the driver reads libpq's own names.
fn from_keywords(
    pairs: &[(String, String)],
    dbname: Option<&str>,
) -> Result<(String, bool), String> {
    let get = |k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    };
    let mut query = Vec::new();
    let hosts = get("host").or(get("hostaddr")).unwrap_or("localhost");
    let hosts: Vec<&str> = hosts.split(',').collect();
    let ports: Vec<&str> = get("port").map_or(Vec::new(), |p| p.split(',').collect());
    if ports.len() > 1 && ports.len() != hosts.len() {
        return Err(format!(
            "{} hosts and {} ports: give one port, or one for each host",
            hosts.len(),
            ports.len()
        ));
    }
    let mut authority = String::new();
    for (i, host) in hosts.iter().enumerate() {
        if i > 0 {
            authority.push(',');
        }
        if host.starts_with('/') {
            // A Unix socket's folder: the driver reads it from the query.
            query.push(format!("host={}", encode(host)));
            continue;
        }
        if host.contains(':') {
            let _ = write!(authority, "[{host}]");
        } else {
            authority.push_str(host);
        }
        if let Some(port) = ports.get(i).or(ports.first()) {
            if !port.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!("port '{port}' is not a number"));
            }
            let _ = write!(authority, ":{port}");
        }
    }
    let mut url = String::from("postgres://");
    if let Some(user) = get("user") {
        url.push_str(&encode(user));
        if let Some(password) = get("password") {
            let _ = write!(url, ":{}", encode(password));
        }
        url.push('@');
    } else if get("password").is_some() {
        return Err("has a password but no user".to_string());
    }
    url.push_str(&authority);
    let (db, filled) = match (get("dbname"), dbname) {
        (Some(db), _) => (Some(db), false),
        (None, Some(db)) => (Some(db), true),
        (None, None) => (None, false),
    };
    if let Some(db) = db {
        let _ = write!(url, "/{}", encode(db));
    }
    for (key, value) in pairs {
        if !["host", "hostaddr", "port", "user", "password", "dbname"].contains(&key.as_str()) {
            query.push(format!("{}={}", encode(key), encode(value)));
        }
    }
    if !query.is_empty() {
        let _ = write!(url, "?{}", query.join("&"));
    }
    Ok((url, filled))
}

/// The note a command prints on stderr about which database it uses when
/// a workload file names one in `CONNECT_STRING`: the URL (password
/// hidden) and where it came from.
pub fn database_note(chosen: &str, flag: Option<&str>, connect: &ConnectString) -> String {
    let url = redact::redact_url(chosen);
    match flag {
        Some(flag) => format!(
            "database: {url} from {flag}, which wins over CONNECT_STRING ({})",
            connect.origin
        ),
        None => {
            let mut note = format!("database: {url} from CONNECT_STRING ({})", connect.origin);
            if let Some(origin) = &connect.dbname_from {
                let _ = write!(note, ", its database name from DBNAME ({origin})");
            }
            note
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file(text: &str) -> Properties {
        Properties::read_str(text, Path::new("pgio.conf")).unwrap()
    }

    fn merged(text: &str) -> Result<Properties, PropertyError> {
        let mut p = Properties::new();
        merge_file(&mut p, file(text)).map(|()| p)
    }

    #[test]
    fn a_file_of_pgio_keys_selects_liops() {
        let p = merged("UPDATE_PCT=0 SCALE=1000").unwrap();
        assert_eq!(p.get("workload"), Some("liops"));
        assert_eq!(
            p.entry("workload").unwrap().origin.to_string(),
            "pgio.conf:1"
        );
        // A workload chosen already stays.
        let mut p = Properties::new();
        p.set("workload", "core", Origin::CommandLine);
        merge_file(&mut p, file("SCALE=1000")).unwrap();
        assert_eq!(p.get("workload"), Some("core"));
        // Other files are left alone.
        let p = merged("recordcount=10\n").unwrap();
        assert_eq!(p.get("workload"), None);
        // The shipped file's client settings are LIOPS's too.
        merged("workload=liops\nUPDATE_PCT=0\noperationcount=0\nmaxexecutiontime=5\n").unwrap();
    }

    #[test]
    fn a_pgio_file_runs_the_server_loop_unless_it_says_otherwise() {
        let p = merged("UPDATE_PCT=0 SCALE=1000").unwrap();
        assert_eq!(p.get("liops.loop"), Some("server"));
        assert_eq!(
            p.entry("liops.loop").unwrap().origin.to_string(),
            "pgio.conf:1"
        );
        let c = crate::workload::LiopsConfig::from_properties(&p).unwrap();
        assert_eq!(c.loop_in, crate::workload::liops::LoopIn::Server);
        // A file that says client (as workloads/liops does) keeps it.
        let mut p = Properties::new();
        let java = Properties::read_str("SCALE=1000\nliops.loop=client\n", Path::new("w")).unwrap();
        merge_file(&mut p, java).unwrap();
        assert_eq!(p.get("liops.loop"), Some("client"));
        // So does an earlier setting, and a file of other keys sets none.
        let mut p = Properties::new();
        p.set("liops.loop", "client", Origin::CommandLine);
        merge_file(&mut p, file("SCALE=1000")).unwrap();
        assert_eq!(p.get("liops.loop"), Some("client"));
        assert_eq!(merged("recordcount=10\n").unwrap().get("liops.loop"), None);
    }

    #[test]
    fn a_file_mixing_workloads_is_refused() {
        let e = merged("UPDATE_PCT=0\nrecordcount=1000\nSCALE=9")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("pgio.conf:2: recordcount")
                && e.contains("YCSB's core workload")
                && e.contains("UPDATE_PCT (pgio.conf:1)"),
            "{e}"
        );
        let e = merged("workload=core\nSCALE=9").unwrap_err().to_string();
        assert!(
            e.contains("pgio.conf:1: workload = 'core'") && e.contains("SCALE (pgio.conf:2)"),
            "{e}"
        );
        let e = merged("NUM_THREADS=2\nthreadcount=8")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("threadcount") && e.contains("NUM_THREADS sessions"),
            "{e}"
        );
        // A Java properties file may mix in keys a shell cannot name.
        let mut p = Properties::new();
        let java = Properties::read_str("SCALE=9\nvote.articles=3", Path::new("w")).unwrap();
        let e = merge_file(&mut p, java).unwrap_err().to_string();
        assert!(
            e.contains("w:2: vote.articles") && e.contains("vote workload"),
            "{e}"
        );
    }

    fn url_of(text: &str) -> Result<Option<ConnectString>, PropertyError> {
        connect_url(&file(text))
    }

    #[test]
    fn connect_strings_become_urls() {
        let c = url_of("CONNECT_STRING='postgres://u:p@h:5433/db'")
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "postgres://u:p@h:5433/db");
        assert_eq!(
            (c.origin.to_string(), c.dbname_from),
            ("pgio.conf:1".into(), None)
        );
        // DBNAME fills in a missing database name, and only that.
        let c = url_of("DBNAME=yb CONNECT_STRING='postgres://u:p/@x@h:5433?sslmode=disable'")
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "postgres://u:p/@x@h:5433/yb?sslmode=disable");
        assert_eq!(c.dbname_from.unwrap().to_string(), "pgio.conf:1");
        let c = url_of("DBNAME=yb CONNECT_STRING=postgres://h/")
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "postgres://h/yb");
        let c = url_of("DBNAME=yb CONNECT_STRING=postgres://h/mine")
            .unwrap()
            .unwrap();
        assert_eq!((c.url.as_str(), c.dbname_from), ("postgres://h/mine", None));
        // Keyword strings, quoted values and escapes as libpq reads them.
        let c = url_of(
            "DBNAME=yb\nCONNECT_STRING=\"host=10.0.0.1 port = 5433 user=yugabyte \
             password='a b\\\\'c' sslmode=require\"",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            c.url,
            "postgres://yugabyte:a%20b%27c@10.0.0.1:5433/yb?sslmode=require"
        );
        assert_eq!(c.dbname_from.unwrap().to_string(), "pgio.conf:1");
        let c = url_of("CONNECT_STRING='dbname=d host=::1'")
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "postgres://[::1]/d");
        assert!(url_of("DBNAME=x").unwrap().is_none());
    }

    #[test]
    fn psql_arguments_are_refused_without_their_password() {
        let e = url_of("CONNECT_STRING=pg10").unwrap_err().to_string();
        assert!(
            e.contains("pgio.conf:1: CONNECT_STRING = 'pg10'") && e.contains("keyword string"),
            "{e}"
        );
        let e = url_of("CONNECT_STRING=\"user=u password='hunter2\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("never closed") && !e.contains("hunter2"), "{e}");
        let e = url_of("CONNECT_STRING='password=hunter2 host=h'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no user") && !e.contains("hunter2"), "{e}");
    }

    #[test]
    fn the_note_says_which_database_and_hides_the_password() {
        let c = url_of("DBNAME=yb CONNECT_STRING=postgres://u:hunter2@h")
            .unwrap()
            .unwrap();
        let n = database_note(&c.url, None, &c);
        assert_eq!(
            n,
            "database: postgres://u:***@h/yb from CONNECT_STRING (pgio.conf:1), its database \
             name from DBNAME (pgio.conf:1)"
        );
        let n = database_note("postgres://v:x@g/d", Some("--db"), &c);
        assert_eq!(
            n,
            "database: postgres://v:***@g/d from --db, which wins over CONNECT_STRING \
             (pgio.conf:1)"
        );
    }
}
