//! The executor against the driver-free backends: achieved rate against the
//! target on `null:`, and a database stall on `memory:` that must appear in
//! response time as queueing predicts and not in service time.
//!
//! These tests measure time, so they run one at a time (a shared lock) to
//! keep them from competing for the two cores with each other.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sojourn_core::backend::memory::{MemoryBackend, MemoryOptions};
use sojourn_core::backend::null::NullBackend;
use sojourn_core::backend::{Backend, Connection, FieldValue, Fields, Schema, Status};
use sojourn_core::executor::{
    self, BackendConnector, Group, KeepSeries, Meter, Quiet, RunConfig, RunOutcome, Step,
    StopHandle,
};
use sojourn_core::op::OpKind;
use sojourn_core::schedule::Arrival;

static SERIAL: Mutex<()> = Mutex::new(());

/// Reads one fixed key: the smallest possible step, so the executor's own
/// behaviour is what the test sees.
struct ReadOne {
    buf: Vec<FieldValue>,
}

impl<C: Connection> Step<C> for ReadOne {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        self.buf.clear();
        let t = m.start();
        let s = conn.read("user1", Fields::All, &mut self.buf).await;
        m.record(OpKind::Read, s, t);
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn steps(threads: usize) -> Vec<ReadOne> {
    (0..threads).map(|_| ReadOne { buf: Vec::new() }).collect()
}

fn connector<B: Backend>(b: &B) -> BackendConnector<'_, B> {
    BackendConnector {
        backend: b,
        schema: Arc::new(Schema::ycsb("usertable", "field", 1)),
    }
}

fn run_on<B: Backend>(b: &B, threads: usize, cfg: RunConfig) -> RunOutcome {
    run_steps(b, steps(threads), &cfg)
}

/// Run `steps` (one per connection) on `b` as `cfg` says.
fn run_steps<B: Backend, S: Step<B::Conn>>(b: &B, steps: Vec<S>, cfg: &RunConfig) -> RunOutcome {
    executor::run(&connector(b), steps, cfg, &StopHandle::new(), &Quiet).unwrap()
}

fn open_loop(rate: f64, ops: u64, arrival: Arrival, threads: usize) -> RunConfig {
    RunConfig {
        groups: vec![Group::all(threads, Some(rate), Some(ops))],
        arrival,
        seed: 11,
        ..RunConfig::default()
    }
}

#[test]
fn achieved_rate_follows_the_target_on_null() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for rate in [1_000.0, 10_000.0, 100_000.0] {
        // Two seconds of uniform arrivals: the schedule itself has no noise,
        // so any error is the executor's.
        let ops = (rate * 2.0) as u64;
        let series = KeepSeries::default();
        let cfg = open_loop(rate, ops, Arrival::Uniform, 4);
        let o = executor::run(
            &connector(&NullBackend::new()),
            steps(4),
            &cfg,
            &StopHandle::new(),
            &series,
        )
        .unwrap();
        assert_eq!(o.total.ops_done, ops);
        let achieved = o.throughput();
        assert!(
            (achieved / rate - 1.0).abs() < 0.02,
            "uniform at {rate}: achieved {achieved}"
        );
        assert_eq!(o.scheduled, ops);
        // The time series offers what the run did: workers may take the
        // last arrivals before their pacer counts them, and the last
        // interval must count those too.
        let offered: u64 = series
            .into_intervals()
            .iter()
            .map(|iv| iv.offered.expect("offered under a target"))
            .sum();
        assert_eq!(offered, ops, "uniform at {rate}");
        let lag = o.total.lag.as_ref().expect("lag recorded under a target");
        assert_eq!(lag.len(), ops);
    }
}

#[test]
fn poisson_arrivals_are_served_as_offered() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for rate in [10_000.0, 100_000.0] {
        let ops = (rate * 2.0) as u64;
        let o = run_on(
            &NullBackend::new(),
            4,
            open_loop(rate, ops, Arrival::Poisson, 4),
        );
        assert_eq!(o.total.ops_done, ops);
        // The offered rate of a Poisson schedule is itself random: n gaps of
        // mean 1/rate sum to n/rate with relative sd 1/sqrt(n).
        let sd = 1.0 / (ops as f64).sqrt();
        let achieved = o.throughput();
        assert!(
            (achieved / rate - 1.0).abs() < 5.0 * sd + 0.01,
            "poisson at {rate}: achieved {achieved}"
        );
    }
}

#[test]
fn closed_loop_runs_exactly_the_operation_count_across_workers() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = RunConfig {
        groups: vec![Group::all(16, None, Some(100_003))],
        ..RunConfig::default()
    };
    let o = run_on(&NullBackend::new(), 16, cfg);
    assert_eq!(o.total.ops_done, 100_003);
    let r = o.total.op(OpKind::Read).unwrap();
    assert_eq!(r.count_of(Status::Ok), 100_003);
    // Closed loop: response time is service time.
    assert_eq!(r.ok.service.len(), r.ok.response.len());
    assert!(o.total.lag.is_none());
}

/// Counts the operations its worker ran.
struct CountMine(Arc<std::sync::atomic::AtomicU64>);

impl<C: Connection> Step<C> for CountMine {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let t = m.start();
        let s = conn.read("user1", Fields::All, &mut Vec::new()).await;
        m.record(OpKind::Read, s, t);
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn a_short_closed_loop_run_is_shared_by_every_connection() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 1,000 operations over 16 connections: each connection runs some,
    // none runs the lion's share (a worker that claimed a chunk of 1,024
    // would have run all of them alone).
    let counts: Vec<_> = (0..16)
        .map(|_| Arc::new(std::sync::atomic::AtomicU64::new(0)))
        .collect();
    let steps = counts.iter().map(|c| CountMine(Arc::clone(c))).collect();
    let cfg = RunConfig {
        groups: vec![Group::all(16, None, Some(1_000))],
        ..RunConfig::default()
    };
    let o = run_steps(&NullBackend::new(), steps, &cfg);
    assert_eq!(o.total.ops_done, 1_000);
    let ran: Vec<u64> = counts
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    assert_eq!(ran.iter().sum::<u64>(), 1_000);
    assert!(
        ran.iter().all(|&n| (1..=250).contains(&n)),
        "every connection ran a share: {ran:?}"
    );
}

#[test]
fn max_execution_time_stops_an_unbounded_run() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = RunConfig {
        groups: vec![Group::all(2, Some(2_000.0), None)],
        max_execution_time: Some(Duration::from_millis(500)),
        ..RunConfig::default()
    };
    let o = run_on(&NullBackend::new(), 2, cfg);
    assert_eq!(o.stop_reason, executor::StopReason::MaxExecutionTime);
    // About 1000 arrivals in 0.5 s: Poisson sd ~32, so 5 sd is 160.
    assert!(
        (840..=1160).contains(&o.total.ops_done),
        "{}",
        o.total.ops_done
    );
    assert!(o.elapsed < Duration::from_secs(3));
}

/// `memory:` holding `user1`, frozen for `stall` once `after` operations
/// (the insert among them) have come.
fn stalling(after: u64, stall: Duration) -> MemoryBackend {
    let b = MemoryBackend::with_options(MemoryOptions {
        stall_after_ops: Some(after),
        stall,
        max_ops_per_sec: None,
    })
    .unwrap();
    runtime().block_on(async {
        let schema = Arc::new(Schema::ycsb("usertable", "field", 1));
        let mut c = b.connect(schema).await.unwrap();
        let v = [FieldValue {
            field: 0,
            value: b"x".to_vec(),
        }];
        assert_eq!(c.insert("user1", &v).await, Status::Ok);
    });
    b
}

#[test]
fn a_database_stall_shows_in_response_time_as_queueing_predicts() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rate = 10_000.0;
    let ops = 20_000u64;
    let stall = Duration::from_millis(200);
    let b = stalling(ops / 2 + 1, stall);
    let o = run_on(&b, 4, open_loop(rate, ops, Arrival::Uniform, 4));
    let r = o.total.op(OpKind::Read).unwrap();
    assert_eq!(r.count_of(Status::Ok), ops);
    // rate * stall = 2000 arrivals (10% of the run) land in the stall and
    // each waits the rest of it, uniformly from 0 to 200 ms. So response
    // time's p95 is ~100 ms, p99 ~180 ms and its max ~200 ms.
    let ms = |ns: u64| ns as f64 / 1e6;
    let resp = &r.ok.response;
    let (p95, p99, max) = (
        ms(resp.value_at_quantile(0.95)),
        ms(resp.value_at_quantile(0.99)),
        ms(resp.max()),
    );
    assert!((75.0..=125.0).contains(&p95), "response p95 {p95} ms");
    assert!((155.0..=205.0).contains(&p99), "response p99 {p99} ms");
    assert!((195.0..=260.0).contains(&max), "response max {max} ms");
    // Service time: only the few operations in flight saw the stall.
    let svc = &r.ok.service;
    assert!(
        ms(svc.value_at_quantile(0.99)) < 5.0,
        "service p99 {}",
        ms(svc.value_at_quantile(0.99))
    );
    assert!(
        ms(svc.max()) >= 195.0,
        "the operation caught in the stall took it all"
    );
    assert!(
        svc.count_between(150_000_000, u64::MAX) <= 4,
        "at most one per connection"
    );
    // The operations queued behind the stall waited for a connection,
    // which is the database's doing: not the client's lag (it would be up
    // to 200 ms, p99 ~180 ms, if the wait counted).
    let lag = o.total.lag.as_ref().unwrap();
    assert!(
        ms(lag.value_at_quantile(0.99)) < 20.0,
        "client lag p99 {} ms",
        ms(lag.value_at_quantile(0.99))
    );
    // The warnings blame the database, with when and for how long.
    use sojourn_core::output::Warning;
    let w = Warning::check(&o, 0.0, &[], "recordcount");
    let stall = w
        .iter()
        .find_map(|w| match w {
            Warning::DatabaseStall(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no stall warning: {w:?}"));
    assert!((0.195..=0.26).contains(&stall.longest_s), "{stall:?}");
    assert!(!stall.cut_short);
    // Sent about 1 s in (the 10,001st of 10,000 per second), located to
    // within the 1 s interval it ended in.
    let at = stall.at_s.expect("located in the time series");
    assert!((0.0..=2.0).contains(&at), "{stall:?}");
    // rate × the stall's length as measured.
    let length = stall.longest_wait_s.unwrap_or(stall.longest_s);
    assert_eq!(stall.due, Some((10_000.0 * length).round() as u64));
    // The stall is not blamed on the client. A busy test machine may make
    // the client itself late now and then, and the lag says so; but not by
    // anything near the stall's 200 ms.
    assert!(
        !w.iter().any(|w| matches!(w,
            Warning::LateSends { lag_p99_ms } if *lag_p99_ms >= 20.0)
            || matches!(w, Warning::NotPoisson { .. })),
        "the client is not blamed: {w:?}"
    );
    let text = stall.to_string();
    assert!(text.contains("stopped answering"), "{text}");
}

#[test]
fn stop_handle_interrupts_and_keeps_results() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let stop = StopHandle::new();
    let cfg = RunConfig {
        groups: vec![Group::all(2, Some(1000.0), None)],
        max_execution_time: Some(Duration::from_secs(30)),
        interval: Duration::from_millis(50),
        ..RunConfig::default()
    };
    struct StopAfter(StopHandle, std::sync::atomic::AtomicUsize);
    impl executor::Observer for StopAfter {
        fn interval(&self, p: &executor::Progress<'_>) {
            // Stop once a few intervals have seen operations.
            if p.ops_done > 0 && self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 3 {
                self.0.stop();
            }
        }
    }
    let obs = StopAfter(stop.clone(), Default::default());
    let o = executor::run(&connector(&NullBackend::new()), steps(2), &cfg, &stop, &obs).unwrap();
    assert!(o.interrupted());
    assert!(o.total.ops_done > 0);
    assert!(o.elapsed < Duration::from_secs(10), "{:?}", o.elapsed);
    assert!(o.intervals >= 4);
}

#[test]
fn connection_errors_are_reported_before_anything_runs() {
    struct Refuses;
    impl executor::Connector for Refuses {
        type Conn = ();
        async fn connect(&self) -> Result<(), sojourn_core::backend::BackendError> {
            Err(sojourn_core::backend::BackendError::Connect {
                target: "nowhere".into(),
                message: "refused".into(),
            })
        }
    }
    struct Never;
    impl Step<()> for Never {
        async fn step(&mut self, _: &mut (), _: &mut Meter) {
            unreachable!("no operation runs when connecting failed")
        }
    }
    let cfg = RunConfig {
        groups: vec![Group::all(3, None, Some(1000))],
        ..RunConfig::default()
    };
    let err = executor::run(
        &Refuses,
        vec![Never, Never, Never],
        &cfg,
        &StopHandle::new(),
        &Quiet,
    )
    .expect_err("an error");
    assert!(err.to_string().contains("refused"), "{err}");
}

#[test]
fn work_is_spread_over_runtime_threads() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for runtime_threads in [1, 3] {
        let cfg = RunConfig {
            groups: vec![Group::all(6, None, Some(50_000))],
            runtime_threads,
            ..RunConfig::default()
        };
        let o = run_on(&NullBackend::new(), 6, cfg);
        assert_eq!(o.runtime_threads, runtime_threads);
        assert_eq!(o.total.ops_done, 50_000);
    }
}

/// Counts the connections it opens.
struct Counting<'a, B> {
    inner: BackendConnector<'a, B>,
    opened: std::sync::atomic::AtomicUsize,
}

impl<B: Backend> executor::Connector for Counting<'_, B> {
    type Conn = B::Conn;
    async fn connect(&self) -> Result<B::Conn, sojourn_core::backend::BackendError> {
        self.opened
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.connect().await
    }
}

#[test]
fn a_pool_keeps_its_connections_across_runs() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = NullBackend::new();
    let c = Counting {
        inner: connector(&b),
        opened: Default::default(),
    };
    let cfg = RunConfig {
        groups: vec![Group::all(5, None, Some(10_000))],
        ..RunConfig::default()
    };
    let totals = executor::with_pool(&c, &cfg, |pool| {
        (0..3)
            .map(|_| {
                pool.run(steps(5), &cfg, &StopHandle::new(), &Quiet)
                    .unwrap()
                    .total
                    .ops_done
            })
            .collect::<Vec<_>>()
    })
    .unwrap();
    assert_eq!(totals, vec![10_000; 3]);
    assert_eq!(c.opened.load(std::sync::atomic::Ordering::SeqCst), 5);
}

#[test]
fn operations_stuck_past_the_drain_timeout_are_abandoned_and_reconnected() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The database freezes for 3 s after 100 operations; the run may wait
    // only 200 ms for in-flight operations once its 0.3 s are up.
    let b = MemoryBackend::with_options(MemoryOptions {
        stall_after_ops: Some(100),
        stall: Duration::from_secs(3),
        max_ops_per_sec: None,
    })
    .unwrap();
    let c = Counting {
        inner: connector(&b),
        opened: Default::default(),
    };
    let stalled = RunConfig {
        groups: vec![Group::all(2, Some(1000.0), None)],
        max_execution_time: Some(Duration::from_millis(300)),
        drain_timeout: Duration::from_millis(200),
        ..RunConfig::default()
    };
    let (first, second) = executor::with_pool(
        &c,
        &RunConfig {
            runtime_threads: 1,
            ..stalled.clone()
        },
        |pool| {
            let first = pool
                .run(steps(2), &stalled, &StopHandle::new(), &Quiet)
                .unwrap();
            let after = RunConfig {
                groups: vec![Group::all(2, None, Some(50))],
                ..RunConfig::default()
            };
            (
                first,
                pool.run(steps(2), &after, &StopHandle::new(), &Quiet)
                    .unwrap(),
            )
        },
    )
    .unwrap();
    assert!(first.abandoned >= 1, "{}", first.abandoned);
    assert!(
        first.elapsed < Duration::from_secs(2),
        "{:?}",
        first.elapsed
    );
    assert_eq!(second.total.ops_done, 50);
    let opened = c.opened.load(std::sync::atomic::Ordering::SeqCst) as u64;
    assert_eq!(opened, 2 + first.abandoned);
}

#[test]
fn self_check_flags_an_overloaded_run_and_passes_a_normal_one() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use sojourn_core::output::Warning;
    // Normal: 2000 ops/s of Poisson arrivals on a database with room to spare.
    let normal = run_on(
        &NullBackend::new(),
        4,
        open_loop(2_000.0, 6_000, Arrival::Poisson, 4),
    );
    let c = normal.arrival_check.as_ref().expect("enough bins");
    assert!(c.passed, "{c:?}");
    assert!((normal.served_fraction() - 1.0).abs() < 1e-9);
    let w = Warning::check(&normal, 0.0, &[], "recordcount");
    assert!(
        !w.iter()
            .any(|w| matches!(w, Warning::NotPoisson { .. } | Warning::BelowTarget { .. })),
        "{w:?}"
    );

    // Overloaded: 2000 ops/s offered to a database that serves 1500. Every
    // connection is busy and operations queue for them: the database's
    // doing, which the served fraction reports. The client released each
    // operation on time, so the Poisson check does not blame it.
    let b = MemoryBackend::with_options(MemoryOptions {
        stall_after_ops: None,
        stall: Duration::ZERO,
        max_ops_per_sec: Some(1_500.0),
    })
    .unwrap();
    let cfg = RunConfig {
        groups: vec![Group::all(4, Some(2_000.0), None)],
        max_execution_time: Some(Duration::from_secs(4)),
        drain_timeout: Duration::from_millis(100),
        seed: 3,
        ..RunConfig::default()
    };
    let over = run_on(&b, 4, cfg);
    assert!(over.served_fraction() < 0.9, "{}", over.served_fraction());
    let c = over.arrival_check.as_ref().expect("enough bins");
    assert!(c.passed, "the queue is the database's: {c:?}");
    let w = Warning::check(&over, 0.0, &[], "recordcount");
    assert!(
        w.iter().any(|w| matches!(w, Warning::BelowTarget { .. })),
        "{w:?}"
    );
    // Nor is the queue counted as the client's lateness (it would be
    // seconds by the end); a busy test machine may add a little of its own.
    assert!(
        !w.iter().any(|w| matches!(w, Warning::NotPoisson { .. })
            || matches!(w, Warning::LateSends { lag_p99_ms } if *lag_p99_ms >= 100.0)),
        "{w:?}"
    );
}

/// `memory:?max_ops_per_sec=K` serves K even where each connection's
/// share is above the 1,000 a second a 1 ms timer allows (it served 3,400
/// of 20,000 over 4 connections when every wait took a timer tick), and no
/// more than K.
#[test]
fn a_rate_limited_memory_backend_serves_its_rate_above_the_timer_tick() {
    let k = 20_000.0;
    let b = MemoryBackend::from_query(&format!("max_ops_per_sec={k}")).unwrap();
    let cfg = RunConfig {
        groups: vec![Group::all(4, None, None)],
        max_execution_time: Some(Duration::from_millis(500)),
        ..RunConfig::default()
    };
    let out = run_on(&b, 4, cfg);
    let rate = out.all.ops_done as f64 / out.elapsed.as_secs_f64();
    // Far above the tick's ceiling (4,000), and the schedule is absolute:
    // never more than K but for the few operations already queued.
    assert!(rate > 0.5 * k && rate < 1.05 * k, "{rate:.0} ops/s of {k}");
}

/// Reads, and every `every`-th operation of all the hogs holds its
/// runtime thread for `hold`, as a client starved of CPU is held: the other
/// connections of the thread are free but nothing sends on them.
struct Hog {
    n: Arc<std::sync::atomic::AtomicU64>,
    every: u64,
    hold: Duration,
}

impl<C: Connection> Step<C> for Hog {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let n = self.n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if n % self.every == 0 {
            std::thread::sleep(self.hold);
        }
        let t = m.start();
        let s = conn.read("user1", Fields::All, &mut Vec::new()).await;
        m.record(OpKind::Read, s, t);
    }
}

/// A client whose thread stalls, with connections free, releases in
/// bursts: the Poisson check fails, blaming the client, and so does the
/// lag, which counts a pacer that woke late (a worker waiting for its
/// arrival is free all along).
#[test]
fn a_starved_client_fails_the_poisson_check() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use sojourn_core::output::Warning;
    let cfg = RunConfig {
        runtime_threads: 1,
        ..open_loop(2_000.0, 8_000, Arrival::Poisson, 4)
    };
    // Two stalls of 250 ms, each longer than a bin (100 ms at this rate):
    // the bins they cover get nothing, and the next ones the backlog.
    let n = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let hogs = (0..4)
        .map(|_| Hog {
            n: n.clone(),
            every: 3_000,
            hold: Duration::from_millis(250),
        })
        .collect();
    let o = run_steps(&NullBackend::new(), hogs, &cfg);
    let c = o.arrival_check.as_ref().expect("enough bins");
    assert!(!c.passed && c.dispersion > 1.5, "{c:?}");
    let w = Warning::check(&o, 0.0, &[], "recordcount");
    let said: Vec<String> = w.iter().map(|w| w.to_string()).collect();
    assert!(
        said.iter().any(|w| w.contains("released them in bursts")),
        "{said:?}"
    );
    let lag = o.total.lag.as_ref().unwrap();
    assert!(
        lag.value_at_quantile(0.99) > 5_000_000,
        "a late pacer is the client's lateness: p99 {} ns",
        lag.value_at_quantile(0.99)
    );
    assert!(
        w.iter().any(|w| matches!(w, Warning::LateSends { .. })),
        "{w:?}"
    );
}

/// Reads or updates one fixed key, so each group's operations can be told
/// apart in the totals.
struct OneKind(OpKind);

impl<C: Connection> Step<C> for OneKind {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let t = m.start();
        let s = match self.0 {
            OpKind::Read => conn.read("user1", Fields::All, &mut Vec::new()).await,
            _ => conn.update("user1", &[]).await,
        };
        m.record(self.0, s, t);
    }
}

#[test]
fn groups_keep_their_own_rate_and_count() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = NullBackend::new();
    // Readers: 3 connections at 4,000/s for 8,000 operations (two
    // seconds); writers: 2 connections at 1,000/s for 2,000.
    let groups = [
        executor::Group {
            workers: 3,
            target: Some(sojourn_core::rate::Target::constant(4_000.0)),
            operation_count: Some(8_000),
        },
        executor::Group {
            workers: 2,
            target: Some(sojourn_core::rate::Target::constant(1_000.0)),
            operation_count: Some(2_000),
        },
    ];
    let mut steps: Vec<OneKind> = (0..3).map(|_| OneKind(OpKind::Read)).collect();
    steps.extend((0..2).map(|_| OneKind(OpKind::Update)));
    let cfg = RunConfig {
        groups: groups.to_vec(),
        arrival: Arrival::Uniform,
        seed: 5,
        ..RunConfig::default()
    };
    let series = executor::KeepSeries::default();
    let o = executor::with_pool(&connector(&b), &cfg, |pool| {
        pool.run(steps, &cfg, &StopHandle::new(), &series)
    })
    .unwrap()
    .unwrap();
    let reads = o.total.op(OpKind::Read).unwrap();
    let updates = o.total.op(OpKind::Update).unwrap();
    assert_eq!(reads.count_of(Status::Ok), 8_000);
    assert_eq!(updates.count_of(Status::Ok), 2_000);
    assert_eq!(o.scheduled, 10_000);
    assert_eq!(o.target, Some(5_000.0));
    // Both schedules span two seconds: run together, they end together,
    // and the run took about that long. Had one group taken the other's
    // rate, or the two been run back to back, it would not.
    let secs = o.elapsed.as_secs_f64();
    assert!((1.9..2.5).contains(&secs), "elapsed {secs} s");
    // Each group's own sends were paced: in every whole interval the
    // writers' share stays near a fifth.
    let series = series.into_intervals();
    assert_eq!(series.len() as u64, o.intervals);
    for iv in series
        .iter()
        .filter(|iv| iv.length >= Duration::from_millis(900))
    {
        let count = |k| {
            iv.kinds
                .iter()
                .find(|x| x.kind == k)
                .map_or(0, |x| x.statuses[Status::Ok.index()])
        };
        let (r, u) = (count(OpKind::Read) as f64, count(OpKind::Update) as f64);
        assert!(
            (u / (r + u) - 0.2).abs() < 0.03,
            "interval: {r} reads, {u} updates"
        );
    }
}

#[test]
fn a_closed_loop_group_runs_beside_an_open_one() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = NullBackend::new();
    let groups = [
        executor::Group {
            workers: 1,
            target: None,
            operation_count: Some(50_000),
        },
        executor::Group {
            workers: 1,
            target: Some(sojourn_core::rate::Target::constant(2_000.0)),
            operation_count: Some(1_000),
        },
    ];
    let steps = vec![OneKind(OpKind::Read), OneKind(OpKind::Update)];
    let cfg = RunConfig {
        groups: groups.to_vec(),
        arrival: Arrival::Uniform,
        ..RunConfig::default()
    };
    let o = executor::with_pool(&connector(&b), &cfg, |pool| {
        pool.run(steps, &cfg, &StopHandle::new(), &Quiet)
    })
    .unwrap()
    .unwrap();
    assert_eq!(
        o.total.op(OpKind::Read).unwrap().count_of(Status::Ok),
        50_000
    );
    assert_eq!(
        o.total.op(OpKind::Update).unwrap().count_of(Status::Ok),
        1_000
    );
    // Only the open group offers a schedule; the run as a whole is not
    // open loop, so no single target describes it.
    assert_eq!(o.scheduled, 1_000);
    assert_eq!(o.target, None);
    let secs = o.elapsed.as_secs_f64();
    assert!(
        secs >= 0.45,
        "the paced group took {secs} s, under its schedule"
    );
}

/// Notes when each of its operations was meant to start.
struct Intended(Arc<Mutex<Vec<std::time::Instant>>>);

impl<C: Connection> Step<C> for Intended {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        self.0.lock().unwrap().push(m.intended_start());
        let mut buf = Vec::new();
        let t = m.start();
        let s = conn.read("user1", Fields::All, &mut buf).await;
        m.record(OpKind::Read, s, t);
    }
}

#[test]
fn batched_releases_keep_every_intended_start_exact() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 400,000 arrivals per second dealt to two threads: 5 us apart on each,
    // a quarter of the pacer's least gap between wake-ups, so nearly every
    // wake-up releases several arrivals at once. Each must still start the
    // clock at its own intended time, the schedule's to the nanosecond.
    let (rate, ops, seed) = (400_000.0, 40_000u64, 29);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let steps: Vec<Intended> = (0..4).map(|_| Intended(seen.clone())).collect();
    let cfg = RunConfig {
        groups: vec![Group::all(4, Some(rate), Some(ops))],
        arrival: Arrival::Poisson,
        seed,
        runtime_threads: 2,
        ..RunConfig::default()
    };
    let o = run_steps(&NullBackend::new(), steps, &cfg);
    assert_eq!(o.runtime_threads, 2);
    assert_eq!(o.total.ops_done, ops);
    let mut seen = std::mem::take(&mut *seen.lock().unwrap());
    seen.sort_unstable();
    let mut schedule =
        sojourn_core::schedule::Schedule::new(rate, Arrival::Poisson, seed, Some(ops), None);
    let mut want = Vec::new();
    while let Some(t) = schedule.peek() {
        want.push(t);
        schedule.advance();
    }
    assert_eq!(seen.len(), want.len());
    // The run's start instant is the executor's own; offsets from the first
    // arrival compare exactly.
    let got: Vec<u64> = seen
        .iter()
        .map(|t| t.duration_since(seen[0]).as_nanos() as u64)
        .collect();
    let want: Vec<u64> = want.iter().map(|t| t - want[0]).collect();
    let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "intended starts differ from the schedule's");
    // And the response times start there: none is shorter than its service.
    let r = o.total.op(OpKind::Read).unwrap();
    assert!(r.ok.response.min() >= r.ok.service.min());
}

/// Holds its runtime thread on a CPU for `spin` per operation, or sleeps
/// `sleep` without one.
struct Burn {
    spin: Duration,
    sleep: Duration,
}

impl<C: Connection> Step<C> for Burn {
    async fn step(&mut self, _: &mut C, m: &mut Meter) {
        let t = m.start();
        let until = std::time::Instant::now() + self.spin;
        let mut x = 1u64;
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        if !self.sleep.is_zero() {
            tokio::time::sleep(self.sleep).await;
        }
        m.record(OpKind::Read, Status::Ok, t);
    }
}

#[test]
fn the_report_says_how_busy_the_busiest_runtime_thread_was() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |spin, sleep| {
        let cfg = RunConfig {
            groups: vec![Group::all(2, None, None)],
            max_execution_time: Some(Duration::from_millis(600)),
            runtime_threads: 1,
            ..RunConfig::default()
        };
        let steps = (0..2).map(|_| Burn { spin, sleep }).collect();
        run_steps(&NullBackend::new(), steps, &cfg)
    };
    // The one runtime thread spins: nearly all the process's CPU is that
    // thread's, however busy the machine (both figures shrink together).
    let busy = run(Duration::from_micros(200), Duration::ZERO);
    assert_eq!(busy.thread_use.why, executor::ThreadsWhy::Set);
    let thread_s = busy.thread_use.busiest * busy.elapsed.as_secs_f64();
    let process_s = busy.cpu.total_s();
    assert!(
        thread_s > 0.8 * process_s && thread_s <= process_s + 0.02,
        "thread {thread_s} s of the process's {process_s} s"
    );
    assert!(busy.thread_use.busiest > 0.2, "{:?}", busy.thread_use);
    // It sleeps: its loop idles.
    let idle = run(Duration::ZERO, Duration::from_millis(2));
    assert!(idle.thread_use.busiest < 0.1, "{:?}", idle.thread_use);
}

#[test]
fn threads_are_sized_to_the_connections_unless_set() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = RunConfig {
        groups: vec![Group::all(16, None, Some(1_000))],
        ..RunConfig::default()
    };
    let o = run_on(&NullBackend::new(), 16, cfg.clone());
    assert_eq!(o.runtime_threads, 1);
    assert_eq!(o.thread_use.why, executor::ThreadsWhy::Load);
    // An in-process database gets a thread per core for its own work.
    let o = run_on(&MemoryBackend::new(), 16, cfg);
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(o.runtime_threads, cores.min(16));
    assert_eq!(o.thread_use.why, executor::ThreadsWhy::InProcess);
}

/// Keeps a schedule of its own in a closed loop, as a TPC-C terminal with
/// its keying and think times does: a read every `every` from the run's
/// start, waiting for each with [`Meter::wait_until`].
struct OwnClock {
    every: Duration,
    next: Option<std::time::Instant>,
    buf: Vec<FieldValue>,
}

impl<C: Connection> Step<C> for OwnClock {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let at = *self.next.get_or_insert(m.intended_start());
        self.next = Some(at + self.every);
        if !m.wait_until(at).await {
            return;
        }
        self.buf.clear();
        let t = m.start();
        let s = conn.read("user1", Fields::All, &mut self.buf).await;
        m.record(OpKind::Read, s, t);
    }
}

#[test]
fn a_step_s_own_schedule_counts_a_stall_into_the_response_times_behind_it() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let b = stalling(12, Duration::from_millis(200));
    let cfg = RunConfig {
        groups: vec![Group::all(1, None, None)],
        max_execution_time: Some(Duration::from_secs(1)),
        ..RunConfig::default()
    };
    let step = OwnClock {
        every: Duration::from_millis(20),
        next: None,
        buf: Vec::new(),
    };
    let o = run_steps(&b, vec![step], &cfg);
    assert_eq!(o.stop_reason, executor::StopReason::MaxExecutionTime);
    // One read per 20 ms of the second, the stall notwithstanding: the
    // reads it held up leave as soon as it ends, not 20 ms apart.
    let r = o.total.op(OpKind::Read).unwrap();
    assert!((48..=51).contains(&r.count()), "{}", r.count());
    // The wait the deadline cut short was no operation.
    assert_eq!(o.total.ops_done, r.count());
    // The last wait ends at the deadline, not at its own time beyond it.
    assert!(o.elapsed < Duration::from_millis(1_150), "{:?}", o.elapsed);
    assert_eq!(o.abandoned, 0);
    // One read took the 200 ms stall; the nine or ten due during it waited
    // for it, 180 ms down to 20 ms: their response times count from their
    // own intended starts, not from when the worker got to them.
    let slow = 15_000_000;
    assert_eq!(r.ok.service.count_between(slow, u64::MAX), 1);
    let late = r.ok.response.count_between(slow, u64::MAX);
    assert!((9..=11).contains(&late), "{late} late");
    assert!(r.ok.response.max() >= 195_000_000);
}
