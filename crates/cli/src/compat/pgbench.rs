//! `sojourn pgbench [pgbench's options] [DBNAME]`: pgbench's own command
//! line, read as pgbench reads it (short options with or without a space,
//! `--long=value`, the connection from `-h -p -U` and `PGHOST`, `PGPORT`,
//! `PGUSER`, `PGPASSWORD`, `PGDATABASE`), translated into the script
//! workload's plan and run by the load/run pipeline every command shares:
//! `-i` is `sojourn load -b tpcb-like --scale N --drop`, the rest `sojourn
//! run` of the scripts, printed as pgbench prints (`--format pgbench`).
//! A pgbench option sojourn does not implement is refused, naming it and
//! the options it reads.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use crate::cli::{Format, PgbenchArgs, PhaseArgs};
use crate::pipeline;

/// The options read, for the refusal of the others.
const READ: &str = "-i -I -F -q -c -j -t -T -R -L -P -r -M -f -b -S -N -D -s -n --random-seed \
     --max-tries -h -p -U (and their long forms), and DBNAME";

/// pgbench's options, as read.
#[derive(Debug, Default, PartialEq)]
struct Pgbench {
    init: bool,
    clients: Option<String>,
    jobs: Option<String>,
    transactions: Option<u64>,
    time: Option<String>,
    rate: Option<String>,
    latency_limit: Option<String>,
    progress: Option<String>,
    per_statement: bool,
    protocol: Option<String>,
    files: Vec<String>,
    builtins: Vec<String>,
    defines: Vec<String>,
    scale: Option<String>,
    seed: Option<String>,
    max_tries: Option<String>,
    no_vacuum: bool,
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    dbname: Option<String>,
    notes: Vec<String>,
}

/// Options that take a value, short and long.
const VALUED: &[(char, &str)] = &[
    ('c', "client"),
    ('j', "jobs"),
    ('t', "transactions"),
    ('T', "time"),
    ('R', "rate"),
    ('L', "latency-limit"),
    ('P', "progress"),
    ('M', "protocol"),
    ('f', "file"),
    ('b', "builtin"),
    ('D', "define"),
    ('s', "scale"),
    ('h', "host"),
    ('p', "port"),
    ('U', "username"),
    ('I', "init-steps"),
    ('F', "fillfactor"),
];

/// Options without a value.
const FLAGS: &[(char, &str)] = &[
    ('i', "initialize"),
    ('r', "report-per-command"),
    ('S', "select-only"),
    ('N', "skip-some-updates"),
    ('n', "no-vacuum"),
    ('q', "quiet"),
];

fn parse(args: &[String]) -> Result<Pgbench> {
    let mut p = Pgbench::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let (key, inline): (String, Option<String>) = if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (long.to_string(), None),
            }
        } else if let Some(short) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            let mut chars = short.chars();
            let c = chars.next().unwrap_or('-');
            let rest: String = chars.collect();
            let long = VALUED
                .iter()
                .chain(FLAGS)
                .find(|(s, _)| *s == c)
                .map(|(_, l)| l.to_string())
                .with_context(|| {
                    format!("pgbench option -{c} is not one sojourn reads; it reads {READ}")
                })?;
            if FLAGS.iter().any(|(s, _)| *s == c) && !rest.is_empty() {
                bail!("pgbench option {a}: -{c} takes no value (sojourn reads {READ})");
            }
            (long, (!rest.is_empty()).then_some(rest))
        } else {
            if p.dbname.is_some() {
                bail!("too many command-line arguments (first is \"{a}\")");
            }
            p.dbname = Some(a.clone());
            continue;
        };
        let valued =
            VALUED.iter().any(|(_, l)| *l == key) || key == "random-seed" || key == "max-tries";
        let value = if valued {
            match inline {
                Some(v) => Some(v),
                None => {
                    let v = args
                        .get(i)
                        .with_context(|| format!("pgbench option --{key} needs a value"))?;
                    i += 1;
                    Some(v.clone())
                }
            }
        } else {
            None
        };
        let v = || value.clone().unwrap_or_default();
        match key.as_str() {
            "initialize" => p.init = true,
            "client" => p.clients = Some(v()),
            "jobs" => p.jobs = Some(v()),
            "transactions" => {
                p.transactions = Some(v().parse().with_context(|| {
                    format!("invalid value \"{}\" for option -t/--transactions", v())
                })?)
            }
            "time" => p.time = Some(v()),
            "rate" => p.rate = Some(v()),
            "latency-limit" => p.latency_limit = Some(v()),
            "progress" => p.progress = Some(v()),
            "report-per-command" => p.per_statement = true,
            "protocol" => p.protocol = Some(v()),
            "file" => p.files.push(v()),
            "builtin" => p.builtins.push(v()),
            "select-only" => p.builtins.push("select-only".into()),
            "skip-some-updates" => p.builtins.push("simple-update".into()),
            "define" => p.defines.push(v()),
            "scale" => p.scale = Some(v()),
            "random-seed" => p.seed = Some(v()),
            "max-tries" => p.max_tries = Some(v()),
            "no-vacuum" => p.no_vacuum = true,
            "host" => p.host = Some(v()),
            "port" => p.port = Some(v()),
            "username" => p.user = Some(v()),
            "quiet" => {}
            "init-steps" => {
                let steps = v();
                if steps.chars().any(|c| !"dtgGvp ".contains(c)) {
                    bail!(
                        "-I {steps}: sojourn's load runs pgbench's steps d, t, G (g makes the \
                         same rows), v and p; foreign keys (f) are not made"
                    );
                }
                p.notes.push(format!(
                    "-I {steps}: the load drops, creates, generates on the server, vacuums and \
                     adds primary keys, as -I dtGvp"
                ));
            }
            "fillfactor" => {
                if v() != "100" {
                    bail!(
                        "-F {}: sojourn's load makes pgbench's tables with fillfactor 100 only",
                        v()
                    );
                }
            }
            other => bail!("pgbench option --{other} is not one sojourn reads; it reads {READ}"),
        }
    }
    if p.transactions.is_some() && p.time.is_some() {
        bail!("specify either a number of transactions (-t) or a duration (-T), not both");
    }
    Ok(p)
}

/// The database URL pgbench would connect to: its options, else libpq's
/// environment, else its defaults (the local socket, the user's name as
/// the database's), or the URI given as DBNAME.
fn url(p: &Pgbench) -> String {
    // A connection URI as DBNAME is the whole connection, as libpq takes it.
    if let Some(uri) = p
        .dbname
        .as_ref()
        .filter(|d| d.starts_with("postgres://") || d.starts_with("postgresql://"))
    {
        return uri.clone();
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let os_user = || env("USER").unwrap_or_else(|| "postgres".into());
    let user = p
        .user
        .clone()
        .or_else(|| env("PGUSER"))
        .unwrap_or_else(os_user);
    let host = p
        .host
        .clone()
        .or_else(|| env("PGHOST"))
        .unwrap_or_else(|| "localhost".into());
    let port = p
        .port
        .clone()
        .or_else(|| env("PGPORT"))
        .unwrap_or_else(|| "5432".into());
    let db = p
        .dbname
        .clone()
        .or_else(|| env("PGDATABASE"))
        .or_else(|| env("PGUSER"))
        .unwrap_or_else(os_user);
    let host = if host.starts_with('/') {
        // A socket directory: libpq's URL form keeps it in the query.
        format!("localhost:{port}/{db}?host={host}")
    } else {
        format!("{host}:{port}/{db}")
    };
    format!("postgres://{user}@{host}")
}

pub fn main(a: PgbenchArgs) -> Result<ExitCode> {
    let p = parse(&a.args)?;
    for note in &p.notes {
        eprintln!("note: {note}");
    }
    let (args, mode) = translate(&p)?;
    pipeline::main(args, mode)
}

/// pgbench's run as sojourn's `load` or `run` arguments.
fn translate(p: &Pgbench) -> Result<(PhaseArgs, pipeline::Mode)> {
    let mode = if p.init {
        pipeline::Mode::Load
    } else {
        pipeline::Mode::Run
    };
    // sojourn's own defaults for the command, then pgbench's settings.
    let mut a = PhaseArgs::defaults();
    a.db = Some(url(p));
    a.format = Format::Pgbench;
    a.scale = p.scale.clone();
    if p.init {
        a.builtins = vec!["tpcb-like".into()];
        a.drop = true;
        return Ok((a, mode));
    }
    let clients: u64 = match &p.clients {
        Some(c) => c
            .parse()
            .ok()
            .filter(|&c| c >= 1)
            .with_context(|| format!("invalid value \"{c}\" for option -c/--client"))?,
        None => 1,
    };
    a.threads = Some(clients.to_string());
    a.script_files = p.files.clone();
    a.builtins = p.builtins.clone();
    if a.script_files.is_empty() && a.builtins.is_empty() {
        a.builtins.push("tpcb-like".into());
    }
    a.defines = p.defines.clone();
    a.target = p.rate.clone();
    let mut props = Vec::new();
    match (&p.time, p.transactions) {
        (Some(t), _) => props.push(format!("maxexecutiontime={t}")),
        (None, t) => props.push(format!("operationcount={}", t.unwrap_or(10) * clients)),
    }
    if let Some(j) = &p.jobs {
        props.push(format!("runtime.threads={j}"));
    }
    if let Some(m) = &p.protocol {
        if !["simple", "extended", "prepared"].contains(&m.as_str()) {
            bail!("invalid query mode (-M): \"{m}\"; the modes are simple, extended and prepared");
        }
        props.push(format!("script.protocol={m}"));
    } else {
        // pgbench's own default.
        props.push("script.protocol=simple".into());
    }
    if p.per_statement {
        props.push("script.report=statements".into());
    }
    if let Some(l) = &p.latency_limit {
        props.push(format!("script.latency_limit_ms={l}"));
    }
    if let Some(n) = &p.max_tries {
        if n.parse::<u32>().is_err() {
            bail!("invalid number of maximum tries: \"{n}\"");
        }
        props.push(format!("script.max_tries={n}"));
    }
    if !p.no_vacuum {
        // pgbench vacuums its tables and empties its history first.
        props.push("script.vacuum=true".into());
    }
    if let Some(n) = &p.progress {
        props.push(format!("status.interval={n}"));
        a.live.status = true;
    }
    match p.seed.as_deref() {
        None | Some("time") | Some("rand") => {}
        Some(s) => a.seed = Some(s.to_string()),
    }
    a.props.extend(props);
    Ok((a, mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn pgbench_s_options_read_as_pgbench_reads_them() {
        let p = parse(&args(
            "-c4 -j 2 -t 250 -S -r -M prepared --random-seed=7 -h 127.0.0.1 -p 5433 -U bob mydb",
        ))
        .unwrap();
        assert_eq!(p.clients.as_deref(), Some("4"));
        assert_eq!(p.jobs.as_deref(), Some("2"));
        assert_eq!(p.transactions, Some(250));
        assert_eq!(p.builtins, ["select-only"]);
        assert!(p.per_statement);
        assert_eq!(p.seed.as_deref(), Some("7"));
        assert_eq!(url(&p), "postgres://bob@127.0.0.1:5433/mydb");
        let uri = parse(&args("-S postgresql://bob:pw@db.example:6432/x")).unwrap();
        assert_eq!(url(&uri), "postgresql://bob:pw@db.example:6432/x");
        let (a, mode) = translate(&p).unwrap();
        assert_eq!(mode, pipeline::Mode::Run);
        assert_eq!(a.threads.as_deref(), Some("4"));
        assert!(
            a.props.contains(&"operationcount=1000".to_string()),
            "{:?}",
            a.props
        );
        assert!(a.props.contains(&"script.protocol=prepared".to_string()));
        assert!(a.props.contains(&"runtime.threads=2".to_string()));
        assert!(a.props.contains(&"script.vacuum=true".to_string()));
        let (b, _) = translate(&parse(&args("-n --max-tries=5 -L 50")).unwrap()).unwrap();
        assert!(
            b.props.contains(&"script.max_tries=5".to_string())
                && b.props.contains(&"script.latency_limit_ms=50".to_string())
                && !b.props.iter().any(|p| p.starts_with("script.vacuum")),
            "{:?}",
            b.props
        );
        assert!(translate(&parse(&args("--max-tries=x")).unwrap()).is_err());
        let (i, mode) = translate(&parse(&args("-i -s 2 db")).unwrap()).unwrap();
        assert_eq!(
            (mode, i.scale.as_deref(), i.drop),
            (pipeline::Mode::Load, Some("2"), true)
        );
    }

    #[test]
    fn what_is_not_read_is_refused_by_name() {
        let e = parse(&args("-C -c 2")).unwrap_err().to_string();
        assert!(
            e.contains("-C is not one sojourn reads") && e.contains("--random-seed"),
            "{e}"
        );
        let e = parse(&args("--failures-detailed")).unwrap_err().to_string();
        assert!(
            e.contains("--failures-detailed is not one sojourn reads") && e.contains("--max-tries"),
            "{e}"
        );
        assert!(parse(&args("-t 10 -T 5")).is_err());
        assert!(parse(&args("-i -F 90")).is_err());
        assert!(parse(&args("a b")).is_err());
    }
}
