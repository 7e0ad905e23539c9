//! Reading runs back: listing with filters, resolving what a user names (an
//! id or a unique prefix of one, a run URI and its stages, `last`) to
//! runs, and loading a run whole, with its histograms, or its client
//! processes merged.

use super::*;

impl Store {
    /// The runs matching `filter`, oldest first (with a limit: the newest
    /// `limit`, still oldest first).
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        self.mark_dead_runs()?;
        let mut sql = format!("SELECT {RUN_COLUMNS} FROM runs r WHERE 1 = 1");
        let mut params = Vec::new();
        if let Some(p) = &filter.phase {
            sql.push_str(" AND phase = ?");
            params.push(text(p));
        }
        if let Some(s) = filter.status {
            sql.push_str(" AND status = ?");
            params.push(text(s.as_str()));
        }
        if let Some(u) = &filter.run_uri {
            sql.push_str(" AND run_uri = ?");
            params.push(text(u));
        }
        if let Some(t) = filter.since {
            sql.push_str(" AND started_unix >= ?");
            params.push(Value::Real(unix(t)));
        }
        if let Some(t) = filter.until {
            sql.push_str(" AND started_unix < ?");
            params.push(Value::Real(unix(t)));
        }
        for (k, v) in &filter.labels {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.id \
                 AND l.key = ? AND l.value = ?)",
            );
            params.push(text(k));
            params.push(text(v));
        }
        sql.push_str(" ORDER BY started_unix DESC, id DESC");
        let rows = self.read(|| "listing runs".into(), &sql, &params)?.rows;
        let mut out = Vec::new();
        for row in rows {
            let s = self.summary_from_row(&row)?;
            if let Some(w) = &filter.workload {
                if !s.meta.workloads.iter().any(|n| n == w) {
                    continue;
                }
            }
            if let Some(b) = &filter.backend {
                if !s.meta.backend.contains(b.as_str()) {
                    continue;
                }
            }
            out.push(s);
            if filter.limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        out.reverse();
        for s in &mut out {
            self.fill_side_tables(s)?;
        }
        Ok(out)
    }

    fn fill_side_tables(&self, s: &mut RunSummary) -> Result<(), StoreError> {
        let id = s.meta.id.0.clone();
        for (table, which) in [("run_properties", 0), ("run_labels", 1)] {
            let rows = self
                .read(
                    || format!("reading {table} of run {id}"),
                    &format!("SELECT key, value FROM {table} WHERE run_id = ? ORDER BY key"),
                    &[text(&id)],
                )?
                .rows;
            // Redacted on reading too: a store written by an older sojourn
            // may hold a label or property value in clear.
            let map: BTreeMap<String, String> = rows
                .into_iter()
                .filter_map(|r| {
                    let key = r[0].as_text()?;
                    let value = r[1].as_text()?;
                    Some((
                        key.to_string(),
                        sojourn_core::redact::property_value(key, value),
                    ))
                })
                .collect();
            if which == 0 {
                s.meta.properties = map;
            } else {
                s.meta.labels = map;
            }
        }
        Ok(())
    }

    fn summary_from_row(&self, row: &[Value]) -> Result<RunSummary, StoreError> {
        let id = row[0].as_text().unwrap_or_default().to_string();
        let bad = |what: &str| self.corrupt(&id, format!("{what} is missing or not valid"));
        let t = |i: usize| row[i].as_text().unwrap_or_default().to_string();
        let status_text = t(13);
        let status = RunStatus::parse(&status_text).ok_or_else(|| bad("status"))?;
        let totals = as_f64(&row[17]).map(|elapsed| RunTotals {
            elapsed: secs(elapsed),
            measured: secs(as_f64(&row[18]).unwrap_or(0.0)),
            operations: as_u64(&row[19]),
            operations_all: as_u64(&row[20]),
            throughput: as_f64(&row[21]).unwrap_or(0.0),
            offered: as_f64(&row[22]),
            scheduled: as_u64(&row[23]),
            abandoned: as_u64(&row[24]),
            stop_reason: row[25].as_text().unwrap_or_default().to_string(),
            seed: as_u64(&row[26]),
            runtime_threads: as_u64(&row[27]),
            thread_use: row[38]
                .as_text()
                .and_then(ThreadsWhy::parse)
                .zip(as_f64(&row[39]))
                .map(|(why, busiest)| ThreadUse { why, busiest }),
            cpu: CpuTimes {
                user_s: as_f64(&row[28]).unwrap_or(0.0),
                system_s: as_f64(&row[29]).unwrap_or(0.0),
            },
        });
        let workload = t(5);
        Ok(RunSummary {
            meta: RunMeta {
                id: RunId(id.clone()),
                run_uri: t(1),
                stage_index: as_u64(&row[37]) as u32,
                started_at: from_unix(as_f64(&row[3]).ok_or_else(|| bad("start time"))?),
                phase: t(4),
                workloads: if workload.is_empty() {
                    Vec::new()
                } else {
                    workload.split(',').map(str::to_string).collect()
                },
                properties: BTreeMap::new(),
                backend: t(6),
                threads: as_u64(&row[7]),
                target: as_f64(&row[8]),
                labels: BTreeMap::new(),
                tool_version: t(9),
                host: t(10),
                client_index: as_u64(&row[30]) as u32,
                client_count: as_u64(&row[31]) as u32,
                pid: as_u64(&row[11]) as u32,
                command_line: t(12),
                measurement_interval: t(32),
                percentiles: t(33)
                    .split(',')
                    .filter_map(|p| p.trim().parse().ok())
                    .collect(),
                warmup: secs(as_f64(&row[34]).unwrap_or(0.0)),
                seed: as_u64(&row[26]),
            },
            status,
            ended_at: as_f64(&row[16]).map(from_unix),
            error: row[14].as_text().map(str::to_string),
            totals,
            intervals: as_u64(&row[35]),
        })
    }

    /// Every client run that `run` names: a full run id, a unique prefix
    /// of one (at least 4 characters), a run URI of one stage (all client
    /// processes of that run), `URI/STAGE` for one stage of a benchmark's
    /// URI (its index, or `load` or `run` where only one stage is that),
    /// or `last` for the newest run.
    pub fn resolve_all(&self, run: &str) -> Result<Vec<RunId>, StoreError> {
        let ids = |r: QueryResult| -> Vec<RunId> {
            r.rows
                .into_iter()
                .filter_map(|row| row[0].as_text().map(|s| RunId(s.to_string())))
                .collect()
        };
        if run == "last" || run == "latest" {
            let found = ids(self.read(
                || "finding the newest run".into(),
                "SELECT id FROM runs ORDER BY started_unix DESC, id DESC LIMIT 1",
                &[],
            )?);
            return if found.is_empty() {
                Err(StoreError::NoSuchRun(run.to_string()))
            } else {
                Ok(found)
            };
        }
        let exact = ids(self.read(
            || format!("finding run {run}"),
            "SELECT id FROM runs WHERE id = ?",
            &[text(run)],
        )?);
        if !exact.is_empty() {
            return Ok(exact);
        }
        if let Some((uri, part)) = run.rsplit_once('/') {
            let stages = self.stages_of(uri)?;
            if !stages.is_empty() {
                let chosen: Vec<&Stage> = match part.parse::<u64>() {
                    Ok(i) => stages.iter().filter(|s| s.index == i).collect(),
                    Err(_) => stages.iter().filter(|s| s.phase == part).collect(),
                };
                return match chosen[..] {
                    [stage] => self.clients_of(uri, stage),
                    _ => Err(self.stages_error(uri, &stages)),
                };
            }
        }
        let stages = self.stages_of(run)?;
        match &stages[..] {
            [] => {}
            [stage] => return self.clients_of(run, stage),
            // `bench` and suites give a benchmark's stages one URI, as PKB
            // does; one run of it is one of those stages.
            _ => return Err(self.stages_error(run, &stages)),
        }
        if run.chars().count() >= 4 {
            let by_prefix = ids(self.read(
                || format!("finding run {run}"),
                "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY started_unix",
                &[int(run.len() as u64), text(run)],
            )?);
            match by_prefix.len() {
                0 => {}
                1 => return Ok(by_prefix),
                n => {
                    return Err(StoreError::Ambiguous {
                        prefix: run.to_string(),
                        count: n,
                        examples: by_prefix
                            .iter()
                            .take(3)
                            .map(|r| r.0.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
                }
            }
        } else if !run.is_empty() {
            return Err(StoreError::ShortPrefix(run.to_string()));
        }
        Err(StoreError::NoSuchRun(run.to_string()))
    }

    /// The stages a run URI covers, load first, then each run stage in
    /// order (none: no run has that URI).
    fn stages_of(&self, uri: &str) -> Result<Vec<Stage>, StoreError> {
        Ok(self
            .read(
                || format!("finding run {uri}"),
                "SELECT DISTINCT phase, stage_index FROM runs WHERE run_uri = ? \
                 ORDER BY phase, stage_index",
                &[text(uri)],
            )?
            .rows
            .into_iter()
            .map(|row| Stage {
                phase: row[0].as_text().unwrap_or_default().to_string(),
                index: as_u64(&row[1]),
            })
            .collect())
    }

    /// What to say when a run URI names several stages where one is meant.
    pub(crate) fn stages_error(&self, uri: &str, stages: &[Stage]) -> StoreError {
        StoreError::Stages {
            uri: uri.to_string(),
            count: stages.len(),
            // By index; by phase where an index is not the stage's own (a
            // store from before indices: `bench`'s load and run both 0).
            stages: stages
                .iter()
                .map(|s| {
                    if stages.iter().filter(|o| o.index == s.index).count() == 1 {
                        format!("{uri}/{} ({})", s.index, s.phase)
                    } else {
                        format!("{uri}/{}", s.phase)
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The client processes of one stage of the run URI `uri`.
    fn clients_of(&self, uri: &str, stage: &Stage) -> Result<Vec<RunId>, StoreError> {
        Ok(self
            .stage_clients(uri, &stage.phase, stage.index)?
            .into_iter()
            .map(|c| c.id)
            .collect())
    }

    /// One run per client index of the stage, in client order: where a
    /// client index has several runs (an agent restarted, a run imported
    /// from a spool after its stage went on without it), the one that
    /// ended best (completed, interrupted, running, failed), then the
    /// earliest, so no client's share is counted twice.
    pub(crate) fn stage_clients(
        &self,
        uri: &str,
        phase: &str,
        stage: u64,
    ) -> Result<Vec<ClientRun>, StoreError> {
        let rows = self
            .read(
                || format!("finding the client processes of run {uri}"),
                "SELECT id, client_index, status FROM runs \
                 WHERE run_uri = ? AND phase = ? AND stage_index = ? \
                 ORDER BY client_index, started_unix",
                &[text(uri), text(phase), int(stage)],
            )?
            .rows;
        let rank = |s: RunStatus| match s {
            RunStatus::Completed => 0,
            RunStatus::Interrupted => 1,
            RunStatus::Running => 2,
            RunStatus::Failed => 3,
        };
        let mut best: BTreeMap<u64, ClientRun> = BTreeMap::new();
        for row in &rows {
            let run = ClientRun {
                id: RunId(row[0].as_text().unwrap_or_default().to_string()),
                status: row[2]
                    .as_text()
                    .and_then(RunStatus::parse)
                    .unwrap_or(RunStatus::Failed),
            };
            let index = as_u64(&row[1]);
            match best.get(&index) {
                Some(b) if rank(b.status) <= rank(run.status) => {}
                _ => {
                    best.insert(index, run);
                }
            }
        }
        Ok(best.into_values().collect())
    }

    /// Every client process of the run stage `id` belongs to (its run URI,
    /// phase and stage index), when it had several; else `id` alone. So
    /// `last`, or the id of one client, names the whole run, as a PKB user
    /// means it.
    fn whole_run(&self, id: &RunId) -> Result<Vec<RunId>, StoreError> {
        let row = self
            .read(
                || format!("finding the client processes of run {id}"),
                "SELECT run_uri, phase, stage_index, client_count FROM runs WHERE id = ?",
                &[text(&id.0)],
            )?
            .rows
            .into_iter()
            .next();
        let Some(row) = row.filter(|row| as_u64(&row[3]) > 1) else {
            return Ok(vec![id.clone()]);
        };
        let uri = row[0].as_text().unwrap_or_default().to_string();
        let phase = row[1].as_text().unwrap_or_default().to_string();
        Ok(self
            .stage_clients(&uri, &phase, as_u64(&row[2]))?
            .into_iter()
            .map(|c| c.id)
            .collect())
    }

    /// What is missing from a stage merged without some of its clients,
    /// if anything (see [`Store::keep_whole`]).
    fn missing_from(
        &self,
        uri: &str,
        phase: &str,
        stage: u32,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .read(
                || format!("reading how whole run {uri} is"),
                "SELECT missing FROM merged_runs WHERE run_uri = ? AND phase = ? AND stage_index = ?",
                &[text(uri), text(phase), int(u64::from(stage))],
            )?
            .rows
            .first()
            .and_then(|row| row[0].as_text().map(str::to_string)))
    }

    /// The one run that `run` names (see [`Store::resolve_all`]); a run
    /// URI shared by several client processes is ambiguous here.
    pub fn resolve(&self, run: &str) -> Result<RunId, StoreError> {
        let mut all = self.resolve_all(run)?;
        if all.len() > 1 {
            return Err(StoreError::Ambiguous {
                prefix: run.to_string(),
                count: all.len(),
                examples: all
                    .iter()
                    .take(3)
                    .map(|r| r.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(all.remove(0))
    }

    /// Everything stored about a run, every histogram decoded (see
    /// [`IntervalDetail`] for the memory that takes).
    pub fn load(&self, run: &str) -> Result<RunRecord, StoreError> {
        self.load_with(run, IntervalDetail::Histograms)
    }

    /// A run, its interval histograms decoded or not.
    pub fn load_with(&self, run: &str, detail: IntervalDetail) -> Result<RunRecord, StoreError> {
        let id = self.resolve(run)?;
        self.load_id(&id, detail)
    }

    /// Every client run that `run` names (see [`Store::resolve_all`]),
    /// merged exactly into one ([`crate::merge`]).
    pub fn load_merged(&self, run: &str) -> Result<RunRecord, StoreError> {
        self.load_merged_with(run, IntervalDetail::Histograms)
    }

    /// What `run` names, one merged record per stage: a run URI that
    /// `bench` or a suite gave a benchmark's stages (as PKB gives one URI
    /// to them) is each of them, load first; anything else is
    /// [`Store::load_merged_with`]'s one record.
    pub fn load_stages(
        &self,
        run: &str,
        detail: IntervalDetail,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let stages = self.stages_of(run)?;
        if stages.len() < 2 {
            return Ok(vec![self.load_merged_with(run, detail)?]);
        }
        stages
            .iter()
            .map(|stage| {
                let runs = self
                    .clients_of(run, stage)?
                    .iter()
                    .map(|id| self.load_id(id, detail))
                    .collect::<Result<Vec<_>, _>>()?;
                self.merge_stage(&runs)
            })
            .collect()
    }

    /// [`Store::load_merged`], its interval histograms decoded or not.
    pub fn load_merged_with(
        &self,
        run: &str,
        detail: IntervalDetail,
    ) -> Result<RunRecord, StoreError> {
        let mut ids = self.resolve_all(run)?;
        if let [id] = &ids[..] {
            ids = self.whole_run(id)?;
        }
        let runs = ids
            .iter()
            .map(|id| self.load_id(id, detail))
            .collect::<Result<Vec<_>, _>>()?;
        self.merge_stage(&runs)
    }

    /// Client runs of one stage merged, saying what is missing from them. A
    /// client whose run failed (its process or agent died) is left out
    /// while others measured, and named: the stage is partial, not failed
    /// as a whole, and what its clients measured stands.
    fn merge_stage(&self, runs: &[RunRecord]) -> Result<RunRecord, StoreError> {
        let (failed, kept): (Vec<&RunRecord>, Vec<&RunRecord>) = runs
            .iter()
            .partition(|r| r.summary.status == RunStatus::Failed);
        let mut whole = if failed.is_empty() || kept.is_empty() {
            crate::merge(runs)?
        } else {
            let kept: Vec<RunRecord> = kept.into_iter().cloned().collect();
            crate::merge(&kept)?
        };
        let m = whole.meta();
        let clients = m.client_count.max(runs.len() as u32);
        if clients > 1 {
            let said = self.missing_from(&m.run_uri, &m.phase, m.stage_index)?;
            let missing = match said {
                Some(s) => Some(s),
                None if !failed.is_empty() && failed.len() < runs.len() => Some(
                    failed
                        .iter()
                        .map(|r| {
                            format!(
                                "client {} of {clients} failed: {}",
                                r.meta().client_index,
                                r.summary.error.as_deref().unwrap_or("no reason stored")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                None => None,
            };
            if let Some(missing) = missing {
                whole.warnings.push(format!("partial run: {missing}"));
            }
        }
        Ok(whole)
    }

    pub(super) fn load_id(
        &self,
        id: &RunId,
        detail: IntervalDetail,
    ) -> Result<RunRecord, StoreError> {
        let key = [text(&id.0)];
        let rows = self
            .read(
                || format!("reading run {id}"),
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE id = ?"),
                &key,
            )?
            .rows;
        let row = rows
            .first()
            .ok_or_else(|| StoreError::NoSuchRun(id.0.clone()))?;
        let mut summary = self.summary_from_row(row)?;
        self.fill_side_tables(&mut summary)?;
        let lag_hist = row[36].clone();

        let warnings = self
            .read(
                || format!("reading the warnings of run {id}"),
                "SELECT message FROM run_warnings WHERE run_id = ? ORDER BY seq",
                &key,
            )?
            .rows
            .into_iter()
            .filter_map(|r| r[0].as_text().map(str::to_string))
            .collect();

        let mut total = self.ops_of(id, "run_ops WHERE run_id = ?", &key)?;
        self.load_failures(id, &mut total)?;
        total.lag = self
            .histogram_of(id, &lag_hist, "scheduling lag histogram")?
            .map(Box::new);
        total.ops_done = summary.totals.as_ref().map_or(0, |t| t.operations);

        let mut intervals: Vec<StoredInterval> = self
            .read(
                || format!("reading the time series of run {id}"),
                "SELECT seq, start_s, length_s, ops_done, cpu_user_s, cpu_system_s, warmup, \
                 lag_count, lag_mean_us, lag_min_us, lag_max_us, lag_p50_us, lag_p90_us, \
                 lag_p95_us, lag_p99_us, lag_p99_9_us, lag_p99_99_us, offered \
                 FROM intervals WHERE run_id = ? ORDER BY seq",
                &key,
            )?
            .rows
            .into_iter()
            .map(|r| {
                let f = |i: usize| as_f64(&r[i]).unwrap_or(0.0);
                let lag = as_i64(&r[7]).map(|count| LatencySummary {
                    count: count as u64,
                    mean_us: f(8),
                    min_us: f(9),
                    max_us: f(10),
                    p50_us: f(11),
                    p90_us: f(12),
                    p95_us: f(13),
                    p99_us: f(14),
                    p99_9_us: f(15),
                    p99_99_us: f(16),
                    ci95_us: Default::default(),
                });
                let mut stats = Stats::default();
                stats.ops_done = as_u64(&r[3]);
                StoredInterval {
                    start: secs(f(1)),
                    length: secs(f(2)),
                    ops_done: as_u64(&r[3]),
                    offered: as_i64(&r[17]).map(|n| n as u64),
                    cpu: CpuTimes {
                        user_s: f(4),
                        system_s: f(5),
                    },
                    warmup: as_i64(&r[6]).unwrap_or(0) != 0,
                    ops: Vec::new(),
                    stats,
                    lag,
                }
            })
            .collect();
        let decode_all = detail == IntervalDetail::Histograms;
        let iops = self
            .read(
                || format!("reading the time series of run {id}"),
                &format!(
                    "SELECT seq, op, {}, service_mean_us, service_p50_us, service_p99_us, \
                     service_p99_9_us, service_max_us, response_mean_us, response_p50_us, \
                     response_p99_us, response_p99_9_us, response_max_us{} FROM interval_ops \
                     WHERE run_id = ? ORDER BY seq",
                    STATUS_COLUMNS.join(", "),
                    if decode_all {
                        ", service_hist, response_hist"
                    } else {
                        ""
                    }
                ),
                &key,
            )?
            .rows;
        let fig = 2 + STATUS_COLUMNS.len();
        let h = fig + 10;
        for row in &iops {
            let seq = as_u64(&row[0]) as usize;
            let kind = self.kind_named(id, &row[1])?;
            let Some(iv) = intervals.get_mut(seq) else {
                return Err(self.corrupt(&id.0, format!("interval {seq} has no time-series row")));
            };
            let figures = |at: usize| IntervalFigures {
                mean_us: as_f64(&row[at]).unwrap_or(0.0),
                p50_us: as_f64(&row[at + 1]).unwrap_or(0.0),
                p99_us: as_f64(&row[at + 2]).unwrap_or(0.0),
                p99_9_us: as_f64(&row[at + 3]).unwrap_or(0.0),
                max_us: as_f64(&row[at + 4]).unwrap_or(0.0),
            };
            iv.ops.push(IntervalOp {
                kind,
                statuses: statuses_at(row, 2),
                service: figures(fig),
                response: figures(fig + 5),
            });
            if !decode_all {
                continue;
            }
            let what = |w: &str| format!("interval {seq} {} {w} histogram", kind.name());
            iv.stats.set_op(
                kind,
                OpStats {
                    ok: Latencies {
                        service: self.required_histogram(id, &row[h], &what("service"))?,
                        response: self.required_histogram(id, &row[h + 1], &what("response"))?,
                    },
                    failed: None,
                    statuses: statuses_at(row, 2),
                    reasons: Reasons::default(),
                },
            );
        }
        for iv in &mut intervals {
            iv.ops.sort_by_key(|o| o.kind);
        }
        let server = self.load_server(id)?;
        let segments = self.load_segments(id)?;
        Ok(RunRecord {
            self_check: None,
            summary,
            warnings,
            total,
            intervals,
            server,
            segments,
        })
    }

    /// The run's rate-profile segments, each with its operations.
    fn load_segments(&self, id: &RunId) -> Result<Vec<SegmentOutcome>, StoreError> {
        let rows = self
            .read(
                || format!("reading the segments of run {id}"),
                "SELECT seq, label, start_s, end_s, expected, ops_done, held, missed_because \
                 FROM run_segments WHERE run_id = ? ORDER BY seq",
                &[text(&id.0)],
            )?
            .rows;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let f = |i: usize| as_f64(&r[i]).unwrap_or(0.0);
            let mut stats = self.ops_of(
                id,
                "segment_ops WHERE run_id = ? AND seq = ?",
                &[text(&id.0), r[0].clone()],
            )?;
            stats.ops_done = as_u64(&r[5]);
            out.push(SegmentOutcome {
                segment: Segment {
                    label: r[1].as_text().unwrap_or_default().to_string(),
                    start: secs(f(2)),
                    end: secs(f(3)),
                    expected: f(4),
                },
                stats,
                verdict: as_i64(&r[6]).map(|held| SegmentVerdict {
                    held: held != 0,
                    reason: r[7].as_text().map(str::to_string),
                }),
            });
        }
        Ok(out)
    }

    /// The operation kind a row names.
    fn kind_named(&self, id: &RunId, v: &Value) -> Result<OpKind, StoreError> {
        let name = v.as_text().unwrap_or_default();
        OpKind::named(name).map_err(|e| self.corrupt(&id.0, format!("operation kind: {e}")))
    }

    /// A histogram column that must be there.
    fn required_histogram(
        &self,
        id: &RunId,
        v: &Value,
        what: &str,
    ) -> Result<Histogram<u64>, StoreError> {
        self.histogram_of(id, v, what)?
            .ok_or_else(|| self.corrupt(&id.0, format!("{what} is missing")))
    }

    /// A histogram column of run `id`, `None` where NULL.
    fn histogram_of(
        &self,
        id: &RunId,
        v: &Value,
        what: &str,
    ) -> Result<Option<Histogram<u64>>, StoreError> {
        match v {
            Value::Blob(b) => hist_codec::decode(b)
                .map(Some)
                .map_err(|e| self.corrupt(&id.0, format!("{what}: {e}"))),
            Value::Null => Ok(None),
            _ => Err(self.corrupt(&id.0, format!("{what} is not a histogram"))),
        }
    }

    /// Per operation kind, the counts and histograms of the rows `from`
    /// (a table and its condition on `key`) selects: `run_ops` or
    /// `segment_ops` rows.
    fn ops_of(&self, id: &RunId, from: &str, key: &[Value]) -> Result<Stats, StoreError> {
        let decode = |v: &Value, what: &str| self.histogram_of(id, v, what);

        let mut total = Stats::default();
        let ops = self
            .read(
                || format!("reading the totals of run {id}"),
                &format!(
                    "SELECT op, {}, service_hist, response_hist, failed_service_hist, \
                     failed_response_hist FROM {from}",
                    STATUS_COLUMNS.join(", ")
                ),
                key,
            )?
            .rows;
        let h = 1 + STATUS_COLUMNS.len();
        for row in &ops {
            let kind = self.kind_named(id, &row[0])?;
            let what = |w: &str| format!("{} {w} histogram", kind.name());
            let failed = match (
                decode(&row[h + 2], &what("failed service"))?,
                decode(&row[h + 3], &what("failed response"))?,
            ) {
                (Some(service), Some(response)) => Some(Box::new(Latencies { service, response })),
                _ => None,
            };
            total.set_op(
                kind,
                OpStats {
                    ok: Latencies {
                        service: self.required_histogram(id, &row[h], &what("service"))?,
                        response: self.required_histogram(id, &row[h + 1], &what("response"))?,
                    },
                    failed,
                    statuses: statuses_at(row, 1),
                    reasons: Reasons::default(),
                },
            );
        }
        Ok(total)
    }

    /// Why the run's operations failed, into `total`'s kinds (a store
    /// from before it was kept has no such table).
    fn load_failures(&self, id: &RunId, total: &mut Stats) -> Result<(), StoreError> {
        let rows = self
            .read(
                || format!("reading why operations of run {id} failed"),
                "SELECT op, status, kind, failures, first_text, first_unix FROM run_failures \
                 WHERE run_id = ?",
                &[text(&id.0)],
            )?
            .rows;
        for r in rows {
            let kind = self.kind_named(id, &r[0])?;
            let name = r[1].as_text().unwrap_or_default();
            let Some(i) = STATUS_COLUMNS.iter().position(|c| *c == name) else {
                return Err(self.corrupt(
                    &id.0,
                    format!(
                        "a failure of status {name:?}, which is none of {}",
                        STATUS_COLUMNS.join(", ")
                    ),
                ));
            };
            let mut op = total.op(kind).cloned().unwrap_or_default();
            op.reasons.add(Reason {
                status: Status::ALL[i],
                kind: r[2].as_text().unwrap_or_default().to_string(),
                first: r[4].as_text().unwrap_or_default().to_string(),
                first_at: failures::from_unix(as_f64(&r[5]).unwrap_or(0.0)),
                count: as_u64(&r[3]),
            });
            total.set_op(kind, op);
        }
        Ok(())
    }

    /// The run's server counters, `None` if none were stored.
    fn load_server(&self, id: &RunId) -> Result<Option<ServerStats>, StoreError> {
        let rows = self
            .read(
                || format!("reading the server counters of run {id}"),
                "SELECT name, delta, operations FROM run_server_counters WHERE run_id = ? ORDER BY name",
                &[text(&id.0)],
            )?
            .rows;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut s = ServerStats::default();
        for r in rows {
            let name = r[0].as_text().unwrap_or_default().to_string();
            s.deltas.insert(name, as_f64(&r[1]).unwrap_or(0.0));
            s.operations = as_u64(&r[2]);
        }
        Ok(Some(s))
    }
}

/// One stage of a run URI: the load, or one of its run stages.
pub(crate) struct Stage {
    phase: String,
    index: u64,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            0 => f.write_str(&self.phase),
            i => write!(f, "{} stage {i}", self.phase),
        }
    }
}

/// The `runs` columns [`Store::summary_from_row`] reads, by position.
const RUN_COLUMNS: &str = "id, run_uri, started_at, started_unix, phase, workload, backend, \
     threads, target, tool_version, host, pid, command_line, status, error, ended_at, \
     ended_unix, elapsed_s, measured_s, operations, operations_all, throughput, offered, \
     scheduled, abandoned, stop_reason, seed, runtime_threads, cpu_user_s, cpu_system_s, \
     client_index, client_count, measurement_interval, percentiles, warmup_s, \
     (SELECT COUNT(*) FROM intervals i WHERE i.run_id = r.id), lag_hist, stage_index, \
     runtime_threads_why, busiest_thread";

/// One client process's run of a stage.
pub(crate) struct ClientRun {
    pub id: RunId,
    pub status: RunStatus,
}

/// Counts by status from `row`'s columns `from..`, in [`Status::ALL`] order.
fn statuses_at(row: &[Value], from: usize) -> [u64; Status::COUNT] {
    let mut s = [0u64; Status::COUNT];
    for (i, n) in s.iter_mut().enumerate() {
        *n = as_u64(&row[from + i]);
    }
    s
}
