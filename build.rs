//! Fingerprints harrow's sources, so that the tables cache (`src/util/disk_cache.rs`) is
//! read only by the build that wrote it: any change to the code or the built-in rule and
//! description files gives a new key.

use std::hash::Hasher;
use std::path::Path;

fn visit(dir: &Path, h: &mut std::collections::hash_map::DefaultHasher) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = read.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            visit(&path, h);
        } else if let Ok(bytes) = std::fs::read(&path) {
            h.write(path.to_string_lossy().as_bytes());
            h.write(&bytes);
        }
    }
}

fn main() {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for dir in ["src", "rules"] {
        println!("cargo:rerun-if-changed={dir}");
        visit(Path::new(dir), &mut h);
    }
    println!("cargo:rerun-if-changed=Cargo.lock");
    if let Ok(lock) = std::fs::read("Cargo.lock") {
        h.write(&lock);
    }
    println!("cargo:rustc-env=HARROW_SOURCE_KEY={:016x}", h.finish());
}
