//! The statements a PostgreSQL connection prepared on its current client,
//! kept for the client's life.

use sojourn_core::workload::vote::VoteVariant;
use tokio_postgres::{Client, Statement};

use crate::shapes::{ByShape, Layout, Op};
use crate::sql::Dialect;

#[derive(Default)]
pub(super) struct Statements {
    pub(super) shaped: ByShape<Statement>,
    pub(super) delete: Option<Statement>,
    /// The vote workload's statements, by `workloads::VoteStatement`.
    pub(super) vote: [Option<(VoteVariant, Statement)>; 3],
    /// The LIOPS select and update, and the table they were prepared for.
    pub(super) liops: Option<(String, Statement, Statement)>,
    /// A script's statements (`-M prepared`), by their number in the run.
    pub(super) script: Vec<Option<Statement>>,
}

impl Statements {
    /// The statement of `op` over `columns`, prepared on `client` on first
    /// use.
    pub(super) async fn shaped(
        &mut self,
        client: &Client,
        layout: &Layout,
        op: Op,
        columns: &[usize],
    ) -> Result<&Statement, tokio_postgres::Error> {
        let sql = || layout.sql(Dialect::Postgres, op, columns);
        self.shaped
            .get(layout, op, columns, async || client.prepare(&sql()).await)
            .await
    }
}
