//! The `bigtable://PROJECT/INSTANCE/TABLE` backend: Google Cloud Bigtable
//! over its gRPC API, or the Bigtable emulator when `BIGTABLE_EMULATOR_HOST`
//! is set (then plaintext HTTP/2 to that address, no credentials), as every
//! Google client library does.
//!
//! Layout (YCSB's `googlebigtable` binding and PerfKitBenchmarker): row key =
//! YCSB key; one column family (`cf`, or YCSB's `-p columnfamily=NAME`);
//! one column per field, the qualifier being the field name (`field0`).
//! Tables created here keep one version per cell (GC rule max versions 1,
//! as PKB's `cbt setgcpolicy ... maxversions=1`); reads ask for the newest
//! cell of each column anyway, so tables made by other tools read the same.
//!
//! Operations, one RPC each:
//! - read: `ReadRows` of one row key with a filter for the family (and the
//!   requested qualifiers); no row is `NOT_FOUND`.
//! - scan: `ReadRows` over the range `[start key, end of table)` with
//!   `rows_limit`.
//! - insert: `MutateRow` with `DeleteFromRow` then one `SetCell` per field,
//!   so that an existing row is replaced, as every other backend does.
//! - update: `CheckAndMutateRow` with no predicate (true when the row has
//!   any cell) and the `SetCell`s as its true mutations, so an absent row is
//!   `NOT_FOUND` rather than created; delete: the same with `DeleteFromRow`.
//!   `-p bigtable.checkexists=false` makes them plain `MutateRow`s as YCSB's
//!   binding sends them (cheaper on real Bigtable; absent rows are then
//!   created or ignored and report OK).
//!
//! Cells are written with timestamp -1 (Bigtable's server time).
//!
//! `load` creates the table when it is absent (admin API), with the family
//! and `bigtable.presplit=N` initial splits (default 200). The split points
//! are those of the HBASE-4163 recipe that YCSB's Bigtable README and PKB
//! use: `user{1000 + i * 8999 / N}` for i = 1..=N (integer division), i.e.
//! `user1044, user1089, ..., user9999` for N = 200; they cut YCSB's key
//! space `user<decimal>` by its leading four digits. `--drop` empties the
//! table with `DropRowRange(delete_all_data_from_table)`.
//!
//! Connections: each sojourn connection is its own HTTP/2 connection with
//! one request in flight, so `--threads N` means N connections, as with the
//! other backends. gRPC is spoken by a small client over `h2` (see
//! [`grpc`]) and the hot-path messages are encoded and decoded in place
//! (see [`proto`]); the admin API uses the generated prost types. A request
//! that outlives `timeout.ms` (default 2000) is abandoned (its stream reset)
//! and counts as ERROR. A lost connection is re-established by the next
//! operation; while that fails, operations fail fast (ERROR) for a backoff
//! that doubles from 10 ms to 1 s.
//!
//! Real Bigtable: TLS to `bigtable.googleapis.com` and
//! `bigtableadmin.googleapis.com` with the system's CA roots, and OAuth
//! tokens from Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`,
//! gcloud's user credentials, or the metadata server), or from the service
//! account key file YCSB's `-p google.bigtable.auth.json.keyfile=PATH` names.
//!
//! The parts: [`options`] (URL and properties), [`filters`] (row filters),
//! [`auth`] (credentials), [`channel`] (a connection that comes back, with
//! backoff), [`rows`] (row assembly), [`connection`] (the operations).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gcp_auth::TokenProvider;
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use sojourn_core::backend::guard::{Guard, Timer};
use sojourn_core::backend::{Backend, BackendError, Schema};

use crate::{Open, OpenOptions};

mod auth;
mod channel;
mod connection;
mod filters;
pub mod grpc;
mod options;
pub mod proto;
mod rows;
#[cfg(test)]
mod tests;

use crate::backoff::Backoff;
use auth::Auth;
use channel::{Channel, BACKOFF_FIRST};
use filters::{all_fields_filter, exists_filter, filter_field, Filters};
use grpc::code;
use options::url_parts;
use proto::Rows;
use rows::Assembler;

pub use channel::Failure;
pub use connection::BigtableConnection;
use connection::Uris;
pub use options::{split_points, BigtableConfig, Server, EMULATOR_ENV};

const DATA_HOST: &str = "bigtable.googleapis.com";
const ADMIN_HOST: &str = "bigtableadmin.googleapis.com";

const DATA_SERVICE: &str = "/google.bigtable.v2.Bigtable/";
const ADMIN_SERVICE: &str = "/google.bigtable.admin.v2.BigtableTableAdmin/";

/// Table administration (creating 200 splits) can take a while on real
/// Bigtable.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(60);

/// A Bigtable instance (or the emulator) and the table the workload uses.
pub struct BigtableBackend {
    config: BigtableConfig,
    /// The token source for real Bigtable, made on first use.
    auth: tokio::sync::OnceCell<Arc<dyn TokenProvider>>,
}

impl std::fmt::Debug for BigtableBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BigtableBackend")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl BigtableBackend {
    pub fn new(config: BigtableConfig) -> BigtableBackend {
        BigtableBackend {
            config,
            auth: tokio::sync::OnceCell::new(),
        }
    }

    pub fn config(&self) -> &BigtableConfig {
        &self.config
    }

    fn instance_name(&self) -> String {
        format!(
            "projects/{}/instances/{}",
            self.config.project, self.config.instance
        )
    }

    fn table_id<'a>(&'a self, schema: &'a Schema) -> &'a str {
        self.config.table.as_deref().unwrap_or(&schema.table)
    }

    fn table_name(&self, schema: &Schema) -> String {
        format!("{}/tables/{}", self.instance_name(), self.table_id(schema))
    }

    fn setup_error(&self, message: impl std::fmt::Display) -> BackendError {
        BackendError::Setup {
            target: self.describe(),
            message: message.to_string(),
        }
    }

    fn connect_error(&self, message: impl std::fmt::Display) -> BackendError {
        BackendError::Connect {
            target: self.describe(),
            message: message.to_string(),
        }
    }

    /// Credentials for real Bigtable; `None` for the emulator.
    async fn auth(&self) -> Result<Option<Arc<dyn TokenProvider>>, String> {
        let Server::Google { key_file } = &self.config.target else {
            return Ok(None);
        };
        let provider = self
            .auth
            .get_or_try_init(|| async {
                match key_file {
                    Some(path) => gcp_auth::CustomServiceAccount::from_file(path)
                        .map(|a| Arc::new(a) as Arc<dyn TokenProvider>)
                        .map_err(|e| format!("service account key file {path}: {e}")),
                    None => gcp_auth::provider().await.map_err(|e| {
                        format!(
                            "no Google credentials: {e}. Set GOOGLE_APPLICATION_CREDENTIALS \
                             to a service account key file, run `gcloud auth \
                             application-default login`, pass -p \
                             google.bigtable.auth.json.keyfile=PATH, or set \
                             {EMULATOR_ENV}=HOST:PORT for the emulator"
                        )
                    }),
                }
            })
            .await?;
        Ok(Some(Arc::clone(provider)))
    }

    /// A connected channel to the data (or admin) API.
    async fn channel(&self, admin: bool, table_name: Option<&str>) -> Result<Channel, String> {
        let endpoint = match &self.config.target {
            Server::Emulator(host) => grpc::Endpoint::plaintext(host),
            Server::Google { .. } => {
                grpc::Endpoint::tls(if admin { ADMIN_HOST } else { DATA_HOST })?
            }
        };
        let auth = Auth::new(self.auth().await?, table_name);
        let timeout = if admin {
            ADMIN_TIMEOUT.max(self.config.timeout)
        } else {
            self.config.timeout
        };
        let mut link = Channel {
            endpoint,
            conn: None,
            auth,
            timeout: Some(timeout),
            backoff: Backoff::new(BACKOFF_FIRST),
        };
        link.connect().await.map_err(|f| f.to_string())?;
        Ok(link)
    }

    /// Create the table with the family and splits, or add the family to
    /// an existing table that lacks it.
    async fn ensure_table(&self, admin: &mut Channel, schema: &Schema) -> Result<(), BackendError> {
        let uri = |method: &str| {
            admin
                .endpoint
                .uri(&format!("{ADMIN_SERVICE}{method}"))
                .map_err(|e| self.setup_error(e))
        };
        let (get_uri, modify_uri, create_uri) = (
            uri("GetTable")?,
            uri("ModifyColumnFamilies")?,
            uri("CreateTable")?,
        );
        let name = self.table_name(schema);
        let family = admin::ColumnFamily {
            gc_rule: Some(admin::GcRule {
                rule: Some(admin::gc_rule::Rule::MaxNumVersions(1)),
            }),
            ..Default::default()
        };
        let get = admin::GetTableRequest {
            name: name.clone(),
            view: admin::table::View::SchemaView as i32,
        };
        match admin.unary::<_, admin::Table>(&get_uri, &get).await {
            Ok(table) => {
                if table.column_families.contains_key(&self.config.family) {
                    return Ok(());
                }
                let modify = admin::ModifyColumnFamiliesRequest {
                    name,
                    modifications: vec![admin::modify_column_families_request::Modification {
                        id: self.config.family.clone(),
                        r#mod: Some(
                            admin::modify_column_families_request::modification::Mod::Create(
                                family,
                            ),
                        ),
                        ..Default::default()
                    }],
                    ignore_warnings: false,
                };
                admin
                    .unary::<_, admin::Table>(&modify_uri, &modify)
                    .await
                    .map_err(|e| self.setup_error(format!("adding the column family: {e}")))?;
                Ok(())
            }
            Err(e) if e.code() == Some(code::NOT_FOUND) => {
                let create = admin::CreateTableRequest {
                    parent: self.instance_name(),
                    table_id: self.table_id(schema).to_string(),
                    table: Some(admin::Table {
                        column_families: HashMap::from([(self.config.family.clone(), family)]),
                        ..Default::default()
                    }),
                    initial_splits: split_points(self.config.presplit)
                        .into_iter()
                        .map(|key| admin::create_table_request::Split {
                            key: key.into_bytes(),
                        })
                        .collect(),
                };
                match admin.unary::<_, admin::Table>(&create_uri, &create).await {
                    Ok(_) => Ok(()),
                    // Another client created it meanwhile: fine.
                    Err(e) if e.code() == Some(code::ALREADY_EXISTS) => Ok(()),
                    Err(e) => Err(self.setup_error(format!("creating the table: {e}"))),
                }
            }
            Err(e) => Err(self.setup_error(format!("looking up the table: {e}"))),
        }
    }
}

impl Open for BigtableBackend {
    const FORMS: &'static [&'static str] = &[
        "bigtable://PROJECT/INSTANCE/TABLE (or `bigtable`/`googlebigtable` with \
         -p google.bigtable.project.id=... -p google.bigtable.instance.id=...)",
    ];

    /// `bigtable://PROJECT/INSTANCE/TABLE`, or YCSB's binding names
    /// `bigtable` and `googlebigtable`: the parts left out come from YCSB's
    /// properties (see the module documentation).
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<BigtableBackend, String> {
        BigtableConfig::from_parts(url_parts(url)?, options.props).map(BigtableBackend::new)
    }
}

impl Backend for BigtableBackend {
    type Conn = BigtableConnection;

    fn describe(&self) -> String {
        let c = &self.config;
        let mut s = format!("bigtable://{}/{}", c.project, c.instance);
        if let Some(t) = &c.table {
            s.push('/');
            s.push_str(t);
        }
        if let Server::Emulator(host) = &c.target {
            s.push_str(&format!(" (emulator at {host})"));
        }
        s
    }

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        let mut admin = self
            .channel(true, None)
            .await
            .map_err(|e| self.connect_error(e))?;
        self.ensure_table(&mut admin, schema).await?;
        if drop {
            let request = admin::DropRowRangeRequest {
                name: self.table_name(schema),
                target: Some(admin::drop_row_range_request::Target::DeleteAllDataFromTable(true)),
            };
            let uri = admin
                .endpoint
                .uri(&format!("{ADMIN_SERVICE}DropRowRange"))
                .map_err(|e| self.setup_error(e))?;
            admin
                .unary::<_, ()>(&uri, &request)
                .await
                .map_err(|e| self.setup_error(format!("emptying the table: {e}")))?;
        }
        Ok(())
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        let table_name = self.table_name(schema);
        let mut link = self
            .channel(false, Some(&table_name))
            .await
            .map_err(|e| self.connect_error(e))?;
        let uri = link
            .endpoint
            .uri(&format!("{DATA_SERVICE}ReadRows"))
            .map_err(|e| self.connect_error(e))?;
        let mut table = Vec::new();
        proto::put_bytes(1, table_name.as_bytes(), &mut table);
        let filter = filter_field(&exists_filter(false));
        let mut any = false;
        let result = link
            .call(
                &uri,
                |buf| proto::read_rows(&table, Rows::From(b""), &filter, 1, buf),
                |msg| proto::for_each_chunk(msg, |_| any = true),
            )
            .await;
        match result {
            Ok(()) => Ok(Some(!any)),
            Err(e) if e.code() == Some(code::NOT_FOUND) => Ok(Some(true)),
            Err(e) => Err(self.connect_error(format!("reading the table: {e}"))),
        }
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<BigtableConnection, BackendError> {
        let table_name = self.table_name(&schema);
        let mut link = self
            .channel(false, Some(&table_name))
            .await
            .map_err(|e| self.connect_error(e))?;
        // Operations are bounded by the guard, reconnecting included.
        link.timeout = None;
        let uri = |method: &str| {
            link.endpoint
                .uri(&format!("{DATA_SERVICE}{method}"))
                .map_err(|e| self.connect_error(e))
        };
        let uris = Uris {
            read_rows: uri("ReadRows")?,
            mutate_row: uri("MutateRow")?,
            check_and_mutate_row: uri("CheckAndMutateRow")?,
        };
        let mut table = Vec::new();
        proto::put_bytes(1, table_name.as_bytes(), &mut table);
        let family = &self.config.family;
        Ok(BigtableConnection {
            link,
            uris,
            table,
            filters: Filters {
                all: filter_field(&all_fields_filter(family)),
                exists: filter_field(&exists_filter(false)),
                some: HashMap::new(),
                overflow: Vec::new(),
            },
            family: family.clone(),
            check_exists: self.config.check_exists,
            guard: Guard::new(schema.field_count(), Some(self.config.timeout)),
            timer: Timer::default(),
            assembler: Assembler {
                slots: vec![None; schema.field_count()],
                ..Default::default()
            },
            schema,
            last_error: None,
        })
    }
}
