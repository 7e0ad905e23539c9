//! TLS for Redis connections: the rustls client configuration built from
//! [`TlsOptions`] (trusted authorities, client certificate) by
//! `sojourn-tls`, and the name the server's certificate must carry.

use std::sync::Arc;

use rustls::pki_types::ServerName;

use super::options::TlsOptions;
use crate::pipelined::Tls;

/// The connector and server name for connecting to `host` with `o`.
pub(crate) fn config(host: &str, o: &TlsOptions) -> Result<Tls, String> {
    let config = sojourn_tls::client_config(o, "redis.tls.ca")?;
    let server_name = ServerName::try_from(host.to_string())
        .map_err(|_| format!("TLS: {host} is not a valid server name"))?;
    Ok(Tls {
        connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
        server_name,
    })
}
