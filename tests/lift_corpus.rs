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
        check_values("lifting", path, &input, &lifted, &spec.facts, &mut problems);
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

/// Equality saturation over the lifting rules and `rules/algebra.rules`, on the whole Rake
/// corpus: never costlier than the greedy engine, never a changed value, and cheaper on a
/// share of the specs (the figures are printed; run with `--nocapture`).
#[test]
fn equality_saturation_never_costs_more_than_greedy_and_keeps_values() {
    use harrow::rewrite::eqsat::EqSat;
    let Some(shared) = common::shared_or_skip("equality saturation on the Rake corpus") else {
        return;
    };
    let rules = harrow::lift::builtin_rules().expect("rules load");
    let algebra = harrow::lift::algebra_rules().unwrap_or_else(|d| panic!("{d}"));
    let engine = EqSat::new(rules, Some(algebra));
    let mut problems = Vec::new();
    let (mut cheaper, mut total, mut slowest) = (0, 0, (0.0f64, String::new()));
    let mut cheaper_vectors = 0;
    let greedy_of = |e: &harrow::ir::Expr, facts: &[harrow::syntax::rake::RangeFact]| {
        let mut bounds = harrow::bounds::Intervals::new();
        for f in facts {
            bounds.buffer_facts.insert(f.buffer.clone(), (f.lo, f.hi));
        }
        harrow::lift::lift_with(e, rules, &mut bounds, None)
    };
    let mut stops = std::collections::BTreeMap::new();
    let mut extractions = std::collections::BTreeMap::new();
    let mut times = Vec::new();
    for (path, spec) in load_all(&shared) {
        let Ok(spec) = spec else { continue };
        total += 1;
        let input = harrow::lift::fold_scalar_constants(&harrow::lift::drop_noop_casts(
            &inline_lets(&spec.expr),
        ));
        let mut bounds = harrow::bounds::Intervals::new();
        for f in &spec.facts {
            bounds.buffer_facts.insert(f.buffer.clone(), (f.lo, f.hi));
        }
        let start = std::time::Instant::now();
        let (lifted, report) = engine.run_with_report(&input, &mut bounds);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        times.push(ms);
        if ms > slowest.0 {
            slowest = (ms, path.display().to_string());
        }
        *stops.entry(report.stop).or_insert(0) += 1;
        // A run cut by a limit must cut at the same place every time (no time limit by
        // default: the output may not depend on the machine's speed).
        if report.stop != "saturated" {
            let (again, _) = engine.run_with_report(&input, &mut bounds);
            if again != lifted {
                problems.push(format!(
                    "{}: two runs stopped by the {} extracted different forms",
                    path.display(),
                    report.stop
                ));
            }
        }
        *extractions
            .entry(format!("{:?}", report.extraction))
            .or_insert(0) += 1;
        let cost = harrow::rules::cost::dag_cost(&lifted);
        if cost != report.extracted {
            problems.push(format!(
                "{}: extracted cost {} but the result costs {cost}",
                path.display(),
                report.extracted
            ));
        }
        if report.extracted > report.greedy {
            problems.push(format!(
                "{}: equality saturation costs {} against greedy's {}",
                path.display(),
                report.extracted,
                report.greedy
            ));
        }
        if report.extracted < report.greedy {
            cheaper += 1;
        }
        if vector_cost(&lifted) < vector_cost(&greedy_of(&input, &spec.facts)) {
            cheaper_vectors += 1;
        }
        check_values(
            "equality saturation",
            &path,
            &input,
            &lifted,
            &spec.facts,
            &mut problems,
        );
    }
    times.sort_by(f64::total_cmp);
    println!(
        "equality saturation on {total} specs: cheaper than greedy (DAG cost) in {cheaper}, in vector operations in {cheaper_vectors}; stops {stops:?}; extracted by {extractions:?}; median {:.2} ms, slowest {:.1} ms ({})",
        times[times.len() / 2],
        slowest.0,
        slowest.1
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        cheaper_vectors >= 1,
        "equality saturation found no cheaper vector code than greedy on {total} specs"
    );
}

/// Compares `input` and `lifted` on three random environments that respect the spec's
/// value-range facts, noting any difference in `problems`.
fn check_values(
    what: &str,
    path: &std::path::Path,
    input: &harrow::ir::Expr,
    lifted: &harrow::ir::Expr,
    facts: &[harrow::syntax::rake::RangeFact],
    problems: &mut Vec<String>,
) {
    let ranges: Vec<_> = facts
        .iter()
        .map(|f| (f.buffer.clone(), f.lo, f.hi))
        .collect();
    for seed in 0..3 {
        let env = random_env(input, seed, &ranges);
        match (eval(input, &env), eval(lifted, &env)) {
            (Ok(x), Ok(y)) if x == y => {}
            (Ok(x), Ok(y)) => problems.push(format!(
                "{}: {what} changed the value (seed {seed}): {x} vs {y}",
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

/// The lifting cost of the vector operations of `e` (scalar index arithmetic left out).
fn vector_cost(e: &harrow::ir::Expr) -> harrow::rules::cost::Cost {
    harrow::ir::visit::post_order(e)
        .iter()
        .filter(|n| !n.ty().is_scalar())
        .map(harrow::rules::cost::node_cost)
        .fold(Default::default(), |a, b| a + b)
}
