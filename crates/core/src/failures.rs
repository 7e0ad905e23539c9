//! Why operations failed, in the database's own words, and whether a
//! phase failed by its failed operations.
//!
//! A status (`ERROR`) says that an operation failed; the text a connection
//! settled the failure with says why: Redis' `WRONGTYPE …`, PostgreSQL's
//! message and SQLSTATE, MariaDB's error number, a timeout, a reset. Each
//! operation kind keeps its failures grouped by [`Reason::kind`] (the text
//! with its particulars masked, so that a duplicate key of every record is
//! one reason, not one per key), counted, with the first occurrence's full
//! text and time. Reasons merge as the histograms do (intervals into a
//! run, clients into one), and there are few of them: at most
//! [`MAX_REASONS`] per operation kind, later kinds counted together, so a
//! run whose every operation fails with a different message costs a count,
//! not memory.

use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::backend::Status;
use crate::op::OpKind;
use crate::properties::{Properties, PropertyError};

/// Distinct reasons kept per operation kind; any more are counted under
/// one reason of [`OTHER`].
pub const MAX_REASONS: usize = 8;

/// [`Reason::kind`] of the reasons past [`MAX_REASONS`].
pub const OTHER: &str = "(other reasons)";

/// A first text is kept up to this many bytes (an error may quote a whole
/// statement or value).
const TEXT_LIMIT: usize = 400;

/// One reason operations of one kind failed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reason {
    /// The status these failures were counted under.
    pub status: Status,
    /// What groups the failures: the text's first line with quoted names
    /// and numbers masked ([`kind_of`]).
    pub kind: String,
    /// The first failure's text as the database gave it (secrets removed,
    /// cut at a few hundred bytes).
    pub first: String,
    /// When the first failure happened.
    #[serde(serialize_with = "unix_seconds")]
    pub first_at: SystemTime,
    /// Failures with this reason.
    pub count: u64,
}

fn unix_seconds<S: serde::Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(unix(*t))
}

/// Seconds since the Unix epoch.
pub fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// The time `secs` seconds after the Unix epoch (as the store keeps it).
pub fn from_unix(secs: f64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs_f64(secs.max(0.0))
}

impl Reason {
    /// A reason of one failure, `text` as the connection gave it.
    pub fn new(status: Status, text: &str, at: SystemTime) -> Reason {
        Reason {
            status,
            kind: kind_of(text),
            first: first_text(text),
            first_at: at,
            count: 1,
        }
    }

    /// `self` and `other`, of the same status and kind, as one: counts
    /// added, the earlier first text kept.
    fn absorb(&mut self, other: &Reason) {
        self.count += other.count;
        if other.first_at < self.first_at {
            self.first_at = other.first_at;
            self.first.clone_from(&other.first);
        }
    }

    fn is_other(&self) -> bool {
        self.kind == OTHER
    }
}

/// The reasons of one operation kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Reasons(Vec<Reason>);

impl Reasons {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Most frequent first (the earliest first among equals).
    pub fn sorted(&self) -> Vec<&Reason> {
        let mut v: Vec<&Reason> = self.0.iter().collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.first_at.cmp(&b.first_at)));
        v
    }

    pub fn iter(&self) -> impl Iterator<Item = &Reason> {
        self.0.iter()
    }

    /// Failures these reasons count under `status`.
    pub fn count_of(&self, status: Status) -> u64 {
        self.0
            .iter()
            .filter(|r| r.status == status)
            .map(|r| r.count)
            .sum()
    }

    /// One failure with `status`, said as `text`, at `at`.
    pub fn note(&mut self, status: Status, text: &str, at: SystemTime) {
        // The same text as a reason's first is the common case (a run that
        // fails every operation the same way): no masking needed to find it.
        if let Some(r) = self
            .0
            .iter_mut()
            .find(|r| r.status == status && r.first == text)
        {
            r.count += 1;
            return;
        }
        self.add(Reason::new(status, text, at));
    }

    /// Add `reason` (possibly many failures) to its kind, or as a new one.
    pub fn add(&mut self, reason: Reason) {
        if let Some(r) = self
            .0
            .iter_mut()
            .find(|r| r.status == reason.status && r.kind == reason.kind)
        {
            r.absorb(&reason);
            return;
        }
        let distinct = self.0.iter().filter(|r| !r.is_other()).count();
        if distinct < MAX_REASONS || reason.is_other() {
            self.0.push(reason);
            return;
        }
        let other = Reason {
            kind: OTHER.to_string(),
            ..reason
        };
        match self
            .0
            .iter_mut()
            .find(|r| r.is_other() && r.status == other.status)
        {
            Some(r) => r.absorb(&other),
            None => self.0.push(other),
        }
    }

    /// Exact merge.
    pub fn merge(&mut self, other: &Reasons) {
        for r in &other.0 {
            self.add(r.clone());
        }
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

impl FromIterator<Reason> for Reasons {
    fn from_iter<I: IntoIterator<Item = Reason>>(iter: I) -> Reasons {
        let mut r = Reasons::default();
        for reason in iter {
            r.add(reason);
        }
        r
    }
}

/// One cause of an operation kind's failures, as the summary, the JSON
/// and the report show it: the database's words where it gave them, else
/// the status alone (a record not found, a field the table lacks).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cause {
    /// The YCSB status name the failures were counted under.
    pub status: &'static str,
    pub count: u64,
    /// The first failure's text, as the database gave it.
    pub text: Option<String>,
    /// Seconds from the run's first operation to the first such failure.
    pub first_at_s: Option<f64>,
}

impl Cause {
    /// The causes of `reasons`' failures out of `statuses` (counts by
    /// [`Status::index`]), most frequent first: each reason, then what
    /// each failing status counts beyond its reasons. `start` is the run's
    /// first operation.
    pub fn of(reasons: &Reasons, statuses: &[u64; Status::COUNT], start: SystemTime) -> Vec<Cause> {
        let mut causes: Vec<Cause> = reasons
            .sorted()
            .into_iter()
            .map(|r| Cause {
                status: r.status.ycsb_name(),
                count: r.count,
                text: Some(if r.is_other() {
                    format!("{OTHER}, the first: {}", r.first)
                } else {
                    r.first.clone()
                }),
                first_at_s: Some(
                    r.first_at
                        .duration_since(start)
                        .unwrap_or_default()
                        .as_secs_f64(),
                ),
            })
            .collect();
        for st in Status::ALL.into_iter().filter(|s| !s.is_ok()) {
            let rest = statuses[st.index()].saturating_sub(reasons.count_of(st));
            if rest > 0 {
                causes.push(Cause {
                    status: st.ycsb_name(),
                    count: rest,
                    text: None,
                    first_at_s: None,
                });
            }
        }
        causes.sort_by_key(|c| std::cmp::Reverse(c.count));
        causes
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} × ", self.count)?;
        match &self.text {
            Some(text) => write!(f, "{text}")?,
            None => write!(f, "{}", self.status)?,
        }
        if let Some(at) = self.first_at_s {
            write!(f, " (first at {at:.2} s)")?;
        }
        Ok(())
    }
}

/// What groups failures: the first line of `text`, with what varies from
/// one operation to the next masked: quoted names and values (`'user42'`)
/// become `'…'`, runs of digits `N`. `Duplicate entry 'user1' for key
/// 'PRIMARY'` and `… 'user2' …` are one kind; `WRONGTYPE Operation
/// against a key …` is its own text.
pub fn kind_of(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    let mut out = String::with_capacity(line.len().min(TEXT_LIMIT));
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if out.len() >= TEXT_LIMIT {
            out.push('…');
            break;
        }
        match c {
            '\'' | '"' | '`' => {
                out.push(c);
                out.push('…');
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
                out.push(c);
            }
            d if d.is_ascii_digit() => {
                out.push('N');
                while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as it is kept: secrets removed, cut at [`TEXT_LIMIT`] bytes on a
/// character boundary.
fn first_text(text: &str) -> String {
    let mut t = crate::redact::text(text.trim());
    if t.len() > TEXT_LIMIT {
        let mut end = TEXT_LIMIT;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t.truncate(end);
        t.push('…');
    }
    t
}

/// `-p max_error_rate`: a share from 0 to 1 (the default, 1: a phase
/// fails only when every operation of a kind failed), or `none` (YCSB's
/// way: failed operations never fail the phase).
pub fn max_error_rate(p: &Properties) -> Result<Option<f64>, PropertyError> {
    const ACCEPTED: &str =
        "must be a share from 0 to 1 (0.01: fail the phase when more than 1% of an operation \
         kind's operations failed), or none to never fail it";
    match p.get("max_error_rate").map(str::trim) {
        None => Ok(Some(1.0)),
        Some(v) if v.eq_ignore_ascii_case("none") => Ok(None),
        Some(v) => match v.parse::<f64>() {
            Ok(share) if (0.0..=1.0).contains(&share) => Ok(Some(share)),
            _ => Err(p.invalid("max_error_rate", ACCEPTED)),
        },
    }
}

/// A phase that failed by its failed operations: the kind that failed
/// most, and the share it was allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct TooManyFailed {
    pub kind: OpKind,
    pub failed: u64,
    pub total: u64,
    pub max: f64,
    /// The commonest cause, as [`Cause`] says it (without when).
    pub cause: Option<String>,
}

impl TooManyFailed {
    /// Of `kinds` (each kind's failed and total operations), the one whose
    /// failed share is above `max` (`None`: no limit), or is every one of
    /// its operations; the worst if several.
    pub fn judge(
        kinds: impl Iterator<Item = (OpKind, u64, u64)>,
        max: Option<f64>,
    ) -> Option<TooManyFailed> {
        let max = max?;
        kinds
            .filter(|&(_, failed, total)| {
                failed > 0 && (failed == total || failed as f64 / total as f64 > max)
            })
            .max_by(|a, b| {
                let share = |&(_, f, t): &(OpKind, u64, u64)| f as f64 / t as f64;
                share(a).total_cmp(&share(b))
            })
            .map(|(kind, failed, total)| TooManyFailed {
                kind,
                failed,
                total,
                max,
                cause: None,
            })
    }

    /// The failed share.
    pub fn share(&self) -> f64 {
        self.failed as f64 / self.total as f64
    }
}

impl std::error::Error for TooManyFailed {}

impl std::fmt::Display for TooManyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the phase failed: {} of {} {} operations did not succeed ({:.1}%), ",
            self.failed,
            self.total,
            self.kind.ycsb_name(),
            100.0 * self.share()
        )?;
        if self.failed == self.total {
            f.write_str("every one of them")?;
        } else {
            write!(f, "above max_error_rate={}", self.max)?;
        }
        if let Some(cause) = &self.cause {
            write!(f, "; most often: {cause}")?;
        }
        f.write_str(
            ". What was measured is printed and stored; -p max_error_rate=none ends with \
             status 0 whatever fails, as YCSB does",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(s)
    }

    #[test]
    fn particulars_are_masked_and_the_first_text_kept() {
        let mut r = Reasons::default();
        r.note(
            Status::Error,
            "ERROR 1062 (23000): Duplicate entry 'user1' for key 'PRIMARY'",
            at(5),
        );
        r.note(
            Status::Error,
            "ERROR 1062 (23000): Duplicate entry 'user22' for key 'PRIMARY'",
            at(6),
        );
        r.note(
            Status::Error,
            "WRONGTYPE Operation against a key holding the wrong kind of value",
            at(7),
        );
        let v = r.sorted();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].count, 2);
        assert_eq!(v[0].kind, "ERROR N (N): Duplicate entry '…' for key '…'");
        assert_eq!(
            v[0].first,
            "ERROR 1062 (23000): Duplicate entry 'user1' for key 'PRIMARY'"
        );
        assert_eq!(v[0].first_at, at(5));
        assert_eq!(v[1].count, 1);
        assert_eq!(r.count_of(Status::Error), 3);
    }

    #[test]
    fn a_merge_keeps_the_earliest_first_text_and_adds_counts() {
        let mut a = Reasons::default();
        a.note(Status::Error, "timed out after 100 ms", at(10));
        let mut b = Reasons::default();
        b.note(Status::Error, "timed out after 250 ms", at(3));
        b.note(Status::Error, "timed out after 250 ms", at(4));
        a.merge(&b);
        let v = a.sorted();
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].count, v[0].first_at), (3, at(3)));
        assert_eq!(v[0].first, "timed out after 250 ms");
    }

    #[test]
    fn reasons_past_the_limit_are_counted_together() {
        let mut r = Reasons::default();
        for i in 0..MAX_REASONS + 5 {
            let text = format!("error kind {}", "x".repeat(i + 1));
            r.note(Status::Error, &text, at(i as u64));
            r.note(Status::Error, &text, at(i as u64 + 100));
        }
        assert_eq!(r.iter().count(), MAX_REASONS + 1);
        let other = r.iter().find(|x| x.kind == OTHER).unwrap();
        assert_eq!(other.count, 10);
        assert_eq!(r.count_of(Status::Error), 2 * (MAX_REASONS as u64 + 5));
        // A merged copy stays within the bound and loses no count.
        let mut m = r.clone();
        m.merge(&r);
        assert_eq!(m.iter().count(), MAX_REASONS + 1);
        assert_eq!(m.count_of(Status::Error), 4 * (MAX_REASONS as u64 + 5));
    }

    #[test]
    fn kept_texts_hide_passwords_and_are_bounded() {
        let r = Reason::new(
            Status::Error,
            "cannot connect to postgres://bob:hunter2@db/x: refused",
            at(1),
        );
        assert!(!r.first.contains("hunter2"), "{}", r.first);
        let long = Reason::new(Status::Error, &"é".repeat(500), at(1));
        assert!(long.first.len() <= TEXT_LIMIT + '…'.len_utf8());
        assert!(long.kind.chars().count() <= TEXT_LIMIT + 1);
    }
}
