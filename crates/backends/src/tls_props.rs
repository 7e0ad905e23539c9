//! The client TLS files a backend reads from its `PREFIX.tls.*`
//! properties (`ca`, `cert`, `key`, `insecure`), read and checked alike
//! for every backend that offers them.

use std::path::PathBuf;

use sojourn_core::properties::Properties;
use sojourn_tls::ClientFiles;

/// The files `PREFIX.tls.*` names, unchecked.
pub(crate) fn client_files(props: &Properties, prefix: &str) -> Result<ClientFiles, String> {
    let path = |name: &str| {
        props
            .get(&format!("{prefix}.tls.{name}"))
            .map(|v| PathBuf::from(v.trim()))
    };
    Ok(ClientFiles {
        ca: path("ca"),
        cert: path("cert"),
        key: path("key"),
        insecure: props
            .get_bool(&format!("{prefix}.tls.insecure"), false)
            .map_err(|e| e.to_string())?,
    })
}

/// A client certificate needs its key, and a key its certificate.
pub(crate) fn check_pair(files: &ClientFiles, prefix: &str) -> Result<(), String> {
    if files.cert.is_some() != files.key.is_some() {
        return Err(format!(
            "{prefix}.tls.cert and {prefix}.tls.key go together (a client certificate and its key)"
        ));
    }
    Ok(())
}

/// A `PREFIX.tls.*` property, if any is set: refused while TLS is off,
/// rather than ignored.
pub(crate) fn stray_key<'a>(props: &'a Properties, prefix: &str) -> Option<&'a str> {
    let under = format!("{prefix}.tls.");
    props
        .iter()
        .find(|(k, _)| k.starts_with(&under))
        .map(|(k, _)| k)
}
