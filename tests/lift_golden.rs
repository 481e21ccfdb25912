//! Golden tests of lifting: every file in `tests/golden/lift/*.hl` is lifted expression by
//! expression; the output must match `*.out` (re-bless with `UPDATE_EXPECT=1 cargo test
//! --test lift_golden`), and every lifted expression must compute what its input computes.
//!
//! `spellings.hl` groups integer spellings under `## op` headers: each must be pure integer
//! code that lifts to something using that FPIR operation, and every FPIR operation needs
//! at least three spellings.

use std::collections::BTreeMap;
use std::path::Path;

use harrow::diag::Source;
use harrow::interp::{eval, random_env};
use harrow::ir::{Expr, visit};
use harrow::syntax::{elab::Decls, file, halide};

const FPIR_OPS: [&str; 20] = [
    "widening_add",
    "widening_sub",
    "widening_mul",
    "widening_shift_left",
    "widening_shift_right",
    "widen_right_add",
    "widen_right_sub",
    "widen_right_mul",
    "rounding_shift_left",
    "rounding_shift_right",
    "saturating_add",
    "saturating_sub",
    "saturating_cast",
    "halving_add",
    "halving_sub",
    "rounding_halving_add",
    "mul_shift_right",
    "rounding_mul_shift_right",
    "absd",
    "abs",
];

fn uses(e: &Expr, name: &str) -> bool {
    visit::any_node(e, |n| n.op().name() == name)
}

fn same_values(a: &Expr, b: &Expr) -> Result<(), String> {
    for seed in 0..8 {
        let env = random_env(a, seed, &[]);
        let x = eval(a, &env).map_err(|e| e.to_string())?;
        let y = eval(b, &env).map_err(|e| e.to_string())?;
        if x != y {
            return Err(format!(
                "input gives {x} but lifted gives {y} (seed {seed})"
            ));
        }
    }
    Ok(())
}

/// Written text, input and lifted expression of every entry, by `## op` group.
type Groups = BTreeMap<String, Vec<(String, Expr, Expr)>>;

/// Lifts every expression of a golden file; returns the output text and, per `## op`
/// group, the lifted expressions.
fn run_file(path: &Path) -> (String, Groups) {
    let text = std::fs::read_to_string(path).expect("golden input");
    let src = Source::new(path.display().to_string(), text.clone());
    let (items, _) = file::parse(&src, Decls::new()).unwrap_or_else(|d| panic!("{d}"));
    let mut out = String::new();
    let mut groups: Groups = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for it in items {
        let (line, _) = src.line_col(it.span.start);
        let group = lines[..line]
            .iter()
            .rev()
            .find_map(|l| l.strip_prefix("## "))
            .unwrap_or("")
            .trim()
            .to_string();
        let written = src.text[it.span.clone()]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let lifted = harrow::lift::lift(&it.expr);
        if let Err(e) = same_values(&it.expr, &lifted) {
            panic!(
                "{}:{line}: lifting `{written}` changed its value: {e}",
                path.display()
            );
        }
        out.push_str(&format!("{written}\n    => {}\n", halide::print(&lifted)));
        groups
            .entry(group)
            .or_default()
            .push((written, it.expr, lifted));
    }
    (out, groups)
}

#[test]
fn sobel_lifts_to_figure_2c() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/lift/sobel.hl");
    let (out, groups) = run_file(&path);
    expect_test::expect_file!["golden/lift/sobel.out"].assert_eq(&out);
    // Independently of the golden file: exactly Pitchfork's Figure 2c.
    let (_, input, lifted) = &groups[""][0];
    let mut decls = Decls::new();
    for (n, t) in visit::free_vars(input) {
        decls = decls.var(&n, t);
    }
    let fig2c = "saturating_cast<uint8>(
        absd(widening_add(a, c) + widening_shift_left(b, 1), widening_add(d, f) + widening_shift_left(e, 1)) +
        absd(widening_add(g, i) + widening_shift_left(h, 1), widening_add(j, l) + widening_shift_left(k, 1)))";
    let expected = halide::parse_str(fig2c, &decls).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(lifted, &expected, "lifted {}", halide::print(lifted));
}

#[test]
fn bounds_predicated_rules_fire() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/lift/bounds.hl");
    let (out, _) = run_file(&path);
    expect_test::expect_file!["golden/lift/bounds.out"].assert_eq(&out);
}

#[test]
fn relations_and_constants_simplify() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/lift/simplify.hl");
    let (out, _) = run_file(&path);
    expect_test::expect_file!["golden/lift/simplify.out"].assert_eq(&out);
}

#[test]
fn fpir_forms_normalise() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/lift/fpir_forms.hl");
    let (out, _) = run_file(&path);
    expect_test::expect_file!["golden/lift/fpir_forms.out"].assert_eq(&out);
}

#[test]
fn every_fpir_op_is_recovered_from_three_integer_spellings() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/lift/spellings.hl");
    let (out, groups) = run_file(&path);
    expect_test::expect_file!["golden/lift/spellings.out"].assert_eq(&out);
    let mut problems = Vec::new();
    for op in FPIR_OPS {
        let Some(entries) = groups.get(op) else {
            problems.push(format!("no spellings for `{op}`"));
            continue;
        };
        let mut recovered = 0;
        for (written, input, lifted) in entries {
            // Halide's ordinary abs() is allowed in integer code; nothing else from FPIR.
            if visit::any_node(input, |n| n.op().is_fpir() && n.op().name() != "abs") {
                problems.push(format!("`{written}` is not integer code"));
            } else if uses(lifted, op) {
                recovered += 1;
            } else {
                problems.push(format!(
                    "`{written}` does not lift to `{op}`: {}",
                    halide::print(lifted)
                ));
            }
        }
        if recovered < 3 {
            problems.push(format!(
                "`{op}` is recovered from only {recovered} spellings"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
