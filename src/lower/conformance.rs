//! Conformance against Halide's simd_op_check expectations: every integer, non-reduction
//! entry of a target's section is compiled, run against the interpreter, and its assembly
//! searched for the instruction Halide expects.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use super::{Backend, Lowered};
use crate::diag::Source;
use crate::isa::target::{OpCheckSuite, Purpose};
use crate::isa::toolchain::{Compile, Output, write_file};
use crate::syntax::opcheck::{self, Entry};

/// The outcome of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Correct, and the expected instruction is in the assembly.
    Pass,
    /// Correct, but the expected instruction is not in the assembly.
    Miss,
    /// The generated code computes something else.
    Wrong(String),
    /// The entry did not compile.
    Error(String),
}

/// The results of a conformance run.
#[derive(Clone, Debug)]
pub struct Run {
    /// One per entry checked.
    pub results: Vec<EntryResult>,
    /// Entries left out because the target's translation states no instruction for
    /// theirs, by their instruction.
    pub left_out: BTreeMap<String, usize>,
}

/// One entry's result.
#[derive(Clone, Debug)]
pub struct EntryResult {
    /// The entry.
    pub entry: Entry,
    /// What happened.
    pub outcome: Outcome,
    /// Instructions chosen (intrinsic names).
    pub intrinsics: Vec<String>,
}

/// Whether `asm` shows the expected instruction `pattern`: one of its alternatives
/// (`a | b`, from a translation), or a form the target's suite says also meets it.
fn expectation_met(asm: &str, pattern: &str, suite: &OpCheckSuite) -> bool {
    pattern.split(" | ").any(|p| {
        asm_matches(asm, p)
            || suite
                .also_met_by
                .iter()
                .any(|&(one, other)| p == one && asm_matches(asm, other))
    })
}

/// A translation of expected instructions (`theirs => ours | ours2`, `;;` comments),
/// by their instruction; `Err` names the line that is not one.
pub fn read_translation(name: &str, text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split(";;").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((theirs, ours)) = line.split_once("=>") else {
            return Err(format!(
                "{name}:{}: expected `theirs => ours`, found `{line}`",
                i + 1
            ));
        };
        let (theirs, ours) = (theirs.trim(), ours.trim());
        if theirs.is_empty() || ours.is_empty() {
            return Err(format!(
                "{name}:{}: an empty instruction in `{line}`",
                i + 1
            ));
        }
        if map.insert(theirs.to_string(), ours.to_string()).is_some() {
            return Err(format!("{name}:{}: `{theirs}` is translated twice", i + 1));
        }
    }
    Ok(map)
}

/// True when the pieces of `pattern` (split at `*`) appear in order on one line of `asm`.
/// A space after a comma is optional on both sides: the expectations write `vsat(v*.uw,
/// v*.uw)` where the Hexagon assembler prints `vsat(v1.uw,v2.uw)`.
pub fn asm_matches(asm: &str, pattern: &str) -> bool {
    let pattern = pattern.replace(", ", ",");
    let pieces: Vec<&str> = pattern.split('*').filter(|p| !p.is_empty()).collect();
    asm.lines().any(|line| {
        let line = line.replace(", ", ",");
        let mut rest = line.as_str();
        pieces.iter().all(|p| match rest.find(p) {
            Some(i) => {
                rest = &rest[i + p.len()..];
                true
            }
            None => false,
        })
    })
}

/// The assembly of each function `hv_case{k}` in a clang `-S` output.
fn split_functions(asm: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    let mut cur: Option<usize> = None;
    for line in asm.lines() {
        if let Some(rest) = line.strip_prefix("hv_case")
            && let Some((num, _)) = rest.split_once(':')
            && let Ok(k) = num.parse::<usize>()
        {
            cur = Some(k);
            continue;
        }
        if line.starts_with(".Lfunc_end") {
            cur = None;
        }
        if let Some(k) = cur {
            let s: &mut String = out.entry(k).or_default();
            s.push_str(line);
            s.push('\n');
        }
    }
    out
}

/// Runs the conformance check of `file` (a simd_op_check expectation file) for a backend,
/// on the section its target's registry entry names.
pub fn run(file: &Arc<Source>, backend: &Backend, workdir: &Path) -> Result<Run, String> {
    let spec = backend.target.spec();
    let suite = spec
        .op_check
        .as_ref()
        .ok_or_else(|| format!("no simd_op_check section for target `{}`", spec.name))?;
    let section = suite.section;
    let entries = opcheck::read(file).map_err(|d| d.to_string())?;
    let mut entries: Vec<Entry> = entries
        .into_iter()
        .filter(|e| section(&e.target) && opcheck::classify(e).is_none())
        .collect();
    // A target the suite does not check itself expects its own instruction in place of
    // each of the section's; entries with no stated equivalent are left out (counted).
    let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
    if let Some((name, text)) = suite.translation {
        let map = read_translation(name, text)?;
        entries.retain_mut(|e| match map.get(&e.instr) {
            Some(ours) => {
                e.instr = ours.clone();
                true
            }
            None => {
                *left_out.entry(e.instr.clone()).or_default() += 1;
                false
            }
        });
    }
    if entries.is_empty() {
        return Err(format!(
            "no integer entries for this target in {}",
            file.name
        ));
    }
    let mut results: Vec<EntryResult> = Vec::new();
    let mut lowered: Vec<(usize, Lowered)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match opcheck::parse_entry(&file.name, e) {
            Ok(x) => {
                let l = super::lower(&x, backend);
                results.push(EntryResult {
                    entry: e.clone(),
                    outcome: Outcome::Pass,
                    intrinsics: intrinsics(&l),
                });
                lowered.push((i, l));
            }
            Err(d) => results.push(EntryResult {
                entry: e.clone(),
                outcome: Outcome::Error(d.to_string()),
                intrinsics: vec![],
            }),
        }
    }
    let target = backend.target.as_ref();
    // Correctness, batched (on a machine that can run the target's code: selection and
    // the expected instruction are checked either way).
    if target.cannot_run_here().is_none() {
        let refs: Vec<&Lowered> = lowered.iter().map(|(_, l)| l).collect();
        let runs = super::harness::run_cases(&refs, target, 6, 0x0c0f, workdir)?;
        for ((i, _), r) in lowered.iter().zip(&runs) {
            if let Some(m) = &r.mismatch {
                results[*i].outcome = Outcome::Wrong(m.clone());
            }
        }
    }
    // Assembly of every function, in one compile.
    let mut c = String::new();
    c.push_str(&target.c_header());
    c.push_str(super::emit::PRELUDE);
    for (k, (_, l)) in lowered.iter().enumerate() {
        c.push_str(&super::c_function(l, target, &format!("hv_case{k}")));
    }
    let cfile = write_file(workdir, "conformance.c", &c)?;
    let sfile = workdir.join("conformance.s");
    Compile::new(target, Purpose::ConformanceAssembly)
        .arg(&cfile)
        .output(&sfile, Output::Assembly)?;
    let asm = std::fs::read_to_string(&sfile).map_err(|e| e.to_string())?;
    let funcs = split_functions(&asm);
    for (k, (i, _)) in lowered.iter().enumerate() {
        if results[*i].outcome != Outcome::Pass {
            continue;
        }
        let text = funcs.get(&k).map(String::as_str).unwrap_or("");
        if !expectation_met(text, &results[*i].entry.instr, suite) {
            results[*i].outcome = Outcome::Miss;
        }
    }
    Ok(Run { results, left_out })
}

fn intrinsics(l: &Lowered) -> Vec<String> {
    let mut v: Vec<String> = crate::ir::visit::post_order(&l.selected)
        .iter()
        .filter_map(|n| match n.op() {
            crate::ir::Op::Instr(i) => Some(i.intrinsic.clone()),
            _ => None,
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Counts of each outcome: (pass, miss, wrong, error).
pub fn counts(results: &[EntryResult]) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for r in results {
        match r.outcome {
            Outcome::Pass => c.0 += 1,
            Outcome::Miss => c.1 += 1,
            Outcome::Wrong(_) => c.2 += 1,
            Outcome::Error(_) => c.3 += 1,
        }
    }
    c
}

/// A human-readable report: totals, then misses grouped by expected instruction, then every
/// wrong result and error.
/// `not_run` says why the entries' code was compiled but not executed (see
/// [`crate::isa::target::Target::cannot_run_here`]).
pub fn report(target: &str, run: &Run, not_run: Option<&str>) -> String {
    let results = &run.results;
    let (pass, miss, wrong, error) = counts(results);
    let n = results.len();
    let mut s = String::new();
    let computed = match not_run {
        None => format!(
            "{} compile and compute correctly ({:.1}%)",
            n - wrong - error,
            100.0 * (n - wrong - error) as f64 / n as f64
        ),
        Some(_) => format!("{} compile (execution skipped)", n - error),
    };
    let _ = writeln!(
        s,
        "{target}: {n} entries; {computed}; expected instruction found in {pass} ({:.1}%); {miss} misses, {wrong} wrong, {error} errors",
        100.0 * pass as f64 / n as f64
    );
    if let Some(why) = not_run {
        let _ = writeln!(s, "execution skipped: {why}");
    }
    if !run.left_out.is_empty() {
        let total: usize = run.left_out.values().sum();
        let which: Vec<String> = run
            .left_out
            .iter()
            .map(|(i, n)| format!("{i} x{n}"))
            .collect();
        let _ = writeln!(
            s,
            "left out: {total} entries whose instruction has no stated equivalent ({})",
            which.join(", ")
        );
    }
    let mut by_instr: BTreeMap<&str, Vec<&EntryResult>> = BTreeMap::new();
    for r in results {
        if r.outcome == Outcome::Miss {
            by_instr.entry(&r.entry.instr).or_default().push(r);
        }
    }
    for (instr, rs) in by_instr {
        let _ = writeln!(s, "miss [{instr}] x{}", rs.len());
        for r in rs {
            let _ = writeln!(
                s,
                "    line {} w={}: {}   (chose: {})",
                r.entry.line,
                r.entry.width,
                r.entry.expr,
                if r.intrinsics.is_empty() {
                    "generic code".to_string()
                } else {
                    r.intrinsics.join(" ")
                }
            );
        }
    }
    for r in results {
        match &r.outcome {
            Outcome::Wrong(m) => {
                let _ = writeln!(
                    s,
                    "WRONG line {} [{}] w={}: {}\n    {m}",
                    r.entry.line, r.entry.instr, r.entry.width, r.entry.expr
                );
            }
            Outcome::Error(m) => {
                let _ = writeln!(s, "ERROR line {}: {m}", r.entry.line);
            }
            _ => {}
        }
    }
    s
}

/// The results as JSON.
pub fn json(target: &str, run: &Run, not_run: Option<&str>) -> serde_json::Value {
    let results = &run.results;
    let (pass, miss, wrong, error) = counts(results);
    serde_json::json!({
        "target": target,
        "left_out": run.left_out,
        "executed": not_run.is_none(),
        "execution_skipped": not_run,
        "entries": results.len(),
        "pass": pass,
        "miss": miss,
        "wrong": wrong,
        "error": error,
        "results": results.iter().map(|r| serde_json::json!({
            "line": r.entry.line,
            "instr": r.entry.instr,
            "width": r.entry.width,
            "expr": r.entry.expr,
            "outcome": match &r.outcome {
                Outcome::Pass => "pass".to_string(),
                Outcome::Miss => "miss".to_string(),
                Outcome::Wrong(m) => format!("wrong: {m}"),
                Outcome::Error(m) => format!("error: {m}"),
            },
            "intrinsics": r.intrinsics,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_pair_meets_a_load_expectation() {
        let asm = "\tadd\tx8, x1, w2, sxtw\n\tldp\tq0, q1, [x8]\n\tstp\tq0, q1, [x0]\n";
        let arm = crate::targets::lookup("arm-neon").unwrap();
        let suite = arm.spec.op_check.as_ref().unwrap();
        assert!(expectation_met(asm, "ldr", suite) && expectation_met(asm, "str", suite));
        assert!(!expectation_met(asm, "ld1", suite));
        assert!(!expectation_met("\tldp\tq0, q1, [x8]\n", "ldr*#16", suite));
        // Alternatives from a translation: either one meets it.
        assert!(expectation_met(asm, "ld1 | stp", suite));
        assert!(!expectation_met(asm, "ld1 | st1", suite));
    }

    #[test]
    fn translations_are_read_and_bad_lines_named() {
        let map = read_translation(
            "t",
            ";; comment\nuqadd => vsaddu.v\nmla => vmacc.v | vmadd.v ;; either\n",
        )
        .unwrap();
        assert_eq!(map["uqadd"], "vsaddu.v");
        assert_eq!(map["mla"], "vmacc.v | vmadd.v");
        let e = read_translation("t", "uqadd vsaddu\n").unwrap_err();
        assert!(e.contains("t:1") && e.contains("theirs => ours"), "{e}");
        let e = read_translation("t", "a => b\na => c\n").unwrap_err();
        assert!(e.contains("t:2") && e.contains("twice"), "{e}");
    }

    #[test]
    fn patterns_match_pieces_in_order_on_one_line() {
        let asm = "\tvpaddb\t%ymm1, %ymm0, %ymm0\n\tvpblendvb %xmm2, %xmm1, %xmm0, %xmm0\n";
        assert!(asm_matches(asm, "vpaddb*ymm"));
        assert!(asm_matches(asm, "paddb"));
        assert!(asm_matches(asm, "pblend*b"));
        assert!(!asm_matches(asm, "vpaddb*zmm"));
        assert!(!asm_matches(asm, "ymm*vpaddb"));
        let hvx = "\tv0.uh = vsat(v1.uw,v2.uw)\n";
        assert!(asm_matches(hvx, "v*.uh = vsat(v*.uw, v*.uw)"));
        assert!(!asm_matches(hvx, "v*.h = vsat(v*.w, v*.w)"));
    }
}
