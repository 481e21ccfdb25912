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

/// The hardware check of `instrs` on `target` (`cases` operand sets per immediate, from
/// `seed`): prints the counts and fails listing every description the machine disagrees
/// with, or when fewer than `min_intrinsics` distinct intrinsics were checked.
pub fn assert_descriptions_match(
    tag: &str,
    instrs: &[std::sync::Arc<harrow::isa::Instr>],
    target: &dyn harrow::isa::target::Target,
    cases: usize,
    seed: u64,
    min_intrinsics: usize,
) {
    let dir = std::env::temp_dir().join(format!("harrow-isa-{tag}-{}", std::process::id()));
    let report = harrow::isa::hwcheck::check(instrs, target, cases, seed, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let intrinsics: std::collections::BTreeSet<&str> =
        instrs.iter().map(|i| i.intrinsic.as_str()).collect();
    println!(
        "{} instructions ({} distinct intrinsics), {} calls checked",
        report.instructions,
        intrinsics.len(),
        report.calls
    );
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{}",
        report.mismatches.len(),
        report.mismatch_text()
    );
    assert!(
        intrinsics.len() >= min_intrinsics,
        "{} intrinsics",
        intrinsics.len()
    );
    assert_eq!(report.instructions, instrs.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A description (`text`, one line of family `family`) that misstates what the machine
/// computes must be caught, naming the intrinsic `intrinsic` and the description's line.
pub fn assert_wrong_description_caught(
    family: &str,
    text: &str,
    intrinsic: &str,
    target: &dyn harrow::isa::target::Target,
) {
    let src = harrow::diag::Source::new("wrong.isa", text);
    let isa = harrow::isa::Isa::load(family, &[src]).unwrap_or_else(|d| panic!("{d}"));
    let dir =
        std::env::temp_dir().join(format!("harrow-isa-{family}-wrong-{}", std::process::id()));
    let report = harrow::isa::hwcheck::check(&isa.instrs, target, 16, 1, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.mismatches.is_empty());
    let m = &report.mismatches[0];
    assert!(
        m.instr.contains(intrinsic) && m.location == "wrong.isa:1",
        "{m:?}"
    );
    assert_ne!(m.machine, m.described);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fails with how to install it unless each (tool, Debian package) is installed.
pub fn require_tools(tools: &[(&str, &str)]) {
    for (tool, pkg) in tools {
        if let Err(e) = harrow::isa::toolchain::require(tool, pkg) {
            panic!("{e}");
        }
    }
}
