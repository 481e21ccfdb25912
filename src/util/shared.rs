//! Locating the shared data folder (`../shared` beside the checkout, or `$HARROW_SHARED`).

use std::path::PathBuf;

/// The shared folder if it exists: `$HARROW_SHARED`, else `../shared` relative to the crate
/// root, else `../shared` relative to the current directory.
pub fn shared_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HARROW_SHARED") {
        let p = PathBuf::from(p);
        return p.is_dir().then_some(p);
    }
    let candidates = [
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        PathBuf::from("../shared"),
    ];
    candidates.into_iter().find(|p| p.is_dir())
}
