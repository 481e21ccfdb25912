//! Descriptions imported from Intel's intrinsics data (`harrow isa import --vendor intel`):
//! the committed file is what the importer writes today, and every imported description
//! agrees with the host CPU.

mod common;

use harrow::isa::{hwcheck, toolchain::require as require_tool};
use harrow::targets::x86;

const COMMITTED: &str = "src/targets/x86/imported/intel.isa";

fn committed() -> harrow::isa::Isa {
    common::load_committed("x86", COMMITTED)
}

#[test]
fn imported_intel_descriptions_match_the_host_cpu() {
    if let Err(e) = require_tool("clang-19", "clang-19") {
        panic!("{e}");
    }
    let isa = committed();
    let dir = std::env::temp_dir().join(format!("harrow-isa-import-{}", std::process::id()));
    let (variant, instrs) = if x86::host_has_avx512() {
        (x86::Variant::Avx512, isa.instrs.clone())
    } else {
        let v = x86::Variant::Avx2;
        let run = isa.with_features(&v.features()).instrs;
        println!(
            "skipped: {} of {} imported descriptions need AVX-512, which this machine cannot run",
            isa.instrs.len() - run.len(),
            isa.instrs.len()
        );
        (v, run)
    };
    let report = hwcheck::check(&instrs, &variant, 24, 11, &dir).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} imported instructions, {} calls checked",
        report.instructions, report.calls
    );
    assert!(
        report.instructions >= 100,
        "{} checked",
        report.instructions
    );
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{}",
        report.mismatches.len(),
        report.mismatch_text()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The imported descriptions, straight from the vendor data (`None` without `../shared`).
fn imported() -> Option<harrow::isa::import::Report> {
    let Some(shared) = harrow::util::shared::shared_dir() else {
        println!("skipped: ../shared not found");
        return None;
    };
    let ctx = harrow::isa::import::ImportContext {
        vendor_dir: &shared.join("vendor"),
    };
    Some(x86::import::import(&ctx).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn imported_and_hand_written_descriptions_agree() {
    let Some(report) = imported() else { return };
    let hand = x86::hand().unwrap_or_else(|d| panic!("{d}"));
    common::assert_imports_agree_with_hand(&report.entries, hand, 200, "_mm256_adds_epu8");
}

#[test]
fn committed_import_is_what_the_importer_writes() {
    if harrow::util::shared::shared_dir().is_none() {
        println!("skipped: ../shared not found");
        return;
    }
    common::assert_import_is_committed("intel", COMMITTED, 1400);
}

#[test]
fn imported_descriptions_group_into_classes() {
    let all = harrow::cli::isa::family_classes(Some("x86-avx2")).unwrap_or_else(|e| panic!("{e}"));
    let x86 = &all[0];
    println!(
        "{} descriptions in {} classes",
        x86.descriptions,
        x86.classes.len()
    );
    assert!(
        x86.classes.len() * 3 < x86.descriptions,
        "{} classes",
        x86.classes.len()
    );
    let total: usize = x86.classes.iter().map(|c| c.members.len()).sum();
    assert_eq!(total, x86.descriptions);
    // Wrapping adds of every width and register size are one class; a saturating add is not
    // in it.
    let class_of = |name: &str| {
        x86.classes
            .iter()
            .position(|c| c.members.iter().any(|m| m.starts_with(&format!("{name} "))))
            .unwrap_or_else(|| panic!("{name} is in no class"))
    };
    let add = class_of("_mm_add_epi8");
    for other in ["_mm256_add_epi16", "_mm512_add_epi32", "_mm_add_epi64"] {
        assert_eq!(class_of(other), add, "{other}");
    }
    assert_ne!(class_of("_mm256_adds_epi16"), add);
}

/// Operation texts to mutate: Intel's own (from `../shared`) or, without it, a few written
/// here in Intel's style.
fn pseudocode_seeds() -> Vec<String> {
    let own = [
        "FOR j := 0 to 15\n\ti := j*16\n\tdst[i+15:i] := Saturate16(a[i+15:i] + b[i+15:i])\nENDFOR\ndst[MAX:256] := 0\n",
        "FOR j := 0 to 15\n\ti := j*16\n\tIF k[j]\n\t\tdst[i+15:i] := ABS(a[i+15:i] - b[i+15:i])\n\tELSE\n\t\tdst[i+15:i] := src[i+15:i]\n\tFI\nENDFOR\n",
        "DEFINE F(x[15:0], y) {\n\tRETURN (x * y) >> 1\n}\nFOR j := 0 to 15\n\ti := j*16\n\tdst[i+15:i] := F(a[i+15:i], imm8[3:0])\nENDFOR\n",
    ];
    let mut out: Vec<String> = own.iter().map(|s| s.to_string()).collect();
    if let Some(shared) = harrow::util::shared::shared_dir() {
        let xml = shared.join("vendor").join(x86::import::INTEL_XML);
        let text =
            std::fs::read_to_string(&xml).unwrap_or_else(|e| panic!("{}: {e}", xml.display()));
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        out.extend(
            doc.descendants()
                .filter(|n| n.has_tag_name("operation"))
                .filter_map(|n| n.text())
                .step_by(7)
                .take(300)
                .map(str::to_string),
        );
    } else {
        println!(
            "skipped: ../shared not found (mutating {} built-in texts only)",
            out.len()
        );
    }
    out
}

/// One seeded edit of `text`: a span deleted, duplicated, repeated many times, replaced by
/// a fragment of Intel's syntax, or the text cut short.
fn edit(text: &str, rng: &mut harrow::util::rng::SplitMix64) -> String {
    const BITS: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        ":",
        ":=",
        "FOR j := 0 to 99999\n",
        "ENDFOR\n",
        "IF ",
        "FI\n",
        "ELSE\n",
        "a[i+15:i]",
        "imm8[7:0]",
        " >> ",
        " << ",
        "*",
        "Saturate8(",
        "ZeroExtend64(",
        "RETURN ",
        "DEFINE G(x) {\nRETURN G(x)\n}\nq := G(1)\n",
        "tmp := tmp + tmp\n",
        "k[j]",
        "0xFFFFFFFFFFFFFFFF",
        "MAX",
        "a.word[j]",
        "CASE imm8 OF\n0: x := 1\nESAC\n",
        "DO WHILE 1\nOD\n",
        "\\\n",
    ];
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let at = |rng: &mut harrow::util::rng::SplitMix64, m: usize| rng.below(m as u64 + 1) as usize;
    let i = at(rng, n);
    let j = (i + at(rng, 24)).min(n);
    let s = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    match rng.below(6) {
        0 => s(0, i) + &s(j, n),
        1 => s(0, j) + &s(i, j) + &s(j, n),
        2 => s(0, i) + &s(i, j).repeat(1 + at(rng, 300)) + &s(j, n),
        3 => s(0, i) + BITS[at(rng, BITS.len() - 1)] + &s(j, n),
        4 => s(0, i) + BITS[at(rng, BITS.len() - 1)] + &s(i, n),
        _ => s(0, i),
    }
}

#[test]
fn mutated_pseudocode_never_crashes_the_importer() {
    let seeds = pseudocode_seeds();
    let cases: usize = std::env::var("HARROW_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let mut rng = harrow::util::rng::SplitMix64::new(21);
    let (mut made, mut refused) = (0, 0);
    let start = std::time::Instant::now();
    for k in 0..cases {
        let mut text = seeds[k % seeds.len()].clone();
        for _ in 0..1 + rng.below(2) {
            text = edit(&text, &mut rng);
        }
        match x86::import::exercise(&text) {
            Ok(_) => made += 1,
            Err(e) => {
                assert!(!e.is_empty(), "an empty reason for:\n{text}");
                refused += 1;
            }
        }
    }
    println!(
        "{cases} mutated operations: {made} translated, {refused} refused with a reason, in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        made > 0 && refused > 0,
        "{made} translated, {refused} refused"
    );
}
