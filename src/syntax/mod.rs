//! Text front ends and printers.
//!
//! - [`halide`]: Halide's printed IR syntax (parse and print, round-trip);
//! - [`sexpr`]: the S-expression form of the IR, and the generic S-expression reader;
//! - [`rake`]: the importer for Rake spec files;
//! - [`opcheck`]: Halide's simd_op_check expectation files;
//! - [`file`]: expression files with declarations;
//! - [`corpus`]: the shared Rake corpora read through [`rake`];
//! - [`exprgen`]: random well-typed expressions with their declarations (property tests).
//!
//! All of them produce typed IR through [`elab`], so the typing rules exist once.

pub mod corpus;
pub mod elab;
pub mod exprgen;
pub mod file;
pub mod halide;
pub mod lexer;
pub mod opcheck;
pub mod parse;
pub mod rake;
pub mod sexpr;
pub mod template;
