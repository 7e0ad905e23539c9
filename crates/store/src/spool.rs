//! Runs the store could not take in time, kept in spool files until it
//! can, and importing runs from such a file (or from any other store file)
//! into a store.
//!
//! A spool file is a SQLite store of its own, written by the one process
//! whose run it holds, with the store's schema and one table more,
//! `spool_runs`: the run's id and how many of its intervals went to the
//! store before it failed (the spool holds the rest, numbered from 0, so a
//! run that lost its store halfway is put back together on import). While
//! the run goes on the file is `RUN_ID.PID@HOST.partial`; once it ends it
//! is renamed `RUN_ID.sqlite`, the name that says it is complete. A
//! partial file whose process died on this host is imported too: its run
//! is then marked failed, as a run in the store whose process died is.
//!
//! Importing is idempotent: a run already in the store is replaced (its
//! intervals from the spool's first one on), so two processes importing one
//! file at once, or a file imported again after a crash, store it once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::db::{Db, DbError};
use crate::model::{QueryResult, Value};
use crate::schema::SCHEMA_VERSION;
use crate::sqlite::Mode;
use crate::store::{as_i64, int, text, WAIT};
use crate::{RunId, RunMeta, Store, StoreError};

/// The tables that hold a run's rows besides `runs`, parents before the
/// rows that refer to them.
const RUN_TABLES: [&str; 10] = [
    "run_properties",
    "run_labels",
    "run_warnings",
    "run_ops",
    "run_failures",
    "intervals",
    "interval_ops",
    "run_server_counters",
    "run_segments",
    "segment_ops",
];

/// The tables whose `seq` numbers a run's intervals.
const INTERVAL_TABLES: [&str; 2] = ["intervals", "interval_ops"];

/// A run being kept in a spool file.
pub struct Spool {
    store: Store,
    partial: PathBuf,
    ready: PathBuf,
}

impl Spool {
    /// Start a spool file in `dir` (created if absent) for the run `meta`
    /// describes, of which the first `first_interval` intervals are in the
    /// store already; the run is begun in it.
    pub fn create(dir: &Path, meta: &RunMeta, first_interval: u64) -> Result<Spool, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Location {
            location: dir.display().to_string(),
            reason: format!("cannot create the spool folder: {e}"),
        })?;
        let partial = dir.join(format!(
            "{}.{}@{}.partial",
            meta.id,
            std::process::id(),
            host_tag()
        ));
        let ready = dir.join(format!("{}.sqlite", meta.id));
        let made = (|| -> Result<Store, StoreError> {
            let store = Store::connect(&partial.to_string_lossy(), Mode::Spool, WAIT)?;
            store.migrate()?;
            store.write(
                || "marking the spool file".into(),
                |db| {
                    db.batch(
                        "CREATE TABLE spool_runs (run_id TEXT PRIMARY KEY, \
                         first_interval BIGINT NOT NULL)",
                    )?;
                    db.exec(
                        "INSERT INTO spool_runs (run_id, first_interval) VALUES (?, ?)",
                        &[text(&meta.id.0), int(first_interval)],
                    )?;
                    Ok(())
                },
            )?;
            store.begin_run(meta)?;
            Ok(store)
        })();
        match made {
            Ok(store) => Ok(Spool {
                store,
                partial,
                ready,
            }),
            Err(e) => {
                remove_with_journal(&partial);
                Err(e)
            }
        }
    }

    /// The spool file's store, where the rest of the run is written.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Where the file will be once the run has ended.
    pub fn path(&self) -> &Path {
        &self.ready
    }

    /// The run has ended (stored, or marked failed): close the file and
    /// give it the name that says it is complete. Returns that name.
    pub fn close(self) -> Result<PathBuf, StoreError> {
        let Spool {
            store,
            partial,
            ready,
        } = self;
        // Closing the connection leaves the whole run in the one file.
        drop(store);
        std::fs::rename(&partial, &ready).map_err(|e| StoreError::Location {
            location: partial.display().to_string(),
            reason: format!("cannot rename it to {}: {e}", ready.display()),
        })?;
        Ok(ready)
    }
}

/// What importing a spool folder did.
#[derive(Debug, Default)]
pub struct SpoolImport {
    /// Each file imported (and removed), with the runs it held.
    pub imported: Vec<(PathBuf, Vec<RunId>)>,
    /// Each file that could not be imported; it is left where it is.
    pub failed: Vec<(PathBuf, StoreError)>,
}

impl Store {
    /// Import every complete spool file in `dir`, and every partial one
    /// whose process died on this host; each is removed once its runs are
    /// stored. A folder that does not exist holds nothing.
    pub fn import_spool(&self, dir: &Path) -> SpoolImport {
        let mut report = SpoolImport::default();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return report;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                match name.as_deref() {
                    Some(n) if n.ends_with(".sqlite") => true,
                    Some(n) => parse_partial(n).is_some_and(|(pid, host)| {
                        host == host_tag() && !crate::ids::pid_alive(pid)
                    }),
                    None => false,
                }
            })
            .collect();
        files.sort();
        for file in files {
            match self.import(&file) {
                Ok(runs) => report.imported.push((file, runs)),
                // Another process imported it first.
                Err(_) if !file.exists() => {}
                Err(e) => report.failed.push((file, e)),
            }
        }
        if !report.imported.is_empty() {
            // Runs of partial files are still `running`; their processes
            // are gone.
            if let Err(e) = self.mark_dead_runs() {
                report.failed.push((dir.to_path_buf(), e));
            }
        }
        report
    }

    /// Import every run of the SQLite store or spool file `file` into this
    /// store (replacing a run of the same id); a spool file is removed once
    /// its runs are stored, any other file is left as it is. Returns the
    /// runs imported, oldest first.
    pub fn import(&self, file: &Path) -> Result<Vec<RunId>, StoreError> {
        let shown = file.display().to_string();
        let refuse = |reason: String| StoreError::Location {
            location: shown.clone(),
            reason,
        };
        if !file.is_file() {
            return Err(refuse(
                "no such file; give a spool file (RUN_ID.sqlite) or another results store".into(),
            ));
        }
        let own = Path::new(
            self.location()
                .strip_prefix("sqlite:")
                .unwrap_or(self.location()),
        );
        if let (Ok(a), Ok(b)) = (own.canonicalize(), file.canonicalize()) {
            if a == b {
                return Err(refuse("is the store it would be imported into".into()));
            }
        }
        if let Some((pid, host)) = file
            .file_name()
            .and_then(|n| parse_partial(&n.to_string_lossy()))
        {
            if host == host_tag() && pid != std::process::id() && crate::ids::pid_alive(pid) {
                return Err(refuse(format!(
                    "is still being written by process {pid}; it is imported once that run ends"
                )));
            }
        }
        let source = Store::connect(&file.to_string_lossy(), Mode::Source, self.wait())?;
        let version = source.schema_version()?;
        if version == 0 {
            return Err(refuse(
                "is not a results store or spool file (it has no schema_version table)".into(),
            ));
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                location: shown,
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        let spool = source.has_table("spool_runs")?;
        let firsts: BTreeMap<String, u64> = if spool {
            source
                .read(
                    || "reading the spool's runs".into(),
                    "SELECT run_id, first_interval FROM spool_runs",
                    &[],
                )?
                .rows
                .into_iter()
                .filter_map(|r| Some((r[0].as_text()?.to_string(), as_i64(&r[1])?.max(0) as u64)))
                .collect()
        } else {
            BTreeMap::new()
        };
        let mut tables = Vec::new();
        for t in RUN_TABLES {
            if source.has_table(t)? {
                tables.push(t);
            }
        }
        let ids: Vec<String> = source
            .read(
                || "listing its runs".into(),
                "SELECT id FROM runs ORDER BY started_unix, id",
                &[],
            )?
            .rows
            .into_iter()
            .filter_map(|r| r[0].as_text().map(str::to_string))
            .collect();
        let mut imported = Vec::with_capacity(ids.len());
        // One run at a time: a run's rows are in memory, never the store's.
        for id in ids {
            let key = [text(&id)];
            let run = source.read(
                || format!("reading run {id}"),
                "SELECT * FROM runs WHERE id = ?",
                &key,
            )?;
            let mut rows = Vec::with_capacity(tables.len());
            for t in &tables {
                rows.push((
                    *t,
                    source.read(
                        || format!("reading {t} of run {id}"),
                        &format!("SELECT * FROM {t} WHERE run_id = ?"),
                        &key,
                    )?,
                ));
            }
            let first = firsts.get(&id).copied().unwrap_or(0);
            self.write(
                || format!("importing run {id} from {shown}"),
                |db| copy_run(db, &id, first, &run, &rows),
            )?;
            let id = RunId(id);
            // The last client of a multi-client run to arrive completes it.
            self.merge_if_last(&id)?;
            imported.push(id);
        }
        drop(source);
        if spool {
            remove_with_journal(file);
        }
        Ok(imported)
    }
}

/// Put one run, read from another store, into `db`: its `runs` row and
/// side tables replace any already there; its intervals follow the first
/// `first` intervals `db` holds of it (those the run stored before it went
/// to the spool), replacing any from there on.
fn copy_run(
    db: &mut dyn Db,
    id: &str,
    first: u64,
    run: &QueryResult,
    rows: &[(&str, QueryResult)],
) -> Result<(), DbError> {
    let key = [text(id)];
    let exists = db
        .query("SELECT COUNT(*) FROM runs WHERE id = ?", &key)?
        .rows
        .first()
        .and_then(|r| r.first())
        .and_then(as_i64)
        .unwrap_or(0)
        > 0;
    let mut base = 0;
    if exists {
        let from = [text(id), int(first)];
        base = db
            .query(
                "SELECT COUNT(*) FROM intervals WHERE run_id = ? AND seq < ?",
                &from,
            )?
            .rows
            .first()
            .and_then(|r| r.first())
            .and_then(as_i64)
            .unwrap_or(0);
        for t in ["interval_ops", "intervals"] {
            db.exec(
                &format!("DELETE FROM {t} WHERE run_id = ? AND seq >= ?"),
                &from,
            )?;
        }
        for t in RUN_TABLES.iter().filter(|t| !INTERVAL_TABLES.contains(t)) {
            db.exec(&format!("DELETE FROM {t} WHERE run_id = ?"), &key)?;
        }
    }
    for row in &run.rows {
        if exists {
            let set: Vec<String> = run
                .columns
                .iter()
                .filter(|c| *c != "id")
                .map(|c| format!("{c} = ?"))
                .collect();
            let mut params: Vec<Value> = run
                .columns
                .iter()
                .zip(row)
                .filter(|(c, _)| *c != "id")
                .map(|(_, v)| v.clone())
                .collect();
            params.push(text(id));
            db.exec(
                &format!("UPDATE runs SET {} WHERE id = ?", set.join(", ")),
                &params,
            )?;
        } else {
            insert(db, "runs", &run.columns, row.clone())?;
        }
    }
    for (table, result) in rows {
        let seq = INTERVAL_TABLES
            .contains(table)
            .then(|| result.columns.iter().position(|c| c == "seq"))
            .flatten();
        for row in &result.rows {
            let mut row = row.clone();
            if let Some(i) = seq {
                row[i] = Value::Integer(base + as_i64(&row[i]).unwrap_or(0));
            }
            insert(db, table, &result.columns, row)?;
        }
    }
    Ok(())
}

fn insert(
    db: &mut dyn Db,
    table: &str,
    columns: &[String],
    row: Vec<Value>,
) -> Result<(), DbError> {
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        columns.join(", "),
        vec!["?"; columns.len()].join(", ")
    );
    db.exec(&sql, &row).map(|_| ())
}

/// This host's name as it appears in partial spool files' names.
fn host_tag() -> String {
    sojourn_core::run_record::host_name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The process and host writing a partial spool file, from its name
/// (`RUN_ID.PID@HOST.partial`).
fn parse_partial(name: &str) -> Option<(u32, String)> {
    let stem = name.strip_suffix(".partial")?;
    let (_, owner) = stem.split_once('.')?;
    let (pid, host) = owner.split_once('@')?;
    Some((pid.parse().ok()?, host.to_string()))
}

/// Remove a SQLite file and the rollback journal a crash may have left.
fn remove_with_journal(file: &Path) {
    let _ = std::fs::remove_file(file);
    let mut journal = file.as_os_str().to_owned();
    journal.push("-journal");
    let _ = std::fs::remove_file(journal);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_names_say_whose_they_are() {
        let name = format!(
            "6e1af3e8-0000-4000-8000-000000000000.4242@{}.partial",
            host_tag()
        );
        assert_eq!(parse_partial(&name), Some((4242, host_tag())));
        assert_eq!(
            parse_partial("a.17@db.example.com.partial"),
            Some((17, "db.example.com".to_string()))
        );
        assert_eq!(parse_partial("6e1af3e8.sqlite"), None);
        assert_eq!(parse_partial("x.notapid@h.partial"), None);
    }
}
