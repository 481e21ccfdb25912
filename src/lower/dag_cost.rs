//! What selection prices candidates by (`super::select`): one instruction, one generic
//! node, and whole selected DAGs, memoized per node.

use super::lanes::{SplatFolder, is_dense, shift_amount};
use crate::ir::{Expr, Op};
use crate::util::idhash::IdMap;

/// Cost of one instruction: throughput with a small latency weight.
pub fn instr_cost(i: &crate::isa::Instr) -> f64 {
    i.cost.throughput.max(0.25) as f64 + 0.1 * i.cost.latency as f64
}

/// Cost of writing a node with generic C (clang chooses the instructions). Deliberately
/// above a described instruction's, so that described instructions win when they apply.
pub fn generic_cost(e: &Expr, register_bits: u32) -> f64 {
    generic_cost_with(
        e,
        register_bits,
        GenericPricing::default(),
        &mut SplatFolder::default(),
    )
}

/// How a target's C compiler departs from the generic estimate.
#[derive(Clone, Copy, Default)]
pub struct GenericPricing {
    /// A narrowing conversion is one instruction whatever its ratio
    /// (`Target::narrows_in_one_instruction`).
    pub one_step_narrowing: bool,
    /// A select of lanes narrower than the comparison it selects by narrows the mask first
    /// (`Target::narrows_select_masks`).
    pub narrowed_select_masks: bool,
    /// A truncation of up to four registers into one is one table lookup
    /// (`Target::narrows_by_table`).
    pub table_narrowing: bool,
}

/// How many halvings of the lane width the mask of the comparison that `e`, a select,
/// selects by takes to have the select's lanes (0 where the condition is no comparison of
/// lanes wider than the select's).
fn mask_narrowing_steps(e: &Expr) -> u32 {
    let c = e.arg(0);
    let compared = c.op().is_comparison();
    if !compared || c.ty().is_scalar() {
        return 0;
    }
    let (mask, lanes) = (c.arg(0).ty().elem.bits(), e.ty().elem.bits());
    if mask <= lanes || lanes == 1 {
        return 0;
    }
    (mask / lanes).ilog2()
}

/// [`generic_cost`], folding FPIR definitions with `folder`, as `pricing` says.
fn generic_cost_with(
    e: &Expr,
    register_bits: u32,
    pricing: GenericPricing,
    folder: &mut SplatFolder,
) -> f64 {
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
        // A conversion of a splatted scalar is a splat of the converted scalar: clang
        // converts the scalar and broadcasts it, as it does any splat (a weight widened to
        // dwords for `pmaddwd` costs what the word splat of a `pmullw` costs).
        Op::Cast if matches!(e.arg(0).op(), Op::Broadcast) && e.arg(0).arg(0).ty().is_scalar() => {
            0.5 * regs
        }
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
        | Op::Ge => 1.5 * regs,
        // The comparison's mask has the lanes of what it compares: for a select of narrower
        // lanes, clang narrows it first (`xtn`), a step per halving. Unpriced, a select of
        // two narrowings of i16 lanes by an i16 comparison looked as cheap done on bytes as
        // on the words, and ran at 0.90x clang -O3 on Arm (fuzz_7_181 of seed 7). (Priced
        // on x86 and HVX too, as a conversion of the mask either way, it cost fuzz_7_23
        // 3.2x -> 2.4x on AVX2 and fuzz_7_149 6.0x -> 0.74x in HVX packets.)
        Op::Select if pricing.narrowed_select_masks => {
            1.5 * regs * f64::from(1 + mask_narrowing_steps(e))
        }
        Op::Select => 1.5 * regs,
        // Narrowing conversions are shuffles across registers as well (clang truncates
        // with a byte shuffle and a cross-lane permute per register).
        // Each halving of the lane width is a step (a dword to a byte is two packs or two
        // `xtn`, as a widening is two extensions), except where one instruction narrows by
        // any ratio (AVX-512's `vpmovdb`). Priced as one step on AVX2, clang's truncation of
        // a stride-4 dword gather to bytes looked cheaper than masking and packing, and took
        // 25 operations for 16 lanes where packing takes 6.
        // One `tbl` (its index a constant, loaded once) truncates up to four registers into
        // one: Arm's fuzz_9_185 (u32 lanes saturated to i16, then truncated to bytes) took
        // eight `uqxtn`, `umin` and `xtn` per 16 lanes where clang -O3 takes four `umin`
        // and a `tbl` (0.90x in executed instructions). Priced as the multi-register
        // lookup it is, above two `xtn` (a two-register truncation stays `xtn`, `xtn2`),
        // above what makes a signed clamp (`smin`, `smax` per register) look cheaper than
        // `sqxtn` steps (at 2.5, Arm's fuzz_1_39 of seed 1 clamped and ran 2.58x -> 1.73x),
        // and above what makes `umin` and a lookup look cheaper than six `uqxtn` for a
        // saturation straight to bytes (at 4.5, simd_op_check's four `uqxtn` entries
        // chose `umin`).
        Op::Cast
            if pricing.table_narrowing
                && e.arg(0).ty().elem.bits() > t.elem.bits()
                && t.total_bits() <= register_bits as u64
                && e.arg(0).ty().total_bits() <= 4 * register_bits as u64 =>
        {
            6.0
        }
        Op::Cast if e.arg(0).ty().elem.bits() > t.elem.bits() => {
            let steps = if pricing.one_step_narrowing {
                1
            } else {
                (e.arg(0).ty().elem.bits() / t.elem.bits()).ilog2()
            };
            1.5 * regs * f64::from(steps) + 1.0
        }
        // A widening C conversion is one extension per doubling of the lane width where no
        // described instruction takes the whole step (a byte to a word on Neon or HVX is two
        // `uxtl`/`vzxt` steps, each a register pair on HVX): priced as one, a kernel widening
        // bytes to words by generic casts looked cheaper than one widening to halfwords by
        // an instruction and a widening multiply-add (yuv_to_rgb on HVX, 9.9x -> 6.4x).
        Op::Cast => {
            let from = e.arg(0).ty().elem.bits();
            let doublings = if from >= 8 {
                (t.elem.bits() / from).max(2).ilog2()
            } else {
                1
            };
            1.5 * regs * f64::from(doublings)
        }
        Op::Mul if t.elem.bits() <= 32 => 2.0 * regs,
        // Division of narrow lanes by a constant is what clang makes of it: a widening
        // multiply of each half, the high halves gathered by one shuffle, and a shift
        // (`umull`, `umull2`, `uzp2`, `ushr` for `u16x8 / 3`). Priced as whole-vector C,
        // the same steps spelled out with narrowing shifts (one more instruction) looked
        // cheaper and box_blur3x3 on Neon ran 1.68x -> 1.54x clang -O3.
        // (Signed lanes take a compare and an add more to round toward minus infinity, and a
        // power of two is a shift: both keep the price below.)
        Op::Div
            if t.elem.bits() == 16
                && t.elem.is_int()
                && !t.elem.is_signed()
                && super::cform::positive_divisor(e)
                    .is_some_and(|d| !d.unsigned_abs().is_power_of_two()) =>
        {
            3.5 * regs + 0.5
        }
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
            // Every third lane of a window spanning several registers has no power-of-two
            // structure to split on: clang's shuffle lowering then blends across all of
            // the window's registers for each register of result (measured on AVX2: 32
            // lanes of every third i16 ran 0.79x clang -O3 where 16 lanes ran 0.98x).
            let tangled = if *stride == 3 {
                2.0 * regs * (regs - 1.0)
            } else {
                0.0
            };
            1.5 * regs * f64::from(*stride) + 2.0 * regs + tangled
        }
        // A mask is kept as a byte per lane; less than eight of them are a part of a
        // register that clang moves out with `zip` and widens with an `ushll` and an `and`
        // before a `select` of wider lanes can read it (Arm: a byte compare's mask sliced
        // into quarters for a dword select took five operations a quarter, and fuzz_2_79
        // ran 0.89x clang -O3 where the whole-vector select ran 1.15x).
        Op::Slice { .. } if t.elem == crate::types::Elem::Bool && t.lanes < 8 => 4.5 * regs,
        Op::Slice { .. } | Op::Concat | Op::Interleave | Op::Shuffle(_) => 1.5 * regs,
        // A loop over lanes moves every lane out of and back into a register around a
        // scalar computation of several operations (`cform::lane_loop_reason` says which
        // nodes are written so).
        _ if super::cform::lane_loop_reason_with(e, folder).is_some() => 2.0 * regs + 2.0 * lanes,
        // Everything else is whole-vector C of the operation's definition.
        _ => 2.0 * regs + lanes / 2.0,
    }
}

/// The costs of selected DAGs: each distinct node once (a value used twice is computed
/// once), constant sub-expressions free (clang folds them). With `fold_widening_loads`
/// (`Target::folds_widening_loads`), generic widening casts of dense loads cost what the
/// folded instruction clang makes of them costs. Memoized per node, over many DAGs that
/// share nodes.
///
/// Selection prices every candidate of every node by the cost of its whole selected DAG.
/// Walking that DAG for each candidate made selection quadratic in the depth of a kernel
/// (a 7x7 stencil spent 40% of its compile time in the walks). Instead each node has the
/// list of the nodes its DAG pays for, and a new node joins its operands' lists: sharing
/// is still counted once, and no node is priced twice.
///
/// The lists are in the order a post-order walk meets the nodes, and the sum is taken in
/// that order: the same floating-point sum as a walk, so candidates that tie up to
/// rounding are chosen exactly as before (selection's choices depend on such ties). A
/// node's list starts with its first operand's whole list, so it is stored as that
/// operand and what follows: copying the lists made memory quadratic in a kernel's depth
/// (hundreds of megabytes for a four-register stencil), and the sum continues from the
/// operand's.
pub struct DagCosts {
    register_bits: u32,
    pub(super) fold_widening_loads: bool,
    /// How the target's C compiler departs from the generic estimate.
    pub(super) pricing: GenericPricing,
    /// Strided slices of loads the target's compiler lowers well
    /// (`Target::deinterleaved_loads`).
    pub(super) deinterleaved: &'static [crate::isa::target::DeinterleavedLoad],
    nodes: IdMap<usize, NodeCost>,
    /// Each node's list (by its index in pricing order).
    lists: Vec<PaidList>,
    /// Per node (by its index), the last `stamp` that put it in the list being built:
    /// membership without hashing, the hot path of selection.
    marks: Vec<u32>,
    /// Counts the lists built.
    stamp: u32,
    /// The chain of lists being walked (kept to reuse its allocation).
    chain: Vec<u32>,
    /// Folds the FPIR definitions the costs inspect (`cform::lane_loop_reason`).
    folder: SplatFolder,
}

/// What one node's DAG costs.
struct NodeCost {
    /// The node (its id is an address: holding it keeps the id from being reused).
    _expr: Expr,
    /// Whether the node is a constant (free; clang folds it).
    constant: bool,
    /// Whether the node is the same in every chunk of a row without being a constant
    /// (see [`HOISTED`]).
    invariant: bool,
    /// Its index in pricing order.
    index: u32,
}

/// The nodes a node's DAG pays for (by index) and what each costs, in post-order: every
/// non-constant node, and after each the vector constants it is the first to read.
struct PaidList {
    /// The node whose whole list this one starts with ([`NO_BASE`] for none).
    base: u32,
    /// What follows the base's list.
    rest: Box<[(u32, f64)]>,
    /// The sum of the whole list, in order.
    total: f64,
}

/// What a node costs per chunk, as a share of its cost, where every operand is the same in
/// every chunk (splats of the row's scalars, constants): clang computes it once, before the
/// row's loop. Priced in full, masking a splatted weight's high word for a `vpmaddwd` cost
/// what masking the loaded operand costs, and selection masked the loaded one in every
/// chunk (fuzz_5_98 of seed 5, an 11-term byte product on AVX2: 0.82x clang -O3; the
/// weights masked, 1.01x). It breaks such ties rather than pricing the hoisting: at 0.1,
/// forms holding a widened weight per term looked cheaper than pairs of terms sharing one
/// `vpmaddwd`, and ran slower (fuzz_5_43: 1.58x -> 0.70x).
const HOISTED: f64 = 0.9;

/// [`PaidList::base`] of a list that starts empty.
const NO_BASE: u32 = u32::MAX;

/// A tie-breaker far below any instruction's cost: a vector constant operand takes a
/// register that a scalar-operand form does not (prefer `vmpyi(h, b)` with the constant in
/// a scalar register to `vmpyi(h, h)` with a splat).
const MATERIALIZED_CONSTANT: f64 = 0.01;

impl DagCosts {
    /// An empty memo for registers of `register_bits`.
    pub fn new(register_bits: u32, fold_widening_loads: bool) -> Self {
        DagCosts {
            register_bits,
            fold_widening_loads,
            pricing: GenericPricing::default(),
            deinterleaved: &[],
            nodes: IdMap::default(),
            lists: Vec::new(),
            marks: Vec::new(),
            stamp: 0,
            chain: Vec::new(),
            folder: SplatFolder::default(),
        }
    }

    /// These costs with generic operations priced as `pricing` says.
    pub fn with_pricing(mut self, pricing: GenericPricing) -> Self {
        self.pricing = pricing;
        self
    }

    /// The folder of FPIR definitions, shared with the selection the costs serve.
    pub fn folder(&mut self) -> &mut SplatFolder {
        &mut self.folder
    }

    /// The cost of `e`'s DAG.
    pub fn cost(&mut self, e: &Expr) -> f64 {
        self.price(e);
        self.lists[self.nodes[&e.id()].index as usize].total
    }

    /// Prices `e` and every node below it not priced yet (operands first, without
    /// recursion: expressions nest deeply).
    fn price(&mut self, e: &Expr) {
        for n in crate::ir::visit::post_order_unknown(e, |n| self.nodes.contains_key(&n.id())) {
            let index = self.marks.len() as u32;
            self.marks.push(0);
            let (cost, list) = self.node_cost(&n, index);
            self.lists.push(list);
            self.nodes.insert(n.id(), cost);
        }
    }

    /// Calls `f` on each entry of node `x`'s whole list, in order.
    fn walk_list(lists: &[PaidList], chain: &mut Vec<u32>, x: u32, mut f: impl FnMut(u32, f64)) {
        chain.clear();
        let mut at = x;
        while at != NO_BASE {
            chain.push(at);
            at = lists[at as usize].base;
        }
        for &segment in chain.iter().rev() {
            for &(i, c) in lists[segment as usize].rest.iter() {
                f(i, c);
            }
        }
    }

    /// Whether `n`, whose operands are priced, is the same in every chunk of a row: built
    /// from constants and from scalars a row reads at constant positions (a matrix
    /// product's weights), never from a vector load or a variable (a position, a
    /// reduction's index or a parameter alike: the last are not told apart here).
    fn is_invariant(&self, n: &Expr) -> bool {
        let operand = |a: &Expr| {
            let info = &self.nodes[&a.id()];
            info.constant || info.invariant
        };
        // (A leaf without operands, a variable, is never invariant.)
        let scalar_or_not_a_load = n.ty().is_scalar() || !matches!(n.op(), Op::Load(..));
        scalar_or_not_a_load && !n.args().is_empty() && n.args().iter().all(operand)
    }

    /// The cost of `n` (the `index`-th node priced), whose operands are priced, and its list.
    fn node_cost(&mut self, n: &Expr, index: u32) -> (NodeCost, PaidList) {
        let constant = n.is_constant_over(|a| self.nodes[&a.id()].constant);
        let invariant = !constant && self.is_invariant(n);
        let info = NodeCost {
            _expr: n.clone(),
            constant,
            invariant,
            index,
        };
        if constant {
            let list = PaidList {
                base: NO_BASE,
                rest: Box::new([]),
                total: 0.0,
            };
            return (info, list);
        }
        let mut own = folded_load_cost(n, self.register_bits, self.fold_widening_loads)
            .or_else(|| deinterleaved_load_cost(n, self.deinterleaved))
            .unwrap_or_else(|| {
                generic_cost_with(n, self.register_bits, self.pricing, &mut self.folder)
            });
        // (Splats from scalars are priced as splats are, hoisted or not.)
        if invariant && n.args().iter().any(|a| !a.ty().is_scalar()) {
            own *= HOISTED;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.marks.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        let operands: Vec<u32> = n
            .args()
            .iter()
            .map(|a| &self.nodes[&a.id()])
            .filter(|info| !info.constant)
            .map(|info| info.index)
            .collect();
        let base = operands.first().copied().unwrap_or(NO_BASE);
        let (lists, marks, chain) = (&self.lists, &mut self.marks, &mut self.chain);
        // The first operand's list is this one's start: its entries are only marked.
        if base != NO_BASE {
            Self::walk_list(lists, chain, base, |i, _| marks[i as usize] = stamp);
        }
        // Each other operand's list in turn, without what an earlier one pays for already.
        let mut rest: Vec<(u32, f64)> = Vec::new();
        for &a in operands.iter().skip(1) {
            Self::walk_list(lists, chain, a, |i, c| {
                let mark = &mut marks[i as usize];
                if *mark != stamp {
                    *mark = stamp;
                    rest.push((i, c));
                }
            });
        }
        marks[index as usize] = stamp;
        rest.push((index, own));
        for a in n.args() {
            let info = &self.nodes[&a.id()];
            if info.constant && !a.ty().is_scalar() && marks[info.index as usize] != stamp {
                marks[info.index as usize] = stamp;
                rest.push((info.index, MATERIALIZED_CONSTANT));
            }
        }
        let start = if base == NO_BASE {
            0.0
        } else {
            lists[base as usize].total
        };
        let total = rest.iter().fold(start, |t, &(_, c)| t + c);
        let list = PaidList {
            base,
            rest: rest.into(),
            total,
        };
        (info, list)
    }
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
    // clang folds a load into each widening that reads part of it: a load wider than one
    // widening's operand becomes as many loads, one per widening, and the one load counted
    // for the node is only the first of them. Each part past the first pays a load (half a
    // cycle), so 16 u16 lanes loaded once and widened to two dword registers cost what two
    // 8-lane loads widened cost (clang emits the same two `vpmovzxwd ymm, m128` for both;
    // before, the 16-lane form was priced 1.0 against 1.5, a bias towards wider vectors).
    let load_bits = load.ty().total_bits() as f64;
    match n.op() {
        Op::Instr(i) => {
            let operand_bits = n.arg(0).ty().total_bits() as f64;
            let extra = 0.5 * (1.0 - operand_bits / load_bits).max(0.0);
            i.cost.load_throughput.map(|t| t.max(0.25) as f64 + extra)
        }
        Op::Cast
            if generic_casts
                && !n.ty().is_scalar()
                && n.ty().elem.bits() > load.ty().elem.bits() =>
        {
            let out_regs = (n.ty().total_bits() as f64 / register_bits as f64).ceil();
            let load_regs = (load_bits / register_bits as f64).ceil();
            Some(0.25 * out_regs + 0.5 * (out_regs - load_regs).max(0.0))
        }
        _ => None,
    }
}

/// What a strided slice of a dense load costs where the target's compiler lowers that
/// pattern by a table of its own (`Target::deinterleaved_loads`).
fn deinterleaved_load_cost(
    n: &Expr,
    table: &[crate::isa::target::DeinterleavedLoad],
) -> Option<f64> {
    let Op::Slice { stride, .. } = n.op() else {
        return None;
    };
    // A load read as narrower lanes (the low bytes of words) is the same pattern of bytes.
    let load = match n.arg(0).op() {
        Op::Reinterpret => n.arg(0).arg(0),
        _ => n.arg(0),
    };
    if !matches!(load.op(), Op::Load(..)) || !is_dense(load) {
        return None;
    }
    let bits = n.ty().elem.bits();
    table
        .iter()
        .find(|d| {
            d.stride == *stride && d.elem_bits == bits && d.loaded_bits == load.ty().total_bits()
        })
        .map(|d| d.cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::mk;
    use crate::lower::prepare::tests::entry;
    use crate::types::Elem;
    use crate::util::idhash::IdSet;

    /// The cost of a DAG by one post-order walk, as selection priced candidates before
    /// [`DagCosts`]: the reference the memoized costs must equal bit for bit.
    fn walked_cost(e: &Expr, register_bits: u32) -> f64 {
        let mut constant: IdMap<usize, bool> = IdMap::default();
        let mut materialized: IdSet<usize> = IdSet::default();
        let mut total = 0.0;
        for n in crate::ir::visit::post_order(e) {
            let c = n.is_constant_over(|a| constant[&a.id()]);
            constant.insert(n.id(), c);
            if !c {
                total += folded_load_cost(&n, register_bits, false)
                    .unwrap_or_else(|| generic_cost(&n, register_bits));
                for a in n.args() {
                    if constant[&a.id()] && !a.ty().is_scalar() && materialized.insert(a.id()) {
                        total += MATERIALIZED_CONSTANT;
                    }
                }
            }
        }
        total
    }

    #[test]
    fn memoized_dag_costs_equal_a_walk_and_count_shared_nodes_once() {
        let exprs = [
            "((uint16)in_u16(x) * (uint16)3) + (((uint16)in_u16(x) * (uint16)3) >> (uint16)2)",
            "absd((uint8)in_u8(x), (uint8)in_u8(x + 1)) + min((uint8)in_u8(x), (uint8)in_u8(x + 1))",
            "rounding_shift_right(int32((int16)in_i16(x)) * (int32)7 + int32((int16)in_i16(x + 1)), (int32)3)",
            "select((uint8)in_u8(x) > (uint8)9, (uint8)in_u8(x) - (uint8)9, (uint8)in_u8(x + 2) + (uint8)1)",
            // A chain of terms reading one constant, then a term shared with the chain.
            "(((uint16)in_u16(x) * (uint16)3 + (uint16)in_u16(x + 1) * (uint16)3) + (uint16)in_u16(x + 2) * (uint16)3) + (uint16)in_u16(x + 3) * (uint16)5",
            "((uint16)in_u16(x) * (uint16)3 + (uint16)in_u16(x + 1) * (uint16)7) + ((uint16)in_u16(x + 2) * (uint16)7 + (uint16)in_u16(x) * (uint16)3)",
        ];
        // One memo over all of them, as in a selection: nodes shared between expressions
        // are priced once and reused.
        let mut costs = DagCosts::new(256, false);
        for text in exprs {
            let e = crate::lower::lanes::fold_splats(&entry(text, 16));
            for n in crate::ir::visit::post_order(&e) {
                let walked = walked_cost(&n, 256);
                let memo = costs.cost(&n);
                assert_eq!(memo.to_bits(), walked.to_bits(), "{n}: {memo} vs {walked}");
            }
        }
        // A value used twice is paid once.
        let x = entry("(uint16)in_u16(x) * (uint16)in_u16(x + 1)", 16);
        let twice = mk(Op::Add, vec![x.clone(), x.clone()]);
        let once = costs.cost(&x);
        assert_eq!(costs.cost(&twice), once + generic_cost(&twice, 256));
    }

    /// Where the target says so, a select of bytes by a comparison of words pays the
    /// narrowing of the mask too; a select of the compared width, or of wider lanes, does
    /// not (Arm's fuzz_7_181 of seed 7).
    #[test]
    fn a_select_narrower_than_its_comparison_pays_the_mask_narrowing_where_priced() {
        let by_words =
            "select((uint16)in_u16(x) > (uint16)9, uint8((uint16)in_u16(x)), (uint8)in_u8(x))";
        let same = "select((uint8)in_u8(x) > (uint8)9, (uint8)in_u8(x + 1), (uint8)in_u8(x))";
        let pricing = GenericPricing {
            narrowed_select_masks: true,
            ..GenericPricing::default()
        };
        let priced = |text: &str, pricing| {
            let e = entry(text, 16);
            generic_cost_with(&e, 128, pricing, &mut SplatFolder::default())
        };
        let plain = GenericPricing::default();
        assert_eq!(priced(by_words, pricing), 2.0 * priced(by_words, plain));
        assert_eq!(priced(same, pricing), priced(same, plain));
    }

    /// Where the compiler truncates by table lookup (Arm's `tbl`), a truncation of up to
    /// four registers into one costs one lookup; of more registers, or into more than one,
    /// the steps it costs elsewhere.
    #[test]
    fn a_truncation_into_one_register_is_one_lookup_where_priced() {
        let pricing = GenericPricing {
            table_narrowing: true,
            ..GenericPricing::default()
        };
        let priced = |text: &str, lanes, pricing| {
            let e = entry(text, lanes);
            generic_cost_with(&e, 128, pricing, &mut SplatFolder::default())
        };
        let plain = GenericPricing::default();
        let dwords = "uint8((uint32)in_u32(x))";
        assert_eq!(priced(dwords, 16, pricing), 6.0);
        assert!(priced(dwords, 16, plain) > 6.0);
        // 32 lanes: two registers of result, eight of operand.
        assert_eq!(priced(dwords, 32, pricing), priced(dwords, 32, plain));
    }

    /// A generic widening by four is two extension steps; and a load widened into two
    /// registers costs what two loads each widened into one cost (clang emits one widening
    /// load per register of result either way).
    #[test]
    fn widenings_are_priced_per_step_and_per_register_of_result() {
        let bytes = entry("(uint8)in_u8(x) + (uint8)1", 64);
        let (to_u16, to_i32) = (bytes.cast(Elem::U16), bytes.cast(Elem::I32));
        assert_eq!(
            generic_cost(&to_i32, 2048),
            2.0 * generic_cost(&to_u16, 2048)
        );
        let widened_load = |lanes: u32| {
            let e = entry("int32((uint16)in_u16(x))", lanes);
            let mut costs = DagCosts::new(256, true);
            costs.cost(&e)
        };
        // (Up to the hundredth a load's index adds once per load.)
        let (one, two) = (widened_load(16), 2.0 * widened_load(8));
        assert!((one - two).abs() < 0.05, "{one} vs {two}");
    }

    /// A narrowing by four is two steps, as a widening is.
    #[test]
    fn narrowings_are_priced_per_step() {
        let dwords = entry("(int32)in_i32(x) + (int32)1", 16);
        let (to_i16, to_i8) = (dwords.cast(Elem::I16), dwords.cast(Elem::I8));
        assert_eq!(
            generic_cost(&to_i8, 256) - 1.0,
            2.0 * (generic_cost(&to_i16, 256) - 1.0)
        );
    }
}
