//! Selection strategies: ways to compute a node that no single rule states, behind one
//! small interface (the analogue of egg's `Applier` and of ISLE's external constructors).
//!
//! Selection asks each strategy of the target, in order, for an alternative form of a node
//! and costs it beside the rules' candidates; the cheapest wins. A strategy only proposes:
//! it never decides, and every form it proposes computes exactly the node's lanes (the
//! generic ones by construction over lane-wise nodes, the multiply-add builders checked by
//! evaluation against the node). The generic strategies live here; a target's own (HVX's
//! reduction multiplies, Arm's dot products) live in its folder under `src/targets/` and
//! are listed in its registry entry.

use std::sync::Arc;

use super::lanes::lane_wise;
use super::parts::{HalfOptions, half_memo, parity_memo, sunk_shuffle};
use crate::ir::instr::InstrTable;
use crate::ir::{Expr, Op};
use crate::types::Elem;
use crate::util::idhash::{IdMap, IdSet};

/// A form a strategy proposes for a node.
#[derive(Clone, Debug)]
pub enum Proposal {
    /// Plain IR (or instructions with plain operands): selected as a whole, like the node.
    Select(Expr),
    /// Instructions chosen by the strategy: they stay, and only the operands below them
    /// are selected (like a rule's right-hand side).
    Instructions(Expr),
    /// A form rebuilt by bookkeeping (a sum read as a linear form and written back) that
    /// selection double-checks by evaluation (`linear::agrees`). Lowering takes such forms
    /// on trust while searching and checks those the result uses at the end, selecting
    /// again with every check made as proposed if one fails
    /// (`select::Selector::select_trusting`): most forms that win where they are made lose
    /// further up, and a check evaluates both forms on every validation input.
    Checked(Box<Proposal>),
}

impl Proposal {
    /// `self`, to be checked by evaluation before it is taken.
    pub fn checked(self) -> Proposal {
        Proposal::Checked(Box::new(self))
    }
}

/// What a strategy may read and remember during one selection.
pub struct Context<'s> {
    /// The widest register in bits.
    pub register_bits: u32,
    /// The target's instructions by intrinsic, for strategies that build instructions.
    pub instrs: &'s InstrTable,
    /// Sums that are operands of a larger sum.
    pub(super) inner_sums: &'s IdMap<usize, Expr>,
    /// Nodes the selected expression reads more than once.
    pub(super) shared: &'s IdSet<usize>,
    /// Memo tables by (strategy, part), shared by every node of one selection (a DAG
    /// shares operands, and their parts should be shared too).
    pub(super) memos: &'s mut IdMap<(&'static str, u8), IdMap<usize, Expr>>,
}

impl Context<'_> {
    /// Whether `e` is an operand of a larger sum (built once, for the whole sum).
    pub fn is_inner_sum(&self, e: &Expr) -> bool {
        self.inner_sums.contains_key(&e.id())
    }

    /// Whether the expression being selected reads `e` more than once (then `e` is
    /// computed for its other readers whatever form this reader takes).
    pub fn is_shared(&self, e: &Expr) -> bool {
        self.shared.contains(&e.id())
    }

    /// The memo table `part` of the strategy `name`, kept for the whole selection.
    pub fn memo(&mut self, name: &'static str, part: u8) -> &mut IdMap<usize, Expr> {
        self.memos.entry((name, part)).or_default()
    }
}

/// A way to compute nodes that selection tries beside the rules.
pub trait Strategy: Send + Sync {
    /// A short name (for reports and tests).
    fn name(&self) -> &'static str;
    /// An alternative form of `e`, or `None` where the strategy does not apply.
    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal>;
    /// Whether values wider than a register are computed as register-sized parts (then
    /// lowering also tries chunks of a register of the narrowest type).
    fn splits_wide_values(&self) -> bool {
        false
    }
    /// Whether the strategy reads sums of products as written, so that lowering must not
    /// also try their factored form (it would hide the products from it).
    fn reads_sums_as_written(&self) -> bool {
        false
    }
}

/// The widest register of `e` and its operands exceeds `register_bits`, and `e` computes
/// each lane from the same lane of its operands, at an even lane count of at least four.
fn wide_lane_wise(e: &Expr, register_bits: u32) -> bool {
    let t = e.ty();
    let widest = e
        .args()
        .iter()
        .map(|a| a.ty().total_bits())
        .chain([t.total_bits()])
        .max()
        .unwrap_or(0);
    widest > register_bits as u64 && t.lanes.is_multiple_of(2) && t.lanes >= 4 && lane_wise(e)
}

/// Legalization: a lane-wise value wider than a register (or with a wider operand) is the
/// concatenation of its two halves, each computed at half the lanes, down to halves of
/// `min_bits`, so that every one-register rule applies to each half.
#[derive(Clone, Copy, Debug)]
pub struct SplitWide {
    /// The narrowest register worth splitting down to (Arm's 64-bit halves).
    pub min_bits: u32,
    /// Whether the target loads registers deinterleaved (`ld2` to `ld4`), so that half of
    /// a strided slice is best the same slice of half the load.
    pub structured_loads: bool,
}

impl SplitWide {
    /// The halves of `e`, with one-register operands kept whole when `keep_registers`.
    fn split(
        &self,
        e: &Expr,
        cx: &mut Context<'_>,
        name: &'static str,
        keep_registers: bool,
    ) -> Option<Proposal> {
        let t = e.ty();
        if !wide_lane_wise(e, cx.register_bits) || t.total_bits() / 2 < self.min_bits as u64 {
            return None;
        }
        let how = HalfOptions {
            register_bits: cx.register_bits,
            structured: self.structured_loads,
            keep_registers,
        };
        let mut halves = Vec::new();
        for hi in [false, true] {
            let memo = cx.memo(name, hi as u8);
            halves.push(super::lanes::rebuild_lanes(e, t.lanes / 2, |a| {
                half_memo(a, hi, how, memo)
            })?);
        }
        Expr::build(Op::Concat, None, halves)
            .ok()
            .map(Proposal::Select)
    }
}

impl Strategy for SplitWide {
    fn name(&self) -> &'static str {
        "split wide values"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        self.split(e, cx, self.name(), false)
    }

    fn splits_wide_values(&self) -> bool {
        true
    }
}

/// [`SplitWide`], but operands that fit one register are computed once and sliced: a
/// byte row widened with `ushll` feeds `smlal` and `smlal2` from one register instead of
/// being widened per quarter. Which split is cheaper depends on what the halves feed
/// (pairwise multiply-adds need the taps rebuilt), so selection is offered both.
pub struct SplitWideKeepingRegisters(pub SplitWide);

impl Strategy for SplitWideKeepingRegisters {
    fn name(&self) -> &'static str {
        "split wide values, registers kept whole"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        self.0.split(e, cx, self.name(), true)
    }

    fn splits_wide_values(&self) -> bool {
        true
    }
}

/// A lane-wise value wider than a register as `interleave_vectors(even, odd)`, each half
/// computed at half the lanes from the even or odd lanes of its operands: the layout HVX's
/// widening instructions produce and its narrowing instructions consume.
pub struct Deinterleave;

impl Strategy for Deinterleave {
    fn name(&self) -> &'static str {
        "even and odd lanes"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        if !wide_lane_wise(e, cx.register_bits) {
            return None;
        }
        let t = e.ty();
        let h = t.lanes / 2;
        let mut halves = Vec::new();
        for odd in [false, true] {
            let memo = cx.memo(self.name(), odd as u8);
            halves.push(super::lanes::rebuild_lanes(e, h, |a| {
                parity_memo(a, odd, memo)
            })?);
        }
        Expr::build(Op::Interleave, None, halves)
            .ok()
            .map(Proposal::Select)
    }
}

/// A shuffle of lane-wise arithmetic as the arithmetic of shuffled operands, sunk to the
/// leaves (`super::parts::sunk_shuffle`): rules that consume lanes in block order (x86
/// packs) then meet loads that produce it.
pub struct SinkShuffles;

impl Strategy for SinkShuffles {
    fn name(&self) -> &'static str {
        "sink shuffles"
    }

    fn propose(&self, e: &Expr, _cx: &mut Context<'_>) -> Option<Proposal> {
        sunk_shuffle(e).map(Proposal::Select)
    }
}

/// A 32-bit sum of weighted narrow taps, or of products of half words, as pairwise
/// multiply-adds (`pmaddwd`'s semantics, `super::pairs`), for whole register-sized sums.
pub struct PairwiseMultiplyAdds;

impl Strategy for PairwiseMultiplyAdds {
    fn name(&self) -> &'static str {
        "pairwise multiply-adds"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        // Wider sums are split first; each register-sized half gets its own candidate. A
        // sum inside a larger one is read as part of the whole (reading each part again
        // would be quadratic in the number of taps).
        if e.ty().total_bits() > u64::from(cx.register_bits) || cx.is_inner_sum(e) {
            return None;
        }
        super::pairs::rebuild(e).map(|x| Proposal::Select(x).checked())
    }
}

/// A widening of every `stride`-th lane of a narrow vector to a type `stride` lanes wide
/// (`u32(in(4 * x))` of bytes) as the narrow vector reinterpreted at the wide type, each
/// lane's bits shifted into place and the others masked off (zero extension) or shifted
/// out (sign extension): a shift or an `and` per register instead of the shuffles that
/// gather the lanes (three `pshufb` and two blends per register of result on x86). It
/// relies on the lanes' order in memory being little-endian, as on every target here, and
/// is checked by evaluation all the same. Targets list it among their own strategies once
/// measured: x86 does (a suite kernel gained 1.5x); on HVX it changed a third of the
/// kernels, gaussian7x7 for the worse by half and white_balance for the better by twice.
/// A widening of such lanes clamped by constants is also offered widened first and clamped
/// in the wide lanes ([`widened_before_clamp`]), since lifting narrows the clamp.
pub struct WidenStridedLanesInPlace;

impl Strategy for WidenStridedLanesInPlace {
    fn name(&self) -> &'static str {
        "strided lanes widened in place"
    }

    fn propose(&self, e: &Expr, _cx: &mut Context<'_>) -> Option<Proposal> {
        if !matches!(e.op(), Op::Cast) || e.ty().is_scalar() {
            return None;
        }
        widened_in_place(e)
            .or_else(|| widened_before_clamp(e))
            .map(|x| Proposal::Select(x).checked())
    }
}

/// `cast(min(x, c))` (or `max`) as `min(cast(x), cast(c))` when the cast keeps every value
/// and `x` is, below more such bounds, a strided slice of a load: lifting narrows a clamp
/// to the loaded bytes, which leaves the widening of the clamped bytes to gather; widened
/// first, the slice is widened in place and the bounds are applied to the wide lanes.
fn widened_before_clamp(e: &Expr) -> Option<Expr> {
    let (t, bounded) = (e.ty(), e.arg(0));
    if !matches!(bounded.op(), Op::Min | Op::Max)
        || !t.elem.is_int()
        || !bounded.ty().elem.is_int()
        || !bounded.ty().elem.fits_in(t.elem)
    {
        return None;
    }
    let split = |b: &Expr| -> Option<(Expr, i128)> {
        match (b.arg(0).as_const(), b.arg(1).as_const()) {
            (None, Some(c)) => Some((b.arg(0).clone(), c)),
            (Some(c), None) => Some((b.arg(1).clone(), c)),
            _ => None,
        }
    };
    let (x, c) = split(bounded)?;
    // Only where what sits below the bounds widens in place: elsewhere the narrow clamp
    // is the cheaper one, and proposing the wide one would only cost compile time.
    let mut below = x.clone();
    while matches!(below.op(), Op::Min | Op::Max) {
        below = split(&below)?.0;
    }
    if below.ty().elem == t.elem {
        return None;
    }
    widened_in_place(&below.cast(t.elem))?;
    let bound = Expr::splat(t, c).ok()?;
    Expr::build(bounded.op().clone(), None, vec![x.cast(t.elem), bound]).ok()
}

/// `cast(slice(load))` at `stride` times the width as the load reinterpreted, each lane's
/// bits shifted into place ([`WidenStridedLanesInPlace`]).
fn widened_in_place(e: &Expr) -> Option<Expr> {
    let slice = e.arg(0);
    let Op::Slice { start, stride } = *slice.op() else {
        return None;
    };
    let (t, narrow, whole) = (e.ty(), slice.ty().elem, slice.arg(0));
    let bits = narrow.bits();
    // Only lanes read from memory: their order there is the order a reinterpretation
    // sees. A computed vector may sit in registers in another order (HVX keeps a
    // widened pair's halves interleaved), and its reinterpretation then reads
    // different lanes.
    if !matches!(whole.op(), Op::Load(..))
        || !t.elem.is_int()
        || !narrow.is_int()
        || stride < 2
        || start >= stride
        || t.elem.bits() != bits * stride
        || whole.ty().lanes != t.lanes * stride
    {
        return None;
    }
    // The wide type has the narrow one's signedness, so that its right shift extends
    // as the cast does.
    let wide = crate::types::Elem::from_bits(t.elem.bits(), narrow.is_signed())?;
    let wide_t = t.with_elem(wide);
    let shift = |op: Op, x: Expr, by: u32| -> Option<Expr> {
        if by == 0 {
            return Some(x);
        }
        Expr::build(op, None, vec![x, Expr::splat(wide_t, i128::from(by)).ok()?]).ok()
    };
    let lanes = Expr::build(Op::Reinterpret, Some(wide_t), vec![whole.clone()]).ok()?;
    let top = t.elem.bits() - bits;
    let extended = if narrow.is_signed() || start + 1 == stride {
        let up = shift(Op::Shl, lanes, top - bits * start)?;
        shift(Op::Shr, up, top)?
    } else {
        let down = shift(Op::Shr, lanes, bits * start)?;
        let mask = Expr::splat(wide_t, (1i128 << bits) - 1).ok()?;
        Expr::build(Op::And, None, vec![down, mask]).ok()?
    };
    if wide == t.elem {
        Some(extended)
    } else {
        Expr::build(Op::Reinterpret, Some(t), vec![extended]).ok()
    }
}

/// A widening by four times or more of a slice narrower than `below_bits` as widenings by
/// two, the first of the whole register sliced: `u32(slice(x))` of a quarter of a byte
/// register `x` as `u32(slice(u16(x)))`, the middle type of the operand's signedness so
/// that it extends as the cast does. Arm widens by two per instruction (`ushll`,
/// `ushll2`); a split wide value otherwise widens a quarter of a byte register, which clang
/// does with `zip`, `ushll` and a mask or two shifts per quarter (fuzz_4_60 of seed 4:
/// 0.69x clang -O3 in executed instructions). Wider slices clang widens well itself, and
/// proposing for them too cost a fifth more compile time on Arm for nothing. Targets that
/// widen by any ratio in one instruction (x86 `vpmovzxbd`, RISC-V `vzext.vf4`) do not list
/// it.
pub struct WidenInSteps {
    /// The width in bits below which a slice is widened from its whole register.
    pub below_bits: u32,
}

impl Strategy for WidenInSteps {
    fn name(&self) -> &'static str {
        "widenings in steps"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        if !matches!(e.op(), Op::Cast) || e.ty().is_scalar() {
            return None;
        }
        let (t, x) = (e.ty(), e.arg(0));
        let (to, from) = (t.elem, x.ty().elem);
        if !to.is_int() || !from.is_int() || to.bits() < 4 * from.bits() {
            return None;
        }
        let middle = crate::types::Elem::from_bits(2 * from.bits(), from.is_signed())?;
        let Op::Slice { start, stride: 1 } = *x.op() else {
            return None;
        };
        if x.ty().total_bits() >= u64::from(self.below_bits) {
            return None;
        }
        let whole = x.arg(0);
        let widened = u64::from(whole.ty().lanes) * u64::from(middle.bits());
        if widened > u64::from(cx.register_bits) {
            return None;
        }
        let part = crate::ir::mk_typed(
            Op::Slice { start, stride: 1 },
            x.ty().with_elem(middle),
            vec![whole.cast(middle)],
        );
        Some(Proposal::Select(part.cast(to)))
    }
}

/// A widening of an unsigned type to a signed one (`i16(u8)`) as the zero extension to the
/// unsigned type of the same width, read as signed (`i16(u16(u8))`): the two casts compute
/// the same lanes, since the zero-extended value fits either way, and lifting folds them
/// into one. Targets describe zero extensions (`ushll`, `vpmovzxbw`, `vzext`) at their own
/// result type only, so the folded cast found no instruction and was written generically,
/// eight lanes at a time on Arm where one `ushll2` reads the high half of a whole byte
/// register (fuzz_4_20 of seed 4: 0.98x clang -O3 in executed instructions).
pub struct ZeroExtendThenReinterpret;

impl Strategy for ZeroExtendThenReinterpret {
    fn name(&self) -> &'static str {
        "zero extensions read as signed"
    }

    fn propose(&self, e: &Expr, _cx: &mut Context<'_>) -> Option<Proposal> {
        if !matches!(e.op(), Op::Cast) || e.ty().is_scalar() {
            return None;
        }
        let (to, from) = (e.ty().elem, e.arg(0).ty().elem);
        if !to.is_int() || !from.is_int() || !to.is_signed() || from.is_signed() {
            return None;
        }
        if to.bits() <= from.bits() {
            return None;
        }
        let unsigned = crate::types::Elem::from_bits(to.bits(), false)?;
        Some(Proposal::Select(e.arg(0).cast(unsigned).cast(to)))
    }
}

/// A saturating narrowing converted to a wider type (`i16(saturating_cast<i8>(x))` of u32
/// lanes) as the clamp in the operand's type converted once (`i16(min(x, 127))`): the
/// clamped value fits both types, so the conversions agree. Through the narrow type, Neon
/// narrowed to bytes in two steps and sign-extended back in two (fuzz_4_4 of seed 4: 0.98x
/// clang -O3, which clamps with `umin` and narrows with one `uzp1` per register pair).
pub struct ClampBeforeConverting;

impl Strategy for ClampBeforeConverting {
    fn name(&self) -> &'static str {
        "clamps converted once"
    }

    fn propose(&self, e: &Expr, _cx: &mut Context<'_>) -> Option<Proposal> {
        // Only narrowings of more than one step: one saturating narrowing by half is one
        // instruction (`sqxtun`), cheaper than the clamp's two (fuzz_4_72 of seed 4 ran
        // 1.61x -> 1.45x clang -O3 on Arm with them).
        clamp_converted(e, |to, mid, from| {
            to.bits() > mid.bits() && from.bits() >= 4 * mid.bits()
        })
    }
}

/// `e`, an integer saturating narrowing converted again (`to(saturating_cast<mid>(x))`
/// with `x` of type `from`), as the clamp in `x`'s type converted once, where `wanted`
/// accepts the three types.
fn clamp_converted(e: &Expr, wanted: impl Fn(Elem, Elem, Elem) -> bool) -> Option<Proposal> {
    if !matches!(e.op(), Op::Cast) || e.ty().is_scalar() {
        return None;
    }
    let narrow = e.arg(0);
    if !matches!(narrow.op(), Op::SaturatingCast) {
        return None;
    }
    let x = narrow.arg(0);
    let (to, mid, from) = (e.ty().elem, narrow.ty().elem, x.ty().elem);
    if ![to, mid, from].iter().all(|t| t.is_int()) || !wanted(to, mid, from) {
        return None;
    }
    let clamped = super::narrow_late::clamped_to(x, mid)?;
    Some(Proposal::Select(clamped.cast(to)))
}

/// A saturating narrowing by one step converted back to its operand's width
/// (`u32(saturating_cast<i16>(x))` of i32 lanes) as the clamp in the operand's type, which
/// needs no conversion at all (`ClampBeforeConverting` leaves one-step narrowings alone).
/// For targets whose narrowing and widening cross register halves: on AVX2 they were a
/// `vpackssdw` of the register's halves and a `vpmovsxwd` where clang -O3 clamps with
/// `vpminsd` and `vpmaxsd` (fuzz_5_162 of seed 5). Not Arm's: `sqxtn` and `sxtl` are as
/// cheap as the clamp, and with it fuzz_4_72 of seed 4 ran 1.61x -> 1.45x clang -O3.
/// Only from operands of at least `min_bits`. On AVX2 words too: `vpacksswb` and
/// `vpmovsxbw` are two more shuffles on the port a strided gather of words already fills
/// (fuzz_7_37 and fuzz_7_151 of seed 7, every fourth word: 0.87x -> 1.00x clang -O3, which
/// clamps); as a clamp, fuzz_3_16 of seed 3 (every third word) went 1.04x -> 1.00x, the
/// same code as clang's.
pub struct ClampConvertedBack {
    /// The narrowest operand type the clamp is offered for, in bits.
    pub min_bits: u32,
}

impl Strategy for ClampConvertedBack {
    fn name(&self) -> &'static str {
        "clamps converted back"
    }

    fn propose(&self, e: &Expr, _cx: &mut Context<'_>) -> Option<Proposal> {
        clamp_converted(e, |to, mid, from| {
            to.bits() == from.bits() && mid.bits() < from.bits() && from.bits() >= self.min_bits
        })
    }
}

/// The generic strategies that pay only where a target's instructions read the forms they
/// make: each target takes those measured to change its code. Each one offered where it
/// never wins still selects every form it proposes: on HVX the two together were three
/// quarters of depthwise_conv's selection (51,761 nodes at 128 lanes, 217 ms; 51 ms
/// without), and neither changed a suite kernel, a simd_op_check entry or a fuzz kernel
/// of seeds 5 and 7 on HVX or RISC-V.
#[derive(Clone, Copy, Debug)]
pub struct OptionalStrategies {
    /// [`ZeroExtendThenReinterpret`] (x86's and Arm's widenings read it).
    pub zero_extensions_read_as_signed: bool,
    /// [`PairwiseMultiplyAdds`] (x86's `pmaddwd` reads it).
    pub pairwise_multiply_adds: bool,
}

/// The strategies every target has, around its own: `split` (when the target legalizes
/// wide values by halves; offered both ways, with one-register operands kept whole and
/// rebuilt), `before` (layouts of its own, such as HVX's deinterleaving),
/// shuffles sunk to the leaves, zero extensions read as signed (if `optional` says so),
/// clamps converted once, `own` (its multiply-add builders), then pairwise multiply-adds
/// (if `optional` says so). The order only breaks ties between equally cheap forms.
pub fn with_generic(
    split: Option<SplitWide>,
    before: Vec<Arc<dyn Strategy>>,
    own: Vec<Arc<dyn Strategy>>,
    optional: OptionalStrategies,
) -> Vec<Arc<dyn Strategy>> {
    let mut out: Vec<Arc<dyn Strategy>> = Vec::new();
    if let Some(s) = split {
        out.push(Arc::new(SplitWideKeepingRegisters(s)));
        out.push(Arc::new(s));
    }
    out.extend(before);
    out.push(Arc::new(SinkShuffles));
    if optional.zero_extensions_read_as_signed {
        out.push(Arc::new(ZeroExtendThenReinterpret));
    }
    out.push(Arc::new(ClampBeforeConverting));
    out.extend(own);
    if optional.pairwise_multiply_adds {
        out.push(Arc::new(PairwiseMultiplyAdds));
    }
    out
}
