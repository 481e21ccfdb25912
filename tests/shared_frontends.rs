//! Front ends against the shared data: every integer simd_op_check entry parses and
//! type-checks, and every Rake spec imports.

mod common;

use std::collections::BTreeMap;

use harrow::diag::Source;
use harrow::syntax::{opcheck, rake};

#[test]
fn simd_op_check_integer_entries_parse_and_type_check() {
    let Some(shared) = common::shared_or_skip("simd_op_check parse") else {
        return;
    };
    let dir = shared.join("peer/halide-simd-op-check");
    let mut totals: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for name in ["x86.txt", "arm.txt", "hvx.txt"] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).expect("readable peer file");
        let src = Source::new(path.display().to_string(), text);
        let entries = opcheck::read(&src).unwrap_or_else(|d| panic!("{d}"));
        let t = totals.entry(name.to_string()).or_default();
        for e in &entries {
            t.0 += 1;
            match opcheck::classify(e) {
                Some(opcheck::Skip::Float) => t.1 += 1,
                Some(opcheck::Skip::LostBody) => t.2 += 1,
                None => match opcheck::parse_entry(&src.name, e) {
                    Ok(_) => t.3 += 1,
                    Err(d) => failures.push(d.render()),
                },
            }
        }
    }
    for (name, (all, float, lost, ok)) in &totals {
        println!(
            "{name}: {all} entries, {float} floating-point, {lost} lost-body, {ok} integer entries parsed and type-checked"
        );
    }
    assert!(
        totals.values().map(|t| t.3).sum::<usize>() > 5000,
        "suspiciously few integer entries"
    );
    assert!(
        failures.is_empty(),
        "{} integer entries failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rake_spec_imports() {
    let Some(shared) = common::shared_or_skip("Rake import") else {
        return;
    };
    let mut ok = 0;
    let mut failures = Vec::new();
    for corpus in ["rake-hvx", "rake-arm"] {
        let mut paths: Vec<_> = std::fs::read_dir(shared.join("corpus").join(corpus))
            .expect("corpus folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "sexp"))
            .collect();
        paths.sort();
        for p in paths {
            let src = Source::new(
                p.display().to_string(),
                std::fs::read_to_string(&p).expect("readable"),
            );
            match rake::import(&src) {
                Ok(_) => ok += 1,
                Err(d) => failures.push(d.render()),
            }
        }
    }
    println!("Rake specs imported: {ok} of {}", ok + failures.len());
    assert_eq!(ok + failures.len(), 658, "the corpus should hold 658 specs");
    assert!(
        failures.is_empty(),
        "{} specs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn check_prints_an_imported_spec_with_its_facts() {
    let Some(shared) = common::shared_or_skip("harrow check on a Rake spec") else {
        return;
    };
    let path = shared.join("corpus/rake-hvx/add__expr_1.sexp");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harrow"))
        .arg("check")
        .arg(&path)
        .output()
        .expect("harrow runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("buffer t91-buf: u8[]"), "{text}");
    assert!(text.contains("fact t91-buf in [0, 255]"), "{text}");
    assert!(text.trim_end().ends_with(": u8x128"), "{text}");
}
