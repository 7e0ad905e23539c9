//! pgbench's expression language, for `\set`, `\if` and `\elif`: parsed
//! once when the script is read (names resolved to variable slots), then
//! evaluated per transaction with the client's variables and random
//! generator. Types, precedence, coercions, overflow checks and error
//! texts are pgbench's (PostgreSQL 15-17): integers and doubles, booleans
//! and NULL, `a > b` evaluated as `b < a` (right side first, which decides
//! the order of random draws), `AND`/`OR`/`CASE` lazy, `%` always integer.

mod ast;
mod eval;
mod parse;
mod tokens;

#[cfg(test)]
mod tests;

pub use ast::{function_names, Expr, Func, ParseError};
pub use eval::{Env, EvalError};
pub use parse::parse;
