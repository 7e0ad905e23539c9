//! The LIOPS workload's SQL for PostgreSQL and MySQL/MariaDB: PGIO's table
//! `(mykey, scratch, filler)`, its index, and the two statements of a run.
//!
//! PostgreSQL gets `fillfactor = 10`, so each row of about 1 KB fills its
//! 8 KB block and every row a statement touches is a block visit, as PGIO
//! intends. InnoDB has no fillfactor (its pages are 16 KB and hold about
//! fourteen such rows), and `CHAR` stops at 255 there, so MySQL's filler
//! is a `VARCHAR(1024)` written full. The index is `(mykey ASC)`: the
//! default btree on PostgreSQL and MySQL, and a range (not hash) index on
//! YugabyteDB, as ybio makes it.
//!
//! The select sums `scratch` rather than counting alone, so that every row
//! is read from the table and not answered from the index; the count says
//! how many rows it read.
//!
//! PostgreSQL also gets PGIO's in-server loop (`liops.loop=server`), a
//! PL/pgSQL procedure per table that a load creates ([`create_loop`]).

use std::time::Duration;

use sojourn_core::workload::liops::{LiopsConfig, FILLER_WIDTH};

use crate::sql::{self, Dialect};

/// A batch of thousands of rows is not one operation: its load gets at
/// least a minute, whatever the operation timeout.
pub(crate) const LOAD_BATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// Statements that create the tables of `cfg` if absent; with `drop`, each
/// removed first.
pub(crate) fn setup(d: Dialect, cfg: &LiopsConfig, drop: bool) -> Vec<String> {
    let mut statements = Vec::new();
    for table in cfg.tables() {
        if drop {
            statements.push(sql::drop_table(&table));
        }
        statements.push(create_table(d, &table));
    }
    statements
}

fn create_table(d: Dialect, table: &str) -> String {
    match d {
        Dialect::Postgres => format!(
            "CREATE TABLE IF NOT EXISTS {table} (mykey BIGINT NOT NULL, scratch BIGINT NOT NULL, \
             filler CHAR({FILLER_WIDTH}) NOT NULL) WITH (fillfactor = 10)"
        ),
        Dialect::Mysql => format!(
            "CREATE TABLE IF NOT EXISTS {table} (mykey BIGINT NOT NULL, scratch BIGINT NOT NULL, \
             filler VARCHAR({FILLER_WIDTH}) NOT NULL)"
        ),
    }
}

pub(crate) fn index_name(table: &str) -> String {
    format!("{table}_mykey")
}

/// PostgreSQL's form has `IF NOT EXISTS`; MySQL's callers look first.
pub(crate) fn create_index(d: Dialect, table: &str) -> String {
    let name = index_name(table);
    match d {
        Dialect::Postgres => format!("CREATE INDEX IF NOT EXISTS {name} ON {table} (mykey ASC)"),
        Dialect::Mysql => format!("CREATE INDEX {name} ON {table} (mykey ASC)"),
    }
}

pub(crate) fn analyze(d: Dialect, table: &str) -> String {
    match d {
        Dialect::Postgres => format!("ANALYZE {table}"),
        Dialect::Mysql => format!("ANALYZE TABLE {table}"),
    }
}

/// Rows read and the sum of their `scratch` over `mykey` in (lo, hi).
pub(crate) fn select(d: Dialect, table: &str) -> String {
    format!(
        "SELECT COUNT(*), SUM(scratch) FROM {table} WHERE mykey BETWEEN {} AND {}",
        d.placeholder(1),
        d.placeholder(2)
    )
}

/// Add one to `scratch` over `mykey` in (lo, hi).
pub(crate) fn update(d: Dialect, table: &str) -> String {
    format!(
        "UPDATE {table} SET scratch = scratch + 1 WHERE mykey BETWEEN {} AND {}",
        d.placeholder(1),
        d.placeholder(2)
    )
}

/// The in-server loop's procedure for `table` (`liops.loop=server`): one
/// per table, so that its statements are static SQL, planned once per
/// session and cached as a client's prepared statements are (PGIO builds
/// each statement as text and has the server parse and plan it every
/// time, which is work of its own beside the blocks).
pub(crate) fn loop_procedure(table: &str) -> String {
    format!("{table}_liops")
}

/// Statement times in whole microseconds (`clock_timestamp()`'s
/// resolution) are counted in buckets: below 1,000 µs one per microsecond,
/// above that three significant decimal digits per decade, up to 10^10 µs
/// (longer ones in the last). That keeps the histograms as honest as the
/// clock and the client's own (three significant digits), costs the
/// server a few integer operations and one array slot per statement, and
/// the answer is one small array per kind (only buckets that counted
/// something) however long the run.
const EXACT_US: u64 = 1000;
const DECADES: u64 = 7;
/// Buckets per kind; those from here on count statements that touched
/// another number of rows than their range.
pub(crate) const BUCKETS: u64 = EXACT_US + 900 * DECADES;

/// The bucket of a statement of `us` microseconds (as the procedure
/// computes it; kept here for the tests of [`bucket_ns`]).
#[cfg(test)]
fn bucket_of(us: u64) -> u64 {
    if us < EXACT_US {
        return us;
    }
    let digits = us.to_string().len() as u64;
    let (e, m) = match digits - 3 {
        e if e > DECADES => (DECADES, 999),
        e => (e, us / 10u64.pow(e as u32)),
    };
    EXACT_US + (e - 1) * 900 + (m - 100)
}

/// The time a bucket stands for, in nanoseconds: its microsecond, or the
/// middle of its range (the difference of two truncated clock readings is
/// unbiased; a range's middle is the best guess inside it).
pub(crate) fn bucket_ns(bucket: u64) -> u64 {
    if bucket < EXACT_US {
        return bucket * 1000;
    }
    let k = bucket - EXACT_US;
    let e = (k / 900 + 1) as u32;
    let m = k % 900 + 100;
    let width = 10u64.pow(e);
    (m * width + width / 2) * 1000
}

/// Creates (replacing) `table`'s in-server loop: PGIO's loop as a
/// PL/pgSQL procedure. It runs for `p_seconds` (RUN_TIME) or `p_max`
/// statements, whichever ends first (either may be NULL, not both); each statement is LIOPS' select or
/// update over a random range, updates in `p_update_pct` of every hundred
/// spread evenly (the client loop's quota), with `random()` seeded by
/// `p_seed`. It returns PGIO's columns, counted as PGIO counts them
/// (blocks are `WORK_UNIT` a select), a statement that touched another
/// number of rows than its range counted in `loop_iterations` alone, and
/// the statement times (`clock_timestamp()` around each statement) as
/// pairs `bucket, count` of the buckets that counted any ([`bucket_ns`]).
///
/// A procedure rather than PGIO's function so that it can commit each
/// update, as the client loop does: in one transaction for the whole run,
/// sessions that share a table would hold each other's updated rows until
/// the end and deadlock. Selects need no commit (each takes its own
/// snapshot), so a select-only run is one transaction, as PGIO's is.
pub(crate) fn create_loop(table: &str) -> String {
    let name = loop_procedure(table);
    let buckets = BUCKETS;
    let exact = EXACT_US;
    let decades = DECADES;
    let update = tally("update", "upd", "p_update_work_unit");
    let select = tally("select", "sel", "p_work_unit");
    format!(
        r#"CREATE OR REPLACE PROCEDURE {name}(
    p_seconds float8, p_warmup float8, p_max bigint, p_update_pct int,
    p_work_unit bigint, p_update_work_unit bigint, p_scale bigint, p_seed float8,
    INOUT loop_iterations bigint DEFAULT NULL, INOUT sql_selects bigint DEFAULT NULL,
    INOUT sql_updates bigint DEFAULT NULL, INOUT sql_select_max_tm numeric DEFAULT NULL,
    INOUT sql_update_max_tm numeric DEFAULT NULL, INOUT select_blk_touch_cnt bigint DEFAULT NULL,
    INOUT update_blk_touch_cnt bigint DEFAULT NULL, INOUT select_times bigint[] DEFAULT NULL,
    INOUT update_times bigint[] DEFAULT NULL)
LANGUAGE plpgsql AS $liops$
DECLARE
    v_start timestamptz := clock_timestamp();
    v_end timestamptz := COALESCE(v_start + make_interval(secs => p_seconds), 'infinity');
    v_counted timestamptz := v_start + make_interval(secs => p_warmup);
    v_span bigint := p_scale - greatest(p_work_unit, p_update_work_unit) - 1;
    v_sel bigint[] := array_fill(0::bigint, ARRAY[2 * {buckets}]);
    v_upd bigint[] := array_fill(0::bigint, ARRAY[2 * {buckets}]);
    v_sel_max bigint := 0;
    v_upd_max bigint := 0;
    v_done bigint := 0;
    v_quota int := 0;
    v_update boolean;
    v_k bigint;
    v_rows bigint;
    v_sum numeric;
    v_before timestamptz;
    v_us bigint;
    v_e int;
    v_b int;
BEGIN
    PERFORM setseed(p_seed);
    loop_iterations := 0; sql_selects := 0; sql_updates := 0;
    select_blk_touch_cnt := 0; update_blk_touch_cnt := 0;
    WHILE clock_timestamp() < v_end AND (p_max IS NULL OR v_done < p_max) LOOP
        v_k := 1 + floor(random() * v_span)::bigint;
        v_quota := v_quota + p_update_pct;
        v_update := v_quota >= 100;
        IF v_update THEN
            v_quota := v_quota - 100;
            v_before := clock_timestamp();
            UPDATE {table} SET scratch = scratch + 1
                WHERE mykey BETWEEN v_k AND v_k + p_update_work_unit;
            GET DIAGNOSTICS v_rows = ROW_COUNT;
        ELSE
            v_before := clock_timestamp();
            SELECT count(*), sum(scratch) INTO v_rows, v_sum FROM {table}
                WHERE mykey BETWEEN v_k AND v_k + p_work_unit;
        END IF;
        v_us := round(date_part('epoch', clock_timestamp() - v_before) * 1000000)::bigint;
        IF v_update THEN
            COMMIT;
        END IF;
        v_done := v_done + 1;
        CONTINUE WHEN v_before < v_counted;
        loop_iterations := loop_iterations + 1;
        IF v_us < {exact} THEN
            v_b := v_us;
        ELSE
            v_e := length(v_us::text) - 3;
            IF v_e > {decades} THEN
                v_b := {exact} + ({decades} - 1) * 900 + 899;
            ELSE
                v_b := {exact} + (v_e - 1) * 900 + (v_us / (10.0::float8 ^ v_e)::bigint - 100);
            END IF;
        END IF;
        -- Arrays count from 1; buckets from 0.
        v_b := v_b + 1;
        IF v_update THEN
{update}
        ELSE
{select}
        END IF;
    END LOOP;
    sql_select_max_tm := round(v_sel_max / 1e6, 8);
    sql_update_max_tm := round(v_upd_max / 1e6, 8);
    select_times := '{{}}';
    update_times := '{{}}';
    FOR i IN 1 .. 2 * {buckets} LOOP
        IF v_sel[i] > 0 THEN
            select_times := select_times || ARRAY[i - 1, v_sel[i]];
        END IF;
        IF v_upd[i] > 0 THEN
            update_times := update_times || ARRAY[i - 1, v_upd[i]];
        END IF;
    END LOOP;
END
$liops$"#
    )
}

/// The loop's count of one statement of `kind` (`select` or `update`; its
/// arrays are named `short`), whose work unit is the parameter `unit`: the
/// same steps for both kinds, so written once.
fn tally(kind: &str, short: &str, unit: &str) -> String {
    let buckets = BUCKETS;
    format!(
        r#"            IF v_rows = {unit} + 1 THEN
                sql_{kind}s := sql_{kind}s + 1;
                {kind}_blk_touch_cnt := {kind}_blk_touch_cnt + {unit};
                v_{short}_max := greatest(v_{short}_max, v_us);
            ELSE
                v_b := v_b + {buckets};
            END IF;
            v_{short}[v_b] := v_{short}[v_b] + 1;"#
    )
}

/// Removes `table`'s in-server loop (`DROP TABLE` leaves it: a PL/pgSQL
/// body does not depend on the tables it names).
pub(crate) fn drop_loop(table: &str) -> String {
    format!("DROP PROCEDURE IF EXISTS {}", loop_procedure(table))
}

/// The call of `table`'s in-server loop: the loop's eight parameters,
/// PGIO's columns and the histograms come back as one row.
pub(crate) fn call_loop(table: &str) -> String {
    format!(
        "CALL {}($1, $2, $3, $4, $5, $6, $7, $8)",
        loop_procedure(table)
    )
}

/// Whether `table`'s in-server loop exists (one row, true or false).
pub(crate) fn loop_exists(table: &str) -> String {
    format!(
        "SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = '{}' \
         AND pronamespace = current_schema()::regnamespace)",
        loop_procedure(table).to_ascii_lowercase()
    )
}

/// `times` (pairs of bucket and count, as the procedure returns them) as
/// statement times of selects or updates (`update`).
pub(crate) fn decode_times(
    times: &[i64],
    update: bool,
    out: &mut Vec<sojourn_core::workload::liops::ServerTimed>,
) -> Result<(), String> {
    if times.len() % 2 != 0 {
        return Err(format!("{} numbers, not pairs", times.len()));
    }
    for pair in times.chunks_exact(2) {
        let (bucket, count) = (pair[0], pair[1]);
        if bucket < 0 || bucket as u64 >= 2 * BUCKETS || count <= 0 {
            return Err(format!("bucket {bucket} counting {count}"));
        }
        let bucket = bucket as u64;
        out.push(sojourn_core::workload::liops::ServerTimed {
            update,
            ok: bucket < BUCKETS,
            ns: bucket_ns(bucket % BUCKETS),
            count: count as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_three_significant_digits() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(999), 999);
        assert_eq!(bucket_ns(7), 7_000);
        assert_eq!(bucket_of(1000), 1000);
        assert_eq!(bucket_of(1009), 1000);
        assert_eq!(bucket_ns(1000), 1_005_000);
        assert_eq!(bucket_of(9999), 1899);
        assert_eq!(bucket_of(10_000), 1900);
        assert_eq!(bucket_of(u64::MAX / 1000), BUCKETS - 1);
        let mut last = 0;
        for us in (0..50_000_000u64).step_by(997).chain([10u64.pow(10) - 1]) {
            let b = bucket_of(us);
            assert!(b < BUCKETS && b >= last, "{us} µs in bucket {b}");
            last = b;
            let ns = bucket_ns(b) as f64;
            let true_ns = (us * 1000) as f64;
            assert!(
                (ns - true_ns).abs() <= true_ns * 0.0051 + 1.0,
                "{us} µs read back as {ns} ns"
            );
        }
    }

    #[test]
    fn times_decode_into_ok_and_short_statements() {
        let mut out = Vec::new();
        decode_times(&[3, 10, 1000, 2, BUCKETS as i64 + 3, 1], false, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!((out[0].ns, out[0].count, out[0].ok), (3000, 10, true));
        assert_eq!((out[1].ns, out[1].ok), (1_005_000, true));
        assert_eq!((out[2].ns, out[2].ok, out[2].update), (3000, false, false));
        assert!(decode_times(&[1], true, &mut out).is_err());
        assert!(decode_times(&[2 * BUCKETS as i64, 1], true, &mut out).is_err());
        assert!(decode_times(&[4, 0], true, &mut out).is_err());
    }

    #[test]
    fn the_procedure_is_one_per_table_and_named_for_it() {
        let sql = create_loop("pgio2");
        assert!(sql.starts_with("CREATE OR REPLACE PROCEDURE pgio2_liops("));
        assert!(sql.contains("UPDATE pgio2 SET") && sql.contains("FROM pgio2"));
        assert!(sql.contains(&format!("ARRAY[2 * {BUCKETS}]")));
        assert_eq!(
            call_loop("pgio2"),
            "CALL pgio2_liops($1, $2, $3, $4, $5, $6, $7, $8)"
        );
    }
}
