//! The workload's settings ([`LiopsConfig`]) under PGIO's `pgio.conf`
//! property names, with `SCALE` read as PGIO reads it.

use crate::backend::{BackendError, Schema};
use crate::properties::{Properties, PropertyError};

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

    pub(super) fn batches_per_table(&self) -> u64 {
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
