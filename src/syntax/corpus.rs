//! The Rake corpora in the shared folder: listing and importing their specs.

use std::path::{Path, PathBuf};

use crate::diag::Source;
use crate::syntax::rake::{RakeSpec, import};

/// The corpus folders, in a fixed order.
pub const CORPORA: [&str; 2] = ["rake-hvx", "rake-arm"];

/// Every `.sexp` spec of one corpus, sorted by file name.
pub fn spec_paths(shared: &Path, corpus: &str) -> Vec<PathBuf> {
    let dir = shared.join("corpus").join(corpus);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "sexp"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

/// Imports every spec of both corpora; specs that fail to import are returned as errors.
pub fn load_all(shared: &Path) -> Vec<(PathBuf, Result<RakeSpec, String>)> {
    let mut out = Vec::new();
    for c in CORPORA {
        for p in spec_paths(shared, c) {
            let r = std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    import(&Source::new(p.display().to_string(), t)).map_err(|d| d.render())
                });
            out.push((p, r));
        }
    }
    out
}
