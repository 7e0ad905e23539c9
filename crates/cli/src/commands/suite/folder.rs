//! Reading a PerfKitBenchmarker batch folder as the walkthrough lays it out:
//! benchmark configs (`benchmarks: - NAME: flags: {...}`, any `*.yaml` or
//! `*.yml` but `runner.yaml`) and the optional `runner.yaml` with
//! `unordered_tests` or `ordered_tests` and the common `pkb_flags`.
//!
//! This module owns the folder's structure and every flag's value and
//! origin (`file:line` or `--flag`); what the flags mean is
//! [`super::pkb`]'s business. Every error names the file, the line where it
//! can be found, and what would have been accepted.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use yaml_rust2::parser::{Event, EventReceiver, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// The reserved name of the runner config (PKB's wrapper reads it; it is
/// never a benchmark config).
pub const RUNNER_FILE: &str = "runner.yaml";

/// Where a flag's value was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlagOrigin {
    /// A YAML file in the folder (a benchmark config, or runner.yaml's
    /// `pkb_flags`), with the 1-based line of the key.
    File { file: String, line: usize },
    /// `--flag KEY=VALUE` on the command line.
    CommandLine,
}

impl fmt::Display for FlagOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagOrigin::File { file, line } => write!(f, "{file}:{line}"),
            FlagOrigin::CommandLine => f.write_str("--flag"),
        }
    }
}

/// One flag's value (YAML scalars as PKB's flag parser sees them: lists
/// joined with commas) and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    pub value: String,
    pub origin: FlagOrigin,
}

/// Flags by name. Later layers replace earlier ones whole, as PKB does:
/// `pkb_flags`, then the config's own flags, then `--flag`.
pub type Flags = BTreeMap<String, Flag>;

/// How runner.yaml says the configs run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every config `num_iterations` times, at most `concurrency` at once,
    /// configs on the same database one at a time.
    Unordered {
        num_iterations: u32,
        concurrency: usize,
    },
    /// Stages in order; the files of one stage run together.
    Ordered { stages: Vec<Vec<String>> },
    /// No runner.yaml: each config once, one after another, in name order.
    Sequential,
}

/// One benchmark of a config file (a file may list several; they run in
/// order within each iteration).
#[derive(Clone, Debug)]
pub struct Benchmark {
    /// PKB's benchmark name, e.g. `cloud_bigtable_ycsb`.
    pub name: String,
    /// The config's own flags.
    pub flags: Flags,
    /// Keys of the benchmark besides `flags` (`vm_groups`, `description`,
    /// ...), which sojourn does not use: reported, never dropped silently.
    pub ignored_keys: Vec<(String, FlagOrigin)>,
}

/// One benchmark config file.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// The file name, e.g. `latency.yaml`; markers are named after it.
    pub file: String,
    pub benchmarks: Vec<Benchmark>,
}

/// A batch folder, read and checked.
#[derive(Clone, Debug)]
pub struct Folder {
    pub dir: PathBuf,
    pub mode: Mode,
    /// runner.yaml's `pkb_flags` (empty without it).
    pub pkb_flags: Flags,
    /// Every config in the folder, by file name.
    pub configs: Vec<ConfigFile>,
    /// runner.yaml keys sojourn does not use.
    pub ignored_runner_keys: Vec<(String, FlagOrigin)>,
}

impl Folder {
    /// The config file named `file`.
    pub fn config(&self, file: &str) -> Option<&ConfigFile> {
        self.configs.iter().find(|c| c.file == file)
    }
}

/// Read a batch folder.
pub fn read(dir: &Path) -> Result<Folder> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading the suite folder {}", dir.display()))?;
    let mut names = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("reading the suite folder {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let is_yaml = name.ends_with(".yaml") || name.ends_with(".yml");
        if is_yaml && name != RUNNER_FILE && e.path().is_file() {
            names.push(name);
        }
    }
    names.sort();
    let mut configs = Vec::new();
    for name in &names {
        configs.push(read_config(&dir.join(name), name)?);
    }
    let runner_path = dir.join(RUNNER_FILE);
    let (mode, pkb_flags, ignored_runner_keys) = if runner_path.is_file() {
        read_runner(&runner_path)?
    } else {
        (Mode::Sequential, Flags::new(), Vec::new())
    };
    if let Mode::Ordered { stages } = &mode {
        let text = std::fs::read_to_string(&runner_path).unwrap_or_default();
        for file in stages.iter().flatten() {
            if !names.contains(file) {
                bail!(
                    "{}:{}: ordered_tests names {file}, which is not a benchmark config in {} \
                     (configs there: {})",
                    RUNNER_FILE,
                    line_of_text(&text, file),
                    dir.display(),
                    list_or_none(&names)
                );
            }
        }
    }
    if configs.is_empty() {
        bail!(
            "{} holds no benchmark config: expected *.yaml files (other than {RUNNER_FILE}) \
             with `benchmarks: - NAME: flags: {{...}}`",
            dir.display()
        );
    }
    Ok(Folder {
        dir: dir.to_path_buf(),
        mode,
        pkb_flags,
        configs,
        ignored_runner_keys,
    })
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// Most nodes a config may expand to, aliases included. PKB's configs
/// have tens; a YAML alias bomb (each anchor repeating the one before ten
/// times) would otherwise be expanded to gigabytes before anything checks.
const MAX_YAML_NODES: u64 = 100_000;

/// How many nodes `text` holds once its aliases are expanded, counted from
/// the parser's events (which never expand an alias themselves), up to
/// where it stops being YAML (the loader then says precisely where: it
/// would have expanded every alias before that point).
fn expanded_nodes(text: &str) -> u64 {
    #[derive(Default)]
    struct Count {
        nodes: u64,
        /// Open collections: anchor id, nodes before it.
        open: Vec<(usize, u64)>,
        /// Nodes under each anchor.
        anchors: std::collections::HashMap<usize, u64>,
    }
    impl EventReceiver for Count {
        fn on_event(&mut self, ev: Event) {
            match ev {
                Event::Scalar(_, _, anchor, _) => {
                    self.nodes += 1;
                    if anchor > 0 {
                        self.anchors.insert(anchor, 1);
                    }
                }
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    self.open.push((anchor, self.nodes));
                    self.nodes += 1;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    if let Some((anchor, before)) = self.open.pop() {
                        if anchor > 0 {
                            self.anchors.insert(anchor, self.nodes - before);
                        }
                    }
                }
                Event::Alias(id) => {
                    let size = self.anchors.get(&id).copied().unwrap_or(1);
                    self.nodes = self.nodes.saturating_add(size);
                }
                _ => {}
            }
        }
    }
    let mut count = Count::default();
    let _ = Parser::new_from_str(text).load(&mut count, true);
    count.nodes
}

/// Parse one YAML document, with the error naming the file and line.
fn load_yaml(path: &Path, file: &str) -> Result<(Yaml, String)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    if expanded_nodes(&text) > MAX_YAML_NODES {
        bail!(
            "{file}: its aliases (*name) expand to more than {MAX_YAML_NODES} YAML nodes; \
             a suite config needs a few hundred at most: write the values out"
        );
    }
    let docs = YamlLoader::load_from_str(&text).map_err(|e| {
        // The likeliest cause in a config: an unquoted URL such as null:
        let hint = if e.info().contains("mapping values are not allowed") {
            " (a value that contains `: ` or ends in `:`, such as null: or memory:, must be \
             quoted: sojourn_db: \"null:\")"
        } else {
            ""
        };
        anyhow::anyhow!(
            "{file}:{}: not valid YAML: {}{hint}",
            e.marker().line(),
            e.info()
        )
    })?;
    match docs.len() {
        0 => Ok((Yaml::Null, text)),
        1 => Ok((docs.into_iter().next().unwrap_or(Yaml::Null), text)),
        n => bail!("{file}: holds {n} YAML documents; a config holds one"),
    }
}

fn read_config(path: &Path, file: &str) -> Result<ConfigFile> {
    let (doc, text) = load_yaml(path, file)?;
    let expected =
        "expected `benchmarks:` with a list of `- NAME:` entries, each with `flags: {...}`";
    let Yaml::Hash(top) = &doc else {
        bail!("{file}: {expected}");
    };
    let mut benchmarks = Vec::new();
    for (k, v) in top {
        let key = scalar(k).unwrap_or_default();
        if key != "benchmarks" {
            bail!(
                "{file}:{}: unexpected top-level key `{key}`; {expected}",
                line_of(&text, &key)
            );
        }
        let Yaml::Array(list) = v else {
            bail!(
                "{file}:{}: `benchmarks` is not a list; {expected}",
                line_of(&text, "benchmarks")
            );
        };
        for item in list {
            let Yaml::Hash(entry) = item else {
                bail!("{file}: an entry of `benchmarks` is not `NAME: {{flags: ...}}`; {expected}");
            };
            for (name, body) in entry {
                let name = scalar(name).unwrap_or_default();
                benchmarks.push(read_benchmark(file, &text, &name, body)?);
            }
        }
    }
    if benchmarks.is_empty() {
        bail!("{file}: no benchmark in it; {expected}");
    }
    Ok(ConfigFile {
        file: file.to_string(),
        benchmarks,
    })
}

fn read_benchmark(file: &str, text: &str, name: &str, body: &Yaml) -> Result<Benchmark> {
    let mut flags = Flags::new();
    let mut ignored_keys = Vec::new();
    match body {
        Yaml::Null => {}
        Yaml::Hash(h) => {
            for (k, v) in h {
                let key = scalar(k).unwrap_or_default();
                if key == "flags" {
                    flags = read_flags(file, text, v, &format!("{name}.flags"))?;
                } else {
                    let origin = FlagOrigin::File {
                        file: file.to_string(),
                        line: line_of(text, &key),
                    };
                    ignored_keys.push((format!("{name}.{key}"), origin));
                }
            }
        }
        _ => bail!(
            "{file}:{}: benchmark {name} is not a mapping; expected `{name}:` followed by `flags: {{...}}`",
            line_of(text, name)
        ),
    }
    Ok(Benchmark {
        name: name.to_string(),
        flags,
        ignored_keys,
    })
}

/// A mapping of flag names to scalar (or list) values.
fn read_flags(file: &str, text: &str, v: &Yaml, what: &str) -> Result<Flags> {
    let mut flags = Flags::new();
    let Yaml::Hash(h) = v else {
        if matches!(v, Yaml::Null) {
            return Ok(flags);
        }
        bail!("{file}: `{what}` is not a mapping of flag names to values");
    };
    for (k, v) in h {
        let Some(key) = scalar(k) else {
            bail!("{file}: a key of `{what}` is not a flag name");
        };
        let line = line_of(text, &key);
        let value = flag_value(v).ok_or_else(|| {
            anyhow::anyhow!(
                "{file}:{line}: flag {key} has a nested mapping as its value; accepted: a number, \
                 a string, true/false, or a list of those"
            )
        })?;
        flags.insert(
            key,
            Flag {
                value,
                origin: FlagOrigin::File {
                    file: file.to_string(),
                    line,
                },
            },
        );
    }
    Ok(flags)
}

type RunnerParts = (Mode, Flags, Vec<(String, FlagOrigin)>);

fn read_runner(path: &Path) -> Result<RunnerParts> {
    let file = RUNNER_FILE;
    let (doc, text) = load_yaml(path, file)?;
    let expected =
        "expected `runner:` with `unordered_tests: {num_iterations: N, concurrency: N}` \
                    or `ordered_tests: [...]`, and optionally `pkb_flags: {...}`";
    let runner = match &doc {
        Yaml::Hash(top) => top
            .iter()
            .find(|(k, _)| scalar(k).as_deref() == Some("runner"))
            .map(|(_, v)| v),
        _ => None,
    };
    let Some(Yaml::Hash(runner)) = runner else {
        bail!("{file}: {expected}");
    };
    let mut mode = None;
    let mut flags = Flags::new();
    let mut ignored = Vec::new();
    for (k, v) in runner {
        let key = scalar(k).unwrap_or_default();
        let line = line_of(&text, &key);
        match key.as_str() {
            "unordered_tests" | "ordered_tests" if mode.is_some() => {
                bail!("{file}:{line}: both unordered_tests and ordered_tests are given; choose one")
            }
            "unordered_tests" => mode = Some(read_unordered(&text, v)?),
            "ordered_tests" => mode = Some(read_ordered(line, v)?),
            "pkb_flags" => flags = read_flags(file, &text, v, "pkb_flags")?,
            _ => ignored.push((
                format!("runner.{key}"),
                FlagOrigin::File {
                    file: file.to_string(),
                    line,
                },
            )),
        }
    }
    let Some(mode) = mode else {
        bail!("{file}: neither unordered_tests nor ordered_tests is given; {expected}");
    };
    Ok((mode, flags, ignored))
}

fn read_unordered(text: &str, v: &Yaml) -> Result<Mode> {
    let file = RUNNER_FILE;
    let mut num_iterations = 1u32;
    let mut concurrency = 1usize;
    match v {
        Yaml::Null => {}
        Yaml::Hash(h) => {
            for (k, v) in h {
                let key = scalar(k).unwrap_or_default();
                let line = line_of(text, &key);
                let n = || -> Result<u64> {
                    match scalar(v).and_then(|s| s.parse::<u64>().ok()) {
                        Some(n) if (1..=1_000_000).contains(&n) => Ok(n),
                        _ => bail!(
                            "{file}:{line}: unordered_tests.{key} = {:?}; accepted: a whole number from 1 to 1000000",
                            flag_value(v).unwrap_or_default()
                        ),
                    }
                };
                match key.as_str() {
                    "num_iterations" => num_iterations = n()? as u32,
                    "concurrency" => concurrency = n()? as usize,
                    _ => bail!(
                        "{file}:{line}: unordered_tests has no key `{key}`; accepted: num_iterations, concurrency"
                    ),
                }
            }
        }
        _ => bail!("{file}: unordered_tests is not a mapping with num_iterations and concurrency"),
    }
    Ok(Mode::Unordered {
        num_iterations,
        concurrency,
    })
}

fn read_ordered(line: usize, v: &Yaml) -> Result<Mode> {
    let file = RUNNER_FILE;
    let Yaml::Array(items) = v else {
        bail!(
            "{file}:{line}: ordered_tests is not a list; expected entries such as `- load.yaml` or \
             `- latency.yaml throughput.yaml` (files of one stage separated by spaces)"
        );
    };
    let mut stages = Vec::new();
    for item in items {
        let Some(s) = scalar(item) else {
            bail!("{file}:{line}: an ordered_tests entry is not a list of file names separated by spaces");
        };
        let files: Vec<String> = s.split_whitespace().map(str::to_string).collect();
        if files.is_empty() {
            bail!("{file}:{line}: an ordered_tests entry is empty");
        }
        stages.push(files);
    }
    if stages.is_empty() {
        bail!("{file}:{line}: ordered_tests lists no stage");
    }
    Ok(Mode::Ordered { stages })
}

/// A scalar as text, as PKB's flag parser would read it.
fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        Yaml::Null => Some(String::new()),
        _ => None,
    }
}

/// A flag value: a scalar, or a list of scalars joined with commas (PKB's
/// list flags take either form).
fn flag_value(y: &Yaml) -> Option<String> {
    match y {
        Yaml::Array(items) => items
            .iter()
            .map(scalar)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(",")),
        other => scalar(other),
    }
}

/// The 1-based line where `key:` first appears as a mapping key, for
/// messages (the YAML parser keeps no positions for values); 0 if absent.
pub fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches("- ").trim_start();
            t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(0, |i| i + 1)
}

/// The 1-based line where `word` first appears at all; 0 if absent.
fn line_of_text(text: &str, word: &str) -> usize {
    text.lines()
        .position(|l| l.split_whitespace().any(|w| w == word))
        .map_or(0, |i| i + 1)
}

/// `--flag KEY=VALUE`.
pub fn parse_override(arg: &str) -> Result<(String, Flag)> {
    match arg.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((
            k.trim().to_string(),
            Flag {
                value: v.to_string(),
                origin: FlagOrigin::CommandLine,
            },
        )),
        _ => bail!(
            "--flag {arg:?}: expected KEY=VALUE with a PKB flag name, e.g. --flag ycsb_record_count=2000"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn an_alias_bomb_is_refused_before_it_is_expanded() {
        let d = tempfile::tempdir().unwrap();
        let mut flags = String::from("      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let prev = format!("*a{}", i - 1);
            let list = [prev.as_str(); 10].join(", ");
            flags.push_str(&format!("      a{i}: &a{i} [{list}]\n"));
        }
        write(
            d.path(),
            "bomb.yaml",
            &format!("benchmarks:\n- redis_ycsb:\n    flags:\n{flags}"),
        );
        let (result, peak) = sojourn_testkit::fuzz::peak_allocated(|| read(d.path()));
        let Err(e) = result else {
            panic!("the alias bomb was read")
        };
        let e = format!("{e:#}");
        assert!(e.contains("bomb.yaml") && e.contains("aliases"), "{e}");
        assert!(peak < 16 << 20, "{peak} bytes");
        // Anchors and aliases within reason still work.
        write(
            d.path(),
            "bomb.yaml",
            "benchmarks:\n- redis_ycsb:\n    flags: &f\n      ycsb_record_count: 10\n\
             - cloud_bigtable_ycsb:\n    flags: *f\n",
        );
        let f = read(d.path()).unwrap();
        let b = &f.config("bomb.yaml").unwrap().benchmarks;
        assert_eq!(b[1].flags["ycsb_record_count"].value, "10");
    }

    /// Fuzzed configs and runner files (from the walkthrough's own, plus a
    /// YAML alias bomb) are read, and each benchmark mapped to its stages
    /// as `sojourn suite` does, without a panic or unbounded allocation
    /// (see `sojourn_testkit::fuzz`; `SOJOURN_FUZZ_ITERATIONS` runs longer).
    #[test]
    fn fuzzed_suite_folders_read_and_map_without_panicking() {
        use sojourn_testkit::fuzz::Fuzz;
        let walkthrough =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pkb-walkthrough");
        let (mut seeds, mut runner_seeds) = (Vec::new(), Vec::new());
        for sub in ["parallel_tests", "sequential_tests"] {
            for e in std::fs::read_dir(walkthrough.join(sub)).unwrap() {
                let path = e.unwrap().path();
                let text = std::fs::read(&path).unwrap();
                if path.ends_with(RUNNER_FILE) {
                    runner_seeds.push(text);
                } else {
                    seeds.push(text);
                }
            }
        }
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = format!("*a{}", i - 1);
            bomb.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        let bomb = format!(
            "benchmarks:\n- redis_ycsb:\n    flags:\n      {}",
            bomb.replace('\n', "\n      ")
        );
        seeds.push(bomb.into_bytes());
        let seeds: Vec<&[u8]> = seeds.iter().map(Vec::as_slice).collect();
        let runner_seeds: Vec<&[u8]> = runner_seeds.iter().map(Vec::as_slice).collect();
        let mut configs = Fuzz::new(&seeds, 1500);
        let mut runners = Fuzz::new(&runner_seeds, 1500);
        let d = tempfile::tempdir().unwrap();
        let (mut read_ok, mut mapped) = (0, 0);
        configs.run("reading and mapping a suite folder", |config| {
            let runner = String::from_utf8_lossy(&runners.input()).into_owned();
            write(d.path(), "a.yaml", config);
            write(d.path(), RUNNER_FILE, &runner);
            let Ok(folder) = read(d.path()) else {
                return;
            };
            read_ok += 1;
            let mut seed = || 1;
            for cf in &folder.configs {
                for b in &cf.benchmarks {
                    let mut flags = folder.pkb_flags.clone();
                    flags.extend(b.flags.clone());
                    let mut ctx = super::super::pkb::MapContext {
                        dir: d.path(),
                        suite: "fuzz",
                        file: &cf.file,
                        benchmark: &b.name,
                        db: None,
                        seed: &mut seed,
                    };
                    if super::super::pkb::map(&flags, &mut ctx).is_ok() {
                        mapped += 1;
                    }
                }
            }
        });
        assert!(
            read_ok > 50 && mapped > 10,
            "read {read_ok}, mapped {mapped}"
        );
    }

    #[test]
    fn reads_configs_runner_and_origins() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "b.yaml",
            "benchmarks:\n- cloud_bigtable_ycsb:\n    flags:\n      # comment\n      ycsb_record_count: 500\n      zones: [a, b]\n      ycsb_skip_load_stage: true\n",
        );
        write(
            d.path(),
            "a.yml",
            "benchmarks:\n- redis_ycsb:\n    description: x\n    flags:\n      metadata: experiment:a\n",
        );
        write(
            d.path(),
            "runner.yaml",
            "runner:\n  ordered_tests:\n  - a.yml\n  - b.yaml a.yml\n  pkb_flags:\n    project: p\n",
        );
        write(d.path(), "notes.txt", "not a config");
        let f = read(d.path()).unwrap();
        assert_eq!(
            f.configs
                .iter()
                .map(|c| c.file.as_str())
                .collect::<Vec<_>>(),
            ["a.yml", "b.yaml"]
        );
        assert_eq!(
            f.mode,
            Mode::Ordered {
                stages: vec![vec!["a.yml".into()], vec!["b.yaml".into(), "a.yml".into()]]
            }
        );
        let b = &f.config("b.yaml").unwrap().benchmarks[0];
        assert_eq!(b.name, "cloud_bigtable_ycsb");
        assert_eq!(b.flags["ycsb_record_count"].value, "500");
        assert_eq!(
            b.flags["ycsb_record_count"].origin,
            FlagOrigin::File {
                file: "b.yaml".into(),
                line: 5
            }
        );
        assert_eq!(b.flags["zones"].value, "a,b");
        assert_eq!(b.flags["ycsb_skip_load_stage"].value, "true");
        let a = &f.config("a.yml").unwrap().benchmarks[0];
        assert_eq!(a.ignored_keys[0].0, "redis_ycsb.description");
        assert_eq!(f.pkb_flags["project"].value, "p");
    }

    #[test]
    fn errors_name_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "x.yaml", "benchmarks:\n- b:\n    flags: [oops\n");
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.starts_with("x.yaml:"), "{e}");
        assert!(e.contains("not valid YAML"), "{e}");

        write(
            d.path(),
            "x.yaml",
            "benchmarks:\n- b:\n    flags:\n      sojourn_db: null:\n",
        );
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.starts_with("x.yaml:4"), "{e}");
        assert!(e.contains("must be quoted"), "{e}");

        write(d.path(), "x.yaml", "benchmarks:\n- b:\n    flags: {a: 1}\n");
        write(
            d.path(),
            "runner.yaml",
            "runner:\n  unordered_tests:\n    num_iterations: 0\n",
        );
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.contains("runner.yaml:3"), "{e}");
        assert!(e.contains("num_iterations"), "{e}");

        write(
            d.path(),
            "runner.yaml",
            "runner:\n  ordered_tests:\n  - x.yaml missing.yaml\n",
        );
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.contains("runner.yaml:3"), "{e}");
        assert!(e.contains("missing.yaml"), "{e}");
        assert!(e.contains("x.yaml"), "{e}");
    }

    #[test]
    fn no_runner_is_sequential_and_overrides_parse() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "x.yaml", "benchmarks:\n- b:\n    flags: {a: 1}\n");
        assert_eq!(read(d.path()).unwrap().mode, Mode::Sequential);
        let (k, f) = parse_override("ycsb_run_parameters=target=5,threads=2").unwrap();
        assert_eq!(k, "ycsb_run_parameters");
        assert_eq!(f.value, "target=5,threads=2");
        assert!(parse_override("=3").is_err());
        assert!(parse_override("nokey").is_err());
    }
}
