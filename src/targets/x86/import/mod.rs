//! Importing Intel's intrinsics data (`shared/vendor/x86/intel-intrinsics-hydride-union.xml`):
//! each `<intrinsic>` with integer vector operands and `<operation>` pseudocode is parsed
//! ([`pseudo`]), evaluated lane by lane ([`eval`]) and written as one harrow description.

mod calls;
pub mod eval;
pub mod pseudo;

use std::rc::Rc;

use crate::ir::Expr;
use crate::isa::import::lanes::{self, LaneExpr, Operand};
use crate::isa::import::{Entry, ImportContext, Report, Skip, SkipReason};
use crate::types::{Elem, Type};
use eval::OperandInfo;

/// The vendor file, relative to the vendor folder.
pub const INTEL_XML: &str = "x86/intel-intrinsics-hydride-union.xml";

/// Default cost of an imported instruction no hand-written description prices: latency 3,
/// reciprocal throughput 1 (a typical single-uop vector operation that is not the cheapest).
pub const DEFAULT_COST: (f32, f32) = (3.0, 1.0);

/// Intel's CPUID names and harrow's feature names.
const FEATURES: &[(&str, &str)] = &[
    ("SSE2", "sse2"),
    ("SSE3", "sse2"),
    ("SSSE3", "ssse3"),
    ("SSE4.1", "sse41"),
    ("SSE4.2", "sse42"),
    ("AVX", "avx"),
    ("AVX2", "avx2"),
    ("AVX512F", "avx512f"),
    ("AVX512BW", "avx512bw"),
    ("AVX512DQ", "avx512dq"),
    ("AVX512VL", "avx512vl"),
    ("AVX512_VNNI", "avx512vnni"),
    ("AVX512_VBMI", "avx512vbmi"),
];

/// One `<parameter>`.
struct RawParam {
    c_type: String,
    name: String,
    etype: String,
    imm_width: Option<u32>,
    imm_type: Option<String>,
}

/// One `<intrinsic>` as read from the XML.
struct Raw {
    name: String,
    types: Vec<String>,
    cpuid: Vec<String>,
    categories: Vec<String>,
    ret: (String, String),
    ret_name: String,
    params: Vec<RawParam>,
    operation: Option<String>,
    instruction: Option<String>,
}

fn read_xml(text: &str) -> Result<Vec<Raw>, String> {
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("{INTEL_XML}: {e}"))?;
    let mut out = Vec::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("intrinsic")) {
        let texts = |tag: &str| -> Vec<String> {
            n.children()
                .filter(|c| c.has_tag_name(tag))
                .filter_map(|c| c.text().map(|t| t.trim().to_string()))
                .collect()
        };
        let ret = n
            .children()
            .find(|c| c.has_tag_name("return"))
            .map(|r| {
                (
                    r.attribute("type").unwrap_or("").to_string(),
                    r.attribute("etype").unwrap_or("").to_string(),
                )
            })
            .unwrap_or_default();
        let ret_name = n
            .children()
            .find(|c| c.has_tag_name("return"))
            .and_then(|r| r.attribute("varname"))
            .unwrap_or("dst")
            .to_string();
        let params = n
            .children()
            .filter(|c| c.has_tag_name("parameter"))
            .map(|p| RawParam {
                c_type: p.attribute("type").unwrap_or("").to_string(),
                name: p.attribute("varname").unwrap_or("").to_string(),
                etype: p.attribute("etype").unwrap_or("").to_string(),
                imm_width: p.attribute("immwidth").and_then(|w| w.trim().parse().ok()),
                imm_type: p.attribute("immtype").map(str::to_string),
            })
            .collect();
        out.push(Raw {
            name: n.attribute("name").unwrap_or("").to_string(),
            types: texts("type"),
            cpuid: texts("CPUID"),
            categories: texts("category"),
            ret,
            ret_name,
            params,
            operation: n
                .children()
                .find(|c| c.has_tag_name("operation"))
                .and_then(|c| c.text())
                .map(str::to_string),
            instruction: n
                .children()
                .find(|c| c.has_tag_name("instruction"))
                .and_then(|c| c.attribute("name"))
                .map(|s| s.to_lowercase()),
        });
    }
    Ok(out)
}

/// Lanes of a mask type (`__mmask16`).
fn mask_lanes(c_type: &str) -> Option<u32> {
    c_type.trim().strip_prefix("__mmask")?.parse().ok()
}

/// Register width of a C vector type, or lanes of a mask type.
fn register_bits(c_type: &str) -> Option<u32> {
    if let Some(n) = mask_lanes(c_type) {
        return Some(n);
    }
    match c_type.trim() {
        "__m128i" => Some(128),
        "__m256i" => Some(256),
        "__m512i" => Some(512),
        _ => None,
    }
}

/// The element type Intel declares (`SI16`, `UI8`), if it is an integer one.
fn declared_elem(etype: &str) -> Option<Elem> {
    let (signed, bits) = if let Some(b) = etype.strip_prefix("SI") {
        (true, b)
    } else {
        (false, etype.strip_prefix("UI")?)
    };
    Elem::from_bits(bits.parse().ok()?, signed)
}

fn skip(r: &Raw, reason: SkipReason, detail: impl Into<String>) -> Skip {
    Skip {
        name: r.name.clone(),
        reason,
        detail: detail.into(),
    }
}

/// Screens an entry by its declaration, before reading its pseudocode.
fn screen(r: &Raw) -> Result<Vec<String>, Skip> {
    let regs: Vec<&RawParam> = r.params.iter().filter(|p| p.etype != "IMM").collect();
    let all_types = regs
        .iter()
        .map(|p| &p.c_type)
        .chain(std::iter::once(&r.ret.0));
    let all_etypes: Vec<&String> = r
        .params
        .iter()
        .map(|p| &p.etype)
        .chain(std::iter::once(&r.ret.1))
        .collect();
    if !r.types.iter().any(|t| t == "Integer") || all_etypes.iter().any(|e| e.starts_with("FP")) {
        return Err(skip(r, SkipReason::FloatingPoint, r.types.join(", ")));
    }
    if r.categories.iter().any(|c| c == "Load" || c == "Store")
        || r.params.iter().any(|p| p.c_type.contains('*'))
    {
        return Err(skip(r, SkipReason::Memory, ""));
    }
    if all_types.clone().any(|t| t.contains("__m64")) {
        return Err(skip(r, SkipReason::Registers, "MMX (__m64)"));
    }
    if regs.is_empty() {
        return Err(skip(
            r,
            SkipReason::Unsupported,
            "no register operand (a constant)",
        ));
    }
    let imms = r.params.iter().filter(|p| p.etype == "IMM").count();
    if imms > 1 {
        return Err(skip(r, SkipReason::Immediate, format!("{imms} immediates")));
    }
    if let Some(t) = all_types.clone().find(|t| register_bits(t).is_none()) {
        return Err(skip(r, SkipReason::Scalar, t.clone()));
    }
    let mut features = Vec::new();
    for c in &r.cpuid {
        // `AVX512F/KNCNI`: any one of the alternatives will do.
        let known = c
            .split('/')
            .find_map(|alt| FEATURES.iter().find(|(intel, _)| *intel == alt.trim()));
        match known {
            Some((_, f)) => {
                if !features.iter().any(|x| x == f) {
                    features.push(f.to_string());
                }
            }
            None => return Err(skip(r, SkipReason::Feature, c.clone())),
        }
    }
    if features.is_empty() {
        return Err(skip(r, SkipReason::Feature, "no CPUID given"));
    }
    if r.instruction.is_none() {
        return Err(skip(
            r,
            SkipReason::Unsupported,
            "no instruction named (a sequence)",
        ));
    }
    Ok(features)
}

/// The most distinct semantics one intrinsic may have over its immediate's values and
/// still be imported (one description per run of values); more means the immediate selects
/// lanes or operations, one description per value, which is not imported yet.
const MAX_IMM_FORMS: usize = 4;

/// The operands as evaluation and vectorization see them; the immediate is left out.
fn operands_of(r: &Raw) -> (Vec<OperandInfo>, Vec<Operand>) {
    let ret_elem = declared_elem(&r.ret.1);
    let mut infos = Vec::new();
    let mut operands = Vec::new();
    for p in r.params.iter().filter(|p| p.etype != "IMM") {
        let bits = register_bits(&p.c_type).expect("screened");
        let elem = if mask_lanes(&p.c_type).is_some() {
            Elem::Bool
        } else {
            declared_elem(&p.etype).or(ret_elem).unwrap_or(Elem::U8)
        };
        infos.push(OperandInfo {
            name: p.name.clone(),
            bits,
            elem,
        });
        operands.push(Operand {
            name: p.name.clone(),
            ty: Type::vec(elem, bits / elem.bits()),
        });
    }
    (infos, operands)
}

/// The semantics and result type at one immediate value (or without one), and whether the
/// value decided anything.
fn semantics_at(
    r: &Raw,
    body: &[pseudo::Stmt],
    infos: &[OperandInfo],
    operands: &[Operand],
    imm: Option<eval::ImmValue>,
) -> Result<(Expr, Type, bool), String> {
    let ret_bits = register_bits(&r.ret.0).expect("screened");
    let ret_elem = declared_elem(&r.ret.1);
    // Lane widths to try: the declared one first, then widest first.
    let mask_result = mask_lanes(&r.ret.0).is_some();
    let mut widths: Vec<u32> = ret_elem.map(|e| e.bits()).into_iter().collect();
    for w in [64, 32, 16, 8] {
        if !widths.contains(&w) {
            widths.push(w);
        }
    }
    if mask_result {
        widths = vec![1];
    }
    let mut first_error = None;
    for w in widths {
        let n = ret_bits / w;
        let ev = match eval::result_lanes(body, infos, &r.ret_name, imm, n, w) {
            Ok(l) => l,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        let elem = if mask_result {
            Elem::Bool
        } else {
            result_elem(&ev.lanes[0], w, ret_elem)
        };
        let wrapped: Vec<Rc<LaneExpr>> = ev
            .lanes
            .into_iter()
            .map(|l| Rc::new(LaneExpr::Wrap(elem, l)))
            .collect();
        let result = Type::vec(elem, n);
        let imm_name = imm.map(|i| i.name);
        match lanes::vectorize(&wrapped, operands, imm_name, result) {
            Ok(sem) => {
                let mut sem = crate::lift::lift(&sem);
                // A cast that only changes signedness at the top says nothing: the result
                // type is the value's own.
                let mut result = result;
                if matches!(sem.op(), crate::ir::Op::Cast)
                    && sem.arg(0).ty().elem.bits() == result.elem.bits()
                    && sem.arg(0).ty().lanes == result.lanes
                {
                    sem = sem.arg(0).clone();
                    result = sem.ty();
                }
                if mask_result && sem.ty().elem == Elem::Bool && sem.ty().lanes <= result.lanes {
                    result = sem.ty();
                }
                if sem.ty() != result {
                    first_error.get_or_insert(format!("semantics have type {}", sem.ty()));
                    continue;
                }
                return Ok((sem, result, ev.imm_concrete));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "no lane width fits".into()))
}

/// The immediate operand's name, width in bits and range, if the entry has one.
fn immediate(r: &Raw) -> Option<(String, u32, i128, i128)> {
    let p = r.params.iter().find(|p| p.etype == "IMM")?;
    let bits = if p.imm_type.as_deref() == Some("_MM_CMPINT") {
        3
    } else {
        p.imm_width.unwrap_or(8).clamp(1, 8)
    };
    Some((p.name.clone(), bits, 0, (1i128 << bits) - 1))
}

/// Imports one entry that passed [`screen`]: one description, or one per run of immediate
/// values with the same semantics.
fn translate(
    r: &Raw,
    features: Vec<String>,
    costs: &std::collections::BTreeMap<String, (f32, f32)>,
) -> Result<Vec<Entry>, Skip> {
    let unsupported = |d: String| skip(r, SkipReason::Unsupported, d);
    let text = r
        .operation
        .as_deref()
        .ok_or_else(|| unsupported("no pseudocode".into()))?;
    let body = pseudo::parse(text).map_err(|e| unsupported(format!("parse: {e}")))?;
    let (infos, operands) = operands_of(r);
    let cost = costs.get(&r.name).copied();
    let entry = |sem: Expr, result: Type, imm_range: Option<(i128, i128)>| {
        let mut params = Vec::new();
        let mut imms = Vec::new();
        let mut regs = operands.iter();
        for p in &r.params {
            if p.etype == "IMM" {
                params.push((p.name.clone(), Type::INDEX));
                imms.push(imm_range);
            } else if let Some(o) = regs.next() {
                params.push((o.name.clone(), o.ty));
                imms.push(None);
            }
        }
        Entry {
            mnemonic: r.instruction.clone().expect("screened"),
            intrinsic: r.name.clone(),
            params,
            imms,
            result,
            features: features.clone(),
            cost: cost.unwrap_or(DEFAULT_COST),
            cost_from_hand: cost.is_some(),
            semantics: sem,
        }
    };
    let Some((name, bits, lo, hi)) = immediate(r) else {
        let (sem, result, _) =
            semantics_at(r, &body, &infos, &operands, None).map_err(unsupported)?;
        return Ok(vec![entry(sem, result, None)]);
    };
    let at = |value: i128| {
        let imm = eval::ImmValue {
            name: &name,
            value,
            bits,
        };
        semantics_at(r, &body, &infos, &operands, Some(imm))
    };
    let (sem, result, concrete) = at(lo).map_err(unsupported)?;
    if !concrete {
        // The value only ever stands for itself: one description for the whole range.
        return Ok(vec![entry(sem, result, Some((lo, hi)))]);
    }
    // Runs of values with the same semantics (the text names the immediate).
    let mut runs: Vec<(i128, i128, Expr, Type)> = Vec::new();
    for v in lo..=hi {
        let (sem, result, _) = at(v).map_err(|e| unsupported(format!("with {name} = {v}: {e}")))?;
        match runs.last_mut() {
            Some(last) if last.2.to_string() == sem.to_string() && last.3 == result => last.1 = v,
            _ => {
                if runs.len() == MAX_IMM_FORMS {
                    return Err(skip(
                        r,
                        SkipReason::Immediate,
                        format!("more than {MAX_IMM_FORMS} forms over the values of {name}"),
                    ));
                }
                runs.push((v, v, sem, result));
            }
        }
    }
    Ok(runs
        .into_iter()
        .map(|(a, b, sem, result)| entry(sem, result, Some((a, b))))
        .collect())
}

/// The result element type: the signedness of a saturation or truncation at the lane's
/// width, else what Intel declares, else unsigned.
fn result_elem(lane: &LaneExpr, bits: u32, declared: Option<Elem>) -> Elem {
    match lane {
        LaneExpr::Saturate(t, _) | LaneExpr::Wrap(t, _) if t.bits() == bits => *t,
        _ => match declared {
            Some(d) if d.bits() == bits => d,
            _ => Elem::from_bits(bits, false).expect("8 to 64 bits"),
        },
    }
}

/// Imports Intel's data (`Family::importer` of x86).
pub fn import(ctx: &ImportContext) -> Result<Report, String> {
    let path = ctx.vendor_dir.join(INTEL_XML);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let raws = read_xml(&text)?;
    let hand = super::hand().map_err(|d| d.to_string())?;
    let costs = crate::isa::import::hand_costs(hand);
    let mut report = Report {
        vendor_entries: raws.len(),
        ..Default::default()
    };
    // Entries translate independently (an immediate's values make some slow): on every
    // core, results taken in the vendor's order.
    use rayon::prelude::*;
    let only = std::env::var("HARROW_IMPORT_ONLY").ok();
    let results: Vec<Result<Vec<Entry>, Skip>> = raws
        .par_iter()
        .filter(|r| only.as_deref().is_none_or(|o| o == r.name))
        .map(|r| screen(r).and_then(|f| translate(r, f, &costs)))
        .collect();
    for res in results {
        match res {
            Ok(e) => report.entries.extend(e),
            Err(s) => report.skipped.push(s),
        }
    }
    crate::isa::import::price_by_instruction(&mut report.entries, price_key);
    Ok(report)
}

/// What an imported entry shares its price with. One mnemonic costs more on wider
/// registers (zmm against xmm) and with a count in a register rather than an immediate
/// (`vpsllw ymm, xmm` against `vpsllw ymm, imm8`), so a price is shared by mnemonic, result
/// type and the set of operand types; a mask operand and the merge source (`src`) of a
/// masked form do not change the price.
fn price_key(e: &Entry) -> (String, Type, std::collections::BTreeSet<String>) {
    let masked = e.params.iter().any(|p| p.1.elem == Elem::Bool);
    let operands = e
        .params
        .iter()
        .zip(&e.imms)
        .filter(|(p, _)| p.1.elem != Elem::Bool)
        .filter(|(p, _)| !(masked && p.0 == "src"))
        .map(|(p, imm)| match imm {
            Some(_) => "imm".to_string(),
            None => p.1.to_string(),
        })
        .collect();
    (e.mnemonic.clone(), e.result, operands)
}

/// Runs the importer's whole translation on one operation text, as if Intel described an
/// AVX2 intrinsic `(a, b, src: __m256i of SI16, k: __mmask16, imm8) -> __m256i` with it:
/// the number of descriptions made, or why none. For robustness tests and fuzzing: any
/// text must give one or the other, never a panic.
pub fn exercise(operation: &str) -> Result<usize, String> {
    let reg = |name: &str| RawParam {
        c_type: "__m256i".into(),
        name: name.into(),
        etype: "SI16".into(),
        imm_width: None,
        imm_type: None,
    };
    let raw = Raw {
        name: "_mm256_exercise_epi16".into(),
        types: vec!["Integer".into()],
        cpuid: vec!["AVX2".into()],
        categories: vec!["Arithmetic".into()],
        ret: ("__m256i".into(), "UI16".into()),
        ret_name: "dst".into(),
        params: vec![
            reg("src"),
            RawParam {
                c_type: "__mmask16".into(),
                name: "k".into(),
                etype: "MASK".into(),
                imm_width: None,
                imm_type: None,
            },
            reg("a"),
            reg("b"),
            RawParam {
                c_type: "int".into(),
                name: "imm8".into(),
                etype: "IMM".into(),
                imm_width: Some(8),
                imm_type: None,
            },
        ],
        operation: Some(operation.to_string()),
        instruction: Some("vexercise".into()),
    };
    let features = screen(&raw).map_err(|s| s.detail)?;
    translate(&raw, features, &std::collections::BTreeMap::new())
        .map(|e| e.len())
        .map_err(|s| s.detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(intrinsic: &str, params: &[(&str, &str, bool)], cost: Option<(f32, f32)>) -> Entry {
        let t = |s: &str| Type::parse(s, false).unwrap();
        Entry {
            mnemonic: "vpsllw".into(),
            intrinsic: intrinsic.into(),
            params: params.iter().map(|p| (p.0.to_string(), t(p.1))).collect(),
            imms: params.iter().map(|p| p.2.then_some((0, 15))).collect(),
            result: t("u16x16"),
            features: vec!["avx2".into()],
            cost: cost.unwrap_or(DEFAULT_COST),
            cost_from_hand: cost.is_some(),
            semantics: Expr::var("a", t("u16x16")),
        }
    }

    #[test]
    fn a_masked_form_costs_its_instruction_and_a_count_in_a_register_does_not() {
        let mut entries = vec![
            entry(
                "imm",
                &[("a", "u16x16", false), ("imm8", "i32", true)],
                Some((1.0, 0.5)),
            ),
            entry(
                "mask_imm",
                &[
                    ("src", "u16x16", false),
                    ("k", "boolx16", false),
                    ("a", "u16x16", false),
                    ("imm8", "i32", true),
                ],
                None,
            ),
            entry(
                "by_register",
                &[("a", "u16x16", false), ("count", "u16x8", false)],
                None,
            ),
        ];
        crate::isa::import::price_by_instruction(&mut entries, price_key);
        assert_eq!(entries[1].cost, (1.0, 0.5));
        assert!(entries[1].cost_from_hand);
        assert_eq!(entries[2].cost, DEFAULT_COST);
        assert!(!entries[2].cost_from_hand);
    }
}
