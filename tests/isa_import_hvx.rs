//! Descriptions imported from QEMU's HVX definitions (`harrow isa import --vendor hexagon`):
//! the committed file is what the importer writes today, every imported description agrees
//! with qemu-hexagon, and those with a hand-written counterpart are proved equal to it.

mod common;

use harrow::targets::hvx;

const COMMITTED: &str = "src/targets/hvx/imported/hexagon.isa";

fn committed() -> harrow::isa::Isa {
    common::load_committed("hvx", COMMITTED)
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
    common::require_tools(&[("clang-19", "clang-19")]);
    let Some(report) = imported() else { return };
    let hand = hvx::hand().unwrap_or_else(|d| panic!("{d}"));
    common::assert_imports_agree_with_hand(&report.entries, hand, 150, "Q6_Vub_vadd_VubVub_sat");
}

#[test]
fn committed_hexagon_import_is_what_the_importer_writes() {
    if common::shared_or_skip("hexagon import").is_none() {
        return;
    }
    common::require_tools(&[("clang-19", "clang-19")]);
    common::assert_import_is_committed("hexagon", COMMITTED, 300);
}
