//! Abstraction over types (MISAAL): a rule found at one type is carried to the other element
//! widths and register widths of the target and re-proved there, instead of searched again.
//!
//! A found sequence is a DAG of instructions. Each instruction belongs to a similarity class
//! (`isa::import::classes`: the same semantics up to element width, lane count and
//! constants), so the sequence has a counterpart at another type when every instruction's
//! class has a member at the mapped operand and result types: `vpsubb(a, vpavgb(a, b))` of
//! `u8x32` is `psubw(a, pavgw(a, b))` of `u16x8`. The counterpart is only a candidate: it is
//! kept where the prover shows it equal to the term at the new type and it is cheaper than
//! what selection chooses there by the same margin as a searched rule. So one search serves
//! every type where the idea holds, which is where MISAAL's compile-time saving over a
//! search per type comes from, and rules reach the register widths selection meets on
//! narrow chunks (128-bit `_mm_` forms on AVX2, 64-bit D registers on Arm) that the default
//! terms, one full register each, never ask for.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ir::instr::Instr;
use crate::ir::{Expr, Op};
use crate::lower::Backend;
use crate::types::{Elem, Type};

use super::{Options, Term};

/// A change of types: element widths times `2^shift`, vector lanes times `lanes_num /
/// lanes_den` (so that a vector of the term's widest type fills the new register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TypeMap {
    shift: i32,
    lanes_num: u32,
    lanes_den: u32,
}

impl TypeMap {
    /// The image of `t`; `None` where the element width leaves 8..64 bits or the lanes do
    /// not divide. Scalars keep one lane; truth values keep their element.
    fn map(&self, t: Type) -> Option<Type> {
        let elem = if t.elem == Elem::Bool {
            Elem::Bool
        } else if t.elem.is_int() && !t.elem.is_internal() {
            let bits = if self.shift >= 0 {
                t.elem.bits() << self.shift
            } else {
                t.elem.bits() >> (-self.shift)
            };
            if !(8..=64).contains(&bits) {
                return None;
            }
            Elem::from_bits(bits, t.elem.is_signed())?
        } else {
            return None;
        };
        if t.is_scalar() {
            return Some(Type::scalar(elem));
        }
        let scaled = t.lanes * self.lanes_num;
        if !scaled.is_multiple_of(self.lanes_den) || scaled / self.lanes_den < 2 {
            return None;
        }
        Some(Type::vec(elem, scaled / self.lanes_den))
    }
}

/// Bits of the widest vector among the term's variables and result: the register it fills.
fn register_of(term: &Expr) -> u64 {
    let mut types: Vec<Type> = crate::ir::visit::free_vars(term).into_values().collect();
    types.push(term.ty());
    types.iter().map(|t| t.total_bits()).max().unwrap_or(0)
}

/// The register widths the target's instructions produce vectors of, up to its register:
/// the widths selection meets chunks at.
fn register_widths(backend: &Backend) -> Vec<u64> {
    let top = u64::from(backend.target.register_bits());
    let mut w: Vec<u64> = backend
        .instrs
        .values()
        .flatten()
        .filter(|i| !i.result.is_scalar())
        .map(|i| i.result.total_bits())
        .filter(|&b| (64..=top).contains(&b))
        .collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// The maps from the term's types to every other element width and register width.
fn type_maps(term: &Expr, backend: &Backend) -> Vec<TypeMap> {
    let from = register_of(term);
    let mut out = Vec::new();
    if from == 0 {
        return out;
    }
    for to in register_widths(backend) {
        for shift in -3i32..=3 {
            if shift == 0 && to == from {
                continue;
            }
            // lanes * (to / from) / 2^shift
            let (mut num, mut den) = (to, from);
            if shift >= 0 {
                den <<= shift;
            } else {
                num <<= -shift;
            }
            let g = gcd(num, den);
            let (Ok(num), Ok(den)) = (u32::try_from(num / g), u32::try_from(den / g)) else {
                continue;
            };
            out.push(TypeMap {
                shift,
                lanes_num: num,
                lanes_den: den,
            });
        }
    }
    out
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Instructions grouped by their similarity class, each group in key order.
pub struct Classes(HashMap<String, Vec<Arc<Instr>>>);

impl Classes {
    /// The classes of the backend's instructions.
    pub fn of(backend: &Backend) -> Classes {
        let mut instrs: Vec<Arc<Instr>> = backend.instrs.values().flatten().cloned().collect();
        instrs.sort_by(|a, b| a.key.cmp(&b.key));
        let mut by: HashMap<String, Vec<Arc<Instr>>> = HashMap::new();
        for i in instrs {
            by.entry(crate::isa::import::classes::shape(&i))
                .or_default()
                .push(i);
        }
        Classes(by)
    }

    /// The member of `i`'s class at the mapped types (immediates keep theirs).
    fn counterpart(&self, i: &Instr, m: &TypeMap) -> Option<Arc<Instr>> {
        let result = m.map(i.result)?;
        let params: Vec<Type> = i
            .params
            .iter()
            .zip(&i.imm)
            .map(|(&p, &imm)| if imm { Some(p) } else { m.map(p) })
            .collect::<Option<_>>()?;
        self.0
            .get(&crate::isa::import::classes::shape(i))?
            .iter()
            .find(|c| c.result == result && c.params == params && c.imm == i.imm)
            .cloned()
    }
}

/// `e` at the mapped types, each instruction replaced by its class's member there; `None`
/// where a type or an instruction has no image, or a constant does not fit.
fn map_expr(e: &Expr, m: &TypeMap, classes: &Classes) -> Option<Expr> {
    match e.op() {
        Op::Var(name) => Some(Expr::var(name.clone(), m.map(e.ty())?)),
        Op::Const(bits) => {
            let v = crate::interp::lane::to_i128(*bits, e.ty().elem);
            Expr::int(m.map(e.ty())?.elem, v).ok()
        }
        Op::Instr(i) => {
            let c = classes.counterpart(i, m)?;
            let args: Vec<Expr> = e
                .args()
                .iter()
                .zip(&i.imm)
                .map(|(a, &imm)| {
                    if imm {
                        Some(a.clone())
                    } else {
                        map_expr(a, m, classes)
                    }
                })
                .collect::<Option<_>>()?;
            let ty = c.result;
            Expr::build(Op::Instr(c), Some(ty), args).ok()
        }
        // Operators whose parameters count lanes do not carry over.
        Op::Slice { .. } | Op::Load(..) | Op::Let(_) => None,
        op => {
            let args: Vec<Expr> = e
                .args()
                .iter()
                .map(|a| map_expr(a, m, classes))
                .collect::<Option<_>>()?;
            let ty = match crate::ir::explicit_type(e) {
                Some(t) => Some(m.map(t)?),
                None => None,
            };
            Expr::build(op.clone(), ty, args).ok()
        }
    }
}

/// `e` (with no instructions) at the lane count at which its widest vector fills a
/// register of `register_bits`; `None` where some vector would have fewer than two lanes.
pub fn at_register(e: &Expr, register_bits: u32) -> Option<Expr> {
    let from = register_of(e);
    if from == 0 {
        return None;
    }
    let to = u64::from(register_bits);
    let g = gcd(to, from);
    let m = TypeMap {
        shift: 0,
        lanes_num: u32::try_from(to / g).ok()?,
        lanes_den: u32::try_from(from / g).ok()?,
    };
    if m.lanes_num == m.lanes_den {
        return Some(e.clone());
    }
    map_expr(e, &m, &Classes(HashMap::new()))
}

/// The rules `term => rhs` carries to at other types: for each type map, the mapped term
/// and sequence, kept where the term was not searched itself (`opts.searched`), the
/// sequence is cheaper than selection by the margin, and the prover agrees. Each rule is
/// generalized over its constant like a searched one. In type-map order, without repeats.
pub fn abstract_rule(
    term: &Term,
    rhs: &Expr,
    index: usize,
    classes: &Classes,
    backend: &Backend,
    opts: &Options,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<Expr> = Vec::new();
    for m in type_maps(&term.expr, backend) {
        let (Some(t1), Some(r1)) = (
            map_expr(&term.expr, &m, classes),
            map_expr(rhs, &m, classes),
        ) else {
            continue;
        };
        let text = t1.to_string();
        if seen.contains(&t1) || opts.searched.contains(&text) {
            continue;
        }
        seen.push(t1.clone());
        let today = crate::lower::select_as_is(&t1, backend).cost;
        let cost = super::sequence_cost(&r1, backend);
        if cost > opts.max_ratio * today + 1e-9 {
            continue;
        }
        let mapped = Term {
            name: format!("{}_as_{}", term.name, super::type_name(t1.ty())),
            expr: t1,
        };
        let rule = super::rule_text(&mapped, &r1, cost, today, index);
        if let Ok(None) = super::prove(&rule, backend, opts) {
            let generalized = super::generalize::generalize(
                &mapped,
                &r1,
                &super::rule_comment(&mapped, &r1, cost, today, true),
                &format!("synth_{}_{index}", mapped.name),
                &|r: &str| super::prove(r, backend, opts),
            );
            out.push(generalized.unwrap_or(rule));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_scales_widths_and_keeps_the_register_full() {
        // u8x32 (256 bits) to 16-bit lanes of a 128-bit register.
        let m = TypeMap {
            shift: 1,
            lanes_num: 1,
            lanes_den: 4,
        };
        assert_eq!(
            m.map(Type::vec(Elem::U8, 32)),
            Some(Type::vec(Elem::U16, 8))
        );
        assert_eq!(
            m.map(Type::vec(Elem::I16, 16)),
            Some(Type::vec(Elem::I32, 4))
        );
        assert_eq!(m.map(Type::scalar(Elem::U8)), Some(Type::scalar(Elem::U16)));
        assert_eq!(m.map(Type::vec(Elem::U64, 4)), None, "no 128-bit lanes");
        assert_eq!(m.map(Type::vec(Elem::U8, 4)), None, "one lane is no vector");
    }
}
