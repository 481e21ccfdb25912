//! The RISC-V Vector target (`riscv-v`): RVV 1.0 with VLEN fixed at 128 bits, what the
//! descriptions in `isa/` cannot say.
//!
//! Programs are built with clang-19 for `riscv64-linux-gnu` (`-march=rv64gcv
//! -mrvv-vector-bits=128`, static against the Debian cross sysroot) and run under
//! `qemu-riscv64 -cpu rv64,v=true,vlen=128`. Fixing VLEN makes every register a known size,
//! so values live in fixed-length types (`runtime/rvv_helpers.h`): a half register (LMUL
//! 1/2, 64 bits), a register (LMUL 1, 128 bits) or a group of two (LMUL 2, 256 bits), the
//! group playing the part a register pair plays elsewhere: widening instructions write one
//! from a register and narrowing instructions read one. Every intrinsic takes the vector
//! length, which the descriptions state as a fixed immediate (the lanes of the type), and
//! the fixed-point ones take the rounding mode (`vxrm`) the same way.

use std::sync::{Arc, LazyLock};

use super::{Family, Registration};
use crate::diag::Diag;
use crate::isa::Isa;
use crate::isa::target::{OpCheckSuite, Purpose, TargetSpec, Toolchain};
use crate::lower::macc::MultiplyAccumulateChain;
use crate::lower::strategy::{self, SplitWide, Strategy};
use crate::types::{Elem, Type};

/// The description files, embedded in the binary.
pub const FILES: &[(&str, &str)] = &[
    (
        "src/targets/riscv_v/isa/arith.isa",
        include_str!("isa/arith.isa"),
    ),
    (
        "src/targets/riscv_v/isa/widen.isa",
        include_str!("isa/widen.isa"),
    ),
    (
        "src/targets/riscv_v/isa/shift.isa",
        include_str!("isa/shift.isa"),
    ),
    (
        "src/targets/riscv_v/isa/mul.isa",
        include_str!("isa/mul.isa"),
    ),
    (
        "src/targets/riscv_v/isa/compare.isa",
        include_str!("isa/compare.isa"),
    ),
    (
        "src/targets/riscv_v/isa/permute.isa",
        include_str!("isa/permute.isa"),
    ),
];

/// The RISC-V family: its descriptions and hand-written lowering rules.
pub static FAMILY: Family = Family {
    name: "riscv",
    isa: all,
    hand_isa: all,
    rules: (
        "src/targets/riscv_v/lower.rules",
        include_str!("lower.rules"),
    ),
    importer: None,
    imported: None,
};

/// `riscv-v`.
pub static SPEC: TargetSpec = TargetSpec {
    name: "riscv-v",
    family: "riscv",
    summary: "RISC-V RVV 1.0 with VLEN fixed at 128 bits, run under qemu-riscv64",
    features: &["v"],
    // A group of four registers (LMUL 4) is the register of selection: one instruction
    // works on all of it, and widening to LMUL 8 is its pair (a group of eight).
    register_bits: 512,
    halide_target: None,
    op_check: Some(OpCheckSuite {
        // Halide's simd_op_check has no RISC-V section: the Arm section's expressions,
        // with the RVV instruction expected in place of each Arm one (`opcheck.map`).
        file: "arm.txt",
        section: |h| h.contains("arm_dot_prod"),
        translation: Some((
            "src/targets/riscv_v/opcheck.map",
            include_str!("opcheck.map"),
        )),
        also_met_by: &[],
    }),
    toolchain: Toolchain::clang_under_qemu(
        &[
            "--target=riscv64-linux-gnu",
            "-march=rv64gcv",
            "-mrvv-vector-bits=128",
            "-static",
        ],
        // The hardware check is one program calling thousands of intrinsics: clang-19's
        // RISC-V backend takes minutes on it once optimising, and the calls are the same
        // at any level.
        &[(Purpose::HardwareCheck, "-O0")],
        // `vext_spec` stated, or qemu 7.2 prints a notice into the trace log.
        &[
            "qemu-riscv64",
            "-cpu",
            "rv64,v=true,vlen=128,vext_spec=v1.0",
        ],
    ),
};

/// The registry entry of `riscv-v`.
pub const RVV: Registration = Registration {
    spec: &SPEC,
    family: &FAMILY,
    make: || Box::new(RiscvV),
    strategies,
    synth: (
        "src/targets/riscv_v/synth/riscv-v.rules",
        include_str!("synth/riscv-v.rules"),
    ),
};

/// RISC-V's selection strategies: the generic ones, with values wider than a register
/// group split into registers and halves (down to a half register), strided slices split
/// into slices of half-loads (each one segment load), and sums of weighted taps as chains
/// of widening multiply-accumulates by scalars (`vwmacc.vx`, `vwmaccsu.vx`). Not the
/// optional generic ones: they changed no RISC-V code and cost selection time.
fn strategies() -> Vec<Arc<dyn Strategy>> {
    strategy::with_generic(
        Some(SplitWide {
            min_bits: 64,
            structured_loads: true,
        }),
        Vec::new(),
        vec![Arc::new(MultiplyAccumulateChain)],
        strategy::OptionalStrategies {
            zero_extensions_read_as_signed: false,
            pairwise_multiply_adds: false,
        },
    )
}

/// A segment load of `stride` fields of type `part` (at most eight registers in all)
/// declaring `{dst}_k` for each field `k`.
fn segment_load(dst: &str, src: &str, part: Type, stride: u32, suffix: &str) -> String {
    let bits = part.elem.bits();
    let lmul = &suffix[1 + bits.to_string().len()..];
    let sizeless = format!(
        "v{}int{bits}{lmul}x{stride}_t",
        if part.elem.is_signed() { "" } else { "u" },
    );
    let fields: Vec<String> = (0..stride)
        .map(|k| format!("{dst}_{k} = __riscv_vget_v_{suffix}x{stride}_{suffix}({dst}_all, {k})"))
        .collect();
    format!(
        "{sizeless} {dst}_all = __riscv_vlseg{stride}e{bits}_v_{suffix}x{stride}((const {} *)({src}), {}); rv_{suffix} {};",
        part.elem.c_name(),
        part.lanes,
        fields.join(", ")
    )
}

/// The RISC-V Vector target, VLEN 128.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RiscvV;

/// The suffix of a type in intrinsic and helper names (`u8m1`), when it has a register
/// type: 64 (LMUL 1/2, not for 64-bit lanes), 128 (LMUL 1) or 256 to 1024 bits (LMUL 2 to
/// 8).
pub fn type_suffix(t: Type) -> Option<String> {
    if t.elem == Elem::Bool || t.lanes < 2 || t.elem.bits() > 64 {
        return None;
    }
    let lmul = match t.total_bits() {
        64 if t.elem.bits() < 64 => "mf2",
        128 => "m1",
        256 => "m2",
        512 => "m4",
        1024 => "m8",
        _ => return None,
    };
    let sign = if t.elem.is_signed() { "i" } else { "u" };
    Some(format!("{sign}{}{lmul}", t.elem.bits()))
}

impl crate::isa::target::Target for RiscvV {
    fn spec(&self) -> &'static TargetSpec {
        &SPEC
    }

    fn vector_registers(&self) -> u32 {
        // 32 registers of 128 bits are 8 groups of four, selection's register.
        8
    }

    fn c_vector_registers(&self) -> u32 {
        // clang splits a fixed-length vector of any size into register groups itself and
        // divides each by its reciprocal: divided a group of four registers at a time,
        // divisions by constants took 12-26% more instructions (fuzz_8_104, fuzz_7_164).
        u32::MAX
    }

    fn c_header(&self) -> String {
        format!(
            "#include <riscv_vector.h>\n#include <stdint.h>\n#include <string.h>\n{}",
            include_str!("runtime/rvv_helpers.h")
        )
    }

    fn c_type(&self, t: Type) -> Option<String> {
        if t.elem == Elem::Bool {
            // Compares give mask registers; harrow keeps booleans as 0/1 lanes.
            return None;
        }
        if t.lanes == 1 {
            return Some(t.elem.c_name().into());
        }
        type_suffix(t).map(|s| format!("rv_{s}"))
    }

    fn c_intrinsic_result(&self, t: Type, call: &str) -> String {
        // Intrinsics return sizeless types, which convert to the fixed-length type of the
        // same register but not to a generic vector.
        match self.c_type(t) {
            Some(ty) if !t.is_scalar() => format!("({ty}){call}"),
            _ => call.to_string(),
        }
    }

    fn c_load(&self, t: Type, ptr: &str) -> String {
        let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
        crate::isa::target::c_memcpy_load(&ty, ptr)
    }

    fn c_store(&self, t: Type, ptr: &str, v: &str) -> String {
        let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
        crate::isa::target::c_memcpy_store(&ty, ptr, v)
    }

    fn c_deinterleaving_load(
        &self,
        dst: &str,
        src: &str,
        part: Type,
        stride: u32,
    ) -> Option<String> {
        // `vlseg3e16` loads three registers of 16-bit lanes deinterleaved (segment loads).
        // A segment load writes at most eight registers: wider parts are loaded as two
        // halves, each half a segment load, and joined (`vcreate`, no instruction).
        let suffix = type_suffix(part)?;
        if !(2..=4).contains(&stride) {
            return None;
        }
        if part.total_bits() * u64::from(stride) <= 1024 {
            return Some(segment_load(dst, src, part, stride, &suffix));
        }
        let half = part.with_lanes(part.lanes / 2);
        let half_suffix = type_suffix(half)?;
        if half.total_bits() * u64::from(stride) > 1024 {
            return None;
        }
        let lo = segment_load(&format!("{dst}_lo"), src, half, stride, &half_suffix);
        let hi_src = format!("({src}) + {}", u64::from(half.lanes) * u64::from(stride));
        let hi = segment_load(&format!("{dst}_hi"), &hi_src, half, stride, &half_suffix);
        let parts: Vec<String> = (0..stride)
            .map(|k| {
                format!(
                    "{dst}_{k} = __riscv_vcreate_v_{half_suffix}_{suffix}({dst}_lo_{k}, {dst}_hi_{k})"
                )
            })
            .collect();
        Some(format!("{lo} {hi} rv_{suffix} {};", parts.join(", ")))
    }

    fn instruction_sizes(&self) -> (u64, u64) {
        // rv64gc: compressed instructions are two bytes.
        (2, 4)
    }

    fn is_branch(&self, instruction: &str) -> bool {
        // Conditional branches (`beq`, `bnez`, ...) and jumps (`j`, `jal`, `jalr`, `jr`).
        instruction.starts_with('b') || instruction.starts_with('j')
    }

    fn mca_model(&self) -> Option<(&'static str, &'static str)> {
        Some(("riscv64", "sifive-x280"))
    }
}

static ALL: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| Isa::load_files("riscv", FILES));

/// Every RISC-V Vector instruction description.
pub fn all() -> Result<&'static Isa, Diag> {
    ALL.as_ref().map_err(|d| d.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::target::Target;

    #[test]
    fn register_types_by_lmul() {
        let t = |s: &str| Type::parse(s, false).unwrap();
        assert_eq!(RiscvV.c_type(t("u8x16")).as_deref(), Some("rv_u8m1"));
        assert_eq!(RiscvV.c_type(t("i16x16")).as_deref(), Some("rv_i16m2"));
        assert_eq!(RiscvV.c_type(t("u32x2")).as_deref(), Some("rv_u32mf2"));
        assert_eq!(RiscvV.c_type(t("u64x4")).as_deref(), Some("rv_u64m2"));
        assert_eq!(RiscvV.c_type(t("u64x1")).as_deref(), Some("uint64_t"));
        assert_eq!(RiscvV.c_type(t("u8x64")).as_deref(), Some("rv_u8m4"));
        assert_eq!(RiscvV.c_type(t("i16x64")).as_deref(), Some("rv_i16m8"));
        assert_eq!(RiscvV.c_type(t("u8x256")), None);
        let load = RiscvV
            .c_deinterleaving_load("x", "p", t("i16x8"), 3)
            .unwrap();
        assert!(
            load.starts_with(
                "vint16m1x3_t x_all = __riscv_vlseg3e16_v_i16m1x3((const int16_t *)(p), 8);"
            ),
            "{load}"
        );
        assert!(
            load.contains("x_2 = __riscv_vget_v_i16m1x3_i16m1(x_all, 2)"),
            "{load}"
        );
    }

    #[test]
    fn descriptions_load() {
        let isa = all().unwrap_or_else(|d| panic!("{d}"));
        let names: std::collections::BTreeSet<&str> =
            isa.instrs.iter().map(|i| i.intrinsic.as_str()).collect();
        assert!(names.len() >= 150, "{} intrinsics", names.len());
        assert!(
            names.contains("__riscv_vaaddu_vv_u8m1") && names.contains("__riscv_vnclipu_wx_u8m1")
        );
    }
}
