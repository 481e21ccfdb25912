//! SMT proofs of rules. Every built-in rule must be proved for every type instantiation
//! (replayed from `verify/cache.txt` when unchanged, proved by z3 otherwise), and wrong
//! rules must be caught with a counterexample the interpreter confirms.

use std::path::Path;
use std::sync::Mutex;

use harrow::diag::Source;
use harrow::rules::{RuleKind, RuleSet};
use harrow::verify::{Cache, Options, Verdict, solver_available, verify_rules};

fn z3_or_fail() {
    if let Err(e) = solver_available("z3") {
        panic!("{e}");
    }
}

/// Proves `rules` (replaying the committed cache, which a developer refreshes with
/// `harrow verify --target all`; a stale cache only makes this slower, never wrong) and
/// fails listing every instantiation that is not proved.
fn assert_all_proved(what: &str, rules: &[harrow::rules::Rule], at_least: usize) {
    z3_or_fail();
    let cache = Cache::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("verify/cache.txt"))
        .expect("cache readable");
    let cache = Mutex::new(cache);
    let outcomes = verify_rules(rules, &Options::default(), &cache, &|_, _| {});
    let unproven: Vec<String> = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Proved)
        .map(|o| {
            format!(
                "{} ({}), {}: {:?}",
                o.rule, o.location, o.instantiation, o.verdict
            )
        })
        .collect();
    let from_cache = outcomes.iter().filter(|o| o.cached).count();
    println!(
        "{what}: {} instantiations proved, {from_cache} from the cache",
        outcomes.len()
    );
    assert!(
        outcomes.len() >= at_least,
        "{what}: only {} instantiations",
        outcomes.len()
    );
    assert!(
        unproven.is_empty(),
        "{what}: {} not proved:\n{}",
        unproven.len(),
        unproven.join("\n")
    );
}

#[test]
fn every_builtin_lifting_rule_is_proved() {
    let rules = harrow::lift::builtin_rules().unwrap_or_else(|d| panic!("{d}"));
    assert_all_proved("lifting", &rules.rules, 1000);
}

#[test]
fn every_builtin_equality_is_proved() {
    let rules = harrow::lift::algebra_rules().unwrap_or_else(|d| panic!("{d}"));
    assert_all_proved("equalities", &rules.rules, 50);
}

/// The lowering rules of a target family: those derived from every description (with their
/// half rules) and the hand-written ones, each at its fixed register width.
fn family(name: &str) -> Vec<harrow::rules::Rule> {
    harrow::targets::family_rules(harrow::targets::family(name).unwrap(), &[])
        .unwrap_or_else(|d| panic!("{d}"))
        .rules
}

#[test]
fn every_hvx_lowering_rule_is_proved() {
    assert_all_proved("hvx", &family("hvx"), 700);
}

#[test]
fn every_x86_lowering_rule_is_proved() {
    assert_all_proved("x86", &family("x86"), 300);
}

#[test]
fn every_arm_lowering_rule_is_proved() {
    assert_all_proved("arm", &family("arm"), 300);
}

#[test]
fn every_riscv_lowering_rule_is_proved() {
    assert_all_proved("riscv", &family("riscv"), 1000);
}

#[test]
fn wrong_rules_get_readable_counterexamples() {
    z3_or_fail();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wrong.rules");
    let src = Source::new(
        "tests/data/wrong.rules",
        std::fs::read_to_string(path).unwrap(),
    );
    let set = RuleSet::load(&src, RuleKind::Lift).unwrap_or_else(|d| panic!("{d}"));
    let cache = Mutex::new(Cache::in_memory());
    let outcomes = verify_rules(&set.rules, &Options::default(), &cache, &|_, _| {});
    let first = outcomes
        .iter()
        .find(|o| o.rule == "bad_average" && o.instantiation == "T = u8")
        .unwrap();
    let Verdict::Counterexample(cex) = &first.verdict else {
        panic!("{:?}", first.verdict)
    };
    let text = &cex.text;
    // Both inputs large enough to overflow, and the two results shown.
    assert!(
        text.contains("x = (uint8)") && text.contains("y = (uint8)"),
        "{text}"
    );
    assert!(
        text.contains("left-hand side gives (uint8)")
            && text.contains("right-hand side gives (uint8)"),
        "{text}"
    );
    assert!(
        outcomes
            .iter()
            .filter(|o| o.rule == "bad_rounding")
            .all(|o| matches!(o.verdict, Verdict::Counterexample(_)))
    );
    assert!(outcomes.iter().all(|o| o.verdict != Verdict::Proved));
}

/// The counterexample to the one instantiation of the lowering rule `name` in `src`, read
/// as a rule file of `family`; panics unless the verdict is a counterexample showing what
/// both sides give.
fn lowering_counterexample(family: &str, src: std::sync::Arc<Source>, name: &str) -> String {
    let set = harrow::targets::family_rules(harrow::targets::family(family).unwrap(), &[src])
        .unwrap_or_else(|d| panic!("{d}"));
    let bad: Vec<_> = set
        .rules
        .into_iter()
        .filter(|r| r.decl.name == name)
        .collect();
    let cache = Mutex::new(Cache::in_memory());
    let outcomes = verify_rules(&bad, &Options::default(), &cache, &|_, _| {});
    assert_eq!(outcomes.len(), 1);
    let text = match &outcomes[0].verdict {
        Verdict::Counterexample(cex) => cex.text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        text.contains("left-hand side gives") && text.contains("right-hand side gives"),
        "{text}"
    );
    text
}

#[test]
fn wrong_lowering_rule_gets_a_counterexample() {
    // Claims vmpyi multiplies by the whole register (it takes one half word of it): the
    // counterexample must show the two products differing.
    z3_or_fail();
    let src = Source::new(
        "wrong_hvx.rules",
        "rule bad_mpyi(a: i32x32, b: i32):\n    a * b => Q6_Vw_vmpyi_VwRh(a, b)\n".to_string(),
    );
    lowering_counterexample("hvx", src, "bad_mpyi");
}

#[test]
fn wrong_q31_rule_gets_a_counterexample() {
    // The rounding vmpyo for a product that does not round: the product facts that prove
    // the right rule must not prove this one.
    z3_or_fail();
    let src = Source::new(
        "wrong_q31.rules",
        "rule bad_q31(a: i32x32, b: i32x32):\n    mul_shift_right(a, b, u32(31)) => \
         Q6_Vw_vmpyoacc_VwVwVh_s1_rnd_sat_shift(Q6_Vw_vmpye_VwVuh(a, b), a, b)\n"
            .to_string(),
    );
    lowering_counterexample("hvx", src, "bad_q31");
}

#[test]
fn wrong_division_rule_gets_a_counterexample() {
    // A reciprocal rounded down instead of up: wrong for some dividends of some of the
    // divisors the predicate admits. Each admitted divisor is proved on its own, and each
    // such query (one 16-bit lane) is decided by trying every dividend.
    z3_or_fail();
    let src = Source::new(
        "wrong_x86.rules",
        "rule bad_udiv(x: u16):\n    x / c0 => mul_shift_right(x, u16(524288 / c0), u16(16)) >> u16(3) \
         if 1 < c0 && 524288 / c0 + 1 <= 65535 && ((524288 / c0 + 1) * c0 - 524288) * 65535 < 524288\n"
            .to_string(),
    );
    let text = lowering_counterexample("x86", src, "bad_udiv");
    // The divisor is one the predicate admits, and the two quotients are shown.
    assert!(
        text.contains("x = (uint16)") && text.contains("c0 = "),
        "{text}"
    );
}

#[test]
fn hard_x86_rules_are_proved_from_scratch() {
    // Proved without the cache, so the methods they need stay exercised: pmulhrsw of a
    // doubled operand (a shifted operand out of an uninterpreted product, with its range
    // facts) and a division by any admissible constant (divisors listed by evaluation,
    // each 16-bit lane tried exhaustively).
    z3_or_fail();
    // The first of each: the SSE width of mulhrs_by_14, the smallest shift of the division.
    let mut rules: Vec<harrow::rules::Rule> = Vec::new();
    for r in family("x86") {
        let wanted = matches!(r.decl.name.as_str(), "mulhrs_by_14" | "udiv_by_mulhi");
        if wanted && !rules.iter().any(|k| k.decl.name == r.decl.name) {
            rules.push(r);
        }
    }
    assert_eq!(rules.len(), 2);
    let cache = Mutex::new(Cache::in_memory());
    let outcomes = verify_rules(&rules, &Options::default(), &cache, &|_, _| {});
    assert_eq!(outcomes.len(), 2);
    for o in &outcomes {
        assert_eq!(o.verdict, Verdict::Proved, "{} ({})", o.rule, o.location);
    }
}

#[test]
fn hard_hvx_rules_are_proved_from_scratch() {
    // Proved without the cache: a product by a constant whose two spellings put the
    // constant on different sides (operands ordered by the constants they mention), and
    // vmpa's two products, built at 32 bits on one side and at their exact 24 bits on the
    // other (products of extended values taken at one width); the Q31 product as vmpye +
    // vmpyo (the product split at its half words: distributivity facts), and a subtracted
    // product by a constant as an accumulated product by its negation (negation facts).
    z3_or_fail();
    let mut rules: Vec<harrow::rules::Rule> = Vec::new();
    for r in family("hvx") {
        let wanted = matches!(
            r.decl.name.as_str(),
            "mpy_by_constant_odd_i16"
                | "mpa_two_taps_h_mm"
                | "q31_mul"
                | "mpyacc_in_order_by_negated_half_h"
        );
        if wanted && !rules.iter().any(|k| k.decl.name == r.decl.name) {
            rules.push(r);
        }
    }
    assert_eq!(rules.len(), 4);
    let cache = Mutex::new(Cache::in_memory());
    let outcomes = verify_rules(&rules, &Options::default(), &cache, &|_, _| {});
    for o in &outcomes {
        assert_eq!(o.verdict, Verdict::Proved, "{} ({})", o.rule, o.location);
    }
}

#[test]
fn cvc5_proves_and_refutes_too() {
    // The same obligations sent to cvc5: a handful of lifting rules proved, and the wrong
    // fixture rule refuted with a counterexample the interpreter confirms.
    if let Err(e) = solver_available("cvc5") {
        panic!("{e}");
    }
    let opts = Options {
        solver: "cvc5".into(),
        ..Options::default()
    };
    let rules = harrow::lift::builtin_rules().unwrap_or_else(|d| panic!("{d}"));
    let some: Vec<_> = rules.rules.iter().take(6).cloned().collect();
    let cache = Mutex::new(Cache::in_memory());
    for o in verify_rules(&some, &opts, &cache, &|_, _| {}) {
        assert_eq!(o.verdict, Verdict::Proved, "{} ({})", o.rule, o.location);
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wrong.rules");
    let src = Source::new(
        "tests/data/wrong.rules",
        std::fs::read_to_string(path).unwrap(),
    );
    let set = RuleSet::load(&src, RuleKind::Lift).unwrap_or_else(|d| panic!("{d}"));
    let bad: Vec<_> = set
        .rules
        .into_iter()
        .filter(|r| r.decl.name == "bad_average")
        .collect();
    let outcomes = verify_rules(&bad, &opts, &cache, &|_, _| {});
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o.verdict, Verdict::Counterexample(_))),
        "{outcomes:?}"
    );
}
