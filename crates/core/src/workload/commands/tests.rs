//! Tests of the commands workload: its settings and each connection's
//! cycle through the templates.

use super::config::*;
use super::worker::*;
use crate::properties::Origin;
use crate::properties::Properties;
use std::sync::Arc;

fn props(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    p.set("workload", "commands", Origin::CommandLine);
    for (k, v) in pairs {
        p.set(k, v, Origin::CommandLine);
    }
    p
}

fn worker(cfg: &CommandsConfig, index: usize, clients: u64) -> CommandsWorker {
    let shared = Arc::new(Shared {
        cfg: cfg.clone(),
        kinds: Vec::new(),
        data: vec![b'x'; cfg.data.max()],
        keys: vec![None; cfg.entries.len()],
        seed: 7,
        clients,
    });
    shared.worker(index)
}

#[test]
fn templates_in_a_cycle_with_their_ratios() {
    let cfg = CommandsConfig::from_properties(&props(&[
        ("commands.1", "SET __key__ __data__"),
        ("commands.2", "GET __key__"),
        ("commands.2.ratio", "3"),
        ("commands.key_maximum", "99"),
        ("commands.data_size", "5"),
    ]))
    .unwrap();
    let mut w = worker(&cfg, 0, 1);
    let names: Vec<String> = (0..9).map(|_| w.next_args().0.to_string()).collect();
    assert_eq!(
        names,
        ["SET", "GET", "GET", "GET", "SET", "GET", "GET", "GET", "SET"]
    );
    let (_, args) = w.next_args();
    let words: Vec<&[u8]> = args.iter().collect();
    assert_eq!(words[0], b"GET");
    let key = std::str::from_utf8(words[1]).unwrap();
    let n: u64 = key.strip_prefix("memtier-").unwrap().parse().unwrap();
    assert!(n <= 99, "{key}");
    for _ in 0..2 {
        w.next_args();
    }
    let (name, args) = w.next_args();
    assert_eq!(name, "SET");
    assert_eq!(args.get(2), Some(&b"xxxxx"[..]));
}

#[test]
fn rand_int_and_sizes_as_redis_benchmark_and_memtier_draw_them() {
    let cfg = CommandsConfig::from_properties(&props(&[
        ("commands.1", "SET key:__rand_int__ __data__ EX __expiry__"),
        ("commands.random_range", "1000"),
        ("commands.data_size_range", "10-20"),
        ("commands.expiry_range", "5-6"),
    ]))
    .unwrap();
    let mut w = worker(&cfg, 0, 1);
    for _ in 0..200 {
        let (_, a) = w.next_args();
        let key = std::str::from_utf8(a.get(1).unwrap()).unwrap();
        let digits = key.strip_prefix("key:").unwrap();
        assert_eq!(digits.len(), 12, "{key}");
        assert!(digits.parse::<u64>().unwrap() < 1000);
        assert!((10..=20).contains(&a.get(2).unwrap().len()));
        assert!(matches!(a.get(4), Some(b"5" | b"6")));
    }
    // Without -r, redis-benchmark leaves the placeholder as it is.
    let cfg =
        CommandsConfig::from_properties(&props(&[("commands.1", "INCR c:__rand_int__")])).unwrap();
    assert_eq!(
        worker(&cfg, 0, 1).next_args().1.get(1),
        Some(&b"c:__rand_int__"[..])
    );
}

#[test]
fn connections_draw_apart_unless_told_otherwise() {
    let keys = |distinct: &str| {
        let cfg = CommandsConfig::from_properties(&props(&[
            ("commands.1", "GET __key__"),
            ("commands.distinct_seeds", distinct),
        ]))
        .unwrap();
        let draw = |i| {
            let mut w = worker(&cfg, i, 2);
            (0..5)
                .map(|_| w.next_args().1.get(1).unwrap().to_vec())
                .collect::<Vec<_>>()
        };
        (draw(0), draw(1))
    };
    let (a, b) = keys("true");
    assert_ne!(a, b);
    let (a, b) = keys("false");
    assert_eq!(a, b);
}

#[test]
fn sizes_by_key_and_parallel_slices() {
    let cfg = CommandsConfig::from_properties(&props(&[
        ("commands.1", "SET __key__ __data__"),
        ("commands.1.key_pattern", "P"),
        ("commands.key_maximum", "99"),
        ("commands.data_size_range", "1-100"),
        ("commands.data_size_pattern", "S"),
    ]))
    .unwrap();
    let mut second = worker(&cfg, 1, 2);
    let (_, a) = second.next_args();
    assert_eq!(a.get(1), Some(&b"memtier-50"[..]));
    // Key 50 of 0..=99: half way from 1 to 100 bytes.
    assert_eq!(a.get(2).unwrap().len(), 1 + (99.0 * 50.0 / 99.0) as usize);
}

#[test]
fn names_and_refusals() {
    let cfg = CommandsConfig::from_properties(&props(&[
        ("commands.1", "set __key__ __data__"),
        ("commands.2", "SET __key__ x"),
        ("commands.10", "GET __key__"),
        ("commands.10.name", "READ_ONE"),
    ]))
    .unwrap();
    let names: Vec<&str> = cfg.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["SET", "SET-2", "READ_ONE"]);
    let err = |pairs: &[(&str, &str)]| {
        CommandsConfig::from_properties(&props(pairs))
            .unwrap_err()
            .to_string()
    };
    assert!(err(&[]).contains("at least one template"));
    assert!(
        err(&[("commands.1", "GET __key__"), ("commands.1.ratio", "0")])
            .contains("commands.1.ratio")
    );
    assert!(
        err(&[("commands.1", "GET __key__"), ("commands.2.ratio", "2")])
            .contains("commands.2, which is not given")
    );
    assert!(
        err(&[("commands.1", "GET __key__"), ("commands.keyprefix", "x")])
            .contains("commands.key_prefix")
    );
    assert!(
        err(&[("commands.1", "GET __key__"), ("commands.key_pattern", "Q")])
            .contains("R (uniform)")
    );
    assert!(err(&[
        ("commands.1", "GET __key__"),
        ("commands.key_minimum", "5"),
        ("commands.key_maximum", "4")
    ])
    .contains("below"));
    assert!(err(&[
        ("commands.1", "GET __key__"),
        ("commands.data_size_range", "9-3")
    ])
    .contains("MIN-MAX"));
}
