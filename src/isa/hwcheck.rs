//! Checking instruction descriptions against the real machine (Hydride's fuzzing).
//!
//! One generated C program calls every described instruction on random and edge-case
//! operands (every immediate value when there are few, a spread of them otherwise) and
//! prints the results; each is compared with the reference interpreter running the
//! description's semantics. Any disagreement names the instruction, the operands and both
//! results.

use std::fmt::Write as _;
use std::sync::Arc;

use super::Instr;
use super::target::{Purpose, Target, bytes_to_lanes, lanes_to_bytes};
use super::toolchain::{self, Compile, Output, write_file};
use crate::interp::{Env, Value, eval, lane};
use crate::ir::{Expr, Op};
use crate::types::Type;
use crate::util::rng::SplitMix64;

/// The fixed C of the check program (a template).
const MAIN_TEMPLATE: &str = include_str!("hwcheck_main.c");

/// One mismatch between a description and the machine.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The instruction (intrinsic and operand types).
    pub instr: String,
    /// `file:line` of its description.
    pub location: String,
    /// The operands, in Halide syntax.
    pub inputs: String,
    /// What the machine computed.
    pub machine: String,
    /// What the description says.
    pub described: String,
}

/// The outcome of a hardware check.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Instructions checked.
    pub instructions: usize,
    /// Calls compared.
    pub calls: usize,
    /// Disagreements (at most a few per instruction).
    pub mismatches: Vec<Mismatch>,
}

impl Report {
    /// The mismatches, one block each: instruction, inputs, both results.
    pub fn mismatch_text(&self) -> String {
        self.mismatches
            .iter()
            .map(|m| {
                format!(
                    "{} ({}):\n  inputs:    {}\n  machine:   {}\n  described: {}\n",
                    m.instr, m.location, m.inputs, m.machine, m.described
                )
            })
            .collect()
    }
}

/// Immediate values to try for a range.
fn imm_values(lo: i128, hi: i128, rng: &mut SplitMix64) -> Vec<i128> {
    if hi - lo <= 20 {
        return (lo..=hi).collect();
    }
    let mut v = vec![lo, lo + 1, hi, hi - 1, (lo + hi) / 2];
    for x in [
        1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 0xD8, 0x4E, 0x1B, 0xB1,
    ] {
        v.push(x);
    }
    for _ in 0..4 {
        v.push(rng.range_i128(lo, hi));
    }
    v.retain(|x| *x >= lo && *x <= hi);
    v.sort();
    v.dedup();
    v
}

/// One generated call: its tag, the instruction's index, register operands, immediates.
type Call = (String, usize, Vec<Vec<u128>>, Vec<i128>);

/// The register operands of one call, as lanes.
struct Case {
    regs: Vec<Vec<u128>>,
}

fn show_value(t: Type, lanes: &[u128]) -> String {
    let v = Value {
        ty: t,
        lanes: lanes.to_vec(),
    };
    v.to_string()
}

/// Checks `instrs` on `target`, with `cases` random operand sets per immediate choice.
/// `workdir` receives the generated program.
pub fn check(
    instrs: &[Arc<Instr>],
    target: &dyn Target,
    cases: usize,
    seed: u64,
    workdir: &std::path::Path,
) -> Result<Report, String> {
    let mut rng = SplitMix64::new(seed);
    let mut c = target.c_header();
    // Expected results keyed by tag.
    let mut expected: Vec<Call> = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let mut body = String::new();
    // Bytes per operand slot: the widest operand or result, at least 64 (HVX register pairs
    // take 256).
    let slot = instrs
        .iter()
        .flat_map(|i| i.params.iter().chain(std::iter::once(&i.result)))
        .map(|t| t.total_bits().div_ceil(8) as usize)
        .max()
        .unwrap_or(0)
        .max(64)
        .next_multiple_of(64);
    for (ii, ins) in instrs.iter().enumerate() {
        let regs: Vec<(usize, Type)> = ins
            .params
            .iter()
            .enumerate()
            .filter(|(i, _)| !ins.imm[*i])
            .map(|(i, t)| (i, *t))
            .collect();
        // Operand sets: the first few all edge values, the rest random.
        let mut sets = Vec::new();
        for k in 0..cases {
            let mut r = Vec::new();
            for (ri, (_, t)) in regs.iter().enumerate() {
                let lanes: Vec<u128> = if k < 6 {
                    // Every pairing of edge values across operands over the lanes.
                    let edges = crate::util::rng::edge_cases(t.elem);
                    let n = edges.len();
                    (0..t.lanes as usize)
                        .map(|l| edges[(k + l * (k + 1) + (l / n) * (ri + 1) * (k + 2)) % n])
                        .collect()
                } else if k % 4 == 3 && regs.len() > 1 && ri == regs.len() - 1 {
                    // The last operand small (shift counts, lane indices): every lane in
                    // `0 ..= bits + 1`, or on every other such set only the lowest lane
                    // (a count read from the low 64 bits of a register).
                    let w = t.elem.bits() as u64 + 2;
                    let sparse = k % 8 == 7;
                    (0..t.lanes)
                        .map(|l| {
                            if sparse && l > 0 {
                                0
                            } else {
                                (rng.next_u64() % w) as u128
                            }
                        })
                        .collect()
                } else {
                    (0..t.lanes).map(|_| rng.lane(t.elem)).collect()
                };
                r.push(lanes);
            }
            sets.push(Case { regs: r });
        }
        // Immediate choices: the cross product of each immediate's values (capped).
        let imm_lists: Vec<Vec<i128>> = ins
            .imm_range
            .iter()
            .filter_map(|r| r.map(|(lo, hi)| imm_values(lo, hi, &mut rng)))
            .collect();
        let mut choices: Vec<Vec<i128>> = vec![vec![]];
        for list in &imm_lists {
            choices = choices
                .iter()
                .flat_map(|c| list.iter().map(move |v| [c.clone(), vec![*v]].concat()))
                .collect();
        }
        choices.truncate(64);
        let _ = writeln!(
            body,
            "static void t{ii}(void) {{ /* {} {} */",
            ins.intrinsic, ins.location
        );
        // One loop per immediate choice over the operand sets, which lie in DATA one after
        // another (`slot` bytes per operand), keeps the program small and quick to compile.
        let rty = target
            .c_type(ins.result)
            .ok_or_else(|| format!("{}: no C type for result {}", ins.intrinsic, ins.result))?;
        let nbytes = lanes_to_bytes(ins.result, &vec![0; ins.result.lanes as usize]).len();
        let base = data.len();
        let stride = slot * regs.len();
        for case in &sets {
            for (ri, (_, t)) in regs.iter().enumerate() {
                let bytes = lanes_to_bytes(*t, &case.regs[ri]);
                data.extend_from_slice(&bytes);
                data.extend(std::iter::repeat_n(0u8, slot - bytes.len()));
            }
        }
        for (ci, imms) in choices.iter().enumerate() {
            let _ = write!(
                body,
                "  for (int k = 0; k < {}; k++) {{ const unsigned char *d = DATA + {base} + {stride} * k;",
                sets.len()
            );
            let mut args = Vec::new();
            let mut ri = 0;
            let mut ii2 = 0;
            for (pi, t) in ins.params.iter().enumerate() {
                if ins.imm[pi] {
                    args.push(imms[ii2].to_string());
                    ii2 += 1;
                } else {
                    let cty = target
                        .c_type(*t)
                        .ok_or_else(|| format!("{}: no C type for operand {t}", ins.intrinsic))?;
                    let _ = write!(
                        body,
                        " {cty} a{pi} = {};",
                        target.c_load(*t, &format!("d + {}", slot * ri))
                    );
                    args.push(format!("a{pi}"));
                    ri += 1;
                }
            }
            let _ = writeln!(
                body,
                " {rty} r = {}({}); unsigned char out[{slot}] __attribute__((aligned(128))); {} char tag[32]; snprintf(tag, sizeof tag, \"{ii}.{ci}.%d\", k); dump(tag, out, {nbytes}); }}",
                ins.intrinsic,
                args.join(", "),
                target.c_store(ins.result, "out", "r")
            );
            for (k, case) in sets.iter().enumerate() {
                expected.push((
                    format!("{ii}.{ci}.{k}"),
                    ii,
                    case.regs.clone(),
                    imms.clone(),
                ));
            }
        }
        body.push_str("}\n");
    }
    let calls: String = (0..instrs.len())
        .map(|ii| format!("  t{ii}();\n"))
        .collect();
    c.push_str(&crate::util::ctemplate::fill(
        "hwcheck_main.c",
        MAIN_TEMPLATE,
        &[
            ("DATA_BYTES", &data.len().max(1).to_string()),
            ("TESTS", &body),
            ("CALLS", &calls),
        ],
    ));

    let cfile = write_file(workdir, "isa_check.c", &c)?;
    let exe = workdir.join("isa_check");
    if data.is_empty() {
        data.push(0);
    }
    // Only intrinsic calls and copies: -O1 compiles quickly and correctly on every target.
    Compile::new(target, Purpose::HardwareCheck)
        .arg(&cfile)
        .output(&exe, Output::Executable)?;
    let out = String::from_utf8_lossy(&toolchain::run(target, &exe, &[], &data)?).into_owned();
    let mut got: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for line in out.lines() {
        if let Some((tag, hex)) = line.split_once(' ') {
            got.insert(tag, hex);
        }
    }
    let mut report = Report {
        instructions: instrs.len(),
        ..Default::default()
    };
    let mut per_instr_failures = vec![0usize; instrs.len()];
    for (tag, ii, regs, imms) in &expected {
        let ins = &instrs[*ii];
        let hex = got.get(tag.as_str()).ok_or_else(|| {
            format!(
                "the check program printed nothing for {tag} ({})",
                ins.intrinsic
            )
        })?;
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect();
        let machine = bytes_to_lanes(ins.result, &bytes);
        // The description's answer, from the interpreter.
        let mut env = Env::new();
        let mut args = Vec::new();
        let (mut ri, mut ii2) = (0, 0);
        for (pi, t) in ins.params.iter().enumerate() {
            let name = format!("p{pi}");
            if ins.imm[pi] {
                env.set(
                    name.as_str(),
                    Value {
                        ty: *t,
                        lanes: vec![lane::from_i128(imms[ii2], t.elem)],
                    },
                );
                ii2 += 1;
            } else {
                env.set(
                    name.as_str(),
                    Value {
                        ty: *t,
                        lanes: regs[ri].clone(),
                    },
                );
                ri += 1;
            }
            args.push(Expr::var(name.as_str(), *t));
        }
        let call = Expr::build(Op::Instr(ins.clone()), None, args).map_err(|e| e.0)?;
        let described = eval(&call, &env).map_err(|e| format!("{}: {e}", ins.intrinsic))?;
        report.calls += 1;
        if described.lanes != machine {
            per_instr_failures[*ii] += 1;
            if per_instr_failures[*ii] <= 2 {
                let mut inputs = Vec::new();
                let (mut ri, mut ii2) = (0, 0);
                for (pi, t) in ins.params.iter().enumerate() {
                    if ins.imm[pi] {
                        inputs.push(format!("imm = {}", imms[ii2]));
                        ii2 += 1;
                    } else {
                        inputs.push(show_value(*t, &regs[ri]));
                        ri += 1;
                    }
                }
                report.mismatches.push(Mismatch {
                    instr: ins.key.clone(),
                    location: ins.location.clone(),
                    inputs: inputs.join("; "),
                    machine: show_value(ins.result, &machine),
                    described: described.to_string(),
                });
            }
        }
    }
    Ok(report)
}
