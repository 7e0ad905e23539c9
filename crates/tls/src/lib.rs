//! sojourn-tls: the rustls pieces of the clients that configure TLS
//! themselves (the PostgreSQL backend and results store's `sslmode`,
//! Redis' `rediss://`, CQL's `cassandra.useSSL`): the crypto provider
//! (ring, so no OpenSSL and no cmake), a client configuration from PEM
//! files ([`client_config`]), the one verifier of the two server checks
//! weaker than a full one that their users ask for by name, and libpq's
//! `sslmode` for
//! tokio-postgres ([`postgres::connector`], feature `postgres`), so that
//! the benchmark's connections and the store's read one setting one way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ConfigBuilder, DigitallySignedStruct};
use rustls::{SignatureScheme, WantsVerifier};

/// The provider compiled in.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Make [`provider`] the process's default, for the drivers that build
/// their TLS configuration with rustls' default provider (mysql_async,
/// Google's authentication client). rustls picks one only when exactly
/// one provider is compiled in; a driver that brings aws-lc-rs (the CQL
/// driver's rustls) leaves it none to pick. Idempotent.
pub fn install_default_provider() {
    // Err: one is installed already (this one, or a caller's own).
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client configuration on `provider` with rustls' safe protocol versions.
pub fn builder(
    provider: &Arc<CryptoProvider>,
) -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, String> {
    ClientConfig::builder_with_provider(Arc::clone(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))
}

/// How a client authenticates the server, and itself: the PEM files
/// and the check its options name (Redis' `redis.tls.*`, CQL's
/// `cassandra.tls.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientFiles {
    /// PEM file of the certificate authorities to trust; default: the
    /// system's bundle (`$SSL_CERT_FILE`, else the usual locations).
    pub ca: Option<PathBuf>,
    /// PEM certificate chain and private key for servers that check
    /// clients (Redis' `tls-auth-clients yes`, its default).
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// Encrypt without checking the server's certificate.
    pub insecure: bool,
}

/// A client configuration from `files`; `ca_option` names the option that
/// gives the authorities, for the error when the system has none.
pub fn client_config(files: &ClientFiles, ca_option: &str) -> Result<ClientConfig, String> {
    let provider = provider();
    let builder = builder(&provider)?;
    let builder = if files.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(accept_any_certificate(&provider))
    } else {
        let path = match &files.ca {
            Some(p) => p.clone(),
            None => system_bundle(ca_option)?,
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
    match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert)?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("TLS: no private key in {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("TLS client certificate: {e}"))
        }
        _ => Ok(builder.with_no_client_auth()),
    }
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

/// Where Debian, Fedora and others keep the system's trusted authorities.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

fn system_bundle(ca_option: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SSL_CERT_FILE") {
        return Ok(PathBuf::from(p));
    }
    SYSTEM_BUNDLES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| format!("TLS: no system CA bundle found; give one with -p {ca_option}=PATH"))
}

/// The check of a server's certificate chain against the authorities in
/// the PEM file `path` (host name included); `option` names the setting
/// that gave the file, for the errors.
pub fn chain_verifier(
    provider: &Arc<CryptoProvider>,
    path: &str,
    option: &str,
) -> Result<Arc<WebPkiServerVerifier>, String> {
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read {option} {path}: {e}"))?;
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| format!("bad certificate in {option} {path}: {e}"))?;
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|e| format!("{option} {path}: {e}"))
}

/// A client configuration that checks servers with `verifier` and shows
/// no certificate of its own.
pub fn with_verifier(
    provider: &Arc<CryptoProvider>,
    verifier: Arc<dyn ServerCertVerifier>,
) -> Result<ClientConfig, String> {
    Ok(builder(provider)?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// Encryption without authentication of the server (libpq's
/// `sslmode=require`, `redis.tls.insecure=true`): any certificate is
/// accepted, but the handshake's signatures are still checked, so the
/// session is encrypted with whoever answered.
pub fn accept_any_certificate(provider: &Arc<CryptoProvider>) -> Arc<dyn ServerCertVerifier> {
    Arc::new(Relaxed {
        provider: Arc::clone(provider),
        chain: None,
    })
}

/// The chain must lead to a trusted root, whatever host name the
/// certificate names (libpq's `sslmode=verify-ca`).
pub fn ignore_host_name(
    provider: &Arc<CryptoProvider>,
    chain: Arc<WebPkiServerVerifier>,
) -> Arc<dyn ServerCertVerifier> {
    Arc::new(Relaxed {
        provider: Arc::clone(provider),
        chain: Some(chain),
    })
}

/// A server check that skips the host name, and without `chain` the
/// certificate too; never the handshake's signatures.
#[derive(Debug)]
struct Relaxed {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

impl Relaxed {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.provider.signature_verification_algorithms
    }
}

#[cfg(feature = "postgres")]
pub mod postgres;
