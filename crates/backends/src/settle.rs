//! What every connection with its own timer settles the same way: the
//! accessors of [`Settle`](sojourn_core::backend::guard::Settle) over a
//! connection's `guard`, `timer` and `last_error` fields, so that each
//! backend writes only its own `settle` (what a failure breaks).

/// `failure_text`, `guard` and `timer` of `Settle`, inside its `impl`, for
/// a connection with `guard: Guard`, `timer: Timer` and
/// `last_error: Option<String>` fields. (A macro because the trait belongs
/// to `sojourn-core`, and its other methods differ per backend.)
macro_rules! settle_by_fields {
    () => {
        fn failure_text(&mut self) -> &mut Option<String> {
            &mut self.last_error
        }

        fn guard(&self) -> sojourn_core::backend::guard::Guard {
            self.guard
        }

        fn timer(&mut self) -> Option<&mut sojourn_core::backend::guard::Timer> {
            Some(&mut self.timer)
        }
    };
}
pub(crate) use settle_by_fields;
