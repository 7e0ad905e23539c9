//! Test helpers shared by every crate's integration tests (ripgrep's
//! `tests/util`, as a crate so that both the backends' tests and the CLI's
//! end-to-end tests can use it): real database servers started on loopback
//! ports, and the conformance suite every backend must pass.

pub mod bigtable_server;
pub mod conformance;
pub mod servers;

pub use conformance::*;
