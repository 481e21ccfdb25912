//! The float vector instructions of AArch64 Neon for the float vectorizer
//! (`crate::float`): four lanes of `float32x4_t`. The arithmetic is described in
//! `float.isa`; the rows here are what a description cannot say. Costs are in
//! instructions, the measure the Arm benchmarks count under qemu.

use std::sync::OnceLock;

use crate::diag::Diag;
use crate::isa::float::{FloatCostMeasure, FloatIsa, FloatOp, FloatSpec, FloatTemplate};

/// Neon: `float32x4_t`, four floats.
pub static NEON: FloatSpec = FloatSpec {
    family: "arm",
    lanes: 4,
    vector_type: "float32x4_t",
    header: "#include <arm_neon.h>\n",
    descriptions: ("src/targets/arm/float.isa", include_str!("float.isa")),
    templates: &[
        FloatTemplate::new(FloatOp::Load, "vld1q_f32({p})", "ldr", 1),
        FloatTemplate::new(FloatOp::Store, "vst1q_f32({p}, {a})", "str", 1),
        FloatTemplate::new(FloatOp::FromLanes, "((float32x4_t){{lanes}})", "mov", 1),
    ],
    measure: FloatCostMeasure::Count,
    permute_cost: 1,
    blend_cost: 1,
    scalar_cost: 1,
    insert_cost: 1,
};

/// The Neon table, built once.
pub fn table() -> Result<&'static FloatIsa, Diag> {
    static TABLE: OnceLock<Result<FloatIsa, Diag>> = OnceLock::new();
    TABLE
        .get_or_init(|| FloatIsa::build(&NEON))
        .as_ref()
        .map_err(Clone::clone)
}
