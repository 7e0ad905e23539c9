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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_hidden() {
        assert_eq!(property_value("db.passwd", "hunter2"), "***");
        assert_eq!(property_value("redis.password", "x"), "***");
        assert_eq!(property_value("recordcount", "1000"), "1000");
        let v = property_value("db.url", "postgres://u:hunter2@127.0.0.1/db");
        assert!(!v.contains("hunter2"), "{v}");
    }
}
