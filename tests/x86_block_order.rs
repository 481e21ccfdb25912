//! x86 selection in 128-bit block order and with loads folded into widenings: the chosen
//! instructions, and the code computing what the interpreter computes on this host.

mod common;

use harrow::lower::{self, Lowered};

fn lowered(text: &str, w: u32) -> Lowered {
    common::lowered("x86-avx2", text, w)
}

/// Runs every case against the interpreter on random and edge-case inputs (in a folder of
/// the test's own: tests run in parallel).
fn assert_correct(test: &str, cases: &[&Lowered]) {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let dir = std::env::temp_dir().join(format!("harrow-{test}-{}", std::process::id()));
    let results = lower::harness::run_cases(cases, be.target.as_ref(), 6, 11, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    for (l, r) in cases.iter().zip(&results) {
        assert!(r.mismatch.is_none(), "{}: {:?}", l.source, r.mismatch);
    }
}

/// A byte sum in words narrowed back to one register of bytes widens each loaded register
/// with unpacks against zero and packs in block order: no cross-block widening, no vpermq.
#[test]
fn words_narrowed_to_bytes_need_no_permute() {
    let l = lowered(
        "(uint8)saturating_cast(int16((uint8)in_u8(x)) + int16((uint8)in_u8(x + 32)))",
        32,
    );
    let ir = lower::listing(&l);
    assert!(ir.contains("_mm256_unpacklo_epi8"), "{ir}");
    assert!(ir.contains("_mm256_unpackhi_epi8"), "{ir}");
    assert!(ir.contains("_mm256_packus_epi16"), "{ir}");
    assert!(!ir.contains("permute4x64"), "{ir}");
    assert!(!ir.contains("cvtepu8"), "{ir}");
    assert_correct("words-to-bytes", &[&l]);
}

/// A weighted byte sum in dwords narrowed to bytes (a stencil accumulated in i32) takes
/// the quarters of each block: two levels of unpacks, pmaddwd, two levels of packs, no
/// permute.
#[test]
fn dwords_narrowed_to_bytes_take_quarters_of_each_block() {
    let l = lowered(
        "(uint8)saturating_cast(shift_right(int32((uint8)in_u8(x))*3 + int32((uint8)in_u8(x + 32))*-5 + int32((uint8)in_u8(x + 64))*7, (int32)4))",
        32,
    );
    let ir = lower::listing(&l);
    assert!(ir.contains("_mm256_packs_epi32"), "{ir}");
    assert!(ir.contains("_mm256_packus_epi16"), "{ir}");
    assert!(ir.contains("_mm256_unpacklo_epi16"), "{ir}");
    assert!(ir.contains("_mm256_madd_epi16"), "{ir}");
    assert!(!ir.contains("permute4x64"), "{ir}");
    assert!(!ir.contains("cvtep"), "{ir}");
    assert_correct("dwords-to-bytes", &[&l]);
}

/// Widening a freshly loaded register is priced as the folded `vpmovzxbw ymm, m128` (the
/// description's `load` throughput, or the same price for clang's generic widening of a
/// load) plus the load, not as a widening from a register.
#[test]
fn widening_a_load_is_priced_as_a_folded_load() {
    let l = lowered("int16((uint8)in_u8(x))", 16);
    let ir = lower::listing(&l);
    // A half-register load (0.5) and the folded widening (0.25); from a register the
    // widening alone would cost 1.4.
    assert!(l.chunk_cost < 1.0, "{}\n{ir}", l.chunk_cost);
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let zx = &be.instrs["_mm256_cvtepu8_epi16"];
    assert!(
        zx.iter().all(|i| i.cost.load_throughput == Some(0.25)),
        "vpmovzxbw reads memory at twice its register rate"
    );
    assert_correct("folded-widening", &[&l]);
}
