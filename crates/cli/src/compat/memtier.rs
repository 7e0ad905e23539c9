//! `sojourn memtier [memtier_benchmark's options]`: memtier's own command
//! line, read as memtier reads it, translated into a run of the commands
//! workload and run by the load/run pipeline every command shares, then
//! printed as memtier prints (`--format memtier`): its run information and
//! "ALL STATS" table, then sojourn's own lines; `--json-out-file` in
//! memtier's JSON shape.
//!
//! The translation: connections are `-t` × `-c` (runtime threads `-t`);
//! `--pipeline P` is P requests in flight on each of them (sojourn's
//! `connections=` sharing: `-t` × `-c` × P connections over `-t` × `-c`
//! sockets); `-n` is requests per connection; `--ratio S:G` two templates,
//! `SET __key__ __data__` and `GET __key__`, cycled S then G per
//! connection as memtier does; `--command` a template each;
//! `--rate-limiting N` is N requests per second per connection, offered
//! in total as sojourn's open loop, so the latency shown is response time
//! from each request's intended start. An option sojourn does not read is
//! refused naming it.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde_json::json;
use sojourn_core::output::memtier;

use super::getopt::{self, flag, number, valued, Opt};
use crate::cli::{Format, MemtierArgs, PhaseArgs};
use crate::pipeline;

const TOOL: &str = "memtier_benchmark";

const OPTS: &[Opt] = &[
    valued(Some('s'), "server"),
    valued(Some('p'), "port"),
    valued(Some('P'), "protocol"),
    valued(Some('t'), "threads"),
    valued(Some('c'), "clients"),
    valued(Some('n'), "requests"),
    valued(None, "test-time"),
    valued(None, "ratio"),
    valued(None, "key-pattern"),
    valued(None, "key-prefix"),
    valued(None, "key-minimum"),
    valued(None, "key-maximum"),
    valued(None, "key-stddev"),
    valued(None, "key-median"),
    valued(Some('d'), "data-size"),
    valued(None, "data-size-range"),
    valued(None, "data-size-pattern"),
    valued(None, "expiry-range"),
    valued(None, "pipeline"),
    valued(None, "multiget-keys"),
    valued(None, "command"),
    valued(None, "command-ratio"),
    valued(None, "command-key-pattern"),
    valued(None, "rate-limiting"),
    flag(None, "distinct-client-seed"),
    flag(None, "randomize"),
    valued(Some('x'), "run-count"),
    flag(None, "hide-histogram"),
    valued(None, "print-percentiles"),
    valued(None, "json-out-file"),
    valued(Some('a'), "authenticate"),
    flag(None, "tls"),
    valued(None, "cert"),
    valued(None, "key"),
    valued(None, "cacert"),
    flag(None, "tls-skip-verify"),
];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Protocol {
    Redis,
    Memcache,
}

/// One `--command`, with its ratio and key pattern.
#[derive(Clone, Debug, PartialEq)]
struct Template {
    text: String,
    ratio: u32,
    pattern: char,
}

/// memtier's options, as read (its defaults where not given).
#[derive(Clone, Debug)]
struct Memtier {
    server: String,
    port: u16,
    protocol: Protocol,
    threads: u64,
    clients: u64,
    /// Requests per connection; `None` with `--test-time`.
    requests: Option<u64>,
    all_keys: bool,
    test_time: Option<u64>,
    ratio: (u32, u32),
    key_pattern: (char, char),
    key_prefix: String,
    key_min: u64,
    key_max: u64,
    key_stddev: Option<String>,
    key_median: Option<String>,
    data_size: Option<String>,
    data_size_range: Option<String>,
    data_size_pattern: Option<String>,
    expiry: Option<(u64, u64)>,
    pipeline: u64,
    multiget: u32,
    commands: Vec<Template>,
    rate: Option<u64>,
    randomize: bool,
    distinct_seeds: bool,
    run_count: u32,
    percentiles: String,
    json_out: Option<String>,
    authenticate: Option<String>,
    tls: bool,
    cert: Option<String>,
    key: Option<String>,
    cacert: Option<String>,
    tls_skip_verify: bool,
}

impl Default for Memtier {
    fn default() -> Memtier {
        Memtier {
            server: "localhost".into(),
            port: 6379,
            protocol: Protocol::Redis,
            threads: 4,
            clients: 50,
            requests: None,
            all_keys: false,
            test_time: None,
            ratio: (1, 10),
            key_pattern: ('R', 'R'),
            key_prefix: "memtier-".into(),
            key_min: 0,
            key_max: 10_000_000,
            key_stddev: None,
            key_median: None,
            data_size: None,
            data_size_range: None,
            data_size_pattern: None,
            expiry: None,
            pipeline: 1,
            multiget: 0,
            commands: Vec::new(),
            rate: None,
            randomize: false,
            distinct_seeds: false,
            run_count: 1,
            percentiles: "50,99,99.9".into(),
            json_out: None,
            authenticate: None,
            tls: false,
            cert: None,
            key: None,
            cacert: None,
            tls_skip_verify: false,
        }
    }
}

fn pair<T: std::str::FromStr>(option: &str, v: &str, sep: char) -> Result<(T, T)> {
    let bad = || anyhow::anyhow!("{TOOL} option --{option}: {v:?} is not of the form A{sep}B");
    let (a, b) = v.split_once(sep).ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

fn pattern_letter(option: &str, s: &str) -> Result<char> {
    match s.trim() {
        p @ ("R" | "G" | "S" | "P" | "Z") => Ok(p.chars().next().unwrap_or('R')),
        other => bail!(
            "{TOOL} option --{option}: {other:?} is not a key pattern (R, G, S, P, or Z for \
             sojourn's zipfian)"
        ),
    }
}

fn parse(args: &[String]) -> Result<Memtier> {
    let read = getopt::read(TOOL, args, OPTS, false)?;
    let mut m = Memtier::default();
    let mut port_given = false;
    for (name, value) in read.options {
        let v = value.unwrap_or_default();
        let n = |v: &str| number::<u64>(TOOL, name, v);
        let last = |m: &mut Memtier| -> Result<usize> {
            m.commands.len().checked_sub(1).with_context(|| {
                format!("{TOOL} option --{name} applies to the --command before it: give one")
            })
        };
        match name {
            "server" => m.server = v,
            "port" => {
                m.port = number(TOOL, name, &v)?;
                port_given = true;
            }
            "protocol" => {
                m.protocol = match v.as_str() {
                    "redis" | "resp2" => Protocol::Redis,
                    "memcache_text" => Protocol::Memcache,
                    other => bail!(
                        "{TOOL} option --protocol {other}: sojourn speaks redis (RESP2) and \
                         memcache_text"
                    ),
                }
            }
            "threads" => m.threads = n(&v)?.max(1),
            "clients" => m.clients = n(&v)?.max(1),
            "requests" if v == "allkeys" => m.all_keys = true,
            "requests" => m.requests = Some(n(&v)?),
            "test-time" => m.test_time = Some(n(&v)?),
            "ratio" => m.ratio = pair(name, &v, ':')?,
            "key-pattern" => {
                let (a, b) = v
                    .split_once(':')
                    .with_context(|| format!("{TOOL} option --key-pattern {v}: not S:G"))?;
                m.key_pattern = (pattern_letter(name, a)?, pattern_letter(name, b)?);
            }
            "key-prefix" => m.key_prefix = v,
            "key-minimum" => m.key_min = n(&v)?,
            "key-maximum" => m.key_max = n(&v)?,
            "key-stddev" => m.key_stddev = Some(v),
            "key-median" => m.key_median = Some(v),
            "data-size" => m.data_size = Some(v),
            "data-size-range" => m.data_size_range = Some(v),
            "data-size-pattern" => m.data_size_pattern = Some(v),
            "expiry-range" => m.expiry = Some(pair(name, &v, '-')?),
            "pipeline" => m.pipeline = n(&v)?.max(1),
            "multiget-keys" => m.multiget = number(TOOL, name, &v)?,
            "command" => m.commands.push(Template {
                text: v,
                ratio: 1,
                pattern: 'R',
            }),
            "command-ratio" => {
                let i = last(&mut m)?;
                m.commands[i].ratio = number(TOOL, name, &v)?;
            }
            "command-key-pattern" => {
                let i = last(&mut m)?;
                m.commands[i].pattern = pattern_letter(name, &v)?;
            }
            "rate-limiting" => m.rate = Some(n(&v)?),
            "distinct-client-seed" => m.distinct_seeds = true,
            "randomize" => m.randomize = true,
            "run-count" => m.run_count = number::<u32>(TOOL, name, &v)?.max(1),
            // sojourn prints no latency histogram after the table.
            "hide-histogram" => {}
            "print-percentiles" => m.percentiles = v,
            "json-out-file" => m.json_out = Some(v),
            "authenticate" => m.authenticate = Some(v),
            "tls" => m.tls = true,
            "cert" => m.cert = Some(v),
            "key" => m.key = Some(v),
            "cacert" => m.cacert = Some(v),
            "tls-skip-verify" => m.tls_skip_verify = true,
            _ => bail!("{TOOL} option --{name} is read but not translated"),
        }
    }
    if m.protocol == Protocol::Memcache && !port_given {
        m.port = 11211;
    }
    if m.requests.is_some() && m.test_time.is_some() {
        bail!("{TOOL}: give -n (requests) or --test-time, not both");
    }
    if m.all_keys {
        // memtier's `-n allkeys`: the whole key range, split over the
        // connections with P:P.
        let mut n = m.key_max - m.key_min;
        if m.key_pattern == ('P', 'P') {
            n = n / (m.clients * m.threads) + 1;
        }
        m.requests = Some(n);
    }
    if m.requests.is_none() && m.test_time.is_none() {
        m.requests = Some(10_000);
    }
    if m.protocol == Protocol::Memcache {
        if m.authenticate.is_some() {
            bail!("{TOOL} option --authenticate: memcached's text protocol has no authentication");
        }
        if m.tls {
            bail!("{TOOL} option --tls: sojourn speaks memcached without TLS");
        }
    }
    let tls_options = m.tls_skip_verify || m.cert.is_some() || m.key.is_some();
    if (tls_options || m.cacert.is_some()) && !m.tls {
        bail!("{TOOL}: --cert, --key, --cacert and --tls-skip-verify go with --tls");
    }
    Ok(m)
}

/// The run's templates, as `commands.N` properties.
fn templates(m: &Memtier) -> Vec<String> {
    let mut props = Vec::new();
    let mut add = |i: usize, text: &str, ratio: u32, pattern: char, name: Option<&str>| {
        props.push(format!("commands.{i}={text}"));
        props.push(format!("commands.{i}.ratio={ratio}"));
        props.push(format!("commands.{i}.key_pattern={pattern}"));
        if let Some(name) = name {
            props.push(format!("commands.{i}.name={name}"));
        }
    };
    if !m.commands.is_empty() {
        for (i, c) in m.commands.iter().enumerate() {
            add(i + 1, &c.text, c.ratio, c.pattern, None);
        }
        return props;
    }
    let expiring = m.expiry.is_some_and(|(_, hi)| hi > 0);
    let set = match (m.protocol, expiring) {
        (Protocol::Redis, false) => "SET __key__ __data__",
        // memtier's own SET with an expiry.
        (Protocol::Redis, true) => "SETEX __key__ __expiry__ __data__",
        (Protocol::Memcache, false) => "set __key__ __data__",
        (Protocol::Memcache, true) => "set __key__ __data__ __expiry__",
    };
    let keys = m.multiget.max(1) as usize;
    let get = match (m.protocol, keys) {
        (Protocol::Redis, 1) => "GET __key__".to_string(),
        (Protocol::Redis, k) => format!("MGET{}", " __key__".repeat(k)),
        (Protocol::Memcache, k) => format!("get{}", " __key__".repeat(k)),
    };
    let (sets, gets) = m.ratio;
    // A multi-get counts for as many gets as it has keys, as in memtier.
    let gets = gets.div_ceil(keys as u32);
    let mut i = 1;
    if sets > 0 {
        add(i, set, sets, m.key_pattern.0, Some("SET"));
        i += 1;
    }
    if gets > 0 {
        add(i, &get, gets, m.key_pattern.1, Some("GET"));
    }
    props
}

fn url(m: &Memtier) -> String {
    match m.protocol {
        Protocol::Memcache => format!("memcached://{}:{}", m.server, m.port),
        Protocol::Redis => {
            let scheme = if m.tls { "rediss" } else { "redis" };
            // memtier's USER:PASSWORD: the user in the URL, the password a
            // property (kept out of every output by its name).
            let user = m
                .authenticate
                .as_deref()
                .and_then(|a| a.split_once(':'))
                .map(|(u, _)| format!("{u}@"))
                .unwrap_or_default();
            format!("{scheme}://{user}{}:{}", m.server, m.port)
        }
    }
}

/// memtier's run as sojourn's `run` arguments.
fn translate(m: &Memtier) -> Result<PhaseArgs> {
    let mut a = PhaseArgs::defaults();
    if m.ratio == (0, 0) && m.commands.is_empty() {
        bail!("{TOOL} option --ratio 0:0 asks for no requests");
    }
    a.db = Some(url(m));
    a.format = Format::Memtier;
    let sockets = m.threads * m.clients;
    a.threads = Some((sockets * m.pipeline).to_string());
    let mut props = vec![
        "workload=commands".to_string(),
        format!("runtime.threads={}", m.threads),
        format!("commands.key_prefix={}", m.key_prefix),
        format!("commands.key_minimum={}", m.key_min),
        format!("commands.key_maximum={}", m.key_max),
        format!("hdrhistogram.percentiles={}", m.percentiles),
    ];
    if m.pipeline > 1 {
        props.push(format!("connections={sockets}"));
    }
    match (m.requests, m.test_time) {
        (Some(n), _) => {
            props.push(format!("operationcount={}", n * sockets));
            // memtier's -n is each connection's own count (shared
            // equally by its pipelined requests).
            props.push("commands.per_connection=true".into());
        }
        (None, Some(t)) => props.push(format!("maxexecutiontime={t}")),
        (None, None) => {}
    }
    if let Some(r) = m.rate {
        a.target = Some((r * sockets).to_string());
    }
    for (key, v) in [
        ("key_stddev", &m.key_stddev),
        ("key_median", &m.key_median),
        ("data_size", &m.data_size),
        ("data_size_range", &m.data_size_range),
        ("data_size_pattern", &m.data_size_pattern),
    ] {
        if let Some(v) = v {
            props.push(format!("commands.{key}={v}"));
        }
    }
    if let Some((lo, hi)) = m.expiry {
        props.push(format!("commands.expiry_range={lo}-{hi}"));
    }
    props.extend(templates(m));
    if let Some(auth) = &m.authenticate {
        let password = auth.split_once(':').map_or(auth.as_str(), |(_, p)| p);
        props.push(format!("redis.password={password}"));
    }
    for (key, v) in [
        ("redis.tls.cert", &m.cert),
        ("redis.tls.key", &m.key),
        ("redis.tls.ca", &m.cacert),
    ] {
        if let Some(v) = v {
            props.push(format!("{key}={v}"));
        }
    }
    if m.tls_skip_verify {
        props.push("redis.tls.insecure=true".into());
    }
    if !m.distinct_seeds {
        // memtier's clients draw the same keys unless told otherwise.
        props.push("commands.distinct_seeds=false".into());
    }
    if m.randomize {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        a.seed = Some((t.as_nanos() as u64).to_string());
    }
    if m.run_count > 1 {
        a.repeat = Some(m.run_count);
    }
    a.props.extend(props);
    Ok(a)
}

/// memtier's `configuration` member: its options as given, the password
/// never (`authenticate` is `****` when one was given).
fn configuration(m: &Memtier) -> serde_json::Value {
    json!({
        "server": m.server,
        "port": m.port,
        "protocol": match m.protocol {
            Protocol::Redis => "redis",
            Protocol::Memcache => "memcache_text",
        },
        "tls": if m.tls { "true" } else { "false" },
        "run_count": m.run_count,
        "requests": m.requests.unwrap_or(0),
        "rate_limit": m.rate.unwrap_or(0),
        "clients": m.clients,
        "threads": m.threads,
        "test_time": m.test_time.unwrap_or(0),
        "ratio": format!("{}:{}", m.ratio.0, m.ratio.1),
        "pipeline": m.pipeline,
        "data_size": m.data_size.as_deref().and_then(|d| d.parse::<u64>().ok()).unwrap_or(
            if m.data_size_range.is_some() { 0 } else { 32 }
        ),
        "data_size_range": m.data_size_range.clone().unwrap_or_else(|| "0:0".into()),
        "data_size_pattern": m.data_size_pattern.clone().unwrap_or_else(|| "R".into()),
        "expiry_range": m.expiry.map_or("0:0".into(), |(a, b)| format!("{a}:{b}")),
        "key_prefix": m.key_prefix,
        "key_minimum": m.key_min,
        "key_maximum": m.key_max,
        "key_pattern": format!("{}:{}", m.key_pattern.0, m.key_pattern.1),
        "multi_key_get": m.multiget,
        "authenticate": if m.authenticate.is_some() { "****" } else { "" },
        "print-percentiles": m.percentiles,
    })
}

pub fn main(a: MemtierArgs) -> Result<ExitCode> {
    if getopt::asks_help(&a.args) {
        let what = "memtier_benchmark's command line, run as sojourn's commands workload and \
             printed as memtier prints (its ALL STATS table, its --json-out-file).";
        getopt::print_help("memtier", what, OPTS);
        return Ok(ExitCode::SUCCESS);
    }
    let m = parse(&a.args)?;
    let args = translate(&m)?;
    let Some(path) = m.json_out.clone() else {
        return pipeline::main(args, pipeline::Mode::Run);
    };
    let mut runs = Vec::new();
    let mut write = |run: &sojourn_core::run_record::RunRecord| -> Result<()> {
        runs.push(memtier::json(run, configuration(&m)));
        let mut doc = runs[runs.len() - 1].clone();
        if let (true, Some(o)) = (runs.len() > 1, doc.as_object_mut()) {
            // Repeated runs (--run-count): each one's table, as memtier's
            // --print-all-runs names them.
            o.remove("ALL STATS");
            for (i, r) in runs.iter().enumerate() {
                o.insert(format!("RUN #{} RESULTS", i + 1), r["ALL STATS"].clone());
            }
        }
        let text = serde_json::to_string_pretty(&doc)?;
        std::fs::write(&path, text).with_context(|| format!("writing {TOOL}'s JSON to {path}"))
    };
    pipeline::main_then(args, pipeline::Mode::Run, Some(&mut write))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_ratio_run_as_memtier_makes_it() {
        let m = parse(&args(
            "-s 127.0.0.1 -p 6390 --ratio 1:10 --key-pattern R:G -n 2000 -c 4 -t 2 -d 64",
        ))
        .unwrap();
        let a = translate(&m).unwrap();
        assert_eq!(a.db.as_deref(), Some("redis://127.0.0.1:6390"));
        assert_eq!(a.threads.as_deref(), Some("8"));
        for p in [
            "workload=commands",
            "operationcount=16000",
            "runtime.threads=2",
            "commands.1=SET __key__ __data__",
            "commands.1.ratio=1",
            "commands.1.key_pattern=R",
            "commands.2=GET __key__",
            "commands.2.ratio=10",
            "commands.2.key_pattern=G",
            "commands.data_size=64",
            "commands.distinct_seeds=false",
        ] {
            assert!(a.props.contains(&p.to_string()), "{p}: {:?}", a.props);
        }
        assert!(!a.props.iter().any(|p| p.starts_with("connections=")));
    }

    #[test]
    fn commands_pipelines_rates_and_memcached() {
        let a = translate(&parse(&args("--pipeline 8 -c 16 -t 1 -n 100")).unwrap()).unwrap();
        assert_eq!(a.threads.as_deref(), Some("128"));
        assert!(
            a.props.contains(&"connections=16".to_string())
                && a.props.contains(&"operationcount=1600".to_string()),
            "{:?}",
            a.props
        );
        // Each --command is one argument, as a shell passes a quoted one.
        let m = parse(&[
            "--command".into(),
            "HSET __key__ f __data__".into(),
            "--command".into(),
            "HGET __key__ f".into(),
            "--command-ratio".into(),
            "3".into(),
            "--command-key-pattern".into(),
            "S".into(),
            "-c".into(),
            "2".into(),
            "-t".into(),
            "1".into(),
            "--rate-limiting".into(),
            "100".into(),
        ])
        .unwrap();
        let a = translate(&m).unwrap();
        assert_eq!(a.target.as_deref(), Some("200"));
        for p in [
            "commands.1=HSET __key__ f __data__",
            "commands.2=HGET __key__ f",
            "commands.2.ratio=3",
            "commands.2.key_pattern=S",
        ] {
            assert!(a.props.contains(&p.to_string()), "{p}: {:?}", a.props);
        }
        let mc = parse(&args("-P memcache_text --multiget-keys 4 --ratio 1:10")).unwrap();
        assert_eq!(url(&mc), "memcached://localhost:11211");
        let p = translate(&mc).unwrap().props;
        assert!(
            p.contains(&"commands.2=get __key__ __key__ __key__ __key__".to_string())
                && p.contains(&"commands.2.ratio=3".to_string()),
            "{p:?}"
        );
    }

    #[test]
    fn passwords_and_refusals() {
        let distinct = translate(&parse(&args("--distinct-client-seed")).unwrap()).unwrap();
        assert!(!distinct.props.iter().any(|p| p.contains("distinct_seeds")));
        let m = parse(&args("-a alice:s3cret --tls --tls-skip-verify")).unwrap();
        assert_eq!(url(&m), "rediss://alice@localhost:6379");
        let a = translate(&m).unwrap();
        assert!(a.props.contains(&"redis.password=s3cret".to_string()));
        assert_eq!(configuration(&m)["authenticate"], "****");
        let e = |s: &str| parse(&args(s)).unwrap_err().to_string();
        assert!(e("--cluster-mode").contains("--cluster-mode is not one sojourn reads"));
        assert!(e("--command-ratio 2").contains("--command before it"));
        assert!(e("-n 5 --test-time 5").contains("not both"));
        assert!(e("--key-pattern Q:R").contains("not a key pattern"));
        assert!(e("-P memcache_text -a x").contains("no authentication"));
        let all = parse(&args(
            "-n allkeys --key-maximum 1000 --key-pattern P:P -c 5 -t 2",
        ))
        .unwrap();
        assert_eq!(all.requests, Some(101));
    }
}
