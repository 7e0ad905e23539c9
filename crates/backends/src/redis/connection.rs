//! A connection of the Redis backend: YCSB's operations over RESP, on the
//! hand-written transport.
//!
//! By default every operation costs the server what YCSB's binding costs
//! it, so results compare with YCSB's: an update is one `HSET` (which, as
//! YCSB's `HMSET`, creates a missing record), an insert is `HSET` and
//! `ZADD` sent together in one round trip, a read one `HGETALL` or `HMGET`;
//! in string mode `SET` and `GET`. Statuses stay honest where that costs
//! the server nothing: a read of an absent key is NOT_FOUND rather than
//! ERROR (`HGETALL` answers empty). A delete is `DEL` and `ZREM` in one
//! round trip: YCSB sends `ZREM` only when `DEL` removed nothing, which
//! leaves deleted keys in the scan index (no core workload deletes).
//!
//! `redis.checked=true` trades YCSB's server work for records kept whole:
//! an update of an absent record is NOT_FOUND instead of creating it (hash
//! mode: one `EVALSHA` of a script running `EXISTS` and `HSET`; string
//! mode: `SET ... XX`), and an insert replaces an existing record as a
//! whole (`DEL`, `HSET`, `ZADD` in one script), which makes a retried load
//! idempotent. Each script call costs the server the commands it runs
//! besides the `EVALSHA` (about twice the work of an update).

use sojourn_core::backend::guard::{Guard, Operations, Read, Scan};
use sojourn_core::backend::{FieldValue, Fields, Row, Schema, Status};

use super::layout::{java_hash, INDEX_KEY, INSERT_SCRIPT, INSERT_SHA, UPDATE_SCRIPT, UPDATE_SHA};
use super::options::{RedisMode, RedisOptions};
use super::resp::{self, Item, Reader, Resp};
use crate::pipelined::{self, OpError, OpResult, Transport};

/// Field names and the way back from a name to its index.
struct FieldNames {
    names: Vec<Box<[u8]>>,
    /// For many fields; a short list is searched directly.
    map: Option<std::collections::HashMap<Box<[u8]>, usize>>,
}

impl FieldNames {
    fn new(schema: &Schema) -> FieldNames {
        let names: Vec<Box<[u8]>> = schema
            .field_names
            .iter()
            .map(|n| n.as_bytes().into())
            .collect();
        let map = (names.len() > 16).then(|| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect()
        });
        FieldNames { names, map }
    }

    fn index(&self, name: &[u8]) -> Option<usize> {
        match &self.map {
            Some(map) => map.get(name).copied(),
            None => self.names.iter().position(|n| &**n == name),
        }
    }
}

pub(super) fn proto_err(e: String) -> OpError {
    OpError::error(format!("unexpected reply: {e}"))
}

pub(super) fn server_err(e: &[u8]) -> OpError {
    OpError::error(String::from_utf8_lossy(e))
}

/// An integer reply, or the server's error.
pub(super) fn int_reply(r: &mut Reader<'_>) -> OpResult<i64> {
    match r.next().map_err(proto_err)? {
        Item::Int(n) => Ok(n),
        Item::Error(e) => Err(server_err(e)),
        other => Err(proto_err(format!("expected an integer, got {other:?}"))),
    }
}

/// A connection of [`RedisBackend`].
pub struct RedisConnection {
    pub(super) t: Transport<Resp>,
    guard: Guard,
    mode: RedisMode,
    checked: bool,
    fields: FieldNames,
    /// Keys of the scan in progress.
    keys: Vec<String>,
    /// The vote workload's current key.
    pub(super) article: Vec<u8>,
    last_error: Option<String>,
}

impl RedisConnection {
    pub(super) fn new(t: Transport<Resp>, opts: &RedisOptions, schema: &Schema) -> RedisConnection {
        RedisConnection {
            t,
            // The transport bounds each call itself.
            guard: Guard::new(schema.field_count(), None),
            mode: opts.mode,
            checked: opts.checked,
            fields: FieldNames::new(schema),
            keys: Vec::new(),
            article: Vec::new(),
            last_error: None,
        }
    }

    /// The most recent error on this connection, for diagnosing ERROR
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// `HSET key field value ...` into the request.
    fn hset(&mut self, key: &str, values: &[FieldValue]) {
        let req = self.t.request();
        resp::command(req, 2 + 2 * values.len());
        resp::arg(req, b"HSET");
        resp::arg(req, key.as_bytes());
        for v in values {
            resp::arg(req, &self.fields.names[v.field]);
            resp::arg(req, &v.value);
        }
    }

    async fn exists(&mut self, key: &str) -> OpResult<Status> {
        resp::encode(self.t.request(), &[b"EXISTS", key.as_bytes()]);
        let reply = self.t.call(1).await?;
        Ok(match int_reply(&mut Reader::new(reply))? {
            0 => Status::NotFound,
            _ => Status::Ok,
        })
    }

    async fn read_hash(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> OpResult<Status> {
        let list = match fields {
            Fields::All => {
                resp::encode(self.t.request(), &[b"HGETALL", key.as_bytes()]);
                let reply = self.t.call(1).await?;
                let mut r = Reader::new(reply);
                return parse_hgetall(&mut r, &self.fields, out);
            }
            Fields::Some([]) => return self.exists(key).await,
            Fields::Some(list) => list,
        };
        let req = self.t.request();
        resp::command(req, 2 + list.len());
        resp::arg(req, b"HMGET");
        resp::arg(req, key.as_bytes());
        for &f in list {
            resp::arg(req, &self.fields.names[f]);
        }
        let reply = self.t.call(1).await?;
        let found = parse_hmget(&mut Reader::new(reply), list, out)?;
        if found > 0 {
            return Ok(Status::Ok);
        }
        // None of the fields asked for is there: the record may still
        // exist with other fields.
        self.exists(key).await
    }

    async fn read_string(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> OpResult<Status> {
        resp::encode(self.t.request(), &[b"GET", key.as_bytes()]);
        let reply = self.t.call(1).await?;
        match Reader::new(reply).next().map_err(proto_err)? {
            Item::Bulk(None) => Ok(Status::NotFound),
            Item::Bulk(Some(value)) => {
                let wanted = match fields {
                    Fields::All => true,
                    Fields::Some(list) => list.contains(&0),
                };
                if wanted {
                    out.push(FieldValue::copied(0, value));
                }
                Ok(Status::Ok)
            }
            Item::Error(e) => Err(server_err(e)),
            other => Err(proto_err(format!("expected a string, got {other:?}"))),
        }
    }
}

impl Operations for RedisConnection {
    async fn read_op(&mut self, read: Read<'_>) -> OpResult<Status> {
        let Read { key, fields, out } = read;
        match self.mode {
            RedisMode::Hash => self.read_hash(key, fields, out).await,
            RedisMode::String => self.read_string(key, fields, out).await,
        }
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> OpResult<Status> {
        if self.mode == RedisMode::String {
            return Ok(Status::NotImplemented);
        }
        if scan.count == 0 {
            return Ok(Status::Ok);
        }
        let score = java_hash(scan.start_key);
        let limit = i64::try_from(scan.count).unwrap_or(i64::MAX);
        let req = self.t.request();
        resp::command(req, 7);
        resp::arg(req, b"ZRANGEBYSCORE");
        resp::arg(req, INDEX_KEY.as_bytes());
        resp::arg_int(req, i64::from(score));
        resp::arg(req, b"+inf");
        resp::arg(req, b"LIMIT");
        resp::arg(req, b"0");
        resp::arg_int(req, limit);
        let reply = self.t.call(1).await?;
        let mut r = Reader::new(reply);
        let n = match r.next().map_err(proto_err)? {
            Item::Array(n) => n.unwrap_or(0),
            Item::Error(e) => return Err(server_err(e)),
            other => return Err(proto_err(format!("expected keys, got {other:?}"))),
        };
        self.keys.clear();
        for _ in 0..n {
            match r.next().map_err(proto_err)? {
                Item::Bulk(Some(k)) => self.keys.push(String::from_utf8_lossy(k).into_owned()),
                other => return Err(proto_err(format!("expected a key, got {other:?}"))),
            }
        }
        let list = match scan.fields {
            Fields::Some([]) => {
                // Nothing to fetch: the index says which keys exist.
                scan.out.extend(self.keys.drain(..).map(|key| Row {
                    key,
                    fields: Vec::new(),
                }));
                return Ok(Status::Ok);
            }
            Fields::Some(list) => Some(list),
            Fields::All => None,
        };
        if self.keys.is_empty() {
            return Ok(Status::Ok);
        }
        // YCSB reads the records one by one; pipelining them costs the
        // server the same and the client one round trip.
        let req = self.t.request();
        for key in &self.keys {
            match list {
                None => resp::encode(req, &[b"HGETALL", key.as_bytes()]),
                Some(list) => {
                    resp::command(req, 2 + list.len());
                    resp::arg(req, b"HMGET");
                    resp::arg(req, key.as_bytes());
                    for &f in list {
                        resp::arg(req, &self.fields.names[f]);
                    }
                }
            }
        }
        let reply = self.t.call(self.keys.len()).await?;
        let mut r = Reader::new(reply);
        let before = scan.out.len();
        for key in self.keys.drain(..) {
            let mut row = Row {
                key,
                fields: Vec::new(),
            };
            let present = match list {
                None => parse_hgetall(&mut r, &self.fields, &mut row.fields)? == Status::Ok,
                // A record deleted since the index was read shows as all
                // fields missing; keep the row, as YCSB does.
                Some(list) => {
                    parse_hmget(&mut r, list, &mut row.fields)?;
                    true
                }
            };
            if present {
                scan.out.push(row);
            }
        }
        debug_assert!(scan.out.len() >= before);
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        if values.is_empty() {
            return self.exists(key).await;
        }
        match self.mode {
            RedisMode::Hash if !self.checked => {
                self.hset(key, values);
                let reply = self.t.call(1).await?;
                int_reply(&mut Reader::new(reply))?;
                Ok(Status::Ok)
            }
            RedisMode::Hash => {
                let names = &self.fields.names;
                let encode_args = |req: &mut Vec<u8>| {
                    resp::arg(req, b"1");
                    resp::arg(req, key.as_bytes());
                    for v in values {
                        resp::arg(req, &names[v.field]);
                        resp::arg(req, &v.value);
                    }
                };
                let argc = 2 + 2 * values.len();
                let n = eval_on(&mut self.t, UPDATE_SHA, UPDATE_SCRIPT, encode_args, argc).await?;
                Ok(if n == 0 { Status::NotFound } else { Status::Ok })
            }
            RedisMode::String => {
                // The last value for field 0 wins, as it would in a hash.
                let value = &values[values.len() - 1].value;
                let req = self.t.request();
                if self.checked {
                    resp::encode(req, &[b"SET", key.as_bytes(), value, b"XX"]);
                } else {
                    resp::encode(req, &[b"SET", key.as_bytes(), value]);
                }
                let reply = self.t.call(1).await?;
                match Reader::new(reply).next().map_err(proto_err)? {
                    Item::Simple(_) => Ok(Status::Ok),
                    Item::Bulk(None) => Ok(Status::NotFound),
                    Item::Error(e) => Err(server_err(e)),
                    other => Err(proto_err(format!("expected OK, got {other:?}"))),
                }
            }
        }
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        if values.is_empty() {
            // A hash with no fields does not exist in Redis, and a string
            // record is its one field.
            return Err(OpError {
                status: Status::BadRequest,
                message: "a record with no fields cannot be stored".into(),
            });
        }
        match self.mode {
            RedisMode::Hash if !self.checked => {
                // YCSB's two commands in one round trip.
                self.hset(key, values);
                let score = java_hash(key);
                let req = self.t.request_continue();
                resp::command(req, 4);
                resp::arg(req, b"ZADD");
                resp::arg(req, INDEX_KEY.as_bytes());
                resp::arg_int(req, i64::from(score));
                resp::arg(req, key.as_bytes());
                let reply = self.t.call(2).await?;
                let mut r = Reader::new(reply);
                int_reply(&mut r)?;
                int_reply(&mut r)?;
                Ok(Status::Ok)
            }
            RedisMode::Hash => {
                let names = &self.fields.names;
                let score = java_hash(key);
                let encode_args = |req: &mut Vec<u8>| {
                    resp::arg(req, b"2");
                    resp::arg(req, key.as_bytes());
                    resp::arg(req, INDEX_KEY.as_bytes());
                    resp::arg_int(req, i64::from(score));
                    for v in values {
                        resp::arg(req, &names[v.field]);
                        resp::arg(req, &v.value);
                    }
                };
                let argc = 4 + 2 * values.len();
                eval_on(&mut self.t, INSERT_SHA, INSERT_SCRIPT, encode_args, argc).await?;
                Ok(Status::Ok)
            }
            RedisMode::String => {
                let value = &values[values.len() - 1].value;
                resp::encode(self.t.request(), &[b"SET", key.as_bytes(), value]);
                let reply = self.t.call(1).await?;
                match Reader::new(reply).next().map_err(proto_err)? {
                    Item::Simple(_) => Ok(Status::Ok),
                    Item::Error(e) => Err(server_err(e)),
                    other => Err(proto_err(format!("expected OK, got {other:?}"))),
                }
            }
        }
    }

    async fn delete_op(&mut self, key: &str) -> OpResult<Status> {
        let req = self.t.request();
        resp::encode(req, &[b"DEL", key.as_bytes()]);
        let replies = match self.mode {
            RedisMode::Hash => {
                resp::encode(req, &[b"ZREM", INDEX_KEY.as_bytes(), key.as_bytes()]);
                2
            }
            RedisMode::String => 1,
        };
        let reply = self.t.call(replies).await?;
        let mut r = Reader::new(reply);
        let deleted = int_reply(&mut r)?;
        if replies == 2 {
            int_reply(&mut r)?;
        }
        Ok(if deleted == 0 {
            Status::NotFound
        } else {
            Status::Ok
        })
    }
}

/// Run a script by digest, falling back to sending its text when the
/// server has lost it (restarted, or `SCRIPT FLUSH`). `encode_args` writes
/// the `argc` arguments after the script (numkeys, keys, argv).
async fn eval_on(
    t: &mut Transport<Resp>,
    sha: &str,
    script: &str,
    encode_args: impl Fn(&mut Vec<u8>),
    argc: usize,
) -> OpResult<i64> {
    for attempt in 0..2 {
        let req = t.request();
        resp::command(req, 2 + argc);
        if attempt == 0 {
            resp::arg(req, b"EVALSHA");
            resp::arg(req, sha.as_bytes());
        } else {
            resp::arg(req, b"EVAL");
            resp::arg(req, script.as_bytes());
        }
        encode_args(req);
        let reply = t.call(1).await?;
        match Reader::new(reply).next().map_err(proto_err)? {
            Item::Int(n) => return Ok(n),
            Item::Error(e) if attempt == 0 && e.starts_with(b"NOSCRIPT") => continue,
            Item::Error(e) => return Err(server_err(e)),
            other => return Err(proto_err(format!("expected an integer, got {other:?}"))),
        }
    }
    Err(OpError::error("the server does not accept the script"))
}

/// `HGETALL`'s reply into `out`, in field order; NOT_FOUND when empty.
/// Fields the schema does not name (written by another tool) are skipped.
fn parse_hgetall(
    r: &mut Reader<'_>,
    names: &FieldNames,
    out: &mut Vec<FieldValue>,
) -> OpResult<Status> {
    let n = match r.next().map_err(proto_err)? {
        Item::Array(n) => n.unwrap_or(0),
        Item::Error(e) => return Err(server_err(e)),
        other => return Err(proto_err(format!("expected a hash, got {other:?}"))),
    };
    if n == 0 {
        return Ok(Status::NotFound);
    }
    let before = out.len();
    for _ in 0..n / 2 {
        let (Item::Bulk(Some(name)), Item::Bulk(Some(value))) =
            (r.next().map_err(proto_err)?, r.next().map_err(proto_err)?)
        else {
            out.truncate(before);
            return Err(proto_err("a hash field that is not a string".into()));
        };
        if let Some(field) = names.index(name) {
            out.push(FieldValue::copied(field, value));
        }
    }
    // Small hashes come back in insertion order, large ones in any order.
    let added = &mut out[before..];
    if !added.windows(2).all(|w| w[0].field < w[1].field) {
        added.sort_by_key(|f| f.field);
    }
    Ok(Status::Ok)
}

/// `HMGET`'s reply into `out`, in the order asked; returns how many fields
/// were present.
fn parse_hmget(r: &mut Reader<'_>, list: &[usize], out: &mut Vec<FieldValue>) -> OpResult<usize> {
    match r.next().map_err(proto_err)? {
        Item::Array(Some(n)) if n == list.len() => {}
        Item::Error(e) => return Err(server_err(e)),
        other => {
            return Err(proto_err(format!(
                "expected {} values, got {other:?}",
                list.len()
            )))
        }
    }
    let mut found = 0;
    for &field in list {
        match r.next().map_err(proto_err)? {
            Item::Bulk(Some(value)) => {
                out.push(FieldValue::copied(field, value));
                found += 1;
            }
            Item::Bulk(None) => {}
            other => return Err(proto_err(format!("expected a value, got {other:?}"))),
        }
    }
    Ok(found)
}

pipelined::settled_by_the_transport!(RedisConnection);
