//! Database backends of sojourn.
