//! The process under signals: a client stall (SIGSTOP/SIGCONT) during a run
//! at a target rate shows in response time as the queueing arithmetic
//! predicts, and Ctrl+C (SIGINT) keeps and prints the partial results.

mod util;

use std::process::Stdio;
use std::time::Duration;

use util::*;

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

/// Spawn sojourn and return it once its stderr shows a status line of the
/// run phase (after the line `after`, when given: `bench` loads first, at
/// the same target); the rest of stderr is collected on a thread.
fn spawn_until_running(
    data: &std::path::Path,
    args: &[&str],
    after: Option<&str>,
) -> (std::process::Child, std::thread::JoinHandle<String>) {
    let mut child = bin()
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rest = wait_until_running(&mut child, after);
    (child, rest)
}

#[test]
fn client_stall_shows_in_response_time_not_service_time() {
    let dir = tempfile::tempdir().unwrap();
    // 2000 ops/s for 6000 operations (3 s), uniform arrivals.
    let (child, rest) = spawn_until_running(
        dir.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloadc",
            "-p",
            "operationcount=6000",
            "-target",
            "2000",
            "--arrival",
            "uniform",
            "-s",
            "-p",
            "status.interval=0.2",
            "-p",
            "measurement.interval=both",
        ],
        Some("loaded 1000 records"),
    );
    // The stall itself: the client is frozen for 300 ms.
    let stall = Duration::from_millis(300);
    signal(child.id(), libc::SIGSTOP);
    std::thread::sleep(stall);
    signal(child.id(), libc::SIGCONT);
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    assert_eq!(get(&s, "READ", "Return=OK"), 6000.0);
    // 600 of 6000 arrivals (10%) fall in the stall and wait a uniform
    // share of it: response p99 ~ 0.9 * 300 ms, p95 ~ 0.5 * 300 ms.
    let p99 = get(&s, "Intended-READ", "99thPercentileLatency(us)") / 1000.0;
    let p95 = get(&s, "Intended-READ", "95thPercentileLatency(us)") / 1000.0;
    assert!(
        (200.0..=340.0).contains(&p99),
        "intended p99 {p99} ms\n{s:#?}"
    );
    assert!(
        (90.0..=210.0).contains(&p95),
        "intended p95 {p95} ms\n{s:#?}"
    );
    assert!(get(&s, "Intended-READ", "MaxLatency(us)") >= 290_000.0);
    // Only the few operations caught in flight saw it as service time.
    let service_p99 = get(&s, "READ", "99thPercentileLatency(us)") / 1000.0;
    assert!(service_p99 < 20.0, "service p99 {service_p99} ms");
}

#[test]
fn interrupt_keeps_and_prints_partial_results() {
    interrupted_by(libc::SIGINT);
}

/// What Kubernetes sends before it kills a pod, and a closed terminal:
/// the run stops as on Ctrl+C, and what it measured is kept.
#[test]
fn sigterm_and_sighup_stop_as_ctrl_c_does() {
    interrupted_by(libc::SIGTERM);
    interrupted_by(libc::SIGHUP);
}

fn interrupted_by(sig: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let (child, rest) = spawn_until_running(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=0",
            "-p",
            "maxexecutiontime=60",
            "-target",
            "1000",
            "-s",
            "-p",
            "status.interval=0.2",
        ],
        None,
    );
    signal(child.id(), sig);
    let out = finish(child);
    let stderr = rest.join().unwrap();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let s = parse_summary(&text(&out.stdout));
    let done = get_or_zero(&s, "READ", "Return=OK") + get_or_zero(&s, "UPDATE", "Return=OK");
    assert!(done > 0.0 && done < 60_000.0, "{done}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    // What ran is stored, marked interrupted, with the printed totals.
    let store =
        sojourn_store::Store::open(dir.path().join("results.sqlite").to_str().unwrap()).unwrap();
    let run = store.load("last").unwrap();
    assert_eq!(run.summary.status, sojourn_store::RunStatus::Interrupted);
    assert_eq!(run.summary.totals.unwrap().operations as f64, done);
}
