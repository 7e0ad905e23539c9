//! The URLs of the driver-free backends that `sojourn-core` defines:
//! `null:` (also YCSB's binding names `null` and `basic`) and `memory:` with
//! an optional query of test hooks (`memory:?stall_at=5000&stall_ms=200`,
//! `memory:?max_ops_per_sec=1000`).

use sojourn_core::backend::memory::MemoryBackend;
use sojourn_core::backend::null::NullBackend;

use crate::url::{self, invalid};
use crate::{Open, OpenError, OpenOptions};

impl Open for NullBackend {
    const FORMS: &'static [&'static str] = &["null: (also `null` or `basic`)"];

    fn configure(url: &str, _: &OpenOptions<'_>) -> Result<NullBackend, String> {
        match url::split(url).1 {
            None | Some("") => Ok(NullBackend),
            _ => Err("the null: backend takes no path or options; write `null:`".to_string()),
        }
    }

    fn open(url: &str, options: &OpenOptions<'_>) -> Result<NullBackend, OpenError> {
        match url::split(url) {
            // `basic` is only YCSB's binding name, never a scheme.
            (scheme, Some(_)) if scheme.eq_ignore_ascii_case("basic") => Err(url::unknown(url)),
            _ => NullBackend::configure(url, options).map_err(|message| invalid(url, message)),
        }
    }
}

impl Open for MemoryBackend {
    const FORMS: &'static [&'static str] =
        &["memory: (optionally memory:?stall_at=N&stall_ms=MS&max_ops_per_sec=K)"];

    fn configure(url: &str, _: &OpenOptions<'_>) -> Result<MemoryBackend, String> {
        let query = match url::split(url).1 {
            None | Some("") => "",
            Some(rest) => rest.strip_prefix('?').ok_or(
                "the memory: backend takes only options, as in memory:?stall_at=5000&stall_ms=200",
            )?,
        };
        MemoryBackend::from_query(query).map_err(|e| e.to_string())
    }
}
