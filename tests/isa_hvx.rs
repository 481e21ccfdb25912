//! Every HVX instruction description agrees with qemu-hexagon.

use harrow::isa::{hwcheck, toolchain::require as require_tool};
use harrow::targets::hvx;

fn tools() {
    for (tool, pkg) in [("clang-19", "clang-19"), ("qemu-hexagon", "qemu-user")] {
        if let Err(e) = require_tool(tool, pkg) {
            panic!("{e}");
        }
    }
}

#[test]
fn every_hvx_description_matches_qemu() {
    tools();
    let isa = hvx::all().unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-hvx-{}", std::process::id()));
    let report =
        hwcheck::check(&isa.instrs, &hvx::Hvx, 24, 11, &dir).unwrap_or_else(|e| panic!("{e}"));
    let msg = report.mismatch_text();
    let intrinsics: std::collections::BTreeSet<&str> =
        isa.instrs.iter().map(|i| i.intrinsic.as_str()).collect();
    println!(
        "{} instructions ({} distinct intrinsics), {} calls checked",
        report.instructions,
        intrinsics.len(),
        report.calls
    );
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{msg}",
        report.mismatches.len()
    );
    assert!(intrinsics.len() >= 150, "{} intrinsics", intrinsics.len());
    assert_eq!(report.instructions, isa.instrs.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_hvx_description_is_caught() {
    tools();
    // vadd:sat saturates; describing it as a wrapping add must be caught.
    let src = harrow::diag::Source::new(
        "wrong.isa",
        "instr vadd Q6_Vub_vadd_VubVub_sat(a: u8x128, b: u8x128) -> u8x128 features hvx cost 1 0.5 = a + b\n",
    );
    let isa = harrow::isa::Isa::load("hvx", &[src]).unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-hvx-wrong-{}", std::process::id()));
    let report =
        hwcheck::check(&isa.instrs, &hvx::Hvx, 16, 1, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.mismatches.is_empty());
    let m = &report.mismatches[0];
    assert!(
        m.instr.contains("Q6_Vub_vadd_VubVub_sat") && m.location == "wrong.isa:1",
        "{m:?}"
    );
    assert_ne!(m.machine, m.described);
    let _ = std::fs::remove_dir_all(&dir);
}
