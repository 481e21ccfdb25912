//! The benchmark kernels end to end: every kernel of `benchmarks/` compiles for each x86
//! target, runs natively on random and edge-case images (odd sizes, narrow rows), and every
//! output element of harrow's code and of the scalar C baseline equals the reference
//! interpreter's. Inputs sit just before an unreadable page, so reading past the footprint
//! fails the test.

use std::path::Path;

use harrow::kernel;

fn suite() -> Vec<(String, kernel::Kernel)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .expect("benchmarks/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hk"))
        .collect();
    v.sort();
    v.iter()
        .map(|p| {
            let src = harrow::diag::Source::new(
                p.display().to_string(),
                std::fs::read_to_string(p).expect("readable"),
            );
            let k = kernel::parse(&src).unwrap_or_else(|d| panic!("{}", d.render()));
            (p.display().to_string(), k)
        })
        .collect()
}

/// The suite kernel called `name`.
fn suite_kernel(name: &str) -> kernel::Kernel {
    suite()
        .into_iter()
        .find(|(_, k)| k.name == name)
        .unwrap_or_else(|| panic!("{name} in the suite"))
        .1
}

fn run_suite(target: &str) {
    let be = harrow::targets::backend(target).expect("target exists");
    let kernels = suite();
    assert!(
        kernels.len() >= 18,
        "the suite has {} kernels",
        kernels.len()
    );
    let mut failures = Vec::new();
    for (path, k) in &kernels {
        let size = harrow::cli::kernel::default_run_size(k);
        match kernel::harness::run(k, &be, &size, None, 7) {
            Ok(r) => {
                assert!(r.elements > 0);
                if let Some(m) = r.mismatch {
                    failures.push(format!("{path}: {m}"));
                }
            }
            Err(e) => failures.push(format!("{path}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn suite_runs_correctly_on_avx2() {
    run_suite("x86-avx2");
}

#[test]
fn suite_runs_correctly_on_avx512() {
    if !harrow::targets::x86::host_has_avx512() {
        println!("skipped: this machine cannot run AVX-512 code");
        return;
    }
    run_suite("x86-avx512");
}

#[test]
fn suite_runs_correctly_on_riscv_v() {
    harrow::isa::toolchain::require("qemu-riscv64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    run_suite("riscv-v");
}

#[test]
fn suite_runs_correctly_on_arm_neon() {
    harrow::isa::toolchain::require("qemu-aarch64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    run_suite("arm-neon");
}

#[test]
fn other_widths_and_sizes_run_correctly() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    for (path, k) in suite() {
        if !["sobel3x3", "matmul_u8", "average_pool", "conv_nn"].contains(&k.name.as_str()) {
            continue;
        }
        let size: Vec<i64> = match k.out_vars.len() {
            1 => vec![129],
            2 => vec![33, 4],
            _ => vec![17, 3, 2],
        };
        for lanes in [16, 64] {
            let r = kernel::harness::run(&k, &be, &size, Some(lanes), 3)
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(
                r.mismatch.is_none(),
                "{path} at {lanes} lanes: {:?}",
                r.mismatch
            );
            assert!(r.lanes >= lanes.min(16));
        }
    }
}

/// Wrong code is caught: the same kernel with a fault injected into the vector loop, the
/// narrow-row fallback or the baseline fails the run with a readable mismatch.
#[test]
fn the_harness_catches_wrong_code() {
    let src = harrow::diag::Source::new(
        "t.hk",
        "input in: u8[2]\noutput out(x, y): u8 = in(x, y) + in(x + 1, y)\n",
    );
    let k = kernel::parse(&src).unwrap();
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let b = kernel::c_file::build(&k, &be, None);
    // Rows of 300 run the unrolled loop, the loop of single chunks and the shifted tail.
    let ok = kernel::harness::run_c(&k, &be, &b.c, b.lanes, &[300, 3], 1).unwrap();
    assert!(ok.mismatch.is_none());
    let faults = [
        ("_mm256_add_epi8", "_mm256_sub_epi8", "harrow"),
        ("_mm_add_epi8", "_mm_sub_epi8", "harrow"),
        ("hv_out[v_x] = ", "hv_out[v_x] = 1 + ", "narrow"),
        (
            "out[v_x + v_y * out_s1] = ",
            "out[v_x + v_y * out_s1] = 2 * ",
            "scalar C",
        ),
    ];
    let mut injected = 0;
    for (from, to, who) in faults {
        if !b.c.contains(from) {
            continue;
        }
        injected += 1;
        let bad = b.c.replacen(from, to, 1);
        let r = kernel::harness::run_c(&k, &be, &bad, b.lanes, &[300, 3], 1).unwrap();
        let m = r
            .mismatch
            .unwrap_or_else(|| panic!("fault `{to}` was not caught"));
        assert!(m.contains("expected"), "{m}");
        if who != "narrow" {
            assert!(m.contains(who), "{m}");
        }
    }
    assert!(injected >= 3, "no fault could be injected:\n{}", b.c);
}

#[test]
fn scalar_baseline_is_plain_c() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    for (path, k) in suite() {
        let s = kernel::c_file::scalar_file(&k, "f");
        let body = &s[s.find("void f(").expect("the function")..];
        for banned in [
            "_mm",
            "__m256",
            "__m128",
            "ext_vector_type",
            "hv_u8x",
            "hv_i16x",
        ] {
            assert!(!body.contains(banned), "{path}: scalar C uses {banned}");
        }
        let (c, _, _) = kernel::c_file::c_file(&k, &be, None, "g");
        assert!(c.contains("void g("), "{path}");
    }
}

/// Splats and scalar conversions are single C operations, not lane loops or calls to the
/// exact 128-bit helpers (which are unoptimised on Hexagon: they made `add` 14 times slower
/// than Halide's pipeline), and the scalar baseline shifts by a constant amount written as
/// a conversion (`u32(15)`, from an FPIR expansion) with C's shift.
#[test]
fn splats_conversions_and_constant_shifts_are_plain_c() {
    let be = harrow::targets::backend("hvx").unwrap();
    for (path, k) in suite() {
        if !matches!(
            k.name.as_str(),
            "add" | "gaussian5x5" | "conv3x3a16" | "gaussian7x7"
        ) {
            continue;
        }
        let (c, _, _) = kernel::c_file::c_file(&k, &be, None, "g");
        let body = &c[c.find("void g(").expect("the function")..];
        assert!(!body.contains("hv_cast("), "{path}: a helper conversion");
        // Half-register loads (64-lane chunks) are aligned loads and valign, not the
        // freestanding library copy (a byte loop).
        assert!(!body.contains(" memcpy("), "{path}: a library memcpy");
        assert!(
            !body.contains("[i] = p_") && !body.contains("[i] = ((int"),
            "{path}: a splat written lane by lane"
        );
        if k.name == "add" {
            let s = kernel::c_file::scalar_file(&k, "f");
            let body = &s[s.find("void f(").expect("the function")..];
            assert!(
                !body.contains("hv_shr("),
                "{path}: the baseline calls hv_shr"
            );
        }
    }
}

/// `--vs halide`: with Halide 21 installed its pipeline is built, checked against harrow's
/// output and timed; without it the column says how to get it instead of failing.
#[test]
fn halide_baseline_is_built_or_explained() {
    let h = kernel::halide::Halide::detect();
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let k = suite_kernel("sobel3x3");
    match &h.status {
        Err(why) => {
            assert!(
                why.contains("pip install halide") || why.contains("python3"),
                "{why}"
            );
            eprintln!("Halide is not installed here: {why}");
        }
        Ok(_) => {
            let r = kernel::harness::bench(&k, &be, &[128, 16], None, Some(&h)).unwrap();
            assert!(r.halide_note.is_none(), "{:?}", r.halide_note);
            assert!(r.halide_per_elem.is_some_and(|t| t > 0.0));
        }
    }
}

/// The same on HVX: Halide's pipeline for the bare Hexagon target, built without its
/// runtime, links into the freestanding program with the target's glue and is counted.
#[test]
fn halide_baseline_on_hvx_is_built_or_explained() {
    harrow::isa::toolchain::require("qemu-hexagon", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    let h = kernel::halide::Halide::detect();
    let be = harrow::targets::backend("hvx").unwrap();
    let k = suite_kernel("add");
    match &h.status {
        Err(why) => eprintln!("Halide is not installed here: {why}"),
        Ok(_) => {
            let r = kernel::count::count(&k, &be, &[256], None, Some(&h)).unwrap();
            assert!(r.halide_note.is_none(), "{:?}", r.halide_note);
            assert!(r.halide_per_elem.is_some_and(|t| t > 0.0));
        }
    }
}

/// On HVX harrow's code is built at -O1 and the scalar baseline at -O3 in its own
/// translation unit, linked into the counted program (the runtime defined once).
#[test]
fn hvx_count_links_an_o3_baseline() {
    harrow::isa::toolchain::require("qemu-hexagon", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    let be = harrow::targets::backend("hvx").unwrap();
    assert_ne!(
        be.target.opt_level(harrow::isa::target::Purpose::Kernel),
        kernel::harness::BASELINE_OPT_LEVEL,
        "the split build is only exercised while the levels differ"
    );
    let k = suite_kernel("gaussian3x3");
    let r = kernel::count::count(&k, &be, &[256, 4], None, None).unwrap();
    assert!(r.scalar_per_elem > 0.0 && r.harrow_per_elem > 0.0);
    assert!(
        r.speedup() > 1.0,
        "{} vs {}",
        r.harrow_per_elem,
        r.scalar_per_elem
    );
}

#[test]
fn suite_runs_correctly_on_hvx() {
    harrow::isa::toolchain::require("qemu-hexagon", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    run_suite("hvx");
}

/// A sum computed in i32 but truncated to i16 is computed in i16 at twice the lanes (the
/// truncation moves to the leaves), at least a register of i16, and a Q15-style product of bounded values is computed
/// in i16 with its output filling a register; both still run correctly.
#[test]
fn kernels_are_narrowed_and_widened_by_cost() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let cases = [
        (
            "input in0: i8[1]\nrdom r = 0..9\noutput out(x): i16 = i16(sum(r, i32(in0(x + r))))\n",
            16,
        ),
        (
            "input in0: u8[1]\nparam zp: u8 = 76\noutput out(x): i8 = saturating_cast<i8>(saturating_add(i32(i16(in0(x)) - i16(zp)), i32(i16(in0(x)) - i16(zp)) * 5))\n",
            32,
        ),
    ];
    for (text, lanes) in cases {
        let k = kernel::parse(&harrow::diag::Source::new("t.hk", text)).unwrap();
        let c = kernel::codegen::compile_best(&k, &be, None);
        let ir = harrow::lower::listing(&c.body);
        assert!(c.lanes >= lanes, "{} lanes for {text}\n{ir}", c.lanes);
        assert!(!ir.contains("i32x"), "no 32-bit lanes are left:\n{ir}");
        let b = kernel::c_file::build(&k, &be, None);
        let r = kernel::harness::run_c(&k, &be, &b.c, b.lanes, &[300], 1).unwrap();
        assert!(r.mismatch.is_none(), "{:?}", r.mismatch);
    }
}

/// Byte products summed in u32 over a small reduction (a matrix product with a byte
/// row read as scalars): each tap is one `vpmaddwd` of the zero-extended bytes and the
/// widened weight (clang -O3's code; a word product widened again ran at 0.84x of it); and
/// with 13 weights hoisted (word rows), one chunk per loop iteration (two spilled: 0.80x
/// clang -O3).
#[test]
fn byte_products_with_splatted_weights_take_pmaddwd_and_many_weights_stay_unrolled_once() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    for (taps, elem) in [(3, "u8"), (13, "i16")] {
        let text = format!(
            "input in0: u8[2]\ninput in1: {elem}[2]\nrdom k = 0..{taps}\noutput out(x, y): u32 = sum(k, u32(in0(k, y)) * u32(in1(x, k)))\n"
        );
        let k = kernel_of(&text);
        let c = kernel::codegen::compile_best(&k, &be, None);
        let ir = harrow::lower::listing(&c.body);
        if elem == "u8" {
            // One per tap and register of eight u32 lanes.
            let per_tap = c.lanes as usize / 8;
            assert_eq!(ir.matches("vpmaddwd").count(), taps * per_tap, "{ir}");
            assert!(!ir.contains("vpmullw"), "{ir}");
        }
        let b = kernel::c_file::build(&k, &be, None);
        let steps: Vec<&str> =
            b.c.lines()
                .filter_map(|l| l.trim().strip_prefix("for (; p_hv_x <= e0 - "))
                .collect();
        if taps == 13 {
            assert_eq!(steps.len(), 1, "one loop of single chunks:\n{}", b.c);
        }
        assert_runs_correctly(&k, &be, &b.c, b.lanes, &[77, 5]);
    }
}

/// A row sum bound by its loads takes some taps from the previous chunk's load of the
/// row on x86 (one shuffle each instead of a load; clang -O3 does the same to the scalar
/// loop, which ran a 5-tap sum at 1.2x harrow's plain loads), runs correctly across the
/// unrolled loop's chunks and the shifted last chunk, and is left as loads where shuffles
/// cost what loads cost (Arm) or where products, not loads, bound the chunk.
#[test]
fn row_sums_take_loads_from_the_previous_chunk_where_loads_bound_them() {
    let sum = kernel_of(
        "input in0: i16[1]\nrdom r = 0..5\noutput out(x): u16 = sum(r, u16(in0(x + r)))\n",
    );
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let b = kernel::c_file::build(&sum, &avx2, None);
    assert_eq!(b.c.matches("_prev = (").count(), 1, "one anchor:\n{}", b.c);
    assert_eq!(
        b.c.matches("== 0) {").count(),
        2,
        "two taps taken:\n{}",
        b.c
    );
    for width in [16, 17, 130, 301] {
        assert_runs_correctly(&sum, &avx2, &b.c, b.lanes, &[width]);
    }
    let arm = harrow::targets::backend("arm-neon").unwrap();
    let c = kernel::c_file::build(&sum, &arm, None).c;
    assert!(!c.contains("_prev"), "{c}");
    let products = kernel_of(
        "input in0: u8[1]\nrdom r = 0..5\noutput out(x): i32 = sum(r, i32(in0(x + r)) * (r + 3) * (r + 1))\n",
    );
    let c = kernel::c_file::build(&products, &avx2, None).c;
    assert!(!c.contains("_prev"), "{c}");
}

/// On Arm, a row's main loop counts its iterations (past eight rows of one chunk an
/// iteration, it steps one offset instead); the rows a product reads are pinned
/// in registers of their own (clang's loop strength reduction otherwise adds the stride
/// before each load) where the target has the registers (Arm: 31), up to a limit; x86 and
/// RISC-V keep the stepped loop and unpinned rows. The code is right at widths around the
/// loop's step and at several heights.
#[test]
fn arm_rows_loops_are_counted_and_row_pointers_pinned() {
    let product = |rows: u32| {
        kernel_of(&format!(
            "input a: i8[2]\ninput b: i8[2]\nrdom k = 0..{rows}\noutput out(x, y): u16 = sum(k, u16(a(k, y)) * u16(b(x, k)))\n"
        ))
    };
    let (six, thirty) = (product(6), product(30));
    let arm = harrow::targets::backend("arm-neon").unwrap();
    let built = kernel::c_file::build(&six, &arm, None);
    let pinned = built.c.matches("HV_PIN(b_hv_row").count();
    assert!(
        pinned >= 6,
        "each row of `b` pinned ({pinned}):\n{}",
        built.c
    );
    assert!(built.c.contains("hv_steps = e0 / "), "{}", built.c);
    for extents in [[16, 1], [17, 3], [95, 2], [200, 5]] {
        assert_runs_correctly(&six, &arm, &built.c, built.lanes, &extents);
    }
    // Thirteen rows, one chunk an iteration: more pointers than clang steps, so the loop
    // steps one offset that every row's load takes as its index.
    let thirteen = kernel_of(
        "input a: u8[2]\ninput b: i8[2]\nrdom k = 0..13\noutput out(x, y): i16 = sum(k, i16(a(k, y)) * i16(b(x, k)))\n",
    );
    let built = kernel::c_file::build(&thirteen, &arm, None);
    assert!(
        built.c.contains("hv_off < hv_end") && !built.c.contains("hv_steps"),
        "{}",
        built.c
    );
    for extents in [[16, 1], [17, 3], [95, 2], [200, 5]] {
        assert_runs_correctly(&thirteen, &arm, &built.c, built.lanes, &extents);
    }
    let c = kernel::c_file::build(&thirty, &arm, None).c;
    assert!(!c.contains("HV_PIN(b_"), "31 rows would spill:\n{c}");
    // x86 has 16 general registers: six rows are pinned, thirty are not; its row loops
    // step the position. RISC-V leaves both to clang.
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let c = kernel::c_file::build(&six, &avx2, None).c;
    assert!(
        c.matches("HV_PIN(b_hv_row").count() >= 6 && !c.contains("hv_steps"),
        "x86-avx2:\n{c}"
    );
    let c = kernel::c_file::build(&thirty, &avx2, None).c;
    assert!(!c.contains("HV_PIN(b_"), "x86-avx2, 31 rows:\n{c}");
    let riscv = harrow::targets::backend("riscv-v").unwrap();
    let c = kernel::c_file::build(&six, &riscv, None).c;
    assert!(
        !c.contains("HV_PIN(b_") && !c.contains("hv_steps"),
        "riscv-v:\n{c}"
    );
}

/// A 3x3 stencil of i16 summed in i32 on AVX2 takes 16 lanes (paired taps in `vpmaddwd`
/// over unpacked rows), not 8 lanes of widening loads: the 8-lane form had been credited
/// for hoisting its constant weights out of the loop although constants cost nothing in a
/// chunk (0.90x clang -O3 at 8 lanes, 1.4x at 16). It runs correctly.
#[test]
fn constant_weights_are_not_credited_as_hoisted() {
    let text = "input in0: i16[2]\noutput out(x, y): i16 = i16(clamp((i32(in0(x - 1, y - 1)) + i32(in0(x, y - 1)) * 6 + i32(in0(x + 1, y - 1)) * 3 + i32(in0(x - 1, y)) * 3 + i32(in0(x, y)) * 5 + i32(in0(x + 1, y)) * -1 + i32(in0(x - 1, y + 1)) * -2 + i32(in0(x, y + 1)) * 5 + i32(in0(x + 1, y + 1))) >> 2, -32768, 32767))\n";
    let k = kernel_of(text);
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let c = kernel::codegen::compile_best(&k, &avx2, None);
    let listing = harrow::lower::listing(&c.body);
    assert!(
        c.lanes >= 16 && listing.contains("vpmaddwd") && listing.contains("vpunpckl16"),
        "{} lanes:\n{listing}",
        c.lanes
    );
    let b = kernel::c_file::build(&k, &avx2, None);
    assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[100, 3]);
}

/// Identities clang folds in the scalar baseline are folded before selection: a select
/// between equal arms and a saturating add of `d - d` leave no comparison, no select and no
/// saturating add in the selected code.
#[test]
fn trivial_identities_are_folded_before_selection() {
    let text = "input in0: u16[1]\ninput in1: i16[1]\noutput out(x): i32 = i32(saturating_add(select(in0(x) < u16(in1(x)), in1(x), in1(x)), i16(in1(x + 1)) - i16(in1(x + 1))) / 8)\n";
    let k = kernel_of(text);
    for target in ["x86-avx2", "arm-neon"] {
        let be = harrow::targets::backend(target).unwrap();
        let c = kernel::codegen::compile_best(&k, &be, None);
        let listing = harrow::lower::listing(&c.body);
        // `in0` is read only by the comparison: its row goes with it.
        for gone in [
            " select ",
            " lt ",
            "saturating_add",
            "vpaddsw",
            "sqadd",
            "hv_row1",
        ] {
            assert!(
                !listing.contains(gone),
                "{target}: `{gone}` left:\n{listing}"
            );
        }
    }
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let b = kernel::c_file::build(&k, &avx2, None);
    assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[100]);
}

/// A kernel from its text.
fn kernel_of(text: &str) -> kernel::Kernel {
    kernel::parse(&harrow::diag::Source::new("t.hk", text)).unwrap()
}

/// Runs the C `c` of `k` at `extents` and fails on any output that differs from the
/// interpreter's.
fn assert_runs_correctly(
    k: &kernel::Kernel,
    be: &harrow::lower::Backend,
    c: &str,
    lanes: u32,
    extents: &[i64],
) {
    let r = kernel::harness::run_c(k, be, c, lanes, extents, 1).unwrap();
    assert!(r.mismatch.is_none(), "{extents:?}: {:?}", r.mismatch);
}

/// A cheap element-wise body runs several vectors per loop iteration, then single chunks,
/// then a shifted last chunk, with load positions in pointer-sized arithmetic; a copy is the
/// plain loop clang turns into `memcpy`. Every row width from one chunk to past two unrolled
/// iterations is computed correctly.
#[test]
fn rows_are_unrolled_and_copies_stay_plain_loops() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let k = kernel_of("input in: u8[1]\noutput out(x): u8 = in(x) + in(x + 1)\n");
    let b = kernel::c_file::build(&k, &be, None);
    let steps: Vec<u32> =
        b.c.lines()
            .filter_map(|l| l.trim().strip_prefix("for (; p_hv_x <= e0 - "))
            .filter_map(|l| l.split(';').next()?.parse().ok())
            .collect();
    assert!(
        steps.len() == 2 && steps[0] > steps[1] && steps[0] <= kernel::vector_c::MAX_UNROLLED_LANES,
        "an unrolled loop and a loop of single chunks: {steps:?}\n{}",
        b.c
    );
    assert!(
        b.c.contains("ptrdiff_t v"),
        "load positions in ptrdiff_t:\n{}",
        b.c
    );
    for width in [
        steps[1] as i64,
        47,
        steps[0] as i64 + 1,
        2 * steps[0] as i64 + 33,
    ] {
        assert_runs_correctly(&k, &be, &b.c, b.lanes, &[width]);
    }

    // An extension truncated back to the width it started from keeps the bits too
    // (fuzz_8_149 of seed 8: as vector loops, three `memcpy` calls, 0.76x on Arm).
    for body in [
        "u16(in(x + 1))",
        "u16(u32(in(x + 1)))",
        "u16(i64(u16(in(x + 1))))",
    ] {
        let text = format!("input in: i16[1]\noutput out(x): u16 = {body}\n");
        let k = kernel_of(&text);
        let b = kernel::c_file::build(&k, &be, None);
        assert!(
            !b.c.contains("p_hv_x"),
            "a copy is one plain loop:\n{}",
            b.c
        );
        assert_runs_correctly(&k, &be, &b.c, b.lanes, &[300]);
    }
    // Through a narrower type bits are lost: vector code.
    let k = kernel_of("input in: i16[1]\noutput out(x): u16 = u16(u8(in(x + 1)))\n");
    let b = kernel::c_file::build(&k, &be, None);
    assert!(b.c.contains("p_hv_x"), "not a copy:\n{}", b.c);
    assert_runs_correctly(&k, &be, &b.c, b.lanes, &[300]);
}

/// Counted, the same code costs the same: harrow's function and the baseline are both
/// calls, through one pointer, so a copy (the same `memcpy` call in both) counts 1.00x.
#[test]
fn identical_code_counts_identically() {
    let be = harrow::targets::backend("arm-neon").unwrap();
    let k = kernel_of("input in: i8[1]\noutput out(x): u8 = u8(in(x + 1))\n");
    let r = kernel::count::count(&k, &be, &[256], None, None).unwrap();
    assert_eq!(r.harrow_per_elem, r.scalar_per_elem, "{:?}", r.name);
}

/// A strided load at an offset reads nothing before its footprint: inputs sit just
/// after an unreadable page in every other case, so a read before the footprint faults.
#[test]
fn strided_loads_read_nothing_before_the_footprint() {
    for target in ["x86-avx2", "arm-neon"] {
        let be = harrow::targets::backend(target).unwrap();
        let k =
            kernel_of("input in: i32[1]\noutput out(x): i8 = saturating_cast<i8>(in(3 * x + 1))\n");
        let r = kernel::harness::run(&k, &be, &[300], None, 1).unwrap();
        assert!(r.mismatch.is_none(), "{target}: {:?}", r.mismatch);
    }
}

/// On Arm, strided slices of a load of exactly `stride` registers are one structured load
/// (`vld3q`): clang did not find `ld3` behind the shuffle when a narrowing followed it, and
/// moved lanes one by one. A strided slice wider than a register is one per half (`vld2q`).
#[test]
fn strided_loads_deinterleave_with_structured_loads_on_arm() {
    let be = harrow::targets::backend("arm-neon").unwrap();
    for (text, load, count) in [
        (
            "input in: i16[1]\noutput out(x): i32 = i32(u8(in(3 * x + 2)) - saturating_cast<u8>(in(3 * x)))\n",
            "vld3q_s16(",
            2,
        ),
        (
            "input in: u16[1]\noutput out(x): i8 = i8(i16(in(2 * x)) * 2 + i16(in(2 * x + 1)))\n",
            "vld2q_u16(",
            2,
        ),
    ] {
        let k = kernel_of(text);
        let b = kernel::c_file::build(&k, &be, Some(16));
        // The shifted last chunk computes one chunk: 16 lanes, two registers of 16 bits.
        let last_chunk = b.c.split("if (p_hv_x < e0)").nth(1).unwrap_or("");
        let last_chunk = last_chunk.split("} else {").next().unwrap_or("");
        assert_eq!(last_chunk.matches(load).count(), count, "{load}:\n{}", b.c);
        assert_runs_correctly(&k, &be, &b.c, b.lanes, &[300]);
    }
}

/// On AVX2 (16 registers), a 12-tap byte product sum with its 12 splatted weights takes the
/// width whose accumulator fits beside them (16 lanes of u16), not the 32 that spill (it
/// took 32 before spills were priced, and ran at 0.64x clang -O3); it runs correctly.
#[test]
fn kernel_widths_keep_weights_in_registers() {
    let text = "input in0: i8[2]\ninput in1: i8[2]\nrdom k = 0..12\noutput out(x, y): u16 = sum(k, u16(in0(k, y)) * u16(in1(x, k)))\n";
    let k = kernel_of(text);
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let c = kernel::codegen::compile_best(&k, &avx2, None);
    assert_eq!(c.lanes, 16, "{}", harrow::lower::listing(&c.body));
    let b = kernel::c_file::build(&k, &avx2, None);
    assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[300, 4]);
    let wide = kernel::codegen::compile(&k, &avx2, 32);
    assert!(
        wide.cost_on(avx2.target.as_ref()) / 32.0 > c.cost_on(avx2.target.as_ref()) / 16.0,
        "32 lanes should be priced above 16 on AVX2"
    );
}

/// A small matrix product of u8 data and i16 weights, summed in i32 (a kernel nobody tuned
/// for; it ran at 0.47x clang -O3 on Arm): the mixed-width products are half-word widening
/// multiplies, so Arm accumulates with `smlal`/`smlal2` from one widened half row per
/// 8 lanes (no four-byte loads) and x86 pairs the taps into `vpmaddwd`; both run correctly.
#[test]
fn mixed_width_matrix_products_accumulate_widening() {
    let text = "input in0: i16[2]\ninput in1: u8[2]\nrdom k = 0..15\noutput out(x, y): i32 = sum(k, i32(in0(k, y)) * i32(in1(x, k)))\n";
    let k = kernel_of(text);
    let arm = harrow::targets::backend("arm-neon").unwrap();
    let c = kernel::codegen::compile_best(&k, &arm, None);
    let ir = harrow::lower::listing(&c.body);
    assert!(c.lanes >= 16, "{} lanes:\n{ir}", c.lanes);
    // By a vector of weights, or by one weight (`smlal` by element, imported from Arm's
    // specification), which saves its broadcast.
    assert!(
        ir.contains("vmlal_s16") || ir.contains("vmlal_n_s16"),
        "multiply-accumulates:\n{ir}"
    );
    assert!(!ir.contains("vmulq_s32"), "no full-width multiply:\n{ir}");
    // One widening per half row (the high half of it feeds `smlal2`), not one per quarter.
    assert!(!ir.contains("u8x4") && !ir.contains("i16x4 = cast"), "{ir}");
    let b = kernel::c_file::build(&k, &arm, None);
    assert_runs_correctly(&k, &arm, &b.c, b.lanes, &[300, 4]);
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let c = kernel::codegen::compile_best(&k, &avx2, None);
    let ir = harrow::lower::listing(&c.body);
    assert!(
        ir.contains("_mm256_madd_epi16"),
        "vpmaddwd pairs the taps:\n{ir}"
    );
    // Where selection leaves a product of a widened byte by a widened word weight as a
    // 32-bit multiply, clang -O3 knows both fit 16 bits and makes it a `vpmaddwd` too:
    // what runs has no `vpmulld` (Intel's takes two cycles per vector).
    let (c_text, _, _) = kernel::c_file::c_file(&k, &avx2, None, "f");
    let asm = harrow::isa::toolchain::assembly(
        avx2.target.as_ref(),
        harrow::isa::target::Purpose::Assembly,
        &c_text,
    )
    .unwrap_or_else(|e| panic!("clang-19 is needed for this test: {e}"));
    assert!(asm.contains("vpmaddwd"), "{asm}");
    assert!(!asm.contains("vpmulld"), "no vpmulld in what runs:\n{asm}");
    let b = kernel::c_file::build(&k, &avx2, None);
    assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[300, 4]);
}

/// HVX kernels are built at -O1, where the scalar fallback for rows narrower than a vector
/// is slower than the -O3 baseline: such rows take a variant at half the lanes, which is
/// vector code too, and every row width runs correctly (the narrow path, the scalar path
/// below it, and the full vectors).
#[test]
fn hvx_rows_narrower_than_a_vector_take_a_narrow_vector_variant() {
    let text =
        "input in0: u8[1]\noutput out(x): u8 = u8((u16(in0(x)) + u16(in0(x + 1)) * 3) >> 2)\n";
    let k = kernel_of(text);
    let hvx = harrow::targets::backend("hvx").unwrap();
    let c = kernel::codegen::compile_best(&k, &hvx, None);
    let narrow = kernel::codegen::narrow_variant(&k, &hvx, &c).expect("a narrow variant on HVX");
    assert_eq!(narrow.lanes * 2, c.lanes);
    let b = kernel::c_file::build(&k, &hvx, None);
    assert!(
        b.c.contains(&format!("if (e0 >= {}) {{", narrow.lanes))
            && b.c.contains("hv_kernel_narrow(out, in_in0, e0);"),
        "rows narrower than a vector call the narrow variant:\n{}",
        b.c
    );
    let n = i64::from(narrow.lanes);
    for extent in [n / 2, n + 5, 2 * n + 7] {
        assert_runs_correctly(&k, &hvx, &b.c, b.lanes, &[extent]);
    }
    // Targets that build kernels at the baseline's level keep the scalar fallback.
    let arm = harrow::targets::backend("arm-neon").unwrap();
    let c = kernel::codegen::compile_best(&k, &arm, None);
    assert!(kernel::codegen::narrow_variant(&k, &arm, &c).is_none());
}

/// On HVX a kernel whose work is on bytes takes a register of them (128 lanes) over the
/// default of half a register of its widest type (64 i32 lanes, where a byte division was
/// half a register that clang scalarizes: 0.81x clang -O3), and keeps the narrow variants
/// the default width had for narrower rows (64 and 32 lanes, each calling the next);
/// every row width runs correctly.
#[test]
fn hvx_byte_work_fills_a_register_and_keeps_narrow_variants() {
    let text = "input in0: u8[1]\noutput out(x): i32 = i32(in0(x + 1) / 5)\n";
    let k = kernel_of(text);
    let hvx = harrow::targets::backend("hvx").unwrap();
    let c = kernel::codegen::compile_best(&k, &hvx, None);
    assert_eq!(c.lanes, 128);
    let narrow = kernel::codegen::narrow_variant(&k, &hvx, &c).expect("a 64-lane variant");
    assert_eq!(narrow.lanes, 64);
    let narrower = kernel::codegen::narrow_variant(&k, &hvx, &narrow).expect("a 32-lane one");
    assert_eq!(narrower.lanes, 32);
    assert!(kernel::codegen::narrow_variant(&k, &hvx, &narrower).is_none());
    let b = kernel::c_file::build(&k, &hvx, None);
    for f in ["hv_kernel_narrow(", "hv_kernel_narrow_narrow("] {
        assert!(b.c.contains(f), "{f} is defined and called:\n{}", b.c);
    }
    for extent in [20, 40, 100, 300] {
        assert_runs_correctly(&k, &hvx, &b.c, b.lanes, &[extent]);
    }
}

/// On HVX a stride-3 byte window of 64 lanes is 192 bytes, one and a half registers: it is
/// loaded as a whole register and a part one through an aligned buffer (the C library's
/// copy is a byte loop, and copying the registers straight into the odd-sized vector made
/// clang-19's Hexagon backend fail), and it runs correctly, narrow rows included.
#[test]
fn hvx_windows_of_one_and_a_half_registers_load_by_registers() {
    let text =
        "input in0: u8[1]\noutput out(x): i32 = i32((u16(in0(3 * x + 2)) - u16(in0(3 * x + 0))))\n";
    let k = kernel_of(text);
    let hvx = harrow::targets::backend("hvx").unwrap();
    let b = kernel::c_file::build(&k, &hvx, None);
    assert!(
        b.c.contains("hv_vload_part(") && b.c.contains("HVX_Vector t_[2];"),
        "a register and a part one:\n{}",
        b.c
    );
    assert!(!b.c.contains(" memcpy(&"), "no library copy:\n{}", b.c);
    for extent in [40, 100, 300] {
        assert_runs_correctly(&k, &hvx, &b.c, b.lanes, &[extent]);
    }
}

/// Every third byte (a strided copy, as an RGB plane is read): clang lowers a 96-byte
/// load and its stride-3 shuffle with in-lane blends and byte shuffles, so a full 32-byte
/// register of output is the width (at 16 lanes it ran 0.93x clang -O3's own loop). The
/// wide load's ramp of 96 indices is an address, not 12 live registers, so it adds no
/// estimated spills.
#[test]
fn strided_byte_triples_fill_a_register() {
    let k = kernel_of(
        "input in0: u8[1]\noutput out(x): u8 = saturating_cast<u8>(i32(in0(3 * x + 2)))\n",
    );
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let b = kernel::c_file::build(&k, &avx2, None);
    assert_eq!(b.lanes, 32, "{}", b.c);
    for width in [32, 33, 100] {
        assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[width]);
    }
    let avx512 = harrow::targets::backend("x86-avx512").unwrap();
    assert_eq!(kernel::c_file::build(&k, &avx512, None).lanes, 64);
    // Every third i16 across two registers has no such lowering: clang blends across the
    // whole window (0.79x clang -O3 gathering 32 lanes at once, 0.98x 16), so it is
    // gathered eight lanes at a time, from 48 bytes (1.13-1.22x clang -O3, fuzz_1_61).
    let words = kernel_of(
        "input in0: i16[1]\noutput out(x): i32 = i32(u8(in0(3 * x + 2)) - saturating_cast<u8>(in0(3 * x + 0)))\n",
    );
    let c = kernel::codegen::compile_best(&words, &avx2, None);
    let listing = harrow::lower::listing(&c.body);
    assert!(
        listing.contains("(int16x24)") && !listing.contains("(int16x48)"),
        "{listing}"
    );
}

/// Byte products by splatted weights at 16 lanes on Arm: the high halves take `smlal2`
/// (`vmlal_high_s8`) with the weight splatted to a whole register, instead of extracting
/// each high half for `smlal` (12 `vget_high` more per vector; 0.87x clang -O3 before).
#[test]
fn high_halves_multiply_by_splats_with_smlal2() {
    let ir = arm_listing_at_16_lanes(
        "input in0: i8[2]\ninput in1: i8[2]\nrdom k = 0..12\noutput out(x, y): u16 = sum(k, u16(in0(k, y)) * u16(in1(x, k)))\n",
    );
    assert!(ir.matches("vmlal_high_s8").count() >= 11, "{ir}");
    assert!(!ir.contains("vget_high_s8"), "{ir}");
}

/// The listing of the body of the kernel `text` on arm-neon at 16 lanes, after checking
/// that the kernel's C runs correctly.
fn arm_listing_at_16_lanes(text: &str) -> String {
    let k = kernel_of(text);
    let arm = harrow::targets::backend("arm-neon").unwrap();
    let b = kernel::c_file::build(&k, &arm, Some(16));
    assert_runs_correctly(&k, &arm, &b.c, b.lanes, &[37, 5]);
    let c = kernel::codegen::compile_best(&k, &arm, Some(16));
    harrow::lower::listing(&c.body)
}

/// A sum of byte products of mixed signs on Arm (a `u8` weight times an `i8` row, in
/// `i16`): no widening instruction multiplies mixed signs, so each product is the widened
/// operands' `mul`, and selection sees through the product's FPIR form to accumulate with
/// `mla` instead of a `mul` and an `add` per tap (0.88x clang -O3 before, 1.03x after).
/// Since a cast pattern matches the splat of a cast scalar, the weight is a scalar operand
/// and the `mla` the by-element form (`vmlaq_n_s16`, no splat register: 1.05x).
#[test]
fn mixed_sign_products_accumulate_with_mla() {
    let ir = arm_listing_at_16_lanes(
        "input in0: u8[2]\ninput in1: i8[2]\nrdom k = 0..6\noutput out(x, y): i16 = sum(k, i16(in0(k, y)) * i16(in1(x, k)))\n",
    );
    let mlas = ir.matches("vmlaq_s16").count() + ir.matches("vmlaq_n_s16").count();
    assert!(mlas >= 10, "{ir}");
    assert!(ir.matches("vaddq_s16").count() <= 1, "{ir}");
}

/// `--explain` can say where every instruction of a selection came from: each one in the
/// suite's code, on every target, has a recorded origin (a rule, an instruction's own
/// semantics, or a strategy), and the origins name rule files and descriptions.
#[test]
fn every_selected_instruction_has_an_origin() {
    use harrow::ir::Op;
    let mut kinds = std::collections::HashSet::new();
    for target in harrow::targets::names() {
        let be = harrow::targets::backend(target).unwrap();
        for (name, k) in suite() {
            let c = kernel::codegen::compile_best(&k, &be, None);
            for l in c.steps.iter().chain(c.outputs()) {
                let known: std::collections::HashSet<usize> =
                    l.origins.iter().map(|(n, _)| n.id()).collect();
                for n in harrow::ir::visit::post_order(&l.selected) {
                    if matches!(n.op(), Op::Instr(_)) {
                        assert!(
                            known.contains(&n.id()),
                            "{target} {name}: no origin for {n}"
                        );
                    }
                }
                for (_, o) in l.origins.iter() {
                    kinds.insert(std::mem::discriminant(o));
                }
            }
        }
    }
    // Rules, semantics, strategies and strategies rebuilding what rules chose all occur.
    assert_eq!(kinds.len(), 4, "origins of some kind never recorded");
}

/// Compiles the kernel `text` for x86-avx2 (at `width` lanes, or at the width it picks),
/// checks that it runs correctly on this machine, and returns the lanes it was compiled at
/// and the listing of its selected instructions.
fn compile_and_run_on_avx2(text: &str, width: Option<u32>) -> (u32, String) {
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let k = kernel_of(text);
    let c = kernel::codegen::compile_best(&k, &avx2, width);
    let b = kernel::c_file::build(&k, &avx2, width);
    assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[100]);
    (c.lanes, harrow::lower::listing(&c.body))
}

/// Every fourth byte, or every second half word, widened to 32 bits is read in place on
/// x86: the load reinterpreted as dwords, the lane shifted down and the rest masked off
/// (zero extension) or shifted out (sign extension), instead of byte shuffles gathering
/// the lanes (`fuzz_1_22` ran at 0.96x clang -O3 that way; 1.04-1.09x in place). Each
/// position and signedness runs correctly. So is a clamp of such lanes, widened first and
/// clamped in 32-bit lanes: lifting narrows the clamp to the bytes, which left the clamped
/// bytes to be gathered by shuffles and extended (0.85-0.99x clang -O3).
#[test]
fn strided_narrow_lanes_are_widened_in_place_on_x86() {
    for (input, out, body) in [
        ("u8", "i32", "i32(in0(4 * x + 0))"),
        ("u8", "u32", "u32(in0(4 * x + 1))"),
        ("u8", "i32", "i32(in0(4 * x + 3))"),
        ("i8", "i32", "i32(in0(4 * x + 2))"),
        ("i16", "u32", "u32(in0(2 * x + 0))"),
        ("u16", "i32", "i32(in0(2 * x + 1))"),
        ("u8", "i32", "i32(clamp(u32(in0(4 * x + 0)), 27, 171))"),
        ("u8", "u32", "u32(max(min(in0(4 * x + 2), 200), 3))"),
        ("i16", "i32", "i32(clamp(in0(2 * x + 1), -100, 900))"),
    ] {
        let text = format!("input in0: {input}[1]\noutput out(x): {out} = {body}\n");
        let (_, listing) = compile_and_run_on_avx2(&text, None);
        assert!(
            listing.contains("reinterpret") && !listing.contains("slice_vectors"),
            "{input}: {body}:\n{listing}"
        );
    }
}

/// Half words gathered by a stride take the width clang gathers them best at on AVX2:
/// every fourth a whole register at a time (eight from 64 bytes take seven operations,
/// sixteen thirteen; priced as one shuffle, the eight-lane form won and ran 0.85x clang
/// -O3), every third half a register at a time (eight take four operations, sixteen
/// eleven; the sixteen-lane form ran 0.93x where eight ran 0.98-1.01x), so a register of
/// them is two halves joined (`vinserti128`) and the rest of the kernel runs at sixteen
/// lanes (fuzz_1_111 of seed 1: 1.27x clang -O3 at eight lanes, 1.52x so).
#[test]
fn strided_half_words_are_gathered_at_the_cheapest_width_on_avx2() {
    for (body, lanes) in [
        ("i16((clamp(u32(in0(4 * x + 0)), 29, 178) * 5))", 16),
        ("saturating_cast<u16>(((i32(in0(3 * x + 0)) << 4) * 9))", 16),
    ] {
        let out = if body.starts_with("i16") {
            "i16"
        } else {
            "u16"
        };
        let text = format!("input in0: i16[1]\noutput out(x): {out} = {body}\n");
        let (chosen, listing) = compile_and_run_on_avx2(&text, None);
        assert_eq!(chosen, lanes, "{body}\n{listing}");
        let by_halves = listing.contains("_mm256_set_m128i");
        assert_eq!(by_halves, body.contains("3 * x"), "{body}\n{listing}");
    }
}

/// A half word times a constant in 32 bits, narrowed by a pack, is a `pmaddwd` of the
/// half words unpacked against zero (the pack's block order) and the weight paired with a
/// zero, as clang does it: not an unpack, a shift and a `pmulld` (two operations at ten
/// cycles' latency) per register.
#[test]
fn a_weighted_half_word_is_multiplied_by_pmaddwd_on_avx2() {
    let text = "input in0: i16[1]\noutput out(x): u16 = saturating_cast<u16>(i32(in0(x)) * 144)\n";
    let (_, listing) = compile_and_run_on_avx2(text, None);
    assert!(
        listing.contains("_mm256_madd_epi16") && !listing.contains("mullo_epi32"),
        "{listing}"
    );
}

/// A truncation of strided dwords to words is the gathered dwords masked and packed: left
/// to a C conversion, clang fused it with the gather into one word shuffle of the whole
/// load (16 operations for 16 lanes; 0.95x clang -O3 on fuzz_1_7, 1.10x so).
#[test]
fn truncated_strided_dwords_are_masked_and_packed_on_avx2() {
    let text =
        "input in0: i32[1]\noutput out(x): u16 = u16(in0(3 * x + 1)) - u16(in0(3 * x + 0) >> 3)\n";
    let (_, listing) = compile_and_run_on_avx2(text, Some(16));
    assert!(
        listing.contains("_mm256_and_si256") && listing.contains("_mm256_packus_epi32"),
        "{listing}"
    );
}

/// The scalar C of a kernel whose FPIR operations are written by their definitions names
/// every value by the node that computes it, whatever nodes were built and dropped before
/// (it named nodes by address without holding them: a definition dropped after one
/// rounding multiply left its addresses to the next one's nodes, and `add` on HVX added
/// the shift count instead of the rounding bit).
#[test]
fn scalar_c_is_the_same_text_after_other_work() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/add.hk");
    let text = std::fs::read_to_string(&path).unwrap();
    let k = kernel_of(&text);
    // The function alone (the prelude before it is fixed text).
    let function = || {
        let c = kernel::c_file::scalar_file(&k, "f");
        c[c.find("void f(").expect("the function")..].to_string()
    };
    let fresh = function();
    let avx2 = harrow::targets::backend("x86-avx2").unwrap();
    let b = kernel::c_file::build(&k, &avx2, None);
    for _ in 0..3 {
        assert_eq!(function(), fresh);
    }
    // Each rounding multiply shifts its own product twice (by 15, and by 14 for its
    // rounding bit), and the result is rounded by a shift of 6 and of 5: five shifts.
    assert_eq!(fresh.matches(">> t").count(), 5, "{fresh}");
    assert_runs_correctly(&k, &avx2, &b.c, b.lanes, &[100]);
}
