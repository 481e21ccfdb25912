//! `harrow conformance halide-simd-op-check` for every target: every integer entry of the
//! target's section must compile and compute what the interpreter computes (natively, or
//! under qemu-aarch64 for Arm and qemu-hexagon for HVX), and the expected instruction must
//! appear in at least 90% (HVX: the floor reached so far, raised as rules land).

use harrow::lower::conformance;

fn check(target: &str) {
    check_at(target, 90);
}

/// Checks `target`, requiring the expected instruction in `percent` of the entries.
fn check_at(target: &str, percent: usize) {
    let Some(shared) = harrow::util::shared::shared_dir() else {
        println!("skipped: ../shared not found");
        return;
    };
    harrow::isa::toolchain::require("clang-19", "clang-19").unwrap_or_else(|m| panic!("{m}"));
    let suite = harrow::targets::lookup(target)
        .unwrap()
        .spec
        .op_check
        .as_ref()
        .unwrap();
    let path = shared.join("peer/halide-simd-op-check").join(suite.file);
    let src = harrow::diag::Source::new(
        path.display().to_string(),
        std::fs::read_to_string(&path).unwrap(),
    );
    let be = harrow::targets::backend(target).unwrap();
    let dir = std::env::temp_dir().join(format!("harrow-conf-{target}-{}", std::process::id()));
    let results = conformance::run(&src, &be, &dir).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    let not_run = be.target.cannot_run_here();
    let report = conformance::report(target, &results, not_run.as_deref());
    println!("{report}");
    if let Some(why) = &not_run {
        assert!(
            report.contains(&format!("execution skipped: {why}")),
            "{report}"
        );
    }
    let (pass, _, wrong, error) = conformance::counts(&results.results);
    assert_eq!(wrong + error, 0, "{report}");
    assert!(results.results.len() > 300, "{report}");
    assert!(
        pass * 100 >= results.results.len() * percent,
        "expected instruction found in {pass} of {}:\n{report}",
        results.results.len()
    );
}

#[test]
fn avx2_conformance() {
    check("x86-avx2");
}

/// On a machine without AVX-512 the code is selected and compiled, the expected
/// instructions are checked, and execution is reported as skipped.
#[test]
fn avx512_conformance() {
    check("x86-avx512");
}

#[test]
fn arm_neon_conformance() {
    harrow::isa::toolchain::require("qemu-aarch64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    check("arm-neon");
}

#[test]
fn hvx_conformance() {
    harrow::isa::toolchain::require("qemu-hexagon", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    check_at("hvx", 87);
}

/// RISC-V Vector: the Arm section's expressions, with the RVV instruction stated for each
/// Arm one in `src/targets/riscv_v/opcheck.map`; entries without one are left out.
#[test]
fn riscv_v_conformance() {
    harrow::isa::toolchain::require("qemu-riscv64", "qemu-user").unwrap_or_else(|m| panic!("{m}"));
    check("riscv-v");
}
