//! Every RISC-V Vector instruction description agrees with qemu-riscv64
//! (`-cpu rv64,v=true,vlen=128`).

mod common;

use harrow::targets::riscv_v;

fn tools() {
    common::require_tools(&[
        ("clang-19", "clang-19"),
        ("qemu-riscv64", "qemu-user"),
        ("riscv64-linux-gnu-gcc", "gcc-riscv64-linux-gnu"),
    ]);
}

#[test]
fn every_riscv_description_matches_qemu() {
    tools();
    let isa = riscv_v::all().unwrap_or_else(|d| panic!("{d}"));
    common::assert_descriptions_match("riscv", &isa.instrs, &riscv_v::RiscvV, 24, 13, 150);
}

#[test]
fn a_wrong_riscv_description_is_caught() {
    tools();
    // vsaddu saturates; describing it as a wrapping add must be caught.
    common::assert_wrong_description_caught(
        "riscv",
        "instr vsaddu.vv __riscv_vsaddu_vv_u8m1(a: u8x16, b: u8x16, vl: imm(16..16)) -> u8x16 features v cost 2 1 = a + b\n",
        "__riscv_vsaddu_vv_u8m1",
        &riscv_v::RiscvV,
    );
}
