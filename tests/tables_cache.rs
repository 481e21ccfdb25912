//! The tables cache end to end: the first `harrow compile` writes the built tables, later
//! ones read them and print the same C, and a damaged or foreign entry is ignored (rebuilt
//! and rewritten), never read.

use std::path::Path;
use std::process::Command;

fn compile(cache: &Path, kernel: &str, target: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_harrow"))
        .args(["compile", kernel, "--target", target, "--emit", "c"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HARROW_CACHE_DIR", cache)
        .env_remove("HARROW_CACHE")
        .output()
        .expect("the harrow binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("C is text")
}

fn entries(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn cached_tables_give_the_same_code_and_damaged_entries_are_rebuilt() {
    let cache = std::env::temp_dir().join(format!("harrow-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let kernel = "benchmarks/gaussian3x3.hk";
    let target = "arm-neon";

    let first = compile(&cache, kernel, target);
    let names = entries(&cache);
    assert_eq!(
        names.len(),
        2,
        "the lifting rules and the target's tables: {names:?}"
    );
    assert!(names[0].starts_with("lift-") && names[1].starts_with("tables-arm-neon-"));
    let table = cache.join(&names[1]);
    let written = std::fs::read(&table).unwrap();

    // Read back: the same C, and the entry is not rewritten.
    assert_eq!(compile(&cache, kernel, target), first);
    assert!(
        std::fs::read(&table).unwrap() == written,
        "the entry changed"
    );

    // A flipped byte in the middle (the checksum catches it), a truncated entry, an entry
    // of another build: each is ignored, the tables rebuilt and the entry written again.
    let mut flipped = written.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let damaged: [(&str, Vec<u8>); 3] = [
        ("flipped", flipped),
        ("truncated", written[..written.len() / 3].to_vec()),
        ("foreign", b"HRWCACHE0000000000000000-v1".to_vec()),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&table, bytes).unwrap();
        assert_eq!(compile(&cache, kernel, target), first, "{what}");
        // Written again, byte for byte: the tables' bytes do not depend on the process.
        assert!(
            std::fs::read(&table).unwrap() == written,
            "{what}: not rewritten as before"
        );
    }

    // Off: nothing is read or written.
    let off = cache.join("off");
    let out = Command::new(env!("CARGO_BIN_EXE_harrow"))
        .args(["compile", kernel, "--target", target, "--emit", "c"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HARROW_CACHE_DIR", &off)
        .env("HARROW_CACHE", "off")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), first);
    assert!(!off.exists());
    let _ = std::fs::remove_dir_all(&cache);
}
