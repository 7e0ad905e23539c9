//! What each connection does: writers insert keys in order then update
//! written ones, readers read among the keys confirmed written, and every
//! value carries a checksum its reads verify.

use super::config::{KeyValueConfig, ReadDistribution};
use crate::backend::{Connection, FieldValue, Fields, Status};
use crate::executor::{Meter, Step};
use crate::generator::{below, rng_for, AcknowledgedCounter, Rng, SkewedLatest};
use crate::op::OpKind;
use rand_core::RngCore;
use std::sync::Arc;

/// How many keys are written: the first `n` with `key:n` missing, by a
/// binary search over reads (about 40 reads for 10^12 keys). Writers insert
/// in order, so the keys present are a prefix; a few may be missing near
/// its end where inserts were cut off, which the search may land on, in
/// which case writers retry from there.
pub async fn written_keys<C: Connection>(
    conn: &mut C,
    cfg: &KeyValueConfig,
) -> Result<u64, Status> {
    let mut out = Vec::new();
    if !present(conn, cfg, 0, &mut out).await? {
        return Ok(0);
    }
    // Every key below `lo` is present; `hi` is absent (or the end).
    let (mut lo, mut hi) = (1u64, cfg.num_unique_keys);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if present(conn, cfg, mid, &mut out).await? {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

async fn present<C: Connection>(
    conn: &mut C,
    cfg: &KeyValueConfig,
    n: u64,
    out: &mut Vec<FieldValue>,
) -> Result<bool, Status> {
    out.clear();
    match conn.read(&cfg.key(n), Fields::All, out).await {
        Status::Ok => Ok(true),
        Status::NotFound => Ok(false),
        other => Err(other),
    }
}

/// What the workers of one phase share: the insert counter, whose
/// acknowledged part is what readers may read.
pub struct KeyValueShared {
    cfg: KeyValueConfig,
    pub(super) inserts: AcknowledgedCounter,
    /// Keys present before the phase began.
    start: u64,
}

impl KeyValueShared {
    /// Writers continue from `written` keys already present.
    pub fn new(cfg: KeyValueConfig, written: u64) -> Arc<KeyValueShared> {
        Arc::new(KeyValueShared {
            cfg,
            inserts: AcknowledgedCounter::new(written),
            start: written,
        })
    }

    pub fn config(&self) -> &KeyValueConfig {
        &self.cfg
    }

    /// Keys confirmed written: every key below this one is (yb's
    /// `maxWrittenKey` + 1).
    pub fn written(&self) -> u64 {
        let last = self.inserts.last();
        if last == self.start.wrapping_sub(1) {
            self.start
        } else {
            (last + 1).min(self.cfg.num_unique_keys)
        }
    }

    /// The worker for connection `index` (writers first), seeded from the
    /// run seed and the index.
    pub fn worker(self: &Arc<Self>, seed: u64, index: usize) -> KeyValueWorker {
        let role = if index < self.cfg.num_threads_write {
            Role::Writer
        } else {
            Role::Reader
        };
        KeyValueWorker {
            shared: self.clone(),
            role,
            rng: rng_for(seed, index as u64),
            latest: SkewedLatest::new(self.written().max(1)),
            value: Vec::with_capacity(self.cfg.value_size),
            out: Vec::with_capacity(1),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Role {
    Writer,
    Reader,
}

/// One connection's state.
pub struct KeyValueWorker {
    shared: Arc<KeyValueShared>,
    role: Role,
    rng: Rng,
    latest: SkewedLatest,
    value: Vec<u8>,
    out: Vec<FieldValue>,
}

impl<C: Connection> Step<C> for KeyValueWorker {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        match self.role {
            Role::Writer => self.write(conn, m).await,
            Role::Reader => self.read(conn, m).await,
        }
    }
}

impl KeyValueWorker {
    /// The writer's next operation: new keys first; once every key has
    /// been handed out, an overwrite of a random key whose insert has been
    /// acknowledged. Keys handed out but still in flight are never
    /// overwritten: the update could reach the database before the insert
    /// (NOT_FOUND, or an insert's duplicate key).
    pub(super) fn next_write(&mut self) -> (OpKind, u64) {
        let shared = &*self.shared;
        let cfg = &shared.cfg;
        if shared.written() < cfg.num_unique_keys {
            let n = shared.inserts.next();
            if n < cfg.num_unique_keys {
                return (OpKind::Insert, n);
            }
        }
        // Read after taking a number: the inserts acknowledged meanwhile
        // widen the choice.
        let written = shared.written().max(1);
        (OpKind::Update, below(&mut self.rng, written))
    }

    async fn write<C: Connection>(&mut self, conn: &mut C, m: &mut Meter) {
        let (kind, n) = self.next_write();
        let shared = &*self.shared;
        let cfg = &shared.cfg;
        let key = cfg.key(n);
        fill_value(&mut self.rng, &key, cfg.value_size, &mut self.value);
        let values = [FieldValue {
            field: 0,
            value: std::mem::take(&mut self.value),
        }];
        let t = m.start();
        let status = match kind {
            OpKind::Insert => conn.insert(&key, &values).await,
            _ => conn.update(&key, &values).await,
        };
        m.record_on(conn, kind, status, t);
        let [FieldValue { value, .. }] = values;
        self.value = value;
        if kind == OpKind::Insert {
            // Acknowledged whatever the outcome, as YCSB does: a failed
            // insert must not hold back every later key from readers (they
            // find it missing, and count that).
            shared.inserts.acknowledge(n);
        }
    }

    async fn read<C: Connection>(&mut self, conn: &mut C, m: &mut Meter) {
        let shared = &*self.shared;
        let written = shared.written();
        let n = match shared.cfg.read_distribution {
            // Nothing written yet: key 0, which is reported NOT_FOUND.
            _ if written == 0 => 0,
            ReadDistribution::Uniform => below(&mut self.rng, written),
            // `written - 1` is the newest key; the skewed draw is in
            // 1..=last, so the newest is the likeliest.
            ReadDistribution::Latest => self.latest.next(&mut self.rng, written - 1),
        };
        let key = shared.cfg.key(n);
        self.out.clear();
        let t = m.start();
        let mut status = conn.read(&key, Fields::All, &mut self.out).await;
        let ended = std::time::Instant::now();
        if status == Status::Ok && !self.out.iter().any(|f| verify(&key, &f.value)) {
            status = Status::UnexpectedState;
        }
        m.record_span_on(conn, OpKind::Read, status, t, ended);
    }
}

/// A value of `size` bytes for `key`: 8 hex digits of a CRC-32 over the key
/// and the payload, `:`, then printable random payload (printable so that
/// SQL backends can keep it in a text column).
pub fn fill_value(rng: &mut Rng, key: &str, size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(9, b'0');
    out[8] = b':';
    while out.len() < size {
        let mut r = rng.next_u64();
        for _ in 0..8 {
            if out.len() == size {
                break;
            }
            out.push(b'a' + (r % 26) as u8);
            r /= 26;
        }
    }
    let sum = checksum(key, &out[9..]);
    out[..8].copy_from_slice(format!("{sum:08x}").as_bytes());
}

/// Whether `value` is one [`fill_value`] made for `key`.
pub fn verify(key: &str, value: &[u8]) -> bool {
    if value.len() < 9 || value[8] != b':' {
        return false;
    }
    let Ok(hex) = std::str::from_utf8(&value[..8]) else {
        return false;
    };
    u32::from_str_radix(hex, 16).is_ok_and(|sum| sum == checksum(key, &value[9..]))
}

fn checksum(key: &str, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(key.as_bytes());
    h.update(payload);
    h.finalize()
}
