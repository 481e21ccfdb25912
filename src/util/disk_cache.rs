//! A cache of bytes on disk, keyed by the build of harrow that wrote them.
//!
//! harrow keeps the tables it builds at start (see `rules::snapshot`) in a cache directory:
//! `$HARROW_CACHE_DIR`, else `$XDG_CACHE_HOME/harrow`, else `$HOME/.cache/harrow`.
//! `HARROW_CACHE=off` turns it off. An entry is read only by a harrow built from the same
//! sources (a fingerprint taken at build time, `build.rs`), and only if its header and
//! checksum agree; anything else is ignored and rebuilt. Writing is best effort and atomic
//! (a temporary file renamed into place), so processes running side by side never read a
//! half-written entry; a few entries per name are kept, the most recently written.

use std::io::Write;
use std::path::PathBuf;

/// Identifies the build: the sources' fingerprint and the entry format.
const KEY: &str = concat!(env!("HARROW_SOURCE_KEY"), "-v1");

/// The bytes an entry starts with.
const MAGIC: &[u8; 8] = b"HRWCACHE";

/// How many entries of one name are kept (several builds of harrow may share a cache).
const KEEP: usize = 4;

/// The cache directory, or `None` when caching is off or no directory is known.
pub fn dir() -> Option<PathBuf> {
    if std::env::var("HARROW_CACHE").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    let nonempty = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = nonempty("HARROW_CACHE_DIR") {
        return Some(d);
    }
    if let Some(d) = nonempty("XDG_CACHE_HOME") {
        return Some(d.join("harrow"));
    }
    nonempty("HOME").map(|h| h.join(".cache").join("harrow"))
}

fn path(dir: &std::path::Path, name: &str) -> PathBuf {
    dir.join(format!("{name}-{KEY}.bin"))
}

/// A 64-bit FNV-1a hash of `bytes`, eight at a time (a check against damaged files, not
/// against tampering: the cache is the user's own).
fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h ^= u64::from_le_bytes(w.try_into().expect("eight bytes"));
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    for &b in words.remainder() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The entry `name` written by this build, if there is one and it is intact.
pub fn read(name: &str) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path(&dir()?, name)).ok()?;
    // The payload is the entry's tail: drop the header in place rather than copy it.
    let header = bytes.len() - unwrap(&bytes)?.len();
    bytes.drain(..header);
    Some(bytes)
}

/// The payload of an entry, if its header is this build's and its checksum agrees.
fn unwrap(bytes: &[u8]) -> Option<&[u8]> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let rest = rest.strip_prefix(KEY.as_bytes())?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let (sum, payload) = rest.split_first_chunk::<8>()?;
    (u64::from_le_bytes(*len) == payload.len() as u64
        && u64::from_le_bytes(*sum) == checksum(payload))
    .then_some(payload)
}

/// The bytes of an entry holding `payload`.
fn wrap(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(KEY.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Stores `payload` as the entry `name` of this build (best effort: a cache that cannot be
/// written only costs time), and removes the oldest entries of `name` beyond a few.
pub fn write(name: &str, payload: &[u8]) {
    let Some(dir) = dir() else {
        return;
    };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    // One temporary name per writer (process and call), so writers never share a file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}-{}-{n}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(&wrap(payload)))
        .and_then(|()| std::fs::rename(&tmp, path(&dir, name)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    prune(&dir, name);
}

/// Removes all but the [`KEEP`] most recently written entries of `name`.
fn prune(dir: &std::path::Path, name: &str) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{name}-");
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = read
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with(&prefix) && n.ends_with(".bin")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (_, p) in entries.into_iter().skip(KEEP) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_entries_of_a_name_are_kept() {
        let dir = std::env::temp_dir().join(format!("harrow-prune-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let now = std::time::SystemTime::now();
        for k in 0..6u64 {
            let f = std::fs::File::create(dir.join(format!("tables-t-{k}.bin"))).unwrap();
            f.set_modified(now - std::time::Duration::from_secs(100 * k))
                .unwrap();
        }
        std::fs::write(dir.join("tables-u-9.bin"), b"another name").unwrap();
        prune(&dir, "tables-t");
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "tables-t-0.bin",
                "tables-t-1.bin",
                "tables-t-2.bin",
                "tables-t-3.bin",
                "tables-u-9.bin"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entries_are_read_only_when_intact() {
        let payload: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let bytes = wrap(&payload);
        assert_eq!(unwrap(&bytes), Some(&payload[..]));
        // A flipped bit anywhere, a cut, or another build's key: ignored.
        for i in [0, 9, MAGIC.len() + KEY.len() + 3, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert_eq!(unwrap(&bad), None, "flipped byte {i}");
        }
        assert_eq!(unwrap(&bytes[..bytes.len() - 1]), None);
        let other = [
            &MAGIC[..],
            b"0000000000000000-v0",
            &bytes[MAGIC.len() + KEY.len()..],
        ]
        .concat();
        assert_eq!(unwrap(&other), None);
    }
}
