//! Running kernels: `harrow run` (generated code against the reference interpreter) and
//! `harrow bench` (generated code timed against the scalar C baseline in one process).
//!
//! Programs are built by the target's clang-19 with `-O3` and run natively (or through the
//! target's runner). Inputs live in buffers whose last byte sits just before a page the
//! program cannot read, so a load past the footprint crashes the run instead of passing.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::c_file::{Build, build, scalar_file};
use super::halide::{Halide, HalideBuild};
use super::reference::{self, Data, Setup};
use super::{Kernel, codegen};
use crate::isa::target::{Purpose, Target};
use crate::isa::toolchain::{Compile, Output, ToolError, scratch, write_file};
use crate::lower::Backend;
use crate::types::Elem;
use crate::util::rng::SplitMix64;

/// Why a kernel could not be run or measured.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The size given has another number of dimensions than the output.
    #[error("the output has {expected} dimension(s) but the size gives {got}")]
    Extents {
        /// The output's dimensions.
        expected: usize,
        /// The size's.
        got: usize,
    },
    /// A requested vector width harrow cannot compile the kernel at.
    #[error(
        "--width {requested}: kernel `{kernel}` is compiled at a power of two of at least {min} lanes (one 128-bit register of its output, which selection works on)"
    )]
    Width {
        /// The kernel.
        kernel: String,
        /// The width asked for.
        requested: u32,
        /// The narrowest width it compiles at.
        min: u32,
    },
    /// The extents ask for more data than harrow will allocate.
    #[error(
        "size {extents:?} is too large for kernel `{kernel}`: its output and inputs would hold {elements} elements, more than the limit of {limit} (about {limit_gib} GiB as the reference interpreter stores them); give a smaller --size"
    )]
    TooLarge {
        /// The kernel.
        kernel: String,
        /// The extents asked for.
        extents: Vec<i64>,
        /// Elements of output and input footprints together (saturated).
        elements: u128,
        /// [`MAX_ELEMENTS`].
        limit: u64,
        /// The limit in GiB of 16-byte reference elements.
        limit_gib: u64,
    },
    /// This machine cannot run the target's code (it is still compiled and selected).
    #[error("{0}")]
    CannotRunHere(String),
    /// Building or running a program failed (not a crash).
    #[error("{0}")]
    Tool(#[from] ToolError),
    /// The program crashed.
    #[error("{0}\n(a crash here usually means a read outside the input footprint)")]
    Crashed(ToolError),
    /// The reference interpreter failed on a data set.
    #[error("the reference failed on `{case}`: {message}")]
    Reference {
        /// The data set.
        case: String,
        /// What went wrong.
        message: String,
    },
    /// harrow's output differs from the baseline's at the benchmark extents.
    #[error("{kernel}: harrow's output differs from the scalar C at {extents:?}")]
    Differs {
        /// The kernel.
        kernel: String,
        /// The extents.
        extents: Vec<i64>,
    },
    /// An output differs from the reference interpreter's.
    #[error("{kernel}: {what}")]
    Wrong {
        /// The kernel.
        kernel: String,
        /// Where and how.
        what: String,
    },
    /// The program printed what the harness cannot read.
    #[error("{0}")]
    Output(String),
    /// The Halide baseline could not be built.
    #[error("{0}")]
    Halide(String),
}

impl From<KernelError> for String {
    fn from(e: KernelError) -> String {
        e.to_string()
    }
}

/// The most elements (output and input footprints together) a run or benchmark may
/// allocate: the reference interpreter holds each as 16 bytes, so this is 1 GiB there,
/// and about 30 full-HD frames, far above any benchmark's extents.
pub const MAX_ELEMENTS: u64 = 1 << 26;

/// Refuses extents whose buffers would exceed [`MAX_ELEMENTS`], before anything is
/// allocated (parameters at their defaults; the other data sets keep extent parameters
/// small).
pub fn check_size(k: &Kernel, extents: &[i64]) -> Result<(), KernelError> {
    let setup = Setup::defaults(k, extents);
    let count = |dims: &[i64]| -> u128 {
        dims.iter()
            .fold(1u128, |n, &e| n.saturating_mul(e.max(0) as u128))
    };
    let mut elements = count(extents).saturating_mul(k.outputs() as u128);
    let too_large = |elements| KernelError::TooLarge {
        kernel: k.name.clone(),
        extents: extents.to_vec(),
        elements,
        limit: MAX_ELEMENTS,
        limit_gib: (MAX_ELEMENTS * 16) >> 30,
    };
    // Checked before the footprint, whose index arithmetic assumes sane extents.
    if elements > MAX_ELEMENTS as u128 {
        return Err(too_large(elements));
    }
    for dims in reference::footprint(k, &setup) {
        let ext: Vec<i64> = dims.iter().map(|d| d.1).collect();
        elements = elements.saturating_add(count(&ext));
    }
    if elements > MAX_ELEMENTS as u128 {
        return Err(too_large(elements));
    }
    Ok(())
}

/// Refuses a requested width that [`codegen::legal_lanes`] would change (below one
/// 128-bit register of output, or not a power of two), rather than silently compiling at
/// another one.
pub fn check_width(k: &Kernel, lanes: Option<u32>) -> Result<(), KernelError> {
    match lanes {
        Some(w) if codegen::legal_lanes(k, w) != w => Err(KernelError::Width {
            kernel: k.name.clone(),
            requested: w,
            min: codegen::legal_lanes(k, 1),
        }),
        _ => Ok(()),
    }
}

/// The footprint as text, one line per input.
pub fn footprint_text(k: &Kernel, setup: &Setup) -> String {
    let mut s = String::new();
    for (inp, dims) in k.inputs.iter().zip(reference::footprint(k, setup)) {
        let r: Vec<String> = dims
            .iter()
            .map(|(lo, n)| format!("{lo}..{}", lo + n))
            .collect();
        let _ = writeln!(s, "{}: [{}]", inp.name, r.join(", "));
    }
    s
}

/// The harness program's fixed C (`harness_main.c`, a template).
const MAIN_TEMPLATE: &str = include_str!("harness_main.c");

/// The C `main` of a kernel's program: the definitions `harness_main.c` expects (the
/// kernel's inputs, parameters and calls), then the template. With `halide`, Halide's
/// pipeline is called too, and the target's `glue` defines what it needs from the program.
fn main_c(k: &Kernel, target: &dyn Target, halide: bool) -> String {
    let np = k.params.len();
    let nd = k.out_vars.len();
    let mut inputs = Vec::new();
    let mut call_args = Vec::new();
    for (i, inp) in k.inputs.iter().enumerate() {
        let d = inp.dims;
        inputs.push(format!(
            "X({i}, {}, {d}, {}, {})",
            inp.elem.c_name(),
            halide_type_code(inp.elem),
            inp.elem.bits()
        ));
        call_args.push(format!("base{i}"));
        let mut stride = format!("n{i}[0]");
        for dd in 1..d {
            call_args.push(format!("(int32_t)({stride})"));
            stride = format!("{stride} * n{i}[{dd}]");
        }
    }
    for (i, p) in k.params.iter().enumerate() {
        call_args.push(format!("({})prm[{i}]", p.elem.c_name()));
    }
    for d in 0..nd {
        call_args.push(format!("(int32_t)ext[{d}]"));
    }
    // Every output in one buffer, one after the other, with the same strides.
    let mut strides = Vec::new();
    let mut count = "ext[0]".to_string();
    for d in 1..nd {
        strides.push(format!("(int32_t)({count})"));
        count = format!("{count} * ext[{d}]");
    }
    let mut out_args = Vec::new();
    for j in 0..k.outputs() {
        out_args.push(if j == 0 {
            "(o)".to_string()
        } else {
            format!("(o) + {j} * ({count})")
        });
        out_args.extend(strides.iter().cloned());
    }
    if k.outputs() > 1 {
        count = format!("{} * {count}", k.outputs());
    }
    out_args.extend(call_args);
    let mut halide_args: Vec<String> = (0..k.inputs.len()).map(|i| format!("&hb{i}")).collect();
    for (i, p) in k.params.iter().enumerate() {
        halide_args.push(format!("({})prm[{i}]", p.elem.c_name()));
    }
    halide_args.push("&hbo".into());
    let defines = [
        format!("#define HV_PAGE_SIZE {}", target.page_size()),
        format!("#define HV_HALIDE_SLACK {}", target.halide_read_slack()),
        format!("#define HV_HALIDE {}", halide as u8),
        format!("#define HV_NPARAMS {np}"),
        format!("#define HV_NDIMS {nd}"),
        format!("#define HV_INPUTS(X) {}", inputs.join(" ")),
        format!("#define HV_OUT_T {}", k.out_elem.c_name()),
        format!("#define HV_OUT_CODE {}", halide_type_code(k.out_elem)),
        format!("#define HV_OUT_BITS {}", k.out_elem.bits()),
        format!("#define HV_OUT_COUNT {count}"),
        format!("#define HV_CALL(f, o) f({})", out_args.join(", ")),
        format!(
            "#define HV_HALIDE_CALL halide_kernel({})",
            halide_args.join(", ")
        ),
    ];
    let glue = if halide { target.halide_glue() } else { "" };
    let mut s = defines.join("\n");
    s.push('\n');
    s.push_str(&crate::util::ctemplate::fill(
        "harness_main.c",
        MAIN_TEMPLATE,
        &[("HALIDE_GLUE", glue)],
    ));
    s
}

/// Halide's type code of an element type (`halide_type_int` 0, `halide_type_uint` 1).
fn halide_type_code(e: Elem) -> u8 {
    if e.is_signed() { 0 } else { 1 }
}

/// The optimisation level of the scalar baseline (LLVM alone, as in the papers).
pub const BASELINE_OPT_LEVEL: &str = "-O3";

/// Compiles a program with the target's clang at its kernel optimisation level.
pub fn compile_program(
    target: &dyn Target,
    c: &str,
    dir: &Path,
    name: &str,
    halide: Option<&HalideBuild>,
) -> Result<PathBuf, KernelError> {
    compile_program_with(target, c, dir, name, halide, None)
}

/// [`compile_program`], with the scalar baseline's own file `baseline` compiled at
/// [`BASELINE_OPT_LEVEL`] (`Purpose::Baseline`) and linked in.
pub fn compile_program_with(
    target: &dyn Target,
    c: &str,
    dir: &Path,
    name: &str,
    halide: Option<&HalideBuild>,
    baseline: Option<&str>,
) -> Result<PathBuf, KernelError> {
    let src = write_file(dir, &format!("{name}.c"), c)?;
    let exe = dir.join(name);
    let mut build = Compile::new(target, Purpose::Kernel).arg(&src);
    if let Some(text) = baseline {
        let bsrc = write_file(dir, "baseline.c", text)?;
        let bobj = dir.join("baseline.o");
        Compile::new(target, Purpose::Baseline)
            .args(target.c_second_unit_flags())
            .arg(&bsrc)
            .output(&bobj, Output::Object)?;
        build = build.arg(&bobj);
    }
    if let Some(h) = halide {
        build = build
            .arg("-I")
            .arg(&h.include)
            .arg("-I")
            .arg(h.header.parent().unwrap_or(dir))
            .arg(&h.object)
            .args(target.halide_link_args());
    }
    build.output(&exe, Output::Executable)?;
    Ok(exe)
}

/// One data set of a run.
struct Case {
    name: String,
    setup: Setup,
    inputs: Vec<Data>,
}

fn fill(
    elem: Elem,
    n: usize,
    pattern: usize,
    dims: &[(i64, i64)],
    rng: &mut SplitMix64,
) -> Vec<i128> {
    let min = elem.min_value();
    let max = elem.max_value().unwrap_or(1);
    let w = dims[0].1.max(1) as usize;
    (0..n)
        .map(|i| match pattern {
            0 => crate::interp::lane::to_i128(rng.lane(elem), elem),
            1 => 0,
            2 => max,
            3 => min,
            // Checkerboard of min and max.
            4 => {
                let (x, y) = (i % w, i / w);
                if (x + y).is_multiple_of(2) { min } else { max }
            }
            // Alternating bit patterns.
            5 => {
                let b = if (i / w + i % w).is_multiple_of(2) {
                    0x5555_5555_5555_5555u128
                } else {
                    0xAAAA_AAAA_AAAA_AAAAu128
                };
                crate::interp::lane::to_i128(b & elem.mask(), elem)
            }
            _ => crate::interp::lane::to_i128(rng.lane(elem), elem) / 2,
        })
        .collect()
}

const PATTERNS: &[&str] = &[
    "random",
    "zeros",
    "max",
    "min",
    "checkerboard",
    "alternating bits",
    "random halves",
];

fn make_cases(k: &Kernel, extents: &[i64], seed: u64) -> Vec<Case> {
    let mut rng = SplitMix64::new(seed);
    let mut cases = Vec::new();
    let narrow: Vec<i64> = {
        let mut e = extents.to_vec();
        e[0] = 3;
        e
    };
    for (pi, pat) in PATTERNS.iter().enumerate() {
        for (ei, ext) in [extents, &narrow[..]].iter().enumerate() {
            if ei == 1 && pi > 1 {
                continue;
            }
            let mut params = HashMap::new();
            for p in &k.params {
                let v = if pi == 0 && ei == 0 {
                    p.default
                } else {
                    let (lo, hi) = p.range;
                    // Extents stay small so that the reference keeps up.
                    let hi = if p.is_extent {
                        hi.min(lo.max(0) + 40)
                    } else {
                        hi
                    };
                    rng.range_i128(lo as i128, hi as i128) as i64
                };
                params.insert(p.name.clone(), v);
            }
            let setup = Setup {
                params,
                extents: ext.to_vec(),
            };
            let fp = reference::footprint(k, &setup);
            let inputs = k
                .inputs
                .iter()
                .zip(&fp)
                .map(|(inp, dims)| {
                    let mut d = Data::new(inp.elem, dims.clone());
                    let n = d.data.len();
                    d.data = fill(inp.elem, n, pi, dims, &mut rng);
                    d
                })
                .collect();
            cases.push(Case {
                name: format!("{pat}{}", if ei == 1 { ", narrow" } else { "" }),
                setup,
                inputs,
            });
        }
    }
    cases
}

fn le_bytes(elem: Elem, vals: &[i128], out: &mut Vec<u8>) {
    let w = (elem.bits() / 8) as usize;
    for &v in vals {
        out.extend_from_slice(&(v as u128).to_le_bytes()[..w]);
    }
}

fn push_case(k: &Kernel, case: &Case, fp: &[Vec<(i64, i64)>], bytes: &mut Vec<u8>) {
    for p in &k.params {
        bytes.extend_from_slice(&case.setup.params[&p.name].to_le_bytes());
    }
    for e in &case.setup.extents {
        bytes.extend_from_slice(&e.to_le_bytes());
    }
    for (i, dims) in fp.iter().enumerate() {
        for (lo, n) in dims {
            bytes.extend_from_slice(&lo.to_le_bytes());
            bytes.extend_from_slice(&n.to_le_bytes());
        }
        if let Some(d) = case.inputs.get(i) {
            le_bytes(d.elem, &d.data, bytes);
        }
    }
}

/// The result of `harrow run`.
pub struct RunReport {
    /// Data sets checked.
    pub cases: usize,
    /// Output elements compared (per function).
    pub elements: usize,
    /// Lanes per vector.
    pub lanes: u32,
    /// The first mismatch, described.
    pub mismatch: Option<String>,
}

/// Runs a kernel program for `target`, feeding it `stdin`. A crash is reported with what it
/// usually means for a kernel program.
pub(crate) fn run_with_stdin(
    target: &dyn Target,
    exe: &Path,
    args: &[&str],
    stdin: &[u8],
) -> Result<Vec<u8>, KernelError> {
    crate::isa::toolchain::run(target, exe, args, stdin).map_err(with_crash_hint)
}

/// A failed kernel program's error: a crash is told apart (its usual cause is a read
/// outside the footprint).
pub(crate) fn with_crash_hint(e: ToolError) -> KernelError {
    if e.is_crash() {
        KernelError::Crashed(e)
    } else {
        KernelError::Tool(e)
    }
}

/// Compiles `k`, runs it on random and edge-case data of the given output extents, and
/// compares the vector and the scalar outputs with the reference interpreter.
pub fn run(
    k: &Kernel,
    backend: &Backend,
    extents: &[i64],
    lanes: Option<u32>,
    seed: u64,
) -> Result<RunReport, KernelError> {
    check_width(k, lanes)?;
    if extents.len() != k.out_vars.len() {
        return Err(KernelError::Extents {
            expected: k.out_vars.len(),
            got: extents.len(),
        });
    }
    check_size(k, extents)?;
    if let Some(why) = backend.target.cannot_run_here() {
        return Err(KernelError::CannotRunHere(why));
    }
    let b = build(k, backend, lanes);
    run_c(k, backend, &b.c, b.lanes, extents, seed)
}

/// [`run`] with given C text defining `hv_kernel` and `hv_scalar` (tests inject faults
/// this way to see them caught).
pub fn run_c(
    k: &Kernel,
    backend: &Backend,
    c_text: &str,
    lanes: u32,
    extents: &[i64],
    seed: u64,
) -> Result<RunReport, KernelError> {
    check_size(k, extents)?;
    let target = &*backend.target;
    let mut c = c_text.to_string();
    c.push_str(&main_c(k, target, false));
    let dir = scratch("run");
    let exe = compile_program(target, &c, &dir, &k.name, None)?;
    let cases = make_cases(k, extents, seed);
    let mut input = Vec::new();
    input.extend_from_slice(&(cases.len() as i64).to_le_bytes());
    let mut expected = Vec::new();
    for case in &cases {
        let fp = reference::footprint(k, &case.setup);
        push_case(k, case, &fp, &mut input);
        let r =
            reference::run(k, &case.inputs, &case.setup).map_err(|e| KernelError::Reference {
                case: case.name.clone(),
                message: e.0,
            })?;
        expected.push(r);
    }
    let out = run_with_stdin(target, &exe, &[], &input)?;
    drop(dir);
    let w = (k.out_elem.bits() / 8) as usize;
    let mut pos = 0;
    let mut elements = 0;
    let names: Vec<&str> = std::iter::once(k.out_name.as_str())
        .chain(k.more_outputs.iter().map(|(n, _)| n.as_str()))
        .collect();
    for (case, exps) in cases.iter().zip(&expected) {
        // Each implementation writes every output, one after the other.
        for who in ["harrow", "scalar C"] {
            for (exp, name) in exps.iter().zip(&names) {
                let n = exp.data.len();
                let Some(bytes) = out.get(pos..pos + n * w) else {
                    return Err(KernelError::Output("the program's output is short".into()));
                };
                pos += n * w;
                for (i, want) in exp.data.iter().enumerate() {
                    let mut lb = [0u8; 16];
                    lb[..w].copy_from_slice(&bytes[i * w..(i + 1) * w]);
                    let got = crate::interp::lane::to_i128(u128::from_le_bytes(lb), k.out_elem);
                    if got != *want {
                        let mut at = Vec::new();
                        let mut rem = i as i64;
                        for e in &case.setup.extents {
                            at.push(rem % e);
                            rem /= e;
                        }
                        return Ok(RunReport {
                            cases: cases.len(),
                            elements,
                            lanes,
                            mismatch: Some(format!(
                                "{who} output differs on data `{}` at {name}{:?}: expected {want}, got {got} (params {:?})",
                                case.name, at, case.setup.params
                            )),
                        });
                    }
                }
                elements += n;
            }
        }
    }
    Ok(RunReport {
        cases: cases.len(),
        elements: elements / 2,
        lanes,
        mismatch: None,
    })
}

/// One kernel's benchmark figures.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Kernel name.
    pub name: String,
    /// Output extents.
    pub extents: Vec<i64>,
    /// Lanes per vector.
    pub lanes: u32,
    /// harrow's code per output element, in the unit of `metric` (time: the minimum over
    /// runs).
    pub harrow_per_elem: f64,
    /// The scalar C baseline per output element.
    pub scalar_per_elem: f64,
    /// Timed runs of each.
    pub reps: u32,
    /// harrow's compile time (lowering and emission), microseconds.
    pub compile_us: f64,
    /// Halide 21's code per output element, when it was built and agreed.
    pub halide_per_elem: Option<f64>,
    /// Why a built Halide pipeline has no time.
    pub halide_note: Option<String>,
    /// Why Halide's figure, though measured, is not representative of Halide (from its
    /// script).
    pub halide_caveat: Option<String>,
    /// What the three figures measure.
    pub metric: Metric,
    /// llvm-mca's view of the hottest loop of harrow's code and of the baseline, when the
    /// figures are counted rather than timed.
    pub loops: Option<(LoopStats, LoopStats)>,
}

/// The unit of a benchmark's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Nanoseconds per output element, timed natively.
    Time,
    /// Executed instructions (or packets) per output element, counted under qemu.
    Executed,
}

impl Metric {
    /// The unit, for reports.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Time => "ns per output element",
            Metric::Executed => "executed instructions per output element",
        }
    }
}

/// The hottest loop of a program: its instructions and llvm-mca's cycles per iteration.
#[derive(Clone, Debug, Default)]
pub struct LoopStats {
    /// Instructions in the loop body.
    pub instructions: usize,
    /// Times the loop body ran.
    pub iterations: u64,
    /// llvm-mca's block reciprocal throughput (cycles per iteration), if it ran.
    pub cycles: Option<f64>,
}

impl BenchResult {
    /// Speedup of harrow over the baseline.
    pub fn speedup(&self) -> f64 {
        self.scalar_per_elem / self.harrow_per_elem
    }
}

/// A benchmark program: harrow's function, the scalar baseline and (when built) Halide's,
/// compiled into one program by `main_c`, and its input at the benchmark extents with the
/// parameters' defaults.
pub(crate) struct BenchProgram {
    pub(crate) build: Build,
    pub(crate) dir: crate::isa::toolchain::Scratch,
    pub(crate) exe: PathBuf,
    pub(crate) halide: Option<HalideBuild>,
    pub(crate) input: Vec<u8>,
}

/// Builds the benchmark program of `k` in a fresh scratch directory named after `tag`.
pub(crate) fn bench_program(
    k: &Kernel,
    backend: &Backend,
    extents: &[i64],
    lanes: Option<u32>,
    halide: Option<&Halide>,
    tag: &str,
) -> Result<BenchProgram, KernelError> {
    check_size(k, extents)?;
    // The compile time reported is a compilation from nothing: the check before the
    // timing selected the same chunks, and a remembered selection is 30-50 times quicker
    // (depthwise_conv on HVX: 5 ms instead of 190 ms).
    backend.selections.clear();
    let b = build(k, backend, lanes);
    let target = &*backend.target;
    let dir = scratch(tag);
    let hb = match halide {
        Some(_) if k.outputs() > 1 => {
            return Err(KernelError::Halide(format!(
                "{} has {} outputs; the harness passes Halide's pipeline one output buffer",
                k.name,
                k.outputs()
            )));
        }
        Some(h) => h
            .build(&k.name, target.spec(), b.lanes, &dir)
            .map_err(KernelError::Halide)?,
        None => None,
    };
    // The baseline is clang at -O3 (LLVM alone). Where harrow's code is built at another
    // level (HVX: see docs/isa.md), the baseline is its own file at -O3, linked in.
    let split = target.opt_level(Purpose::Kernel) != target.opt_level(Purpose::Baseline);
    let mut c = if split {
        b.kernel_only.clone()
    } else {
        b.c.clone()
    };
    c.push_str(&main_c(k, target, hb.is_some()));
    let baseline = split.then(|| scalar_file(k, "hv_scalar"));
    let exe = compile_program_with(target, &c, &dir, &k.name, hb.as_ref(), baseline.as_deref())?;
    let setup = Setup::defaults(k, extents);
    let fp = reference::footprint(k, &setup);
    let case = Case {
        name: tag.into(),
        setup,
        inputs: Vec::new(),
    };
    let mut input = Vec::new();
    input.extend_from_slice(&1i64.to_le_bytes());
    push_case(k, &case, &fp, &mut input);
    Ok(BenchProgram {
        build: b,
        dir,
        exe,
        halide: hb,
        input,
    })
}

/// Times `k` at `extents` (after `run` has checked it against the reference).
pub fn bench(
    k: &Kernel,
    backend: &Backend,
    extents: &[i64],
    lanes: Option<u32>,
    halide: Option<&Halide>,
) -> Result<BenchResult, KernelError> {
    let target = &*backend.target;
    if let Some(why) = target.cannot_run_here() {
        return Err(KernelError::CannotRunHere(why));
    }
    let BenchProgram {
        build: b,
        dir,
        exe,
        halide: hb,
        input,
    } = bench_program(k, backend, extents, lanes, halide, "bench")?;
    let out = run_with_stdin(target, &exe, &["bench"], &input)?;
    drop(dir);
    let text = String::from_utf8_lossy(&out);
    let f: Vec<&str> = text.split_whitespace().collect();
    if f.first() == Some(&"mismatch") {
        return Err(KernelError::Differs {
            kernel: k.name.clone(),
            extents: extents.to_vec(),
        });
    }
    let num = |i: usize| -> Result<f64, KernelError> {
        f.get(i)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| KernelError::Output(format!("unexpected benchmark output: {text}")))
    };
    // Times come whole, with the element count: dividing in C needs a double division,
    // which freestanding Hexagon programs lack.
    let elems = num(4)?.max(1.0);
    Ok(BenchResult {
        name: k.name.clone(),
        extents: extents.to_vec(),
        lanes: b.lanes,
        harrow_per_elem: num(0)? / elems,
        scalar_per_elem: num(1)? / elems,
        reps: num(2)? as u32,
        halide_per_elem: num(3).ok().filter(|&h| h > 0.0).map(|h| h / elems),
        halide_caveat: hb.as_ref().and_then(|h| h.caveat.clone()),
        halide_note: match (&hb, num(3).ok()) {
            (None, _) => None,
            (Some(_), Some(h)) if h > 0.0 => None,
            _ => Some("Halide's output differs from harrow's or its call failed".into()),
        },
        compile_us: b.compile_time.as_secs_f64() * 1e6,
        metric: Metric::Time,
        loops: None,
    })
}
