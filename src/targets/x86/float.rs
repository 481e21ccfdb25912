//! The float vector instructions of x86 for the float vectorizer (`crate::float`): AVX2
//! (eight lanes, FMA3) and AVX-512 (sixteen lanes). Costs are reciprocal throughputs on
//! recent cores, with division and square root at their (much larger) latency-bound rate.

use crate::isa::float::{FloatInstr, FloatIsa, FloatOp};

/// AVX2: `__m256`, eight floats.
pub static AVX2: FloatIsa = FloatIsa {
    lanes: 8,
    vector_type: "__m256",
    header: "#include <immintrin.h>\n",
    instrs: &[
        FloatInstr::new(FloatOp::Load, "_mm256_loadu_ps({p})", "vmovups", 1),
        FloatInstr::new(FloatOp::Store, "_mm256_storeu_ps({p}, {a})", "vmovups", 1),
        FloatInstr::new(FloatOp::Splat, "_mm256_set1_ps({x})", "vbroadcastss", 1),
        FloatInstr::new(
            FloatOp::FromLanes,
            "_mm256_setr_ps({lanes})",
            "vinsertps",
            1,
        ),
        FloatInstr::new(FloatOp::Add, "_mm256_add_ps({a}, {b})", "vaddps", 1),
        FloatInstr::new(FloatOp::Sub, "_mm256_sub_ps({a}, {b})", "vsubps", 1),
        FloatInstr::new(FloatOp::Mul, "_mm256_mul_ps({a}, {b})", "vmulps", 1),
        FloatInstr::new(FloatOp::Div, "_mm256_div_ps({a}, {b})", "vdivps", 5),
        FloatInstr::new(FloatOp::Sqrt, "_mm256_sqrt_ps({a})", "vsqrtps", 6),
        FloatInstr::new(FloatOp::Fma, "_mm256_fmadd_ps({a}, {b}, {c})", "vfmadd", 1),
        FloatInstr::new(
            FloatOp::Neg,
            "_mm256_xor_ps({a}, _mm256_set1_ps(-0.0f))",
            "vxorps",
            1,
        ),
    ],
    permute_cost: 1,
    blend_cost: 1,
    scalar_cost: 1,
    insert_cost: 1,
};

/// AVX-512: `__m512`, sixteen floats.
pub static AVX512: FloatIsa = FloatIsa {
    lanes: 16,
    vector_type: "__m512",
    header: "#include <immintrin.h>\n",
    instrs: &[
        FloatInstr::new(FloatOp::Load, "_mm512_loadu_ps({p})", "vmovups", 1),
        FloatInstr::new(FloatOp::Store, "_mm512_storeu_ps({p}, {a})", "vmovups", 1),
        FloatInstr::new(FloatOp::Splat, "_mm512_set1_ps({x})", "vbroadcastss", 1),
        FloatInstr::new(
            FloatOp::FromLanes,
            "_mm512_setr_ps({lanes})",
            "vinsertps",
            1,
        ),
        FloatInstr::new(FloatOp::Add, "_mm512_add_ps({a}, {b})", "vaddps", 1),
        FloatInstr::new(FloatOp::Sub, "_mm512_sub_ps({a}, {b})", "vsubps", 1),
        FloatInstr::new(FloatOp::Mul, "_mm512_mul_ps({a}, {b})", "vmulps", 1),
        FloatInstr::new(FloatOp::Div, "_mm512_div_ps({a}, {b})", "vdivps", 10),
        FloatInstr::new(FloatOp::Sqrt, "_mm512_sqrt_ps({a})", "vsqrtps", 12),
        FloatInstr::new(FloatOp::Fma, "_mm512_fmadd_ps({a}, {b}, {c})", "vfmadd", 1),
        FloatInstr::new(
            FloatOp::Neg,
            "_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512({a}), _mm512_set1_epi32((int)0x80000000)))",
            "vpxord",
            1,
        ),
    ],
    permute_cost: 1,
    blend_cost: 1,
    scalar_cost: 1,
    insert_cost: 1,
};
