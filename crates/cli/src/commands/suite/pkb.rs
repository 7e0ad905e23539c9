//! PerfKitBenchmarker's flags, mapped onto sojourn: one benchmark's merged
//! flags become a [`BenchPlan`] (the database, the client count, a load
//! stage and the run stages, the failure thresholds and the labels every
//! result carries), each stage holding one property [`Recipe`] per client
//! process. The mapping follows PKB's `linux_packages/ycsb.py`:
//!
//! - load: the first workload file, `ycsb_preload_threads` threads per
//!   client (PKB's default 32), `ycsb_load_parameters` last; the records
//!   split over the clients with `insertstart`/`insertcount` as PKB does;
//! - run: every workload file (`workload_index`), and for each every entry
//!   of the `ycsb_threads_per_client` staircase (`threads` or
//!   `threads:qps_per_vm`); `ycsb_run_parameters` last, so a `target` or
//!   `threads` there is per client, as it is per VM in PKB.
//!
//! Flags sojourn does not use are kept as labels and listed (never
//! dropped); flags that would change what PKB runs in ways sojourn cannot
//! follow (dynamic or burst load, ...) are refused when they are on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};
use sojourn_core::plan::Plan;
use sojourn_core::properties::Properties;
use sojourn_core::workload::{Phase, Workload};
pub use sojourn_session::share::{split, split_rate, Recipe, WorkloadFile};

use super::folder::{Flag, FlagOrigin, Flags};
use crate::workloads;

/// The flags sojourn reads (see docs/suites.md for what each becomes).
pub const USED: &[&str] = &[
    "ycsb_workload_files",
    "ycsb_record_count",
    "ycsb_operation_count",
    "ycsb_field_count",
    "ycsb_field_length",
    "ycsb_requestdistribution",
    "ycsb_readproportion",
    "ycsb_updateproportion",
    "ycsb_scanproportion",
    "ycsb_run_parameters",
    "ycsb_load_parameters",
    "ycsb_target_qps",
    "ycsb_threads_per_client",
    "ycsb_preload_threads",
    "ycsb_timelimit",
    "ycsb_skip_load_stage",
    "ycsb_skip_run_stage",
    "ycsb_reload_database",
    "ycsb_max_error_rate",
    "ycsb_fail_on_incomplete_loading",
    "ycsb_measurement_type",
    "ycsb_measurement_interval",
    "ycsb_sleep_after_load_in_sec",
    "num_vms",
    "ycsb_client_vms",
    "metadata",
    "sojourn_db",
    "sojourn_parameters",
];

/// PKB modes that change what runs; refused when switched on, with what
/// to use instead.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "ycsb_dynamic_load",
        "`sojourn capacity` searches for the highest sustained rate",
    ),
    // A rate profile in the run parameters expresses both within one
    // stage, its segments summarised on their own (docs/rates.md).
    (
        "ycsb_burst_load",
        "a rate profile in ycsb_run_parameters, e.g. rate=hold 1000 for 60s; hold 5000 for 30s \
         (segments joined by ';' there, where commas part the parameters; docs/rates.md), or a \
         second config with the higher target",
    ),
    (
        "ycsb_incremental_load",
        "a staircase in ycsb_run_parameters, e.g. rate=stairs 500..8000 by 500 every 30s \
         (each step summarised on its own; docs/rates.md), or `threads:qps` entries of \
         ycsb_threads_per_client",
    ),
    (
        "ycsb_cpu_optimization",
        "`sojourn capacity` with a response-time SLO",
    ),
    (
        "ycsb_lowest_latency_load",
        "`sojourn capacity` with a response-time SLO",
    ),
];

/// The workload files PKB runs when `ycsb_workload_files` is not set.
const DEFAULT_WORKLOADS: &str = "workloada,workloadb";

/// Most client processes a stage may start on one machine.
const MAX_CLIENTS: u64 = 256;

/// One stage: the load, or one run of the staircase.
#[derive(Clone, Debug)]
pub struct StagePlan {
    pub phase: Phase,
    pub workload_name: String,
    pub workload_index: usize,
    pub threads_per_client: u64,
    /// Offered ops/s over all clients; `None` is closed loop.
    pub target_total: Option<f64>,
    /// One per client process.
    pub clients: Vec<Recipe>,
    /// PKB's per-stage metadata (`stage`, `workload_name`, ...).
    pub labels: BTreeMap<String, String>,
    /// The first client's plan: the workload and the tables that setting
    /// up the database needs, and how the summary is printed.
    pub plan: Plan,
}

/// One benchmark of a config, ready to run.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    pub file: String,
    pub benchmark: String,
    /// The database URL as given (may hold a password: redact before
    /// printing).
    pub db_url: String,
    /// `google_bigtable_instance_name`: configs on one instance never run
    /// at once in unordered mode.
    pub instance: Option<String>,
    pub load: Option<StagePlan>,
    pub runs: Vec<StagePlan>,
    /// false: skip the load when the table already holds data.
    pub reload_database: bool,
    pub sleep_after_load: Duration,
    /// A stage whose operations fail more often than this fails.
    pub max_error_rate: f64,
    /// A load with any failed insert fails.
    pub fail_on_incomplete_loading: bool,
    /// What every result of this benchmark is labelled with: `metadata`,
    /// the benchmark name, and every flag sojourn does not use.
    pub labels: BTreeMap<String, String>,
    /// Flags sojourn does not use (kept as labels), with where they were set.
    pub unused: Vec<(String, FlagOrigin)>,
    /// Property names no one reads (from -p style parameters), for warnings.
    pub unknown_properties: Vec<String>,
}

/// What a benchmark is mapped with besides its flags.
pub struct MapContext<'a> {
    /// The suite folder: workload files are looked up here first.
    pub dir: &'a Path,
    pub suite: &'a str,
    pub file: &'a str,
    pub benchmark: &'a str,
    /// `--db`, which wins over `sojourn_db`.
    pub db: Option<&'a str>,
    /// Seed for stages whose parameters give none.
    pub seed: &'a mut dyn FnMut() -> u64,
}

/// Typed access to the flags, with errors naming the flag's origin.
struct Reader<'a> {
    flags: &'a Flags,
}

impl<'a> Reader<'a> {
    fn get(&self, name: &str) -> Option<&'a Flag> {
        self.flags.get(name)
    }

    /// A set, non-empty value.
    fn value(&self, name: &str) -> Option<&'a str> {
        self.get(name)
            .map(|f| f.value.trim())
            .filter(|v| !v.is_empty())
    }

    fn origin(&self, name: &str) -> String {
        match self.get(name) {
            Some(f) => format!("{} ({name})", f.origin),
            None => format!("default ({name})"),
        }
    }

    fn invalid(&self, name: &str, accepted: &str) -> anyhow::Error {
        let f = self.get(name);
        anyhow::anyhow!(
            "{}: {name} = {:?}; accepted: {accepted}",
            f.map_or_else(|| "default".to_string(), |f| f.origin.to_string()),
            f.map_or("", |f| f.value.as_str())
        )
    }

    fn u64(&self, name: &str, max: u64) -> Result<Option<u64>> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        match v.replace('_', "").parse::<u64>() {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(self.invalid(name, &format!("a whole number from 0 to {max}"))),
        }
    }

    fn f64(&self, name: &str, lo: f64, hi: f64) -> Result<Option<f64>> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= lo && x <= hi => Ok(Some(x)),
            _ => Err(self.invalid(name, &format!("a number from {lo} to {hi}"))),
        }
    }

    fn bool(&self, name: &str, default: bool) -> Result<bool> {
        let Some(v) = self.value(name) else {
            return Ok(default);
        };
        match v.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(true),
            "false" | "no" | "0" => Ok(false),
            _ => Err(self.invalid(name, "true or false")),
        }
    }

    /// A comma list, empty entries dropped.
    fn list(&self, name: &str) -> Vec<&'a str> {
        self.value(name)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The flag the client count comes from (`num_vms` wins).
    fn vm_flag(&self) -> &'static str {
        if self.value("num_vms").is_some() {
            "num_vms"
        } else {
            "ycsb_client_vms"
        }
    }

    /// A `k=v` comma list (ycsb_run_parameters and friends).
    fn params(&self, name: &str) -> Result<Vec<(&'a str, &'a str)>> {
        self.list(name)
            .into_iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v.trim())),
                _ => Err(self.invalid(
                    name,
                    "a comma-separated list of key=value pairs, e.g. target=3000,readallfields=false",
                )),
            })
            .collect()
    }
}

/// One step of the staircase: threads per client and, optionally, the
/// per-VM rate PKB writes as `threads:qps`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Step {
    threads: u64,
    qps_per_vm: Option<u64>,
}

fn staircase(r: &Reader<'_>) -> Result<Vec<Step>> {
    let name = "ycsb_threads_per_client";
    let entries = r.list(name);
    if entries.is_empty() {
        return Ok(vec![Step {
            threads: 32,
            qps_per_vm: None,
        }]);
    }
    let accepted = "a comma list of `threads` or `threads:qps_per_vm` entries, threads from 1 to \
                    100000, e.g. 1,8,32 or 32:1000,32:2000";
    entries
        .into_iter()
        .map(|e| {
            let (t, q) = match e.split_once(':') {
                Some((t, q)) => (t, Some(q)),
                None => (e, None),
            };
            let threads = t
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=100_000).contains(n))
                .ok_or_else(|| r.invalid(name, accepted))?;
            let qps_per_vm = match q {
                None => None,
                Some(q) => {
                    let q = q
                        .trim()
                        .parse::<u64>()
                        .map_err(|_| r.invalid(name, accepted))?;
                    // PKB's 0 means "no target".
                    (q > 0).then_some(q)
                }
            };
            Ok(Step {
                threads,
                qps_per_vm,
            })
        })
        .collect()
}

/// Where a workload named in `ycsb_workload_files` is: a file in the suite
/// folder, a path, or a workload shipped with sojourn.
fn resolve_workload(dir: &Path, name: &str, r: &Reader<'_>) -> Result<WorkloadFile> {
    let p = Path::new(name);
    let in_dir = dir.join(p);
    if in_dir.is_file() {
        return Ok(WorkloadFile {
            name: name.to_string(),
            path: Some(in_dir),
            contents: None,
        });
    }
    if p.is_absolute() && p.is_file() {
        return Ok(WorkloadFile {
            name: name.to_string(),
            path: Some(p.to_path_buf()),
            contents: None,
        });
    }
    let base = p
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some((_, text)) = workloads::SHIPPED.iter().find(|(n, _)| *n == base) {
        return Ok(WorkloadFile {
            name: base,
            path: None,
            contents: Some(text.to_string()),
        });
    }
    let shipped: Vec<&str> = workloads::SHIPPED.iter().map(|(n, _)| *n).collect();
    Err(r
        .invalid(
            "ycsb_workload_files",
            &format!(
                "workload files in {} or absolute paths, or the shipped workloads {}",
                dir.display(),
                shipped.join(", ")
            ),
        )
        .context(format!("workload file {name} not found")))
}

/// A `sqlite:` path written in a file of the folder is relative to the
/// folder, as workload files are; on the command line, to the working
/// directory.
fn relative_to_folder(url: &str, origin: &FlagOrigin, dir: &Path) -> String {
    if let (FlagOrigin::File { .. }, Some((scheme, path))) = (origin, url.split_once(':')) {
        if scheme.eq_ignore_ascii_case("sqlite")
            && !path.is_empty()
            && Path::new(path).is_relative()
        {
            return format!("{scheme}:{}", dir.join(path).display());
        }
    }
    url.to_string()
}

/// `metadata`: `key:value` pairs separated by commas.
fn metadata(r: &Reader<'_>) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for kv in r.list("metadata") {
        match kv.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => {
                return Err(r.invalid(
                    "metadata",
                    "key:value pairs separated by commas, e.g. experiment:latency_test",
                ))
            }
        }
    }
    Ok(out)
}

/// Map one benchmark's merged flags.
pub fn map(flags: &Flags, ctx: &mut MapContext<'_>) -> Result<BenchPlan> {
    let r = Reader { flags };
    for (name, instead) in UNSUPPORTED {
        let on = match r.value(name) {
            None => false,
            Some(v) => !matches!(v.to_ascii_lowercase().as_str(), "false" | "0" | "no"),
        };
        if on {
            bail!(
                "{}: {name} is not supported by sojourn suites; instead: {instead}",
                r.origin(name)
            );
        }
    }
    let db_url = match (ctx.db, r.get("sojourn_db")) {
        (Some(db), _) => db.to_string(),
        (None, Some(f)) if f.value.trim().is_empty() => {
            return Err(r.invalid(
                "sojourn_db",
                "a database URL such as sqlite:PATH or \"null:\" (quoted in YAML: a bare null is no value)",
            ))
        }
        (None, Some(f)) => relative_to_folder(f.value.trim(), &f.origin, ctx.dir),
        (None, None) => "sqlite".to_string(),
    };
    let vm_count = match r.u64("num_vms", MAX_CLIENTS)? {
        Some(n) => n,
        None => r.u64("ycsb_client_vms", MAX_CLIENTS)?.unwrap_or(1),
    };
    if vm_count == 0 {
        return Err(r.invalid(
            r.vm_flag(),
            &format!("a whole number from 1 to {MAX_CLIENTS}"),
        ));
    }
    if vm_count > 1 && db_url.trim().to_ascii_lowercase().starts_with("memory") {
        bail!(
            "{}: {vm_count} client processes cannot share the in-process memory: database; use a \
             database the processes share (sqlite:PATH, null:, a server), or num_vms=1",
            r.origin("num_vms")
        );
    }
    let max_error_rate = r.f64("ycsb_max_error_rate", 0.0, 1.0)?.unwrap_or(1.0);
    let fail_on_incomplete_loading = r.bool("ycsb_fail_on_incomplete_loading", false)?;
    let skip_load = r.bool("ycsb_skip_load_stage", false)?;
    let skip_run = r.bool("ycsb_skip_run_stage", false)?;
    let reload_database = r.bool("ycsb_reload_database", true)?;
    let sleep_after_load =
        Duration::from_secs(r.u64("ycsb_sleep_after_load_in_sec", 86_400)?.unwrap_or(0));
    if let Some(t) = r.value("ycsb_measurement_type") {
        if !["hdrhistogram", "histogram", "timeseries"].contains(&t.to_ascii_lowercase().as_str()) {
            return Err(r.invalid(
                "ycsb_measurement_type",
                "hdrhistogram, histogram or timeseries (sojourn always keeps HDR histograms)",
            ));
        }
    }
    if let Some(m) = r.value("ycsb_measurement_interval") {
        if !["op", "intended", "both"].contains(&m) {
            return Err(r.invalid("ycsb_measurement_interval", "op, intended or both"));
        }
    }
    if let Some(d) = r.value("ycsb_requestdistribution") {
        if !["uniform", "zipfian", "latest"].contains(&d) {
            return Err(r.invalid("ycsb_requestdistribution", "uniform, zipfian or latest"));
        }
    }

    let mut labels = metadata(&r)?;
    let mut unused = Vec::new();
    for (name, flag) in flags {
        let known = USED.contains(&name.as_str()) || UNSUPPORTED.iter().any(|(n, _)| n == name);
        if !known {
            unused.push((name.clone(), flag.origin.clone()));
            labels
                .entry(name.clone())
                .or_insert_with(|| flag.value.clone());
        }
    }
    labels.insert("benchmark".into(), ctx.benchmark.to_string());
    labels.insert("suite".into(), ctx.suite.to_string());
    labels.insert("suite_config".into(), ctx.file.to_string());
    labels.insert("vm_count".into(), vm_count.to_string());
    labels.insert("num_vms".into(), vm_count.to_string());

    let workload_names = match r.list("ycsb_workload_files") {
        v if v.is_empty() => DEFAULT_WORKLOADS.split(',').collect(),
        v => v,
    };
    let workloads: Vec<WorkloadFile> = workload_names
        .iter()
        .map(|w| resolve_workload(ctx.dir, w, &r))
        .collect::<Result<_>>()?;

    // What both phases set, in PKB's order.
    let mut common = Recipe {
        files: Vec::new(),
        settings: Vec::new(),
    };
    if let Some(n) = r.u64("ycsb_record_count", u64::MAX)?.filter(|&n| n > 0) {
        common.set("recordcount", n.to_string(), &r.origin("ycsb_record_count"));
    }
    // Settings PKB passes on every command line whether or not the flag
    // was given: a key-value stage, which reads neither, drops these.
    let mut defaults: Vec<(&str, String)> = Vec::new();
    let field_count = r.u64("ycsb_field_count", 1_000_000)?.unwrap_or(10);
    if r.value("ycsb_field_count").is_none() {
        defaults.push(("fieldcount", r.origin("ycsb_field_count")));
    }
    if r.value("ycsb_preload_threads").is_none() {
        defaults.push(("threadcount", r.origin("ycsb_preload_threads")));
    }
    if r.value("ycsb_threads_per_client").is_none() {
        defaults.push(("threadcount", r.origin("ycsb_threads_per_client")));
    }
    common.set(
        "fieldcount",
        field_count.to_string(),
        &r.origin("ycsb_field_count"),
    );
    if let Some(n) = r.u64("ycsb_field_length", u64::MAX)?.filter(|&n| n > 0) {
        common.set("fieldlength", n.to_string(), &r.origin("ycsb_field_length"));
    }
    if let Some(t) = r.value("ycsb_measurement_type") {
        common.set(
            "measurementtype",
            t.to_ascii_lowercase(),
            &r.origin("ycsb_measurement_type"),
        );
    }
    if let Some(m) = r.value("ycsb_measurement_interval") {
        common.set(
            "measurement.interval",
            m,
            &r.origin("ycsb_measurement_interval"),
        );
    }
    let sojourn_params = r.params("sojourn_parameters")?;
    let origin_sp = r.origin("sojourn_parameters");

    let mut unknown = BTreeSet::new();
    let mut validate = |recipe: &Recipe, phase: Phase| -> Result<Plan> {
        let props = recipe.properties()?;
        let plan = Plan::from_properties(&props, phase, sojourn_backends::property_prefixes())?;
        for u in &plan.unknown {
            unknown.insert(u.to_string());
        }
        Ok(plan)
    };

    // Load.
    let load = if skip_load {
        None
    } else {
        let w = &workloads[0];
        let mut base = common.clone();
        base.files = vec![w.clone()];
        let threads = r.u64("ycsb_preload_threads", 100_000)?.unwrap_or(32).max(1);
        base.set(
            "threadcount",
            threads.to_string(),
            &r.origin("ycsb_preload_threads"),
        );
        for (k, v) in &sojourn_params {
            base.set(k, *v, &origin_sp);
        }
        let origin_lp = r.origin("ycsb_load_parameters");
        apply_parameters(&mut base, &r.params("ycsb_load_parameters")?, &origin_lp);
        keyvalue_without_defaults(&mut base, &defaults)?;
        // The key range split over the clients, so their loads never
        // insert the same key.
        let props = base.properties()?;
        one_client_only(&props, Phase::Load, vm_count, &r)?;
        // Only YCSB's core workload loads from several clients
        // (`one_client_only` refused the others).
        let (mut start, count) = match Plan::from_properties(
            &props,
            Phase::Load,
            sojourn_backends::property_prefixes(),
        )?
        .workload
        {
            Workload::Core(cfg) => (cfg.insert_start, cfg.insert_count),
            _ => (0, 0),
        };
        let seed = seed_of(&base, ctx)?;
        let mut clients = Vec::new();
        for (i, share) in split(count, vm_count).into_iter().enumerate() {
            let mut c = base.clone();
            if vm_count > 1 {
                let why = format!("client {i} of {vm_count}'s share of the records");
                c.set("insertstart", start.to_string(), &why);
                c.set("insertcount", share.to_string(), &why);
            }
            c.set(
                "seed",
                seed.wrapping_add(i as u64).to_string(),
                "the suite's seed for this client",
            );
            start += share;
            clients.push(c);
        }
        let plan = validate(&clients[0], Phase::Load)?;
        for c in &clients[1..] {
            validate(c, Phase::Load)?;
        }
        let threads_per_client = plan.run.workers() as u64;
        let target_total = plan.run.target().map(|t| t * vm_count as f64);
        Some(stage(
            Phase::Load,
            w,
            0,
            threads_per_client,
            target_total,
            vm_count,
            clients,
            &plan,
        ))
    };

    // Runs: every workload file, every step of the staircase.
    let mut runs = Vec::new();
    if !skip_run {
        let steps = staircase(&r)?;
        let run_params = r.params("ycsb_run_parameters")?;
        let origin_rp = r.origin("ycsb_run_parameters");
        let params_target = run_params.iter().any(|(k, _)| *k == "target");
        let total_qps = r.f64("ycsb_target_qps", 0.0, 1e12)?.filter(|&q| q > 0.0);
        let per_step_qps = steps.iter().any(|s| s.qps_per_vm.is_some());
        if [params_target, total_qps.is_some(), per_step_qps]
            .iter()
            .filter(|&&b| b)
            .count()
            > 1
        {
            bail!(
                "{}: a target in ycsb_run_parameters, ycsb_target_qps and `threads:qps` entries \
                 of ycsb_threads_per_client are mutually exclusive (as in PKB); keep one",
                r.origin("ycsb_run_parameters")
            );
        }
        let timelimit = r.u64("ycsb_timelimit", 1_000_000_000)?.unwrap_or(1800);
        let op_count = r.u64("ycsb_operation_count", u64::MAX)?.filter(|&n| n > 0);
        let mut base = common.clone();
        // 2147483647 is PKB's "run until the time limit"; it is passed on
        // as PKB passes it, so the run's labels read as PKB's (the time
        // limit ends the run long before the count).
        if let Some(n) = op_count {
            base.set(
                "operationcount",
                n.to_string(),
                &r.origin("ycsb_operation_count"),
            );
        }
        if timelimit > 0 {
            base.set(
                "maxexecutiontime",
                timelimit.to_string(),
                &r.origin("ycsb_timelimit"),
            );
        }
        for (flag, key) in [
            ("ycsb_requestdistribution", "requestdistribution"),
            ("ycsb_readproportion", "readproportion"),
            ("ycsb_updateproportion", "updateproportion"),
            ("ycsb_scanproportion", "scanproportion"),
        ] {
            if let Some(v) = r.value(flag) {
                if key.ends_with("proportion") {
                    r.f64(flag, 0.0, 1.0)?;
                }
                base.set(key, v, &r.origin(flag));
            }
        }
        for (index, w) in workloads.iter().enumerate() {
            for step in &steps {
                let mut b = base.clone();
                b.files = vec![w.clone()];
                b.set(
                    "threadcount",
                    step.threads.to_string(),
                    &r.origin("ycsb_threads_per_client"),
                );
                let total = match (step.qps_per_vm, total_qps) {
                    (Some(q), _) => Some(q as f64 * vm_count as f64),
                    (None, Some(t)) => Some(t),
                    (None, None) => None,
                };
                for (k, v) in &sojourn_params {
                    b.set(k, *v, &origin_sp);
                }
                // Last, as PKB applies them; a target here never meets a
                // split one (they are mutually exclusive, above).
                apply_parameters(&mut b, &run_params, &origin_rp);
                keyvalue_without_defaults(&mut b, &defaults)?;
                one_client_only(&b.properties()?, Phase::Run, vm_count, &r)?;
                let seed = seed_of(&b, ctx)?;
                let shares = total.map(|t| split_rate(t, vm_count));
                // A rate profile or trace in the run parameters: each
                // client offers its share of every segment.
                let shaped = ["rate", "trace"].iter().any(|k| b.get(k).is_some());
                let mut clients = Vec::new();
                for i in 0..vm_count as usize {
                    let mut c = b.clone();
                    if shaped && vm_count > 1 {
                        c.set(
                            "rate.share",
                            format!("{i}/{vm_count}"),
                            "the suite's share of the rate for this client",
                        );
                    }
                    if let Some(shares) = &shares {
                        let why = if step.qps_per_vm.is_some() {
                            r.origin("ycsb_threads_per_client")
                        } else {
                            r.origin("ycsb_target_qps")
                        };
                        c.set("target", fmt_rate(shares[i]), &why);
                    }
                    c.set(
                        "seed",
                        seed.wrapping_add(i as u64).to_string(),
                        "the suite's seed for this client",
                    );
                    clients.push(c);
                }
                let plan = validate(&clients[0], Phase::Run)?;
                for c in &clients[1..] {
                    validate(c, Phase::Run)?;
                }
                let mut target_total = None;
                for c in &clients {
                    let props = c.properties()?;
                    let p = Plan::from_properties(
                        &props,
                        Phase::Run,
                        sojourn_backends::property_prefixes(),
                    )?;
                    if let Some(t) = p.run.target() {
                        *target_total.get_or_insert(0.0) += t;
                    }
                }
                runs.push(stage(
                    Phase::Run,
                    w,
                    index,
                    plan.run.workers() as u64,
                    target_total,
                    vm_count,
                    clients,
                    &plan,
                ));
            }
        }
    }

    Ok(BenchPlan {
        file: ctx.file.to_string(),
        benchmark: ctx.benchmark.to_string(),
        db_url,
        instance: r.value("google_bigtable_instance_name").map(str::to_string),
        load,
        runs,
        reload_database,
        sleep_after_load,
        max_error_rate,
        fail_on_incomplete_loading,
        labels,
        unused,
        unknown_properties: unknown.into_iter().collect(),
    })
}

/// Refuse a stage of several client processes for a workload they would
/// run wrong ([`Workload::one_client_only`]).
fn one_client_only(props: &Properties, phase: Phase, vm_count: u64, r: &Reader<'_>) -> Result<()> {
    if vm_count <= 1 {
        return Ok(());
    }
    let plan = Plan::from_properties(props, phase, sojourn_backends::property_prefixes())?;
    if let Some(why) = plan.workload.one_client_only(phase) {
        bail!("{}: {why}: set num_vms: 1", r.origin(r.vm_flag()));
    }
    Ok(())
}

/// Drops from a key-value stage's recipe the settings of YCSB's core
/// workload that PKB's mapping set by default (`defaults`: key and
/// origin), which that workload does not read and refuses when given
/// ([`NOT_READ`](sojourn_core::workload::keyvalue::NOT_READ)); the same
/// keys from a flag the suite gives stay, and are refused naming it.
fn keyvalue_without_defaults(recipe: &mut Recipe, defaults: &[(&str, String)]) -> Result<()> {
    if sojourn_core::workload::keyvalue::is_keyvalue(&recipe.properties()?) {
        recipe
            .settings
            .retain(|s| !defaults.iter().any(|(k, o)| s.key == *k && s.origin == *o));
    }
    Ok(())
}

/// `ycsb_run_parameters` / `ycsb_load_parameters`: each `k=v` as `-p`,
/// with `threads` and `target` becoming YCSB's `-threads` / `-target` (per
/// client). A target of 0 is YCSB's "unthrottled".
fn apply_parameters(recipe: &mut Recipe, params: &[(&str, &str)], origin: &str) {
    for (k, v) in params {
        match *k {
            "threads" => recipe.set("threadcount", *v, origin),
            "target" if v.parse::<f64>().is_ok_and(|t| t == 0.0) => {
                recipe.settings.retain(|s| s.key != "target");
            }
            _ => recipe.set(k, *v, origin),
        }
    }
}

/// The stage's base seed: one the parameters give, or a fresh one.
fn seed_of(recipe: &Recipe, ctx: &mut MapContext<'_>) -> Result<u64> {
    match recipe.get("seed") {
        Some(s) => s
            .trim()
            .parse::<u64>()
            .map_err(|_| anyhow::anyhow!("seed = {s:?}: accepted: a whole number")),
        None => Ok((ctx.seed)()),
    }
}

fn fmt_rate(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{}", r as u64)
    } else {
        format!("{r}")
    }
}

#[allow(clippy::too_many_arguments)]
fn stage(
    phase: Phase,
    w: &WorkloadFile,
    index: usize,
    threads_per_client: u64,
    target_total: Option<f64>,
    vm_count: u64,
    clients: Vec<Recipe>,
    plan: &Plan,
) -> StagePlan {
    let workload_name = Path::new(&w.name)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| w.name.clone());
    let mut labels = BTreeMap::new();
    labels.insert("stage".to_string(), phase.name().to_string());
    labels.insert("workload_name".to_string(), workload_name.clone());
    labels.insert("workload_index".to_string(), index.to_string());
    labels.insert(
        "threads_per_client_vm".to_string(),
        threads_per_client.to_string(),
    );
    labels.insert(
        "clients".to_string(),
        (threads_per_client * vm_count).to_string(),
    );
    StagePlan {
        phase,
        workload_name,
        workload_index: index,
        threads_per_client,
        target_total,
        clients,
        labels,
        plan: plan.clone(),
    }
}

/// Flags whose names are close to one sojourn reads: likely typos.
pub fn suggestion(name: &str) -> Option<&'static str> {
    USED.iter()
        .copied()
        .map(|u| (u, strsim::normalized_damerau_levenshtein(name, u)))
        .filter(|(_, s)| *s >= 0.8)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(u, _)| u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(pairs: &[(&str, &str)]) -> Flags {
        pairs
            .iter()
            .enumerate()
            .map(|(i, (k, v))| {
                (
                    k.to_string(),
                    Flag {
                        value: v.to_string(),
                        origin: FlagOrigin::File {
                            file: "t.yaml".into(),
                            line: i + 1,
                        },
                    },
                )
            })
            .collect()
    }

    fn plan(pairs: &[(&str, &str)]) -> Result<BenchPlan> {
        let dir = tempfile::tempdir().unwrap();
        let mut next = 100u64;
        let mut seed = || {
            next += 1000;
            next
        };
        map(
            &flags(pairs),
            &mut MapContext {
                dir: dir.path(),
                suite: "s",
                file: "t.yaml",
                benchmark: "cloud_bigtable_ycsb",
                db: None,
                seed: &mut seed,
            },
        )
    }

    fn prop(r: &Recipe, key: &str) -> Option<String> {
        r.properties().unwrap().get(key).map(str::to_string)
    }

    #[test]
    fn walkthrough_flags_map_onto_properties() {
        let p = plan(&[
            ("machine_type", "n1-highcpu-16"),
            ("num_vms", "4"),
            ("bigtable_node_count", "3"),
            ("ycsb_field_count", "1"),
            ("ycsb_field_length", "1024"),
            ("ycsb_record_count", "1001"),
            (
                "ycsb_run_parameters",
                "target=6000,readallfields=false,requestdistribution=zipfian",
            ),
            ("ycsb_threads_per_client", "32"),
            ("ycsb_operation_count", "2147483647"),
            ("ycsb_timelimit", "600"),
            ("ycsb_workload_files", "workloada"),
            ("metadata", "experiment:throughput_test"),
            ("sojourn_db", "null:"),
        ])
        .unwrap();
        assert_eq!(p.labels["vm_count"], "4");
        assert_eq!(p.db_url, "null:");
        assert_eq!(p.labels["experiment"], "throughput_test");
        assert_eq!(p.labels["machine_type"], "n1-highcpu-16");
        assert_eq!(p.labels["bigtable_node_count"], "3");
        let unused: Vec<&str> = p.unused.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(unused, ["bigtable_node_count", "machine_type"]);

        let load = p.load.as_ref().unwrap();
        assert_eq!(load.clients.len(), 4);
        // 1001 records over 4 clients: 251 + 250 + 250 + 250, contiguous.
        let ranges: Vec<(String, String)> = load
            .clients
            .iter()
            .map(|c| {
                (
                    prop(c, "insertstart").unwrap(),
                    prop(c, "insertcount").unwrap(),
                )
            })
            .collect();
        assert_eq!(
            ranges,
            [
                ("0".into(), "251".into()),
                ("251".into(), "250".into()),
                ("501".into(), "250".into()),
                ("751".into(), "250".into())
            ]
        );
        assert_eq!(prop(&load.clients[0], "threadcount").unwrap(), "32");
        assert_eq!(prop(&load.clients[0], "fieldcount").unwrap(), "1");
        assert_eq!(prop(&load.clients[0], "fieldlength").unwrap(), "1024");
        assert_eq!(prop(&load.clients[0], "recordcount").unwrap(), "1001");

        assert_eq!(p.runs.len(), 1);
        let run = &p.runs[0];
        assert_eq!(run.labels["stage"], "run");
        assert_eq!(run.labels["workload_name"], "workloada");
        assert_eq!(run.labels["threads_per_client_vm"], "32");
        assert_eq!(run.labels["clients"], "128");
        // target=6000 is per VM: 4 clients offer 24000 in total.
        assert_eq!(run.target_total, Some(24000.0));
        for c in &run.clients {
            assert_eq!(prop(c, "target").unwrap(), "6000");
            assert_eq!(prop(c, "operationcount").unwrap(), "2147483647");
            assert_eq!(prop(c, "maxexecutiontime").unwrap(), "600");
            assert_eq!(prop(c, "readallfields").unwrap(), "false");
            assert_eq!(prop(c, "requestdistribution").unwrap(), "zipfian");
        }
        // Every client draws its own stream.
        let seeds: BTreeSet<String> = run
            .clients
            .iter()
            .map(|c| prop(c, "seed").unwrap())
            .collect();
        assert_eq!(seeds.len(), 4);
    }

    #[test]
    fn staircase_with_rates_and_total_target() {
        let p = plan(&[
            ("ycsb_threads_per_client", "1:100,8:250"),
            ("ycsb_client_vms", "2"),
            ("ycsb_workload_files", "workloadc,workloadb"),
            ("ycsb_skip_load_stage", "true"),
            ("sojourn_db", "null:"),
        ])
        .unwrap();
        assert!(p.load.is_none());
        assert_eq!(p.runs.len(), 4);
        let got: Vec<(usize, u64, Option<f64>)> = p
            .runs
            .iter()
            .map(|s| (s.workload_index, s.threads_per_client, s.target_total))
            .collect();
        assert_eq!(
            got,
            [
                (0, 1, Some(200.0)),
                (0, 8, Some(500.0)),
                (1, 1, Some(200.0)),
                (1, 8, Some(500.0))
            ]
        );
        assert_eq!(prop(&p.runs[1].clients[1], "target").unwrap(), "250");
        // PKB's default time limit and field count apply.
        assert_eq!(
            prop(&p.runs[0].clients[0], "maxexecutiontime").unwrap(),
            "1800"
        );
        assert_eq!(prop(&p.runs[0].clients[0], "fieldcount").unwrap(), "10");

        let p = plan(&[
            ("ycsb_target_qps", "1001"),
            ("num_vms", "2"),
            ("ycsb_skip_load_stage", "true"),
            ("sojourn_db", "null:"),
        ])
        .unwrap();
        let t: Vec<String> = p.runs[0]
            .clients
            .iter()
            .map(|c| prop(c, "target").unwrap())
            .collect();
        assert_eq!(t, ["501", "500"]);
        assert_eq!(p.runs[0].target_total, Some(1001.0));
        // Default workload files: workloada and workloadb.
        assert_eq!(p.runs.len(), 2);
    }

    #[test]
    fn bad_values_name_the_flag_and_where_it_was_set() {
        let e = plan(&[("ycsb_field_count", "ten")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.yaml:1"), "{e}");
        assert!(e.contains("ycsb_field_count"), "{e}");
        assert!(e.contains("accepted"), "{e}");

        let e = plan(&[("ycsb_threads_per_client", "4:x")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("threads:qps_per_vm"), "{e}");

        let e = plan(&[("ycsb_workload_files", "workloadz")]).unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("workloadz"), "{e}");
        assert!(e.contains("workloada"), "{e}");

        let e = format!(
            "{:#}",
            plan(&[("ycsb_run_parameters", "readproportion=2")]).unwrap_err()
        );
        assert!(e.contains("t.yaml:1 (ycsb_run_parameters)"), "{e}");
        assert!(e.contains("readproportion"), "{e}");

        let e = plan(&[("ycsb_dynamic_load", "true")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("sojourn capacity"), "{e}");
        assert!(plan(&[("ycsb_dynamic_load", "false")]).is_ok());

        let e = plan(&[("num_vms", "2"), ("sojourn_db", "memory:")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory:"), "{e}");

        let e = plan(&[
            ("ycsb_run_parameters", "target=5"),
            ("ycsb_threads_per_client", "2:10"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("mutually exclusive"), "{e}");
    }

    #[test]
    fn parameters_unknown_keys_and_zero_target() {
        let p = plan(&[
            (
                "ycsb_run_parameters",
                "target=0,threads=3,readalfields=false",
            ),
            ("ycsb_load_parameters", "threads=2"),
            ("ycsb_record_count", "10"),
            ("sojourn_db", "null:"),
        ])
        .unwrap();
        let run = &p.runs[0].clients[0];
        assert_eq!(prop(run, "target"), None);
        assert_eq!(prop(run, "threadcount").unwrap(), "3");
        assert_eq!(p.runs[0].target_total, None);
        assert_eq!(
            prop(&p.load.as_ref().unwrap().clients[0], "threadcount").unwrap(),
            "2"
        );
        assert!(
            p.unknown_properties
                .iter()
                .any(|u| u.contains("readalfields")),
            "{:?}",
            p.unknown_properties
        );
        // A seed in the parameters is the stage's: client i gets seed + i.
        let p = plan(&[
            ("ycsb_run_parameters", "seed=42"),
            ("num_vms", "3"),
            ("sojourn_db", "null:"),
            ("ycsb_skip_load_stage", "true"),
        ])
        .unwrap();
        let seeds: Vec<String> = p.runs[0]
            .clients
            .iter()
            .map(|c| prop(c, "seed").unwrap())
            .collect();
        assert_eq!(seeds, ["42", "43", "44"]);
    }

    #[test]
    fn db_from_the_command_line_wins_and_folder_paths_are_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut seed = || 1u64;
        let f = flags(&[
            ("sojourn_db", "sqlite:x.sqlite"),
            ("ycsb_skip_load_stage", "true"),
        ]);
        let mut ctx = MapContext {
            dir: dir.path(),
            suite: "s",
            file: "t.yaml",
            benchmark: "b_ycsb",
            db: None,
            seed: &mut seed,
        };
        let p = map(&f, &mut ctx).unwrap();
        assert_eq!(
            p.db_url,
            format!("sqlite:{}", dir.path().join("x.sqlite").display())
        );
        ctx.db = Some("null:");
        assert_eq!(map(&f, &mut ctx).unwrap().db_url, "null:");
        // On the command line (--flag), a relative path stays as given.
        let mut f = f.clone();
        f.get_mut("sojourn_db").unwrap().origin = FlagOrigin::CommandLine;
        ctx.db = None;
        assert_eq!(map(&f, &mut ctx).unwrap().db_url, "sqlite:x.sqlite");
    }

    #[test]
    fn keyvalue_stages_run_on_one_client() {
        for (flag, skip) in [
            ("num_vms", "ycsb_skip_run_stage"),
            ("ycsb_client_vms", "ycsb_skip_load_stage"),
        ] {
            let e = plan(&[
                ("ycsb_workload_files", "keyvalue"),
                (flag, "2"),
                (skip, "true"),
                ("sojourn_db", "null:"),
            ])
            .unwrap_err()
            .to_string();
            assert!(
                e.contains(&format!("t.yaml:2 ({flag})")) && e.contains("set num_vms: 1"),
                "{e}"
            );
        }
        let p = plan(&[
            ("ycsb_workload_files", "keyvalue"),
            ("num_vms", "1"),
            ("sojourn_db", "null:"),
        ])
        .unwrap();
        // The writer and reader pools' connections, not the staircase's.
        assert_eq!(p.runs[0].threads_per_client, 10);
        assert_eq!(p.runs[0].plan.schema.table, "keyvalue");
        // PKB's defaults for YCSB's fieldcount and -threads are left out.
        for c in [&p.load.as_ref().unwrap().clients[0], &p.runs[0].clients[0]] {
            assert_eq!(prop(c, "fieldcount"), None);
            assert_eq!(prop(c, "threadcount"), None);
        }
        // The same keys given as flags are the user's, and refused.
        for (flag, key, counterpart) in [
            ("ycsb_record_count", "recordcount", "num_unique_keys"),
            ("ycsb_threads_per_client", "threadcount", "num_threads_read"),
            ("ycsb_field_count", "fieldcount", "value_size"),
        ] {
            let e = plan(&[
                ("ycsb_workload_files", "keyvalue"),
                (flag, "4"),
                ("sojourn_db", "null:"),
            ])
            .unwrap_err()
            .to_string();
            assert!(
                e.contains(&format!("t.yaml:2 ({flag}): {key} = '4'")) && e.contains(counterpart),
                "{e}"
            );
        }
    }

    #[test]
    fn splits_and_suggestions() {
        assert_eq!(split(10, 3), [4, 3, 3]);
        assert_eq!(split(2, 4), [1, 1, 0, 0]);
        assert_eq!(split_rate(0.5, 2), [0.25, 0.25]);
        assert_eq!(suggestion("ycsb_recordcount"), Some("ycsb_record_count"));
        assert_eq!(suggestion("machine_type"), None);
    }
}
