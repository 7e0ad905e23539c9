//! The server counters of a memcached run, read from `stats`.

use sojourn_core::backend::ServerCounters;

/// The number `stats` gives for `name`.
pub(super) fn stat_in(stats: &[u8], name: &[u8]) -> Option<f64> {
    stats
        .split(|&b| b == b'\n')
        .find_map(|line| {
            line.strip_prefix(b"STAT ")?
                .strip_prefix(name)?
                .strip_prefix(b" ")
        })
        .and_then(|n| std::str::from_utf8(n).ok())
        .and_then(|n| n.trim().parse::<f64>().ok())
}

/// memcached's counters as server counters: `get_hits` and `get_misses`
/// as memcached names them, `rusage_user`/`rusage_system` as the other
/// backends' `server_user_cpu_s`/`server_sys_cpu_s`.
pub(crate) fn stats_counters(stats: &[u8]) -> ServerCounters {
    let mut c = ServerCounters::new();
    for (theirs, ours) in [
        (&b"get_hits"[..], "get_hits"),
        (b"get_misses", "get_misses"),
        (b"cmd_get", "cmd_get"),
        (b"cmd_set", "cmd_set"),
        (b"rusage_user", "server_user_cpu_s"),
        (b"rusage_system", "server_sys_cpu_s"),
    ] {
        if let Some(v) = stat_in(stats, theirs) {
            c.set(ours, v);
        }
    }
    if let (Some(u), Some(s)) = (
        c.values.get("server_user_cpu_s"),
        c.values.get("server_sys_cpu_s"),
    ) {
        let cpu = u + s;
        c.set("server_cpu_s", cpu);
    }
    c
}
