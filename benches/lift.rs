//! Lifting time per expression over the Rake corpus, on one core.
//!
//! `cargo bench --bench lift` prints the median, mean and 90th percentile of the time to
//! lift one expression (let-inlining included; parsing excluded), each the minimum of
//! several repetitions. Needs the shared corpus (`../shared` or `$HARROW_SHARED`).

use std::time::Instant;

fn main() {
    let Some(shared) = harrow::util::shared::shared_dir() else {
        eprintln!("skipped: ../shared not found; set HARROW_SHARED");
        return;
    };
    let specs: Vec<_> = harrow::syntax::corpus::load_all(&shared)
        .into_iter()
        .filter_map(|(p, r)| r.ok().map(|s| (p, s)))
        .collect();
    let rules = harrow::lift::builtin_rules().expect("built-in rules load");
    let mut times = Vec::new();
    let start = Instant::now();
    for (_, spec) in &specs {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            let mut bounds = harrow::bounds::Intervals::new();
            for f in &spec.facts {
                bounds.buffer_facts.insert(f.buffer.clone(), (f.lo, f.hi));
            }
            let out = harrow::lift::lift_with(&spec.expr, rules, &mut bounds, None);
            std::hint::black_box(out);
            best = best.min(t.elapsed().as_secs_f64());
        }
        times.push(best);
    }
    let total = start.elapsed().as_secs_f64();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = times.len();
    let median = times[n / 2];
    let mean = times.iter().sum::<f64>() / n as f64;
    let p90 = times[n * 9 / 10];
    let max = times[n - 1];
    println!(
        "lift: {n} corpus expressions, {} rules ({} instantiations)",
        rules.rules.len(),
        rules.instantiation_count()
    );
    println!(
        "per expression: median {:.1} us, mean {:.1} us, p90 {:.1} us, max {:.1} us",
        median * 1e6,
        mean * 1e6,
        p90 * 1e6,
        max * 1e6
    );
    println!("wall time for 5 repetitions of all: {total:.2} s");
}
