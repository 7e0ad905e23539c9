//! The workload's settings ([`CommandsConfig`]): the templates with their
//! ratios and key patterns, the key range and the data size, read from the
//! `commands.` properties.

use super::connection::CommandsSetup;
use super::keys::{KeySpace, Pattern};
use super::template::Template;
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

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

pub(super) const PREFIX: &str = "commands.";

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
        let numbers = template_keys(p)?;
        let entries = entries(p, numbers, default_pattern)?;
        let space = key_space(p, &entries)?;
        let data = data_size(p)?;
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

    pub(super) fn setup(&self) -> CommandsSetup {
        CommandsSetup {
            commands: self
                .entries
                .iter()
                .map(|e| e.template.command().to_string())
                .collect(),
        }
    }
}

/// The templates' keys (`commands.N`) in the order of `N`, each
/// `commands.N.*` checked to belong to a template that is given.
fn template_keys(p: &Properties) -> Result<Vec<(u64, &str)>, PropertyError> {
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
    Ok(numbers)
}

/// Each template with its ratio, key pattern and operation name (its
/// command, made unique with `-2`, `-3`, ... unless `commands.N.name`
/// gives one).
fn entries(
    p: &Properties,
    numbers: Vec<(u64, &str)>,
    default_pattern: Pattern,
) -> Result<Vec<Entry>, PropertyError> {
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
    Ok(entries)
}

/// The keys the templates draw from.
fn key_space(p: &Properties, entries: &[Entry]) -> Result<KeySpace, PropertyError> {
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
    Ok(space)
}

/// How large a value `__data__` fills in.
fn data_size(p: &Properties) -> Result<DataSize, PropertyError> {
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
        None => DataSize::Fixed(p.get_u64_in("commands.data_size", 32, 1..=512 << 20)? as usize),
    };
    Ok(data)
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
