//! `harrow fuzz-kernels`: generated kernels, checked against the interpreter and measured
//! against clang -O3, worst ratios first.

use std::fmt::Write;
use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::CliError;
use super::bench_report::geomean;
use super::kernel::measure;
use crate::diag::Source;
use crate::kernel::fuzz::{self, FuzzKernel};
use crate::lower;

/// `harrow fuzz-kernels`
#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Target (the list is read from the target registry when the command line is built).
    #[arg(long, default_value = crate::targets::DEFAULT_TARGET)]
    pub target: String,
    /// How many kernels to generate.
    #[arg(long, default_value_t = 20)]
    pub count: u32,
    /// Seed of the generator: kernel `i` of seed `s` is always the same text.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Check correctness only (compile, run against the interpreter); no timing.
    #[arg(long)]
    pub no_bench: bool,
    /// How many of the slowest kernels (by ratio over clang -O3) to print with their text.
    #[arg(long, default_value_t = 3)]
    pub worst: usize,
    /// Also write every generated kernel to this directory (`NAME.hk`).
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

/// What happened to one generated kernel.
struct Outcome {
    kernel: FuzzKernel,
    /// harrow's speedup over clang -O3 (baseline / harrow), when measured.
    ratio: Option<f64>,
    /// A wrong result, a compile failure or a crash.
    failure: Option<String>,
}

/// Runs `harrow fuzz-kernels`.
pub fn cmd_fuzz(a: &FuzzArgs) -> Result<String, CliError> {
    let be = crate::targets::backend(&a.target)?;
    if let Some(why) = be.target.cannot_run_here() {
        return Err(CliError::Other(why));
    }
    if let Some(dir) = &a.save {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Other(format!("cannot create {}: {e}", dir.display())))?;
    }
    let bar = (std::io::stderr().is_terminal() && !a.json).then(|| {
        let b = indicatif::ProgressBar::new(a.count as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .expect("a valid template"),
        );
        b
    });
    let mut outcomes = Vec::new();
    for i in 0..a.count {
        let fk = fuzz::generate(a.seed, i);
        if let Some(b) = &bar {
            b.set_message(fk.name.clone());
        }
        if let Some(dir) = &a.save {
            let p = dir.join(format!("{}.hk", fk.name));
            std::fs::write(&p, &fk.text)
                .map_err(|e| CliError::Other(format!("cannot write {}: {e}", p.display())))?;
        }
        outcomes.push(one(&fk, &be, a.no_bench));
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let failed = outcomes.iter().any(|o| o.failure.is_some());
    let out = if a.json {
        json(a, &outcomes)
    } else {
        table(a, &outcomes)
    };
    if failed {
        Err(CliError::Failed(out))
    } else {
        Ok(out)
    }
}

/// Parses, checks and (unless `no_bench`) measures one generated kernel.
fn one(fk: &FuzzKernel, be: &lower::Backend, no_bench: bool) -> Outcome {
    let src = Source::new(format!("{}.hk", fk.name), fk.text.clone());
    let k = match crate::kernel::parse(&src) {
        Ok(k) => k,
        Err(d) => {
            return Outcome {
                kernel: fk.clone(),
                ratio: None,
                failure: Some(format!(
                    "the generator wrote a kernel that does not parse: {d}"
                )),
            };
        }
    };
    let result = if no_bench {
        let size = super::kernel::default_run_size(&k);
        crate::kernel::harness::run(&k, be, &size, None, 1)
            .map_err(|e| e.to_string())
            .and_then(|r| match r.mismatch {
                None => Ok(None),
                Some(m) => Err(m),
            })
    } else {
        measure(&k, be, &k.bench_extents, None, None, false)
            .map(|r| Some(r.scalar_per_elem / r.harrow_per_elem))
            .map_err(|e| e.to_string())
    };
    match result {
        Ok(ratio) => Outcome {
            kernel: fk.clone(),
            ratio,
            failure: None,
        },
        Err(e) => Outcome {
            kernel: fk.clone(),
            ratio: None,
            failure: Some(e),
        },
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The measured outcomes, slowest first.
fn by_ratio(outcomes: &[Outcome]) -> Vec<&Outcome> {
    let mut v: Vec<&Outcome> = outcomes.iter().filter(|o| o.ratio.is_some()).collect();
    v.sort_by(|x, y| x.ratio.unwrap_or(0.0).total_cmp(&y.ratio.unwrap_or(0.0)));
    v
}

fn table(a: &FuzzArgs, outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let ratios: Vec<f64> = outcomes.iter().filter_map(|o| o.ratio).collect();
    let failures: Vec<&Outcome> = outcomes.iter().filter(|o| o.failure.is_some()).collect();
    let _ = writeln!(
        s,
        "harrow fuzz-kernels --target {} --seed {} --count {}: {} kernels, {} correct, {} failed",
        a.target,
        a.seed,
        a.count,
        outcomes.len(),
        outcomes.len() - failures.len(),
        failures.len()
    );
    if !ratios.is_empty() {
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let below = ratios.iter().filter(|&&r| r < 1.0).count();
        let _ = writeln!(
            s,
            "speedup over clang -O3: min {min:.3}x, median {:.3}x, geomean {:.3}x; {below} below 1.0x",
            median(&ratios),
            geomean(&ratios)
        );
        for shape in fuzz::Shape::ALL {
            let r: Vec<f64> = outcomes
                .iter()
                .filter(|o| o.kernel.shape == shape)
                .filter_map(|o| o.ratio)
                .collect();
            if !r.is_empty() {
                let min = r.iter().copied().fold(f64::INFINITY, f64::min);
                let _ = writeln!(
                    s,
                    "  {:<12} {:>4} kernels  min {min:.3}x  geomean {:.3}x",
                    shape.name(),
                    r.len(),
                    geomean(&r)
                );
            }
        }
        for o in by_ratio(outcomes).iter().take(a.worst) {
            let _ = writeln!(
                s,
                "\n{:.3}x {} ({}):\n{}",
                o.ratio.unwrap_or(0.0),
                o.kernel.name,
                o.kernel.shape.name(),
                o.kernel.text.trim_end()
            );
        }
    }
    for o in &failures {
        let _ = writeln!(
            s,
            "\nFAILED {} ({}): {}\n{}",
            o.kernel.name,
            o.kernel.shape.name(),
            o.failure.as_deref().unwrap_or(""),
            o.kernel.text.trim_end()
        );
    }
    s
}

fn json(a: &FuzzArgs, outcomes: &[Outcome]) -> String {
    let ratios: Vec<f64> = outcomes.iter().filter_map(|o| o.ratio).collect();
    let kernels: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "name": o.kernel.name,
                "shape": o.kernel.shape.name(),
                "speedup": o.ratio,
                "failure": o.failure,
                "text": o.kernel.text,
            })
        })
        .collect();
    let summary = (!ratios.is_empty()).then(|| {
        serde_json::json!({
            "min": ratios.iter().copied().fold(f64::INFINITY, f64::min),
            "median": median(&ratios),
            "geomean": geomean(&ratios),
            "below_1": ratios.iter().filter(|&&r| r < 1.0).count(),
        })
    });
    let v = serde_json::json!({
        "target": a.target,
        "seed": a.seed,
        "count": a.count,
        "failed": outcomes.iter().filter(|o| o.failure.is_some()).count(),
        "speedup": summary,
        "kernels": kernels,
    });
    serde_json::to_string_pretty(&v).expect("JSON values serialize") + "\n"
}
