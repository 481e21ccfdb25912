//! Small shared utilities.

pub mod rng;
pub mod shared;
