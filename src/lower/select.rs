//! Instruction selection: a memoized dynamic program over the chunk expression.
//!
//! For each node the candidates are: every lowering rule whose left-hand side matches the
//! node (derived rules `semantics => instruction` and the hand-written `rules/<target>.rules`),
//! with its predicate checked against interval bounds; for FPIR operations, their definition
//! in primitive operators; and always the generic fallback, which the C emitter can write
//! for any node. A candidate's cost is its instructions' costs plus the best costs of the
//! sub-expressions it leaves to select; the cheapest wins. A rule's right-hand side may
//! contain ordinary operators (`or` of two `subs_epu8`), which are selected in turn.
//!
//! Shared sub-expressions are counted once per use, which slightly over-prices DAGs but
//! never changes what is computed.

use std::collections::HashMap;

use super::lanes::{is_dense, lane_wise, rebuild_lanes, shift_amount};
use crate::bounds::{Bounds, Intervals};
use crate::ir::{Expr, Op, mk_typed};
use crate::rules::RuleSet;
use crate::types::Elem;
use crate::util::idhash::{IdMap, IdSet};

/// What selection produced for one node.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Estimated cost in cycles of reciprocal throughput.
    pub cost: f64,
    /// The node with instructions chosen below it (instructions, generic nodes, leaves).
    pub expr: Expr,
}

/// Cost of one instruction: throughput with a small latency weight.
pub fn instr_cost(i: &crate::isa::Instr) -> f64 {
    i.cost.throughput.max(0.25) as f64 + 0.1 * i.cost.latency as f64
}

/// Cost of writing a node with generic C (clang chooses the instructions). Deliberately
/// above a described instruction's, so that described instructions win when they apply.
pub fn generic_cost(e: &Expr, register_bits: u32) -> f64 {
    let t = e.ty();
    if t.is_scalar() {
        return 0.0;
    }
    // A conversion reads as many registers as its operand spans.
    let bits = match e.op() {
        Op::Cast | Op::SaturatingCast => t.total_bits().max(e.arg(0).ty().total_bits()),
        _ => t.total_bits(),
    };
    let regs = (bits as f64 / register_bits as f64).ceil().max(1.0);
    let lanes = t.lanes as f64;
    match e.op() {
        Op::Instr(i) => instr_cost(i),
        Op::Const(_) | Op::Var(_) | Op::Reinterpret => 0.0,
        // A cast that keeps the width only changes how lanes are read.
        Op::Cast if e.arg(0).ty().elem.bits() == t.elem.bits() => 0.0,
        Op::Load(..) => {
            if is_dense(e) {
                0.5 * regs
            } else {
                lanes
            }
        }
        // A ramp is a load index: the load pays for it (dense loads need none).
        Op::Ramp => 0.0,
        Op::Broadcast => 0.5 * regs,
        Op::Add
        | Op::Sub
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Not
        | Op::Min
        | Op::Max
        | Op::Eq
        | Op::Ne
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Select => 1.5 * regs,
        // Narrowing conversions are shuffles across registers as well (clang truncates
        // with a byte shuffle and a cross-lane permute per register).
        Op::Cast if e.arg(0).ty().elem.bits() > t.elem.bits() => 1.5 * regs + 1.0,
        Op::Cast => 1.5 * regs,
        Op::Mul if t.elem.bits() <= 32 => 2.0 * regs,
        Op::Shl | Op::Shr if shift_amount(e).is_some() => 1.5 * regs,
        // A value spanning several registers is just its parts.
        Op::Concat if t.total_bits() > register_bits as u64 => 0.0,
        // The low part of a register is the register; a high half at a 64-bit boundary is
        // one extract (vextracti128, vget_high, V_hi).
        Op::Slice {
            start: 0,
            stride: 1,
        } if t.total_bits() >= 64 => 0.0,
        Op::Slice { start, stride: 1 }
            if (*start as u64 * t.elem.bits() as u64).is_multiple_of(64)
                && t.total_bits() <= register_bits as u64 =>
        {
            1.0
        }
        // Interleaving into lanes wider than 128 bits crosses the 128-bit lanes most wide
        // registers are built of: two in-lane unpacks and a cross-lane permute.
        Op::Interleave if t.total_bits() > 128 => 1.5 * regs + 1.5,
        // A slice of stride 3 or 4 gathers from as many registers per register of result,
        // and beyond 128 bits across the 128-bit lanes too (AVX2 has no lane-crossing byte
        // or word shuffle): measured on AVX2, 32 such lanes cost well over four times 8.
        Op::Slice { stride, .. } if *stride >= 3 && t.total_bits() > 128 => {
            1.5 * regs * f64::from(*stride) + 2.0 * regs
        }
        Op::Slice { .. } | Op::Concat | Op::Interleave | Op::Shuffle(_) => 1.5 * regs,
        // A loop over lanes moves every lane out of and back into a register around a
        // scalar computation of several operations (`cform::lane_loop_reason` says which
        // nodes are written so).
        _ if super::cform::lane_loop_reason(e).is_some() => 2.0 * regs + 2.0 * lanes,
        // Everything else is whole-vector C of the operation's definition.
        _ => 2.0 * regs + lanes / 2.0,
    }
}

/// The cost of a selected DAG: each distinct node once (a value used twice is computed
/// once), constant sub-expressions free (clang folds them). With `fold_widening_loads`
/// (`Target::folds_widening_loads`), generic widening casts of dense loads cost what the
/// folded instruction clang makes of them costs.
pub fn dag_cost(e: &Expr, register_bits: u32, fold_widening_loads: bool) -> f64 {
    let mut constant: IdMap<usize, bool> = IdMap::default();
    let mut materialized: IdSet<usize> = IdSet::default();
    let mut total = 0.0;
    for n in crate::ir::visit::post_order(e) {
        let c = match n.op() {
            Op::Var(_) | Op::Load(..) => false,
            _ => n.args().iter().all(|a| constant[&a.id()]),
        };
        constant.insert(n.id(), c);
        if !c {
            total += folded_load_cost(&n, register_bits, fold_widening_loads)
                .unwrap_or_else(|| generic_cost(&n, register_bits));
            // A tie-breaker far below any instruction's cost: a vector constant operand
            // takes a register that a scalar-operand form does not (prefer `vmpyi(h, b)`
            // with the constant in a scalar register to `vmpyi(h, h)` with a splat).
            for a in n.args() {
                if constant[&a.id()] && !a.ty().is_scalar() && materialized.insert(a.id()) {
                    total += 0.01;
                }
            }
        }
    }
    total
}

/// The cost of an instruction whose operand is a dense load it reads from memory, where
/// its description says that is cheaper than from a register (`load` throughput: x86
/// widening conversions), and with `generic_casts`, of a generic widening cast of such a
/// load (clang emits the same folded instruction: a quarter cycle per register of result;
/// it covers loads narrower than the instruction's operand register, such as 8 bytes
/// widened to 8 dwords). The load itself is still counted once.
fn folded_load_cost(n: &Expr, register_bits: u32, generic_casts: bool) -> Option<f64> {
    let mut load = n.args().first()?;
    // A register-sized part of a wider load is a load at an offset, and a reinterpreting
    // cast (same width) only changes how the lanes are read.
    loop {
        match load.op() {
            Op::Slice { stride: 1, .. } | Op::Reinterpret => load = load.arg(0),
            Op::Cast if load.arg(0).ty().elem.bits() == load.ty().elem.bits() => load = load.arg(0),
            _ => break,
        }
    }
    if !matches!(load.op(), Op::Load(..)) || !is_dense(load) {
        return None;
    }
    match n.op() {
        Op::Instr(i) => i.cost.load_throughput.map(|t| t.max(0.25) as f64),
        Op::Cast
            if generic_casts
                && !n.ty().is_scalar()
                && n.ty().elem.bits() > load.ty().elem.bits() =>
        {
            Some(0.25 * (n.ty().total_bits() as f64 / register_bits as f64).ceil())
        }
        _ => None,
    }
}

/// The selector: rules, bounds and memo tables for one compilation.
pub struct Selector<'r> {
    rules: &'r RuleSet,
    register_bits: u32,
    /// Narrowest register worth splitting down to, when wide nodes may be split.
    split_to: Option<u32>,
    /// Halves built so far, by node and side (shared by every split of one compilation).
    halves: [IdMap<usize, Expr>; 2],
    /// Whether wide values may be computed as their even and odd lanes (HVX).
    deinterleave: bool,
    /// Whether the target loads registers deinterleaved (`ld2` to `ld4`), so that half of a
    /// strided slice is best a slice of half the load.
    structured_loads: bool,
    /// Even and odd halves built so far, by node.
    parities: [IdMap<usize, Expr>; 2],
    bounds: Intervals,
    /// Sums that are operands of a larger sum: the pairwise candidate (`super::pairs`) is
    /// built for whole sums only, since each part's candidate would be re-read and selected
    /// again as part of the whole's (quadratic in the number of taps).
    inner_sums: IdMap<usize, Expr>,
    /// The instructions for sums of byte products (`super::dot`), when the target has them.
    reductions: Option<std::sync::Arc<crate::isa::InstrTable>>,
    memo: IdMap<usize, (Expr, Selected)>,
    active: IdSet<usize>,
    /// Whether generic widening casts of loads are priced as folded loads.
    fold_widening_loads: bool,
}

impl<'r> Selector<'r> {
    /// A selector over `rules` for registers of `register_bits`, with `bounds` for predicates.
    pub fn new(rules: &'r RuleSet, register_bits: u32, bounds: Intervals) -> Self {
        Selector {
            rules,
            register_bits,
            split_to: None,
            halves: [IdMap::default(), IdMap::default()],
            deinterleave: false,
            structured_loads: false,
            parities: [IdMap::default(), IdMap::default()],
            bounds,
            reductions: None,
            memo: IdMap::default(),
            active: IdSet::default(),
            inner_sums: IdMap::default(),
            fold_widening_loads: false,
        }
    }

    /// Also considers splitting nodes wider than a register into two halves (down to
    /// `min_bits` per half), so that register-sized instructions apply to each half.
    pub fn with_splitting(mut self, min_bits: u32) -> Self {
        self.split_to = Some(min_bits);
        self
    }

    /// Also considers computing a lane-wise node wider than a register (or with an operand
    /// wider than one) as its even and odd lanes, interleaved: the layout HVX's widening
    /// instructions produce and its narrowing instructions consume.
    pub fn with_deinterleaving(mut self) -> Self {
        self.deinterleave = true;
        self
    }

    /// Splits strided slices wider than a register into slices of half-loads, for targets
    /// with deinterleaving loads.
    pub fn with_structured_loads(mut self) -> Self {
        self.structured_loads = true;
        self
    }

    /// Prices generic widening casts of dense loads as the folded loads clang makes of
    /// them, for targets whose widening instructions read memory directly.
    pub fn with_folded_widening_loads(mut self) -> Self {
        self.fold_widening_loads = true;
        self
    }

    /// Also tries sums of byte products as reduction multiplies from `instrs` (HVX).
    pub fn with_reduction_multiplies(
        mut self,
        instrs: std::sync::Arc<crate::isa::InstrTable>,
    ) -> Self {
        self.reductions = Some(instrs);
        self
    }

    /// The cheapest implementation of `e`.
    pub fn select(&mut self, e: &Expr) -> Selected {
        if let Some((_, s)) = self.memo.get(&e.id()) {
            return s.clone();
        }
        let s = self.compute(e);
        self.memo.insert(e.id(), (e.clone(), s.clone()));
        s
    }

    fn compute(&mut self, e: &Expr) -> Selected {
        if matches!(e.op(), Op::Add | Op::Sub) {
            for a in e.args() {
                if matches!(a.op(), Op::Add | Op::Sub) {
                    self.inner_sums.insert(a.id(), a.clone());
                }
            }
        }
        // Scalars (index arithmetic, parameters) and leaves stay as they are.
        if e.ty().is_scalar() || e.args().is_empty() || matches!(e.op(), Op::Load(..)) {
            return Selected {
                cost: generic_cost(e, self.register_bits),
                expr: e.clone(),
            };
        }
        // The half of a concatenation is the part: splitting leaves these behind.
        if let Op::Slice { start, stride: 1 } = e.op()
            && let Some(part) = concat_part(e.arg(0), *start, e.ty().lanes)
        {
            return self.select(&part);
        }
        // A register-sized part of a load wider than a register is a load of that part
        // (the wide load is several register loads anyway).
        if let Op::Slice { start, stride: 1 } = e.op()
            && e.arg(0).ty().total_bits() > self.register_bits as u64
            && let Some(part) = load_part(e.arg(0), *start, e.ty().lanes)
        {
            return self.select(&part);
        }
        let args: Vec<Selected> = e.args().iter().map(|a| self.select(a)).collect();
        if let Op::Slice { start, stride: 1 } = e.op()
            && let Some(part) = concat_part(&args[0].expr, *start, e.ty().lanes)
        {
            return Selected {
                cost: dag_cost(&part, self.register_bits, self.fold_widening_loads),
                expr: part,
            };
        }
        let expr = e
            .with_args(args.iter().map(|a| a.expr.clone()).collect())
            .expect("selection keeps types");
        let mut best = Selected {
            cost: dag_cost(&expr, self.register_bits, self.fold_widening_loads),
            expr,
        };
        if !self.active.insert(e.id()) {
            return best;
        }
        for &(ri, ii) in self.rules.candidates(e) {
            let rule = &self.rules.rules[ri];
            let Some(rhs) = crate::rewrite::apply(rule, &rule.insts[ii], e, &mut self.bounds)
            else {
                continue;
            };
            if rhs == *e {
                continue;
            }
            let cand = self.select_rhs(&rhs);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        if let Some(cand) = self.split(e) {
            let cand = self.select(&cand);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        if let Some(cand) = self.deinterleaved(e) {
            let cand = self.select(&cand);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        if let Some(cand) = sunk_shuffle(e) {
            let cand = self.select(&cand);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        if let Some(table) = self.reductions.clone()
            && let Some(cand) = super::dot::candidate(e, &table)
        {
            let cand = self.select_rhs(&cand);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        // Wider sums are split first; each register-sized half gets its own candidate.
        if e.ty().total_bits() <= u64::from(self.register_bits)
            && !self.inner_sums.contains_key(&e.id())
            && let Some(cand) = super::pairs::candidate(e)
        {
            let cand = self.select(&cand);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        if e.op().is_fpir() {
            let def = super::lanes::fold_splats(&crate::fpir::definition(e.op(), e.ty(), e.args()));
            let cand = self.select(&def);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        self.active.remove(&e.id());
        best
    }

    /// `e` as the concatenation of its two halves, each computed at half the lanes, when
    /// `e` (or an operand) is wider than a register and is computed lane by lane.
    fn split(&mut self, e: &Expr) -> Option<Expr> {
        let min_bits = self.split_to?;
        let t = e.ty();
        let widest = e
            .args()
            .iter()
            .map(|a| a.ty().total_bits())
            .chain([t.total_bits()])
            .max()?;
        if widest <= self.register_bits as u64
            || !t.lanes.is_multiple_of(2)
            || t.lanes < 4
            || t.total_bits() / 2 < min_bits as u64
            || !lane_wise(e)
        {
            return None;
        }
        let register_bits = self.register_bits;
        let structured = self.structured_loads;
        let mut halves = Vec::new();
        for hi in [false, true] {
            let memo = &mut self.halves[hi as usize];
            halves.push(rebuild_lanes(e, t.lanes / 2, |a| {
                half_memo(a, hi, register_bits, structured, memo)
            })?);
        }
        Expr::build(Op::Concat, None, halves).ok()
    }

    /// `e` as `interleave_vectors(even, odd)`, each half computed at half the lanes from
    /// the even or odd lanes of its operands, when `e` (or an operand) is wider than a
    /// register and is computed lane by lane.
    fn deinterleaved(&mut self, e: &Expr) -> Option<Expr> {
        if !self.deinterleave {
            return None;
        }
        let t = e.ty();
        let widest = e
            .args()
            .iter()
            .map(|a| a.ty().total_bits())
            .chain([t.total_bits()])
            .max()?;
        if widest <= self.register_bits as u64
            || !t.lanes.is_multiple_of(2)
            || t.lanes < 4
            || !lane_wise(e)
        {
            return None;
        }
        let h = t.lanes / 2;
        let mut halves = Vec::new();
        for odd in [false, true] {
            let args: Vec<Expr> = e
                .args()
                .iter()
                .map(|a| {
                    if a.ty().is_scalar() {
                        a.clone()
                    } else {
                        parity_memo(a, odd, &mut self.parities[odd as usize])
                    }
                })
                .collect();
            let ty = crate::ir::explicit_type(e).map(|_| t.with_lanes(h));
            halves.push(Expr::build(e.op().clone(), ty, args).ok()?);
        }
        Expr::build(Op::Interleave, None, halves).ok()
    }

    /// Selects a rule's right-hand side: its instructions stay, everything else is selected.
    fn select_rhs(&mut self, e: &Expr) -> Selected {
        let expr = self.select_rhs_expr(e);
        Selected {
            cost: dag_cost(&expr, self.register_bits, self.fold_widening_loads),
            expr,
        }
    }

    fn select_rhs_expr(&mut self, e: &Expr) -> Expr {
        match e.op() {
            Op::Instr(_) => {
                let args: Vec<Expr> = e.args().iter().map(|a| self.select_rhs_expr(a)).collect();
                e.with_args(args).expect("selection keeps types")
            }
            _ => self.select(e).expr,
        }
    }

    /// Bounds used by predicates (exposed for reports).
    pub fn bounds(&mut self) -> &mut dyn Bounds {
        &mut self.bounds
    }
}

/// A shuffle of one lane-wise node as the node over its operands shuffled alike (each
/// lane is computed from the same lane of its operands, so it can be computed where the
/// shuffle puts it), sunk through every lane-wise node below to the leaves. Rules that
/// consume lanes in a permuted order (x86 packs work within 128-bit blocks) ask for such
/// shuffles; sunk to the leaves, the shuffles of loads meet rules that produce that order
/// directly (unpacks against zero widen within blocks), and the arithmetic between them
/// is the arithmetic rules know, not opaque shuffles.
fn sunk_shuffle(e: &Expr) -> Option<Expr> {
    let Op::Shuffle(idx) = e.op() else {
        return None;
    };
    if e.args().len() != 1 || !lane_wise(e.arg(0)) {
        return None;
    }
    let mut memo = HashMap::new();
    Some(shuffled(e.arg(0), idx, &mut memo))
}

/// `shuffle(idx, e)` with the shuffle moved below lane-wise nodes, written without a
/// shuffle where that is free: a broadcast stays a broadcast, and a shuffle of a shuffle
/// is one shuffle. `memo` is keyed by node and lane order (a DAG shares operands).
fn shuffled(e: &Expr, idx: &[u32], memo: &mut HashMap<(usize, Vec<u32>), Expr>) -> Expr {
    let key = (e.id(), idx.to_vec());
    if let Some(x) = memo.get(&key) {
        return x.clone();
    }
    let lanes = idx.len() as u32;
    let plain = || {
        mk_typed(
            Op::Shuffle(idx.into()),
            e.ty().with_lanes(lanes),
            vec![e.clone()],
        )
    };
    let out = match e.op() {
        _ if e.ty().is_scalar() => e.clone(),
        Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(lanes),
        Op::Shuffle(inner) if e.args().len() == 1 => {
            let composed: Vec<u32> = idx.iter().map(|&i| inner[i as usize]).collect();
            shuffled(e.arg(0), &composed, memo)
        }
        _ if idx.iter().enumerate().all(|(i, &j)| i as u32 == j) && lanes == e.ty().lanes => {
            e.clone()
        }
        _ if lane_wise(e) => {
            rebuild_lanes(e, lanes, |a| shuffled(a, idx, memo)).unwrap_or_else(plain)
        }
        _ => plain(),
    };
    memo.insert(key, out.clone());
    out
}

/// The low or high half of `e` by lanes (memoized in `memo`, one per side), written
/// without a slice where that is free:
/// lane-wise nodes are rebuilt at half the lanes over the halves of their operands, so
/// that rules see the same shapes at the narrower width.
fn half_memo(
    e: &Expr,
    hi: bool,
    register_bits: u32,
    structured: bool,
    memo: &mut IdMap<usize, Expr>,
) -> Expr {
    if let Some(h) = memo.get(&e.id()) {
        return h.clone();
    }
    let t = e.ty();
    let h = t.lanes / 2;
    let start = if hi { h } else { 0 };
    let slice = || {
        crate::ir::mk_typed(
            Op::Slice { start, stride: 1 },
            t.with_lanes(h),
            vec![e.clone()],
        )
    };
    let out = if let Some(p) = concat_part(e, start, h) {
        p
    } else {
        match e.op() {
            Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(h),
            // A load that fits a register stays one load: its halves are slices, which
            // high-half instructions read directly. Wider loads become two loads.
            Op::Load(..) if t.total_bits() > register_bits as u64 => {
                load_part(e, start, h).unwrap_or_else(slice)
            }
            // On targets with deinterleaving loads, half of a strided slice wider than a
            // register is the same slice of half the load: each half is one `ld2` instead
            // of the whole load being deinterleaved and then split. A slice that fits a
            // register stays whole: high-half instructions read its halves. (On AVX2,
            // clang's shuffles of the whole load are faster than of two half-loads.)
            Op::Slice {
                start: first,
                stride,
            } if structured
                && *stride > 1
                && t.total_bits() > register_bits as u64
                && first < stride
                && stride * (start + h) <= e.arg(0).ty().lanes
                && matches!(e.arg(0).op(), Op::Load(..))
                && e.arg(0).ty().total_bits() > register_bits as u64 =>
            {
                load_part(e.arg(0), stride * start, stride * h)
                    .map(|part| {
                        crate::ir::mk_typed(
                            Op::Slice {
                                start: *first,
                                stride: *stride,
                            },
                            t.with_lanes(h),
                            vec![part],
                        )
                    })
                    .unwrap_or_else(slice)
            }
            _ if lane_wise(e) => {
                rebuild_lanes(e, h, |a| half_memo(a, hi, register_bits, structured, memo))
                    .unwrap_or_else(slice)
            }
            _ => slice(),
        }
    };
    memo.insert(e.id(), out.clone());
    out
}

/// The even or odd lanes of `e` (memoized in `memo`, one per parity): lane-wise nodes are
/// rebuilt at half the lanes over the same parity of their operands, so that a widening
/// node over registers becomes the half that a deinterleaving instruction computes; other
/// nodes are sliced.
fn parity_memo(e: &Expr, odd: bool, memo: &mut IdMap<usize, Expr>) -> Expr {
    if let Some(h) = memo.get(&e.id()) {
        return h.clone();
    }
    let t = e.ty();
    let h = t.lanes / 2;
    let slice = || {
        crate::ir::mk_typed(
            Op::Slice {
                start: odd as u32,
                stride: 2,
            },
            t.with_lanes(h),
            vec![e.clone()],
        )
    };
    let out = match e.op() {
        Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(h),
        // Interleaving the halves back is undone by taking a parity.
        Op::Interleave if e.args().len() == 2 => e.arg(odd as usize).clone(),
        _ if lane_wise(e) => {
            rebuild_lanes(e, h, |a| parity_memo(a, odd, memo)).unwrap_or_else(slice)
        }
        _ => slice(),
    };
    memo.insert(e.id(), out.clone());
    out
}

/// Lanes `start .. start + lanes` of the concatenation `e` when they lie in one of its
/// arguments: that argument, or a slice of it.
fn concat_part(e: &Expr, start: u32, lanes: u32) -> Option<Expr> {
    if !matches!(e.op(), Op::Concat) {
        return None;
    }
    let mut at = 0;
    for a in e.args() {
        let n = a.ty().lanes;
        if at == start && n == lanes {
            return Some(a.clone());
        }
        if at <= start && start + lanes <= at + n {
            return Some(crate::ir::mk_typed(
                Op::Slice {
                    start: start - at,
                    stride: 1,
                },
                a.ty().with_lanes(lanes),
                vec![a.clone()],
            ));
        }
        at += n;
    }
    None
}

/// Lanes `start .. start + lanes` of the load `e` (index `ramp(b, s, n)` with a constant
/// stride) as a load of their own.
fn load_part(e: &Expr, start: u32, lanes: u32) -> Option<Expr> {
    let Op::Load(buf, align) = e.op() else {
        return None;
    };
    let idx = e.arg(0);
    if !matches!(idx.op(), Op::Ramp) {
        return None;
    }
    let stride = idx.arg(1).as_const()? as i64;
    let base = super::lanes::add_i32(
        idx.arg(0),
        &Expr::int(Elem::I32, (stride * start as i64) as i128).ok()?,
    );
    let ramp = crate::ir::mk_typed(
        Op::Ramp,
        idx.ty().with_lanes(lanes),
        vec![base, idx.arg(1).clone()],
    );
    Some(crate::ir::mk_typed(
        Op::Load(buf.clone(), *align),
        e.ty().with_lanes(lanes),
        vec![ramp],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::mk;
    use crate::types::Type;

    /// A shuffle of arithmetic becomes the arithmetic of shuffled leaves: splats stay splats
    /// at the new width, a shuffle of a shuffle is one composed shuffle, and what is not
    /// lane-wise (a vector variable) keeps the shuffle.
    #[test]
    fn shuffles_sink_to_the_leaves() {
        let t = Type::vec(Elem::U16, 8);
        let a = Expr::var("a", t);
        let s = Expr::var("s", Type::scalar(Elem::U16));
        let inner = mk_typed(
            Op::Shuffle(vec![7, 6, 5, 4, 3, 2, 1, 0].into()),
            t,
            vec![a.clone()],
        );
        let sum = mk(Op::Add, vec![inner, s.broadcast(8)]);
        let widened = sum.cast(Elem::U32);
        let e = mk_typed(
            Op::Shuffle(vec![0, 1, 4, 5].into()),
            Type::vec(Elem::U32, 4),
            vec![widened],
        );
        let sunk = sunk_shuffle(&e).expect("sinks through the cast and the add");
        let leaf = mk_typed(
            Op::Shuffle(vec![7, 6, 3, 2].into()),
            Type::vec(Elem::U16, 4),
            vec![a],
        );
        let expected = mk(Op::Add, vec![leaf, s.broadcast(4)]).cast(Elem::U32);
        assert_eq!(sunk, expected, "{}", crate::syntax::halide::print(&sunk));
        // Nothing to sink into: a shuffle of a variable stays as it is.
        let v = Expr::var("v", t);
        let plain = mk_typed(
            Op::Shuffle(vec![0, 1].into()),
            Type::vec(Elem::U16, 2),
            vec![v],
        );
        assert!(sunk_shuffle(&plain).is_none());
    }
}
