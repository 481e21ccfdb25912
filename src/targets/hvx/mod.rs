//! The Hexagon HVX target (`hvx`, 128-byte vectors): what the descriptions in `isa/`
//! cannot say.
//!
//! Programs are built freestanding with clang-19 for Hexagon V67 with 128-byte HVX and run
//! under `qemu-hexagon`. There is no C library for Hexagon here, so harrow ships the few
//! pieces its programs use (`runtime/`: process entry, system calls, memory and string
//! helpers, a small printf) as headers that shadow the standard ones; they are written to a
//! directory under the system temporary directory and put first on the include path.

pub mod import;
pub mod reduce;

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use super::{Family, Registration};
use crate::diag::Diag;
use crate::isa::Isa;
use crate::isa::target::{OpCheckSuite, Purpose, TargetSpec, Toolchain};
use crate::lower::strategy::{self, Deinterleave, SplitWide, Strategy};
use crate::types::{Elem, Type};

/// The description files, embedded in the binary.
pub const FILES: &[(&str, &str)] = &[
    (
        "src/targets/hvx/isa/arith.isa",
        include_str!("isa/arith.isa"),
    ),
    (
        "src/targets/hvx/isa/widen.isa",
        include_str!("isa/widen.isa"),
    ),
    (
        "src/targets/hvx/isa/shift.isa",
        include_str!("isa/shift.isa"),
    ),
    ("src/targets/hvx/isa/mul.isa", include_str!("isa/mul.isa")),
    (
        "src/targets/hvx/isa/permute.isa",
        include_str!("isa/permute.isa"),
    ),
    (
        "src/targets/hvx/isa/compare.isa",
        include_str!("isa/compare.isa"),
    ),
];

/// The HVX family: its descriptions and hand-written lowering rules.
pub static FAMILY: Family = Family {
    name: "hvx",
    isa: all,
    hand_isa: hand,
    rules: ("src/targets/hvx/lower.rules", include_str!("lower.rules")),
    importer: Some(import::import),
    imported: Some((
        "src/targets/hvx/imported/hexagon.isa",
        include_str!("imported/hexagon.isa"),
    )),
};

/// `hvx`.
pub static SPEC: TargetSpec = TargetSpec {
    name: "hvx",
    family: "hvx",
    summary: "Hexagon V67 HVX with 128-byte vectors, freestanding, run under qemu-hexagon",
    features: &["hvx"],
    register_bits: VECTOR_BITS,
    // The harness is freestanding: no Halide runtime, its few entry points given by the
    // target (`Target::halide_glue`).
    halide_target: Some("hexagon-32-noos-hvx-hvx_128-no_asserts-no_bounds_query-no_runtime"),
    op_check: Some(OpCheckSuite {
        file: "hvx.txt",
        section: |h| h.starts_with("hexagon-32-noos-hvx-hvx_128"),
        translation: None,
        also_met_by: &[],
    }),
    toolchain: Toolchain::clang_under_qemu(CLANG_FLAGS, HEXAGON_OPT_LEVELS, &["qemu-hexagon"]),
};

/// Optimisation levels clang-19's Hexagon backend needs.
/// clang-19's Hexagon backend takes minutes on big batches of generic 128-lane code
/// at -O1 and above, and miscompiles some of it (a gather through an i32x128 index
/// at -O2; a crash at -O1 in a 466-case batch). Batches check harrow's choices, which
/// are intrinsic calls at any level, so they are built unoptimised. It also
/// miscompiles harrow's 128-bit generic helpers once it optimises them (they stay
/// unoptimised: `optnone` in the prelude), and at -O2 and -O3 also the `add`
/// benchmark's vector code. At -O1 every kernel agrees with the interpreter;
/// kernels (harrow's code and the harness) are built there.
const HEXAGON_OPT_LEVELS: &[(Purpose, &str)] = &[
    (Purpose::Cases, "-O0"),
    (Purpose::ConformanceAssembly, "-O0"),
    (Purpose::Kernel, "-O1"),
];

/// The registry entry of `hvx`.
pub const HVX: Registration = Registration {
    spec: &SPEC,
    family: &FAMILY,
    make: || Box::new(Hvx),
    strategies,
    synth: (
        "src/targets/hvx/synth/hvx.rules",
        include_str!("synth/hvx.rules"),
    ),
};

/// HVX's selection strategies: register pairs split into registers where no pair form
/// exists, wide values computed as their even and odd lanes (the layout of its widening
/// and narrowing instructions), and sums of byte products as reduction multiplies
/// (`reduce.rs`). Not the optional generic ones: no HVX instruction reads their forms, and
/// they were three quarters of the selection time of depthwise_conv.
fn strategies() -> Vec<Arc<dyn Strategy>> {
    strategy::with_generic(
        Some(SplitWide {
            min_bits: VECTOR_BITS,
            structured_loads: false,
        }),
        vec![Arc::new(Deinterleave)],
        vec![Arc::new(reduce::ReductionMultiplies)],
        strategy::OptionalStrategies {
            zero_extensions_read_as_signed: false,
            pairwise_multiply_adds: false,
        },
    )
}

/// Helpers that descriptions name as intrinsics: a pair shuffled or dealt in place, the
/// high word of a 32-bit product, and
/// compares as 0/1 lanes or feeding `vmux` (HVX compares give predicate registers).
const HELPERS: &str = r#"/* Exactly 128 bytes from any address. clang lowers a misaligned vector load to two aligned
   loads and a valign, which read up to a whole vector past the data (a fault after the
   last one); vmemu reads only the bytes asked for. */
static inline HVX_Vector hv_vmemu(const void *p) {
  HVX_Vector v;
  __asm__("%0 = vmemu(%1+#0)" : "=v"(v) : "r"(p) : "memory");
  return v;
}
/* The n < 128 bytes at p in the low lanes of a register (the rest unspecified): the aligned
   vectors holding them, joined by valign. An aligned vector that holds a byte of the data
   lies within that byte's page, so this never touches an unmapped page, where a 128-byte
   vmemu would read past short data. */
static inline HVX_Vector hv_vload_part(const void *p, unsigned n) {
  unsigned off = (unsigned)(uintptr_t)p & 127;
  const char *base = (const char *)p - off;
  HVX_Vector a, b;
  __asm__("%0 = vmem(%1+#0)" : "=v"(a) : "r"(base) : "memory");
  if (off + n > 128)
    __asm__("%0 = vmem(%1+#1)" : "=v"(b) : "r"(base) : "memory");
  else
    b = a;
  return Q6_V_valign_VVR(b, a, off);
}
#define hv_W_vshuff_W(p, k) Q6_W_vshuff_VVR(Q6_V_hi_W(p), Q6_V_lo_W(p), k)
#define hv_W_vdeal_W(p, k) Q6_W_vdeal_VVR(Q6_V_hi_W(p), Q6_V_lo_W(p), k)
#define hv_mpy_hi_w(a, b) Q6_V_hi_W(Q6_W_vmpyoacc_WVwVh(Q6_W_vmpye_VwVuh(a, b), a, b))
#define hv_vcmp_gt_ub(a, b) Q6_V_vand_QR(Q6_Q_vcmp_gt_VubVub(a, b), 0x01010101)
#define hv_vcmp_gt_b(a, b) Q6_V_vand_QR(Q6_Q_vcmp_gt_VbVb(a, b), 0x01010101)
#define hv_vcmp_gt_uh(a, b) Q6_V_vand_QR(Q6_Q_vcmp_gt_VuhVuh(a, b), 0x00010001)
#define hv_vcmp_gt_h(a, b) Q6_V_vand_QR(Q6_Q_vcmp_gt_VhVh(a, b), 0x00010001)
#define hv_vcmp_gt_uw(a, b) Q6_V_vand_QR(Q6_Q_vcmp_gt_VuwVuw(a, b), 0x00000001)
#define hv_vcmp_gt_w(a, b) Q6_V_vand_QR(Q6_Q_vcmp_gt_VwVw(a, b), 0x00000001)
#define hv_vcmp_eq_b(a, b) Q6_V_vand_QR(Q6_Q_vcmp_eq_VbVb(a, b), 0x01010101)
#define hv_vcmp_eq_h(a, b) Q6_V_vand_QR(Q6_Q_vcmp_eq_VhVh(a, b), 0x00010001)
#define hv_vcmp_eq_w(a, b) Q6_V_vand_QR(Q6_Q_vcmp_eq_VwVw(a, b), 0x00000001)
#define hv_vmux_gt_ub(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VubVub(a, b), x, y)
#define hv_vmux_gt_b(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VbVb(a, b), x, y)
#define hv_vmux_gt_uh(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VuhVuh(a, b), x, y)
#define hv_vmux_gt_h(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VhVh(a, b), x, y)
#define hv_vmux_gt_uw(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VuwVuw(a, b), x, y)
#define hv_vmux_gt_w(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VwVw(a, b), x, y)
#define hv_vmux_eq_b(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_eq_VbVb(a, b), x, y)
#define hv_vmux_eq_h(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_eq_VhVh(a, b), x, y)
#define hv_vmux_eq_w(a, b, x, y) Q6_V_vmux_QVV(Q6_Q_vcmp_eq_VwVw(a, b), x, y)
"#;

/// The runtime headers (path inside the include directory, text).
const RUNTIME: &[(&str, &str)] = &[
    ("hv_rt.h", include_str!("runtime/hv_rt.h")),
    ("stdio.h", include_str!("runtime/stdio.h")),
    ("stdlib.h", include_str!("runtime/stdlib.h")),
    ("string.h", include_str!("runtime/string.h")),
    ("time.h", include_str!("runtime/time.h")),
    ("sys/mman.h", include_str!("runtime/sys/mman.h")),
];

/// The HVX target: Hexagon V67, 128-byte vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hvx;

/// clang-19 flags for the target (the runtime's include directory is added to these).
pub const CLANG_FLAGS: &[&str] = &[
    "--target=hexagon",
    "-mv67",
    "-mhvx",
    "-mhvx-length=128b",
    "-ffreestanding",
    "-nostdlib",
    "-nostdlibinc",
    "-static",
    "-fuse-ld=lld",
];

/// The vector register width in bits.
pub const VECTOR_BITS: u32 = 1024;

/// The directory holding the runtime headers, written on first use.
fn runtime_dir() -> Result<&'static Path, String> {
    static DIR: LazyLock<Result<PathBuf, String>> = LazyLock::new(|| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        RUNTIME.hash(&mut h);
        let dir = std::env::temp_dir().join(format!("harrow-hexagon-rt-{:016x}", h.finish()));
        for (name, text) in RUNTIME {
            let p = dir.join(name);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            // Write to a private name and rename, so that concurrent processes never see a
            // half-written header.
            let tmp = p.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, text)
                .and_then(|_| std::fs::rename(&tmp, &p))
                .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        }
        Ok(dir)
    });
    DIR.as_deref().map_err(|e| e.clone())
}

impl crate::isa::target::Target for Hvx {
    fn spec(&self) -> &'static TargetSpec {
        &SPEC
    }

    fn c_dense_load(&self, dst: &str, src: &str, bytes: u64) -> Option<String> {
        if bytes < 128 {
            // Part of a register: aligned loads and valign (the library copy is a byte
            // loop here, 64 iterations per half-register load).
            return Some(format!(
                "{{ HVX_Vector t_ = hv_vload_part({src}, {bytes}); __builtin_memcpy(&{dst}, &t_, {bytes}); }}"
            ));
        }
        if bytes.is_multiple_of(128) {
            let parts: Vec<String> = (0..bytes / 128)
                .map(|k| {
                    format!(
                        "{{ HVX_Vector t_ = hv_vmemu((const char *)({src}) + {o}); __builtin_memcpy((char *)&{dst} + {o}, &t_, 128); }}",
                        o = 128 * k
                    )
                })
                .collect();
            return Some(parts.join(" "));
        }
        // Not a whole number of registers (a stride-3 window of 64 lanes, 192 bytes):
        // whole registers and a last part of one, like the short loads above, stored to
        // an aligned buffer and copied out. The library copy reads exactly these bytes
        // too, but byte by byte (192 packets for such a window: half clang's speed);
        // copying the registers straight into the odd-sized vector makes clang-19's
        // Hexagon backend fail to select an extract.
        let n = bytes.div_ceil(128);
        let mut s = format!("{{ HVX_Vector t_[{n}];");
        for k in 0..n {
            let o = 128 * k;
            let part = if o + 128 <= bytes {
                format!(" t_[{k}] = hv_vmemu((const char *)({src}) + {o});")
            } else {
                format!(
                    " t_[{k}] = hv_vload_part((const char *)({src}) + {o}, {});",
                    bytes - o
                )
            };
            s.push_str(&part);
        }
        s.push_str(&format!(" __builtin_memcpy(&{dst}, t_, {bytes}); }}"));
        Some(s)
    }

    fn chunk_by_narrowest(&self) -> bool {
        // A register of the narrowest lanes: widened values are register pairs.
        true
    }

    fn narrows_late(&self) -> bool {
        // A narrowing is a pack of register pairs (`vpack`, `vsat`): one of the result
        // beats several of the operands (fuzz_3_26 of seed 3: 2.3x -> 6.7x clang -O3).
        true
    }

    fn aligned_loads(&self) -> bool {
        // An unaligned vector load is two aligned loads and a valign.
        true
    }

    fn c_header(&self) -> String {
        format!(
            "#include <hexagon_types.h>\n#include <hvx_hexagon_protos.h>\n#include <stdint.h>\n#include <string.h>\n{HELPERS}"
        )
    }

    fn c_type(&self, t: Type) -> Option<String> {
        if t.elem == Elem::Bool {
            // Compares give predicate registers; harrow keeps booleans as 0/1 bytes.
            return None;
        }
        if t.lanes == 1 {
            return Some(t.elem.c_name().into());
        }
        match t.total_bits() {
            b if b == VECTOR_BITS as u64 => Some("HVX_Vector".into()),
            b if b == 2 * VECTOR_BITS as u64 => Some("HVX_VectorPair".into()),
            _ => None,
        }
    }

    fn c_load(&self, t: Type, ptr: &str) -> String {
        // A constant-size __builtin_memcpy is an unaligned vector load (vmemu), even when
        // freestanding.
        let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
        crate::isa::target::c_memcpy_load(&ty, ptr)
    }

    fn c_store(&self, t: Type, ptr: &str, v: &str) -> String {
        let ty = self.c_type(t).unwrap_or_else(|| "uint64_t".into());
        crate::isa::target::c_memcpy_store(&ty, ptr, v)
    }

    fn compiler(&self) -> (String, Vec<String>) {
        let mut flags: Vec<String> = CLANG_FLAGS.iter().map(|s| s.to_string()).collect();
        match runtime_dir() {
            Ok(d) => {
                flags.push("-isystem".into());
                flags.push(d.display().to_string());
            }
            // The compile then fails on the missing headers; say why first.
            Err(e) => eprintln!("harrow: {e}"),
        }
        (SPEC.toolchain.compiler.into(), flags)
    }

    fn halide_link_args(&self) -> Vec<String> {
        // Built with `no_runtime`: the few runtime entry points it calls are `HALIDE_GLUE`.
        Vec::new()
    }

    fn halide_glue(&self) -> &'static str {
        HALIDE_GLUE
    }

    fn trace_unit(&self) -> &'static str {
        "packets"
    }

    fn page_size(&self) -> u64 {
        // qemu-hexagon maps and protects 64 KiB pages.
        65536
    }

    fn halide_read_slack(&self) -> u64 {
        // Halide's HVX code loads the aligned vectors around an unaligned one (then
        // valign), reading up to a vector past the data: harmless on a device within the
        // page, a fault at the guard page here.
        256
    }

    fn c_second_unit_flags(&self) -> Vec<String> {
        // The freestanding runtime (`runtime/hv_rt.h`) is defined in the main unit only.
        vec!["-DHV_RT_DECLARE_ONLY".into()]
    }
}

/// What a Halide pipeline built for `hexagon-32-noos-...-no_runtime` calls outside itself.
/// Halide's own runtime for the bare target would bring QuRT, file and float support this
/// freestanding program does not have; the pipeline needs only these. On a device
/// `qurt_hvx_lock` reserves an HVX context; under qemu-hexagon one is always there.
const HALIDE_GLUE: &str = r#"
int qurt_hvx_lock(int mode) { (void)mode; return 0; }
int qurt_hvx_unlock(void) { return 0; }
void halide_error(void *user_context, const char *msg) { (void)user_context; printf("halide error: %s\n", msg); exit(3); }
int halide_msan_annotate_memory_is_initialized(void *user_context, const void *p, uint64_t n) { (void)user_context; (void)p; (void)n; return 0; }
char *halide_string_to_string(char *dst, char *end, const char *arg) {
    if (!arg) arg = "<NULL>";
    while (dst + 1 < end && *arg) *dst++ = *arg++;
    if (dst < end) *dst = 0;
    return dst;
}
"#;

// The hand-written descriptions, and the imported ones of intrinsics they do not describe.
static ALL: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| match FAMILY.imported {
    Some(imported) => Isa::load_files_with_imported("hvx", FILES, imported),
    None => Isa::load_files("hvx", FILES),
});

/// Every HVX instruction description.
pub fn all() -> Result<&'static Isa, Diag> {
    ALL.as_ref().map_err(|d| d.clone())
}

static HAND: LazyLock<Result<Isa, Diag>> = LazyLock::new(|| Isa::load_files("hvx", FILES));

/// The hand-written HVX descriptions alone.
pub fn hand() -> Result<&'static Isa, Diag> {
    HAND.as_ref().map_err(|d| d.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::target::Target;

    #[test]
    fn the_tables_hold_imported_descriptions_of_intrinsics_not_described_by_hand() {
        let added = crate::isa::imported_additions(hand().unwrap(), all().unwrap());
        assert!(added.len() >= 90, "{} added", added.len());
        assert!(added.contains(&"Q6_V_vmux_QVV"));
    }

    #[test]
    fn register_types() {
        let t = |s: &str| Type::parse(s, false).unwrap();
        assert_eq!(Hvx.c_type(t("u8x128")).as_deref(), Some("HVX_Vector"));
        assert_eq!(Hvx.c_type(t("i32x64")).as_deref(), Some("HVX_VectorPair"));
        assert_eq!(Hvx.c_type(t("u8x64")), None);
    }
}
