//! The vote workload's connection trait for the caches on the pipelined
//! client (Redis, memcached).

/// The vote workload's operations of a cache's connection (Redis,
/// memcached), from its inherent `insert_article_now`, `vote_now` and
/// `article_now`, each under the guard. `vote.variant` does not apply: a
/// cache keeps a count, not Vote rows. (A macro because the trait belongs
/// to `sojourn-core`.)
macro_rules! vote_on_a_cache {
    ($conn:ty) => {
        impl sojourn_core::workload::vote::VoteConnection for $conn {
            async fn insert_article(
                &mut self,
                _: sojourn_core::workload::vote::VoteVariant,
                id: u64,
                title: &str,
            ) -> sojourn_core::backend::Status {
                let insert = async |c: &mut Self| c.insert_article_now(id, title).await;
                sojourn_core::backend::guard::call(self, insert).await
            }

            async fn vote(
                &mut self,
                _: sojourn_core::workload::vote::VoteVariant,
                article: u64,
                _user: u64,
            ) -> sojourn_core::backend::Status {
                let vote = async |c: &mut Self| c.vote_now(article).await;
                sojourn_core::backend::guard::call(self, vote).await
            }

            async fn article(
                &mut self,
                _: sojourn_core::workload::vote::VoteVariant,
                id: u64,
                out: &mut sojourn_core::workload::vote::ArticleRow,
            ) -> sojourn_core::backend::Status {
                let read = async |c: &mut Self| c.article_now(id, out).await;
                sojourn_core::backend::guard::call(self, read).await
            }
        }
    };
}
pub(crate) use vote_on_a_cache;
