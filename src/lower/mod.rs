//! Lowering: lifted IR to target instructions, and C emission.
//!
//! `lower` runs the pipeline `lift -> prepare -> select`:
//! - [`prepare`] turns inputs into loads and cuts element-wise expressions into
//!   register-sized chunks (the legalization step);
//! - [`select`] chooses instructions by cost with the target's lowering rules: the rules
//!   derived from instruction semantics (`isa::desc`) and the hand-written
//!   `rules/<target>.rules`; anything no rule covers stays a generic node;
//! - [`emit`] writes C: intrinsics for instructions, clang vector code or exact lane loops
//!   for generic nodes.

pub mod cform;
pub mod conformance;
mod dag_cost;
pub mod emit;
pub mod harness;
pub mod lanes;
pub mod linear;
pub mod macc;
pub mod narrow_late;
pub mod natural;
pub mod neighbours;
pub mod origin;
mod pairs;
pub mod parity;
pub mod parts;
pub mod prepare;
pub mod select;
pub mod strategy;

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use crate::bounds::Intervals;
use crate::diag::{Diag, Source};
use crate::ir::{Expr, Op};
use crate::isa::target::Target;
use crate::rules::{Pat, PatKind, RuleKind, RuleSet};
use crate::types::Elem;

pub use emit::Params;
pub use prepare::Prepared;

/// A code-generation target with its lowering rules.
pub struct Backend {
    /// The C-level facts of the target.
    pub target: Box<dyn Target>,
    /// Derived and hand-written lowering rules for the target's instructions.
    pub rules: RuleSet,
    /// The target's instructions by intrinsic, for selections built outside the rules.
    pub instrs: Arc<crate::isa::InstrTable>,
    /// The target's selection strategies, tried in order after the rules.
    pub strategies: Vec<Arc<dyn strategy::Strategy>>,
    /// Chunks already selected in this process, with what selection chose: a kernel's
    /// body variants often lift to the same chunk, and a line-buffered kernel compiles
    /// its body directly too (a 3x3 depthwise convolution selected one 77-node chunk
    /// twice, each time 80 ms on AVX2).
    pub selections: SelectionMemo,
}

/// Selections of chunks by the chunk and its position's bounds (what a selection reads
/// besides the backend's rules); the chunk is kept, so its id is not reused.
#[derive(Default)]
pub struct SelectionMemo(std::sync::Mutex<SelectionTable>);

/// Selections by chunk id and position bounds. Each entry is a cell that the first thread
/// to ask fills while later ones wait for it: body variants selected side by side often
/// lift to the same chunk, and selecting it twice at once doubled depthwise_conv's compile
/// time on two cores.
type SelectionTable = HashMap<(usize, Option<(i128, i128)>), Arc<SelectionCell>>;

/// One remembered selection: the chunk, what selection chose, and where it came from.
type SelectionCell = std::sync::OnceLock<(Expr, select::Selected, Origins)>;

/// Where each instruction of a selection came from, in post-order (`--explain`).
pub type Origins = Arc<[(Expr, select::Origin)]>;

impl SelectionMemo {
    /// What selection chooses for `chunk` with the position bounded by `at`, selected by
    /// `select` the first time.
    fn get_or_select(
        &self,
        chunk: &Expr,
        at: Option<(i128, i128)>,
        select: impl FnOnce() -> (select::Selected, Origins),
    ) -> (select::Selected, Origins) {
        let cell = self.lock().entry((chunk.id(), at)).or_default().clone();
        // Selected outside the table's lock: other chunks are selected meanwhile. Selection
        // starts no parallel work, so a thread waiting here holds nothing its filler needs.
        let (_, s, o) = cell.get_or_init(|| {
            let (s, o) = select();
            (chunk.clone(), s, o)
        });
        (s.clone(), o.clone())
    }

    /// Forgets every selection (to time a compilation from nothing).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// How many selections are remembered.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no selection is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table (a panic elsewhere cannot leave it half-written: inserts are whole).
    fn lock(&self) -> std::sync::MutexGuard<'_, SelectionTable> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn uses_only(p: &Pat, ok: &dyn Fn(&crate::isa::Instr) -> bool) -> bool {
    match &p.kind {
        PatKind::Op(Op::Instr(i), args) => ok(i) && args.iter().all(|a| uses_only(a, ok)),
        PatKind::Op(_, args) => args.iter().all(|a| uses_only(a, ok)),
        _ => true,
    }
}

impl Backend {
    /// A backend from a target family's descriptions (restricted to `features`), its
    /// hand-written rules and any extra rule files.
    pub fn build(
        all: &crate::isa::Isa,
        features: &std::collections::BTreeSet<&str>,
        rules_src: &Arc<Source>,
        extra: &[Arc<Source>],
        target: Box<dyn Target>,
        strategies: Vec<Arc<dyn strategy::Strategy>>,
    ) -> Result<Backend, Diag> {
        let isa = all.with_features(features);
        let table = Arc::new(all.table());
        let mut rules = RuleSet::from_rules(isa.derived.clone(), RuleKind::Lower);
        let mut hand = RuleSet::load_with(rules_src, RuleKind::Lower, Some(&table))?;
        for src in extra {
            hand.extend(RuleSet::load_with(src, RuleKind::Lower, Some(&table))?)?;
        }
        // Hand-written rules are written once for every variant of a family; keep the
        // instantiations whose instructions this variant has.
        let ok = |i: &crate::isa::Instr| i.features.iter().all(|f| features.contains(f.as_str()));
        for mut r in hand.rules {
            r.insts.retain(|inst| uses_only(&inst.rhs, &ok));
            if !r.insts.is_empty() {
                rules.rules.push(r);
            }
        }
        let rules = RuleSet::from_rules(rules.rules, RuleKind::Lower);
        let instrs = Arc::new(isa.table());
        Ok(Backend {
            target,
            rules,
            instrs,
            strategies,
            selections: SelectionMemo::default(),
        })
    }
}

/// The result of lowering one expression.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The expression as given.
    pub source: Expr,
    /// After lifting to FPIR.
    pub lifted: Expr,
    /// Prepared for selection (chunked).
    pub prepared: Prepared,
    /// The chunk with instructions selected.
    pub selected: Expr,
    /// Estimated cost of one chunk.
    pub chunk_cost: f64,
    /// Buffers and scalar parameters.
    pub params: Params,
    /// Which lifting engine's form this is (`--explain` says).
    pub lifted_by: LiftedBy,
    /// Where each instruction of `selected` came from (`--explain` says).
    pub origins: Origins,
}

/// Which lifting engine's form a [`Lowered`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiftedBy {
    /// The greedy engine (`--engine greedy`, the default).
    Greedy,
    /// The greedy engine's form, which the target's estimate preferred to equality
    /// saturation's (or saturation found nothing else).
    GreedyOverSaturated,
    /// Equality saturation's form, cheaper on the target than greedy's, and which
    /// extraction gave it.
    Saturated(crate::rewrite::eqsat::Extraction),
}

impl Lowered {
    /// Number of chunks the function computes.
    pub fn chunks(&self) -> u32 {
        self.prepared.lanes.div_ceil(self.prepared.chunk_lanes)
    }

    /// Estimated cost of the whole function.
    pub fn cost(&self) -> f64 {
        self.chunk_cost * self.chunks() as f64
    }

    /// The element type of the output array.
    pub fn out_elem(&self) -> Elem {
        self.prepared.chunk.ty().elem
    }
}

/// Lowers `e` for `backend`: lift, prepare, select. Where sums share constant
/// multipliers, the factored form is lowered too and the cheaper kept (a small search
/// over two algebraic variants, until the e-graph engine explores them all).
pub fn lower(e: &Expr, backend: &Backend) -> Lowered {
    let by_narrowest = backend.target.chunk_by_narrowest();
    let lifted = crate::lift::lift(e);
    // The forms below (as lifted, saturated, factored) share most sub-expressions: those
    // lowered at the same chunking share one selection's memo.
    let mut shared = None;
    let mut plain = lower_shared(e, lifted.clone(), backend, by_narrowest, &mut shared);
    let mut chunk_by_narrowest = by_narrowest;
    // Targets that split wide values may also take chunks a register of the narrowest
    // type: a strided byte load is then one wide load deinterleaved (which clang turns into
    // `ld3` on Arm) rather than a short load and a shuffle per register of the output.
    // Chunking is cheap next to selection, so it decides first whether the chunks differ;
    // a chunk wider than the vector would read past what the caller provides.
    let register_bits = backend.target.register_bits();
    let splits = backend.strategies.iter().any(|s| s.splits_wide_values());
    let worth_trying = splits && !by_narrowest && {
        let probe = prepare::prepare_with(&lifted, register_bits, true, false);
        probe.chunk_lanes != plain.prepared.chunk_lanes && probe.chunk_lanes <= probe.lanes
    };
    if worth_trying {
        let wide = lower_shared(e, lifted.clone(), backend, true, &mut None);
        if wide.cost() < plain.cost() {
            plain = wide;
            chunk_by_narrowest = true;
        }
    }
    // A strategy that reads sums of products as linear forms (HVX's reduction multiplies)
    // needs the products factoring or regrouping would hide, and the per-node cost estimate
    // does not see that, so its targets keep the sum as written.
    let reads_sums = backend.strategies.iter().any(|s| s.reads_sums_as_written());
    // Equality saturation (`--engine eqsat`) may lift to another form, cheaper under the
    // lifting cost; it is lowered at the same chunking and kept only where the target's
    // estimate is lower too.
    if crate::lift::engine() == crate::lift::EngineKind::Eqsat && !reads_sums {
        plain.lifted_by = LiftedBy::GreedyOverSaturated;
        let (saturated, extraction) = crate::lift::lift_eqsat(e);
        if saturated != lifted {
            let mut alt = lower_shared(e, saturated, backend, chunk_by_narrowest, &mut shared);
            if alt.cost() < plain.cost() {
                alt.lifted_by = LiftedBy::Saturated(extraction);
                plain = alt;
            }
        }
    }
    // Narrow arithmetic over several narrowings of one wider type may be cheaper done wide
    // and narrowed once (`narrow_late`); whether it is depends on what else reads the
    // narrow values, which only the whole selection's estimate sees.
    let narrowed = if backend.target.narrows_late() {
        narrow_late::narrowed_once_at_the_end(
            &plain.lifted,
            backend.target.narrows_late_through_extensions(),
        )
    } else if backend.target.narrows_selects_late() {
        narrow_late::selects_narrowed_once_at_the_end(&plain.lifted)
    } else {
        plain.lifted.clone()
    };
    if narrowed != plain.lifted {
        let mut alt = lower_shared(e, narrowed, backend, chunk_by_narrowest, &mut shared);
        if alt.cost() < plain.cost() {
            alt.lifted_by = plain.lifted_by;
            plain = alt;
        }
    }
    if reads_sums {
        return plain;
    }
    let factored = crate::lift::factor_common_multipliers(e);
    if factored == *e {
        return plain;
    }
    let mut alt = lower_shared(
        e,
        crate::lift::lift(&factored),
        backend,
        chunk_by_narrowest,
        &mut shared,
    );
    if alt.cost() < plain.cost() {
        if plain.lifted_by != LiftedBy::Greedy {
            alt.lifted_by = LiftedBy::GreedyOverSaturated;
        }
        alt
    } else {
        plain
    }
}

/// Lowers `e` as it is, without lifting it first (to exercise one lowering rule's
/// left-hand side exactly as written).
pub fn lower_unlifted(e: &Expr, backend: &Backend) -> Lowered {
    let by_narrowest = backend.target.chunk_by_narrowest();
    lower_shared(e, e.clone(), backend, by_narrowest, &mut None)
}

/// A chunk's variables (with their types) and buffers (with their element types).
type ChunkInputs = (
    std::collections::BTreeMap<crate::ir::Sym, crate::types::Type>,
    std::collections::BTreeMap<crate::ir::Sym, crate::types::Elem>,
);

/// A selection kept for the next form of the same expression: what it was made for (the
/// chunk's index range, its variables and buffers, which fix the bounds and the
/// validation inputs) and the selector with its memo. The next form reuses the memo as
/// one selection does (a sum selected before it was seen inside a larger one keeps what
/// it selected then); that this chooses what separate selections do is measured on the
/// suite and the fuzz kernels, not guaranteed.
struct SharedSelection<'b> {
    at: Option<(i128, i128)>,
    inputs: ChunkInputs,
    selector: select::Selector<'b>,
}

/// Lowers `e` from its form `lifted`, chunked by its narrowest type when `by_narrowest`,
/// selecting with the selector in `shared` when it was made for the same bounds and inputs
/// (and leaving its own there).
fn lower_shared<'b>(
    e: &Expr,
    lifted: Expr,
    backend: &'b Backend,
    by_narrowest: bool,
    shared: &mut Option<SharedSelection<'b>>,
) -> Lowered {
    let prepared = prepare::prepare_with(
        &lifted,
        backend.target.register_bits(),
        by_narrowest,
        backend.target.aligned_loads(),
    );
    let at = prepared.chunked.then(|| {
        let last = (prepared.lanes.div_ceil(prepared.chunk_lanes) - 1) * prepared.chunk_lanes;
        (0, last as i128)
    });
    let bounds = || {
        let mut bounds = Intervals::new();
        if let Some(range) = at {
            bounds.var_facts.insert(prepare::CHUNK_VAR.into(), range);
        }
        bounds
    };
    let (s, origins) = backend.selections.get_or_select(&prepared.chunk, at, || {
        let inputs = (
            crate::ir::visit::free_vars(&prepared.chunk),
            crate::ir::visit::buffers(&prepared.chunk),
        );
        let reusable = shared
            .as_ref()
            .is_some_and(|sh| sh.at == at && sh.inputs == inputs);
        if !reusable {
            *shared = Some(SharedSelection {
                at,
                inputs,
                selector: selector(backend, bounds(), &prepared.chunk),
            });
        }
        let sh = shared.as_mut().expect("set above");
        if reusable {
            // A selector built for another chunk knows that chunk's shared nodes only.
            sh.selector.note_shared(&prepared.chunk);
        }
        let s = match sh.selector.select_trusting(&prepared.chunk) {
            Some(s) => s,
            None => {
                // A proposal taken on trust was wrong: select again checking each one.
                sh.selector = selector(backend, bounds(), &prepared.chunk);
                sh.selector.select(&prepared.chunk)
            }
        };
        let origins = sh.selector.origins_in(&s.expr).into();
        (s, origins)
    });
    let mut params = Params {
        buffers: crate::ir::visit::buffers(&s.expr),
        ..Default::default()
    };
    for (name, t) in crate::ir::visit::free_vars(&s.expr) {
        if &*name != prepare::CHUNK_VAR {
            params.scalars.insert(name, t);
        }
    }
    Lowered {
        source: e.clone(),
        lifted,
        prepared,
        selected: s.expr,
        chunk_cost: s.cost,
        params,
        lifted_by: LiftedBy::Greedy,
        origins,
    }
}

/// How `target`'s C compiler departs from the generic estimate of generic operations.
pub fn generic_pricing(target: &dyn crate::isa::target::Target) -> select::GenericPricing {
    select::GenericPricing {
        one_step_narrowing: target.narrows_in_one_instruction(),
        narrowed_select_masks: target.narrows_select_masks(),
        table_narrowing: target.narrows_by_table(),
    }
}

/// The selector `backend` lowers with, with `bounds` for predicates, validating checked
/// proposals on random inputs to `root`.
fn selector<'b>(backend: &'b Backend, bounds: Intervals, root: &Expr) -> select::Selector<'b> {
    let sel = select::Selector::new(&backend.rules, backend.target.register_bits(), bounds)
        .with_strategies(backend.strategies.clone(), backend.instrs.clone())
        .with_deinterleaved_loads(backend.target.deinterleaved_loads())
        .with_validation_inputs(root)
        .with_pricing(generic_pricing(&*backend.target));
    let mut sel = if backend.target.folds_widening_loads() {
        sel.with_folded_widening_loads()
    } else {
        sel
    };
    sel.note_shared(root);
    sel
}

/// Selects instructions for `e` exactly as written: no lifting, no chunking, its variables
/// as registers (what synthesis compares a sequence with).
pub fn select_as_is(e: &Expr, backend: &Backend) -> select::Selected {
    selector(backend, Intervals::new(), e).select(e)
}

/// The C function computing `l` (typedefs first), named `name`.
pub fn c_function(l: &Lowered, target: &dyn Target, name: &str) -> String {
    let mut w = emit::FnWriter::new(target);
    let n = l.prepared.lanes;
    let lanes = l.prepared.chunk_lanes;
    let out_t = l.out_elem().c_name();
    w.bind(&prepare::chunk_var(), prepare::CHUNK_VAR);
    w.set_indent("        ");
    let r = w.value(&l.selected);
    let body = w.take_body();
    let mut s = emit::typedefs(&w.types, &w.bit_vectors);
    let _ = writeln!(
        s,
        "void {name}({out_t} *restrict out{}) {{",
        l.params.c_list()
    );
    let _ = writeln!(
        s,
        "    for (int32_t {x} = 0; {x} < {n}; {x} += {lanes}) {{",
        x = prepare::CHUNK_VAR
    );
    s.push_str(&body);
    let store = if l.selected.ty().is_scalar() {
        format!("        out[{}] = {r};\n", prepare::CHUNK_VAR)
    } else {
        format!(
            "        {{ int32_t n_ = {n} - {x}; if (n_ > {lanes}) n_ = {lanes}; __builtin_memcpy(out + {x}, &{r}, (size_t)n_ * sizeof({out_t})); }}\n",
            x = prepare::CHUNK_VAR
        )
    };
    s.push_str(&store);
    s.push_str("    }\n}\n");
    s
}

/// A self-contained C file: a comment with the source and the cost estimate, the target's
/// headers, the helpers, and the function.
pub fn c_file(l: &Lowered, target: &dyn Target, name: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/* Generated by harrow for {}.", target.name());
    let _ = writeln!(
        s,
        " * source: {}",
        l.source.to_string().replace("*/", "* /")
    );
    let _ = writeln!(
        s,
        " * lifted: {}",
        l.lifted.to_string().replace("*/", "* /")
    );
    let _ = writeln!(
        s,
        " * {} lanes in {} chunk(s) of {}; estimated cost {:.2} cycles ({:.2} per chunk).",
        l.prepared.lanes,
        l.chunks(),
        l.prepared.chunk_lanes,
        l.cost(),
        l.chunk_cost
    );
    let _ = writeln!(
        s,
        " * Loads read whole chunks: buffers must be readable up to one chunk past the last lane used. */"
    );
    s.push_str(&target.c_header());
    s.push_str(emit::PRELUDE);
    s.push_str(&c_function(l, target, name));
    s
}

/// The selected instructions, one per line, in evaluation order (`--emit ir`).
pub fn listing(l: &Lowered) -> String {
    let mut s = String::new();
    let mut names: HashMap<usize, String> = HashMap::new();
    let _ = writeln!(
        s,
        "; {} lanes, chunks of {}{}",
        l.prepared.lanes,
        l.prepared.chunk_lanes,
        if l.prepared.chunked {
            format!(" at {}", prepare::CHUNK_VAR)
        } else {
            String::new()
        }
    );
    for n in crate::ir::visit::post_order(&l.selected) {
        // Scalars and load indices are shown inside the nodes that use them.
        if (n.ty().is_scalar() && !matches!(n.op(), Op::Instr(_))) || matches!(n.op(), Op::Ramp) {
            names.insert(n.id(), n.to_string());
            continue;
        }
        let v = format!("%{}", names.len());
        let args: Vec<String> = n
            .args()
            .iter()
            .map(|a| names.get(&a.id()).cloned().unwrap_or_default())
            .collect();
        let text = match n.op() {
            Op::Instr(i) => format!(
                "{} {}   ; {}, cost {} {}",
                i.intrinsic,
                args.join(", "),
                i.mnemonic,
                i.cost.latency,
                i.cost.throughput
            ),
            Op::Load(..) | Op::Const(_) | Op::Var(_) => n.to_string(),
            op => match cform::lane_loop_reason(&n) {
                Some(why) => format!(
                    "{} {}   ; generic, lane by lane: {why}",
                    op.name(),
                    args.join(", ")
                ),
                None => format!("{} {}   ; generic", op.name(), args.join(", ")),
            },
        };
        let _ = writeln!(s, "{v}: {} = {text}", n.ty());
        names.insert(n.id(), v);
    }
    let _ = writeln!(s, "; estimated cost per chunk: {:.2}", l.chunk_cost);
    s
}

/// `harrow compile --explain`: which lifting engine's form `l` holds (under `--engine
/// eqsat`), where each instruction came from, and a line for every vector node no
/// instruction covers, saying how the emitter writes it (whole-vector C that clang selects
/// for, or a loop over lanes) and why.
pub fn explain(l: &Lowered, target: &str) -> String {
    let mut s = String::new();
    use crate::rewrite::eqsat::Extraction;
    let engine = match l.lifted_by {
        LiftedBy::Greedy => None,
        LiftedBy::GreedyOverSaturated => Some(
            "lifted by the greedy engine: equality saturation found no form the target's estimate prefers",
        ),
        LiftedBy::Saturated(Extraction::Dag) => Some(
            "lifted by equality saturation (extracted by the lifting cost with shared values paid once: the DAG-aware extractor), cheaper on this target than the greedy engine's form",
        ),
        LiftedBy::Saturated(Extraction::Tree) => Some(
            "lifted by equality saturation (extracted by the lifting cost: egg's tree extractor, as cheap as the DAG-aware one), cheaper on this target than the greedy engine's form",
        ),
        LiftedBy::Saturated(Extraction::Greedy) => Some(
            "lifted by the greedy engine's form, which equality saturation kept as its cheapest",
        ),
    };
    if let Some(engine) = engine {
        let _ = writeln!(s, "explain: {engine}");
    }
    s.push_str(&explain_origins(l));
    let mut generic = false;
    for n in crate::ir::visit::post_order(&l.selected) {
        let t = n.ty();
        if t.is_scalar()
            || matches!(
                n.op(),
                Op::Instr(_) | Op::Load(..) | Op::Ramp | Op::Const(_) | Op::Var(_) | Op::Broadcast
            )
        {
            continue;
        }
        // A conversion between types of one width, or a reinterpretation, only changes
        // how lanes are read; the low part of a register is the register (`vget_low`,
        // `_mm256_castsi256_si128`): free in the cost model too.
        if matches!(n.op(), Op::Reinterpret)
            || matches!(n.op(), Op::Cast) && n.arg(0).ty().elem.bits() == t.elem.bits()
            || matches!(
                n.op(),
                Op::Slice {
                    start: 0,
                    stride: 1
                }
            ) && t.total_bits() >= 64
        {
            continue;
        }
        let how = match cform::lane_loop_reason(&n) {
            Some(why) => format!("written lane by lane: {why}"),
            None => "written as whole-vector C (clang selects the instructions)".to_string(),
        };
        let _ = writeln!(
            s,
            "explain: `{}` at {t}: no {target} instruction or rule matched; {how}",
            n.op().name()
        );
        generic = true;
    }
    if !generic {
        s.push_str("explain: every vector node is an instruction\n");
    }
    s
}

/// One `explain:` line per instruction and origin: which rule (or the instruction's own
/// semantics, or which strategy) put how many of it into `l`'s selection, in the order
/// they are first computed.
fn explain_origins(l: &Lowered) -> String {
    let mut counts: Vec<((String, &select::Origin), usize)> = Vec::new();
    for (n, origin) in l.origins.iter() {
        let Op::Instr(i) = n.op() else { continue };
        let key = (i.intrinsic.clone(), origin);
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, c)) => *c += 1,
            None => counts.push((key, 1)),
        }
    }
    let mut s = String::new();
    for ((intrinsic, origin), count) in counts {
        let times = if count > 1 {
            format!(" ({count} times)")
        } else {
            String::new()
        };
        let _ = writeln!(s, "explain: `{intrinsic}`{times} from {origin}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk selected again (another body variant that lifts to it) is the remembered
    /// selection, and a different position bound is selected afresh.
    #[test]
    fn chunks_are_selected_once_per_backend() {
        // A backend of its own: other tests select with the shared one meanwhile.
        let backend = crate::targets::backend_with("x86-avx2", &[]).unwrap();
        let e = prepare::tests::entry("(uint8)in_u8(x) + (uint8)in_u8(x + 16)", 64);
        let first = lower(&e, &backend);
        let entries = backend.selections.len();
        assert!(entries >= 1);
        let again = lower(&e, &backend);
        assert_eq!(first.selected, again.selected);
        assert_eq!(first.chunk_cost.to_bits(), again.chunk_cost.to_bits());
        assert_eq!(backend.selections.len(), entries, "nothing selected anew");
        let wider = prepare::tests::entry("(uint8)in_u8(x) + (uint8)in_u8(x + 16)", 96);
        lower(&wider, &backend);
        assert!(backend.selections.len() > entries, "another bound");
    }

    /// Two threads asking for the same chunk at once select it once: the second waits for
    /// the first's selection instead of repeating it.
    #[test]
    fn a_chunk_selected_meanwhile_is_waited_for() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let backend = crate::targets::backend_with("x86-avx2", &[]).unwrap();
        let e = prepare::tests::entry("(uint8)in_u8(x) + (uint8)in_u8(x + 16)", 32);
        let prepared = prepare::prepare_with(&e, 256, false, false);
        let selections = AtomicUsize::new(0);
        let select = || {
            backend
                .selections
                .get_or_select(&prepared.chunk, None, || {
                    selections.fetch_add(1, Ordering::SeqCst);
                    // Long enough for the other thread to arrive meanwhile.
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    let s = selector(&backend, Intervals::new(), &prepared.chunk)
                        .select(&prepared.chunk);
                    (s, Arc::from(Vec::new()))
                })
                .0
        };
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(select);
            let b = scope.spawn(select);
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!(a.expr, b.expr);
        assert_eq!(selections.load(Ordering::SeqCst), 1, "selected once");
        assert_eq!(backend.selections.len(), 1);
        backend.selections.clear();
        assert!(backend.selections.is_empty());
    }
}
