//! The policy every backend applies around one operation, in one place:
//!
//! 1. refuse field indices the table does not have (`BAD_REQUEST`, before
//!    anything is sent);
//! 2. bound the call by the operation timeout, where the backend does not
//!    bound its own calls (a pipelined socket times each request itself);
//! 3. turn a failure into its status with the connection's own
//!    [`Settle::settle`], which records why (in [`Settle::failure_text`],
//!    which holds the words of the latest operation's failure only) and
//!    leaves the connection fit for the next operation (reconnecting after
//!    a timeout or a broken link, forgetting prepared statements after a
//!    server error);
//! 4. leave nothing of a failed read or scan in the caller's buffer.
//!
//! A backend's operation bodies return `Result<Status, E>` with their own
//! error type and know nothing of the above. A connection that implements
//! [`Operations`] (YCSB's five) and [`Settle`] is a [`Connection`]: each body
//! under the guard. Operations of a workload of its own (vote, LIOPS) go
//! through [`call`] and [`call_within`].

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::{sleep_until, Instant, Sleep};

use super::{Connection, FieldValue, Fields, Row, Status};

/// One connection's limits: its table's field count and its operation
/// timeout (`None` where the backend bounds its calls itself, or where a
/// call cannot be abandoned, as with an embedded database).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    fields: usize,
    timeout: Option<Duration>,
}

impl Guard {
    pub fn new(fields: usize, timeout: Option<Duration>) -> Guard {
        Guard { fields, timeout }
    }

    /// Fields of the connection's table.
    pub fn field_count(&self) -> usize {
        self.fields
    }

    /// The operation timeout this guard applies.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Whether every requested field exists.
    pub fn fields_ok(&self, fields: Fields<'_>) -> bool {
        match fields {
            Fields::All => true,
            Fields::Some(list) => list.iter().all(|&f| f < self.fields),
        }
    }

    /// Whether every written field exists.
    pub fn values_ok(&self, values: &[FieldValue]) -> bool {
        values.iter().all(|v| v.field < self.fields)
    }
}

/// Why an operation came back without a status.
#[derive(Debug)]
pub enum Failure<E> {
    /// It ran past this timeout, so the connection's state is unknown.
    TimedOut(Duration),
    /// The backend's own error.
    Failed(E),
}

/// A connection under the guard.
pub trait Settle: Send {
    /// What the connection's operation bodies fail with.
    type Error: Send;

    /// This connection's limits.
    fn guard(&self) -> Guard;

    /// The status of a failed operation. Records the reason in
    /// [`Settle::failure_text`] and repairs what the failure may have
    /// broken.
    fn settle(&mut self, failure: Failure<Self::Error>) -> Status;

    /// Where the connection keeps the words of its latest operation's
    /// failure: [`Settle::settle`] writes them, the guard empties it as
    /// each operation starts (so words are never those of an older
    /// failure), and [`Connection::take_failure`] takes them.
    fn failure_text(&mut self) -> &mut Option<String>;

    /// Where the connection keeps the timer of its operations' deadlines
    /// between operations, if it does; without one, each bounded
    /// operation registers a timer of its own.
    fn timer(&mut self) -> Option<&mut Timer> {
        None
    }
}

/// A connection's deadline timer, kept armed from one operation to the
/// next (see [`poll_deadline`]): a field of the connection, handed to the
/// guard by [`Settle::timer`].
#[derive(Default)]
pub struct Timer(Option<Pin<Box<Sleep>>>);

/// Whether the operation whose deadline is `deadline` has run out of time.
///
/// One `Sleep` per connection is kept armed at some earlier operation's
/// deadline and only moved when it fires: while operations take less than
/// the timeout, which is nearly always, it fires about once per timeout
/// period instead of being registered with the timer wheel per operation
/// (a registration and a removal per operation were a tenth of a MySQL
/// point select's user time). The timer must not be armed later than
/// `deadline`.
pub fn poll_deadline(
    timer: &mut Pin<Box<Sleep>>,
    deadline: Instant,
    cx: &mut Context<'_>,
) -> Poll<()> {
    loop {
        ready!(timer.as_mut().poll(cx));
        if Instant::now() >= deadline {
            return Poll::Ready(());
        }
        timer.as_mut().reset(deadline);
    }
}

/// `timer`, made ready to bound an operation due by `deadline`: created
/// if there is none, moved earlier if an earlier, longer operation left it
/// armed past `deadline`.
fn arm(timer: &mut Option<Pin<Box<Sleep>>>, deadline: Instant) -> &mut Pin<Box<Sleep>> {
    let timer = timer.get_or_insert_with(|| Box::pin(sleep_until(deadline)));
    if timer.deadline() > deadline {
        timer.as_mut().reset(deadline);
    }
    timer
}

/// A read as its body gets it: `fields` of record `key`, into `out`.
pub struct Read<'a> {
    pub key: &'a str,
    pub fields: Fields<'a>,
    pub out: &'a mut Vec<FieldValue>,
}

/// A scan as its body gets it: `fields` of up to `count` records from
/// `start_key` on, into `out`.
pub struct Scan<'a> {
    pub start_key: &'a str,
    pub count: usize,
    pub fields: Fields<'a>,
    pub out: &'a mut Vec<Row>,
}

/// YCSB's five operations of a connection as the database runs them
/// (`read_op`, ...), failing with the connection's own error and unaware of
/// the guard; the guard makes them its [`Connection`] (`read`, ...).
pub trait Operations: Settle + 'static {
    fn read_op(
        &mut self,
        read: Read<'_>,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn scan_op(
        &mut self,
        scan: Scan<'_>,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn update_op(
        &mut self,
        key: &str,
        values: &[FieldValue],
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn insert_op(
        &mut self,
        key: &str,
        values: &[FieldValue],
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn delete_op(&mut self, key: &str) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    /// [`Connection::publish_stats`]: nothing unless the server needs it.
    fn publish_stats_op(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

impl<C: Operations> Connection for C {
    async fn read(&mut self, key: &str, fields: Fields<'_>, out: &mut Vec<FieldValue>) -> Status {
        read(self, fields, out, async |c, out| {
            c.read_op(Read { key, fields, out }).await
        })
        .await
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut Vec<Row>,
    ) -> Status {
        scan(self, fields, out, async |c, out| {
            let scan = Scan {
                start_key,
                count,
                fields,
                out,
            };
            c.scan_op(scan).await
        })
        .await
    }

    async fn update(&mut self, key: &str, values: &[FieldValue]) -> Status {
        write(self, values, async |c| c.update_op(key, values).await).await
    }

    async fn insert(&mut self, key: &str, values: &[FieldValue]) -> Status {
        write(self, values, async |c| c.insert_op(key, values).await).await
    }

    async fn delete(&mut self, key: &str) -> Status {
        call(self, async |c| c.delete_op(key).await).await
    }

    fn take_failure(&mut self) -> Option<String> {
        self.failure_text().take()
    }

    async fn publish_stats(&mut self) {
        self.publish_stats_op().await
    }
}

/// Run `op` within the connection's timeout, or `timeout` when given (a
/// batch load gets longer than one operation), and settle its outcome.
async fn bounded<C: Settle>(
    conn: &mut C,
    timeout: Option<Duration>,
    op: impl AsyncFnOnce(&mut C) -> Result<Status, C::Error>,
) -> Result<Status, Status> {
    let words = conn.failure_text();
    if words.is_some() {
        *words = None;
    }
    let Some(limit) = timeout.or(conn.guard().timeout) else {
        return op(conn).await.map_err(|e| conn.settle(Failure::Failed(e)));
    };
    let deadline = Instant::now() + limit;
    let mut kept = conn.timer().and_then(|t| t.0.take());
    let outcome = {
        // Pinned where it stands: the operation's future is not copied
        // into a wrapper, as `tokio::time::timeout` would.
        let mut op = pin!(op(conn));
        poll_fn(|cx| {
            if let Poll::Ready(r) = op.as_mut().poll(cx) {
                return Poll::Ready(r.map_err(Failure::Failed));
            }
            let timer = arm(&mut kept, deadline);
            poll_deadline(timer, deadline, cx).map(|()| Err(Failure::TimedOut(limit)))
        })
        .await
    };
    if let Some(slot) = conn.timer() {
        slot.0 = kept;
    }
    outcome.map_err(|f| conn.settle(f))
}

/// An operation that reads into `out` (a read or a scan): refused when it
/// asks for fields the table lacks; on failure, `out` is as it was.
async fn reading<C: Settle, T>(
    conn: &mut C,
    fields: Fields<'_>,
    out: &mut Vec<T>,
    op: impl AsyncFnOnce(&mut C, &mut Vec<T>) -> Result<Status, C::Error>,
) -> Status {
    if !conn.guard().fields_ok(fields) {
        return Status::BadRequest;
    }
    let before = out.len();
    match bounded(conn, None, async |c| op(c, out).await).await {
        Ok(status) => status,
        Err(status) => {
            out.truncate(before);
            status
        }
    }
}

/// A read of one record's `fields` into `out`.
pub async fn read<C: Settle>(
    conn: &mut C,
    fields: Fields<'_>,
    out: &mut Vec<FieldValue>,
    op: impl AsyncFnOnce(&mut C, &mut Vec<FieldValue>) -> Result<Status, C::Error>,
) -> Status {
    reading(conn, fields, out, op).await
}

/// A scan of `fields` of several records into `out`.
pub async fn scan<C: Settle>(
    conn: &mut C,
    fields: Fields<'_>,
    out: &mut Vec<Row>,
    op: impl AsyncFnOnce(&mut C, &mut Vec<Row>) -> Result<Status, C::Error>,
) -> Status {
    reading(conn, fields, out, op).await
}

/// An insert or update of `values`: refused when it writes fields the
/// table lacks.
pub async fn write<C: Settle>(
    conn: &mut C,
    values: &[FieldValue],
    op: impl AsyncFnOnce(&mut C) -> Result<Status, C::Error>,
) -> Status {
    if !conn.guard().values_ok(values) {
        return Status::BadRequest;
    }
    call(conn, op).await
}

/// Any other operation (a delete, a workload's own).
pub async fn call<C: Settle>(
    conn: &mut C,
    op: impl AsyncFnOnce(&mut C) -> Result<Status, C::Error>,
) -> Status {
    bounded(conn, None, op).await.unwrap_or_else(|s| s)
}

/// An operation allowed `limit` rather than the connection's timeout.
pub async fn call_within<C: Settle>(
    conn: &mut C,
    limit: Duration,
    op: impl AsyncFnOnce(&mut C) -> Result<Status, C::Error>,
) -> Status {
    bounded(conn, Some(limit), op).await.unwrap_or_else(|s| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection whose operations fail or hang on request.
    #[derive(Default)]
    struct Probe {
        settled: Vec<String>,
        words: Option<String>,
        timer: Timer,
    }

    impl Settle for Probe {
        type Error = String;
        fn guard(&self) -> Guard {
            Guard::new(2, Some(Duration::from_millis(20)))
        }
        fn settle(&mut self, failure: Failure<String>) -> Status {
            let why = match failure {
                Failure::TimedOut(d) => format!("timed out after {} ms", d.as_millis()),
                Failure::Failed(e) => e,
            };
            self.words = Some(why.clone());
            self.settled.push(why);
            Status::Error
        }
        fn failure_text(&mut self) -> &mut Option<String> {
            &mut self.words
        }
        fn timer(&mut self) -> Option<&mut Timer> {
            Some(&mut self.timer)
        }
    }

    /// Operations that fail a read, answer a scan, and stall a delete.
    impl Operations for Probe {
        async fn read_op(&mut self, read: Read<'_>) -> Result<Status, String> {
            read.out.push(value(1));
            Err(format!("no {}", read.key))
        }

        async fn scan_op(&mut self, scan: Scan<'_>) -> Result<Status, String> {
            let key = scan.start_key.to_string();
            scan.out.push(Row {
                key,
                fields: Vec::new(),
            });
            Ok(Status::Ok)
        }

        async fn update_op(&mut self, _: &str, _: &[FieldValue]) -> Result<Status, String> {
            Ok(Status::NotFound)
        }

        async fn insert_op(&mut self, _: &str, _: &[FieldValue]) -> Result<Status, String> {
            Ok(Status::Ok)
        }

        async fn delete_op(&mut self, _: &str) -> Result<Status, String> {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(Status::Ok)
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn value(field: usize) -> FieldValue {
        FieldValue {
            field,
            value: vec![1],
        }
    }

    #[test]
    fn bad_fields_are_refused_before_the_call() {
        let rt = rt();
        let mut c = Probe::default();
        let mut out = Vec::new();
        let called = std::cell::Cell::new(false);
        let s = rt.block_on(read(
            &mut c,
            Fields::Some(&[0, 2]),
            &mut out,
            async |_, _| {
                called.set(true);
                Ok(Status::Ok)
            },
        ));
        assert_eq!(s, Status::BadRequest);
        let s = rt.block_on(write(&mut c, &[value(1), value(5)], async |_| {
            called.set(true);
            Ok(Status::Ok)
        }));
        assert_eq!(s, Status::BadRequest);
        assert!(!called.get() && c.settled.is_empty());
    }

    #[test]
    fn a_failed_read_leaves_the_buffer_as_it_was_and_is_settled() {
        let rt = rt();
        let mut c = Probe::default();
        let mut out = vec![value(0)];
        let s = rt.block_on(read(&mut c, Fields::All, &mut out, async |_, out| {
            out.push(value(1));
            Err("broken pipe".to_string())
        }));
        assert_eq!(s, Status::Error);
        assert_eq!(out, vec![value(0)]);
        assert_eq!(c.settled, vec!["broken pipe".to_string()]);
        let s = rt.block_on(read(&mut c, Fields::All, &mut out, async |_, out| {
            out.push(value(1));
            Ok(Status::Ok)
        }));
        assert_eq!((s, out.len()), (Status::Ok, 2));
    }

    #[test]
    fn a_call_past_its_timeout_is_settled_as_timed_out() {
        let rt = rt();
        let mut c = Probe::default();
        let s = rt.block_on(call(&mut c, async |_| {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(Status::Ok)
        }));
        assert_eq!(s, Status::Error);
        assert_eq!(c.settled, vec!["timed out after 20 ms".to_string()]);
        // A longer limit lets the same call finish.
        let s = rt.block_on(call_within(&mut c, Duration::from_secs(5), async |_| {
            tokio::time::sleep(Duration::from_millis(40)).await;
            Ok(Status::NotFound)
        }));
        assert_eq!(s, Status::NotFound);
    }

    #[test]
    fn the_kept_timer_bounds_each_operation_by_its_own_deadline() {
        let rt = rt();
        let mut c = Probe::default();
        // A long call leaves the connection's timer armed 5 s ahead...
        let s = rt.block_on(call_within(&mut c, Duration::from_secs(5), async |_| {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok(Status::Ok)
        }));
        assert_eq!(s, Status::Ok);
        let kept = c.timer.0.as_ref().map(|t| t.deadline());
        assert!(kept.is_some(), "the timer is kept between operations");
        // ...yet the next operation still times out after its own 20 ms,
        // not when the timer was left to fire.
        let s = rt.block_on(call(&mut c, async |_| {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Ok(Status::Ok)
        }));
        assert_eq!(s, Status::Error);
        assert_eq!(c.settled, ["timed out after 20 ms"]);
        // The timer that fired is moved once; quick operations after that
        // leave it where it is.
        let quick = async |c: &mut Probe| {
            let s = call(c, async |_| {
                tokio::task::yield_now().await;
                Ok(Status::NotFound)
            });
            assert_eq!(s.await, Status::NotFound);
        };
        rt.block_on(quick(&mut c));
        let armed = c.timer.0.as_ref().map(|t| t.deadline());
        for _ in 0..3 {
            rt.block_on(quick(&mut c));
        }
        assert_eq!(c.timer.0.as_ref().map(|t| t.deadline()), armed);
    }

    #[test]
    fn a_connection_of_bodies_runs_each_under_the_guard() {
        let rt = rt();
        let mut c = Probe::default();
        let mut out = Vec::new();
        assert_eq!(
            rt.block_on(c.read("k", Fields::All, &mut out)),
            Status::Error
        );
        assert!(out.is_empty());
        let mut rows = Vec::new();
        let bad = rt.block_on(c.scan("k", 1, Fields::Some(&[3]), &mut rows));
        assert_eq!(bad, Status::BadRequest);
        assert_eq!(
            rt.block_on(c.scan("k", 1, Fields::All, &mut rows)),
            Status::Ok
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rt.block_on(c.update("k", &[value(1)])), Status::NotFound);
        assert_eq!(rt.block_on(c.insert("k", &[value(2)])), Status::BadRequest);
        assert_eq!(rt.block_on(c.delete("k")), Status::Error);
        assert_eq!(c.settled, ["no k", "timed out after 20 ms"]);
    }

    #[test]
    fn a_failure_s_words_are_those_of_the_latest_operation_only() {
        let rt = rt();
        let mut c = Probe::default();
        let mut out = Vec::new();
        assert_eq!(
            rt.block_on(c.read("k", Fields::All, &mut out)),
            Status::Error
        );
        assert_eq!(c.take_failure().as_deref(), Some("no k"));
        assert_eq!(c.take_failure(), None, "taken once");
        // Words left untaken do not outlive the next operation, even one
        // that fails without a word (a record not found).
        rt.block_on(c.read("j", Fields::All, &mut out));
        assert_eq!(rt.block_on(c.update("k", &[value(1)])), Status::NotFound);
        assert_eq!(c.take_failure(), None);
    }
}
