//! Small shared utilities.

pub mod exprgen;
pub mod rng;
pub mod shared;
