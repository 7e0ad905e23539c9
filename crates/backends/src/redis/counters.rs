//! The server counters of a Redis run, read from the text of `INFO`.

use sojourn_core::backend::{ServerCounters, SERVER_INSTANCE};

/// The `INFO` fields sampled as server counters: whole-server CPU seconds
/// (honest where the server serves only this benchmark), keyspace hits and
/// misses (a read of a missing key is a miss) and commands processed. The
/// two `INFO` calls of a phase count in `total_commands_processed` (one of
/// them), which is noise next to any real run.
const INFO_COUNTERS: [(&str, &str); 5] = [
    ("used_cpu_user", "server_user_cpu_s"),
    ("used_cpu_sys", "server_sys_cpu_s"),
    ("keyspace_hits", "keyspace_hits"),
    ("keyspace_misses", "keyspace_misses"),
    ("total_commands_processed", "commands_processed"),
];

/// The commands whose call counts are kept (`INFO commandstats`): the ones
/// sojourn's reads and writes use, so a read-only run shows none of the
/// writes. Commands a script runs (`HSET` in the update script) count as
/// calls of their own besides the `EVALSHA`.
const COUNTED_COMMANDS: [&str; 13] = [
    "get",
    "hget",
    "hmget",
    "hgetall",
    "exists",
    "zrangebyscore",
    "set",
    "hset",
    "hmset",
    "del",
    "zadd",
    "eval",
    "evalsha",
];

/// Server counters from the text of `INFO` (`name:value` lines).
pub(super) fn info_counters(text: &str) -> ServerCounters {
    let mut c = ServerCounters::new();
    let mut cpu = 0.0;
    for line in text.lines() {
        let Some((name, value)) = line.trim_end().split_once(':') else {
            continue;
        };
        if let Some(&(_, ours)) = INFO_COUNTERS.iter().find(|(n, _)| *n == name) {
            if let Ok(v) = value.parse::<f64>() {
                if ours.ends_with("cpu_s") {
                    cpu += v;
                }
                c.set(ours, v);
            }
        } else if name == "run_id" {
            // 40 hex digits, new at every start; 13 of them fit an f64
            // exactly and tell one start from another.
            let digits = value.trim().get(..13).unwrap_or_default();
            if let Ok(id) = u64::from_str_radix(digits, 16) {
                c.set(SERVER_INSTANCE, id as f64);
            }
        } else if let Some(cmd) = name.strip_prefix("cmdstat_") {
            // `calls=12,usec=34,...`
            if COUNTED_COMMANDS.contains(&cmd) {
                let calls = value
                    .split(',')
                    .find_map(|kv| kv.strip_prefix("calls="))
                    .and_then(|v| v.parse::<f64>().ok());
                if let Some(n) = calls {
                    c.set(&format!("calls_{cmd}"), n);
                }
            }
        }
    }
    if c.values.contains_key("server_user_cpu_s") {
        c.set("server_cpu_s", cpu);
    }
    // A command never called since the server started has no line; it
    // counts as zero so that its delta exists (and is 0).
    if !c.values.is_empty() {
        for cmd in COUNTED_COMMANDS {
            let name = format!("calls_{cmd}");
            if !c.values.contains_key(&name) {
                c.set(&name, 0.0);
            }
        }
    }
    c
}
