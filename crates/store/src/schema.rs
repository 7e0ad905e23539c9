//! The store's schema and its versioned migrations.

/// The schema version this build writes; older stores are migrated on open.
pub const SCHEMA_VERSION: u32 = 2;
