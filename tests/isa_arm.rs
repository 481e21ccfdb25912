//! Every Arm Neon instruction description agrees with qemu-aarch64 (`-cpu max`).

use harrow::isa::{hwcheck, toolchain::require as require_tool};
use harrow::targets::arm;

fn tools() {
    for (tool, pkg) in [("clang-19", "clang-19"), ("qemu-aarch64", "qemu-user")] {
        if let Err(e) = require_tool(tool, pkg) {
            panic!("{e}");
        }
    }
}

#[test]
fn every_arm_description_matches_qemu() {
    tools();
    let isa = arm::all().unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-arm-{}", std::process::id()));
    let report =
        hwcheck::check(&isa.instrs, &arm::Neon, 24, 11, &dir).unwrap_or_else(|e| panic!("{e}"));
    let msg = report.mismatch_text();
    let intrinsics: std::collections::BTreeSet<&str> =
        isa.instrs.iter().map(|i| i.intrinsic.as_str()).collect();
    println!(
        "{} instructions ({} distinct intrinsics), {} calls checked",
        report.instructions,
        intrinsics.len(),
        report.calls
    );
    assert!(intrinsics.len() >= 150, "{} intrinsics", intrinsics.len());
    assert_eq!(report.instructions, isa.instrs.len());
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{msg}",
        report.mismatches.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_arm_description_is_caught() {
    tools();
    // uqadd saturates; describing it as a wrapping add must be caught.
    let src = harrow::diag::Source::new(
        "wrong.isa",
        "instr uqadd vqaddq_u8(a: u8x16, b: u8x16) -> u8x16 features neon cost 2 0.5 = a + b\n",
    );
    let isa = harrow::isa::Isa::load("arm", &[src]).unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-arm-wrong-{}", std::process::id()));
    let report =
        hwcheck::check(&isa.instrs, &arm::Neon, 16, 1, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.mismatches.is_empty());
    let m = &report.mismatches[0];
    assert!(
        m.instr.contains("vqaddq_u8") && m.location == "wrong.isa:1",
        "{m:?}"
    );
    assert_ne!(m.machine, m.described);
    let _ = std::fs::remove_dir_all(&dir);
}
