//! The vote workload's SQL for PostgreSQL and MySQL/MariaDB: Noria's
//! tables `Article(id, title)` and `Vote(article_id, user)`, the read of
//! one article with its vote count, and a vote.
//!
//! Variants (`vote.variant`): `join` keeps counts nowhere but in `Vote` and
//! reads them with the seed's join over `COUNT(user) ... GROUP BY`;
//! `precomputed`, as Noria ran MySQL, adds `Article.votes`, which every vote
//! increments atomically with its insert, so a read is a key lookup.
//!
//! The join is a LEFT JOIN with `COALESCE(votes, 0)` where the seed's query
//! is an inner join: otherwise an article nobody has voted for yet would
//! read as missing, and early reads would count as failures.
//!
//! `user` is a reserved word in PostgreSQL, hence quoted in both dialects.

use sojourn_core::workload::vote::VoteVariant;

use crate::sql::Dialect;

fn user(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "\"user\"",
        Dialect::Mysql => "`user`",
    }
}

/// Statements that prepare the tables for `variant`: with `drop`, both
/// removed first (`Vote` first).
pub(crate) fn setup(d: Dialect, variant: VoteVariant, drop: bool) -> Vec<String> {
    let mut statements = Vec::new();
    if drop {
        statements.push("DROP TABLE IF EXISTS Vote".to_string());
        statements.push("DROP TABLE IF EXISTS Article".to_string());
    }
    statements.extend(create_tables(d, variant));
    statements
}

/// Statements that create the tables (and `Vote`'s index) if absent.
fn create_tables(d: Dialect, variant: VoteVariant) -> Vec<String> {
    let votes = match variant {
        VoteVariant::Join => "",
        VoteVariant::Precomputed => ", votes BIGINT NOT NULL DEFAULT 0",
    };
    let article = format!(
        "CREATE TABLE IF NOT EXISTS Article (id BIGINT PRIMARY KEY, title VARCHAR(255) NOT NULL{votes})"
    );
    let u = user(d);
    match d {
        Dialect::Postgres => vec![
            article,
            format!(
                "CREATE TABLE IF NOT EXISTS Vote (article_id BIGINT NOT NULL, {u} BIGINT NOT NULL)"
            ),
            "CREATE INDEX IF NOT EXISTS vote_article ON Vote (article_id)".to_string(),
        ],
        // MySQL has no CREATE INDEX IF NOT EXISTS: the index is declared
        // with the table.
        Dialect::Mysql => vec![
            article,
            format!(
                "CREATE TABLE IF NOT EXISTS Vote (article_id BIGINT NOT NULL, {u} BIGINT NOT NULL, \
                 KEY vote_article (article_id))"
            ),
        ],
    }
}

/// Whether `Article` holds any row.
pub(crate) const ANY_ARTICLE: &str = "SELECT EXISTS (SELECT 1 FROM Article)";

/// Fails with an unknown-column error on tables created for `join`, which
/// the precomputed variant cannot use.
pub(crate) const VOTES_COLUMN: &str = "SELECT votes FROM Article WHERE 1 = 0";

/// Why the precomputed variant cannot run over tables created for join,
/// and what to do.
pub(crate) fn made_for_join() -> String {
    "the vote tables were created for vote.variant=join (Article has no votes column), \
     which vote.variant=precomputed cannot use: load again with --drop, or run with \
     -p vote.variant=join"
        .to_string()
}

/// Insert article (id, title).
pub(crate) fn insert_article(d: Dialect) -> String {
    format!(
        "INSERT INTO Article (id, title) VALUES ({}, {})",
        d.placeholder(1),
        d.placeholder(2)
    )
}

/// Insert a vote (article_id, user).
pub(crate) fn insert_vote(d: Dialect) -> String {
    format!(
        "INSERT INTO Vote (article_id, {}) VALUES ({}, {})",
        user(d),
        d.placeholder(1),
        d.placeholder(2)
    )
}

/// Increment the precomputed count of article (id).
pub(crate) fn count_vote(d: Dialect) -> String {
    format!(
        "UPDATE Article SET votes = votes + 1 WHERE id = {}",
        d.placeholder(1)
    )
}

/// PostgreSQL's precomputed vote in one atomic statement: the insert and
/// the increment (article_id, user).
pub(crate) const PG_VOTE_AND_COUNT: &str = "WITH v AS (INSERT INTO Vote (article_id, \"user\") \
     VALUES ($1, $2)) UPDATE Article SET votes = votes + 1 WHERE id = $1";

/// Read (id, title, votes) of article (id).
pub(crate) fn read_article(d: Dialect, variant: VoteVariant) -> String {
    match variant {
        VoteVariant::Precomputed => format!(
            "SELECT id, title, votes FROM Article WHERE id = {}",
            d.placeholder(1)
        ),
        VoteVariant::Join => format!(
            "SELECT a.id, a.title, COALESCE(vc.votes, 0) FROM Article a LEFT JOIN \
             (SELECT article_id, COUNT({}) AS votes FROM Vote GROUP BY article_id) vc \
             ON a.id = vc.article_id WHERE a.id = {}",
            user(d),
            d.placeholder(1)
        ),
    }
}
