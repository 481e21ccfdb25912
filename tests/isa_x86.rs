//! Every hand-written x86 instruction description agrees with the host CPU (an AMD Zen 4 here, with
//! AVX2 and AVX-512 F/BW/DQ/VL/VNNI/VBMI).

use harrow::isa::{hwcheck, toolchain::require as require_tool};
use harrow::targets::x86;

#[test]
fn every_x86_description_matches_the_host_cpu() {
    if let Err(e) = require_tool("clang-19", "clang-19") {
        panic!("{e}");
    }
    let isa = x86::hand().unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-x86-{}", std::process::id()));
    // The AVX-512 variant runs every description; a host without AVX-512 checks the
    // descriptions the AVX2 variant uses.
    let (variant, instrs) = if x86::host_has_avx512() {
        (x86::Variant::Avx512, isa.instrs.clone())
    } else {
        println!("skipped AVX-512 descriptions: this machine cannot run AVX-512 code");
        let v = x86::Variant::Avx2;
        (v, isa.with_features(&v.features()).instrs)
    };
    let report = hwcheck::check(&instrs, &variant, 24, 7, &dir).unwrap_or_else(|e| panic!("{e}"));
    let msg = report.mismatch_text();
    println!(
        "{} instructions, {} calls checked",
        report.instructions, report.calls
    );
    let intrinsics: std::collections::BTreeSet<&str> =
        isa.instrs.iter().map(|i| i.intrinsic.as_str()).collect();
    println!("{} distinct intrinsics", intrinsics.len());
    assert!(report.instructions >= 100);
    assert!(intrinsics.len() >= 150, "{} intrinsics", intrinsics.len());
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{msg}",
        report.mismatches.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_description_is_caught() {
    if let Err(e) = require_tool("clang-19", "clang-19") {
        panic!("{e}");
    }
    // paddusb saturates; describing it as a wrapping add must be caught.
    let src = harrow::diag::Source::new(
        "wrong.isa",
        "instr vpaddusb _mm_adds_epu8(a: u8x16, b: u8x16) -> u8x16 features sse2 cost 1 0.25 = a + b\n",
    );
    let isa = harrow::isa::Isa::load("x86", &[src]).unwrap_or_else(|d| panic!("{d}"));
    let dir = std::env::temp_dir().join(format!("harrow-isa-wrong-{}", std::process::id()));
    let report = hwcheck::check(&isa.instrs, &x86::Variant::Avx2, 16, 1, &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.mismatches.is_empty());
    let m = &report.mismatches[0];
    assert!(
        m.instr.contains("_mm_adds_epu8") && m.location == "wrong.isa:1",
        "{m:?}"
    );
    assert_ne!(m.machine, m.described);
    let _ = std::fs::remove_dir_all(&dir);
}
