//! The float vector instructions of x86 for the float vectorizer (`crate::float`): AVX2
//! (eight lanes, FMA3) and AVX-512 (sixteen lanes). The arithmetic is described in
//! `float.isa`; the rows here are what a description cannot say.

use std::sync::OnceLock;

use crate::diag::Diag;
use crate::isa::float::{FloatCostMeasure, FloatIsa, FloatOp, FloatSpec, FloatTemplate};

const DESCRIPTIONS: (&str, &str) = ("src/targets/x86/float.isa", include_str!("float.isa"));

/// AVX2: `__m256`, eight floats.
pub static AVX2: FloatSpec = FloatSpec {
    family: "x86",
    lanes: 8,
    vector_type: "__m256",
    header: "#include <immintrin.h>\n",
    descriptions: DESCRIPTIONS,
    templates: &[
        FloatTemplate::new(FloatOp::Load, "_mm256_loadu_ps({p})", "vmovups", 1),
        FloatTemplate::new(FloatOp::Store, "_mm256_storeu_ps({p}, {a})", "vmovups", 1),
        FloatTemplate::new(
            FloatOp::FromLanes,
            "_mm256_setr_ps({lanes})",
            "vinsertps",
            1,
        ),
        // No float negation on x86: flip the sign bit.
        FloatTemplate::new(
            FloatOp::Neg,
            "_mm256_xor_ps({a}, _mm256_set1_ps(-0.0f))",
            "vxorps",
            1,
        ),
    ],
    measure: FloatCostMeasure::Throughput,
    permute_cost: 1,
    blend_cost: 1,
    scalar_cost: 1,
    insert_cost: 1,
};

/// AVX-512: `__m512`, sixteen floats.
pub static AVX512: FloatSpec = FloatSpec {
    family: "x86",
    lanes: 16,
    vector_type: "__m512",
    header: "#include <immintrin.h>\n",
    descriptions: DESCRIPTIONS,
    templates: &[
        FloatTemplate::new(FloatOp::Load, "_mm512_loadu_ps({p})", "vmovups", 1),
        FloatTemplate::new(FloatOp::Store, "_mm512_storeu_ps({p}, {a})", "vmovups", 1),
        FloatTemplate::new(
            FloatOp::FromLanes,
            "_mm512_setr_ps({lanes})",
            "vinsertps",
            1,
        ),
        // No float negation on x86 (and `vxorps` on 512 bits needs AVX-512 DQ): flip the
        // sign bit with the integer `xor` of AVX-512 F.
        FloatTemplate::new(
            FloatOp::Neg,
            "_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512({a}), _mm512_set1_epi32((int)0x80000000)))",
            "vpxord",
            1,
        ),
    ],
    measure: FloatCostMeasure::Throughput,
    permute_cost: 1,
    blend_cost: 1,
    scalar_cost: 1,
    insert_cost: 1,
};

/// The table of the variant `v`, built once.
pub fn table(v: super::Variant) -> Result<&'static FloatIsa, Diag> {
    static AVX2_TABLE: OnceLock<Result<FloatIsa, Diag>> = OnceLock::new();
    static AVX512_TABLE: OnceLock<Result<FloatIsa, Diag>> = OnceLock::new();
    let (cell, spec) = match v {
        super::Variant::Avx2 => (&AVX2_TABLE, &AVX2),
        super::Variant::Avx512 => (&AVX512_TABLE, &AVX512),
    };
    cell.get_or_init(|| FloatIsa::build(spec))
        .as_ref()
        .map_err(Clone::clone)
}
