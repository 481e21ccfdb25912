//! Line-buffered kernels end to end: a separable stencil runs through its ring of lines on
//! images large enough (a fault injected into a line is then seen in the output) and
//! through its own code on small ones (the same fault is then never read), and is correct
//! either way, at strip boundaries and on rows narrower than a vector.

use harrow::kernel;

fn gaussian5x5() -> kernel::Kernel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/gaussian5x5.hk");
    let text = std::fs::read_to_string(&path).expect("the suite's gaussian5x5");
    let src = harrow::diag::Source::new(path.display().to_string(), text);
    kernel::parse(&src).unwrap_or_else(|d| panic!("{}", d.render()))
}

/// The statement of `line_buffer.c` that computes a line.
const PRODUCE: &str = "HV_LB_PRODUCE(hv_line, hv_yy, hv_xs + HV_LB_XLO, hv_w + HV_LB_XSPAN);";

fn mismatch(
    k: &kernel::Kernel,
    be: &harrow::lower::Backend,
    c: &str,
    lanes: u32,
    size: &[i64],
) -> Option<String> {
    let r = kernel::harness::run_c(k, be, c, lanes, size, 5)
        .unwrap_or_else(|e| panic!("{size:?}: {e}"));
    r.mismatch
}

fn lines_are_used_where_they_pay(target: &str) {
    let be = harrow::targets::backend(target).expect("target exists");
    let k = gaussian5x5();
    let b = kernel::c_file::build(&k, &be, None);
    assert!(
        b.c.contains(PRODUCE),
        "gaussian5x5 on {target} is computed through a line buffer:\n{}",
        &b.c[..b.c.len().min(600)]
    );
    // Wide and tall (several strips, the last one shifted), tall and narrow, one row.
    let large: [&[i64]; 3] = [&[7000, 9], &[300, 40], &[1000, 6]];
    let small: [&[i64]; 3] = [&[5, 9], &[40, 1], &[1, 1]];
    for size in large.iter().chain(&small) {
        assert_eq!(
            mismatch(&k, &be, &b.c, b.lanes, size),
            None,
            "{target} {size:?}"
        );
    }
    // A fault in every line's middle element: seen where the lines are used, never read
    // where the kernel's own code runs.
    let faulty =
        b.c.replace(PRODUCE, &format!("{PRODUCE} hv_line[hv_w / 2] += 1;"));
    for size in large {
        assert!(
            mismatch(&k, &be, &faulty, b.lanes, size).is_some(),
            "{target} {size:?}: the lines are used"
        );
    }
    for size in small {
        assert_eq!(
            mismatch(&k, &be, &faulty, b.lanes, size),
            None,
            "{target} {size:?}: the kernel's own code runs"
        );
    }
}

#[test]
fn lines_are_used_where_they_pay_on_avx2() {
    lines_are_used_where_they_pay("x86-avx2");
}

#[test]
fn lines_are_used_where_they_pay_on_arm_neon() {
    harrow::isa::toolchain::require("qemu-aarch64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    lines_are_used_where_they_pay("arm-neon");
}

#[test]
fn lines_are_used_where_they_pay_on_hvx() {
    harrow::isa::toolchain::require("qemu-hexagon", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    lines_are_used_where_they_pay("hvx");
}

/// `--emit ir` and `--explain` say that the kernel is line-buffered and list each part.
#[test]
fn the_listing_and_the_explanation_name_the_line() {
    let be = harrow::targets::backend("x86-avx2").unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/gaussian5x5.hk");
    let ir = harrow::cli::kernel::compile(&path, &be, "ir", "f", None).unwrap();
    for part in [
        "; line (computed once per line)",
        "; output from the lines",
        "; output without the lines",
    ] {
        assert!(ir.contains(part), "{part} in:\n{ir}");
    }
    let why = harrow::cli::kernel::explain(&path, &be, "x86-avx2", None).unwrap();
    assert!(why.contains("line buffer: `"), "{why}");
}

/// The line-buffered code of `text` on `target`, forced to use its lines on every call
/// (the per-call choice made always true), so that the lines are checked whatever the
/// estimates say; `None` where the cost model keeps the kernel's own code.
fn forced_lines(text: &str, be: &harrow::lower::Backend) -> Option<(kernel::Kernel, String, u32)> {
    let k = kernel::parse(&harrow::diag::Source::new("t.hk", text))
        .unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(
        kernel::line_buffer::plan(&k).is_some(),
        "{} has a line buffer",
        k.name
    );
    let b = kernel::c_file::build(&k, be, None);
    let choice = "if (e0 > HV_LB_MIN_W";
    b.c.contains(choice).then(|| {
        (
            k.clone(),
            b.c.replace(choice, "if (1 || e0 > HV_LB_MIN_W"),
            b.lanes,
        )
    })
}

/// Lines read at several columns (a ring of one line, extra columns), lines that read a
/// parameter, and signed lines stored narrower than computed, at every row width from one
/// element to several strips.
#[test]
fn forced_lines_are_correct_for_other_shapes() {
    let kernels = [
        "kernel cols\ninput in: u8[2]\n\
         def v(x, y) = u16(in(x, y - 1)) + 2 * u16(in(x, y)) + u16(in(x, y + 1))\n\
         output out(x, y): u16 = v(x - 1, y) + 2 * v(x, y) + v(x + 2, y)\n",
        "kernel param\ninput in: u8[2]\nparam k: u8 = 3\n\
         def row(x, y) = u16(in(x, y)) * u16(k) + u16(in(x + 1, y))\n\
         output out(x, y): u8 = u8((row(x, y - 1) + row(x, y + 1) + row(x, y + 2)) >> 3)\n",
        "kernel signed\ninput in: u8[2]\n\
         def d(x, y) = i32(in(x + 1, y)) - i32(in(x - 1, y)) + i32(in(x, y))\n\
         output out(x, y): i32 = d(x, y - 1) * 3 - d(x, y + 1) + d(x, y)\n",
    ];
    harrow::isa::toolchain::require("qemu-aarch64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    let mut forced = [0; 3];
    for target in ["x86-avx2", "arm-neon"] {
        let be = harrow::targets::backend(target).unwrap();
        for (i, text) in kernels.iter().enumerate() {
            let Some((k, c, lanes)) = forced_lines(text, &be) else {
                continue;
            };
            forced[i] += 1;
            for size in [[300, 7], [5, 3], [1, 1], [7000, 2]] {
                let r = kernel::harness::run_c(&k, &be, &c, lanes, &size, 9)
                    .unwrap_or_else(|e| panic!("{target} {} {size:?}: {e}", k.name));
                assert!(
                    r.mismatch.is_none(),
                    "{target} {} {size:?}: {:?}",
                    k.name,
                    r.mismatch
                );
            }
        }
    }
    // Each shape is line-buffered on one target at least.
    assert!(forced.iter().all(|&n| n > 0), "{forced:?}");
}

/// Where the lines are far ahead, the kernel's own code (for images too small for them)
/// is compiled at its first width only: gaussian7x7 on x86-avx512 would take 64 lanes,
/// and those wider widths of the inlined 49-tap body were most of its compile time.
#[test]
fn the_direct_code_behind_far_cheaper_lines_keeps_its_first_width() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/gaussian7x7.hk");
    let text = std::fs::read_to_string(&path).expect("the suite's gaussian7x7");
    let src = harrow::diag::Source::new(path.display().to_string(), text);
    let k = kernel::parse(&src).unwrap_or_else(|d| panic!("{}", d.render()));
    let be = harrow::targets::backend("x86-avx512").expect("target exists");
    let first = kernel::codegen::compile_first_width(&k, &be, None).lanes;
    let best = kernel::codegen::compile_best(&k, &be, None).lanes;
    assert!(
        first < best,
        "a wider width wins when searched: {first} vs {best}"
    );
    match kernel::line_buffer::choose(&k, &be, None) {
        kernel::line_buffer::Plan::Lines(_, direct) => assert_eq!(direct.lanes, first),
        kernel::line_buffer::Plan::Direct(c) => {
            panic!("gaussian7x7 uses lines, not {} lanes", c.lanes)
        }
    }
}
