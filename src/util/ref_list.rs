//! Shared items written as indices while a structure is (de)serialized.
//!
//! The tables cache (`rules::snapshot`) writes many rules that share a few sources and
//! instructions. Each shared kind has a list, installed per thread for the duration of
//! (de)serialization: writing an item writes its index in the list, reading an index gives
//! the item back. The serde `with` modules of each kind (`ir::instr::instr_ref`,
//! `rules::snapshot::source_ref`) are thin wrappers around these functions.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use std::thread::LocalKey;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Items in the order written, and the index of each by its key.
pub struct RefList<T, K> {
    /// The items, in the order they are written.
    pub list: Vec<Arc<T>>,
    index: HashMap<K, u32>,
    key: fn(&Arc<T>) -> K,
}

impl<T, K: Hash + Eq> RefList<T, K> {
    /// An empty list whose items are told apart by `key`.
    pub fn new(key: fn(&Arc<T>) -> K) -> Self {
        RefList {
            list: Vec::new(),
            index: HashMap::new(),
            key,
        }
    }

    /// Adds `item` (once) and returns its index.
    pub fn add(&mut self, item: &Arc<T>) -> u32 {
        let key = (self.key)(item);
        if let Some(&k) = self.index.get(&key) {
            return k;
        }
        let k = self.list.len() as u32;
        self.index.insert(key, k);
        self.list.push(item.clone());
        k
    }
}

/// A thread's installed list of one kind.
pub type Installed<T, K> = RefCell<Option<RefList<T, K>>>;

/// Runs `f` with `list` installed in `slot` for this thread, and gives the list back (grown
/// by what `f` added).
pub fn with_list<T: 'static, K: 'static, R>(
    slot: &'static LocalKey<Installed<T, K>>,
    list: RefList<T, K>,
    f: impl FnOnce() -> R,
) -> (R, RefList<T, K>) {
    let key = list.key;
    slot.with(|c| *c.borrow_mut() = Some(list));
    let r = f();
    let list = slot.with(|c| c.borrow_mut().take());
    (
        r,
        list.unwrap_or(RefList {
            list: Vec::new(),
            index: HashMap::new(),
            key,
        }),
    )
}

/// Adds `item` to the list installed in `slot` (reading: the items in the order written).
pub fn push<T: 'static, K: Hash + Eq + 'static>(
    slot: &'static LocalKey<Installed<T, K>>,
    item: Arc<T>,
) -> Result<(), String> {
    slot.with(|c| match c.borrow_mut().as_mut() {
        Some(l) => {
            l.add(&item);
            Ok(())
        }
        None => Err("no list is installed".into()),
    })
}

/// Writes `item` as its index in the list installed in `slot`; `what` names it in the error
/// when it is not there.
pub fn write<T: 'static, K: Hash + Eq + 'static, S: Serializer>(
    slot: &'static LocalKey<Installed<T, K>>,
    item: &Arc<T>,
    what: &str,
    s: S,
) -> Result<S::Ok, S::Error> {
    let k = slot.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|l| l.index.get(&(l.key)(item)).copied())
    });
    match k {
        Some(k) => k.serialize(s),
        None => Err(serde::ser::Error::custom(format!(
            "{what} is not in the list being written"
        ))),
    }
}

/// Reads an index into the list installed in `slot`; `kind` names the items in the error.
pub fn read<'de, T: 'static, K: 'static, D: Deserializer<'de>>(
    slot: &'static LocalKey<Installed<T, K>>,
    kind: &str,
    d: D,
) -> Result<Arc<T>, D::Error> {
    let k = u32::deserialize(d)? as usize;
    slot.with(|c| c.borrow().as_ref().and_then(|l| l.list.get(k).cloned()))
        .ok_or_else(|| serde::de::Error::custom(format!("no {kind} number {k}")))
}
