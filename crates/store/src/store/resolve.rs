//! Resolving what a user names (an id or a unique prefix of one, a run URI
//! and its stages, `last`) to runs, and finding a stage's client processes.

use super::*;

impl Store {
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
    pub(super) fn stages_of(&self, uri: &str) -> Result<Vec<Stage>, StoreError> {
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
    pub(super) fn clients_of(&self, uri: &str, stage: &Stage) -> Result<Vec<RunId>, StoreError> {
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
    pub(super) fn whole_run(&self, id: &RunId) -> Result<Vec<RunId>, StoreError> {
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
    pub(super) fn missing_from(
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

/// One client process's run of a stage.
pub(crate) struct ClientRun {
    pub id: RunId,
    pub status: RunStatus,
}
