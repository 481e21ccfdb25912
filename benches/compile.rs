//! In-process compile time per suite kernel and target.
//!
//! `cargo bench --bench compile` compiles every kernel of `benchmarks/` for every target
//! the way `harrow compile K.hk --emit c` does (the target's tables built beforehand, as a
//! warm process or the tables cache has them) and prints, per target, each kernel's time
//! (the minimum of several repetitions), the geometric mean and the maximum. Issue 25's
//! goal is a maximum under 50 ms on every target. Body variants are compiled on rayon's
//! threads, as in the CLI (`RAYON_NUM_THREADS=1` for one core).
//!
//! Selections remembered by the backend are forgotten before each repetition.
//! `HARROW_BENCH_REPS` sets the repetitions (default 3); `HARROW_BENCH_TARGETS` (comma
//! separated) and `HARROW_BENCH_KERNELS` (substrings) narrow the run;
//! `HARROW_BENCH_ENGINE=eqsat` lifts by equality saturation as `--engine eqsat` does.

use std::time::Instant;

include!("../src/main/allocator.rs");

fn main() {
    keep_freed_memory_a_while();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks");
    let reps: usize = std::env::var("HARROW_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let only_targets = std::env::var("HARROW_BENCH_TARGETS").ok();
    let only_kernels = std::env::var("HARROW_BENCH_KERNELS").ok();
    if let Ok(name) = std::env::var("HARROW_BENCH_ENGINE") {
        let engine = harrow::lift::EngineKind::from_name(&name)
            .unwrap_or_else(|| panic!("HARROW_BENCH_ENGINE: `{name}` is not greedy or eqsat"));
        harrow::lift::set_engine(engine);
    }
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("benchmarks/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hk"))
        .filter(|p| {
            only_kernels.as_deref().is_none_or(|ks| {
                let name = p.file_stem().unwrap().to_string_lossy();
                ks.split(',').any(|k| name.contains(k))
            })
        })
        .collect();
    files.sort();
    let kernels: Vec<_> = files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("kernel is readable");
            let src = harrow::diag::Source::new(p.display().to_string(), text);
            harrow::kernel::parse::parse(&src).expect("suite kernel parses")
        })
        .collect();
    let mut worst = 0.0f64;
    for target in harrow::targets::names() {
        if only_targets
            .as_deref()
            .is_some_and(|ts| !ts.split(',').any(|t| t == target))
        {
            continue;
        }
        let backend = harrow::targets::backend(target).expect("registered target builds");
        let mut times = Vec::new();
        println!("{target}:");
        for k in &kernels {
            let mut best = f64::MAX;
            for _ in 0..reps {
                // Each repetition selects from nothing, as a `harrow compile` process does.
                backend.selections.clear();
                let t = Instant::now();
                let out = harrow::kernel::c_file::c_file(k, &backend, None, "harrow_kernel");
                std::hint::black_box(out);
                best = best.min(t.elapsed().as_secs_f64() * 1e3);
            }
            println!("  {:<16} {best:>8.2} ms", k.name);
            times.push((best, k.name.clone()));
        }
        let geomean = (times.iter().map(|(t, _)| t.ln()).sum::<f64>() / times.len() as f64).exp();
        let (max, name) = times
            .iter()
            .cloned()
            .fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a });
        println!("  geomean {geomean:.2} ms, max {max:.2} ms ({name})");
        worst = worst.max(max);
    }
    println!("maximum over all targets: {worst:.2} ms");
}
