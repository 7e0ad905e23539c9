//! The database's own counters, sampled around a phase: what a backend
//! reads from the server ([`ServerCounters`], a snapshot of monotonic
//! counters by name) and what a phase keeps ([`ServerStats`], the change
//! between two snapshots with the operations done in between, hence the
//! per-operation figures the summary prints).
//!
//! Counters are plain `f64` by name so that each backend can say what its
//! server tells (PostgreSQL's `pg_stat_database`, Redis's `INFO`, MySQL's
//! `SHOW GLOBAL STATUS`) without the core knowing any of them; the names are
//! documented in docs/json.md. CPU counters are in seconds and end in
//! `cpu_s`, so the summary can show them as microseconds per operation.

use std::collections::BTreeMap;

use serde::Serialize;

/// One reading of a server's monotonic counters, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServerCounters {
    pub values: BTreeMap<String, f64>,
}

impl ServerCounters {
    pub fn new() -> ServerCounters {
        ServerCounters::default()
    }

    pub fn set(&mut self, name: &str, value: f64) {
        self.values.insert(name.to_string(), value);
    }
}

/// What a server's counters did over a phase: the change of each counter
/// between the samples at its start and end, and the operations the client
/// completed in between (warm-up included: the samples bracket the whole
/// phase, so per-operation figures must count every operation in it).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServerStats {
    pub operations: u64,
    pub deltas: BTreeMap<String, f64>,
}

/// Not a counter: a number that names the server's process (Redis's
/// `run_id`, PostgreSQL's start time), so that a reading from after a
/// restart is known for one even when every counter has grown past its
/// old value again.
pub const SERVER_INSTANCE: &str = "server_instance";

impl ServerStats {
    /// The change between two readings; a counter only one reading has is
    /// left out. When the server restarted, or its statistics were reset,
    /// in between (another [`SERVER_INSTANCE`], or a counter that went
    /// backwards), no delta means anything, and the error says what
    /// happened: no figure beats a wrong one.
    pub fn between(
        start: &ServerCounters,
        end: &ServerCounters,
        operations: u64,
    ) -> Result<ServerStats, String> {
        let instance = |c: &ServerCounters| c.values.get(SERVER_INSTANCE).copied();
        if let (Some(a), Some(b)) = (instance(start), instance(end)) {
            if a != b {
                return Err(
                    "the server restarted during the phase (its instance changed), \
                            so its counters started over"
                        .to_string(),
                );
            }
        }
        let mut deltas = BTreeMap::new();
        let mut backwards = Vec::new();
        for (name, &e) in end.values.iter().filter(|(n, _)| *n != SERVER_INSTANCE) {
            let Some(&s) = start.values.get(name) else {
                continue;
            };
            if e < s {
                backwards.push(format!("{name} {s} -> {e}"));
            } else {
                deltas.insert(name.clone(), e - s);
            }
        }
        if !backwards.is_empty() {
            return Err(format!(
                "counters went backwards ({}): the server restarted or its statistics were \
                 reset during the phase",
                backwards.join(", ")
            ));
        }
        Ok(ServerStats { operations, deltas })
    }

    /// A counter's change per operation; `None` without operations.
    pub fn per_op(&self, name: &str) -> Option<f64> {
        let d = *self.deltas.get(name)?;
        (self.operations > 0).then(|| d / self.operations as f64)
    }

    /// Every counter per operation, CPU seconds turned into microseconds
    /// and renamed `..._us_per_op`, others `..._per_op`.
    pub fn per_op_figures(&self) -> BTreeMap<String, f64> {
        self.deltas
            .keys()
            .filter_map(|name| {
                let v = self.per_op(name)?;
                Some(match name.strip_suffix("_s").filter(|_| is_cpu(name)) {
                    Some(base) => (format!("{base}_us_per_op"), v * 1e6),
                    None => (format!("{name}_per_op"), v),
                })
            })
            .collect()
    }
}

impl ServerStats {
    /// One line for people: server CPU per operation first (next to the
    /// client's, which the JSON report has), then every other counter per
    /// operation, e.g. `server CPU 12.3 µs/op; per op: blks_hit 1.02, ...`.
    pub fn digest(&self) -> String {
        let figures = self.per_op_figures();
        let mut parts = Vec::new();
        if let Some(cpu) = figures.get("server_cpu_us_per_op") {
            parts.push(format!("server CPU {cpu:.1} µs/op"));
        }
        let rest: Vec<String> = self
            .deltas
            .keys()
            .filter(|n| !is_cpu(n))
            // Zeros are left to the JSON report: a line of them hides
            // the counters that moved.
            .filter_map(|n| Some((n, self.per_op(n)?)))
            .filter(|(_, v)| *v != 0.0)
            .map(|(n, v)| format!("{n} {}", short(v)))
            .collect();
        if !rest.is_empty() {
            parts.push(format!("per op: {}", rest.join(", ")));
        }
        format!("{} ({} operations)", parts.join("; "), self.operations)
    }
}

/// A per-operation figure with about three significant digits.
fn short(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Whether a counter is CPU time in seconds.
pub fn is_cpu(name: &str) -> bool {
    name.ends_with("cpu_s")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(pairs: &[(&str, f64)]) -> ServerCounters {
        let mut c = ServerCounters::new();
        for (k, v) in pairs {
            c.set(k, *v);
        }
        c
    }

    #[test]
    fn deltas_leave_out_counters_that_appeared() {
        let a = reading(&[
            ("blks_hit", 10.0),
            ("server_cpu_s", 1.0),
            ("tup_updated", 3.0),
            (SERVER_INSTANCE, 7.0),
        ]);
        let b = reading(&[
            ("blks_hit", 30.0),
            ("server_cpu_s", 1.5),
            ("tup_updated", 3.0),
            ("new", 4.0),
            (SERVER_INSTANCE, 7.0),
        ]);
        let s = ServerStats::between(&a, &b, 10).unwrap();
        assert_eq!(s.deltas.len(), 3);
        assert_eq!(s.deltas["blks_hit"], 20.0);
        assert_eq!(s.per_op("blks_hit"), Some(2.0));
        let f = s.per_op_figures();
        assert_eq!(f["blks_hit_per_op"], 2.0);
        assert!((f["server_cpu_us_per_op"] - 50_000.0).abs() < 1e-6);
        assert_eq!(
            ServerStats::between(&a, &b, 0).unwrap().per_op("blks_hit"),
            None
        );
        assert_eq!(
            s.digest(),
            "server CPU 50000.0 µs/op; per op: blks_hit 2.00 (10 operations)"
        );
    }

    #[test]
    fn a_restart_or_reset_is_said_not_measured() {
        let a = reading(&[("keyspace_hits", 500.0), ("keyspace_misses", 1.0)]);
        // After a restart, only the misses of the reconnecting client have
        // grown past their old value: no delta may be shown.
        let b = reading(&[("keyspace_hits", 20.0), ("keyspace_misses", 9.0)]);
        let e = ServerStats::between(&a, &b, 10).unwrap_err();
        assert!(e.contains("keyspace_hits 500 -> 20"), "{e}");
        // Every counter grew again, but the server is another one.
        let mut a = reading(&[("keyspace_hits", 5.0)]);
        a.set(SERVER_INSTANCE, 1.0);
        let mut b = reading(&[("keyspace_hits", 900.0)]);
        b.set(SERVER_INSTANCE, 2.0);
        let e = ServerStats::between(&a, &b, 10).unwrap_err();
        assert!(e.contains("restarted"), "{e}");
    }
}
