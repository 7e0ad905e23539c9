//! What each connection does: the load's row order ([`Permutation`]),
//! and the per-connection state that turns the settings into statements
//! ([`LiopsShared`], [`LiopsWorker`]).

use super::config::LiopsConfig;
use super::connection::{LiopsConnection, LiopsRow, ServerLoop, ServerLoopOutcome};
use crate::backend::Status;
use crate::executor::{Meter, Step};
use crate::generator::{below, rng_for, Counter, Rng};
use crate::op::OpKind;
use crate::workload::phase::Phase;
use rand_core::RngCore;
use std::sync::Arc;
use std::time::Duration;

/// A pseudo-random permutation of `0..n`: where each row goes in the load
/// order. A 4-round Feistel network over the smallest power-of-four domain
/// that holds `n`, walking the cycle until it lands below `n` (fewer than
/// four steps on average). Written here rather than taken from a crate:
/// it is twenty lines, and the format-preserving-encryption crates bring
/// AES for a job that needs no secrecy.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        assert!(n > 0, "a permutation of at least one element");
        let bits = 64 - (n - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut rng = rng_for(seed, 0x11_0F5);
        Permutation {
            n,
            half_bits,
            keys: [
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            ],
        }
    }

    /// The element at position `i` (`i < n`).
    pub fn at(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.round_trip(i);
        while x >= self.n {
            x = self.round_trip(x);
        }
        x
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One operation of a run, as [`LiopsWorker::next_operation`] gives it:
/// the range `lo..=hi` of `mykey`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LiopsOp {
    Select { lo: u64, hi: u64 },
    Update { lo: u64, hi: u64 },
}

/// What every connection of one phase shares.
pub struct LiopsShared {
    pub cfg: LiopsConfig,
    tables: Vec<String>,
    /// Where each position of a table's load order puts its key.
    order: Permutation,
    next_batch: Counter,
    /// A run phase's in-server loop, when `liops.loop=server`.
    server: Option<ServerRun>,
}

/// How a run phase bounds its in-server loops: the run's own limits.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ServerRun {
    pub duration: Option<Duration>,
    pub warmup: Duration,
    /// `operationcount`, shared out over the sessions.
    pub operation_count: Option<u64>,
}

impl LiopsShared {
    /// `seed` fixes the load order (the same for every table: each table
    /// is a copy of the same seed table, as PGIO makes them).
    pub fn new(cfg: LiopsConfig, seed: u64) -> Arc<LiopsShared> {
        Arc::new(LiopsShared {
            tables: cfg.tables(),
            order: Permutation::new(cfg.scale, seed),
            cfg,
            next_batch: Counter::new(0),
            server: None,
        })
    }

    /// As [`LiopsShared::new`], for a run phase whose sessions each run
    /// their loop in the server within `run`'s limits.
    pub fn with_server_loop(cfg: LiopsConfig, seed: u64, run: ServerRun) -> Arc<LiopsShared> {
        let mut shared = Arc::into_inner(LiopsShared::new(cfg, seed)).expect("just made");
        shared.server = Some(run);
        Arc::new(shared)
    }

    /// Connection `index`'s worker for `phase`. In the run, sessions are
    /// dealt to the tables in turn, so each has `NUM_THREADS`.
    pub fn worker(self: &Arc<Self>, phase: Phase, seed: u64, index: usize) -> LiopsWorker {
        let mut rng = rng_for(seed, index as u64);
        let server = self.server.filter(|_| phase == Phase::Run).map(|run| {
            let cfg = &self.cfg;
            ServerLoop {
                duration: run.duration,
                warmup: run.warmup,
                max_statements: run.operation_count.map(|n| cfg.share_of(n, index)),
                update_pct: cfg.update_pct,
                work_unit: cfg.work_unit,
                update_work_unit: cfg.update_work_unit,
                scale: cfg.scale,
                // 53 random bits onto [-1, 1).
                seed: (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0,
            }
        });
        LiopsWorker {
            shared: self.clone(),
            phase,
            table: index % self.tables.len(),
            rng,
            quota: 0,
            rows: Vec::new(),
            server,
        }
    }

    /// The rows of load batch `b`: its table and `(mykey, scratch)` pairs.
    pub fn batch(&self, b: u64, rng: &mut Rng, out: &mut Vec<LiopsRow>) -> usize {
        let per_table = self.cfg.batches_per_table();
        let table = (b / per_table) as usize;
        let first = (b % per_table) * self.cfg.batch;
        let last = (first + self.cfg.batch).min(self.cfg.scale);
        out.clear();
        out.extend((first..last).map(|pos| LiopsRow {
            key: self.order.at(pos) + 1,
            // PGIO's scratch is random too; kept small so a sum over a
            // range can never overflow a bigint.
            scratch: rng.next_u64() >> 34,
        }));
        table
    }
}

/// One connection's LIOPS state.
pub struct LiopsWorker {
    shared: Arc<LiopsShared>,
    phase: Phase,
    /// The table this session works on, by index.
    table: usize,
    rng: Rng,
    /// Update quota: adds `UPDATE_PCT` each operation, an update whenever
    /// it reaches 100, so exactly that percentage of every hundred
    /// operations of a session are updates, spread evenly.
    quota: u32,
    rows: Vec<LiopsRow>,
    /// The in-server loop this session runs, once, when `liops.loop=server`.
    pub(super) server: Option<ServerLoop>,
}

impl LiopsWorker {
    /// The table this worker's run operations use.
    pub fn table(&self) -> &str {
        &self.shared.tables[self.table]
    }

    pub fn next_operation(&mut self) -> LiopsOp {
        let cfg = &self.shared.cfg;
        // k in [1, SCALE - widest range): both ranges stay inside the table.
        let span = cfg.scale - cfg.work_unit.max(cfg.update_work_unit) - 1;
        let k = 1 + below(&mut self.rng, span);
        self.quota += cfg.update_pct;
        if self.quota >= 100 {
            self.quota -= 100;
            LiopsOp::Update {
                lo: k,
                hi: k + cfg.update_work_unit,
            }
        } else {
            LiopsOp::Select {
                lo: k,
                hi: k + cfg.work_unit,
            }
        }
    }

    async fn load_one<C: LiopsConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let shared = &*self.shared;
        let b = shared.next_batch.next();
        if b >= shared.cfg.load_batches() {
            // Every batch is taken: the phase's operation count ends it
            // before this can happen.
            return;
        }
        let table = shared.batch(b, &mut self.rng, &mut self.rows);
        let t = m.start();
        let status = conn.liops_load(&shared.tables[table], &self.rows).await;
        m.record_on(conn, OpKind::Insert, status, t);
    }

    async fn run_one<C: LiopsConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let op = self.next_operation();
        let shared = &*self.shared;
        let table = &shared.tables[self.table];
        let mut rows = 0u64;
        let (kind, expected, t, status) = match op {
            LiopsOp::Select { lo, hi } => {
                let t = m.start();
                let s = conn.liops_select(table, lo, hi, &mut rows).await;
                (OpKind::Scan, shared.cfg.select_rows(), t, s)
            }
            LiopsOp::Update { lo, hi } => {
                let t = m.start();
                let s = conn.liops_update(table, lo, hi, &mut rows).await;
                (OpKind::Update, shared.cfg.update_rows(), t, s)
            }
        };
        let ended = std::time::Instant::now();
        let status = if status.is_ok() && rows != expected {
            Status::UnexpectedState
        } else {
            status
        };
        m.record_span_on(conn, kind, status, t, ended);
    }

    /// The session's whole run in one call: the server's loop. Its
    /// statements enter the histograms with the times the server took
    /// (service and response time alike: no client waited between them),
    /// all as the call returns.
    async fn server_loop<C: LiopsConnection>(
        &mut self,
        spec: ServerLoop,
        conn: &mut C,
        m: &mut Meter,
    ) {
        m.whole_phase();
        let mut out = ServerLoopOutcome::default();
        let t = m.start();
        let table = &self.shared.tables[self.table];
        let status = conn.liops_server_loop(table, &spec, &mut out).await;
        if !status.is_ok() {
            m.record_on(conn, OpKind::Scan, status, t);
            return;
        }
        if !out.consistent() {
            // The backend's reading of the loop's answer is wrong: no
            // figure from it can be trusted.
            m.record(OpKind::Scan, Status::UnexpectedState, t);
            return;
        }
        for timed in &out.times {
            let kind = if timed.update {
                OpKind::Update
            } else {
                OpKind::Scan
            };
            let status = if timed.ok {
                Status::Ok
            } else {
                Status::UnexpectedState
            };
            m.record_timed(kind, status, timed.ns, timed.count);
        }
    }
}

impl<C: LiopsConnection> Step<C> for LiopsWorker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self.phase {
            Phase::Load => self.load_one(conn, meter).await,
            Phase::Run => match self.server.take() {
                Some(spec) => self.server_loop(spec, conn, meter).await,
                None => self.run_one(conn, meter).await,
            },
        }
    }
}
