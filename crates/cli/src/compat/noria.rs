//! `sojourn vote`: Noria's vote benchmark with Noria's own command line.
//! The flags are translated into sojourn's plan of the same run (what
//! `bench URL -p workload=vote -p vote.articles=N ... --target OPS` says)
//! and handed to the pipeline as `sojourn bench` (or `run`, with
//! `--no-prime`) would: the summary, Noria's lines after it and the stored
//! run are the vote workload's own. What the
//! translation cannot keep exactly as Noria has it is said on stderr.
//!
//! `--histogram FILE` then appends Noria's four histograms (response and
//! service time of votes and of reads, in microseconds) in HdrHistogram's
//! V2 serialized form.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use sojourn_core::op::OpKind;
use sojourn_core::run_record::RunRecord;

use crate::cli::{PhaseArgs, VoteArgs, VoteBackend, VoteDistributionArg};
use crate::pipeline;

/// The backends this command runs, for the refusal of Noria's others.
const BACKENDS: &str = "mysql, memcached, hybrid, redis and postgresql";

pub fn main(args: VoteArgs) -> Result<ExitCode> {
    let translated = translate(&args)?;
    for note in &translated.notes {
        eprintln!("note: {note}");
    }
    let histogram = args.histogram.clone();
    let mut append = |run: &RunRecord| match &histogram {
        Some(path) => append_histograms(path, run),
        None => Ok(()),
    };
    pipeline::main_then(translated.args, translated.mode, Some(&mut append))
}

/// Noria's flags as sojourn's plan of the same run (`bench URL -p
/// workload=vote ... --target OPS`, or `run` with `--no-prime`), and what
/// differs.
#[derive(Debug)]
struct Translated {
    args: PhaseArgs,
    mode: pipeline::Mode,
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
    let mut args = PhaseArgs::defaults();
    args.db = Some(url);
    let mut prop = |k: &str, v: &str| args.props.push(format!("{k}={v}"));
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
    // The user's own -p last: they win, as on sojourn's command line.
    args.props.extend(a.props.iter().cloned());
    args.target = Some(a.target.to_string());
    // Noria's clients build the database afresh before each run.
    args.drop = !a.no_prime;
    args.threads = a.threads.map(|n| n.to_string());
    args.seed = a.seed.clone();
    args.results = a.results.clone();
    args.data_dir = a.data_dir.clone();
    args.no_store = a.no_store;
    args.live.no_progress = a.no_progress;
    args.labels = a.labels.clone();
    let mode = match a.no_prime {
        true => pipeline::Mode::Run,
        false => pipeline::Mode::Bench,
    };
    Ok(Translated { args, mode, notes })
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
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn args(line: &[&str]) -> VoteArgs {
        let argv = std::iter::once("sojourn")
            .chain(std::iter::once("vote"))
            .chain(line.iter().copied());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Vote(a) => a,
            other => panic!("{other:?}"),
        }
    }

    fn props(t: &Translated) -> String {
        t.args.props.join(" ")
    }

    #[test]
    fn noria_lines_become_sojourn_plans() {
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
        assert_eq!(t.mode, pipeline::Mode::Bench);
        assert_eq!(t.args.db.as_deref(), Some("mysql://127.0.0.1:3307/db"));
        assert_eq!(
            props(&t),
            "workload=vote vote.articles=1000 vote.write_every=20 vote.distribution=zipfian \
             vote.variant=precomputed operationcount=0 maxexecutiontime=5"
        );
        assert_eq!(t.args.target.as_deref(), Some("100000"));
        assert!(t.args.drop);
        assert_eq!(t.args.threads.as_deref(), Some("16"));
        assert!(t.notes.iter().any(|n| n.contains("1.15")), "{:?}", t.notes);

        let t = translate(&args(&[
            "--no-prime",
            "-p",
            "vote.articles=7",
            "hybrid",
            "--mysql-address",
            "h:1",
            "--memcached-address",
            "m:2",
        ]))
        .unwrap();
        assert_eq!(t.mode, pipeline::Mode::Run);
        assert_eq!(t.args.db.as_deref(), Some("mysql://h:1/soup"));
        assert!(
            props(&t).contains("vote.cache=memcached://m:2"),
            "{}",
            props(&t)
        );
        assert!(!t.args.drop);
        // Noria's defaults, and the user's -p after them (it wins).
        assert_eq!(t.args.target.as_deref(), Some("1000000"));
        assert!(props(&t).contains("vote.write_every=19"));
        assert!(
            props(&t).contains("vote.articles=100000") && props(&t).contains("maxexecutiontime=30")
        );
        assert_eq!(
            t.args.props.last().map(String::as_str),
            Some("vote.articles=7")
        );

        let t = translate(&args(&["hybrid", "--redis-address", "r:3"])).unwrap();
        assert!(props(&t).contains("vote.cache=redis://r:3"));
        let t = translate(&args(&["memcached"])).unwrap();
        assert_eq!(t.args.db.as_deref(), Some("memcached://127.0.0.1:11211"));
        let t = translate(&args(&["redis", "--address", "10.0.0.1"])).unwrap();
        assert_eq!(t.args.db.as_deref(), Some("redis://10.0.0.1"));
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
