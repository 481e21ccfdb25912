//! What code generation needs to know about a target beyond its instructions: C types of
//! registers, loads and stores, compiler flags, and how to run a program.

use std::path::Path;
use std::process::Command;

use crate::types::{Elem, Type};

/// The facts about a target that are data: one entry of the target registry
/// (`crate::targets`), read by every part that used to match target names.
#[derive(Debug)]
pub struct TargetSpec {
    /// The name on the command line (`x86-avx2`).
    pub name: &'static str,
    /// The family whose descriptions and hand-written rules it uses (`x86`).
    pub family: &'static str,
    /// One line for `--help`: the machine and how its programs run here.
    pub summary: &'static str,
    /// The description features the target may use (entries needing others are dropped).
    pub features: &'static [&'static str],
    /// The widest vector register in bits.
    pub register_bits: u32,
    /// Halide 21's target string for the `--vs halide` baseline, when Halide has one.
    pub halide_target: Option<&'static str>,
    /// Where its simd_op_check expectations are, when there are any.
    pub op_check: Option<OpCheckSuite>,
    /// How C for it is compiled and run.
    pub toolchain: Toolchain,
}

/// A target's section of Halide's simd_op_check expectations.
#[derive(Debug)]
pub struct OpCheckSuite {
    /// The file under `peer/halide-simd-op-check/`.
    pub file: &'static str,
    /// Whether a Halide target header names the section to check.
    pub section: fn(&str) -> bool,
    /// For a target Halide does not check itself: the instruction expected in place of
    /// each of the section's (a data file of `theirs => ours` lines, `ours` one pattern or
    /// several separated by ` | `; entries whose instruction has no line are left out and
    /// counted), as (path, text).
    pub translation: Option<(&'static str, &'static str)>,
    /// Expectations another instruction also meets (`("ldr", "ldp")`: Arm's load pair is
    /// two loads in one instruction, which clang forms once it sees they are adjacent).
    pub also_met_by: &'static [(&'static str, &'static str)],
}

/// What a program is built for; each has its optimisation level ([`Toolchain::opt_level`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The hardware check of every description (`isa::hwcheck`): `-O1`.
    HardwareCheck,
    /// Batches of lowered expressions run against the interpreter: `-O2`.
    Cases,
    /// The assembly conformance searches for the expected instructions: `-O3`.
    ConformanceAssembly,
    /// `harrow compile --emit asm`: `-O3`.
    Assembly,
    /// Kernel programs (harrow's code and the harness): `-O3`.
    Kernel,
    /// The scalar baseline, LLVM alone as in the papers: always `-O3`.
    Baseline,
}

/// The compiler, its flags and the runner of a target's programs.
#[derive(Debug)]
pub struct Toolchain {
    /// The C compiler (`clang-19`).
    pub compiler: &'static str,
    /// The Debian package that installs it.
    pub compiler_package: &'static str,
    /// Its flags for every program (optimisation level excluded).
    pub flags: &'static [&'static str],
    /// Optimisation levels that differ from [`Purpose`]'s defaults, where the target's
    /// compiler needs them.
    pub opt_overrides: &'static [(Purpose, &'static str)],
    /// The command (with arguments) that runs a program, before the program's path;
    /// empty to run it natively.
    pub runner: &'static [&'static str],
    /// The Debian package that installs the runner.
    pub runner_package: &'static str,
    /// The runner's arguments that log one line per executed instruction (or packet),
    /// followed by `-D LOG`, for targets measured by counting.
    pub tracer: Option<&'static [&'static str]>,
}

impl Toolchain {
    /// clang-19 with `flags`, its programs run natively.
    pub const fn clang_native(flags: &'static [&'static str]) -> Toolchain {
        Toolchain {
            compiler: "clang-19",
            compiler_package: "clang-19",
            flags,
            opt_overrides: &[],
            runner: &[],
            runner_package: "",
            tracer: None,
        }
    }

    /// clang-19 with `flags` (and `opt_overrides`), its programs run under the qemu
    /// user-mode emulator `runner` (command and arguments) and counted with its exec trace:
    /// one translation block per instruction (or packet), unchained, each logged when it
    /// runs.
    pub const fn clang_under_qemu(
        flags: &'static [&'static str],
        opt_overrides: &'static [(Purpose, &'static str)],
        runner: &'static [&'static str],
    ) -> Toolchain {
        Toolchain {
            compiler: "clang-19",
            compiler_package: "clang-19",
            flags,
            opt_overrides,
            runner,
            runner_package: "qemu-user",
            tracer: Some(&["-singlestep", "-d", "exec,nochain"]),
        }
    }

    /// The optimisation flag for programs built for `purpose`.
    pub fn opt_level(&self, purpose: Purpose) -> &'static str {
        if let Some((_, o)) = self.opt_overrides.iter().find(|(p, _)| *p == purpose) {
            return o;
        }
        match purpose {
            Purpose::HardwareCheck => "-O1",
            Purpose::Cases => "-O2",
            Purpose::ConformanceAssembly
            | Purpose::Assembly
            | Purpose::Kernel
            | Purpose::Baseline => "-O3",
        }
    }
}

/// A code-generation target.
pub trait Target: Send + Sync {
    /// The target's registry entry.
    fn spec(&self) -> &'static TargetSpec;
    /// The name on the command line (`x86-avx2`).
    fn name(&self) -> &str {
        self.spec().name
    }
    /// The widest vector register in bits.
    fn register_bits(&self) -> u32 {
        self.spec().register_bits
    }
    /// C statements loading `bytes` bytes from `src` (any alignment) into the local vector
    /// `dst`, when `__builtin_memcpy` is not the right load for the target.
    fn c_dense_load(&self, _dst: &str, _src: &str, _bytes: u64) -> Option<String> {
        None
    }
    /// C statements loading `stride` registers of type `part` from `src` deinterleaved,
    /// declaring `{dst}_k` (the target's C type of `part`) to hold lanes `k, k + stride,
    /// ...` for each `k < stride`, when the target has structured loads (Arm's `ld2` to
    /// `ld4`); clang does not always find them behind a shuffle of a wide load.
    fn c_deinterleaving_load(
        &self,
        _dst: &str,
        _src: &str,
        _part: Type,
        _stride: u32,
    ) -> Option<String> {
        None
    }
    /// Whether loads from register-aligned addresses are cheaper than others (HVX), so that
    /// strided loads' windows start at a multiple of their stride.
    fn aligned_loads(&self) -> bool {
        false
    }
    /// Number of vector registers the compiler can allocate (x86 before AVX-512 has 16;
    /// AArch64, AVX-512 and HVX have 32). Kernels choose their width so that the values a
    /// loop keeps in registers fit.
    fn vector_registers(&self) -> u32 {
        32
    }
    /// How many registers (of [`Target::register_bits`]) one value of whole-vector C may
    /// span and still be computed at a vector type the compiler handles whole. Wider
    /// values are computed a part of this size at a time where the compiler would go lane
    /// by lane (a division by a constant: clang's reciprocal multiply needs a legal type,
    /// and Neon's and HVX's is one register).
    fn c_vector_registers(&self) -> u32 {
        1
    }
    /// Whether a signed division by a constant, rounding down, is cheapest written as the
    /// truncated quotient corrected by its remainder's sign: where the target multiplies
    /// and subtracts in one instruction (Neon's `mls`), the remainder costs one. Elsewhere
    /// the dividend is moved toward zero first where it is negative (`(a + 1) / k - 1`),
    /// which needs no product.
    fn floors_by_remainder(&self) -> bool {
        false
    }
    /// Whether the compiler folds a load into the widening instruction that reads it (x86
    /// `vpmovzxbd ymm, m64`), so widening a freshly loaded vector costs little more than the
    /// load, even where the load is narrower than a register.
    fn folds_widening_loads(&self) -> bool {
        false
    }
    /// Whether one instruction narrows a register's lanes by any ratio (AVX-512's
    /// `vpmovdb`), so that a generic narrowing conversion costs one step, not one per
    /// halving of the lane width.
    fn narrows_in_one_instruction(&self) -> bool {
        false
    }
    /// Whether a generic select of lanes narrower than the comparison it selects by costs
    /// the narrowing of the comparison's mask too (`xtn` on Arm). Arm only: priced on x86
    /// and HVX (as a conversion of the mask either way), kernels ran slower (fuzz_7_149 of
    /// seed 7 on HVX: 6.0x -> 0.74x clang -O3).
    fn narrows_select_masks(&self) -> bool {
        false
    }
    /// Whether the C compiler truncates up to four registers into one with a single table
    /// lookup (AArch64 `tbl`, its index a constant loaded once), so that a generic
    /// truncation into one register costs one instruction whatever its ratio.
    fn narrows_by_table(&self) -> bool {
        false
    }
    /// Whether lowering also costs narrow arithmetic over several narrowings of one wider
    /// type done at that type and narrowed once (`lower::narrow_late`). Listed by the
    /// targets where it was measured faster (x86, HVX): on RISC-V its cheaper estimate
    /// tipped a kernel to a vector width whose wide strided slices and narrowing clang
    /// writes poorly (fuzz_3_76 of seed 3: 1.15x -> 0.49x clang -O3 in executed
    /// instructions), and on Arm two kernels ran slower (docs/kernels.md).
    fn narrows_late(&self) -> bool {
        false
    }
    /// Whether that narrowing at the end also reads a narrowing extended again
    /// (`u16(i8(x))` of i32 lanes) as the wide value extended in place (a shift pair or a
    /// mask), and computes an exact unsigned narrow computation extended back to its source
    /// width at that width, never narrowed. x86 only, where it was measured faster
    /// (fuzz_5_4 of seed 5: 0.93x -> 1.10x clang -O3, fuzz_5_120 0.87x -> 1.02x); on HVX
    /// it cost fuzz_5_4 7.88x -> 5.71x packets, its narrow form there being as cheap as the
    /// shifts.
    fn narrows_late_through_extensions(&self) -> bool {
        false
    }
    /// Whether lowering, where it does not narrow late as a whole (`narrows_late`), costs
    /// selects between narrowings of the type their condition compares done at that type
    /// and narrowed once (`lower::narrow_late::selects_narrowed_once_at_the_end`). Arm
    /// only, where clang folds a narrow select's masks into the narrowings and loses the
    /// bit-select (fuzz_7_181 of seed 7: 0.90x -> 1.04x clang -O3 in executed
    /// instructions, with `narrows_select_masks`).
    fn narrows_selects_late(&self) -> bool {
        false
    }
    /// Strided slices of dense loads that the C compiler lowers otherwise than the generic
    /// estimate of a shuffle says, with what they cost (x86: clang's interleaved-access
    /// lowering of byte triples). Empty where the generic estimate stands.
    fn deinterleaved_loads(&self) -> &'static [DeinterleavedLoad] {
        &[]
    }
    /// Whether a row loop that computes several chunks per iteration should take some of
    /// a row's loads at neighbouring offsets from the previous chunk's load instead of
    /// memory (one cross-lane shift each, sharing one permute): worth it where two vector
    /// loads per cycle, not shuffles, bound a sum of taps (x86; elsewhere a shift costs what
    /// a load costs).
    fn derives_neighbour_loads(&self) -> bool {
        false
    }
    /// The most row pointers a row loop keeps each in a register of its own, hidden from
    /// clang's loop strength reduction (0: none): given pointers at multiples of one
    /// stride (the rows of a matrix a product reads), it keeps one and adds the stride
    /// before each load, an instruction per load inside the loop. Beyond what the general
    /// registers hold beside the loop's own, the pinned pointers would spill.
    fn pinned_row_pointers(&self) -> usize {
        0
    }
    /// Whether a row's main loop counts its iterations (the position computed from the
    /// count) rather than stepping the position and comparing it with the row's end.
    /// On AArch64 clang then counts down and steps only the pointers, two instructions
    /// fewer an iteration; on RISC-V it steps a pointer per row instead and spills
    /// (average_pool: 64 -> 73 instructions an iteration), so each target says.
    fn counted_row_loops(&self) -> bool {
        false
    }
    /// Whether a short loop body (under `kernel::vector_c`'s paired work) computes two
    /// vectors an iteration even where one alone is over the unrolled work, so that the
    /// loop's own instructions are paid once for both. On AArch64 that saved 4-5% of the
    /// executed instructions of product sums; on RISC-V the pair's register groups spilled
    /// (an 8-bit product sum: 2.47x -> 1.65x clang -O3), so each target says.
    fn pairs_short_bodies(&self) -> bool {
        false
    }
    /// Whether chunks are sized by the narrowest element type in the expression (a full
    /// register of it) rather than by the result type.
    fn chunk_by_narrowest(&self) -> bool {
        false
    }
    /// The optimisation flag of programs built for `purpose`.
    fn opt_level(&self, purpose: Purpose) -> &'static str {
        self.spec().toolchain.opt_level(purpose)
    }
    /// Why programs built for this target cannot run on this machine (a CPU feature it
    /// lacks), or `None` when they can. Code is still compiled and selected without it.
    fn cannot_run_here(&self) -> Option<String> {
        None
    }
    /// `#include` lines and helpers at the top of generated C.
    fn c_header(&self) -> String;
    /// The C type holding a value of `t` in a register, or `None` when `t` is not register
    /// sized (it is then handled lane by lane).
    fn c_type(&self, t: Type) -> Option<String>;
    /// The intrinsic call `call` (of result type `t`) as a value the generic vector types
    /// can be cast from: the call itself where intrinsics return register types of known
    /// size (the default), or converted to one (RISC-V's intrinsics return sizeless
    /// types, which C converts to fixed-length types but not to vector types).
    fn c_intrinsic_result(&self, _t: Type, call: &str) -> String {
        call.to_string()
    }
    /// A C expression loading a register of type `t` from the bytes at `ptr`.
    fn c_load(&self, t: Type, ptr: &str) -> String;
    /// A C statement storing register value `v` of type `t` to the bytes at `ptr`.
    fn c_store(&self, t: Type, ptr: &str, v: &str) -> String;
    /// The compiler and its flags (optimisation level excluded).
    fn compiler(&self) -> (String, Vec<String>) {
        let t = &self.spec().toolchain;
        (
            t.compiler.to_string(),
            t.flags.iter().map(|f| f.to_string()).collect(),
        )
    }
    /// The command that runs a compiled program.
    fn run_command(&self, exe: &Path) -> Command {
        match self.spec().toolchain.runner {
            [] => Command::new(exe),
            [runner, args @ ..] => {
                let mut c = Command::new(runner);
                c.args(args).arg(exe);
                c
            }
        }
    }
    /// The command that runs a program logging one line per executed instruction (or
    /// packet) to `log`, for targets measured by counting (qemu's exec trace).
    fn trace_command(&self, exe: &Path, log: &Path) -> Option<Command> {
        let t = &self.spec().toolchain;
        let tracer = t.tracer?;
        // Tracing is the runner's (qemu's) feature: its own arguments first.
        let (runner, args) = t.runner.split_first()?;
        let mut c = Command::new(runner);
        c.args(args).args(tracer).arg("-D").arg(log).arg(exe);
        Some(c)
    }
    /// What one line of the exec trace counts (`instructions`, or `packets` on Hexagon).
    fn trace_unit(&self) -> &'static str {
        "instructions"
    }
    /// The page size of the machine (or emulator) its programs run on: the unit of the
    /// guard pages that make reads outside a kernel's footprint fault.
    fn page_size(&self) -> u64 {
        4096
    }
    /// Bytes a Halide 21 pipeline's loads may read past the end of a buffer (left readable
    /// before the guard page when Halide's code is in the program).
    fn halide_read_slack(&self) -> u64 {
        0
    }
    /// Compiler flags of a second translation unit of a program (the scalar baseline,
    /// built at its own optimisation level), when the target's runtime must be told that
    /// the main unit defines it.
    fn c_second_unit_flags(&self) -> Vec<String> {
        Vec::new()
    }
    /// Linker arguments a Halide 21 object for this target needs (its runtime's libraries).
    fn halide_link_args(&self) -> Vec<String> {
        ["-lpthread", "-ldl", "-lm"].map(String::from).to_vec()
    }
    /// C definitions a Halide object built without its runtime (`no_runtime`) needs from
    /// the program that links it.
    fn halide_glue(&self) -> &'static str {
        ""
    }
    /// The smallest and largest instruction in bytes: addresses in an instruction trace
    /// are adjacent when they are one instruction apart.
    fn instruction_sizes(&self) -> (u64, u64) {
        (4, 4)
    }
    /// Whether a disassembled instruction (`llvm-objdump` text) is a branch, which llvm-mca
    /// leaves out of a loop body.
    fn is_branch(&self, _instruction: &str) -> bool {
        false
    }
    /// The triple and CPU llvm-mca models for this target, if it has a model.
    fn mca_model(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// The target's float vector instructions, when the float vectorizer supports it (built
    /// from its description file on first use; an error there is at its place).
    fn float_isa(&self) -> Option<Result<&'static crate::isa::float::FloatIsa, crate::diag::Diag>> {
        None
    }
}

/// A C expression loading a value of the C type `ty` from the bytes at `ptr` (any
/// alignment): a constant-size `__builtin_memcpy`, which compilers turn into one
/// unaligned load.
pub fn c_memcpy_load(ty: &str, ptr: &str) -> String {
    format!("({{ {ty} v_; __builtin_memcpy(&v_, (const void *)({ptr}), sizeof v_); v_; }})")
}

/// A C statement storing `v`, of the C type `ty`, to the bytes at `ptr` (any alignment).
pub fn c_memcpy_store(ty: &str, ptr: &str, v: &str) -> String {
    format!("{{ {ty} v_ = {v}; __builtin_memcpy((void *)({ptr}), &v_, sizeof v_); }}")
}

/// Little-endian bytes of lanes (bool lanes as bits, as in a mask register).
pub fn lanes_to_bytes(t: Type, lanes: &[u128]) -> Vec<u8> {
    if t.elem == Elem::Bool {
        let n = (t.lanes as usize).div_ceil(8).max(1);
        let mut out = vec![0u8; n];
        for (i, &l) in lanes.iter().enumerate() {
            if l != 0 {
                out[i / 8] |= 1 << (i % 8);
            }
        }
        return out;
    }
    let w = (t.elem.bits() / 8) as usize;
    let mut out = Vec::with_capacity(w * lanes.len());
    for &l in lanes {
        out.extend_from_slice(&l.to_le_bytes()[..w]);
    }
    out
}

/// The lanes held in little-endian bytes.
pub fn bytes_to_lanes(t: Type, bytes: &[u8]) -> Vec<u128> {
    if t.elem == Elem::Bool {
        return (0..t.lanes as usize)
            .map(|i| ((bytes[i / 8] >> (i % 8)) & 1) as u128)
            .collect();
    }
    let w = (t.elem.bits() / 8) as usize;
    (0..t.lanes as usize)
        .map(|i| {
            let mut b = [0u8; 16];
            b[..w].copy_from_slice(&bytes[i * w..(i + 1) * w]);
            u128::from_le_bytes(b)
        })
        .collect()
}

/// A strided slice of a dense load priced by what the C compiler makes of it
/// ([`Target::deinterleaved_loads`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeinterleavedLoad {
    /// Element width of the load and the slice.
    pub elem_bits: u32,
    /// Stride of the slice.
    pub stride: u32,
    /// Width of the load, in bits.
    pub loaded_bits: u64,
    /// Estimated cost of the slice (the load itself is priced apart), in the units of
    /// `lower::select::generic_cost`.
    pub cost: f64,
}
