//! Every Arm Neon instruction description agrees with qemu-aarch64 (`-cpu max`).

mod common;

use harrow::targets::arm;

fn tools() {
    common::require_tools(&[("clang-19", "clang-19"), ("qemu-aarch64", "qemu-user")]);
}

#[test]
fn every_arm_description_matches_qemu() {
    tools();
    let isa = arm::all().unwrap_or_else(|d| panic!("{d}"));
    common::assert_descriptions_match("arm", &isa.instrs, &arm::Neon, 24, 11, 150);
}

#[test]
fn a_wrong_arm_description_is_caught() {
    tools();
    // uqadd saturates; describing it as a wrapping add must be caught.
    common::assert_wrong_description_caught(
        "arm",
        "instr uqadd vqaddq_u8(a: u8x16, b: u8x16) -> u8x16 features neon cost 2 0.5 = a + b\n",
        "vqaddq_u8",
        &arm::Neon,
    );
}
