//! Lane expressions: what a vendor's pseudocode computes for one result lane, in exact
//! integer arithmetic, and their translation into one vector expression of harrow IR.
//!
//! Vendors describe an instruction lane by lane, with unbounded integers and explicit
//! truncations and saturations (Intel's `Saturate16(a[i+15:i] + b[i+15:i])`). An importer
//! evaluates the pseudocode once per result lane into a [`LaneExpr`]; [`vectorize`] checks
//! that every lane computes the same function of its inputs (only which input lanes it reads
//! may differ) and writes that function once over whole vectors, reading the inputs through
//! slices or shuffles where lanes are not read in order. Types are chosen from value ranges,
//! so that every intermediate is exact; truncations are pushed down through wrapping
//! operators so that `Truncate16(a + b)` of 16-bit lanes is a 16-bit add, not a 32-bit one.

use std::fmt::Write as _;
use std::rc::Rc;

use crate::ir::{Expr, Op};
use crate::types::{Elem, Type};

/// A binary operator of exact integer arithmetic (comparisons give 0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Bitwise, on two's complement values.
    And,
    Or,
    Xor,
    /// `a * 2^b`.
    Shl,
    /// `floor(a / 2^b)`.
    Shr,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// An exact integer computed from input lanes.
#[derive(Clone, Debug)]
pub enum LaneExpr {
    /// Lane `lane` of operand `operand` read as a vector of `elem`.
    Input {
        operand: usize,
        lane: u32,
        elem: Elem,
    },
    /// A constant.
    Const(i128),
    /// The instruction's immediate operand, evaluated with this value; the semantics name it.
    Imm(i128),
    /// Exact arithmetic.
    Bin(BinOp, Rc<LaneExpr>, Rc<LaneExpr>),
    /// `-a`.
    Neg(Rc<LaneExpr>),
    /// `|a|`.
    Abs(Rc<LaneExpr>),
    /// Bitwise not of a value read as `elem` (the result is `elem`'s value of the flipped bits).
    Not(Elem, Rc<LaneExpr>),
    /// `c != 0 ? a : b`.
    Select(Rc<LaneExpr>, Rc<LaneExpr>, Rc<LaneExpr>),
    /// The value reduced modulo `2^bits` into `elem`'s range.
    Wrap(Elem, Rc<LaneExpr>),
    /// The value clamped to `elem`'s range.
    Saturate(Elem, Rc<LaneExpr>),
    /// A bit count of the value's bits read as the unsigned `elem` (Arm's `CNT`, `CLZ`).
    Count(CountOp, Elem, Rc<LaneExpr>),
}

/// What [`LaneExpr::Count`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CountOp {
    /// Set bits.
    Ones,
    /// Zeros above the highest set bit.
    LeadingZeros,
}

/// An inclusive range of values.
pub type Range = (i128, i128);

fn elem_range(e: Elem) -> Range {
    (e.min_value(), e.max_value().unwrap_or(i128::MAX))
}

/// The range of a bitwise result of operands in `a` and `b`.
fn bitwise_range(a: Range, b: Range) -> Range {
    let bits = |r: Range| {
        let m = r.0.unsigned_abs().max(r.1.unsigned_abs());
        128 - m.leading_zeros()
    };
    let n = bits(a).max(bits(b)).min(126);
    if a.0 >= 0 && b.0 >= 0 {
        (0, (1i128 << n) - 1)
    } else {
        (-(1i128 << n), (1i128 << n) - 1)
    }
}

impl LaneExpr {
    /// The exact range of values, or `None` when it is not bounded in 126 bits.
    pub fn range(&self) -> Option<Range> {
        // Shared sub-expressions are visited once (a value doubled in a loop is a DAG far
        // smaller than its tree).
        let mut memo = std::collections::HashMap::new();
        self.range_in(&mut memo)
    }

    fn range_in(
        &self,
        memo: &mut std::collections::HashMap<*const LaneExpr, Option<Range>>,
    ) -> Option<Range> {
        let key = self as *const LaneExpr;
        if let Some(r) = memo.get(&key) {
            return *r;
        }
        let r = self.range_uncached(memo);
        memo.insert(key, r);
        r
    }

    fn range_uncached(
        &self,
        memo: &mut std::collections::HashMap<*const LaneExpr, Option<Range>>,
    ) -> Option<Range> {
        Some(match self {
            LaneExpr::Input { elem, .. } => elem_range(*elem),
            LaneExpr::Const(c) | LaneExpr::Imm(c) => (*c, *c),
            LaneExpr::Neg(a) => {
                let (lo, hi) = a.range_in(memo)?;
                (hi.checked_neg()?, lo.checked_neg()?)
            }
            LaneExpr::Abs(a) => {
                let (lo, hi) = a.range_in(memo)?;
                let m = lo.checked_abs()?.max(hi.checked_abs()?);
                if lo >= 0 {
                    (lo, hi)
                } else if hi <= 0 {
                    (hi.checked_abs()?, m)
                } else {
                    (0, m)
                }
            }
            LaneExpr::Not(e, _) | LaneExpr::Wrap(e, _) | LaneExpr::Saturate(e, _) => elem_range(*e),
            LaneExpr::Count(_, e, _) => (0, i128::from(e.bits())),
            LaneExpr::Select(_, a, b) => {
                let (a, b) = (a.range_in(memo)?, b.range_in(memo)?);
                (a.0.min(b.0), a.1.max(b.1))
            }
            LaneExpr::Bin(op, a, b) => {
                let (ra, rb) = (a.range_in(memo)?, b.range_in(memo)?);
                bin_range(*op, ra, rb)?
            }
        })
        .filter(|(lo, hi)| lo.unsigned_abs() < 1 << 126 && hi.unsigned_abs() < 1 << 126)
    }
}

fn bin_range(op: BinOp, a: Range, b: Range) -> Option<Range> {
    use BinOp::*;
    Some(match op {
        Add => (a.0.checked_add(b.0)?, a.1.checked_add(b.1)?),
        Sub => (a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?),
        Mul => {
            let p = [
                a.0.checked_mul(b.0)?,
                a.0.checked_mul(b.1)?,
                a.1.checked_mul(b.0)?,
                a.1.checked_mul(b.1)?,
            ];
            (*p.iter().min()?, *p.iter().max()?)
        }
        // A mask with no negative value keeps the result within it.
        And if a.0 >= 0 || b.0 >= 0 => {
            let hi = match (a.0 >= 0, b.0 >= 0) {
                (true, true) => a.1.min(b.1),
                (true, false) => a.1,
                _ => b.1,
            };
            (0, hi)
        }
        And | Or | Xor => bitwise_range(a, b),
        Shl => {
            if b.0 < 0 || b.1 > 126 {
                return None;
            }
            let s = b.1 as u32;
            let lo = if a.0 < 0 {
                a.0.checked_mul(1 << s)?
            } else {
                a.0
            };
            let hi = if a.1 > 0 {
                a.1.checked_mul(1 << s)?
            } else {
                a.1
            };
            (lo, hi)
        }
        Shr => {
            if b.0 < 0 {
                return None;
            }
            (a.0.min(0), a.1.max(0))
        }
        Min => (a.0.min(b.0), a.1.min(b.1)),
        Max => (a.0.max(b.0), a.1.max(b.1)),
        Eq | Ne | Lt | Le | Gt | Ge => (0, 1),
    })
}

/// Why lanes could not become one vector expression.
pub type LaneError = String;

/// The smallest element type holding `r` (unsigned when `r` has no negative value).
pub fn elem_for(r: Range) -> Option<Elem> {
    [8, 16, 32, 64].into_iter().find_map(|bits| {
        let e = Elem::from_bits(bits, r.0 < 0)?;
        let (lo, hi) = elem_range(e);
        (lo <= r.0 && r.1 <= hi).then_some(e)
    })
}

/// The shape of a lane expression with input lanes left out, and the input lanes in
/// visiting order: two lanes compute the same function when their shapes are equal.
fn shape(e: &LaneExpr, out: &mut String, lanes: &mut Vec<(usize, u32)>) {
    match e {
        LaneExpr::Input {
            operand,
            lane,
            elem,
        } => {
            let _ = write!(out, "in:{}", elem.name());
            lanes.push((*operand, *lane));
        }
        LaneExpr::Const(c) => {
            let _ = write!(out, "{c}");
        }
        LaneExpr::Imm(_) => out.push_str("imm"),
        LaneExpr::Bin(op, a, b) => {
            let _ = write!(out, "({op:?} ");
            shape(a, out, lanes);
            out.push(' ');
            shape(b, out, lanes);
            out.push(')');
        }
        LaneExpr::Neg(a) | LaneExpr::Abs(a) => {
            out.push_str(if matches!(e, LaneExpr::Neg(_)) {
                "(neg "
            } else {
                "(abs "
            });
            shape(a, out, lanes);
            out.push(')');
        }
        LaneExpr::Not(t, a) | LaneExpr::Wrap(t, a) | LaneExpr::Saturate(t, a) => {
            let head = match e {
                LaneExpr::Not(..) => "not",
                LaneExpr::Wrap(..) => "wrap",
                _ => "sat",
            };
            let _ = write!(out, "({head} {} ", t.name());
            shape(a, out, lanes);
            out.push(')');
        }
        LaneExpr::Count(op, t, a) => {
            let _ = write!(out, "({op:?} {} ", t.name());
            shape(a, out, lanes);
            out.push(')');
        }
        LaneExpr::Select(c, a, b) => {
            out.push_str("(select ");
            for x in [c, a, b] {
                shape(x, out, lanes);
                out.push(' ');
            }
            out.push(')');
        }
    }
}

/// An operand of the instruction as the importer declares it.
#[derive(Clone, Debug)]
pub struct Operand {
    /// Its name in the semantics.
    pub name: String,
    /// Its declared type.
    pub ty: Type,
}

/// One expression per result lane, all of element type `result.elem`. Returns the
/// semantics over the operands, of type `result`. Lanes at the top that are all zero (a
/// narrowing into the low part of a register) are a zero vector concatenated above.
pub fn vectorize(
    lanes: &[Rc<LaneExpr>],
    operands: &[Operand],
    imm: Option<&str>,
    result: Type,
) -> Result<Expr, LaneError> {
    let is_zero = |e: &LaneExpr| match e {
        LaneExpr::Const(0) => true,
        LaneExpr::Wrap(_, x) => matches!(**x, LaneExpr::Const(0)),
        _ => false,
    };
    let live = lanes.len() - lanes.iter().rev().take_while(|l| is_zero(l)).count();
    if live == 0 {
        return Ok(Expr::bits(result.elem, 0).broadcast(result.lanes));
    }
    if live < lanes.len() && !live.is_power_of_two() {
        return Err("a result zero above an odd number of lanes".into());
    }
    let body = uniform(
        &lanes[..live],
        operands,
        imm,
        result.with_lanes(live as u32),
    )?;
    if live == lanes.len() || result.elem == Elem::Bool {
        // A mask's unused high bits are no lanes.
        if result.elem == Elem::Bool && !live.is_power_of_two() {
            return Err("a mask result of an odd number of lanes".into());
        }
        return Ok(body);
    }
    let zeros = Expr::bits(result.elem, 0).broadcast((lanes.len() - live) as u32);
    build(Op::Concat, None, vec![body, zeros])
}

/// As [`vectorize`]; where the lanes are not one function of their inputs, each half of
/// the result that is (Arm's `_high` narrowings keep the low half of the destination and
/// write the high half) is written once and the halves are concatenated.
pub fn vectorize_halves(
    lanes: &[Rc<LaneExpr>],
    operands: &[Operand],
    imm: Option<&str>,
    result: Type,
) -> Result<Expr, LaneError> {
    let whole = vectorize(lanes, operands, imm, result);
    let half = lanes.len() / 2;
    if whole.is_ok() || half < 2 || !lanes.len().is_multiple_of(2) || result.elem == Elem::Bool {
        return whole;
    }
    let t = result.with_lanes(half as u32);
    let (Ok(lo), Ok(hi)) = (
        vectorize(&lanes[..half], operands, imm, t),
        vectorize(&lanes[half..], operands, imm, t),
    ) else {
        return whole;
    };
    build(Op::Concat, None, vec![lo, hi])
}

/// `x` where `e` is `2 * x` (or `x * 2`).
fn doubled(e: &LaneExpr) -> Option<&Rc<LaneExpr>> {
    match e {
        LaneExpr::Bin(BinOp::Mul, a, b) => match (&**a, &**b) {
            (LaneExpr::Const(2), _) => Some(b),
            (_, LaneExpr::Const(2)) => Some(a),
            _ => None,
        },
        _ => None,
    }
}

/// The deepest lane expression translated (Intel's nest a few dozen levels; a hostile
/// input could chain thousands, and translation recurses).
const MAX_LANE_DEPTH: usize = 400;

/// The depth of `e`, counted without recursion, or `None` past [`MAX_LANE_DEPTH`].
fn depth(e: &LaneExpr) -> Option<usize> {
    let mut stack = vec![(e, 1usize)];
    let mut deepest = 0;
    while let Some((n, d)) = stack.pop() {
        if d > MAX_LANE_DEPTH {
            return None;
        }
        deepest = deepest.max(d);
        match n {
            LaneExpr::Input { .. } | LaneExpr::Const(_) | LaneExpr::Imm(_) => {}
            LaneExpr::Bin(_, a, b) => {
                stack.push((a, d + 1));
                stack.push((b, d + 1));
            }
            LaneExpr::Neg(a)
            | LaneExpr::Abs(a)
            | LaneExpr::Not(_, a)
            | LaneExpr::Wrap(_, a)
            | LaneExpr::Saturate(_, a)
            | LaneExpr::Count(_, _, a) => stack.push((a, d + 1)),
            LaneExpr::Select(c, a, b) => {
                stack.push((c, d + 1));
                stack.push((a, d + 1));
                stack.push((b, d + 1));
            }
        }
    }
    Some(deepest)
}

/// The largest lane expression translated, counted as a tree (translation writes shared
/// values out once per use).
const MAX_LANE_SIZE: u64 = 100_000;

/// The number of nodes of `e` written out as a tree (saturating), shared parts counted once
/// per use but visited once.
fn tree_size(e: &LaneExpr, memo: &mut std::collections::HashMap<*const LaneExpr, u64>) -> u64 {
    let key = e as *const LaneExpr;
    if let Some(n) = memo.get(&key) {
        return *n;
    }
    let kids: u64 = match e {
        LaneExpr::Input { .. } | LaneExpr::Const(_) | LaneExpr::Imm(_) => 0,
        LaneExpr::Bin(_, a, b) => tree_size(a, memo).saturating_add(tree_size(b, memo)),
        LaneExpr::Neg(a)
        | LaneExpr::Abs(a)
        | LaneExpr::Not(_, a)
        | LaneExpr::Wrap(_, a)
        | LaneExpr::Saturate(_, a)
        | LaneExpr::Count(_, _, a) => tree_size(a, memo),
        LaneExpr::Select(c, a, b) => tree_size(c, memo)
            .saturating_add(tree_size(a, memo))
            .saturating_add(tree_size(b, memo)),
    };
    let n = kids.saturating_add(1);
    memo.insert(key, n);
    n
}

/// [`vectorize`] of lanes that all compute one function.
fn uniform(
    lanes: &[Rc<LaneExpr>],
    operands: &[Operand],
    imm: Option<&str>,
    result: Type,
) -> Result<Expr, LaneError> {
    let first = lanes.first().ok_or("no result lanes")?;
    for lane in lanes {
        if depth(lane).is_none() {
            return Err(format!(
                "a lane's expression nests more than {MAX_LANE_DEPTH} levels"
            ));
        }
        if tree_size(lane, &mut std::collections::HashMap::new()) > MAX_LANE_SIZE {
            return Err(format!(
                "a lane's expression has more than {MAX_LANE_SIZE} nodes written out"
            ));
        }
    }
    let mut first_shape = String::new();
    let mut leaf_lanes: Vec<Vec<(usize, u32)>> = Vec::new();
    {
        let mut l0 = Vec::new();
        shape(first, &mut first_shape, &mut l0);
        leaf_lanes.extend(l0.into_iter().map(|l| vec![l]));
    }
    for (k, lane) in lanes.iter().enumerate().skip(1) {
        let mut s = String::new();
        let mut ls = Vec::new();
        shape(lane, &mut s, &mut ls);
        if s != first_shape {
            return Err(format!(
                "result lanes compute different functions (lane 0 is `{first_shape}`, lane {k} is `{s}`)"
            ));
        }
        for (p, l) in ls.into_iter().enumerate() {
            leaf_lanes[p].push(l);
        }
    }
    let mut b = Builder {
        operands,
        imm,
        leaf_lanes: &leaf_lanes,
        next_leaf: 0,
        lanes: lanes.len() as u32,
    };
    if result.elem == Elem::Bool {
        return b.condition(first);
    }
    b.wrapped(first, result.elem)
}

struct Builder<'a> {
    operands: &'a [Operand],
    /// The immediate's name.
    imm: Option<&'a str>,
    leaf_lanes: &'a [Vec<(usize, u32)>],
    next_leaf: usize,
    lanes: u32,
}

fn build(op: Op, ty: Option<Type>, args: Vec<Expr>) -> Result<Expr, LaneError> {
    Expr::build(op, ty, args).map_err(|e| format!("type error building the semantics: {e}"))
}

impl Builder<'_> {
    fn splat(&self, elem: Elem, value: i128) -> Result<Expr, LaneError> {
        let bits = crate::types::from_i128(value, elem);
        Ok(Expr::bits(elem, bits).broadcast(self.lanes))
    }

    /// Operand `k` read as a vector of `elem`.
    fn view(&self, operand: usize, elem: Elem) -> Result<Expr, LaneError> {
        let op = self
            .operands
            .get(operand)
            .ok_or("input of an unknown operand")?;
        let total = op.ty.total_bits() as u32;
        if !total.is_multiple_of(elem.bits()) {
            return Err(format!(
                "operand `{}` cannot be read as {}",
                op.name,
                elem.name()
            ));
        }
        let v = Expr::var(op.name.as_str(), op.ty);
        let view = Type::vec(elem, total / elem.bits());
        if view == op.ty {
            Ok(v)
        } else if view.lanes == op.ty.lanes {
            Ok(v.cast(elem))
        } else {
            build(Op::Reinterpret, Some(view), vec![v])
        }
    }

    /// The input vector for the next leaf, read as `elem` lanes.
    fn input(&mut self, elem: Elem) -> Result<Expr, LaneError> {
        let reads = &self.leaf_lanes[self.next_leaf];
        self.next_leaf += 1;
        let n = self.lanes;
        let mut ops: Vec<usize> = reads.iter().map(|r| r.0).collect();
        ops.sort_unstable();
        ops.dedup();
        let views: Vec<Expr> = ops
            .iter()
            .map(|&k| self.view(k, elem))
            .collect::<Result<_, _>>()?;
        let per = views[0].ty().lanes;
        if views.iter().any(|v| v.ty().lanes != per) {
            return Err("a result lane reads operands of different sizes".into());
        }
        let idx: Vec<u32> = reads
            .iter()
            .map(|(k, l)| ops.iter().position(|o| o == k).unwrap_or(0) as u32 * per + l)
            .collect();
        if idx.iter().any(|&l| l >= per * views.len() as u32) {
            return Err("reads past the end of an operand".into());
        }
        if views.len() == 1 {
            let v = views.into_iter().next().unwrap_or_else(|| unreachable!());
            if idx.iter().enumerate().all(|(k, &l)| l == k as u32) && n == per {
                return Ok(v);
            }
            // A scalar read by every lane is a broadcast.
            if per == 1 && v.ty().is_scalar() {
                return Ok(if n == 1 { v } else { v.broadcast(n) });
            }
            let start = idx[0];
            let stride = if n > 1 {
                idx[1].wrapping_sub(idx[0])
            } else {
                1
            };
            let arith = n > 1
                && idx[1] > idx[0]
                && idx
                    .iter()
                    .enumerate()
                    .all(|(k, &l)| l == start + stride * k as u32);
            if n == 1 || arith {
                return build(
                    Op::Slice {
                        start,
                        stride: stride.max(1),
                    },
                    Some(Type::vec(elem, n)),
                    vec![v],
                );
            }
            return build(Op::Shuffle(idx.into()), None, vec![v]);
        }
        build(Op::Shuffle(idx.into()), None, views)
    }

    /// The immediate as a vector of `elem` (the semantics read it as a constant of the type
    /// where it stands).
    fn imm_var(&self, elem: Elem) -> Result<Expr, LaneError> {
        let name = self.imm.ok_or("an immediate without a name")?;
        Ok(Expr::var(name, Type::vec(elem, self.lanes)))
    }

    /// `e` exactly, at type `t` (which holds it): the immediate directly at `t`.
    fn at(&mut self, e: &LaneExpr, t: Elem) -> Result<Expr, LaneError> {
        if let LaneExpr::Imm(_) = e {
            return self.imm_var(t);
        }
        Ok(self.exact(e)?.cast(t))
    }

    /// `e` reduced modulo `2^bits` into `elem`: wrapping operators are computed at `elem`'s
    /// width directly.
    fn wrapped(&mut self, e: &LaneExpr, elem: Elem) -> Result<Expr, LaneError> {
        use BinOp::*;
        match e {
            LaneExpr::Const(c) => self.splat(elem, *c),
            LaneExpr::Imm(v) if elem_range(elem).0 <= *v && *v <= elem_range(elem).1 => {
                self.imm_var(elem)
            }
            LaneExpr::Input { elem: ie, .. } => Ok(self.input(*ie)?.cast(elem)),
            LaneExpr::Bin(op @ (Add | Sub | Mul | And | Or | Xor), a, b) => {
                let a = self.wrapped(a, elem)?;
                let b = self.wrapped(b, elem)?;
                build(ir_op(*op), None, vec![a, b])
            }
            LaneExpr::Bin(Shl, a, b) if b.range().is_some_and(|r| r.0 >= 0) => {
                let x = self.wrapped(a, elem)?;
                let y = self.amount(b, elem)?;
                build(Op::Shl, None, vec![x, y])
            }
            LaneExpr::Select(c, a, b) => {
                let c = self.condition(c)?;
                let a = self.wrapped(a, elem)?;
                let b = self.wrapped(b, elem)?;
                build(Op::Select, None, vec![c, a, b])
            }
            LaneExpr::Neg(a) => {
                let a = self.wrapped(a, elem)?;
                let zero = self.splat(elem, 0)?;
                build(Op::Sub, None, vec![zero, a])
            }
            LaneExpr::Not(t, a) if t.bits() >= elem.bits() => {
                let a = self.wrapped(a, elem)?;
                build(Op::Not, None, vec![a])
            }
            LaneExpr::Wrap(t, a) if t.bits() >= elem.bits() => self.wrapped(a, elem),
            _ => {
                let x = self.exact(e)?;
                Ok(x.cast(elem))
            }
        }
    }

    /// `e` at a type that holds every value it takes.
    fn exact(&mut self, e: &LaneExpr) -> Result<Expr, LaneError> {
        let range = e.range().ok_or("a value is not bounded in 64 bits")?;
        let here = elem_for(range).ok_or("needs more than 64 bits")?;
        match e {
            LaneExpr::Input { elem, .. } => self.input(*elem),
            LaneExpr::Const(c) => self.splat(here, *c),
            LaneExpr::Imm(_) => self.imm_var(here),
            LaneExpr::Wrap(t, a) => {
                if let Some(r) = a.range()
                    && elem_range(*t).0 <= r.0
                    && r.1 <= elem_range(*t).1
                {
                    let x = self.exact(a)?;
                    return Ok(x.cast(*t));
                }
                self.wrapped(a, *t)
            }
            LaneExpr::Saturate(t, a) if a.range().and_then(elem_for).is_none() => {
                self.saturating_wide(*t, a)
            }
            LaneExpr::Saturate(t, a) => {
                let r = a.range().ok_or("a value is not bounded in 64 bits")?;
                let x = self.exact(a)?;
                if elem_range(*t).0 <= r.0 && r.1 <= elem_range(*t).1 {
                    Ok(x.cast(*t))
                } else {
                    build(Op::SaturatingCast, Some(x.ty().with_elem(*t)), vec![x])
                }
            }
            LaneExpr::Not(t, a) => {
                let x = self.wrapped(a, *t)?;
                build(Op::Not, None, vec![x])
            }
            LaneExpr::Count(op, t, a) => {
                let x = self.wrapped(a, *t)?;
                let op = match op {
                    CountOp::Ones => Op::Popcount,
                    CountOp::LeadingZeros => Op::CountLeadingZeros,
                };
                Ok(build(op, None, vec![x])?.cast(here))
            }
            LaneExpr::Neg(a) => {
                let x = self.exact(a)?.cast(here);
                let zero = self.splat(here, 0)?;
                build(Op::Sub, None, vec![zero, x])
            }
            LaneExpr::Abs(a) => {
                let x = self.exact(a)?;
                if !x.ty().elem.is_signed() {
                    return Ok(x.cast(here));
                }
                Ok(build(Op::Abs, None, vec![x])?.cast(here))
            }
            LaneExpr::Select(c, a, b) => {
                let c = self.condition(c)?;
                let (ra, rb) = (a.range().ok_or("unbounded")?, b.range().ok_or("unbounded")?);
                let t =
                    elem_for((ra.0.min(rb.0), ra.1.max(rb.1))).ok_or("needs more than 64 bits")?;
                let a = self.at(a, t)?;
                let b = self.at(b, t)?;
                build(Op::Select, None, vec![c, a, b])
            }
            LaneExpr::Bin(op, a, b) => self.binary(*op, a, b, range),
        }
    }

    /// `Saturate(t, a)` where `a` itself needs more than 64 bits: the operators of harrow IR
    /// that saturate without a wider type, where `a` has their form (Arm's 64-bit
    /// saturating adds, its doubling multiplies of 32-bit lanes).
    fn saturating_wide(&mut self, t: Elem, a: &LaneExpr) -> Result<Expr, LaneError> {
        let fits = |x: &LaneExpr| {
            x.range()
                .is_some_and(|r| elem_range(t).0 <= r.0 && r.1 <= elem_range(t).1)
        };
        match a {
            // `sat(x + y)`, `sat(x - y)` of values of the type.
            LaneExpr::Bin(op @ (BinOp::Add | BinOp::Sub), x, y) if fits(x) && fits(y) => {
                let (x, y) = (self.at(x, t)?, self.at(y, t)?);
                let op = if *op == BinOp::Add {
                    Op::SaturatingAdd
                } else {
                    Op::SaturatingSub
                };
                build(op, None, vec![x, y])
            }
            // `sat(2 * x * y)` where `x * y` fits: a saturating doubling.
            LaneExpr::Bin(BinOp::Mul, two_x, y) if let Some(x) = doubled(two_x) => {
                let p = LaneExpr::Bin(BinOp::Mul, x.clone(), y.clone());
                if !fits(&p) {
                    return Err("needs more than 64 bits".into());
                }
                let p = self.at(&p, t)?;
                build(Op::SaturatingAdd, None, vec![p.clone(), p])
            }
            // `sat((2 * x * y [+ 2^(k-1)]) >> k)` of `k`-bit `x` and `y`: a (rounding)
            // multiply by a fraction, `mul_shift_right(x, y, k - 1)`.
            LaneExpr::Bin(BinOp::Shr, p, k) => {
                let k = match **k {
                    LaneExpr::Const(k) => k,
                    _ => return Err("needs more than 64 bits".into()),
                };
                if k != i128::from(t.bits()) {
                    return Err("needs more than 64 bits".into());
                }
                let (prod, rounding) = match &**p {
                    LaneExpr::Bin(BinOp::Add, prod, r) if matches!(**r, LaneExpr::Const(c) if k >= 1 && c == 1 << (k - 1)) => {
                        (prod, true)
                    }
                    _ => (p, false),
                };
                let LaneExpr::Bin(BinOp::Mul, two_x, y) = &**prod else {
                    return Err("needs more than 64 bits".into());
                };
                let x = doubled(two_x).ok_or("needs more than 64 bits")?;
                if k != i128::from(t.bits()) || !fits(x) || !fits(y) {
                    return Err("needs more than 64 bits".into());
                }
                let (x, y) = (self.at(x, t)?, self.at(y, t)?);
                let unsigned = Elem::from_bits(t.bits(), false).ok_or("no such type")?;
                let q = self.splat(unsigned, k - 1)?;
                let op = if rounding {
                    Op::RoundingMulShiftRight
                } else {
                    Op::MulShiftRight
                };
                build(op, None, vec![x, y, q])
            }
            _ => Err("needs more than 64 bits".into()),
        }
    }

    /// `(x + 2^(k-1)) >> k` where the sum needs more than 64 bits: `rounding_shift_right`.
    fn rounding_shift_wide(&mut self, a: &LaneExpr, b: &LaneExpr) -> Result<Expr, LaneError> {
        let k = match *b {
            LaneExpr::Const(k) | LaneExpr::Imm(k) => k,
            _ => return Err("needs more than 64 bits".into()),
        };
        let LaneExpr::Bin(BinOp::Add, x, r) = a else {
            return Err("needs more than 64 bits".into());
        };
        if !(1..64).contains(&k) || !matches!(**r, LaneExpr::Const(c) if c == 1 << (k - 1)) {
            return Err("needs more than 64 bits".into());
        }
        let t = x
            .range()
            .and_then(elem_for)
            .ok_or("needs more than 64 bits")?;
        let x = self.at(x, t)?;
        let y = self.amount(b, t)?;
        build(Op::RoundingShr, None, vec![x, y])
    }

    /// A value used as a condition, as `bool` lanes.
    fn condition(&mut self, c: &LaneExpr) -> Result<Expr, LaneError> {
        let truth = |e: &LaneExpr| e.range().is_some_and(|r| r.0 >= 0 && r.1 <= 1);
        match c {
            LaneExpr::Wrap(_, x) if truth(x) => return self.condition(x),
            LaneExpr::Const(v @ (0 | 1)) => {
                return Ok(Expr::bits(Elem::Bool, *v as u128).broadcast(self.lanes));
            }
            LaneExpr::Select(k, x, y) if truth(x) && truth(y) => {
                // A condition chosen by a condition: `k ? x : 0` is `k & x`.
                let k = self.condition(k)?;
                if matches!(**x, LaneExpr::Const(1)) && matches!(**y, LaneExpr::Const(0)) {
                    return Ok(k);
                }
                if matches!(**y, LaneExpr::Const(0)) {
                    let x = self.condition(x)?;
                    return build(Op::And, None, vec![k, x]);
                }
                let x = self.condition(x)?;
                let y = self.condition(y)?;
                return build(Op::Select, None, vec![k, x, y]);
            }
            _ => {}
        }
        if let LaneExpr::Input {
            elem: Elem::Bool, ..
        } = c
        {
            return self.input(Elem::Bool);
        }
        if let LaneExpr::Bin(op, a, b) = c
            && let Some(cmp) = comparison(*op)
        {
            let (x, y) = self.common(a, b)?;
            return build(cmp, None, vec![x, y]);
        }
        let x = self.exact(c)?;
        let zero = self.splat(x.ty().elem, 0)?;
        build(Op::Ne, None, vec![x, zero])
    }

    /// Both operands at one type that holds every value of each.
    fn common(&mut self, a: &LaneExpr, b: &LaneExpr) -> Result<(Expr, Expr), LaneError> {
        let (ra, rb) = (a.range().ok_or("unbounded")?, b.range().ok_or("unbounded")?);
        let t = elem_for((ra.0.min(rb.0), ra.1.max(rb.1))).ok_or("needs more than 64 bits")?;
        Ok((self.at(a, t)?, self.at(b, t)?))
    }

    /// A shift amount `b` (never negative) at the shifted value's type `t`: amounts of
    /// `t`'s width or more are clamped to it, which shifts every bit out in harrow's
    /// semantics as in exact arithmetic.
    fn amount(&mut self, b: &LaneExpr, t: Elem) -> Result<Expr, LaneError> {
        let rb = b.range().ok_or("unbounded")?;
        if rb.0 < 0 {
            return Err("a shift by an amount that may be negative".into());
        }
        if rb.1 < t.bits() as i128 {
            return self.at(b, t);
        }
        let y = self.exact(b)?;
        let limit = self.splat(y.ty().elem, t.bits() as i128)?;
        Ok(build(Op::Min, None, vec![y, limit])?.cast(t))
    }

    fn binary(
        &mut self,
        op: BinOp,
        a: &LaneExpr,
        b: &LaneExpr,
        range: Range,
    ) -> Result<Expr, LaneError> {
        use BinOp::*;
        if let Some(cmp) = comparison(op) {
            let (x, y) = self.common(a, b)?;
            let c = build(cmp, None, vec![x, y])?;
            let one = self.splat(Elem::U8, 1)?;
            let zero = self.splat(Elem::U8, 0)?;
            return build(Op::Select, None, vec![c, one, zero]);
        }
        let (ra, rb) = (a.range().ok_or("unbounded")?, b.range().ok_or("unbounded")?);
        match op {
            Shr if elem_for((range.0.min(ra.0), range.1.max(ra.1))).is_none() => {
                self.rounding_shift_wide(a, b)
            }
            Shl | Shr => {
                let t = elem_for((range.0.min(ra.0), range.1.max(ra.1)))
                    .ok_or("needs more than 64 bits")?;
                let x = self.at(a, t)?;
                let y = self.amount(b, t)?;
                build(if op == Shl { Op::Shl } else { Op::Shr }, None, vec![x, y])
            }
            _ => {
                let all = (range.0.min(ra.0).min(rb.0), range.1.max(ra.1).max(rb.1));
                let t = elem_for(all).ok_or("needs more than 64 bits")?;
                let x = self.at(a, t)?;
                let y = self.at(b, t)?;
                build(ir_op(op), None, vec![x, y])
            }
        }
    }
}

/// The IR operator of `op`.
fn ir_op(op: BinOp) -> Op {
    match op {
        BinOp::Add => Op::Add,
        BinOp::Sub => Op::Sub,
        BinOp::Mul => Op::Mul,
        BinOp::And => Op::And,
        BinOp::Or => Op::Or,
        BinOp::Xor => Op::Xor,
        BinOp::Shl => Op::Shl,
        BinOp::Shr => Op::Shr,
        BinOp::Min => Op::Min,
        BinOp::Max => Op::Max,
        BinOp::Eq => Op::Eq,
        BinOp::Ne => Op::Ne,
        BinOp::Lt => Op::Lt,
        BinOp::Le => Op::Le,
        BinOp::Gt => Op::Gt,
        BinOp::Ge => Op::Ge,
    }
}

/// The IR comparison of `op`, if it is one.
fn comparison(op: BinOp) -> Option<Op> {
    use BinOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge).then(|| ir_op(op))
}
