//! Descriptions imported from QEMU's HVX definitions (`harrow isa import --vendor hexagon`):
//! the committed file is what the importer writes today, every imported description agrees
//! with qemu-hexagon, and those with a hand-written counterpart are proved equal to it.

mod common;

use harrow::targets::hvx;

const COMMITTED: &str = "src/targets/hvx/imported/hexagon.isa";

fn committed() -> harrow::isa::Isa {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let src = harrow::diag::Source::new(COMMITTED, text);
    harrow::isa::Isa::load("hvx", &[src]).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn imported_hexagon_descriptions_match_qemu() {
    common::require_tools(&[("clang-19", "clang-19"), ("qemu-hexagon", "qemu-user")]);
    let isa = committed();
    common::assert_descriptions_match("hvx-imported", &isa.instrs, &hvx::Hvx, 24, 13, 300);
}

/// The imported descriptions, straight from the vendor data (`None` without `../shared`).
fn imported() -> Option<harrow::isa::import::Report> {
    let shared = common::shared_or_skip("hexagon import")?;
    let ctx = harrow::isa::import::ImportContext {
        vendor_dir: &shared.join("vendor"),
    };
    Some(hvx::import::import(&ctx).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn imported_and_hand_written_hvx_descriptions_agree() {
    if let Err(e) = harrow::verify::solver_available("z3") {
        panic!("{e}");
    }
    common::require_tools(&[("clang-19", "clang-19")]);
    let Some(report) = imported() else { return };
    let hand = hvx::hand().unwrap_or_else(|d| panic!("{d}"));
    let opts = harrow::verify::Options::default();
    let checks = harrow::verify::crosscheck::cross_check(&report.entries, hand, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} imported descriptions compared with hand-written ones",
        checks.len()
    );
    assert!(checks.len() >= 150, "{} compared", checks.len());
    let bad: Vec<_> = checks
        .iter()
        .filter(|c| !matches!(c.verdict, harrow::verify::Verdict::Proved))
        .collect();
    assert!(bad.is_empty(), "{} disagreements: {bad:#?}", bad.len());

    // The check can fail: a saturating add imported as a wrapping one is refuted.
    let mut wrong = report
        .entries
        .iter()
        .find(|e| e.intrinsic == "Q6_Vub_vadd_VubVub_sat")
        .expect("Q6_Vub_vadd_VubVub_sat is imported")
        .clone();
    let a = harrow::ir::Expr::var("vu", wrong.params[0].1);
    let b = harrow::ir::Expr::var("vv", wrong.params[1].1);
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
fn committed_hexagon_import_is_what_the_importer_writes() {
    if common::shared_or_skip("hexagon import").is_none() {
        return;
    }
    common::require_tools(&[("clang-19", "clang-19")]);
    let (report, text) =
        harrow::cli::isa::import("hexagon", None).unwrap_or_else(|e| panic!("{e}"));
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
                 `harrow isa import --vendor hexagon --out src/targets/hvx/imported`",
                first + 1
            );
        }
    }
    assert!(
        report.entries.len() >= 300,
        "{} imported",
        report.entries.len()
    );
    assert_eq!(report.vendor_entries, 530);
}
