//! Key naming and hashing (YCSB-compatible). Filled in by the generators work.
