//! The `harrow` binary end to end: output, exit codes, diagnostics, help.

mod common;

use common::harrow_code as harrow;

/// `harrow bench --json` output read back with the report's own type.
fn bench_report(out: &str) -> harrow::cli::bench_report::BenchReport {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn eval_prints_lanes() {
    let (code, out, err) = harrow(&[
        "eval",
        "rounding_halving_add(a, b)",
        "--input",
        "a:u8x2=250,0",
        "--input",
        "b:u8x2=255,1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "u8x2 [253, 1]\n");
}

#[test]
fn eval_vectorizes_the_lane_variable_over_buffers() {
    let (code, out, err) = harrow(&[
        "eval",
        "in_u8(x + 1) + in_u8(x / 2)",
        "--width",
        "4",
        "--input",
        "in_u8:u8[]=10,20,30,40,50",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "u8x4 [30, 40, 60, 70]\n");
}

#[test]
fn type_errors_exit_non_zero_with_location_and_caret() {
    let (code, out, err) = harrow(&[
        "eval",
        "a + b",
        "--input",
        "a:u8x2=1,2",
        "--input",
        "b:u16x2=1,2",
    ]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(
        err.starts_with(
            "<command line>:1:1: error: operands of `+` have different types: u8x2 and u16x2"
        ),
        "{err}"
    );
    assert!(err.contains("^^^^^"), "{err}");
}

#[test]
fn missing_values_and_bad_flags_are_reported() {
    let (code, _, err) = harrow(&["eval", "a + a", "--input", "a:u8x2"]);
    assert_eq!(code, 1);
    assert!(err.contains("no value for variable `a`"), "{err}");
    // Floats are evaluated (IEEE single) but never compiled.
    let (code, out, err) = harrow(&[
        "eval",
        "fma(a, a, b) / c - a * a",
        "--input",
        "a:float32x3=1.000244140625,-0,2",
        "--input",
        "b:f32x3=-1,0x80000000,1",
        "--input",
        "c:f32x3=1,0,inf",
    ]);
    assert_eq!(code, 0, "{err}");
    // Lane 0: the fused product keeps 2^-24, the rounded one loses it.
    assert_eq!(out, "f32x3 [-0.99999994, nan, -4.0]\n");
    let (code, _, err) = harrow(&["lift", "a", "--input", "a:float32"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown type"), "{err}");
    let (code, _, err) = harrow(&["compile", "a * 1.5f", "--input", "a:i32x8"]);
    assert_eq!(code, 1);
    assert!(err.contains("not supported here"), "{err}");
    let (code, _, err) = harrow(&[
        "eval",
        "in_u8(x + 9)",
        "--width",
        "2",
        "--input",
        "in_u8:u8[]=1,2",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("out of bounds"), "{err}");
}

#[test]
fn check_pretty_prints_an_expression_file() {
    let (code, out, err) = harrow(&["check", "tests/data/demo.hl"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(
        lines[0],
        "(uint8x16)saturating_cast((uint16x16)widening_add(a, b)) : u8x16"
    );
    assert!(
        lines[1].starts_with("uint8x16(min((uint16x16(a) + uint16x16(b)), x16((uint16)255)))"),
        "{out}"
    );
}

#[test]
fn check_reports_file_errors_with_their_line() {
    let dir = std::env::temp_dir().join(format!("harrow-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.hl");
    std::fs::write(&f, "input a: u8x4\nabsd(a, a)\nwidening_add(a, 7 + )\n").unwrap();
    let (code, _, err) = harrow(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.hl:3:21: error: expected an expression"),
        "{err}"
    );
    let (code, _, err) = harrow(&["check", dir.join("missing.hl").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_command_has_help() {
    for cmd in [
        vec!["--help"],
        vec!["eval", "--help"],
        vec!["check", "--help"],
    ] {
        let (code, out, _) = harrow(&cmd);
        assert_eq!(code, 0);
        assert!(out.contains("Usage:"), "{out}");
    }
}

#[test]
fn lift_prints_fpir_and_traces_rules() {
    let (code, out, err) = harrow(&[
        "lift",
        "u8(min(u16(a) + u16(b), 255))",
        "--input",
        "a:u8x16",
        "--input",
        "b:u8x16",
        "--trace",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "(uint8x16)saturating_add(a, b)\n");
    assert!(
        err.contains("rule widening_add (rules/lift.rules:"),
        "{err}"
    );
    assert!(
        err.contains("rule saturating_add_of_widening (rules/lift.rules:"),
        "{err}"
    );
}

#[test]
fn lift_accepts_extra_rule_files_and_reports_their_errors() {
    let dir = std::env::temp_dir().join(format!("harrow-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("mine.rules");
    std::fs::write(
        &good,
        ";; Masking with every bit changes nothing.\nrule and_all_ones(x: T) where T unsigned:\n    x & c0 => x if c0 == T.max\n",
    )
    .unwrap();
    let (code, out, err) = harrow(&[
        "lift",
        "a & 255",
        "--input",
        "a:u8x4",
        "--rules",
        good.to_str().unwrap(),
        "--trace",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "a\n");
    assert!(
        err.contains("rule and_all_ones (") && err.contains("mine.rules:2"),
        "{err}"
    );

    let bad = dir.join("bad.rules");
    std::fs::write(&bad, "rule r(x: T):\n    x + y => x\n").unwrap();
    let (code, _, err) = harrow(&[
        "lift",
        "a + a",
        "--input",
        "a:u8x4",
        "--rules",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.rules:2:9: error: unknown variable `y`"),
        "{err}"
    );

    let costly = dir.join("costly.rules");
    std::fs::write(&costly, "rule r(x: T, y: T):\n    x + y => y + x\n").unwrap();
    let (code, _, err) = harrow(&[
        "lift",
        "a + a",
        "--input",
        "a:u8x4",
        "--rules",
        costly.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("does not lower the cost"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_prints_c_ir_and_asm() {
    let expr = "absd((uint8)in_u8(x), (uint8)in_u8(x + 16))";
    let (code, out, err) = harrow(&["compile", "--width", "32", "--emit", "c", expr]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("_mm256_subs_epu8"), "{out}");
    assert!(
        out.contains("void harrow_kernel(uint8_t *restrict out, const uint8_t *restrict b_in_u8)"),
        "{out}"
    );
    assert!(out.contains("estimated cost"), "{out}");
    let (code, out, err) = harrow(&[
        "compile",
        "--width",
        "32",
        "--emit",
        "ir",
        "--target",
        "x86-avx512",
        expr,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("_mm256_or_si256"), "{out}");
    let (code, out, err) = harrow(&["compile", "--width", "32", "--emit", "asm", expr]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("vpsubusb"), "{out}");
}

#[test]
fn compile_reports_bad_targets_and_bad_expressions() {
    let (code, _, err) = harrow(&["compile", "--target", "z80", "a", "-i", "a:u8x16"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown target `z80`"), "{err}");
    let (code, _, err) = harrow(&["compile", "a + b", "-i", "a:u8x16", "-i", "b:u16x16"]);
    assert_eq!(code, 1);
    assert!(err.contains("<command line>:1:"), "{err}");
    let (code, _, err) = harrow(&["compile", "--emit", "wat", "a", "-i", "a:u8x16"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown --emit"), "{err}");
}

#[test]
fn compile_kernel_emits_vector_scalar_ir_and_footprint() {
    let (code, out, err) = harrow(&["compile", "benchmarks/sobel3x3.hk", "--emit", "c"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("void harrow_kernel(uint8_t *restrict out, int32_t out_s1, const uint8_t *restrict in_in, int32_t st_in_s1"), "{out}");
    assert!(out.contains("_mm256_"), "{out}");
    let (code, out, err) = harrow(&["compile", "benchmarks/sobel3x3.hk", "--emit", "scalar-c"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("for (int32_t v_x = 0; v_x < e0; v_x++)"),
        "{out}"
    );
    assert!(!out.contains("_mm"), "{out}");
    let (code, out, err) = harrow(&[
        "compile",
        "benchmarks/sobel3x3.hk",
        "--emit",
        "ir",
        "--target",
        "x86-avx512",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("_mm512_"), "{out}");
    let (code, out, err) = harrow(&["compile", "benchmarks/sobel3x3.hk", "--emit", "footprint"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("in: [-1..1921, -1..1081]"), "{out}");
    // Extra rule files apply to kernels too: a broken one is reported, not ignored.
    let dir = std::env::temp_dir().join(format!("harrow-cli-krules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.rules");
    std::fs::write(&bad, "rule broken(a: u8x32):\n    a + => a\n").unwrap();
    let (code, _, err) = harrow(&[
        "compile",
        "benchmarks/sobel3x3.hk",
        "--rules",
        bad.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("bad.rules:2:"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_kernels_are_reported_at_their_place() {
    let dir = std::env::temp_dir().join(format!("harrow-cli-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "input in: u8[2]\noutput out(x, y): u8 = in(x, y) + nope(in(x, y))\n",
            "bad.hk:2:",
            "unknown function",
        ),
        (
            "input in: u8[2]\noutput out(x, y): u16 = in(x, y)\n",
            "bad.hk:2:",
            "add a cast",
        ),
        ("input in: u8[4]\n", "bad.hk:1:", "dimensions (1 to 3)"),
        (
            "input in: u8[1]\nparam n: i32 = 4\nrdom r = 0..n\noutput out(x): u8 = sum(r, in(x + r * x))\n",
            "bad.hk:4:",
            "multiply two variables",
        ),
    ];
    for (text, at, what) in cases {
        let f = dir.join("bad.hk");
        std::fs::write(&f, text).unwrap();
        let (code, _, err) = harrow(&["compile", f.to_str().unwrap()]);
        assert_eq!(code, 1, "{text}");
        assert!(err.contains(at) && err.contains(what), "{text}\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_checks_a_kernel_and_bench_reports_json() {
    let (code, out, err) = harrow(&[
        "run",
        "benchmarks/gaussian3x3.hk",
        "--size",
        "35x4",
        "--target",
        x86_run_target(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!("gaussian3x3: ok on {}", x86_run_target())),
        "{out}"
    );
    let (code, _, err) = harrow(&["run", "benchmarks/gaussian3x3.hk", "--size", "35"]);
    assert_eq!(code, 1);
    assert!(err.contains("bad --size"), "{err}");
    let plot = std::env::temp_dir().join(format!("harrow-bench-plot-{}.svg", std::process::id()));
    let (code, out, err) = harrow(&[
        "bench",
        "--only",
        "sobel3x3",
        "--only",
        "gaussian3x3",
        "--size",
        "256x32",
        "--json",
        "--plot",
        plot.to_str().expect("a UTF-8 temporary path"),
    ]);
    assert_eq!(code, 0, "{err}");
    let report = bench_report(&out);
    let names: Vec<&str> = report.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["gaussian3x3", "sobel3x3"], "{out}");
    assert_eq!(report.metric, "time");
    let k = &report.kernels[1];
    assert_eq!(k.extents, [256, 32]);
    assert!(k.harrow > 0.0 && k.clang > 0.0, "{out}");
    assert!((k.speedup - k.clang / k.harrow).abs() < 1e-9, "{out}");
    let g = report.geomean_speedup_vs_clang.expect("a geomean");
    let expected = (report.kernels.iter().map(|k| k.speedup.ln()).sum::<f64>() / 2.0).exp();
    assert!((g - expected).abs() < 1e-9, "{out}");
    // The chart is well-formed SVG with a row label for every kernel.
    let svg = std::fs::read_to_string(&plot).expect("--plot writes the chart");
    let _ = std::fs::remove_file(&plot);
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    for name in names {
        assert!(texts.iter().any(|t| t == name), "{name} not in {texts:?}");
    }
    let bars = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
    assert!(bars >= 3, "a background and a bar per kernel: {svg}");
}

#[test]
fn arm_neon_compile_run_and_counted_bench() {
    harrow::isa::toolchain::require("qemu-aarch64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    let (code, out, err) = harrow(&[
        "compile",
        "rounding_halving_add(a, b)",
        "--input",
        "a:u8x16",
        "--input",
        "b:u8x16",
        "--target",
        "arm-neon",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("#include <arm_neon.h>") && out.contains("vrhaddq_u8"),
        "{out}"
    );
    let (code, out, err) = harrow(&[
        "compile",
        "benchmarks/sobel3x3.hk",
        "--target",
        "arm-neon",
        "--emit",
        "asm",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("uabd") || out.contains("uaddl"), "{out}");
    let (code, out, err) = harrow(&[
        "run",
        "benchmarks/sobel3x3.hk",
        "--size",
        "40x3",
        "--target",
        "arm-neon",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("sobel3x3: ok on arm-neon"), "{out}");
    let (code, out, err) = harrow(&[
        "bench", "--target", "arm-neon", "--only", "sobel3x3", "--size", "64x4", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report = bench_report(&out);
    assert_eq!(report.unit, "executed instructions per output element");
    assert_eq!(report.metric, "executed");
    let hot = report.kernels[0].hot_loop.as_ref().expect("a hot loop");
    assert!(
        hot.harrow.iterations > 0 && hot.clang.instructions > 0,
        "{out}"
    );
}

/// The widest x86 variant this machine runs.
fn x86_run_target() -> &'static str {
    if harrow::targets::x86::host_has_avx512() {
        "x86-avx512"
    } else {
        println!("this machine cannot run AVX-512 code; running x86-avx2 instead");
        "x86-avx2"
    }
}

/// On a machine without AVX-512, `run` and `bench` for x86-avx512 refuse with one line
/// naming the missing feature (no SIGILL, no blame on the input); where the machine has
/// it, the kernel runs.
#[test]
fn avx512_runs_refuse_on_hosts_without_it() {
    let (code, out, err) = harrow(&["run", "benchmarks/add.hk", "--target", "x86-avx512"]);
    if harrow::targets::x86::host_has_avx512() {
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("ok on x86-avx512"), "{out}");
        return;
    }
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("host lacks avx512"), "{err}");
    let (code, _, err) = harrow(&["bench", "--target", "x86-avx512", "--only", "add"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("host lacks avx512") && err.lines().count() == 1,
        "{err}"
    );
    // Compilation needs no AVX-512 hardware. (At its default width the kernel may use
    // 256-bit instructions, which cost the same per lane; 64 lanes need 512-bit ones.)
    let (code, out, err) = harrow(&[
        "compile",
        "benchmarks/add.hk",
        "--target",
        "x86-avx512",
        "--width",
        "64",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("_mm512_"), "{out}");
}

/// A small seeded sample of generated kernels compiles and computes what the interpreter
/// computes (correctness only; timing is for `harrow fuzz-kernels` runs by hand).
#[test]
fn fuzz_kernels_sample_is_correct() {
    let (code, out, err) = harrow(&[
        "fuzz-kernels",
        "--target",
        "x86-avx2",
        "--count",
        "12",
        "--seed",
        "5",
        "--no-bench",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("12 kernels, 12 correct, 0 failed"), "{out}");
}

/// `compile --explain` names where each instruction came from, and every node no
/// instruction covers, with how it is written.
#[test]
fn compile_explain_says_how_uncovered_nodes_are_written() {
    let (code, out, err) = harrow(&[
        "compile",
        "--width",
        "16",
        "--target",
        "x86-avx2",
        "--emit",
        "ir",
        "--explain",
        "(int32)in_i32(x) / (int32)in_i32(x + 16)",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("explain: `div` at i32x8: no x86-avx2 instruction or rule matched; written lane by lane: the divisor is not the same positive constant"),
        "{out}"
    );
    let (code, out, err) = harrow(&[
        "compile",
        "benchmarks/add.hk",
        "--target",
        "x86-avx2",
        "--explain",
    ]);
    assert_eq!(code, 0, "{err}");
    // Every chosen instruction is named with where it came from: a hand-written rule, an
    // instruction's own semantics, or a strategy that reshaped what a rule chose.
    assert!(
        out.contains("explain: `_mm256_packus_epi16` from rule `")
            && out.contains("src/targets/x86/lower.rules:"),
        "{out}"
    );
    assert!(
        out.contains("from its semantics (src/targets/x86/isa/"),
        "{out}"
    );
    assert!(out.contains(", through strategy `sink shuffles`"), "{out}");
    // Reinterpretations only change how lanes are read: not listed as uncovered.
    assert!(!out.contains("`reinterpret` at"), "{out}");
    assert!(
        out.contains("explain: every vector node is an instruction"),
        "{out}"
    );
}

/// The command `harrow compile benchmarks/add.hk --target x86-avx2 --emit c`.
fn compile_add_to_c() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_harrow"));
    cmd.args([
        "compile",
        "benchmarks/add.hk",
        "--target",
        "x86-avx2",
        "--emit",
        "c",
    ]);
    cmd
}

/// Output into a pipe whose reader has gone (`harrow ... | head -1`) ends the program
/// quietly: no panic message, exit status 0.
#[test]
fn closed_output_pipe_is_not_a_panic() {
    let mut child = compile_add_to_c()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("harrow starts");
    // Close the read end before harrow (which compiles first) writes anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("harrow ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn kernel_widths_below_a_register_or_not_a_power_of_two_are_refused() {
    let add = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/add.hk");
    for width in ["4", "24"] {
        for cmd in ["compile", "run"] {
            let (code, out, err) = harrow(&[cmd, add, "--target", "x86-avx2", "--width", width]);
            assert_ne!(code, 0, "{cmd} --width {width}: {out}");
            assert!(
                err.contains(&format!("--width {width}: kernel `add`")) && err.contains("16 lanes"),
                "{cmd} --width {width}: {err}"
            );
        }
    }
    let (code, out, err) = harrow(&["compile", add, "--target", "x86-avx2", "--width", "32"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("32 lanes per vector"), "{out}");
}

/// Extents whose buffers would not fit are refused before anything is allocated (this
/// used to abort with a failed 160 GB allocation and a backtrace); so are index constants
/// beyond the generated code's arithmetic, with the place in the kernel file.
#[test]
fn huge_sizes_and_index_constants_are_refused_with_a_message() {
    for size in ["100000x100000", "9223372036854775807x3"] {
        let (code, _, err) = harrow(&["run", "benchmarks/sobel3x3.hk", "--size", size]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("too large") && err.contains("--size"), "{err}");
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
    }
    let dir = std::env::temp_dir().join(format!("harrow-huge-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let k = dir.join("far.hk");
    std::fs::write(
        &k,
        "kernel far\ninput in: u8[2]\noutput out(x, y): u8 = in(x + 99999999999, y)\n",
    )
    .unwrap();
    let (code, _, err) = harrow(&["compile", k.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("far.hk:3:") && err.contains("out of range"),
        "{err}"
    );
}

/// `bench --size` is repeatable, one per number of dimensions, so one run covers kernels of
/// different shapes; a kernel no size fits is named.
#[test]
fn bench_sizes_are_chosen_by_dimension_count() {
    let (code, out, err) = harrow(&[
        "bench", "--only", "add", "--only", "sobel3x3", "--size", "4096", "--size", "64x8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report = bench_report(&out);
    let extents: Vec<(&str, &[i64])> = report
        .kernels
        .iter()
        .map(|k| (k.name.as_str(), k.extents.as_slice()))
        .collect();
    assert_eq!(
        extents,
        [("add", &[4096][..]), ("sobel3x3", &[64, 8][..])],
        "{out}"
    );
    let (code, _, err) = harrow(&["bench", "--only", "add", "--size", "64x8"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no --size for kernel `add`") && err.contains("1 dimension"),
        "{err}"
    );
}

#[test]
fn lift_by_equality_saturation_finds_what_greedy_cannot() {
    let expr = "i16(a) * 3 + i16(a) * 5";
    let (code, greedy, err) = harrow(&["lift", expr, "--input", "a:u8x16"]);
    assert_eq!(code, 0, "{err}");
    assert!(greedy.contains("widening_mul"), "{greedy}");
    let (code, eqsat, err) = harrow(&["--engine", "eqsat", "lift", expr, "--input", "a:u8x16"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        eqsat,
        "int16x16((uint16x16)widening_shift_left(a, x16((uint8)3)))\n"
    );
    // Saturation keeps every form at once: there is no sequence of rewrites to trace.
    let (code, _, err) = harrow(&[
        "--engine", "eqsat", "lift", expr, "--input", "a:u8x16", "--trace",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--trace") && err.contains("--engine greedy"),
        "{err}"
    );
    // At one e-node saturation stops before any rule: greedy's form is what remains.
    let (code, cut, err) = harrow(&[
        "--engine",
        "eqsat",
        "--eqsat-limit",
        "nodes=1",
        "lift",
        expr,
        "--input",
        "a:u8x16",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(cut, greedy);
    let (code, _, err) = harrow(&[
        "--engine",
        "eqsat",
        "--eqsat-limit",
        "rounds=3",
        "lift",
        expr,
        "--input",
        "a:u8x16",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--eqsat-limit") && err.contains("not a limit"),
        "{err}"
    );
    let (code, _, err) = harrow(&["--engine", "best", "lift", expr, "--input", "a:u8x16"]);
    assert_eq!(code, 2);
    assert!(err.contains("greedy") && err.contains("eqsat"), "{err}");
}

#[test]
fn explain_says_which_lifting_engine_won() {
    let args = [
        "compile",
        "benchmarks/yuv_to_rgb.hk",
        "--target",
        "arm-neon",
        "--explain",
    ];
    let (code, out, err) = harrow(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("lifted by"), "{out}");
    let eqsat: Vec<&str> = ["--engine", "eqsat"].into_iter().chain(args).collect();
    let (code, out, err) = harrow(&eqsat);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("explain: lifted by equality saturation"),
        "{out}"
    );
}

#[test]
fn isa_import_names_bad_vendors_and_missing_data() {
    let (code, _, err) = harrow(&["isa", "import", "--vendor", "amd"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("unknown vendor `amd`") && err.contains("intel"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let (code, _, err) = harrow(&[
        "isa",
        "import",
        "--vendor",
        "arm",
        "--vendor-dir",
        "/nonexistent-vendor-dir",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("arm/sail/prelude.sail"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let (code, _, err) = harrow(&[
        "isa",
        "import",
        "--vendor",
        "intel",
        "--vendor-dir",
        "/nonexistent-vendor-dir",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("intel-intrinsics-hydride-union.xml"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn isa_import_prints_counts_by_reason() {
    if harrow::util::shared::shared_dir().is_none() {
        println!("skipped: ../shared not found");
        return;
    }
    let (code, out, err) = harrow(&["isa", "import", "--vendor", "intel"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3004 vendor entries"), "{out}");
    assert!(
        out.contains("imported: ") && out.contains("skipped, floating point: "),
        "{out}"
    );
}

#[test]
fn isa_classes_prints_json_and_names_bad_targets() {
    let (code, out, err) = harrow(&["isa", "classes", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v[0]["family"], "x86");
    assert!(
        v[0]["classes"].as_array().is_some_and(|c| c.len() > 100),
        "{out}"
    );
    let (code, _, err) = harrow(&["isa", "classes", "--target", "riscv-v"]);
    assert_ne!(code, 0);
    assert!(err.contains("no imported descriptions yet"), "{err}");
    let (code, _, err) = harrow(&["isa", "classes", "--target", "z80"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown target or family `z80`"), "{err}");
}

#[test]
fn float_commands_compile_check_and_refuse_bad_c() {
    let root = env!("CARGO_MANIFEST_DIR");
    let kernel = format!("{root}/benchmarks/float/mat_mul_3x3_3x3.c");
    let (code, out, err) = harrow(&["float", "compile", &kernel, "--target", "x86-avx2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("_mm256_") && out.contains("void mat_mul_3x3_3x3("),
        "{out}"
    );
    let (code, out, err) = harrow(&[
        "float", "run", &kernel, "--target", "arm-neon", "--cases", "20",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok: 20 cases"), "{out}");
    let dir = std::env::temp_dir().join(format!("harrow-float-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.c");
    std::fs::write(
        &bad,
        "void k(float a[2], float o[2]) {\n  o[0] = a[0] > a[1];\n}\n",
    )
    .unwrap();
    let (code, _, err) = harrow(&["float", "compile", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.c:2:10") && err.contains("comparison of float values"),
        "{err}"
    );
    let (code, _, err) = harrow(&["float", "compile", &kernel, "--target", "hvx"]);
    assert_eq!(code, 1);
    assert!(err.contains("no instructions for hvx"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_binary_keeps_freed_memory_a_second_unless_the_environment_says_otherwise() {
    // mimalloc prints each option as it reads it when verbose.
    let run = |delay: Option<&str>| {
        let mut cmd = compile_add_to_c();
        cmd.env("MIMALLOC_VERBOSE", "1")
            .env_remove("MIMALLOC_PURGE_DELAY");
        if let Some(d) = delay {
            cmd.env("MIMALLOC_PURGE_DELAY", d);
        }
        let out = cmd.output().expect("harrow runs");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let default = run(None);
    assert!(default.contains("option 'purge_delay': 1000 "), "{default}");
    let set = run(Some("10"));
    assert!(set.contains("option 'purge_delay': 10 "), "{set}");
}
