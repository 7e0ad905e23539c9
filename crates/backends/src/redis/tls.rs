//! TLS for Redis connections: the rustls client configuration (ring
//! provider, no OpenSSL) built from [`TlsOptions`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use super::TlsOptions;
use crate::wire::Tls;

/// Where Debian, Fedora and others keep the system's trusted authorities.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// The connector and server name for connecting to `host` with `o`.
pub(crate) fn config(host: &str, o: &TlsOptions) -> Result<Tls, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = if o.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
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

/// `redis.tls.insecure=true`: any certificate is accepted, but the
/// handshake's signatures are still checked, so the session is encrypted
/// with whoever answered.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
