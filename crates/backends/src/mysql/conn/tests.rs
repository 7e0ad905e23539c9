//! The client against a real MariaDB server.

use super::*;
use sojourn_testkit::mariadb_server::{Mariadb, DATABASE, PASSWORD, USER};

async fn connect(db: &Mariadb) -> Conn {
    Conn::connect(&Config {
        addr: ("127.0.0.1".into(), db.port()),
        user: USER.into(),
        password: Some(PASSWORD.into()),
        database: Some(DATABASE.into()),
        tls: None,
    })
    .await
    .expect("connect")
}

/// Each row's cells as text.
async fn rows(conn: &mut Conn, stmt: &Statement, params: &[Param<'_>]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    conn.execute(stmt, params, |row| {
        let cells = row.cells().map(|c| {
            c.map(|c| String::from_utf8_lossy(&c.text().unwrap_or_default()).into_owned())
        });
        out.push(cells.collect::<Result<Vec<_>, _>>()?);
        Ok(())
    })
    .await
    .expect("execute");
    out
}

#[tokio::test]
async fn mariadb_leaves_out_known_columns_and_describes_changed_ones() {
    let Some(db) = Mariadb::start() else { return };
    let mut conn = connect(&db).await;
    assert!(
        conn.cached_columns,
        "MariaDB offers MARIADB_CLIENT_CACHE_METADATA"
    );
    conn.query("CREATE TABLE cached (id INT PRIMARY KEY, a VARCHAR(20))")
        .await
        .unwrap();
    conn.query("INSERT INTO cached VALUES (1, 'one'), (2, 'two')")
        .await
        .unwrap();
    let select = conn
        .prepare("SELECT * FROM cached WHERE id = ?")
        .await
        .unwrap();
    let sent = conn
        .prepare(
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS \
                  WHERE VARIABLE_NAME = 'BYTES_SENT'",
        )
        .await
        .unwrap();
    let bytes_sent =
        async |conn: &mut Conn| -> u64 { rows(conn, &sent, &[]).await[0][0].parse().unwrap() };
    // The first execution may describe its columns again; time
    // the ones after it.
    assert_eq!(
        rows(&mut conn, &select, &[Param::UInt(1)]).await,
        [["1", "one"]]
    );
    // The status query's own first execution may describe its column.
    bytes_sent(&mut conn).await;
    let before = bytes_sent(&mut conn).await;
    let status_query = bytes_sent(&mut conn).await - before;
    let from = bytes_sent(&mut conn).await;
    for _ in 0..100 {
        assert_eq!(
            rows(&mut conn, &select, &[Param::UInt(2)]).await,
            [["2", "two"]]
        );
    }
    let per_execution = (bytes_sent(&mut conn).await - from - status_query) / 100;
    // The column count, the row and the end of the result take
    // about 40 bytes; each column's description alone takes 40.
    assert!(per_execution < 60, "{per_execution} bytes per execution");

    // A changed table changes the columns: MariaDB describes them
    // again and they are read by the new description.
    conn.query("ALTER TABLE cached ADD COLUMN b INT DEFAULT 7")
        .await
        .unwrap();
    for _ in 0..2 {
        assert_eq!(
            rows(&mut conn, &select, &[Param::UInt(1)]).await,
            [["1", "one", "7"]]
        );
    }
    conn.query("DROP TABLE cached").await.unwrap();
}

#[test]
fn server_errors_keep_code_state_and_message() {
    let mut p = vec![0xff];
    p.extend_from_slice(&1146u16.to_le_bytes());
    p.extend_from_slice(b"#42S02Table 'x' doesn't exist");
    let e = server_error(&p);
    assert_eq!(e.to_string(), "ERROR 1146 (42S02): Table 'x' doesn't exist");
    assert!(!e.is_fatal());
}
