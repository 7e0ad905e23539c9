//! Names for runs and machines: random run ids, PKB-style run URIs,
//! and the host name that, with the pid, tells whether a run's process is
//! still alive.

/// A new run id: a random UUID, so ids never collide across client
/// machines writing to one store, and a short prefix (as `results list`
/// shows) already tells runs apart. Runs are ordered by their start time,
/// not by id.
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A PKB-style run URI: eight hex digits, as PerfKitBenchmarker takes the
/// tail of a UUID4. Client processes of one run share it.
pub fn new_run_uri() -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    u[u.len() - 8..].to_string()
}

/// This machine's host name ("localhost" if it cannot be read).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    if name.is_empty() {
        "localhost".to_string()
    } else {
        name
    }
}

/// Whether a process with this pid exists on this machine.
pub(crate) fn pid_alive(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    // EPERM: it exists but belongs to someone else.
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_well_formed() {
        let a = new_run_id();
        let b = new_run_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        let uri = new_run_uri();
        assert_eq!(uri.len(), 8);
        assert!(uri.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(pid_alive(std::process::id()));
        assert!(!host_name().is_empty());
    }
}
