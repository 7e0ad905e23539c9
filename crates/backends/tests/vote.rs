//! The vote workload's operations against real PostgreSQL, MariaDB and
//! Redis servers: after some votes, reading an article gives the number of
//! votes written to it (both SQL variants; Redis's counter), an unloaded
//! article is NOT_FOUND, tables created for join refuse the precomputed
//! variant, and a backend without the workload refuses it by name.
#![cfg(all(feature = "postgres", feature = "mysql", feature = "redis"))]

use std::path::Path;
use std::sync::Arc;

use sojourn_backends::{open, MysqlBackend, Open, OpenOptions, PostgresBackend, RedisBackend};
use sojourn_core::backend::{Schema, Status};
use sojourn_core::properties::Properties;
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::vote::{
    article_title, ArticleRow, Vote, VoteConfig, VoteConnection, VoteVariant,
};
use sojourn_core::workload::Workload;
use sojourn_testkit::mariadb_server::Mariadb;
use sojourn_testkit::postgres_server::Postgres;
use sojourn_testkit::redis_server::RedisServer;

/// Load 5 articles, vote 3 times on article 2, once on 4, and check every
/// article reads back with its title and exactly its votes.
async fn votes_read_back<B: Runs<Vote, Conn: VoteConnection>>(b: &B, variant: VoteVariant) {
    b.prepare_tables(&variant, true).await.expect("prepare");
    assert_eq!(
        b.tables_empty(&variant).await.expect("is_empty"),
        Some(true)
    );
    let mut conn = b
        .connect(Arc::new(Schema::ycsb("usertable", "field", 1)))
        .await
        .expect("connect");
    let mut title = String::new();
    for id in 1..=5 {
        article_title(id, &mut title);
        assert_eq!(
            conn.insert_article(variant, id, &title).await,
            Status::Ok,
            "article {id}"
        );
    }
    assert_eq!(
        b.tables_empty(&variant).await.expect("is_empty"),
        Some(false)
    );
    let votes = [(2, 3u64), (4, 1)];
    for (article, n) in votes {
        for user in 0..n {
            assert_eq!(conn.vote(variant, article, 100 + user).await, Status::Ok);
        }
    }
    let mut row = ArticleRow::default();
    for id in 1..=5 {
        assert_eq!(conn.article(variant, id, &mut row).await, Status::Ok);
        let expected = votes.iter().find(|(a, _)| *a == id).map_or(0, |v| v.1);
        article_title(id, &mut title);
        assert_eq!(
            row,
            ArticleRow {
                id,
                title: title.clone(),
                votes: expected
            },
            "{variant:?}"
        );
    }
    assert_eq!(conn.article(variant, 99, &mut row).await, Status::NotFound);
}

/// No tables read as empty for either variant. Tables created for join
/// refuse the precomputed variant, saying what to do; tables created for
/// precomputed serve both.
async fn layouts_checked<B: Runs<Vote>>(b: &B) {
    use VoteVariant::{Join, Precomputed};
    for variant in [Join, Precomputed] {
        assert_eq!(
            b.tables_empty(&variant).await.expect("no tables"),
            Some(true)
        );
    }
    b.prepare_tables(&Join, true).await.expect("prepare");
    assert_eq!(b.tables_empty(&Join).await.expect("join"), Some(true));
    let msg = b
        .tables_empty(&Precomputed)
        .await
        .expect_err("precomputed over join tables")
        .to_string();
    assert!(
        msg.contains("vote.variant=join") && msg.contains("--drop"),
        "{msg}"
    );
    b.prepare_tables(&Precomputed, true).await.expect("prepare");
    for variant in [Join, Precomputed] {
        assert_eq!(b.tables_empty(&variant).await.expect("tables"), Some(true));
    }
}

#[tokio::test]
async fn postgres_join_and_precomputed() {
    let Some(pg) = Postgres::start() else { return };
    let b = PostgresBackend::open(&pg.url(), &OpenOptions::new(&Properties::new())).expect("open");
    layouts_checked(&b).await;
    votes_read_back(&b, VoteVariant::Join).await;
    votes_read_back(&b, VoteVariant::Precomputed).await;
    // The counts the precomputed variant keeps agree with the Vote rows.
    assert_eq!(
        pg.psql(
            "SELECT count(*) FROM article a WHERE a.votes <> \
             (SELECT count(*) FROM vote v WHERE v.article_id = a.id)"
        )
        .trim(),
        "0"
    );
    assert_eq!(pg.psql("SELECT count(*) FROM vote").trim(), "4");
}

#[tokio::test]
async fn mariadb_join_and_precomputed() {
    let Some(db) = Mariadb::start() else { return };
    let b = MysqlBackend::open(&db.url(), &OpenOptions::new(&Properties::new())).expect("open");
    layouts_checked(&b).await;
    votes_read_back(&b, VoteVariant::Join).await;
    votes_read_back(&b, VoteVariant::Precomputed).await;
    assert_eq!(
        db.sql(
            "SELECT count(*) FROM Article a WHERE a.votes <> \
             (SELECT count(*) FROM Vote v WHERE v.article_id = a.id)"
        )
        .trim(),
        "0"
    );
    assert_eq!(db.sql("SELECT count(*) FROM Vote").trim(), "4");
}

#[tokio::test]
async fn redis_counter() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let b = RedisBackend::open(&server.url(), &OpenOptions::new(&Properties::new())).expect("open");
    votes_read_back(&b, VoteVariant::Join).await;
    assert_eq!(server.command(&["HGET", "article:2", "votes"]).trim(), "3");
}

#[tokio::test]
async fn other_backends_refuse_by_name() {
    let any = open(
        "memory:",
        &OpenOptions {
            default_sqlite: Path::new("unused"),
            ..OpenOptions::new(&Properties::new())
        },
    )
    .expect("open");
    let sojourn_backends::AnyBackend::Memory(b) = any else {
        panic!("memory: opens the memory backend")
    };
    // As every command asks: through the workload, which finds the
    // backend's vote support or says why there is none.
    let vote = Workload::Vote(VoteConfig::from_properties(&Properties::new()).unwrap());
    let schema = Schema::ycsb("usertable", "field", 1);
    let e = vote
        .is_empty(&b, &schema)
        .await
        .expect_err("memory: has no vote workload");
    let msg = e.to_string();
    assert!(
        msg.contains("memory") && msg.contains("PostgreSQL") && msg.contains("Redis"),
        "{msg}"
    );
    let e = vote.prepare(&b, &schema, false).await.expect_err("refused");
    assert_eq!(e.to_string(), msg);
}
