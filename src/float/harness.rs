//! Checking and measuring a compiled float kernel: one program links the C as written
//! (clang -O3 with contraction off, so it computes what the C says), the same C under
//! `-ffast-math`, and harrow's vector code, each in its own unit (the fixed C is the
//! template `harness_main.c`).
//!
//! `check` runs every implementation on random and edge-case inputs and compares lane for
//! lane: harrow's result with the C's (bits, NaN with NaN), and the C's with the reference
//! interpreter of the symbolic evaluation (so the front end's reading of the C is checked
//! too). With `--fast-math`, harrow's result need only be within [`fast_math_tolerance`].
//! `bench` times the three (x86: wall time, on this host) or counts their executed
//! instructions under qemu (targets with an instruction trace).

use std::path::{Path, PathBuf};

use super::Compiled;
use super::dag::same_result;
use crate::interp::Value;
use crate::isa::float::FloatIsa;
use crate::isa::target::{Purpose, Target};
use crate::isa::toolchain::{Compile, Output, ToolError, run, scratch, write_file};
use crate::util::rng::SplitMix64;

const TEMPLATE: &str = include_str!("harness_main.c");

/// Why a check or a measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A tool is missing, or a compile or a run failed.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The program's output is not what was asked for.
    #[error("{0}")]
    Output(String),
    /// harrow's code computes something else than the C.
    #[error("{0}")]
    Differs(String),
    /// The host cannot run the target's code.
    #[error("skipped: {0}")]
    CannotRun(String),
}

/// A built harness program.
pub struct Program {
    _dir: crate::isa::toolchain::Scratch,
    exe: PathBuf,
    total: usize,
    /// Whether an Eigen baseline is linked in.
    pub has_eigen: bool,
}

/// Where Debian's libeigen3-dev puts Eigen's headers.
pub const EIGEN_INCLUDE: &str = "/usr/include/eigen3";

/// Why a kernel's Eigen baseline cannot be built here, if it cannot: Eigen baselines are
/// C++ built for the host (the cross sysroots have no C++ library).
pub fn eigen_unavailable(target: &dyn Target) -> Option<String> {
    if !target.spec().toolchain.runner.is_empty() {
        return Some(format!(
            "no Eigen baseline on {} (host targets only)",
            target.name()
        ));
    }
    if !Path::new(EIGEN_INCLUDE).join("Eigen").is_dir() {
        return Some(format!(
            "Eigen 3.4 is not installed ({EIGEN_INCLUDE}): apt-get install libeigen3-dev, or run scripts/install-deps.sh"
        ));
    }
    None
}

/// Builds the harness for `k` (whose C source text is `c_source`), with the Eigen
/// baseline `eigen` (a C++ file defining `extern "C" eigen_kernel`) when given.
pub fn build(
    k: &Compiled,
    c_source: &str,
    target: &dyn Target,
    eigen: Option<&Path>,
) -> Result<Program, HarnessError> {
    crate::isa::toolchain::require_toolchain(target)?;
    let dir = scratch("float");
    std::fs::create_dir_all(&dir).map_err(|source| ToolError::Io {
        action: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    let name = &k.kernel.name;
    let user = write_file(&dir, "kernel.c", c_source)?;
    let vector = write_file(&dir, "harrow.c", &k.c)?;
    let params = &k.kernel.params;
    let mut offsets = vec![0usize];
    for p in params {
        offsets.push(offsets.last().copied().unwrap_or(0) + p.len());
    }
    let total = *offsets.last().unwrap_or(&0);
    let proto: Vec<&str> = params
        .iter()
        .map(|p| {
            if p.dims.is_empty() {
                "float"
            } else {
                "float *"
            }
        })
        .collect();
    let args: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at = format!("b + {}", offsets[i]);
            if p.dims.is_empty() {
                format!("*({at})")
            } else {
                at
            }
        })
        .collect();
    let offsets_text: Vec<String> = offsets.iter().map(usize::to_string).collect();
    let main = crate::util::ctemplate::fill(
        "harness_main.c",
        TEMPLATE,
        &[
            ("NPARAMS", &params.len().to_string()),
            ("TOTAL", &total.max(1).to_string()),
            ("OFFSETS", &offsets_text.join(", ")),
            ("PROTO", &proto.join(", ")),
            ("ARGS", &args.join(", ")),
            ("HAVE_EIGEN", if eigen.is_some() { "1" } else { "0" }),
        ],
    );
    let main = write_file(&dir, "main.c", main)?;
    let object = |src: &Path, out: &str, rename: &str, purpose: Purpose, extra: &[&str]| {
        let o = dir.join(out);
        Compile::new(target, purpose)
            .arg(format!("-D{name}={rename}"))
            .args(extra.iter().copied())
            .arg(src)
            .output(&o, Output::Object)
            .map(|_| o)
    };
    let exact = ["-ffp-contract=off"];
    let fast = ["-ffast-math"];
    // harrow's code is built as the baseline it is compared with is: exact, or with
    // -ffast-math when it was vectorized with --fast-math.
    let own: &[&str] = if k.fast_math { &fast } else { &exact };
    let mut objs = vec![
        object(
            &user,
            "scalar.o",
            "scalar_kernel",
            Purpose::Baseline,
            &exact,
        )?,
        object(&user, "fast.o", "fast_kernel", Purpose::Baseline, &fast)?,
        object(&vector, "harrow.o", "harrow_kernel", Purpose::Kernel, own)?,
    ];
    let mut libs = vec!["-lm"];
    if let Some(cpp) = eigen {
        if let Some(why) = eigen_unavailable(target) {
            return Err(HarnessError::Output(why));
        }
        let o = dir.join("eigen.o");
        Compile::new(target, Purpose::Baseline)
            .args(["-x", "c++", "-std=c++17", "-fno-exceptions", "-DNDEBUG"])
            .arg(format!("-I{EIGEN_INCLUDE}"))
            .arg(cpp)
            .output(&o, Output::Object)?;
        objs.push(o);
        libs.push("-lstdc++");
    }
    let exe = dir.join("float");
    Compile::new(target, Purpose::Kernel)
        .arg(&main)
        .args(objs.iter())
        .args(libs)
        .output(&exe, Output::Executable)?;
    Ok(Program {
        _dir: dir,
        exe,
        total,
        has_eigen: eigen.is_some(),
    })
}

/// Values every check includes: zeros of both signs, ones, the extremes, a subnormal,
/// infinities and NaN.
const EDGE: [f32; 11] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    f32::MAX,
    f32::MIN_POSITIVE,
    1.0e-45,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    0.5,
];

/// `cases` inputs: the first few every element one edge value, then random ones (most
/// in [-2, 2], some of any exponent, some edge values).
pub fn inputs(total: usize, cases: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    for c in 0..cases {
        let case = (0..total)
            .map(|_| {
                if c < EDGE.len() / 2 {
                    // Whole cases of two edge values mixed.
                    EDGE[(2 * c + rng.below(2) as usize) % EDGE.len()]
                } else {
                    match rng.below(10) {
                        0 => EDGE[rng.below(EDGE.len() as u64) as usize],
                        1 => f32::from_bits(rng.next_u64() as u32),
                        _ => (rng.below(1 << 24) as f32 / (1 << 22) as f32) - 2.0,
                    }
                }
            })
            .collect();
        out.push(case);
    }
    out
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Cases run.
    pub cases: usize,
    /// Output elements compared per implementation.
    pub elements: usize,
    /// Where the Eigen baseline first left the `--fast-math` bound (it is then not timed).
    pub eigen_differs: Option<String>,
    /// Cases not compared under `--fast-math` because the exact evaluation meets an
    /// infinity or NaN.
    pub outside_fast_math: usize,
    /// Largest difference of harrow's result from the C's in units of the tolerance
    /// (fast-math only; 0 when exact).
    pub worst_fast_math: f64,
}

/// Runs `cases` inputs through the program and compares (see the module documentation).
pub fn check(
    k: &Compiled,
    prog: &Program,
    target: &dyn Target,
    cases: usize,
    seed: u64,
) -> Result<CheckReport, HarnessError> {
    if let Some(why) = target.cannot_run_here() {
        return Err(HarnessError::CannotRun(why));
    }
    let ins = inputs(prog.total, cases, seed);
    let bytes: Vec<u8> = ins
        .iter()
        .flatten()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .collect();
    let out = run(target, &prog.exe, &["check", &cases.to_string()], &bytes)?;
    let floats: Vec<f32> = out
        .chunks_exact(4)
        .map(|b| f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect();
    const IMPLS: usize = 4;
    if floats.len() != cases * IMPLS * prog.total {
        return Err(HarnessError::Output(format!(
            "the harness printed {} values, expected {}",
            floats.len(),
            cases * IMPLS * prog.total
        )));
    }
    let ev = &k.kernel;
    let mut report = CheckReport {
        cases,
        elements: 0,
        worst_fast_math: 0.0,
        outside_fast_math: 0,
        eigen_differs: None,
    };
    for (c, input) in ins.iter().enumerate() {
        let at = |k: usize| &floats[(c * IMPLS + k) * prog.total..(c * IMPLS + k + 1) * prog.total];
        let (scalar, harrow, eigen) = (at(0), at(2), at(3));
        let params: Vec<Vec<f32>> = split(input, ev);
        let values = ev.dag.eval(&params);
        let values64 = ev.dag.eval_f64(&params);
        // -ffast-math assumes no infinity or NaN anywhere: a case whose exact evaluation
        // meets one is outside what --fast-math promises, and is not compared.
        if k.fast_math && values.iter().any(|v| !v.is_finite()) {
            report.outside_fast_math += 1;
            continue;
        }
        let mut base = 0;
        for (p, param) in ev.params.iter().enumerate() {
            for e in 0..param.len() {
                let want = if ev.written[p][e] {
                    values[ev.finals[p][e] as usize]
                } else {
                    input[base + e]
                };
                let (s, h) = (scalar[base + e], harrow[base + e]);
                let place =
                    || format!("{}[{}] of case {c}", param.name, index_text(&param.dims, e));
                // Eigen orders and fuses its arithmetic its own way: it is held to the
                // --fast-math bound, on the cases that bound applies to.
                if prog.has_eigen
                    && report.eigen_differs.is_none()
                    && values.iter().all(|v| v.is_finite())
                {
                    let real = values64[ev.finals[p][e] as usize];
                    let g = eigen[base + e];
                    if fast_math_excess(g, want, real, ev.written[p][e]).is_none() {
                        report.eigen_differs =
                            Some(format!("Eigen gives {g:e} at {}, the C {want:e}", place()));
                    }
                }
                if !same_result(s, want) {
                    return Err(HarnessError::Differs(format!(
                        "the C compiled by clang gives {s:e} at {}, harrow's reading of it {want:e}: a front-end bug (input: {:?})",
                        place(),
                        input
                    )));
                }
                if k.fast_math {
                    let real = values64[ev.finals[p][e] as usize];
                    match fast_math_excess(h, want, real, ev.written[p][e]) {
                        None => {
                            return Err(HarnessError::Differs(format!(
                                "harrow's --fast-math result {h:e} at {} is outside the bound: the C gives {want:e}, the real-number value is about {real:e} (input: {input:?})",
                                place()
                            )));
                        }
                        Some(d) => report.worst_fast_math = report.worst_fast_math.max(d),
                    }
                } else if !same_result(h, s) {
                    return Err(HarnessError::Differs(format!(
                        "harrow's vector code gives {h:e} at {}, the C {s:e} (input: {:?})",
                        place(),
                        input
                    )));
                }
                report.elements += 1;
            }
            base += param.len();
        }
    }
    Ok(report)
}

/// How far a `--fast-math` result `got` is from the real-number value `real` (estimated
/// in double), in units of the bound: the larger of 2^-10 of the value's magnitude (at
/// least 2^-10) and 16 times the exact float result's (`want`) own distance from `real`.
/// Reassociation changes rounding errors, so the bound follows the computation's own
/// sensitivity: an ill-conditioned output (a Gram-Schmidt column of a nearly singular
/// matrix, say) is as uncertain in the C as in any reordering of it. Cases whose exact
/// evaluation meets an infinity or NaN are not compared at all (`-ffast-math` assumes
/// none). `None`: outside the bound.
pub fn fast_math_excess(got: f32, want: f32, real: f64, written: bool) -> Option<f64> {
    if same_result(got, want) || !written {
        return same_result(got, want).then_some(0.0);
    }
    if !got.is_finite() || !want.is_finite() {
        return None;
    }
    let own = (want as f64 - real).abs();
    let bound = ((real.abs()).max(1.0) / 1024.0).max(16.0 * own);
    let d = (got as f64 - real).abs() / bound;
    (d <= 1.0).then_some(d)
}

fn split(input: &[f32], ev: &super::symbolic::Evaluated) -> Vec<Vec<f32>> {
    let mut at = 0;
    ev.params
        .iter()
        .map(|p| {
            let v = input[at..at + p.len()].to_vec();
            at += p.len();
            v
        })
        .collect()
}

fn index_text(dims: &[usize], mut flat: usize) -> String {
    let mut idx = vec![0; dims.len()];
    for (d, &n) in dims.iter().enumerate().rev() {
        idx[d] = flat % n;
        flat /= n;
    }
    idx.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("][")
}

/// One kernel's measurement: the cost of a call of each implementation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Measured {
    /// harrow's vector code.
    pub harrow: f64,
    /// The C at clang -O3 (no contraction).
    pub scalar: f64,
    /// The C at clang -O3 -ffast-math.
    pub fast: f64,
    /// The Eigen baseline, when the kernel has one that agreed with the C.
    pub eigen: Option<f64>,
    /// What the figures are: `ns` per call or `instructions` per call.
    pub unit: &'static str,
}

/// Times (on the host) or counts (under qemu, by instruction trace) one call of each
/// implementation on a random input.
pub fn measure(prog: &Program, target: &dyn Target, seed: u64) -> Result<Measured, HarnessError> {
    if let Some(why) = target.cannot_run_here() {
        return Err(HarnessError::CannotRun(why));
    }
    let input = inputs(prog.total, 8, seed).pop().unwrap_or_default();
    let bytes: Vec<u8> = input
        .iter()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .collect();
    if target.spec().toolchain.runner.is_empty() {
        let out = run(target, &prog.exe, &["time", "200000"], &bytes)?;
        let text = String::from_utf8_lossy(&out);
        let v: Vec<f64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let [scalar, fast, harrow, eigen] = v[..] else {
            return Err(HarnessError::Output(format!(
                "the harness printed `{text}`"
            )));
        };
        return Ok(Measured {
            harrow,
            scalar,
            fast,
            eigen: prog.has_eigen.then_some(eigen),
            unit: "ns",
        });
    }
    let modes = if prog.has_eigen { 5 } else { 4 };
    let mut counts = [0u64; 5];
    for (mode, slot) in counts.iter_mut().enumerate().take(modes) {
        *slot = traced(target, &prog.exe, mode, &bytes)?;
    }
    let per = |k: usize| counts[k].saturating_sub(counts[0]) as f64;
    Ok(Measured {
        harrow: per(1),
        scalar: per(2),
        fast: per(3),
        eigen: prog.has_eigen.then(|| per(4)),
        unit: "instructions",
    })
}

/// Instructions executed by `exe count mode`, from the target's instruction trace.
fn traced(target: &dyn Target, exe: &Path, mode: usize, input: &[u8]) -> Result<u64, HarnessError> {
    let log = exe.with_extension(format!("trace{mode}"));
    let Some(mut cmd) = target.trace_command(exe, &log) else {
        return Err(HarnessError::Output(format!(
            "{} has no instruction trace",
            target.name()
        )));
    };
    let _ = std::fs::remove_file(&log);
    cmd.arg("count").arg(mode.to_string());
    crate::isa::toolchain::run_command(cmd, Some(input))?;
    let text = std::fs::read_to_string(&log)
        .map_err(|e| HarnessError::Output(format!("no trace at {}: {e}", log.display())))?;
    Ok(text.lines().filter(|l| l.starts_with("Trace ")).count() as u64)
}

const TABLE_TEMPLATE: &str = include_str!("table_main.c");

/// What the hardware check of a float table found.
#[derive(Clone, Debug)]
pub struct TableReport {
    /// Rows checked.
    pub rows: usize,
    /// Lanes compared.
    pub lanes: usize,
}

/// Checks every row of `target`'s float table on the machine (the host, or qemu): each
/// operation is run through its own C template on `cases` operand sets (edge values first,
/// then random ones) and every lane is compared with the row's semantics
/// (`FloatOp::semantics`) evaluated by the reference interpreter. Fails naming the row,
/// the lane and the operands.
pub fn check_table(
    target: &dyn Target,
    cases: usize,
    seed: u64,
) -> Result<TableReport, HarnessError> {
    let isa = super::float_isa(target).map_err(|e| HarnessError::Output(e.to_string()))?;
    check_table_of(isa, target, cases, seed)
}

/// [`check_table`] of the table `isa` (which need not be `target`'s: tests check that a
/// wrong row is caught). The program is compiled even where the host cannot run it.
pub fn check_table_of(
    isa: &FloatIsa,
    target: &dyn Target,
    cases: usize,
    seed: u64,
) -> Result<TableReport, HarnessError> {
    use crate::isa::float::{ALL_FLOAT_OPS, FloatOp};
    crate::isa::toolchain::require_toolchain(target)?;
    let w = isa.lanes;
    let load = |p: &str| isa.c(FloatOp::Load, &[("p", p)]);
    let mut code = String::new();
    for op in ALL_FLOAT_OPS {
        let lanes: Vec<String> = (0..w).map(|i| format!("a[{i}]")).collect();
        let lanes = lanes.join(", ");
        let value = match op {
            FloatOp::Load | FloatOp::Store => "va".to_string(),
            FloatOp::Splat => isa.c(op, &[("x", "x")]),
            FloatOp::FromLanes => isa.c(op, &[("lanes", &lanes)]),
            _ => isa.c(op, &[("a", "va"), ("b", "vb"), ("c", "vc")]),
        };
        code.push_str(&format!(
            "        {{\n            {} r = {value};\n            {};\n            fwrite(out, sizeof(float), W, stdout);\n        }}\n",
            isa.vector_type,
            isa.c(FloatOp::Store, &[("p", "out"), ("a", "r")])
        ));
    }
    let rows: Vec<String> = ALL_FLOAT_OPS.iter().map(|o| format!("{o:?}")).collect();
    let main = crate::util::ctemplate::fill(
        "table_main.c",
        TABLE_TEMPLATE,
        &[
            ("ROWS", &rows.join(", ")),
            ("HEADER", isa.header),
            ("LANES", &w.to_string()),
            ("VTYPE", isa.vector_type),
            ("LOAD_A", &load("a")),
            ("LOAD_B", &load("b")),
            ("LOAD_C", &load("c")),
            ("ROW_CODE", &code),
        ],
    );
    let dir = scratch("float-table");
    std::fs::create_dir_all(&dir).map_err(|source| ToolError::Io {
        action: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    let src = write_file(&dir, "table.c", main)?;
    let exe = dir.join("table");
    // -O1, as the integer hardware check: the intrinsics are what is checked, not what an
    // optimizer makes of a constant-folded program.
    Compile::new(target, Purpose::HardwareCheck)
        .arg("-ffp-contract=off")
        .arg(&src)
        .arg("-lm")
        .output(&exe, Output::Executable)?;
    if let Some(why) = target.cannot_run_here() {
        return Err(HarnessError::CannotRun(why));
    }
    let sets = inputs(3 * w + 1, cases, seed);
    let bytes: Vec<u8> = sets
        .iter()
        .flatten()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .collect();
    let out = run(target, &exe, &[], &bytes)?;
    let got: Vec<f32> = out
        .chunks_exact(4)
        .map(|b| f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect();
    let per_set = ALL_FLOAT_OPS.len() * w;
    if got.len() != cases * per_set {
        return Err(HarnessError::Output(format!(
            "the table check printed {} values, expected {}",
            got.len(),
            cases * per_set
        )));
    }
    // The expected lanes: each row's semantics, evaluated by the reference interpreter.
    let semantics: Vec<crate::ir::Expr> = ALL_FLOAT_OPS
        .iter()
        .map(|op| op.semantics(w as u32))
        .collect();
    let mut lanes = 0;
    for (s, set) in sets.iter().enumerate() {
        let (a, b, c, x) = (&set[..w], &set[w..2 * w], &set[2 * w..3 * w], set[3 * w]);
        let mut env = crate::interp::Env::new();
        env.set("a", Value::from_floats(a))
            .set("b", Value::from_floats(b))
            .set("c", Value::from_floats(c))
            .set("x", Value::from_floats(&[x]));
        for (r, op) in ALL_FLOAT_OPS.iter().enumerate() {
            let want = crate::interp::eval(&semantics[r], &env)
                .map_err(|e| HarnessError::Output(format!("{op:?}: {e}")))?
                .to_floats();
            for (i, &want) in want.iter().enumerate() {
                let g = got[s * per_set + r * w + i];
                if !same_result(g, want) {
                    let row = isa.instr(*op);
                    return Err(HarnessError::Differs(format!(
                        "{}: {op:?} (`{}`, {}) gives {g:e} in lane {i}, IEEE single {want:e} (a={:e}, b={:e}, c={:e}, x={x:e})",
                        target.name(),
                        row.c,
                        row.described_at
                            .as_deref()
                            .map_or("written in Rust".to_string(), |at| format!(
                                "described at {at}"
                            )),
                        a[i],
                        b[i],
                        c[i]
                    )));
                }
                lanes += 1;
            }
        }
    }
    Ok(TableReport {
        rows: ALL_FLOAT_OPS.len(),
        lanes,
    })
}
