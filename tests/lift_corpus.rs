//! Lifting the whole Rake corpus: it never raises the cost and never changes a value on
//! random inputs (respecting each spec's value-range facts).

mod common;

use harrow::interp::{eval, random_env};
use harrow::ir::visit::inline_lets;
use harrow::rules::cost::CostCache;
use harrow::syntax::corpus::load_all;

#[test]
fn lifting_the_corpus_lowers_cost_and_keeps_values() {
    let Some(shared) = common::shared_or_skip("lifting the Rake corpus") else {
        return;
    };
    let specs = load_all(&shared);
    assert_eq!(specs.len(), 658);
    let mut problems = Vec::new();
    let (mut lowered, mut with_fpir) = (0, 0);
    for (path, spec) in &specs {
        let spec = match spec {
            Ok(s) => s,
            Err(e) => {
                problems.push(e.clone());
                continue;
            }
        };
        let input = harrow::lift::drop_noop_casts(&inline_lets(&spec.expr));
        let mut bounds = harrow::bounds::Intervals::new();
        for f in &spec.facts {
            bounds.buffer_facts.insert(f.buffer.clone(), (f.lo, f.hi));
        }
        let rules = harrow::lift::builtin_rules().expect("rules load");
        let lifted = harrow::lift::lift_with(&spec.expr, rules, &mut bounds, None);
        let mut costs = CostCache::new();
        let (before, after) = (costs.cost(&input), costs.cost(&lifted));
        if after > before {
            problems.push(format!(
                "{}: cost rose from {before} to {after}",
                path.display()
            ));
        }
        if after < before {
            lowered += 1;
        }
        if harrow::ir::visit::any_node(&lifted, |n| n.op().is_fpir()) {
            with_fpir += 1;
        }
        let ranges: Vec<_> = spec
            .facts
            .iter()
            .map(|f| (f.buffer.clone(), f.lo, f.hi))
            .collect();
        for seed in 0..3 {
            let env = random_env(&input, seed, &ranges);
            match (eval(&input, &env), eval(&lifted, &env)) {
                (Ok(x), Ok(y)) if x == y => {}
                (Ok(x), Ok(y)) => problems.push(format!(
                    "{}: lifting changed the value (seed {seed}): {x} vs {y}",
                    path.display()
                )),
                (a, b) => problems.push(format!(
                    "{}: evaluation failed: {:?} / {:?}",
                    path.display(),
                    a.err(),
                    b.err()
                )),
            }
        }
    }
    println!(
        "{} specs lifted; cost lowered in {lowered}; FPIR in {with_fpir}",
        specs.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        lowered > 300,
        "lifting found too little: cost lowered in only {lowered} specs"
    );
}
