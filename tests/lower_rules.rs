//! Every lowering rule of every target: its left-hand side is compiled with the target's
//! rules and run against the interpreter (batched; natively for x86, under qemu-aarch64
//! for Arm).

use std::collections::HashMap;

use harrow::bounds::Intervals;
use harrow::ir::{Expr, Op, mk, mk_typed};
use harrow::lower::{self, Lowered};
use harrow::rewrite::predicate_holds;
use harrow::rules::{Binds, Inst, Pat, PatKind, Rule};
use harrow::types::{Elem, Type};

fn clang_available() -> bool {
    harrow::isa::toolchain::require("clang-19", "clang-19")
        .map_err(|m| panic!("{m}"))
        .is_ok()
}

/// Element type and lane count (if fixed) of each rule variable.
fn var_shapes(p: &Pat, out: &mut HashMap<usize, (Elem, Option<u32>)>) {
    match &p.kind {
        PatKind::Var(i) => {
            out.insert(*i, (p.elem, p.lanes));
        }
        PatKind::Op(_, args) => args.iter().for_each(|a| var_shapes(a, out)),
        _ => {}
    }
}

fn wilds(p: &Pat, out: &mut Vec<(u32, Elem)>) {
    match &p.kind {
        PatKind::Wild(id) if !out.iter().any(|(i, _)| i == id) => out.push((*id, p.elem)),
        PatKind::Op(_, args) => args.iter().for_each(|a| wilds(a, out)),
        _ => {}
    }
}

fn load(name: &str, t: Type) -> Expr {
    if t.is_scalar() {
        return mk_typed(
            Op::Load(name.into(), None),
            t,
            vec![Expr::int(Elem::I32, 0).unwrap()],
        );
    }
    let idx = mk_typed(
        Op::Ramp,
        Type::vec(Elem::I32, t.lanes),
        vec![
            Expr::int(Elem::I32, 0).unwrap(),
            Expr::int(Elem::I32, 1).unwrap(),
        ],
    );
    mk_typed(Op::Load(name.into(), None), t, vec![idx])
}

/// The left-hand side of one instantiation as a program over buffers, with wildcard values
/// and operand ranges that satisfy the predicate, or `None` when none were found.
fn lhs_program(rule: &Rule, inst: &Inst) -> Option<Expr> {
    let mut shapes = HashMap::new();
    var_shapes(&inst.lhs, &mut shapes);
    let widest = shapes
        .values()
        .map(|(e, _)| e.bits())
        .max()
        .unwrap_or(16)
        .max(8);
    let lanes = inst.lhs.lanes.unwrap_or((256 / widest).max(4));
    let mut ws = Vec::new();
    wilds(&inst.lhs, &mut ws);
    // Candidate constants: small values, powers of two and their neighbours, type limits.
    let mut cands: Vec<i128> = (0..=20).collect();
    for k in 0..16 {
        cands.extend([1 << k, (1 << k) + 1, (1 << k) - 1]);
    }
    cands.extend([-1, -2, 127, 255, 32767, 65535, 1 << 31, 32]);
    // Operands as loaded, halved, shifted down to within a signed byte or a signed nibble,
    // or masked to 0..7 (for bounds predicates: byte-sized amounts, HVX's 5-bit shift
    // amounts, non-negative small shifts).
    for shrink in [0u32, 1, 2, 3, 4] {
        let vars: Vec<Expr> = (0..rule.vars.len())
            .map(|i| {
                let (el, l) = shapes[&i];
                let v = load(&format!("v{i}"), Type::vec(el, l.unwrap_or(lanes)));
                match shrink {
                    0 => v,
                    1 => {
                        let two = Expr::splat(v.ty(), 2).unwrap();
                        mk(Op::Div, vec![v, two])
                    }
                    4 => {
                        let seven = Expr::splat(v.ty(), 7).unwrap();
                        mk(Op::And, vec![v, seven])
                    }
                    _ => {
                        let keep = if shrink == 2 { 7 } else { 4 };
                        let k = (el.bits() as i128 - keep).max(1);
                        let amount = Expr::splat(v.ty(), k).unwrap();
                        mk(Op::Shr, vec![v, amount])
                    }
                }
            })
            .collect();
        let mut choice = vec![0usize; ws.len()];
        'search: for _ in 0..cands.len() * cands.len() + 1 {
            let mut b = Binds::new(rule.vars.len());
            for (i, v) in vars.iter().enumerate() {
                b.vars[i] = Some(v.clone());
            }
            for (k, (id, el)) in ws.iter().enumerate() {
                let v = cands[choice[k]];
                let fits = v >= el.min_value() && el.max_value().is_none_or(|m| v <= m);
                if fits {
                    b.wilds.push((*id, v));
                }
            }
            if b.wilds.len() == ws.len()
                && predicate_holds(rule, inst, &b, &mut Intervals::new())
                && let Some(e) = inst.lhs.build(lanes, &b, &mut |_| None)
            {
                return Some(e);
            }
            // Next combination (odometer).
            for c in choice.iter_mut() {
                *c += 1;
                if *c < cands.len() {
                    continue 'search;
                }
                *c = 0;
            }
            break;
        }
    }
    None
}

fn check_rules(target: &str) {
    if !clang_available() {
        return;
    }
    let be = harrow::targets::backend(target).unwrap();
    let mut progs: Vec<(String, Lowered)> = Vec::new();
    let mut unexercised = Vec::new();
    for r in &be.rules.rules {
        for inst in &r.insts {
            match lhs_program(r, inst) {
                Some(e) => progs.push((
                    format!(
                        "{} ({}; {})",
                        r.decl.name,
                        r.decl.location(),
                        inst.describe()
                    ),
                    lower::lower_unlifted(&e, &be),
                )),
                None => unexercised.push(format!("{} ({})", r.decl.name, r.decl.location())),
            }
        }
    }
    assert!(
        unexercised.is_empty(),
        "no inputs satisfy these rules' predicates: {unexercised:?}"
    );
    let dir = std::env::temp_dir().join(format!(
        "harrow-lower-rules-{target}-{}",
        std::process::id()
    ));
    let refs: Vec<&Lowered> = progs.iter().map(|(_, l)| l).collect();
    let results = lower::harness::run_cases(&refs, be.target.as_ref(), 4, 7, &dir)
        .unwrap_or_else(|e| panic!("{e}\nkept: {}", dir.display()));
    let _ = std::fs::remove_dir_all(&dir);
    let bad: Vec<String> = progs
        .iter()
        .zip(&results)
        .filter_map(|((n, l), r)| {
            r.mismatch
                .as_ref()
                .map(|m| format!("{n}: {}\n  {m}", l.source))
        })
        .collect();
    println!(
        "{target}: {} rule instantiations compiled and run",
        progs.len()
    );
    assert!(bad.is_empty(), "{} wrong:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn every_avx2_lowering_rule_computes_what_its_left_hand_side_means() {
    check_rules("x86-avx2");
}

#[test]
fn every_avx512_lowering_rule_computes_what_its_left_hand_side_means() {
    if !harrow::targets::x86::host_has_avx512() {
        println!("skipped: this machine cannot run AVX-512 code");
        return;
    }
    check_rules("x86-avx512");
}

#[test]
fn every_arm_lowering_rule_computes_what_its_left_hand_side_means() {
    if let Err(e) = harrow::isa::toolchain::require("qemu-aarch64", "qemu-user") {
        panic!("{e}");
    }
    check_rules("arm-neon");
}

#[test]
fn every_hvx_lowering_rule_computes_what_its_left_hand_side_means() {
    if let Err(e) = harrow::isa::toolchain::require("qemu-hexagon", "qemu-user") {
        panic!("{e}");
    }
    check_rules("hvx");
}
