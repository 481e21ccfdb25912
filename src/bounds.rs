//! Value bounds of expressions, for bounds-predicated rules (`upper_bound(x) <= 32767`).
//!
//! Rules ask through the [`Bounds`] trait. [`TypeBounds`] is the conservative default: the
//! whole range of the type, so predicates that need more than the type guarantees never
//! hold. Interval analysis over the IR arrives with the verification work and implements the
//! same trait.

use crate::ir::Expr;

/// Something that can bound the lanes of an expression.
pub trait Bounds {
    /// Inclusive `(lower, upper)` bounds on every lane of `e`.
    fn range(&mut self, e: &Expr) -> (i128, i128);
}

/// The type's own range: always correct, never informative.
#[derive(Clone, Copy, Debug, Default)]
pub struct TypeBounds;

impl Bounds for TypeBounds {
    fn range(&mut self, e: &Expr) -> (i128, i128) {
        let elem = e.ty().elem;
        (elem.min_value(), elem.max_value().unwrap_or(i128::MAX))
    }
}
