//! Test helpers shared by every crate's integration tests (ripgrep's
//! `tests/util`, as a crate so that both the backends' tests and the CLI's
//! end-to-end tests can use it): real database servers started on loopback
//! ports, what a test does when one is missing (`needs`), programs run
//! under a deadline (`process`), the machine's own scheduling delay
//! (`lateness`), the conformance suite every backend must pass, and runs
//! (real and synthetic) kept in a results store for the report and
//! compare tests.

pub mod bigtable_server;
pub mod cassandra_server;
pub mod conformance;
pub mod fuzz;
pub mod lateness;
pub mod mariadb_server;
pub mod memcached_server;
pub mod needs;
pub mod netns;
pub mod postgres_server;
pub mod process;
pub mod redis_server;
pub mod runs;
pub mod servers;

pub use conformance::*;
