//! Where a MySQL backend connects and how: its URL rules and the TLS mode
//! (`ssl-mode`, `ssl-ca`) for both of its clients.

use std::path::PathBuf;
use std::sync::Arc;

use mysql_async::SslOpts;

use super::conn;
use crate::sql::UrlRules;

/// MySQL's and MariaDB's URLs. In a JDBC URL, Connector/J's `useSSL=true`
/// means `ssl-mode=required`.
pub(super) const URLS: UrlRules = UrlRules {
    schemes: &["mysql", "mariadb"],
    database: "MySQL",
    example: "mysql://user:pass@host:port/db or jdbc:mysql://host:port/db",
    native: "mysql",
    ssl_mode: &["ssl-mode", "sslmode", "ssl_mode"],
    ssl_ca: &["ssl-ca", "sslca", "ssl_ca", "sslrootcert"],
    jdbc_ssl: ("usessl", "required"),
};

/// `ssl-mode` and `ssl-ca`, checked once for both clients: mysql_async's
/// (setup) and sojourn's own (the workers').
pub(super) enum SslMode {
    Disabled,
    /// Encrypted, certificate not checked.
    Required,
    /// The chain checked against the authorities of the PEM file.
    VerifyCa(String),
    /// The chain and the host name.
    VerifyIdentity(String),
}

impl SslMode {
    /// From `ssl-mode` (case and `-`/`_` do not matter) and `ssl-ca`.
    pub(super) fn parse(mode: Option<&str>, ca: Option<String>) -> Result<SslMode, String> {
        let mode = mode
            .unwrap_or("disabled")
            .to_ascii_lowercase()
            .replace('-', "_");
        let with_ca = |ca: Option<String>| {
            ca.ok_or_else(|| {
                format!("ssl-mode={mode} needs ssl-ca=PATH (a PEM file of the CA certificates)")
            })
        };
        Ok(match mode.as_str() {
            "disabled" | "disable" => SslMode::Disabled,
            "required" | "require" => SslMode::Required,
            "verify_ca" => SslMode::VerifyCa(with_ca(ca)?),
            "verify_identity" | "verify_full" => SslMode::VerifyIdentity(with_ca(ca)?),
            other => {
                return Err(format!(
                    "ssl-mode={other} is not one of disabled, required, verify_ca, verify_identity"
                ))
            }
        })
    }

    /// mysql_async's settings.
    pub(super) fn for_setup(&self) -> Option<SslOpts> {
        let with_ca = |ca: &str| {
            SslOpts::default()
                .with_root_certs(vec![PathBuf::from(ca).into()])
                .with_disable_built_in_roots(true)
        };
        let opts = match self {
            SslMode::Disabled => return None,
            SslMode::Required => SslOpts::default().with_danger_accept_invalid_certs(true),
            SslMode::VerifyCa(ca) => with_ca(ca).with_danger_skip_domain_validation(true),
            SslMode::VerifyIdentity(ca) => with_ca(ca),
        };
        // mysql_async builds its rustls configuration with the process-wide
        // crypto provider; make it ring (the one compiled in) unless another
        // part of the program chose one already.
        sojourn_tls::install_default_provider();
        Some(opts)
    }

    /// The workers' TLS for a server at `host`.
    pub(super) fn for_workers(&self, host: &str) -> Result<Option<conn::Tls>, String> {
        let provider = sojourn_tls::provider();
        let verifier = match self {
            SslMode::Disabled => return Ok(None),
            SslMode::Required => sojourn_tls::accept_any_certificate(&provider),
            SslMode::VerifyCa(ca) => sojourn_tls::ignore_host_name(
                &provider,
                sojourn_tls::chain_verifier(&provider, ca, "ssl-ca")?,
            ),
            SslMode::VerifyIdentity(ca) => sojourn_tls::chain_verifier(&provider, ca, "ssl-ca")?,
        };
        let config = sojourn_tls::with_verifier(&provider, verifier)?;
        let server_name = rustls::pki_types::ServerName::try_from(host.to_string())
            .map_err(|_| format!("TLS: {host} is not a valid server name"))?;
        Ok(Some(conn::Tls {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name,
        }))
    }
}
