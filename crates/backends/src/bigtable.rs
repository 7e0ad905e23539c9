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
//! (see [`wire`]); the admin API uses the generated prost types. A request
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

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use gcp_auth::TokenProvider;
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2 as data;
use http::header::{HeaderName, HeaderValue, AUTHORIZATION};
use http::Uri;
use prost::Message;
use sojourn_core::backend::guard::{self, Bodies, Guard, Read, Scan, Settle, Timer};
use sojourn_core::backend::{Backend, BackendError, FieldValue, Fields, Row, Schema, Status};
use sojourn_core::properties::Properties;

use crate::{pool, url, Open, OpenOptions};

use data::row_filter::{Chain, Filter, Interleave};
use data::RowFilter;

pub mod grpc;
pub mod wire;

use grpc::{code, CallError};
use wire::{Chunk, Rows};

/// The environment variable every Google client library reads.
pub const EMULATOR_ENV: &str = "BIGTABLE_EMULATOR_HOST";

const DATA_HOST: &str = "bigtable.googleapis.com";
const ADMIN_HOST: &str = "bigtableadmin.googleapis.com";
const SCOPES: &[&str] = &["https://www.googleapis.com/auth/cloud-platform"];

const DATA_SERVICE: &str = "/google.bigtable.v2.Bigtable/";
const ADMIN_SERVICE: &str = "/google.bigtable.admin.v2.BigtableTableAdmin/";

/// Table administration (creating 200 splits) can take a while on real
/// Bigtable.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(60);
const DEFAULT_PRESPLIT: u64 = 200;
const DEFAULT_FAMILY: &str = "cf";
/// Label marking the one stripped cell asked for only to learn that a row
/// exists when none of the requested columns is set.
const EXISTS_LABEL: &str = "sojourn-exists";
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// Filters kept per connection for field subsets (YCSB reads one field or
/// all of them, so a handful are used).
const FILTER_CACHE_LIMIT: usize = 256;

/// Where requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The emulator at `host:port`: plaintext, no credentials.
    Emulator(String),
    /// Google's endpoints, over TLS with OAuth tokens.
    Google {
        /// A service account key file (YCSB's
        /// `google.bigtable.auth.json.keyfile`); else Application Default
        /// Credentials.
        key_file: Option<String>,
    },
}

/// Settings of a [`BigtableBackend`].
#[derive(Clone, Debug)]
pub struct BigtableConfig {
    pub project: String,
    pub instance: String,
    /// The table; `None` uses the workload's `table` property
    /// ([`Schema::table`]).
    pub table: Option<String>,
    pub family: String,
    pub target: Target,
    pub presplit: u64,
    pub timeout: Duration,
    pub check_exists: bool,
}

impl BigtableConfig {
    /// Defaults for the emulator at `host` (`127.0.0.1:PORT`).
    pub fn emulator(host: &str, project: &str, instance: &str) -> BigtableConfig {
        BigtableConfig {
            project: project.to_string(),
            instance: instance.to_string(),
            table: None,
            family: DEFAULT_FAMILY.to_string(),
            target: Target::Emulator(host.to_string()),
            presplit: DEFAULT_PRESPLIT,
            timeout: pool::DEFAULT_TIMEOUT,
            check_exists: true,
        }
    }
}

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

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

impl BigtableBackend {
    pub fn new(config: BigtableConfig) -> BigtableBackend {
        BigtableBackend {
            config,
            auth: tokio::sync::OnceCell::new(),
        }
    }

    /// The backend of a URL's `project`, `instance` and `table`, completed
    /// by YCSB's properties (`google.bigtable.project.id`,
    /// `google.bigtable.instance.id`, `columnfamily`,
    /// `google.bigtable.auth.json.keyfile`) and sojourn's
    /// (`bigtable.presplit`, `bigtable.checkexists`, `timeout.ms`). Parts of
    /// the URL win over properties. `BIGTABLE_EMULATOR_HOST` selects the
    /// emulator.
    fn from_parts<'a>(
        (project, instance, table): UrlParts<'a>,
        props: &'a Properties,
    ) -> Result<BigtableBackend, String> {
        // A part the URL leaves out comes from YCSB's property for it.
        let part = |given: Option<&'a str>, what: &str, a: &str| {
            let key = format!("google.bigtable.{what}.id");
            non_empty(given)
                .or_else(|| non_empty(props.get(&key)))
                .ok_or_else(|| {
                    format!(
                        "Bigtable needs {a} {what}: write bigtable://PROJECT/INSTANCE/TABLE \
                         or pass -p {key}={}",
                        what.to_ascii_uppercase()
                    )
                })
        };
        let project = part(project, "project", "a")?;
        let instance = part(instance, "instance", "an")?;
        let family = non_empty(props.get("columnfamily")).unwrap_or(DEFAULT_FAMILY);
        let timeout = pool::timeout(props, None)?;
        let target = match std::env::var(EMULATOR_ENV) {
            Ok(host) if !host.trim().is_empty() => Target::Emulator(host.trim().to_string()),
            _ => Target::Google {
                key_file: non_empty(props.get("google.bigtable.auth.json.keyfile"))
                    .map(str::to_string),
            },
        };
        Ok(BigtableBackend::new(BigtableConfig {
            project: project.to_string(),
            instance: instance.to_string(),
            table: non_empty(table).map(str::to_string),
            family: family.to_string(),
            target,
            presplit: props
                .get_u64("bigtable.presplit", DEFAULT_PRESPLIT)
                .map_err(|e| e.to_string())?,
            timeout,
            check_exists: props
                .get_bool("bigtable.checkexists", true)
                .map_err(|e| e.to_string())?,
        }))
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
        let Target::Google { key_file } = &self.config.target else {
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

    /// A connected link to the data (or admin) API.
    async fn link(&self, admin: bool, table_name: Option<&str>) -> Result<Link, String> {
        let endpoint = match &self.config.target {
            Target::Emulator(host) => grpc::Endpoint::plaintext(host),
            Target::Google { .. } => {
                grpc::Endpoint::tls(if admin { ADMIN_HOST } else { DATA_HOST })?
            }
        };
        let auth = Auth::new(self.auth().await?, table_name);
        let timeout = if admin {
            ADMIN_TIMEOUT.max(self.config.timeout)
        } else {
            self.config.timeout
        };
        let mut link = Link {
            endpoint,
            conn: None,
            auth,
            timeout: Some(timeout),
            backoff: Backoff::default(),
        };
        link.connect().await.map_err(|f| f.to_string())?;
        Ok(link)
    }

    /// Create the table with the family and splits, or add the family to
    /// an existing table that lacks it.
    async fn ensure_table(&self, admin: &mut Link, schema: &Schema) -> Result<(), BackendError> {
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

/// The project, instance and table of a URL, each optional from the right.
type UrlParts<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>);

impl Open for BigtableBackend {
    const FORMS: &'static [&'static str] = &[
        "bigtable://PROJECT/INSTANCE/TABLE (or `bigtable`/`googlebigtable` with \
         -p google.bigtable.project.id=... -p google.bigtable.instance.id=...)",
    ];

    /// `bigtable://PROJECT/INSTANCE/TABLE`, or YCSB's binding names
    /// `bigtable` and `googlebigtable`: the parts left out come from YCSB's
    /// properties (see the module documentation).
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<BigtableBackend, String> {
        BigtableBackend::from_parts(url_parts(url)?, options.props)
    }
}

/// `//project/instance/table` after `bigtable:` (each part optional from
/// the right).
fn url_parts(url: &str) -> Result<UrlParts<'_>, String> {
    let path = match url::split(url).1.unwrap_or("") {
        "" => "",
        rest => rest
            .strip_prefix("//")
            .ok_or("write bigtable://PROJECT/INSTANCE/TABLE (or just `bigtable`)")?,
    };
    if path.contains(['@', ':']) {
        // Bigtable takes no password in its URL: a `user:pass@` here is a
        // mistake, and must not end up in a table name or in output.
        return Err(
            "a Bigtable URL carries no credentials or port: write bigtable://PROJECT/INSTANCE/TABLE \
             (credentials come from Application Default Credentials; the emulator from \
             BIGTABLE_EMULATOR_HOST=HOST:PORT)"
                .to_string(),
        );
    }
    let path = path.trim_end_matches('/');
    let mut parts = path.split('/').map(|p| (!p.is_empty()).then_some(p));
    let project = parts.next().flatten();
    let instance = parts.next().flatten();
    let table = parts.next().flatten();
    if parts.next().is_some() || (instance.is_some() && project.is_none()) {
        return Err(
            "expected bigtable://PROJECT/INSTANCE/TABLE with no empty part and nothing after the table"
                .to_string(),
        );
    }
    if path.contains("//") || (table.is_some() && instance.is_none()) {
        return Err("expected bigtable://PROJECT/INSTANCE/TABLE with no empty part".to_string());
    }
    Ok((project, instance, table))
}

/// The initial split keys for `n` splits (see the module documentation).
pub fn split_points(n: u64) -> Vec<String> {
    let n = n.min(8999);
    let mut keys: Vec<String> = (1..=n)
        .map(|i| format!("user{}", 1000 + i * 8999 / n))
        .collect();
    keys.dedup();
    keys
}

/// `s` as an RE2 pattern matching it literally.
fn regex_escape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 4);
    for &b in s {
        if !b.is_ascii_alphanumeric() && b != b'_' && b < 0x80 {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

fn filter(f: Filter) -> RowFilter {
    RowFilter { filter: Some(f) }
}

fn chain(filters: Vec<RowFilter>) -> RowFilter {
    filter(Filter::Chain(Chain { filters }))
}

fn family_filter(family: &str) -> RowFilter {
    filter(Filter::FamilyNameRegexFilter(
        String::from_utf8_lossy(&regex_escape(family.as_bytes())).into_owned(),
    ))
}

/// The newest cell of every column of the family.
fn all_fields_filter(family: &str) -> RowFilter {
    chain(vec![
        family_filter(family),
        filter(Filter::CellsPerColumnLimitFilter(1)),
    ])
}

/// One cell per existing row, without its value, labelled
/// [`EXISTS_LABEL`] when it is mixed with requested columns.
fn exists_filter(labelled: bool) -> RowFilter {
    let mut filters = vec![
        filter(Filter::CellsPerRowLimitFilter(1)),
        filter(Filter::StripValueTransformer(true)),
    ];
    if labelled {
        filters.push(filter(Filter::ApplyLabelTransformer(
            EXISTS_LABEL.to_string(),
        )));
    }
    chain(filters)
}

/// The newest cell of the requested columns, plus the existence marker: a
/// row that exists without any of them still answers (with no fields).
fn some_fields_filter(family: &str, names: &[&str]) -> RowFilter {
    if names.is_empty() {
        return exists_filter(true);
    }
    let mut pattern = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            pattern.push(b'|');
        }
        pattern.extend_from_slice(&regex_escape(name.as_bytes()));
    }
    let columns = chain(vec![
        family_filter(family),
        filter(Filter::ColumnQualifierRegexFilter(pattern)),
        filter(Filter::CellsPerColumnLimitFilter(1)),
    ]);
    filter(Filter::Interleave(Interleave {
        filters: vec![columns, exists_filter(true)],
    }))
}

/// `ReadRowsRequest.filter` (field 3), encoded.
fn filter_field(f: &RowFilter) -> Vec<u8> {
    let mut v = Vec::new();
    prost::encoding::message::encode(3, f, &mut v);
    v
}

/// Bearer tokens and routing headers for real Bigtable; nothing for the
/// emulator.
struct Auth {
    provider: Option<Arc<dyn TokenProvider>>,
    /// The token the headers were made for.
    token: Option<Arc<gcp_auth::Token>>,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// `x-goog-request-params: table_name=...`, which routes requests.
    routing: Option<HeaderValue>,
}

impl Auth {
    fn new(provider: Option<Arc<dyn TokenProvider>>, table_name: Option<&str>) -> Auth {
        let routing = provider.as_ref().and(table_name).and_then(|t| {
            HeaderValue::try_from(format!("table_name={}", t.replace('/', "%2F"))).ok()
        });
        Auth {
            provider,
            token: None,
            headers: Vec::new(),
            routing,
        }
    }

    /// The headers a request needs now (refreshing the token when it is
    /// about to expire: gcp_auth caches it meanwhile).
    async fn headers(&mut self) -> Result<&[(HeaderName, HeaderValue)], String> {
        let Some(provider) = &self.provider else {
            return Ok(&[]);
        };
        let token = provider
            .token(SCOPES)
            .await
            .map_err(|e| format!("getting an OAuth token: {e}"))?;
        if !self.token.as_ref().is_some_and(|t| Arc::ptr_eq(t, &token)) {
            let mut value = HeaderValue::try_from(format!("Bearer {}", token.as_str()))
                .map_err(|_| "the OAuth token is not a valid header value".to_string())?;
            value.set_sensitive(true);
            self.headers.clear();
            self.headers.push((AUTHORIZATION, value));
            if let Some(routing) = &self.routing {
                self.headers.push((
                    HeaderName::from_static("x-goog-request-params"),
                    routing.clone(),
                ));
            }
            self.token = Some(token);
        }
        Ok(&self.headers)
    }
}

/// Why an operation did not get an answer (what `last_error` tells).
#[derive(Debug)]
pub enum Failure {
    Call(CallError),
    Timeout(Duration),
    /// Reconnecting failed recently; waiting out the backoff.
    Down,
    Auth(String),
}

impl Failure {
    fn code(&self) -> Option<i32> {
        match self {
            Failure::Call(e) => Some(e.code()),
            _ => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Call(e) => e.fmt(f),
            Failure::Timeout(d) => write!(f, "no answer within {d:?}"),
            Failure::Down => write!(f, "not connected (reconnecting, with backoff)"),
            Failure::Auth(m) => f.write_str(m),
        }
    }
}

/// Fails requests fast while the server is unreachable, with a delay that
/// doubles per failure up to [`BACKOFF_MAX`] and resets on success.
#[derive(Default)]
struct Backoff {
    until: Option<Instant>,
    delay: Duration,
}

impl Backoff {
    fn blocked(&self) -> bool {
        self.until.is_some_and(|u| Instant::now() < u)
    }

    fn failed(&mut self) {
        self.delay = (self.delay * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        self.until = Some(Instant::now() + self.delay);
    }

    fn succeeded(&mut self) {
        if self.until.is_some() {
            *self = Backoff::default();
        }
    }
}

/// One HTTP/2 connection that comes back after failures: calls with a
/// timeout, reconnects with backoff, adds the auth headers.
struct Link {
    endpoint: grpc::Endpoint,
    conn: Option<grpc::Conn>,
    auth: Auth,
    /// `None` on a connection's link, whose operations the guard bounds.
    timeout: Option<Duration>,
    backoff: Backoff,
}

/// `call`, failing at `limit` where there is one.
async fn within<T>(
    limit: Option<Duration>,
    call: impl Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, call)
            .await
            .unwrap_or(Err(Failure::Timeout(limit))),
        None => call.await,
    }
}

impl Link {
    async fn connect(&mut self) -> Result<(), Failure> {
        if self.backoff.blocked() {
            return Err(Failure::Down);
        }
        let endpoint = &self.endpoint;
        let connected = within(self.timeout, async {
            endpoint.connect().await.map_err(Failure::Call)
        })
        .await;
        match connected {
            Ok(conn) => {
                self.conn = Some(conn);
                Ok(())
            }
            Err(f) => {
                self.backoff.failed();
                Err(f)
            }
        }
    }

    /// One call: `write` puts the request message in the buffer, and
    /// `on_message` gets each response message.
    async fn call(
        &mut self,
        uri: &Uri,
        write: impl FnOnce(&mut BytesMut),
        on_message: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), Failure> {
        if self.conn.is_none() {
            self.connect().await?;
        }
        let headers = self.auth.headers().await.map_err(Failure::Auth)?;
        let conn = self.conn.as_mut().expect("connected above");
        write(conn.message());
        let called = within(self.timeout, async {
            conn.call(uri, headers, on_message)
                .await
                .map_err(Failure::Call)
        })
        .await;
        match &called {
            Ok(()) => self.backoff.succeeded(),
            Err(Failure::Call(CallError::Transport(_))) => {
                // The connection is gone: the next call reconnects.
                self.conn = None;
                self.backoff.failed();
            }
            // A timeout leaves the connection: a stalled server may come
            // back.
            Err(_) => {}
        }
        called
    }

    /// A call with prost messages, for the admin API.
    async fn unary<Req: Message, Resp: Message + Default>(
        &mut self,
        uri: &Uri,
        request: &Req,
    ) -> Result<Resp, Failure> {
        let mut response = None;
        self.call(
            uri,
            |buf| request.encode_raw(buf),
            |msg| {
                response = Some(Resp::decode(msg).map_err(|e| e.to_string())?);
                Ok(())
            },
        )
        .await?;
        Ok(response.unwrap_or_default())
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
        if let Target::Emulator(host) = &c.target {
            s.push_str(&format!(" (emulator at {host})"));
        }
        s
    }

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        let mut admin = self
            .link(true, None)
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
            .link(false, Some(&table_name))
            .await
            .map_err(|e| self.connect_error(e))?;
        let uri = link
            .endpoint
            .uri(&format!("{DATA_SERVICE}ReadRows"))
            .map_err(|e| self.connect_error(e))?;
        let mut table = Vec::new();
        wire::put_bytes(1, table_name.as_bytes(), &mut table);
        let filter = filter_field(&exists_filter(false));
        let mut any = false;
        let result = link
            .call(
                &uri,
                |buf| wire::read_rows(&table, Rows::From(b""), &filter, 1, buf),
                |msg| wire::for_each_chunk(msg, |_| any = true),
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
            .link(false, Some(&table_name))
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
        wire::put_bytes(1, table_name.as_bytes(), &mut table);
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

/// Builds rows from `ReadRows` cell chunks (values may be split over
/// several chunks; a row is final at `commit_row` and dropped at
/// `reset_row`).
#[derive(Default)]
struct Assembler {
    key: Vec<u8>,
    /// Per field index, the newest value seen in the current row.
    slots: Vec<Option<Vec<u8>>>,
    /// Field of the cell being read; `None` to skip it.
    field: Option<usize>,
    /// Whether the current column belongs to our family.
    family_ok: bool,
    /// A split value being gathered.
    partial: Vec<u8>,
    splitting: bool,
    /// Whether the cell being read is kept.
    keep: bool,
}

impl Assembler {
    fn reset_row(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.field = None;
        self.splitting = false;
        self.partial.clear();
    }

    /// Feed one chunk; `true` when it completes (commits) a row.
    fn feed(&mut self, chunk: Chunk<'_>, family: &str, schema: &Schema) -> bool {
        if !chunk.row_key.is_empty() && chunk.row_key != self.key.as_slice() {
            self.reset_row();
            self.key.clear();
            self.key.extend_from_slice(chunk.row_key);
        }
        if let Some(f) = chunk.family {
            self.family_ok = f == family.as_bytes();
        }
        if let Some(q) = chunk.qualifier {
            self.field = schema.field_names.iter().position(|n| n.as_bytes() == q);
        }
        if !self.splitting {
            // A cell's labels come with its first chunk.
            self.keep =
                self.family_ok && self.field.is_some() && !chunk.labels.contains(EXISTS_LABEL);
        }
        if chunk.value_size > 0 {
            if self.keep {
                self.partial.extend_from_slice(chunk.value);
            }
            self.splitting = true;
        } else {
            if self.keep {
                let value = if self.splitting {
                    self.partial.extend_from_slice(chunk.value);
                    std::mem::take(&mut self.partial)
                } else {
                    chunk.value.to_vec()
                };
                if let Some(f) = self.field {
                    // Cells come newest first; keep the newest.
                    if self.slots[f].is_none() {
                        self.slots[f] = Some(value);
                    }
                }
            }
            self.splitting = false;
            self.partial.clear();
        }
        if chunk.reset_row {
            self.reset_row();
            return false;
        }
        chunk.commit_row
    }

    /// Move the committed row's requested fields into `out` and clear it.
    fn take_fields(&mut self, fields: Fields<'_>, out: &mut Vec<FieldValue>) {
        match fields {
            Fields::All => {
                for (field, slot) in self.slots.iter_mut().enumerate() {
                    if let Some(value) = slot.take() {
                        out.push(FieldValue { field, value });
                    }
                }
            }
            Fields::Some(list) => {
                for &field in list {
                    if let Some(value) = self.slots[field].take() {
                        out.push(FieldValue { field, value });
                    }
                }
            }
        }
        self.reset_row();
    }
}

struct Uris {
    read_rows: Uri,
    mutate_row: Uri,
    check_and_mutate_row: Uri,
}

/// `ReadRowsRequest.filter` fields, encoded once.
struct Filters {
    all: Vec<u8>,
    exists: Vec<u8>,
    some: HashMap<Box<[usize]>, Vec<u8>>,
    /// A subset's filter beyond [`FILTER_CACHE_LIMIT`].
    overflow: Vec<u8>,
}

impl Filters {
    fn get(&mut self, fields: Fields<'_>, family: &str, schema: &Schema) -> &[u8] {
        let Fields::Some(list) = fields else {
            return &self.all;
        };
        if !self.some.contains_key(list) {
            let names: Vec<&str> = list
                .iter()
                .map(|&i| schema.field_names[i].as_str())
                .collect();
            let f = filter_field(&some_fields_filter(family, &names));
            if self.some.len() >= FILTER_CACHE_LIMIT {
                self.overflow = f;
                return &self.overflow;
            }
            self.some.insert(list.into(), f);
        }
        &self.some[list]
    }
}

/// A connection of [`BigtableBackend`]: one HTTP/2 connection.
pub struct BigtableConnection {
    link: Link,
    uris: Uris,
    /// `table_name` (field 1 of every data request), encoded.
    table: Vec<u8>,
    filters: Filters,
    family: String,
    schema: Arc<Schema>,
    check_exists: bool,
    guard: Guard,
    timer: Timer,
    assembler: Assembler,
    last_error: Option<String>,
}

impl BigtableConnection {
    /// The most recent error on this connection, for diagnosing `ERROR`
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// `ReadRows`, calling `row` with each committed row.
    async fn read_rows(
        &mut self,
        rows: Rows<'_>,
        limit: i64,
        fields: Option<Fields<'_>>,
        mut row: impl FnMut(&mut Assembler),
    ) -> Result<(), Failure> {
        let BigtableConnection {
            link,
            uris,
            table,
            filters,
            family,
            schema,
            assembler,
            ..
        } = self;
        let filter = match fields {
            Some(fields) => filters.get(fields, family, schema),
            None => &filters.exists,
        };
        let result = link
            .call(
                &uris.read_rows,
                |buf| wire::read_rows(table, rows, filter, limit, buf),
                |msg| {
                    wire::for_each_chunk(msg, |chunk| {
                        if assembler.feed(chunk, family, schema) {
                            row(assembler);
                        }
                    })
                },
            )
            .await;
        assembler.reset_row();
        result
    }

    /// `MutateRow`, or `CheckAndMutateRow` (applied only if the row exists)
    /// with `check`: an optional `DeleteFromRow`, then a `SetCell` per value.
    async fn mutate(
        &mut self,
        key: &str,
        check: bool,
        delete_row: bool,
        values: &[FieldValue],
    ) -> Result<Status, Failure> {
        let BigtableConnection {
            link,
            uris,
            table,
            family,
            schema,
            ..
        } = self;
        let uri = if check {
            &uris.check_and_mutate_row
        } else {
            &uris.mutate_row
        };
        let mutations = delete_row
            .then_some(wire::Mutation::DeleteRow)
            .into_iter()
            .chain(values.iter().map(|v| wire::Mutation::Set {
                family: family.as_bytes(),
                qualifier: schema.field_names[v.field].as_bytes(),
                value: &v.value,
            }));
        let mut applied = !check;
        link.call(
            uri,
            |buf| wire::mutate_row(table, key.as_bytes(), check, mutations, buf),
            |msg| {
                if check {
                    applied = wire::predicate_matched(msg)?;
                }
                Ok(())
            },
        )
        .await?;
        Ok(Status::found(applied))
    }
}

impl Bodies for BigtableConnection {
    async fn insert_now(&mut self, key: &str, values: &[FieldValue]) -> Result<Status, Failure> {
        self.mutate(key, false, true, values).await
    }

    async fn delete_now(&mut self, key: &str) -> Result<Status, Failure> {
        self.mutate(key, self.check_exists, true, &[]).await
    }

    async fn read_now(&mut self, read: Read<'_>) -> Result<Status, Failure> {
        let Read { key, fields, out } = read;
        let mut found = false;
        self.read_rows(Rows::Key(key.as_bytes()), 1, Some(fields), |a| {
            found = true;
            a.take_fields(fields, out);
        })
        .await?;
        Ok(Status::found(found))
    }

    async fn scan_now(&mut self, scan: Scan<'_>) -> Result<Status, Failure> {
        // rows_limit 0 would mean no limit.
        if scan.count == 0 {
            return Ok(Status::Ok);
        }
        let field_count = self.schema.field_count();
        let limit = i64::try_from(scan.count).unwrap_or(i64::MAX);
        self.read_rows(
            Rows::From(scan.start_key.as_bytes()),
            limit,
            Some(scan.fields),
            |a| {
                let mut row = Row {
                    key: String::from_utf8_lossy(&a.key).into_owned(),
                    fields: Vec::with_capacity(field_count),
                };
                a.take_fields(scan.fields, &mut row.fields);
                scan.out.push(row);
            },
        )
        .await?;
        Ok(Status::Ok)
    }

    async fn update_now(&mut self, key: &str, values: &[FieldValue]) -> Result<Status, Failure> {
        if !values.is_empty() {
            return self.mutate(key, self.check_exists, false, values).await;
        }
        if !self.check_exists {
            return Ok(Status::Ok);
        }
        // Bigtable refuses a mutation with nothing in it: ask whether the
        // row exists instead.
        let mut found = false;
        self.read_rows(Rows::Key(key.as_bytes()), 1, None, |_| found = true)
            .await?;
        Ok(Status::found(found))
    }
}

impl Settle for BigtableConnection {
    type Error = Failure;

    fn failure_text(&mut self) -> &mut Option<String> {
        &mut self.last_error
    }

    fn guard(&self) -> Guard {
        self.guard
    }

    fn timer(&mut self) -> Option<&mut Timer> {
        Some(&mut self.timer)
    }

    fn settle(&mut self, failure: guard::Failure<Failure>) -> Status {
        let failure = match failure {
            guard::Failure::Failed(f) => f,
            guard::Failure::TimedOut(limit) => {
                // Out of time while connecting: the next attempts wait, as
                // after any failed attempt. A stalled call leaves the
                // connection, which a stalled server may bring back.
                if self.link.conn.is_none() {
                    self.link.backoff.failed();
                }
                Failure::Timeout(limit)
            }
        };
        self.last_error = Some(failure.to_string());
        Status::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_follow_the_hbase_recipe() {
        let s = split_points(200);
        assert_eq!(s.len(), 200);
        assert_eq!(s[0], "user1044");
        assert_eq!(s[1], "user1089");
        assert_eq!(s[199], "user9999");
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(split_points(0).is_empty());
        assert_eq!(split_points(1), ["user9999"]);
        assert_eq!(split_points(100_000).len(), 8999);
    }

    #[test]
    fn url_forms() {
        let parts = |url| url_parts(url).ok();
        assert_eq!(
            parts("bigtable://p/i/t"),
            Some((Some("p"), Some("i"), Some("t")))
        );
        assert_eq!(parts("bigtable://p/i/"), Some((Some("p"), Some("i"), None)));
        assert_eq!(parts("bigtable"), Some((None, None, None)));
        assert_eq!(parts("googlebigtable"), Some((None, None, None)));
        assert_eq!(parts("bigtable://p"), Some((Some("p"), None, None)));
        assert!(parts("bigtable:p/i/t").is_none());
        assert!(parts("bigtable://p//t").is_none());
        assert!(parts("bigtable://p/i/t/x").is_none());
        let e = BigtableBackend::open(
            "bigtable://u:s3cr3t@h/i/t",
            &OpenOptions::new(&Properties::new()),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no credentials") && !e.contains("s3cr3t"), "{e}");
    }

    #[test]
    fn regexes_are_literal() {
        assert_eq!(regex_escape(b"field0"), b"field0");
        assert_eq!(regex_escape(b"a.b|c"), b"a\\.b\\|c");
    }

    fn chunk<'a>(
        key: &'a [u8],
        qualifier: Option<&'a str>,
        value: &'a [u8],
        size: i32,
    ) -> Chunk<'a> {
        Chunk {
            row_key: key,
            family: qualifier.map(|_| &b"cf"[..]),
            qualifier: qualifier.map(str::as_bytes),
            value,
            value_size: size,
            ..Default::default()
        }
    }

    #[test]
    fn assembler_joins_split_values_and_drops_reset_rows() {
        let schema = Schema::ycsb("t", "field", 2);
        let mut a = Assembler {
            slots: vec![None; 2],
            ..Default::default()
        };
        assert!(!a.feed(chunk(b"k1", Some("field1"), b"ab", 4), "cf", &schema));
        let mut last = chunk(b"", None, b"cd", 0);
        last.reset_row = true;
        assert!(!a.feed(last, "cf", &schema));
        assert!(!a.feed(chunk(b"k1", Some("field1"), b"ab", 4), "cf", &schema));
        assert!(!a.feed(chunk(b"", None, b"cd", 0), "cf", &schema));
        assert!(!a.feed(chunk(b"", Some("other"), b"x", 0), "cf", &schema));
        // The existence marker: labelled, on a column that is a field.
        let response = data::ReadRowsResponse {
            chunks: vec![data::read_rows_response::CellChunk {
                family_name: Some("cf".into()),
                qualifier: Some(b"field0".to_vec()),
                labels: vec![EXISTS_LABEL.into()],
                row_status: Some(data::read_rows_response::cell_chunk::RowStatus::CommitRow(
                    true,
                )),
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec();
        let mut committed = false;
        wire::for_each_chunk(&response, |c| committed = a.feed(c, "cf", &schema)).unwrap();
        assert!(committed);
        assert_eq!(a.key, b"k1");
        let mut out = Vec::new();
        a.take_fields(Fields::All, &mut out);
        assert_eq!(
            out,
            vec![FieldValue {
                field: 1,
                value: b"abcd".to_vec()
            }]
        );
    }
}
