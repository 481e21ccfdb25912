//! Golden listings of the instructions chosen for representative expressions
//! (`harrow compile --emit ir`). Re-bless with `UPDATE_EXPECT=1 cargo test --test lower_golden`.

use harrow::lower;
use harrow::syntax::opcheck;

const CASES: &[(&str, u32)] = &[
    // Direct mappings from derived rules.
    ("(uint8)in_u8(x) + (uint8)in_u8(x + 16)", 32),
    (
        "uint8(((uint16((uint8)in_u8(x)) + uint16((uint8)in_u8(x + 16))) + (uint16)1)/(uint16)2)",
        32,
    ),
    (
        "int16(shift_right(int32((int16)in_i16(x))*int32((int16)in_i16(x + 16)), (uint32)16))",
        16,
    ),
    // Emulations from src/targets/x86/lower.rules.
    ("(uint8)absd((uint8)in_u8(x), (uint8)in_u8(x + 16))", 32),
    (
        "(int8)rounding_halving_add((int8)in_i8(x), (int8)in_i8(x + 16))",
        32,
    ),
    (
        "(uint8)halving_add((uint8)in_u8(x), (uint8)in_u8(x + 16))",
        32,
    ),
    (
        "int16(shift_right(int32((int16)in_i16(x))*int32((int16)in_i16(x + 16)), (uint32)17))",
        16,
    ),
    (
        "(int16)saturating_cast(shift_right((int32((int16)in_i16(x))*int32((int16)in_i16(x + 16))) + 16384, (uint32)15))",
        16,
    ),
    ("((uint16)in_u16(x)/(uint16)15)", 16),
    // Pair sums through multiply-add.
    (
        "(int16((uint8)in_u8(2*x)) + int16((uint8)in_u8((2*x) + 1)))",
        16,
    ),
    (
        "(int32((int16)in_i16(x*2)) + int32((int16)in_i16((x*2) + 1)))",
        8,
    ),
    ("(int32((int16)in_i16(x))*int32((int16)in_i16(x + 16)))", 8),
    // Narrowing: packs with the lane-order fix-up, and packus under a bounds predicate
    // (the input is at most 32767, so packus's signed reading is exact).
    ("(int16)saturating_cast(in_i32(x))", 16),
    ("(uint8)saturating_cast((uint16)in_u16(x) >> (uint16)1)", 32),
    ("(uint8)saturating_cast((uint16)in_u16(x))", 32),
    // Byte taps with constant weights summed in 32 bits: tap pairs interleaved, each pair
    // one pmaddwd by the two weights packed in one dword.
    (
        "(int32((uint8)in_u8(x))*(int32)3 + int32((uint8)in_u8(x + 16))*(int32)-5) + (int32((uint8)in_u8(x + 32))*(int32)7 + int32((uint8)in_u8(x + 48))*(int32)2)",
        8,
    ),
    // Products of zero-point-corrected bytes summed in 32 bits (depthwise convolution):
    // the bytes of two taps interleave before the shared subtraction, then one pmaddwd.
    (
        "(int32(int16((uint8)in_u8(x)) - (int16)128)*int32(int16((uint8)in_u8(x + 16)) - (int16)124)) + (int32(int16((uint8)in_u8(x + 32)) - (int16)128)*int32(int16((uint8)in_u8(x + 48)) - (int16)124))",
        8,
    ),
    // Two-register i32 values (legalization): each half selects vector instructions, the
    // bounded narrow is two packs; no generic helper loop.
    (
        "(uint8)saturating_cast(rounding_shift_right(int32((uint8)in_u8(x))*77 + int32((uint8)in_u8(x + 16))*150, 8))",
        16,
    ),
    (
        "(uint16)saturating_cast(((int32)in_i32(x)*(int32)in_i32(x + 16)) >> (int32)3)",
        16,
    ),
    // A byte read back wide: the saturating narrow is a clamp in the source's type and the
    // byte shift a word shift and a mask, with no pack and no vpmovzx.
    (
        "int16(shift_left((uint8)saturating_cast((uint16)in_u16(x)), (uint8)3))",
        16,
    ),
    // A width that is not a register multiple: two chunks, the last one partial.
    (
        "select((uint8)in_u8(x) > (uint8)7, (uint8)in_u8(x), (uint8)in_u8(x + 16))",
        40,
    ),
];

/// HVX: widening kept deinterleaved and narrowed by interleaving instructions, products by
/// constants through scalar operands, accumulating shifts, and saturating narrows with and
/// without a bound on the input.
const HVX_CASES: &[(&str, u32)] = &[
    ("(uint8)in_u8(x) + (uint8)in_u8(x + 16)", 256),
    (
        "uint8(shift_right(uint16((uint8)in_u8(x)) + uint16((uint8)in_u8(x + 16)), (uint16)2))",
        128,
    ),
    (
        "(uint16((uint8)in_u8(x))*uint16((uint8)in_u8(x + 16)))",
        128,
    ),
    ("(int16((uint8)in_u8(x))*(int16)3)", 128),
    ("((int16)in_i16(x) + ((int16)in_i16(x + 16)*(int16)16))", 64),
    // The constant in a scalar register (vmpyi(h, r.b)), not splatted into a vector.
    (
        "((int16)in_i16(x) + ((int16)in_i16(x + 16)*(int16)127))",
        64,
    ),
    // Bounds-predicated: the input is at most 32767, so vpack's signed reading is exact.
    (
        "(uint8)saturating_cast((uint16)in_u16(x) & (uint16)32767)",
        128,
    ),
    ("(uint8)saturating_cast((uint16)in_u16(x))", 128),
    // Sums of byte products as reduction multiplies (src/lower/dot.rs): four taps
    // interleaved into vrmpy, four strided taps read as adjacent lanes, two into vdmpy.
    (
        "((((uint32((uint8)in_u8(x))*(uint32)255) + (uint32((uint8)in_u8(x + 16))*(uint32)254)) + (uint32((uint8)in_u8(x + 32))*(uint32)253)) + (uint32((uint8)in_u8(x + 48))*(uint32)252))",
        128,
    ),
    (
        "((((int16((uint8)in_u8((4*x) + 0))*(int16)127) + (int16((uint8)in_u8((4*x) + 1))*(int16)126)) + (int16((uint8)in_u8((4*x) + 2))*(int16)-125)) + (int16((uint8)in_u8((4*x) + 3))*(int16)124))",
        64,
    ),
    (
        "(((int32((int16)in_i16(2*x))*80) + (int32((int16)in_i16((2*x) + 1))*33)) + in_i32(x))",
        64,
    ),
    // The high byte of a product: vmpy's deinterleaved pair, vshuffo back into lane order.
    (
        "uint8((uint16)shift_right(uint16((uint8)in_u8(x))*(uint16)127, (uint16)8))",
        128,
    ),
    // Q31 products: vmpye then the accumulating, doubling, saturating vmpyo.
    (
        "saturating_cast((int64(in_i32(x))*int64(in_i32(x + 5)))/(int64)2147483648)",
        32,
    ),
    // Widening products accumulated in lane order: the operands' halves interleaved
    // (vshuff of one register) so vmpyacc's pair needs no shuffle.
    (
        "((int16)in_i16(x + 2) + (int16((uint8)in_u8(x))*int16((int8)in_i8(x + 3))))",
        128,
    ),
    (
        "((int32)in_i32(x) - (int32((int16)in_i16(x + 1))*(int32)-300))",
        64,
    ),
    // A [1 2 1] blur rounded by hand: the bounds keep the shifted sum within u8, so the
    // rounding, saturating narrow vasr(Vu.h, Vv.h, Rt):rnd:sat takes the two halves.
    (
        "uint8((((int16((uint8)in_u8(x)) + ((int16)2*int16((uint8)in_u8(x + 1)))) + int16((uint8)in_u8(x + 2))) + (int16)2) >> (int16)2)",
        128,
    ),
    // Three taps sliding over a row, the last weighted one: vtmpy of the loads at x and
    // x + 2 (even outputs in the low register, odd in the high one).
    (
        "((int16((uint8)in_u8(x + 1))*(int16)-3) + (int16((uint8)in_u8(x + 2))*(int16)5)) + int16((uint8)in_u8(x + 3))",
        128,
    ),
];

/// Arm Neon: narrowings of two registers into one, the high half by a `*2` form.
const ARM_CASES: &[(&str, u32)] = &[
    // A saturating narrowing shift: sqshrn, then sqshrn2 (not sshr and sqxtn2).
    ("(int16)saturating_cast((int32)in_i32(x) >> (int32)1)", 8),
    // Signed to unsigned: sqshrun and sqshrun2.
    ("(uint8)saturating_cast((int16)in_i16(x) >> (int16)2)", 16),
    // The rounded high half of a sum: raddhn and raddhn2.
    (
        "(uint16)rounding_shift_right((uint32)in_u32(x) + (uint32)in_u32(x + 8), (uint32)16)",
        8,
    ),
    // An accumulated absolute difference: one sabd and uaddw/uaddw2, which the Cortex-A76
    // costs price below sabal and sabal2 (latency 4, one per cycle, against two per cycle).
    (
        "((int16)in_i16(x) + int16((uint8)absd((int8)in_i8(x + 16), (int8)in_i8(x + 32))))",
        16,
    ),
    // Signed lanes' absolute difference widened unsigned: sabdl and sabdl2, read unsigned.
    (
        "(uint16)abs(int16((int8)in_i8(x + 16)) - int16((int8)in_i8(x + 32)))",
        16,
    ),
    // A widening subtraction of a broadcast: ssubl and ssubl2 with the byte splat, not
    // two sxtl and two subtractions of a half-word splat.
    ("(int16((int8)in_i8(x)) - int16((int8)in_i8(0)))", 16),
    // Halide's spelled-out rounding shift by a signed per-lane amount: srshl.
    (
        "int16(shift_left(int32((int16)in_i16(x)) + int32((int16)shift_right((int16)1, min(((int16)in_i16(x + 16) % (int16)16) - (int16)8, (int16)0))/(int16)2), int32(((int16)in_i16(x + 16) % (int16)16) - (int16)8)))",
        8,
    ),
];

fn listing(target: &str) -> String {
    listing_of(target, CASES)
}

fn listing_of(target: &str, cases: &[(&str, u32)]) -> String {
    let be = harrow::targets::backend(target).unwrap();
    let mut out = String::new();
    for (i, (text, w)) in cases.iter().enumerate() {
        let e = opcheck::Entry {
            target: target.into(),
            instr: String::new(),
            width: *w,
            expr: text.to_string(),
            line: i + 1,
            col: 1,
        };
        let x = opcheck::parse_entry("golden", &e).unwrap_or_else(|d| panic!("{d}"));
        let l = lower::lower(&x, &be);
        out.push_str(&format!("# {text}  (w={w})\n"));
        out.push_str(&lower::listing(&l));
        out.push('\n');
    }
    out
}

#[test]
fn avx2_instruction_choices() {
    let text = listing("x86-avx2");
    assert!(!text.contains("lane by lane"), "{text}");
    expect_test::expect_file!["golden/lower/x86-avx2.out"].assert_eq(&listing("x86-avx2"));
}

#[test]
fn avx512_instruction_choices() {
    expect_test::expect_file!["golden/lower/x86-avx512.out"].assert_eq(&listing("x86-avx512"));
}

#[test]
fn hvx_instruction_choices() {
    expect_test::expect_file!["golden/lower/hvx.out"].assert_eq(&listing_of("hvx", HVX_CASES));
}

#[test]
fn arm_instruction_choices() {
    expect_test::expect_file!["golden/lower/arm-neon.out"]
        .assert_eq(&listing_of("arm-neon", ARM_CASES));
}

#[test]
fn only_x86_and_arm_take_the_optional_generic_strategies() {
    // HVX and RISC-V instructions read neither form; offered, they were three quarters of
    // HVX depthwise_conv's selection.
    for (target, takes) in [
        ("x86-avx2", true),
        ("arm-neon", true),
        ("hvx", false),
        ("riscv-v", false),
    ] {
        let backend = harrow::targets::backend(target).expect("registered target");
        let names: Vec<&str> = backend.strategies.iter().map(|s| s.name()).collect();
        for optional in ["zero extensions read as signed", "pairwise multiply-adds"] {
            assert_eq!(names.contains(&optional), takes, "{target}: {names:?}");
        }
    }
}
