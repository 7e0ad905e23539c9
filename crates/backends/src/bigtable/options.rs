//! What a Bigtable backend is configured with: the endpoint (emulator or
//! Google's), project, instance, table and family, read from the URL and
//! YCSB's properties; and the table's initial split points.

use std::time::Duration;

use sojourn_core::properties::Properties;

use crate::{pool, url};

/// The environment variable every Google client library reads.
pub const EMULATOR_ENV: &str = "BIGTABLE_EMULATOR_HOST";

pub(super) const DEFAULT_PRESPLIT: u64 = 200;
pub(super) const DEFAULT_FAMILY: &str = "cf";

/// Where requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
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
    pub target: Server,
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
            target: Server::Emulator(host.to_string()),
            presplit: DEFAULT_PRESPLIT,
            timeout: pool::DEFAULT_TIMEOUT,
            check_exists: true,
        }
    }
    /// The settings of a URL's `project`, `instance` and `table`, completed
    /// by YCSB's properties (`google.bigtable.project.id`,
    /// `google.bigtable.instance.id`, `columnfamily`,
    /// `google.bigtable.auth.json.keyfile`) and sojourn's
    /// (`bigtable.presplit`, `bigtable.checkexists`, `timeout.ms`). Parts of
    /// the URL win over properties. `BIGTABLE_EMULATOR_HOST` selects the
    /// emulator.
    pub(super) fn from_parts<'a>(
        (project, instance, table): UrlParts<'a>,
        props: &'a Properties,
    ) -> Result<BigtableConfig, String> {
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
            Ok(host) if !host.trim().is_empty() => Server::Emulator(host.trim().to_string()),
            _ => Server::Google {
                key_file: non_empty(props.get("google.bigtable.auth.json.keyfile"))
                    .map(str::to_string),
            },
        };
        Ok(BigtableConfig {
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
        })
    }
}

pub(super) fn non_empty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

/// The project, instance and table of a URL, each optional from the right.
pub(super) type UrlParts<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>);

/// `//project/instance/table` after `bigtable:` (each part optional from
/// the right).
pub(super) fn url_parts(url: &str) -> Result<UrlParts<'_>, String> {
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
