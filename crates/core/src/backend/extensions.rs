//! What a backend offers beyond YCSB's five operations, looked up by type.
//!
//! A workload with operations of its own (Noria's vote, LIOPS) defines a
//! capability trait next to it and a small handle type that reaches a
//! backend's implementation from code generic over any backend. A backend
//! that runs the workload puts that handle in its [`Extensions`]; the
//! workload asks for it by type. Neither this module nor the `Backend`
//! trait names a workload, so adding one never grows them.

use std::any::Any;
use std::marker::PhantomData;

/// A backend's capability handles, by type. Built once per phase (a
/// handful of entries), so a linear search is the fastest lookup.
pub struct Extensions<B> {
    entries: Vec<Box<dyn Any + Send + Sync>>,
    // The handles are per backend type: a handle made for one backend is
    // never found through another's extensions.
    _backend: PhantomData<fn(&B)>,
}

impl<B> Default for Extensions<B> {
    fn default() -> Self {
        Extensions {
            entries: Vec::new(),
            _backend: PhantomData,
        }
    }
}

impl<B> Extensions<B> {
    /// None: the backend runs YCSB's operations only.
    pub fn new() -> Self {
        Self::default()
    }

    /// With the capability handle `handle` (one per type; a second of the
    /// same type replaces the first).
    pub fn with<T: Any + Send + Sync>(mut self, handle: T) -> Self {
        self.entries.retain(|e| !e.is::<T>());
        self.entries.push(Box::new(handle));
        self
    }

    /// The handle of type `T`, if the backend offers one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.entries.iter().find_map(|e| e.downcast_ref::<T>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct A(u32);
    #[derive(Debug, PartialEq)]
    struct B(&'static str);

    #[test]
    fn handles_are_found_by_type() {
        let e: Extensions<()> = Extensions::new().with(A(1)).with(B("x")).with(A(2));
        assert_eq!(e.get::<A>(), Some(&A(2)));
        assert_eq!(e.get::<B>(), Some(&B("x")));
        assert_eq!(e.get::<u8>(), None);
        assert!(Extensions::<()>::new().get::<A>().is_none());
    }
}
