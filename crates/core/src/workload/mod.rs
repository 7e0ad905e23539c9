//! Workloads: what operations a run performs. The YCSB core workload is the
//! first; others (LIOPS, key-value, vote) plug into the executor's
//! [`Step`](crate::executor::Step) the same way.

pub mod config;
pub mod core;
pub mod keyvalue;

pub use self::config::{CoreConfig, RequestDistribution};
pub use self::core::{CoreShared, CoreWorker, Phase};
