//! Unit tests of the Redis backend: URLs, properties, hashing, describe.

use std::time::Duration;

use sojourn_core::backend::Backend;
use sojourn_core::properties::Properties;

use super::options::parse_url;
use super::*;
use crate::pool::{Sharing, DEFAULT_TIMEOUT};

#[test]
fn java_string_hash_code() {
    // Values of Java's "...".hashCode().
    assert_eq!(java_hash(""), 0);
    assert_eq!(java_hash("a"), 97);
    assert_eq!(java_hash("user1"), 111_578_566);
    assert_eq!(java_hash("user6284781860667377211"), -594_971_599);
    assert_eq!(java_hash("h\u{e9}"), 3457);
    assert_eq!(
        java_hash("h\u{e9}llo \u{1F600}"),
        java_hash_utf16("h\u{e9}llo \u{1F600}")
    );
}

fn java_hash_utf16(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
}

#[test]
fn urls() {
    let o = parse_url("redis://127.0.0.1:7000").unwrap();
    assert_eq!((o.host.as_str(), o.port, o.db), ("127.0.0.1", 7000, 0));
    assert_eq!(o.password, None);
    let o = parse_url("redis://:p%40ss@localhost/3").unwrap();
    assert_eq!((o.host.as_str(), o.port, o.db), ("localhost", 6379, 3));
    assert_eq!(o.password.as_deref(), Some("p@ss"));
    assert_eq!(o.user, None);
    let o = parse_url("redis://bob:se:cr@t@[::1]:6380/1").unwrap();
    assert_eq!((o.host.as_str(), o.port, o.db), ("::1", 6380, 1));
    assert_eq!(o.user.as_deref(), Some("bob"));
    assert_eq!(o.password.as_deref(), Some("se:cr@t"));
    assert!(parse_url("redis://host:0").is_err());
    assert!(parse_url("redis://host:x").is_err());
    assert!(parse_url("redis://host/x").is_err());
    assert!(parse_url("redis://host?x=1").is_err());
    assert_eq!(
        parse_url("rediss://host").unwrap().tls,
        Some(TlsOptions::default())
    );
    assert_eq!(parse_url("redis://host").unwrap().tls, None);
    assert!(parse_url("redis://").is_err());
}

#[test]
fn several_nodes_take_a_connection_each_in_turn() {
    let o = parse_url("redis://:pw@127.0.0.1:7000,localhost,[::1]:7002/1").unwrap();
    assert_eq!((o.host.as_str(), o.port, o.db), ("127.0.0.1", 7000, 1));
    assert_eq!(
        o.more_nodes,
        [("localhost".to_string(), 6379), ("::1".to_string(), 7002)]
    );
    assert_eq!(o.password.as_deref(), Some("pw"));
    for bad in ["redis://h1,", "redis://h1,h2:x", "redis://,h2"] {
        assert!(parse_url(bad).is_err(), "{bad}");
    }
    let b = RedisBackend::open(
        "redis://bob:hunter2@127.0.0.1:7000,localhost:7001",
        &OpenOptions::new(&props(&[])),
    )
    .unwrap();
    assert_eq!(b.describe(), "redis://bob@127.0.0.1:7000,localhost:7001");
    assert_eq!(b.nodes().count(), 2);
    // Shared sockets are sized for one node's connections.
    let e = options("redis://h1,h2", &["connections=2"], 8).unwrap_err();
    assert!(e.contains("connections=2") && e.contains("2 nodes"), "{e}");
}

fn props(pairs: &[&str]) -> Properties {
    let mut p = Properties::new();
    for kv in pairs {
        p.set_arg(kv).unwrap();
    }
    p
}

/// Options of `url` with `pairs`, for a run of `workers` connections.
fn options(url: &str, pairs: &[&str], workers: usize) -> Result<RedisOptions, String> {
    let props = props(pairs);
    RedisOptions::from_url(
        url,
        &OpenOptions {
            workers,
            ..OpenOptions::new(&props)
        },
    )
}

#[test]
fn url_forms() {
    for url in ["redis", "Redis:", "redis://h:1/2"] {
        assert!(options(url, &[], 1).is_ok(), "{url}");
    }
    for url in ["rediss", "redis:host"] {
        assert!(options(url, &[], 1).is_err(), "{url}");
    }
}

#[test]
fn ycsb_properties() {
    let o = options(
        "redis",
        &[
            "redis.host=127.0.0.1",
            "redis.port=7001",
            "redis.password=pw",
        ],
        1,
    )
    .unwrap();
    assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 7001));
    assert_eq!(o.password.as_deref(), Some("pw"));
    assert_eq!(o.mode, RedisMode::Hash);
    assert_eq!(o.timeout, DEFAULT_TIMEOUT);
    let o = options(
        "redis://h:1/2",
        &["redis.mode=STRING", "redis.timeout=300"],
        1,
    )
    .unwrap();
    assert_eq!(o.mode, RedisMode::String);
    assert_eq!(o.timeout, Duration::from_millis(300));
    // The Tair whitepaper's command line: its build's name for the layout.
    let o = options(
        "redis",
        &["redis.command_group=string", "redis.timeout=30000"],
        1,
    )
    .unwrap();
    assert_eq!(o.mode, RedisMode::String);
    assert!(options("redis", &["redis.command_group=list"], 1).is_err());
    assert!(options(
        "redis",
        &["redis.command_group=string", "redis.mode=hash"],
        1
    )
    .is_err());
    let o = options(
        "redis",
        &["timeout.ms=50", "redis.timeout=300", "connections=2"],
        16,
    )
    .unwrap();
    assert_eq!(o.timeout, Duration::from_millis(50));
    assert_eq!(
        o.sharing,
        Some(Sharing {
            workers: 16,
            sockets: 2
        })
    );
    // As many sockets as connections is the plain topology.
    let o = options("redis", &["connections=4"], 4).unwrap();
    assert_eq!(o.sharing, None);
    for bad in [
        &["redis.mode=list"][..],
        &["redis.port=70000"],
        &["connections=0"],
        &["timeout.ms=0"],
        &["redis.cluster=true"],
    ] {
        assert!(options("redis", bad, 1).is_err(), "{bad:?}");
    }
}

#[test]
fn describe_hides_the_password() {
    let props = props(&["connections=2"]);
    let b = RedisBackend::open(
        "redis://bob:hunter2@127.0.0.1:7000/2",
        &OpenOptions {
            workers: 16,
            ..OpenOptions::new(&props)
        },
    )
    .unwrap();
    let d = b.describe();
    assert_eq!(
        d,
        "redis://bob@127.0.0.1:7000/2 (16 in flight over 2 connections)"
    );
    assert!(!format!("{b:?}").contains("hunter2"));
}
