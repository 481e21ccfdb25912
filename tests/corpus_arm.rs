//! The Rake ARM corpus on arm-neon: every expression compiles, and its C computes what the
//! interpreter computes under qemu-aarch64 (all expressions in one program).

mod common;

use harrow::isa::toolchain::require as require_tool;
use harrow::lower::{self, harness};
use harrow::syntax::corpus;

#[test]
fn every_rake_arm_expression_compiles_and_matches_the_interpreter() {
    let Some(shared) = common::shared_or_skip("Rake ARM corpus on arm-neon") else {
        return;
    };
    for (tool, pkg) in [("clang-19", "clang-19"), ("qemu-aarch64", "qemu-user")] {
        if let Err(e) = require_tool(tool, pkg) {
            panic!("{e}");
        }
    }
    let be = harrow::targets::backend("arm-neon").unwrap_or_else(|e| panic!("{e}"));
    let mut lowered = Vec::new();
    let mut times = Vec::new();
    let mut names = Vec::new();
    for p in corpus::spec_paths(&shared, "rake-arm") {
        let src = harrow::diag::Source::new(
            p.display().to_string(),
            std::fs::read_to_string(&p).expect("readable"),
        );
        let spec = harrow::syntax::rake::import(&src).unwrap_or_else(|d| panic!("{d}"));
        let t0 = std::time::Instant::now();
        let l = lower::lower(&spec.expr, &be);
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        names.push(p.file_name().unwrap().to_string_lossy().into_owned());
        lowered.push(l);
    }
    assert_eq!(lowered.len(), 214, "the Rake ARM corpus holds 214 specs");
    let total: f64 = times.iter().sum();
    let max = times.iter().cloned().fold(0.0, f64::max);
    println!(
        "rake-arm on arm-neon: {} expressions compiled in {total:.1} ms (mean {:.2} ms, max {max:.2} ms per expression)",
        lowered.len(),
        total / lowered.len() as f64
    );
    let dir = std::env::temp_dir().join(format!("harrow-corpus-arm-{}", std::process::id()));
    let refs: Vec<&lower::Lowered> = lowered.iter().collect();
    let runs = harness::run_cases(&refs, be.target.as_ref(), 6, 0xa64, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let wrong: Vec<String> = runs
        .iter()
        .zip(&names)
        .filter_map(|(r, n)| r.mismatch.as_ref().map(|m| format!("{n}: {m}")))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
