//! The store's schema and its versioned migrations.
//!
//! `schema_version` holds one row: the version the store is at. Opening a
//! store applies, in one transaction each, every migration above that
//! version, so a store written by an older sojourn is brought up to date and
//! a store from a newer one is refused rather than misread. Migrations are
//! append-only: a released one is never edited.
//!
//! The SQL is written once for SQLite and PostgreSQL: `BIGINT`, `DOUBLE
//! PRECISION` and `TEXT` mean the same in both; binary columns are spelt
//! `{blob}` and become `BLOB` or `BYTEA`.
//!
//! Layout (see docs/results.md for every column and the views):
//! - `runs`: one row per run (one client process of it): what ran, where,
//!   its status and, once finished, its totals.
//! - `run_properties`, `run_labels`, `run_warnings`: key/value side tables.
//! - `run_ops`: per run and operation kind, counts by status, latency
//!   figures and the encoded HDR histograms of the summary.
//! - `intervals`, `interval_ops`: the time series, written as the run goes.
//! - `run_server_counters`: the change of the database's own counters over
//!   the run, where it tells.
//! - `merged_runs`, `merged_ops`: a run of several client processes as a
//!   whole (its clients merged exactly), written when its last client
//!   finishes, so the views give one row per run.
//! - A run URI names a whole benchmark, as PKB's does: its load and each of
//!   its run stages (`runs.stage_index`), each of one or more clients.
//! - `run_segments`, `segment_ops`: a run that followed a rate profile,
//!   each segment summarised on its own (operations counted by intended
//!   start), as `run_ops` summarises the whole.
//! - `run_failures`: per run and operation kind, why operations failed
//!   in the database's words: each cause counted, with its first text and
//!   time.
//! - `agents`, `agent_phases`, `agent_shares`: where agents on many
//!   machines meet (a PostgreSQL store): who is there and alive, the phases
//!   a coordinator posted, and each share, who claimed it, how it went and
//!   the run it recorded (see agents.rs).

/// The schema version this build writes; older stores are migrated on open.
pub const SCHEMA_VERSION: u32 = 9;

/// Column names of the counts by status, in [`sojourn_core::backend::Status::ALL`] order.
pub(crate) const STATUS_COLUMNS: [&str; 9] = [
    "ok",
    "batched_ok",
    "not_found",
    "error",
    "not_implemented",
    "unexpected_state",
    "bad_request",
    "forbidden",
    "service_unavailable",
];

/// The latency figures kept as columns beside each histogram, for SQL;
/// the histograms themselves are what sojourn reads back.
pub(crate) const FIGURES: [&str; 9] = [
    "mean", "min", "max", "p50", "p90", "p95", "p99", "p99_9", "p99_99",
];

/// Migration `n` (1-based) takes a store from version n-1 to n.
pub(crate) const MIGRATIONS: [&str; 9] = [V1, V2, V3, V4, V5, V6, V7, V8, V9];

/// An operation kind's columns, as `run_ops` keeps them for a run (V1)
/// and `segment_ops` for a segment of its rate profile (V8): operations,
/// counts by status, service and response figures, and the histograms.
/// Both are released migrations: this text never changes.
macro_rules! op_columns {
    () => {
        r#"    operations BIGINT NOT NULL,
    ok BIGINT NOT NULL, batched_ok BIGINT NOT NULL, not_found BIGINT NOT NULL,
    error BIGINT NOT NULL, not_implemented BIGINT NOT NULL,
    unexpected_state BIGINT NOT NULL, bad_request BIGINT NOT NULL,
    forbidden BIGINT NOT NULL, service_unavailable BIGINT NOT NULL,
    service_mean_us DOUBLE PRECISION, service_min_us DOUBLE PRECISION,
    service_max_us DOUBLE PRECISION, service_p50_us DOUBLE PRECISION,
    service_p90_us DOUBLE PRECISION, service_p95_us DOUBLE PRECISION,
    service_p99_us DOUBLE PRECISION, service_p99_9_us DOUBLE PRECISION,
    service_p99_99_us DOUBLE PRECISION,
    response_mean_us DOUBLE PRECISION, response_min_us DOUBLE PRECISION,
    response_max_us DOUBLE PRECISION, response_p50_us DOUBLE PRECISION,
    response_p90_us DOUBLE PRECISION, response_p95_us DOUBLE PRECISION,
    response_p99_us DOUBLE PRECISION, response_p99_9_us DOUBLE PRECISION,
    response_p99_99_us DOUBLE PRECISION,
    service_hist {blob} NOT NULL,
    response_hist {blob} NOT NULL,
    failed_service_hist {blob},
    failed_response_hist {blob},
"#
    };
}

/// The first schema: runs, their side tables, totals per operation kind,
/// and the time series.
const V1: &str = concat!(
    r#"
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    run_uri TEXT NOT NULL,
    started_at TEXT NOT NULL,
    started_unix DOUBLE PRECISION NOT NULL,
    ended_at TEXT,
    ended_unix DOUBLE PRECISION,
    phase TEXT NOT NULL,
    workload TEXT NOT NULL,
    backend TEXT NOT NULL,
    threads BIGINT NOT NULL,
    target DOUBLE PRECISION,
    tool_version TEXT NOT NULL,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    command_line TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    elapsed_s DOUBLE PRECISION,
    measured_s DOUBLE PRECISION,
    operations BIGINT,
    operations_all BIGINT,
    throughput DOUBLE PRECISION,
    offered DOUBLE PRECISION,
    scheduled BIGINT,
    abandoned BIGINT,
    stop_reason TEXT,
    seed BIGINT,
    runtime_threads BIGINT,
    cpu_user_s DOUBLE PRECISION,
    cpu_system_s DOUBLE PRECISION,
    lag_hist {blob}
);
CREATE TABLE run_properties (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE run_labels (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE run_warnings (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE run_ops (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    op TEXT NOT NULL,
"#,
    op_columns!(),
    r#"    PRIMARY KEY (run_id, op)
);
CREATE TABLE intervals (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    start_s DOUBLE PRECISION NOT NULL,
    length_s DOUBLE PRECISION NOT NULL,
    ops_done BIGINT NOT NULL,
    cpu_user_s DOUBLE PRECISION NOT NULL,
    cpu_system_s DOUBLE PRECISION NOT NULL,
    warmup BIGINT NOT NULL,
    lag_count BIGINT,
    lag_mean_us DOUBLE PRECISION, lag_min_us DOUBLE PRECISION,
    lag_max_us DOUBLE PRECISION, lag_p50_us DOUBLE PRECISION,
    lag_p90_us DOUBLE PRECISION, lag_p95_us DOUBLE PRECISION,
    lag_p99_us DOUBLE PRECISION, lag_p99_9_us DOUBLE PRECISION,
    lag_p99_99_us DOUBLE PRECISION,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE interval_ops (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    op TEXT NOT NULL,
    ok BIGINT NOT NULL, batched_ok BIGINT NOT NULL, not_found BIGINT NOT NULL,
    error BIGINT NOT NULL, not_implemented BIGINT NOT NULL,
    unexpected_state BIGINT NOT NULL, bad_request BIGINT NOT NULL,
    forbidden BIGINT NOT NULL, service_unavailable BIGINT NOT NULL,
    service_mean_us DOUBLE PRECISION, service_p50_us DOUBLE PRECISION,
    service_p99_us DOUBLE PRECISION, service_p99_9_us DOUBLE PRECISION,
    service_max_us DOUBLE PRECISION,
    response_mean_us DOUBLE PRECISION, response_p50_us DOUBLE PRECISION,
    response_p99_us DOUBLE PRECISION, response_p99_9_us DOUBLE PRECISION,
    response_max_us DOUBLE PRECISION,
    service_hist {blob} NOT NULL,
    response_hist {blob} NOT NULL,
    PRIMARY KEY (run_id, seq, op),
    FOREIGN KEY (run_id, seq) REFERENCES intervals (run_id, seq) ON DELETE CASCADE
);
CREATE INDEX runs_started ON runs (started_unix);
"#
);

/// Multi-process runs (client index and count), what the summary prints
/// (measurement interval, percentiles, warm-up), and the views that mirror
/// the PKB walkthrough's queries.
const V2: &str = r#"
ALTER TABLE runs ADD COLUMN client_index BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN client_count BIGINT NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN measurement_interval TEXT NOT NULL DEFAULT 'op';
ALTER TABLE runs ADD COLUMN percentiles TEXT NOT NULL DEFAULT '95,99';
ALTER TABLE runs ADD COLUMN warmup_s DOUBLE PRECISION NOT NULL DEFAULT 0;
CREATE INDEX runs_run_uri ON runs (run_uri);
CREATE INDEX run_labels_key ON run_labels (key, value);

CREATE VIEW run_info AS
SELECT
    r.id AS run_id,
    r.run_uri,
    r.started_at,
    r.ended_at,
    r.status,
    r.phase AS stage,
    r.workload,
    r.backend,
    r.host,
    r.client_index,
    r.client_count AS vm_count,
    r.threads AS threads_per_vm,
    r.target,
    r.target * r.client_count AS target_throughput,
    r.throughput AS actual_throughput,
    r.offered,
    r.operations,
    r.measured_s,
    (SELECT value FROM run_labels l WHERE l.run_id = r.id AND l.key = 'experiment') AS experiment,
    COALESCE(
        (SELECT value FROM run_labels l WHERE l.run_id = r.id AND l.key = 'workload_name'),
        r.workload) AS workload_name,
    COALESCE(
        (SELECT value FROM run_labels l WHERE l.run_id = r.id AND l.key = 'workload_index'),
        '0') AS workload_index,
    CAST((SELECT value FROM run_properties p WHERE p.run_id = r.id AND p.key = 'fieldlength') AS BIGINT) AS fieldlength,
    CAST((SELECT value FROM run_properties p WHERE p.run_id = r.id AND p.key = 'fieldcount') AS BIGINT) AS fieldcount,
    CAST((SELECT value FROM run_properties p WHERE p.run_id = r.id AND p.key = 'recordcount') AS BIGINT) AS recordcount,
    (SELECT value FROM run_properties p WHERE p.run_id = r.id AND p.key = 'readallfields') AS readallfields,
    (SELECT value FROM run_properties p WHERE p.run_id = r.id AND p.key = 'requestdistribution') AS requestdistribution,
    (SELECT value FROM run_labels l WHERE l.run_id = r.id AND l.key = 'machine_type') AS machine_type,
    CAST((SELECT value FROM run_labels l WHERE l.run_id = r.id AND l.key = 'bigtable_node_count') AS BIGINT) AS node_count,
    LOWER((SELECT value FROM run_labels l WHERE l.run_id = r.id AND l.key = 'bigtable_storage_type')) AS storage_type
FROM runs r;

CREATE VIEW performance AS
SELECT
    i.run_id, i.run_uri, i.started_at, i.ended_at, i.status, i.stage,
    i.experiment, i.workload_name, i.workload_index,
    o.op AS operation,
    i.target_throughput, i.actual_throughput,
    o.operations,
    o.service_p50_us / 1000.0 AS p50_latency_ms,
    o.service_p99_us / 1000.0 AS p99_latency_ms,
    o.service_p99_9_us / 1000.0 AS p999_latency_ms,
    o.response_p50_us / 1000.0 AS response_p50_latency_ms,
    o.response_p99_us / 1000.0 AS response_p99_latency_ms,
    o.response_p99_9_us / 1000.0 AS response_p999_latency_ms,
    i.fieldlength, i.fieldcount, i.recordcount,
    i.readallfields, i.requestdistribution,
    i.threads_per_vm, i.vm_count,
    i.machine_type, i.node_count, i.storage_type
FROM run_info i
JOIN run_ops o ON o.run_id = i.run_id;

CREATE VIEW cost AS
SELECT
    c.*,
    CAST(c.node_count_or_default AS DOUBLE PRECISION) * 0.65 * 24 * 30
        + c.baseline_table_gb * (CASE WHEN c.storage_type_or_default = 'hdd' THEN 0.026 ELSE 0.17 END)
        AS baseline_monthly_cost_usd
FROM (
    SELECT
        i.run_id, i.run_uri, i.started_at, i.ended_at, i.status, i.stage,
        i.experiment, i.workload_name, i.workload_index,
        i.actual_throughput,
        i.node_count,
        COALESCE(i.node_count, 1) AS node_count_or_default,
        i.storage_type,
        COALESCE(i.storage_type, 'ssd') AS storage_type_or_default,
        CAST((COALESCE(i.fieldlength, 100) + 39) * COALESCE(i.fieldcount, 10)
            * COALESCE(i.recordcount, 0) AS DOUBLE PRECISION) / 1073741824.0 AS baseline_table_gb,
        CAST(NULL AS DOUBLE PRECISION) AS avg_cpu_all_nodes,
        CAST(NULL AS DOUBLE PRECISION) AS avg_cpu_hottest_node
    FROM run_info i
) c;
"#;

/// The database's own counters over a run (pg_stat_database, Redis INFO,
/// SHOW GLOBAL STATUS): one row per counter with its change between the
/// samples at the run's start and end, the operations the client did in
/// between, and their quotient, so SQL can compare runs per operation.
const V3: &str = r#"
CREATE TABLE run_server_counters (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    delta DOUBLE PRECISION NOT NULL,
    operations BIGINT NOT NULL,
    per_op DOUBLE PRECISION,
    PRIMARY KEY (run_id, name)
);
"#;

/// The `performance` and `cost` views over single-client runs and merged
/// ones, as V4 made them and V5 remade them with the stage in the merged
/// join (`$merged_join`). Both are released migrations: this text never
/// changes; a new view is a new migration.
macro_rules! merged_views {
    ($merged_join:literal) => {
        concat!(
            r#"CREATE VIEW performance AS
SELECT
    i.run_id, i.run_uri, i.started_at, i.ended_at, i.status, i.stage,
    i.experiment, i.workload_name, i.workload_index,
    x.op AS operation,
    i.target_throughput, x.throughput AS actual_throughput,
    x.operations,
    x.service_p50_us / 1000.0 AS p50_latency_ms,
    x.service_p99_us / 1000.0 AS p99_latency_ms,
    x.service_p99_9_us / 1000.0 AS p999_latency_ms,
    x.response_p50_us / 1000.0 AS response_p50_latency_ms,
    x.response_p99_us / 1000.0 AS response_p99_latency_ms,
    x.response_p99_9_us / 1000.0 AS response_p999_latency_ms,
    i.fieldlength, i.fieldcount, i.recordcount,
    i.readallfields, i.requestdistribution,
    i.threads_per_vm, i.vm_count,
    i.machine_type, i.node_count, i.storage_type
FROM (
    SELECT r.id AS run_id, r.throughput, o.op, o.operations,
        o.service_p50_us, o.service_p99_us, o.service_p99_9_us,
        o.response_p50_us, o.response_p99_us, o.response_p99_9_us
    FROM runs r JOIN run_ops o ON o.run_id = r.id
    WHERE r.client_count = 1
    UNION ALL
    SELECT m.first_run_id, m.throughput, o.op, o.operations,
        o.service_p50_us, o.service_p99_us, o.service_p99_9_us,
        o.response_p50_us, o.response_p99_us, o.response_p99_9_us
    FROM merged_runs m
"#,
            $merged_join,
            r#") x
JOIN run_info i ON i.run_id = x.run_id;

CREATE VIEW cost AS
SELECT
    c.*,
    CAST(c.node_count_or_default AS DOUBLE PRECISION) * 0.65 * 24 * 30
        + c.baseline_table_gb * (CASE WHEN c.storage_type_or_default = 'hdd' THEN 0.026 ELSE 0.17 END)
        AS baseline_monthly_cost_usd
FROM (
    SELECT
        i.run_id, i.run_uri, i.started_at, i.ended_at, i.status, i.stage,
        i.experiment, i.workload_name, i.workload_index,
        x.throughput AS actual_throughput,
        i.node_count,
        COALESCE(i.node_count, 1) AS node_count_or_default,
        i.storage_type,
        COALESCE(i.storage_type, 'ssd') AS storage_type_or_default,
        CAST((COALESCE(i.fieldlength, 100) + 39) * COALESCE(i.fieldcount, 10)
            * COALESCE(i.recordcount, 0) AS DOUBLE PRECISION) / 1073741824.0 AS baseline_table_gb,
        CAST(NULL AS DOUBLE PRECISION) AS avg_cpu_all_nodes,
        CAST(NULL AS DOUBLE PRECISION) AS avg_cpu_hottest_node
    FROM (
        SELECT id AS run_id, throughput FROM runs WHERE client_count = 1
        UNION ALL
        SELECT first_run_id, throughput FROM merged_runs
    ) x
    JOIN run_info i ON i.run_id = x.run_id
) c;
"#
        )
    };
}

/// A run of several client processes as one row of the views: its clients
/// merged exactly (histograms added) when the last of them finishes, kept
/// in `merged_runs` and `merged_ops`; `performance` and `cost` then give
/// one row per run (and operation), where they gave one per client.
const V4: &str = concat!(
    r#"
CREATE TABLE merged_runs (
    run_uri TEXT NOT NULL,
    phase TEXT NOT NULL,
    first_run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    clients BIGINT NOT NULL,
    operations BIGINT NOT NULL,
    measured_s DOUBLE PRECISION NOT NULL,
    throughput DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_uri, phase)
);
CREATE TABLE merged_ops (
    run_uri TEXT NOT NULL,
    phase TEXT NOT NULL,
    op TEXT NOT NULL,
    operations BIGINT NOT NULL,
    service_p50_us DOUBLE PRECISION, service_p99_us DOUBLE PRECISION,
    service_p99_9_us DOUBLE PRECISION,
    response_p50_us DOUBLE PRECISION, response_p99_us DOUBLE PRECISION,
    response_p99_9_us DOUBLE PRECISION,
    PRIMARY KEY (run_uri, phase, op),
    FOREIGN KEY (run_uri, phase) REFERENCES merged_runs (run_uri, phase) ON DELETE CASCADE
);
DROP VIEW cost;
DROP VIEW performance;

-- Each run's rows: a run of one client process as it is, a run of
-- several as its merged whole (under its first client's id, whose run
-- carries the labels and properties).
"#,
    merged_views!("    JOIN merged_ops o ON o.run_uri = m.run_uri AND o.phase = m.phase\n")
);

/// One run URI for a benchmark's stages, as PKB gives: `stage_index` tells
/// a suite's run stages apart (0 for a load and for a lone run), and the
/// clients that merge are those of one URI, phase and stage index. The
/// merged tables are derived data, rebuilt with the wider key; runs stored
/// before this version keep index 0, which is what they were.
const V5: &str = concat!(
    r#"
ALTER TABLE runs ADD COLUMN stage_index BIGINT NOT NULL DEFAULT 0;
DROP VIEW cost;
DROP VIEW performance;
CREATE TABLE merged_runs_v5 (
    run_uri TEXT NOT NULL,
    phase TEXT NOT NULL,
    stage_index BIGINT NOT NULL,
    first_run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    clients BIGINT NOT NULL,
    operations BIGINT NOT NULL,
    measured_s DOUBLE PRECISION NOT NULL,
    throughput DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_uri, phase, stage_index)
);
CREATE TABLE merged_ops_v5 (
    run_uri TEXT NOT NULL,
    phase TEXT NOT NULL,
    stage_index BIGINT NOT NULL,
    op TEXT NOT NULL,
    operations BIGINT NOT NULL,
    service_p50_us DOUBLE PRECISION, service_p99_us DOUBLE PRECISION,
    service_p99_9_us DOUBLE PRECISION,
    response_p50_us DOUBLE PRECISION, response_p99_us DOUBLE PRECISION,
    response_p99_9_us DOUBLE PRECISION,
    PRIMARY KEY (run_uri, phase, stage_index, op),
    FOREIGN KEY (run_uri, phase, stage_index)
        REFERENCES merged_runs_v5 (run_uri, phase, stage_index) ON DELETE CASCADE
);
INSERT INTO merged_runs_v5 (run_uri, phase, stage_index, first_run_id, clients, operations,
    measured_s, throughput)
SELECT run_uri, phase, 0, first_run_id, clients, operations, measured_s, throughput
FROM merged_runs;
INSERT INTO merged_ops_v5 (run_uri, phase, stage_index, op, operations, service_p50_us,
    service_p99_us, service_p99_9_us, response_p50_us, response_p99_us, response_p99_9_us)
SELECT run_uri, phase, 0, op, operations, service_p50_us, service_p99_us, service_p99_9_us,
    response_p50_us, response_p99_us, response_p99_9_us
FROM merged_ops;
DROP TABLE merged_ops;
DROP TABLE merged_runs;
ALTER TABLE merged_runs_v5 RENAME TO merged_runs;
ALTER TABLE merged_ops_v5 RENAME TO merged_ops;

"#,
    merged_views!(
        "    JOIN merged_ops o\n        ON o.run_uri = m.run_uri AND o.phase = m.phase AND o.stage_index = m.stage_index\n"
    )
);

/// Why a run had the runtime threads it had (`set`, `load`, `sockets`,
/// `in_process`) and the busiest one's CPU time over the run's length:
/// NULL for runs stored before.
const V6: &str = r#"
ALTER TABLE runs ADD COLUMN runtime_threads_why TEXT;
ALTER TABLE runs ADD COLUMN busiest_thread DOUBLE PRECISION;
"#;

/// Agents on many machines, coordinated through the store: each agent's
/// registration and heartbeat (times on the store server's clock, so
/// liveness never depends on a machine's own), the phases coordinators
/// post, and their shares. A stage merged without some of its clients
/// says which are missing (`merged_runs.missing`, NULL when whole).
const V7: &str = r#"
CREATE TABLE agents (
    name TEXT PRIMARY KEY,
    incarnation TEXT NOT NULL,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    cores BIGINT NOT NULL,
    version TEXT NOT NULL,
    started_unix DOUBLE PRECISION NOT NULL,
    heartbeat_unix DOUBLE PRECISION NOT NULL,
    clock_offset_us DOUBLE PRECISION,
    state TEXT NOT NULL,
    stop_requested BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE agent_phases (
    id TEXT PRIMARY KEY,
    created_unix DOUBLE PRECISION NOT NULL,
    coordinator TEXT NOT NULL,
    version TEXT NOT NULL,
    run_uri TEXT NOT NULL,
    stage_index BIGINT NOT NULL,
    phase TEXT NOT NULL,
    shares BIGINT NOT NULL,
    state TEXT NOT NULL,
    setup TEXT,
    start_unix DOUBLE PRECISION,
    heartbeat_unix DOUBLE PRECISION NOT NULL,
    stop_requested BIGINT NOT NULL DEFAULT 0,
    missing TEXT
);
CREATE TABLE agent_shares (
    phase_id TEXT NOT NULL REFERENCES agent_phases (id) ON DELETE CASCADE,
    share_index BIGINT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    agent TEXT,
    incarnation TEXT,
    claimed_unix DOUBLE PRECISION,
    ready_unix DOUBLE PRECISION,
    done_unix DOUBLE PRECISION,
    run_id TEXT,
    error TEXT,
    clock_offset_us DOUBLE PRECISION,
    start_lateness_us DOUBLE PRECISION,
    PRIMARY KEY (phase_id, share_index)
);
CREATE INDEX agent_shares_by_state ON agent_shares (state);
ALTER TABLE merged_runs ADD COLUMN missing TEXT;
"#;

/// Rate profiles: each segment of a run's profile (its span, the
/// operations it offered on average and those intended in it that ended,
/// whether it held its `rate.slo`: NULL when not judged),
/// and per segment and operation kind what `run_ops` keeps for the run;
/// each interval's arrivals released (the load offered, open loop).
const V8: &str = concat!(
    r#"
CREATE TABLE run_segments (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    label TEXT NOT NULL,
    start_s DOUBLE PRECISION NOT NULL,
    end_s DOUBLE PRECISION NOT NULL,
    expected DOUBLE PRECISION NOT NULL,
    ops_done BIGINT NOT NULL,
    held BIGINT,
    missed_because TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE segment_ops (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    op TEXT NOT NULL,
"#,
    op_columns!(),
    r#"    PRIMARY KEY (run_id, seq, op)
);
ALTER TABLE intervals ADD COLUMN offered BIGINT;
"#
);

/// Why operations failed: per run, operation kind, status and cause
/// (`kind`: the database's text with names and numbers masked), how many
/// failed so, and the first such failure's full text and time.
const V9: &str = r#"
CREATE TABLE run_failures (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    op TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL,
    failures BIGINT NOT NULL,
    first_text TEXT NOT NULL,
    first_unix DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, op, status, kind)
);
"#;

/// Migration `n`'s SQL for a dialect.
pub(crate) fn migration_sql(n: usize, blob: &str) -> String {
    MIGRATIONS[n - 1].replace("{blob}", blob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_core::backend::Status;

    #[test]
    fn status_columns_follow_core_statuses() {
        assert_eq!(STATUS_COLUMNS.len(), Status::COUNT);
        for (st, col) in Status::ALL.iter().zip(STATUS_COLUMNS) {
            assert_eq!(st.ycsb_name().to_ascii_lowercase(), col);
        }
        assert_eq!(MIGRATIONS.len() as u32, SCHEMA_VERSION);
    }
}
