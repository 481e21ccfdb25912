//! The float vectorizer (Diospyros in harrow): small fixed-size `float` kernels written as
//! plain C, evaluated symbolically into one expression per output element, then vectorized
//! by equality saturation over lane-wise vector operations, blends and shuffles, extracted
//! with the target's cost model and written as C with the target's intrinsics.
//!
//! The pipeline, one file per phase: `cfront.rs` (the C subset, parsed by `lang-c`) →
//! `symbolic.rs` (to the scalar `dag.rs`, whose interpreter is the reference) →
//! `vectorize.rs` (the e-graph of `lang.rs`, the rewrites) → `cost.rs` (the target's
//! costs, leaf registers as loads and shuffles) → `emit.rs` (C) → `harness.rs` (the program
//! that checks the result against the C compiled by clang and against the interpreter,
//! and times it). `docs/float.md` is the user's reference.

pub mod cfront;
pub mod cost;
pub mod dag;
pub mod emit;
pub mod extract;
pub mod harness;
pub mod lang;
pub mod symbolic;
pub mod symcheck;
pub mod vectorize;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::diag::{Diag, Source};
use crate::isa::float::FloatIsa;
use crate::isa::target::Target;
use cost::TargetCost;
use emit::Chunk;
use lang::{Leaf, VecLang};
use symbolic::Evaluated;
use vectorize::{Limits, SearchStats, VGraph};

/// A vector program is kept only if the model prices it at most `MARGIN.0 / MARGIN.1` of
/// the scalar program: closer than that, the model's error (it does not see what clang
/// makes of scalar code) could make it slower than the C, as it did for the quaternion
/// product under -ffast-math.
pub const MARGIN: (u64, u64) = (9, 10);

/// How to compile a float kernel.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The function to compile when the file defines several.
    pub function: Option<String>,
    /// Allow reassociation and fused multiply-adds (results within the documented bound
    /// instead of exact).
    pub fast_math: bool,
    /// Limits of the search.
    pub limits: Limits,
}

/// A compiled float kernel.
#[derive(Debug)]
pub struct Compiled {
    /// The kernel after symbolic evaluation (its parameters and reference DAG).
    pub kernel: Evaluated,
    /// The vector C: a function with the kernel's name and parameters.
    pub c: String,
    /// The target's lanes of float.
    pub lanes: usize,
    /// What the search did.
    pub stats: SearchStats,
    /// The model's cost of the extracted program.
    pub cost: u64,
    /// The model's cost of the same registers built from scalar code.
    pub scalar_cost: u64,
    /// Time from text to C.
    pub compile_time: Duration,
    /// Whether `--fast-math` was on.
    pub fast_math: bool,
    /// Whether the model found no vector program cheaper than the scalar one, so the
    /// output is the C as written (never slower than it).
    pub as_written: bool,
}

/// A failure to compile a float kernel.
#[derive(Debug, thiserror::Error)]
pub enum FloatError {
    /// An error in the C, at its place.
    #[error("{}", .0.render())]
    Diag(Box<Diag>),
    /// The vectorization failed its symbolic check (a bug in harrow, reported rather than
    /// written as wrong code).
    #[error("internal error: the vector program failed its symbolic check: {0}")]
    Internal(String),
    /// The target has no float vector table.
    #[error("the float vectorizer has no instructions for {0} (it supports {1})")]
    Target(String, String),
}

impl From<Diag> for FloatError {
    fn from(d: Diag) -> Self {
        FloatError::Diag(Box::new(d))
    }
}

/// The targets of the registry with a float table, by name.
pub fn float_targets() -> Vec<&'static str> {
    crate::targets::REGISTRY
        .iter()
        .filter(|e| (e.make)().float_isa().is_some())
        .map(|e| e.spec.name)
        .collect()
}

/// The float table of `target`, or the error naming the targets that have one.
pub fn float_isa(target: &dyn Target) -> Result<&'static FloatIsa, FloatError> {
    match target.float_isa() {
        Some(table) => Ok(table?),
        None => Err(FloatError::Target(
            target.name().into(),
            float_targets().join(", "),
        )),
    }
}

/// Compiles the C kernel in `source` for `target`. With `--fast-math` the exact
/// vectorization is found too and kept when the model prices it no higher: reassociation
/// only ever adds choices.
pub fn compile(
    source: &Arc<Source>,
    target: &dyn Target,
    opts: &Options,
) -> Result<Compiled, FloatError> {
    let start = Instant::now();
    let limits = opts.limits;
    let exact_opts = Options {
        fast_math: false,
        limits,
        ..opts.clone()
    };
    // The two searches share nothing: on a machine with a second core they run side by
    // side, so --fast-math costs the slower of them rather than their sum.
    let mut candidates = if opts.fast_math {
        let fast_opts = Options {
            limits,
            ..opts.clone()
        };
        let (exact, fast) = rayon::join(
            || compile_mode(source, target, &exact_opts),
            || compile_mode(source, target, &fast_opts),
        );
        vec![exact?, fast?]
    } else {
        vec![compile_mode(source, target, &exact_opts)?]
    };
    // A vector program counts only against the scalar program of its own mode, and must
    // beat it by the model's margin of error: the cheapest that does is kept.
    let pick = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.cost * MARGIN.1 <= c.scalar_cost * MARGIN.0)
        .min_by_key(|(_, c)| c.cost)
        .map(|(i, _)| i);
    let mut best = match pick {
        Some(i) => candidates.swap_remove(i),
        None => {
            // Nothing beats the C: hand it back, so that compiling harrow's output is
            // never slower than compiling the input.
            let mut c = candidates.swap_remove(0);
            c.c = source.text.clone();
            c.as_written = true;
            c
        }
    };
    best.fast_math = opts.fast_math;
    best.compile_time = start.elapsed();
    Ok(best)
}

fn compile_mode(
    source: &Arc<Source>,
    target: &dyn Target,
    opts: &Options,
) -> Result<Compiled, FloatError> {
    let isa = float_isa(target)?;
    let start = Instant::now();
    let file = cfront::parse(source)?;
    let kernel = symbolic::evaluate(&file, opts.function.as_deref())?;
    let t_eval = start.elapsed();
    // The parameters as C with their sizes evaluated: the output stands alone, without
    // the file's macros.
    let decls: Vec<String> = kernel
        .params
        .iter()
        .map(|p| {
            let dims: String = p.dims.iter().map(|d| format!("[{d}]")).collect();
            let cst = if p.is_const { "const " } else { "" };
            format!("{cst}float {}{dims}", p.name)
        })
        .collect();
    let sizes: Vec<usize> = kernel.params.iter().map(|p| p.len()).collect();
    let mut eg = VGraph::default();
    let (chunks, lanes) = output_registers(&mut eg, &kernel, isa.lanes);
    let mut scalars_timed_out = false;
    if opts.fast_math {
        (eg, scalars_timed_out) = vectorize::saturate_scalars(eg, &opts.limits);
    }
    let scalar_cost = {
        let roots: Vec<egg::Id> = chunks.iter().map(|c| eg.find(c.root)).collect();
        let mut model = TargetCost::new(&eg, isa, &sizes);
        extract::extract(&eg, &mut model, &roots, opts.limits.switches_per_class).1
    };
    let t_sat0 = start.elapsed();
    let mut stats = vectorize::saturate_vectors(&mut eg, &opts.limits);
    stats.limited |= scalars_timed_out;
    let t_sat = start.elapsed();
    let _ = lanes;
    let chunks: Vec<Chunk> = chunks
        .into_iter()
        .map(|c| Chunk {
            root: eg.find(c.root),
            ..c
        })
        .collect();
    let roots: Vec<egg::Id> = chunks.iter().map(|c| c.root).collect();
    let mut model = TargetCost::new(&eg, isa, &sizes);
    let (picks, cost) = extract::extract(&eg, &mut model, &roots, opts.limits.switches_per_class);
    let t_ext = start.elapsed();
    if !opts.fast_math {
        // Exact mode: the extracted program is checked symbolically before it is written.
        stats.symbolic_lanes = symcheck::check(&kernel, isa, &picks, &chunks)
            .map_err(|m| FloatError::Internal(format!("{}: {m}", kernel.name)))?;
    }
    let c = emit::emit(isa, &kernel.name, &kernel.params, &decls, &picks, &chunks);
    stats.phase_ms = [
        t_eval,
        t_sat0 - t_eval,
        t_sat - t_sat0,
        t_ext - t_sat,
        start.elapsed() - t_ext,
    ]
    .map(|d| d.as_secs_f64() * 1e3);
    Ok(Compiled {
        kernel,
        c,
        lanes: isa.lanes,
        stats,
        cost,
        scalar_cost,
        compile_time: start.elapsed(),
        fast_math: opts.fast_math,
        as_written: false,
    })
}

/// The output registers: each written parameter in chunks of `w` elements (the last one
/// overlapping the one before it when the size is not a multiple of `w`; one short chunk
/// when the parameter is shorter than a register), each added to `eg` as a `vec` of its
/// lanes' final values. Lanes the kernel does not write keep their entry value.
fn output_registers(eg: &mut VGraph, k: &Evaluated, w: usize) -> (Vec<Chunk>, usize) {
    let roots: Vec<u32> = k
        .finals
        .iter()
        .zip(&k.written)
        .flat_map(|(f, wr)| f.iter().zip(wr).filter(|(_, w)| **w).map(|(n, _)| *n))
        .collect();
    let ids = vectorize::add_dag(eg, &k.dag, &roots);
    let any = eg.add(VecLang::Leaf(Leaf::Any));
    let mut chunks = Vec::new();
    for (p, written) in k.written.iter().enumerate() {
        if !written.iter().any(|&w| w) {
            continue;
        }
        let n = written.len();
        let mut offsets: Vec<usize> = (0..n / w).map(|i| i * w).collect();
        if n % w != 0 {
            offsets.push(n.saturating_sub(w));
        }
        for off in offsets {
            let len = w.min(n);
            if !written[off..off + len].iter().any(|&x| x) {
                continue;
            }
            let lanes: Vec<egg::Id> = (0..w)
                .map(|i| {
                    let e = off + i;
                    if i >= len {
                        any
                    } else if written[e] {
                        ids[k.finals[p][e] as usize].expect("written elements are added")
                    } else {
                        eg.add(VecLang::Leaf(Leaf::Input(p as u16, e as u32)))
                    }
                })
                .collect();
            let root = eg.add(VecLang::Vec(lanes.into_boxed_slice()));
            chunks.push(Chunk {
                param: p,
                offset: off,
                lanes: len,
                root,
            });
        }
    }
    (chunks, roots.len())
}
