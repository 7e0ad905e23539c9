//! The conformance suite every backend must pass, and the schema and value
//! helpers it and other tests use.

use std::sync::Arc;

use sojourn_core::backend::{Backend, Connection, FieldValue, Fields, Row, Schema, Status};

pub const FIELD_COUNT: usize = 4;

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::ycsb("usertable", "field", FIELD_COUNT))
}

pub fn fv(field: usize, value: &[u8]) -> FieldValue {
    FieldValue {
        field,
        value: value.to_vec(),
    }
}

/// A full record whose values name the key and field, e.g. `user1/f2`.
pub fn record(key: &str) -> Vec<FieldValue> {
    (0..FIELD_COUNT)
        .map(|f| fv(f, format!("{key}/f{f}").as_bytes()))
        .collect()
}

pub async fn read<C: Connection>(
    conn: &mut C,
    key: &str,
    fields: Fields<'_>,
) -> (Status, Vec<FieldValue>) {
    let mut out = Vec::new();
    let status = conn.read(key, fields, &mut out).await;
    (status, out)
}

pub async fn scan<C: Connection>(
    conn: &mut C,
    start: &str,
    count: usize,
    fields: Fields<'_>,
) -> (Status, Vec<Row>) {
    let mut out = Vec::new();
    let status = conn.scan(start, count, fields, &mut out).await;
    (status, out)
}

fn keys(rows: &[Row]) -> Vec<&str> {
    rows.iter().map(|r| r.key.as_str()).collect()
}

/// In what order a backend's scans return records.
#[derive(Copy, Clone, Debug)]
pub enum ScanOrder {
    /// In key order from the start key (SQL, RocksDB, Bigtable).
    Key,
    /// In order of a score of the key, from the start key's score, equal
    /// scores in key order: YCSB's Redis binding scans its `_indices`
    /// sorted set, scored by Java's `String.hashCode()`.
    Score(fn(&str) -> f64),
    /// In token order from the start key's token: a table partitioned
    /// by a hash of its key (CQL, whose YCSB binding scans with
    /// `token(y_id) >= token(?)`), the token given.
    Token(fn(&str) -> i64),
    /// Scans are NOT_IMPLEMENTED (memcached).
    NotImplemented,
}

impl ScanOrder {
    /// The keys a scan of `count` from `start` returns, of `keys`.
    pub fn expect(self, keys: &[String], start: &str, count: usize) -> Vec<String> {
        let mut keys: Vec<&String> = keys.iter().collect();
        match self {
            ScanOrder::Key => {
                keys.sort();
                keys.retain(|k| k.as_str() >= start);
            }
            ScanOrder::Score(score) => {
                keys.sort_by(|a, b| score(a).total_cmp(&score(b)).then(a.cmp(b)));
                keys.retain(|k| score(k) >= score(start));
            }
            ScanOrder::Token(token) => {
                keys.sort_by_key(|k| (token(k), k.to_string()));
                keys.retain(|k| token(k) >= token(start));
            }
            ScanOrder::NotImplemented => keys.clear(),
        }
        keys.into_iter().take(count).cloned().collect()
    }
}

/// What writes do to records that are absent or already there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// An update of an absent record is NOT_FOUND; an insert over an
    /// existing record replaces it whole.
    Checked,
    /// YCSB's Redis binding: an update of an absent record creates it with
    /// the fields given; an insert over an existing record sets the fields
    /// given and keeps the others.
    Upsert,
    /// YCSB's memcached binding: an update of an absent record is
    /// NOT_FOUND, and an update replaces the record with the fields given.
    Replace,
    /// YCSB's CQL binding: writes as [`Writes::Upsert`], and a delete is OK
    /// whether or not the record was there (CQL's `DELETE` does not say).
    Blind,
}

impl Writes {
    /// What a delete of an absent record answers.
    fn delete_absent(self) -> Status {
        match self {
            Writes::Blind => Status::Ok,
            Writes::Checked | Writes::Upsert | Writes::Replace => Status::NotFound,
        }
    }
}

/// The behaviour every backend with real storage must show, with scans in
/// key order. Leaves the table empty.
pub async fn conformance<B: Backend>(backend: &B) {
    conformance_with(backend, ScanOrder::Key).await
}

/// [`conformance`] for a backend whose scans follow `order`.
pub async fn conformance_with<B: Backend>(backend: &B, order: ScanOrder) {
    conformance_as(backend, order, Writes::Checked).await
}

/// [`conformance_with`] for a backend whose writes behave as `writes`.
pub async fn conformance_as<B: Backend>(backend: &B, order: ScanOrder, writes: Writes) {
    let schema = schema();
    backend.prepare(&schema, true).await.expect("prepare");
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(true)
    );
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");

    // Each part boxed: nested whole, the suite's future over a driver's
    // is deeper than the compiler's limit for computing its layout.
    Box::pin(round_trips(backend, &mut conn, writes)).await;
    Box::pin(binary_values(&mut conn)).await;
    Box::pin(bad_fields(&mut conn)).await;

    backend.prepare(&schema, true).await.expect("prepare drop");
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(true)
    );
    Box::pin(scans(&mut conn, order)).await;

    backend.prepare(&schema, true).await.expect("prepare drop");
    Box::pin(concurrent_writers(backend, order)).await;

    // Without drop, prepare keeps the data.
    backend.prepare(&schema, false).await.expect("prepare keep");
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(false)
    );
    backend.prepare(&schema, true).await.expect("prepare drop");
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(true)
    );
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    assert_eq!(
        read(&mut conn, "w0-k0", Fields::All).await.0,
        Status::NotFound
    );
}

/// An update of the absent `key`: NOT_FOUND, or (upserting) a record of
/// that one field, which is deleted again so the table is as it was.
async fn update_absent<C: Connection>(conn: &mut C, key: &str, writes: Writes) {
    match writes {
        Writes::Checked | Writes::Replace => {
            assert_eq!(conn.update(key, &[fv(0, b"x")]).await, Status::NotFound);
        }
        Writes::Upsert | Writes::Blind => {
            assert_eq!(conn.update(key, &[fv(0, b"x")]).await, Status::Ok);
            assert_eq!(
                read(conn, key, Fields::All).await,
                (Status::Ok, vec![fv(0, b"x")])
            );
            assert_eq!(conn.delete(key).await, Status::Ok);
        }
    }
}

async fn round_trips<B: Backend>(backend: &B, conn: &mut B::Conn, writes: Writes) {
    let schema = schema();

    // Missing keys.
    assert_eq!(
        read(conn, "user1", Fields::All).await,
        (Status::NotFound, vec![])
    );
    update_absent(conn, "user1", writes).await;
    assert_eq!(conn.update("user1", &[]).await, Status::NotFound);
    assert_eq!(conn.delete("user1").await, writes.delete_absent());
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(true)
    );

    // Insert, read all and subsets.
    assert_eq!(conn.insert("user1", &record("user1")).await, Status::Ok);
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(false)
    );
    assert_eq!(
        read(conn, "user1", Fields::All).await,
        (Status::Ok, record("user1"))
    );
    assert_eq!(
        read(conn, "user1", Fields::Some(&[2, 0])).await,
        (Status::Ok, vec![fv(2, b"user1/f2"), fv(0, b"user1/f0")])
    );
    assert_eq!(
        read(conn, "user1", Fields::Some(&[3])).await,
        (Status::Ok, vec![fv(3, b"user1/f3")])
    );
    // Appends to the caller's buffer rather than replacing it.
    let mut out = vec![fv(9, b"kept")];
    assert_eq!(
        conn.read("user1", Fields::Some(&[1]), &mut out).await,
        Status::Ok
    );
    assert_eq!(out, vec![fv(9, b"kept"), fv(1, b"user1/f1")]);

    // Update changes only the given fields (or, replacing, leaves only
    // them).
    assert_eq!(
        conn.update("user1", &[fv(1, b"new1"), fv(3, b"new3")])
            .await,
        Status::Ok
    );
    // user1 once updated in place, field 0 as given.
    let merged = |f0: &[u8]| {
        vec![
            fv(0, f0),
            fv(1, b"new1"),
            fv(2, b"user1/f2"),
            fv(3, b"new3"),
        ]
    };
    let updated = match writes {
        Writes::Replace => vec![fv(1, b"new1"), fv(3, b"new3")],
        Writes::Checked | Writes::Upsert | Writes::Blind => merged(b"user1/f0"),
    };
    assert_eq!(
        read(conn, "user1", Fields::All).await,
        (Status::Ok, updated)
    );
    assert_eq!(conn.update("user1", &[]).await, Status::Ok);

    // A record inserted with some fields returns only those.
    assert_eq!(conn.insert("user2", &[fv(2, b"only2")]).await, Status::Ok);
    assert_eq!(
        read(conn, "user2", Fields::All).await,
        (Status::Ok, vec![fv(2, b"only2")])
    );
    assert_eq!(
        read(conn, "user2", Fields::Some(&[0])).await,
        (Status::Ok, vec![])
    );

    // Inserting an existing key replaces the whole record, or (upserting)
    // the fields given.
    assert_eq!(conn.insert("user1", &[fv(0, b"again")]).await, Status::Ok);
    let expected = match writes {
        Writes::Checked | Writes::Replace => vec![fv(0, b"again")],
        Writes::Upsert | Writes::Blind => merged(b"again"),
    };
    assert_eq!(
        read(conn, "user1", Fields::All).await,
        (Status::Ok, expected)
    );

    // Delete.
    assert_eq!(conn.delete("user1").await, Status::Ok);
    assert_eq!(
        read(conn, "user1", Fields::All).await,
        (Status::NotFound, vec![])
    );
    assert_eq!(conn.delete("user1").await, writes.delete_absent());
    update_absent(conn, "user1", writes).await;
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(false)
    );
    assert_eq!(conn.delete("user2").await, Status::Ok);
    assert_eq!(
        backend.is_empty(&schema).await.expect("is_empty"),
        Some(true)
    );
}

async fn binary_values<C: Connection>(conn: &mut C) {
    let values = vec![
        fv(0, &[0x00, 0xff, 0xfe, 0x80, 0x00]), // not UTF-8
        fv(1, b""),
        fv(2, "h\u{e9}llo \u{1F600}".as_bytes()),
        fv(3, b"nul\0inside"),
    ];
    assert_eq!(conn.insert("bin", &values).await, Status::Ok);
    assert_eq!(
        read(conn, "bin", Fields::All).await,
        (Status::Ok, values.clone())
    );
    let update = [fv(2, &[0xc3, 0x28]), fv(0, b"text now")];
    assert_eq!(conn.update("bin", &update).await, Status::Ok);
    assert_eq!(
        read(conn, "bin", Fields::Some(&[0, 2])).await,
        (Status::Ok, vec![fv(0, b"text now"), fv(2, &[0xc3, 0x28])])
    );
    // Keys with unusual characters are just keys.
    let key = "user'; DROP TABLE usertable; --\"";
    assert_eq!(conn.insert(key, &[fv(0, b"v")]).await, Status::Ok);
    assert_eq!(
        read(conn, key, Fields::All).await,
        (Status::Ok, vec![fv(0, b"v")])
    );
    assert_eq!(conn.delete(key).await, Status::Ok);
    assert_eq!(conn.delete("bin").await, Status::Ok);
}

async fn bad_fields<C: Connection>(conn: &mut C) {
    let beyond = FIELD_COUNT;
    assert_eq!(
        conn.insert("bad", &[fv(beyond, b"x")]).await,
        Status::BadRequest
    );
    assert_eq!(read(conn, "bad", Fields::All).await.0, Status::NotFound);
    assert_eq!(conn.insert("bad", &[fv(0, b"x")]).await, Status::Ok);
    assert_eq!(
        conn.update("bad", &[fv(beyond, b"x")]).await,
        Status::BadRequest
    );
    assert_eq!(
        read(conn, "bad", Fields::Some(&[0, beyond])).await,
        (Status::BadRequest, vec![])
    );
    assert_eq!(
        scan(conn, "a", 10, Fields::Some(&[beyond])).await,
        (Status::BadRequest, vec![])
    );
    assert_eq!(conn.delete("bad").await, Status::Ok);
}

async fn scans<C: Connection>(conn: &mut C, order: ScanOrder) {
    // Inserted out of order; even numbers only, so odd start keys fall
    // between records.
    let mut all = Vec::new();
    for n in [18, 10, 26, 12, 22, 14, 28, 16, 20, 24] {
        let key = format!("user{n}");
        assert_eq!(conn.insert(&key, &record(&key)).await, Status::Ok);
        all.push(key);
    }
    // Scans against the order's model, with every value checked.
    for (start, count, fields) in [
        ("user10", 3, Fields::All),
        ("user13", 2, Fields::All),
        ("user25", 100, Fields::All),
        ("a", 1000, Fields::Some(&[1][..])),
        ("", 4, Fields::Some(&[3, 0][..])),
        ("user29", 5, Fields::All),
        ("user10", 0, Fields::All),
    ] {
        let (status, rows) = scan(conn, start, count, fields).await;
        if let ScanOrder::NotImplemented = order {
            assert_eq!((status, rows), (Status::NotImplemented, vec![]));
            continue;
        }
        assert_eq!(status, Status::Ok, "scan {start} {count}");
        assert_eq!(
            keys(&rows),
            order.expect(&all, start, count),
            "scan {start} {count}"
        );
        for row in &rows {
            let full = record(&row.key);
            let want: Vec<FieldValue> = match fields {
                Fields::All => full,
                Fields::Some(list) => list.iter().map(|&f| full[f].clone()).collect(),
            };
            assert_eq!(row.fields, want, "fields of {}", row.key);
        }
    }
    if !matches!(order, ScanOrder::Key) {
        return;
    }
    let (status, rows) = scan(conn, "user10", 3, Fields::All).await;
    assert_eq!(status, Status::Ok);
    assert_eq!(keys(&rows), ["user10", "user12", "user14"]);
    assert_eq!(rows[1].fields, record("user12"));

    let (status, rows) = scan(conn, "user13", 2, Fields::All).await;
    assert_eq!(status, Status::Ok);
    assert_eq!(keys(&rows), ["user14", "user16"]);

    let (status, rows) = scan(conn, "user25", 100, Fields::All).await;
    assert_eq!(status, Status::Ok);
    assert_eq!(keys(&rows), ["user26", "user28"]);

    let (status, rows) = scan(conn, "a", 1000, Fields::Some(&[1])).await;
    assert_eq!(status, Status::Ok);
    assert_eq!(rows.len(), 10);
    assert!(
        rows.windows(2).all(|w| w[0].key < w[1].key),
        "{:?}",
        keys(&rows)
    );
    for row in &rows {
        assert_eq!(
            row.fields,
            vec![fv(1, format!("{}/f1", row.key).as_bytes())]
        );
    }

    assert_eq!(
        scan(conn, "user29", 5, Fields::All).await,
        (Status::Ok, vec![])
    );
    assert_eq!(
        scan(conn, "user10", 0, Fields::All).await,
        (Status::Ok, vec![])
    );
}

const WRITERS: usize = 8;
const KEYS_PER_WRITER: usize = 50;

async fn concurrent_writers<B: Backend>(backend: &B, order: ScanOrder) {
    let schema = schema();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
        tasks.push(tokio::spawn(async move {
            for k in 0..KEYS_PER_WRITER {
                let key = format!("w{w}-k{k}");
                let status = conn.insert(&key, &record(&key)).await;
                assert_eq!(status, Status::Ok, "insert {key}");
            }
        }));
    }
    for task in tasks {
        task.await.expect("writer task");
    }
    let mut conn = backend.connect(Arc::clone(&schema)).await.expect("connect");
    for w in 0..WRITERS {
        for k in 0..KEYS_PER_WRITER {
            let key = format!("w{w}-k{k}");
            assert_eq!(
                read(&mut conn, &key, Fields::All).await,
                (Status::Ok, record(&key))
            );
        }
    }
    let (status, rows) = scan(&mut conn, "", usize::MAX, Fields::Some(&[])).await;
    if let ScanOrder::NotImplemented = order {
        assert_eq!(status, Status::NotImplemented);
        return;
    }
    assert_eq!(status, Status::Ok);
    let all: Vec<String> = (0..WRITERS)
        .flat_map(|w| (0..KEYS_PER_WRITER).map(move |k| format!("w{w}-k{k}")))
        .collect();
    let expected = order.expect(&all, "", usize::MAX);
    if let ScanOrder::Key = order {
        assert_eq!(expected.len(), WRITERS * KEYS_PER_WRITER);
    }
    assert_eq!(keys(&rows), expected);
}

/// Runs the conformance suite on whichever backend an `AnyBackend` holds.
pub struct Conform;

impl sojourn_backends::AsyncVisitor for Conform {
    type Output = ();
    async fn visit<B: Backend>(self, backend: &B) {
        conformance(backend).await
    }
}
