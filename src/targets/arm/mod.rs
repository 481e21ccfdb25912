//! The AArch64 Neon target (`arm-neon`): what the descriptions in `isa/` cannot say.
//!
//! Programs are built with clang-19 for `aarch64-linux-gnu` (Armv8.2-A with the dot product
//! extension, static against the Debian cross sysroot) and run under `qemu-aarch64 -cpu max`.

pub mod dot;
pub mod float;
pub mod import;

use std::sync::{Arc, LazyLock};

use super::{Family, Registration};
use crate::diag::Diag;
use crate::isa::Isa;
use crate::isa::target::{OpCheckSuite, TargetSpec, Toolchain};
use crate::lower::strategy::{self, SplitWide, Strategy};
use crate::types::{Elem, Type};

/// The description files, embedded in the binary.
pub const FILES: &[(&str, &str)] = &[
    (
        "src/targets/arm/isa/arith.isa",
        include_str!("isa/arith.isa"),
    ),
    (
        "src/targets/arm/isa/widen.isa",
        include_str!("isa/widen.isa"),
    ),
    (
        "src/targets/arm/isa/shift.isa",
        include_str!("isa/shift.isa"),
    ),
    ("src/targets/arm/isa/mul.isa", include_str!("isa/mul.isa")),
    (
        "src/targets/arm/isa/compare.isa",
        include_str!("isa/compare.isa"),
    ),
    (
        "src/targets/arm/isa/permute.isa",
        include_str!("isa/permute.isa"),
    ),
];

/// The Arm family: its descriptions and hand-written lowering rules.
pub static FAMILY: Family = Family {
    name: "arm",
    isa: all,
    hand_isa: hand,
    rules: ("src/targets/arm/lower.rules", include_str!("lower.rules")),
    importer: Some(import::import),
    imported: Some((
        "src/targets/arm/imported/arm.isa",
        include_str!("imported/arm.isa"),
    )),
};

/// `arm-neon`.
pub static SPEC: TargetSpec = TargetSpec {
    name: "arm-neon",
    family: "arm",
    summary: "AArch64 Neon with the dot product extension (128-bit registers), run under qemu-aarch64",
    features: &["neon", "dotprod"],
    register_bits: 128,
    halide_target: Some("arm-64-linux-arm_dot_prod-no_asserts"),
    op_check: Some(OpCheckSuite {
        file: "arm.txt",
        section: |h| h.contains("arm_dot_prod"),
        translation: None,
        // A load or store pair is two loads or stores in one instruction, which clang
        // forms once it sees two are adjacent (32 bytes are `ldp q0, q1`).
        also_met_by: &[("ldr", "ldp"), ("str", "stp")],
    }),
    toolchain: Toolchain::clang_under_qemu(CLANG_FLAGS, &[], &["qemu-aarch64", "-cpu", "max"]),
};

/// The registry entry of `arm-neon`.
pub const NEON: Registration = Registration {
    spec: &SPEC,
    family: &FAMILY,
    make: || Box::new(Neon),
    strategies,
    synth: (
        "src/targets/arm/synth/arm-neon.rules",
        include_str!("synth/arm-neon.rules"),
    ),
};

/// Arm's selection strategies: the generic ones, with values wider than a 128-bit register
/// split down to 64-bit halves (the long, wide and narrowing instructions work on halves),
/// strided slices split into slices of half-loads (one `ld2`..`ld4` each), sums of byte
/// products as dot products (`dot.rs`), and widenings by four of less than a 64-bit
/// register as two by two.
fn strategies() -> Vec<Arc<dyn Strategy>> {
    strategy::with_generic(
        Some(SplitWide {
            min_bits: 64,
            structured_loads: true,
        }),
        Vec::new(),
        vec![
            Arc::new(dot::DotProducts),
            Arc::new(crate::lower::macc::MultiplyAccumulateChain),
            Arc::new(strategy::WidenInSteps { below_bits: 64 }),
        ],
        strategy::OptionalStrategies {
            zero_extensions_read_as_signed: true,
            pairwise_multiply_adds: true,
        },
    )
}

/// The AArch64 Neon target with the dot product extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neon;

/// clang-19 flags for the target.
pub const CLANG_FLAGS: &[&str] = &[
    "--target=aarch64-linux-gnu",
    "-march=armv8.2-a+dotprod",
    "-static",
];

/// The Neon type name of a 64- or 128-bit integer vector (`uint8x16_t`).
pub fn neon_type(t: Type) -> Option<String> {
    if t.elem == Elem::Bool || t.elem.bits() > 64 {
        return None;
    }
    // Neon's names are Halide's element names (`uint8`, `int16`) with the lane count.
    let base = t.elem.halide_name();
    match t.total_bits() {
        64 | 128 if t.lanes > 1 => Some(format!("{base}x{}_t", t.lanes)),
        _ => None,
    }
}

impl crate::isa::target::Target for Neon {
    fn spec(&self) -> &'static TargetSpec {
        &SPEC
    }

    fn float_isa(&self) -> Option<Result<&'static crate::isa::float::FloatIsa, crate::diag::Diag>> {
        Some(float::table())
    }

    fn c_header(&self) -> String {
        "#include <arm_neon.h>\n#include <stdint.h>\n#include <string.h>\n".into()
    }

    fn c_type(&self, t: Type) -> Option<String> {
        if t.elem == Elem::Bool {
            // Neon compares give all-ones lanes; harrow keeps booleans as 0/1 bytes.
            return None;
        }
        if t.lanes == 1 {
            return Some(t.elem.c_name().into());
        }
        neon_type(t)
    }

    fn c_load(&self, t: Type, ptr: &str) -> String {
        // memcpy of a register's bytes compiles to one unaligned `ldr`.
        let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
        crate::isa::target::c_memcpy_load(&ty, ptr)
    }

    fn c_deinterleaving_load(
        &self,
        dst: &str,
        src: &str,
        part: Type,
        stride: u32,
    ) -> Option<String> {
        // `vld3q_s16` loads three registers of `int16x8_t` deinterleaved (`ld3`).
        let name = neon_type(part)?;
        if !(2..=4).contains(&stride) {
            return None;
        }
        let q = if part.total_bits() == 128 { "q" } else { "" };
        let suffix = format!(
            "{}{}",
            if part.elem.is_signed() { "s" } else { "u" },
            part.elem.bits()
        );
        let base = name.trim_end_matches("_t");
        let parts: Vec<String> = (0..stride)
            .map(|k| format!("{dst}_{k} = {dst}_all.val[{k}]"))
            .collect();
        Some(format!(
            "{base}x{stride}_t {dst}_all = vld{stride}{q}_{suffix}((const {}_t *)({src})); {name} {};",
            part.elem.halide_name(),
            parts.join(", ")
        ))
    }

    fn c_store(&self, t: Type, ptr: &str, v: &str) -> String {
        let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
        crate::isa::target::c_memcpy_store(&ty, ptr, v)
    }

    fn is_branch(&self, instruction: &str) -> bool {
        // `b`, `b.ne`, `bl`...; the logic instructions that also start with a `b` are not.
        instruction.starts_with('b')
            && !["bic", "bsl", "bif", "bit"]
                .iter()
                .any(|p| instruction.starts_with(p))
    }

    /// 31 general registers: rows of a product, with room for the loop's own.
    fn pinned_row_pointers(&self) -> usize {
        24
    }

    fn pairs_short_bodies(&self) -> bool {
        true
    }

    fn counted_row_loops(&self) -> bool {
        true
    }

    fn narrows_select_masks(&self) -> bool {
        // `xtn` of the comparison's mask (fuzz_7_181 of seed 7).
        true
    }

    fn narrows_by_table(&self) -> bool {
        // clang-19 truncates u32x16 to u8x16 with one `tbl` of four registers, u32x8 or
        // u16x16 with one `tbl`/`uzp1` of two, where `xtn` takes a step per halving.
        true
    }

    fn floors_by_remainder(&self) -> bool {
        // Measured on the seeds' signed divisions: the remainder (`mls`) and its sign
        // (`ssra`) are two instructions; moving the dividend first costs three.
        true
    }

    fn narrows_selects_late(&self) -> bool {
        // A narrow select of narrowings loses its bit-select to clang's folding of the
        // masks into the narrowings (fuzz_7_181 of seed 7).
        true
    }

    fn mca_model(&self) -> Option<(&'static str, &'static str)> {
        Some(("aarch64-linux-gnu", "cortex-a76"))
    }
}

// The hand-written descriptions, and the imported ones of intrinsics they do not describe.
static ALL: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| match FAMILY.imported {
    Some(imported) => Isa::load_files_with_imported("arm", FILES, imported),
    None => Isa::load_files("arm", FILES),
});

/// Every Arm Neon instruction description.
pub fn all() -> Result<&'static Isa, Diag> {
    ALL.as_ref().map_err(|d| d.clone())
}

static HAND: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| Isa::load_files("arm", FILES));

/// The hand-written Arm Neon descriptions alone.
pub fn hand() -> Result<&'static Isa, Diag> {
    HAND.as_ref().map_err(|d| d.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_load() {
        let isa = all().unwrap_or_else(|d| panic!("{d}"));
        let names: std::collections::BTreeSet<&str> =
            isa.instrs.iter().map(|i| i.intrinsic.as_str()).collect();
        assert!(names.len() >= 150, "{} intrinsics", names.len());
        assert!(names.contains("vdotq_u32") && names.contains("vqrshrun_n_s16"));
    }

    #[test]
    fn neon_types() {
        let t = |s: &str| Type::parse(s, false).unwrap();
        assert_eq!(neon_type(t("u8x16")).as_deref(), Some("uint8x16_t"));
        assert_eq!(neon_type(t("i16x4")).as_deref(), Some("int16x4_t"));
        assert_eq!(neon_type(t("u16x16")), None);
    }

    #[test]
    fn branches_are_told_from_bit_selects() {
        use crate::isa::target::Target;
        assert!(Neon.is_branch("b.ne 0x400580") && Neon.is_branch("b 0x400580"));
        assert!(!Neon.is_branch("bsl v0.16b, v1.16b, v2.16b") && !Neon.is_branch("bic v0.16b"));
    }
}
