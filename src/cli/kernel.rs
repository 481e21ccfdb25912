//! `harrow compile KERNEL.hk`, `harrow run` and `harrow bench`.

use std::fmt::Write;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;

use super::bench_report::BenchReport;
use super::{CliError, read_source};
use crate::kernel::{self, Kernel, c_file, harness};
use crate::lower;

/// `harrow run`
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The kernel file (`.hk`).
    pub kernel: PathBuf,
    /// Target (the list is read from the target registry when the command line is built).
    #[arg(long, default_value = crate::targets::DEFAULT_TARGET)]
    pub target: String,
    /// Output extents, `W`, `WxH` or `WxHxD` (default: a small odd size, so tails are
    /// exercised).
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
    /// Lanes per vector (default: one register of the widest type the kernel uses).
    #[arg(long, value_name = "LANES")]
    pub width: Option<u32>,
    /// Seed of the random data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `harrow bench`
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Target (the list is read from the target registry when the command line is built).
    #[arg(long, default_value = crate::targets::DEFAULT_TARGET)]
    pub target: String,
    /// Only the kernel with this name (repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// The directory of `.hk` kernels (default: `benchmarks/` of the repository).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long)]
    pub json: bool,
    /// Also compare against this baseline: `halide` (Halide 21 ahead-of-time objects).
    #[arg(long, value_name = "BASELINE")]
    pub vs: Option<String>,
    /// Override the output extents (`W`, `WxH` or `WxHxD`), e.g. for a quick run;
    /// repeatable, one per number of dimensions: each kernel takes the one that matches
    /// its output (`--size 4096 --size 256x64 --size 64x32x3` covers the whole suite).
    #[arg(long, value_name = "WxH")]
    pub size: Vec<String>,
    /// Lanes per vector for every kernel (default: the target's choice per kernel).
    #[arg(long, value_name = "LANES")]
    pub width: Option<u32>,
    /// Also draw the per-kernel speedups against each baseline as an SVG chart here.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Benchmark the float kernels (`benchmarks/float/*.c`, or `--dir`) instead: harrow's
    /// vectorization against the C at clang -O3 and at -O3 -ffast-math.
    #[arg(long)]
    pub float: bool,
}

/// Reads and elaborates a kernel file.
pub fn load(path: &Path) -> Result<Kernel, CliError> {
    let src = read_source(path)?;
    Ok(kernel::parse(&src)?)
}

/// Parses `W`, `WxH` or `WxHxD`.
pub fn parse_size(s: &str, dims: usize) -> Result<Vec<i64>, CliError> {
    let v: Result<Vec<i64>, _> = s.split('x').map(|p| p.trim().parse::<i64>()).collect();
    match v {
        Ok(v) if v.len() == dims && v.iter().all(|&e| e > 0) => Ok(v),
        _ => Err(CliError::Other(format!(
            "bad --size `{s}`: the output has {dims} dimension(s), give {} positive extents like `{}`",
            dims,
            ["67", "67x13", "19x23x5"][dims - 1]
        ))),
    }
}

/// The `--size` among `sizes` with as many extents as `k`'s output has dimensions (`None`
/// when no size was given); an error naming the kernel when sizes were given but none fits.
pub fn size_for(sizes: &[String], k: &Kernel) -> Result<Option<Vec<i64>>, CliError> {
    if sizes.is_empty() {
        return Ok(None);
    }
    let dims = k.out_vars.len();
    match sizes.iter().find(|s| s.split('x').count() == dims) {
        Some(s) => parse_size(s, dims).map(Some),
        None => Err(CliError::Other(format!(
            "no --size for kernel `{}`, whose output has {dims} dimension(s) (given: {}); add one like `--size {}`",
            k.name,
            sizes.join(", "),
            ["4096", "256x64", "64x32x3"][dims - 1]
        ))),
    }
}

/// The default `harrow run` extents: odd, so that tails and narrow rows are exercised, and
/// rows longer than two of the widest vectors (128 lanes on HVX) and than two unrolled
/// loop iterations (`vector_c::MAX_UNROLLED_LANES`), so that every vector loop, not only the
/// tail, runs on every target.
pub fn default_run_size(k: &Kernel) -> Vec<i64> {
    match k.out_vars.len() {
        1 => vec![267],
        2 => vec![261, 5],
        _ => vec![259, 3, 2],
    }
}

/// `harrow compile KERNEL.hk`.
pub fn compile(
    path: &Path,
    be: &lower::Backend,
    emit: &str,
    name: &str,
    width: Option<u32>,
) -> Result<String, CliError> {
    let k = load(path)?;
    harness::check_width(&k, width)?;
    match emit {
        "c" => Ok(c_file::c_file(&k, be, width, name).0),
        "scalar-c" => Ok(c_file::scalar_file(&k, name)),
        "ir" => {
            let listing = |s: &mut String, c: &kernel::codegen::Compiled, what: &str| {
                for (i, st) in c.steps.iter().enumerate() {
                    let _ = writeln!(s, "; reduction {i} step");
                    s.push_str(&lower::listing(st));
                }
                let _ = writeln!(s, "; {what}");
                s.push_str(&lower::listing(&c.body));
                for ((name, _), l) in k.more_outputs.iter().zip(&c.more) {
                    let _ = writeln!(s, "; {what} `{name}`");
                    s.push_str(&lower::listing(l));
                }
            };
            let mut s = String::new();
            match kernel::line_buffer::choose(&k, be, width) {
                kernel::line_buffer::Plan::Direct(c) => listing(&mut s, &c, "output"),
                kernel::line_buffer::Plan::Lines(st, direct) => {
                    listing(&mut s, &st.producer, "line (computed once per line)");
                    listing(&mut s, &st.consumer, "output from the lines");
                    listing(&mut s, &direct, "output without the lines (small images)");
                }
            }
            Ok(s)
        }
        "footprint" => {
            let setup = kernel::reference::Setup::defaults(&k, &k.bench_extents);
            Ok(format!(
                "# input index ranges for output extents {:?} (parameters at their defaults)\n{}",
                k.bench_extents,
                harness::footprint_text(&k, &setup)
            ))
        }
        "asm" => {
            let c = c_file::c_file(&k, be, width, name).0;
            Ok(crate::isa::toolchain::assembly(
                be.target.as_ref(),
                crate::isa::target::Purpose::Assembly,
                &c,
            )?)
        }
        _ => Err(CliError::Other(format!(
            "unknown --emit `{emit}` for a kernel; expected c, scalar-c, asm, ir or footprint"
        ))),
    }
}

/// `--explain` for a kernel: the explanation of its body and of each loop step.
pub fn explain(
    path: &Path,
    be: &lower::Backend,
    target: &str,
    width: Option<u32>,
) -> Result<String, CliError> {
    let k = load(path)?;
    harness::check_width(&k, width)?;
    let mut s = String::new();
    let explain = |s: &mut String, c: &kernel::codegen::Compiled| {
        for st in &c.steps {
            s.push_str(&lower::explain(st, target));
        }
        for l in c.outputs() {
            s.push_str(&lower::explain(l, target));
        }
    };
    match kernel::line_buffer::choose(&k, be, width) {
        kernel::line_buffer::Plan::Direct(c) => explain(&mut s, &c),
        kernel::line_buffer::Plan::Lines(st, direct) => {
            let _ = writeln!(
                s,
                "explain: line buffer: `{}` is computed once per line into a ring of {} lines, read at {} places (estimated {:.3} cycles per output element, {:.3} without the lines)",
                st.lb.line,
                st.lb.rows,
                st.lb.uses,
                st.per_element(be.target.as_ref()),
                direct.cost_per_lane(be.target.as_ref())
            );
            explain(&mut s, &st.producer);
            explain(&mut s, &st.consumer);
        }
    }
    Ok(s)
}

/// Runs `harrow run`.
pub fn cmd_run(a: &RunArgs) -> Result<String, CliError> {
    let k = load(&a.kernel)?;
    let be = crate::targets::backend(&a.target)?;
    let size = match &a.size {
        Some(s) => parse_size(s, k.out_vars.len())?,
        None => default_run_size(&k),
    };
    let r = harness::run(&k, &be, &size, a.width, a.seed)?;
    let dims: Vec<String> = size.iter().map(|e| e.to_string()).collect();
    match r.mismatch {
        None => Ok(format!(
            "{}: ok on {}: {} data sets, {} outputs each checked against the interpreter (harrow {} lanes and scalar C)\n",
            k.name,
            a.target,
            r.cases,
            dims.join("x"),
            r.lanes
        )),
        Some(m) => Err(CliError::Failed(format!(
            "{}: WRONG on {}: {m}\n",
            k.name, a.target
        ))),
    }
}

/// The kernel files of a directory, sorted.
pub fn kernel_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::Other(format!("cannot read {}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hk"))
        .collect();
    v.sort();
    Ok(v)
}

fn default_bench_dir() -> PathBuf {
    let here = PathBuf::from("benchmarks");
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benchmarks")
}

/// Runs `harrow bench`.
pub fn cmd_bench(a: &BenchArgs) -> Result<String, CliError> {
    if a.float {
        return super::float::cmd_bench_float(&a.target, a.dir.as_deref(), &a.only, a.json);
    }
    let dir = a.dir.clone().unwrap_or_else(default_bench_dir);
    let files = kernel_files(&dir)?;
    let t0 = std::time::Instant::now();
    let be = crate::targets::backend(&a.target)?;
    let backend_ms = t0.elapsed().as_secs_f64() * 1e3;
    if let Some(why) = be.target.cannot_run_here() {
        return Err(CliError::Other(why));
    }
    let mut kernels = Vec::new();
    for f in &files {
        let k = load(f)?;
        if a.only.is_empty() || a.only.contains(&k.name) {
            kernels.push(k);
        }
    }
    if kernels.is_empty() {
        return Err(CliError::Other(format!(
            "no kernels to run in {} (--only {:?})",
            dir.display(),
            a.only
        )));
    }
    let halide = match a.vs.as_deref() {
        None => None,
        Some("halide") => Some(crate::kernel::halide::Halide::detect()),
        Some(other) => {
            return Err(CliError::Other(format!(
                "unknown --vs `{other}`; expected `halide`"
            )));
        }
    };
    let tty = std::io::stderr().is_terminal() && !a.json;
    let bar = if tty {
        let b = indicatif::ProgressBar::new(kernels.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .expect("a valid template"),
        );
        Some(b)
    } else {
        None
    };
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for k in &kernels {
        if let Some(b) = &bar {
            b.set_message(k.name.clone());
        } else if !a.json {
            eprintln!("bench: {}", k.name);
        }
        let extents = match size_for(&a.size, k)? {
            Some(e) => e,
            None => k.bench_extents.clone(),
        };
        match measure(
            k,
            &be,
            &extents,
            a.width,
            halide.as_ref(),
            !a.size.is_empty(),
        ) {
            Ok(r) => rows.push(r),
            // Wrong and differing outputs name the kernel already.
            Err(
                e @ (harness::KernelError::Wrong { .. } | harness::KernelError::Differs { .. }),
            ) => failures.push(e.to_string()),
            Err(e) => failures.push(format!("{}: {e}", k.name)),
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let report = BenchReport::new(&a.target, &rows, backend_ms, halide.as_ref(), &failures);
    if let Some(path) = &a.plot {
        let svg = super::bench_plot::svg(&report).map_err(CliError::Other)?;
        std::fs::write(path, svg)
            .map_err(|e| CliError::Other(format!("cannot write {}: {e}", path.display())))?;
    }
    let out = if a.json {
        report.to_json()
    } else {
        report.table(halide.is_some())
    };
    if failures.is_empty() {
        Ok(out)
    } else {
        Err(CliError::Failed(out))
    }
}

/// Checks `k` against the interpreter (small data), then measures it against the scalar
/// baseline (and Halide): timed natively, or counted under qemu on smaller extents unless
/// `size_given`. A wrong result is an error naming the kernel.
pub fn measure(
    k: &Kernel,
    be: &lower::Backend,
    extents: &[i64],
    width: Option<u32>,
    halide: Option<&crate::kernel::halide::Halide>,
    size_given: bool,
) -> Result<harness::BenchResult, harness::KernelError> {
    let check = harness::run(k, be, &default_run_size(k), width, 1)?;
    if let Some(what) = check.mismatch {
        return Err(harness::KernelError::Wrong {
            kernel: k.name.clone(),
            what,
        });
    }
    // Targets that run under qemu are measured by counting, on smaller data.
    let counted = be
        .target
        .trace_command(std::path::Path::new("p"), std::path::Path::new("l"))
        .is_some();
    let extents = if counted && !size_given {
        crate::kernel::count::count_extents(extents)
    } else {
        extents.to_vec()
    };
    let measure = |h: Option<&crate::kernel::halide::Halide>| {
        if counted {
            crate::kernel::count::count(k, be, &extents, width, h)
        } else {
            harness::bench(k, be, &extents, width, h)
        }
    };
    match measure(halide) {
        // Halide's generator or its pipeline failed (the program holds all three): harrow
        // and the baseline are still measured, and the row says why Halide is missing.
        Err(e) if halide.is_some() => measure(None).map(|mut r| {
            let text = e.to_string();
            let why = text.lines().next().unwrap_or("").trim();
            r.halide_note = Some(format!("Halide 21 not measured: {why}"));
            r
        }),
        r => r,
    }
}
