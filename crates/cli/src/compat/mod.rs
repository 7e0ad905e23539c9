//! The seed tools' own command lines, each translated into sojourn's plan
//! of the same run and handed to the one load/run pipeline
//! ([`crate::pipeline`]): Noria's vote (`noria.rs`), pgbench's, memtier's
//! and redis-benchmark's (read getopt-style by `getopt.rs`), and
//! yb-sample-apps' flags, which `load`/`run` take themselves (`ybapps.rs`).
//! A translation never runs a second pipeline: what differs from the tool
//! is said on stderr, and the numbers are the pipeline's.

mod getopt;
pub mod memtier;
pub mod noria;
pub mod pgbench;
pub mod redis_benchmark;
pub mod ybapps;
