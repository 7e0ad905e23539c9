//! Timestamps as text: RFC 3339 in UTC for stored results, and YCSB's local
//! `yyyy-MM-dd HH:mm:ss:SSS` for status lines. Written here rather than
//! pulling in a date crate: two formats, one civil-date conversion.

use std::time::{SystemTime, UNIX_EPOCH};

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn split(t: SystemTime, offset_s: i64) -> (i64, u32, u32, i64, i64, i64, u32) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64 + offset_s;
    let (y, mo, da) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    (
        y,
        mo,
        da,
        s / 3600,
        (s / 60) % 60,
        s % 60,
        d.subsec_millis(),
    )
}

/// `2026-11-21T11:15:56.123Z`
pub fn rfc3339(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, ms) = split(t, 0);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// YCSB's status-line timestamp in local time: `2020-12-29 17:39:19:271`.
pub fn ycsb_local(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as libc::time_t;
    // SAFETY: localtime_r fills the zeroed struct we own.
    let offset = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    };
    let (y, mo, d, h, mi, s, ms) = split(t, offset);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}:{ms:03}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_dates() {
        let t = UNIX_EPOCH + Duration::from_millis(1_609_263_559_271);
        assert_eq!(rfc3339(t), "2020-12-29T17:39:19.271Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // A leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(t), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            ycsb_local(UNIX_EPOCH + Duration::from_secs(86_400 * 365)).len(),
            23
        );
    }
}
