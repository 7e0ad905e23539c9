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

impl ServerStats {
    /// The change between two readings. A counter that went backwards (the
    /// server restarted or its statistics were reset during the phase) or
    /// that only one reading has is left out: no figure beats a wrong one.
    pub fn between(start: &ServerCounters, end: &ServerCounters, operations: u64) -> ServerStats {
        let deltas = end
            .values
            .iter()
            .filter_map(|(name, &e)| {
                let s = *start.values.get(name)?;
                (e >= s).then(|| (name.clone(), e - s))
            })
            .collect();
        ServerStats { operations, deltas }
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
    fn deltas_drop_counters_that_went_backwards_or_appeared() {
        let a = reading(&[
            ("blks_hit", 10.0),
            ("reset", 50.0),
            ("server_cpu_s", 1.0),
            ("tup_updated", 3.0),
        ]);
        let b = reading(&[
            ("blks_hit", 30.0),
            ("reset", 2.0),
            ("server_cpu_s", 1.5),
            ("tup_updated", 3.0),
            ("new", 4.0),
        ]);
        let s = ServerStats::between(&a, &b, 10);
        assert_eq!(s.deltas.len(), 3);
        assert_eq!(s.deltas["blks_hit"], 20.0);
        assert_eq!(s.per_op("blks_hit"), Some(2.0));
        let f = s.per_op_figures();
        assert_eq!(f["blks_hit_per_op"], 2.0);
        assert!((f["server_cpu_us_per_op"] - 50_000.0).abs() < 1e-6);
        assert_eq!(ServerStats::between(&a, &b, 0).per_op("blks_hit"), None);
        assert_eq!(
            s.digest(),
            "server CPU 50000.0 µs/op; per op: blks_hit 2.00 (10 operations)"
        );
    }
}
