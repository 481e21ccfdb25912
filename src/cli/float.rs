//! `harrow float compile|run` and `harrow bench --float`: the float vectorizer on the
//! command line (`docs/float.md`).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{CliError, read_source};
use crate::float::harness::{self, HarnessError, Measured};
use crate::float::{self, Compiled, FloatError, Options};
use crate::isa::target::Target;

/// `harrow float`
#[derive(Args, Debug)]
pub struct FloatArgs {
    /// What to do.
    #[command(subcommand)]
    pub what: FloatCommand,
}

/// The `float` subcommands.
#[derive(Subcommand, Debug)]
pub enum FloatCommand {
    /// Vectorize a fixed-size float kernel written in C and print the vector C (or a report).
    Compile(FloatCompileArgs),
    /// Vectorize a kernel, then run it against the C compiled by clang and the reference
    /// interpreter on random and edge-case inputs.
    Run(FloatRunArgs),
    /// Check every row of a target's float instruction table on this machine (or under
    /// qemu) against IEEE single arithmetic.
    CheckIsa(FloatCheckIsaArgs),
}

/// `harrow float check-isa`
#[derive(Args, Debug)]
pub struct FloatCheckIsaArgs {
    /// Target with float vectors.
    #[arg(long, default_value = crate::targets::DEFAULT_TARGET)]
    pub target: String,
    /// Operand sets (edge values first, then random).
    #[arg(long, default_value_t = 2000)]
    pub cases: usize,
    /// Seed of the random operands.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// What every float command takes.
#[derive(Args, Debug, Clone)]
pub struct FloatCommon {
    /// The C file.
    pub file: PathBuf,
    /// Target with float vectors (`x86-avx2`, `x86-avx512`, `arm-neon`).
    #[arg(long, default_value = crate::targets::DEFAULT_TARGET)]
    pub target: String,
    /// The function to vectorize, when the file defines several.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// Allow reassociation and fused multiply-adds: results within the bound of
    /// docs/float.md instead of exact.
    #[arg(long)]
    pub fast_math: bool,
}

/// `harrow float compile`
#[derive(Args, Debug)]
pub struct FloatCompileArgs {
    #[command(flatten)]
    pub common: FloatCommon,
    /// `c` (the vector C) or `report` (what the search did and its cost).
    #[arg(long, default_value = "c", value_parser = ["c", "report"])]
    pub emit: String,
}

/// `harrow float run`
#[derive(Args, Debug)]
pub struct FloatRunArgs {
    #[command(flatten)]
    pub common: FloatCommon,
    /// Random cases after the edge cases.
    #[arg(long, default_value_t = 200)]
    pub cases: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs `harrow float`.
pub fn cmd_float(a: &FloatArgs) -> Result<String, CliError> {
    match &a.what {
        FloatCommand::CheckIsa(c) => {
            let target = (crate::targets::lookup(&c.target)?.make)();
            let r = harness::check_table(&*target, c.cases, c.seed).map_err(harness_error)?;
            Ok(format!(
                "{}: {} float instructions, {} lanes equal to IEEE single arithmetic\n",
                c.target, r.rows, r.lanes
            ))
        }
        FloatCommand::Compile(c) => {
            let (k, _, _) = compile(&c.common)?;
            Ok(if c.emit == "c" {
                k.c.clone()
            } else {
                report(&k)
            })
        }
        FloatCommand::Run(r) => {
            let (k, target, text) = compile(&r.common)?;
            let prog = harness::build(&k, &text, &*target, None).map_err(harness_error)?;
            let rep =
                harness::check(&k, &prog, &*target, r.cases, r.seed).map_err(harness_error)?;
            let mut out = report(&k);
            out.push_str(&format!(
                "ok: {} cases, {} elements each equal to the C compiled by clang and to the interpreter{}\n",
                rep.cases,
                rep.elements,
                if k.fast_math {
                    format!(
                        " (--fast-math: within {:.2} of the bound; {} cases meeting infinities or NaN not compared)",
                        rep.worst_fast_math, rep.outside_fast_math
                    )
                } else {
                    String::new()
                }
            ));
            Ok(out)
        }
    }
}

fn harness_error(e: HarnessError) -> CliError {
    match e {
        HarnessError::Tool(t) => CliError::Tool(t),
        other => CliError::Other(other.to_string()),
    }
}

fn float_error(e: FloatError) -> CliError {
    match e {
        FloatError::Diag(d) => CliError::Diag(d),
        other => CliError::Other(other.to_string()),
    }
}

/// Compiles the file of `c`: the result, the target and the C text.
fn compile(c: &FloatCommon) -> Result<(Compiled, Box<dyn Target>, String), CliError> {
    let src = read_source(&c.file)?;
    let target = (crate::targets::lookup(&c.target)?.make)();
    let opts = Options {
        function: c.function.clone(),
        fast_math: c.fast_math,
        ..Options::default()
    };
    let k = float::compile(&src, &*target, &opts).map_err(float_error)?;
    Ok((k, target, src.text.clone()))
}

/// What `--emit report` prints.
pub fn report(k: &Compiled) -> String {
    let outputs: usize = k.kernel.written.iter().flatten().filter(|w| **w).count();
    let roots = k
        .kernel
        .finals
        .iter()
        .zip(&k.kernel.written)
        .flat_map(|(f, w)| f.iter().zip(w).filter(|(_, w)| **w).map(|(n, _)| *n));
    format!(
        "kernel {}: {} outputs, {} scalar operations, {} lanes per register{}\n\
         search: {} e-nodes, {} e-classes, {} rounds{}; {} output lanes checked symbolically\n\
         phases (ms): evaluate {:.1}, e-graph {:.1}, saturate {:.1}, extract {:.1}, emit {:.1}\n\
         cost: {} (the same registers from scalar code: {}){}, compiled in {:.1} ms\n",
        k.kernel.name,
        outputs,
        k.kernel.dag.operation_count(roots),
        k.lanes,
        if k.fast_math { ", --fast-math" } else { "" },
        k.stats.nodes,
        k.stats.classes,
        k.stats.rounds,
        if k.stats.limited {
            " (stopped by a limit)"
        } else {
            " (saturated)"
        },
        k.stats.symbolic_lanes,
        k.stats.phase_ms[0],
        k.stats.phase_ms[1],
        k.stats.phase_ms[2],
        k.stats.phase_ms[3],
        k.stats.phase_ms[4],
        k.cost,
        k.scalar_cost,
        if k.as_written {
            ": not 10% cheaper than scalar code, so the output is the C as written"
        } else {
            ""
        },
        k.compile_time.as_secs_f64() * 1e3,
    )
}

/// One row of `harrow bench --float`.
#[derive(Debug, serde::Serialize)]
pub struct FloatBenchRow {
    /// The kernel (file stem).
    pub name: String,
    /// Exact mode: harrow against the C at -O3.
    pub exact: Measured,
    /// Fast-math mode: harrow `--fast-math` against the C at -O3 -ffast-math and Eigen
    /// (held to the same bound; the `scalar` field is unused there).
    pub fast_math: Measured,
    /// Compile time of the exact and fast-math vectorizations, milliseconds.
    pub compile_ms: (f64, f64),
    /// Whether harrow handed the C back as written (no vector program cheaper by the
    /// margin), in exact and fast-math mode: its figure is then the same code's.
    pub as_written: (bool, bool),
    /// Why a baseline is missing, if one is.
    pub notes: Vec<String>,
}

/// The float kernels of `dir` (`*.c`, sorted).
pub fn float_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::Other(format!("cannot read {}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    Ok(v)
}

/// The default float suite: `benchmarks/float/`.
pub fn default_float_dir() -> PathBuf {
    let here = PathBuf::from("benchmarks/float");
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benchmarks/float")
}

/// Runs `harrow bench --float`: every kernel checked in both modes, then measured.
pub fn cmd_bench_float(
    target_name: &str,
    dir: Option<&Path>,
    only: &[String],
    json: bool,
) -> Result<String, CliError> {
    let dir = dir.map(Path::to_path_buf).unwrap_or_else(default_float_dir);
    let target = (crate::targets::lookup(target_name)?.make)();
    float::float_isa(&*target).map_err(float_error)?;
    if let Some(why) = target.cannot_run_here() {
        return Err(CliError::Other(why));
    }
    let mut rows = Vec::new();
    for f in float_files(&dir)? {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        let mut common = FloatCommon {
            file: f.clone(),
            target: target_name.into(),
            function: None,
            fast_math: false,
        };
        let mut measured = Vec::new();
        let mut compile_ms = Vec::new();
        let mut as_written = Vec::new();
        let mut notes = Vec::new();
        // The Eigen baseline, `eigen/<kernel>.cpp`, timed with the fast-math run.
        let cpp = dir.join("eigen").join(format!("{name}.cpp"));
        for fast in [false, true] {
            common.fast_math = fast;
            let (k, t, text) = compile(&common)?;
            let eigen = match (fast && cpp.is_file(), harness::eigen_unavailable(&*t)) {
                (true, None) => Some(cpp.as_path()),
                (true, Some(why)) => {
                    notes.push(why);
                    None
                }
                (false, _) => None,
            };
            let prog = harness::build(&k, &text, &*t, eigen).map_err(harness_error)?;
            let rep = harness::check(&k, &prog, &*t, 64, 1)
                .map_err(|e| CliError::Other(format!("{name}: {e}")))?;
            let mut m = harness::measure(&prog, &*t, 7).map_err(harness_error)?;
            if let Some(why) = rep.eigen_differs {
                notes.push(format!("Eigen not timed: {why}"));
                m.eigen = None;
            }
            measured.push(m);
            // Compile time is the best of three compiles: one run on a shared two-core
            // machine varies by tens of milliseconds with the scheduler alone.
            let mut best = k.compile_time;
            for _ in 0..2 {
                best = best.min(compile(&common)?.0.compile_time);
            }
            compile_ms.push(best.as_secs_f64() * 1e3);
            as_written.push(k.as_written);
        }
        for n in &notes {
            eprintln!("{name}: {n}");
        }
        let fast_math = measured.pop().expect("two modes");
        let exact = measured.pop().expect("two modes");
        eprintln!("{name}: done");
        rows.push(FloatBenchRow {
            name,
            exact,
            fast_math,
            compile_ms: (compile_ms[0], compile_ms[1]),
            as_written: (as_written[0], as_written[1]),
            notes,
        });
    }
    if rows.is_empty() {
        return Err(CliError::Other(format!(
            "no float kernels in {}",
            dir.display()
        )));
    }
    if json {
        return serde_json::to_string_pretty(&rows)
            .map(|s| s + "\n")
            .map_err(|e| CliError::Other(e.to_string()));
    }
    Ok(table(target_name, &rows))
}

fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    if n == 0 { 1.0 } else { (s / n as f64).exp() }
}

fn table(target: &str, rows: &[FloatBenchRow]) -> String {
    let unit = rows[0].exact.unit;
    let mut out = format!(
        "float kernels on {target} ({unit} per call; speedup = baseline / harrow)\n\
         {:<22} {:>9} {:>9} {:>7}  {:>9} {:>9} {:>9} {:>7} {:>7}  {:>8} {:>8}\n",
        "kernel",
        "harrow",
        "clang",
        "speedup",
        "harrow-fm",
        "clang-fm",
        "eigen",
        "vs fm",
        "vs best",
        "compile",
        "fm"
    );
    let best = |r: &FloatBenchRow| {
        r.fast_math
            .eigen
            .map_or(r.fast_math.fast, |e| e.min(r.fast_math.fast))
    };
    for r in rows {
        let eigen = r
            .fast_math
            .eigen
            .map_or("-".to_string(), |e| format!("{e:.2}"));
        out.push_str(&format!(
            "{:<22} {:>9.2} {:>9.2} {:>6.2}x{} {:>9.2} {:>9.2} {:>9} {:>6.2}x{}{:>6.2}x  {:>6.1}ms {:>6.1}ms\n",
            r.name,
            r.exact.harrow,
            r.exact.scalar,
            r.exact.scalar / r.exact.harrow,
            if r.as_written.0 { "=" } else { " " },
            r.fast_math.harrow,
            r.fast_math.fast,
            eigen,
            r.fast_math.fast / r.fast_math.harrow,
            if r.as_written.1 { "=" } else { " " },
            best(r) / r.fast_math.harrow,
            r.compile_ms.0,
            r.compile_ms.1,
        ));
    }
    out.push_str(&format!(
        "geomean speedup: exact {:.2}x over clang -O3; fast-math {:.2}x over clang -O3 -ffast-math, {:.2}x over the best of it and Eigen\n\
         slowest against clang -O3: {:.2}x\n\
         `=`: no vector program was cheaper by the margin, so harrow's output is the C as written and the ratio is \
         the same code measured twice; compile (best of three): exact mode, fm: --fast-math (both searches)\n",
        geomean(rows.iter().map(|r| r.exact.scalar / r.exact.harrow)),
        geomean(rows.iter().map(|r| r.fast_math.fast / r.fast_math.harrow)),
        geomean(rows.iter().map(|r| best(r) / r.fast_math.harrow)),
        rows.iter()
            .map(|r| r.exact.scalar / r.exact.harrow)
            .fold(f64::INFINITY, f64::min),
    ));
    out
}
