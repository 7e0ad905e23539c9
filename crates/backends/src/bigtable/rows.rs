//! Row assembly: rows built from the cell chunks `ReadRows` streams.

use sojourn_core::backend::{FieldValue, Fields, Schema};

use super::filters::EXISTS_LABEL;
use super::proto::Chunk;

/// Builds rows from `ReadRows` cell chunks (values may be split over
/// several chunks; a row is final at `commit_row` and dropped at
/// `reset_row`).
#[derive(Default)]
pub(super) struct Assembler {
    pub(super) key: Vec<u8>,
    /// Per field index, the newest value seen in the current row.
    pub(super) slots: Vec<Option<Vec<u8>>>,
    /// Field of the cell being read; `None` to skip it.
    pub(super) field: Option<usize>,
    /// Whether the current column belongs to our family.
    pub(super) family_ok: bool,
    /// A split value being gathered.
    pub(super) partial: Vec<u8>,
    pub(super) splitting: bool,
    /// Whether the cell being read is kept.
    pub(super) keep: bool,
}

impl Assembler {
    pub(super) fn reset_row(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.field = None;
        self.splitting = false;
        self.partial.clear();
    }

    /// Feed one chunk; `true` when it completes (commits) a row.
    pub(super) fn feed(&mut self, chunk: Chunk<'_>, family: &str, schema: &Schema) -> bool {
        if !chunk.row_key.is_empty() && chunk.row_key != self.key.as_slice() {
            self.reset_row();
            self.key.clear();
            self.key.extend_from_slice(chunk.row_key);
        }
        if let Some(f) = chunk.family {
            self.family_ok = f == family.as_bytes();
        }
        if let Some(q) = chunk.qualifier {
            self.field = schema.field_names.iter().position(|n| n.as_bytes() == q);
        }
        if !self.splitting {
            // A cell's labels come with its first chunk.
            self.keep =
                self.family_ok && self.field.is_some() && !chunk.labels.contains(EXISTS_LABEL);
        }
        if chunk.value_size > 0 {
            if self.keep {
                self.partial.extend_from_slice(chunk.value);
            }
            self.splitting = true;
        } else {
            if self.keep {
                let value = if self.splitting {
                    self.partial.extend_from_slice(chunk.value);
                    std::mem::take(&mut self.partial)
                } else {
                    chunk.value.to_vec()
                };
                if let Some(f) = self.field {
                    // Cells come newest first; keep the newest.
                    if self.slots[f].is_none() {
                        self.slots[f] = Some(value);
                    }
                }
            }
            self.splitting = false;
            self.partial.clear();
        }
        if chunk.reset_row {
            self.reset_row();
            return false;
        }
        chunk.commit_row
    }

    /// Move the committed row's requested fields into `out` and clear it.
    pub(super) fn take_fields(&mut self, fields: Fields<'_>, out: &mut Vec<FieldValue>) {
        match fields {
            Fields::All => {
                for (field, slot) in self.slots.iter_mut().enumerate() {
                    if let Some(value) = slot.take() {
                        out.push(FieldValue { field, value });
                    }
                }
            }
            Fields::Some(list) => {
                for &field in list {
                    if let Some(value) = self.slots[field].take() {
                        out.push(FieldValue { field, value });
                    }
                }
            }
        }
        self.reset_row();
    }
}
