//! Hosts of a test's own: Linux network namespaces, each with one address
//! on a private bridge, so that a database, a results store, agents and a
//! coordinator can run as on separate machines, with traffic only inside
//! the test's own namespaces.
//!
//! - [`Lan::new`] makes a switch namespace holding a bridge, and one host
//!   namespace per name, joined to it by a veth pair, at 10.X.Y.(i+1)/24.
//!   Everything is removed when the `Lan` is dropped.
//! - Code runs in a host through a thread that has entered it
//!   ([`Host::run`]): what that thread starts (servers, `sojourn`
//!   processes) lives in the host, as a fork inherits its thread's
//!   namespace.
//! - [`Host::forward`] serves a port of the host's own loopback on its
//!   address, each direction delayed by a latency: how a server started on
//!   127.0.0.1 (as the testkit starts them) is reached from the other
//!   hosts across a slow network, where the kernel has no `sch_netem` for
//!   `tc netem` to use.
//! - [`Host::cut_from`] drops every packet to another host for a while
//!   (a blackhole route): connections stall, as over a broken network,
//!   and resume when [`Host::restore`] removes it.
//!
//! Root only, with iproute2's `ip` (`SOJOURN_TEST_LEAVE_OUT=netns` leaves
//! these tests out).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::needs::{self, Need};
use crate::process::{output_within, TOOL_LIMIT};

/// A private network of hosts.
pub struct Lan {
    ip: PathBuf,
    switch: String,
    hosts: Vec<Host>,
}

/// One host of a [`Lan`].
#[derive(Clone)]
pub struct Host {
    pub name: String,
    /// Its namespace's name (`ip netns`).
    pub netns: String,
    pub addr: Ipv4Addr,
    ip: PathBuf,
}

/// Run `ip ARGS`, panicking with what it said when it fails.
fn ip(bin: &PathBuf, args: &[&str]) {
    let out = output_within(Command::new(bin).args(args), None, TOOL_LIMIT);
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Lan {
    /// A network of `names`, or `None` when the run leaves netns out.
    /// Panics, saying why, when this is not root or `ip` is missing.
    pub fn new(names: &[&str]) -> Option<Lan> {
        let bin = needs::find_binary(
            Need::Netns,
            "ip",
            &[PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")],
        )?;
        // SAFETY: geteuid has no preconditions.
        assert!(
            unsafe { libc::geteuid() } == 0,
            "{}",
            needs::missing(Need::Netns, "root", "the effective user")
        );
        // Unique per process and per network: tests of one binary run at
        // once, and a crashed run's leftovers must not collide.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{:x}{n}", std::process::id() % 0xffff);
        let subnet = (std::process::id() % 200 + n * 7) % 250 + 1;
        let switch = format!("sjsw{tag}");
        ip(&bin, &["netns", "add", &switch]);
        let mut lan = Lan {
            ip: bin.clone(),
            switch: switch.clone(),
            hosts: Vec::new(),
        };
        ip(
            &bin,
            &["-n", &switch, "link", "add", "br0", "type", "bridge"],
        );
        ip(&bin, &["-n", &switch, "link", "set", "br0", "up"]);
        for (i, name) in names.iter().enumerate() {
            let netns = format!("sj{tag}h{i}");
            ip(&bin, &["netns", "add", &netns]);
            let addr = Ipv4Addr::new(10, 77, subnet as u8, i as u8 + 1);
            let (outer, inner) = (format!("v{i}"), "eth0".to_string());
            lan.hosts.push(Host {
                name: name.to_string(),
                netns: netns.clone(),
                addr,
                ip: bin.clone(),
            });
            ip(
                &bin,
                &[
                    "-n", &switch, "link", "add", &outer, "type", "veth", "peer", "name", &inner,
                    "netns", &netns,
                ],
            );
            ip(
                &bin,
                &["-n", &switch, "link", "set", &outer, "master", "br0"],
            );
            ip(&bin, &["-n", &switch, "link", "set", &outer, "up"]);
            ip(
                &bin,
                &[
                    "-n",
                    &netns,
                    "addr",
                    "add",
                    &format!("{addr}/24"),
                    "dev",
                    &inner,
                ],
            );
            ip(&bin, &["-n", &netns, "link", "set", &inner, "up"]);
            ip(&bin, &["-n", &netns, "link", "set", "lo", "up"]);
        }
        Some(lan)
    }

    /// The host named `name`.
    pub fn host(&self, name: &str) -> &Host {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no host {name}"))
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        for h in &self.hosts {
            let _ = output_within(
                Command::new(&self.ip).args(["netns", "del", &h.netns]),
                None,
                TOOL_LIMIT,
            );
        }
        let _ = output_within(
            Command::new(&self.ip).args(["netns", "del", &self.switch]),
            None,
            TOOL_LIMIT,
        );
    }
}

/// Move the calling thread into the namespace `netns`.
fn enter(netns: &str) {
    let file = std::fs::File::open(format!("/var/run/netns/{netns}"))
        .unwrap_or_else(|e| panic!("opening network namespace {netns}: {e}"));
    // SAFETY: setns on a namespace file we opened; it changes only the
    // calling thread's network namespace.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(
        rc,
        0,
        "entering {netns}: {}",
        std::io::Error::last_os_error()
    );
}

impl Host {
    /// Run `f` on a thread inside this host and return what it returns:
    /// whatever it starts (servers, processes) lives in the host.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    enter(&self.netns);
                    f()
                })
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    /// Serve `127.0.0.1:port` of this host on its own address, at the same
    /// port, each direction delayed by `latency`. Runs until the host's
    /// namespace goes.
    pub fn forward(&self, port: u16, latency: Duration) {
        let addr = SocketAddr::from((self.addr, port));
        let netns = self.netns.clone();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            enter(&netns);
            let listener = TcpListener::bind(addr).unwrap_or_else(|e| panic!("bind {addr}: {e}"));
            let _ = ready_tx.send(());
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let netns = netns.clone();
                let done = Arc::new(AtomicBool::new(false));
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let (netns, done) = (netns.clone(), done.clone());
                    std::thread::spawn(move || {
                        enter(&netns);
                        delayed_copy(from, to, latency, &done)
                    });
                }
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the forwarder listens");
    }

    /// Drop every packet this host sends to `other` until [`Host::restore`]
    /// (a blackhole route): its connections there stall, as over a broken
    /// network, and resume once the route is gone.
    pub fn cut_from(&self, other: &Host) {
        ip(
            &self.ip,
            &[
                "-n",
                &self.netns,
                "route",
                "add",
                "blackhole",
                &format!("{}/32", other.addr),
            ],
        );
    }

    /// Undo [`Host::cut_from`].
    pub fn restore(&self, other: &Host) {
        ip(
            &self.ip,
            &[
                "-n",
                &self.netns,
                "route",
                "del",
                "blackhole",
                &format!("{}/32", other.addr),
            ],
        );
    }
}

/// Copy `from` to `to`, each chunk sent `latency` after it was read (a
/// queue, so the latency does not limit the throughput), until either
/// side closes.
fn delayed_copy(mut from: TcpStream, mut to: TcpStream, latency: Duration, done: &AtomicBool) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        for (due, chunk) in rx {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx
                    .send((Instant::now() + latency, buf[..n].to_vec()))
                    .is_err()
                {
                    break;
                }
            }
        }
        if done.load(Ordering::Relaxed) {
            break;
        }
    }
    done.store(true, Ordering::Relaxed);
    drop(tx);
    let _ = writer.join();
}
