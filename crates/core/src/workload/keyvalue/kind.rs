//! The key-value workload as one of the plan's workload kinds: the
//! optional [`KeyValue`] capability for a backend's own table, its [`Kind`]
//! settings and the steps it builds for a phase.

use super::config::{KeyValueConfig, KEYVALUE_PROPERTIES};
use super::narration::Narration;
use super::worker::{written_keys, KeyValueShared, KeyValueWorker};
use crate::backend::Schema;
use crate::backend::{Backend, BackendError};
use crate::executor::Group;
use crate::executor::RunConfig;
use crate::properties::{Properties, PropertyError};
use crate::workload::capability::{Capability, Support};
use crate::workload::kind::{Kind, Settled};
use crate::workload::kind::{Opens, Readied, Readying};
use crate::workload::phase::Phase;
use crate::workload::steps::{Loaded, Steps, StepsError};
use std::sync::Arc;

/// The key-value workload's capability: a table of the backend's own
/// layout for it. Optional: without it the workload uses YCSB's layout.
pub struct KeyValue;

impl Capability for KeyValue {
    type Config = KeyValueConfig;
    type Step = KeyValueWorker;
    // Never shown: a backend without it runs the workload in YCSB's layout.
    const REFUSAL: &'static str = "has no key-value table of its own";
}

/// A backend's key-value table, if it has one of its own.
pub type KeyValueSupport<B> = Support<B, KeyValue>;

impl Kind for KeyValueConfig {
    const NAME: &'static str = "keyvalue";
    const TITLE: &'static str = "the key-value workload";
    const PROPERTIES: &'static [&'static str] = KEYVALUE_PROPERTIES;

    fn from_properties(p: &Properties, phase: Phase) -> Result<Self, PropertyError> {
        KeyValueConfig::from_properties(p, phase)
    }

    fn records(&self) -> Option<u64> {
        Some(self.num_unique_keys)
    }

    /// The reader and writer pools decide the connections.
    fn connections(&self) -> Option<u64> {
        Some(self.workers() as u64)
    }

    fn bounds_itself(&self) -> bool {
        true
    }

    /// A rate for the whole phase would leave the pools' own unapplied
    /// (a suite's `ycsb_target_qps` among them) while the phase looks
    /// throttled; and a pool with no count needs a time limit.
    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        if let Some(key) = s.rate_key {
            return Err(s.props.invalid(
                key,
                "does not apply to workload=keyvalue, whose writer and reader pools have rates \
                 of their own: set write_rate and read_rate",
            ));
        }
        self.check_ends(s.phase, s.deadline, s.props)
    }

    fn paced(&self) -> bool {
        self.read_rate.is_some() || self.write_rate.is_some()
    }

    /// The reader and writer pools, each at its own rate; a load skips
    /// the keys it finds already written (see [`Kind::ready`]).
    fn groups(&self, phase: Phase, _one: Group) -> Vec<Group> {
        self.groups(phase, 0)
    }

    fn schema(&self, _core: &crate::workload::CoreConfig) -> Schema {
        self.schema()
    }

    fn data_shape(&self) -> &'static str {
        "num_unique_keys, value_size, nouuid/uuid"
    }

    fn one_client_only(&self, _phase: Phase) -> Option<&'static str> {
        Some(
            "the keyvalue workload runs from one client machine (its writers continue from \
             the keys already written, which every client would insert)",
        )
    }

    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: done,
            unit: "keys",
            batches: None,
        }
    }

    async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        match KeyValueSupport::find(backend) {
            Some(own) => own.is_empty(backend, self).await,
            None => backend.is_empty(schema).await,
        }
    }

    async fn check_layout<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        match KeyValueSupport::find(backend) {
            // Its own table is checked by its own setup.
            Some(_) => Ok(()),
            None => backend.check_layout(schema).await,
        }
    }

    async fn prepare<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        match KeyValueSupport::find(backend) {
            Some(own) => own.prepare(backend, self, drop).await,
            None => backend.prepare(schema, drop).await,
        }
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        // The search offers one target to every connection; what would
        // scale the two pools' own rates is the experimenter's choice.
        Some(
            "workload=keyvalue has a writer and a reader pool with rates of their own: run \
             `sojourn run -p read_rate=N -p write_rate=M` at rising rates (see docs/keyvalue.md)",
        )
    }

    /// The writers continue from the keys already in the database:
    /// `max_written_key`, or found by a search of reads over a connection
    /// of its own from `connector` (opened only then, and closed before
    /// the phase starts).
    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (phase, cfg, connector) = (at.phase, at.cfg, at.connector);
        let written = match self.max_written_key {
            Some(w) => w,
            None => {
                let mut conn = connector.connect().await?;
                written_keys(&mut conn, self)
                    .await
                    .map_err(StepsError::WrittenKeys)?
            }
        };
        let shared = KeyValueShared::new(self.clone(), written);
        let steps = (0..cfg.workers())
            .map(|i| shared.worker(cfg.seed, i))
            .collect();
        let cfg = RunConfig {
            groups: self.groups(phase, written),
            ..cfg.clone()
        };
        Ok(Box::new(
            Steps::new(steps, cfg).narrated(Arc::new(Narration::new(shared))),
        ))
    }
}
