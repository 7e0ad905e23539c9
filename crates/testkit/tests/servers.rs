//! The server launcher itself, with Python's little HTTP server standing in
//! for a database (scripts/deps installs python3): a port someone else
//! took is retried on another, a server counts as ready only when it is
//! the one listening, a server that picks its own port is found there,
//! pausing returns once the server is stopped, and a closed port stays
//! closed.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use sojourn_testkit::servers::{
    all_threads_stopped, closed_port, free_port, listens, Server, StartError,
};

fn http_server(port: u16) -> Command {
    let mut c = Command::new("python3");
    c.args(["-u", "-m", "http.server", "--bind", "127.0.0.1"])
        .arg(port.to_string());
    c
}

/// `GET /` answered within `limit`.
fn answers(port: u16, limit: Duration) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    s.set_read_timeout(Some(limit)).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut first = [0u8; 4];
    s.read_exact(&mut first).is_ok() && &first == b"HTTP"
}

#[test]
fn a_port_taken_by_another_process_is_retried_on_another() {
    // Held (and listened on) by this test process: the server must fail
    // to bind it, and the port accepting connections must not fool the
    // launcher into calling the server ready.
    let taken = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let ports = std::iter::once(taken_port).chain(std::iter::repeat_with(free_port));
    let server = Server::start_on_ports(
        "http.server",
        tempfile::tempdir().unwrap(),
        ports,
        http_server,
        Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(server.port, taken_port);
    assert!(listens(server.pid(), server.port));
    assert!(!listens(server.pid(), taken_port));
    assert!(
        server.log().contains("Address already in use"),
        "{}",
        server.log()
    );
    assert!(answers(server.port, Duration::from_secs(10)));
}

#[test]
fn a_server_that_never_listens_is_not_ready_even_when_its_port_answers() {
    let taken = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let result = Server::start_on_ports(
        "sleep",
        tempfile::tempdir().unwrap(),
        [port],
        |_| {
            let mut c = Command::new("sleep");
            c.arg("60");
            c
        },
        Duration::from_millis(500),
    );
    match result {
        Err(StartError::NotListening { port: Some(p), .. }) => assert_eq!(p, port),
        Err(e) => panic!("{e}"),
        Ok(s) => panic!("ready on port {} that another process holds", s.port),
    }
}

#[test]
fn a_server_that_picks_its_port_is_found_on_it() {
    let told = |dir: &Path| {
        let log = std::fs::read_to_string(dir.join("server.log")).ok()?;
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let after = log.split(" port ").nth(1)?;
        after.split_whitespace().next()?.parse().ok()
    };
    let server = Server::start_telling_port(
        "http.server",
        tempfile::tempdir().unwrap(),
        http_server(0),
        told,
    );
    assert_ne!(server.port, 0);
    assert!(listens(server.pid(), server.port));
    assert!(answers(server.port, Duration::from_secs(10)));
}

#[test]
fn pause_returns_once_the_server_is_stopped() {
    let server = Server::start("http.server", tempfile::tempdir().unwrap(), http_server);
    assert!(answers(server.port, Duration::from_secs(10)));
    for _ in 0..20 {
        server.pause();
        // At once, without waiting: pause has already waited.
        assert!(all_threads_stopped(server.pid()));
        server.resume();
        assert!(answers(server.port, Duration::from_secs(10)));
    }
    server.pause();
    assert!(!answers(server.port, Duration::from_millis(300)));
    server.resume();
    assert!(answers(server.port, Duration::from_secs(10)));
}

#[test]
fn a_closed_port_refuses_and_cannot_be_taken_while_held() {
    let closed = closed_port();
    let port = closed.port();
    let err = TcpStream::connect(("127.0.0.1", port)).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    let err = TcpListener::bind(("127.0.0.1", port)).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
}

#[test]
fn a_zombie_counts_as_stopped_and_a_running_process_does_not() {
    // Not waited for, so once it exits it stays a zombie: what a backend
    // becomes when it exits just as its stopped postmaster cannot reap it.
    let mut child = Command::new("sleep").arg("0.05").spawn().unwrap();
    let pid = child.id();
    assert!(
        !all_threads_stopped(pid),
        "a sleeping process is not stopped"
    );
    let stat = format!("/proc/{pid}/stat");
    let state = || {
        let s = std::fs::read_to_string(&stat).unwrap();
        s.rsplit_once(')')
            .unwrap()
            .1
            .trim_start()
            .chars()
            .next()
            .unwrap()
    };
    let mut tries = 0;
    while state() != 'Z' {
        tries += 1;
        assert!(tries < 10_000, "the child never exited");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(all_threads_stopped(pid));
    child.wait().unwrap();
}
