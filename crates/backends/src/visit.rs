//! The visitors that turn an `AnyBackend` back into
//! its concrete backend type, for code generic over it.

use std::future::Future;

use sojourn_core::backend::Backend;

/// Code generic over the backend type, run by
/// `AnyBackend::visit` with
/// the concrete backend inside: every operation is then a direct,
/// monomorphised call. (A visitor rather than a macro because the `#[cfg]`
/// of each optional backend must be evaluated in this crate, against this
/// crate's features.)
pub trait Visitor {
    type Output;
    fn visit<B: Backend>(self, backend: &B) -> Self::Output;
}

/// [`Visitor`] for async code.
pub trait AsyncVisitor {
    type Output;
    fn visit<B: Backend>(self, backend: &B) -> impl Future<Output = Self::Output>;
}
