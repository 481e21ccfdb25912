//! The generic fallback is vector code: operations no instruction covers are written with
//! clang's vector extensions (whole-vector operators and builtins), not loops over lanes,
//! and compute what the interpreter says. The few operations with no vector form in C are
//! named by `--emit ir` with the reason.

mod common;

use common::lowered;
use harrow::lower::{self, Lowered};

/// Expressions whose generic nodes have a vector form (`w` lanes each): divisions and
/// remainders by constants, shifts by vectors of amounts (either sign, out of range),
/// FPIR operations through their definitions, saturating adds through clang's builtins,
/// and wide values on AVX2.
const VECTOR_CASES: &[(&str, u32)] = &[
    ("(int32)in_i32(x) / (int32)7", 16),
    ("(int32)in_i32(x) % (int32)5", 16),
    ("(int8)in_i8(x) / (int8)3", 32),
    ("(uint32)in_u32(x) / (uint32)10", 16),
    ("(int16)in_i16(x) >> (int16)in_i16(x + 16)", 16),
    ("(uint16)in_u16(x) >> (int16)in_i16(x + 16)", 16),
    ("(uint8)in_u8(x) << (uint8)in_u8(x + 32)", 32),
    ("(int32)in_i32(x) << (int32)in_i32(x + 16)", 16),
    ("(uint32)in_u32(x) >> (uint32)in_u32(x + 16)", 16),
    (
        "rounding_shift_right((int32)in_i32(x), (int32)in_i32(x + 16))",
        16,
    ),
    ("halving_add((int32)in_i32(x), (int32)in_i32(x + 16))", 16),
    (
        "rounding_halving_add((uint32)in_u32(x), (uint32)in_u32(x + 16))",
        16,
    ),
    (
        "saturating_add((uint32)in_u32(x), (uint32)in_u32(x + 16))",
        16,
    ),
    (
        "saturating_sub((int32)in_i32(x), (int32)in_i32(x + 16))",
        16,
    ),
    (
        "rounding_mul_shift_right((int16)in_i16(x), (int16)in_i16(x + 16), (uint16)13)",
        32,
    ),
    (
        "(uint8)saturating_cast(rounding_shift_right(int32((uint8)in_u8(x))*77 + int32((uint8)in_u8(x + 16))*150, 8))",
        16,
    ),
];

#[test]
fn generic_nodes_with_a_vector_form_are_not_written_lane_by_lane() {
    let mut bad = Vec::new();
    for (text, w) in VECTOR_CASES {
        let l = lowered("x86-avx2", text, *w);
        let ir = lower::listing(&l);
        if ir.contains("lane by lane") {
            bad.push(format!("{text}:\n{ir}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn operations_without_a_vector_form_say_why() {
    let l = lowered("x86-avx2", "(int32)in_i32(x) / (int32)in_i32(x + 16)", 16);
    let ir = lower::listing(&l);
    assert!(
        ir.contains("lane by lane: the divisor is not the same positive constant"),
        "{ir}"
    );
    let l = lowered(
        "x86-avx2",
        "mul_shift_right((int64)in_i64(x), (int64)in_i64(x + 8), (uint64)3)",
        8,
    );
    let ir = lower::listing(&l);
    assert!(ir.contains("lane by lane: 128-bit lanes"), "{ir}");
    let l = lowered(
        "x86-avx2",
        "rounding_mul_shift_right((int32)in_i32(x), (int32)in_i32(x + 16), (uint32)29)",
        8,
    );
    let ir = lower::listing(&l);
    assert!(ir.contains("lane by lane: a 64-bit lane product"), "{ir}");
    // The Q31 case has a rule (pmuldq on even and odd lanes) and no lane loop.
    let l = lowered(
        "x86-avx2",
        "rounding_mul_shift_right((int32)in_i32(x), (int32)in_i32(x + 16), (uint32)31)",
        8,
    );
    let ir = lower::listing(&l);
    assert!(
        ir.contains("vpmuldq") && !ir.contains("lane by lane"),
        "{ir}"
    );
}

#[test]
fn vector_fallbacks_compute_what_the_interpreter_says() {
    harrow::isa::toolchain::require("clang-19", "clang-19").unwrap_or_else(|m| panic!("{m}"));
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let progs: Vec<Lowered> = VECTOR_CASES
        .iter()
        .map(|(t, w)| lowered("x86-avx2", t, *w))
        .collect();
    let refs: Vec<&Lowered> = progs.iter().collect();
    let dir = std::env::temp_dir().join(format!("harrow-vector-fallback-{}", std::process::id()));
    let results = lower::harness::run_cases(&refs, be.target.as_ref(), 6, 11, &dir)
        .unwrap_or_else(|e| panic!("{e}\nkept: {}", dir.display()));
    let _ = std::fs::remove_dir_all(&dir);
    let bad: Vec<String> = VECTOR_CASES
        .iter()
        .zip(&results)
        .filter_map(|((t, _), r)| r.mismatch.as_ref().map(|m| format!("{t}: {m}")))
        .collect();
    assert!(bad.is_empty(), "{} wrong:\n{}", bad.len(), bad.join("\n"));
}
