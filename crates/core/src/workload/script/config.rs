//! The workload's settings ([`ScriptConfig`]): the scripts a run draws
//! from, read from files or built in, with their weights and `-D`
//! definitions, compiled once when the plan is made.

use super::compile::{Command, Protocol};
use super::tables::PgbenchTables;
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};
use std::sync::Arc;
use std::time::Duration;

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
    pub(super) scale: usize,
    pub(super) client_id: usize,
    pub(super) default_seed: usize,
    pub(super) random_seed: usize,
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
            if !super::compile::valid_name(name) || value.is_empty() {
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
            Some(name) => match super::builtin::find(name) {
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
        let b = super::builtin::find(name).map_err(|e| p.invalid("script", e))?;
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
    pub fn new(sources: Vec<Source>) -> Result<Compiled, super::compile::ScriptError> {
        let mut names = super::compile::Names::default();
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
            let commands = super::compile::compile(&s.title, &s.text, &mut slot)?;
            let name = op_name(&s.origin, &scripts);
            let err = |m: String| super::compile::ScriptError {
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
