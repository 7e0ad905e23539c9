//! The stages of one benchmark: the load (the first workload file, its
//! records split over the clients) and the runs (every workload file, every
//! step of the thread staircase), each a property [`Recipe`] per client,
//! validated as a plan before anything runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Result};
use sojourn_core::plan::Plan;
use sojourn_core::properties::Properties;
use sojourn_core::workload::{Phase, Workload};
use sojourn_session::share::{split, split_rate, Recipe, WorkloadFile};

use super::flags::{staircase, Reader, Step};
use super::{MapContext, StagePlan};

/// The recipe both phases start from, and what every stage is checked by.
pub(super) struct Stages<'r, 'a> {
    r: &'r Reader<'a>,
    vm_count: u64,
    /// What both phases set, in PKB's order.
    common: Recipe,
    /// Settings PKB passes on every command line whether or not the flag
    /// was given (key and origin): a key-value stage, which reads neither,
    /// drops these.
    defaults: Vec<(&'static str, String)>,
    sojourn_params: Vec<(&'a str, &'a str)>,
    origin_sp: String,
    /// Property names no stage's plan reads, for warnings.
    pub(super) unknown: BTreeSet<String>,
}

impl<'r, 'a> Stages<'r, 'a> {
    pub(super) fn new(r: &'r Reader<'a>, vm_count: u64) -> Result<Self> {
        let mut common = Recipe {
            files: Vec::new(),
            settings: Vec::new(),
        };
        if let Some(n) = r.u64("ycsb_record_count", u64::MAX)?.filter(|&n| n > 0) {
            common.set("recordcount", n.to_string(), &r.origin("ycsb_record_count"));
        }
        let mut defaults = Vec::new();
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
        Ok(Stages {
            r,
            vm_count,
            common,
            defaults,
            sojourn_params: r.params("sojourn_parameters")?,
            origin_sp: r.origin("sojourn_parameters"),
            unknown: BTreeSet::new(),
        })
    }

    /// The client's plan, its unread property names noted.
    fn validate(&mut self, recipe: &Recipe, phase: Phase) -> Result<Plan> {
        let props = recipe.properties()?;
        let plan = Plan::from_properties(&props, phase, sojourn_backends::property_prefixes())?;
        for u in &plan.unknown {
            self.unknown.insert(u.to_string());
        }
        Ok(plan)
    }

    /// The first client's plan, the others checked as well.
    fn validate_all(&mut self, clients: &[Recipe], phase: Phase) -> Result<Plan> {
        let plan = self.validate(&clients[0], phase)?;
        for c in &clients[1..] {
            self.validate(c, phase)?;
        }
        Ok(plan)
    }

    /// The load stage of workload file `w`.
    pub(super) fn load(&mut self, w: &WorkloadFile, ctx: &mut MapContext<'_>) -> Result<StagePlan> {
        let (r, vm_count) = (self.r, self.vm_count);
        let mut base = self.common.clone();
        base.files = vec![w.clone()];
        let threads = r.u64("ycsb_preload_threads", 100_000)?.unwrap_or(32).max(1);
        base.set(
            "threadcount",
            threads.to_string(),
            &r.origin("ycsb_preload_threads"),
        );
        for (k, v) in &self.sojourn_params {
            base.set(k, *v, &self.origin_sp);
        }
        let origin_lp = r.origin("ycsb_load_parameters");
        apply_parameters(&mut base, &r.params("ycsb_load_parameters")?, &origin_lp);
        keyvalue_without_defaults(&mut base, &self.defaults)?;
        // The key range split over the clients, so their loads never
        // insert the same key.
        let props = base.properties()?;
        one_client_only(&props, Phase::Load, vm_count, r)?;
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
        let plan = self.validate_all(&clients, Phase::Load)?;
        let threads_per_client = plan.run.workers() as u64;
        let target_total = plan.run.target().map(|t| t * vm_count as f64);
        Ok(stage(
            Phase::Load,
            w,
            0,
            threads_per_client,
            target_total,
            vm_count,
            clients,
            &plan,
        ))
    }

    /// The run stages: every workload file, every step of the staircase.
    pub(super) fn runs(
        &mut self,
        workloads: &[WorkloadFile],
        ctx: &mut MapContext<'_>,
    ) -> Result<Vec<StagePlan>> {
        let r = self.r;
        let steps = staircase(r)?;
        let params = r.params("ycsb_run_parameters")?;
        let params_target = params.iter().any(|(k, _)| *k == "target");
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
        let base = self.run_base()?;
        let mut runs = Vec::new();
        for (index, w) in workloads.iter().enumerate() {
            for step in &steps {
                let mut b = base.clone();
                b.files = vec![w.clone()];
                runs.push(self.run(b, (index, w), step, total_qps, &params, ctx)?);
            }
        }
        Ok(runs)
    }

    /// What every run stage sets: the count, the time limit, the mix.
    fn run_base(&self) -> Result<Recipe> {
        let r = self.r;
        let timelimit = r.u64("ycsb_timelimit", 1_000_000_000)?.unwrap_or(1800);
        let op_count = r.u64("ycsb_operation_count", u64::MAX)?.filter(|&n| n > 0);
        let mut base = self.common.clone();
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
        Ok(base)
    }

    /// One run stage: workload file `w` (the `index`th) at one `step`.
    fn run(
        &mut self,
        mut b: Recipe,
        (index, w): (usize, &WorkloadFile),
        step: &Step,
        total_qps: Option<f64>,
        params: &[(&str, &str)],
        ctx: &mut MapContext<'_>,
    ) -> Result<StagePlan> {
        let (r, vm_count) = (self.r, self.vm_count);
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
        for (k, v) in &self.sojourn_params {
            b.set(k, *v, &self.origin_sp);
        }
        // Last, as PKB applies them; a target here never meets a split
        // one (they are mutually exclusive, in `runs`).
        apply_parameters(&mut b, params, &r.origin("ycsb_run_parameters"));
        keyvalue_without_defaults(&mut b, &self.defaults)?;
        one_client_only(&b.properties()?, Phase::Run, vm_count, r)?;
        let seed = seed_of(&b, ctx)?;
        let shares = total.map(|t| split_rate(t, vm_count));
        // A rate profile or trace in the run parameters: each client
        // offers its share of every segment.
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
        let plan = self.validate_all(&clients, Phase::Run)?;
        let mut target_total = None;
        for c in &clients {
            let props = c.properties()?;
            let p =
                Plan::from_properties(&props, Phase::Run, sojourn_backends::property_prefixes())?;
            if let Some(t) = p.run.target() {
                *target_total.get_or_insert(0.0) += t;
            }
        }
        Ok(stage(
            Phase::Run,
            w,
            index,
            plan.run.workers() as u64,
            target_total,
            vm_count,
            clients,
            &plan,
        ))
    }
}

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
