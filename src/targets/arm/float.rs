//! The float vector instructions of AArch64 Neon for the float vectorizer
//! (`crate::float`): four lanes of `float32x4_t`. Costs are in instructions, the measure
//! the Arm benchmarks count under qemu.

use crate::isa::float::{FloatInstr, FloatIsa, FloatOp};

/// Neon: `float32x4_t`, four floats.
pub static NEON: FloatIsa = FloatIsa {
    lanes: 4,
    vector_type: "float32x4_t",
    header: "#include <arm_neon.h>\n",
    instrs: &[
        FloatInstr::new(FloatOp::Load, "vld1q_f32({p})", "ldr", 1),
        FloatInstr::new(FloatOp::Store, "vst1q_f32({p}, {a})", "str", 1),
        FloatInstr::new(FloatOp::Splat, "vdupq_n_f32({x})", "dup", 1),
        FloatInstr::new(FloatOp::FromLanes, "((float32x4_t){{lanes}})", "mov", 1),
        FloatInstr::new(FloatOp::Add, "vaddq_f32({a}, {b})", "fadd", 1),
        FloatInstr::new(FloatOp::Sub, "vsubq_f32({a}, {b})", "fsub", 1),
        FloatInstr::new(FloatOp::Mul, "vmulq_f32({a}, {b})", "fmul", 1),
        FloatInstr::new(FloatOp::Div, "vdivq_f32({a}, {b})", "fdiv", 1),
        FloatInstr::new(FloatOp::Sqrt, "vsqrtq_f32({a})", "fsqrt", 1),
        FloatInstr::new(FloatOp::Fma, "vfmaq_f32({c}, {a}, {b})", "fmla", 1),
        FloatInstr::new(FloatOp::Neg, "vnegq_f32({a})", "fneg", 1),
    ],
    permute_cost: 1,
    blend_cost: 1,
    scalar_cost: 1,
    insert_cost: 1,
};
