//! The commands workload (`workload=commands`): the user's own command
//! templates with ratios, as memtier_benchmark's `--command` /
//! `--command-ratio` / `--command-key-pattern` and redis-benchmark's
//! trailing command take them, each template an operation of its own named
//! by its command (`SET`, `GET`, `HGETALL`).
//!
//! ```text
//! workload=commands
//! commands.1=SET __key__ __data__
//! commands.1.ratio=1
//! commands.2=GET __key__
//! commands.2.ratio=10
//! commands.key_pattern=R
//! commands.data_size=32
//! ```
//!
//! Each connection goes through the templates in order, each `ratio`
//! times, then again (memtier's cycle: its set:get ratio is as exact per
//! connection as it is there). The placeholders are in [`template`], the
//! key patterns in [`keys`].
//!
//! A backend runs it through [`CommandConnection`]: the words of one
//! command, sent as the server's protocol carries them (a RESP array to
//! Redis; memcached's text lines for its own commands). A nil reply (a
//! `GET` of a key not there) is NOT_FOUND, which memtier counts as a miss;
//! an error reply is ERROR with the server's words.

mod config;
mod connection;
pub mod keys;
mod kind;
pub mod template;
mod worker;

#[cfg(test)]
mod tests;

pub use config::{
    CommandsConfig, DataSize, Entry, COMMANDS_PROPERTIES, DEFAULT_KEY_MAXIMUM, DEFAULT_KEY_PREFIX,
};
pub use connection::{CommandConnection, CommandsSetup};
pub use keys::{KeyGen, KeySpace, Pattern};
pub use kind::{Commands, CommandsSupport};
pub use template::{Args, Template};
pub use worker::CommandsWorker;
