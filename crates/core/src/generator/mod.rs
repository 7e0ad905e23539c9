//! Number generators (YCSB-compatible). Filled in by the generators work.
