//! yb-sample-apps' key-value workload (`CassandraKeyValue`), selected with
//! `workload=keyvalue`: a pool of writers and a pool of readers, each with
//! its own connections and optional target rate, over keys `key:<n>`.
//!
//! Writers insert new keys in sequence until `num_unique_keys`, then update
//! random keys already written. Readers read among the keys confirmed
//! written: uniformly, or (`read_distribution=latest`) skewed towards the
//! newest, as in the seed's "recent-data read heavy" phase. Every value
//! carries a checksum over its key and payload, verified on every read; a
//! mismatch is counted as UNEXPECTED_STATE.
//!
//! The load phase is the writers alone inserting every key; the run phase
//! continues from the keys already present (found by a binary search of
//! reads, see [`written_keys`], or given as `max_written_key`).
//!
//! Data goes through the same [`Connection`](crate::backend::Connection) as YCSB's workload: one record
//! per key, one field (`v`), so every key-value backend serves it as is, in
//! YCSB's layout. A backend with a layout of its own for it (yb-sample-apps'
//! `k`/`v` table over CQL) lists [`KeyValueSupport`] in its extensions and
//! sets that table up itself; the operations stay YCSB's five.

mod config;
mod kind;
mod narration;
mod worker;

#[cfg(test)]
mod tests;

pub use config::{
    is_keyvalue, refuse_unread, KeyValueConfig, ReadDistribution, KEYVALUE_PROPERTIES, NOT_READ,
};
pub use kind::{KeyValue, KeyValueSupport};
pub use narration::{Narration, ProgressLine, MS_PER_OP};
pub use worker::{fill_value, verify, written_keys, KeyValueShared, KeyValueWorker};
