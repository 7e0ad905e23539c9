//! Noria's vote workload (OSDI'18 section 8.2): articles and votes on them.
//! This module owns the workload's properties ([`VoteConfig`]), the choice
//! of article for each operation and the read/write mix ([`VoteWorker`]),
//! and the capability a backend implements to run it ([`Vote`],
//! [`VoteConnection`]); the SQL and Redis statements live with each
//! backend.
//!
//! Load inserts `vote.articles` articles (ids 1..=N, each with a title);
//! a run does one vote in every `vote.write_every` operations and reads one
//! article with its vote count otherwise. Reads are recorded as READ, votes
//! as INSERT (a vote is a new row), so the YCSB summary, the JSON report,
//! the results store and the Noria table all see the same two kinds.

use crate::backend::{Backend, BackendResult, Schema};
use crate::run_record::RunRecord;

use super::config::CoreConfig;
use super::kind::Kind;
use super::steps::Loaded;
use std::future::Future;
use std::sync::Arc;

use rand_core::RngCore;

use crate::backend::{Connection, Status};
use crate::executor::{Meter, Step};
use crate::generator::{rng_for, Counter, Rng, ScrambledZipfian, UniformGen};
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

use super::capability::{Capability, Support};
use super::phase::Phase;
use crate::workload::kind::{Opens, Readied, Readying};

/// The vote workload's capability: a backend that runs it implements
/// [`Runs<Vote>`](super::capability::Runs) for its tables (`Article`, `Vote`, made for a
/// [`VoteVariant`]) and [`VoteConnection`] for its connections.
pub struct Vote;

impl Capability for Vote {
    type Config = VoteVariant;
    type Step = VoteWorker;
    const REFUSAL: &'static str = "does not run the vote workload (workload=vote); it runs on \
         PostgreSQL (postgres://), MySQL/MariaDB (mysql://), Redis (redis://) and memcached \
         (memcached://), and on a database behind a cache with -p vote.cache=URL";
}

/// A backend's vote support (see [`Support`]).
pub type VoteSupport<B> = Support<B, Vote>;

/// The vote workload's operations on one connection.
pub trait VoteConnection: Connection {
    /// Load: insert article `id` with its title.
    fn insert_article(
        &mut self,
        variant: VoteVariant,
        id: u64,
        title: &str,
    ) -> impl Future<Output = Status> + Send;

    /// `user` votes for `article`.
    fn vote(
        &mut self,
        variant: VoteVariant,
        article: u64,
        user: u64,
    ) -> impl Future<Output = Status> + Send;

    /// Read article `id` with its vote count into `out`; a missing article
    /// is [`Status::NotFound`].
    fn article(
        &mut self,
        variant: VoteVariant,
        id: u64,
        out: &mut ArticleRow,
    ) -> impl Future<Output = Status> + Send;
}

/// The vote workload's own property names.
pub const VOTE_PROPERTIES: &[&str] = &[
    "vote.articles",
    "vote.write_every",
    "vote.distribution",
    "vote.variant",
    "vote.cache",
];

/// The property that puts a cache in front of a SQL database (Noria's
/// hybrid deployment): a `memcached://` or `redis://` URL. The backend
/// reads it; the workload never touches the cache itself.
pub const VOTE_CACHE: &str = "vote.cache";

/// How the SQL backends answer "article with its vote count".
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VoteVariant {
    /// `Article(id, title)`, `Vote(article_id, user)`; a read joins the
    /// article with `COUNT(user) ... GROUP BY article_id`.
    Join,
    /// As Noria ran MySQL: `Article` also has a `votes` column, which each
    /// vote increments in the same transaction as its insert; a read is a
    /// primary-key lookup.
    Precomputed,
}

impl VoteVariant {
    pub fn name(self) -> &'static str {
        match self {
            VoteVariant::Join => "join",
            VoteVariant::Precomputed => "precomputed",
        }
    }
}

/// Which articles operations pick.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VoteDistribution {
    Uniform,
    /// YCSB's scrambled zipfian: a few hot articles scattered over the ids.
    Zipfian,
}

/// The vote workload's settings, defaults from Noria's vote benchmark.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VoteConfig {
    /// Articles loaded, ids `1..=articles` (Noria's `--articles`, 100,000).
    pub articles: u64,
    /// One operation in this many is a vote (Noria's `--write-every`;
    /// 20 is its 95/5 read/write mix).
    pub write_every: u64,
    pub distribution: VoteDistribution,
    pub variant: VoteVariant,
}

impl VoteConfig {
    pub fn from_properties(p: &Properties) -> Result<VoteConfig, PropertyError> {
        let articles = p.get_u64("vote.articles", 100_000)?;
        if articles == 0 || articles > i64::MAX as u64 {
            return Err(p.invalid("vote.articles", "must be at least 1"));
        }
        let write_every = p.get_u64("vote.write_every", 20)?;
        if write_every == 0 {
            return Err(p.invalid(
                "vote.write_every",
                "must be at least 1 (1 makes every operation a vote)",
            ));
        }
        let distribution =
            match p.get_choice("vote.distribution", "uniform", &["uniform", "zipfian"])? {
                "zipfian" => VoteDistribution::Zipfian,
                _ => VoteDistribution::Uniform,
            };
        let variant = match p.get_choice("vote.variant", "join", &["join", "precomputed"])? {
            "precomputed" => VoteVariant::Precomputed,
            _ => VoteVariant::Join,
        };
        Ok(VoteConfig {
            articles,
            write_every,
            distribution,
            variant,
        })
    }
}

/// For a backend that is a cache itself (Redis, memcached): a vote run
/// with `vote.cache` set is refused, since there is no database behind
/// it for the cache to front.
pub fn refuse_cache(p: &Properties) -> Result<(), String> {
    match p.get(VOTE_CACHE) {
        Some(v) if is_vote(p) && !v.trim().is_empty() => Err(format!(
            "{}: a cache goes in front of a SQL database (mysql://, postgres://), and this \
             backend is a cache itself: run it on its own, or name the database with --db",
            p.describe(VOTE_CACHE)
        )),
        _ => Ok(()),
    }
}

/// Whether the `workload` property selects the vote workload.
pub fn is_vote(p: &Properties) -> bool {
    p.get_str("workload", "core").eq_ignore_ascii_case("vote")
}

/// One article as a read returns it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArticleRow {
    pub id: u64,
    pub title: String,
    pub votes: u64,
}

/// The title article `id` is loaded with.
pub fn article_title(id: u64, out: &mut String) {
    out.clear();
    out.push_str("Article #");
    out.push_str(itoa::Buffer::new().format(id));
}

/// One operation of a vote run, as [`VoteWorker::next_operation`] gives it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VoteOp {
    /// Read article `id` with its vote count.
    Read { article: u64 },
    /// `user` votes for `article`.
    Vote { article: u64, user: u64 },
}

/// What every connection of one vote phase shares.
pub struct VoteShared {
    pub cfg: VoteConfig,
    load_ids: Counter,
}

impl VoteShared {
    pub fn new(cfg: VoteConfig) -> Arc<VoteShared> {
        Arc::new(VoteShared {
            cfg,
            load_ids: Counter::new(1),
        })
    }

    /// One worker's state for `phase`, seeded from the run seed and its
    /// connection index, so a seed repeats each connection's operations.
    pub fn worker(self: &Arc<Self>, phase: Phase, seed: u64, index: usize) -> VoteWorker {
        let n = self.cfg.articles;
        let keys = match self.cfg.distribution {
            VoteDistribution::Uniform => Articles::Uniform(UniformGen::new(1, n)),
            VoteDistribution::Zipfian => Articles::Zipfian(ScrambledZipfian::new(1, n)),
        };
        let mut rng = rng_for(seed, index as u64);
        // As the core workload does: streams of neighbouring seeds and
        // indices never line up by accident.
        let _ = rng.next_u64();
        VoteWorker {
            shared: self.clone(),
            phase,
            rng,
            keys,
            until_vote: self.cfg.write_every,
            row: ArticleRow::default(),
            title: String::new(),
        }
    }
}

enum Articles {
    Uniform(UniformGen),
    Zipfian(ScrambledZipfian),
}

/// One connection's vote workload state.
pub struct VoteWorker {
    shared: Arc<VoteShared>,
    phase: Phase,
    rng: Rng,
    keys: Articles,
    /// Operations left until this worker's next vote.
    until_vote: u64,
    row: ArticleRow,
    title: String,
}

impl VoteWorker {
    /// The next run-phase operation. Every `write_every`-th operation of a
    /// worker is a vote, counted from its first, so that 1 in N holds
    /// exactly per connection (Noria's clients count the same way) rather
    /// than on average.
    pub fn next_operation(&mut self) -> VoteOp {
        let article = match &mut self.keys {
            Articles::Uniform(g) => g.next(&mut self.rng),
            Articles::Zipfian(g) => g.next(&mut self.rng),
        };
        self.until_vote -= 1;
        if self.until_vote == 0 {
            self.until_vote = self.shared.cfg.write_every;
            // Users are drawn from a space large enough that the same user
            // rarely votes twice for one article; Noria does not dedupe either.
            let user = self.rng.next_u64() >> 33;
            VoteOp::Vote { article, user }
        } else {
            VoteOp::Read { article }
        }
    }

    async fn load_one<C: VoteConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let id = self.shared.load_ids.next();
        article_title(id, &mut self.title);
        let variant = self.shared.cfg.variant;
        let t = m.start();
        let status = conn.insert_article(variant, id, &self.title).await;
        m.record_on(conn, OpKind::Insert, status, t);
    }

    async fn run_one<C: VoteConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let variant = self.shared.cfg.variant;
        match self.next_operation() {
            VoteOp::Read { article } => {
                let t = m.start();
                let status = conn.article(variant, article, &mut self.row).await;
                // A row for another id would be a backend bug worth seeing.
                let status = if status.is_ok() && self.row.id != article {
                    Status::UnexpectedState
                } else {
                    status
                };
                m.record_on(conn, OpKind::Read, status, t);
            }
            VoteOp::Vote { article, user } => {
                let t = m.start();
                let status = conn.vote(variant, article, user).await;
                m.record_on(conn, OpKind::Insert, status, t);
            }
        }
    }
}

impl<C: VoteConnection> Step<C> for VoteWorker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self.phase {
            Phase::Load => self.load_one(conn, meter).await,
            Phase::Run => self.run_one(conn, meter).await,
        }
    }
}

impl Kind for VoteConfig {
    const NAME: &'static str = "vote";
    const TITLE: &'static str = "Noria's vote workload";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = VOTE_PROPERTIES;
    // A SQL backend reads `vote.cache` to put a cache in front of itself.
    const READ_BY_BACKENDS: bool = true;

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        VoteConfig::from_properties(p)
    }

    fn records(&self) -> Option<u64> {
        Some(self.articles)
    }

    fn load_operations(&self, _core: &CoreConfig) -> Option<u64> {
        Some(self.articles)
    }

    fn what(&self, _schema: &Schema) -> String {
        "the vote workload's articles".to_string()
    }

    fn data_shape(&self) -> &'static str {
        "vote.articles, vote.variant"
    }

    fn one_client_only(&self, phase: Phase) -> Option<&'static str> {
        (phase == Phase::Load).then_some(
            "the vote workload loads from one client machine (each would insert every article)",
        )
    }

    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: done,
            unit: "articles",
            batches: None,
        }
    }

    async fn is_empty<B: Backend>(&self, backend: &B, _: &Schema) -> BackendResult<Option<bool>> {
        VoteSupport::of(backend)?
            .is_empty(backend, &self.variant)
            .await
    }

    async fn prepare<B: Backend>(&self, backend: &B, _: &Schema, drop: bool) -> BackendResult<()> {
        VoteSupport::of(backend)?
            .prepare(backend, &self.variant, drop)
            .await
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        // Noria's own method is the capacity search by hand: raise
        // --target until sojourn time climbs, which a staircase profile
        // judged by a segment SLO does in one run.
        Some(
            "for workload=vote, run Noria's method as a staircase: `sojourn run --rate 'stairs \
             1000..20000 by 1000 every 20s' -p rate.slo=all.p99<50ms`, which stops at the \
             first step that misses",
        )
    }

    fn run_lines(&self, run: &RunRecord) -> String {
        crate::output::noria::noria(run)
    }

    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (phase, cfg, backend) = (at.phase, at.cfg, at.backend);
        let support = VoteSupport::of(backend)?;
        let shared = VoteShared::new(self.clone());
        let steps = (0..cfg.workers())
            .map(|i| shared.worker(phase, cfg.seed, i))
            .collect();
        Ok(support.phase(steps, cfg.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(write_every: u64, distribution: VoteDistribution) -> VoteConfig {
        VoteConfig {
            articles: 50,
            write_every,
            distribution,
            variant: VoteVariant::Join,
        }
    }

    #[test]
    fn one_in_n_operations_is_a_vote_on_a_loaded_article() {
        for d in [VoteDistribution::Uniform, VoteDistribution::Zipfian] {
            let shared = VoteShared::new(cfg(4, d));
            let mut w = shared.worker(Phase::Run, 7, 0);
            let ops: Vec<VoteOp> = (0..400).map(|_| w.next_operation()).collect();
            let votes = ops
                .iter()
                .filter(|o| matches!(o, VoteOp::Vote { .. }))
                .count();
            assert_eq!(votes, 100);
            for o in &ops {
                let (VoteOp::Read { article } | VoteOp::Vote { article, .. }) = *o;
                assert!((1..=50).contains(&article), "{o:?}");
            }
        }
    }

    #[test]
    fn zipfian_favours_some_articles() {
        let shared = VoteShared::new(cfg(1, VoteDistribution::Zipfian));
        let mut w = shared.worker(Phase::Run, 1, 0);
        let mut hits = [0u32; 51];
        for _ in 0..10_000 {
            let (VoteOp::Read { article } | VoteOp::Vote { article, .. }) = w.next_operation();
            hits[article as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        // Uniform gives about 200 each (the hottest near 240); the
        // scrambled zipfian's hottest article draws well over twice that.
        assert!(max > 450, "hottest article drew {max}");
    }

    #[test]
    fn same_seed_same_operations() {
        let shared = VoteShared::new(cfg(3, VoteDistribution::Uniform));
        let a: Vec<_> = {
            let mut w = shared.worker(Phase::Run, 9, 2);
            (0..50).map(|_| w.next_operation()).collect()
        };
        let mut w = shared.worker(Phase::Run, 9, 2);
        let b: Vec<_> = (0..50).map(|_| w.next_operation()).collect();
        assert_eq!(a, b);
        let mut other = shared.worker(Phase::Run, 9, 3);
        let c: Vec<_> = (0..50).map(|_| other.next_operation()).collect();
        assert_ne!(a, c);
    }

    #[test]
    fn properties_and_defaults() {
        let mut p = Properties::new();
        let c = VoteConfig::from_properties(&p).unwrap();
        assert_eq!(
            (c.articles, c.write_every, c.distribution, c.variant),
            (100_000, 20, VoteDistribution::Uniform, VoteVariant::Join)
        );
        p.set_arg("vote.variant=precomputed").unwrap();
        p.set_arg("vote.distribution=zipfian").unwrap();
        p.set_arg("vote.articles=10").unwrap();
        let c = VoteConfig::from_properties(&p).unwrap();
        assert_eq!(c.variant, VoteVariant::Precomputed);
        assert_eq!(c.distribution, VoteDistribution::Zipfian);
        assert_eq!(c.articles, 10);
        p.set_arg("vote.write_every=0").unwrap();
        assert!(VoteConfig::from_properties(&p).is_err());
        p.set_arg("vote.write_every=2").unwrap();
        p.set_arg("vote.variant=matview").unwrap();
        assert!(VoteConfig::from_properties(&p).is_err());
    }
}
