//! The two traits a run is built from: a [`Step`] (what a worker does per
//! operation, implemented by workloads) and a [`Connector`] (how a runtime
//! thread opens its connections), with the connector for a [`Backend`].

use crate::backend::{Backend, BackendError, Schema, Threading};

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::meter::Meter;

/// One operation (or a compound such as read-modify-write) on one
/// connection. Implemented by workloads. In a closed loop the worker's
/// next step may start at the moment of this step's last
/// [`Meter::record`] (see `Meter::ended`), so a step records its last
/// call as the last thing it does that takes time.
pub trait Step<C>: Send + 'static {
    fn step(&mut self, conn: &mut C, meter: &mut Meter) -> impl Future<Output = ()> + Send;

    /// Once on each connection after its worker's last step of a phase
    /// (not after an abort), before the phase ends: what must reach the
    /// server before anyone looks at it, such as session statistics.
    fn finish(&mut self, conn: &mut C) -> impl Future<Output = ()> + Send {
        let _ = conn;
        async {}
    }
}

/// Opens connections. Called on the runtime thread that will use the
/// connection, so drivers that spawn a background task (tokio-postgres)
/// spawn it where the connection lives.
pub trait Connector: Sync {
    type Conn: Send + 'static;
    fn connect(&self) -> impl Future<Output = Result<Self::Conn, BackendError>>;

    /// What the connections ask of the runtime threads; see
    /// [`Backend::threading`].
    fn threading(&self) -> Threading {
        Threading::Remote
    }
}

/// A [`Connector`] for a backend and the table a workload uses.
pub struct BackendConnector<'a, B> {
    pub backend: &'a B,
    pub schema: Arc<Schema>,
}

impl<B: Backend> Connector for BackendConnector<'_, B> {
    type Conn = B::Conn;
    fn connect(&self) -> impl Future<Output = Result<B::Conn, BackendError>> {
        self.backend.connect(self.schema.clone())
    }

    fn threading(&self) -> Threading {
        self.backend.threading()
    }
}

/// Take `step` with its waits counted for [`Meter::ended`]; `waits` is
/// [`Meter::waits`], cloned once per worker (a clone per step would cost
/// more than the clock read it saves).
pub(super) async fn take_step<C, S: Step<C>>(
    step: &mut S,
    conn: &mut C,
    meter: &mut Meter,
    waits: &AtomicU32,
) {
    let mut fut = pin!(step.step(conn, meter));
    poll_fn(|cx| {
        let poll = fut.as_mut().poll(cx);
        if poll.is_pending() {
            // One thread polls a worker: a plain increment will do.
            waits.store(
                waits.load(Ordering::Relaxed).wrapping_add(1),
                Ordering::Relaxed,
            );
        }
        poll
    })
    .await
}
