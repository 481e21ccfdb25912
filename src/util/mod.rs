//! Small shared utilities.

pub mod corpus;
pub mod exprgen;
pub mod idhash;
pub mod rng;
pub mod shared;
