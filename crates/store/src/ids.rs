//! Whether a run's process is still alive (the host name and run ids are
//! [`sojourn_core::run_record`]'s).

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
    use sojourn_core::run_record::{host_name, new_run_id, new_run_uri};

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
