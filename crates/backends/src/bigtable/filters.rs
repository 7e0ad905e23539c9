//! Bigtable row filters: the family and columns a read asks for, and the
//! existence marker that tells an empty answer from an absent row; built
//! with the generated types and encoded once per connection.

use std::collections::HashMap;

use googleapis_tonic_google_bigtable_v2::google::bigtable::v2 as data;
use sojourn_core::backend::{Fields, Schema};

use data::row_filter::{Chain, Filter, Interleave};
use data::RowFilter;

/// Label marking the one stripped cell asked for only to learn that a row
/// exists when none of the requested columns is set.
pub(super) const EXISTS_LABEL: &str = "sojourn-exists";
/// Filters kept per connection for field subsets (YCSB reads one field or
/// all of them, so a handful are used).
pub(super) const FILTER_CACHE_LIMIT: usize = 256;

/// `s` as an RE2 pattern matching it literally.
pub(super) fn regex_escape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 4);
    for &b in s {
        if !b.is_ascii_alphanumeric() && b != b'_' && b < 0x80 {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

pub(super) fn filter(f: Filter) -> RowFilter {
    RowFilter { filter: Some(f) }
}

pub(super) fn chain(filters: Vec<RowFilter>) -> RowFilter {
    filter(Filter::Chain(Chain { filters }))
}

pub(super) fn family_filter(family: &str) -> RowFilter {
    filter(Filter::FamilyNameRegexFilter(
        String::from_utf8_lossy(&regex_escape(family.as_bytes())).into_owned(),
    ))
}

/// The newest cell of every column of the family.
pub(super) fn all_fields_filter(family: &str) -> RowFilter {
    chain(vec![
        family_filter(family),
        filter(Filter::CellsPerColumnLimitFilter(1)),
    ])
}

/// One cell per existing row, without its value, labelled
/// [`EXISTS_LABEL`] when it is mixed with requested columns.
pub(super) fn exists_filter(labelled: bool) -> RowFilter {
    let mut filters = vec![
        filter(Filter::CellsPerRowLimitFilter(1)),
        filter(Filter::StripValueTransformer(true)),
    ];
    if labelled {
        filters.push(filter(Filter::ApplyLabelTransformer(
            EXISTS_LABEL.to_string(),
        )));
    }
    chain(filters)
}

/// The newest cell of the requested columns, plus the existence marker: a
/// row that exists without any of them still answers (with no fields).
pub(super) fn some_fields_filter(family: &str, names: &[&str]) -> RowFilter {
    if names.is_empty() {
        return exists_filter(true);
    }
    let mut pattern = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            pattern.push(b'|');
        }
        pattern.extend_from_slice(&regex_escape(name.as_bytes()));
    }
    let columns = chain(vec![
        family_filter(family),
        filter(Filter::ColumnQualifierRegexFilter(pattern)),
        filter(Filter::CellsPerColumnLimitFilter(1)),
    ]);
    filter(Filter::Interleave(Interleave {
        filters: vec![columns, exists_filter(true)],
    }))
}

/// `ReadRowsRequest.filter` (field 3), encoded.
pub(super) fn filter_field(f: &RowFilter) -> Vec<u8> {
    let mut v = Vec::new();
    prost::encoding::message::encode(3, f, &mut v);
    v
}

/// `ReadRowsRequest.filter` fields, encoded once.
pub(super) struct Filters {
    pub(super) all: Vec<u8>,
    pub(super) exists: Vec<u8>,
    pub(super) some: HashMap<Box<[usize]>, Vec<u8>>,
    /// A subset's filter beyond [`FILTER_CACHE_LIMIT`].
    pub(super) overflow: Vec<u8>,
}

impl Filters {
    pub(super) fn get(&mut self, fields: Fields<'_>, family: &str, schema: &Schema) -> &[u8] {
        let Fields::Some(list) = fields else {
            return &self.all;
        };
        if !self.some.contains_key(list) {
            let names: Vec<&str> = list
                .iter()
                .map(|&i| schema.field_names[i].as_str())
                .collect();
            let f = filter_field(&some_fields_filter(family, &names));
            if self.some.len() >= FILTER_CACHE_LIMIT {
                self.overflow = f;
                return &self.overflow;
            }
            self.some.insert(list.into(), f);
        }
        &self.some[list]
    }
}
