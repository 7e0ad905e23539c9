//! The phase commands' command line (`load`, `run`, `bench`, and the
//! flags `capacity` shares with them), validated into [`Options`]: the
//! properties from workload files, `-p` and flags, the database, where
//! things live and how runs are recorded and tagged.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use sojourn_core::output::json::JsonReport;
use sojourn_core::output::memtier::MemtierSummary;
use sojourn_core::output::pgbench::PgbenchSummary;
use sojourn_core::output::redis_benchmark::RedisBenchmarkSummary;
use sojourn_core::output::ycsb::Summary;
use sojourn_core::output::{Export, Warning};
use sojourn_core::plan::Plan;
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::{pgio, Phase};
use sojourn_session::share::WorkloadFile;
use sojourn_session::{parse_label, Places, RunTags, StoreChoice};

use crate::cli::{ArrivalArg, Format, LiveArgs, PhaseArgs};
use crate::compat::ybapps;
use crate::workloads;

/// The command line, validated.
pub struct Options {
    /// The `-P` files, read (their contents travel to agents).
    pub files: Vec<WorkloadFile>,
    /// `--agents N`: run on agents instead of here.
    pub agents: Option<Agents>,
    pub props: Properties,
    /// The database URL (may hold a password: redact before printing).
    pub db_url: String,
    pub places: Places,
    pub store: StoreChoice,
    pub tags: RunTags,
    pub format: Format,
    pub json: Option<PathBuf>,
    /// What the phases show while they run.
    pub live: LiveArgs,
    /// `--repeat N` (1 without) and the pause between repetitions.
    pub repeat: u32,
    pub repeat_pause: Duration,
    /// yb-sample-apps' command line, when the properties and URL are its
    /// translation.
    yb: Option<ybapps::Translation>,
}

impl Options {
    pub fn new(a: PhaseArgs) -> Result<Options> {
        // yb-sample-apps' command line: its flags are the key-value
        // workload's properties and its --nodes the database.
        let yb = ybapps::translate(&a)?;
        for note in yb.iter().flat_map(|t| &t.notes) {
            eprintln!("note: {note}");
        }
        let mut props = yb
            .as_ref()
            .map_or_else(Properties::new, |t| t.props.clone());
        let mut workload_names = Vec::new();
        let mut files = Vec::new();
        for f in &a.files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| f.display().to_string());
            // Read once, kept: agents on other machines get the contents.
            let file = match workloads::shipped(f) {
                Some(text) => WorkloadFile {
                    name: name.clone(),
                    path: None,
                    contents: Some(text.to_string()),
                },
                None => WorkloadFile {
                    name: name.clone(),
                    path: Some(f.clone()),
                    contents: Some(read_text(f)?),
                },
            };
            pgio::merge_file(&mut props, file.properties()?)?;
            files.push(file);
            workload_names.push(name);
        }
        if let Some(w) = a.workload.as_ref().filter(|_| yb.is_none()) {
            props.set("workload", w, Origin::Flag("--workload"));
        }
        workload_names.extend(scripts(&mut props, &a)?);
        for p in &a.props {
            if let Some(t) = &yb {
                t.check_property(p)?;
            }
            props.set_arg(p)?;
        }
        if workload_names.is_empty() {
            // Stored runs and reports group by workload name: a workload
            // chosen by name alone (`--workload vote`, `-p workload=vote`)
            // is named so.
            workload_names.extend(sojourn_core::workload::kind_name(&props).map(String::from));
        }
        let flags = [
            ("threadcount", a.threads.as_deref(), "--threads"),
            ("target", a.target.as_deref(), "--target"),
            ("rate", a.rate.as_deref(), "--rate"),
            ("trace", a.trace.as_deref(), "--trace"),
            ("seed", a.seed.as_deref(), "--seed"),
            ("warmup", a.warmup.as_deref(), "--warmup"),
        ];
        for (key, value, flag) in flags {
            if let Some(v) = value {
                props.set(key, v, Origin::Flag(flag));
            }
        }
        if let Some(arr) = a.arrival {
            let v = match arr {
                ArrivalArg::Poisson => "poisson",
                ArrivalArg::Uniform => "uniform",
            };
            props.set("arrival", v, Origin::Flag("--arrival"));
        }
        if a.drop {
            props.set("dropdata", "true", Origin::Flag("--drop"));
        }
        let mut tags = RunTags::new(workload_names);
        for l in &a.labels {
            let (k, v) = parse_label(l)?;
            tags.labels.insert(k, v);
        }
        let repeat = match a.repeat {
            None | Some(1) => 1,
            Some(0) => anyhow::bail!("--repeat 0: expected 1 or more repetitions"),
            Some(n) if n > 1000 => anyhow::bail!("--repeat {n}: at most 1000 repetitions"),
            Some(n) => {
                // Repetitions are runs of their own; a shared URI would
                // merge them as one run's client processes.
                if a.run_uri.is_some() || a.agents.is_some() || a.client_count > 1 {
                    anyhow::bail!(
                        "--repeat {n}: each repetition is a run of its own, with a run URI of its \
                         own; leave out --run-uri, --client-count and --agents"
                    );
                }
                n
            }
        };
        let repeat_pause = match a.repeat_pause {
            p if p >= 0.0 && p.is_finite() && p <= 86_400.0 => Duration::from_secs_f64(p),
            p => anyhow::bail!("--repeat-pause {p}: expected seconds from 0 to 86400"),
        };
        if let Some(uri) = a.run_uri {
            tags.run_uri = uri;
        }
        tags.stage_index = a.stage_index;
        tags.client_index = a.client_index;
        tags.client_count = a.client_count;
        tags.check_share()?;
        let db_url = match &yb {
            Some(t) => t.db_url.clone(),
            None => database(a.db, a.db_name, &props)?,
        };
        let agents = match a.agents {
            Some(0) => anyhow::bail!("--agents 0: expected 1 or more agents"),
            Some(n) => Some(Agents {
                count: n,
                wait: match a.agents_wait {
                    w if w > 0.0 && w.is_finite() => Duration::from_secs_f64(w),
                    w => anyhow::bail!("--agents-wait {w}: expected a number of seconds above 0"),
                },
            }),
            None => None,
        };
        Ok(Options {
            files,
            agents,
            props,
            db_url,
            places: Places::new(a.data_dir),
            store: StoreChoice::from_flags(a.results.as_deref(), a.no_store),
            tags,
            format: a.format,
            json: a.json,
            live: a.live.clone(),
            repeat,
            repeat_pause,
            yb,
        })
    }

    /// The plan of `phase`, every setting validated before the database
    /// is touched.
    /// The plan of `phase`. When it cannot be made, the unknown properties
    /// are said first: `operationcout=100` is why operationcount is 0.
    /// Backend properties (`redis.*`, `db.*`) no backend reads are
    /// unknown too.
    pub fn plan(&self, phase: Phase) -> Result<Plan> {
        if let Some(t) = &self.yb {
            // In the words of the flags the user gave.
            t.check_ends(phase)?;
        }
        let prefixes = sojourn_backends::property_prefixes();
        let backend_unknown = sojourn_backends::unknown_properties(&self.props);
        match Plan::from_properties(&self.props, phase, prefixes) {
            Ok(mut plan) => {
                plan.unknown.extend(backend_unknown);
                Ok(plan)
            }
            Err(e) => {
                for u in Plan::unknown_keys(&self.props, prefixes)
                    .into_iter()
                    .chain(backend_unknown)
                {
                    eprintln!("warning: {}", Warning::UnknownProperty(u));
                }
                Err(e.into())
            }
        }
    }
}

/// `--agents N` and how long to wait for them.
#[derive(Clone, Copy, Debug)]
pub struct Agents {
    pub count: u32,
    pub wait: Duration,
}

/// A workload file's text, as `Properties::read_file` would read it.
fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read the workload file {}: {e}", path.display()))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => err.into_bytes().iter().map(|&b| char::from(b)).collect(),
    })
}

/// The database: `--db`, else the positional DB, else a workload file's
/// `CONNECT_STRING` (PGIO's), else the embedded SQLite. When a workload
/// file names a database, a note on stderr says which one is used and why.
fn database(db: Option<String>, db_name: Option<String>, props: &Properties) -> Result<String> {
    let connect = pgio::connect_url(props)?;
    let given = match (db, db_name) {
        (Some(url), _) => Some((url, "--db")),
        (None, Some(name)) => Some((name, "the DB argument")),
        (None, None) => None,
    };
    let Some(connect) = connect else {
        return Ok(given.map_or_else(|| "sqlite".to_string(), |(url, _)| url));
    };
    let (url, flag) = match given {
        Some((url, flag)) => (url, Some(flag)),
        None => (connect.url.clone(), None),
    };
    eprintln!("note: {}", pgio::database_note(&url, flag, &connect));
    Ok(url)
}

/// The store `--results`/`--data-dir` name, opened so that nothing can be
/// written (`report`, `compare`).
pub fn reading_store(a: &crate::cli::StoreArgs) -> Result<sojourn_store::Store> {
    sojourn_session::open_for_reading(&Places::new(a.data_dir.clone()), a.results.as_deref())
}

/// pgbench's script flags (`-f`, `-b`, `-D`, `--scale`) as the script
/// workload's properties; the scripts' names, which name the run.
fn scripts(props: &mut Properties, a: &PhaseArgs) -> Result<Vec<String>> {
    let entries: Vec<String> = a
        .builtins
        .iter()
        .map(|b| format!("{}{b}", sojourn_core::workload::script::BUILTIN_PREFIX))
        .chain(a.script_files.iter().cloned())
        .collect();
    for d in &a.defines {
        let Some((name, value)) = d.split_once('=').filter(|(n, _)| !n.is_empty()) else {
            anyhow::bail!("-D {d}: expected NAME=VALUE, as pgbench's -D");
        };
        props.set(
            &format!("{}{name}", sojourn_core::workload::script::DEFINE_PREFIX),
            value,
            Origin::Flag("-D"),
        );
    }
    if let Some(s) = &a.scale {
        props.set("script.scale", s, Origin::Flag("--scale"));
    }
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    // Read once, kept: agents on other machines run what was read here.
    for f in &a.script_files {
        let file = f.rsplit_once('@').map_or(f.as_str(), |(name, _)| name);
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("-f {f}: reading the script file {file}"))?;
        props.set(
            &format!("{}{file}", sojourn_core::workload::script::FILE_PREFIX),
            &text,
            Origin::Flag("-f"),
        );
    }
    props.set("workload", "script", Origin::Flag("-f/-b"));
    props.set("script", &entries.join(","), Origin::Flag("-f/-b"));
    Ok(entries
        .iter()
        .map(|e| {
            let e = e
                .strip_prefix(sojourn_core::workload::script::BUILTIN_PREFIX)
                .unwrap_or(e);
            let e = e.rsplit_once('@').map_or(e, |(n, _)| n);
            std::path::Path::new(e)
                .file_stem()
                .map_or(e.to_string(), |s| s.to_string_lossy().into_owned())
        })
        .collect())
}

impl Format {
    /// The export this `--format` names: the summary a phase prints.
    pub fn export(self) -> &'static dyn Export {
        match self {
            Format::Text => &Summary,
            Format::Json => &JsonReport,
            Format::Pgbench => &PgbenchSummary,
            Format::Memtier => &MemtierSummary,
            Format::RedisBenchmark => &RedisBenchmarkSummary,
        }
    }
}
