//! [`Map`]: a JSON object that keeps its keys in insertion order.

use std::borrow::Borrow;
use std::fmt;
use std::hash::Hash;

use indexmap::IndexMap;

use super::Value;

/// A JSON object: string keys in insertion order (the reference's `dict` order).
///
/// Inserting an existing key replaces its value in place; [`Map::remove`] moves the last entry
/// into the removed one's place (`swap_remove`, as `serde_json`'s `preserve_order` map does),
/// [`Map::shift_remove`] keeps the order of the rest.
///
/// ```
/// use chatparse_runtime::value::{Map, Value};
/// let mut m = Map::new();
/// m.insert("b".into(), Value::from(1));
/// m.insert("a".into(), Value::from(2));
/// m.insert("b".into(), Value::from(3));
/// assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
/// assert_eq!(Value::Object(m).to_string(), r#"{"b":3,"a":2}"#);
/// ```
#[derive(Default)]
pub struct Map {
    inner: IndexMap<String, Value, ProcessHasher>,
}

/// The maps' hasher: std's SipHash with keys drawn at random once per process (as
/// `RandomState` draws them per thread), so that key collisions cannot be planned; a zero-sized
/// type, where `RandomState` stores its 16 bytes of keys in every map (and so in every
/// [`Value`]: 72 bytes with it, 56 without).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProcessHasher;

impl std::hash::BuildHasher for ProcessHasher {
    type Hasher = std::collections::hash_map::DefaultHasher;

    fn build_hasher(&self) -> Self::Hasher {
        static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
            std::sync::OnceLock::new();
        KEYS.get_or_init(std::collections::hash_map::RandomState::new)
            .build_hasher()
    }
}

/// An iterator over a [`Map`]'s entries.
pub type Iter<'a> = indexmap::map::Iter<'a, String, Value>;
/// A mutable iterator over a [`Map`]'s entries.
pub type IterMut<'a> = indexmap::map::IterMut<'a, String, Value>;
/// An iterator over a [`Map`]'s keys.
pub type Keys<'a> = indexmap::map::Keys<'a, String, Value>;
/// An iterator over a [`Map`]'s values.
pub type Values<'a> = indexmap::map::Values<'a, String, Value>;
/// A mutable iterator over a [`Map`]'s values.
pub type ValuesMut<'a> = indexmap::map::ValuesMut<'a, String, Value>;
/// An owning iterator over a [`Map`]'s entries.
pub type IntoIter = indexmap::map::IntoIter<String, Value>;
/// An entry of a [`Map`], for in-place manipulation.
pub type Entry<'a> = indexmap::map::Entry<'a, String, Value>;

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map::default()
    }

    /// An empty map with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Map {
        Map {
            inner: IndexMap::with_capacity_and_hasher(capacity, ProcessHasher),
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        let old = std::mem::take(self);
        drop(old);
    }

    /// The value of `key`.
    pub fn get<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> Option<&Value>
    where
        String: Borrow<Q>,
    {
        self.inner.get(key)
    }

    /// The value of `key`, mutably.
    pub fn get_mut<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<&mut Value>
    where
        String: Borrow<Q>,
    {
        self.inner.get_mut(key)
    }

    /// The stored key and value of `key`.
    pub fn get_key_value<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> Option<(&String, &Value)>
    where
        String: Borrow<Q>,
    {
        self.inner.get_key_value(key)
    }

    /// Whether `key` is present.
    pub fn contains_key<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> bool
    where
        String: Borrow<Q>,
    {
        self.inner.contains_key(key)
    }

    /// Inserts `k` at the end, or replaces its value in place; returns the old value.
    pub fn insert(&mut self, k: String, v: Value) -> Option<Value> {
        self.inner.insert(k, v)
    }

    /// Removes `key`, moving the last entry into its place (`serde_json`'s `remove` under
    /// `preserve_order`).
    pub fn remove<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.inner.swap_remove(key)
    }

    /// Same as [`Map::remove`].
    pub fn swap_remove<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.inner.swap_remove(key)
    }

    /// Removes `key`, keeping the order of the other entries.
    pub fn shift_remove<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.inner.shift_remove(key)
    }

    /// Removes `key` (as [`Map::remove`]) and returns the stored key too.
    pub fn remove_entry<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<(String, Value)>
    where
        String: Borrow<Q>,
    {
        self.inner.swap_remove_entry(key)
    }

    /// Moves every entry of `other` into `self`, in order.
    pub fn append(&mut self, other: &mut Map) {
        self.inner.extend(other.inner.drain(..));
    }

    /// The entry of `key`.
    pub fn entry<S: Into<String>>(&mut self, key: S) -> Entry<'_> {
        self.inner.entry(key.into())
    }

    /// The entries in order.
    pub fn iter(&self) -> Iter<'_> {
        self.inner.iter()
    }

    /// The entries in order, values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        self.inner.iter_mut()
    }

    /// The keys in order.
    pub fn keys(&self) -> Keys<'_> {
        self.inner.keys()
    }

    /// The values in order.
    pub fn values(&self) -> Values<'_> {
        self.inner.values()
    }

    /// The values in order, mutable.
    pub fn values_mut(&mut self) -> ValuesMut<'_> {
        self.inner.values_mut()
    }

    /// Keeps the entries for which `f` is true, in order.
    pub fn retain<F: FnMut(&String, &mut Value) -> bool>(&mut self, f: F) {
        self.inner.retain(f);
    }

    /// The entry at `index` in insertion order.
    pub fn get_index(&self, index: usize) -> Option<(&String, &Value)> {
        self.inner.get_index(index)
    }

    /// The position of `key`.
    pub(crate) fn index_of(&self, key: &str) -> Option<usize> {
        self.inner.get_index_of(key)
    }

    /// Moves the entry at `from` to `to`, shifting the ones between.
    pub(crate) fn move_index(&mut self, from: usize, to: usize) {
        self.inner.move_index(from, to);
    }

    /// The value at `index`.
    pub(crate) fn value_at_mut(&mut self, index: usize) -> Option<&mut Value> {
        self.inner.get_index_mut(index).map(|(_, v)| v)
    }

    /// Removes the entry at `index`, keeping the order of the rest.
    pub(crate) fn shift_remove_index(&mut self, index: usize) {
        self.inner.shift_remove_index(index);
    }

    /// Keeps the first `len` entries.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.inner.truncate(len);
    }

    /// Inserts a key that is not in the map at position `index`.
    pub(crate) fn insert_new_at(&mut self, index: usize, key: String, value: Value) {
        let (at, _) = self.inner.insert_full(key, value);
        self.inner.move_index(at, index);
    }

    /// Takes the non-empty containers out, leaving `null` in their place (for the iterative
    /// drop: the map itself then drops without recursion). Scalars stay, freed with the map's
    /// own storage, rather than each moved onto the drop's stack first.
    pub(super) fn drain_values_into(&mut self, out: &mut Vec<Value>) {
        for v in self.inner.values_mut() {
            if v.has_children() {
                out.push(std::mem::replace(v, Value::Null));
            }
        }
    }
}

impl Drop for Map {
    #[inline]
    fn drop(&mut self) {
        if !self.inner.is_empty() && self.inner.values().any(Value::has_children) {
            let mut pending = Vec::new();
            self.drain_values_into(&mut pending);
            super::drop_iteratively(pending);
        }
    }
}

impl Clone for Map {
    fn clone(&self) -> Map {
        self.clone_keeping_hashes()
    }
}

impl Map {
    /// A copy of the table as it is (keys' hashes and order kept, nothing hashed again), each
    /// value through `Value::clone` (which bounds its recursion).
    pub(super) fn clone_keeping_hashes(&self) -> Map {
        Map {
            inner: self.inner.clone(),
        }
    }
}

impl PartialEq for Map {
    /// Same entries, regardless of order (as `serde_json::Map`).
    fn eq(&self, other: &Map) -> bool {
        super::eq_maps(self, other)
    }
}

impl Eq for Map {}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;
    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = IntoIter;
    fn into_iter(mut self) -> IntoIter {
        std::mem::take(&mut self.inner).into_iter()
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<T: IntoIterator<Item = (String, Value)>>(iter: T) -> Map {
        Map {
            inner: IndexMap::from_iter(iter),
        }
    }
}

impl Extend<(String, Value)> for Map {
    fn extend<T: IntoIterator<Item = (String, Value)>>(&mut self, iter: T) {
        self.inner.extend(iter);
    }
}

impl<Q: ?Sized + Hash + Eq> std::ops::Index<&Q> for Map
where
    String: Borrow<Q>,
{
    type Output = Value;
    fn index(&self, key: &Q) -> &Value {
        self.inner.get(key).expect("no entry found for key")
    }
}

impl<Q: ?Sized + Hash + Eq> std::ops::IndexMut<&Q> for Map
where
    String: Borrow<Q>,
{
    fn index_mut(&mut self, key: &Q) -> &mut Value {
        self.inner.get_mut(key).expect("no entry found for key")
    }
}
