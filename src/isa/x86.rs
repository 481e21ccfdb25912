//! The x86 target: what the descriptions in `isa/x86/` cannot say.

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use super::Isa;
use crate::diag::{Diag, Source};
use crate::types::{Elem, Type};

/// The description files, embedded in the binary.
pub const FILES: &[(&str, &str)] = &[
    ("isa/x86/arith.isa", include_str!("../../isa/x86/arith.isa")),
    ("isa/x86/mul.isa", include_str!("../../isa/x86/mul.isa")),
    ("isa/x86/logic.isa", include_str!("../../isa/x86/logic.isa")),
    (
        "isa/x86/compare.isa",
        include_str!("../../isa/x86/compare.isa"),
    ),
    (
        "isa/x86/convert.isa",
        include_str!("../../isa/x86/convert.isa"),
    ),
    (
        "isa/x86/permute.isa",
        include_str!("../../isa/x86/permute.isa"),
    ),
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
    /// The target name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Avx2 => "x86-avx2",
            Variant::Avx512 => "x86-avx512",
        }
    }

    /// Widest register in bits.
    pub fn register_bits(self) -> u32 {
        match self {
            Variant::Avx2 => 256,
            Variant::Avx512 => 512,
        }
    }

    /// CPU features the variant may use.
    pub fn features(self) -> BTreeSet<&'static str> {
        let mut f: BTreeSet<&str> = ["sse2", "ssse3", "sse41", "sse42", "avx", "avx2"]
            .into_iter()
            .collect();
        if self == Variant::Avx512 {
            f.extend([
                "avx512f",
                "avx512bw",
                "avx512dq",
                "avx512vl",
                "avx512vnni",
                "avx512vbmi",
            ]);
        }
        f
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

    /// clang-19 flags for the variant.
    pub fn clang_flags(self) -> &'static [&'static str] {
        match self {
            Variant::Avx2 => &["-march=x86-64-v3"],
            Variant::Avx512 => &["-march=x86-64-v4", "-mavx512vnni", "-mavx512vbmi"],
        }
    }
}

impl super::target::Target for Variant {
    fn name(&self) -> &str {
        Variant::name(*self)
    }

    fn register_bits(&self) -> u32 {
        Variant::register_bits(*self)
    }

    fn folds_widening_loads(&self) -> bool {
        true
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
            self.name()
        ))
    }

    fn split_wide(&self) -> bool {
        // A value wider than a register is its register-sized parts (legalization):
        // every rule written for one register then applies to each part.
        true
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
            return format!(
                "({{ {ty} v_; __builtin_memcpy(&v_, (const void *)({ptr}), sizeof v_); v_; }})"
            );
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
            return format!(
                "{{ {ty} v_ = {v}; __builtin_memcpy((void *)({ptr}), &v_, sizeof v_); }}"
            );
        }
        match t.total_bits() {
            128 => format!("_mm_storeu_si128((__m128i *)({ptr}), {v});"),
            256 => format!("_mm256_storeu_si256((__m256i *)({ptr}), {v});"),
            _ => format!("_mm512_storeu_si512((void *)({ptr}), {v});"),
        }
    }

    fn compiler(&self) -> (String, Vec<String>) {
        (
            "clang-19".into(),
            self.clang_flags().iter().map(|s| s.to_string()).collect(),
        )
    }

    fn run_command(&self, exe: &std::path::Path) -> std::process::Command {
        std::process::Command::new(exe)
    }
}

static ALL: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| {
    let sources: Vec<Arc<Source>> = FILES.iter().map(|(n, t)| Source::new(*n, *t)).collect();
    Isa::load("x86", &sources)
});

/// Every x86 instruction description.
pub fn all() -> Result<&'static Isa, Diag> {
    ALL.as_ref().map_err(|d| d.clone())
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
}
