//! The commands workload as one of the plan's workload kinds: the
//! [`Commands`] capability, its [`Kind`] settings and the steps it builds
//! for a phase.

use super::config::{CommandsConfig, COMMANDS_PROPERTIES, PREFIX};
use super::connection::CommandsSetup;
use super::keys::{KeyGen, Pattern};
use super::worker::{CommandsWorker, Shared};
use crate::backend::{Backend, BackendError, BackendResult, Schema};
use crate::executor::Group;
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};
use crate::workload::capability::{Capability, Support};
use crate::workload::config::CoreConfig;
use crate::workload::kind::{Kind, Settled};
use crate::workload::kind::{Opens, Readied, Readying};
use crate::workload::phase::Phase;
use std::sync::Arc;

/// The workload's capability: a backend that runs it implements
/// [`Runs<Commands>`](crate::workload::capability::Runs) and
/// [`CommandConnection`](super::connection::CommandConnection).
pub struct Commands;

impl Capability for Commands {
    type Config = CommandsSetup;
    type Step = CommandsWorker;
    const REFUSAL: &'static str = "does not run command templates (workload=commands); they \
         run on Redis (redis://) and memcached (memcached://)";
}

/// A backend's support of the workload (see [`Support`]).
pub type CommandsSupport<B> = Support<B, Commands>;

impl Kind for CommandsConfig {
    const NAME: &'static str = "commands";
    const TITLE: &'static str = "command templates";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = COMMANDS_PROPERTIES;
    const PREFIXES: &'static [&'static str] = &[PREFIX];

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        CommandsConfig::from_properties(p)
    }

    /// The keys of the key range.
    fn records(&self) -> Option<u64> {
        Some((self.space.max - self.space.min).saturating_add(1))
    }

    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        if s.phase == Phase::Load {
            return Err(s.props.invalid(
                "workload",
                "selects workload=commands, which has no load phase: its templates are the \
                 data's writers too. Fill the key range with a run of a SET template over \
                 pattern P (memtier: --ratio 1:0 --key-pattern P:P), then run",
            ));
        }
        Ok(())
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        Schema {
            table: "commands".into(),
            field_names: Vec::new(),
            more_tables: Vec::new(),
        }
    }

    fn what(&self, _schema: &Schema) -> String {
        format!(
            "keys {}{}..{}{}",
            self.prefix, self.space.min, self.prefix, self.space.max
        )
    }

    fn data_shape(&self) -> &'static str {
        "the key range and prefix (commands.key_minimum, commands.key_maximum, \
         commands.key_prefix)"
    }

    async fn is_empty<B: Backend>(&self, backend: &B, _: &Schema) -> BackendResult<Option<bool>> {
        // A miss is a figure of the run (memtier's Misses/sec), not a
        // sign that a load is missing.
        CommandsSupport::of(backend)?;
        Ok(None)
    }

    async fn prepare<B: Backend>(&self, backend: &B, _: &Schema, drop: bool) -> BackendResult<()> {
        CommandsSupport::of(backend)?
            .prepare(backend, &self.setup(), drop)
            .await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        None
    }

    /// A `GET` of a key not set is memtier's miss, not a failure.
    fn misses_are_answers(&self) -> bool {
        true
    }

    /// With `per_connection`, a closed loop's count shared equally: a
    /// group of one connection each.
    fn groups(&self, _phase: Phase, one: Group) -> Vec<Group> {
        match one.operation_count {
            Some(n)
                if self.per_connection
                    && one.target.is_none()
                    && one.workers > 1
                    && n % one.workers as u64 == 0 =>
            {
                let each = n / one.workers as u64;
                (0..one.workers)
                    .map(|_| Group::all(1, None, Some(each)))
                    .collect()
            }
            _ => vec![one],
        }
    }

    fn share_properties(&self, index: u32, n: u32, connections: u64) -> Vec<(String, String)> {
        vec![
            (
                "commands.client_offset".into(),
                (self.client_offset + u64::from(index) * connections).to_string(),
            ),
            (
                "commands.clients".into(),
                self.clients
                    .unwrap_or(u64::from(n) * connections)
                    .to_string(),
            ),
        ]
    }

    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (cfg, backend) = (at.cfg, at.backend);
        let support = CommandsSupport::of(backend)?;
        let kinds = self
            .entries
            .iter()
            .map(|e| OpKind::named(&e.name))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BackendError::Config)?;
        let keys = self
            .entries
            .iter()
            .map(|e| {
                (e.pattern == Pattern::Zipfian).then(|| KeyGen::new(e.pattern, &self.space, 0, 1))
            })
            .collect();
        let shared = Arc::new(Shared {
            cfg: self.clone(),
            kinds,
            data: vec![b'x'; self.data.max()],
            keys,
            seed: cfg.seed,
            clients: self.clients.unwrap_or(cfg.workers() as u64),
        });
        let steps = (0..cfg.workers()).map(|i| shared.worker(i)).collect();
        Ok(support.phase(steps, cfg.clone()))
    }
}
