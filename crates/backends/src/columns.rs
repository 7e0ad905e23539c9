//! Whether a SQL table already there has YCSB's JDBC layout for the
//! workload at hand (`YCSB_KEY` and `FIELD0..FIELDn-1`), said once before
//! anything runs: a table left with fewer fields would turn every write
//! into an ERROR, and a run over it every read. Shared by the SQL engines
//! (SQLite, PostgreSQL, MySQL), which each list a table's columns their
//! own way.

/// Whether `table`, whose columns are `columns` (upper case; none when the
/// table does not exist), serves a workload of `field_count` fields; if
/// not, what to change: the `fieldcount` its columns hold, or `--drop`.
pub(crate) fn check(table: &str, columns: &[String], field_count: usize) -> Result<(), String> {
    if columns.is_empty() {
        return Ok(());
    }
    let missing: Vec<String> = std::iter::once("YCSB_KEY".to_string())
        .chain((0..field_count).map(|f| format!("FIELD{f}")))
        .filter(|c| !columns.contains(c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !columns.iter().any(|c| c == "YCSB_KEY") {
        return Err(format!(
            "table {table} has no YCSB_KEY column, so it is not a table of YCSB's layout (its \
             columns: {}); name another table (-p table=NAME), or add --drop to replace it \
             with one",
            columns.join(", ")
        ));
    }
    // The fields it holds, FIELD0 on without a gap: the fieldcount that
    // matches it.
    let held = (0..)
        .take_while(|f| columns.contains(&format!("FIELD{f}")))
        .count();
    Err(format!(
        "table {table} exists without column(s) {} that this workload (fieldcount={field_count}) \
         writes and reads: -p fieldcount={held} matches the table, or add --drop to recreate it",
        missing.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_table_with_fewer_fields_names_the_fieldcount_that_matches_it() {
        let table = cols(&["YCSB_KEY", "FIELD0", "FIELD1", "FIELD2"]);
        assert_eq!(check("usertable", &table, 3), Ok(()));
        assert_eq!(check("usertable", &table, 2), Ok(()));
        let e = check("usertable", &table, 5).unwrap_err();
        assert!(e.contains("without column(s) FIELD3, FIELD4"), "{e}");
        assert!(e.contains("-p fieldcount=3 matches"), "{e}");
        assert!(e.contains("--drop"), "{e}");
    }

    #[test]
    fn a_table_of_another_layout_and_a_missing_table() {
        let e = check("usertable", &cols(&["ID", "NAME"]), 1).unwrap_err();
        assert!(
            e.contains("no YCSB_KEY column") && e.contains("ID, NAME"),
            "{e}"
        );
        assert_eq!(check("usertable", &[], 10), Ok(()));
    }
}
