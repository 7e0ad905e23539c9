//! Workloads: what operations a run performs. The YCSB core workload is the
//! first; others (LIOPS, key-value, vote) plug into the executor's
//! [`Step`](crate::executor::Step) the same way. [`Worker`] is the one step
//! type the command line drives, whichever workload the plan selected.

pub mod config;
pub mod core;
pub mod keyvalue;
pub mod liops;
pub mod vote;

use crate::backend::Connection;
use crate::executor::{Meter, Step};
use crate::plan::Plan;

pub use self::config::{CoreConfig, RequestDistribution};
pub use self::core::{CoreShared, CoreWorker, Phase};
pub use self::liops::{LiopsConfig, LiopsShared, LiopsWorker};
pub use self::vote::{VoteConfig, VoteShared, VoteVariant, VoteWorker};

/// One connection's state in whichever workload a plan selected.
// One per connection, so its size does not matter; boxing the core worker
// would add a pointer chase to every operation.
#[allow(clippy::large_enum_variant)]
pub enum Worker {
    Core(CoreWorker),
    Vote(VoteWorker),
    Liops(LiopsWorker),
    /// Built by the caller (see [`keyvalue`]): its writers continue from
    /// keys found in the database before the phase.
    KeyValue(keyvalue::KeyValueWorker),
}

impl Worker {
    /// `n` workers for `plan`, one per connection.
    pub fn for_plan(plan: &Plan, n: usize) -> Result<Vec<Worker>, String> {
        if plan.keyvalue.is_some() {
            return Err(
                "the keyvalue workload runs with `sojourn load`, `run` and `bench` \
                        (its reader and writer pools are not available here)"
                    .to_string(),
            );
        }
        if let Some(cfg) = &plan.liops {
            // The seed fixes the load order and each session's ranges.
            let shared = LiopsShared::new(cfg.clone(), plan.run.seed);
            return Ok((0..n)
                .map(|i| Worker::Liops(shared.worker(plan.phase, plan.run.seed, i)))
                .collect());
        }
        Ok(match &plan.vote {
            Some(cfg) => {
                let shared = VoteShared::new(cfg.clone());
                (0..n)
                    .map(|i| Worker::Vote(shared.worker(plan.phase, plan.run.seed, i)))
                    .collect()
            }
            None => {
                let shared = CoreShared::new(plan.workload.clone())?;
                (0..n)
                    .map(|i| Worker::Core(shared.worker(plan.phase, plan.run.seed, i)))
                    .collect()
            }
        })
    }
}

impl<C: Connection> Step<C> for Worker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self {
            Worker::Core(w) => w.step(conn, meter).await,
            Worker::Vote(w) => w.step(conn, meter).await,
            Worker::Liops(w) => w.step(conn, meter).await,
            Worker::KeyValue(w) => w.step(conn, meter).await,
        }
    }

    async fn finish(&mut self, conn: &mut C) {
        conn.publish_stats().await;
    }
}
