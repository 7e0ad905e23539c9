//! TLS for Redis connections: the rustls client configuration built from
//! [`TlsOptions`] (trusted authorities, client certificate).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use super::TlsOptions;
use crate::wire::Tls;
use sojourn_tls as tls;

/// Where Debian, Fedora and others keep the system's trusted authorities.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// The connector and server name for connecting to `host` with `o`.
pub(crate) fn config(host: &str, o: &TlsOptions) -> Result<Tls, String> {
    let provider = tls::provider();
    let builder = tls::builder(&provider)?;
    let builder = if o.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(tls::accept_any_certificate(&provider))
    } else {
        let path = match &o.ca {
            Some(p) => p.clone(),
            None => system_bundle()?,
        };
        let mut roots = rustls::RootCertStore::empty();
        let (added, _unparsable) = roots.add_parsable_certificates(certificates(&path)?);
        if added == 0 {
            return Err(format!(
                "TLS: no usable CA certificate in {}",
                path.display()
            ));
        }
        builder.with_root_certificates(roots)
    };
    let config = match (&o.cert, &o.key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert)?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("TLS: no private key in {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("TLS client certificate: {e}"))?
        }
        _ => builder.with_no_client_auth(),
    };
    let server_name = ServerName::try_from(host.to_string())
        .map_err(|_| format!("TLS: {host} is not a valid server name"))?;
    Ok(Tls {
        connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
        server_name,
    })
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("TLS: cannot read certificates from {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("TLS: no certificate in {}", path.display()));
    }
    Ok(certs)
}

fn system_bundle() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SSL_CERT_FILE") {
        return Ok(PathBuf::from(p));
    }
    SYSTEM_BUNDLES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "TLS: no system CA bundle found; give one with -p redis.tls.ca=PATH".to_string()
        })
}
