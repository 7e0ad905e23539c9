//! Listing runs: their summaries with filters, each read off one `runs`
//! row and its side tables.

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

    pub(super) fn fill_side_tables(&self, s: &mut RunSummary) -> Result<(), StoreError> {
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

    pub(super) fn summary_from_row(&self, row: &[Value]) -> Result<RunSummary, StoreError> {
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
}

/// The `runs` columns [`Store::summary_from_row`] reads, by position.
pub(super) const RUN_COLUMNS: &str =
    "id, run_uri, started_at, started_unix, phase, workload, backend, \
     threads, target, tool_version, host, pid, command_line, status, error, ended_at, \
     ended_unix, elapsed_s, measured_s, operations, operations_all, throughput, offered, \
     scheduled, abandoned, stop_reason, seed, runtime_threads, cpu_user_s, cpu_system_s, \
     client_index, client_count, measurement_interval, percentiles, warmup_s, \
     (SELECT COUNT(*) FROM intervals i WHERE i.run_id = r.id), lag_hist, stage_index, \
     runtime_threads_why, busiest_thread";

/// Counts by status from `row`'s columns `from..`, in [`Status::ALL`] order.
pub(super) fn statuses_at(row: &[Value], from: usize) -> [u64; Status::COUNT] {
    let mut s = [0u64; Status::COUNT];
    for (i, n) in s.iter_mut().enumerate() {
        *n = as_u64(&row[from + i]);
    }
    s
}
