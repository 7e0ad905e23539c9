//! A connection of the memcached backend: YCSB's operations as `get`,
//! `set`, `replace`, `delete`, and `gets`/`cas` for checked updates.

use std::time::Duration;

use sojourn_core::backend::guard::{Guard, Operations, Read, Scan};
use sojourn_core::backend::{FieldValue, Fields, Status};

use super::protocol::{encode_key, first_line, parse_get, reply_err, Text, MAX_KEY};
use super::record::{decode_all, encode_record, record_len, Merge};
use crate::pipelined::{self, OpError, OpResult, Transport};

/// Attempts of a partial update's gets/cas before it reports ERROR.
pub(super) const CAS_ATTEMPTS: usize = 16;

/// A nonzero seed that differs between connections.
pub(super) fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    h.finish() | 1
}

/// A connection of [`MemcachedBackend`].
pub struct MemcachedConnection {
    pub(super) t: Transport<Text>,
    pub(super) table: String,
    pub(super) guard: Guard,
    /// The operation timeout, which also bounds a partial update's retries.
    pub(super) timeout: Duration,
    /// Partial updates by `gets`/`cas` (`memcached.checked`).
    pub(super) checked: bool,
    /// Indices into an update's values, in field order, last value winning.
    pub(super) order: Vec<usize>,
    /// Field ranges of a decoded record.
    pub(super) decoded: Vec<(usize, std::ops::Range<usize>)>,
    /// The record a partial update read, copied out of the reply buffer.
    pub(super) old: Vec<u8>,
    /// xorshift state for compare-and-swap retry pauses.
    pub(super) jitter: u64,
    pub(super) last_error: Option<String>,
}

/// The storage commands this backend sends.
#[derive(Copy, Clone)]
pub(super) enum Store {
    Set,
    Replace,
    Cas(u64),
}

impl MemcachedConnection {
    /// The most recent error on this connection, for diagnosing ERROR
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Start a command `<name> <key>` in the request buffer.
    pub(super) fn start(&mut self, name: &[u8], key: &str) -> OpResult<()> {
        let req = self.t.request();
        req.extend_from_slice(name);
        req.push(b' ');
        encode_key(req, &self.table, key).map_err(|()| OpError {
            status: Status::BadRequest,
            message: format!("key longer than memcached's {MAX_KEY} bytes"),
        })
    }

    /// `order` := indices of `values` sorted by field, one per field (the
    /// last given wins).
    pub(super) fn order_values(&mut self, values: &[FieldValue]) {
        self.order.clear();
        self.order.extend(0..values.len());
        if !values.windows(2).all(|w| w[0].field < w[1].field) {
            self.order.sort_by_key(|&i| values[i].field);
            // Keep the last of equal fields: walk backwards, drop repeats.
            let mut keep = Vec::with_capacity(self.order.len());
            for &i in self.order.iter().rev() {
                if keep
                    .last()
                    .is_none_or(|&j: &usize| values[j].field != values[i].field)
                {
                    keep.push(i);
                }
            }
            keep.reverse();
            self.order = keep;
        }
    }

    /// Append ` 0 0 <bytes>[ <cas>]\r\n<record>\r\n` for `fields`.
    pub(super) fn finish_store<'a>(
        &mut self,
        store: Store,
        fields: impl Iterator<Item = (usize, &'a [u8])> + Clone,
    ) {
        let len = record_len(fields.clone());
        let req = self.t.request_continue();
        req.extend_from_slice(b" 0 0 ");
        req.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
        if let Store::Cas(unique) = store {
            req.push(b' ');
            req.extend_from_slice(itoa::Buffer::new().format(unique).as_bytes());
        }
        req.extend_from_slice(b"\r\n");
        encode_record(req, fields);
        req.extend_from_slice(b"\r\n");
    }

    pub(super) async fn store(
        &mut self,
        command: &[u8],
        store: Store,
        key: &str,
        values: &[FieldValue],
    ) -> OpResult<Status> {
        self.order_values(values);
        self.start(command, key)?;
        let order = std::mem::take(&mut self.order);
        self.finish_store(
            store,
            order
                .iter()
                .map(|&i| (values[i].field, &values[i].value[..])),
        );
        self.order = order;
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"STORED" => Ok(Status::Ok),
            b"NOT_STORED" | b"NOT_FOUND" => Ok(Status::NotFound),
            _ => Err(reply_err(reply)),
        }
    }
}

impl Operations for MemcachedConnection {
    async fn scan_op(&mut self, _: Scan<'_>) -> OpResult<Status> {
        // memcached has no order to scan in.
        Ok(Status::NotImplemented)
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        self.store(b"set", Store::Set, key, values).await
    }

    async fn read_op(&mut self, read: Read<'_>) -> OpResult<Status> {
        let Read { key, fields, out } = read;
        self.start(b"get", key)?;
        self.t.request_continue().extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        let Some(value) = parse_get(reply).map_err(OpError::error)? else {
            return Ok(Status::NotFound);
        };
        decode_all(value.data, &mut self.decoded).map_err(OpError::error)?;
        match fields {
            Fields::All => {
                for (field, range) in &self.decoded {
                    out.push(FieldValue::copied(*field, &value.data[range.clone()]));
                }
            }
            Fields::Some(list) => {
                for &want in list {
                    if let Some((_, range)) = self.decoded.iter().find(|(f, _)| *f == want) {
                        out.push(FieldValue::copied(want, &value.data[range.clone()]));
                    }
                }
            }
        }
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        if values.is_empty() {
            let mut none = Vec::new();
            let read = Read {
                key,
                fields: Fields::Some(&[]),
                out: &mut none,
            };
            return self.read_op(read).await;
        }
        self.order_values(values);
        if !self.checked || self.order.len() == self.guard.field_count() {
            // YCSB's one `replace`; with every field written, the old
            // record does not matter anyway.
            return self.store(b"replace", Store::Replace, key, values).await;
        }
        let started = tokio::time::Instant::now();
        for attempt in 0..CAS_ATTEMPTS {
            if started.elapsed() >= self.timeout {
                return Err(OpError::error(format!(
                    "no compare-and-swap succeeded within {:?}",
                    self.timeout
                )));
            }
            if attempt >= 2 {
                // Two clients updating one item can fall into lockstep
                // (both read, one wins, both read again...); a random pause
                // of up to a few round trips breaks it.
                self.jitter = self.jitter ^ (self.jitter << 13);
                self.jitter ^= self.jitter >> 7;
                self.jitter ^= self.jitter << 17;
                let micros = self.jitter % (50u64 << attempt.min(6));
                tokio::time::sleep(Duration::from_micros(micros)).await;
            }
            self.start(b"gets", key)?;
            self.t.request_continue().extend_from_slice(b"\r\n");
            let reply = self.t.call(1).await?;
            let Some(value) = parse_get(reply).map_err(OpError::error)? else {
                return Ok(Status::NotFound);
            };
            let unique = value
                .cas
                .ok_or_else(|| OpError::error("gets returned no CAS value"))?;
            self.old.clear();
            self.old.extend_from_slice(value.data);
            decode_all(&self.old, &mut self.decoded).map_err(OpError::error)?;
            // Merge: old fields not updated, and the new values, in field
            // order.
            self.start(b"cas", key)?;
            let (old, decoded, order) = (
                std::mem::take(&mut self.old),
                std::mem::take(&mut self.decoded),
                std::mem::take(&mut self.order),
            );
            let merged = Merge {
                old: &old,
                decoded: &decoded,
                values,
                order: &order,
                i: 0,
                j: 0,
            };
            self.finish_store(Store::Cas(unique), merged);
            (self.old, self.decoded, self.order) = (old, decoded, order);
            let reply = self.t.call(1).await?;
            match first_line(reply) {
                b"STORED" => return Ok(Status::Ok),
                b"NOT_FOUND" => return Ok(Status::NotFound),
                b"EXISTS" => continue,
                _ => return Err(reply_err(reply)),
            }
        }
        Err(OpError::error(format!(
            "the item kept changing during {CAS_ATTEMPTS} compare-and-swap attempts"
        )))
    }

    async fn delete_op(&mut self, key: &str) -> OpResult<Status> {
        self.start(b"delete", key)?;
        self.t.request_continue().extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"DELETED" => Ok(Status::Ok),
            b"NOT_FOUND" => Ok(Status::NotFound),
            _ => Err(reply_err(reply)),
        }
    }
}

pipelined::settled_by_the_transport!(MemcachedConnection);
