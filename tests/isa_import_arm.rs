//! Descriptions imported from the Sail model of Arm's Advanced SIMD instructions
//! (`harrow isa import --vendor arm`): the committed file is what the importer writes today,
//! every imported description agrees with qemu-aarch64, and those with a hand-written
//! counterpart are proved equal to it.

mod common;

use harrow::targets::arm;

const COMMITTED: &str = "src/targets/arm/imported/arm.isa";

fn committed() -> harrow::isa::Isa {
    common::load_committed("arm", COMMITTED)
}

#[test]
fn imported_arm_descriptions_match_qemu() {
    common::require_tools(&[("clang-19", "clang-19"), ("qemu-aarch64", "qemu-user")]);
    let isa = committed();
    common::assert_descriptions_match("arm-imported", &isa.instrs, &arm::Neon, 16, 21, 600);
}

/// The imported descriptions, straight from the vendor data (`None` without `../shared`).
fn imported() -> Option<harrow::isa::import::Report> {
    let shared = common::shared_or_skip("arm import")?;
    let ctx = harrow::isa::import::ImportContext {
        vendor_dir: &shared.join("vendor"),
    };
    Some(arm::import::import(&ctx).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn imported_and_hand_written_arm_descriptions_agree() {
    common::require_tools(&[("llvm-mc-19", "llvm-19")]);
    let Some(report) = imported() else { return };
    let hand = arm::hand().unwrap_or_else(|d| panic!("{d}"));
    common::assert_imports_agree_with_hand(&report.entries, hand, 300, "vqaddq_s8");
}

#[test]
fn committed_arm_import_is_what_the_importer_writes() {
    if common::shared_or_skip("arm import").is_none() {
        return;
    }
    common::require_tools(&[("llvm-mc-19", "llvm-19")]);
    common::assert_import_is_committed("arm", COMMITTED, 1000);
}
