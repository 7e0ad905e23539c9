//! `sojourn vote`: Noria's vote benchmark with Noria's own command line.
//! The flags are translated into sojourn's own spelling of the same run
//! (`bench URL -p workload=vote -p vote.articles=N ... --target OPS`) and
//! that command line is parsed and run as `sojourn bench` (or `run`, with
//! `--no-prime`) would run it: one pipeline, so the summary, Noria's lines
//! after it and the stored run are the vote workload's own. What the
//! translation cannot keep exactly as Noria has it is said on stderr.
//!
//! `--histogram FILE` then appends Noria's four histograms (response and
//! service time of votes and of reads, in microseconds) in HdrHistogram's
//! V2 serialized form.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use sojourn_core::op::OpKind;
use sojourn_core::run_record::RunRecord;

use super::phase;
use crate::cli::{Cli, Command, VoteArgs, VoteBackend, VoteDistributionArg};

/// The backends this command runs, for the refusal of Noria's others.
const BACKENDS: &str = "mysql, memcached, hybrid, redis and postgresql";

pub fn main(args: VoteArgs) -> Result<ExitCode> {
    let translated = translate(&args)?;
    for note in &translated.notes {
        eprintln!("note: {note}");
    }
    let cli = Cli::try_parse_from(&translated.argv)
        .context("translating Noria's vote flags into sojourn's")?;
    let (phase_args, mode) = match cli.command {
        Command::Bench(a) => (a, phase::Mode::Bench),
        Command::Run(a) => (a, phase::Mode::Run),
        // Not shown: its arguments hold the database URL.
        _ => bail!("the vote translation gave a command other than bench or run"),
    };
    let histogram = args.histogram.clone();
    let mut append = |run: &RunRecord| match &histogram {
        Some(path) => append_histograms(path, run),
        None => Ok(()),
    };
    phase::main_then(phase_args, mode, Some(&mut append))
}

/// Noria's flags as sojourn's command line, and what differs.
#[derive(Debug, PartialEq)]
struct Translated {
    argv: Vec<String>,
    notes: Vec<String>,
}

fn translate(a: &VoteArgs) -> Result<Translated> {
    let mut notes = Vec::new();
    // Noria's clients run its MySQL schema with the count kept in
    // `Article.votes`; the join is sojourn's choice for its own PostgreSQL.
    let (url, variant, cache) = match &a.backend {
        VoteBackend::Mysql { address, database } => (
            format!("mysql://{address}/{database}"),
            Some("precomputed"),
            None,
        ),
        VoteBackend::Postgresql { address, database } => {
            (format!("postgres://{address}/{database}"), None, None)
        }
        VoteBackend::Memcached { address, fast } => {
            if *fast {
                bail!(
                    "memcached --fast (reading counts without titles) is not implemented: a \
                     read returns the article's title and count, as the other backends' do"
                );
            }
            (format!("memcached://{address}"), None, None)
        }
        VoteBackend::Redis { address } => (format!("redis://{address}"), None, None),
        VoteBackend::Hybrid {
            mysql_address,
            memcached_address,
            redis_address,
            database,
        } => {
            let cache = match (memcached_address, redis_address) {
                (_, Some(r)) => format!("redis://{r}"),
                (Some(m), None) => format!("memcached://{m}"),
                (None, None) => "memcached://127.0.0.1:11211".to_string(),
            };
            (
                format!("mysql://{mysql_address}/{database}"),
                Some("precomputed"),
                Some(cache),
            )
        }
        VoteBackend::Other(words) => {
            let name = words.first().map(String::as_str).unwrap_or_default();
            let why = match name {
                "localsoup" | "netsoup" => "is Noria itself, which sojourn does not embed or drive",
                "mssql" => "(SQL Server) has no backend in sojourn",
                "null" => "is not a database: use `sojourn run null: -P workloads/vote`",
                _ => "is not one of Noria's backends",
            };
            bail!("vote backend `{name}` {why}; sojourn's vote runs on {BACKENDS}");
        }
    };
    if a.write_every == 0 {
        bail!("--write-every 0: expected N of at least 1 (one operation in N is a vote)");
    }
    if !(a.target.is_finite() && a.target > 0.0) {
        bail!(
            "--target {}: expected operations per second above 0",
            a.target
        );
    }
    if a.runtime == 0 {
        bail!("--runtime 0: expected seconds, at least 1");
    }
    if a.articles == 0 {
        bail!("--articles 0: expected at least one article");
    }
    notes.push(format!(
        "--write-every {n}: each connection makes exactly one vote in every {n} operations \
         (Noria draws each operation a vote with chance 1/{n})",
        n = a.write_every
    ));
    let distribution = match a.distribution {
        VoteDistributionArg::Uniform => "uniform",
        VoteDistributionArg::Skewed => {
            notes.push(
                "-d skewed: articles follow YCSB's scrambled zipfian (constant 0.99), where \
                 Noria draws a zipf of exponent 1.15"
                    .to_string(),
            );
            "zipfian"
        }
    };
    let mut argv: Vec<String> = vec!["sojourn".into()];
    argv.push(if a.no_prime { "run" } else { "bench" }.into());
    argv.push("--db".into());
    argv.push(url);
    let mut prop = |k: &str, v: &str| {
        argv.push("-p".into());
        argv.push(format!("{k}={v}"));
    };
    prop("workload", "vote");
    prop("vote.articles", &a.articles.to_string());
    prop("vote.write_every", &a.write_every.to_string());
    prop("vote.distribution", distribution);
    if let Some(v) = variant {
        prop("vote.variant", v);
    }
    if let Some(c) = &cache {
        prop("vote.cache", c);
    }
    prop("operationcount", "0");
    prop("maxexecutiontime", &a.runtime.to_string());
    argv.push("--target".into());
    argv.push(a.target.to_string());
    if !a.no_prime {
        // Noria's clients build the database afresh before each run.
        argv.push("--drop".into());
    }
    if let Some(n) = a.threads {
        argv.push("--threads".into());
        argv.push(n.to_string());
    }
    for (flag, value) in [
        ("--seed", &a.seed),
        ("--results", &a.results),
        (
            "--data-dir",
            &a.data_dir.as_ref().map(|d| d.display().to_string()),
        ),
    ] {
        if let Some(v) = value {
            argv.push(flag.into());
            argv.push(v.clone());
        }
    }
    for (set, flag) in [(a.no_store, "--no-store"), (a.no_progress, "--no-progress")] {
        if set {
            argv.push(flag.into());
        }
    }
    for l in &a.labels {
        argv.push("--label".into());
        argv.push(l.clone());
    }
    for p in &a.props {
        argv.push("-p".into());
        argv.push(p.clone());
    }
    Ok(Translated { argv, notes })
}

/// Noria's four histograms of `run`, in its order: sojourn (response
/// time) of votes and reads, then remote (service time) of each, in
/// microseconds as Noria records them; successful operations only.
fn noria_histograms(run: &RunRecord) -> Result<Vec<Histogram<u64>>> {
    let mut four = Vec::with_capacity(4);
    for service in [false, true] {
        for kind in [OpKind::Insert, OpKind::Read] {
            let mut us = Histogram::<u64>::new(3).context("an HdrHistogram")?;
            if let Some(s) = run.total.op(kind) {
                let ns = if service {
                    &s.ok.service
                } else {
                    &s.ok.response
                };
                for v in ns.iter_recorded() {
                    us.record_n(v.value_iterated_to() / 1000, v.count_at_value())
                        .context("recording into an HdrHistogram")?;
                }
            }
            four.push(us);
        }
    }
    Ok(four)
}

/// Append `run`'s four histograms to `path` (created if absent).
fn append_histograms(path: &Path, run: &RunRecord) -> Result<()> {
    let mut bytes = Vec::new();
    let mut ser = V2Serializer::new();
    for h in noria_histograms(run)? {
        ser.serialize(&h, &mut bytes)
            .map_err(|e| anyhow::anyhow!("serializing a histogram: {e:?}"))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("--histogram {}: cannot open", path.display()))?;
    f.write_all(&bytes)
        .with_context(|| format!("--histogram {}: cannot write", path.display()))?;
    eprintln!(
        "histograms (sojourn-write, sojourn-read, remote-write, remote-read) appended to {}",
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> VoteArgs {
        let argv = std::iter::once("sojourn")
            .chain(std::iter::once("vote"))
            .chain(line.iter().copied());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Vote(a) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn noria_lines_become_sojourn_lines() {
        let t = translate(&args(&[
            "--target",
            "100000",
            "--write-every",
            "20",
            "--threads",
            "16",
            "-r",
            "5",
            "-a",
            "1000",
            "-d",
            "skewed",
            "mysql",
            "--address",
            "127.0.0.1:3307",
            "--database",
            "db",
        ]))
        .unwrap();
        let line = t.argv.join(" ");
        assert_eq!(
            line,
            "sojourn bench --db mysql://127.0.0.1:3307/db -p workload=vote -p vote.articles=1000 \
             -p vote.write_every=20 -p vote.distribution=zipfian -p vote.variant=precomputed \
             -p operationcount=0 -p maxexecutiontime=5 --target 100000 --drop --threads 16"
        );
        assert!(t.notes.iter().any(|n| n.contains("1.15")), "{:?}", t.notes);

        let t = translate(&args(&[
            "--no-prime",
            "hybrid",
            "--mysql-address",
            "h:1",
            "--memcached-address",
            "m:2",
        ]))
        .unwrap();
        let line = t.argv.join(" ");
        assert!(
            line.starts_with("sojourn run --db mysql://h:1/soup"),
            "{line}"
        );
        assert!(line.contains("-p vote.cache=memcached://m:2"), "{line}");
        assert!(!line.contains("--drop"), "{line}");
        // Noria's defaults.
        assert!(line.contains("--target 1000000") && line.contains("vote.write_every=19"));
        assert!(line.contains("vote.articles=100000") && line.contains("maxexecutiontime=30"));

        let t = translate(&args(&["hybrid", "--redis-address", "r:3"])).unwrap();
        assert!(t.argv.join(" ").contains("-p vote.cache=redis://r:3"));
        let t = translate(&args(&["memcached"])).unwrap();
        assert!(t
            .argv
            .join(" ")
            .contains("--db memcached://127.0.0.1:11211"));
        let t = translate(&args(&["redis", "--address", "10.0.0.1"])).unwrap();
        assert!(t.argv.join(" ").contains("--db redis://10.0.0.1 "));
    }

    #[test]
    fn noria_backends_sojourn_lacks_are_refused_by_name() {
        for name in ["localsoup", "netsoup", "mssql"] {
            let e = translate(&args(&[name, "--shards", "2"]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(name) && e.contains(BACKENDS), "{e}");
        }
        let e = translate(&args(&["memcached", "--fast"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--fast"), "{e}");
        let e = translate(&args(&["--write-every", "0", "mysql"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--write-every 0"), "{e}");
    }
}
