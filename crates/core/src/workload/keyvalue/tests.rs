//! Tests of the key-value workload: its settings, writers and readers,
//! checksums and status line.

use super::config::*;
use super::worker::*;
use crate::executor::Group;
use crate::generator::rng_for;
use crate::op::OpKind;
use crate::properties::{Origin, Properties};
use crate::workload::phase::Phase;

fn props(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.set(k, v, Origin::Flag("-p"));
    }
    p
}

#[test]
fn values_verify_for_their_key_only() {
    let mut rng = rng_for(1, 2);
    let mut v = Vec::new();
    fill_value(&mut rng, "key:7", 64, &mut v);
    assert_eq!(v.len(), 64);
    assert!(verify("key:7", &v));
    assert!(!verify("key:8", &v), "a value read under another key");
    let mut bad = v.clone();
    bad[40] = if bad[40] == b'a' { b'b' } else { b'a' };
    assert!(!verify("key:7", &bad), "one flipped byte");
    assert!(!verify("key:7", &v[..5]));
    assert!(v[9..].iter().all(u8::is_ascii_lowercase));
}

#[test]
fn defaults_and_phases() {
    let c = KeyValueConfig::from_properties(&props(&[]), Phase::Run).unwrap();
    assert_eq!(c.num_unique_keys, 1_000_000);
    assert_eq!((c.num_threads_write, c.num_threads_read), (2, 24));
    assert_eq!(c.key(42), "key:42");
    assert_eq!(c.value_size, 256);
    let load = KeyValueConfig::from_properties(&props(&[]), Phase::Load).unwrap();
    assert_eq!(load.num_threads_read, 0);
    assert_eq!(
        load.groups(Phase::Load, 400_000),
        vec![Group {
            workers: 2,
            target: None,
            operation_count: Some(600_000)
        }]
    );
    let ro = props(&[("read_only", "true"), ("read_rate", "500")]);
    let c = KeyValueConfig::from_properties(&ro, Phase::Run).unwrap();
    assert_eq!(
        c.groups(Phase::Run, 10),
        vec![Group {
            workers: 24,
            target: Some(crate::rate::Target::constant(500.0)),
            operation_count: None
        }]
    );
}

#[test]
fn bad_values_name_the_property() {
    for (k, v, want) in [
        ("value_size", "4", "value_size"),
        ("read_rate", "0", "read_rate"),
        ("num_reads", "-2", "num_reads"),
        ("read_distribution", "zipf", "read_distribution"),
        ("nouuid", "false", "uuid"),
    ] {
        let e = KeyValueConfig::from_properties(&props(&[(k, v)]), Phase::Run)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{k}={v}: {e}");
    }
    let c = KeyValueConfig::from_properties(
        &props(&[("nouuid", "false"), ("uuid", "abc")]),
        Phase::Run,
    )
    .unwrap();
    assert_eq!(c.key(3), "abc:key:3");
}

#[test]
fn ycsb_settings_the_user_gave_are_refused_naming_the_counterpart() {
    let file = Properties::read_str(
        "workload=keyvalue\nnum_reads=10\nrecordcount=1000\nfieldcount=1\n",
        std::path::Path::new("kv.properties"),
    )
    .unwrap();
    let e = KeyValueConfig::from_properties(&file, Phase::Run)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("kv.properties:3: recordcount = '1000': ")
            && e.contains("num_unique_keys")
            && e.contains(
                "also not read: fieldcount = '1' (kv.properties:4): a value is one field, v"
            ),
        "{e}"
    );
    let e = KeyValueConfig::from_properties(&props(&[("operationcount", "5")]), Phase::Run)
        .unwrap_err()
        .to_string();
    assert!(e.contains("num_writes and num_reads"), "{e}");
    let mut threads = Properties::new();
    threads.set("threadcount", "8", Origin::Flag("--threads"));
    let e = KeyValueConfig::from_properties(&threads, Phase::Load)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--threads: threadcount = '8'")
            && e.contains("num_threads_write and num_threads_read"),
        "{e}"
    );
    // sojourn's own defaults are not the user's.
    let mut defaults = Properties::new();
    defaults.set("recordcount", "1000", Origin::Default);
    defaults.set("threadcount", "32", Origin::Default);
    KeyValueConfig::from_properties(&defaults, Phase::Run).unwrap();
}

#[test]
fn written_moves_over_acknowledged_inserts_only() {
    let cfg =
        KeyValueConfig::from_properties(&props(&[("num_unique_keys", "10")]), Phase::Run).unwrap();
    let s = KeyValueShared::new(cfg, 3);
    assert_eq!(s.written(), 3);
    let (a, b) = (s.inserts.next(), s.inserts.next());
    assert_eq!((a, b), (3, 4));
    s.inserts.acknowledge(b);
    assert_eq!(s.written(), 3, "key 3 is not confirmed yet");
    s.inserts.acknowledge(a);
    assert_eq!(s.written(), 5);
}

#[test]
fn writers_overwrite_only_acknowledged_keys() {
    let cfg =
        KeyValueConfig::from_properties(&props(&[("num_unique_keys", "10")]), Phase::Run).unwrap();
    let s = KeyValueShared::new(cfg, 0);
    let mut w = s.worker(7, 0);
    // Every key handed out, only 0..=3 acknowledged: 4..=9 are in flight.
    for want in 0..10 {
        assert_eq!(w.next_write(), (OpKind::Insert, want));
    }
    for n in 0..4 {
        s.inserts.acknowledge(n);
    }
    let mut seen = [false; 4];
    for _ in 0..400 {
        let (kind, n) = w.next_write();
        assert_eq!(kind, OpKind::Update);
        assert!(n < 4, "overwrote key {n}, whose insert is in flight");
        seen[n as usize] = true;
    }
    assert!(seen.iter().all(|&b| b), "{seen:?}");
    // Once all are acknowledged, every key may be overwritten.
    for n in 4..10 {
        s.inserts.acknowledge(n);
    }
    assert!((0..400).any(|_| w.next_write().1 == 9));
}
