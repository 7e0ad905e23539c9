//! Running sojourn in the background for fault tests: start it, wait until
//! its run phase prints a status line, then let the test break the server
//! while the run goes on.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Stdio};
use std::thread::JoinHandle;

use crate::util::{bin, wait_until_running};

/// Spawn sojourn with `args` and return it once stderr shows a status line
/// (` sec: ... operations;`); the rest of stderr is collected on a thread.
pub fn spawn_until_running(data: &Path, args: &[&str]) -> (Child, JoinHandle<String>) {
    let mut child = bin()
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .arg("--no-progress")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning sojourn");
    let rest = wait_until_running(&mut child, None);
    (child, rest)
}
