//! yb-sample-apps' command line on `sojourn load`, `run` and `bench`:
//! `--workload CassandraKeyValue|RedisKeyValue|SqlInserts --nodes
//! HOST:PORT[,HOST:PORT...]` and its flags as its users write them
//! (`--num_reads 100000 --num_threads_write 2 --nouuid ...`).
//!
//! This module owns the translation, and only that: the flags become the
//! key-value workload's properties (`workload=keyvalue`, `num_reads`, ...)
//! and `--nodes` a database URL, exactly what `-P workloads/keyvalue --db
//! URL -p ...` gives, so the plan, the run and what is stored are those
//! of sojourn's own spelling. yb-sample-apps' defaults stand in for the
//! flags left out, and one note says where they differ from
//! `workloads/keyvalue`. A flag of yb-sample-apps' that this does not read
//! is refused, named, with the ones it reads; so is a yb-sample-apps
//! workload other than the three key-value ones, and a mix with sojourn's
//! own spelling of the same things (`-P`, `--db`, `-p num_reads=...`).

use std::ffi::OsString;

use anyhow::{bail, Result};
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::Phase;

use crate::cli::PhaseArgs;
pub use crate::cli::YbArgs;

/// The flags [`YbArgs`] reads, as yb-sample-apps names them, for messages.
const READ: &[&str] = &[
    "workload",
    "nodes",
    "num_unique_keys",
    "num_writes",
    "num_reads",
    "num_threads_read",
    "num_threads_write",
    "num_threads",
    "value_size",
    "nouuid",
    "uuid",
    "read_only",
    "max_written_key",
    "run_time",
    "username",
    "password",
    "use_ascii_values",
    "read_rate",
    "write_rate",
    "default_postgres_database",
];

/// yb-sample-apps' other options (its `CmdLineOpts`), and whether each
/// takes a value: refused by name rather than left to clap's "unexpected
/// argument". `help` stays clap's.
const UNREAD: &[(&str, bool)] = &[
    ("batch_size", true),
    ("batch_write", false),
    ("concurrent_clients", true),
    ("cql_connect_timeout_ms", true),
    ("cql_read_timeout_ms", true),
    ("create_table_name", true),
    ("data_emit_rate_millis", true),
    ("debug_driver", true),
    ("disable_yb_load_balancing_policy", false),
    ("drop_table_name", true),
    ("keep_table", false),
    ("key_freq_zipf_exponent", true),
    ("load_balance", true),
    ("local_reads", false),
    ("lock_step", false),
    ("max_coupons_per_customer", true),
    ("max_metrics_count", true),
    ("max_nodes_per_user", true),
    ("min_metrics_count", true),
    ("min_nodes_per_user", true),
    ("non_transactional_index", false),
    ("num_consecutive_rows_with_same_fk", true),
    ("num_devices", true),
    ("num_event_types", true),
    ("num_foreign_key_table_rows", true),
    ("num_foreign_keys", true),
    ("num_indexes", true),
    ("num_new_coupons_per_customer", true),
    ("num_partitions", true),
    ("num_stores", true),
    ("num_subkeys_per_key", true),
    ("num_subkeys_per_read", true),
    ("num_subkeys_per_write", true),
    ("num_ticker_symbols", true),
    ("num_users", true),
    ("num_value_columns", true),
    ("output_json_metrics", false),
    ("pipeline_length", true),
    ("placement_policies", true),
    ("print_all_exceptions", false),
    ("read_back_delta_from_now", true),
    ("read_batch_size", true),
    ("replication_factor", true),
    ("report_read_restarts", false),
    ("sanity_check_at_end", false),
    ("skip_ddl", false),
    ("skip_workload", false),
    ("sleep_time", true),
    ("socket_timeout", true),
    ("ssl_cert", true),
    ("ssl_key", true),
    ("subkey_freq_zipf_exponent", true),
    ("subkey_value_max_size", true),
    ("subkey_value_size_zipf_exponent", true),
    ("sum_in_app", false),
    ("table_ttl_seconds", true),
    ("tablespaces", true),
    ("topology_keys", true),
    ("truncate", false),
    ("use_redis_cluster", false),
    ("verbose", false),
    ("with_local_dc", true),
    ("yugabyte_password", true),
];

/// yb-sample-apps' other workloads, refused by name.
const OTHER_APPS: &[&str] = &[
    "CassandraInserts",
    "CassandraHelloWorld",
    "CassandraRangeKeyValue",
    "CassandraBatchKeyValue",
    "CassandraBatchTimeseries",
    "CassandraEventData",
    "CassandraTransactionalKeyValue",
    "CassandraTransactionalRestartRead",
    "CassandraStockTicker",
    "CassandraTimeseries",
    "CassandraUserId",
    "CassandraPersonalization",
    "CassandraSecondaryIndex",
    "CassandraUniqueSecondaryIndex",
    "RedisPipelinedKeyValue",
    "RedisHashPipelined",
    "RedisYBClientKeyValue",
    "SqlDataLoad",
    "SqlForeignKeysAndJoins",
    "SqlGeoPartitionedTable",
    "SqlSecondaryIndex",
    "SqlSnapshotTxns",
    "SqlUpdates",
    "SqlStaleReadDetector",
    "SqlQueryLatencyIncrease",
];

/// The three key-value workloads, with yb-sample-apps' defaults for each
/// (its `static` blocks: `CassandraKeyValue` over `CassandraKeyValueBase`,
/// `RedisKeyValue`, `SqlInserts`; `AppBase`'s key counts).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct App {
    pub name: &'static str,
    scheme: &'static str,
    port: u16,
    readers: u32,
    writers: u32,
    reads: i64,
    writes: i64,
    unique_keys: u64,
    /// The table yb-sample-apps makes (none for Redis, whose keys are
    /// top-level strings).
    table: Option<&'static str>,
    /// Where a yb-sample-apps default comes from, as messages say it.
    origin: &'static str,
}

pub const APPS: [App; 3] = [
    App {
        name: "CassandraKeyValue",
        scheme: "cassandra",
        port: 9042,
        readers: 24,
        writers: 2,
        reads: 1_500_000,
        writes: 2_000_000,
        unique_keys: 2_000_000,
        table: Some("CassandraKeyValue"),
        origin: "yb-sample-apps' CassandraKeyValue default",
    },
    App {
        name: "RedisKeyValue",
        scheme: "redis",
        port: 6379,
        readers: 32,
        writers: 2,
        reads: -1,
        writes: -1,
        unique_keys: 1_000_000,
        table: None,
        origin: "yb-sample-apps' RedisKeyValue default",
    },
    App {
        name: "SqlInserts",
        scheme: "postgres",
        port: 5433,
        readers: 2,
        writers: 2,
        reads: 1_500_000,
        writes: 2_000_000,
        unique_keys: 2_000_000,
        table: Some("PostgresqlKeyValue"),
        origin: "yb-sample-apps' SqlInserts default",
    },
];

/// CassandraKeyValue's keyspace.
const KEYSPACE: &str = "ybdemo_keyspace";
/// SqlInserts' database without `--default_postgres_database`.
const POSTGRES_DATABASE: &str = "postgres";

/// Whether `name` is one of yb-sample-apps' workloads.
fn is_yb_app(name: &str) -> bool {
    APPS.iter()
        .map(|a| a.name)
        .any(|n| n.eq_ignore_ascii_case(name))
        || OTHER_APPS.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Marks yb-sample-apps' flags that [`YbArgs`] does not read as
/// `--yb-sample-apps-flag=NAME` (their values dropped), so that they are
/// refused by name once parsed. Only on a yb-sample-apps line (`--workload`
/// naming one of its workloads); there, any other `--snake_case` flag is
/// marked too, since sojourn's own flags have no underscores.
pub fn mark_unread_flags(args: Vec<OsString>) -> Vec<OsString> {
    let yb_line = args.iter().enumerate().any(|(i, a)| {
        let a = a.to_string_lossy();
        match a.strip_prefix("--workload") {
            Some(rest) => match rest.strip_prefix('=') {
                Some(name) => is_yb_app(name),
                None if rest.is_empty() => args
                    .get(i + 1)
                    .is_some_and(|n| is_yb_app(&n.to_string_lossy())),
                None => false,
            },
            None => false,
        }
    });
    if !yb_line {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        let Some(flag) = arg.to_str().and_then(|a| a.strip_prefix("--")) else {
            out.push(arg);
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, _)) => (name, true),
            None => (flag, false),
        };
        let known = UNREAD.iter().find(|(n, _)| *n == name);
        let unread = known.is_some() || (name.contains('_') && !READ.contains(&name));
        if !unread {
            out.push(arg);
            continue;
        }
        // A value of its own, if yb-sample-apps' option takes one (or, not
        // being one of its options, if the next word is not a flag).
        let takes_value = known.map_or_else(
            || {
                args.peek()
                    .is_some_and(|n| !n.to_string_lossy().starts_with('-'))
            },
            |(_, v)| *v,
        );
        if takes_value && !inline {
            args.next();
        }
        out.push(format!("--yb-sample-apps-flag={name}").into());
    }
    out
}

/// A yb-sample-apps command line as sojourn's own spelling: the key-value
/// workload's properties and the database URL.
pub struct Translation {
    pub app: App,
    pub props: Properties,
    /// Holds the password, if given: redact before showing.
    pub db_url: String,
    /// What differs from `workloads/keyvalue` and what is not read, for
    /// one line on stderr.
    pub notes: Vec<String>,
}

/// The translation of `a`'s yb-sample-apps command line; `None` when it
/// has none (no yb-sample-apps workload and none of its flags).
pub fn translate(a: &PhaseArgs) -> Result<Option<Translation>> {
    let y = &a.yb;
    let Some(app) = app_of(a)? else {
        return Ok(None);
    };
    let nodes = check_line(a, app)?;
    let mut t = Translation {
        app: *app,
        props: Properties::new(),
        db_url: db_url(app, &nodes, y),
        notes: Vec::new(),
    };
    t.set("workload", "keyvalue", "--workload");
    if let Some(table) = app.table {
        t.set("table", table, app.origin);
    }
    if app.scheme == "redis" {
        // RedisKeyValue's commands: one string per key, SET and GET.
        t.set("redis.mode", "string", app.origin);
    }
    let (readers, writers) = t.counts(app, y);
    t.identity(app, y)?;
    t.limits(app, y, readers, writers)?;
    t.defaults_note(y)?;
    Ok(Some(t))
}

/// The yb-sample-apps workload `--workload` names; `None` when there is
/// none and no flag of yb-sample-apps was given.
fn app_of(a: &PhaseArgs) -> Result<Option<&'static App>> {
    let workload = a.workload.as_deref().map(str::trim);
    let app = workload.and_then(|w| APPS.iter().find(|app| app.name.eq_ignore_ascii_case(w)));
    let Some(app) = app else {
        if let Some(w) = workload.filter(|w| is_yb_app(w)) {
            bail!(
                "--workload {w}: sojourn runs yb-sample-apps' key-value workloads, \
                 CassandraKeyValue, RedisKeyValue and SqlInserts (docs/keyvalue.md); \
                 not {w}"
            );
        }
        if let Some(flag) = given_flags(&a.yb).first() {
            bail!(
                "--{flag} is yb-sample-apps' flag: give it with --workload \
                 CassandraKeyValue, RedisKeyValue or SqlInserts, or write sojourn's own \
                 spelling (-P workloads/keyvalue --db URL -p num_reads=N ..., docs/keyvalue.md)"
            );
        }
        return Ok(None);
    };
    Ok(Some(app))
}

/// Refuse what yb-sample-apps' command line cannot be mixed with, or
/// lacks; the nodes it names.
fn check_line(a: &PhaseArgs, app: &App) -> Result<Vec<(String, u16)>> {
    let y = &a.yb;
    if let Some(flag) = y.unread.first() {
        let also = match &y.unread[1..] {
            [] => String::new(),
            more => format!(" (nor --{})", more.join(", --")),
        };
        bail!(
            "--{flag}: a flag of yb-sample-apps that sojourn does not read{also}; with \
             --workload {} it reads --{}",
            app.name,
            READ.join(", --")
        );
    }
    // One spelling at a time: these are what the translation sets itself.
    if !a.files.is_empty() {
        bail!(
            "--workload {} is yb-sample-apps' command line, whose flags and defaults set \
             every key-value property: leave out -P (or write sojourn's own spelling, \
             -P workloads/keyvalue --db URL, without --workload {})",
            app.name,
            app.name
        );
    }
    if let Some(db) = a.db.as_ref().or(a.db_name.as_ref()) {
        let which = if a.db.is_some() {
            "--db"
        } else {
            "the DB argument"
        };
        bail!(
            "{which} {}: with --workload {} the database is --nodes HOST:PORT[,HOST:PORT...]; \
             leave out {which}",
            sojourn_core::redact::redact_url(db),
            app.name
        );
    }
    let Some(nodes) = y.nodes.as_deref() else {
        bail!(
            "--workload {} needs --nodes HOST:PORT[,HOST:PORT...], the database's nodes \
             (yb-sample-apps' required flag)",
            app.name
        );
    };
    let nodes = parse_nodes(nodes, app.port)?;
    if y.password.is_some() && y.username.is_none() {
        bail!("--password requires --username to be set (as yb-sample-apps says)");
    }
    if y.read_only && y.uuid.is_none() && !y.nouuid {
        bail!(
            "--read_only reads keys written before: give --nouuid, or the --uuid they were \
             written under (yb-sample-apps asks the same)"
        );
    }
    Ok(nodes)
}

/// A count's property, its flag, the flag's value if given and
/// yb-sample-apps' default, in one integer type.
fn count<G: Into<i128>, D: Into<i128>>(
    key: &'static str,
    flag: &'static str,
    given: Option<G>,
    default: D,
) -> (&'static str, &'static str, Option<i128>, i128) {
    (key, flag, given.map(Into::into), default.into())
}

impl Translation {
    /// The key, operation and connection counts and the value size, as
    /// given or yb-sample-apps' defaults; the reader and writer pools.
    fn counts(&mut self, app: &App, y: &YbArgs) -> (u32, u32) {
        let t = self;
        let unique = y.num_unique_keys.unwrap_or(app.unique_keys);
        let readers = y.num_threads_read.unwrap_or(app.readers);
        let writers = if y.read_only {
            0
        } else {
            y.num_threads_write.unwrap_or(app.writers)
        };
        // yb-sample-apps writes `val:<n>` when no size is given: the same size
        // here, with a checksum in it (10 bytes at least).
        let yb_value = (4 + unique.saturating_sub(1).to_string().len()).max(10) as u64;
        let counts = [
            count(
                "num_unique_keys",
                "--num_unique_keys",
                y.num_unique_keys,
                app.unique_keys,
            ),
            count("num_writes", "--num_writes", y.num_writes, app.writes),
            count("num_reads", "--num_reads", y.num_reads, app.reads),
            count(
                "num_threads_read",
                "--num_threads_read",
                y.num_threads_read,
                app.readers,
            ),
            count(
                "num_threads_write",
                "--num_threads_write",
                y.num_threads_write,
                app.writers,
            ),
            count("value_size", "--value_size", y.value_size, yb_value),
        ];
        for (key, flag, given, default) in counts {
            match given {
                Some(v) => t.set(key, &v.to_string(), flag),
                None => t.set(key, &default.to_string(), app.origin),
            }
        }
        (readers, writers)
    }

    /// The key space's identity: `--uuid`, `--nouuid`, or a fresh one.
    fn identity(&mut self, app: &App, y: &YbArgs) -> Result<()> {
        let t = self;
        match (&y.uuid, y.nouuid) {
            (Some(u), _) => {
                check_uuid(u)?;
                t.set("nouuid", "false", "--uuid");
                t.set("uuid", u, "--uuid");
            }
            (None, true) => t.set("nouuid", "true", "--nouuid"),
            (None, false) => {
                t.set("nouuid", "false", app.origin);
                t.set("uuid", &random_uuid(), app.origin);
            }
        }
        Ok(())
    }

    /// Read-only, the key range written before, the time limit and the
    /// rates; the flags read only to say they are not.
    fn limits(&mut self, app: &App, y: &YbArgs, readers: u32, writers: u32) -> Result<()> {
        let t = self;
        if y.read_only {
            t.set("read_only", "true", "--read_only");
            if let Some(w) = y.num_threads_write {
                t.notes.push(format!(
                    "--num_threads_write {w} is not read with --read_only (yb-sample-apps ignores \
                     it too)"
                ));
            }
        }
        if let Some(k) = y.max_written_key {
            if k < -1 {
                bail!("--max_written_key {k}: expected the highest key written, or -1 for none");
            }
            // yb-sample-apps' is the highest key number; sojourn's the count.
            t.set("max_written_key", &(k + 1).to_string(), "--max_written_key");
        }
        match y.run_time {
            Some(s) if s > 0 => t.set("maxexecutiontime", &s.to_string(), "--run_time"),
            _ => {}
        }
        // yb-sample-apps throttles each connection; sojourn's rate is the pool's.
        for (flag, key, rate, threads) in [
            ("--read_rate", "read_rate", y.read_rate, readers),
            ("--write_rate", "write_rate", y.write_rate, writers),
        ] {
            match rate {
                Some(r) if !(r > 0.0 && r.is_finite()) => bail!(
                    "{flag} {r}: expected operations per second of each connection, above 0 \
                     (leave it out for no limit)"
                ),
                Some(r) if threads > 0 => t.set(key, &(r * f64::from(threads)).to_string(), flag),
                _ => {}
            }
        }
        if let Some(total) = y.num_threads {
            t.notes.push(format!(
                "--num_threads {total} is not read: yb-sample-apps' {} ignores it too, its pools \
                 being --num_threads_read {readers} and --num_threads_write {writers}",
                app.name
            ));
        }
        if y.default_postgres_database.is_some() && app.scheme != "postgres" {
            bail!(
                "--default_postgres_database names SqlInserts' database; --workload {} has none",
                app.name
            );
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: &str, origin: &'static str) {
        self.props.set(key, value, Origin::Flag(origin));
    }

    /// One note naming each yb-sample-apps default that differs from
    /// `workloads/keyvalue` (which the key-value workload's users know).
    fn defaults_note(&mut self, y: &YbArgs) -> Result<()> {
        let text = crate::workloads::SHIPPED
            .iter()
            .find(|(n, _)| *n == "keyvalue")
            .map_or("", |(_, t)| t);
        let file = Properties::read_str(text, std::path::Path::new("workloads/keyvalue"))?;
        let mut differs = Vec::new();
        for key in [
            "num_unique_keys",
            "num_writes",
            "num_reads",
            "num_threads_read",
            "num_threads_write",
            "value_size",
        ] {
            let ours = self.props.entry(key).map(|e| (e.value.clone(), &e.origin));
            let Some((value, origin)) = ours else {
                continue;
            };
            if *origin != Origin::Flag(self.app.origin) {
                continue;
            }
            let theirs = file.get_str(key, "");
            if value != theirs {
                let why = if key == "value_size" {
                    "; yb-sample-apps' val:<n> is this size"
                } else {
                    ""
                };
                differs.push(format!("--{key} {value} ({theirs}{why})"));
            }
        }
        if y.uuid.is_none() && !y.nouuid {
            differs.push(format!(
                "keys under a new random --uuid {} (nouuid: give --nouuid, or this --uuid, \
                 to find these keys again)",
                self.props.get_str("uuid", "")
            ));
        }
        if !differs.is_empty() {
            self.notes.insert(
                0,
                format!(
                    "{}s used, where workloads/keyvalue has others (in brackets): {}",
                    self.app.origin,
                    differs.join(", ")
                ),
            );
        }
        Ok(())
    }

    /// A `-p KEY=VALUE` on the same line must not set what a flag or
    /// default of yb-sample-apps' sets: which one wins would be a guess.
    pub fn check_property(&self, arg: &str) -> Result<()> {
        let key = arg.split_once('=').map_or(arg, |(k, _)| k).trim();
        if let Some(e) = self.props.entry(key) {
            let flag = match &e.origin {
                Origin::Flag(f) if f.starts_with("--") => (*f).to_string(),
                _ => format!("yb-sample-apps' flags (its default: {})", e.value),
            };
            bail!(
                "-p {key}=...: with --workload {} {key} is set by {flag}; give that instead",
                self.app.name
            );
        }
        Ok(())
    }

    /// Refuses a run that would never end, in yb-sample-apps' words: its
    /// `-1` counts run until stopped, which sojourn does not do.
    pub fn check_ends(&self, phase: Phase) -> Result<()> {
        if phase != Phase::Run || self.props.get("maxexecutiontime").is_some() {
            return Ok(());
        }
        let read_only = self.props.get("read_only").is_some();
        for (count, threads, pool_runs) in [
            ("num_reads", "num_threads_read", true),
            ("num_writes", "num_threads_write", !read_only),
        ] {
            let active = pool_runs && self.props.get_str(threads, "0") != "0";
            if active && self.props.get_str(count, "0") == "-1" {
                bail!(
                    "--{count} -1 ({}) runs until stopped; sojourn's runs end: give --{count} \
                     N or --run_time SECONDS",
                    match self.props.entry(count).map(|e| &e.origin) {
                        Some(Origin::Flag(f)) if !f.starts_with("--") => f,
                        _ => "given",
                    }
                );
            }
        }
        Ok(())
    }
}

/// The yb-sample-apps flags given in `y` (those with a property of their
/// own), for the message that asks for `--workload`.
fn given_flags(y: &YbArgs) -> Vec<&'static str> {
    let given = [
        ("nodes", y.nodes.is_some()),
        ("num_unique_keys", y.num_unique_keys.is_some()),
        ("num_writes", y.num_writes.is_some()),
        ("num_reads", y.num_reads.is_some()),
        ("num_threads_read", y.num_threads_read.is_some()),
        ("num_threads_write", y.num_threads_write.is_some()),
        ("num_threads", y.num_threads.is_some()),
        ("value_size", y.value_size.is_some()),
        ("nouuid", y.nouuid),
        ("uuid", y.uuid.is_some()),
        ("read_only", y.read_only),
        ("max_written_key", y.max_written_key.is_some()),
        ("run_time", y.run_time.is_some()),
        ("username", y.username.is_some()),
        ("password", y.password.is_some()),
        ("use_ascii_values", y.use_ascii_values),
        ("read_rate", y.read_rate.is_some()),
        ("write_rate", y.write_rate.is_some()),
        (
            "default_postgres_database",
            y.default_postgres_database.is_some(),
        ),
        ("yb-sample-apps-flag", !y.unread.is_empty()),
    ];
    given.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect()
}

/// `HOST[:PORT]` entries, comma-separated; `[v6]` in brackets.
fn parse_nodes(nodes: &str, default_port: u16) -> Result<Vec<(String, u16)>> {
    let mut out = Vec::new();
    for node in nodes.split(',').map(str::trim) {
        let bad = |why: &str| {
            anyhow::anyhow!(
                "--nodes {nodes}: {why}; expected HOST:PORT[,HOST:PORT...] (the port \
                 defaults to {default_port})"
            )
        };
        let (host, port) = if let Some(rest) = node.strip_prefix('[') {
            let (host, after) = rest
                .split_once(']')
                .ok_or_else(|| bad(&format!("unclosed [ in `{node}`")))?;
            (format!("[{host}]"), after.strip_prefix(':'))
        } else {
            match node.split_once(':') {
                Some((h, p)) if !p.contains(':') => (h.to_string(), Some(p)),
                Some(_) => return Err(bad(&format!("write an IPv6 address as [{node}]"))),
                None => (node.to_string(), None),
            }
        };
        if host.is_empty() || host == "[]" {
            return Err(bad(if node.is_empty() {
                "an empty node"
            } else {
                "a node without a host"
            }));
        }
        let port = match port {
            None => default_port,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad(&format!("`{p}` is not a TCP port")))?,
        };
        out.push((host, port));
    }
    Ok(out)
}

/// The database URL of `app` on `nodes`: the same URL `--db` would take.
fn db_url(app: &App, nodes: &[(String, u16)], y: &YbArgs) -> String {
    let mut url = format!("{}://", app.scheme);
    if let Some(user) = &y.username {
        url.push_str(&percent_encode(user));
        if let Some(password) = &y.password {
            url.push(':');
            url.push_str(&percent_encode(password));
        }
        url.push('@');
    }
    let hosts: Vec<String> = nodes.iter().map(|(h, p)| format!("{h}:{p}")).collect();
    url.push_str(&hosts.join(","));
    match app.scheme {
        "cassandra" => {
            url.push('/');
            url.push_str(KEYSPACE);
        }
        "postgres" => {
            url.push('/');
            let db = y
                .default_postgres_database
                .as_deref()
                .unwrap_or(POSTGRES_DATABASE);
            url.push_str(&percent_encode(db));
            if nodes.len() > 1 {
                // Each connection a node of its own at random, as
                // yb-sample-apps picks one per connection.
                url.push_str("?load_balance_hosts=random");
            }
        }
        _ => {}
    }
    url
}

/// Every byte but RFC 3986's unreserved ones is `%XX`-encoded, so that a
/// user or password with `@`, `:` or `/` stays whole in the URL.
const USERINFO: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn percent_encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, USERINFO).to_string()
}

/// A UUID as yb-sample-apps' `UUID.fromString` takes it: five groups of
/// hex digits, 8-4-4-4-12.
fn check_uuid(u: &str) -> Result<()> {
    let groups: Vec<&str> = u.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    let ok = groups.len() == 5
        && groups
            .iter()
            .zip(lengths)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if !ok {
        bail!("--uuid {u}: expected a UUID, 8-4-4-4-12 hex digits (as yb-sample-apps takes)");
    }
    Ok(())
}

/// A random (version 4) UUID, as yb-sample-apps makes one per run when
/// given neither `--uuid` nor `--nouuid`.
fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests;
