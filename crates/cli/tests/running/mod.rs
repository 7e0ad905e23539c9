//! Running sojourn in the background for fault tests: start it, wait until
//! its run phase prints a status line, then let the test break the server
//! while the run goes on.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::thread::JoinHandle;

use crate::util::bin;

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
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(" sec: ") && line.contains("operations;") {
            break;
        }
    }
    assert!(seen.contains("operations;"), "no status line:\n{seen}");
    let rest = std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            seen.push_str(&l);
            seen.push('\n');
        }
        seen
    });
    (child, rest)
}
