//! One pgbench script command as a SQLite connection's thread runs it,
//! and what it kept: apart from the script module so that the connection
//! (which carries it to its thread) and the script workload both build on
//! it.

use rusqlite::types::ValueRef;
use sojourn_core::backend::Status;
use sojourn_core::workload::script::{Kept, KeptResult};

/// One script command as the connection's thread runs it, and what it
/// kept.
pub(super) struct Command {
    pub(super) text: String,
    pub(super) params: Vec<Option<String>>,
    pub(super) simple: bool,
    pub(super) keep: bool,
    /// Every row kept, not only the last.
    pub(super) every: bool,
    pub(super) kept: Kept,
}

impl Command {
    pub(super) fn run(&mut self, conn: &rusqlite::Connection) -> rusqlite::Result<Status> {
        self.kept.results.clear();
        if self.simple && !self.keep {
            // Several statements may stand in one simple query (`\;`).
            conn.execute_batch(&self.text)?;
            return Ok(Status::Ok);
        }
        let mut stmt = conn.prepare_cached(&self.text)?;
        for (i, p) in self.params.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, p.as_deref())?;
        }
        let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let mut result = KeptResult {
            columns,
            ..KeptResult::default()
        };
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            if self.keep {
                let values = (0..result.columns.len())
                    .map(|i| text_of(row.get_ref(i)))
                    .collect();
                result.add_row(values, self.every);
            } else {
                result.rows += 1;
            }
        }
        if self.keep {
            self.kept.results.push(result);
        }
        Ok(Status::Ok)
    }
}

/// A column as text, as a server would send it.
fn text_of(v: rusqlite::Result<ValueRef<'_>>) -> Option<String> {
    match v.ok()? {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(r) => Some(r.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}
