//! Backend URLs: the part of reading one that no backend owns. A URL's
//! scheme (any case) names a backend of the crate's table of backends,
//! which reads the rest of it itself; YCSB's JDBC forms (`jdbc` or a bare
//! database name with the URL in `db.url`, `jdbc:SUB:...`) name one of the
//! backends its JDBC binding reaches. A backend this build leaves out is
//! named with the feature that brings it, a planned one says so, anything
//! else lists the forms this build accepts. Passwords are removed before a
//! URL is shown anywhere ([`sojourn_core::redact`]).

use sojourn_core::properties::Properties;
use sojourn_core::redact::{self, redact_url};

use crate::{Kind, REGISTRY};

/// Why a backend URL could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("unknown backend `{given}`; accepted forms: {accepted}")]
    Unknown { given: String, accepted: String },
    #[error(
        "backend `{scheme}` is not compiled into this build; rebuild with \
         `--features {feature}` (accepted forms in this build: {accepted})"
    )]
    NotCompiled {
        scheme: String,
        feature: &'static str,
        accepted: String,
    },
    #[error("`{scheme}` is not a backend of its own: {how}")]
    SpokenAs { scheme: String, how: &'static str },
    #[error("invalid backend URL `{url}`: {message}")]
    Invalid { url: String, message: String },
}

/// One registered backend as URLs see it: known whether or not this
/// build compiles it in, so that naming a backend left out still says which
/// feature brings it.
#[derive(Debug)]
pub(crate) struct Registration {
    pub(crate) kind: Kind,
    /// The cargo feature that compiles it in; `None` for those always there.
    pub(crate) feature: Option<&'static str>,
    pub(crate) compiled: bool,
    /// URL schemes and YCSB binding names, lower case.
    pub(crate) schemes: &'static [&'static str],
    /// Whether YCSB's JDBC binding reaches it: `jdbc:SCHEME:...`, and its
    /// bare scheme names with the URL in `db.url`.
    pub(crate) jdbc: bool,
    /// Whether it lives on one machine (an engine in the client's process,
    /// or its files), which agents elsewhere cannot reach.
    pub(crate) local: bool,
    /// Prefixes of the properties it reads (YCSB binding settings among
    /// them), known even when it is not compiled in, so that a properties
    /// file written for it is not reported as full of unknown keys.
    pub(crate) prefixes: &'static [&'static str],
    /// The properties under those prefixes it reads, whole names (one
    /// ending in `.` covers every key under it): any other is unknown.
    pub(crate) properties: &'static [&'static str],
}

impl Registration {
    fn name(&self) -> &'static str {
        self.feature.unwrap_or(self.schemes[0])
    }

    pub(crate) fn by_scheme(scheme: &str) -> Option<&'static Registration> {
        REGISTRY.iter().find(|r| r.schemes.contains(&scheme))
    }
}

/// Databases reached through another backend's protocol, by the names
/// their users may try (YCSB binding names among them), with the forms
/// that reach them.
const SPOKEN_AS: &[(&str, &str)] = &[
    (
        "yugabyte",
        "YugabyteDB speaks PostgreSQL's protocol (YSQL: postgres://user@host:5433/yugabyte) \
         and CQL (YCQL: cassandra://host:9042/keyspace)",
    ),
    (
        "yugabytesql",
        "YugabyteDB YSQL speaks PostgreSQL's protocol: postgres://user@host:5433/yugabyte",
    ),
    (
        "yugabytecql",
        "YugabyteDB YCQL speaks CQL: cassandra://host:9042/keyspace, or cassandra-cql with \
         -p hosts=HOST",
    ),
    (
        "scylla",
        "ScyllaDB speaks CQL: cassandra://host:9042/keyspace, or cassandra-cql with -p hosts=HOST",
    ),
    (
        "scylladb",
        "ScyllaDB speaks CQL: cassandra://host:9042/keyspace, or cassandra-cql with -p hosts=HOST",
    ),
];

/// Why a `jdbc:` URL of another database is refused.
const JDBC_URLS: &str = "sojourn speaks JDBC URLs of PostgreSQL (jdbc:postgresql://) \
                         and MySQL/MariaDB (jdbc:mysql://)";

/// The form of YCSB's JDBC binding, shown with the backends it reaches.
const JDBC_FORM: &str = "jdbc, postgres or mysql with -p db.url=URL (YCSB's JDBC properties)";

/// The URL forms this build accepts, for error messages.
pub fn accepted_forms() -> String {
    let mut forms: Vec<&str> = Vec::new();
    let compiled: Vec<&Registration> = REGISTRY.iter().filter(|r| r.compiled).collect();
    for (i, r) in compiled.iter().enumerate() {
        forms.extend_from_slice(r.kind.forms());
        if r.jdbc && !compiled.get(i + 1).is_some_and(|next| next.jdbc) {
            forms.push(JDBC_FORM);
        }
    }
    forms.join(", ")
}

/// What a URL names.
#[derive(Debug)]
enum Named<'a> {
    /// A backend compiled in, and the URL it reads.
    Backend(&'static Registration, &'a str),
    /// A bare name of YCSB's JDBC binding: the URL is the `db.url`
    /// property, for `family` (`None` for `jdbc`: any JDBC backend).
    DbUrl {
        family: Option<&'static Registration>,
    },
}

/// The backend `url` names, and the URL it reads: `url` itself (trimmed),
/// or the `db.url` property for YCSB's JDBC binding names. Errors carry the
/// redacted URL.
pub(crate) fn resolve<'a>(
    url: &'a str,
    props: &'a Properties,
) -> Result<(&'static Registration, &'a str), OpenError> {
    let url = url.trim();
    match parse(url)? {
        Named::Backend(r, url) => Ok((r, url)),
        Named::DbUrl { family } => db_url(url, family, props),
    }
}

fn parse(url: &str) -> Result<Named<'_>, OpenError> {
    let url = url.trim();
    let (scheme, rest) = match url.split_once(':') {
        Some((scheme, rest)) if is_scheme(scheme) => (scheme, Some(rest)),
        Some(_) => return Err(unknown(url)),
        None => (url, None),
    };
    let lower = scheme.to_ascii_lowercase();
    let found = if lower == "jdbc" {
        let Some(rest) = rest else {
            return Ok(Named::DbUrl { family: None });
        };
        let sub = rest.split_once(':').map_or(rest, |(s, _)| s);
        let found = Registration::by_scheme(&sub.to_ascii_lowercase()).filter(|r| r.jdbc);
        Some(found.ok_or_else(|| invalid(url, JDBC_URLS))?)
    } else {
        Registration::by_scheme(&lower)
    };
    match found {
        Some(r) if r.jdbc && rest.is_none() => Ok(Named::DbUrl { family: Some(r) }),
        Some(r) if r.compiled => Ok(Named::Backend(r, url)),
        Some(r) => Err(OpenError::NotCompiled {
            // The JDBC forms name the backend only through its scheme.
            scheme: if r.jdbc { r.name() } else { scheme }.to_string(),
            feature: r.name(),
            accepted: accepted_forms(),
        }),
        None => match SPOKEN_AS.iter().find(|(name, _)| *name == lower) {
            Some((_, how)) => Err(OpenError::SpokenAs {
                scheme: scheme.to_string(),
                how,
            }),
            None => Err(unknown(url)),
        },
    }
}

/// The backend named by YCSB's `db.url` property, for `name`: `jdbc`
/// (YCSB's JDBC binding name, `family` `None`) or a bare database name.
fn db_url<'p>(
    name: &str,
    family: Option<&'static Registration>,
    props: &'p Properties,
) -> Result<(&'static Registration, &'p str), OpenError> {
    let Some(db_url) = props.get("db.url") else {
        return Err(OpenError::Invalid {
            url: name.to_string(),
            message: format!(
                "`{name}` needs a database URL: give one instead (e.g. \
                 postgres://user@127.0.0.1:5432/db) or set -p db.url=jdbc:postgresql://..."
            ),
        });
    };
    match parse(db_url)? {
        Named::Backend(r, url) if r.jdbc => match family {
            Some(want) if want.kind != r.kind => Err(invalid(
                db_url,
                format!("db.url names another database than `{name}`"),
            )),
            _ => Ok((r, url)),
        },
        _ => Err(invalid(
            db_url,
            "db.url must be a PostgreSQL or MySQL URL \
             (jdbc:postgresql://..., postgres://..., jdbc:mysql://..., mysql://...)",
        )),
    }
}

/// A URL a backend refuses, shown redacted, with why.
pub(crate) fn invalid(url: &str, message: impl Into<String>) -> OpenError {
    OpenError::Invalid {
        url: redact_url(url.trim()),
        // A backend's or driver's message may quote pieces of the URL.
        message: redact::message_about(url, &message.into()),
    }
}

/// A URL no registered backend reads.
pub(crate) fn unknown(url: &str) -> OpenError {
    OpenError::Unknown {
        given: redact_url(url.trim()),
        accepted: accepted_forms(),
    }
}

/// `url`'s scheme and what follows its `:`, if it has one.
pub(crate) fn split(url: &str) -> (&str, Option<&str>) {
    match url.split_once(':') {
        Some((scheme, rest)) => (scheme, Some(rest)),
        None => (url, None),
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
#[cfg_attr(
    not(any(feature = "redis", feature = "memcached", feature = "cassandra")),
    allow(dead_code)
)]
pub(crate) fn split_host_port(authority: &str, default_port: u16) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("unclosed [ in {authority}"))?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(format!("unexpected {after} after the address")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| format!("{p} is not a TCP port"))?,
    };
    Ok((host.to_string(), port))
}

/// RFC 3986: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A user or password from a URL, percent-decoded.
#[cfg(any(feature = "redis", feature = "cassandra"))]
pub(crate) fn decode_userinfo(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a % in the user or password is not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the user or password is not UTF-8 once decoded".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backend `url` names (its first scheme), or `db.url` and the
    /// family asked for.
    fn named(url: &str) -> Option<String> {
        match parse(url).ok()? {
            Named::Backend(r, given) => {
                assert_eq!(given, url.trim());
                Some(r.schemes[0].to_string())
            }
            Named::DbUrl { family } => Some(format!(
                "db.url for {}",
                family.map_or("jdbc", |r| r.schemes[0])
            )),
        }
    }

    #[test]
    fn schemes() {
        assert!(is_scheme("sqlite"));
        assert!(is_scheme("postgres+tls"));
        assert!(!is_scheme(""));
        assert!(!is_scheme("1abc"));
        assert!(!is_scheme("./dir/file"));
    }

    #[test]
    fn forms() {
        for url in ["null:", "NULL", "basic", "null:foo", "basic:"] {
            assert_eq!(named(url).as_deref(), Some("null"), "{url}");
        }
        for url in [" memory: ", "memory:?stall_at=1", "memory:foo"] {
            assert_eq!(named(url).as_deref(), Some("memory"), "{url}");
        }
        let opens = |url: &str| crate::open(url, &crate::OpenOptions::new(&Properties::new()));
        for url in ["null:", "NULL", "basic", " memory: "] {
            assert!(opens(url).is_ok(), "{url}");
        }
        // The query reaches the memory backend, which wants stall_ms too.
        let e = opens("memory:?stall_at=1").unwrap_err().to_string();
        assert!(e.contains("stall_ms"), "{e}");
        for url in ["memory:foo", "null:foo", "basic:", "./x:y"] {
            assert!(opens(url).is_err(), "{url}");
        }
        assert!(parse("basic:").is_ok());
        assert!(matches!(opens("basic:"), Err(OpenError::Unknown { .. })));
        assert!(matches!(parse("mongodb:x"), Err(OpenError::Unknown { .. })));
        let e = parse("Yugabyte://h/db").unwrap_err().to_string();
        assert!(
            e.contains("postgres://") && e.contains("cassandra://"),
            "{e}"
        );
        let e = parse("scylla").unwrap_err().to_string();
        assert!(e.contains("cassandra://"), "{e}");
    }

    #[test]
    fn sql_forms() {
        assert_eq!(named("jdbc").as_deref(), Some("db.url for jdbc"));
        assert_eq!(named("postgres").as_deref(), Some("db.url for postgres"));
        assert_eq!(named("MariaDB").as_deref(), Some("db.url for mysql"));
        let e = parse("jdbc:oracle:thin:@h:1521:x").unwrap_err();
        assert!(e.to_string().contains("jdbc:postgresql://"), "{e}");
        let expect = |url: &str, name: &str, feature: &str| match parse(url) {
            Ok(_) => assert_eq!(named(url).as_deref(), Some(name), "{url}"),
            Err(e) => {
                assert!(
                    e.to_string().contains(&format!("--features {feature}")),
                    "{e}"
                )
            }
        };
        expect("postgres://u@h/db", "postgres", "postgres");
        expect("jdbc:postgresql://h/db", "postgres", "postgres");
        expect("jdbc:mysql://h/db", "mysql", "mysql");
        expect("mariadb://h/db", "mysql", "mysql");
        expect("rocksdb:/tmp/db", "rocksdb", "rocksdb");
        expect("googlebigtable", "bigtable", "bigtable");
        expect("cassandra-cql", "cassandra", "cassandra");
        expect("cassandra://u:p@h1,h2/ks", "cassandra", "cassandra");
    }

    #[test]
    fn db_url_names_a_jdbc_backend_of_the_family_asked_for() {
        let mut props = Properties::new();
        let e = resolve("jdbc", &props).unwrap_err().to_string();
        assert!(e.contains("db.url"), "{e}");
        props.set_arg("db.url=sqlite:x.db").unwrap();
        let e = resolve("jdbc", &props).unwrap_err().to_string();
        assert!(e.contains("PostgreSQL or MySQL"), "{e}");
        props.set_arg("db.url=jdbc:mysql://u:s3cr3t@h/db").unwrap();
        if cfg!(feature = "mysql") {
            let (r, url) = resolve("mariadb", &props).expect("mysql");
            assert_eq!((r.schemes[0], url), ("mysql", "jdbc:mysql://u:s3cr3t@h/db"));
            let e = resolve("postgres", &props).unwrap_err().to_string();
            assert!(
                e.contains("another database") && !e.contains("s3cr3t"),
                "{e}"
            );
        }
    }

    #[test]
    fn every_form_of_this_build_is_listed_once() {
        let forms = accepted_forms();
        assert!(
            forms.starts_with("null: (also `null` or `basic`), memory:"),
            "{forms}"
        );
        assert_eq!(
            forms.matches("db.url").count(),
            usize::from(REGISTRY.iter().any(|r| r.jdbc && r.compiled))
        );
    }

    #[test]
    fn local_databases_are_the_engines_in_the_clients_process() {
        for url in [
            "memory:",
            "sqlite",
            "sqlite:/tmp/x.db",
            "SQLite:x",
            "rocksdb:/tmp/r",
        ] {
            assert!(crate::is_local(url), "{url}");
        }
        for url in [
            "null:",
            "redis://127.0.0.1",
            "postgres://h/db",
            "mysql://h/db",
            "memcached",
            "cassandra-cql",
            "bigtable://p/i/t",
            "no-such-thing:",
        ] {
            assert!(!crate::is_local(url), "{url}");
        }
    }
}
