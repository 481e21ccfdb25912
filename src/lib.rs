//! harrow: compile portable integer and fixed-point vector expressions to the best
//! instructions of SIMD and DSP machines, with every rewrite checked.
//!
//! Data flows one way: text ([`syntax`]) to typed IR ([`ir`]), whose meaning is fixed by the
//! reference interpreter ([`interp`]); FPIR operations are defined in [`fpir`]. See
//! `ARCHITECTURE.md` for the map and the invariants.

pub mod bounds;
pub mod cli;
pub mod diag;
pub mod float;
pub mod fpir;
pub mod frontends;
pub mod interp;
pub mod ir;
pub mod isa;
pub mod kernel;
pub mod lift;
pub mod lower;
pub mod rewrite;
pub mod rules;
pub mod syntax;
pub mod synth;
pub mod targets;
pub mod types;
pub mod util;
pub mod verify;
