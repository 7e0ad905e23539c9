//! sojourn-tls: the rustls pieces of the clients that configure TLS
//! themselves (the PostgreSQL backend and results store's `sslmode`,
//! Redis' `rediss://`): the crypto provider (ring, so no OpenSSL and no
//! cmake), the one verifier of the two server checks weaker than a full
//! one that their users ask for by name, and libpq's `sslmode` for
//! tokio-postgres ([`postgres::connector`], feature `postgres`), so that
//! the benchmark's connections and the store's read one setting one way.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ConfigBuilder, DigitallySignedStruct};
use rustls::{SignatureScheme, WantsVerifier};

/// The provider compiled in.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client configuration on `provider` with rustls' safe protocol versions.
pub fn builder(
    provider: &Arc<CryptoProvider>,
) -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, String> {
    ClientConfig::builder_with_provider(Arc::clone(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))
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
