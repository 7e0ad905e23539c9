//! Workloads: what operations a run performs. The YCSB core workload is the
//! first; others (LIOPS, key-value, vote) plug into the executor's
//! [`Step`](crate::executor::Step) the same way. [`Worker`] is the one step
//! type the command line drives, whichever workload the plan selected, and
//! [`Worker::for_phase`] builds a phase's steps and executor groups for
//! every command that runs one (`load`/`run`/`bench` and the suites).

pub mod config;
pub mod core;
pub mod keyvalue;
pub mod liops;
pub mod vote;

use std::sync::Arc;

use crate::backend::{BackendError, Connection, Status};
use crate::executor::{Connector, Group, Meter, Step};
use crate::plan::Plan;
use crate::properties::Properties;

pub use self::config::{CoreConfig, RequestDistribution};
pub use self::core::{CoreShared, CoreWorker, Phase};
pub use self::keyvalue::{KeyValueShared, KeyValueWorker};
pub use self::liops::{LiopsConfig, LiopsShared, LiopsWorker};
pub use self::vote::{VoteConfig, VoteShared, VoteVariant, VoteWorker};

/// The name of the workload the `workload` property selects, when it is
/// not YCSB's core one (whose runs are named by their workload files).
pub fn kind_name(p: &Properties) -> Option<&'static str> {
    if vote::is_vote(p) {
        Some("vote")
    } else if keyvalue::is_keyvalue(p) {
        Some("keyvalue")
    } else if liops::is_liops(p) {
        Some("liops")
    } else {
        None
    }
}

/// One connection's state in whichever workload a plan selected.
// One per connection, so its size does not matter; boxing the core worker
// would add a pointer chase to every operation.
#[allow(clippy::large_enum_variant)]
pub enum Worker {
    Core(CoreWorker),
    Vote(VoteWorker),
    Liops(LiopsWorker),
    KeyValue(KeyValueWorker),
}

/// What a phase runs: one step per connection, and the executor's groups
/// that share the connections out (the key-value workload's writers and
/// readers, each at its own rate; one group for the others).
pub struct PhaseSteps {
    pub steps: Vec<Worker>,
    pub groups: Vec<Group>,
    /// The key-value workload's shared state: the keys confirmed written,
    /// for its status line and `maxWrittenKey`.
    pub keyvalue: Option<Arc<KeyValueShared>>,
}

impl PhaseSteps {
    /// The operations the phase performs, when every group has a count.
    pub fn expected_operations(&self) -> Option<u64> {
        self.groups.iter().map(|g| g.operation_count).sum()
    }
}

/// Why a phase's steps could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StepsError {
    #[error("{0}")]
    Workload(String),
    #[error("finding the keys already written: {0}")]
    Connect(#[from] BackendError),
    #[error(
        "finding the keys already written: a read returned {}; \
         set -p max_written_key=N to skip the search",
        .0.ycsb_name()
    )]
    WrittenKeys(Status),
}

impl Worker {
    /// The steps and groups of `plan`'s phase, one step per connection
    /// (`plan.run.threads`). The key-value workload's writers continue from
    /// the keys already in the database: `max_written_key`, or found by a
    /// search of reads over a connection of its own from `connector`
    /// (opened only then, and closed before the phase starts).
    pub async fn for_phase<K>(plan: &Plan, connector: &K) -> Result<PhaseSteps, StepsError>
    where
        K: Connector,
        K::Conn: Connection,
    {
        if let Some(kv) = &plan.keyvalue {
            let written = match kv.max_written_key {
                Some(w) => w,
                None => {
                    let mut conn = connector.connect().await?;
                    keyvalue::written_keys(&mut conn, kv)
                        .await
                        .map_err(StepsError::WrittenKeys)?
                }
            };
            let shared = KeyValueShared::new(kv.clone(), written);
            return Ok(PhaseSteps {
                steps: (0..kv.workers())
                    .map(|i| Worker::KeyValue(shared.worker(plan.run.seed, i)))
                    .collect(),
                groups: kv.groups(plan.phase, written),
                keyvalue: Some(shared),
            });
        }
        let n = plan.run.threads;
        let steps = match (&plan.vote, &plan.liops) {
            (_, Some(cfg)) => {
                // The seed fixes the load order and each session's ranges.
                let shared = LiopsShared::new(cfg.clone(), plan.run.seed);
                (0..n)
                    .map(|i| Worker::Liops(shared.worker(plan.phase, plan.run.seed, i)))
                    .collect()
            }
            (Some(cfg), _) => {
                let shared = VoteShared::new(cfg.clone());
                (0..n)
                    .map(|i| Worker::Vote(shared.worker(plan.phase, plan.run.seed, i)))
                    .collect()
            }
            (None, None) => {
                let shared =
                    CoreShared::new(plan.workload.clone()).map_err(StepsError::Workload)?;
                (0..n)
                    .map(|i| Worker::Core(shared.worker(plan.phase, plan.run.seed, i)))
                    .collect()
            }
        };
        Ok(PhaseSteps {
            steps,
            groups: vec![Group {
                workers: n,
                target: plan.run.target,
                operation_count: plan.run.operation_count,
            }],
            keyvalue: None,
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
