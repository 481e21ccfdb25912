//! Small shared utilities.

pub mod ctemplate;
pub mod idhash;
pub mod rng;
pub mod shared;
