//! [`Map`]: a JSON object that keeps its keys in insertion order.
//!
//! Why not `indexmap`: most objects a parse builds are small (a tool call's two keys, its
//! arguments' handful), and for those hashing every key on insert and lookup (SipHash, about
//! 100 instructions a key) and allocating a hash table beside the entries cost more than the
//! rest of the object. Up to [`SMALL`] entries a map is only its entries, and a lookup compares
//! keys in order; past that it builds an index (hashbrown's `HashTable` of positions, keyed by
//! SipHash with per-process random keys), so that a model output with very many keys in one
//! object cannot make each insert cost the object's length.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

use super::Value;

/// Up to this many entries a map has no index: a lookup compares the keys in order.
const SMALL: usize = 8;

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
    entries: Vec<(String, Value)>,
    /// Positions in `entries` by their key's hash; present exactly when there are more than
    /// [`SMALL`] entries.
    index: Option<Box<HashTable<usize>>>,
}

/// The index's hasher: std's SipHash with keys drawn at random once per process (as
/// `RandomState` draws them per thread), so that key collisions cannot be planned.
fn hash_key<Q: ?Sized + Hash>(key: &Q) -> u64 {
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(std::collections::hash_map::RandomState::new)
        .hash_one(key)
}

macro_rules! entry_iterator {
    ($(#[$doc:meta])* $name:ident<$($lt:lifetime)?>, $inner:ty, $item:ty, |$e:pat_param| $map:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<$($lt)?>($inner);

        impl<$($lt)?> Iterator for $name<$($lt)?> {
            type Item = $item;
            #[inline]
            fn next(&mut self) -> Option<$item> {
                self.0.next().map(|$e| $map)
            }
            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
            #[inline]
            fn nth(&mut self, n: usize) -> Option<$item> {
                self.0.nth(n).map(|$e| $map)
            }
            #[inline]
            fn count(self) -> usize {
                self.0.len()
            }
        }

        impl<$($lt)?> DoubleEndedIterator for $name<$($lt)?> {
            #[inline]
            fn next_back(&mut self) -> Option<$item> {
                self.0.next_back().map(|$e| $map)
            }
        }

        impl<$($lt)?> ExactSizeIterator for $name<$($lt)?> {}
        impl<$($lt)?> std::iter::FusedIterator for $name<$($lt)?> {}
    };
}

entry_iterator!(
    /// An iterator over a [`Map`]'s entries.
    Iter<'a>, std::slice::Iter<'a, (String, Value)>, (&'a String, &'a Value), |(k, v)| (k, v)
);
entry_iterator!(
    /// A mutable iterator over a [`Map`]'s entries.
    IterMut<'a>, std::slice::IterMut<'a, (String, Value)>, (&'a String, &'a mut Value),
    |(k, v)| (&*k, v)
);
entry_iterator!(
    /// An iterator over a [`Map`]'s keys.
    Keys<'a>, std::slice::Iter<'a, (String, Value)>, &'a String, |(k, _)| k
);
entry_iterator!(
    /// An iterator over a [`Map`]'s values.
    Values<'a>, std::slice::Iter<'a, (String, Value)>, &'a Value, |(_, v)| v
);
entry_iterator!(
    /// A mutable iterator over a [`Map`]'s values.
    ValuesMut<'a>, std::slice::IterMut<'a, (String, Value)>, &'a mut Value, |(_, v)| v
);
entry_iterator!(
    /// An owning iterator over a [`Map`]'s entries.
    IntoIter<>, std::vec::IntoIter<(String, Value)>, (String, Value), |e| e
);

impl Clone for Iter<'_> {
    fn clone(&self) -> Self {
        Iter(self.0.clone())
    }
}

impl Clone for Keys<'_> {
    fn clone(&self) -> Self {
        Keys(self.0.clone())
    }
}

impl Clone for Values<'_> {
    fn clone(&self) -> Self {
        Values(self.0.clone())
    }
}

/// An entry of a [`Map`], for in-place manipulation ([`Map::entry`]).
pub enum Entry<'a> {
    /// The key is present.
    Occupied(OccupiedEntry<'a>),
    /// The key is absent.
    Vacant(VacantEntry<'a>),
}

/// A present key of a [`Map`].
pub struct OccupiedEntry<'a> {
    map: &'a mut Map,
    at: usize,
}

/// An absent key of a [`Map`].
pub struct VacantEntry<'a> {
    map: &'a mut Map,
    key: String,
}

impl<'a> Entry<'a> {
    /// The entry's key.
    pub fn key(&self) -> &String {
        match self {
            Entry::Occupied(e) => e.key(),
            Entry::Vacant(e) => e.key(),
        }
    }

    /// The value, inserting `default` at the end when the key is absent.
    ///
    /// ```
    /// use chatparse_runtime::value::{Map, Value};
    /// let mut m = Map::new();
    /// *m.entry("n").or_insert(Value::from(0)) = Value::from(1);
    /// m.entry("n").or_insert(Value::from(5));
    /// assert_eq!(m["n"], Value::from(1));
    /// ```
    pub fn or_insert(self, default: Value) -> &'a mut Value {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(default),
        }
    }

    /// The value, inserting `default()` at the end when the key is absent.
    pub fn or_insert_with<F: FnOnce() -> Value>(self, default: F) -> &'a mut Value {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(default()),
        }
    }

    /// The value, inserting `null` at the end when the key is absent.
    pub fn or_default(self) -> &'a mut Value {
        self.or_insert(Value::Null)
    }

    /// Calls `f` on the value when the key is present.
    pub fn and_modify<F: FnOnce(&mut Value)>(mut self, f: F) -> Self {
        if let Entry::Occupied(e) = &mut self {
            f(e.get_mut());
        }
        self
    }
}

impl<'a> OccupiedEntry<'a> {
    /// The stored key.
    pub fn key(&self) -> &String {
        &self.map.entries[self.at].0
    }

    /// The value.
    pub fn get(&self) -> &Value {
        &self.map.entries[self.at].1
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut Value {
        &mut self.map.entries[self.at].1
    }

    /// The value, mutably, for as long as the map is borrowed.
    pub fn into_mut(self) -> &'a mut Value {
        &mut self.map.entries[self.at].1
    }

    /// Replaces the value in place; returns the old one.
    pub fn insert(&mut self, value: Value) -> Value {
        std::mem::replace(self.get_mut(), value)
    }

    /// Removes the entry (as [`Map::remove`]); returns its value.
    pub fn remove(self) -> Value {
        self.map.swap_remove_at(self.at).1
    }
}

impl<'a> VacantEntry<'a> {
    /// The key that would be inserted.
    pub fn key(&self) -> &String {
        &self.key
    }

    /// Inserts the key at the end with `value`.
    pub fn insert(self, value: Value) -> &'a mut Value {
        let at = self.map.push_new(self.key, value);
        &mut self.map.entries[at].1
    }
}

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map::default()
    }

    /// An empty map with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Map {
        Map {
            entries: Vec::with_capacity(capacity),
            index: None,
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        let old = std::mem::take(self);
        drop(old);
    }

    /// The position of `key`: the keys compared in order in a small map, through the index in a
    /// large one.
    #[inline]
    fn position<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> Option<usize>
    where
        String: Borrow<Q>,
    {
        match &self.index {
            None => self.entries.iter().position(|(k, _)| k.borrow() == key),
            Some(index) => index
                .find(hash_key(key), |&i| self.entries[i].0.borrow() == key)
                .copied(),
        }
    }

    /// The map with each value replaced by `value(old)`: the same keys in the same order, its
    /// index copied (the keys are known unique; nothing is looked up or hashed again).
    pub(crate) fn map_cloned(&self, mut value: impl FnMut(&Value) -> Value) -> Map {
        Map {
            entries: self
                .entries
                .iter()
                .map(|(k, v)| (k.clone(), value(v)))
                .collect(),
            index: self.index.clone(),
        }
    }

    /// Appends a key that is not in the map; returns its position.
    fn push_new(&mut self, key: String, value: Value) -> usize {
        let at = self.entries.len();
        let Map { entries, index } = self;
        if let Some(index) = index {
            index.insert_unique(hash_key(&key), at, |&i| hash_key(&entries[i].0));
        }
        entries.push((key, value));
        if self.index.is_none() && self.entries.len() > SMALL {
            self.rebuild_index();
        }
        at
    }

    /// Builds the index from the entries (none for a small map): after a change that moved
    /// many positions.
    fn rebuild_index(&mut self) {
        if self.dropped_index_if_small() {
            return;
        }
        let entries = &self.entries;
        let mut index = HashTable::with_capacity(entries.len());
        for (i, (key, _)) in entries.iter().enumerate() {
            index.insert_unique(hash_key(key), i, |&j| hash_key(&entries[j].0));
        }
        self.index = Some(Box::new(index));
    }

    /// Drops the index when the map is small again (after a removal); whether it is small.
    fn dropped_index_if_small(&mut self) -> bool {
        let small = self.entries.len() <= SMALL;
        if small {
            self.index = None;
        }
        small
    }

    /// Forgets position `at` in the index (before its entry leaves).
    fn unindex(&mut self, at: usize) {
        if let Some(index) = &mut self.index {
            if let Ok(slot) = index.find_entry(hash_key(&self.entries[at].0), |&i| i == at) {
                slot.remove();
            }
        }
    }

    /// Removes the entry at `at`, moving the last entry into its place.
    fn swap_remove_at(&mut self, at: usize) -> (String, Value) {
        self.unindex(at);
        let last = self.entries.len() - 1;
        if let Some(index) = &mut self.index {
            if at != last {
                let hash = hash_key(&self.entries[last].0);
                if let Some(slot) = index.find_mut(hash, |&i| i == last) {
                    *slot = at;
                }
            }
        }
        let removed = self.entries.swap_remove(at);
        self.dropped_index_if_small();
        removed
    }

    /// Removes the entry at `at`, keeping the order of the rest.
    fn shift_remove_at(&mut self, at: usize) -> (String, Value) {
        self.unindex(at);
        if let Some(index) = &mut self.index {
            for slot in index.iter_mut() {
                if *slot > at {
                    *slot -= 1;
                }
            }
        }
        let removed = self.entries.remove(at);
        self.dropped_index_if_small();
        removed
    }

    /// The value of `key`.
    #[inline]
    pub fn get<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> Option<&Value>
    where
        String: Borrow<Q>,
    {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The value of `key`, mutably.
    #[inline]
    pub fn get_mut<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<&mut Value>
    where
        String: Borrow<Q>,
    {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    /// The stored key and value of `key`.
    pub fn get_key_value<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> Option<(&String, &Value)>
    where
        String: Borrow<Q>,
    {
        self.position(key).map(|i| {
            let (k, v) = &self.entries[i];
            (k, v)
        })
    }

    /// Whether `key` is present.
    pub fn contains_key<Q: ?Sized + Hash + Eq>(&self, key: &Q) -> bool
    where
        String: Borrow<Q>,
    {
        self.position(key).is_some()
    }

    /// Inserts `k` at the end, or replaces its value in place (keeping the stored key); returns
    /// the old value.
    pub fn insert(&mut self, k: String, v: Value) -> Option<Value> {
        match self.position(k.as_str()) {
            Some(i) => Some(std::mem::replace(&mut self.entries[i].1, v)),
            None => {
                self.push_new(k, v);
                None
            }
        }
    }

    /// Removes `key`, moving the last entry into its place (`serde_json`'s `remove` under
    /// `preserve_order`).
    pub fn remove<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    /// Same as [`Map::remove`].
    pub fn swap_remove<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.remove(key)
    }

    /// Removes `key`, keeping the order of the other entries.
    pub fn shift_remove<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        let at = self.position(key)?;
        Some(self.shift_remove_at(at).1)
    }

    /// Removes `key` (as [`Map::remove`]) and returns the stored key too.
    pub fn remove_entry<Q: ?Sized + Hash + Eq>(&mut self, key: &Q) -> Option<(String, Value)>
    where
        String: Borrow<Q>,
    {
        let at = self.position(key)?;
        Some(self.swap_remove_at(at))
    }

    /// Moves every entry of `other` into `self`, in order.
    pub fn append(&mut self, other: &mut Map) {
        let entries = std::mem::take(&mut other.entries);
        other.index = None;
        self.extend(entries);
    }

    /// The entry of `key`.
    pub fn entry<S: Into<String>>(&mut self, key: S) -> Entry<'_> {
        let key = key.into();
        match self.position(key.as_str()) {
            Some(at) => Entry::Occupied(OccupiedEntry { map: self, at }),
            None => Entry::Vacant(VacantEntry { map: self, key }),
        }
    }

    /// The entries in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    /// The entries in order, values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(self.entries.iter_mut())
    }

    /// The keys in order.
    pub fn keys(&self) -> Keys<'_> {
        Keys(self.entries.iter())
    }

    /// The values in order.
    pub fn values(&self) -> Values<'_> {
        Values(self.entries.iter())
    }

    /// The values in order, mutable.
    pub fn values_mut(&mut self) -> ValuesMut<'_> {
        ValuesMut(self.entries.iter_mut())
    }

    /// Keeps the entries for which `f` is true, in order.
    pub fn retain<F: FnMut(&String, &mut Value) -> bool>(&mut self, mut f: F) {
        let before = self.entries.len();
        self.entries.retain_mut(|(k, v)| f(k, v));
        if self.entries.len() != before {
            self.rebuild_index();
        }
    }

    /// The entry at `index` in insertion order.
    pub fn get_index(&self, index: usize) -> Option<(&String, &Value)> {
        self.entries.get(index).map(|(k, v)| (k, v))
    }

    /// The position of `key`.
    pub(crate) fn index_of(&self, key: &str) -> Option<usize> {
        self.position(key)
    }

    /// Moves the entry at `from` to `to`, shifting the ones between.
    pub(crate) fn move_index(&mut self, from: usize, to: usize) {
        if from == to {
            return;
        }
        if from < to {
            self.entries[from..=to].rotate_left(1);
        } else {
            self.entries[to..=from].rotate_right(1);
        }
        if let Some(index) = &mut self.index {
            for slot in index.iter_mut() {
                *slot = match *slot {
                    i if i == from => to,
                    i if from < to && from < i && i <= to => i - 1,
                    i if to < from && to <= i && i < from => i + 1,
                    i => i,
                };
            }
        }
    }

    /// The value at `index`.
    pub(crate) fn value_at_mut(&mut self, index: usize) -> Option<&mut Value> {
        self.entries.get_mut(index).map(|(_, v)| v)
    }

    /// Removes the entry at `index`, keeping the order of the rest.
    pub(crate) fn shift_remove_index(&mut self, index: usize) {
        if index < self.entries.len() {
            self.shift_remove_at(index);
        }
    }

    /// Keeps the first `len` entries.
    pub(crate) fn truncate(&mut self, len: usize) {
        if len < self.entries.len() {
            self.entries.truncate(len);
            self.rebuild_index();
        }
    }

    /// Inserts a key that is not in the map at position `index`.
    pub(crate) fn insert_new_at(&mut self, index: usize, key: String, value: Value) {
        let at = self.push_new(key, value);
        self.move_index(at, index);
    }

    /// Takes the non-empty containers out, leaving `null` in their place (for the iterative
    /// drop: the map itself then drops without recursion). Scalars stay, freed with the map's
    /// own storage, rather than each moved onto the drop's stack first.
    pub(super) fn drain_values_into(&mut self, out: &mut Vec<Value>) {
        for (_, v) in &mut self.entries {
            if v.has_children() {
                out.push(std::mem::replace(v, Value::Null));
            }
        }
    }
}

impl Drop for Map {
    /// Iterative where the map holds a container that holds containers; otherwise the entries
    /// drop in place, recursing one level at most (a child's own drop then finds no container
    /// inside a container). Why not always iterative: a tool call's arguments with one nested
    /// object paid a heap stack (an allocation) for it.
    #[inline]
    fn drop(&mut self) {
        if self.entries.iter().any(|(_, v)| v.has_grandchildren()) {
            let mut pending = Vec::new();
            self.drain_values_into(&mut pending);
            super::drop_iteratively(pending);
        }
    }
}

impl Clone for Map {
    /// A copy of the map as it is (its index copied, nothing hashed again), each value through
    /// `Value::clone` (which bounds its recursion).
    fn clone(&self) -> Map {
        self.map_cloned(Value::clone)
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
        self.index = None;
        IntoIter(std::mem::take(&mut self.entries).into_iter())
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<T: IntoIterator<Item = (String, Value)>>(iter: T) -> Map {
        let mut map = Map::new();
        map.extend(iter);
        map
    }
}

impl Extend<(String, Value)> for Map {
    fn extend<T: IntoIterator<Item = (String, Value)>>(&mut self, iter: T) {
        let iter = iter.into_iter();
        self.entries.reserve(iter.size_hint().0);
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<Q: ?Sized + Hash + Eq> std::ops::Index<&Q> for Map
where
    String: Borrow<Q>,
{
    type Output = Value;
    fn index(&self, key: &Q) -> &Value {
        self.get(key).expect("no entry found for key")
    }
}

impl<Q: ?Sized + Hash + Eq> std::ops::IndexMut<&Q> for Map
where
    String: Borrow<Q>,
{
    fn index_mut(&mut self, key: &Q) -> &mut Value {
        self.get_mut(key).expect("no entry found for key")
    }
}
