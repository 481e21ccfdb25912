//! Descriptions imported from Intel's intrinsics data (`harrow isa import --vendor intel`):
//! the committed file is what the importer writes today, and every imported description
//! agrees with the host CPU.

use harrow::isa::{hwcheck, toolchain::require as require_tool};
use harrow::targets::x86;

const COMMITTED: &str = "src/targets/x86/imported/intel.isa";

fn committed() -> harrow::isa::Isa {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let src = harrow::diag::Source::new(COMMITTED, text);
    harrow::isa::Isa::load("x86", &[src]).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn imported_intel_descriptions_match_the_host_cpu() {
    if let Err(e) = require_tool("clang-19", "clang-19") {
        panic!("{e}");
    }
    let isa = committed();
    let dir = std::env::temp_dir().join(format!("harrow-isa-import-{}", std::process::id()));
    let (variant, instrs) = if x86::host_has_avx512() {
        (x86::Variant::Avx512, isa.instrs.clone())
    } else {
        let v = x86::Variant::Avx2;
        let run = isa.with_features(&v.features()).instrs;
        println!(
            "skipped: {} of {} imported descriptions need AVX-512, which this machine cannot run",
            isa.instrs.len() - run.len(),
            isa.instrs.len()
        );
        (v, run)
    };
    let report = hwcheck::check(&instrs, &variant, 24, 11, &dir).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} imported instructions, {} calls checked",
        report.instructions, report.calls
    );
    assert!(
        report.instructions >= 100,
        "{} checked",
        report.instructions
    );
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{}",
        report.mismatches.len(),
        report.mismatch_text()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The imported descriptions, straight from the vendor data (`None` without `../shared`).
fn imported() -> Option<harrow::isa::import::Report> {
    let Some(shared) = harrow::util::shared::shared_dir() else {
        println!("skipped: ../shared not found");
        return None;
    };
    let ctx = harrow::isa::import::ImportContext {
        vendor_dir: &shared.join("vendor"),
    };
    Some(x86::import::import(&ctx).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn imported_and_hand_written_descriptions_agree() {
    if let Err(e) = harrow::verify::solver_available("z3") {
        panic!("{e}");
    }
    let Some(report) = imported() else { return };
    let hand = x86::all().unwrap_or_else(|d| panic!("{d}"));
    let opts = harrow::verify::Options::default();
    let checks = harrow::verify::crosscheck::cross_check(&report.entries, hand, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} imported descriptions compared with hand-written ones",
        checks.len()
    );
    assert!(checks.len() >= 200, "{} compared", checks.len());
    let bad: Vec<_> = checks
        .iter()
        .filter(|c| !matches!(c.verdict, harrow::verify::Verdict::Proved))
        .collect();
    assert!(bad.is_empty(), "{} disagreements: {bad:#?}", bad.len());

    // The check can fail: a saturating add imported as a wrapping one is refuted.
    let mut wrong = report
        .entries
        .iter()
        .find(|e| e.intrinsic == "_mm256_adds_epu8")
        .expect("_mm256_adds_epu8 is imported")
        .clone();
    let a = harrow::ir::Expr::var("a", wrong.params[0].1);
    let b = harrow::ir::Expr::var("b", wrong.params[1].1);
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

#[test]
fn committed_import_is_what_the_importer_writes() {
    if harrow::util::shared::shared_dir().is_none() {
        println!("skipped: ../shared not found");
        return;
    }
    let (report, text) = harrow::cli::isa::import("intel", None).unwrap_or_else(|e| panic!("{e}"));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let skipped = harrow::isa::import::write_skips(&report.skipped);
    for (path, fresh) in [
        (COMMITTED.to_string(), text),
        (COMMITTED.replace(".isa", ".skipped.tsv"), skipped),
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
                 `harrow isa import --vendor intel --out src/targets/x86/imported`",
                first + 1
            );
        }
    }
    assert!(
        report.entries.len() >= 1400,
        "{} imported",
        report.entries.len()
    );
}

#[test]
fn imported_descriptions_group_into_classes() {
    let all = harrow::cli::isa::family_classes(Some("x86-avx2")).unwrap_or_else(|e| panic!("{e}"));
    let x86 = &all[0];
    println!(
        "{} descriptions in {} classes",
        x86.descriptions,
        x86.classes.len()
    );
    assert!(
        x86.classes.len() * 3 < x86.descriptions,
        "{} classes",
        x86.classes.len()
    );
    let total: usize = x86.classes.iter().map(|c| c.members.len()).sum();
    assert_eq!(total, x86.descriptions);
    // Wrapping adds of every width and register size are one class; a saturating add is not
    // in it.
    let class_of = |name: &str| {
        x86.classes
            .iter()
            .position(|c| c.members.iter().any(|m| m.starts_with(&format!("{name} "))))
            .unwrap_or_else(|| panic!("{name} is in no class"))
    };
    let add = class_of("_mm_add_epi8");
    for other in ["_mm256_add_epi16", "_mm512_add_epi32", "_mm_add_epi64"] {
        assert_eq!(class_of(other), add, "{other}");
    }
    assert_ne!(class_of("_mm256_adds_epi16"), add);
}
