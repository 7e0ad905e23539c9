//! What one operation is: its kind, its key, the fields it touches and the
//! values it writes. The workload fills an [`Operation`] in place, the
//! executor hands its parts to a backend connection; buffers are reused from
//! one operation to the next so the hot path does not allocate.

use serde::Serialize;

use crate::backend::{FieldValue, Fields};

/// What an operation is measured as: one of YCSB's six kinds, or a kind a
/// workload names itself (a pgbench script and each of its statements, a
/// TPC-C transaction, a Redis command). A small copyable index into one
/// table of names for the process, so the hot path records by index as it
/// always has; YCSB's six come first, in the order YCSB prints them, and
/// other names follow in the order they were first used.
///
/// YCSB's kinds are constants named as the enum's variants were
/// (`OpKind::Read`), so `match` arms read as before (with a `_` arm for the
/// kinds workloads name).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpKind(u16);

/// YCSB's six names, lower case (JSON, SLOs, metric labels) and as YCSB
/// prints its groups.
const YCSB_NAMES: [(&str, &str); 6] = [
    ("insert", "INSERT"),
    ("read", "READ"),
    ("update", "UPDATE"),
    ("scan", "SCAN"),
    ("read-modify-write", "READ-MODIFY-WRITE"),
    ("delete", "DELETE"),
];

/// More kinds than this in one process is a workload naming something
/// per operation rather than per kind: refused rather than grown without
/// bound (each name is kept for the life of the process).
pub const MAX_KINDS: usize = 4096;

/// The names of kinds beyond YCSB's, in the order first used. Each is
/// leaked once, so that [`OpKind::name`] can hand out `&'static str`
/// as YCSB's names are; they are few and live as long as the process.
static NAMED: std::sync::RwLock<Vec<&'static str>> = std::sync::RwLock::new(Vec::new());

#[allow(non_upper_case_globals)]
impl OpKind {
    pub const Insert: OpKind = OpKind(0);
    pub const Read: OpKind = OpKind(1);
    pub const Update: OpKind = OpKind(2);
    pub const Scan: OpKind = OpKind(3);
    pub const ReadModifyWrite: OpKind = OpKind(4);
    pub const Delete: OpKind = OpKind(5);

    /// YCSB's kinds, in the order it prints them.
    pub const YCSB: [OpKind; 6] = [
        OpKind::Insert,
        OpKind::Read,
        OpKind::Update,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Delete,
    ];

    /// Position in the process's table of kinds: YCSB's six are 0..6.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The kind at `index` of the table ([`OpKind::index`]'s inverse),
    /// for a table of statistics kept by index.
    pub(crate) fn at(index: usize) -> OpKind {
        OpKind(index as u16)
    }

    /// Whether this is one of YCSB's six.
    pub fn is_ycsb(self) -> bool {
        self.index() < YCSB_NAMES.len()
    }

    /// The kind named `name`: YCSB's by its lower-case or upper-case name
    /// (`read`, `READ`), else the workload's own, taken into the table the
    /// first time it is used. An error past [`MAX_KINDS`], or for a name
    /// that cannot stand in an SLO or a metric (empty, or holding
    /// whitespace or `<`).
    pub fn named(name: &str) -> Result<OpKind, String> {
        if let Some(k) = OpKind::find(name) {
            return Ok(k);
        }
        if name.is_empty()
            || name
                .chars()
                .any(|c| c.is_whitespace() || c == '<' || c.is_control())
        {
            return Err(format!(
                "{name:?} cannot name an operation: a name is one word without spaces or '<'"
            ));
        }
        let mut named = NAMED.write().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = named.iter().position(|n| *n == name) {
            return Ok(OpKind((YCSB_NAMES.len() + i) as u16));
        }
        if YCSB_NAMES.len() + named.len() >= MAX_KINDS {
            return Err(format!(
                "more than {MAX_KINDS} operation names in one process; name operations by \
                 kind, not one by one"
            ));
        }
        named.push(Box::leak(name.to_string().into_boxed_str()));
        Ok(OpKind((YCSB_NAMES.len() + named.len() - 1) as u16))
    }

    /// The kind already named `name`, if any (YCSB's by either spelling).
    pub fn find(name: &str) -> Option<OpKind> {
        if let Some(i) = YCSB_NAMES
            .iter()
            .position(|(lower, upper)| *lower == name || *upper == name)
        {
            return Some(OpKind(i as u16));
        }
        let named = NAMED.read().unwrap_or_else(|e| e.into_inner());
        named
            .iter()
            .position(|n| *n == name)
            .map(|i| OpKind((YCSB_NAMES.len() + i) as u16))
    }

    /// Every kind named so far, YCSB's first, in index order.
    pub fn all() -> Vec<OpKind> {
        let n = YCSB_NAMES.len() + NAMED.read().unwrap_or_else(|e| e.into_inner()).len();
        (0..n as u16).map(OpKind).collect()
    }

    /// Kinds named so far (the length [`OpKind::index`] stays below).
    pub fn count() -> usize {
        YCSB_NAMES.len() + NAMED.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The group name in YCSB's summary (`[READ]`, `[READ-MODIFY-WRITE]`);
    /// a workload's own kind as it named it.
    pub fn ycsb_name(self) -> &'static str {
        match YCSB_NAMES.get(self.index()) {
            Some((_, upper)) => upper,
            None => self.name(),
        }
    }

    /// The name used in JSON, SLO expressions and metric labels: YCSB's
    /// lower case (`read`), a workload's own kind as it named it.
    pub fn name(self) -> &'static str {
        match YCSB_NAMES.get(self.index()) {
            Some((lower, _)) => lower,
            None => {
                NAMED.read().unwrap_or_else(|e| e.into_inner())[self.index() - YCSB_NAMES.len()]
            }
        }
    }
}

impl std::fmt::Debug for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for OpKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Which fields an operation reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FieldChoice {
    All,
    One(usize),
}

/// One operation, reused across calls. `values[..n_values]` are the values
/// to write; entries beyond that are spare buffers kept for reuse.
#[derive(Debug)]
pub struct Operation {
    pub kind: OpKind,
    pub keynum: u64,
    pub key: String,
    read_fields: FieldChoice,
    pub scan_length: usize,
    values: Vec<FieldValue>,
    n_values: usize,
    one_field: [usize; 1],
}

impl Default for Operation {
    fn default() -> Self {
        Operation {
            kind: OpKind::Read,
            keynum: 0,
            key: String::with_capacity(32),
            read_fields: FieldChoice::All,
            scan_length: 0,
            values: Vec::new(),
            n_values: 0,
            one_field: [0],
        }
    }
}

impl Operation {
    /// The values to write.
    pub fn values(&self) -> &[FieldValue] {
        &self.values[..self.n_values]
    }

    /// Start a new set of `n` values; returns the buffers to fill, each
    /// cleared but keeping its capacity.
    pub fn reset_values(&mut self, n: usize) -> &mut [FieldValue] {
        while self.values.len() < n {
            self.values.push(FieldValue {
                field: 0,
                value: Vec::new(),
            });
        }
        self.n_values = n;
        for v in &mut self.values[..n] {
            v.value.clear();
        }
        &mut self.values[..n]
    }

    pub fn set_read_fields(&mut self, choice: FieldChoice) {
        self.read_fields = choice;
        if let FieldChoice::One(f) = choice {
            self.one_field[0] = f;
        }
    }

    pub fn read_fields(&self) -> FieldChoice {
        self.read_fields
    }

    /// The field selection in the form a backend takes.
    pub fn fields(&self) -> Fields<'_> {
        match self.read_fields {
            FieldChoice::All => Fields::All,
            FieldChoice::One(_) => Fields::Some(&self.one_field),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Status;
    use crate::histograms::Stats;

    #[test]
    fn ycsb_kinds_keep_their_names_and_order() {
        assert_eq!(OpKind::YCSB.map(OpKind::name)[4], "read-modify-write");
        assert_eq!(OpKind::Read.ycsb_name(), "READ");
        assert_eq!(OpKind::find("READ"), Some(OpKind::Read));
        assert_eq!(OpKind::named("delete"), Ok(OpKind::Delete));
        assert!(OpKind::YCSB.iter().all(|k| k.is_ycsb()));
        assert!(OpKind::Insert < OpKind::Delete);
    }

    #[test]
    fn a_workload_names_its_own_kinds_once() {
        let a = OpKind::named("op-test-select-only").unwrap();
        let b = OpKind::named("op-test-Stmt:3").unwrap();
        assert_eq!(OpKind::named("op-test-select-only"), Ok(a));
        assert_ne!(a, b);
        assert!(!a.is_ycsb() && a > OpKind::Delete && b > a);
        assert_eq!(
            (a.name(), a.ycsb_name()),
            ("op-test-select-only", "op-test-select-only")
        );
        assert_eq!(OpKind::find("op-test-Stmt:3"), Some(b));
        assert!(OpKind::all().contains(&b));
        assert_eq!(format!("{b:?}"), "op-test-Stmt:3");
        for bad in ["", "two words", "a<b", "tab\there"] {
            assert!(OpKind::named(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn statistics_keep_named_kinds_after_ycsb_s_and_merge_them() {
        let named = OpKind::named("op-test-tpcb-like").unwrap();
        let mut s = Stats::default();
        s.record(named, Status::Ok, 10, 10);
        s.record(OpKind::Read, Status::Ok, 5, 5);
        let kinds: Vec<OpKind> = s.kinds().map(|(k, _)| k).collect();
        assert_eq!(kinds, [OpKind::Read, named]);
        let mut merged = Stats::default();
        merged.add(&s);
        merged.add(&s);
        assert_eq!(merged.op(named).map(|o| o.count()), Some(2));
        assert_eq!(Stats::default().op(named).map(|o| o.count()), None);
    }
}
