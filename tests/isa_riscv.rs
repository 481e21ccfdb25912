//! Every RISC-V Vector instruction description agrees with qemu-riscv64
//! (`-cpu rv64,v=true,vlen=128`).

use harrow::isa::{hwcheck, toolchain::require as require_tool};
use harrow::targets::riscv_v;

fn tools() {
    for (tool, pkg) in [
        ("clang-19", "clang-19"),
        ("qemu-riscv64", "qemu-user"),
        ("riscv64-linux-gnu-gcc", "gcc-riscv64-linux-gnu"),
    ] {
        if let Err(e) = require_tool(tool, pkg) {
            panic!("{e}");
        }
    }
}

#[test]
fn every_riscv_description_matches_qemu() {
    tools();
    let isa = riscv_v::all().unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-riscv-{}", std::process::id()));
    let report = hwcheck::check(&isa.instrs, &riscv_v::RiscvV, 24, 13, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
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
fn a_wrong_riscv_description_is_caught() {
    tools();
    // vsaddu saturates; describing it as a wrapping add must be caught.
    let src = harrow::diag::Source::new(
        "wrong.isa",
        "instr vsaddu.vv __riscv_vsaddu_vv_u8m1(a: u8x16, b: u8x16, vl: imm(16..16)) -> u8x16 features v cost 2 1 = a + b\n",
    );
    let isa = harrow::isa::Isa::load("riscv", &[src]).unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-riscv-wrong-{}", std::process::id()));
    let report = hwcheck::check(&isa.instrs, &riscv_v::RiscvV, 16, 1, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.mismatches.is_empty());
    let m = &report.mismatches[0];
    assert!(
        m.instr.contains("__riscv_vsaddu_vv_u8m1") && m.location == "wrong.isa:1",
        "{m:?}"
    );
    assert_ne!(m.machine, m.described);
    let _ = std::fs::remove_dir_all(&dir);
}
