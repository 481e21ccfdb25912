//! Importing QEMU's HVX instruction definitions (`shared/vendor/hexagon/`): every
//! `EXTINSN` of `imported/mmvec/ext.idef` with the macros of QEMU's `macros.h` files
//! expanded (by clang-19's preprocessor, as QEMU's own generators do), its C semantics
//! evaluated lane by lane ([`eval`]), and written as one harrow description per C
//! intrinsic of clang's `hvx_hexagon_protos.h` that calls it.
//!
//! QEMU says what an instruction computes; clang's header says how C calls it (the
//! intrinsic's name, its operands in order, the HVX version that has it and the
//! instruction's class). Both are read in place: nothing of either is in the repository.

pub mod c;
mod compose;
pub mod eval;

use std::collections::HashMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::rc::Rc;

use crate::ir::Expr;
use crate::isa::import::lanes::{self, LaneExpr, Operand};
use crate::isa::import::{Entry, ImportContext, Report, Skip, SkipReason};
use crate::types::{Elem, Type};
use eval::{Eval, RegDecl};

/// QEMU's files, relative to the vendor folder.
pub const EXT_IDEF: &str = "hexagon/imported/mmvec/ext.idef";
const MACRO_FILES: &[&str] = &["hexagon/macros.h", "hexagon/mmvec/macros.h"];

/// The HVX version harrow's `hvx` target builds for (`-mv67`): intrinsics of later
/// versions are listed as needing a feature no target has.
const HVX_VERSION: u32 = 67;

/// Cost by instruction class (`Instruction Type` in clang's header), in packets: the same
/// table the hand-written descriptions use (see `isa/arith.isa`); classes it does not name
/// take `DEFAULT_COST`.
const CLASS_COSTS: &[(&str, (f32, f32))] = &[
    ("CVI_VA", (1.0, 0.5)),
    ("CVI_VA_DV", (1.0, 1.0)),
    ("CVI_VX", (2.0, 1.0)),
    ("CVI_VX_DV", (2.0, 2.0)),
    ("CVI_VP", (2.0, 1.0)),
    ("CVI_VP_VS", (2.0, 2.0)),
    ("CVI_VS", (1.0, 1.0)),
];

/// Cost of an instruction whose class the table does not name: latency 2, one per packet.
pub const DEFAULT_COST: (f32, f32) = (2.0, 1.0);

/// One instruction of `ext.idef` after preprocessing.
#[derive(Clone, Debug)]
struct Insn {
    tag: String,
    /// The assembly syntax (`Vd32.ub=vadd(Vu32.ub,Vv32.ub):sat`).
    syntax: String,
    attribs: String,
    semantics: String,
}

/// One intrinsic of clang's header.
#[derive(Clone, Debug)]
struct Intrinsic {
    name: String,
    syntax: String,
    ret: String,
    params: Vec<(String, String)>,
    class: String,
    version: u32,
    /// The builtins its definition calls (`V6_vaddubsat`).
    builtins: Vec<String>,
    /// Its definition: what follows the macro's parameter list.
    body: String,
}

/// Runs clang-19's preprocessor over QEMU's macros and `ext.idef`, with `EXTINSN` defined to
/// leave a marked record of each instruction.
fn preprocess(vendor: &std::path::Path) -> Result<String, String> {
    crate::isa::toolchain::require("clang-19", "clang-19").map_err(|e| e.to_string())?;
    let read = |rel: &str| {
        let p = vendor.join(rel);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut input = String::from(include_str!("prelude.h"));
    for f in MACRO_FILES {
        // QEMU's own headers are not here; the macros only need each other.
        for line in read(f)?.lines() {
            if !line.trim_start().starts_with("#include") {
                input.push_str(line);
            }
            input.push('\n');
        }
    }
    input.push_str(include_str!("after_macros.h"));
    input.push_str(&read(EXT_IDEF)?);
    let mut child = Command::new("clang-19")
        .args(["-E", "-P", "-x", "c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("clang-19: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("clang-19: no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("clang-19: {e}"))?;
    writer
        .join()
        .map_err(|_| "clang-19: writing its input failed")?
        .map_err(|e| format!("clang-19: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "clang-19 -E over {EXT_IDEF} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("clang-19 -E: {e}"))
}

/// The marked records of the preprocessed text, in `ext.idef`'s order.
fn records(text: &str) -> Result<Vec<Insn>, String> {
    let mut out = Vec::new();
    for chunk in text.split("@@INSN").skip(1) {
        let field = |from: &str, to: &str| -> Result<String, String> {
            let a = chunk
                .find(from)
                .ok_or_else(|| format!("a record without `{from}`"))?;
            let rest = &chunk[a + from.len()..];
            let b = rest
                .find(to)
                .ok_or_else(|| format!("a record without `{to}`"))?;
            Ok(rest[..b].trim().to_string())
        };
        let tag = chunk
            .split_whitespace()
            .next()
            .ok_or("an empty record")?
            .to_string();
        // The syntax is a run of string literals: their contents, joined.
        let syntax = field("@@SYNTAX", "@@ATTRIBUTES")?
            .split('"')
            .skip(1)
            .step_by(2)
            .collect::<String>();
        out.push(Insn {
            tag,
            syntax,
            attribs: field("@@ATTRIBUTES", "@@SEMANTICS")?,
            semantics: field("@@SEMANTICS", "@@END")?,
        });
    }
    Ok(out)
}

/// The header of clang-19's HVX intrinsics.
fn protos_path() -> Result<std::path::PathBuf, String> {
    let out = Command::new("clang-19")
        .arg("-print-resource-dir")
        .output()
        .map_err(|e| format!("clang-19: {e}"))?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(std::path::Path::new(&dir).join("include/hvx_hexagon_protos.h"))
}

/// The intrinsics of clang's header, in its order.
fn intrinsics(text: &str) -> Vec<Intrinsic> {
    let mut out = Vec::new();
    let (mut syntax, mut proto, mut class, mut version) =
        (String::new(), String::new(), String::new(), 0u32);
    for line in text.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix("#if __HVX_ARCH__ >= ") {
            // A version that does not read is not one harrow's target has.
            version = v.trim().parse().unwrap_or(u32::MAX);
        } else if let Some(s) = l.strip_prefix("Assembly Syntax:") {
            syntax = s.trim().to_string();
        } else if let Some(s) = l.strip_prefix("C Intrinsic Prototype:") {
            proto = s.trim().to_string();
        } else if let Some(s) = l.strip_prefix("Instruction Type:") {
            class = s.trim().to_string();
        } else if let Some(def) = l.strip_prefix("#define Q6_") {
            let name = format!("Q6_{}", def.split('(').next().unwrap_or(""));
            let builtins = def
                .split("__builtin_HEXAGON_")
                .skip(1)
                .map(|s| {
                    s.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .collect();
            let (ret, params) = parse_proto(&proto, &name).unwrap_or_default();
            let body = def
                .split_once(')')
                .map(|x| x.1.trim().to_string())
                .unwrap_or_default();
            out.push(Intrinsic {
                name,
                syntax: syntax.clone(),
                ret,
                params,
                class: class.clone(),
                version,
                builtins,
                body,
            });
        }
    }
    out
}

/// `HVX_Vector Q6_V_vand_VV(HVX_Vector Vu, HVX_Vector Vv)`: the return type and the
/// parameters (type, name).
fn parse_proto(proto: &str, name: &str) -> Option<(String, Vec<(String, String)>)> {
    let (head, rest) = proto.split_once('(')?;
    let ret = head.trim().strip_suffix(name)?.trim().to_string();
    let inner = rest.trim().strip_suffix(')')?;
    let mut params = Vec::new();
    for p in inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "void")
    {
        let (t, n) = p.rsplit_once(' ')?;
        params.push((t.trim().to_string(), n.trim().to_string()));
    }
    Some((ret, params))
}

/// The register at the start of an operand in the assembly syntax (`Vdd32.h` is `Vdd`,
/// `h`).
fn syntax_operand(tok: &str) -> Option<(String, Option<String>)> {
    let name: String = tok
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    if name.is_empty() {
        return None;
    }
    let rest = &tok[name.len()..];
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let suffix = rest.strip_prefix('.').map(|s| {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
    });
    Some((name, suffix))
}

/// The lane type a syntax suffix names (`ub` is `u8`).
fn suffix_elem(s: &str) -> Option<Elem> {
    Some(match s {
        "b" => Elem::I8,
        "ub" => Elem::U8,
        "h" => Elem::I16,
        "uh" => Elem::U16,
        "w" => Elem::I32,
        "uw" => Elem::U32,
        _ => return None,
    })
}

/// A register of the assembly syntax and its lane suffix (`Vdd32.h` is `Vdd`, `h`).
type SyntaxOperand = (String, Option<String>);

/// The destination of the syntax and the suffixes of every register it names.
fn syntax_types(syntax: &str) -> (Option<SyntaxOperand>, HashMap<String, String>) {
    // The destination is the register just before the first `=` (after a condition such
    // as `if (Qv4)`).
    let mut dest = None;
    let mut last = None;
    let mut suffixes = HashMap::new();
    let mut tok = String::new();
    for c in syntax.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '.' {
            tok.push(c);
            continue;
        }
        if let Some(op) = syntax_operand(&tok)
            && tok
                .chars()
                .nth(op.0.len())
                .is_some_and(|d| d.is_ascii_digit())
        {
            if let (n, Some(s)) = &op {
                suffixes.entry(n.clone()).or_insert(s.clone());
            }
            last = Some(op);
        }
        tok.clear();
        if c == '=' && dest.is_none() {
            dest = last.clone();
        }
    }
    (dest, suffixes)
}

fn skip(name: &str, reason: SkipReason, detail: impl Into<String>) -> Skip {
    Skip {
        name: name.to_string(),
        reason,
        detail: detail.into(),
    }
}

/// Bytes of a parameter's C type, or why it is not imported.
fn param_bytes(ty: &str, name: &str) -> Result<u32, (SkipReason, String)> {
    match ty {
        // A predicate is a vector in C (see `compose`).
        "HVX_Vector" | "HVX_VectorPred" => Ok(128),
        "HVX_VectorPair" => Ok(256),
        "Word32" if name.starts_with('I') => {
            Err((SkipReason::Immediate, format!("immediate operand {name}")))
        }
        "Word32" => Ok(4),
        _ => Err((SkipReason::Scalar, format!("operand {name} of type {ty}"))),
    }
}

/// The result's bytes and the operands of an intrinsic, as its prototype declares them.
struct Shape {
    result_bytes: u32,
    operands: Vec<Operand>,
    /// Bytes of each operand (4 for a scalar).
    bytes: Vec<u32>,
    dest: String,
    declared: Option<Elem>,
    suffixes: HashMap<String, String>,
}

/// The shape of `intr`, or why it is not imported.
fn shape(intr: &Intrinsic) -> Result<Shape, Skip> {
    let fail = |reason, d: String| skip(&intr.name, reason, d);
    // A predicate is a vector in C: its bytes all ones where the predicate is set.
    let result_bytes = match intr.ret.as_str() {
        "HVX_Vector" | "HVX_VectorPred" => 128,
        "HVX_VectorPair" => 256,
        t => return Err(fail(SkipReason::Scalar, format!("result of type {t}"))),
    };
    let (dest, suffixes) = syntax_types(&intr.syntax);
    let (dest, dest_suffix) =
        dest.ok_or_else(|| fail(SkipReason::Unsupported, "no destination".into()))?;
    let mut operands = Vec::new();
    let mut bytes = Vec::new();
    for (ty, name) in &intr.params {
        let b = param_bytes(ty, name).map_err(|(r, d)| fail(r, d))?;
        let elem = if b == 4 {
            Elem::I32
        } else {
            suffixes
                .get(name)
                .and_then(|s| suffix_elem(s))
                .unwrap_or(Elem::U8)
        };
        operands.push(Operand {
            name: name.to_lowercase(),
            ty: Type::vec(elem, (b * 8 / elem.bits()).max(1)),
        });
        bytes.push(b);
    }
    // Predicates are bytes; so is an untyped result selected by one.
    let by_predicate = intr.params.iter().any(|(t, _)| t == "HVX_VectorPred");
    let declared = match dest_suffix.as_deref().and_then(suffix_elem) {
        _ if intr.ret == "HVX_VectorPred" => Some(Elem::U8),
        None if by_predicate => Some(Elem::U8),
        d => d,
    };
    Ok(Shape {
        result_bytes,
        operands,
        bytes,
        dest,
        declared,
        suffixes,
    })
}

/// Imports one intrinsic that calls instruction `insn` alone.
fn translate(
    insn: &Insn,
    intr: &Intrinsic,
    body: &c::CStmt,
    costs: &std::collections::BTreeMap<String, (f32, f32)>,
) -> Result<Entry, Skip> {
    let unsupported = |d: String| skip(&intr.name, SkipReason::Unsupported, d);
    let sh = shape(intr)?;
    let mut regs: Vec<RegDecl> = intr
        .params
        .iter()
        .zip(&sh.bytes)
        .enumerate()
        .map(|(k, ((_, name), b))| RegDecl {
            name: format!("{name}V"),
            bytes: *b,
            operand: Some(k),
            preset: Vec::new(),
        })
        .collect();
    let result_reg = format!("{}V", sh.dest);
    if !regs.iter().any(|r| r.name == result_reg) {
        regs.push(RegDecl {
            name: result_reg.clone(),
            bytes: sh.result_bytes,
            operand: None,
            preset: Vec::new(),
        });
    }
    let mut ev = Eval::new(&regs);
    ev.run(body).map_err(unsupported)?;
    if !ev.written(&result_reg) {
        return Err(unsupported(format!(
            "the result {result_reg} is never written"
        )));
    }
    finish(insn, intr, &sh, costs, |e| {
        let n = sh.result_bytes * 8 / e.bits();
        (0..n).map(|k| ev.lane(&result_reg, k, e)).collect()
    })
}

/// Imports an intrinsic that calls several instructions (predicate transfers around one).
fn translate_composite(
    insn: &Insn,
    intr: &Intrinsic,
    lib: &compose::Library,
    costs: &std::collections::BTreeMap<String, (f32, f32)>,
) -> Result<Entry, Skip> {
    let unsupported = |d: String| skip(&intr.name, SkipReason::Unsupported, d);
    let sh = shape(intr)?;
    let bytes = compose::result_bytes(&intr.body, &intr.params, lib, sh.result_bytes)
        .map_err(unsupported)?;
    finish(insn, intr, &sh, costs, |e| compose::lanes_of(&bytes, e))
}

/// The description of `intr` from its result lanes at some lane type (`lanes_at`): the
/// lanes the syntax names first, else the widest that all compute one function (a splat of
/// a word is a word per lane, a byte permute bytes).
fn finish(
    insn: &Insn,
    intr: &Intrinsic,
    sh: &Shape,
    costs: &std::collections::BTreeMap<String, (f32, f32)>,
    lanes_at: impl Fn(Elem) -> Result<Vec<Rc<LaneExpr>>, String>,
) -> Result<Entry, Skip> {
    let mut widths: Vec<Elem> = sh.declared.into_iter().collect();
    for e in [Elem::U32, Elem::U16, Elem::U8] {
        if !widths.iter().any(|w| w.bits() == e.bits()) {
            widths.push(e);
        }
    }
    let mut first_error = None;
    for e in widths {
        let n = sh.result_bytes * 8 / e.bits();
        let lanes = match lanes_at(e) {
            Ok(l) => l,
            Err(err) => {
                first_error.get_or_insert(err);
                continue;
            }
        };
        let ops = typed_operands(&sh.operands, &lanes, &sh.suffixes, &intr.params);
        let result = Type::vec(e, n);
        match lanes::vectorize(&lanes, &ops, None, result) {
            Ok(sem) => {
                let sem = crate::lift::lift(&sem);
                if sem.ty() != result {
                    first_error.get_or_insert(format!("semantics have type {}", sem.ty()));
                    continue;
                }
                return Ok(entry(insn, intr, ops, sem, result, costs));
            }
            Err(err) => {
                if std::env::var_os("HARROW_IMPORT_DEBUG").is_some() {
                    eprintln!("{} at {}: {err}", intr.name, e.name());
                }
                first_error.get_or_insert(err);
            }
        }
    }
    Err(skip(
        &intr.name,
        SkipReason::Unsupported,
        first_error.unwrap_or_else(|| "no lane width fits".into()),
    ))
    .inspect_err(|s| {
        if std::env::var_os("HARROW_IMPORT_DEBUG").is_some() {
            eprintln!("{}: {}", s.name, s.detail);
        }
    })
}

/// Operands the syntax gives no lane type read as the lanes the semantics read first.
fn typed_operands(
    ops: &[Operand],
    lanes: &[Rc<LaneExpr>],
    suffixes: &HashMap<String, String>,
    params: &[(String, String)],
) -> Vec<Operand> {
    let mut first: HashMap<usize, Elem> = HashMap::new();
    fn walk(e: &LaneExpr, first: &mut HashMap<usize, Elem>, depth: usize) {
        if depth > 64 {
            return;
        }
        match e {
            LaneExpr::Input { operand, elem, .. } => {
                first.entry(*operand).or_insert(*elem);
            }
            LaneExpr::Bin(_, a, b) => {
                walk(a, first, depth + 1);
                walk(b, first, depth + 1);
            }
            LaneExpr::Select(c, a, b) => {
                walk(c, first, depth + 1);
                walk(a, first, depth + 1);
                walk(b, first, depth + 1);
            }
            LaneExpr::Neg(a)
            | LaneExpr::Abs(a)
            | LaneExpr::Not(_, a)
            | LaneExpr::Wrap(_, a)
            | LaneExpr::Saturate(_, a)
            | LaneExpr::Count(_, _, a) => walk(a, first, depth + 1),
            LaneExpr::Const(_) | LaneExpr::Imm(_) => {}
        }
    }
    if let Some(l) = lanes.first() {
        walk(l, &mut first, 0);
    }
    ops.iter()
        .enumerate()
        .map(|(k, o)| {
            let named = suffixes.contains_key(&params[k].1);
            match first.get(&k) {
                Some(e) if !named && !o.ty.is_scalar() && o.ty.lanes > 1 => Operand {
                    name: o.name.clone(),
                    ty: Type::vec(*e, o.ty.total_bits() as u32 / e.bits()),
                },
                _ => o.clone(),
            }
        })
        .collect()
}

fn entry(
    insn: &Insn,
    intr: &Intrinsic,
    ops: Vec<Operand>,
    sem: Expr,
    result: Type,
    costs: &std::collections::BTreeMap<String, (f32, f32)>,
) -> Entry {
    let hand = costs.get(&intr.name).copied();
    let class = CLASS_COSTS
        .iter()
        .find(|(c, _)| *c == intr.class)
        .map(|(_, c)| *c);
    let mnemonic = intr
        .syntax
        .split('=')
        .nth(1)
        .and_then(|s| s.split('(').next())
        .map(|s| s.trim().to_string())
        .filter(|s| {
            s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        })
        .unwrap_or_else(|| insn.tag.trim_start_matches("V6_").to_string());
    Entry {
        mnemonic,
        intrinsic: intr.name.clone(),
        params: ops.iter().map(|o| (o.name.clone(), o.ty)).collect(),
        imms: vec![None; ops.len()],
        result,
        features: vec!["hvx".into()],
        cost: hand.or(class).unwrap_or(DEFAULT_COST),
        cost_from_hand: hand.is_some(),
        semantics: sem,
    }
}

/// The instruction an intrinsic is about: the builtin it calls that is not a predicate
/// transfer (`vandvrt`, `vandqrt`), or its only one.
fn main_builtin(i: &Intrinsic) -> Option<&str> {
    const TRANSFERS: &[&str] = &["V6_vandvrt", "V6_vandqrt"];
    i.builtins
        .iter()
        .find(|b| !TRANSFERS.contains(&b.as_str()))
        .or(i.builtins.first())
        .map(String::as_str)
}

/// Why an instruction is not imported at all, from its attributes.
fn screen(insn: &Insn) -> Option<(SkipReason, String)> {
    let a = &insn.attribs;
    for (attr, what) in [
        ("A_LOAD", "a load"),
        ("A_STORE", "a store"),
        ("A_CVI_GATHER", "a gather"),
        ("A_CVI_SCATTER", "a scatter"),
        ("A_CVI_VM", "a vector memory access"),
    ] {
        if a.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| w == attr)
        {
            return Some((SkipReason::Memory, what.into()));
        }
    }
    None
}

/// Imports QEMU's HVX definitions (`Family::importer` of hvx).
pub fn import(ctx: &ImportContext) -> Result<Report, String> {
    let text = preprocess(ctx.vendor_dir)?;
    let insns = records(&text)?;
    let protos = protos_path()?;
    let header = std::fs::read_to_string(&protos).map_err(|e| {
        format!(
            "{}: {e} (clang-19's HVX intrinsics header)",
            protos.display()
        )
    })?;
    let intrs = intrinsics(&header);
    let hand = super::hand().map_err(|d| d.to_string())?;
    let costs = crate::isa::import::hand_costs(hand);
    let mut report = Report {
        vendor_entries: insns.len(),
        ..Default::default()
    };
    let lib = compose::Library {
        insns: insns
            .iter()
            .map(|i| (i.tag.as_str(), (i.syntax.as_str(), i.semantics.as_str())))
            .collect(),
    };
    let only = std::env::var("HARROW_IMPORT_ONLY").ok();
    for insn in &insns {
        if only.as_deref().is_some_and(|o| o != insn.tag) {
            continue;
        }
        if let Some((reason, d)) = screen(insn) {
            report.skipped.push(skip(&insn.tag, reason, d));
            continue;
        }
        let callers: Vec<&Intrinsic> = intrs
            .iter()
            .filter(|i| main_builtin(i) == Some(insn.tag.as_str()))
            .collect();
        if callers.is_empty() {
            let transfer = intrs.iter().any(|i| i.builtins.contains(&insn.tag));
            report.skipped.push(if transfer {
                skip(
                    &insn.tag,
                    SkipReason::Masks,
                    "a predicate transfer, imported inside the intrinsics that call it",
                )
            } else {
                skip(
                    &insn.tag,
                    SkipReason::Unsupported,
                    "no C intrinsic in clang's header calls it",
                )
            });
            continue;
        }
        let body = c::parse_stmt(&insn.semantics);
        for intr in callers {
            let r = if intr.version > HVX_VERSION {
                Err(skip(
                    &intr.name,
                    SkipReason::Feature,
                    format!("needs HVX v{}", intr.version),
                ))
            } else if intr.builtins.len() > 1 {
                translate_composite(insn, intr, &lib, &costs)
            } else {
                match &body {
                    Ok(b) => translate(insn, intr, b, &costs),
                    Err(e) => Err(skip(
                        &intr.name,
                        SkipReason::Unsupported,
                        format!("parse: {e}"),
                    )),
                }
            };
            match r {
                Ok(e) => report.entries.push(e),
                Err(s) => report.skipped.push(s),
            }
        }
    }
    Ok(report)
}
