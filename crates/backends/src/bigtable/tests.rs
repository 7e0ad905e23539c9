//! Unit tests of the Bigtable backend: URLs, split points, filters, row
//! assembly.

use googleapis_tonic_google_bigtable_v2::google::bigtable::v2 as data;
use prost::Message;
use sojourn_core::backend::{FieldValue, Fields};
use sojourn_core::properties::Properties;

use super::filters::{regex_escape, EXISTS_LABEL};
use super::proto::Chunk;
use super::*;

#[test]
fn splits_follow_the_hbase_recipe() {
    let s = split_points(200);
    assert_eq!(s.len(), 200);
    assert_eq!(s[0], "user1044");
    assert_eq!(s[1], "user1089");
    assert_eq!(s[199], "user9999");
    assert!(s.windows(2).all(|w| w[0] < w[1]));
    assert!(split_points(0).is_empty());
    assert_eq!(split_points(1), ["user9999"]);
    assert_eq!(split_points(100_000).len(), 8999);
}

#[test]
fn url_forms() {
    let parts = |url| url_parts(url).ok();
    assert_eq!(
        parts("bigtable://p/i/t"),
        Some((Some("p"), Some("i"), Some("t")))
    );
    assert_eq!(parts("bigtable://p/i/"), Some((Some("p"), Some("i"), None)));
    assert_eq!(parts("bigtable"), Some((None, None, None)));
    assert_eq!(parts("googlebigtable"), Some((None, None, None)));
    assert_eq!(parts("bigtable://p"), Some((Some("p"), None, None)));
    assert!(parts("bigtable:p/i/t").is_none());
    assert!(parts("bigtable://p//t").is_none());
    assert!(parts("bigtable://p/i/t/x").is_none());
    let e = BigtableBackend::open(
        "bigtable://u:s3cr3t@h/i/t",
        &OpenOptions::new(&Properties::new()),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no credentials") && !e.contains("s3cr3t"), "{e}");
}

#[test]
fn regexes_are_literal() {
    assert_eq!(regex_escape(b"field0"), b"field0");
    assert_eq!(regex_escape(b"a.b|c"), b"a\\.b\\|c");
}

fn chunk<'a>(key: &'a [u8], qualifier: Option<&'a str>, value: &'a [u8], size: i32) -> Chunk<'a> {
    Chunk {
        row_key: key,
        family: qualifier.map(|_| &b"cf"[..]),
        qualifier: qualifier.map(str::as_bytes),
        value,
        value_size: size,
        ..Default::default()
    }
}

#[test]
fn assembler_joins_split_values_and_drops_reset_rows() {
    let schema = Schema::ycsb("t", "field", 2);
    let mut a = Assembler {
        slots: vec![None; 2],
        ..Default::default()
    };
    assert!(!a.feed(chunk(b"k1", Some("field1"), b"ab", 4), "cf", &schema));
    let mut last = chunk(b"", None, b"cd", 0);
    last.reset_row = true;
    assert!(!a.feed(last, "cf", &schema));
    assert!(!a.feed(chunk(b"k1", Some("field1"), b"ab", 4), "cf", &schema));
    assert!(!a.feed(chunk(b"", None, b"cd", 0), "cf", &schema));
    assert!(!a.feed(chunk(b"", Some("other"), b"x", 0), "cf", &schema));
    // The existence marker: labelled, on a column that is a field.
    let response = data::ReadRowsResponse {
        chunks: vec![data::read_rows_response::CellChunk {
            family_name: Some("cf".into()),
            qualifier: Some(b"field0".to_vec()),
            labels: vec![EXISTS_LABEL.into()],
            row_status: Some(data::read_rows_response::cell_chunk::RowStatus::CommitRow(
                true,
            )),
            ..Default::default()
        }],
        ..Default::default()
    }
    .encode_to_vec();
    let mut committed = false;
    proto::for_each_chunk(&response, |c| committed = a.feed(c, "cf", &schema)).unwrap();
    assert!(committed);
    assert_eq!(a.key, b"k1");
    let mut out = Vec::new();
    a.take_fields(Fields::All, &mut out);
    assert_eq!(
        out,
        vec![FieldValue {
            field: 1,
            value: b"abcd".to_vec()
        }]
    );
}
