//! Workloads: what operations a run performs, and what setting up their
//! data takes. YCSB's core workload ([`ycsb`]) is the first;
//! yb-sample-apps' key-value workload runs on YCSB's five operations too, while Noria's vote and
//! PGIO's LIOPS need operations of their own, which each defines as a
//! capability trait that backends implement (see [`vote`], [`liops`]).
//!
//! [`Workload`] is the one type the layers above hold: the plan's choice,
//! with its settings. For a phase on a backend it sets the tables up and
//! builds a [`ReadyPhase`]: the steps, one per connection, already typed
//! for that backend's connections, which the session runs on a pool
//! without knowing which workload they are.

pub mod capability;
pub mod commands;
pub mod config;
pub mod keyvalue;
pub mod kind;
pub mod liops;
pub mod pgio;
mod phase;
pub mod script;
mod steps;
pub mod tpcc;
pub mod vote;
pub mod ycsb;

use crate::backend::{Backend, BackendError, Schema};
use crate::executor::{Connector, Group, RunConfig};
use crate::properties::{Properties, PropertyError};
use crate::run_record::RunRecord;

pub use self::commands::CommandsConfig;
pub use self::config::{CoreConfig, RequestDistribution};
pub use self::keyvalue::{KeyValueConfig, KeyValueShared, KeyValueSupport, KeyValueWorker};
pub use self::kind::{Kind, Opens, Readied, Readying, Settled};
pub use self::liops::{LiopsConfig, LiopsShared, LiopsSupport, LiopsWorker};
pub use self::phase::Phase;
pub use self::script::ScriptConfig;
pub use self::steps::{BoxFuture, Loaded, Narrator, ReadyPhase, Steps, StepsError};
pub use self::tpcc::TpccConfig;
pub use self::vote::{VoteConfig, VoteShared, VoteSupport, VoteVariant, VoteWorker};
pub use self::ycsb::{CoreShared, CoreWorker};

/// The table of workload kinds: one line each, `Variant(Settings)`, the
/// settings implementing [`Kind`]. It makes [`Workload`] (the plan's
/// choice, with its settings) and `on_kind!`, which runs an expression on
/// whichever kind's settings a `Workload` holds.
macro_rules! kinds {
    ($d:tt; $($variant:ident($config:ty)),* $(,)?) => {
        /// The workload a plan selected, with its settings.
        #[derive(Clone, Debug)]
        pub enum Workload {
            $($variant($config),)*
        }

        macro_rules! on_kind {
            ($d workload:expr, $d k:ident => $d body:expr) => {
                match $d workload {
                    $(Workload::$variant($d k) => $d body,)*
                }
            };
        }

        /// Every kind's `workload=` name, in the table's order.
        pub const KINDS: &[&str] = &[$(<$config as Kind>::NAME,)*];

        /// The settings of the kind named `name`, for `phase`.
        fn settings_of(
            name: &str,
            p: &Properties,
            phase: Phase,
        ) -> Option<Result<Workload, PropertyError>> {
            $(
                if name.eq_ignore_ascii_case(<$config as Kind>::NAME) {
                    return Some(<$config as Kind>::from_properties(p, phase).map(Workload::$variant));
                }
            )*
            None
        }

        /// The kind named `name`: its title, its properties, and whether
        /// backends read them whatever the workload.
        fn about(name: &str) -> Option<(&'static str, &'static [&'static str], bool)> {
            $(
                if name.eq_ignore_ascii_case(<$config as Kind>::NAME) {
                    return Some((
                        <$config as Kind>::TITLE,
                        <$config as Kind>::PROPERTIES,
                        <$config as Kind>::READ_BY_BACKENDS,
                    ));
                }
            )*
            None
        }

        /// The prefixes of the properties the kind named `name` reads.
        fn prefixes_of(name: &str) -> &'static [&'static str] {
            $(
                if name.eq_ignore_ascii_case(<$config as Kind>::NAME) {
                    return <$config as Kind>::PREFIXES;
                }
            )*
            &[]
        }
    };
}

kinds! {$;
    Core(CoreConfig),
    KeyValue(KeyValueConfig),
    Vote(VoteConfig),
    Liops(LiopsConfig),
    Script(ScriptConfig),
    Tpcc(TpccConfig),
    Commands(CommandsConfig),
}

/// The name of the workload the `workload` property selects, when it is
/// not YCSB's core one (whose runs are named by their workload files).
pub fn kind_name(p: &Properties) -> Option<&'static str> {
    let name = p.get("workload")?.trim();
    KINDS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(name))
        .copied()
        .filter(|k| *k != CoreConfig::NAME)
}

/// Whether the `workload` property selects the kind `K`.
pub fn selects<K: Kind>(p: &Properties) -> bool {
    p.get_str("workload", CoreConfig::NAME)
        .trim()
        .eq_ignore_ascii_case(K::NAME)
}

/// Each kind's name, title and the properties it reads (a workload file
/// of one kind may not hold another's).
pub fn kind_properties(
) -> impl Iterator<Item = (&'static str, &'static str, &'static [&'static str])> {
    KINDS
        .iter()
        .filter_map(|k| about(k).map(|(title, props, _)| (*k, title, props)))
}

impl Workload {
    /// The workload `workload=NAME` selects (YCSB's core workload when
    /// none does), with its settings for `phase`.
    pub fn from_properties(p: &Properties, phase: Phase) -> Result<Workload, PropertyError> {
        let mut name = p.get_str("workload", CoreConfig::NAME).trim();
        // YCSB's workload files name its Java class.
        if name.ends_with(".CoreWorkload") {
            name = CoreConfig::NAME;
        }
        settings_of(name, p, phase).unwrap_or_else(|| {
            Err(p.invalid(
                "workload",
                format!(
                    "names no workload sojourn runs; the workloads are {} (YCSB's \
                     site.ycsb.workloads.CoreWorkload is core)",
                    KINDS.join(", ")
                ),
            ))
        })
    }

    /// The property names the workload `p` selects reads, with those
    /// backends read whatever the workload.
    pub fn known_properties(p: &Properties) -> Vec<&'static str> {
        let chosen = p.get_str("workload", CoreConfig::NAME).trim().to_string();
        KINDS
            .iter()
            .filter_map(|k| {
                let (_, props, by_backends) = about(k)?;
                (by_backends || k.eq_ignore_ascii_case(&chosen)).then_some(props)
            })
            .flatten()
            .copied()
            .collect()
    }

    /// The prefixes of property names the workload `p` selects reads.
    pub fn known_prefixes(p: &Properties) -> &'static [&'static str] {
        prefixes_of(p.get_str("workload", CoreConfig::NAME).trim())
    }

    /// Its `workload=` name.
    pub fn name(&self) -> &'static str {
        fn of<K: Kind>(_: &K) -> &'static str {
            K::NAME
        }
        on_kind!(self, k => of(k))
    }

    /// See [`Kind::records`].
    pub fn records(&self) -> Option<u64> {
        on_kind!(self, k => Kind::records(k))
    }

    /// See [`Kind::connections`].
    pub fn connections(&self) -> Option<u64> {
        on_kind!(self, k => Kind::connections(k))
    }

    /// See [`Kind::run_time`].
    pub fn run_time(&self, phase: Phase) -> Option<f64> {
        on_kind!(self, k => Kind::run_time(k, phase))
    }

    /// See [`Kind::load_operations`].
    pub fn load_operations(&self, core: &CoreConfig) -> Option<u64> {
        on_kind!(self, k => Kind::load_operations(k, core))
    }

    /// See [`Kind::bounds_itself`].
    pub fn bounds_itself(&self) -> bool {
        on_kind!(self, k => Kind::bounds_itself(k))
    }

    /// See [`Kind::check`].
    pub fn check(&self, settled: &Settled<'_>) -> Result<(), PropertyError> {
        on_kind!(self, k => Kind::check(k, settled))
    }

    /// See [`Kind::share_properties`].
    pub fn share_properties(&self, index: u32, n: u32, connections: u64) -> Vec<(String, String)> {
        on_kind!(self, k => Kind::share_properties(k, index, n, connections))
    }

    /// See [`Kind::misses_are_answers`].
    pub fn misses_are_answers(&self) -> bool {
        on_kind!(self, k => Kind::misses_are_answers(k))
    }

    /// See [`Kind::paced`].
    pub fn paced(&self) -> bool {
        on_kind!(self, k => Kind::paced(k))
    }

    /// See [`Kind::groups`].
    pub fn groups(&self, phase: Phase, one: Group) -> Vec<Group> {
        on_kind!(self, k => Kind::groups(k, phase, one))
    }

    /// See [`Kind::schema`].
    pub fn schema(&self, core: &CoreConfig) -> Schema {
        on_kind!(self, k => Kind::schema(k, core))
    }

    /// What holds the workload's data, for messages: words for every
    /// backend, tables or not (`… holds data for {what}`).
    pub fn what(&self, schema: &Schema) -> String {
        on_kind!(self, k => Kind::what(k, schema))
    }

    /// See [`Kind::data_shape`].
    pub fn data_shape(&self) -> &'static str {
        on_kind!(self, k => Kind::data_shape(k))
    }

    /// See [`Kind::one_client_only`].
    pub fn one_client_only(&self, phase: Phase) -> Option<&'static str> {
        on_kind!(self, k => Kind::one_client_only(k, phase))
    }

    /// See [`Kind::load_appends`].
    pub fn load_appends(&self) -> bool {
        on_kind!(self, k => Kind::load_appends(k))
    }

    /// See [`Kind::loaded`].
    pub fn loaded(&self, done: u64) -> Loaded {
        on_kind!(self, k => Kind::loaded(k, done))
    }

    /// See [`Kind::capacity_refusal`].
    pub fn capacity_refusal(&self) -> Option<&'static str> {
        on_kind!(self, k => Kind::capacity_refusal(k))
    }

    /// See [`Kind::run_lines`].
    pub fn run_lines(&self, run: &RunRecord) -> String {
        on_kind!(self, k => Kind::run_lines(k, run))
    }

    /// Whether the workload's tables hold no data (`None`: the backend
    /// cannot tell). A backend that cannot run the workload refuses it
    /// here, before any operation would fail.
    pub async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        on_kind!(self, k => Kind::is_empty(k, backend, schema).await)
    }

    /// Whether data already there has the layout this workload's
    /// operations expect ([`Backend::check_layout`]).
    pub async fn check_layout<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        on_kind!(self, k => Kind::check_layout(k, backend, schema).await)
    }

    /// Create the workload's tables if absent; with `drop`, empty them.
    pub async fn prepare<B: Backend>(
        &self,
        backend: &B,
        schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        on_kind!(self, k => Kind::prepare(k, backend, schema, drop).await)
    }

    /// See [`Kind::after_phase`].
    pub fn after_phase(&self, phase: Phase) -> Option<String> {
        on_kind!(self, k => Kind::after_phase(k, phase))
    }

    /// Do what [`Workload::after_phase`] describes.
    pub async fn verify<B: Backend>(&self, phase: Phase, backend: &B) -> Result<(), BackendError> {
        on_kind!(self, k => Kind::verify(k, phase, backend).await)
    }

    /// See [`Kind::after_load`].
    pub fn after_load(&self) -> Option<String> {
        on_kind!(self, k => Kind::after_load(k))
    }

    /// Do what [`Workload::after_load`] describes.
    pub async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        on_kind!(self, k => Kind::finish_load(k, backend).await)
    }

    /// The steps of `phase` on `backend`, one per connection of `cfg`,
    /// ready to run on a pool of the backend's connections (see
    /// [`Kind::ready`]).
    pub async fn ready<B, K>(
        &self,
        phase: Phase,
        cfg: &RunConfig,
        backend: &B,
        connector: &K,
    ) -> Result<Box<dyn ReadyPhase<B::Conn>>, StepsError>
    where
        B: Backend,
        K: Connector<Conn = B::Conn>,
    {
        let at = Readying {
            phase,
            cfg,
            backend,
            connector,
        };
        on_kind!(self, k => Kind::ready(k, at).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::{command_line as props, Origin};

    #[test]
    fn the_workload_property_picks_a_kind_of_the_table() {
        // A default record count, as a workload file would give.
        let sized = |mut p: Properties| {
            p.set("recordcount", "10", Origin::Default);
            p
        };
        let kind = |w: &str| {
            let p = sized(props(&[("workload", w)]));
            Workload::from_properties(&p, Phase::Run).map(|w| w.name())
        };
        let unset = sized(Properties::new());
        assert_eq!(
            Workload::from_properties(&unset, Phase::Run)
                .unwrap()
                .name(),
            "core"
        );
        assert_eq!(kind("site.ycsb.workloads.CoreWorkload").unwrap(), "core");
        assert_eq!(kind("KeyValue").unwrap(), "keyvalue");
        assert_eq!(kind("vote").unwrap(), "vote");
        let e = kind("site.ycsb.workloads.TimeSeriesWorkload")
            .unwrap_err()
            .to_string();
        assert!(e.contains("core, keyvalue, vote, liops"), "{e}");
        assert_eq!(kind_name(&props(&[("workload", "liops")])), Some("liops"));
        assert_eq!(kind_name(&props(&[("workload", "core")])), None);
    }

    #[test]
    fn each_kind_s_properties_are_known_when_it_runs_and_backends_read_vote_s() {
        let core = Workload::known_properties(&Properties::new());
        assert!(core.contains(&"vote.cache") && !core.contains(&"num_unique_keys"));
        let kv = Workload::known_properties(&props(&[("workload", "keyvalue")]));
        assert!(kv.contains(&"num_unique_keys") && !kv.contains(&"SCALE"));
        let all: Vec<&str> = kind_properties().map(|(name, _, _)| name).collect();
        assert_eq!(all, KINDS);
    }
}
