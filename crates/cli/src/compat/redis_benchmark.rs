//! `sojourn redis-benchmark [options] [command args...]`: redis-benchmark's
//! own command line, read as redis-benchmark reads it, each test
//! translated into a run of the commands workload (one template, the
//! command redis-benchmark sends, over its key space: `key:__rand_int__`
//! with `-r`) and run by the load/run pipeline every command shares, then
//! printed as redis-benchmark prints the test (`--format
//! redis-benchmark`): `-q` one line, `--csv` a row, else its summary.
//!
//! The translation: connections are `-c`; `-P N` is N requests in flight
//! on each (sojourn's `connections=` sharing: `-c` × N connections over
//! `-c` sockets); `-n` requests per test in total; `--threads` runtime
//! threads. Tests run in redis-benchmark's order whatever the order of
//! `-t`, each a run of its own in the store. An option sojourn does not
//! read is refused naming it.

use std::process::ExitCode;

use anyhow::{bail, Result};
use sojourn_core::output::redis_benchmark::{CSV_HEADER, OUTPUT, PRECISION, TITLE};

use super::getopt::{self, flag, number, valued, Opt};
use crate::cli::{Format, PhaseArgs, RedisBenchmarkArgs};
use crate::pipeline;

const TOOL: &str = "redis-benchmark";

const OPTS: &[Opt] = &[
    valued(Some('h'), "host"),
    valued(Some('p'), "port"),
    valued(Some('a'), "password"),
    valued(Some('c'), "clients"),
    valued(Some('n'), "requests"),
    valued(Some('d'), "datasize"),
    valued(Some('r'), "keyspacelen"),
    valued(Some('P'), "pipeline"),
    valued(Some('t'), "tests"),
    flag(Some('q'), "quiet"),
    flag(None, "csv"),
    valued(None, "precision"),
    valued(None, "threads"),
];

/// redis-benchmark's tests, in the order it runs them: the name `-t`
/// selects by, the title it prints, the command it sends. `__data__` is
/// `-d` bytes of `x`; `__rand_int__` a key number below `-r`.
const TESTS: &[(&str, &str, &str)] = &[
    ("ping_inline", "PING_INLINE", "PING"),
    ("ping_mbulk", "PING_MBULK", "PING"),
    ("set", "SET", "SET key:__rand_int__ __data__"),
    ("get", "GET", "GET key:__rand_int__"),
    ("incr", "INCR", "INCR counter:__rand_int__"),
    ("lpush", "LPUSH", "LPUSH mylist __data__"),
    ("rpush", "RPUSH", "RPUSH mylist __data__"),
    ("lpop", "LPOP", "LPOP mylist"),
    ("rpop", "RPOP", "RPOP mylist"),
    ("sadd", "SADD", "SADD myset element:__rand_int__"),
    ("hset", "HSET", "HSET myhash element:__rand_int__ __data__"),
    ("spop", "SPOP", "SPOP myset"),
    ("zadd", "ZADD", "ZADD myzset 0 element:__rand_int__"),
    ("zpopmin", "ZPOPMIN", "ZPOPMIN myzset"),
    (
        "lrange",
        "LPUSH (needed to benchmark LRANGE)",
        "LPUSH mylist __data__",
    ),
    (
        "lrange_100",
        "LRANGE_100 (first 100 elements)",
        "LRANGE mylist 0 99",
    ),
    (
        "lrange_300",
        "LRANGE_300 (first 300 elements)",
        "LRANGE mylist 0 299",
    ),
    (
        "lrange_500",
        "LRANGE_500 (first 500 elements)",
        "LRANGE mylist 0 499",
    ),
    (
        "lrange_600",
        "LRANGE_600 (first 600 elements)",
        "LRANGE mylist 0 599",
    ),
    ("mset", "MSET (10 keys)", MSET),
];

const MSET: &str = "MSET key:__rand_int__ __data__ key:__rand_int__ __data__ \
     key:__rand_int__ __data__ key:__rand_int__ __data__ key:__rand_int__ __data__ \
     key:__rand_int__ __data__ key:__rand_int__ __data__ key:__rand_int__ __data__ \
     key:__rand_int__ __data__ key:__rand_int__ __data__";

#[derive(Clone, Debug, PartialEq, Eq)]
enum Output {
    Full,
    Quiet,
    Csv,
}

#[derive(Clone, Debug)]
struct RedisBenchmark {
    host: String,
    port: u16,
    password: Option<String>,
    clients: u64,
    requests: u64,
    data_size: u64,
    keyspace: u64,
    pipeline: u64,
    tests: Option<Vec<String>>,
    output: Output,
    precision: u32,
    threads: Option<u64>,
    command: Vec<String>,
}

fn parse(args: &[String]) -> Result<RedisBenchmark> {
    let read = getopt::read(TOOL, args, OPTS, true)?;
    let mut r = RedisBenchmark {
        host: "127.0.0.1".into(),
        port: 6379,
        password: None,
        clients: 50,
        requests: 100_000,
        data_size: 3,
        keyspace: 0,
        pipeline: 1,
        tests: None,
        output: Output::Full,
        precision: 3,
        threads: None,
        command: read.rest,
    };
    for (name, value) in read.options {
        let v = value.unwrap_or_default();
        let n = |v: &str| number::<u64>(TOOL, name, v);
        match name {
            "host" => r.host = v,
            "port" => r.port = number(TOOL, name, &v)?,
            "password" => r.password = Some(v),
            "clients" => r.clients = n(&v)?.max(1),
            "requests" => r.requests = n(&v)?,
            "datasize" => r.data_size = n(&v)?.max(1),
            "keyspacelen" => r.keyspace = n(&v)?,
            "pipeline" => r.pipeline = n(&v)?.max(1),
            "tests" => {
                r.tests = Some(
                    v.split(',')
                        .map(|t| t.trim().to_ascii_lowercase())
                        .filter(|t| !t.is_empty())
                        .collect(),
                )
            }
            "quiet" => r.output = Output::Quiet,
            "csv" => r.output = Output::Csv,
            "precision" => r.precision = number(TOOL, name, &v)?,
            "threads" => r.threads = Some(n(&v)?.max(1)),
            _ => bail!("{TOOL} option --{name} is read but not translated"),
        }
    }
    if r.requests == 0 {
        bail!("{TOOL} option -n 0 asks for no requests");
    }
    Ok(r)
}

/// The tests to run: (title, command), in redis-benchmark's order.
fn tests(r: &RedisBenchmark) -> Result<Vec<(String, String)>> {
    if !r.command.is_empty() {
        // A command of the user's own, its words as given.
        let words: Vec<String> = r
            .command
            .iter()
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) || w.contains('"') {
                    format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""))
                } else {
                    w.clone()
                }
            })
            .collect();
        return Ok(vec![(r.command.join(" "), words.join(" "))]);
    }
    let Some(asked) = &r.tests else {
        return Ok(TESTS
            .iter()
            .map(|(_, t, c)| (t.to_string(), c.to_string()))
            .collect());
    };
    for t in asked {
        let known = TESTS
            .iter()
            .any(|(n, ..)| n == t || n.starts_with(&format!("{t}_")))
            || t == "ping";
        if !known {
            let names: Vec<&str> = TESTS.iter().map(|(n, ..)| *n).collect();
            bail!(
                "{TOOL} option -t: {t:?} is not a test; the tests are ping, {}",
                names.join(", ")
            );
        }
    }
    let selected = |name: &str| {
        asked.iter().any(|t| {
            t == name
                || name.starts_with(&format!("{t}_"))
                // Any LRANGE test fills the list first, as redis-benchmark.
                || (name == "lrange" && t.starts_with("lrange"))
        })
    };
    Ok(TESTS
        .iter()
        .filter(|(n, ..)| selected(n))
        .map(|(_, t, c)| (t.to_string(), c.to_string()))
        .collect())
}

/// One test as sojourn's `run` arguments.
fn translate(r: &RedisBenchmark, title: &str, command: &str) -> Result<PhaseArgs> {
    let mut a = PhaseArgs::defaults();
    a.db = Some(format!("redis://{}:{}", r.host, r.port));
    a.format = Format::RedisBenchmark;
    a.threads = Some((r.clients * r.pipeline).to_string());
    // The op's name: the test's name (`LRANGE_100`), or the command's.
    let name = title
        .split([' ', '('])
        .next()
        .unwrap_or(title)
        .to_ascii_uppercase();
    let mut props = vec![
        "workload=commands".to_string(),
        format!("commands.1={command}"),
        format!("commands.1.name={name}"),
        format!("commands.data_size={}", r.data_size),
        format!("commands.random_range={}", r.keyspace),
        format!("operationcount={}", r.requests),
    ];
    if r.pipeline > 1 {
        props.push(format!("connections={}", r.clients));
    }
    if let Some(t) = r.threads {
        props.push(format!("runtime.threads={t}"));
    }
    if let Some(p) = &r.password {
        props.push(format!("redis.password={p}"));
    }
    a.props.extend(props);
    let output = match r.output {
        Output::Full => "full",
        Output::Quiet => "quiet",
        Output::Csv => "csv",
    };
    a.labels.extend([
        format!("{TITLE}={title}"),
        format!("{OUTPUT}={output}"),
        format!("{PRECISION}={}", r.precision),
    ]);
    Ok(a)
}

pub fn main(a: RedisBenchmarkArgs) -> Result<ExitCode> {
    if getopt::asks_help(&a.args) {
        let what = "redis-benchmark's command line ([OPTIONS] [COMMAND ARGS...]), each test a \
             run of sojourn's commands workload, printed as redis-benchmark prints it.";
        getopt::print_help("redis-benchmark", what, OPTS);
        return Ok(ExitCode::SUCCESS);
    }
    let r = parse(&a.args)?;
    let tests = tests(&r)?;
    // Every test is checked before the first runs.
    let runs = tests
        .iter()
        .map(|(title, command)| translate(&r, title, command))
        .collect::<Result<Vec<_>>>()?;
    if r.output == Output::Csv {
        println!("{CSV_HEADER}");
    }
    for args in runs {
        let code = pipeline::main(args, pipeline::Mode::Run)?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn tests_in_redis_benchmark_s_order_and_key_space() {
        let r = parse(&args("-t get,SET,lrange_300 -n 10000 -r 1000 -q -c 8 -P 4")).unwrap();
        let t = tests(&r).unwrap();
        let titles: Vec<&str> = t.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            titles,
            [
                "SET",
                "GET",
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_300 (first 300 elements)"
            ]
        );
        let a = translate(&r, &t[0].0, &t[0].1).unwrap();
        assert_eq!(a.threads.as_deref(), Some("32"));
        for p in [
            "commands.1=SET key:__rand_int__ __data__",
            "commands.1.name=SET",
            "commands.random_range=1000",
            "commands.data_size=3",
            "operationcount=10000",
            "connections=8",
        ] {
            assert!(a.props.contains(&p.to_string()), "{p}: {:?}", a.props);
        }
        assert!(a.labels.contains(&format!("{OUTPUT}=quiet")));
        let lr = translate(&r, &t[3].0, &t[3].1).unwrap();
        assert!(lr.props.contains(&"commands.1.name=LRANGE_300".to_string()));
        let all = tests(&parse(&args("-t ping")).unwrap()).unwrap();
        assert_eq!(all.len(), 2);
    }

    #[test]
    fn a_command_of_one_s_own_and_refusals() {
        let r = parse(&args("-n 100 -q lpush mylist __rand_int__")).unwrap();
        let t = tests(&r).unwrap();
        assert_eq!(
            t,
            [(
                "lpush mylist __rand_int__".into(),
                "lpush mylist __rand_int__".into()
            )]
        );
        let a = translate(&r, &t[0].0, &t[0].1).unwrap();
        assert!(a.props.contains(&"commands.1.name=LPUSH".to_string()));
        let spaced = parse(&["SET".into(), "a b".into(), "v".into()]).unwrap();
        assert_eq!(tests(&spaced).unwrap()[0].1, "SET \"a b\" v");
        let e = |s: &str| {
            parse(&args(s))
                .and_then(|r| tests(&r).map(|_| ()))
                .unwrap_err()
                .to_string()
        };
        assert!(e("-t nosuch").contains("not a test"));
        assert!(e("-l").contains("-l is not one sojourn reads"));
        assert!(e("-n 0").contains("no requests"));
    }
}
