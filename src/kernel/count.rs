//! Counting work instead of timing it, for targets that run under qemu (BRIEF section 4):
//! executed instructions per output element from qemu's exec trace, and llvm-mca's cycles
//! per iteration of each program's hottest loop.
//!
//! The benchmark program runs one implementation once per trace (`prog count K`); the
//! count of a run that calls nothing (`K = 0`, the same setup and input generation) is
//! subtracted, so the figure is the kernel call alone, including anything it calls.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use super::Kernel;
use super::halide::Halide;
use super::harness::{BenchResult, KernelError, LoopStats, Metric, run_with_stdin};
use crate::isa::target::Target;
use crate::isa::toolchain::{output_text, require};
use crate::lower::Backend;

/// The extents counted for a kernel benchmarked at `extents`: the innermost dimension at
/// most 256 and the others at most 16 (a trace logs every instruction).
pub fn count_extents(extents: &[i64]) -> Vec<i64> {
    extents
        .iter()
        .enumerate()
        .map(|(d, &e)| e.min(if d == 0 { 256 } else { 16 }))
        .collect()
}

/// Whether to keep each counted program, its C and its traces (`HARROW_KEEP_TRACES=1`), to
/// see where a kernel's instructions go (`llvm-objdump -d` against the traced addresses).
fn keep_files() -> bool {
    std::env::var_os("HARROW_KEEP_TRACES").is_some_and(|v| v == "1")
}

/// One traced run: instructions executed and how often each address ran.
struct Trace {
    executed: u64,
    by_pc: HashMap<u64, u64>,
}

fn trace(target: &dyn Target, exe: &Path, mode: u32, input: &[u8]) -> Result<Trace, KernelError> {
    let log = exe.with_extension(format!("trace{mode}"));
    let Some(mut cmd) = target.trace_command(exe, &log) else {
        return Err(KernelError::Output(format!(
            "{} has no instruction trace",
            target.name()
        )));
    };
    let _ = std::fs::remove_file(&log);
    cmd.arg("count").arg(mode.to_string());
    crate::isa::toolchain::run_command(cmd, Some(input))
        .map_err(super::harness::with_crash_hint)?;
    let f = std::fs::File::open(&log)
        .map_err(|e| KernelError::Output(format!("no trace at {}: {e}", log.display())))?;
    let mut t = Trace {
        executed: 0,
        by_pc: HashMap::new(),
    };
    for line in std::io::BufReader::new(f).lines() {
        let line = line.map_err(|e| KernelError::Output(format!("{}: {e}", log.display())))?;
        if !line.starts_with("Trace ") {
            continue;
        }
        t.executed += 1;
        // `Trace 0: 0xHOST [FLAGS/PC/...] symbol`: the guest PC is the second field.
        if let Some(pc) = line
            .split_once('[')
            .and_then(|(_, r)| r.split('/').nth(1))
            .and_then(|p| u64::from_str_radix(p, 16).ok())
        {
            *t.by_pc.entry(pc).or_default() += 1;
        }
    }
    if !keep_files() {
        let _ = std::fs::remove_file(&log);
    }
    Ok(t)
}

/// The hottest loop of a traced run: the contiguous run of addresses executed most often
/// (the innermost loop body), measured with llvm-mca when the target has a model.
fn hot_loop(target: &dyn Target, exe: &Path, run: &Trace, setup: &Trace) -> LoopStats {
    // Only what the kernel call added counts.
    let mut extra: Vec<(u64, u64)> = run
        .by_pc
        .iter()
        .map(|(&pc, &n)| (pc, n.saturating_sub(*setup.by_pc.get(&pc).unwrap_or(&0))))
        .filter(|&(_, n)| n > 0)
        .collect();
    extra.sort();
    let Some(&(hot_pc, hot)) = extra
        .iter()
        .max_by_key(|&&(pc, n)| (n, std::cmp::Reverse(pc)))
    else {
        return LoopStats::default();
    };
    // Extend around the hottest address over neighbours executed as often.
    let i = extra
        .iter()
        .position(|&(pc, _)| pc == hot_pc)
        .expect("present");
    let (mut lo, mut hi) = (i, i);
    // Adjacent instructions are one instruction's size apart (some targets have several).
    let (smallest, largest) = target.instruction_sizes();
    let next = |a: u64, b: u64| (smallest..=largest).contains(&b.wrapping_sub(a));
    while lo > 0 && extra[lo - 1].1 == hot && next(extra[lo - 1].0, extra[lo].0) {
        lo -= 1;
    }
    while hi + 1 < extra.len() && extra[hi + 1].1 == hot && next(extra[hi].0, extra[hi + 1].0) {
        hi += 1;
    }
    let (start, stop) = (extra[lo].0, extra[hi].0 + largest);
    let mut stats = LoopStats {
        instructions: hi - lo + 1,
        iterations: hot,
        cycles: None,
    };
    if let Some((triple, cpu)) = target.mca_model() {
        stats.cycles = mca_cycles(target, exe, start, stop, triple, cpu).ok();
    }
    stats
}

/// llvm-mca's block reciprocal throughput of the instructions at `start..stop`.
fn mca_cycles(
    target: &dyn Target,
    exe: &Path,
    start: u64,
    stop: u64,
    triple: &str,
    cpu: &str,
) -> Result<f64, String> {
    let mut dis = std::process::Command::new("llvm-objdump-19");
    dis.arg("-d")
        .arg("--no-show-raw-insn")
        .arg(format!("--start-address=0x{start:x}"))
        .arg(format!("--stop-address=0x{stop:x}"))
        .arg(exe);
    let text = output_text(dis)?;
    // Instruction lines look like `  400580:      add x0, x1, x2`.
    let mut asm = String::new();
    for line in text.lines() {
        let Some((addr, ins)) = line.split_once(':') else {
            continue;
        };
        if u64::from_str_radix(addr.trim(), 16).is_ok() && !ins.trim().is_empty() {
            let ins = ins.trim();
            // Branch targets print as `0x400580 <sym+0x10>`; llvm-mca needs no branches.
            if target.is_branch(ins) {
                continue;
            }
            asm.push_str(ins.split(" //").next().unwrap_or(ins));
            asm.push('\n');
        }
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    let f = dir.join(format!("loop-{start:x}.s"));
    std::fs::write(&f, &asm).map_err(|e| e.to_string())?;
    let mut mca = std::process::Command::new("llvm-mca-19");
    mca.arg(format!("-mtriple={triple}"))
        .arg(format!("-mcpu={cpu}"))
        .arg(&f);
    let out = output_text(mca)?;
    out.lines()
        .find_map(|l| l.trim().strip_prefix("Block RThroughput:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("llvm-mca gave no throughput:\n{out}"))
}

/// Counts `k` at `extents` (after `harness::run` has checked it against the reference):
/// checks that harrow's output equals the baseline's (and Halide's) at these extents, then
/// traces each implementation once.
pub fn count(
    k: &Kernel,
    backend: &Backend,
    extents: &[i64],
    lanes: Option<u32>,
    halide: Option<&Halide>,
) -> Result<BenchResult, KernelError> {
    let target = &*backend.target;
    for (tool, pkg) in [("llvm-objdump-19", "llvm-19"), ("llvm-mca-19", "llvm-19")] {
        require(tool, pkg)?;
    }
    let super::harness::BenchProgram {
        build: b,
        mut dir,
        exe,
        halide: hb,
        input,
    } = super::harness::bench_program(k, backend, extents, lanes, halide, "count")?;
    // Kept whatever happens below: a failed check is when the files are wanted most.
    if keep_files() {
        eprintln!(
            "{}: program and traces kept in {}",
            k.name,
            dir.keep().display()
        );
    }
    // Correctness at these extents before anything is counted.
    let out = run_with_stdin(target, &exe, &["check"], &input)?;
    let text = String::from_utf8_lossy(&out);
    let (halide_ok, halide_why) = match text.split_whitespace().collect::<Vec<_>>()[..] {
        ["ok", h, rc, diff] => (h == "1", halide_failure(rc, diff)),
        _ => {
            return Err(KernelError::Differs {
                kernel: k.name.clone(),
                extents: extents.to_vec(),
            });
        }
    };
    let none = trace(target, &exe, 0, &input)?;
    let harrow = trace(target, &exe, 1, &input)?;
    let scalar = trace(target, &exe, 2, &input)?;
    let outputs = extents.iter().product::<i64>().max(1) as f64;
    let per = |t: &Trace| t.executed.saturating_sub(none.executed) as f64 / outputs;
    let halide_count = if hb.is_some() && halide_ok {
        Some(per(&trace(target, &exe, 3, &input)?))
    } else {
        None
    };
    let loops = (
        hot_loop(target, &exe, &harrow, &none),
        hot_loop(target, &exe, &scalar, &none),
    );
    drop(dir);
    Ok(BenchResult {
        name: k.name.clone(),
        extents: extents.to_vec(),
        lanes: b.lanes,
        harrow_per_elem: per(&harrow),
        scalar_per_elem: per(&scalar),
        reps: 1,
        halide_per_elem: halide_count,
        halide_caveat: hb.as_ref().and_then(|h| h.caveat.clone()),
        halide_note: match (&hb, halide_ok) {
            (Some(_), false) => Some(halide_why),
            _ => None,
        },
        compile_us: b.compile_time.as_secs_f64() * 1e6,
        metric: Metric::Executed,
        loops: Some(loops),
    })
}

/// Why Halide's pipeline has no figure, from the check's return code and first differing
/// element (`-1`: none).
fn halide_failure(rc: &str, diff: &str) -> String {
    match (rc, diff) {
        ("0", "-1") => "Halide's pipeline was not run".into(),
        ("0", i) => format!(
            "Halide's output differs from harrow's (and the interpreter's) first at output element {i}"
        ),
        (rc, _) => format!("Halide's pipeline returned error code {rc}"),
    }
}
