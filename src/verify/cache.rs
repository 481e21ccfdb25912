//! The proof cache: hashes of queries the solver proved, one per line, kept in the
//! repository so that CI replays unchanged proofs without the solver.
//!
//! A key is the SHA-256 of the solver's name and the full query text, so any change to a
//! rule, its instantiation, the encoding or the solver makes a new key. Only proofs are
//! stored: a counterexample is a failure to fix, and a timeout should be tried again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A set of proved query hashes, optionally backed by a file.
#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    keys: BTreeSet<String>,
    used: BTreeSet<String>,
    added: usize,
    /// Enumerations of constant domains: query hash to the assignments, or `None` when
    /// there were too many to enumerate.
    enums: BTreeMap<String, Option<Vec<Assignment>>>,
}

/// Values of constant wildcards.
pub type Assignment = BTreeMap<u32, i128>;

fn show_assignment(a: &Assignment) -> String {
    a.iter()
        .map(|(k, v)| format!("c{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn read_assignment(s: &str) -> Option<Assignment> {
    let mut a = BTreeMap::new();
    if s.is_empty() {
        return Some(a);
    }
    for part in s.split(',') {
        let (k, v) = part.split_once('=')?;
        a.insert(k.strip_prefix('c')?.parse().ok()?, v.parse().ok()?);
    }
    Some(a)
}

const HEADER: &str = "# harrow proof cache: SHA-256 of (solver, SMT query) for every proved query, and\n# `HASH enum ...` for enumerated constant domains. Regenerate with `harrow verify`;\n# safe to delete (everything is then proved again).\n";

impl Cache {
    /// An empty cache that is not saved anywhere.
    pub fn in_memory() -> Cache {
        Cache::default()
    }

    /// The cache in `path` (empty if the file does not exist yet).
    pub fn load(path: &Path) -> Result<Cache, String> {
        let mut keys = BTreeSet::new();
        let mut enums = BTreeMap::new();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                for line in text.lines() {
                    let l = line.trim();
                    if l.is_empty() || l.starts_with('#') {
                        continue;
                    }
                    let bad = || format!("{}: `{l}` is not a cache entry", path.display());
                    let (key, rest) = l.split_once(' ').unwrap_or((l, ""));
                    if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(bad());
                    }
                    if rest.is_empty() {
                        keys.insert(key.to_string());
                    } else if let Some(list) = rest.strip_prefix("enum") {
                        let list = list.trim_start();
                        let value = if list == "*" {
                            None
                        } else if list == "-" || list.is_empty() {
                            // No admissible constants (written `-`; a bare `enum` is what
                            // an earlier version wrote, trimmed).
                            Some(Vec::new())
                        } else {
                            Some(
                                list.split(';')
                                    .map(read_assignment)
                                    .collect::<Option<Vec<_>>>()
                                    .ok_or_else(bad)?,
                            )
                        };
                        enums.insert(key.to_string(), value);
                    } else {
                        return Err(bad());
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
        Ok(Cache {
            path: Some(path.to_path_buf()),
            keys,
            used: BTreeSet::new(),
            added: 0,
            enums,
        })
    }

    /// The key of a query.
    pub fn key(solver: &str, query: &str) -> String {
        let mut h = Sha256::new();
        h.update(solver.as_bytes());
        h.update(b"\n");
        h.update(query.as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// True if the query was proved before (and marks the entry as used by this run).
    pub fn contains(&mut self, key: &str) -> bool {
        let hit = self.keys.contains(key);
        if hit {
            self.used.insert(key.to_string());
        }
        hit
    }

    /// Records a proof.
    pub fn insert(&mut self, key: String) {
        self.used.insert(key.clone());
        if self.keys.insert(key) {
            self.added += 1;
        }
    }

    /// A recorded enumeration of constant assignments (`Some(None)`: too many).
    pub fn enumeration(&mut self, key: &str) -> Option<Option<Vec<Assignment>>> {
        let r = self.enums.get(key).cloned();
        if r.is_some() {
            self.used.insert(key.to_string());
        }
        r
    }

    /// Records an enumeration.
    pub fn insert_enumeration(&mut self, key: String, value: Option<Vec<Assignment>>) {
        self.used.insert(key.clone());
        if self.enums.insert(key, value).is_none() {
            self.added += 1;
        }
    }

    /// Number of proofs recorded.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Proofs added since loading.
    pub fn added(&self) -> usize {
        self.added
    }

    /// Writes the cache back to its file (sorted, so diffs stay small). With `prune`, keeps
    /// only the entries this run used, dropping proofs of queries that no longer exist.
    pub fn save(&self, prune: bool) -> Result<(), String> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut text = HEADER.to_string();
        let mut lines: Vec<String> = Vec::new();
        for k in &self.keys {
            if !prune || self.used.contains(k) {
                lines.push(k.clone());
            }
        }
        for (k, v) in &self.enums {
            if !prune || self.used.contains(k) {
                let list = match v {
                    None => "*".to_string(),
                    Some(a) if a.is_empty() => "-".to_string(),
                    Some(a) => a.iter().map(show_assignment).collect::<Vec<_>>().join(";"),
                };
                lines.push(format!("{k} enum {list}"));
            }
        }
        lines.sort();
        for l in lines {
            text.push_str(&l);
            text.push('\n');
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A constant domain with no admissible constant is written and read back as empty,
    /// beside a full one and one too large to list.
    #[test]
    fn an_empty_enumeration_round_trips() {
        let dir = crate::isa::toolchain::scratch("cache-test");
        let path = dir.join("cache.txt");
        let mut cache = Cache::load(&path).expect("a missing cache is empty");
        let one: Assignment = [(0, 3)].into_iter().collect();
        cache.insert_enumeration("a".repeat(64), Some(Vec::new()));
        cache.insert_enumeration("b".repeat(64), Some(vec![one.clone()]));
        cache.insert_enumeration("c".repeat(64), None);
        cache.save(false).expect("saved");
        let mut read = Cache::load(&path).expect("what was saved loads");
        assert_eq!(read.enumeration(&"a".repeat(64)), Some(Some(Vec::new())));
        assert_eq!(read.enumeration(&"b".repeat(64)), Some(Some(vec![one])));
        assert_eq!(read.enumeration(&"c".repeat(64)), Some(None));
    }
}
