//! What a backend implements to run command templates: the setup it is
//! told before a run ([`CommandsSetup`]) and one command on one connection
//! ([`CommandConnection`]).

use super::template::Args;
use crate::backend::{Connection, Status};
use std::future::Future;

/// What a backend is told before a run: the commands it will be sent,
/// so that one it cannot run is refused before the first operation.
#[derive(Clone, Debug)]
pub struct CommandsSetup {
    /// Each template's command word, as written.
    pub commands: Vec<String>,
}

/// One command on one connection.
pub trait CommandConnection: Connection {
    /// Send the command of `args` and read its reply: OK, NOT_FOUND for a
    /// nil reply (a miss), ERROR for an error reply (the server's words
    /// kept as the failure's reason).
    fn command(&mut self, args: &Args) -> impl Future<Output = Status> + Send;
}
