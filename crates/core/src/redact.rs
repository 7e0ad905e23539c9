//! Keeping secrets out of output, logs and stored results: passwords
//! inside URLs, property values whose names say they are secret, and
//! command lines and messages that carry either. Every layer that prints or
//! stores something applies these rules; none has a copy of them.

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
    redact_url_within(url, 0)
}

/// URLs inside a URL's query or fragment (`?next=redis://u:pw@h`) are
/// redacted in turn, this deep at most; a deeper one is hidden whole.
const NESTED_URLS: usize = 4;

fn redact_url_within(url: &str, depth: usize) -> String {
    let Some(scheme_end) = url.find("://") else {
        return redact_query(&redact_conninfo(&redact_authority(url)), depth);
    };
    let authority_start = scheme_end + 3;
    let after_scheme = &url[authority_start..];
    let query_start = after_scheme.find(['?', '#']).unwrap_or(after_scheme.len());
    let Some(at) = after_scheme[..query_start].rfind('@') else {
        return redact_query(url, depth);
    };
    let userinfo = &after_scheme[..at];
    let Some(colon) = userinfo.find(':') else {
        return redact_query(url, depth);
    };
    let mut redacted = String::with_capacity(url.len());
    redacted.push_str(&url[..authority_start]);
    redacted.push_str(&userinfo[..colon]);
    redacted.push_str(":***");
    redacted.push_str(&after_scheme[at..]);
    redact_query(&redacted, depth)
}

/// A URL's authority without its scheme, `user:pass@host[:port]` (Noria's
/// `--address`, yb-sample-apps' nodes), with the password masked; any
/// other text unchanged. Only a single word whose user-info has no `/` is
/// taken for one, so paths (`sqlite:/a@b`) and sentences are left alone.
fn redact_authority(s: &str) -> String {
    let Some(at) = s.rfind('@') else {
        return s.to_string();
    };
    let userinfo = &s[..at];
    match userinfo.split_once(':') {
        Some((user, _))
            if !user.is_empty()
                && !userinfo.contains(['/', ' ', '='])
                && !s[at + 1..].is_empty()
                && !s[at + 1..].contains([' ', '/']) =>
        {
            format!("{user}:***{}", &s[at..])
        }
        _ => s.to_string(),
    }
}

/// `url` with its password taken out rather than masked: no `:pass` in
/// the user-info, no secret query parameter (`?password=`). What an agent
/// is sent: it connects with the password of its own environment
/// (`PGPASSWORD`, `MYSQL_PWD`, `REDIS_PASSWORD`), which a masked `***`
/// would override.
pub fn without_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let authority_start = scheme_end + 3;
    let after_scheme = &url[authority_start..];
    let query_start = after_scheme.find(['?', '#']).unwrap_or(after_scheme.len());
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..authority_start]);
    match after_scheme[..query_start].rfind('@') {
        Some(at) => {
            let userinfo = &after_scheme[..at];
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            if !user.is_empty() {
                out.push_str(user);
                out.push('@');
            }
            out.push_str(&after_scheme[at + 1..query_start]);
        }
        None => out.push_str(&after_scheme[..query_start]),
    }
    let rest = &after_scheme[query_start..];
    match rest.strip_prefix('?') {
        Some(query) => {
            let (query, fragment) = query
                .split_once('#')
                .map_or((query, None), |(q, f)| (q, Some(f)));
            let kept: Vec<&str> = query
                .split('&')
                .filter(|pair| {
                    let key = pair.split_once('=').map_or(*pair, |(k, _)| k);
                    !pair.is_empty() && !SECRET_PARAMS.iter().any(|s| key.eq_ignore_ascii_case(s))
                })
                .collect();
            if !kept.is_empty() {
                out.push('?');
                out.push_str(&kept.join("&"));
            }
            if let Some(f) = fragment {
                out.push('#');
                out.push_str(f);
            }
        }
        None => out.push_str(rest),
    }
    out
}

/// The password in `url`'s user-info (`scheme://user:pass@host`), as
/// [`redact_url`] finds it, for taking it out of text that quotes pieces of
/// the URL (a driver's message about a parameter it does not know).
pub fn url_password(url: &str) -> Option<&str> {
    let after_scheme = &url[url.find("://")? + 3..];
    let query_start = after_scheme.find(['?', '#']).unwrap_or(after_scheme.len());
    let userinfo = &after_scheme[..after_scheme[..query_start].rfind('@')?];
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then_some(password)
}

/// `message`, said about `url`, with every URL's password removed and the
/// password of `url` itself removed wherever it appears.
pub fn message_about(url: &str, message: &str) -> String {
    let message = text(message);
    match url_password(url) {
        Some(password) => message.replace(password, "***"),
        None => message,
    }
}

/// A libpq keyword string (`host=h password=x dbname=d`, PGIO's
/// `CONNECT_STRING`) with the values of secret keywords replaced by
/// `***`, quoted ones (`password='a b'`) whole. Anything else comes back
/// unchanged.
fn redact_conninfo(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < len {
        if chars[i].is_whitespace() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < len && !chars[i].is_whitespace() && chars[i] != '=' {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        out.push_str(&key);
        let mut eq = i;
        while eq < len && chars[eq].is_whitespace() {
            eq += 1;
        }
        if eq >= len || chars[eq] != '=' {
            continue;
        }
        out.extend(&chars[i..=eq]);
        i = eq + 1;
        while i < len && chars[i].is_whitespace() {
            out.push(chars[i]);
            i += 1;
        }
        let value_start = i;
        if i < len && chars[i] == '\'' {
            i += 1;
            while i < len && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            while i < len && !chars[i].is_whitespace() {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
        }
        let end = i.min(len);
        if is_secret_key(&key) && end > value_start {
            out.push_str("***");
        } else {
            out.extend(&chars[value_start..end]);
        }
        i = end;
    }
    out
}

fn redact_query(url: &str, depth: usize) -> String {
    // A URL inside this one's query or fragment is redacted in turn.
    let nested = |part: &str| {
        if depth < NESTED_URLS {
            redact_url_within(part, depth + 1)
        } else if part.contains("://") {
            "***".to_string()
        } else {
            part.to_string()
        }
    };
    let (url, fragment) = match url.find('#') {
        Some(i) => (&url[..i], format!("#{}", nested(&url[i + 1..]))),
        None => (url, String::new()),
    };
    let Some(query_start) = url.find('?') else {
        return format!("{url}{fragment}");
    };
    let (head, query) = url.split_at(query_start + 1);
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if SECRET_PARAMS.iter().any(|s| key.eq_ignore_ascii_case(s)) => {
                format!("{key}=***")
            }
            _ if pair.contains("://") => nested(pair),
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}{}{fragment}", pairs.join("&"))
}

/// Whether a property, label or flag holds a secret (`db.passwd`,
/// `redis.password`, `api.key`, `auth`, `aws_secret_access_key`): a name
/// that says pass, secret, token, credential or auth anywhere, or ends in
/// an api, access or private key. A harmless value hidden by a broad rule
/// costs a `***`; a secret shown by a narrow one costs the secret.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    if ["pass", "secret", "token", "credential"]
        .iter()
        .any(|s| k.contains(s))
    {
        return true;
    }
    // `auth`, `authorization`, `redis.auth`, but not `author`.
    if k.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| word.starts_with("auth") && !word.starts_with("author"))
        || k.contains("authorization")
    {
        return true;
    }
    let squeezed: String = k.chars().filter(char::is_ascii_alphanumeric).collect();
    [
        "apikey",
        "accesskey",
        "privatekey",
        "sessionkey",
        "signingkey",
    ]
    .iter()
    .any(|s| squeezed.ends_with(s))
}

/// A property, label or flag value fit to print or store: hidden whole
/// when its name says it is secret, otherwise with the password taken out
/// of any URL or keyword string in it, even one in the middle of a text.
pub fn property_value(key: &str, value: &str) -> String {
    if is_secret_key(key) {
        "***".to_string()
    } else {
        text(&redact_url(value))
    }
}

/// Every value of `pairs` (labels, properties, flags) as [`property_value`]
/// gives it.
pub fn pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> std::collections::BTreeMap<String, String> {
    pairs
        .into_iter()
        .map(|(k, v)| (k.clone(), property_value(k, v)))
        .collect()
}

/// One command-line argument fit to store: a `KEY=VALUE` whose key names
/// a secret keeps only its key (`-p db.passwd=x`, `-pdb.passwd=x`,
/// `--password=x`), and any URL loses its password.
pub fn argument(arg: &str) -> String {
    if let Some((key, _)) = arg.split_once('=') {
        if is_secret_key(key) {
            // The "key" may itself be a URL (`h://u:pw@h/?password=x`).
            return format!("{}=***", redact_url(key));
        }
    }
    redact_url(arg)
}

/// A command line fit to store or print; the value after a flag whose
/// name says it is secret (`--password x`) is hidden too.
/// memtier_benchmark's and redis-benchmark's `-a PASSWORD` (or
/// `-aPASSWORD`) is hidden in their command lines (`sojourn memtier ...`).
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut out = Vec::new();
    let mut hide_next = false;
    let mut short_a = false;
    for (i, a) in args.into_iter().enumerate() {
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
            continue;
        }
        if i == 1 {
            short_a = matches!(a.as_str(), "memtier" | "redis-benchmark");
        }
        if short_a && a.starts_with("-a") {
            hide_next = a == "-a";
            out.push(if hide_next { a } else { "-a***".into() });
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
    fn passwords_in_bare_authorities_are_masked() {
        assert_eq!(
            argument("sojourn:s3cret@127.0.0.1:3306"),
            "sojourn:***@127.0.0.1:3306"
        );
        assert_eq!(
            command_line(["--address".into(), "u:p@w@h:1".into()]),
            "--address u:***@h:1"
        );
        for same in ["127.0.0.1:3306", "sqlite:/tmp/a:b@c", "a@b", ":x@h", "u:p@"] {
            assert_eq!(argument(same), same);
        }
    }

    #[test]
    fn peer_tools_passwords_are_masked() {
        let line = |s: &str| command_line(s.split(' ').map(String::from));
        assert_eq!(
            line("sojourn memtier -a s3cret -n 5 --authenticate=u:pw -aglued"),
            "sojourn memtier -a *** -n 5 --authenticate=*** -a***"
        );
        assert_eq!(
            line("sojourn redis-benchmark -a s3cret -q"),
            "sojourn redis-benchmark -a *** -q"
        );
        // Elsewhere -a is not a password.
        assert_eq!(line("sojourn ab -a x"), "sojourn ab -a x");
    }

    #[test]
    fn passwords_in_multi_host_urls_are_masked() {
        assert_eq!(
            redact_url("cassandra://bench:s3cr@t@h1,h2:9043,[::1]/ks"),
            "cassandra://bench:***@h1,h2:9043,[::1]/ks"
        );
        assert!(!text("run --db cassandra://u:pw@a,b/ks").contains("pw"));
    }

    #[test]
    fn passwords_are_taken_out_for_agents() {
        for (url, out) in [
            ("postgres://u:p@h:5432/db", "postgres://u@h:5432/db"),
            ("redis://:s3cret@h:6379/0", "redis://h:6379/0"),
            (
                "mysql://u:p/w@h/db?ssl-mode=required",
                "mysql://u@h/db?ssl-mode=required",
            ),
            (
                "postgres://h/db?password=p&sslmode=require&PWD=x",
                "postgres://h/db?sslmode=require",
            ),
            ("postgres://h/db?password=p", "postgres://h/db"),
            ("sqlite:/tmp/x.sqlite", "sqlite:/tmp/x.sqlite"),
            ("cassandra://u:p@a,b:9042/ks", "cassandra://u@a,b:9042/ks"),
        ] {
            assert_eq!(without_password(url), out, "{url}");
        }
    }

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
        // Found by fuzzing: a URL before a secret query parameter.
        let a = argument("postgres://u:hunter2@h:5432/x?password=s3cret");
        assert!(!a.contains("hunter2") && !a.contains("s3cret"), "{a}");
    }

    #[test]
    fn a_message_quoting_part_of_a_url_loses_its_password() {
        let url = "mysql://root:hunter2@h/y?bad=hunter2@x";
        assert_eq!(url_password(url), Some("hunter2"));
        let m = message_about(url, "Unknown connection URL parameter `bad=hunter2@x`");
        assert_eq!(m, "Unknown connection URL parameter `bad=***@x`");
        assert_eq!(url_password("redis://h:6379"), None);
        assert_eq!(url_password("redis://u:@h"), None);
    }

    #[test]
    fn urls_inside_a_query_lose_their_passwords_too() {
        let v = redact_url("postgres://u:pw1@h/d?next=redis://:pw2@h2:6379&x=1");
        assert_eq!(v, "postgres://u:***@h/d?next=redis://:***@h2:6379&x=1");
        // Found by fuzzing: the second URL runs into the first's query.
        let v = redact_url("postgres://b:pw1@h/y?sslmode://b:pw2@h/y?sslmode=require&c=4");
        assert!(!v.contains("pw1") && !v.contains("pw2"), "{v}");
        let mut deep = "s://u:pw0@h/".to_string();
        for i in 1..10 {
            deep.push_str(&format!("?n=s://u:pw{i}@h/"));
        }
        let v = redact_url(&deep);
        assert!(!v.contains("pw"), "{v}");
    }

    #[test]
    fn keyword_strings_lose_their_passwords() {
        let v = redact_url("host=h port=5433 password=hunter2 dbname=db");
        assert_eq!(v, "host=h port=5433 password=*** dbname=db");
        let v = property_value("CONNECT_STRING", "user=u password = 'a b\\' c' dbname=d");
        assert_eq!(v, "user=u password = *** dbname=d");
        assert_eq!(redact_url("pg10"), "pg10");
        assert_eq!(redact_url("a=b c"), "a=b c");
    }

    #[test]
    fn secrets_are_hidden() {
        assert_eq!(property_value("db.passwd", "hunter2"), "***");
        assert_eq!(property_value("redis.password", "x"), "***");
        assert_eq!(property_value("recordcount", "1000"), "1000");
        let v = property_value("db.url", "postgres://u:hunter2@127.0.0.1/db");
        assert!(!v.contains("hunter2"), "{v}");
        for key in [
            "api.key",
            "auth",
            "redis.auth",
            "Authorization",
            "aws_secret_access_key",
            "aws.accessKey",
            "gcp_private_key",
            "x-auth-header",
        ] {
            assert_eq!(property_value(key, "hunter2"), "***", "{key}");
        }
        for key in ["author", "keyprefix", "insertkey", "requestdistribution"] {
            assert_eq!(property_value(key, "v"), "v", "{key}");
        }
        // A URL anywhere in a value, not only at its start.
        let v = property_value("note", "copied from postgres://u:hunter2@h/x today");
        assert_eq!(v, "copied from postgres://u:***@h/x today");
    }
}
