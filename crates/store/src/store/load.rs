//! Loading a run whole, with its histograms, or its client processes
//! merged, or a benchmark's stages one record each.

use super::list::{statuses_at, RUN_COLUMNS};
use super::*;

impl Store {
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

        let warnings = self.load_warnings(id, &key)?;

        let mut total = self.ops_of(id, "run_ops WHERE run_id = ?", &key)?;
        self.load_failures(id, &mut total)?;
        total.lag = self
            .histogram_of(id, &lag_hist, "scheduling lag histogram")?
            .map(Box::new);
        total.ops_done = summary.totals.as_ref().map_or(0, |t| t.operations);

        let mut intervals = self.load_intervals(id, &key)?;
        self.load_interval_ops(id, &key, detail, &mut intervals)?;
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

    /// The run's warnings, in the order they were given.
    fn load_warnings(&self, id: &RunId, key: &[Value]) -> Result<Vec<String>, StoreError> {
        Ok(self
            .read(
                || format!("reading the warnings of run {id}"),
                "SELECT message FROM run_warnings WHERE run_id = ? ORDER BY seq",
                key,
            )?
            .rows
            .into_iter()
            .filter_map(|r| r[0].as_text().map(str::to_string))
            .collect())
    }

    /// The run's time series, each interval's own figures without its
    /// operations (see [`Store::load_interval_ops`]).
    fn load_intervals(&self, id: &RunId, key: &[Value]) -> Result<Vec<StoredInterval>, StoreError> {
        let intervals = self
            .read(
                || format!("reading the time series of run {id}"),
                "SELECT seq, start_s, length_s, ops_done, cpu_user_s, cpu_system_s, warmup, \
                 lag_count, lag_mean_us, lag_min_us, lag_max_us, lag_p50_us, lag_p90_us, \
                 lag_p95_us, lag_p99_us, lag_p99_9_us, lag_p99_99_us, offered \
                 FROM intervals WHERE run_id = ? ORDER BY seq",
                key,
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
        Ok(intervals)
    }

    /// Each interval's operations, with their histograms where `detail`
    /// asks for them.
    fn load_interval_ops(
        &self,
        id: &RunId,
        key: &[Value],
        detail: IntervalDetail,
        intervals: &mut [StoredInterval],
    ) -> Result<(), StoreError> {
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
                key,
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
        Ok(())
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
                offered: None,
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
