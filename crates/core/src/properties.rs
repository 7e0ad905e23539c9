//! Java-properties parsing with origins. Filled in by the properties work.
