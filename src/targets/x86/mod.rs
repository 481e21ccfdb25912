//! The x86 targets `x86-avx2` and `x86-avx512`: what the descriptions in `isa/` cannot say.
//!
//! Programs are built with clang-19 for the host's architecture and run natively; code for
//! a feature the host lacks (AVX-512 on most machines) is still compiled and selected.

pub mod float;
mod gathers;
pub mod import;
pub mod vnni;

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use super::{Family, Registration};
use crate::diag::Diag;
use crate::isa::Isa;
use crate::isa::target::{DeinterleavedLoad, OpCheckSuite, TargetSpec, Toolchain};
use crate::lower::strategy::{self, SplitWide, Strategy};
use crate::types::{Elem, Type};

/// The description files, embedded in the binary.
pub const FILES: &[(&str, &str)] = &[
    (
        "src/targets/x86/isa/arith.isa",
        include_str!("isa/arith.isa"),
    ),
    ("src/targets/x86/isa/mul.isa", include_str!("isa/mul.isa")),
    (
        "src/targets/x86/isa/logic.isa",
        include_str!("isa/logic.isa"),
    ),
    (
        "src/targets/x86/isa/compare.isa",
        include_str!("isa/compare.isa"),
    ),
    (
        "src/targets/x86/isa/convert.isa",
        include_str!("isa/convert.isa"),
    ),
    (
        "src/targets/x86/isa/permute.isa",
        include_str!("isa/permute.isa"),
    ),
];

/// The x86 family: its descriptions and hand-written lowering rules.
pub static FAMILY: Family = Family {
    name: "x86",
    isa: all,
    hand_isa: all,
    rules: ("src/targets/x86/lower.rules", include_str!("lower.rules")),
    importer: Some(import::import),
    imported: Some((
        "src/targets/x86/imported/intel.isa",
        include_str!("imported/intel.isa"),
    )),
};

const AVX2_FEATURES: &[&str] = &["sse2", "ssse3", "sse41", "sse42", "avx", "avx2"];
const AVX512_FEATURES: &[&str] = &[
    "sse2",
    "ssse3",
    "sse41",
    "sse42",
    "avx",
    "avx2",
    "avx512f",
    "avx512bw",
    "avx512dq",
    "avx512vl",
    "avx512vnni",
    "avx512vbmi",
];

/// `x86-avx2`.
pub static AVX2_SPEC: TargetSpec = TargetSpec {
    name: "x86-avx2",
    family: "x86",
    summary: "x86-64 with AVX2 (256-bit registers), run natively",
    features: AVX2_FEATURES,
    register_bits: 256,
    halide_target: Some("x86-64-linux-avx2-no_asserts"),
    op_check: Some(OpCheckSuite {
        file: "x86.txt",
        section: |h| h == "x86-64-linux-sse41-avx-f16c-fma-avx2",
        translation: None,
        also_met_by: &[],
    }),
    toolchain: Toolchain::clang_native(&["-march=x86-64-v3"]),
};

/// `x86-avx512`.
pub static AVX512_SPEC: TargetSpec = TargetSpec {
    name: "x86-avx512",
    family: "x86",
    summary: "x86-64 with AVX-512 F/BW/DQ/VL/VNNI/VBMI (512-bit registers), run natively where the host has it",
    features: AVX512_FEATURES,
    register_bits: 512,
    halide_target: Some("x86-64-linux-avx512_skylake-no_asserts"),
    op_check: Some(OpCheckSuite {
        file: "x86.txt",
        section: |h| h.ends_with("avx512_zen4"),
        translation: None,
        also_met_by: &[],
    }),
    toolchain: Toolchain::clang_native(&["-march=x86-64-v4", "-mavx512vnni", "-mavx512vbmi"]),
};

/// The registry entry of `x86-avx2`.
pub const AVX2: Registration = Registration {
    spec: &AVX2_SPEC,
    family: &FAMILY,
    make: || Box::new(Variant::Avx2),
    strategies,
    synth: (
        "src/targets/x86/synth/x86-avx2.rules",
        include_str!("synth/x86-avx2.rules"),
    ),
};

/// The registry entry of `x86-avx512`.
pub const AVX512: Registration = Registration {
    spec: &AVX512_SPEC,
    family: &FAMILY,
    make: || Box::new(Variant::Avx512),
    strategies,
    synth: (
        "src/targets/x86/synth/x86-avx512.rules",
        include_str!("synth/x86-avx512.rules"),
    ),
};

/// x86's selection strategies: the generic ones, values wider than a register split into
/// registers (legalization: every rule written for one register applies to each part),
/// sums of byte products as multiply-adds of adjacent lanes (`vnni.rs`), and strided narrow
/// lanes widened in place (an `and` or a shift of the load instead of x86's byte shuffles).
fn strategies() -> Vec<Arc<dyn Strategy>> {
    strategy::with_generic(
        Some(SplitWide {
            min_bits: 128,
            structured_loads: false,
        }),
        Vec::new(),
        vec![
            Arc::new(vnni::ByteMultiplyAdds),
            Arc::new(strategy::WidenStridedLanesInPlace),
            Arc::new(strategy::ClampConvertedBack { min_bits: 16 }),
            Arc::new(gathers::TruncatedStridedWords),
            Arc::new(gathers::StridedWordsByHalves),
        ],
        strategy::OptionalStrategies {
            zero_extensions_read_as_signed: true,
            pairwise_multiply_adds: true,
        },
    )
}

// Strided slices of dense loads that clang lowers by sequences of its own, at what they
// cost.
//
// Every fourth half word of 64 bytes (eight lanes): two `vpblendw` against zero, two
// `vextracti128` and three `vpackusdw`, seven operations where the generic estimate of a
// one-register slice says one shuffle; so priced, eight lanes looked far cheaper per lane
// than sixteen, which clang gathers in 13 (`fuzz_1_152`: 0.85x clang -O3 at 8 lanes, 1.02x
// at 16). Every third half word the other way: sixteen of them from 96 bytes take eleven
// operations (a `vpblendvb`, a `vpermq`, three blends, two `vpshufb`, ...), about what the
// generic estimate of eight lanes' gather doubled and more says, where eight take four
// (`fuzz_1_111` 1.25x clang -O3 at 8 lanes and 1.02x at 16; `fuzz_1_117` 0.98x and 0.93x);
// and thirty-two more than twice sixteen again, their window's registers all tangled
// (priced at sixteen's only, `fuzz_1_61` took 32 lanes at 0.79x where 16 ran 0.96x).
//
// Every third byte of a dense load. clang lowers a load of 48, 96 or 192 bytes and one
// stride-3 shuffle of it by its own interleaved-access sequence: at 16 lanes four `pshufb`
// and two `por`, dearer than the one shuffle the generic estimate says; at 32 lanes the
// three 32-byte rows loaded as 16-byte halves side by side, so the shuffles stay within
// 128-bit lanes: a `vpblendvb`, two `vpshufb` and a `vpor` for 32 bytes, far cheaper than
// the generic estimate of a lane-crossing gather (measured: `fuzz_1_187`, a strided copy,
// runs as fast as clang's own loop at 32 lanes and 7% slower at 16).
//
// Every sixth byte of 96 (the low bytes of every third word, `gathers.rs`): a `vpblendvb`
// and a `vextracti128` of the first 64 bytes, four `vpshufb`, two `vpor` and a second
// `vpblendvb` for 16 lanes, five of them shuffles. Priced as one shuffle, such gathers
// were taken beside word gathers of the same rows (fuzz_3_26 of seed 3: 0.90x clang -O3
// where packing the gathered words ran 1.02x); priced at eleven, never, though alone
// they beat gathering words and packing them (fuzz_5_17: 1.00x, packed 0.92x).

/// One entry of the tables below.
const fn deinterleaved(
    elem_bits: u32,
    stride: u32,
    loaded_bits: u64,
    cost: f64,
) -> DeinterleavedLoad {
    DeinterleavedLoad {
        elem_bits,
        stride,
        loaded_bits,
        cost,
    }
}

/// AVX2's: the half words measured there and the byte triples up to 32 lanes.
static AVX2_DEINTERLEAVED_LOADS: [DeinterleavedLoad; 6] = [
    deinterleaved(16, 4, 512, 4.0),
    deinterleaved(16, 3, 768, 10.0),
    deinterleaved(8, 6, 768, 6.0),
    deinterleaved(16, 3, 1536, 24.0),
    deinterleaved(8, 3, 384, 3.0),
    deinterleaved(8, 3, 768, 3.5),
];

/// AVX-512's: the byte triples up to 64 lanes (its word permutes make the half words'
/// gathers another matter, unmeasured).
static AVX512_DEINTERLEAVED_LOADS: [DeinterleavedLoad; 3] = [
    deinterleaved(8, 3, 384, 3.0),
    deinterleaved(8, 3, 768, 3.5),
    deinterleaved(8, 3, 1536, 4.0),
];

/// An x86 target variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// AVX2 (`-march=x86-64-v3`): 256-bit registers.
    Avx2,
    /// AVX-512 with VNNI and VBMI (`-march=x86-64-v4 -mavx512vnni -mavx512vbmi`).
    Avx512,
}

impl Variant {
    /// The variant's registry entry.
    pub fn target_spec(self) -> &'static TargetSpec {
        match self {
            Variant::Avx2 => &AVX2_SPEC,
            Variant::Avx512 => &AVX512_SPEC,
        }
    }

    /// CPU features the variant may use.
    pub fn features(self) -> BTreeSet<&'static str> {
        self.target_spec().features.iter().copied().collect()
    }

    /// The CPU features its programs need beyond the SSE baseline every x86-64 machine
    /// has: the AVX2 and AVX-512 entries of [`Variant::features`], which are also the
    /// names `is_x86_feature_detected!` uses.
    pub fn runtime_features(self) -> Vec<&'static str> {
        self.features()
            .into_iter()
            .filter(|f| f.starts_with("avx2") || f.starts_with("avx512"))
            .collect()
    }
}

impl crate::isa::target::Target for Variant {
    fn spec(&self) -> &'static TargetSpec {
        self.target_spec()
    }

    fn folds_widening_loads(&self) -> bool {
        true
    }

    fn narrows_in_one_instruction(&self) -> bool {
        // vpmovdb, vpmovqb, vpmovqw, vpmovdw (AVX-512F) and vpmovwb (AVX-512BW).
        matches!(self, Variant::Avx512)
    }

    fn narrows_late(&self) -> bool {
        // Two packs per narrowing of dwords to bytes: one narrowing of the result is
        // cheaper than several of the operands (fuzz_3_76 of seed 3).
        true
    }

    fn narrows_late_through_extensions(&self) -> bool {
        true
    }

    fn float_isa(&self) -> Option<Result<&'static crate::isa::float::FloatIsa, crate::diag::Diag>> {
        Some(float::table(*self))
    }

    fn derives_neighbour_loads(&self) -> bool {
        true
    }

    /// 16 general registers: the rows of a product up to 14 (13 taps and the matrix row)
    /// each in its own, as clang keeps them in the scalar baseline; left to clang's loop
    /// strength reduction they become one pointer stepped by the stride before every load,
    /// an `add` per load on the critical path of the address (a 13-term byte product:
    /// 0.86-0.91x clang -O3 unpinned, 1.01-1.09x pinned). 17 pinned rows spill (0.74-0.82x).
    fn pinned_row_pointers(&self) -> usize {
        14
    }

    fn deinterleaved_loads(&self) -> &'static [DeinterleavedLoad] {
        match self {
            Variant::Avx2 => &AVX2_DEINTERLEAVED_LOADS,
            Variant::Avx512 => &AVX512_DEINTERLEAVED_LOADS,
        }
    }

    fn vector_registers(&self) -> u32 {
        match self {
            Variant::Avx2 => 16,
            Variant::Avx512 => 32,
        }
    }

    fn cannot_run_here(&self) -> Option<String> {
        let missing = host_lacks(&self.runtime_features())?;
        Some(format!(
            "host lacks {missing}: this machine cannot run {} code (it is still compiled and selected)",
            self.target_spec().name
        ))
    }

    fn c_header(&self) -> String {
        "#include <immintrin.h>\n#include <stdint.h>\n#include <string.h>\n".into()
    }

    fn c_type(&self, t: Type) -> Option<String> {
        if t.elem == Elem::Bool {
            // AVX-512 compare results live in mask registers, one bit per lane.
            return match (self, t.lanes) {
                (Variant::Avx512, 1..=8) => Some("__mmask8".into()),
                (Variant::Avx512, 16) => Some("__mmask16".into()),
                (Variant::Avx512, 32) => Some("__mmask32".into()),
                (Variant::Avx512, 64) => Some("__mmask64".into()),
                _ => None,
            };
        }
        if t.lanes == 1 {
            return Some(t.elem.c_name().into());
        }
        match t.total_bits() {
            128 => Some("__m128i".into()),
            256 => Some("__m256i".into()),
            512 if *self == Variant::Avx512 => Some("__m512i".into()),
            _ => None,
        }
    }

    fn c_load(&self, t: Type, ptr: &str) -> String {
        if t.elem == Elem::Bool || t.lanes == 1 {
            let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
            return crate::isa::target::c_memcpy_load(&ty, ptr);
        }
        match t.total_bits() {
            128 => format!("_mm_loadu_si128((const __m128i *)({ptr}))"),
            256 => format!("_mm256_loadu_si256((const __m256i *)({ptr}))"),
            _ => format!("_mm512_loadu_si512((const void *)({ptr}))"),
        }
    }

    fn c_store(&self, t: Type, ptr: &str, v: &str) -> String {
        if t.elem == Elem::Bool || t.lanes == 1 {
            let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
            return crate::isa::target::c_memcpy_store(&ty, ptr, v);
        }
        match t.total_bits() {
            128 => format!("_mm_storeu_si128((__m128i *)({ptr}), {v});"),
            256 => format!("_mm256_storeu_si256((__m256i *)({ptr}), {v});"),
            _ => format!("_mm512_storeu_si512((void *)({ptr}), {v});"),
        }
    }
}

// The hand-written descriptions, and the imported ones of intrinsics they do not describe.
static ALL: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| match FAMILY.imported {
    Some(imported) => Isa::load_files_with_imported("x86", FILES, imported),
    None => Isa::load_files("x86", FILES),
});

/// Every x86 instruction description.
pub fn all() -> Result<&'static Isa, Diag> {
    ALL.as_ref().map_err(|d| d.clone())
}

static HAND: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| Isa::load_files("x86", FILES));

/// The hand-written x86 descriptions alone.
pub fn hand() -> Result<&'static Isa, Diag> {
    HAND.as_ref().map_err(|d| d.clone())
}

/// True when this machine can run AVX-512 code (F, BW, DQ and VL, as the variant uses).
/// Tests that run AVX-512 programs natively say they are skipped without it: no installable
/// tool adds a CPU feature.
pub fn host_has_avx512() -> bool {
    host_lacks(&Variant::Avx512.runtime_features()).is_none()
}

/// The first of `features` this machine lacks, if any.
pub fn host_lacks(features: &[&'static str]) -> Option<&'static str> {
    features.iter().copied().find(|f| !host_has(f))
}

/// True when this machine has the x86 feature `f` (`false` off x86).
fn host_has(f: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match f {
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512dq" => std::arch::is_x86_feature_detected!("avx512dq"),
            "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
            "avx512vnni" => std::arch::is_x86_feature_detected!("avx512vnni"),
            "avx512vbmi" => std::arch::is_x86_feature_detected!("avx512vbmi"),
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = f;
        false
    }
}

/// The instructions a variant may use.
pub fn isa(v: Variant) -> Result<Isa, Diag> {
    Ok(all()?.with_features(&v.features()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_load() {
        let isa = all().unwrap_or_else(|d| panic!("{d}"));
        assert!(isa.instrs.len() > 50, "{}", isa.instrs.len());
        let avx2 = super::isa(Variant::Avx2).unwrap();
        assert!(
            avx2.instrs
                .iter()
                .all(|i| !i.intrinsic.starts_with("_mm512"))
        );
        for i in isa.instrs.iter().take(3) {
            println!(
                "{} {} {:?} -> {} = {}",
                i.mnemonic, i.intrinsic, i.params, i.result, i.semantics
            );
        }
        println!(
            "{} instructions, {} derived rules",
            isa.instrs.len(),
            isa.derived.len()
        );
    }

    #[test]
    fn the_tables_hold_imported_descriptions_of_intrinsics_not_described_by_hand() {
        let added = crate::isa::imported_additions(hand().unwrap(), all().unwrap());
        let avx2 = super::isa(Variant::Avx2).unwrap().instrs.len();
        println!("{avx2} usable by x86-avx2");
        assert!(added.len() >= 500, "{} added", added.len());
        assert!(added.contains(&"_mm256_sign_epi16"));
    }
}
