//! The key-value workload's settings ([`KeyValueConfig`]) under
//! yb-sample-apps' property names, and the refusal of its flags sojourn does
//! not read.

use crate::backend::Schema;
use crate::executor::Group;
use crate::properties::{Origin, Properties, PropertyError};
use crate::workload::phase::Phase;

/// The property names this workload reads, for unknown-key checks.
pub const KEYVALUE_PROPERTIES: &[&str] = &[
    "num_unique_keys",
    "num_writes",
    "num_reads",
    "num_threads_write",
    "num_threads_read",
    "value_size",
    "read_distribution",
    "read_rate",
    "write_rate",
    "max_written_key",
    "read_only",
    "nouuid",
    "uuid",
];

/// YCSB's settings that have a counterpart here, or no meaning, each with
/// what does that job in this workload: given by the user (in a file, with
/// `-p` or a flag), they are refused rather than silently ignored, so a
/// YCSB command line never runs a different size or mix than it says.
pub const NOT_READ: &[(&str, &str)] = &[
    ("recordcount", "the number of keys is num_unique_keys"),
    (
        "operationcount",
        "each pool has its own count, num_writes and num_reads (-1: until maxexecutiontime)",
    ),
    (
        "threadcount",
        "the connections (YCSB's -threads) are the pools' own, num_threads_write and \
         num_threads_read",
    ),
    ("fieldcount", "a value is one field, v, of value_size bytes"),
    ("fieldlength", "a value's size is value_size"),
    ("minfieldlength", "a value's size is value_size"),
    ("fieldlengthdistribution", "a value's size is value_size"),
    ("fieldlengthhistogram", "a value's size is value_size"),
    ("fieldnameprefix", "a value is one field, v"),
    (
        "requestdistribution",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "hotspotdatafraction",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "hotspotopnfraction",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "exponential.percentile",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    (
        "exponential.frac",
        "which keys readers pick is read_distribution (uniform or latest)",
    ),
    ("readproportion", MIX),
    ("updateproportion", MIX),
    ("insertproportion", MIX),
    ("scanproportion", MIX),
    ("readmodifywriteproportion", MIX),
    (
        "insertstart",
        "writers continue from the keys already written (found, or max_written_key)",
    ),
    (
        "insertcount",
        "a load inserts num_unique_keys keys, at most num_writes of them",
    ),
    (
        "insertorder",
        "keys are key:<n>, inserted in order (nouuid/uuid)",
    ),
    (
        "zeropadding",
        "keys are key:<n>, inserted in order (nouuid/uuid)",
    ),
    ("readallfields", "a value is one field, v, read whole"),
    ("readallfieldsbyname", "a value is one field, v, read whole"),
    ("writeallfields", "a value is one field, v, written whole"),
    (
        "dataintegrity",
        "every read checks its value's checksum (a mismatch is UNEXPECTED_STATE)",
    ),
    ("minscanlength", "the workload does not scan"),
    ("maxscanlength", "the workload does not scan"),
    ("scanlengthdistribution", "the workload does not scan"),
];

/// What sets the mix of reads and writes here.
const MIX: &str = "the mix is the pools': num_threads_read and num_threads_write connections, \
     at read_rate and write_rate";

/// Refuses YCSB's settings this workload does not read ([`NOT_READ`]) that
/// the user gave; sojourn's own defaults (origin [`Origin::Default`]) pass.
/// The error names the first such key (in file order, then command line)
/// with where it was set and the property that does its job here, and
/// lists any others, each with its counterpart too.
pub fn refuse_unread(p: &Properties) -> Result<(), PropertyError> {
    let mut given: Vec<(&str, &Origin, &str)> = NOT_READ
        .iter()
        .filter_map(|(key, job)| {
            let e = p.entry(key)?;
            (e.origin != Origin::Default).then_some((*key, &e.origin, *job))
        })
        .collect();
    given.sort_by_key(|(key, origin, _)| {
        let place = match origin {
            Origin::File { line, .. } => (0, *line),
            Origin::CommandLine => (1, 0),
            _ => (2, 0),
        };
        (place, *key)
    });
    let Some(((key, _, job), rest)) = given.split_first() else {
        return Ok(());
    };
    let also = if rest.is_empty() {
        String::new()
    } else {
        let others: Vec<String> = rest
            .iter()
            .map(|(k, _, job)| format!("{}: {job}", p.describe(k)))
            .collect();
        format!("; also not read: {}", others.join("; "))
    };
    Err(p.invalid(
        key,
        format!(
            "is a YCSB setting that the key-value workload (workload=keyvalue) does not \
             read: {job} (docs/keyvalue.md){also}"
        ),
    ))
}

/// Whether the `workload` property selects this workload.
pub fn is_keyvalue(p: &Properties) -> bool {
    p.get_str("workload", "core")
        .eq_ignore_ascii_case("keyvalue")
}

/// Which written keys readers pick.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReadDistribution {
    Uniform,
    /// Skewed towards the most recently written keys (YCSB's `latest`).
    Latest,
}

/// The workload's settings, with yb-sample-apps' names.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyValueConfig {
    pub table: String,
    pub num_unique_keys: u64,
    /// Writes to perform; `None` until the deadline (yb's -1).
    pub num_writes: Option<u64>,
    pub num_reads: Option<u64>,
    pub num_threads_write: usize,
    pub num_threads_read: usize,
    pub value_size: usize,
    pub read_distribution: ReadDistribution,
    /// Operations per second of each pool in total; `None` is closed loop.
    pub read_rate: Option<f64>,
    pub write_rate: Option<f64>,
    /// Keys `0..n` are known to be written; `None`: find out.
    pub max_written_key: Option<u64>,
    /// Prepended to `key:<n>` (`<uuid>:key:<n>`); empty with `nouuid`.
    pub key_prefix: String,
}

/// The smallest value that still holds a checksum, its separator and a
/// byte of payload.
const MIN_VALUE_SIZE: u64 = 10;

impl KeyValueConfig {
    /// Read the workload's properties; `table` keeps YCSB's name for the
    /// table (default `keyvalue` here, so a YCSB table is not touched).
    pub fn from_properties(p: &Properties, phase: Phase) -> Result<Self, PropertyError> {
        refuse_unread(p)?;
        let count = |key: &str| -> Result<Option<u64>, PropertyError> {
            match p.get_i64(key, -1)? {
                -1 => Ok(None),
                n if n >= 0 => Ok(Some(n as u64)),
                _ => Err(p.invalid(key, "must be a count, or -1 for no limit")),
            }
        };
        let rate = |key: &str| -> Result<Option<f64>, PropertyError> {
            match p.entry(key) {
                None => Ok(None),
                Some(_) => {
                    let r = p.get_f64(key, 0.0)?;
                    if !(r > 0.0 && r.is_finite()) {
                        return Err(p.invalid(
                            key,
                            "must be operations per second above 0; leave it out for a closed loop",
                        ));
                    }
                    Ok(Some(r))
                }
            }
        };
        let threads = |key: &str, default: u64| -> Result<usize, PropertyError> {
            Ok(p.get_u64_in(key, default, 0..=10_000)? as usize)
        };
        let num_unique_keys = p.get_u64("num_unique_keys", 1_000_000)?;
        if num_unique_keys == 0 {
            return Err(p.invalid("num_unique_keys", "must be at least 1"));
        }
        let value_size = p.get_u64("value_size", 256)?;
        if !(MIN_VALUE_SIZE..=16 << 20).contains(&value_size) {
            return Err(p.invalid(
                "value_size",
                format!(
                    "must be between {MIN_VALUE_SIZE} bytes (a checksum and a byte) and 16 MiB"
                ),
            ));
        }
        let read_distribution =
            match p.get_choice("read_distribution", "uniform", &["uniform", "latest"])? {
                "latest" => ReadDistribution::Latest,
                _ => ReadDistribution::Uniform,
            };
        let read_only = p.get_bool("read_only", false)?;
        let mut num_threads_write = threads("num_threads_write", 2)?;
        let mut num_threads_read = threads("num_threads_read", 24)?;
        match phase {
            // Loading is writing: readers have nothing to read yet.
            Phase::Load => num_threads_read = 0,
            Phase::Run if read_only => num_threads_write = 0,
            Phase::Run => {}
        }
        if num_threads_write + num_threads_read == 0 {
            return Err(p.invalid(
                if phase == Phase::Load {
                    "num_threads_write"
                } else {
                    "num_threads_read"
                },
                "leaves no connection to run: give the writers or readers at least one",
            ));
        }
        let key_prefix = if p.get_bool("nouuid", true)? {
            String::new()
        } else {
            match p.get("uuid") {
                Some(u) if !u.trim().is_empty() => format!("{}:", u.trim()),
                _ => {
                    return Err(p.invalid(
                        "nouuid",
                        "is false, so keys need a prefix: set -p uuid=... (the same one for load and run)",
                    ))
                }
            }
        };
        Ok(KeyValueConfig {
            table: p.get_str("table", "keyvalue").to_string(),
            num_unique_keys,
            num_writes: count("num_writes")?,
            num_reads: count("num_reads")?,
            num_threads_write,
            num_threads_read,
            value_size: value_size as usize,
            read_distribution,
            read_rate: rate("read_rate")?,
            write_rate: rate("write_rate")?,
            max_written_key: count("max_written_key")?,
            key_prefix,
        })
    }

    /// Refuse a phase that would never end: a pool with no count of its own
    /// and no `maxexecutiontime`.
    pub fn check_ends(
        &self,
        phase: Phase,
        deadline: bool,
        p: &Properties,
    ) -> Result<(), PropertyError> {
        if deadline || phase == Phase::Load {
            return Ok(());
        }
        for (threads, count, key) in [
            (self.num_threads_write, self.num_writes, "num_writes"),
            (self.num_threads_read, self.num_reads, "num_reads"),
        ] {
            if threads > 0 && count.is_none() {
                return Err(p.invalid(
                    key,
                    "is -1 (no limit) and maxexecutiontime is not set, so the run would never end; set one of them",
                ));
            }
        }
        Ok(())
    }

    /// The layout: one record per key with one field, `v`.
    pub fn schema(&self) -> Schema {
        Schema {
            table: self.table.clone(),
            field_names: vec!["v".to_string()],
            more_tables: Vec::new(),
        }
    }

    pub fn key(&self, n: u64) -> String {
        let mut k = String::with_capacity(self.key_prefix.len() + 24);
        k.push_str(&self.key_prefix);
        k.push_str("key:");
        k.push_str(itoa::Buffer::new().format(n));
        k
    }

    /// Connections: writers first, then readers.
    pub fn workers(&self) -> usize {
        self.num_threads_write + self.num_threads_read
    }

    /// The executor's groups for a phase that starts with `written` keys
    /// present: writers, then readers, leaving out an empty pool.
    pub fn groups(&self, phase: Phase, written: u64) -> Vec<Group> {
        let writes = match phase {
            Phase::Load => {
                let left = self.num_unique_keys.saturating_sub(written);
                Some(self.num_writes.map_or(left, |n| n.min(left)))
            }
            Phase::Run => self.num_writes,
        };
        [
            (self.num_threads_write, self.write_rate, writes),
            (self.num_threads_read, self.read_rate, self.num_reads),
        ]
        .into_iter()
        .filter(|&(w, _, _)| w > 0)
        .map(|(workers, target, operation_count)| Group {
            workers,
            target: target.map(crate::rate::Target::constant),
            operation_count,
        })
        .collect()
    }
}
