//! TPC-C's five transactions (clause 2) as one terminal runs them: the
//! inputs drawn as clauses 2.4.1–2.8.1 say, the SQL of the spec's
//! appendix A statement by statement through
//! [`ScriptConnection`](crate::workload::script::ScriptConnection) (each
//! statement prepared once per connection), a deadlock or serialization
//! failure tried again with the same inputs, and each transaction measured
//! whole, as one operation of its kind. In a load, a step is one district
//! ([`super::tables::load_unit`]).

mod transactions;
mod worker;

#[cfg(test)]
mod tests;

pub use worker::{Kinds, Shared, TpccWorker, MAX_TRIES};
