//! libpq's `sslmode` for tokio-postgres: `disable` (the default) and
//! `allow` connect in clear; `prefer` and `require` encrypt without
//! checking the server's certificate (`prefer` falls back to clear);
//! `verify-ca` checks the chain against `sslrootcert=PATH`, and
//! `verify-full` the host name too.

use std::sync::Arc;

use rustls::client::danger::ServerCertVerifier;
use tokio_postgres::config::SslMode;
use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The TLS connector for `mode` (`None`: no TLS), setting the mode on
/// `config` too. Errors name the setting and what is accepted.
pub fn connector(
    mode: Option<&str>,
    root_cert: Option<&str>,
    config: &mut Config,
) -> Result<Option<MakeRustlsConnect>, String> {
    let mode = mode.unwrap_or("disable");
    let provider = crate::provider();
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        "disable" | "allow" => {
            config.ssl_mode(SslMode::Disable);
            return Ok(None);
        }
        "prefer" | "require" => {
            config.ssl_mode(if mode == "prefer" {
                SslMode::Prefer
            } else {
                SslMode::Require
            });
            crate::accept_any_certificate(&provider)
        }
        "verify-ca" | "verify-full" => {
            config.ssl_mode(SslMode::Require);
            let Some(path) = root_cert else {
                return Err(format!(
                    "sslmode={mode} needs sslrootcert=PATH (a PEM file of the CA certificates)"
                ));
            };
            let chain = crate::chain_verifier(&provider, path, "sslrootcert")?;
            if mode == "verify-ca" {
                crate::ignore_host_name(&provider, chain)
            } else {
                chain
            }
        }
        other => {
            return Err(format!(
            "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
        ))
        }
    };
    let tls = crate::with_verifier(&provider, verifier)?;
    Ok(Some(MakeRustlsConnect::new(tls)))
}
