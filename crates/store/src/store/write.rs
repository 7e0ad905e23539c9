//! Writing a run as it goes: begun before its first operation, each
//! interval as it closes, then its totals (and, for the last client process
//! of a stage, the stage as a whole), or marked failed; labels added after
//! the fact; runs whose process died marked so.

use super::*;

impl Store {
    /// Record that a run has begun; its status is `running` until
    /// [`Store::finish_run`] or [`Store::fail_run`].
    pub fn begin_run(&self, meta: &RunMeta) -> Result<RunId, StoreError> {
        // Whoever built the metadata, nothing secret is written.
        let meta = &meta.redacted();
        let id = meta.id.clone();
        self.write(
            || format!("recording the start of run {id}"),
            |db| {
                db.exec(
                    "INSERT INTO runs (id, run_uri, started_at, started_unix, phase, workload, \
                     backend, threads, target, tool_version, host, pid, command_line, status, \
                     client_index, client_count, measurement_interval, percentiles, warmup_s, seed, \
                     stage_index) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &[
                        text(&meta.id.0),
                        text(&meta.run_uri),
                        text(&rfc3339(meta.started_at)),
                        Value::Real(unix(meta.started_at)),
                        text(&meta.phase),
                        text(&meta.workloads.join(",")),
                        text(&meta.backend),
                        int(meta.threads),
                        meta.target.map_or(Value::Null, Value::Real),
                        text(&meta.tool_version),
                        text(&meta.host),
                        int(meta.pid as u64),
                        text(&meta.command_line),
                        text(RunStatus::Running.as_str()),
                        int(meta.client_index as u64),
                        int(meta.client_count as u64),
                        text(&meta.measurement_interval),
                        text(&join_f64(&meta.percentiles)),
                        Value::Real(meta.warmup.as_secs_f64()),
                        int(meta.seed),
                        int(meta.stage_index as u64),
                    ],
                )?;
                for (table, map) in [
                    ("run_properties", &meta.properties),
                    ("run_labels", &meta.labels),
                ] {
                    let sql = format!("INSERT INTO {table} (run_id, key, value) VALUES (?, ?, ?)");
                    for (k, v) in map {
                        db.exec(&sql, &[text(&meta.id.0), text(k), text(v)])?;
                    }
                }
                Ok(())
            },
        )?;
        Ok(id)
    }

    /// Store one time-series interval (one row per operation kind),
    /// committed before returning.
    pub fn write_interval(&self, run: &RunId, interval: &Interval) -> Result<(), StoreError> {
        self.write(
            || format!("storing an interval of run {run}"),
            |db| {
                let r = db.query(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM intervals WHERE run_id = ?",
                    &[text(&run.0)],
                )?;
                let seq = r
                    .rows
                    .first()
                    .and_then(|row| row.first())
                    .and_then(as_i64)
                    .unwrap_or(0);
                let mut params = vec![
                    text(&run.0),
                    Value::Integer(seq),
                    Value::Real(interval.start.as_secs_f64()),
                    Value::Real(interval.length.as_secs_f64()),
                    int(interval.ops_done),
                    Value::Real(interval.cpu.user_s),
                    Value::Real(interval.cpu.system_s),
                    Value::Integer(interval.warmup as i64),
                ];
                match &interval.lag {
                    Some(l) => {
                        params.push(int(l.count));
                        params.extend(figures(l));
                    }
                    None => params.extend((0..10).map(|_| Value::Null)),
                }
                params.push(interval.offered.map_or(Value::Null, int));
                db.exec(
                    "INSERT INTO intervals (run_id, seq, start_s, length_s, ops_done, cpu_user_s, \
                     cpu_system_s, warmup, lag_count, lag_mean_us, lag_min_us, lag_max_us, \
                     lag_p50_us, lag_p90_us, lag_p95_us, lag_p99_us, lag_p99_9_us, lag_p99_99_us, \
                     offered) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &params,
                )?;
                let sql = format!(
                    "INSERT INTO interval_ops (run_id, seq, op, {}, service_mean_us, \
                     service_p50_us, service_p99_us, service_p99_9_us, service_max_us, \
                     response_mean_us, response_p50_us, response_p99_us, response_p99_9_us, \
                     response_max_us, service_hist, response_hist) VALUES ({})",
                    STATUS_COLUMNS.join(", "),
                    placeholders(3 + STATUS_COLUMNS.len() + 12)
                );
                for k in &interval.kinds {
                    let mut p = vec![text(&run.0), Value::Integer(seq), text(k.kind.name())];
                    p.extend(k.statuses.iter().map(|&n| int(n)));
                    for s in [&k.service, &k.response] {
                        p.extend(
                            [s.mean_us, s.p50_us, s.p99_us, s.p99_9_us, s.max_us].map(Value::Real),
                        );
                    }
                    p.push(Value::Blob(k.service_hist.clone()));
                    p.push(Value::Blob(k.response_hist.clone()));
                    db.exec(&sql, &p)?;
                }
                Ok(())
            },
        )
    }

    /// Store the totals of a run that ended (per kind: counts by status
    /// and the service and response histograms of successful and failed
    /// operations; rates, client CPU, scheduling lag) and its final status.
    /// The run's start time becomes the outcome's (its first operation).
    pub fn finish_run(
        &self,
        run: &RunId,
        outcome: &RunOutcome,
        status: RunStatus,
        warnings: &[String],
    ) -> Result<(), StoreError> {
        let ended = SystemTime::now();
        let t = RunTotals::of(outcome);
        let changed = self.write(
            || format!("storing the totals of run {run}"),
            |db| {
                // The start becomes the executor's (the first operation's),
                // which the intervals' offsets count from; begin_run could
                // only know the moment the phase began.
                let changed = db.exec(
                    "UPDATE runs SET status = ?, error = NULL, started_at = ?, started_unix = ?, \
                     ended_at = ?, ended_unix = ?, elapsed_s = ?, measured_s = ?, operations = ?, operations_all = ?, \
                     throughput = ?, offered = ?, scheduled = ?, abandoned = ?, stop_reason = ?, \
                     seed = ?, runtime_threads = ?, cpu_user_s = ?, cpu_system_s = ?, lag_hist = ?, \
                     runtime_threads_why = ?, busiest_thread = ? WHERE id = ?",
                    &[
                        text(status.as_str()),
                        text(&rfc3339(outcome.started_at)),
                        Value::Real(unix(outcome.started_at)),
                        text(&rfc3339(ended)),
                        Value::Real(unix(ended)),
                        Value::Real(t.elapsed.as_secs_f64()),
                        Value::Real(t.measured.as_secs_f64()),
                        int(t.operations),
                        int(t.operations_all),
                        Value::Real(t.throughput),
                        t.offered.map_or(Value::Null, Value::Real),
                        int(t.scheduled),
                        int(t.abandoned),
                        text(&t.stop_reason),
                        int(t.seed),
                        int(t.runtime_threads),
                        Value::Real(t.cpu.user_s),
                        Value::Real(t.cpu.system_s),
                        outcome
                            .total
                            .lag
                            .as_deref()
                            .map_or(Value::Null, |h| Value::Blob(hist_codec::encode(h))),
                        t.thread_use.map_or(Value::Null, |u| text(u.why.name())),
                        t.thread_use.map_or(Value::Null, |u| Value::Real(u.busiest)),
                        text(&run.0),
                    ],
                )?;
                if changed == 0 {
                    return Ok(0);
                }
                for table in [
                    "run_ops",
                    "run_failures",
                    "run_warnings",
                    "segment_ops",
                    "run_segments",
                ] {
                    db.exec(&format!("DELETE FROM {table} WHERE run_id = ?"), &[text(&run.0)])?;
                }
                insert_ops(db, "run_ops", &[text(&run.0)], &outcome.total)?;
                insert_failures(db, &run.0, &outcome.total)?;
                for (seq, s) in outcome.segments.iter().enumerate() {
                    let key = [text(&run.0), int(seq as u64)];
                    db.exec(
                        "INSERT INTO run_segments (run_id, seq, label, start_s, end_s, expected, \
                         ops_done, held, missed_because) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        &[
                            key[0].clone(),
                            key[1].clone(),
                            text(&s.segment.label),
                            Value::Real(s.segment.start.as_secs_f64()),
                            Value::Real(s.segment.end.as_secs_f64()),
                            Value::Real(s.segment.expected),
                            int(s.stats.ops_done),
                            s.verdict
                                .as_ref()
                                .map_or(Value::Null, |v| int(u64::from(v.held))),
                            s.verdict
                                .as_ref()
                                .and_then(|v| v.reason.as_deref())
                                .map_or(Value::Null, text),
                        ],
                    )?;
                    insert_ops(db, "segment_ops", &key, &s.stats)?;
                }
                for (i, w) in warnings.iter().enumerate() {
                    db.exec(
                        "INSERT INTO run_warnings (run_id, seq, message) VALUES (?, ?, ?)",
                        &[text(&run.0), int(i as u64), text(w)],
                    )?;
                }
                db.exec(
                    "DELETE FROM run_server_counters WHERE run_id = ?",
                    &[text(&run.0)],
                )?;
                if let Some(server) = &outcome.server {
                    for (name, delta) in &server.deltas {
                        db.exec(
                            "INSERT INTO run_server_counters (run_id, name, delta, operations, per_op) \
                             VALUES (?, ?, ?, ?, ?)",
                            &[
                                text(&run.0),
                                text(name),
                                Value::Real(*delta),
                                int(server.operations),
                                server.per_op(name).map_or(Value::Null, Value::Real),
                            ],
                        )?;
                    }
                }
                Ok(changed)
            },
        )?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun(run.0.clone()));
        }
        self.merge_if_last(run)
    }

    /// When `run` is the last client process of its stage to finish, keep
    /// the stage as a whole: its clients merged exactly, for the views' one
    /// row per run stage. Clients finishing at once may both get here; each
    /// writes the same whole, and the last to commit has seen every client.
    pub(crate) fn merge_if_last(&self, run: &RunId) -> Result<(), StoreError> {
        let rows = self
            .read(
                || format!("reading run {run}"),
                "SELECT run_uri, phase, stage_index, client_count FROM runs WHERE id = ?",
                &[text(&run.0)],
            )?
            .rows;
        let Some(row) = rows.first() else {
            return Ok(());
        };
        let (uri, phase, stage, clients) = (
            row[0].as_text().unwrap_or_default().to_string(),
            row[1].as_text().unwrap_or_default().to_string(),
            as_u64(&row[2]),
            as_u64(&row[3]),
        );
        if clients <= 1 {
            return Ok(());
        }
        let ids: Vec<RunId> = self
            .stage_clients(&uri, &phase, stage)?
            .into_iter()
            .filter(|c| matches!(c.status, RunStatus::Completed | RunStatus::Interrupted))
            .map(|c| c.id)
            .collect();
        if (ids.len() as u64) < clients {
            return Ok(());
        }
        self.keep_whole(&uri, &phase, stage, &ids, clients, None)
    }

    /// Keep the stage (`uri`, `phase`, `stage`) of `clients` client
    /// processes as a whole: the runs `ids` merged exactly, and what is
    /// missing from them when some client's run is not there (an agent
    /// that went silent), said in words; `None` when it is whole.
    pub fn keep_whole(
        &self,
        uri: &str,
        phase: &str,
        stage: u64,
        ids: &[RunId],
        clients: u64,
        missing: Option<&str>,
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let runs = ids
            .iter()
            .map(|id| self.load_id(id, IntervalDetail::Figures))
            .collect::<Result<Vec<_>, _>>()?;
        let whole = crate::merge(&runs)?;
        let Some(totals) = &whole.summary.totals else {
            return Ok(());
        };
        self.write(
            || format!("storing run {uri} as a whole"),
            |db| {
                let key = [text(uri), text(phase), int(stage)];
                db.exec(
                    "DELETE FROM merged_ops WHERE run_uri = ? AND phase = ? AND stage_index = ?",
                    &key,
                )?;
                db.exec(
                    "DELETE FROM merged_runs WHERE run_uri = ? AND phase = ? AND stage_index = ?",
                    &key,
                )?;
                db.exec(
                    "INSERT INTO merged_runs (run_uri, phase, stage_index, first_run_id, clients, \
                     operations, measured_s, throughput, missing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &[
                        text(uri),
                        text(phase),
                        int(stage),
                        text(&ids[0].0),
                        int(clients),
                        int(totals.operations),
                        Value::Real(totals.measured.as_secs_f64()),
                        Value::Real(totals.throughput),
                        missing.map_or(Value::Null, text),
                    ],
                )?;
                for (kind, s) in whole.total.kinds() {
                    let service = LatencySummary::of(&s.ok.service);
                    let response = LatencySummary::of(&s.ok.response);
                    db.exec(
                        "INSERT INTO merged_ops (run_uri, phase, stage_index, op, operations, \
                         service_p50_us, service_p99_us, service_p99_9_us, response_p50_us, \
                         response_p99_us, response_p99_9_us) \
                         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        &[
                            text(uri),
                            text(phase),
                            int(stage),
                            text(kind.name()),
                            int(s.count()),
                            Value::Real(service.p50_us),
                            Value::Real(service.p99_us),
                            Value::Real(service.p99_9_us),
                            Value::Real(response.p50_us),
                            Value::Real(response.p99_us),
                            Value::Real(response.p99_9_us),
                        ],
                    )?;
                }
                Ok(())
            },
        )
    }

    /// Mark failed the runs of one client of a stage that are still
    /// `running` (an agent that went silent): its heartbeat, not its host
    /// and pid, said it is gone. Returns how many.
    pub fn fail_client_runs(
        &self,
        uri: &str,
        phase: &str,
        stage: u32,
        client: u32,
        why: &str,
    ) -> Result<u64, StoreError> {
        let ended = SystemTime::now();
        self.write(
            || format!("marking client {client} of run {uri} failed"),
            |db| {
                db.exec(
                    "UPDATE runs SET status = ?, error = ?, ended_at = ?, ended_unix = ? \
                     WHERE run_uri = ? AND phase = ? AND stage_index = ? AND client_index = ? \
                     AND status = ?",
                    &[
                        text(RunStatus::Failed.as_str()),
                        text(why),
                        text(&rfc3339(ended)),
                        Value::Real(unix(ended)),
                        text(uri),
                        text(phase),
                        int(u64::from(stage)),
                        int(u64::from(client)),
                        text(RunStatus::Running.as_str()),
                    ],
                )
            },
        )
    }

    /// Mark a run that is still `running` failed, keeping what it stored
    /// so far. A run that already ended keeps its status.
    pub fn fail_run(&self, run: &RunId, error: &str) -> Result<(), StoreError> {
        let ended = SystemTime::now();
        let exists = self.write(
            || format!("marking run {run} failed"),
            |db| {
                db.exec(
                    "UPDATE runs SET status = ?, error = ?, ended_at = ?, ended_unix = ? \
                     WHERE id = ? AND status = ?",
                    &[
                        text(RunStatus::Failed.as_str()),
                        text(error),
                        text(&rfc3339(ended)),
                        Value::Real(unix(ended)),
                        text(&run.0),
                        text(RunStatus::Running.as_str()),
                    ],
                )?;
                let r = db.query("SELECT COUNT(*) FROM runs WHERE id = ?", &[text(&run.0)])?;
                Ok(r.rows.first().and_then(|row| row.first()).and_then(as_i64) == Some(1))
            },
        )?;
        if !exists {
            return Err(StoreError::NoSuchRun(run.0.clone()));
        }
        Ok(())
    }

    /// Add `labels` to a run (replacing a label of the same key): what is
    /// known of a run only once it has been judged, such as a capacity
    /// step's verdict.
    pub fn add_labels(
        &self,
        run: &RunId,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), StoreError> {
        if labels.is_empty() {
            return Ok(());
        }
        let labels = sojourn_core::redact::pairs(labels);
        self.write(
            || format!("labelling run {run}"),
            |db| {
                for (k, v) in &labels {
                    db.exec(
                        "DELETE FROM run_labels WHERE run_id = ? AND key = ?",
                        &[text(&run.0), text(k)],
                    )?;
                    db.exec(
                        "INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)",
                        &[text(&run.0), text(k), text(v)],
                    )?;
                }
                Ok(())
            },
        )
    }

    /// Mark failed every run left `running` by a process that no longer
    /// exists on this host; returns how many. Done on open and list. The
    /// end time is taken from the last stored interval.
    pub fn mark_dead_runs(&self) -> Result<usize, StoreError> {
        if self.read_only {
            return Ok(0);
        }
        let host = sojourn_core::run_record::host_name();
        let r = self.read(
            || "looking for runs whose process ended".into(),
            "SELECT id, pid, started_unix, \
             (SELECT MAX(start_s + length_s) FROM intervals i WHERE i.run_id = r.id) \
             FROM runs r WHERE status = ? AND host = ?",
            &[text(RunStatus::Running.as_str()), text(&host)],
        )?;
        let mut marked = 0;
        for row in r.rows {
            let (Some(id), Some(pid)) = (row[0].as_text(), as_i64(&row[1])) else {
                continue;
            };
            if crate::ids::pid_alive(pid as u32) {
                continue;
            }
            let started = as_f64(&row[2]).unwrap_or(0.0);
            let ended = started + as_f64(&row[3]).unwrap_or(0.0);
            let error = format!(
                "its process (pid {pid} on {host}) ended without finishing the run; \
                 the intervals stored before that are kept"
            );
            let ended_at = from_unix(ended);
            self.write(
                || format!("marking run {id} failed"),
                |db| {
                    db.exec(
                        "UPDATE runs SET status = ?, error = ?, ended_at = ?, ended_unix = ? \
                         WHERE id = ? AND status = ?",
                        &[
                            text(RunStatus::Failed.as_str()),
                            text(&error),
                            text(&rfc3339(ended_at)),
                            Value::Real(ended),
                            text(id),
                            text(RunStatus::Running.as_str()),
                        ],
                    )
                },
            )?;
            marked += 1;
        }
        Ok(marked)
    }
}

/// Per operation kind of `stats`, a row of `run_failures` for each reason
/// its failures had.
fn insert_failures(db: &mut dyn Db, run: &str, stats: &Stats) -> Result<(), DbError> {
    for (kind, s) in stats.kinds() {
        for r in s.reasons.iter() {
            db.exec(
                "INSERT INTO run_failures (run_id, op, status, kind, failures, first_text, \
                 first_unix) VALUES (?, ?, ?, ?, ?, ?, ?)",
                &[
                    text(run),
                    text(kind.name()),
                    text(STATUS_COLUMNS[r.status.index()]),
                    text(&r.kind),
                    int(r.count),
                    text(&r.first),
                    Value::Real(failures::unix(r.first_at)),
                ],
            )?;
        }
    }
    Ok(())
}

/// Per operation kind of `stats`, a row of `table` (`run_ops`, or
/// `segment_ops` keyed by segment too) after the `key` columns: counts by
/// status, figures for SQL, and the histograms sojourn reads back.
fn insert_ops(db: &mut dyn Db, table: &str, key: &[Value], stats: &Stats) -> Result<(), DbError> {
    let key_columns = if key.len() == 2 {
        "run_id, seq"
    } else {
        "run_id"
    };
    let sql = format!(
        "INSERT INTO {table} ({key_columns}, op, operations, {}, {}, {}, service_hist, \
         response_hist, failed_service_hist, failed_response_hist) VALUES ({})",
        STATUS_COLUMNS.join(", "),
        figure_columns("service"),
        figure_columns("response"),
        placeholders(key.len() + 2 + STATUS_COLUMNS.len() + 18 + 4)
    );
    for (kind, s) in stats.kinds() {
        let mut p = key.to_vec();
        p.extend([text(kind.name()), int(s.count())]);
        p.extend(s.statuses.iter().map(|&n| int(n)));
        p.extend(figures(&LatencySummary::of(&s.ok.service)));
        p.extend(figures(&LatencySummary::of(&s.ok.response)));
        p.push(Value::Blob(hist_codec::encode(&s.ok.service)));
        p.push(Value::Blob(hist_codec::encode(&s.ok.response)));
        match &s.failed {
            Some(f) => {
                p.push(Value::Blob(hist_codec::encode(&f.service)));
                p.push(Value::Blob(hist_codec::encode(&f.response)));
            }
            None => p.extend([Value::Null, Value::Null]),
        }
        db.exec(&sql, &p)?;
    }
    Ok(())
}
