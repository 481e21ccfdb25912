//! Strided gathers of words by 128-bit halves: x86's strategies for a register of every
//! third half word of a dense load, and for such words truncated to bytes.
//!
//! clang lowers a stride-3 shuffle of 16 words from 96 bytes across the whole 256-bit
//! register: a `vpblendvb`, a `vpermq`, blends, two `vpshufb` and more, eleven operations
//! (the AVX2 table of `super`); eight words from 48 bytes stay within one 128-bit register,
//! two blends and a `vpshufb`, as clang's own vectorization of such a loop does at eight
//! lanes. Two such halves and a `vinserti128` are cheaper than the whole register, and the
//! target's table prices both forms, so selection chooses.

use crate::ir::{Expr, Op, mk, mk_typed};
use crate::lower::parts::load_part;
use crate::lower::strategy::{Context, Proposal, Strategy};

/// x86's strategy: a register of every third word of a dense load gathered by halves.
pub struct StridedWordsByHalves;

impl Strategy for StridedWordsByHalves {
    fn name(&self) -> &'static str {
        "strided words by halves"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        by_halves(e, cx.register_bits).map(Proposal::Select)
    }
}

/// x86's strategy: a truncation to bytes of every third word of a dense load, as the
/// words' low bytes gathered in one byte gather, or, where the words are gathered for
/// another reader anyway, as the truncation of their halves (which the target's rules
/// pack, `truncate_halves_*`).
///
/// Alone, the byte gather is what clang makes of a truncated word gather itself (its
/// `vpshufb`s pick each word's low byte): gathered by halves and packed,
/// `u8(i8(in0(3 * x + 2)))` (fuzz_5_17 of seed 5) ran 0.92x clang -O3 where the byte
/// gather runs 1.00x.
/// Beside the words, a byte gather repeats the shuffles of the same rows: fuzz_7_106 of
/// seed 7 ran 0.88x so and 1.03x packed; and a C conversion of the joined halves is fused
/// by clang into such a byte gather too (fuzz_5_12 of seed 5: 0.88x, packed 1.3x).
pub struct TruncatedStridedWords;

impl Strategy for TruncatedStridedWords {
    fn name(&self) -> &'static str {
        "truncated strided words"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        // Measured on AVX2 only, as the byte gather's price (`AVX2_DEINTERLEAVED_LOADS`).
        if cx.register_bits != 256 {
            return None;
        }
        if !matches!(e.op(), Op::Cast) || e.ty().is_scalar() || e.ty().elem.bits() != 8 {
            return None;
        }
        if cx.is_shared(e.arg(0)) {
            let halves = by_halves(e.arg(0), cx.register_bits)?;
            return Some(Proposal::Select(mk_typed(Op::Cast, e.ty(), vec![halves])));
        }
        low_bytes_gathered(e).map(|x| Proposal::Select(x).checked())
    }
}

/// `e`, a truncation to bytes of a stride-3 slice of a dense load of words, as the slice
/// of the load's bytes that are those words' low bytes (little-endian lanes).
fn low_bytes_gathered(e: &Expr) -> Option<Expr> {
    let gather = e.arg(0);
    let Op::Slice { start, stride: 3 } = *gather.op() else {
        return None;
    };
    let load = gather.arg(0);
    if load.ty().elem.bits() != 16 || !e.ty().elem.is_int() || !load.ty().elem.is_int() {
        return None;
    }
    if !matches!(load.op(), Op::Load(_, None)) || !crate::lower::lanes::is_dense(load) {
        return None;
    }
    let bytes = crate::lower::linear::reinterpret(load, e.ty().elem);
    Some(mk_typed(
        Op::Slice {
            start: 2 * start,
            stride: 6,
        },
        e.ty(),
        vec![bytes],
    ))
}

/// `e`, a stride-3 slice of a dense load filling a register of words, as the concatenation
/// of the same slice's halves, each of a load of its own.
fn by_halves(e: &Expr, register_bits: u32) -> Option<Expr> {
    let Op::Slice { start, stride: 3 } = *e.op() else {
        return None;
    };
    let (t, load) = (e.ty(), e.arg(0));
    // AVX2's registers only: AVX-512's word permutes make its gathers another matter.
    if register_bits != 256 || t.elem.bits() != 16 || t.total_bits() != 256 {
        return None;
    }
    if !matches!(load.op(), Op::Load(_, None)) || !crate::lower::lanes::is_dense(load) {
        return None;
    }
    // The load's halves each hold one half's lanes: 24 words, three 128-bit registers.
    let half = t.lanes / 2;
    if load.ty().lanes != 3 * t.lanes || start >= 3 {
        return None;
    }
    let part = |from: u32| -> Option<Expr> {
        let loaded = load_part(load, from, 3 * half)?;
        Some(mk_typed(
            Op::Slice { start, stride: 3 },
            t.with_lanes(half),
            vec![loaded],
        ))
    };
    Some(mk(Op::Concat, vec![part(0)?, part(3 * half)?]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Elem, Type};

    /// A dense load of 48 lanes of `elem` at `x`.
    fn dense_load(elem: Elem) -> Expr {
        let idx = mk_typed(
            Op::Ramp,
            Type::vec(Elem::I32, 48),
            vec![
                Expr::var("x", Type::INDEX),
                Expr::int(Elem::I32, 1).unwrap(),
            ],
        );
        mk_typed(Op::Load("in".into(), None), Type::vec(elem, 48), vec![idx])
    }

    /// Every third word of 48, gathered by halves, computes the same lanes from the two
    /// halves of the load.
    #[test]
    fn a_register_of_every_third_word_is_two_halves_of_their_own_loads() {
        let load = dense_load(Elem::U16);
        let e = mk_typed(
            Op::Slice {
                start: 1,
                stride: 3,
            },
            Type::vec(Elem::U16, 16),
            vec![load.clone()],
        );
        let halves = by_halves(&e, 256).expect("a register of words");
        let loads: Vec<Expr> = crate::ir::visit::post_order(&halves)
            .into_iter()
            .filter(|n| matches!(n.op(), Op::Load(..)))
            .collect();
        assert_eq!(loads.len(), 2, "{halves}");
        assert!(loads.iter().all(|l| l.ty().lanes == 24), "{halves}");
        assert!(crate::lower::linear::agrees(&e, &halves), "{halves}");
        // Not for half an AVX-512 register, nor for another stride.
        assert!(by_halves(&e, 512).is_none());
        let fourth = mk_typed(
            Op::Slice {
                start: 0,
                stride: 4,
            },
            Type::vec(Elem::U16, 12),
            vec![load],
        );
        assert!(by_halves(&fourth, 192).is_none());
    }

    /// A truncation of every third word to bytes is every sixth byte of the same load.
    #[test]
    fn the_low_bytes_of_every_third_word_are_every_sixth_byte() {
        let load = dense_load(Elem::I16);
        for (start, to) in [(0, Elem::U8), (2, Elem::I8)] {
            let gather = mk_typed(
                Op::Slice { start, stride: 3 },
                Type::vec(Elem::I16, 16),
                vec![load.clone()],
            );
            let e = mk_typed(Op::Cast, Type::vec(to, 16), vec![gather]);
            let bytes = low_bytes_gathered(&e).expect("a truncation of a gather");
            assert!(matches!(bytes.op(), Op::Slice { stride: 6, .. }), "{bytes}");
            assert!(crate::lower::linear::agrees(&e, &bytes), "{e} vs {bytes}");
        }
    }
}
