//! LIOPS: the PGIO / SLOB method of stressing a database's storage layer
//! rather than its query layer, selected with `workload=liops`. This module
//! owns the workload's properties ([`LiopsConfig`], PGIO's `pgio.conf`
//! names), the row layout and load order ([`Permutation`]), what each
//! operation does ([`LiopsWorker`]), and the capability a backend
//! implements to run it ([`Liops`], [`LiopsConnection`]); the SQL lives
//! with each backend.
//!
//! Load: `NUM_SCHEMAS` tables (`pgio1`, `pgio2`, ...) of `SCALE` rows
//! `(mykey, scratch, filler char(1024))`, one row per 8 KB block on
//! PostgreSQL (`fillfactor=10`), written in batches in a random order of
//! `mykey`, so neighbouring keys live in unrelated blocks; the btree index
//! on `mykey` is built after the data, as PGIO does.
//!
//! Run: `NUM_THREADS` sessions per table. Each operation picks `k`
//! uniformly and either sums `scratch` over `mykey BETWEEN k AND
//! k + WORK_UNIT` (a SCAN, `WORK_UNIT + 1` rows) or, in `UPDATE_PCT` of the
//! operations, adds one to `scratch` over `k .. k + UPDATE_WORK_UNIT` (an
//! UPDATE). One statement per transaction. A statement that touches any
//! other number of rows means missing data and counts as
//! UNEXPECTED_STATE, so every OK operation touched exactly its range: rows
//! touched, and the LIOPS figure, follow from the OK counts.
//!
//! Where the loop runs (`liops.loop`): `client` sends every statement from
//! sojourn, one step per statement; `server` runs each session's loop
//! inside the server as PGIO does, one call per session for the whole run
//! ([`LiopsConnection::liops_server_loop`]), which hands back the loop's
//! own counts and the statement times it took ([`ServerLoopOutcome`]).
//! A backend without such a loop refuses `server` before anything runs
//! ([`LiopsConfig::refuse_server_loop`]).

use crate::backend::Backend;
use crate::executor::{Connector, RunConfig};
use crate::run_record::RunRecord;

use super::config::CoreConfig;
use super::kind::{Kind, Settled};
use super::{Loaded, ReadyPhase, StepsError};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rand_core::RngCore;

use crate::backend::{BackendError, Connection, Schema, Status};
use crate::executor::{Meter, Step};
use crate::generator::{below, rng_for, Counter, Rng};
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

use super::capability::{Capability, Support};
use super::phase::Phase;

/// The LIOPS workload's capability: a backend that runs it implements
/// [`Runs<Liops>`](super::capability::Runs) for its tables (and the index a load builds after
/// the data, in `finish_load`) and [`LiopsConnection`] for its
/// connections.
pub struct Liops;

impl Capability for Liops {
    type Config = LiopsConfig;
    type Step = LiopsWorker;
    const REFUSAL: &'static str = "does not run the LIOPS workload (workload=liops); it runs on \
         PostgreSQL (postgres://) and MySQL/MariaDB (mysql://)";
}

/// A backend's LIOPS support (see [`Support`]).
pub type LiopsSupport<B> = Support<B, Liops>;

/// The LIOPS workload's statements on one connection.
pub trait LiopsConnection: Connection {
    /// Load: add `rows` (with the constant filler) to `table`.
    fn liops_load(&mut self, table: &str, rows: &[LiopsRow])
        -> impl Future<Output = Status> + Send;

    /// Sum `scratch` over `mykey BETWEEN lo AND hi` in `table`, setting
    /// `rows` to the rows it read.
    fn liops_select(
        &mut self,
        table: &str,
        lo: u64,
        hi: u64,
        rows: &mut u64,
    ) -> impl Future<Output = Status> + Send;

    /// Add one to `scratch` over `mykey BETWEEN lo AND hi` in `table`,
    /// setting `rows` to the rows it changed.
    fn liops_update(
        &mut self,
        table: &str,
        lo: u64,
        hi: u64,
        rows: &mut u64,
    ) -> impl Future<Output = Status> + Send;

    /// `liops.loop=server`: run this session's whole loop on `table` inside
    /// the server, as `spec` says, and fill `out` with what the loop
    /// counted and timed. One call per session for the whole run. A
    /// backend without an in-server loop answers NOT_IMPLEMENTED (its
    /// setup refuses `server` before a run gets here).
    fn liops_server_loop(
        &mut self,
        table: &str,
        spec: &ServerLoop,
        out: &mut ServerLoopOutcome,
    ) -> impl Future<Output = Status> + Send {
        let _ = (table, spec, out);
        async { Status::NotImplemented }
    }
}

/// Where a LIOPS session's loop runs (`liops.loop`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopIn {
    /// sojourn sends every statement (the default of a workload chosen by
    /// property or by a file that says so, as `workloads/liops`).
    Client,
    /// The server runs each session's loop, as PGIO's PL/pgSQL does (the
    /// default of a file of PGIO's keys, a `pgio.conf`).
    Server,
}

impl LoopIn {
    pub const ACCEPTED: &'static str = "client or server";

    pub fn name(self) -> &'static str {
        match self {
            LoopIn::Client => "client",
            LoopIn::Server => "server",
        }
    }
}

/// One session's in-server loop: what the server runs for
/// [`LiopsConnection::liops_server_loop`].
#[derive(Clone, Debug, PartialEq)]
pub struct ServerLoop {
    /// How long the loop runs: the run's time limit (`RUN_TIME` or
    /// `maxexecutiontime`), from the loop's own start; `None` when the run
    /// has only a count.
    pub duration: Option<Duration>,
    /// Statements that start this early in the loop run but are not
    /// counted (`warmup`), as the client's warm-up intervals are not.
    pub warmup: Duration,
    /// This session's share of `operationcount`, when set: the loop stops
    /// after that many statements, counted or not.
    pub max_statements: Option<u64>,
    pub update_pct: u32,
    pub work_unit: u64,
    pub update_work_unit: u64,
    pub scale: u64,
    /// The session's random seed, from -1 to 1 (PostgreSQL's `setseed`).
    pub seed: f64,
}

/// What one session's in-server loop did, from the loop's own counts:
/// PGIO's columns, and the statement times it measured in the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerLoopOutcome {
    pub loop_iterations: u64,
    pub sql_selects: u64,
    pub sql_updates: u64,
    /// Statement times taken in the server, each with how many statements
    /// took it; `ok` false for a statement that touched another number of
    /// rows than its range (UNEXPECTED_STATE, as in the client loop).
    pub times: Vec<ServerTimed>,
}

/// Statements of one kind that took one time, measured in the server.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ServerTimed {
    pub update: bool,
    pub ok: bool,
    pub ns: u64,
    pub count: u64,
}

impl ServerLoopOutcome {
    /// Whether the times account for exactly the statements the loop
    /// counted: a check of the backend's decoding.
    pub fn consistent(&self) -> bool {
        let sum = |update: bool, ok: Option<bool>| -> u64 {
            self.times
                .iter()
                .filter(|t| t.update == update && ok.is_none_or(|ok| t.ok == ok))
                .map(|t| t.count)
                .sum()
        };
        sum(false, Some(true)) == self.sql_selects
            && sum(true, Some(true)) == self.sql_updates
            && sum(false, None) + sum(true, None) == self.loop_iterations
    }
}

/// The workload's own property names: PGIO's, so a `pgio.conf` reads as
/// a workload file, plus sojourn's table prefix and load batch size.
pub const LIOPS_PROPERTIES: &[&str] = &[
    "UPDATE_PCT",
    "RUN_TIME",
    "NUM_SCHEMAS",
    "NUM_THREADS",
    "WORK_UNIT",
    "UPDATE_WORK_UNIT",
    "SCALE",
    "liops.table",
    "liops.batch",
    "liops.loop",
    // The database, when no --db is given (see `pgio::connect_url`), and
    // PGIO's switch to reuse its seed table, which only TRUE can mean here.
    "DBNAME",
    "CONNECT_STRING",
    "CREATE_BASE_TABLE",
];

/// PostgreSQL's block size: `SCALE` with a size suffix is bytes of these.
pub const BLOCK_SIZE: u64 = 8192;

/// The width of `filler`: with `fillfactor=10` one row fills a block.
pub const FILLER_WIDTH: usize = 1024;

/// Whether the `workload` property selects this workload.
pub fn is_liops(p: &Properties) -> bool {
    p.get_str("workload", "core").eq_ignore_ascii_case("liops")
}

/// The workload's settings, defaults from PGIO's shipped `pgio.conf`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LiopsConfig {
    /// Percent of operations that are updates, 0 to 100 (`UPDATE_PCT`).
    pub update_pct: u32,
    /// Tables (`NUM_SCHEMAS`, 4).
    pub schemas: u32,
    /// Sessions per table in the run (`NUM_THREADS`, 1).
    pub threads_per_schema: u32,
    /// Rows a select ranges over, less one (`WORK_UNIT`, 255).
    pub work_unit: u64,
    /// Rows an update ranges over, less one (`UPDATE_WORK_UNIT`, 8).
    pub update_work_unit: u64,
    /// Rows per table (`SCALE`, 1G = 131,072 rows of one block each).
    pub scale: u64,
    /// `RUN_TIME` in seconds, when given: the run's default
    /// `maxexecutiontime`.
    pub run_time: Option<f64>,
    /// Tables are named this plus 1..=schemas (`liops.table`, `pgio`).
    pub table_prefix: String,
    /// Rows per load operation (`liops.batch`, 10,000).
    pub batch: u64,
    /// PGIO's `CREATE_BASE_TABLE` (TRUE): FALSE asks a load to reuse a
    /// seed table sojourn does not keep, so a load refuses it.
    pub create_base_table: bool,
    /// PGIO's `DBNAME`, when given: the database its report names.
    pub dbname: Option<String>,
    /// Where each session's loop runs (`liops.loop`, `client`).
    pub loop_in: LoopIn,
    /// `liops.loop` as set and where, for messages that refuse it.
    #[serde(skip)]
    pub loop_setting: String,
}

impl LiopsConfig {
    pub fn from_properties(p: &Properties) -> Result<LiopsConfig, PropertyError> {
        let update_pct = p.get_u64_in("UPDATE_PCT", 0, 0..=100)?;
        let schemas = p.get_u64_in("NUM_SCHEMAS", 4, 1..=1000)?;
        let threads = p.get_u64_in("NUM_THREADS", 1, 1..=10_000)?;
        if threads * schemas > 100_000 {
            return Err(p.invalid(
                "NUM_THREADS",
                format!(
                    "makes {} sessions with NUM_SCHEMAS = {schemas}; at most 100000 in all",
                    threads * schemas
                ),
            ));
        }
        let work_unit = p.get_u64("WORK_UNIT", 255)?;
        let update_work_unit = p.get_u64("UPDATE_WORK_UNIT", 8)?;
        let scale = match p.get("SCALE") {
            None => 131_072,
            Some(raw) => parse_scale(raw).map_err(|m| p.invalid("SCALE", m))?,
        };
        let widest = work_unit.max(update_work_unit);
        if scale <= widest.saturating_add(1) || scale > i64::MAX as u64 / 2 {
            return Err(p.invalid(
                "SCALE",
                format!(
                    "must hold more rows than WORK_UNIT and UPDATE_WORK_UNIT plus 1 ({} here)",
                    widest.saturating_add(1)
                ),
            ));
        }
        let run_time = match p.get("RUN_TIME") {
            None => None,
            Some(_) => {
                let s = p.get_f64("RUN_TIME", 0.0)?;
                if !(s > 0.0 && s <= 1e9) {
                    return Err(p.invalid("RUN_TIME", "must be a number of seconds above 0"));
                }
                Some(s)
            }
        };
        let table_prefix = p.get_str("liops.table", "pgio").to_string();
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if table_prefix.is_empty()
            || table_prefix.len() > 40
            || !table_prefix.chars().all(plain)
            || table_prefix.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(p.invalid(
                "liops.table",
                "must be 1 to 40 letters, digits or _, not starting with a digit",
            ));
        }
        let batch = p.get_u64_in("liops.batch", 10_000, 1..=1_000_000)?;
        let create_base_table = p.get_bool("CREATE_BASE_TABLE", true)?;
        let dbname = p
            .get("DBNAME")
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(String::from);
        let loop_in = match p.get_choice("liops.loop", "client", &["client", "server"])? {
            "server" => LoopIn::Server,
            _ => LoopIn::Client,
        };
        Ok(LiopsConfig {
            update_pct: update_pct as u32,
            schemas: schemas as u32,
            threads_per_schema: threads as u32,
            work_unit,
            update_work_unit,
            scale,
            run_time,
            table_prefix,
            batch,
            create_base_table,
            dbname,
            loop_in,
            loop_setting: p.describe("liops.loop"),
        })
    }

    /// What a backend without an in-server loop (`backend`, its
    /// description) answers `liops.loop=server`: an error naming the
    /// property, where it was set and what is accepted. `Ok` for `client`.
    pub fn refuse_server_loop(&self, backend: &str) -> Result<(), BackendError> {
        if self.loop_in == LoopIn::Client {
            return Ok(());
        }
        Err(BackendError::Config(format!(
            "{}: {backend} has no in-server loop for the LIOPS workload (PGIO's PL/pgSQL loop \
             runs on PostgreSQL and servers of its protocol); accepted here: liops.loop=client, \
             which sends each statement from sojourn (a file of PGIO's keys runs the server \
             loop unless it sets liops.loop=client)",
            self.loop_setting
        )))
    }

    /// `liops.loop=server` for a run phase: no rate, as no client paces
    /// statements it does not send. `rate_key` is the property that set a
    /// rate, if any. (Its bounds are the run's: `RUN_TIME` or
    /// `maxexecutiontime`, `operationcount`, one of which every run has.)
    pub fn check_server_loop(
        &self,
        p: &Properties,
        rate_key: Option<&str>,
    ) -> Result<(), PropertyError> {
        if self.loop_in == LoopIn::Client {
            return Ok(());
        }
        if let Some(key) = rate_key {
            return Err(p.invalid(
                "liops.loop",
                format!(
                    "runs each session's loop in the server, which no client rate paces, and {} \
                     sets one: leave it out, or set liops.loop=client",
                    p.describe(key)
                ),
            ));
        }
        Ok(())
    }

    /// Session `index`'s share of `count` statements, dealt as evenly as
    /// they go over the run's sessions.
    pub fn share_of(&self, count: u64, index: usize) -> u64 {
        let n = self.run_sessions() as u64;
        count / n + u64::from((index as u64) < count % n)
    }

    /// The name of table `n`, counting from 1.
    pub fn table(&self, n: u32) -> String {
        format!("{}{n}", self.table_prefix)
    }

    /// Every table, in order.
    pub fn tables(&self) -> Vec<String> {
        (1..=self.schemas).map(|n| self.table(n)).collect()
    }

    /// The first table as a [`Schema`] (backends check its name at
    /// connect time), the others in `more_tables`, so that server
    /// counters can cover them all.
    pub fn schema(&self) -> Schema {
        let mut tables = self.tables();
        let first = tables.remove(0);
        Schema {
            table: first,
            field_names: Vec::new(),
            more_tables: tables,
        }
    }

    /// Load operations: batches of every table.
    pub fn load_batches(&self) -> u64 {
        self.batches_per_table() * u64::from(self.schemas)
    }

    /// Rows written by `done` load batches. Each table's last batch may be
    /// short, so a partial load is counted as if its short batches came
    /// last: the count is never more than what was written.
    pub fn rows_in_batches(&self, done: u64) -> u64 {
        let per_table = self.batches_per_table();
        let full_per_table = self.scale / self.batch;
        let full = u64::from(self.schemas) * full_per_table;
        let short_rows = self.scale - full_per_table * self.batch;
        if done <= full {
            done * self.batch
        } else {
            let short = (done - full).min(u64::from(self.schemas) * (per_table - full_per_table));
            full * self.batch + short * short_rows
        }
    }

    fn batches_per_table(&self) -> u64 {
        self.scale.div_ceil(self.batch)
    }

    /// Run sessions: `NUM_THREADS` per table.
    pub fn run_sessions(&self) -> usize {
        self.schemas as usize * self.threads_per_schema as usize
    }

    /// Rows an OK select touches.
    pub fn select_rows(&self) -> u64 {
        self.work_unit + 1
    }

    /// Rows an OK update touches.
    pub fn update_rows(&self) -> u64 {
        self.update_work_unit + 1
    }
}

/// `SCALE`: a number of rows (one per block), or a size with a suffix
/// (`K`, `M`, `G`, `T`, optionally followed by `B`) in 8 KB blocks, as
/// PGIO reads it (`1G` is 131,072 rows).
pub fn parse_scale(raw: &str) -> Result<u64, String> {
    const ACCEPTED: &str = "expected a row count such as 1000000, or a size such as 64M or 1G \
                            (8 KB blocks, one row each)";
    let s = raw.trim().replace('_', "");
    let upper = s.to_ascii_uppercase();
    let body = upper.strip_suffix('B').unwrap_or(&upper);
    let (digits, unit) = match body.char_indices().last() {
        Some((i, c @ ('K' | 'M' | 'G' | 'T'))) => (&body[..i], Some(c)),
        _ => (body, None),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("'{raw}' is not a size: {ACCEPTED}"))?;
    let rows = match unit {
        None => Some(n),
        Some(u) => {
            let shift = match u {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                _ => 40,
            };
            n.checked_mul(1u64 << shift).map(|bytes| bytes / BLOCK_SIZE)
        }
    };
    match rows {
        Some(r) if r > 0 => Ok(r),
        _ => Err(format!("'{raw}' is out of range: {ACCEPTED}")),
    }
}

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

/// One row of a load batch; `filler` is the same for every row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LiopsRow {
    pub key: u64,
    pub scratch: u64,
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
    server: Option<ServerLoop>,
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

impl Kind for LiopsConfig {
    const NAME: &'static str = "liops";
    const TITLE: &'static str = "the LIOPS workload";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = LIOPS_PROPERTIES;

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        LiopsConfig::from_properties(p)
    }

    fn records(&self) -> Option<u64> {
        Some(self.scale)
    }

    /// PGIO's sessions, NUM_THREADS per table, in both phases (so `bench`
    /// keeps one pool of connections).
    fn connections(&self) -> Option<u64> {
        Some(self.run_sessions() as u64)
    }

    fn run_time(&self, phase: Phase) -> Option<f64> {
        self.run_time.filter(|_| phase == Phase::Run)
    }

    fn load_operations(&self, _core: &CoreConfig) -> Option<u64> {
        Some(self.load_batches())
    }

    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        match s.phase {
            Phase::Load if !self.create_base_table => Err(s.props.invalid(
                "CREATE_BASE_TABLE",
                format!(
                    "asks PGIO's setup to reuse its seed table (pgio_base), which sojourn does \
                     not keep: each load writes {} table(s) itself. Set it to TRUE or leave it \
                     out to load; to use tables already loaded, run without loading (`sojourn \
                     run`)",
                    self.schemas
                ),
            )),
            Phase::Load => Ok(()),
            Phase::Run => self.check_server_loop(s.props, s.rate_key),
        }
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        self.schema()
    }

    fn what(&self, _schema: &Schema) -> String {
        format!("LIOPS table {}", self.table(1))
    }

    fn data_shape(&self) -> &'static str {
        "SCALE and NUM_SCHEMAS, loaded once: `sojourn load --drop` loads it again from scratch"
    }

    fn one_client_only(&self, _phase: Phase) -> Option<&'static str> {
        Some("the LIOPS workload runs from one client machine (NUM_SCHEMAS x NUM_THREADS sessions)")
    }

    /// The tables have no unique key (as PGIO's have none), so a second
    /// load would add a second copy: a load starts from empty tables.
    fn load_appends(&self) -> bool {
        true
    }

    /// Each load operation is a batch of rows.
    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: self.rows_in_batches(done),
            unit: "rows",
            batches: Some(done),
        }
    }

    async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        LiopsSupport::of(backend)?.is_empty(backend, self).await
    }

    async fn prepare<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        LiopsSupport::of(backend)?
            .prepare(backend, self, drop)
            .await
    }

    /// The index is built after the data, as PGIO does: faster, and a
    /// compact btree.
    fn after_load(&self) -> Option<String> {
        Some(format!(
            "building the index on mykey of {} table(s) and analyzing them",
            self.schemas
        ))
    }

    async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        LiopsSupport::of(backend)?.finish_load(backend, self).await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        // PGIO measures what a fixed set of sessions achieves back to
        // back; its setup (tables, index) is not the core workload's.
        Some(
            "for workload=liops, run `sojourn run` with more NUM_SCHEMAS or NUM_THREADS, or \
             with --target N",
        )
    }

    fn run_lines(&self, run: &RunRecord) -> String {
        crate::output::liops::LiopsFigures::of(self, run).text()
    }

    async fn ready<B, K>(
        &self,
        phase: Phase,
        cfg: &RunConfig,
        backend: &B,
        _connector: &K,
    ) -> Result<Box<dyn ReadyPhase<B::Conn>>, StepsError>
    where
        B: Backend,
        K: Connector<Conn = B::Conn>,
    {
        let support = LiopsSupport::of(backend)?;
        let seed = cfg.seed;
        // The seed fixes the load order and each session's ranges.
        let server = (phase == Phase::Run && self.loop_in == LoopIn::Server).then(|| ServerRun {
            duration: cfg.max_execution_time,
            warmup: cfg.warmup,
            operation_count: cfg.operation_count(),
        });
        let shared = match server {
            Some(run) => LiopsShared::with_server_loop(self.clone(), seed, run),
            None => LiopsShared::new(self.clone(), seed),
        };
        let steps = (0..cfg.workers())
            .map(|i| shared.worker(phase, seed, i))
            .collect();
        let mut cfg = cfg.clone();
        if server.is_some() {
            // Each session takes its one step, whatever the count: the
            // count is the loops' to keep (shared out above).
            for g in &mut cfg.groups {
                g.operation_count = None;
            }
        }
        Ok(support.phase(steps, cfg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[&str]) -> Properties {
        let mut p = Properties::new();
        for kv in pairs {
            p.set_arg(kv).unwrap();
        }
        p
    }

    #[test]
    fn defaults_are_pgio_conf() {
        let c = LiopsConfig::from_properties(&Properties::new()).unwrap();
        assert_eq!((c.update_pct, c.schemas, c.threads_per_schema), (0, 4, 1));
        assert_eq!(
            (c.work_unit, c.update_work_unit, c.scale),
            (255, 8, 131_072)
        );
        assert_eq!(c.tables(), ["pgio1", "pgio2", "pgio3", "pgio4"]);
        assert_eq!(c.run_sessions(), 4);
    }

    #[test]
    fn a_load_counts_rows_not_batches() {
        // 2 tables of 2,500 rows in batches of 1,000: per table 1,000 +
        // 1,000 + 500.
        let c = LiopsConfig::from_properties(&props(&[
            "SCALE=2500",
            "NUM_SCHEMAS=2",
            "WORK_UNIT=10",
            "liops.batch=1000",
        ]))
        .unwrap();
        assert_eq!(c.load_batches(), 6);
        assert_eq!(c.rows_in_batches(6), 5000);
        assert_eq!(c.rows_in_batches(0), 0);
        assert_eq!(c.rows_in_batches(4), 4000);
        assert_eq!(c.rows_in_batches(5), 4500);
        // PGIO's own sizes: one batch per table.
        let c = LiopsConfig::from_properties(&props(&["SCALE=2000", "NUM_SCHEMAS=4"])).unwrap();
        assert_eq!((c.load_batches(), c.rows_in_batches(4)), (4, 8000));
    }

    #[test]
    fn scale_reads_rows_or_sizes() {
        assert_eq!(parse_scale("1000000"), Ok(1_000_000));
        assert_eq!(parse_scale("1G"), Ok(131_072));
        assert_eq!(parse_scale("64m"), Ok(8192));
        assert_eq!(parse_scale("1TB"), Ok(134_217_728));
        assert_eq!(parse_scale("8K"), Ok(1));
        for bad in ["", "G", "1X", "-5", "0", "4K", "99999999999T"] {
            let e = parse_scale(bad).unwrap_err();
            assert!(e.contains("expected a row count"), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_properties_name_the_key_and_what_is_accepted() {
        for (kv, key, says) in [
            ("UPDATE_PCT=101", "UPDATE_PCT", "0 to 100"),
            (
                "UPDATE_PCT=abc",
                "UPDATE_PCT",
                "a whole number from 0 to 100",
            ),
            (
                "UPDATE_PCT=-1",
                "UPDATE_PCT",
                "a whole number from 0 to 100",
            ),
            ("NUM_SCHEMAS=0", "NUM_SCHEMAS", "1 to 1000"),
            ("NUM_THREADS=x", "NUM_THREADS", "from 1 to 10000"),
            ("liops.batch=0", "liops.batch", "from 1 to 1000000"),
            (
                "CREATE_BASE_TABLE=yes",
                "CREATE_BASE_TABLE",
                "true or false",
            ),
            ("SCALE=200", "SCALE", "more rows than WORK_UNIT"),
            ("RUN_TIME=0", "RUN_TIME", "above 0"),
            ("liops.table=1x", "liops.table", "not starting with a digit"),
            ("liops.table=a;b", "liops.table", "letters, digits"),
        ] {
            let e = LiopsConfig::from_properties(&props(&[kv])).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(key) && text.contains(says), "{kv}: {text}");
        }
    }

    #[test]
    fn permutation_is_a_bijection_that_scatters_neighbours() {
        for n in [1u64, 2, 3, 7, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.at(i);
                assert!(x < n && !seen[x as usize], "n={n} i={i} x={x}");
                seen[x as usize] = true;
            }
        }
        // Consecutive positions rarely hold consecutive keys.
        let p = Permutation::new(100_000, 7);
        let adjacent = (0..99_999)
            .filter(|&i| p.at(i).abs_diff(p.at(i + 1)) == 1)
            .count();
        assert!(adjacent < 20, "{adjacent} neighbours stayed neighbours");
        assert_ne!(
            (0..10).map(|i| p.at(i)).collect::<Vec<_>>(),
            (0..10)
                .map(|i| Permutation::new(100_000, 8).at(i))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn load_batches_cover_every_key_of_every_table_once() {
        let cfg = LiopsConfig::from_properties(&props(&[
            "NUM_SCHEMAS=2",
            "SCALE=1000",
            "WORK_UNIT=10",
            "liops.batch=300",
        ]))
        .unwrap();
        let shared = LiopsShared::new(cfg.clone(), 3);
        assert_eq!(cfg.load_batches(), 8);
        let mut rng = rng_for(1, 1);
        let mut keys = vec![Vec::new(); 2];
        let mut rows = Vec::new();
        for b in 0..cfg.load_batches() {
            let t = shared.batch(b, &mut rng, &mut rows);
            keys[t].extend(rows.iter().map(|r| r.key));
        }
        for k in &mut keys {
            assert_ne!(k[..5], [1, 2, 3, 4, 5], "the load order is shuffled");
            k.sort_unstable();
            assert_eq!(*k, (1..=1000).collect::<Vec<u64>>());
        }
    }

    #[test]
    fn updates_follow_the_quota_and_ranges_stay_inside_the_table() {
        for pct in [0u32, 1, 20, 50, 100] {
            let cfg = LiopsConfig::from_properties(&props(&[
                &format!("UPDATE_PCT={pct}"),
                "SCALE=500",
                "WORK_UNIT=100",
                "UPDATE_WORK_UNIT=8",
            ]))
            .unwrap();
            let shared = LiopsShared::new(cfg, 1);
            let mut w = shared.worker(Phase::Run, 5, 0);
            let ops: Vec<LiopsOp> = (0..1000).map(|_| w.next_operation()).collect();
            let updates = ops
                .iter()
                .filter(|o| matches!(o, LiopsOp::Update { .. }))
                .count();
            assert_eq!(updates, 10 * pct as usize, "UPDATE_PCT={pct}");
            for o in ops {
                match o {
                    LiopsOp::Select { lo, hi } => {
                        assert!(lo >= 1 && hi <= 500 && hi - lo == 100, "{o:?}")
                    }
                    LiopsOp::Update { lo, hi } => {
                        assert!(lo >= 1 && hi <= 500 && hi - lo == 8, "{o:?}")
                    }
                }
            }
        }
    }

    #[test]
    fn the_loop_is_the_clients_unless_set() {
        let c = LiopsConfig::from_properties(&Properties::new()).unwrap();
        assert_eq!(c.loop_in, LoopIn::Client);
        assert!(c.refuse_server_loop("mysql://h/db").is_ok());
        for v in ["server", "SERVER", " server "] {
            let c = LiopsConfig::from_properties(&props(&[&format!("liops.loop={v}")])).unwrap();
            assert_eq!(c.loop_in, LoopIn::Server, "{v}");
        }
        let c = LiopsConfig::from_properties(&props(&["liops.loop=client"])).unwrap();
        assert_eq!(c.loop_in, LoopIn::Client);
        let e = LiopsConfig::from_properties(&props(&["liops.loop=both"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("liops.loop") && e.contains("client") && e.contains("server"),
            "{e}"
        );
    }

    #[test]
    fn a_backend_without_a_server_loop_names_the_property_and_the_choice() {
        let c = LiopsConfig::from_properties(&props(&["liops.loop=server"])).unwrap();
        let e = c
            .refuse_server_loop("mysql://u@h/db")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("liops.loop = 'server'")
                && e.contains("mysql://u@h/db has no in-server loop")
                && e.contains("accepted here: liops.loop=client"),
            "{e}"
        );
    }

    #[test]
    fn the_server_loop_takes_no_rate() {
        let p = props(&["liops.loop=server", "target=100"]);
        let c = LiopsConfig::from_properties(&p).unwrap();
        let e = c
            .check_server_loop(&p, Some("target"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("liops.loop = 'server'") && e.contains("target = '100'"),
            "{e}"
        );
        c.check_server_loop(&p, None).unwrap();
        // The client loop paces its statements.
        let p = props(&["target=100"]);
        let c = LiopsConfig::from_properties(&p).unwrap();
        c.check_server_loop(&p, Some("target")).unwrap();
    }

    #[test]
    fn operationcount_is_shared_out_over_the_sessions_exactly() {
        let c = LiopsConfig::from_properties(&props(&["NUM_SCHEMAS=2", "NUM_THREADS=2"])).unwrap();
        let shares: Vec<u64> = (0..4).map(|i| c.share_of(10, i)).collect();
        assert_eq!(shares, [3, 3, 2, 2]);
        assert_eq!((0..4).map(|i| c.share_of(3, i)).sum::<u64>(), 3);
        let shared = LiopsShared::with_server_loop(
            c,
            9,
            ServerRun {
                duration: Some(Duration::from_secs(2)),
                warmup: Duration::ZERO,
                operation_count: Some(10),
            },
        );
        let w = shared.worker(Phase::Run, 9, 1);
        let spec = w.server.as_ref().unwrap();
        assert_eq!(spec.max_statements, Some(3));
        assert!((-1.0..1.0).contains(&spec.seed));
        assert_ne!(
            shared.worker(Phase::Run, 9, 0).server.unwrap().seed,
            spec.seed
        );
        // The load sends its batches from the client either way.
        assert!(shared.worker(Phase::Load, 9, 1).server.is_none());
    }

    #[test]
    fn an_outcome_is_consistent_when_its_times_count_its_statements() {
        let timed = |update, ok, count| ServerTimed {
            update,
            ok,
            ns: 1000,
            count,
        };
        let mut o = ServerLoopOutcome {
            loop_iterations: 10,
            sql_selects: 6,
            sql_updates: 3,
            times: vec![
                timed(false, true, 4),
                timed(false, true, 2),
                timed(true, true, 3),
            ],
        };
        assert!(!o.consistent(), "one statement untimed");
        o.times.push(timed(true, false, 1));
        assert!(o.consistent());
        o.sql_updates = 4;
        assert!(!o.consistent());
    }

    #[test]
    fn sessions_are_dealt_to_tables_in_turn() {
        let cfg =
            LiopsConfig::from_properties(&props(&["NUM_SCHEMAS=3", "NUM_THREADS=2"])).unwrap();
        assert_eq!(cfg.run_sessions(), 6);
        let shared = LiopsShared::new(cfg, 0);
        let tables: Vec<String> = (0..6)
            .map(|i| shared.worker(Phase::Run, 0, i).table().to_string())
            .collect();
        assert_eq!(
            tables,
            ["pgio1", "pgio2", "pgio3", "pgio1", "pgio2", "pgio3"]
        );
    }
}
