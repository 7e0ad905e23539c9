//! What the backends that keep a statement per operation shape share
//! (PostgreSQL, MySQL, CQL): a connection's table and fields, the fields
//! of the write at hand, and a cache of statements by operation and by
//! the fields it touches, the common shapes (all fields, one field) found
//! without hashing.

use std::future::Future;

use sojourn_core::backend::{FieldValue, Fields};

/// Field indices as written: `fields` itself, or where it is exactly
/// `0..field_count` in order, the "all fields" shape.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Shape<'a> {
    All,
    One(usize),
    List(&'a [usize]),
}

impl<'a> Shape<'a> {
    fn of(fields: &'a [usize], field_count: usize) -> Shape<'a> {
        match fields {
            [one] if field_count != 1 => Shape::One(*one),
            _ if fields.len() == field_count && fields.iter().enumerate().all(|(i, &f)| i == f) => {
                Shape::All
            }
            _ => Shape::List(fields),
        }
    }
}

/// The operations whose statement depends on the fields they touch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Scan,
    Update,
    Insert,
}

/// What a connection's statements are built from: the workload's table
/// and its fields, and the fields of the write at hand.
pub(crate) struct Layout {
    table: String,
    all_fields: Vec<usize>,
    written: Vec<usize>,
}

impl Layout {
    pub(crate) fn new(table: &str, field_count: usize) -> Layout {
        Layout {
            table: table.to_string(),
            all_fields: (0..field_count).collect(),
            written: Vec::new(),
        }
    }

    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// The fields a read or scan returns, in order.
    pub(crate) fn columns<'a>(&'a self, fields: Fields<'a>) -> &'a [usize] {
        match fields {
            Fields::All => &self.all_fields,
            Fields::Some(list) => list,
        }
    }

    /// Note the fields `values` write, for [`Layout::written`].
    pub(crate) fn write(&mut self, values: &[FieldValue]) {
        self.written.clear();
        self.written.extend(values.iter().map(|v| v.field));
    }

    /// The fields of the last [`Layout::write`], in order.
    pub(crate) fn written(&self) -> &[usize] {
        &self.written
    }

    /// Fields of the table.
    pub(crate) fn field_count(&self) -> usize {
        self.all_fields.len()
    }
}

/// Something kept per operation and shape: a prepared statement, the text
/// of one.
pub(crate) struct ByShape<T>([ShapeCache<T>; 4]);

impl<T> Default for ByShape<T> {
    fn default() -> Self {
        ByShape(Default::default())
    }
}

impl<T> ByShape<T> {
    /// The entry of `op` over `columns` of `layout`, made on first use by
    /// `make`.
    pub(crate) async fn get<E, F: Future<Output = Result<T, E>>>(
        &mut self,
        layout: &Layout,
        op: Op,
        columns: &[usize],
        make: impl FnOnce() -> F,
    ) -> Result<&T, E> {
        self.get_retiring(layout, op, columns, make, drop).await
    }

    /// [`ByShape::get`], handing the entries it lets go of to `retire`
    /// (statements that must be closed on the server, for a client that
    /// does not close them when dropped).
    pub(crate) async fn get_retiring<E, F: Future<Output = Result<T, E>>>(
        &mut self,
        layout: &Layout,
        op: Op,
        columns: &[usize],
        make: impl FnOnce() -> F,
        retire: impl FnMut(T),
    ) -> Result<&T, E> {
        let cache = &mut self.0[op as usize];
        let shape = Shape::of(columns, layout.field_count());
        if cache.get(shape).is_none() {
            // Boxed: made once per shape, while an unboxed future here would
            // enlarge (and be copied with) every operation's future.
            let made = Box::pin(make()).await?;
            return Ok(cache.insert(shape, made, retire));
        }
        Ok(cache.get(shape).expect("present: checked above"))
    }
}

/// Shapes beyond which a cache of statements by field list is emptied: a
/// workload picking arbitrary field subsets would otherwise prepare
/// statements without bound on the server.
pub(crate) const LIST_CACHE_LIMIT: usize = 64;

/// Statements (or anything else) kept per operation shape, with the common
/// shapes (all fields, one field) found without hashing.
struct ShapeCache<T> {
    all: Option<T>,
    one: Vec<Option<T>>,
    list: std::collections::HashMap<Box<[usize]>, T>,
}

impl<T> Default for ShapeCache<T> {
    fn default() -> Self {
        ShapeCache {
            all: None,
            one: Vec::new(),
            list: std::collections::HashMap::new(),
        }
    }
}

impl<T> ShapeCache<T> {
    fn get(&self, shape: Shape<'_>) -> Option<&T> {
        match shape {
            Shape::All => self.all.as_ref(),
            Shape::One(f) => self.one.get(f).and_then(Option::as_ref),
            Shape::List(list) => self.list.get(list),
        }
    }

    fn insert(&mut self, shape: Shape<'_>, value: T, mut retire: impl FnMut(T)) -> &T {
        match shape {
            Shape::All => self.all.insert(value),
            Shape::One(f) => {
                if self.one.len() <= f {
                    self.one.resize_with(f + 1, || None);
                }
                self.one[f].insert(value)
            }
            Shape::List(list) => {
                if self.list.len() >= LIST_CACHE_LIMIT {
                    self.list.drain().for_each(|(_, v)| retire(v));
                }
                self.list.entry(list.into()).or_insert(value)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_cache() {
        assert_eq!(Shape::of(&[0, 1, 2], 3), Shape::All);
        assert_eq!(Shape::of(&[0], 1), Shape::All);
        assert_eq!(Shape::of(&[2], 3), Shape::One(2));
        assert_eq!(Shape::of(&[1, 0, 2], 3), Shape::List(&[1, 0, 2]));
        assert_eq!(Shape::of(&[], 3), Shape::List(&[]));
        let mut c = ShapeCache::default();
        assert_eq!(c.get(Shape::One(5)), None);
        c.insert(Shape::One(5), "five", drop);
        c.insert(Shape::List(&[1, 2]), "list", drop);
        c.insert(Shape::All, "all", drop);
        assert_eq!(c.get(Shape::One(5)), Some(&"five"));
        assert_eq!(c.get(Shape::One(4)), None);
        assert_eq!(c.get(Shape::List(&[1, 2])), Some(&"list"));
        assert_eq!(c.get(Shape::All), Some(&"all"));
    }

    #[test]
    fn a_full_list_cache_retires_every_entry() {
        let mut c = ShapeCache::default();
        let lists: Vec<[usize; 2]> = (0..=LIST_CACHE_LIMIT).map(|i| [i, i + 1]).collect();
        let mut retired = Vec::new();
        for (i, l) in lists.iter().enumerate() {
            c.insert(Shape::List(l), i, |v| retired.push(v));
        }
        // The insert past the limit let the first LIST_CACHE_LIMIT go.
        retired.sort_unstable();
        assert_eq!(retired, (0..LIST_CACHE_LIMIT).collect::<Vec<_>>());
        assert_eq!(
            c.get(Shape::List(&lists[LIST_CACHE_LIMIT])),
            Some(&LIST_CACHE_LIMIT)
        );
        c.insert(Shape::One(1), 99, |_| panic!("nothing retired"));
    }
}
