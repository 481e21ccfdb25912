//! Small shared utilities.

pub mod ctemplate;
pub mod disk_cache;
pub mod idhash;
pub mod ref_list;
pub mod rng;
pub mod shared;
