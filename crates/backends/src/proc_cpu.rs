//! CPU time of a database server running on this machine, read from
//! Linux's /proc: for backends whose server forks a process per connection
//! (PostgreSQL) and cannot report its own CPU use.
//!
//! Given one of the server's connection processes, its parent is the
//! server's main process (the postmaster). The server's CPU time is then
//! the main process's own and reaped children's time (`utime + stime +
//! cutime + cstime`) plus that of its live children: a child that exits
//! moves from the second sum into the first once reaped, so the total only
//! grows, which is what a counter sampled at a phase's start and end needs.
//! Elsewhere (not Linux, /proc hidden, a server in another PID namespace)
//! the figure is simply absent.

use std::fs;

/// /proc reports times in USER_HZ, which the kernel fixes at 100 for user
/// space on every architecture sojourn runs on (it is not CONFIG_HZ).
const USER_HZ: f64 = 100.0;

/// What /proc/<pid>/stat says about a process.
struct ProcStat {
    comm: String,
    ppid: u32,
    /// utime + stime + cutime + cstime, in ticks.
    ticks: u64,
}

fn stat(pid: u32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: it ends at the
    // last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // Fields after the name, from 0: state, ppid, ..., utime (11), stime,
    // cutime, cstime (14).
    let num = |i: usize| rest.get(i)?.parse::<i64>().ok();
    let ppid = u32::try_from(num(1)?).ok()?;
    let ticks = (11..=14).map(num).sum::<Option<i64>>()?;
    Some(ProcStat {
        comm,
        ppid,
        ticks: u64::try_from(ticks).ok()?,
    })
}

/// CPU seconds of the whole server that `backend_pid` (one of its
/// connection processes) belongs to; `None` when it cannot be told.
/// `expected` is the start of the process name (e.g. "postgres"): a pid
/// that names some other program means the server is not ours to read
/// (another PID namespace), and no figure beats a wrong one.
pub(crate) fn server_cpu_s(backend_pid: u32, expected: &str) -> Option<f64> {
    let backend = stat(backend_pid)?;
    if !backend.comm.starts_with(expected) {
        return None;
    }
    let main_pid = backend.ppid;
    let main = stat(main_pid)?;
    if !main.comm.starts_with(expected) {
        return None;
    }
    let mut ticks = main.ticks;
    for entry in fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may exit between the listing and the read: skip it
        // (its time is then in the main process's cutime, or about to be).
        if let Some(s) = stat(pid).filter(|s| s.ppid == main_pid) {
            ticks += s.ticks;
        }
    }
    Some(ticks as f64 / USER_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = stat(std::process::id()).expect("own /proc entry");
        assert_eq!(me.ppid, std::os::unix::process::parent_id());
        // Not our own name, so not a server of ours to read.
        assert_eq!(server_cpu_s(std::process::id(), "no-such-program"), None);
    }
}
