//! One client of a script run: its variables and random numbers, how it
//! picks a script by weight, and how it runs one transaction (each SQL
//! command measured, `\if` branches, `\sleep`, `\gset`, retries of a
//! conflict) or, in a load, one unit of pgbench's accounts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::Status;
use crate::executor::{Meter, Step};
use crate::op::OpKind;
use crate::workload::phase::Phase;

use super::compile::{Amount, Command, Keep, Part, Protocol, Sql};
use super::config::{Compiled, Compiledscript, ScriptConfig};
use super::connection::{Kept, KeptResult, Params, Query, ScriptConnection};
use super::prng::Prng;
use super::tables::PgbenchTables;
use super::value::{Value, Vars};
use super::{compile, expr};

/// What every connection of a phase shares.
#[derive(Debug)]
pub struct Shared {
    compiled: Arc<Compiled>,
    protocol: Protocol,
    /// The variables every client starts with (`-D`, `:scale`,
    /// `:default_seed`, `:random_seed`).
    start: Vars,
    /// Each client's generator state, drawn from the seed as pgbench
    /// draws them.
    clients: Vec<Prng>,
    /// The weights' running totals, for choosing a script.
    cumulative: Vec<u64>,
    /// Load: the next unit of scale to insert, from 1.
    next_branch: crate::generator::Counter,
    scale: i64,
    client_offset: u64,
    max_tries: u32,
    latency_limit: Option<Duration>,
}

impl Shared {
    pub(super) fn new(cfg: &ScriptConfig, scale: i64, seed: u64, workers: usize) -> Shared {
        let c = &cfg.compiled;
        let mut start = Vars::named(&c.names);
        // pgbench draws each client's state, then the default seed, from
        // one sequence of the run's seed.
        let mut base = Prng::new(seed);
        let clients = (0..workers).map(|_| Prng::new(base.next_u64())).collect();
        start.set(c.scale, Value::Int(scale));
        start.set(c.random_seed, Value::Int(seed as i64));
        let defined = |name: &str| cfg.defines.iter().any(|(n, _)| n == name);
        if !defined("default_seed") {
            start.set(c.default_seed, Value::Int(base.next_u64() as i64));
        }
        for (name, value) in &cfg.defines {
            if let Some(slot) = c.names.iter().position(|n| n == name) {
                start.set_text(slot, value);
            }
        }
        let mut total = 0;
        let cumulative = c
            .scripts
            .iter()
            .map(|s| {
                total += u64::from(s.weight);
                total
            })
            .collect();
        Shared {
            compiled: Arc::clone(&cfg.compiled),
            protocol: cfg.protocol,
            start,
            clients,
            cumulative,
            next_branch: crate::generator::Counter::new(1),
            scale,
            client_offset: cfg.client_offset,
            max_tries: cfg.max_tries,
            latency_limit: cfg.latency_limit,
        }
    }
}

/// One client: its variables and generators, and the buffers its SQL is
/// built in.
pub struct ScriptWorker {
    shared: Arc<Shared>,
    phase: Phase,
    vars: Vars,
    rng: Prng,
    /// Chooses among several scripts.
    choose: Prng,
    text: String,
    /// Parameter texts, all in `text_params`, by range.
    text_params: String,
    ranges: Vec<Option<(usize, usize)>>,
    kept: Kept,
    client: usize,
    /// In a pipeline the connection runs (`\startpipeline`): commands are
    /// queued, each with its kind and when it was queued.
    pipelined: bool,
    queued: Vec<(OpKind, Instant)>,
}

impl ScriptWorker {
    pub(super) fn new(shared: &Arc<Shared>, phase: Phase, client: usize) -> ScriptWorker {
        let mut vars = shared.start.clone();
        let id = shared.client_offset + client as u64;
        vars.set(shared.compiled.client_id, Value::Int(id as i64));
        let rng = shared.clients[client].clone();
        // A stream apart from the client's own, so that choosing a script
        // does not move the numbers its `random()` calls draw.
        let mut choose = rng.clone();
        choose = Prng::new(choose.next_u64() ^ 0x5c72_1b3e_a9d0_4f61);
        ScriptWorker {
            shared: Arc::clone(shared),
            phase,
            vars,
            rng,
            choose,
            text: String::new(),
            text_params: String::new(),
            ranges: Vec::new(),
            kept: Kept::default(),
            client,
            pipelined: false,
            queued: Vec::new(),
        }
    }

    fn pick(&mut self) -> usize {
        let c = &self.shared.cumulative;
        if c.len() == 1 {
            return 0;
        }
        let total = *c.last().unwrap_or(&1);
        let w = self.choose.range(0, total - 1);
        c.iter().position(|&t| w < t).unwrap_or(0)
    }

    async fn load_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let branch = self.shared.next_branch.next();
        if branch > self.shared.scale as u64 {
            return;
        }
        let text = PgbenchTables::accounts_batch(branch, conn.dialect());
        let q = Query {
            text: &text,
            params: Params::NONE,
            protocol: Protocol::Simple,
            id: usize::MAX,
            keep: None,
        };
        let t = m.start();
        let status = conn.execute(&q, &mut self.kept).await;
        m.record_on(conn, OpKind::Insert, status, t);
    }

    /// One transaction: a script chosen by weight, run to its end or its
    /// first failure; one that conflicted (a serialization failure, a
    /// deadlock) tried again as pgbench's `--max-tries` says, with the
    /// random numbers its first try drew, and timed from its first try.
    async fn run_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let shared = Arc::clone(&self.shared);
        let index = self.pick();
        let script = &shared.compiled.scripts[index];
        let t0 = m.start();
        let first_draws = (shared.max_tries != 1).then(|| self.rng.clone());
        let mut tries = 1;
        let mut try_start = t0;
        let (failed, any_sql) = loop {
            let (failed, any_sql, conflicted) = self
                .try_once(conn, m, script, index, &shared.compiled.names)
                .await;
            let again = conflicted
                && (shared.max_tries == 0 || tries < shared.max_tries)
                && shared
                    .latency_limit
                    .is_none_or(|limit| m.intended_start().elapsed() < limit);
            match (again, &first_draws) {
                (true, Some(draws)) => {
                    conn.abandon_transaction().await;
                    m.record(script.retry, Status::Ok, try_start);
                    self.rng = draws.clone();
                    tries += 1;
                    try_start = m.start();
                }
                _ => break (failed, any_sql),
            }
        };
        match failed {
            None => m.record(script.kind, Status::Ok, t0),
            Some((status, Some(why))) => {
                if any_sql {
                    conn.abandon_transaction().await;
                }
                m.record_because(script.kind, status, t0, why);
            }
            Some((status, None)) => {
                conn.abandon_transaction().await;
                m.record_whole(script.kind, status, t0);
            }
        }
        if tries > 1 {
            m.record(script.retried, Status::Ok, t0);
        }
    }

    /// One try of `script`: its failure if it failed (the status, and
    /// the words where the client found it wrong rather than the
    /// database), whether it ran any SQL, and whether the failure was a
    /// conflict worth another try.
    async fn try_once<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        m: &mut Meter,
        script: &Compiledscript,
        index: usize,
        names: &[String],
    ) -> (Option<(Status, Option<String>)>, bool, bool) {
        let mut pc = 0;
        let mut failed: Option<(Status, Option<String>)> = None;
        let mut any_sql = false;
        let mut conflicted = false;
        self.pipelined = false;
        self.queued.clear();
        while pc < script.commands.len() {
            match &script.commands[pc] {
                Command::Sql(sql) => {
                    let (kind, id) = script.statements[pc].unwrap_or((script.kind, 0));
                    any_sql = true;
                    let t = m.start();
                    let status = self.execute(conn, sql, id).await;
                    if status.is_ok() && self.pipelined {
                        self.queued.push((kind, t));
                        pc += 1;
                        continue;
                    }
                    if !status.is_ok() {
                        conflicted = conn.conflicted();
                    }
                    m.record_on(conn, kind, status, t);
                    if !status.is_ok() {
                        failed = Some((status, None));
                        break;
                    }
                    if let Some(keep) = &sql.keep {
                        if let Err(why) = self.keep(keep, names) {
                            failed = Some((Status::UnexpectedState, Some(why)));
                            break;
                        }
                    }
                    pc += 1;
                }
                Command::Set { slot, expr } => {
                    match self.eval(expr, index, pc) {
                        Ok(v) => self.vars.set(*slot, v),
                        Err(why) => {
                            failed = Some((Status::BadRequest, Some(self.why(script, pc, why))));
                            break;
                        }
                    }
                    pc += 1;
                }
                Command::Sleep { amount, unit_us } => {
                    let n = match amount {
                        Amount::Count(n) => Ok(*n),
                        Amount::Var(slot) => self.sleep_count(*slot),
                    };
                    match n {
                        Ok(n) => {
                            let us = n.saturating_mul(*unit_us);
                            if us > 0 {
                                tokio::time::sleep(Duration::from_micros(us as u64)).await;
                            }
                        }
                        Err(why) => {
                            failed = Some((Status::BadRequest, Some(self.why(script, pc, why))));
                            break;
                        }
                    }
                    pc += 1;
                }
                Command::If { expr, next } => match self.eval(expr, index, pc) {
                    Ok(v) if v.truth() => pc += 1,
                    Ok(_) => pc = self.enter(script, *next, index, &mut failed),
                    Err(why) => {
                        failed = Some((Status::BadRequest, Some(self.why(script, pc, why))));
                        break;
                    }
                },
                // Reached after a branch that was taken: past the block.
                Command::Elif { end, .. } | Command::Else { end } => pc = end + 1,
                Command::EndIf => pc += 1,
                Command::StartPipeline => {
                    self.pipelined = conn.pipelines();
                    pc += 1;
                }
                Command::EndPipeline => {
                    if std::mem::take(&mut self.pipelined) {
                        let (done, status) = conn.end_pipeline().await;
                        if !status.is_ok() {
                            conflicted = conn.conflicted();
                        }
                        let end = Instant::now();
                        // The failed command's reason goes with it (the
                        // last one where the whole failed), the commands
                        // the server skipped after it are not counted.
                        let failed_at = (!status.is_ok())
                            .then(|| done.min(self.queued.len().saturating_sub(1)));
                        for (i, (kind, t)) in self.queued.drain(..).enumerate() {
                            match failed_at {
                                Some(f) if i == f => m.record_span_on(conn, kind, status, t, end),
                                Some(f) if i > f => break,
                                _ => m.record_span(kind, Status::Ok, t, end),
                            }
                        }
                        if !status.is_ok() {
                            failed = Some((status, None));
                            break;
                        }
                    }
                    pc += 1;
                }
            }
            if failed.is_some() {
                break;
            }
        }
        (failed, any_sql, conflicted)
    }

    /// Enter the branch at `at` from a condition that failed: test an
    /// `\elif`, go into an `\else` or past an `\endif`. Returns where to
    /// go on.
    fn enter(
        &mut self,
        script: &Compiledscript,
        mut at: usize,
        index: usize,
        failed: &mut Option<(Status, Option<String>)>,
    ) -> usize {
        loop {
            match &script.commands[at] {
                Command::Elif { expr, next, .. } => match self.eval(expr, index, at) {
                    Ok(v) if v.truth() => return at + 1,
                    Ok(_) => at = *next,
                    Err(why) => {
                        *failed = Some((Status::BadRequest, Some(self.why(script, at, why))));
                        return script.commands.len();
                    }
                },
                _ => return at + 1,
            }
        }
    }

    fn why(&self, script: &Compiledscript, pc: usize, why: String) -> String {
        format!(
            "{why} (client {}, script {}, command {})",
            self.client,
            script.name,
            pc + 1
        )
    }

    fn eval(&mut self, e: &expr::Expr, script: usize, command: usize) -> Result<Value, String> {
        let debug = |v: &Value| {
            eprintln!(
                "debug(script={script},command={}): {}",
                command + 1,
                debug_text(v)
            );
        };
        let mut env = expr::Env {
            vars: &mut self.vars,
            rng: &mut self.rng,
            debug: &debug,
        };
        e.eval(&mut env)
    }

    /// `\sleep :var`: the variable's text read as a whole number, as C's
    /// `atoi` reads it.
    fn sleep_count(&mut self, slot: usize) -> Result<i64, String> {
        let mut text = String::new();
        if !self.vars.write_text(slot, &mut text) {
            return Err(format!(
                "sleep: undefined variable \"{}\"",
                self.vars.name(slot)
            ));
        }
        let t = text.trim_start();
        let end = t
            .char_indices()
            .find(|&(k, c)| !(c.is_ascii_digit() || (k == 0 && (c == '-' || c == '+'))))
            .map_or(t.len(), |(k, _)| k);
        match t[..end].parse::<i64>() {
            Ok(n) => Ok(n),
            Err(_) if t.starts_with(|c: char| c.is_ascii_digit()) => Ok(0),
            Err(_) => Err(format!(
                "sleep: invalid sleep time \"{text}\" for variable \"{}\"",
                self.vars.name(slot)
            )),
        }
    }

    /// Run one SQL command, its variables written in or sent as
    /// parameters; in a pipeline, queue it.
    async fn execute<C: ScriptConnection>(&mut self, conn: &mut C, sql: &Sql, id: usize) -> Status {
        let protocol = self.shared.protocol;
        self.text.clear();
        self.text_params.clear();
        self.ranges.clear();
        if protocol == Protocol::Simple {
            for part in &sql.parts {
                match part {
                    Part::Text(t) => self.text.push_str(t),
                    Part::Var(slot) => {
                        if !self.vars.write_text(*slot, &mut self.text) {
                            // pgbench leaves an undefined `:name` as is.
                            self.text.push(':');
                            self.text.push_str(self.vars.name(*slot));
                        }
                    }
                }
            }
        } else {
            for &slot in &sql.params {
                let start = self.text_params.len();
                let set = self.vars.write_text(slot, &mut self.text_params);
                self.ranges
                    .push(set.then_some((start, self.text_params.len())));
            }
        }
        let params = Params {
            text: &self.text_params,
            ranges: &self.ranges,
        };
        let q = Query {
            text: match protocol {
                Protocol::Simple => &self.text,
                _ if conn.dialect().positional() => &sql.positional,
                _ => &sql.numbered,
            },
            params,
            protocol,
            id,
            keep: sql.keep.as_ref(),
        };
        if self.pipelined {
            conn.queue(&q).await
        } else {
            conn.execute(&q, &mut self.kept).await
        }
    }

    /// Set variables from what a command kept.
    fn keep(&mut self, keep: &Keep, names: &[String]) -> Result<(), String> {
        let (prefix, results): (&str, &[KeptResult]) = match keep {
            Keep::One(prefix) => {
                let last = self.kept.results.last();
                let rows = last.map_or(0, |r| r.rows);
                if rows != 1 {
                    return Err(format!("\\gset expected one row, got {rows}"));
                }
                (prefix, std::slice::from_ref(last.expect("one result")))
            }
            Keep::All(prefix) => (prefix, &self.kept.results),
            Keep::Rows => return Ok(()),
        };
        for r in results {
            let Some(row) = &r.last_row else { continue };
            for (col, v) in r.columns.iter().zip(row) {
                let name = format!("{prefix}{col}");
                if !compile::valid_name(&name) {
                    return Err(format!("invalid variable name: \"{name}\""));
                }
                if let Some(slot) = names.iter().position(|n| *n == name) {
                    self.vars.set_text(slot, v.as_deref().unwrap_or(""));
                }
            }
        }
        Ok(())
    }
}

/// `debug()`'s words for a value.
fn debug_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Int(i) => format!("int {i}"),
        Value::Double(_) => format!("double {}", v.text()),
    }
}

impl<C: ScriptConnection> Step<C> for ScriptWorker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self.phase {
            Phase::Load => self.load_one(conn, meter).await,
            Phase::Run => self.run_one(conn, meter).await,
        }
    }
}

impl std::fmt::Debug for ScriptWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptWorker")
            .field("client", &self.client)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::command_line as props;
    use crate::workload::kind::Kind;

    #[test]
    fn clients_are_numbered_across_shares_and_seeded_as_pgbench_seeds_them() {
        let p = props(&[("script", "builtin=select-only")]);
        let c = ScriptConfig::from_properties(&p).unwrap();
        assert_eq!(
            c.share_properties(2, 4, 16),
            [("script.client_offset".to_string(), "32".to_string())]
        );
        let p = props(&[
            ("script", "builtin=select-only"),
            ("script.client_offset", "32"),
        ]);
        let c = ScriptConfig::from_properties(&p).unwrap();
        let shared = Arc::new(Shared::new(&c, 3, 42, 2));
        let mut w = ScriptWorker::new(&shared, Phase::Run, 1);
        assert_eq!(w.vars.value(c.compiled.client_id), Ok(Value::Int(33)));
        assert_eq!(w.vars.value(c.compiled.scale), Ok(Value::Int(3)));
        // pgbench --random-seed=42: clients' states first, then the
        // default seed, the base sequence's fourth draw after three
        // clients (here two, so its third).
        let mut base = Prng::new(42);
        let (_, c1) = (base.next_u64(), base.next_u64());
        assert_eq!(w.rng, Prng::new(c1));
        assert_eq!(
            w.vars.value(c.compiled.default_seed),
            Ok(Value::Int(base.next_u64() as i64))
        );
    }
}
