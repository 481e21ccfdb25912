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

/// Every imported description of `entries` with a hand-written counterpart in `hand` is
/// proved equal to it (at least `min` compared), and the check can fail: `intrinsic`'s
/// imported semantics replaced by a wrapping add of its two operands is refuted.
pub fn assert_imports_agree_with_hand(
    entries: &[harrow::isa::import::Entry],
    hand: &harrow::isa::Isa,
    min: usize,
    intrinsic: &str,
) {
    if let Err(e) = harrow::verify::solver_available("z3") {
        panic!("{e}");
    }
    let opts = harrow::verify::Options::default();
    let checks = harrow::verify::crosscheck::cross_check(entries, hand, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} imported descriptions compared with hand-written ones",
        checks.len()
    );
    assert!(checks.len() >= min, "{} compared", checks.len());
    let bad: Vec<_> = checks
        .iter()
        .filter(|c| !matches!(c.verdict, harrow::verify::Verdict::Proved))
        .collect();
    assert!(bad.is_empty(), "{} disagreements: {bad:#?}", bad.len());
    let mut wrong = entries
        .iter()
        .find(|e| e.intrinsic == intrinsic)
        .unwrap_or_else(|| panic!("{intrinsic} is imported"))
        .clone();
    let a = harrow::ir::Expr::var(wrong.params[0].0.as_str(), wrong.params[0].1);
    let b = harrow::ir::Expr::var(wrong.params[1].0.as_str(), wrong.params[1].1);
    wrong.semantics = harrow::ir::mk(harrow::ir::Op::Add, vec![a, b]);
    let checks = harrow::verify::crosscheck::cross_check(&[wrong], hand, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(
            checks[0].verdict,
            harrow::verify::Verdict::Counterexample(_)
        ),
        "{checks:?}"
    );
}

/// `harrow isa import --vendor VENDOR` writes what is committed at `committed` (the `.isa`
/// file, and the `.skipped.tsv` beside it); at least `min` descriptions are imported.
pub fn assert_import_is_committed(vendor: &str, committed: &str, min: usize) {
    let (report, text) = harrow::cli::isa::import(vendor, None).unwrap_or_else(|e| panic!("{e}"));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let skipped = harrow::isa::import::write_skips(&report.skipped);
    let dir = std::path::Path::new(committed)
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    for (path, fresh) in [
        (committed.to_string(), text),
        (committed.replace(".isa", ".skipped.tsv"), skipped),
    ] {
        let old = std::fs::read_to_string(root.join(&path)).unwrap_or_default();
        if old != fresh {
            let first = old
                .lines()
                .zip(fresh.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(old.lines().count().min(fresh.lines().count()));
            panic!(
                "{path} is stale (first difference at line {}): regenerate it with \
                 `harrow isa import --vendor {vendor} --out {dir}`",
                first + 1
            );
        }
    }
    assert!(
        report.entries.len() >= min,
        "{} imported",
        report.entries.len()
    );
}

/// The committed imported descriptions at `path` (in the repository) of `family`.
pub fn load_committed(family: &str, path: &str) -> harrow::isa::Isa {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    let src = harrow::diag::Source::new(path, text);
    harrow::isa::Isa::load(family, &[src]).unwrap_or_else(|d| panic!("{d}"))
}

/// Runs the `harrow` binary in the repository with `args`: its exit code (-1 when killed by
/// a signal), standard output and standard error.
pub fn harrow_code(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harrow"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the harrow binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`harrow_code`], with whether the command succeeded in place of its exit code.
pub fn harrow(args: &[&str]) -> (bool, String, String) {
    let (code, out, err) = harrow_code(args);
    (code == 0, out, err)
}
