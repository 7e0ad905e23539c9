//! pgbench's scripts (`workload=script`): a user's own SQL, written in
//! pgbench's script language, run as pgbench runs it (a transaction is one
//! run of a script, chosen by weight; `\set` draws pgbench's random numbers
//! from the same seed), measured as sojourn measures: each script and each
//! of its statements an operation of its own, with service and response
//! time, open loop or closed.
//!
//! The language is [`lex`], [`compile`], [`expr`] and [`value`]; the
//! random numbers [`prng`]; pgbench's builtin scripts [`builtin`]. A
//! backend runs scripts through [`ScriptConnection`] (one SQL command at a
//! time, its text or `$n` parameters by [`Protocol`]) and sets pgbench's
//! tables up through [`Runs<Script>`](super::capability::Runs) with the
//! SQL of [`PgbenchTables`] in its dialect: the database side runs the
//! text it is given and knows nothing of pgbench.

pub mod builtin;
pub mod compile;
mod config;
mod connection;
pub mod expr;
mod kind;
pub mod lex;
mod narrate;
pub mod prng;
pub mod tables;
pub mod value;
mod worker;

pub use compile::{Keep, Protocol};
pub use config::{
    listed, Compiled, Compiledscript, Listed, ScriptConfig, Source, BUILTIN_PREFIX, DEFINE_PREFIX,
    FILE_PREFIX, SCRIPT_PROPERTIES,
};
pub use connection::{Kept, KeptResult, Params, Query, ScriptConnection};
pub use kind::{Script, ScriptSupport, SqlStep, SCALE_LABEL};
pub use tables::{
    Dialect, PgbenchTables, SqlTables, Tables, TablesSql, ACCOUNTS, BRANCHES, TELLERS,
};
pub use worker::{ScriptWorker, Shared};

#[cfg(test)]
mod tests;
