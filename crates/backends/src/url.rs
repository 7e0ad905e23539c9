//! Backend URLs: which forms name which backend, the errors for the rest,
//! and redaction of passwords before a URL is shown anywhere.
//!
//! Parsing here is purely syntactic: it splits a URL into the backend it
//! names and that backend's own part (a path, a query), and knows nothing of
//! how the backend is opened. Scheme names are case-insensitive.

/// A URL split into the backend it names and that backend's own part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    Null,
    /// The query after `memory:?` (empty when there is none).
    Memory {
        query: &'a str,
    },
    /// `None` for the default path (`sqlite`, `sqlite:`).
    Sqlite {
        path: Option<&'a str>,
    },
    /// The whole `redis://...` URL, or `None` for YCSB's binding name
    /// `redis` (then `redis.host`, `redis.port`, ... say where).
    Redis {
        url: Option<&'a str>,
    },
    /// The whole `memcached://...` URL, or `None` for the binding name
    /// `memcached` (then `memcached.hosts` says where).
    Memcached {
        url: Option<&'a str>,
    },
    /// `postgres://...`, `postgresql://...`, `jdbc:postgresql://...`.
    Postgres {
        url: &'a str,
    },
    /// `mysql://...`, `mariadb://...`, `jdbc:mysql://...`, `jdbc:mariadb://...`.
    Mysql {
        url: &'a str,
    },
    /// A bare database or binding name (`jdbc`, `postgres`, `mysql`, ...):
    /// the URL is YCSB's `db.url` property. `family` is the database the
    /// name asks for (`None` for `jdbc`: any SQL database).
    DbUrlProperty {
        family: Option<SqlFamily>,
    },
    /// `None` when the path comes from `rocksdb.dir` (`rocksdb`, `rocksdb:`).
    Rocksdb {
        path: Option<&'a str>,
    },
    /// `bigtable://project/instance/table`; parts left out (`bigtable`,
    /// `bigtable://project/instance`) come from properties.
    Bigtable {
        project: Option<&'a str>,
        instance: Option<&'a str>,
        table: Option<&'a str>,
    },
}

/// The client-server SQL databases.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SqlFamily {
    Postgres,
    Mysql,
}

impl SqlFamily {
    fn of_scheme(scheme: &str) -> Option<SqlFamily> {
        match scheme {
            "postgres" | "postgresql" => Some(SqlFamily::Postgres),
            "mysql" | "mariadb" => Some(SqlFamily::Mysql),
            _ => None,
        }
    }

    fn feature(self) -> &'static str {
        match self {
            SqlFamily::Postgres => "postgres",
            SqlFamily::Mysql => "mysql",
        }
    }

    fn compiled(self) -> bool {
        match self {
            SqlFamily::Postgres => cfg!(feature = "postgres"),
            SqlFamily::Mysql => cfg!(feature = "mysql"),
        }
    }
}

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
    #[error(
        "backend `{scheme}` is not implemented in this version of sojourn; \
         accepted forms: {accepted}"
    )]
    NotImplemented { scheme: String, accepted: String },
    #[error("invalid backend URL `{url}`: {message}")]
    Invalid { url: String, message: String },
}

/// Database names sojourn plans to support (YCSB binding names among them),
/// so that asking for one gets an honest "not yet" rather than "unknown".
const PLANNED: &[&str] = &["yugabyte"];

/// The URL forms this build accepts, for error messages.
pub fn accepted_forms() -> String {
    let mut forms = vec![
        "null: (also `null` or `basic`)",
        "memory: (optionally memory:?stall_at=N&stall_ms=MS&max_ops_per_sec=K)",
    ];
    if cfg!(feature = "sqlite") {
        forms.push("sqlite:PATH");
        forms.push("sqlite: or `sqlite` (the default database file)");
    }
    if cfg!(feature = "redis") {
        forms.push("redis://[user][:password@]host[:port][/db]");
        forms.push("`redis` with -p redis.host=H -p redis.port=P");
    }
    if cfg!(feature = "memcached") {
        forms.push("memcached://host[:port]");
        forms.push("`memcached` with -p memcached.hosts=H:P");
    }
    if cfg!(feature = "postgres") {
        forms.push("postgres://user:pass@host:port/db (also postgresql://, jdbc:postgresql://)");
    }
    if cfg!(feature = "mysql") {
        forms.push("mysql://user:pass@host:port/db (also mariadb://, jdbc:mysql://)");
    }
    if cfg!(any(feature = "postgres", feature = "mysql")) {
        forms.push("jdbc, postgres or mysql with -p db.url=URL (YCSB's JDBC properties)");
    }
    if cfg!(feature = "rocksdb") {
        forms.push("rocksdb:PATH (or `rocksdb` with -p rocksdb.dir=PATH)");
    }
    if cfg!(feature = "bigtable") {
        forms.push(
            "bigtable://PROJECT/INSTANCE/TABLE (or `bigtable`/`googlebigtable` with \
             -p google.bigtable.project.id=... -p google.bigtable.instance.id=...)",
        );
    }
    forms.join(", ")
}

/// Split `url` into the backend it names. Errors carry the redacted URL.
pub(crate) fn parse(url: &str) -> Result<Target<'_>, OpenError> {
    let url = url.trim();
    let (scheme, rest) = match url.split_once(':') {
        Some((scheme, rest)) if is_scheme(scheme) => (scheme, Some(rest)),
        Some(_) => return Err(unknown(url)),
        None => (url, None),
    };
    let scheme_lower = scheme.to_ascii_lowercase();
    match (scheme_lower.as_str(), rest) {
        ("null", None | Some("")) | ("basic", None) => Ok(Target::Null),
        ("null", Some(_)) => Err(OpenError::Invalid {
            url: redact_url(url),
            message: "the null: backend takes no path or options; write `null:`".to_string(),
        }),
        ("memory", None | Some("")) => Ok(Target::Memory { query: "" }),
        ("memory", Some(rest)) => match rest.strip_prefix('?') {
            Some(query) => Ok(Target::Memory { query }),
            None => Err(OpenError::Invalid {
                url: redact_url(url),
                message: "the memory: backend takes only options, as in \
                          memory:?stall_at=5000&stall_ms=200"
                    .to_string(),
            }),
        },
        ("sqlite", rest) => {
            if !cfg!(feature = "sqlite") {
                return Err(OpenError::NotCompiled {
                    scheme: scheme.to_string(),
                    feature: "sqlite",
                    accepted: accepted_forms(),
                });
            }
            Ok(Target::Sqlite {
                path: rest.filter(|p| !p.is_empty()),
            })
        }
        ("redis" | "rediss", rest) => {
            if !cfg!(feature = "redis") {
                return Err(OpenError::NotCompiled {
                    scheme: scheme.to_string(),
                    feature: "redis",
                    accepted: accepted_forms(),
                });
            }
            match rest {
                None | Some("") if scheme_lower == "redis" => Ok(Target::Redis { url: None }),
                Some(r) if r.starts_with("//") => Ok(Target::Redis { url: Some(url) }),
                _ => Err(OpenError::Invalid {
                    url: redact_url(url),
                    message: "expected redis://[user][:password@]host[:port][/db], or `redis` \
                              with -p redis.host=... -p redis.port=..."
                        .to_string(),
                }),
            }
        }
        ("memcached", rest) => {
            if !cfg!(feature = "memcached") {
                return Err(OpenError::NotCompiled {
                    scheme: scheme.to_string(),
                    feature: "memcached",
                    accepted: accepted_forms(),
                });
            }
            match rest {
                None | Some("") => Ok(Target::Memcached { url: None }),
                Some(r) if r.starts_with("//") => Ok(Target::Memcached { url: Some(url) }),
                _ => Err(OpenError::Invalid {
                    url: redact_url(url),
                    message: "expected memcached://host[:port], or `memcached` with \
                              -p memcached.hosts=host:port"
                        .to_string(),
                }),
            }
        }
        ("jdbc", None) => Ok(Target::DbUrlProperty { family: None }),
        (s, None) if SqlFamily::of_scheme(s).is_some() => Ok(Target::DbUrlProperty {
            family: SqlFamily::of_scheme(s),
        }),
        ("jdbc", Some(rest)) => {
            let sub = rest.split_once(':').map_or(rest, |(s, _)| s);
            match SqlFamily::of_scheme(&sub.to_ascii_lowercase()) {
                Some(family) => sql_target(family, url),
                None => Err(OpenError::Invalid {
                    url: redact_url(url),
                    message: "sojourn speaks JDBC URLs of PostgreSQL \
                              (jdbc:postgresql://) and MySQL/MariaDB (jdbc:mysql://)"
                        .to_string(),
                }),
            }
        }
        (s, Some(_)) if SqlFamily::of_scheme(s).is_some() => {
            sql_target(SqlFamily::of_scheme(s).unwrap_or(SqlFamily::Postgres), url)
        }
        ("rocksdb", rest) => {
            if !cfg!(feature = "rocksdb") {
                return Err(OpenError::NotCompiled {
                    scheme: scheme.to_string(),
                    feature: "rocksdb",
                    accepted: accepted_forms(),
                });
            }
            Ok(Target::Rocksdb {
                path: rest.filter(|p| !p.is_empty()),
            })
        }
        ("bigtable" | "googlebigtable", rest) => {
            if !cfg!(feature = "bigtable") {
                return Err(OpenError::NotCompiled {
                    scheme: scheme.to_string(),
                    feature: "bigtable",
                    accepted: accepted_forms(),
                });
            }
            bigtable_parts(url, rest.unwrap_or(""))
        }
        (s, _) if PLANNED.contains(&s) => Err(OpenError::NotImplemented {
            scheme: scheme.to_string(),
            accepted: accepted_forms(),
        }),
        _ => Err(unknown(url)),
    }
}

/// The target for a full URL of a SQL database, if that backend is built.
pub(crate) fn sql_target(family: SqlFamily, url: &str) -> Result<Target<'_>, OpenError> {
    if !family.compiled() {
        return Err(OpenError::NotCompiled {
            scheme: family.feature().to_string(),
            feature: family.feature(),
            accepted: accepted_forms(),
        });
    }
    Ok(match family {
        SqlFamily::Postgres => Target::Postgres { url },
        SqlFamily::Mysql => Target::Mysql { url },
    })
}

/// `//project/instance/table` (each part optional from the right) after
/// `bigtable:`.
fn bigtable_parts<'a>(url: &str, rest: &'a str) -> Result<Target<'a>, OpenError> {
    let invalid = |message: &str| OpenError::Invalid {
        url: redact_url(url),
        message: message.to_string(),
    };
    let path = match rest {
        "" => "",
        _ => rest.strip_prefix("//").ok_or_else(|| {
            invalid("write bigtable://PROJECT/INSTANCE/TABLE (or just `bigtable`)")
        })?,
    };
    if path.contains(['@', ':']) {
        // Bigtable takes no password in its URL: a `user:pass@` here is a
        // mistake, and must not end up in a table name or in output.
        return Err(invalid(
            "a Bigtable URL carries no credentials or port: write bigtable://PROJECT/INSTANCE/TABLE \
             (credentials come from Application Default Credentials; the emulator from \
             BIGTABLE_EMULATOR_HOST=HOST:PORT)",
        ));
    }
    let path = path.trim_end_matches('/');
    let mut parts = path.split('/').map(|p| (!p.is_empty()).then_some(p));
    let project = parts.next().flatten();
    let instance = parts.next().flatten();
    let table = parts.next().flatten();
    if parts.next().is_some() || (instance.is_some() && project.is_none()) {
        return Err(invalid(
            "expected bigtable://PROJECT/INSTANCE/TABLE with no empty part and nothing after the table",
        ));
    }
    if path.contains("//") || (table.is_some() && instance.is_none()) {
        return Err(invalid(
            "expected bigtable://PROJECT/INSTANCE/TABLE with no empty part",
        ));
    }
    Ok(Target::Bigtable {
        project,
        instance,
        table,
    })
}

fn unknown(url: &str) -> OpenError {
    OpenError::Unknown {
        given: redact_url(url),
        accepted: accepted_forms(),
    }
}

/// RFC 3986: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Query parameters whose values are secrets.
const SECRET_PARAMS: &[&str] = &["password", "passwd", "pass", "pwd", "secret", "token"];

/// `url` with any password replaced by `***`: the one in
/// `scheme://user:pass@host`, and the values of query parameters such as
/// `password=`. Anything that is not a URL comes back unchanged.
///
/// The user-info part ends at the *last* `@` before the query, not at the
/// first `/`: passwords are often written without percent-encoding and may
/// contain `/` or `@`, and showing a little less of a strange URL is better
/// than showing a secret.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return redact_query(url);
    };
    let authority_start = scheme_end + 3;
    let after_scheme = &url[authority_start..];
    let query_start = after_scheme.find(['?', '#']).unwrap_or(after_scheme.len());
    let Some(at) = after_scheme[..query_start].rfind('@') else {
        return redact_query(url);
    };
    let userinfo = &after_scheme[..at];
    let Some(colon) = userinfo.find(':') else {
        return redact_query(url);
    };
    let mut redacted = String::with_capacity(url.len());
    redacted.push_str(&url[..authority_start]);
    redacted.push_str(&userinfo[..colon]);
    redacted.push_str(":***");
    redacted.push_str(&after_scheme[at..]);
    redact_query(&redacted)
}

fn redact_query(url: &str) -> String {
    let Some(query_start) = url.find('?') else {
        return url.to_string();
    };
    let (head, query) = url.split_at(query_start + 1);
    let (query, fragment) = match query.find('#') {
        Some(i) => query.split_at(i),
        None => (query, ""),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if SECRET_PARAMS.iter().any(|s| key.eq_ignore_ascii_case(s)) => {
                format!("{key}=***")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}{}{fragment}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse("null:").ok(), Some(Target::Null));
        assert_eq!(parse("NULL").ok(), Some(Target::Null));
        assert_eq!(parse("basic").ok(), Some(Target::Null));
        assert_eq!(parse(" memory: ").ok(), Some(Target::Memory { query: "" }));
        assert_eq!(
            parse("memory:?stall_at=1").ok(),
            Some(Target::Memory {
                query: "stall_at=1"
            })
        );
        assert!(parse("memory:foo").is_err());
        assert!(parse("null:foo").is_err());
        assert!(parse("basic:").is_err());
        assert!(parse("./x:y").is_err());
    }

    #[test]
    fn sql_forms() {
        assert_eq!(
            parse("jdbc").ok(),
            Some(Target::DbUrlProperty { family: None })
        );
        assert_eq!(
            parse("postgres").ok(),
            Some(Target::DbUrlProperty {
                family: Some(SqlFamily::Postgres)
            })
        );
        assert_eq!(
            parse("MariaDB").ok(),
            Some(Target::DbUrlProperty {
                family: Some(SqlFamily::Mysql)
            })
        );
        assert!(parse("jdbc:oracle:thin:@h:1521:x").is_err());
        if cfg!(feature = "postgres") {
            assert_eq!(
                parse("postgres://u@h/db").ok(),
                Some(Target::Postgres {
                    url: "postgres://u@h/db"
                })
            );
            assert_eq!(
                parse("jdbc:postgresql://h/db").ok(),
                Some(Target::Postgres {
                    url: "jdbc:postgresql://h/db"
                })
            );
        }
        if cfg!(feature = "mysql") {
            assert_eq!(
                parse("jdbc:mysql://h/db").ok(),
                Some(Target::Mysql {
                    url: "jdbc:mysql://h/db"
                })
            );
            assert_eq!(
                parse("mariadb://h/db").ok(),
                Some(Target::Mysql {
                    url: "mariadb://h/db"
                })
            );
        }
    }

    #[test]
    #[cfg(feature = "redis")]
    fn redis_forms() {
        assert_eq!(parse("redis").ok(), Some(Target::Redis { url: None }));
        assert_eq!(parse("Redis:").ok(), Some(Target::Redis { url: None }));
        assert_eq!(
            parse("redis://h:1/2").ok(),
            Some(Target::Redis {
                url: Some("redis://h:1/2")
            })
        );
        assert!(parse("rediss").is_err());
        assert!(parse("redis:host").is_err());
    }

    #[test]
    #[cfg(feature = "memcached")]
    fn memcached_forms() {
        assert_eq!(
            parse("memcached").ok(),
            Some(Target::Memcached { url: None })
        );
        assert_eq!(
            parse("memcached://h:1").ok(),
            Some(Target::Memcached {
                url: Some("memcached://h:1")
            })
        );
        assert!(parse("memcached:h").is_err());
    }

    #[test]
    #[cfg(feature = "rocksdb")]
    fn rocksdb_forms() {
        assert_eq!(
            parse("rocksdb:/tmp/db").ok(),
            Some(Target::Rocksdb {
                path: Some("/tmp/db")
            })
        );
        assert_eq!(parse("RocksDB").ok(), Some(Target::Rocksdb { path: None }));
        assert_eq!(parse("rocksdb:").ok(), Some(Target::Rocksdb { path: None }));
    }

    #[test]
    #[cfg(feature = "bigtable")]
    fn bigtable_forms() {
        let bt = |project, instance, table| Target::Bigtable {
            project,
            instance,
            table,
        };
        assert_eq!(
            parse("bigtable://p/i/t").ok(),
            Some(bt(Some("p"), Some("i"), Some("t")))
        );
        assert_eq!(
            parse("bigtable://p/i/").ok(),
            Some(bt(Some("p"), Some("i"), None))
        );
        assert_eq!(parse("bigtable").ok(), Some(bt(None, None, None)));
        assert_eq!(parse("googlebigtable").ok(), Some(bt(None, None, None)));
        assert_eq!(parse("bigtable://p").ok(), Some(bt(Some("p"), None, None)));
        assert!(parse("bigtable:p/i/t").is_err());
        assert!(parse("bigtable://p//t").is_err());
        assert!(parse("bigtable://p/i/t/x").is_err());
        let e = parse("bigtable://u:s3cr3t@h/i/t").unwrap_err().to_string();
        assert!(e.contains("no credentials") && !e.contains("s3cr3t"), "{e}");
    }
}
