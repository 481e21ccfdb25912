//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared data folder, or `None` after printing the skip notice the project promises.
pub fn shared_or_skip(test: &str) -> Option<PathBuf> {
    match harrow::util::shared::shared_dir() {
        Some(p) => Some(p),
        None => {
            eprintln!("skipped: ../shared not found ({test}); set HARROW_SHARED to run it");
            None
        }
    }
}
