//! The server counters of a PostgreSQL run: the database's and the
//! benchmark tables' statistics views, and the server's CPU time when it
//! runs on this machine.

use sojourn_core::backend::{BackendError, Schema, ServerCounters, SERVER_INSTANCE};
use tokio_postgres::Client;

use super::sqlstate::error_text;
use super::PostgresBackend;
use crate::sql::checked_table;

/// `pg_stat_database` columns kept as server counters, for the whole
/// database (catalog work and autovacuum included): blocks read from outside
/// shared buffers and found in them, rows returned by scans and fetched by
/// index, rows written, commits.
const DATABASE_COUNTERS: [&str; 9] = [
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "xact_commit",
    "xact_rollback",
];

/// The benchmark table's own counters (`pg_stat_user_tables`,
/// `pg_statio_user_tables`), named `table_...`: unlike the database's they
/// move only with the benchmark's work, so a read-only run shows exactly
/// zero writes even when autovacuum analyses a catalog meanwhile.
const TABLE_COUNTERS: [(&str, &str); 9] = [
    ("t.seq_tup_read", "table_seq_tup_read"),
    ("t.idx_tup_fetch", "table_idx_tup_fetch"),
    ("t.idx_scan", "table_idx_scan"),
    ("t.n_tup_ins", "table_tup_inserted"),
    ("t.n_tup_upd", "table_tup_updated"),
    ("t.n_tup_del", "table_tup_deleted"),
    ("t.n_tup_hot_upd", "table_tup_hot_updated"),
    ("io.heap_blks_read", "table_heap_blks_read"),
    ("io.heap_blks_hit", "table_heap_blks_hit"),
];

impl PostgresBackend {
    /// [`Backend::server_counters`] over `client`.
    pub(super) async fn counters_on(
        &self,
        client: &Client,
        schema: &Schema,
    ) -> Result<Option<ServerCounters>, BackendError> {
        let err = |e: tokio_postgres::Error| self.setup_error(error_text(&e));
        // PostgreSQL 15+ keeps each backend's counts in backend-local memory
        // and publishes them when the backend goes idle at most once a
        // second (or after 10 s idle): a new connection reads what has been
        // published, so up to a second of the workers' latest work may be
        // missing from a reading. That is why this is a per-phase figure,
        // not a per-interval one. `pg_stat_clear_snapshot` makes sure a
        // cached snapshot (stats_fetch_consistency) is never reused.
        client
            .batch_execute("SELECT pg_stat_clear_snapshot()")
            .await
            .map_err(err)?;
        let mut c = ServerCounters::new();
        let cols = DATABASE_COUNTERS
            .iter()
            .map(|n| format!("{n}::float8"))
            .collect::<Vec<_>>()
            .join(", ");
        let row = client
            .query_one(
                &format!(
                    "SELECT {cols}, pg_backend_pid(), \
                     extract(epoch FROM pg_postmaster_start_time())::float8 \
                     FROM pg_stat_database WHERE datname = current_database()"
                ),
                &[],
            )
            .await
            .map_err(err)?;
        for (i, name) in DATABASE_COUNTERS.iter().enumerate() {
            let v: Option<f64> = row.try_get(i).map_err(|e| self.setup_error(e))?;
            c.set(name, v.unwrap_or(0.0));
        }
        let own_pid: i32 = row
            .try_get(DATABASE_COUNTERS.len())
            .map_err(|e| self.setup_error(e))?;
        // The postmaster's start, to the microsecond: another one means the
        // server restarted between two readings.
        let started: f64 = row
            .try_get(DATABASE_COUNTERS.len() + 1)
            .map_err(|e| self.setup_error(e))?;
        c.set(SERVER_INSTANCE, started);
        if checked_table(schema).is_ok() {
            // Summed over the workload's tables (LIOPS has one per schema).
            let cols = TABLE_COUNTERS
                .iter()
                .map(|(col, _)| format!("COALESCE(sum({col}), 0)::float8"))
                .collect::<Vec<_>>()
                .join(", ");
            // Unquoted names fold to lower case, as in `prepare`.
            let names: Vec<String> = schema.tables().map(str::to_ascii_lowercase).collect();
            let row = client
                .query_one(
                    &format!(
                        "SELECT count(*), {cols} FROM pg_stat_user_tables t \
                         JOIN pg_statio_user_tables io USING (relid) \
                         WHERE t.schemaname = current_schema() AND t.relname = ANY($1)"
                    ),
                    &[&names],
                )
                .await
                .map_err(err)?;
            let found: i64 = row.try_get(0).map_err(|e| self.setup_error(e))?;
            if found > 0 {
                for (i, (_, name)) in TABLE_COUNTERS.iter().enumerate() {
                    let v: f64 = row.try_get(i + 1).map_err(|e| self.setup_error(e))?;
                    c.set(name, v);
                }
            }
        }
        #[cfg(target_os = "linux")]
        if self.is_local() {
            if let Some(cpu) = crate::proc_cpu::server_cpu_s(own_pid as u32, "postgres") {
                c.set("server_cpu_s", cpu);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = own_pid;
        Ok(Some(c))
    }

    /// Whether the server runs on this machine, so its processes' CPU time
    /// can be read from /proc. Loopback or a Unix socket only: a server
    /// elsewhere may have process ids that mean something else here.
    fn is_local(&self) -> bool {
        self.inner.config.get_hosts().iter().all(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => {
                name == "localhost"
                    || name
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(_) => true,
        })
    }
}
