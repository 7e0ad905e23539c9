//! The commands workload (`workload=commands`): the user's own command
//! templates with ratios, as memtier_benchmark's `--command` /
//! `--command-ratio` / `--command-key-pattern` and redis-benchmark's
//! trailing command take them, each template an operation of its own named
//! by its command (`SET`, `GET`, `HGETALL`).
//!
//! ```text
//! workload=commands
//! commands.1=SET __key__ __data__
//! commands.1.ratio=1
//! commands.2=GET __key__
//! commands.2.ratio=10
//! commands.key_pattern=R
//! commands.data_size=32
//! ```
//!
//! Each connection goes through the templates in order, each `ratio`
//! times, then again (memtier's cycle: its set:get ratio is as exact per
//! connection as it is there). The placeholders are in [`template`], the
//! key patterns in [`keys`].
//!
//! A backend runs it through [`CommandConnection`]: the words of one
//! command, sent as the server's protocol carries them (a RESP array to
//! Redis; memcached's text lines for its own commands). A nil reply (a
//! `GET` of a key not there) is NOT_FOUND, which memtier counts as a miss;
//! an error reply is ERROR with the server's words.

pub mod keys;
pub mod template;

use std::future::Future;
use std::sync::Arc;

use crate::backend::{Backend, BackendError, Connection, Schema, Status};
use crate::executor::{Connector, Group, Meter, RunConfig, Step};
use crate::generator::{below, rng_for, Rng};
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

use super::capability::{Capability, Support};
use super::kind::{Kind, Settled};
use super::{CoreConfig, Phase, ReadyPhase, StepsError};

pub use keys::{KeyGen, KeySpace, Pattern};
pub use template::{Args, Template};

use template::Piece;

/// The workload's capability: a backend that runs it implements
/// [`Runs<Commands>`](super::capability::Runs) and [`CommandConnection`].
pub struct Commands;

impl Capability for Commands {
    type Config = CommandsSetup;
    type Step = CommandsWorker;
    const REFUSAL: &'static str = "does not run command templates (workload=commands); they \
         run on Redis (redis://) and memcached (memcached://)";
}

/// A backend's support of the workload (see [`Support`]).
pub type CommandsSupport<B> = Support<B, Commands>;

/// What a backend is told before a run: the commands it will be sent,
/// so that one it cannot run is refused before the first operation.
#[derive(Clone, Debug)]
pub struct CommandsSetup {
    /// Each template's command word, as written.
    pub commands: Vec<String>,
}

/// One command on one connection.
pub trait CommandConnection: Connection {
    /// Send the command of `args` and read its reply: OK, NOT_FOUND for a
    /// nil reply (a miss), ERROR for an error reply (the server's words
    /// kept as the failure's reason).
    fn command(&mut self, args: &Args) -> impl Future<Output = Status> + Send;
}

/// The property names of the workload beyond each template's own.
pub const COMMANDS_PROPERTIES: &[&str] = &[
    "commands.key_pattern",
    "commands.key_prefix",
    "commands.key_minimum",
    "commands.key_maximum",
    "commands.key_median",
    "commands.key_stddev",
    "commands.data_size",
    "commands.data_size_range",
    "commands.data_size_pattern",
    "commands.random_range",
    "commands.expiry_range",
    "commands.client_offset",
    "commands.clients",
    "commands.per_connection",
    "commands.distinct_seeds",
];

const PREFIX: &str = "commands.";

/// memtier's default key prefix and range.
pub const DEFAULT_KEY_PREFIX: &str = "memtier-";
pub const DEFAULT_KEY_MAXIMUM: u64 = 10_000_000;

/// One template with what it draws from.
#[derive(Clone, Debug)]
pub struct Entry {
    pub template: Template,
    /// Its operations' name (`SET`; `SET-2` for a second SET template).
    pub name: String,
    pub ratio: u32,
    pub pattern: Pattern,
}

/// How big a `__data__` is.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum DataSize {
    Fixed(usize),
    /// A size from `min..=max`: at random, or (`by_key`) growing with the
    /// key's place in the key range (memtier's `--data-size-pattern S`).
    Range {
        min: usize,
        max: usize,
        by_key: bool,
    },
}

impl DataSize {
    pub fn max(self) -> usize {
        match self {
            DataSize::Fixed(n) => n,
            DataSize::Range { max, .. } => max,
        }
    }
}

/// The workload's settings.
#[derive(Clone, Debug)]
pub struct CommandsConfig {
    pub entries: Vec<Entry>,
    pub prefix: String,
    pub space: KeySpace,
    pub data: DataSize,
    /// `__rand_int__` draws below this; 0: it stays as written.
    pub random_range: u64,
    /// `__expiry__`'s seconds.
    pub expiry: (u64, u64),
    /// The first connection's number across the run's machines, and how
    /// many connections the run has (for `P`'s slices); `None`: this
    /// machine's.
    pub client_offset: u64,
    pub clients: Option<u64>,
    /// Each connection makes its equal share of a closed loop's count
    /// (memtier's `-n`, requests per client), rather than the connections
    /// taking the next operation from one count.
    pub per_connection: bool,
    /// Each connection draws from a seed of its own (sojourn's way); off,
    /// every connection draws the same keys in the same order, as
    /// memtier's clients do without `--distinct-client-seed`.
    pub distinct_seeds: bool,
}

fn range_of(p: &Properties, key: &str, what: &str) -> Result<Option<(u64, u64)>, PropertyError> {
    let Some(v) = p.get(key) else {
        return Ok(None);
    };
    let bad = || {
        p.invalid(
            key,
            format!("is not a range MIN-MAX of {what} (memtier writes it 32-128), MIN <= MAX"),
        )
    };
    let (a, b) = v.trim().split_once(['-', ':']).ok_or_else(bad)?;
    let (a, b): (u64, u64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a > b {
        return Err(bad());
    }
    Ok(Some((a, b)))
}

impl CommandsConfig {
    pub fn from_properties(p: &Properties) -> Result<CommandsConfig, PropertyError> {
        let default_pattern = pattern_of(p, "commands.key_pattern", Pattern::Random)?;
        // The templates: commands.N, with commands.N.ratio and friends.
        let mut numbers: Vec<(u64, &str)> = Vec::new();
        for (key, _) in p.iter() {
            let Some(rest) = key.strip_prefix(PREFIX) else {
                continue;
            };
            if COMMANDS_PROPERTIES.contains(&key) {
                continue;
            }
            let (n, sub) = match rest.split_once('.') {
                Some((n, sub)) => (n, Some(sub)),
                None => (rest, None),
            };
            let known_sub = matches!(sub, None | Some("ratio" | "key_pattern" | "name"));
            match n.parse::<u64>() {
                Ok(n) if known_sub => {
                    if sub.is_none() {
                        numbers.push((n, key));
                    } else if !p.contains(&format!("{PREFIX}{n}")) {
                        return Err(p.invalid(
                            key,
                            format!("belongs to template {PREFIX}{n}, which is not given"),
                        ));
                    }
                }
                _ => {
                    return Err(p.invalid(
                        key,
                        format!(
                            "is not a property of workload=commands: it reads {PREFIX}N (a \
                             template), {PREFIX}N.ratio, {PREFIX}N.key_pattern, {PREFIX}N.name \
                             and {}",
                            COMMANDS_PROPERTIES.join(", ")
                        ),
                    ))
                }
            }
        }
        numbers.sort();
        if numbers.is_empty() {
            return Err(p.invalid(
                "workload",
                "selects workload=commands, which needs at least one template: -p \
                 'commands.1=SET __key__ __data__' (docs/commands.md)",
            ));
        }
        let mut entries: Vec<Entry> = Vec::new();
        for (_, key) in numbers {
            let text = p.get(key).unwrap_or_default();
            let template = Template::parse(text).map_err(|e| p.invalid(key, e))?;
            let ratio_key = format!("{key}.ratio");
            let ratio = p.get_u64_in(&ratio_key, 1, 1..=u64::from(u32::MAX))? as u32;
            let pattern = pattern_of(p, &format!("{key}.key_pattern"), default_pattern)?;
            let name_key = format!("{key}.name");
            let name = match p.get(&name_key) {
                Some(name) => {
                    OpKind::named(name).map_err(|e| p.invalid(&name_key, e))?;
                    name.to_string()
                }
                None => {
                    let base = template.name();
                    let mut name = base.clone();
                    let mut i = 1;
                    while entries.iter().any(|e| e.name == name) {
                        i += 1;
                        name = format!("{base}-{i}");
                    }
                    OpKind::named(&name).map_err(|e| p.invalid(key, e))?;
                    name
                }
            };
            if entries.iter().any(|e| e.name == name) {
                return Err(p.invalid(
                    &name_key,
                    format!("names a second template {name}: each template's name is its own"),
                ));
            }
            entries.push(Entry {
                template,
                name,
                ratio,
                pattern,
            });
        }
        let min = p.get_u64("commands.key_minimum", 0)?;
        let max = p.get_u64("commands.key_maximum", DEFAULT_KEY_MAXIMUM)?;
        if max < min {
            return Err(p.invalid(
                "commands.key_maximum",
                format!("is below commands.key_minimum ({min})"),
            ));
        }
        let optional_f64 = |k: &str| -> Result<Option<f64>, PropertyError> {
            if p.contains(k) {
                Ok(Some(p.get_f64(k, 0.0)?))
            } else {
                Ok(None)
            }
        };
        let space = KeySpace::new(
            min,
            max,
            optional_f64("commands.key_median")?,
            optional_f64("commands.key_stddev")?,
        );
        if space.stddev <= 0.0 && entries.iter().any(|e| e.pattern == Pattern::Gaussian) {
            return Err(p.invalid(
                "commands.key_stddev",
                "must be above 0 for the gaussian pattern (G)",
            ));
        }
        let by_key = p.get_choice("commands.data_size_pattern", "R", &["R", "S"])? == "S";
        let data = match range_of(p, "commands.data_size_range", "bytes")? {
            Some((a, b)) => {
                if p.contains("commands.data_size") {
                    return Err(p.invalid(
                        "commands.data_size_range",
                        "and commands.data_size both set a value's size: give one",
                    ));
                }
                DataSize::Range {
                    min: a.max(1) as usize,
                    max: b.max(1) as usize,
                    by_key,
                }
            }
            None => {
                DataSize::Fixed(p.get_u64_in("commands.data_size", 32, 1..=512 << 20)? as usize)
            }
        };
        Ok(CommandsConfig {
            entries,
            prefix: p
                .get_str("commands.key_prefix", DEFAULT_KEY_PREFIX)
                .to_string(),
            space,
            data,
            random_range: p.get_u64("commands.random_range", 0)?,
            expiry: range_of(p, "commands.expiry_range", "seconds")?.unwrap_or((0, 0)),
            client_offset: p.get_u64("commands.client_offset", 0)?,
            clients: if p.contains("commands.clients") {
                Some(p.get_u64_in("commands.clients", 1, 1..)?)
            } else {
                None
            },
            per_connection: p.get_bool("commands.per_connection", false)?,
            distinct_seeds: p.get_bool("commands.distinct_seeds", true)?,
        })
    }

    fn setup(&self) -> CommandsSetup {
        CommandsSetup {
            commands: self
                .entries
                .iter()
                .map(|e| e.template.command().to_string())
                .collect(),
        }
    }
}

fn pattern_of(p: &Properties, key: &str, default: Pattern) -> Result<Pattern, PropertyError> {
    match p.get(key) {
        None => Ok(default),
        Some(v) => Pattern::parse(v).ok_or_else(|| {
            p.invalid(
                key,
                format!(
                    "is not a key pattern: the patterns are {}",
                    Pattern::ACCEPTED
                ),
            )
        }),
    }
}

/// What every connection shares.
#[derive(Debug)]
struct Shared {
    cfg: CommandsConfig,
    kinds: Vec<OpKind>,
    /// `data.max()` bytes of `x`, as memtier and redis-benchmark fill a
    /// value; a `__data__` is a prefix of it.
    data: Vec<u8>,
    /// Zipfian generators are built once (their constants cost a pass
    /// over the range) and cloned per connection.
    keys: Vec<Option<KeyGen>>,
    seed: u64,
    clients: u64,
}

/// One connection's steps.
pub struct CommandsWorker {
    shared: Arc<Shared>,
    rng: Rng,
    keys: Vec<KeyGen>,
    /// The template now, and how many of its operations are done in this
    /// round of the cycle.
    at: usize,
    done: u32,
    args: Args,
}

impl Shared {
    fn worker(self: &Arc<Self>, index: usize) -> CommandsWorker {
        let client = self.cfg.client_offset + index as u64;
        let keys = self
            .cfg
            .entries
            .iter()
            .zip(&self.keys)
            .map(|(e, built)| match built {
                Some(g) => g.clone(),
                None => KeyGen::new(e.pattern, &self.cfg.space, client, self.clients),
            })
            .collect();
        CommandsWorker {
            shared: self.clone(),
            rng: rng_for(self.seed, if self.cfg.distinct_seeds { client } else { 0 }),
            keys,
            at: 0,
            done: 0,
            args: Args::default(),
        }
    }
}

impl CommandsWorker {
    /// The next template in the cycle.
    fn next_entry(&mut self) -> usize {
        let entries = &self.shared.cfg.entries;
        if self.done >= entries[self.at].ratio {
            self.done = 0;
            self.at = (self.at + 1) % entries.len();
        }
        self.done += 1;
        self.at
    }

    /// The words of template `i`, placeholders drawn, into `self.args`.
    fn render(&mut self, i: usize) {
        let shared = &*self.shared;
        let cfg = &shared.cfg;
        self.args.clear();
        let mut key = cfg.space.min;
        for word in &cfg.entries[i].template.words {
            for piece in word {
                let buf = self.args.buf();
                match piece {
                    Piece::Lit(b) => buf.extend_from_slice(b),
                    Piece::Key => {
                        key = self.keys[i].next(&mut self.rng);
                        buf.extend_from_slice(cfg.prefix.as_bytes());
                        buf.extend_from_slice(itoa::Buffer::new().format(key).as_bytes());
                    }
                    Piece::Data => {
                        let n = match cfg.data {
                            DataSize::Fixed(n) => n,
                            DataSize::Range {
                                min,
                                max,
                                by_key: false,
                            } => min + below(&mut self.rng, (max - min + 1) as u64) as usize,
                            DataSize::Range {
                                min,
                                max,
                                by_key: true,
                            } => {
                                let span = (cfg.space.max - cfg.space.min).max(1) as f64;
                                let a = (key - cfg.space.min) as f64 / span;
                                min + ((max - min) as f64 * a) as usize
                            }
                        };
                        buf.extend_from_slice(&shared.data[..n]);
                    }
                    Piece::RandInt if cfg.random_range == 0 => {
                        buf.extend_from_slice(b"__rand_int__")
                    }
                    Piece::RandInt => {
                        let r = below(&mut self.rng, cfg.random_range);
                        let mut digits = itoa::Buffer::new();
                        let digits = digits.format(r).as_bytes();
                        buf.extend(std::iter::repeat_n(
                            b'0',
                            12usize.saturating_sub(digits.len()),
                        ));
                        buf.extend_from_slice(digits);
                    }
                    Piece::Expiry => {
                        let (lo, hi) = cfg.expiry;
                        let e = lo + below(&mut self.rng, hi - lo + 1);
                        buf.extend_from_slice(itoa::Buffer::new().format(e).as_bytes());
                    }
                }
            }
            self.args.end_word();
        }
    }

    /// The words the next operation sends.
    #[cfg(test)]
    fn next_args(&mut self) -> (&str, &Args) {
        let i = self.next_entry();
        self.render(i);
        (&self.shared.cfg.entries[i].name, &self.args)
    }
}

impl<C: CommandConnection> Step<C> for CommandsWorker {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let i = self.next_entry();
        self.render(i);
        let kind = self.shared.kinds[i];
        let t = m.start();
        let status = conn.command(&self.args).await;
        m.record_on(conn, kind, status, t);
    }
}

impl Kind for CommandsConfig {
    const NAME: &'static str = "commands";
    const TITLE: &'static str = "command templates";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = COMMANDS_PROPERTIES;
    const PREFIXES: &'static [&'static str] = &[PREFIX];

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        CommandsConfig::from_properties(p)
    }

    /// The keys of the key range.
    fn records(&self) -> Option<u64> {
        Some((self.space.max - self.space.min).saturating_add(1))
    }

    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        if s.phase == Phase::Load {
            return Err(s.props.invalid(
                "workload",
                "selects workload=commands, which has no load phase: its templates are the \
                 data's writers too. Fill the key range with a run of a SET template over \
                 pattern P (memtier: --ratio 1:0 --key-pattern P:P), then run",
            ));
        }
        Ok(())
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        Schema {
            table: "commands".into(),
            field_names: Vec::new(),
            more_tables: Vec::new(),
        }
    }

    fn what(&self, _schema: &Schema) -> String {
        format!(
            "keys {}{}..{}{}",
            self.prefix, self.space.min, self.prefix, self.space.max
        )
    }

    fn data_shape(&self) -> &'static str {
        "the key range and prefix (commands.key_minimum, commands.key_maximum, \
         commands.key_prefix)"
    }

    async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        // A miss is a figure of the run (memtier's Misses/sec), not a
        // sign that a load is missing.
        CommandsSupport::of(backend)?;
        Ok(None)
    }

    async fn prepare<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        CommandsSupport::of(backend)?
            .prepare(backend, &self.setup(), drop)
            .await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        None
    }

    /// A `GET` of a key not set is memtier's miss, not a failure.
    fn misses_are_answers(&self) -> bool {
        true
    }

    /// With `per_connection`, a closed loop's count shared equally: a
    /// group of one connection each.
    fn groups(&self, _phase: Phase, one: Group) -> Vec<Group> {
        match one.operation_count {
            Some(n)
                if self.per_connection
                    && one.target.is_none()
                    && one.workers > 1
                    && n % one.workers as u64 == 0 =>
            {
                let each = n / one.workers as u64;
                (0..one.workers)
                    .map(|_| Group::all(1, None, Some(each)))
                    .collect()
            }
            _ => vec![one],
        }
    }

    fn share_properties(&self, index: u32, n: u32, connections: u64) -> Vec<(String, String)> {
        vec![
            (
                "commands.client_offset".into(),
                (self.client_offset + u64::from(index) * connections).to_string(),
            ),
            (
                "commands.clients".into(),
                self.clients
                    .unwrap_or(u64::from(n) * connections)
                    .to_string(),
            ),
        ]
    }

    async fn ready<B, K>(
        &self,
        _phase: Phase,
        cfg: &RunConfig,
        backend: &B,
        _connector: &K,
    ) -> Result<Box<dyn ReadyPhase<B::Conn>>, StepsError>
    where
        B: Backend,
        K: Connector<Conn = B::Conn>,
    {
        let support = CommandsSupport::of(backend)?;
        let kinds = self
            .entries
            .iter()
            .map(|e| OpKind::named(&e.name))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BackendError::Config)?;
        let keys = self
            .entries
            .iter()
            .map(|e| {
                (e.pattern == Pattern::Zipfian).then(|| KeyGen::new(e.pattern, &self.space, 0, 1))
            })
            .collect();
        let shared = Arc::new(Shared {
            cfg: self.clone(),
            kinds,
            data: vec![b'x'; self.data.max()],
            keys,
            seed: cfg.seed,
            clients: self.clients.unwrap_or(cfg.workers() as u64),
        });
        let steps = (0..cfg.workers()).map(|i| shared.worker(i)).collect();
        Ok(support.phase(steps, cfg.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::Origin;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        let mut p = Properties::new();
        p.set("workload", "commands", Origin::CommandLine);
        for (k, v) in pairs {
            p.set(k, v, Origin::CommandLine);
        }
        p
    }

    fn worker(cfg: &CommandsConfig, index: usize, clients: u64) -> CommandsWorker {
        let shared = Arc::new(Shared {
            cfg: cfg.clone(),
            kinds: Vec::new(),
            data: vec![b'x'; cfg.data.max()],
            keys: vec![None; cfg.entries.len()],
            seed: 7,
            clients,
        });
        shared.worker(index)
    }

    #[test]
    fn templates_in_a_cycle_with_their_ratios() {
        let cfg = CommandsConfig::from_properties(&props(&[
            ("commands.1", "SET __key__ __data__"),
            ("commands.2", "GET __key__"),
            ("commands.2.ratio", "3"),
            ("commands.key_maximum", "99"),
            ("commands.data_size", "5"),
        ]))
        .unwrap();
        let mut w = worker(&cfg, 0, 1);
        let names: Vec<String> = (0..9).map(|_| w.next_args().0.to_string()).collect();
        assert_eq!(
            names,
            ["SET", "GET", "GET", "GET", "SET", "GET", "GET", "GET", "SET"]
        );
        let (_, args) = w.next_args();
        let words: Vec<&[u8]> = args.iter().collect();
        assert_eq!(words[0], b"GET");
        let key = std::str::from_utf8(words[1]).unwrap();
        let n: u64 = key.strip_prefix("memtier-").unwrap().parse().unwrap();
        assert!(n <= 99, "{key}");
        for _ in 0..2 {
            w.next_args();
        }
        let (name, args) = w.next_args();
        assert_eq!(name, "SET");
        assert_eq!(args.get(2), Some(&b"xxxxx"[..]));
    }

    #[test]
    fn rand_int_and_sizes_as_redis_benchmark_and_memtier_draw_them() {
        let cfg = CommandsConfig::from_properties(&props(&[
            ("commands.1", "SET key:__rand_int__ __data__ EX __expiry__"),
            ("commands.random_range", "1000"),
            ("commands.data_size_range", "10-20"),
            ("commands.expiry_range", "5-6"),
        ]))
        .unwrap();
        let mut w = worker(&cfg, 0, 1);
        for _ in 0..200 {
            let (_, a) = w.next_args();
            let key = std::str::from_utf8(a.get(1).unwrap()).unwrap();
            let digits = key.strip_prefix("key:").unwrap();
            assert_eq!(digits.len(), 12, "{key}");
            assert!(digits.parse::<u64>().unwrap() < 1000);
            assert!((10..=20).contains(&a.get(2).unwrap().len()));
            assert!(matches!(a.get(4), Some(b"5" | b"6")));
        }
        // Without -r, redis-benchmark leaves the placeholder as it is.
        let cfg = CommandsConfig::from_properties(&props(&[("commands.1", "INCR c:__rand_int__")]))
            .unwrap();
        assert_eq!(
            worker(&cfg, 0, 1).next_args().1.get(1),
            Some(&b"c:__rand_int__"[..])
        );
    }

    #[test]
    fn connections_draw_apart_unless_told_otherwise() {
        let keys = |distinct: &str| {
            let cfg = CommandsConfig::from_properties(&props(&[
                ("commands.1", "GET __key__"),
                ("commands.distinct_seeds", distinct),
            ]))
            .unwrap();
            let draw = |i| {
                let mut w = worker(&cfg, i, 2);
                (0..5)
                    .map(|_| w.next_args().1.get(1).unwrap().to_vec())
                    .collect::<Vec<_>>()
            };
            (draw(0), draw(1))
        };
        let (a, b) = keys("true");
        assert_ne!(a, b);
        let (a, b) = keys("false");
        assert_eq!(a, b);
    }

    #[test]
    fn sizes_by_key_and_parallel_slices() {
        let cfg = CommandsConfig::from_properties(&props(&[
            ("commands.1", "SET __key__ __data__"),
            ("commands.1.key_pattern", "P"),
            ("commands.key_maximum", "99"),
            ("commands.data_size_range", "1-100"),
            ("commands.data_size_pattern", "S"),
        ]))
        .unwrap();
        let mut second = worker(&cfg, 1, 2);
        let (_, a) = second.next_args();
        assert_eq!(a.get(1), Some(&b"memtier-50"[..]));
        // Key 50 of 0..=99: half way from 1 to 100 bytes.
        assert_eq!(a.get(2).unwrap().len(), 1 + (99.0 * 50.0 / 99.0) as usize);
    }

    #[test]
    fn names_and_refusals() {
        let cfg = CommandsConfig::from_properties(&props(&[
            ("commands.1", "set __key__ __data__"),
            ("commands.2", "SET __key__ x"),
            ("commands.10", "GET __key__"),
            ("commands.10.name", "READ_ONE"),
        ]))
        .unwrap();
        let names: Vec<&str> = cfg.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["SET", "SET-2", "READ_ONE"]);
        let err = |pairs: &[(&str, &str)]| {
            CommandsConfig::from_properties(&props(pairs))
                .unwrap_err()
                .to_string()
        };
        assert!(err(&[]).contains("at least one template"));
        assert!(
            err(&[("commands.1", "GET __key__"), ("commands.1.ratio", "0")])
                .contains("commands.1.ratio")
        );
        assert!(
            err(&[("commands.1", "GET __key__"), ("commands.2.ratio", "2")])
                .contains("commands.2, which is not given")
        );
        assert!(
            err(&[("commands.1", "GET __key__"), ("commands.keyprefix", "x")])
                .contains("commands.key_prefix")
        );
        assert!(
            err(&[("commands.1", "GET __key__"), ("commands.key_pattern", "Q")])
                .contains("R (uniform)")
        );
        assert!(err(&[
            ("commands.1", "GET __key__"),
            ("commands.key_minimum", "5"),
            ("commands.key_maximum", "4")
        ])
        .contains("below"));
        assert!(err(&[
            ("commands.1", "GET __key__"),
            ("commands.data_size_range", "9-3")
        ])
        .contains("MIN-MAX"));
    }
}
