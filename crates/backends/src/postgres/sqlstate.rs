//! A PostgreSQL failure as words, and what those words say of it: its
//! SQLSTATE, and whether the prepared statements still stand.

/// A tokio-postgres error as one line: the server's message and SQLSTATE
/// when there is one (the error's own `Display` says only "db error").
pub(super) fn error_text(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        );
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The SQLSTATE at the end of a failure's words (see [`error_text`]).
pub(super) fn sqlstate(words: &str) -> Option<&str> {
    words
        .strip_suffix(')')?
        .rsplit_once("(SQLSTATE ")
        .map(|(_, code)| code)
}

/// Whether a server error leaves the prepared statements as they were: a
/// conflict that rolled the transaction back (SQLSTATE class 40), a
/// row that broke a constraint (23) or a value the statement could not
/// take (22) say nothing of the tables the statements were prepared on,
/// and preparing them again would add work pgbench does not do.
pub(super) fn statements_stand(words: &str) -> bool {
    sqlstate(words).is_some_and(|code| ["40", "23", "22"].iter().any(|c| code.starts_with(c)))
}
