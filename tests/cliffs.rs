//! Kernels `harrow fuzz-kernels` found slower than clang -O3 select the instructions that
//! fixed them (docs/kernels.md, "What seed 2 found" and the seeds after it), and still
//! compute what the interpreter says. The kernel texts are the generator's own
//! (`tests/data/cliffs/`).

mod common;

use common::harrow;

/// What `harrow compile --emit <emit>` prints for a kernel of `tests/data/cliffs/`.
fn emitted(kernel: &str, target: &str, emit: &str) -> String {
    let path = format!("tests/data/cliffs/{kernel}.hk");
    let (ok, out, err) = harrow(&["compile", &path, "--target", target, "--emit", emit]);
    assert!(ok, "{err}");
    out
}

/// The selected instructions of a kernel of `tests/data/cliffs/`.
fn selected(kernel: &str, target: &str) -> String {
    emitted(kernel, target, "ir")
}

/// `harrow run` of a kernel on the host (x86 targets only).
fn runs_correctly(kernel: &str) {
    if let Err(e) = harrow::isa::toolchain::require("clang-19", "clang-19") {
        panic!("{e}");
    }
    let path = format!("tests/data/cliffs/{kernel}.hk");
    let (ok, out, err) = harrow(&["run", &path, "--target", "x86-avx2"]);
    assert!(ok, "{kernel}: {out}{err}");
}

/// `harrow run` of a kernel on x86-avx512, skipped with a message where the host lacks it.
fn runs_correctly_on_avx512(kernel: &str) {
    let path = format!("tests/data/cliffs/{kernel}.hk");
    let (ok, out, err) = harrow(&["run", &path, "--target", "x86-avx512"]);
    if !ok && err.contains("host lacks") {
        eprintln!("skipped running {kernel} on x86-avx512: {}", err.trim());
        return;
    }
    assert!(ok, "{kernel}: {out}{err}");
}

#[test]
fn q31_product_reads_odd_lanes_by_pshufd_without_the_int_min_fixup() {
    let ir = selected("fuzz_2_48", "x86-avx2");
    assert!(ir.contains("_mm256_mul_epi32"), "{ir}");
    // A 64-bit shift right by 32 before pmuldq made clang expand it into three pmuludq.
    assert!(
        ir.contains("_mm256_shuffle_epi32") && !ir.contains(", 32   ;"),
        "{ir}"
    );
    // The difference of bytes is never INT_MIN: no compare-and-flip repair.
    assert!(!ir.contains("_mm256_cmpeq_epi32"), "{ir}");
    runs_correctly("fuzz_2_48");
}

#[test]
fn a_u32_sum_of_signed_by_unsigned_byte_products_is_pmaddwd() {
    let ir = selected("fuzz_2_17", "x86-avx2");
    let madds = ir.matches("_mm256_madd_epi16").count();
    assert!(madds >= 13, "{madds} pmaddwd:\n{ir}");
    assert!(!ir.contains("mullo"), "{ir}");
    runs_correctly("fuzz_2_17");
}

#[test]
fn an_i16_sum_of_unsigned_byte_products_accumulates_with_umlal() {
    let ir = selected("fuzz_2_63", "arm-neon");
    let mlals = ir.matches("vmlal_u8").count();
    assert!(mlals >= 14, "{mlals} umlal:\n{ir}");
    assert!(ir.matches("vaddq_s16").count() == 0, "{ir}");
}

#[test]
fn truncations_compared_for_a_wider_select_are_compared_at_their_own_width() {
    let ir = selected("fuzz_2_79", "x86-avx2");
    // Compared as bytes, both sides were packed and permuted and the byte mask was then
    // widened four ways; compared as words, nothing is packed.
    assert!(!ir.contains("packus"), "{ir}");
    assert!(!ir.contains("permute4x64"), "{ir}");
    assert!(ir.contains("= ne %") && ir.contains("u16x"), "{ir}");
    runs_correctly("fuzz_2_79");
}

#[test]
fn a_u32_sum_of_signed_byte_products_by_splatted_weights_is_pmaddwd() {
    let ir = selected("fuzz_3_72", "x86-avx2");
    let madds = ir.matches("_mm256_madd_epi16").count();
    assert!(madds >= 7, "{madds} pmaddwd:\n{ir}");
    assert!(!ir.contains("mullo"), "{ir}");
    runs_correctly("fuzz_3_72");
}

#[test]
fn a_stride_4_gather_of_dwords_truncated_to_bytes_is_masked_and_packed() {
    let ir = selected("fuzz_3_76", "x86-avx2");
    // As a C conversion, clang fused the truncation with the gather into byte unpacks,
    // word broadcasts and blends of every source register.
    assert!(ir.contains("_mm256_packus_epi32"), "{ir}");
    assert!(!ir.contains("i8x16 = cast"), "{ir}");
    // The byte arithmetic is done in dwords and narrowed once (`lower::narrow_late`): the
    // saturating narrowing is a clamp there, and the same lanes are not packed twice.
    assert_eq!(ir.matches("_mm256_packus_epi32").count(), 1, "{ir}");
    assert!(
        ir.contains("_mm256_max_epi32") && ir.contains("_mm256_min_epi32"),
        "{ir}"
    );
    assert!(!ir.contains("_mm_packs_epi32"), "{ir}");
    runs_correctly("fuzz_3_76");
}

#[test]
fn a_byte_register_zero_extended_to_signed_words_is_ushll_and_ushll2() {
    // `i16(x)` of bytes is the zero extension read as signed (`ZeroExtendThenReinterpret`):
    // written as a generic conversion, it was eight lanes per chunk, each 8-byte half
    // loaded on its own (0.98x clang -O3 in executed instructions).
    let ir = selected("fuzz_4_20", "arm-neon");
    assert!(
        ir.contains("vmovl_u8") && ir.contains("vmovl_high_u8"),
        "{ir}"
    );
    assert!(ir.contains("chunks of 16"), "{ir}");
    assert!(!ir.contains("u8x8 = (uint8x8)"), "{ir}");
}

#[test]
fn a_dword_average_is_the_or_less_half_the_xor() {
    let ir = selected("fuzz_4_60", "x86-avx2");
    // Halving each operand and adding back the carry took five instructions where clang's
    // scalar build vectorizes the OR-XOR form in three.
    assert!(
        ir.contains("_mm256_xor_si256") && ir.contains("_mm256_sub_epi32"),
        "{ir}"
    );
    assert!(!ir.contains("_mm256_and_si256"), "{ir}");
    runs_correctly("fuzz_4_60");
}

#[test]
fn a_bounded_q15_product_shift_is_the_high_and_low_halves_combined() {
    let ir = selected("fuzz_4_39", "x86-avx2");
    // The generic mul_shift_right widened both operands to dwords.
    assert!(
        ir.contains("_mm256_mulhi_epi16") && ir.contains("_mm256_mullo_epi16"),
        "{ir}"
    );
    assert!(!ir.contains("mul_shift_right"), "{ir}");
    runs_correctly("fuzz_4_39");
}

#[test]
fn a_signed_value_read_as_wider_unsigned_saturates_back_by_an_unsigned_min() {
    let ir = selected("fuzz_4_7", "arm-neon");
    // Widened to u32, it was narrowed again with uqxtn and clamped with suqadd.
    assert!(ir.contains("vminq_u16"), "{ir}");
    assert!(!ir.contains("vqmovn_u32") && !ir.contains("u32x"), "{ir}");
}

#[test]
fn the_distance_from_a_byte_to_itself_plus_another_is_the_other() {
    // absd(u32(b), saturating_add(u32(b), u32(a) | u32(b))) is a | b: the widened sum
    // cannot wrap. Computed as written it was a max, a min and a subtraction of dwords
    // per lane, 0.29x clang -O3 on x86-avx2 and 0.38x on arm-neon.
    for (target, narrow_min, wide) in [
        ("x86-avx2", "_mm256_min_epu8", "epu32"),
        ("arm-neon", "vminq_u8", "_u32"),
    ] {
        let ir = selected("fuzz_4_77", target);
        assert!(ir.contains(narrow_min), "{target}:\n{ir}");
        assert!(
            !ir.contains(wide) && !ir.contains("absd"),
            "{target}:\n{ir}"
        );
    }
    runs_correctly("fuzz_4_77");
}

#[test]
fn bytes_widened_to_words_on_arm_are_widened_a_register_at_a_time() {
    // A value of dword lanes split into quarters read a quarter of a byte register each,
    // which clang extends by zip, ushll and a mask or two shifts: 0.69x clang -O3 for
    // fuzz_4_60, 0.49x for fuzz_3_2. Widened to half-words a register at a time first,
    // each quarter is one ushll or ushll2.
    for kernel in ["fuzz_4_60", "fuzz_3_2"] {
        let ir = selected(kernel, "arm-neon");
        assert!(
            ir.contains("vmovl_u8") && ir.contains("vmovl_high_u8"),
            "{kernel}:\n{ir}"
        );
        assert!(
            !ir.contains(": u8x4 ") && !ir.contains(": i8x4 "),
            "{kernel}:\n{ir}"
        );
    }
}

#[test]
fn a_byte_mask_is_not_sliced_into_quarters_for_a_dword_select_on_arm() {
    // A mask is a byte per lane; a quarter of a mask register is moved out with zip and
    // widened with ushll and an and before a dword select reads it, five operations a
    // quarter (fuzz_2_79: 0.89x clang -O3 that way, 1.01x without).
    let ir = selected("fuzz_2_79", "arm-neon");
    assert!(!ir.contains(": boolx4 "), "{ir}");
}

#[test]
fn an_unsigned_dword_saturated_to_signed_half_words_narrows_whole_registers_on_arm() {
    // saturating_cast<i16> of u32 lanes took a uqxtn, a suqadd and a combine per half;
    // through u16 it is uqxtn and uqxtn2, then one clamp (fuzz_3_4: 0.85x -> 1.18x).
    let ir = selected("fuzz_3_4", "arm-neon");
    assert!(ir.contains("vqmovn_high_u32"), "{ir}");
    assert!(
        !ir.contains("vuqadd_s16") && !ir.contains("vcombine"),
        "{ir}"
    );
}

#[test]
fn a_division_of_widened_half_words_is_a_half_word_division() {
    // u32(x) / 7 of u16 lanes fits 16 bits, as clang knows from the known bits: divided
    // in u32 lanes it was 0.78x clang -O3 on arm-neon, in u16 lanes 1.43x.
    let ir = selected("fuzz_3_32", "arm-neon");
    assert!(ir.contains("u16x8 = div"), "{ir}");
    assert!(!ir.contains("u32x4 = div"), "{ir}");
}

#[test]
fn a_weight_splat_needed_at_two_widths_is_built_once() {
    // Each of 11 byte weights feeds `smull`/`smlal` (the low halves, 8 lanes) and
    // `smull2`/`smlal2` (16 lanes); the 8-lane splat is the low half of the 16-lane one.
    let c = emitted("fuzz_4_12", "arm-neon", "c");
    assert_eq!(c.matches("= (hv_i8x8)(").count(), 0, "{c}");
    assert!(c.matches("= (hv_i8x16)(").count() >= 11, "{c}");
    assert!(c.contains("__builtin_shufflevector"), "{c}");
}

#[test]
fn a_saturating_narrowing_widened_again_is_a_clamp_converted_once() {
    // `i16(saturating_cast<i8>(x))` of u32 lanes went to bytes in two narrowing steps and
    // back to half words by two sign extensions (0.98x clang -O3 in executed instructions);
    // as `i16(min(x, 127))` (`ClampBeforeConverting`) it is a `umin` and one narrowing.
    let ir = selected("fuzz_4_4", "arm-neon");
    assert!(ir.contains("vminq_u32"), "{ir}");
    assert!(
        !ir.contains("vmovl_s8") && !ir.contains("vmovl_high_s8"),
        "{ir}"
    );
    assert!(!ir.contains("i8x"), "{ir}");
}

#[test]
fn a_short_product_sum_on_arm_computes_two_vectors_an_iteration() {
    // 16 `smlal`/`smlal2` pairs of 8 lanes: the loop's counter, compare, branch and
    // pointer updates were 4% of the executed instructions at one vector an iteration
    // (0.965x clang -O3); two vectors, unrolled, pay them once (1.01x).
    let c = emitted("fuzz_3_92", "arm-neon", "c");
    assert!(c.contains("hv_steps = e0 / 16;"), "{c}");
    assert!(c.contains("_Pragma(\"clang loop unroll(full)\")"), "{c}");
    // Not on RISC-V, where the pair's register groups spilled.
    let c = emitted("fuzz_3_92", "riscv-v", "c");
    assert!(!c.contains("_Pragma(\"clang loop unroll(full)\")"), "{c}");
}

#[test]
fn a_byte_and_a_half_word_extended_to_dwords_are_mixed_as_half_words() {
    // `(u32(a) ^ u32(b)) == (u32(a) & u32(b))` of a byte and a half word: 0.964x clang -O3
    // on Arm as four registers of dwords, 1.64x as one of half words.
    let ir = selected("fuzz_3_20", "arm-neon");
    assert!(!ir.contains("u32x"), "{ir}");
    assert!(ir.contains("veorq_s16") && ir.contains("vandq_s16"), "{ir}");
}

#[test]
fn a_dword_high_product_of_half_word_bounded_values_is_a_multiply_and_a_shift() {
    // `mul_shift_right` of dwords was a 64-bit product per lane (0.38x clang -O3 on AVX2).
    let ir = selected("fuzz_5_130", "x86-avx2");
    assert!(!ir.contains("lane by lane"), "{ir}");
    assert!(
        ir.contains("_mm256_mullo_epi32") && ir.contains("_mm256_srai_epi32"),
        "{ir}"
    );
    runs_correctly("fuzz_5_130");
}

#[test]
fn a_select_whose_condition_makes_both_branches_equal_is_the_branch() {
    // `select(u32(a) | u32(b) != 0, c, saturating_add(c, a))` is `c` (where the condition
    // is false `a` is 0); clang -O3 saw it and copied every third half word, harrow
    // computed the select at 8 lanes: 0.60x clang -O3 on AVX2.
    let ir = selected("fuzz_5_171", "x86-avx2");
    assert!(!ir.contains("select") && !ir.contains("adds_epi16"), "{ir}");
    runs_correctly("fuzz_5_171");
}

#[test]
fn a_truncation_tested_and_a_saturation_widened_back_stay_at_dwords_on_avx2() {
    // `u16(x) > 0` and `u32(saturating_cast<i16>(x))` of dwords: narrowed across the
    // register's halves and widened back (vpshufb, vpermq, vpackssdw, vpmovsxwd) at 0.82x
    // clang -O3; a mask compared with zero and a clamp, as clang does, at 1.00x.
    let ir = selected("fuzz_5_162", "x86-avx2");
    assert!(
        !ir.contains("packs_epi32") && !ir.contains("cvtepi16"),
        "{ir}"
    );
    assert!(
        ir.contains("_mm256_max_epi32") && ir.contains("_mm256_min_epi32"),
        "{ir}"
    );
    assert!(!ir.contains("u16x8 = cast"), "{ir}");
    runs_correctly("fuzz_5_162");
}

#[test]
fn a_select_between_word_narrowings_read_back_as_dwords_stays_on_dwords_on_avx2() {
    // `i32(clamp(select(c, u16(x), saturating_cast<u16>(x)), 62, 133))` of dwords: narrowed
    // to words (vpackusdw, a truncating shuffle), selected and clamped there and widened
    // back at 0.74x clang -O3; the select picks one of its values, so all of it is done on
    // the dwords, 1.01x.
    let ir = selected("fuzz_7_121", "x86-avx2");
    assert!(!ir.contains("packus") && !ir.contains("cvtepu16"), "{ir}");
    assert!(
        ir.contains("_mm256_min_epi32") && ir.contains("_mm256_max_epi32"),
        "{ir}"
    );
    runs_correctly("fuzz_7_121");
}

#[test]
fn a_word_saturated_to_a_byte_and_widened_back_is_clamped_on_avx2() {
    // `i16(saturating_cast<i8>(x))` of every fourth word: packed to bytes and widened back
    // (vpacksswb, vpmovsxbw) beside the gather's own packs at 0.87x clang -O3; clamped in
    // the words as clang does, 1.00x.
    let ir = selected("fuzz_7_37", "x86-avx2");
    assert!(
        !ir.contains("packs_epi16") && !ir.contains("cvtepi8"),
        "{ir}"
    );
    assert!(
        ir.contains("_mm256_max_epi16") && ir.contains("_mm256_min_epi16"),
        "{ir}"
    );
    runs_correctly("fuzz_7_37");
}

#[test]
fn a_word_difference_of_dword_truncations_is_computed_on_dwords_on_avx2() {
    // `u32(u16(x) - u16(i8(x)))` of dwords: both truncations packed to words (vpackusdw,
    // vpermq, vpackuswb, vpmovsxbw) at 0.91x clang -O3; on the dwords, the byte extended in
    // place by a shift pair and the difference masked, 1.11x.
    let ir = selected("fuzz_5_4", "x86-avx2");
    assert!(
        !ir.contains("packus") && !ir.contains("permute4x64"),
        "{ir}"
    );
    assert!(
        ir.contains("_mm256_srai_epi32") && ir.contains("_mm256_sub_epi32"),
        "{ir}"
    );
    runs_correctly("fuzz_5_4");
}

#[test]
fn an_exact_byte_computation_read_back_as_words_is_never_narrowed_on_avx2() {
    // `u16(rounding_shift_right(u8(x) & saturating_cast<u8>(x), 5))` of i16 lanes: packed to
    // bytes (vpackuswb, vpermq) and unpacked again at 0.87x clang -O3; every step keeps
    // the byte value exactly, so it is computed on the words, 1.02x.
    let ir = selected("fuzz_5_120", "x86-avx2");
    assert!(!ir.contains("packus") && !ir.contains("u8x"), "{ir}");
    runs_correctly("fuzz_5_120");
}

#[test]
fn every_third_word_is_gathered_by_128_bit_halves_and_packed_to_bytes_on_avx2() {
    // Three stride-3 word gathers, one also truncated to bytes: clang's 16-lane word
    // gathers (eleven shuffles each) and a byte gather of the same rows beside them ran
    // 0.79x clang -O3; gathered as two 8-lane halves joined by vinserti128, the truncated
    // one masked and packed from those halves, 1.03x.
    let ir = selected("fuzz_7_106", "x86-avx2");
    assert!(ir.matches("_mm256_set_m128i").count() >= 3, "{ir}");
    assert!(ir.contains("_mm_packus_epi16"), "{ir}");
    assert!(!ir.contains("u8x96 = reinterpret"), "{ir}");
    runs_correctly("fuzz_7_106");
}

#[test]
fn every_third_word_truncated_alone_is_one_byte_gather_on_avx2() {
    // `u8(i8(in0(3 * x + 2)))`: the words' low bytes gathered at stride 6, as clang does,
    // 1.00x clang -O3; gathered as words by halves and packed, 0.92x.
    let ir = selected("fuzz_5_17", "x86-avx2");
    assert!(ir.contains("u8x96 = reinterpret"), "{ir}");
    assert!(!ir.contains("packus") && !ir.contains("set_m128i"), "{ir}");
    runs_correctly("fuzz_5_17");
}

#[test]
fn bytes_shifted_left_and_read_back_as_dwords_are_computed_on_the_words_on_avx2() {
    // `i32(saturating_cast<i8>(i16(x)) | (saturating_cast<i8>(x) << 3))` of u16 lanes: packed
    // to bytes (vpacksswb), shifted there (x86 has no byte shift: a vpsllw and a mask) and
    // widened at 0.91x clang -O3; clamped, shifted and or-ed on the words and narrowed once,
    // as clang does, 1.05x.
    let ir = selected("fuzz_7_71", "x86-avx2");
    assert!(!ir.contains("packs_epi16"), "{ir}");
    assert!(ir.contains("_mm256_slli_epi16"), "{ir}");
    runs_correctly("fuzz_7_71");
}

#[test]
fn a_dword_product_by_minus_one_is_a_subtraction_from_zero_on_avx2() {
    // `mul_shift_right(i32(a), i32(b) * -1, 31)` of half words and bytes: the -1 product went
    // to a pmaddwd against a masked -1 (0.90x clang -O3); a vpsubd from zero, 1.00x.
    let ir = selected("fuzz_5_130", "x86-avx2");
    assert!(!ir.contains("madd_epi16"), "{ir}");
    assert!(ir.contains("_mm256_sub_epi32"), "{ir}");
    runs_correctly("fuzz_5_130");
}

#[test]
fn a_half_word_product_by_a_constant_reads_the_shared_sign_extension_on_avx2() {
    // `absd(i32(a), i32(b)) + i32(b) * 7` of u32 and i16 lanes: pmaddwd read `b` zero-extended
    // again (a vpmovzxwd more per register, 0.84x clang -O3); against (7, 0) pairs the sign
    // extension the distance reads serves as well, as in clang's code (0.97x).
    let ir = selected("fuzz_7_130", "x86-avx2");
    assert!(ir.contains("_mm256_madd_epi16"), "{ir}");
    assert!(!ir.contains("u16x8"), "{ir}");
    runs_correctly("fuzz_7_130");
}

#[test]
fn taps_of_a_two_register_chunk_come_from_the_register_before_on_avx2() {
    // A 5-tap sum of i16 narrowed to u8 (32 lanes, two registers a chunk) loaded all ten
    // taps of a chunk (20 loads per 64 lanes, about 1.0x clang -O3 bound by its loads):
    // the second register's taps next below its highest are shuffled from the first's,
    // and the first's from the previous chunk's second (1.01x against clang's own
    // recurrence).
    let c = emitted("fuzz_7_127", "x86-avx2", "c");
    let same_chunk = c
        .lines()
        .filter(|l| l.contains("= __builtin_shufflevector(") && !l.contains("_prev"))
        .count();
    let previous_chunk = c.lines().filter(|l| l.contains("_prev, ")).count();
    assert!(same_chunk >= 2 && previous_chunk >= 2, "{c}");
    runs_correctly("fuzz_7_127");
}

#[test]
fn a_kernel_whose_operations_cancel_to_a_fill_is_a_plain_fill_loop() {
    // `rounding_mul_shift_right(saturating_sub(d, d), ...)` is zero for every lane: with
    // zero as the first factor folded, the kernel is a fill, written as the plain loop of
    // the constant that clang makes a `memset` (on Arm it had been computed, 0.24x).
    for target in ["x86-avx2", "arm-neon"] {
        let c = emitted("fuzz_7_144", target, "c");
        assert!(
            c.contains("hv_out[v_x] = ((int8_t)0ULL);"),
            "{target}:\n{c}"
        );
        assert!(!c.contains("shufflevector"), "{target}:\n{c}");
    }
    runs_correctly("fuzz_7_144");
    // One that reduces to a copy stays vector code: written as the kernel, the plain loop
    // computes what clang does not fold (15x slower than the vector copy).
    let c = emitted("fuzz_5_79", "x86-avx2", "c");
    assert!(c.contains("hv_xo"), "{c}");
    runs_correctly("fuzz_5_79");
}

#[test]
fn a_splatted_weight_is_masked_for_vpmaddwd_rather_than_the_loaded_bytes() {
    // An 11-term product of signed bytes summed as u32: each `vpmaddwd` needs one operand's
    // high word clear. Masking the loaded bytes cost a `vpand` per term and chunk (0.82x
    // clang -O3); the splatted weight's mask is computed once, before the row's loop
    // (1.01x), and selection now prices work on such operands below work in the loop.
    let ir = selected("fuzz_5_98", "x86-avx2");
    let defs: std::collections::HashMap<&str, &str> =
        ir.lines().filter_map(|l| l.split_once(": ")).collect();
    let masks: Vec<&str> = ir
        .lines()
        .filter(|l| l.contains("_mm256_and_si256"))
        .collect();
    assert!(!masks.is_empty(), "{ir}");
    for mask in masks {
        let masked = mask
            .split("_mm256_and_si256 ")
            .nth(1)
            .and_then(|a| a.split(',').next());
        let def = masked.and_then(|m| defs.get(m)).copied().unwrap_or("");
        let splat = def
            .split_whitespace()
            .find(|w| w.starts_with('%'))
            .and_then(|x| defs.get(x))
            .is_some_and(|d| d.contains("broadcast"));
        assert!(splat, "masks a value loaded in the loop: {mask}\n{ir}");
    }
    runs_correctly("fuzz_5_98");
}

#[test]
fn a_select_of_narrowings_by_a_word_comparison_is_done_on_the_words_on_arm() {
    // `select(u16(a) > u16(b), i8(a), saturating_cast<i8>(b))` of i16 lanes, widened back:
    // selected as bytes, the word mask was narrowed and clang folded the masking into the
    // narrowings (`and`, `xtn`, `bic`, `orr` for one `bsl`), 0.90x clang -O3 in executed
    // instructions. Selected on the words (the saturation a clamp there) and narrowed
    // once, 1.04x.
    let ir = selected("fuzz_7_181", "arm-neon");
    assert!(ir.contains(": i16x8 = select "), "{ir}");
    assert!(!ir.contains("vqmovn_s16"), "{ir}");
}

#[test]
fn a_select_whose_comparison_the_bounds_decide_is_its_arm() {
    // `i32(u16(a)) / 5 < i32(u16(a)) >> 25` is never true (the right side is 0): kept, every
    // vector paid a division, the comparison and the select (Arm 1.02x clang -O3, which
    // folds it); as the arm it picks, 1.07x, and 5.6x -> 10.9x in HVX packets.
    for target in ["arm-neon", "x86-avx2", "hvx"] {
        let ir = selected("fuzz_7_32", target);
        assert!(!ir.contains("select"), "{target}:\n{ir}");
        assert!(
            !ir.contains(" lt ") && !ir.contains("cmp"),
            "{target}:\n{ir}"
        );
    }
    runs_correctly("fuzz_7_32");
}

#[test]
fn strided_windows_of_an_unrolled_iteration_fit_the_register_file_on_arm() {
    // `i16(in0(4 * x + 3))` of dwords: each 8-lane chunk loads two 16-dword windows (`ld4`,
    // four registers each). Eight chunks an iteration held 64 registers of windows, which
    // clang issued early and spilled (0.88x clang -O3 in executed instructions); four fit
    // the 32 registers (1.40x).
    let c = emitted("fuzz_5_142", "arm-neon", "c");
    assert!(c.contains("hv_xo < 32; hv_xo += 8"), "{c}");
    assert!(!c.contains("hv_xo < 64"), "{c}");
}

#[test]
fn a_truncation_that_keeps_only_known_zero_bits_is_a_fill_of_zeros() {
    // `i8(absd(i32(a) - i32(a), i32(a) << 31))`: the byte of a value with 31 low zero bits.
    // clang stores zeros; computed per lane it ran at 0.18x clang -O3 on Arm.
    for target in ["arm-neon", "x86-avx2", "hvx"] {
        let ir = selected("fuzz_5_115", target);
        let ops: Vec<&str> = ir.lines().filter(|l| l.starts_with('%')).collect();
        assert!(
            ops.len() == 1 && ops[0].contains("broadcast (int8)0"),
            "{target}:\n{ir}"
        );
    }
    runs_correctly("fuzz_5_115");
}

#[test]
fn a_splat_and_its_low_half_are_one_register_when_widths_are_compared() {
    // A 14-tap byte product sum to half words on Arm: at 16 lanes each weight's splat is
    // read whole by `umlal2` and its low half by `umlal`, one register either way. Counted
    // as two, the 16-lane variant looked as if it spilled and 8 lanes were chosen (a
    // `d`-register load and an `umlal` per tap and 8 lanes, 0.96x clang -O3 in executed
    // instructions); at 16 lanes, 1.29x.
    let ir = selected("fuzz_5_23", "arm-neon");
    assert!(ir.contains("; 16 lanes"), "{ir}");
    assert!(ir.contains("vmlal_high_u8"), "{ir}");
    runs_correctly("fuzz_5_23");
}

#[test]
fn a_high_product_of_half_words_on_arm_is_a_widening_multiply_and_a_shift() {
    // `mul_shift_right(i32(a), i32(b) * -1, 31)` of a half word and a byte: `sqdmulh` of both
    // operands widened to dwords ran at 0.84x clang -O3 in executed instructions; the
    // product fits a dword, so it is `smull` of the half words and a shift (0.98x).
    let ir = selected("fuzz_5_130", "arm-neon");
    assert!(!ir.contains("vqdmulh"), "{ir}");
    assert!(
        ir.contains("vmull_s16") && ir.contains("vshrq_n_s32"),
        "{ir}"
    );
}

#[test]
fn the_high_dword_of_a_square_of_half_words_is_zero() {
    // `mul_shift_right(da, da, 31)` with `da` in [-163, 143]: a square is never negative and
    // below 2^31, so its high part is 0 (clang folds it away). Bounded as any product, as
    // [-23309, 26569], it was computed with `sqdmulh` (7.60x clang -O3 on Arm, 10.71x now).
    let ir = selected("fuzz_5_183", "arm-neon");
    assert!(!ir.contains("vqdmulh") && !ir.contains("vmull"), "{ir}");
    // What remains is the rounding high product by `m`.
    assert!(ir.contains("vqrdmulhq_n_s32"), "{ir}");
    runs_correctly("fuzz_5_183");
}

#[test]
fn a_division_by_a_constant_wider_than_a_register_is_divided_a_register_at_a_time() {
    // `(u16(a) * 8) / 9` at 16 lanes on Neon: clang multiplies by the reciprocal only at a
    // legal vector type, and divided the `u16x16` lane by lane (0.39x clang -O3 in executed
    // instructions); a `u16x8` at a time, `umull`, `umull2` and `uzp2` (1.33x).
    let c = emitted("fuzz_8_137", "arm-neon", "c");
    assert!(c.contains(" / ((hv_u16x8)((uint16_t)9))"), "{c}");
    assert!(!c.contains(" / ((hv_u16x16)"), "{c}");
    runs_correctly("fuzz_8_137");
}

#[test]
fn a_strided_slice_of_several_registers_is_deinterleaved_a_register_at_a_time() {
    // Every third dword of 24, 8 lanes (two registers) at a time, truncated to bytes: one
    // `ld3` per register of the slice, where the 24 dwords were loaded and gathered lane by
    // lane (0.58x clang -O3 in executed instructions on Arm; 1.17x).
    let c = emitted("fuzz_8_62", "arm-neon", "c");
    assert!(c.contains("vld3q_s32("), "{c}");
    assert!(
        !c.contains("__builtin_shufflevector(v6, v6, 0, 3, 6"),
        "{c}"
    );
    runs_correctly("fuzz_8_62");
}

#[test]
fn a_non_negative_signed_byte_division_widened_to_dwords_stays_in_half_words() {
    // `u32(clamp(saturating_cast<i8>(x), 52, 112) / 5)` of u16 lanes: packed to bytes and
    // divided as bytes it ran at 0.84x clang -O3 on AVX2; at 16 bits it is a high product.
    let ir = selected("fuzz_8_112", "x86-avx2");
    assert!(ir.contains("_mm256_mulhi_epu16"), "{ir}");
    assert!(!ir.contains("i8x"), "{ir}");
    runs_correctly("fuzz_8_112");
}

#[test]
fn a_comparison_of_byte_narrowings_of_words_compares_the_words() {
    // `u8(a) <= (saturating_cast<u8>(b) & saturating_cast<u8>(c))` of u16 lanes: packed
    // and compared as bytes it ran at 0.82x clang -O3 on AVX2; the words are the values.
    let ir = selected("fuzz_8_132", "x86-avx2");
    assert!(ir.contains("boolx8 = le %"), "{ir}");
    assert!(!ir.contains("u8x"), "{ir}");
    runs_correctly("fuzz_8_132");
}

#[test]
fn a_select_by_narrower_flags_takes_its_mask_from_one_comparison_with_zero() {
    // The flags of a byte comparison selecting dwords: negated after widening, clang built
    // the mask and its complement separately (0.78x clang -O3 on AVX2; 0.93x so).
    let c = emitted("fuzz_8_129", "x86-avx2", "c");
    assert!(c.contains("hv_u32x8)(__builtin_convertvector("), "{c}");
    assert!(!c.contains("= -__builtin_convertvector("), "{c}");
    runs_correctly("fuzz_8_129");
}

#[test]
fn a_13_tap_product_sum_of_words_on_avx2_stays_at_one_register_of_lanes() {
    // 13 splatted weights and a 32-lane chunk of two 16-lane parts do not fit AVX2's 16
    // registers: at 32 lanes it spilled, 0.87x clang -O3; 1.0x at 16.
    let ir = selected("fuzz_8_27", "x86-avx2");
    assert!(ir.starts_with("; output\n; 16 lanes"), "{ir}");
    runs_correctly("fuzz_8_27");
}

#[test]
fn eight_short_chunks_an_iteration_on_arm_are_unrolled_fully() {
    // A 4-tap sum of i16 lanes, eight 8-lane chunks an iteration: left to itself clang kept
    // the loop over them rolled (0.81x clang -O3 in executed instructions; 1.13x unrolled).
    let c = emitted("fuzz_8_98", "arm-neon", "c");
    let pragma = c.find("_Pragma(\"clang loop unroll(full)\")").expect(&c);
    let chunks = c[pragma..].lines().nth(1).unwrap_or_default();
    assert!(chunks.contains("hv_xo < 64; hv_xo += 8"), "{c}");
}

#[test]
fn a_distance_of_zero_point_differences_that_cannot_wrap_is_an_absolute_value() {
    // `absd(da, db)` of bytes less their zero points, as words: the difference stays within
    // i16, so `vpsubw` and `vpabsw` (2.61x -> 2.81x clang -O3 on AVX2, over max - min).
    let ir = selected("fuzz_8_43", "x86-avx2");
    assert!(ir.contains("_mm256_abs_epi16"), "{ir}");
    assert!(!ir.contains("_mm256_max_epi16"), "{ir}");
    runs_correctly("fuzz_8_43");
}

#[test]
fn avx512_flags_from_a_comparison_reach_the_next_instruction_as_the_mask() {
    // `vpcmpeqw` into `vpmovm2w` (the Q15 product's fix-up of -32768): unpacked into lanes
    // and packed again, clang wrote some thirty scalar instructions a vector, 0.42x clang
    // -O3; passed as the mask register, 2.74x.
    let c = emitted("fuzz_8_43", "x86-avx512", "c");
    let movm = c.find("_mm512_movm_epi16(").expect(&c);
    let arg = &c[movm..c[movm..].find(')').map_or(c.len(), |e| movm + e)];
    assert!(arg.ends_with('k'), "{arg}\n{c}");
    runs_correctly_on_avx512("fuzz_8_43");
}

#[test]
fn avx512_flags_read_as_bytes_are_converted_from_the_mask_at_once() {
    // A comparison's mask read by a generic select was unpacked lane by lane (a loop of 64
    // shifts clang kept scalar): 0.11x clang -O3. Through a vector of one-bit booleans it is
    // the masked moves clang would write, 1.8x.
    let c = emitted("fuzz_8_5", "x86-avx512", "c");
    assert!(
        !c.contains("k >> i) & 1"),
        "flags unpacked lane by lane:\n{c}"
    );
    assert!(
        c.contains("__builtin_bit_cast(hv_bitsx64, (uint64_t)"),
        "{c}"
    );
    runs_correctly_on_avx512("fuzz_8_5");
}

#[test]
fn a_floor_division_of_a_quarter_register_of_bytes_builds_for_hvx() {
    // With the remainder written as `%` beside the quotient, clang-19's Hexagon backend
    // stopped with `Cannot select: ValueType:i8` on the variant for rows of 32 to 63 lanes.
    for (tool, package) in [("clang-19", "clang-19"), ("qemu-hexagon", "qemu-user")] {
        harrow::isa::toolchain::require(tool, package).unwrap_or_else(|m| panic!("{m}"));
    }
    let c = emitted("fuzz_8_192", "hvx", "c");
    assert!(c.contains("hv_i8x32") && c.contains(" / "), "{c}");
    let path = "tests/data/cliffs/fuzz_8_192.hk";
    let (ok, out, err) = harrow(&["run", path, "--target", "hvx"]);
    assert!(ok, "{out}{err}");
}

#[test]
fn a_select_of_the_smaller_of_the_values_it_compares_is_their_min() {
    // `select(a > b, i16(b), i16(a))` of u16 lanes was a compare, a mask and a blend; the
    // cast of the `min` is one instruction (rule select_gt_smaller_second_cast): RISC-V
    // 1.59x -> 1.92x clang -O3, HVX 11.5x -> 12.0x (clang had found the `min` on x86).
    for (target, min) in [
        ("x86-avx512", "vpminuw"),
        ("x86-avx2", "vpminuw"),
        ("arm-neon", "vminq_u16"),
    ] {
        let ir = selected("fuzz_5_36", target);
        assert!(ir.contains(min), "{target}:\n{ir}");
        assert!(
            !ir.contains("blend") && !ir.contains("select"),
            "{target}:\n{ir}"
        );
    }
    runs_correctly("fuzz_5_36");
}

#[test]
fn dwords_saturated_to_bytes_on_avx512_are_packed_in_order_then_permuted_once() {
    // `saturating_cast<u8>` of four registers of dwords gathered the packs' blocks first,
    // two or three permutes a register, and divided the bytes by 3 then by 7 (0.76x clang
    // -O3). Packed in their own order and permuted once (rule sat_i32_u8_512_permuted),
    // and divided once by 21 (rule div_twice).
    let ir = selected("fuzz_7_44", "x86-avx512");
    assert_eq!(ir.matches("_mm512_packs_epi32").count(), 2, "{ir}");
    assert!(!ir.contains("i32x16 = shuffle"), "{ir}");
    assert_eq!(ir.matches("u8x64 = shuffle").count(), 1, "{ir}");
    assert_eq!(ir.matches(" = div ").count(), 1, "{ir}");
    runs_correctly_on_avx512("fuzz_7_44");
}
