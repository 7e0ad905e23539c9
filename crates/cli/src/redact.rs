//! Keeping secrets out of output, logs and stored results: property values
//! whose names say they are secret, and passwords inside URLs.

/// Whether a property holds a secret (db.passwd, redis.password, ...).
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["pass", "secret", "token", "credential"]
        .iter()
        .any(|s| k.contains(s))
}

/// A property value fit to print or store.
pub fn property_value(key: &str, value: &str) -> String {
    if is_secret_key(key) {
        "***".to_string()
    } else {
        sojourn_backends::redact_url(value)
    }
}

/// One command-line argument fit to store: a `KEY=VALUE` whose key names
/// a secret keeps only its key (`-p db.passwd=x`, `-pdb.passwd=x`,
/// `--password=x`), and any URL loses its password.
pub fn argument(arg: &str) -> String {
    if let Some((key, _)) = arg.split_once('=') {
        if is_secret_key(key) {
            return format!("{key}=***");
        }
    }
    sojourn_backends::redact_url(arg)
}

/// A command line fit to store or print; the value after a flag whose
/// name says it is secret (`--password x`) is hidden too.
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut out = Vec::new();
    let mut hide_next = false;
    for a in args {
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
            continue;
        }
        hide_next = a.starts_with('-') && !a.contains('=') && is_secret_key(&a);
        out.push(argument(&a));
    }
    out.join(" ")
}

/// Free text (an error message) with every URL's password removed.
pub fn text(s: &str) -> String {
    s.split(' ').map(argument).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_lose_their_secrets() {
        let line = command_line(
            [
                "sojourn",
                "run",
                "--db",
                "postgres://bench:hunter2@db/ycsb",
                "-p",
                "db.passwd=s3cret",
                "-predis.password=s3cret",
                "--password",
                "s3cret",
                "-p",
                "recordcount=1000",
            ]
            .map(String::from),
        );
        assert!(
            !line.contains("hunter2") && !line.contains("s3cret"),
            "{line}"
        );
        assert!(line.contains("db.passwd=***"), "{line}");
        assert!(line.contains("recordcount=1000"), "{line}");
        let t = text("cannot connect to postgres://u:hunter2@h/db: refused");
        assert!(!t.contains("hunter2"), "{t}");
    }

    #[test]
    fn secrets_are_hidden() {
        assert_eq!(property_value("db.passwd", "hunter2"), "***");
        assert_eq!(property_value("redis.password", "x"), "***");
        assert_eq!(property_value("recordcount", "1000"), "1000");
        let v = property_value("db.url", "postgres://u:hunter2@127.0.0.1/db");
        assert!(!v.contains("hunter2"), "{v}");
    }
}
