//! Random well-typed expressions, for property tests.
//!
//! [`Gen::expr`] builds an expression of a requested type, choosing among every operator
//! that can produce it. Variables are named after their type (`v_u8x4`) and buffers after
//! their element type (`buf_u8`), so declarations can be recovered from the expression.

use crate::ir::{Expr, Op, mk, mk_typed};
use crate::types::{Elem, Type, USER_INT_ELEMS};
use crate::util::rng::SplitMix64;

/// A random expression generator.
pub struct Gen {
    rng: SplitMix64,
    lets: Vec<(String, Type)>,
    next_let: usize,
    /// Include shuffles, loads, lets and reductions (not every consumer supports them).
    pub structural: bool,
}

impl Gen {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: SplitMix64::new(seed),
            lets: Vec::new(),
            next_let: 0,
            structural: true,
        }
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.below(xs.len() as u64) as usize].clone()
    }

    fn chance(&mut self, n: u64) -> bool {
        self.rng.below(n) == 0
    }

    /// A random integer element type.
    pub fn int_elem(&mut self) -> Elem {
        self.pick(&USER_INT_ELEMS)
    }

    /// A random type with 1, 2, 4 or 8 lanes (bool one time in eight).
    pub fn ty(&mut self) -> Type {
        let elem = if self.chance(8) {
            Elem::Bool
        } else {
            self.int_elem()
        };
        Type::vec(elem, self.pick(&[1, 2, 4, 8]))
    }

    fn leaf(&mut self, t: Type) -> Expr {
        let lets: Vec<(String, Type)> = self
            .lets
            .iter()
            .filter(|(_, lt)| *lt == t)
            .cloned()
            .collect();
        if !lets.is_empty() && self.chance(2) {
            let (n, _) = lets[self.rng.below(lets.len() as u64) as usize].clone();
            return Expr::var(n.as_str(), t);
        }
        if self.chance(3) {
            let bits = self.rng.lane(t.elem);
            return Expr::bits(t.elem, bits).broadcast(t.lanes);
        }
        Expr::var(format!("v_{t}").as_str(), t)
    }

    /// A random expression of type `t` with at most `depth` levels of operators.
    pub fn expr(&mut self, t: Type, depth: u32) -> Expr {
        if depth == 0 || self.chance(5) {
            return self.leaf(t);
        }
        for _ in 0..16 {
            if let Some(e) = self.try_op(t, depth - 1) {
                debug_assert_eq!(e.ty(), t);
                return e;
            }
        }
        self.leaf(t)
    }

    fn try_op(&mut self, t: Type, d: u32) -> Option<Expr> {
        let e = t.elem;
        let l = t.lanes;
        let choice = self.rng.below(30);
        let int = e.is_int();
        let same = |g: &mut Gen| g.expr(t, d);
        Some(match choice {
            0..=5 if int => {
                let op = self.pick(&[
                    Op::Add,
                    Op::Sub,
                    Op::Mul,
                    Op::Div,
                    Op::Mod,
                    Op::Min,
                    Op::Max,
                ]);
                mk(op, vec![same(self), same(self)])
            }
            6 => {
                let op = self.pick(&[Op::And, Op::Or, Op::Xor]);
                mk(op, vec![same(self), same(self)])
            }
            7 => mk(Op::Not, vec![same(self)]),
            8 if int => {
                let op = self.pick(&[Op::Shl, Op::Shr, Op::RoundingShl, Op::RoundingShr]);
                let amt = t.with_elem(e.with_signed(self.chance(2)));
                mk(op, vec![same(self), self.expr(amt, d)])
            }
            9 | 10 if e == Elem::Bool => {
                let it = Type::vec(self.int_elem(), l);
                let op = self.pick(&[Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge]);
                mk(op, vec![self.expr(it, d), self.expr(it, d)])
            }
            11 => {
                let c = self.expr(t.with_elem(Elem::Bool), d);
                mk(Op::Select, vec![c, same(self), same(self)])
            }
            12 => {
                let from = if self.chance(6) {
                    Elem::Bool
                } else {
                    self.int_elem()
                };
                mk_typed(Op::Cast, t, vec![self.expr(t.with_elem(from), d)])
            }
            13 if int => {
                let from = self.int_elem();
                let total = t.total_bits();
                if !total.is_multiple_of(from.bits() as u64) {
                    return None;
                }
                let src = Type::vec(from, (total / from.bits() as u64) as u32);
                mk_typed(Op::Reinterpret, t, vec![self.expr(src, d)])
            }
            14 if int && e.bits() >= 16 => {
                let n = e.narrow()?;
                let op = self.pick(&[
                    Op::WideningAdd,
                    Op::WideningSub,
                    Op::WideningMul,
                    Op::WideningShl,
                    Op::WideningShr,
                ]);
                match op {
                    Op::WideningSub => {
                        if !e.is_signed() {
                            return None;
                        }
                        let a = Type::vec(n.with_signed(self.chance(2)), l);
                        mk(op, vec![self.expr(a, d), self.expr(a, d)])
                    }
                    Op::WideningMul => {
                        let (sa, sb) = if e.is_signed() {
                            let s = self.pick(&[(true, true), (true, false), (false, true)]);
                            (s.0, s.1)
                        } else {
                            (false, false)
                        };
                        let a = Type::vec(n.with_signed(sa), l);
                        let b = Type::vec(n.with_signed(sb), l);
                        mk(op, vec![self.expr(a, d), self.expr(b, d)])
                    }
                    Op::WideningShl | Op::WideningShr => {
                        let a = Type::vec(n, l);
                        let b = Type::vec(n.with_signed(self.chance(2)), l);
                        mk(op, vec![self.expr(a, d), self.expr(b, d)])
                    }
                    _ => {
                        let a = Type::vec(n, l);
                        mk(op, vec![self.expr(a, d), self.expr(a, d)])
                    }
                }
            }
            15 | 16 if int => {
                let op = self.pick(&[
                    Op::SaturatingAdd,
                    Op::SaturatingSub,
                    Op::HalvingAdd,
                    Op::HalvingSub,
                    Op::RoundingHalvingAdd,
                ]);
                mk(op, vec![same(self), same(self)])
            }
            17 if int && !e.is_signed() => {
                let a = t.with_elem(e.with_signed(self.chance(2)));
                if self.chance(2) {
                    mk(Op::Absd, vec![self.expr(a, d), self.expr(a, d)])
                } else {
                    mk(Op::Abs, vec![self.expr(a, d)])
                }
            }
            18 if int => {
                let from = self.int_elem();
                mk_typed(Op::SaturatingCast, t, vec![self.expr(t.with_elem(from), d)])
            }
            19 if int => {
                let op = self.pick(&[Op::MulShiftRight, Op::RoundingMulShiftRight]);
                let q = self.expr(t.with_elem(e.to_unsigned()), d);
                mk(op, vec![same(self), same(self), q])
            }
            20 if int && e.bits() >= 16 => {
                let op = self.pick(&[Op::WidenRightAdd, Op::WidenRightSub, Op::WidenRightMul]);
                let n = e.narrow()?.with_signed(self.chance(2));
                mk(op, vec![same(self), self.expr(t.with_elem(n), d)])
            }
            21 if int => {
                let op = self.pick(&[Op::Popcount, Op::CountLeadingZeros, Op::CountTrailingZeros]);
                mk(op, vec![same(self)])
            }
            22 if l > 1 => {
                let divisors: Vec<u32> = (1..l).filter(|k| l.is_multiple_of(*k)).collect();
                let k = self.pick(&divisors);
                mk_typed(Op::Broadcast, t, vec![self.expr(t.with_lanes(k), d)])
            }
            23 if self.structural => {
                let stride = self.pick(&[1, 2, 3]);
                let start = self.rng.below(3) as u32;
                let src_lanes = start + stride * (l - 1) + 1 + self.rng.below(3) as u32;
                let src = self.expr(t.with_lanes(src_lanes), d);
                mk_typed(Op::Slice { start, stride }, t, vec![src])
            }
            24 if self.structural && l.is_multiple_of(2) => {
                let h = t.with_lanes(l / 2);
                let op = self.pick(&[Op::Concat, Op::Interleave]);
                mk(op, vec![self.expr(h, d), self.expr(h, d)])
            }
            25 if self.structural => {
                let n = self.pick(&[1, 2, 4, 8]);
                let src = self.expr(t.with_lanes(n), d);
                let idx: Vec<u32> = (0..l).map(|_| self.rng.below(n as u64) as u32).collect();
                mk(Op::Shuffle(idx.into()), vec![src])
            }
            26 if self.structural && int && l > 1 => {
                let base = self.expr(Type::INDEX, d.min(1));
                let stride = self.expr(Type::INDEX, 0);
                let idx = if self.chance(2) {
                    mk_typed(Op::Ramp, Type::vec(Elem::I32, l), vec![base, stride])
                } else {
                    self.expr(Type::vec(Elem::I32, l), d.min(1))
                };
                mk_typed(Op::Load(format!("buf_{e}").into(), None), t, vec![idx])
            }
            27 if self.structural => {
                let vt = self.ty();
                let name = format!("l{}", self.next_let);
                self.next_let += 1;
                let value = self.expr(vt, d);
                self.lets.push((name.clone(), vt));
                let body = same(self);
                self.lets.pop();
                mk(Op::Let(name.into()), vec![value, body])
            }
            28 if self.structural && int => {
                let k = self.pick(&[1, 2, 4]);
                let op = self.pick(&[Op::ReduceAdd, Op::ReduceMin, Op::ReduceMax]);
                mk_typed(op, t, vec![self.expr(t.with_lanes(l * k), d)])
            }
            29 if int && l > 1 => {
                let b = self.expr(t.element(), d.min(1));
                let s = self.expr(t.element(), 0);
                mk_typed(Op::Ramp, t, vec![b, s])
            }
            _ => return None,
        })
    }
}

/// Declarations for every variable and buffer a generated expression uses.
pub fn decls_for(e: &Expr) -> crate::syntax::elab::Decls {
    let mut d = crate::syntax::elab::Decls::new();
    for (name, t) in crate::ir::visit::free_vars(e) {
        d.vars.insert(name.to_string(), t);
    }
    for (name, elem) in crate::ir::visit::buffers(e) {
        d.buffers.insert(name.to_string(), elem);
    }
    d
}
