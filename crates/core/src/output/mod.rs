//! Turning a run's outcome into what people and tools read: YCSB's text
//! summary and status lines ([`ycsb`]), Noria's vote lines ([`noria`]),
//! the LIOPS figures ([`liops`]), the JSON report ([`json`]), and the
//! warnings that say what to do about a doubtful result ([`warning`]).

pub mod json;
pub mod liops;
pub mod noria;
pub mod time;
pub mod warning;
pub mod ycsb;

pub use json::Report;
pub use warning::Warning;
