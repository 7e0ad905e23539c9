//! What one operation is: its kind, its key, the fields it touches and the
//! values it writes. The workload fills an [`Operation`] in place, the
//! executor hands its parts to a backend connection; buffers are reused from
//! one operation to the next so the hot path does not allocate.

use serde::Serialize;

use crate::backend::{FieldValue, Fields};

/// The operation kinds YCSB measures, in the order it prints them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum OpKind {
    Insert,
    Read,
    Update,
    Scan,
    ReadModifyWrite,
    Delete,
}

impl OpKind {
    pub const ALL: [OpKind; 6] = [
        OpKind::Insert,
        OpKind::Read,
        OpKind::Update,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Delete,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// The group name in YCSB's summary (`[READ]`, `[READ-MODIFY-WRITE]`).
    pub fn ycsb_name(self) -> &'static str {
        match self {
            OpKind::Insert => "INSERT",
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
            OpKind::Delete => "DELETE",
        }
    }

    /// Lower-case name used in JSON, SLO expressions and metric names.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Insert => "insert",
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Scan => "scan",
            OpKind::ReadModifyWrite => "read-modify-write",
            OpKind::Delete => "delete",
        }
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
