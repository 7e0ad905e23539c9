//! pgbench's builtin scripts, with pgbench's exact text, and how a name
//! (or a prefix of one, as pgbench takes it) picks one.

/// One builtin script: its name, pgbench's description, its text.
#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub title: &'static str,
    pub text: &'static str,
}

pub const BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "tpcb-like",
        title: "<builtin: TPC-B (sort of)>",
        text: "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
",
    },
    Builtin {
        name: "simple-update",
        title: "<builtin: simple update>",
        text: "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
",
    },
    Builtin {
        name: "select-only",
        title: "<builtin: select only>",
        text: "\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
",
    },
];

/// The builtin `name` names: itself, or the one builtin it is a prefix
/// of (`tpcb`, `se`); else why not, listing them.
pub fn find(name: &str) -> Result<&'static Builtin, String> {
    let matches: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] if !name.is_empty() => Ok(one),
        [] | [_] => Err(format!(
            "no builtin script found for name \"{name}\"; the builtins are {}",
            names()
        )),
        many => Err(format!(
            "ambiguous builtin name: {} builtin scripts found for prefix \"{name}\" ({})",
            many.len(),
            many.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The builtins' names, for messages.
pub fn names() -> String {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builtin_is_found_by_a_prefix_of_its_name() {
        assert_eq!(find("tpcb").unwrap().name, "tpcb-like");
        assert_eq!(find("se").unwrap().name, "select-only");
        assert_eq!(find("select-only").unwrap().title, "<builtin: select only>");
        assert!(find("s")
            .unwrap_err()
            .starts_with("ambiguous builtin name: 2"));
        assert!(find("foo")
            .unwrap_err()
            .contains("tpcb-like, simple-update, select-only"));
        assert!(find("").is_err());
    }
}
