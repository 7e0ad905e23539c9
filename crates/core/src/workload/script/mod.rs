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
pub mod prng;
pub mod tables;
pub mod value;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::backend::{Backend, BackendError, Connection, Schema, Status};
use crate::executor::{Connector, Meter, RunConfig, Step};
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

use super::capability::{Capability, Support};
use super::kind::{Kind, Settled};
use super::{CoreConfig, Loaded, Phase, ReadyPhase, StepsError};

use compile::{Amount, Command, Part, Sql};
pub use compile::{Keep, Protocol};
use prng::Prng;
pub use tables::{Dialect, PgbenchTables, TablesSql};
use value::{Value, Vars};

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

/// The workload's capability: a backend that runs scripts implements
/// [`Runs<Script>`](super::capability::Runs) (running the setup SQL of
/// [`PgbenchTables`] in its dialect) and [`ScriptConnection`].
pub struct Script;

impl Capability for Script {
    type Config = PgbenchTables;
    type Step = ScriptWorker;
    const REFUSAL: &'static str =
        "does not run pgbench's scripts (workload=script); they run on PostgreSQL \
         (postgres://), MySQL and MariaDB (mysql://) and SQLite (sqlite:)";
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
}

/// A script's SQL on one connection.
pub trait ScriptConnection: Connection {
    /// Run `q`; where it keeps results, fill `kept` (emptied first). A
    /// failure is a status, its words for [`Connection::take_failure`].
    fn execute(&mut self, q: &Query<'_>, kept: &mut Kept) -> impl Future<Output = Status> + Send;

    /// A transaction failed: leave any transaction block it left open,
    /// so the next one starts clean.
    fn abandon_transaction(&mut self) -> impl Future<Output = ()> + Send;

    /// The SQL it speaks, where pgbench's tables differ.
    fn dialect(&self) -> Dialect;
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
    pub compiled: Arc<Compiled>,
}

impl PartialEq for ScriptConfig {
    fn eq(&self, other: &Self) -> bool {
        self.protocol == other.protocol
            && self.scale == other.scale
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
        let compiled = Compiled::new(sources).map_err(|e| PropertyError::File(e.to_string()))?;
        Ok(ScriptConfig {
            protocol,
            scale,
            defines,
            client_offset: p.get_u64("script.client_offset", 0)?,
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
            scripts.push(Compiledscript {
                name,
                kind,
                weight: s.weight,
                commands: commands.into_iter().map(|(c, _)| c).collect(),
                statements,
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
        let shared = Arc::new(Shared::new(self, scale, cfg.seed, cfg.workers()));
        let steps = (0..cfg.workers())
            .map(|i| ScriptWorker::new(&shared, phase, i))
            .collect();
        Ok(support.narrated_phase(steps, cfg.clone(), Arc::new(Settledscale(scale))))
    }
}

/// The scale a run settled (given, or read from pgbench's branches),
/// kept with the run as the label `pgbench_scale`.
struct Settledscale(i64);

/// The label a script run keeps its scale in.
pub const SCALE_LABEL: &str = "pgbench_scale";

impl super::Narrator for Settledscale {
    fn labels(&self) -> Vec<(String, String)> {
        vec![(SCALE_LABEL.to_string(), self.0.to_string())]
    }
}

/// What every connection of a phase shares.
#[derive(Debug)]
pub struct Shared {
    compiled: Arc<Compiled>,
    protocol: Protocol,
    /// The variables every client starts with (`-D`, `:scale`,
    /// `:default_seed`, `:random_seed`).
    start: Vars,
    /// Each client's generator state, drawn from the seed as pgbench
    /// draws them.
    clients: Vec<Prng>,
    /// The weights' running totals, for choosing a script.
    cumulative: Vec<u64>,
    /// Load: the next unit of scale to insert, from 1.
    next_branch: crate::generator::Counter,
    scale: i64,
    client_offset: u64,
}

impl Shared {
    fn new(cfg: &ScriptConfig, scale: i64, seed: u64, workers: usize) -> Shared {
        let c = &cfg.compiled;
        let mut start = Vars::named(&c.names);
        // pgbench draws each client's state, then the default seed, from
        // one sequence of the run's seed.
        let mut base = Prng::new(seed);
        let clients = (0..workers).map(|_| Prng::new(base.next_u64())).collect();
        start.set(c.scale, Value::Int(scale));
        start.set(c.random_seed, Value::Int(seed as i64));
        let defined = |name: &str| cfg.defines.iter().any(|(n, _)| n == name);
        if !defined("default_seed") {
            start.set(c.default_seed, Value::Int(base.next_u64() as i64));
        }
        for (name, value) in &cfg.defines {
            if let Some(slot) = c.names.iter().position(|n| n == name) {
                start.set_text(slot, value);
            }
        }
        let mut total = 0;
        let cumulative = c
            .scripts
            .iter()
            .map(|s| {
                total += u64::from(s.weight);
                total
            })
            .collect();
        Shared {
            compiled: Arc::clone(&cfg.compiled),
            protocol: cfg.protocol,
            start,
            clients,
            cumulative,
            next_branch: crate::generator::Counter::new(1),
            scale,
            client_offset: cfg.client_offset,
        }
    }
}

/// One client: its variables and generators, and the buffers its SQL is
/// built in.
pub struct ScriptWorker {
    shared: Arc<Shared>,
    phase: Phase,
    vars: Vars,
    rng: Prng,
    /// Chooses among several scripts.
    choose: Prng,
    text: String,
    /// Parameter texts, all in `text_params`, by range.
    text_params: String,
    ranges: Vec<Option<(usize, usize)>>,
    kept: Kept,
    client: usize,
}

impl ScriptWorker {
    fn new(shared: &Arc<Shared>, phase: Phase, client: usize) -> ScriptWorker {
        let mut vars = shared.start.clone();
        let id = shared.client_offset + client as u64;
        vars.set(shared.compiled.client_id, Value::Int(id as i64));
        let rng = shared.clients[client].clone();
        // A stream apart from the client's own, so that choosing a script
        // does not move the numbers its `random()` calls draw.
        let mut choose = rng.clone();
        choose = Prng::new(choose.next_u64() ^ 0x5c72_1b3e_a9d0_4f61);
        ScriptWorker {
            shared: Arc::clone(shared),
            phase,
            vars,
            rng,
            choose,
            text: String::new(),
            text_params: String::new(),
            ranges: Vec::new(),
            kept: Kept::default(),
            client,
        }
    }

    fn pick(&mut self) -> usize {
        let c = &self.shared.cumulative;
        if c.len() == 1 {
            return 0;
        }
        let total = *c.last().unwrap_or(&1);
        let w = self.choose.range(0, total - 1);
        c.iter().position(|&t| w < t).unwrap_or(0)
    }

    async fn load_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let branch = self.shared.next_branch.next();
        if branch > self.shared.scale as u64 {
            return;
        }
        let text = PgbenchTables::accounts_batch(branch, conn.dialect());
        let q = Query {
            text: &text,
            params: Params::NONE,
            protocol: Protocol::Simple,
            id: usize::MAX,
            keep: None,
        };
        let t = m.start();
        let status = conn.execute(&q, &mut self.kept).await;
        m.record_on(conn, OpKind::Insert, status, t);
    }

    /// One transaction: a script chosen by weight, run to its end or its
    /// first failure.
    async fn run_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let shared = Arc::clone(&self.shared);
        let index = self.pick();
        let script = &shared.compiled.scripts[index];
        let t0 = m.start();
        let mut pc = 0;
        let mut failed: Option<(Status, Option<String>)> = None;
        let mut any_sql = false;
        while pc < script.commands.len() {
            match &script.commands[pc] {
                Command::Sql(sql) => {
                    let (kind, id) = script.statements[pc].unwrap_or((script.kind, 0));
                    any_sql = true;
                    let t = m.start();
                    let status = self.execute(conn, sql, id).await;
                    m.record_on(conn, kind, status, t);
                    if !status.is_ok() {
                        failed = Some((status, None));
                        break;
                    }
                    if let Some(keep) = &sql.keep {
                        if let Err(why) = self.keep(keep, &shared.compiled.names) {
                            failed = Some((Status::UnexpectedState, Some(why)));
                            break;
                        }
                    }
                    pc += 1;
                }
                Command::Set { slot, expr } => {
                    match self.eval(expr, index, pc) {
                        Ok(v) => self.vars.set(*slot, v),
                        Err(why) => {
                            failed = Some((Status::BadRequest, Some(self.why(script, pc, why))));
                            break;
                        }
                    }
                    pc += 1;
                }
                Command::Sleep { amount, unit_us } => {
                    let n = match amount {
                        Amount::Count(n) => Ok(*n),
                        Amount::Var(slot) => self.sleep_count(*slot),
                    };
                    match n {
                        Ok(n) => {
                            let us = n.saturating_mul(*unit_us);
                            if us > 0 {
                                tokio::time::sleep(Duration::from_micros(us as u64)).await;
                            }
                        }
                        Err(why) => {
                            failed = Some((Status::BadRequest, Some(self.why(script, pc, why))));
                            break;
                        }
                    }
                    pc += 1;
                }
                Command::If { expr, next } => match self.eval(expr, index, pc) {
                    Ok(v) if v.truth() => pc += 1,
                    Ok(_) => pc = self.enter(script, *next, index, &mut failed),
                    Err(why) => {
                        failed = Some((Status::BadRequest, Some(self.why(script, pc, why))));
                        break;
                    }
                },
                // Reached after a branch that was taken: past the block.
                Command::Elif { end, .. } | Command::Else { end } => pc = end + 1,
                Command::EndIf | Command::StartPipeline | Command::EndPipeline => pc += 1,
            }
            if failed.is_some() {
                break;
            }
        }
        match failed {
            None => m.record(script.kind, Status::Ok, t0),
            Some((status, Some(why))) => {
                if any_sql {
                    conn.abandon_transaction().await;
                }
                m.record_because(script.kind, status, t0, why);
            }
            Some((status, None)) => {
                conn.abandon_transaction().await;
                m.record_whole(script.kind, status, t0);
            }
        }
    }

    /// Enter the branch at `at` from a condition that failed: test an
    /// `\elif`, go into an `\else` or past an `\endif`. Returns where to
    /// go on.
    fn enter(
        &mut self,
        script: &Compiledscript,
        mut at: usize,
        index: usize,
        failed: &mut Option<(Status, Option<String>)>,
    ) -> usize {
        loop {
            match &script.commands[at] {
                Command::Elif { expr, next, .. } => match self.eval(expr, index, at) {
                    Ok(v) if v.truth() => return at + 1,
                    Ok(_) => at = *next,
                    Err(why) => {
                        *failed = Some((Status::BadRequest, Some(self.why(script, at, why))));
                        return script.commands.len();
                    }
                },
                _ => return at + 1,
            }
        }
    }

    fn why(&self, script: &Compiledscript, pc: usize, why: String) -> String {
        format!(
            "{why} (client {}, script {}, command {})",
            self.client,
            script.name,
            pc + 1
        )
    }

    fn eval(&mut self, e: &expr::Expr, script: usize, command: usize) -> Result<Value, String> {
        let debug = |v: &Value| {
            eprintln!(
                "debug(script={script},command={}): {}",
                command + 1,
                debug_text(v)
            );
        };
        let mut env = expr::Env {
            vars: &mut self.vars,
            rng: &mut self.rng,
            debug: &debug,
        };
        e.eval(&mut env)
    }

    /// `\sleep :var`: the variable's text read as a whole number, as C's
    /// `atoi` reads it.
    fn sleep_count(&mut self, slot: usize) -> Result<i64, String> {
        let mut text = String::new();
        if !self.vars.write_text(slot, &mut text) {
            return Err(format!(
                "sleep: undefined variable \"{}\"",
                self.vars.name(slot)
            ));
        }
        let t = text.trim_start();
        let end = t
            .char_indices()
            .find(|&(k, c)| !(c.is_ascii_digit() || (k == 0 && (c == '-' || c == '+'))))
            .map_or(t.len(), |(k, _)| k);
        match t[..end].parse::<i64>() {
            Ok(n) => Ok(n),
            Err(_) if t.starts_with(|c: char| c.is_ascii_digit()) => Ok(0),
            Err(_) => Err(format!(
                "sleep: invalid sleep time \"{text}\" for variable \"{}\"",
                self.vars.name(slot)
            )),
        }
    }

    /// Run one SQL command, its variables written in or sent as
    /// parameters.
    async fn execute<C: ScriptConnection>(&mut self, conn: &mut C, sql: &Sql, id: usize) -> Status {
        let protocol = self.shared.protocol;
        self.text.clear();
        self.text_params.clear();
        self.ranges.clear();
        if protocol == Protocol::Simple {
            for part in &sql.parts {
                match part {
                    Part::Text(t) => self.text.push_str(t),
                    Part::Var(slot) => {
                        if !self.vars.write_text(*slot, &mut self.text) {
                            // pgbench leaves an undefined `:name` as is.
                            self.text.push(':');
                            self.text.push_str(self.vars.name(*slot));
                        }
                    }
                }
            }
        } else {
            for &slot in &sql.params {
                let start = self.text_params.len();
                let set = self.vars.write_text(slot, &mut self.text_params);
                self.ranges
                    .push(set.then_some((start, self.text_params.len())));
            }
        }
        let params = Params {
            text: &self.text_params,
            ranges: &self.ranges,
        };
        let q = Query {
            text: match protocol {
                Protocol::Simple => &self.text,
                _ if conn.dialect().positional() => &sql.positional,
                _ => &sql.numbered,
            },
            params,
            protocol,
            id,
            keep: sql.keep.as_ref(),
        };
        conn.execute(&q, &mut self.kept).await
    }

    /// Set variables from what a command kept.
    fn keep(&mut self, keep: &Keep, names: &[String]) -> Result<(), String> {
        let (prefix, results): (&str, &[KeptResult]) = match keep {
            Keep::One(prefix) => {
                let last = self.kept.results.last();
                let rows = last.map_or(0, |r| r.rows);
                if rows != 1 {
                    return Err(format!("\\gset expected one row, got {rows}"));
                }
                (prefix, std::slice::from_ref(last.expect("one result")))
            }
            Keep::All(prefix) => (prefix, &self.kept.results),
        };
        for r in results {
            let Some(row) = &r.last_row else { continue };
            for (col, v) in r.columns.iter().zip(row) {
                let name = format!("{prefix}{col}");
                if !compile::valid_name(&name) {
                    return Err(format!("invalid variable name: \"{name}\""));
                }
                if let Some(slot) = names.iter().position(|n| *n == name) {
                    self.vars.set_text(slot, v.as_deref().unwrap_or(""));
                }
            }
        }
        Ok(())
    }
}

/// `debug()`'s words for a value.
fn debug_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Int(i) => format!("int {i}"),
        Value::Double(_) => format!("double {}", v.text()),
    }
}

impl<C: ScriptConnection> Step<C> for ScriptWorker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self.phase {
            Phase::Load => self.load_one(conn, meter).await,
            Phase::Run => self.run_one(conn, meter).await,
        }
    }
}

impl std::fmt::Debug for ScriptWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptWorker")
            .field("client", &self.client)
            .finish()
    }
}

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

    #[test]
    fn clients_are_numbered_across_shares_and_seeded_as_pgbench_seeds_them() {
        let p = props(&[("script", "builtin=select-only")]);
        let c = ScriptConfig::from_properties(&p).unwrap();
        assert_eq!(
            c.share_properties(2, 4, 16),
            [("script.client_offset".to_string(), "32".to_string())]
        );
        let p = props(&[
            ("script", "builtin=select-only"),
            ("script.client_offset", "32"),
        ]);
        let c = ScriptConfig::from_properties(&p).unwrap();
        let shared = Arc::new(Shared::new(&c, 3, 42, 2));
        let mut w = ScriptWorker::new(&shared, Phase::Run, 1);
        assert_eq!(w.vars.value(c.compiled.client_id), Ok(Value::Int(33)));
        assert_eq!(w.vars.value(c.compiled.scale), Ok(Value::Int(3)));
        // pgbench --random-seed=42: clients' states first, then the
        // default seed, the base sequence's fourth draw after three
        // clients (here two, so its third).
        let mut base = Prng::new(42);
        let (_, c1) = (base.next_u64(), base.next_u64());
        assert_eq!(w.rng, Prng::new(c1));
        assert_eq!(
            w.vars.value(c.compiled.default_seed),
            Ok(Value::Int(base.next_u64() as i64))
        );
    }
}
