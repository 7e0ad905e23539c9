//! `--metrics-listen ADDR`: the running phases as Prometheus metrics on
//! `http://ADDR/metrics`, so a team's Grafana shows a run beside the
//! database's own dashboards (`grafana/sojourn.json` reads these series;
//! docs/metrics.md lists them).
//!
//! Each phase's [`Watch`] adds its intervals to running totals (the
//! recorder's `Stats`, merged exactly); a scrape
//! turns them into the text exposition format. That is written here
//! rather than with a metrics crate because the crates' histogram types
//! take one observation at a time, and the figures are already histograms:
//! each classic bucket is read off the merged HDR histogram at scrape
//! time, off the hot path, and the final counts equal the summary's.
//! Native histograms need the protobuf exposition and are not offered.
//!
//! A phase's series carry `phase` and `workload` labels, plus the run's
//! labels that tell phases of one command apart (`repetition`,
//! `capacity_step`, `suite_iteration`); a later phase with the same labels
//! starts them again from zero, which Prometheus reads as a counter reset.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use hdrhistogram::Histogram;
use sojourn_core::backend::Status;
use sojourn_core::cpu::CpuTimes;
use sojourn_core::executor::{Interval, Observer, Progress, RunOutcome};
use sojourn_core::histograms::{OpStats, Stats};
use sojourn_core::rate::total_rate_at;
use sojourn_session::{PhaseView, Show, Watch};

/// The family of failed operations by the database's words.
const FAILURES: &str = "sojourn_failures_total";

/// Run labels that tell a command's phases apart.
const PHASE_LABELS: [&str; 3] = ["repetition", "capacity_step", "suite_iteration"];

/// Bucket bounds of the latency histograms, in seconds: 10 µs to 10 s,
/// about three per decade, as Prometheus's own defaults space them.
const BUCKETS: [f64; 19] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The endpoint and what it serves.
pub struct Metrics {
    shared: Arc<Shared>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
    addr: SocketAddr,
    linger: Duration,
}

#[derive(Default)]
struct Shared {
    phases: Mutex<Vec<Arc<Mutex<PhaseMetrics>>>>,
    /// Scrapes of /metrics served, and a condition the lingering end waits on.
    scrapes: Mutex<u64>,
    scraped: Condvar,
}

impl Metrics {
    /// Listen on `addr` (`host:port`; port 0 takes a free one); `linger`:
    /// how long the final figures wait for a scrape once the command ends.
    pub fn listen(addr: &str, linger: Duration) -> Result<Metrics> {
        let parsed: SocketAddr = addr.parse().map_err(|_| {
            anyhow!("--metrics-listen {addr}: expected an address and port, e.g. 127.0.0.1:9464")
        })?;
        let server = tiny_http::Server::http(parsed)
            .map_err(|e| anyhow!("--metrics-listen {addr}: cannot listen there: {e}"))?;
        let addr = match server.server_addr() {
            tiny_http::ListenAddr::IP(a) => a,
            #[allow(unreachable_patterns)]
            _ => parsed,
        };
        let server = Arc::new(server);
        let shared = Arc::new(Shared::default());
        let thread = {
            let (server, shared) = (server.clone(), shared.clone());
            std::thread::Builder::new()
                .name("sojourn-metrics".into())
                .spawn(move || serve(&server, &shared))
                .context("starting the metrics endpoint")?
        };
        Ok(Metrics {
            shared,
            server,
            thread: Some(thread),
            addr,
            linger,
        })
    }

    /// Where it serves.
    pub fn url(&self) -> String {
        format!("http://{}/metrics", self.addr)
    }

    /// The metrics of one phase, from its start.
    pub fn watch(&self, view: &PhaseView) -> PhaseWatch {
        let mut labels = vec![
            ("phase".to_string(), view.phase.name().to_string()),
            ("workload".to_string(), view.workload.clone()),
        ];
        for key in PHASE_LABELS {
            if let Some(v) = view.labels.get(key) {
                labels.push((key.to_string(), v.clone()));
            }
        }
        let phase = Arc::new(Mutex::new(PhaseMetrics {
            labels,
            database: view.database.clone(),
            connections: view.connections as u64,
            open_loop: !view.targets.is_empty(),
            running: true,
            ..PhaseMetrics::default()
        }));
        {
            let mut phases = lock(&self.shared.phases);
            let same = lock(&phase).labels.clone();
            phases.retain(|p| lock(p).labels != same);
            phases.push(phase.clone());
        }
        PhaseWatch {
            phase,
            targets: view.targets.clone(),
        }
    }
}

impl Drop for Metrics {
    /// The last figures wait up to `linger` for one scrape, so a short run
    /// is not over before Prometheus has seen its end.
    fn drop(&mut self) {
        if !self.linger.is_zero() {
            let seen = *lock(&self.shared.scrapes);
            eprintln!(
                "metrics: serving the final figures at {} until they are scraped (at most {:.0} s)",
                self.url(),
                self.linger.as_secs_f64()
            );
            let deadline = Instant::now() + self.linger;
            let mut scrapes = lock(&self.shared.scrapes);
            while *scrapes == seen {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                scrapes = match self.shared.scraped.wait_timeout(scrapes, left) {
                    Ok((s, _)) => s,
                    Err(e) => e.into_inner().0,
                };
            }
        }
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The endpoint alone as a phase's display (an agent's shares).
pub struct Only(pub Metrics);

impl Show for Only {
    fn watch<'v>(&'v self, phase: &PhaseView) -> Box<dyn Watch + 'v> {
        Box::new(self.0.watch(phase))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Answer requests until the server is unblocked.
fn serve(server: &tiny_http::Server, shared: &Shared) {
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or("").to_string();
        let response = match path.as_str() {
            "/metrics" => {
                let body = exposition(shared);
                tiny_http::Response::from_string(body).with_header(header(
                    "Content-Type",
                    "text/plain; version=0.0.4; charset=utf-8",
                ))
            }
            "/" => tiny_http::Response::from_string("sojourn: metrics at /metrics\n"),
            _ => tiny_http::Response::from_string("not found: metrics are at /metrics\n")
                .with_status_code(404),
        };
        let _ = request.respond(response);
        if path == "/metrics" {
            *lock(&shared.scrapes) += 1;
            shared.scraped.notify_all();
        }
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
        .expect("a valid header name and value")
}

/// One phase's running totals.
#[derive(Default)]
struct PhaseMetrics {
    labels: Vec<(String, String)>,
    database: String,
    connections: u64,
    open_loop: bool,
    running: bool,
    /// Everything recorded so far, merged exactly (warm-up included).
    totals: Stats,
    ops_done: u64,
    offered: u64,
    target: Option<f64>,
    cpu: CpuTimes,
    elapsed: Duration,
}

/// A phase's watch: adds each interval to the phase's totals.
pub struct PhaseWatch {
    phase: Arc<Mutex<PhaseMetrics>>,
    targets: Vec<sojourn_core::rate::Target>,
}

impl Observer for PhaseWatch {
    fn interval(&self, p: &Progress<'_>) {
        let mut m = lock(&self.phase);
        m.totals.add(p.interval);
        m.ops_done = p.ops_done;
        m.elapsed = p.elapsed;
        m.target = total_rate_at(&self.targets, p.elapsed);
    }

    fn interval_closed(&self, interval: &Interval) {
        let mut m = lock(&self.phase);
        m.offered += interval.offered.unwrap_or(0);
        m.cpu.user_s += interval.cpu.user_s;
        m.cpu.system_s += interval.cpu.system_s;
    }
}

impl Watch for PhaseWatch {
    fn finish(&self, _: Option<&RunOutcome>) {
        lock(&self.phase).running = false;
    }
}

/// Every phase's series in the text exposition format.
fn exposition(shared: &Shared) -> String {
    let phases: Vec<_> = lock(&shared.phases).clone();
    let phases: Vec<_> = phases.iter().map(|p| lock(p)).collect();
    let phases: Vec<&PhaseMetrics> = phases.iter().map(|p| &**p).collect();
    let mut out = String::new();
    // A family with no series yet is left out, but for failures: a
    // dashboard's query over them should find the family before the first.
    let mut family = |name: &str, kind: &str, help: &str, body: &dyn Fn(&mut String)| {
        let mut lines = String::new();
        body(&mut lines);
        if !lines.is_empty() || name == FAILURES {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            out.push_str(&lines);
        }
    };
    counters(&phases, &mut family);
    gauges(&phases, &mut family);
    latencies(&phases, &mut family);
    out
}

/// Writes one metric family: its name, type, help and series.
type Family<'a> = dyn FnMut(&str, &str, &str, &dyn Fn(&mut String)) + 'a;

/// Which phases run, and what they have counted: operations by status,
/// failures by reason, arrivals offered.
fn counters(phases: &[&PhaseMetrics], family: &mut Family<'_>) {
    family(
        "sojourn_phase_info",
        "gauge",
        "A phase of this process: 1 while it runs, 0 once it has ended.",
        &|o| {
            for m in phases {
                let l = labels(&m.labels, &[("database", &m.database)]);
                let _ = writeln!(o, "sojourn_phase_info{l} {}", u8::from(m.running));
            }
        },
    );
    family(
        "sojourn_operations_total",
        "counter",
        "Operations completed, by operation and YCSB status (OK, ERROR, ...).",
        &|o| {
            for m in phases {
                for (kind, op) in m.totals.kinds() {
                    for st in Status::ALL {
                        let n = op.count_of(st);
                        if n > 0 {
                            let l = labels(
                                &m.labels,
                                &[("operation", kind.name()), ("status", st.ycsb_name())],
                            );
                            let _ = writeln!(o, "sojourn_operations_total{l} {n}");
                        }
                    }
                }
            }
        },
    );
    family(
        FAILURES,
        "counter",
        "Failed operations by the database's own words: the error's text with quoted names \
         and numbers masked (at most 9 per operation; the rest counted as (other reasons)).",
        &|o| {
            for m in phases {
                for (kind, op) in m.totals.kinds() {
                    for r in op.reasons.iter() {
                        let reason = reason_label(&r.kind);
                        let l = labels(
                            &m.labels,
                            &[
                                ("operation", kind.name()),
                                ("status", r.status.ycsb_name()),
                                ("reason", &reason),
                            ],
                        );
                        let _ = writeln!(o, "sojourn_failures_total{l} {}", r.count);
                    }
                }
            }
        },
    );
    family(
        "sojourn_offered_operations_total",
        "counter",
        "Arrivals the schedule released (open loop): the load offered.",
        &|o| {
            for m in phases.iter().filter(|m| m.open_loop) {
                let _ = writeln!(
                    o,
                    "sojourn_offered_operations_total{} {}",
                    labels(&m.labels, &[]),
                    m.offered
                );
            }
        },
    );
}

/// What each phase runs at now: its target, operations in flight,
/// connections, elapsed time, and the CPU the process spent.
fn gauges(phases: &[&PhaseMetrics], family: &mut Family<'_>) {
    family(
        "sojourn_target_operations_per_second",
        "gauge",
        "The rate the schedule offers now (open loop; follows a rate profile).",
        &|o| {
            for m in phases {
                if let Some(t) = m.target {
                    let _ = writeln!(
                        o,
                        "sojourn_target_operations_per_second{} {t}",
                        labels(&m.labels, &[])
                    );
                }
            }
        },
    );
    family(
        "sojourn_in_flight_operations",
        "gauge",
        "Operations released and not yet completed (closed loop: one per connection).",
        &|o| {
            for m in phases {
                let n = match (m.running, m.open_loop) {
                    (false, _) => 0,
                    (true, true) => m.offered.saturating_sub(m.ops_done),
                    (true, false) => m.connections,
                };
                let _ = writeln!(
                    o,
                    "sojourn_in_flight_operations{} {n}",
                    labels(&m.labels, &[])
                );
            }
        },
    );
    family(
        "sojourn_connections",
        "gauge",
        "Connections the phase runs on.",
        &|o| {
            for m in phases {
                let _ = writeln!(
                    o,
                    "sojourn_connections{} {}",
                    labels(&m.labels, &[]),
                    m.connections
                );
            }
        },
    );
    family(
        "sojourn_elapsed_seconds",
        "gauge",
        "Time since the phase's first operation.",
        &|o| {
            for m in phases {
                let _ = writeln!(
                    o,
                    "sojourn_elapsed_seconds{} {}",
                    labels(&m.labels, &[]),
                    m.elapsed.as_secs_f64()
                );
            }
        },
    );
    family(
        "sojourn_client_cpu_seconds_total",
        "counter",
        "CPU time of the sojourn process over the phase, by mode.",
        &|o| {
            for m in phases {
                for (mode, v) in [("user", m.cpu.user_s), ("system", m.cpu.system_s)] {
                    let l = labels(&m.labels, &[("mode", mode)]);
                    let _ = writeln!(o, "sojourn_client_cpu_seconds_total{l} {v}");
                }
            }
        },
    );
}

/// Service and response time of successful operations, and the
/// schedule's lag, as classic histograms.
fn latencies(phases: &[&PhaseMetrics], family: &mut Family<'_>) {
    for (name, help, pick) in [
        (
            "sojourn_service_time_seconds",
            "Service time of successful operations: from the request sent to its answer.",
            (|op: &OpStats| &op.ok.service) as fn(&OpStats) -> &Histogram<u64>,
        ),
        (
            "sojourn_response_time_seconds",
            "Response time of successful operations: from the intended start to the answer.",
            |op: &OpStats| &op.ok.response,
        ),
    ] {
        family(name, "histogram", help, &|o| {
            for m in phases {
                for (kind, op) in m.totals.kinds() {
                    histogram(o, name, &m.labels, &[("operation", kind.name())], pick(op));
                }
            }
        });
    }
    family(
        "sojourn_schedule_lag_seconds",
        "histogram",
        "How late operations started after their intended start (open loop).",
        &|o| {
            for m in phases {
                if let Some(h) = &m.totals.lag {
                    histogram(o, "sojourn_schedule_lag_seconds", &m.labels, &[], h);
                }
            }
        },
    );
}

/// A classic histogram's buckets, sum and count, read off `h` (ns).
fn histogram(
    o: &mut String,
    name: &str,
    base: &[(String, String)],
    extra: &[(&str, &str)],
    h: &Histogram<u64>,
) {
    for le in BUCKETS {
        let at_most = if h.is_empty() {
            0
        } else {
            h.count_between(0, (le * 1e9) as u64)
        };
        let mut with_le: Vec<(&str, &str)> = extra.to_vec();
        let le_text = format!("{le}");
        with_le.push(("le", &le_text));
        let _ = writeln!(o, "{name}_bucket{} {at_most}", labels(base, &with_le));
    }
    let mut with_le: Vec<(&str, &str)> = extra.to_vec();
    with_le.push(("le", "+Inf"));
    let _ = writeln!(o, "{name}_bucket{} {}", labels(base, &with_le), h.len());
    let sum = if h.is_empty() {
        0.0
    } else {
        h.mean() * h.len() as f64 / 1e9
    };
    let l = labels(base, extra);
    let _ = writeln!(o, "{name}_sum{l} {sum}");
    let _ = writeln!(o, "{name}_count{l} {}", h.len());
}

/// `{k="v",...}` with the exposition format's escapes.
/// A reason as a label value: short enough for a legend.
fn reason_label(kind: &str) -> String {
    const LIMIT: usize = 100;
    match kind.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &kind[..end]),
        None => kind.to_string(),
    }
}

fn labels(base: &[(String, String)], extra: &[(&str, &str)]) -> String {
    let mut out = String::from("{");
    let pairs = base
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(extra.iter().copied());
    for (i, (k, v)) in pairs.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let v = v
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        let _ = write!(out, "{k}=\"{v}\"");
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        let base = vec![("workload".to_string(), "a\"b\\c\nd".to_string())];
        assert_eq!(
            labels(&base, &[("le", "+Inf")]),
            r#"{workload="a\"b\\c\nd",le="+Inf"}"#
        );
    }

    #[test]
    fn buckets_count_values_at_most_their_bound() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for ns in [5_000u64, 20_000, 20_000, 2_000_000, 3_000_000_000] {
            h.record(ns).unwrap();
        }
        let mut o = String::new();
        histogram(&mut o, "x", &[], &[], &h);
        let count = |le: &str| -> u64 {
            let key = format!("x_bucket{{le=\"{le}\"}} ");
            let line = o.lines().find(|l| l.starts_with(&key)).unwrap();
            line[key.len()..].parse().unwrap()
        };
        assert_eq!(count("0.00001"), 1);
        assert_eq!(count("0.000025"), 3);
        assert_eq!(count("0.001"), 3);
        assert_eq!(count("0.0025"), 4);
        assert_eq!(count("2.5"), 4);
        assert_eq!(count("5"), 5);
        assert_eq!(count("+Inf"), 5);
        assert!(o.contains("x_count{} 5"), "{o}");
    }
}
