//! Running generated code against the reference interpreter, many cases per program.
//!
//! Every case gets several trials of input data (random lanes with edge cases mixed in, then
//! all zeros, all ones, minimum, maximum and alternating bit patterns). The data goes to the
//! program on standard input; the program writes each output array to standard output; each
//! is compared with [`crate::interp::eval`] of the source expression on the same data.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use super::Lowered;
use crate::bounds::{Bounds, Intervals};
use crate::interp::{Buffer, Env, Value, lane};
use crate::ir::{Expr, Op, Sym};
use crate::isa::target::{Purpose, Target, lanes_to_bytes};
use crate::isa::toolchain::{self, Compile, Output, write_file};
use crate::types::{Elem, Type};
use crate::util::rng::{SplitMix64, edge_cases};

/// The fixed C of a batch program (a template).
const CASES_MAIN: &str = include_str!("cases_main.c");

/// The outcome of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// `None` when every trial matched; otherwise the first mismatch, described.
    pub mismatch: Option<String>,
}

/// Range of values scalar `i32` parameters take (they often appear in indices).
const INDEX_SCALARS: (i128, i128) = (0, 16);

/// Largest buffer (elements) a case may need.
const MAX_BUFFER: i128 = 1 << 18;

struct Layout {
    /// Buffer name, element type, first index, element count.
    buffers: Vec<(Sym, Elem, i64, usize)>,
}

fn index_ranges(exprs: &[&Expr], facts: &Intervals) -> Result<BTreeMap<Sym, (i128, i128)>, String> {
    let mut out: BTreeMap<Sym, (i128, i128)> = BTreeMap::new();
    for e in exprs {
        let mut iv = facts.clone();
        // Index arithmetic bound by `let` (Rake specs) is bounded once it is inlined.
        let e = crate::ir::visit::inline_lets(e);
        for n in crate::ir::visit::post_order(&e) {
            if let Op::Load(buf, _) = n.op() {
                let (lo, hi) = iv.range(n.arg(0));
                let r = out.entry(buf.clone()).or_insert((lo, hi));
                r.0 = r.0.min(lo);
                r.1 = r.1.max(hi);
            }
        }
    }
    for (b, (lo, hi)) in &out {
        if hi - lo >= MAX_BUFFER {
            return Err(format!(
                "the indices of buffer `{b}` span {lo}..={hi}, too many to test"
            ));
        }
    }
    Ok(out)
}

fn layout(l: &Lowered) -> Result<Layout, String> {
    let mut facts = Intervals::new();
    for (name, t) in &l.params.scalars {
        if t.elem == Elem::I32 {
            facts.var_facts.insert(name.clone(), INDEX_SCALARS);
        }
    }
    let last = (l.chunks() as i128 - 1) * l.prepared.chunk_lanes as i128;
    facts
        .var_facts
        .insert(super::prepare::CHUNK_VAR.into(), (0, last));
    let ranges = index_ranges(&[&l.selected, &l.source], &facts)?;
    let elems = crate::ir::visit::buffers(&l.source)
        .into_iter()
        .chain(l.params.buffers.clone())
        .collect::<BTreeMap<_, _>>();
    Ok(Layout {
        buffers: ranges
            .into_iter()
            .map(|(b, (lo, hi))| {
                let el = elems[&b];
                (b, el, lo as i64, (hi - lo + 1) as usize)
            })
            .collect(),
    })
}

/// Lanes for trial `t`: 0 random, then the edge patterns, then random again.
fn trial_lanes(elem: Elem, n: usize, t: usize, rng: &mut SplitMix64) -> Vec<u128> {
    let edges = edge_cases(elem);
    match t {
        0 | 1 => (0..n).map(|_| rng.lane(elem)).collect(),
        _ => {
            let e = edges[(t - 2) % edges.len()];
            // Alternate the edge value with random lanes every other trial so that
            // operands see different combinations.
            (0..n)
                .map(|i| {
                    if t.is_multiple_of(2) || i.is_multiple_of(2) {
                        e
                    } else {
                        rng.lane(elem)
                    }
                })
                .collect()
        }
    }
}

fn scalar_value(t: Type, rng: &mut SplitMix64) -> u128 {
    if t.elem == Elem::I32 {
        lane::from_i128(rng.range_i128(INDEX_SCALARS.0, INDEX_SCALARS.1), Elem::I32)
    } else {
        rng.lane(t.elem)
    }
}

/// Compiles `cases` into one program for `target`, runs it with `trials` data sets each, and
/// compares every output with the interpreter.
pub fn run_cases(
    cases: &[&Lowered],
    target: &dyn Target,
    trials: usize,
    seed: u64,
    workdir: &Path,
) -> Result<Vec<CaseResult>, String> {
    if let Some(why) = target.cannot_run_here() {
        return Err(why);
    }
    let mut rng = SplitMix64::new(seed);
    let mut c = String::new();
    c.push_str(&target.c_header());
    c.push_str(super::emit::PRELUDE);
    // Each case's runner (one small function per case, see `cases_main.c`) and its call.
    let mut runners = String::new();
    let mut main = String::new();
    let mut input: Vec<u8> = Vec::new();
    // Per case and trial: the environment for the interpreter.
    let mut envs: Vec<Vec<Env>> = Vec::new();
    for (k, l) in cases.iter().enumerate() {
        let lay = layout(l)?;
        c.push_str(&super::c_function(l, target, &format!("hv_case{k}")));
        let out_t = l.out_elem();
        let out_bytes = (l.prepared.lanes as usize + l.prepared.chunk_lanes as usize)
            * (out_t.bits() as usize / 8).max(1);
        if out_bytes > 1 << 16 {
            return Err(format!("case {k}: output too large to test"));
        }
        let mut case_envs = Vec::new();
        let _ = writeln!(
            runners,
            "static __attribute__((noinline)) void hv_run{k}(const unsigned char *in) {{"
        );
        let _ = writeln!(main, "  hv_run{k}(in);");
        for t in 0..trials {
            let mut env = Env::new();
            let mut args = Vec::new();
            for (b, el, lo, n) in &lay.buffers {
                while !input.len().is_multiple_of(64) {
                    input.push(0);
                }
                let off = input.len();
                let lanes = trial_lanes(*el, *n, t, &mut rng);
                if *el == Elem::Bool {
                    // Boolean buffers hold one byte (0 or 1) per lane.
                    input.extend(lanes.iter().map(|&l| l as u8));
                } else {
                    input.extend(lanes_to_bytes(Type::vec(*el, *n as u32), &lanes));
                }
                env.set_buffer(
                    b.clone(),
                    Buffer::Data {
                        elem: *el,
                        min: *lo,
                        data: lanes,
                    },
                );
                args.push(format!("(const {} *)(in + {off}) - ({lo})", el.c_name()));
            }
            for (name, ty) in &l.params.scalars {
                let v = scalar_value(*ty, &mut rng);
                env.set(
                    name.clone(),
                    Value {
                        ty: *ty,
                        lanes: vec![v],
                    },
                );
                args.push(format!("({})0x{:x}ULL", ty.elem.c_name(), v as u64));
            }
            let _ = writeln!(
                runners,
                "  hv_case{k}(({} *)out{}{}); fwrite(out, 1, {}, stdout);",
                out_t.c_name(),
                if args.is_empty() { "" } else { ", " },
                args.join(", "),
                l.prepared.lanes as usize * (out_t.bits() as usize / 8)
            );
            case_envs.push(env);
        }
        runners.push_str("}\n");
        envs.push(case_envs);
    }
    c.push_str(&crate::util::ctemplate::fill(
        "cases_main.c",
        CASES_MAIN,
        &[("RUNNERS", &runners), ("CALLS", &main)],
    ));

    let cfile = write_file(workdir, "cases.c", &c)?;
    let exe = workdir.join("cases");
    Compile::new(target, Purpose::Cases)
        .arg(&cfile)
        .output(&exe, Output::Executable)?;
    let bytes = toolchain::run(target, &exe, &[], &input)?;
    let mut pos = 0;
    let mut results = Vec::new();
    for (k, l) in cases.iter().enumerate() {
        let t = Type::vec(l.out_elem(), l.prepared.lanes);
        let size = l.prepared.lanes as usize * (t.elem.bits() as usize / 8);
        let mut mismatch = None;
        for (ti, env) in envs[k].iter().enumerate() {
            let Some(chunk) = bytes.get(pos..pos + size) else {
                return Err(format!("the program's output ended early (case {k})"));
            };
            pos += size;
            if mismatch.is_some() {
                continue;
            }
            let got = crate::isa::target::bytes_to_lanes(t, chunk);
            let want = match crate::interp::eval(&l.source, env) {
                Ok(v) => v,
                Err(e) => {
                    mismatch = Some(format!("the interpreter failed: {e}"));
                    continue;
                }
            };
            let want_bits: Vec<u128> = want.lanes.iter().map(|&b| b & t.elem.mask()).collect();
            if got != want_bits {
                let i = got
                    .iter()
                    .zip(&want_bits)
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                mismatch = Some(format!(
                    "trial {ti}, lane {i}: generated code gives {}, the interpreter {} ({})",
                    lane::to_i128(got[i], t.elem),
                    lane::to_i128(want_bits[i], t.elem),
                    describe_inputs(env)
                ));
            }
        }
        results.push(CaseResult { mismatch });
    }
    Ok(results)
}

fn describe_inputs(env: &Env) -> String {
    let mut parts: Vec<String> = env.vars.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    parts.sort();
    let mut bufs: Vec<&Sym> = env.buffers.keys().collect();
    bufs.sort();
    for b in bufs {
        parts.push(format!("buffer {b}"));
    }
    parts.join(", ")
}
