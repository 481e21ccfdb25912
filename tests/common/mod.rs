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

/// `text` (simd_op_check syntax, `x` vectorized at `w` lanes) lowered for `target`.
pub fn lowered(target: &str, text: &str, w: u32) -> harrow::lower::Lowered {
    let be = harrow::targets::backend(target).unwrap();
    let e = harrow::syntax::opcheck::Entry {
        target: target.into(),
        instr: String::new(),
        width: w,
        expr: text.to_string(),
        line: 1,
        col: 1,
    };
    let x = harrow::syntax::opcheck::parse_entry("test", &e).unwrap_or_else(|d| panic!("{d}"));
    harrow::lower::lower(&x, &be)
}
