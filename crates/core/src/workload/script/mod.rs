//! pgbench's scripts (`workload=script`): a user's own SQL, written in
//! pgbench's script language, run as pgbench runs it (a transaction is one
//! run of a script, chosen by weight; `\set` draws pgbench's random numbers
//! from the same seed), measured as sojourn measures: each script and each
//! of its statements an operation of its own, with service and response
//! time, open loop or closed.
//!
//! The language is [`lex`], [`compile`], [`expr`] and [`value`]; the
//! random numbers [`prng`]; pgbench's builtin scripts [`builtin`]. A
//! backend runs scripts through [`ScriptConnection`] (one SQL command at a
//! time, its text or `$n` parameters by [`Protocol`]) and sets pgbench's
//! tables up through [`Runs<Script>`](super::capability::Runs) with the
//! SQL of [`PgbenchTables`] in its dialect: the database side runs the
//! text it is given and knows nothing of pgbench.

pub mod builtin;
pub mod compile;
pub mod expr;
pub mod lex;
mod narrate;
pub mod prng;
pub mod tables;
pub mod value;
mod worker;

pub use worker::{ScriptWorker, Shared};

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::backend::{Backend, BackendError, Connection, Schema, Status};
use crate::executor::{Connector, RunConfig};
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

use super::capability::{Capability, Support};
use super::kind::{Kind, Settled};
use super::{CoreConfig, Loaded, Phase, ReadyPhase, StepsError};

use compile::Command;
pub use compile::{Keep, Protocol};
pub use tables::{Dialect, PgbenchTables, SqlTables, Tables, TablesSql};

/// The properties this workload reads (and `script.define.NAME`, each
/// `-D NAME=VALUE`).
pub const SCRIPT_PROPERTIES: &[&str] = &[
    "script",
    "script.protocol",
    "script.scale",
    // `--format pgbench`: statement latencies (pgbench's -r), and the
    // latency limit late transactions are counted against (its -L).
    "script.report",
    "script.latency_limit_ms",
    // pgbench's --max-tries: how often a transaction that ended in a
    // serialization failure or a deadlock is tried (0: until the latency
    // limit).
    "script.max_tries",
    // pgbench's vacuum before a run (its default; -n leaves it out).
    "script.vacuum",
    // A share's first `:client_id`, run by agents (see
    // Kind::share_properties).
    "script.client_offset",
];

/// `script.file.FILE` holds the text of the script file `FILE` the
/// command line read, so that agents on other machines run what it read.
pub const FILE_PREFIX: &str = "script.file.";

/// A builtin in the `script` property: `builtin=tpcb-like@2` (no `:`, so
/// that nothing reads `builtin:NAME@W` as a URL's user and password).
pub const BUILTIN_PREFIX: &str = "builtin=";

/// `-D NAME=VALUE` is the property `script.define.NAME`.
pub const DEFINE_PREFIX: &str = "script.define.";

/// Rows per unit of scale, as pgbench loads them.
pub const BRANCHES: u64 = 1;
pub const TELLERS: u64 = 10;
pub const ACCOUNTS: u64 = 100_000;

/// The capability of the workloads written in SQL: a backend that runs
/// them implements [`Runs<Script>`](super::capability::Runs) (running the
/// setup SQL of [`SqlTables`] in its dialect) and [`ScriptConnection`].
/// pgbench's scripts and TPC-C both run through it, so that a database
/// runs SQL text and grows nothing for either.
pub struct Script;

impl Capability for Script {
    type Config = Tables;
    type Step = SqlStep;
    const REFUSAL: &'static str =
        "does not run SQL workloads (pgbench's scripts, TPC-C); they run on PostgreSQL \
         (postgres://), MySQL and MariaDB (mysql://) and SQLite (sqlite:)";
}

/// One connection's steps of a workload written in SQL.
pub enum SqlStep {
    Script(ScriptWorker),
    Tpcc(crate::workload::tpcc::TpccWorker),
}

impl<C: ScriptConnection> crate::executor::Step<C> for SqlStep {
    async fn step(&mut self, conn: &mut C, meter: &mut crate::executor::Meter) {
        match self {
            SqlStep::Script(w) => w.step(conn, meter).await,
            SqlStep::Tpcc(w) => w.step(conn, meter).await,
        }
    }
}

/// A backend's script support (see [`Support`]).
pub type ScriptSupport<B> = Support<B, Script>;

/// One SQL command as a connection runs it.
pub struct Query<'a> {
    /// Its text: values written in (simple protocol), or `$n` parameters.
    pub text: &'a str,
    /// The parameters' texts, for the extended protocols.
    pub params: Params<'a>,
    pub protocol: Protocol,
    /// The statement's number among the run's (`prepared`: prepared once
    /// per connection under it).
    pub id: usize,
    /// Which results the script keeps (`\gset`, `\aset`).
    pub keep: Option<&'a Keep>,
}

/// A command's parameters: each a range of one text (`None`: NULL), so
/// that a statement's values are written into one buffer the client
/// keeps, with nothing allocated per statement.
#[derive(Copy, Clone, Debug)]
pub struct Params<'a> {
    pub text: &'a str,
    pub ranges: &'a [Option<(usize, usize)>],
}

impl<'a> Params<'a> {
    pub const NONE: Params<'static> = Params {
        text: "",
        ranges: &[],
    };

    /// Each parameter's text, `None` for NULL.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&'a str>> + '_ {
        let text = self.text;
        self.ranges.iter().map(move |r| r.map(|(a, b)| &text[a..b]))
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// What a command kept of its results: per result, the column names and
/// its last row (`None` values are NULL), and its row count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kept {
    pub results: Vec<KeptResult>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeptResult {
    pub columns: Vec<String>,
    pub last_row: Option<Vec<Option<String>>>,
    pub rows: u64,
    /// Every row, in order, where the command kept them all
    /// ([`Keep::Rows`]).
    pub all_rows: Vec<Vec<Option<String>>>,
}

impl KeptResult {
    /// A row of the result: counted, kept as the last, and with `every`
    /// kept among all.
    pub fn add_row(&mut self, values: Vec<Option<String>>, every: bool) {
        self.rows += 1;
        if every {
            self.all_rows.push(values.clone());
        }
        self.last_row = Some(values);
    }
}

/// A script's SQL on one connection.
pub trait ScriptConnection: Connection {
    /// Run `q`; where it keeps results, fill `kept` (emptied first). A
    /// failure is a status, its words for [`Connection::take_failure`].
    fn execute(&mut self, q: &Query<'_>, kept: &mut Kept) -> impl Future<Output = Status> + Send;

    /// A transaction failed: leave any transaction block it left open,
    /// so the next one starts clean.
    fn abandon_transaction(&mut self) -> impl Future<Output = ()> + Send;

    /// Whether the latest failure is one pgbench tries again: a
    /// serialization failure or a deadlock (SQLSTATE 40001, 40P01).
    /// Read before the failure's words are taken.
    fn conflicted(&mut self) -> bool {
        false
    }

    /// The SQL it speaks, where pgbench's tables differ.
    fn dialect(&self) -> Dialect;

    /// Whether it pipelines: between `\startpipeline` and `\endpipeline`
    /// its commands are [queued](ScriptConnection::queue) and sent, and
    /// their answers read, at [the end](ScriptConnection::end_pipeline).
    /// Where not, each command runs on its own.
    fn pipelines(&self) -> bool {
        false
    }

    /// Add `q` to the pipeline (preparing it first where it must be).
    fn queue(&mut self, q: &Query<'_>) -> impl Future<Output = Status> + Send {
        let _ = q;
        async { Status::NotImplemented }
    }

    /// Send the pipeline and read its answers: how many of its commands
    /// succeeded, in order, and the status of the one after them (which
    /// failed, the rest skipped by the server) or of the whole.
    fn end_pipeline(&mut self) -> impl Future<Output = (usize, Status)> + Send {
        async { (0, Status::NotImplemented) }
    }
}

/// One script to run: where it came from and its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// `tpcb-like`, or the file as given.
    pub origin: String,
    /// pgbench's description: `<builtin: TPC-B (sort of)>`, or the file.
    pub title: String,
    pub text: String,
    pub weight: u32,
    pub builtin: bool,
}

/// The workload's settings: the scripts, compiled.
#[derive(Clone, Debug)]
pub struct ScriptConfig {
    pub protocol: Protocol,
    /// `-s`: the scale a load makes and `:scale` is (a builtin run reads
    /// it from the branches when not given).
    pub scale: Option<i64>,
    /// `-D NAME=VALUE`, in order.
    pub defines: Vec<(String, String)>,
    /// The first client's `:client_id` (a share run by an agent).
    pub client_offset: u64,
    /// Tries of a transaction that conflicted (0: no limit but the
    /// latency limit).
    pub max_tries: u32,
    /// pgbench's `-L`: no try starts past it.
    pub latency_limit: Option<Duration>,
    /// Vacuum pgbench's tables and empty its history before a run.
    pub vacuum: bool,
    pub compiled: Arc<Compiled>,
}

impl PartialEq for ScriptConfig {
    fn eq(&self, other: &Self) -> bool {
        self.protocol == other.protocol
            && self.scale == other.scale
            && self.max_tries == other.max_tries
            && self.latency_limit == other.latency_limit
            && self.vacuum == other.vacuum
            && self.defines == other.defines
            && self.compiled.sources == other.compiled.sources
    }
}

/// Every script compiled, with the variables they name.
#[derive(Debug)]
pub struct Compiled {
    pub sources: Vec<Source>,
    pub scripts: Vec<Compiledscript>,
    /// Variable names, by slot.
    pub names: Vec<String>,
    /// Slots of the variables pgbench sets itself.
    scale: usize,
    client_id: usize,
    default_seed: usize,
    random_seed: usize,
}

/// One script, compiled: its commands, and what each SQL command is
/// measured as.
#[derive(Debug)]
pub struct Compiledscript {
    pub name: String,
    pub kind: OpKind,
    pub weight: u32,
    pub commands: Vec<Command>,
    /// Per command: its operation kind and statement number, for SQL.
    pub statements: Vec<Option<(OpKind, usize)>>,
    /// `NAME:retry`: each try that conflicted and was run again, timed
    /// from its start to its failure.
    pub retry: OpKind,
    /// `NAME:retried`: each transaction that took more than one try,
    /// timed whole, however it ended.
    pub retried: OpKind,
    /// The line of its first `\startpipeline`, if it has one.
    pub pipeline_line: Option<usize>,
}

impl ScriptConfig {
    /// The scripts `p` names (`script`), read and compiled.
    pub fn from_properties(p: &Properties) -> Result<ScriptConfig, PropertyError> {
        let list = p.get("script").map(str::trim).unwrap_or("");
        if list.is_empty() {
            return Err(p.invalid(
                "script",
                "names no script: give -f FILE[@WEIGHT] or -b NAME[@WEIGHT] (the builtins are \
                 tpcb-like, simple-update, select-only)",
            ));
        }
        let mut sources = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            sources.push(source(p, entry)?);
        }
        if sources.iter().map(|s| u64::from(s.weight)).sum::<u64>() == 0 {
            return Err(p.invalid("script", "total script weight must not be zero"));
        }
        let protocol = match p.get_choice(
            "script.protocol",
            "prepared",
            &["simple", "extended", "prepared"],
        )? {
            "simple" => Protocol::Simple,
            "extended" => Protocol::Extended,
            _ => Protocol::Prepared,
        };
        let scale = match p.get("script.scale") {
            None => None,
            Some(_) => {
                let s = p.get_i64("script.scale", 1)?;
                if s < 1 {
                    return Err(p.invalid("script.scale", "must be 1 or more (pgbench's -s)"));
                }
                Some(s)
            }
        };
        let mut defines: Vec<(String, String)> = p
            .iter()
            .filter_map(|(k, e)| {
                k.strip_prefix(DEFINE_PREFIX)
                    .map(|name| (name.to_string(), e.value.clone()))
            })
            .collect();
        defines.sort();
        for (name, value) in &defines {
            if !compile::valid_name(name) || value.is_empty() {
                return Err(p.invalid(
                    &format!("{DEFINE_PREFIX}{name}"),
                    "is no variable definition: -D NAME=VALUE takes a name (a letter or _ \
                     first, then letters, digits, _) and a value that is not empty",
                ));
            }
        }
        let latency_limit = match p.get("script.latency_limit_ms") {
            None => None,
            Some(_) => {
                let ms = p.get_f64("script.latency_limit_ms", 0.0)?;
                if !(ms > 0.0 && ms.is_finite()) {
                    return Err(p.invalid(
                        "script.latency_limit_ms",
                        "must be a number of milliseconds above 0 (pgbench's -L)",
                    ));
                }
                Some(Duration::from_secs_f64(ms / 1e3))
            }
        };
        let max_tries = u32::try_from(p.get_u64("script.max_tries", 1)?).map_err(|_| {
            p.invalid(
                "script.max_tries",
                format!("must be at most {} (pgbench's --max-tries)", u32::MAX),
            )
        })?;
        if max_tries == 0 && latency_limit.is_none() {
            return Err(p.invalid(
                "script.max_tries",
                "is 0 (no limit), which needs a latency limit to end a transaction's tries: \
                 give script.latency_limit_ms (pgbench's -L), or a number of tries",
            ));
        }
        let compiled = Compiled::new(sources).map_err(|e| PropertyError::File(e.to_string()))?;
        if protocol == Protocol::Simple {
            if let Some((s, line)) = compiled
                .scripts
                .iter()
                .zip(&compiled.sources)
                .find_map(|(c, s)| c.pipeline_line.map(|l| (s, l)))
            {
                return Err(p.invalid(
                    "script.protocol",
                    format!(
                        "is simple, and {}:{line} starts a pipeline, which needs the extended \
                         protocol: give -M extended or prepared (script.protocol)",
                        s.title
                    ),
                ));
            }
        }
        Ok(ScriptConfig {
            protocol,
            scale,
            defines,
            client_offset: p.get_u64("script.client_offset", 0)?,
            max_tries,
            latency_limit,
            vacuum: p.get_bool("script.vacuum", false)?,
            compiled: Arc::new(compiled),
        })
    }

    /// Whether every script is a builtin (which run on pgbench's tables).
    pub fn builtins_only(&self) -> bool {
        self.compiled.sources.iter().all(|s| s.builtin)
    }

    /// pgbench's tables at this scale (`-s`, default 1).
    pub fn tables(&self) -> PgbenchTables {
        PgbenchTables {
            scale: self.scale.unwrap_or(1),
        }
    }
}

/// A script a `script` property lists, as outputs name it: its operation
/// name, pgbench's description, its weight and its text where it can be
/// had (a builtin's; a file's while it is there).
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    pub name: String,
    pub title: String,
    pub weight: u32,
    pub text: Option<String>,
}

/// The scripts of a `script` property (as a run stored it), named as the
/// run named their operations; entries that do not parse are left out.
pub fn listed(list: &str) -> Vec<Listed> {
    let mut out: Vec<Listed> = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (what, weight) = match entry.rsplit_once('@') {
            Some((w, n)) => match n.trim().parse() {
                Ok(n) => (w, n),
                Err(_) => continue,
            },
            None => (entry, 1),
        };
        let (origin, title, text) = match what.strip_prefix(BUILTIN_PREFIX) {
            Some(name) => match builtin::find(name) {
                Ok(b) => (
                    b.name.to_string(),
                    b.title.to_string(),
                    Some(b.text.to_string()),
                ),
                Err(_) => continue,
            },
            None => (
                what.to_string(),
                what.to_string(),
                std::fs::read_to_string(what).ok(),
            ),
        };
        let name = unique_name(&origin, |n| out.iter().any(|l| l.name == n));
        out.push(Listed {
            name,
            title,
            weight,
            text,
        });
    }
    out
}

/// One `script` entry: `builtin=NAME[@W]` or `FILE[@W]` (the last `@`
/// splits, as pgbench's).
fn source(p: &Properties, entry: &str) -> Result<Source, PropertyError> {
    let (what, weight) = match entry.rsplit_once('@') {
        Some((w, n)) => {
            let n: u32 = n.trim().parse().map_err(|_| {
                p.invalid(
                    "script",
                    format!(
                        "has the weight '@{n}' in '{entry}': a weight is a whole number, 0 to \
                         {}",
                        u32::MAX
                    ),
                )
            })?;
            (w, n)
        }
        None => (entry, 1),
    };
    if let Some(name) = what.strip_prefix(BUILTIN_PREFIX) {
        let b = builtin::find(name).map_err(|e| p.invalid("script", e))?;
        return Ok(Source {
            origin: b.name.to_string(),
            title: b.title.to_string(),
            text: b.text.to_string(),
            weight,
            builtin: true,
        });
    }
    let text = match p.get(&format!("{FILE_PREFIX}{what}")) {
        Some(text) => text.to_string(),
        None => std::fs::read_to_string(what).map_err(|e| {
            p.invalid(
                "script",
                format!("names the script file {what}, which cannot be read: {e}"),
            )
        })?,
    };
    Ok(Source {
        origin: what.to_string(),
        title: what.to_string(),
        text,
        weight,
        builtin: false,
    })
}

impl Compiled {
    /// Compile `sources`, naming each script's operations.
    pub fn new(sources: Vec<Source>) -> Result<Compiled, compile::ScriptError> {
        let mut names = compile::Names::default();
        let mut slot = |n: &str| names.slot(n);
        let (scale, client_id, default_seed, random_seed) = (
            slot("scale"),
            slot("client_id"),
            slot("default_seed"),
            slot("random_seed"),
        );
        let mut scripts = Vec::new();
        let mut statement = 0;
        for s in &sources {
            let commands = compile::compile(&s.title, &s.text, &mut slot)?;
            let name = op_name(&s.origin, &scripts);
            let err = |m: String| compile::ScriptError {
                file: s.title.clone(),
                line: 1,
                message: m,
            };
            let kind = OpKind::named(&name).map_err(err)?;
            let retry = OpKind::named(&format!("{name}:retry")).map_err(err)?;
            let retried = OpKind::named(&format!("{name}:retried")).map_err(err)?;
            let mut statements = Vec::new();
            for (n, (c, _)) in commands.iter().enumerate() {
                statements.push(match c {
                    Command::Sql(_) => {
                        statement += 1;
                        let k = OpKind::named(&format!("{name}:{}", n + 1)).map_err(err)?;
                        Some((k, statement - 1))
                    }
                    _ => None,
                });
            }
            let pipeline_line = commands
                .iter()
                .find(|(c, _)| matches!(c, Command::StartPipeline))
                .map(|&(_, line)| line);
            scripts.push(Compiledscript {
                name,
                kind,
                weight: s.weight,
                commands: commands.into_iter().map(|(c, _)| c).collect(),
                statements,
                retry,
                retried,
                pipeline_line,
            });
        }
        Ok(Compiled {
            sources,
            scripts,
            names: names.0,
            scale,
            client_id,
            default_seed,
            random_seed,
        })
    }
}

/// A script's operation name: a builtin's name, a file's stem; a second
/// script of one name gets `-2`.
fn op_name(origin: &str, before: &[Compiledscript]) -> String {
    unique_name(origin, |n| before.iter().any(|s| s.name == n))
}

/// [`op_name`] against the names `taken` says are.
fn unique_name(origin: &str, taken: impl Fn(&str) -> bool) -> String {
    let stem = std::path::Path::new(origin)
        .file_stem()
        .map_or(origin.to_string(), |s| s.to_string_lossy().into_owned());
    let base: String = stem
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '<' {
                '_'
            } else {
                c
            }
        })
        .collect();
    let base = if base.is_empty() {
        "script".into()
    } else {
        base
    };
    let mut name = base.clone();
    let mut n = 1;
    while taken(&name) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

impl Kind for ScriptConfig {
    const NAME: &'static str = "script";
    const TITLE: &'static str = "pgbench-style scripts";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = SCRIPT_PROPERTIES;
    const PREFIXES: &'static [&'static str] = &[DEFINE_PREFIX, FILE_PREFIX];

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        ScriptConfig::from_properties(p)
    }

    /// pgbench's accounts at the scale given.
    fn records(&self) -> Option<u64> {
        Some(self.scale.unwrap_or(1) as u64 * ACCOUNTS)
    }

    /// A second load would find pgbench's tables there: a load starts
    /// from none (`--drop`), as `pgbench -i` drops them first.
    fn load_appends(&self) -> bool {
        true
    }

    /// A load makes pgbench's tables: one operation per unit of scale
    /// (100,000 accounts each).
    fn load_operations(&self, _core: &CoreConfig) -> Option<u64> {
        Some(self.scale.unwrap_or(1) as u64)
    }

    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        if s.phase == Phase::Load && !self.builtins_only() {
            return Err(s.props.invalid(
                "script",
                "names a script of your own, whose tables are your own: load them yourself \
                 (sojourn loads pgbench's tables for its builtins: -b tpcb-like --scale N), \
                 then `sojourn run`",
            ));
        }
        Ok(())
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        Schema {
            table: "pgbench_accounts".into(),
            field_names: Vec::new(),
            more_tables: vec![
                "pgbench_branches".into(),
                "pgbench_tellers".into(),
                "pgbench_history".into(),
            ],
        }
    }

    fn what(&self, _schema: &Schema) -> String {
        "pgbench's tables (pgbench_accounts, ...)".into()
    }

    fn data_shape(&self) -> &'static str {
        "the scale (-s / --scale) for pgbench's builtins; a script's own tables for its own"
    }

    fn one_client_only(&self, phase: Phase) -> Option<&'static str> {
        (phase == Phase::Load)
            .then_some("a script's load (pgbench's tables) runs from one client machine")
    }

    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: done * ACCOUNTS,
            unit: "accounts",
            batches: Some(done),
        }
    }

    async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        let support = ScriptSupport::of(backend)?;
        if !self.builtins_only() {
            // A script's own tables are its own: nothing to look at.
            return Ok(None);
        }
        support.is_empty(backend, &self.tables()).await
    }

    async fn prepare<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        ScriptSupport::of(backend)?
            .prepare(backend, &self.tables(), drop)
            .await
    }

    fn after_load(&self) -> Option<String> {
        Some("adding pgbench's primary keys and analyzing the tables".into())
    }

    async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        ScriptSupport::of(backend)?
            .finish_load(backend, &self.tables())
            .await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        None
    }

    fn share_properties(&self, index: u32, _n: u32, connections: u64) -> Vec<(String, String)> {
        vec![(
            "script.client_offset".into(),
            (self.client_offset + u64::from(index) * connections).to_string(),
        )]
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
        let support = ScriptSupport::of(backend)?;
        // pgbench's builtins run at the scale the tables were loaded at.
        let scale = match (self.scale, phase, self.builtins_only()) {
            (Some(s), _, _) => s,
            (None, Phase::Run, true) => support
                .records(backend, &self.tables())
                .await?
                .map_or(1, |n| n as i64),
            (None, _, _) => 1,
        };
        let mut narration = narrate::Narration::new(&self.compiled, scale);
        narration.retries = self.max_tries != 1;
        narration.latency_limit = self.latency_limit.is_some();
        if self.vacuum && phase == Phase::Run {
            narration.vacuum = Some(
                support
                    .before_run(backend, &self.tables())
                    .await
                    .map_err(|e| e.to_string()),
            );
        }
        let shared = Arc::new(Shared::new(self, scale, cfg.seed, cfg.workers()));
        let steps = (0..cfg.workers())
            .map(|i| SqlStep::Script(ScriptWorker::new(&shared, phase, i)))
            .collect();
        Ok(support.narrated_phase(steps, cfg.clone(), Arc::new(narration)))
    }
}

/// The label a script run keeps its scale in.
pub const SCALE_LABEL: &str = "pgbench_scale";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::command_line as props;

    #[test]
    fn a_script_read_by_the_command_line_runs_where_its_file_is_not() {
        let p = props(&[
            ("script", "/nowhere/mine.sql@2,builtin=se"),
            ("script.file./nowhere/mine.sql", "\\set x 1\nSELECT :x;\n"),
            ("script.define.x", "5"),
        ]);
        let c = ScriptConfig::from_properties(&p).unwrap();
        let names: Vec<&str> = c.compiled.scripts.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["mine", "select-only"]);
        assert_eq!(c.compiled.scripts[0].weight, 2);
        assert_eq!(c.defines, [("x".to_string(), "5".to_string())]);
        assert!(!c.builtins_only());
        let listed: Vec<String> = listed("/nowhere/mine.sql@2,builtin=se")
            .into_iter()
            .map(|l| l.name)
            .collect();
        assert_eq!(listed, ["mine", "select-only"], "outputs name them alike");
        let missing = props(&[("script", "/nowhere/other.sql")]);
        let e = ScriptConfig::from_properties(&missing)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nowhere/other.sql, which cannot be read"),
            "{e}"
        );
    }
}
