//! Credentials for real Bigtable: OAuth bearer tokens and the routing
//! header, refreshed as tokens expire; nothing for the emulator.

use std::sync::Arc;

use gcp_auth::TokenProvider;
use http::header::{HeaderName, HeaderValue, AUTHORIZATION};

pub(super) const SCOPES: &[&str] = &["https://www.googleapis.com/auth/cloud-platform"];

/// Bearer tokens and routing headers for real Bigtable; nothing for the
/// emulator.
pub(super) struct Auth {
    pub(super) provider: Option<Arc<dyn TokenProvider>>,
    /// The token the headers were made for.
    pub(super) token: Option<Arc<gcp_auth::Token>>,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
    /// `x-goog-request-params: table_name=...`, which routes requests.
    pub(super) routing: Option<HeaderValue>,
}

impl Auth {
    pub(super) fn new(provider: Option<Arc<dyn TokenProvider>>, table_name: Option<&str>) -> Auth {
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
    pub(super) async fn headers(&mut self) -> Result<&[(HeaderName, HeaderValue)], String> {
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
