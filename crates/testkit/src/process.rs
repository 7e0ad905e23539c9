//! Running a program to its end under a deadline: a client that hangs on
//! a stalled server, or a `sojourn` that never finishes, fails its test
//! with what it printed instead of hanging the suite.

use std::io::{Read, Write as _};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a helper program (a database's client, `initdb`, `openssl`)
/// may take: far more than any needs, short of hanging the suite.
pub const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// A program that did not end in time: killed, with what it printed.
#[derive(Debug)]
pub struct Overran {
    pub program: String,
    pub limit: Duration,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl std::fmt::Display for Overran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} did not finish within {:?} and was killed\nstdout:\n{}\nstderr:\n{}",
            self.program,
            self.limit,
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

/// Run `cmd` with `input` on its stdin (none: stdin is empty), collecting
/// stdout and stderr, and kill it if it has not ended within `limit`. The
/// program runs in a process group of its own, and an overrun kills the
/// whole group: a child it left behind would otherwise hold the pipes
/// open.
pub fn try_output_within(
    cmd: &mut Command,
    input: Option<&[u8]>,
    limit: Duration,
) -> std::io::Result<Result<Output, Overran>> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = std::os::unix::process::CommandExt::process_group(cmd, 0)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Threads, so that neither pipe can fill up and block the program
    // while the other is read, nor a large input deadlock against output.
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                // A program may end without reading all of its input.
                let _ = stdin.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_within(&mut child, limit, true)?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok(match status {
        Some(status) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        None => Err(Overran {
            program,
            limit,
            stdout,
            stderr,
        }),
    })
}

/// [`try_output_within`], panicking when the program cannot start or
/// overruns.
pub fn output_within(cmd: &mut Command, input: Option<&[u8]>, limit: Duration) -> Output {
    let program = cmd.get_program().to_string_lossy().into_owned();
    match try_output_within(cmd, input, limit) {
        Ok(Ok(out)) => out,
        Ok(Err(overran)) => panic!("{overran}"),
        Err(e) => panic!("running {program}: {e}"),
    }
}

/// Wait for a child that was spawned elsewhere (its stdout and stderr
/// piped, or already taken) to end within `limit`, collecting what is
/// left of its output; past the limit, kill it and panic with that output.
pub fn finish_within(mut child: Child, limit: Duration) -> Output {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_within(&mut child, limit, false).expect("waiting for a child");
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    match status {
        Some(status) => Output {
            status,
            stdout,
            stderr,
        },
        None => panic!(
            "{}",
            Overran {
                program: format!("process {}", child.id()),
                limit,
                stdout,
                stderr,
            }
        ),
    }
}

/// Wait for `child` to end, at most `limit`; past it, kill it (its whole
/// process group with `group`: it leads one of its own), reap it and
/// return `None`.
fn wait_within(
    child: &mut Child,
    limit: Duration,
    group: bool,
) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            if group {
                // SAFETY: signalling the process group of a child we
                // started (its id is the group's; it is not reaped yet).
                unsafe {
                    libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
                }
            } else {
                let _ = child.kill();
            }
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_input_go_through() {
        let out = output_within(
            Command::new("sh").args(["-c", "cat; echo err >&2; exit 3"]),
            Some(b"hello"),
            Duration::from_secs(30),
        );
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_program_past_its_deadline_is_killed_with_its_output() {
        let start = Instant::now();
        let overran = try_output_within(
            // A grandchild that would hold the pipes open for a minute.
            Command::new("sh").args(["-c", "echo started; sleep 60; true"]),
            None,
            Duration::from_millis(300),
        )
        .unwrap()
        .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(30));
        assert_eq!(overran.stdout, b"started\n");
        let msg = overran.to_string();
        assert!(msg.contains("sh did not finish within 300ms"), "{msg}");
    }
}
