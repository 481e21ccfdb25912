//! Importing Arm's Advanced SIMD semantics from the Sail model of the architecture
//! (`shared/vendor/arm/sail/`), for the C intrinsics that Arm's ACLE database lists
//! (`shared/vendor/arm/acle/advsimd.csv`).
//!
//! ACLE says, for each intrinsic, which instruction(s) it is and which register holds
//! which argument (`a -> Vn.8B`). The instruction text is assembled by `llvm-mc` into its
//! 32-bit encoding; the model's own `decode64` clauses pick the decode function from those
//! bits, which sets `esize`, `datasize`, `unsigned`, `round`, ... and calls the execute
//! function. That runs symbolically ([`eval`]) with the argument registers holding the
//! operands, and what it leaves in the destination register becomes the description.
//! Nothing here names an instruction's meaning: the encoding and the model decide it.
//! An intrinsic with an immediate is evaluated at each value of its range; consecutive
//! values whose semantics are the same function of the immediate share one description.

pub mod eval;
pub mod sail;

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::rc::Rc;

use crate::isa::import::bits::{Bits, Seg, Src};
use crate::isa::import::lanes::{self, LaneExpr, Operand};
use crate::isa::import::{Entry, ImportContext, Report, Skip, SkipReason, type_text};
use crate::types::{Elem, Type};

/// The model's files, relative to the vendor folder, in the order they are read.
pub const SAIL_FILES: &[&str] = &[
    "arm/sail/prelude.sail",
    "arm/sail/aarch_types.sail",
    "arm/sail/aarch64_vector.sail",
    "arm/sail/aarch_decode.sail",
];
/// ACLE's intrinsic database.
pub const ACLE: &str = "arm/acle/advsimd.csv";

/// The assembler, and the architecture it assembles for (every extension ACLE's
/// intrinsics may need; the model then decides what the encoding does).
const LLVM_MC: &str = "llvm-mc-19";
const MC_ATTRS: &str = "+v8.5a,+dotprod,+i8mm,+sha3,+sm4,+aes,+sha2,+rdm,+fp16,+bf16";

/// Cost of an instruction no hand-written description prices (neither its intrinsic nor
/// another intrinsic of the same instruction): an Advanced SIMD integer instruction on
/// Cortex-A76 (latency 2, two per cycle), as `isa/arith.isa` prices most.
pub const DEFAULT_COST: (f32, f32) = (2.0, 0.5);

/// Extensions by mnemonic beyond what `arm-neon` builds for (Armv8.2-A with the dot
/// product): intrinsics that need them are listed, not imported.
const EXTENSIONS: &[(&str, &[&str])] = &[
    ("i8mm", &["USDOT", "SUDOT", "SMMLA", "UMMLA", "USMMLA"]),
    ("sha3", &["EOR3", "BCAX", "RAX1", "XAR"]),
    (
        "crypto",
        &[
            "AESE",
            "AESD",
            "AESMC",
            "AESIMC",
            "SHA1C",
            "SHA1P",
            "SHA1M",
            "SHA1H",
            "SHA1SU0",
            "SHA1SU1",
            "SHA256H",
            "SHA256H2",
            "SHA256SU0",
            "SHA256SU1",
            "SHA512H",
            "SHA512H2",
            "SHA512SU0",
            "SHA512SU1",
            "SM3SS1",
            "SM3TT1A",
            "SM3TT1B",
            "SM3TT2A",
            "SM3TT2B",
            "SM3PARTW1",
            "SM3PARTW2",
            "SM4E",
            "SM4EKEY",
        ],
    ),
    ("lut", &["LUTI2", "LUTI4"]),
];

/// Feature names (harrow's) by mnemonic for what `arm-neon` has.
fn features(mnemonic: &str) -> Vec<String> {
    match mnemonic {
        "SDOT" | "UDOT" => vec!["neon".into(), "dotprod".into()],
        _ => vec!["neon".into()],
    }
}

/// ACLE rows that qemu-aarch64 refutes (tests/isa_import_arm.rs found them), by intrinsic
/// or by family (the name up to its first `_`, without `q`): listed with the reason, not
/// imported. ACLE gives `vcge` the operand order of `vcle` (`CMGE Vd,Vm,Vn` with `a` in
/// `Vn`: `b >= a`), and `vqrdmlahh_s16` the instruction of `vqrdmlshh_s16`.
const ERRATA: &[(&str, &str)] = &[
    (
        "vcge",
        "ACLE lists CMGE/CMHS with the operands of vcle (qemu-aarch64 computes a >= b)",
    ),
    (
        "vqrdmlahh_s16",
        "ACLE lists SQRDMLSH, the subtracting form (qemu-aarch64 computes SQRDMLAH)",
    ),
];

/// The erratum of an intrinsic, if ACLE's row for it is known to be wrong.
fn erratum(name: &str) -> Option<&'static str> {
    let family = name.split('_').next()?;
    let family = family.strip_suffix('q').unwrap_or(family);
    ERRATA
        .iter()
        .find(|(f, _)| *f == family || *f == name)
        .map(|(_, why)| *why)
}

/// The most values of an immediate evaluated (Neon's widest range is 0..63).
const MAX_IMM_VALUES: i128 = 4096;

/// Registers by ACLE's operand names.
const REGS: &[(&str, u32)] = &[("Vd", 0), ("Vn", 1), ("Vm", 2), ("Va", 3)];

/// One row of ACLE's database.
#[derive(Clone, Debug)]
struct Row {
    name: String,
    ret: String,
    /// Arguments: C type (`__builtin_constant_p` for an immediate) and name.
    args: Vec<(String, String)>,
    /// Argument name to its register (`Vn`) and arrangement (`8B`).
    regs: HashMap<String, String>,
    /// Immediate ranges by name.
    imms: BTreeMap<String, (i128, i128)>,
    /// The instructions, with ACLE's operand names.
    insns: Vec<String>,
    /// The register that holds the result.
    result_reg: String,
}

fn rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| !l.starts_with('<') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let (proto, prep, insns, result) = (f.first()?, f.get(1)?, f.get(2)?, f.get(3)?);
            let open = proto.find('(')?;
            let head: Vec<&str> = proto[..open].split_whitespace().collect();
            let name = head.last()?.to_string();
            let ret = head[..head.len() - 1].join(" ");
            let inner = proto[open + 1..].trim_end().strip_suffix(')')?;
            let args = inner
                .split(',')
                .filter(|a| !a.trim().is_empty())
                .map(|a| {
                    let a = a.trim();
                    if let Some(n) = a
                        .strip_prefix("__builtin_constant_p(")
                        .and_then(|r| r.strip_suffix(')'))
                    {
                        return ("__builtin_constant_p".to_string(), n.to_string());
                    }
                    let k = a.rfind(|c: char| !(c.is_alphanumeric() || c == '_'));
                    match k {
                        Some(k) => (a[..=k].trim().to_string(), a[k + 1..].to_string()),
                        None => (String::new(), a.to_string()),
                    }
                })
                .collect();
            let mut regs = HashMap::new();
            let mut imms = BTreeMap::new();
            for p in prep.split(';') {
                let p = p.trim();
                if let Some((arg, reg)) = p.split_once("->") {
                    regs.insert(arg.trim().to_string(), reg.trim().to_string());
                } else if let Some(r) = imm_range(p) {
                    imms.insert(r.0, (r.1, r.2));
                }
            }
            Some(Row {
                name,
                ret,
                args,
                regs,
                imms,
                insns: insns.split(';').map(|s| s.trim().to_string()).collect(),
                result_reg: result.split("->").next()?.trim().to_string(),
            })
        })
        .collect()
}

/// `0 <= lane <= 7` as (name, low, high).
fn imm_range(p: &str) -> Option<(String, i128, i128)> {
    let parts: Vec<&str> = p.split("<=").map(str::trim).collect();
    match parts.as_slice() {
        [lo, name, hi] => Some((name.to_string(), lo.parse().ok()?, hi.parse().ok()?)),
        _ => None,
    }
}

/// The harrow type of a Neon vector type name (`int16x8_t`); `None` for anything else.
fn vector_type(c: &str) -> Option<Type> {
    let c = c.strip_suffix("_t")?;
    let (base, lanes) = c.split_once('x')?;
    let lanes: u32 = lanes.parse().ok()?;
    let (signed, bits) = if let Some(b) = base.strip_prefix("uint") {
        (false, b)
    } else {
        (true, base.strip_prefix("int")?)
    };
    let elem = Elem::from_bits(bits.parse().ok()?, signed)?;
    Some(Type::vec(elem, lanes))
}

/// The harrow type of a C integer type (`int16_t`).
fn scalar_type(c: &str) -> Option<Type> {
    let bits = c.strip_prefix("uint").or_else(|| c.strip_prefix("int"))?;
    let bits: u32 = bits.strip_suffix("_t")?.parse().ok()?;
    Some(Type::scalar(Elem::from_bits(bits, !c.starts_with('u'))?))
}

fn skip(name: &str, reason: SkipReason, detail: impl Into<String>) -> Skip {
    Skip {
        name: name.to_string(),
        reason,
        detail: detail.into(),
    }
}

/// What screening a row finds: its operands and result, or why it is not imported.
struct Shape {
    /// Vector operands: name, type, register number.
    operands: Vec<(String, Type, u32)>,
    /// The immediate: name and range.
    imm: Option<(String, (i128, i128))>,
    result: Type,
    result_reg: u32,
}

/// The register ACLE's operand name stands for: `Vn` (the vector register), `Hn` (its
/// low 16 bits), `Rn`/`Wn`/`Xn`/`rn` (a general register, [`eval::X_BASE`] on); `d`, `n`,
/// `m`, `a` are registers 0 to 3.
fn reg_number(reg: &str) -> Option<u32> {
    let name = reg.split(['.', '[']).next()?;
    let mut c = name.chars();
    let (kind, which) = (c.next()?, c.next()?);
    if c.next().is_some() {
        return None;
    }
    let k = "dnma".find(which)? as u32;
    match kind {
        'V' | 'B' | 'H' | 'S' | 'D' | 'Q' => Some(k),
        'R' | 'r' | 'W' | 'X' => Some(eval::X_BASE + k),
        _ => None,
    }
}

fn shape(row: &Row) -> Result<Shape, Skip> {
    let n = &row.name;
    let all_types = std::iter::once(row.ret.as_str()).chain(row.args.iter().map(|a| a.0.as_str()));
    for t in all_types.clone() {
        if t.contains('*') {
            return Err(skip(n, SkipReason::Memory, "a pointer operand"));
        }
        if t.contains("float") || t.contains("mfloat") || t.contains("fpm_t") {
            return Err(skip(n, SkipReason::FloatingPoint, t));
        }
        if t.contains("poly") {
            return Err(skip(n, SkipReason::Unsupported, "polynomial lanes"));
        }
    }
    if let Some(why) = erratum(n) {
        return Err(skip(n, SkipReason::FailedCheck, why));
    }
    if row.insns.iter().any(|i| i == "NOP") {
        return Err(skip(
            n,
            SkipReason::Unsupported,
            "no instruction (a reinterpretation)",
        ));
    }
    for m in row.insns.iter().filter_map(|i| i.split_whitespace().next()) {
        if let Some((ext, _)) = EXTENSIONS.iter().find(|(_, ms)| ms.contains(&m)) {
            return Err(skip(n, SkipReason::Feature, format!("{m} needs {ext}")));
        }
    }
    let result = vector_type(&row.ret)
        .filter(|t| t.lanes > 1)
        .or_else(|| scalar_type(&row.ret))
        .ok_or_else(|| skip(n, SkipReason::Scalar, format!("returns `{}`", row.ret)))?;
    let mut operands = Vec::new();
    let mut imm = None;
    for (ty, name) in &row.args {
        if ty == "__builtin_constant_p" {
            if imm.is_some() {
                return Err(skip(n, SkipReason::Immediate, "two immediates"));
            }
            let range = row.imms.get(name).copied().ok_or_else(|| {
                skip(n, SkipReason::Unsupported, format!("no range for `{name}`"))
            })?;
            imm = Some((name.clone(), range));
            continue;
        }
        let t = vector_type(ty)
            .filter(|t| t.lanes > 1)
            .or_else(|| scalar_type(ty))
            .ok_or_else(|| skip(n, SkipReason::Scalar, format!("`{name}` is `{ty}`")))?;
        let reg = row
            .regs
            .get(name)
            .and_then(|r| reg_number(r))
            .ok_or_else(|| {
                skip(
                    n,
                    SkipReason::Unsupported,
                    format!("`{name}` in no register"),
                )
            })?;
        let room = if reg >= eval::X_BASE {
            eval::XREG_BITS
        } else {
            eval::VREG_BITS
        };
        if t.total_bits() > u64::from(room) {
            return Err(skip(n, SkipReason::Unsupported, "wider than its register"));
        }
        operands.push((name.clone(), t, reg));
    }
    let result_reg = reg_number(&row.result_reg).ok_or_else(|| {
        skip(
            n,
            SkipReason::Unsupported,
            format!("result in `{}`", row.result_reg),
        )
    })?;
    let result_room = if result_reg >= eval::X_BASE {
        eval::XREG_BITS
    } else {
        eval::VREG_BITS
    };
    if result.total_bits() > u64::from(result_room) {
        return Err(skip(
            n,
            SkipReason::Unsupported,
            "a result wider than its register",
        ));
    }
    if let Some((_, (lo, hi))) = &imm
        && (hi < lo || hi - lo > MAX_IMM_VALUES)
    {
        return Err(skip(
            n,
            SkipReason::Immediate,
            "an immediate range too wide to evaluate",
        ));
    }
    Ok(Shape {
        operands,
        imm,
        result,
        result_reg,
    })
}

/// The assembly of `row`'s instructions with the immediate `imm` = `value`.
fn assembly(row: &Row, imm: Option<(&str, i128)>) -> Vec<String> {
    // A 64-bit scalar is in `x1` (`x0` for a result), a narrower one in `w1`.
    let wide_arg = row
        .args
        .iter()
        .any(|(t, _)| t.contains("int64_t") && !t.contains('x'));
    let wide_ret = row.ret.contains("int64_t") && !row.ret.contains('x');
    row.insns
        .iter()
        .map(|i| {
            let mut s = i.clone();
            for (name, k) in REGS {
                s = s.replace(name, &format!("v{k}"));
            }
            for word in words(&s) {
                let Some(r) = reg_number(&word) else {
                    continue;
                };
                let spelled = if r >= eval::X_BASE {
                    let wide = if r == eval::X_BASE {
                        wide_ret
                    } else {
                        wide_arg
                    };
                    format!("{}{}", if wide { 'x' } else { 'w' }, r - eval::X_BASE)
                } else {
                    format!("{}{r}", word[..1].to_lowercase())
                };
                s = substitute(&s, &word, &spelled);
            }
            // ACLE writes a move of one doubleword as `DUP Vd.1D,Vn.D[1]`; the assembler
            // spells the scalar destination `d0`.
            for k in 0..REGS.len() {
                s = s.replace(&format!("v{k}.1D,"), &format!("d{k},"));
            }
            match imm {
                Some((name, v)) => substitute(&s, name, &v.to_string()),
                None => s,
            }
        })
        .collect()
}

/// The words of an instruction's text.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// `text` with the word `name` (an immediate, in `#n`, `#(n<<2)` or `[lane]`) replaced by
/// `value`.
fn substitute(text: &str, name: &str, value: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word == name {
            out.push_str(value);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Encodings of `lines` by `llvm-mc`: `None` where it rejects a line.
fn assemble(lines: &[String]) -> Result<Vec<Option<u32>>, String> {
    let mut child = Command::new(LLVM_MC)
        .args([
            "--triple=aarch64-linux-gnu",
            &format!("-mattr={MC_ATTRS}"),
            "--show-encoding",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot run {LLVM_MC} ({e}): install it with `apt-get install llvm-19` \
                 (scripts/install-deps.sh does)"
            )
        })?;
    let mut input = String::new();
    for l in lines {
        input.push_str(l);
        input.push('\n');
    }
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer
        .join()
        .map_err(|_| "writer panicked")?
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut bad = std::collections::HashSet::new();
    for l in stderr.lines() {
        // `<stdin>:12:1: error: ...`
        if let Some(rest) = l.strip_prefix("<stdin>:")
            && l.contains("error")
            && let Some(n) = rest.split(':').next().and_then(|n| n.parse::<usize>().ok())
        {
            bad.insert(n.saturating_sub(1));
        }
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let words = stdout.lines().filter_map(|l| {
        let enc = l.split("encoding: [").nth(1)?.split(']').next()?;
        let bytes: Vec<u8> = enc
            .split(',')
            .filter_map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).ok())
            .collect();
        (bytes.len() == 4).then(|| u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    });
    let words: Vec<u32> = words.collect();
    if words.len() + bad.len() != lines.len() {
        return Err(format!(
            "{LLVM_MC} gave {} encodings and {} errors for {} lines: cannot tell which is which",
            words.len(),
            bad.len(),
            lines.len()
        ));
    }
    let mut words = words.into_iter();
    let mut out = Vec::with_capacity(lines.len());
    for k in 0..lines.len() {
        out.push(if bad.contains(&k) { None } else { words.next() });
    }
    Ok(out)
}

/// The result lanes of one evaluation of `words` on `shape`'s operands.
fn evaluate(
    model: &sail::Model,
    shape: &Shape,
    words: &[u32],
) -> Result<Vec<Rc<LaneExpr>>, String> {
    let elems: Vec<Elem> = shape.operands.iter().map(|o| o.1.elem).collect();
    let mut ev = eval::Eval::new(model, elems, shape.result.elem.bits());
    for (k, (_, t, reg)) in shape.operands.iter().enumerate() {
        let bits = t.total_bits() as u32;
        let width = if *reg >= eval::X_BASE {
            eval::XREG_BITS
        } else {
            eval::VREG_BITS
        };
        let mut b = Bits(vec![Seg {
            src: Src::Reg(k),
            lo: 0,
            len: bits,
        }]);
        if bits < width {
            b.0.push(Seg {
                src: Src::Undef,
                lo: 0,
                len: width - bits,
            });
        }
        if ev.regs.insert(*reg, b).is_some() {
            return Err("two operands in one register".into());
        }
    }
    // A destination that holds no operand starts unwritten (`INS` keeps the rest of it).
    let width = |r: u32| {
        if r >= eval::X_BASE {
            eval::XREG_BITS
        } else {
            eval::VREG_BITS
        }
    };
    ev.regs.entry(shape.result_reg).or_insert_with(|| {
        Bits(vec![Seg {
            src: Src::Undef,
            lo: 0,
            len: width(shape.result_reg),
        }])
    });
    for w in words {
        ev.execute(*w)?;
    }
    let dst = ev
        .regs
        .get(&shape.result_reg)
        .ok_or("never writes the result register")?
        .clone();
    let w = shape.result.elem.bits();
    (0..shape.result.lanes)
        .map(|k| ev.bits_num(&dst.sub(k * w, w), Some(shape.result.elem.is_signed())))
        .collect()
}

/// Replaces the constant `value` by the immediate, so that evaluations at different values
/// can be compared as functions of it.
fn abstract_imm(e: &Rc<LaneExpr>, value: i128) -> Rc<LaneExpr> {
    use LaneExpr as L;
    let r = |x: &Rc<LaneExpr>| abstract_imm(x, value);
    Rc::new(match &**e {
        L::Const(c) if *c == value => L::Imm(value),
        L::Bin(op, a, b) => L::Bin(*op, r(a), r(b)),
        L::Neg(a) => L::Neg(r(a)),
        L::Abs(a) => L::Abs(r(a)),
        L::Not(t, a) => L::Not(*t, r(a)),
        L::Select(c, a, b) => L::Select(r(c), r(a), r(b)),
        L::Wrap(t, a) => L::Wrap(*t, r(a)),
        L::Saturate(t, a) => L::Saturate(*t, r(a)),
        L::Count(op, t, a) => L::Count(*op, *t, r(a)),
        _ => return e.clone(),
    })
}

/// Imports the model's semantics of ACLE's integer intrinsics (`Family::importer` of arm).
pub fn import(ctx: &ImportContext) -> Result<Report, String> {
    let read = |rel: &str| {
        let p = ctx.vendor_dir.join(rel);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut model = sail::Model::default();
    for f in SAIL_FILES {
        sail::read_into(&mut model, &read(f)?);
    }
    let acle = rows(&read(ACLE)?);
    let hand = super::hand().map_err(|d| d.to_string())?;
    let costs = crate::isa::import::hand_costs(hand);
    let mut report = Report {
        vendor_entries: acle.len(),
        ..Report::default()
    };
    // Screen, then assemble every instruction of every row at every immediate in one run.
    let mut jobs: Vec<(usize, Shape, Vec<Option<i128>>)> = Vec::new();
    let mut lines = Vec::new();
    let mut spans = Vec::new();
    for (k, row) in acle.iter().enumerate() {
        let s = match shape(row) {
            Ok(s) => s,
            Err(sk) => {
                report.skipped.push(sk);
                continue;
            }
        };
        let values: Vec<Option<i128>> = match &s.imm {
            Some((_, (lo, hi))) => (*lo..=*hi).map(Some).collect(),
            None => vec![None],
        };
        let mut span = Vec::new();
        for v in &values {
            let name = s.imm.as_ref().map(|i| i.0.as_str());
            let text = assembly(row, name.zip(*v));
            span.push((lines.len(), text.len()));
            lines.extend(text);
        }
        spans.push(span);
        jobs.push((k, s, values));
    }
    let words = assemble(&lines)?;
    for ((k, s, values), span) in jobs.into_iter().zip(spans) {
        let row = &acle[k];
        match translate(&model, row, &s, &values, &span, &words) {
            Ok(entries) => {
                for (imm, semantics) in entries {
                    let mnemonic = row.insns[0]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_string();
                    let cost = costs.get(&row.name).copied();
                    let mut params: Vec<(String, Type)> =
                        s.operands.iter().map(|o| (o.0.clone(), o.1)).collect();
                    let mut imms: Vec<Option<(i128, i128)>> = vec![None; params.len()];
                    if let (Some((name, _)), Some(range)) = (&s.imm, imm) {
                        // The immediate sits where the prototype has it.
                        let at = row
                            .args
                            .iter()
                            .take_while(|a| &a.1 != name)
                            .filter(|a| a.0 != "__builtin_constant_p")
                            .count();
                        params.insert(at, (name.clone(), Type::scalar(Elem::I32)));
                        imms.insert(at, Some(range));
                    }
                    report.entries.push(Entry {
                        mnemonic: mnemonic.to_lowercase(),
                        intrinsic: row.name.clone(),
                        params,
                        imms,
                        result: s.result,
                        features: features(&mnemonic),
                        cost: cost.unwrap_or(DEFAULT_COST),
                        cost_from_hand: cost.is_some(),
                        semantics,
                    });
                }
            }
            Err(sk) => report.skipped.push(sk),
        }
    }
    crate::isa::import::price_by_instruction(&mut report.entries, |e| e.mnemonic.clone());
    Ok(report)
}

/// One description of a row: the immediate's range (if it has one) and the semantics.
type Described = (Option<(i128, i128)>, crate::ir::Expr);

/// The descriptions of one row: (immediate range, semantics) per run of immediate values
/// that share one semantics.
fn translate(
    model: &sail::Model,
    row: &Row,
    s: &Shape,
    values: &[Option<i128>],
    span: &[(usize, usize)],
    words: &[Option<u32>],
) -> Result<Vec<Described>, Skip> {
    let n = &row.name;
    let operands: Vec<Operand> = s
        .operands
        .iter()
        .map(|o| Operand {
            name: o.0.clone(),
            ty: o.1,
        })
        .collect();
    let imm_name = s.imm.as_ref().map(|i| i.0.as_str());
    // Per run of values: the description, its text (to compare the next value's with) and
    // the semantics at the run's first value, without the immediate.
    let mut out: Vec<(Described, String, Option<crate::ir::Expr>)> = Vec::new();
    // A description must load: an immediate only where the loader takes one (by itself as
    // an operand), so an abstraction it refuses falls back to the value itself.
    let loads = |sem: &crate::ir::Expr| -> bool {
        let mut params: Vec<String> = operands
            .iter()
            .map(|o| format!("{}: {}", o.name, type_text(o.ty)))
            .collect();
        if let Some(name) = imm_name {
            params.push(format!("{name}: imm(0..0)"));
        }
        let line = format!(
            "instr x check({}) -> {} features neon cost 1 1 = {sem}",
            params.join(", "),
            type_text(s.result)
        );
        let src = crate::diag::Source::new("check", line);
        crate::isa::Isa::load("arm", &[src]).is_ok()
    };
    for (v, (at, len)) in values.iter().zip(span) {
        let ws: Option<Vec<u32>> = words[*at..at + len].iter().copied().collect();
        let Some(ws) = ws else {
            return Err(skip(
                n,
                SkipReason::Unsupported,
                format!("llvm-mc rejects `{}`", row.insns.join("; ")),
            ));
        };
        let concrete = evaluate(model, s, &ws).map_err(|e| skip(n, SkipReason::Unsupported, e))?;
        let vectorize = |lanes: &[Rc<LaneExpr>]| {
            lanes::vectorize_halves(lanes, &operands, imm_name, s.result)
                .map_err(|e| skip(n, SkipReason::Unsupported, e.to_string()))
        };
        let abstracted = v.map(|v| {
            let lanes: Vec<Rc<LaneExpr>> = concrete.iter().map(|l| abstract_imm(l, v)).collect();
            vectorize(&lanes)
        });
        let (sem, fixed) = match abstracted {
            Some(Ok(sem)) if loads(&sem) => (sem, Some(vectorize(&concrete)?)),
            _ => (vectorize(&concrete)?, None),
        };
        let text = sem.to_string();
        match (out.last_mut(), v) {
            (Some(((Some(range), _), t, _)), Some(v)) if *t == text && range.1 + 1 == *v => {
                range.1 = *v;
            }
            _ => out.push(((v.map(|v| (v, v)), sem), text, fixed)),
        }
    }
    // A run of one value is described at that value (as `vext`'s hand-written entries
    // are): its semantics name no immediate, so selection needs no range check for it.
    Ok(out
        .into_iter()
        .map(|((range, sem), _, fixed)| match (range, fixed) {
            (Some((lo, hi)), Some(fixed)) if lo == hi => (range, fixed),
            _ => (range, sem),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_acle_rows() {
        let text = "<COMMENT>\tx\nint16x8_t vmulq_lane_s16(int16x8_t a, int16x4_t v, \
                    __builtin_constant_p(lane))\ta -> Vn.8H;v -> Vm.4H;0 <= lane <= 3\t\
                    MUL Vd.8H,Vn.8H,Vm.H[lane]\tVd.8H -> result\tv7/A32/A64\n";
        let r = rows(text);
        assert_eq!(r.len(), 1);
        let r = &r[0];
        assert_eq!(r.name, "vmulq_lane_s16");
        assert_eq!(r.args[2], ("__builtin_constant_p".into(), "lane".into()));
        assert_eq!(r.imms["lane"], (0, 3));
        let s = shape(r).unwrap_or_else(|s| panic!("{s:?}"));
        assert_eq!(s.operands[1].2, 2);
        assert_eq!(assembly(r, Some(("lane", 3))), ["MUL v0.8H,v1.8H,v2.H[3]"]);
    }

    #[test]
    fn immediates_are_substituted_as_words() {
        assert_eq!(
            substitute("EXT v0.8B,v1.8B,v2.8B,#(n<<2)", "n", "1"),
            "EXT v0.8B,v1.8B,v2.8B,#(1<<2)"
        );
        assert_eq!(
            substitute("INS v0.B[lane],v1.B[0]", "lane", "7"),
            "INS v0.B[7],v1.B[0]"
        );
        assert_eq!(erratum("vcgeq_u16"), erratum("vcge_s8"));
        assert!(erratum("vcge_s8").is_some() && erratum("vcgt_s8").is_none());
    }

    #[test]
    fn screens_by_type() {
        let text = "float32x4_t vaddq_f32(float32x4_t a, float32x4_t b)\ta -> Vn.4S;b -> Vm.4S\t\
                    FADD Vd.4S,Vn.4S,Vm.4S\tVd.4S -> result\tv7/A32/A64\n\
                    int8x8x2_t vzip_s8(int8x8_t a, int8x8_t b)\ta -> Vn.8B;b -> Vm.8B\t\
                    ZIP1 Vd1.8B,Vn.8B,Vm.8B;ZIP2 Vd2.8B,Vn.8B,Vm.8B\tVd1.8B -> result.val[0];\
                    Vd2.8B -> result.val[1]\tv7/A32/A64\n\
                    int8_t vget_lane_s8(int8x8_t v, __builtin_constant_p(lane))\t0<=lane<=7;v -> \
                    Vn.8B\tSMOV Rd,Vn.B[lane]\tRd -> result\tv7/A32/A64\n";
        let r = rows(text);
        let reasons: Vec<Option<SkipReason>> =
            r.iter().map(|r| shape(r).err().map(|s| s.reason)).collect();
        // A scalar result in a general register is imported (`Rd` is register 0 of them).
        assert_eq!(
            reasons,
            [
                Some(SkipReason::FloatingPoint),
                Some(SkipReason::Scalar),
                None
            ]
        );
        assert_eq!(shape(&r[2]).map(|s| s.result_reg).ok(), Some(eval::X_BASE));
    }
}
