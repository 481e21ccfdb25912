//! Every HVX instruction description agrees with qemu-hexagon.

mod common;

use harrow::targets::hvx;

fn tools() {
    common::require_tools(&[("clang-19", "clang-19"), ("qemu-hexagon", "qemu-user")]);
}

#[test]
fn every_hvx_description_matches_qemu() {
    tools();
    let isa = hvx::all().unwrap_or_else(|d| panic!("{d}"));
    common::assert_descriptions_match("hvx", &isa.instrs, &hvx::Hvx, 24, 11, 150);
}

#[test]
fn a_wrong_hvx_description_is_caught() {
    tools();
    // vadd:sat saturates; describing it as a wrapping add must be caught.
    common::assert_wrong_description_caught(
        "hvx",
        "instr vadd Q6_Vub_vadd_VubVub_sat(a: u8x128, b: u8x128) -> u8x128 features hvx cost 1 0.5 = a + b\n",
        "Q6_Vub_vadd_VubVub_sat",
        &hvx::Hvx,
    );
}
