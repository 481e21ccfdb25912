//! Terms taken from a corpus harrow already reads (`harrow synth lower --terms-from`):
//! each simd_op_check entry of the target's section, lifted as compilation lifts it, its
//! loads made vector variables (`a`, `b`, ... in order of first use), and deduplicated up
//! to renaming of variables and constants, so that synthesis searches what selection is
//! actually asked for.

use std::collections::HashSet;

use std::sync::Arc;

use crate::diag::Source;
use crate::ir::Expr;
use crate::lower::Backend;

use super::Term;

/// The terms of the simd_op_check file `src` for the backend's target: entries of its
/// section, integer only, whose variables and result each fit one register.
pub fn opcheck_terms(src: &Arc<Source>, backend: &Backend) -> Result<Vec<Term>, String> {
    let spec = backend.target.spec();
    let suite = spec
        .op_check
        .as_ref()
        .ok_or_else(|| format!("no simd_op_check section for target `{}`", spec.name))?;
    let entries = crate::syntax::opcheck::read(src).map_err(|d| d.to_string())?;
    let register_bits = u64::from(backend.target.register_bits());
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for e in entries {
        if !(suite.section)(&e.target) || crate::syntax::opcheck::classify(&e).is_some() {
            continue;
        }
        // An entry that does not parse is the conformance run's to report.
        let Ok(x) = crate::syntax::opcheck::parse_entry(&src.name, &e) else {
            continue;
        };
        let Some(expr) = super::terms::over_variables(&crate::lift::lift(&x)) else {
            continue;
        };
        let name = super::terms::rule_name(&format!("opcheck_{}_{}", e.instr, e.line));
        let term = Term::new(name, &expr);
        let fits = term.expr.ty().total_bits() <= register_bits
            && crate::ir::visit::free_vars(&term.expr)
                .values()
                .all(|t| t.total_bits() <= register_bits && !t.is_scalar());
        if !fits || !seen.insert(super::terms::shape(&term.expr)) {
            continue;
        }
        out.push(term);
    }
    Ok(out)
}

/// Most operations in a term taken from a Rake spec: synthesis searches sequences of a few
/// instructions, so larger sub-expressions would only meet the budget.
const MAX_SPEC_OPS: usize = 3;

/// The terms of Rake specs (`name`, expression) for the backend's target: every
/// sub-expression of one to [`MAX_SPEC_OPS`] operations of each lifted spec, its loads and
/// broadcast scalars made vector variables, rebuilt at the lane count at which its widest
/// vector fills one register (Rake's specs are 128 to 512 lanes wide), and deduplicated up
/// to renaming of variables and constants. Names are `rake_<spec>_<k>`, `k` counting the
/// spec's kept terms.
pub fn spec_terms(specs: &[(String, Expr)], backend: &Backend) -> Vec<Term> {
    let register_bits = backend.target.register_bits();
    super::terms::sub_expression_terms(specs, "rake_", &|sub| {
        let ty = sub.ty();
        if ty.is_scalar() || ty.elem == crate::types::Elem::Bool {
            return None;
        }
        let vars = super::terms::over_variables(sub)?;
        let ops = super::terms::operations(&vars).len();
        if !(1..=MAX_SPEC_OPS).contains(&ops) {
            return None;
        }
        super::abstraction::at_register(&vars, register_bits)
    })
}

/// The terms of kernels' one-lane bodies (`name`, expression) for the backend's target:
/// every sub-expression of one to [`MAX_SPEC_OPS`] operations of each lifted body, its
/// accesses and parameters made vector variables (`a`, `b`, ... in order of first use), at
/// the lane count at which its widest type fills one register, and deduplicated up to
/// renaming of variables and constants: what selection is asked for when it compiles the
/// kernels. Names are `<kernel>_<k>`.
pub fn kernel_terms(bodies: &[(String, Expr)], backend: &Backend) -> Vec<Term> {
    let register_bits = backend.target.register_bits();
    super::terms::sub_expression_terms(bodies, "", &|sub| {
        let nodes = crate::ir::visit::post_order(sub);
        let ops = super::terms::operations(sub).len();
        if !(1..=MAX_SPEC_OPS).contains(&ops) || nodes.iter().any(|n| !n.ty().elem.is_int()) {
            return None;
        }
        let widest = nodes.iter().map(|n| n.ty().elem.bits()).max().unwrap_or(0);
        if widest == 0 || register_bits / widest < 2 {
            return None;
        }
        super::terms::at_lanes(&super::terms::renamed(sub)?, register_bits / widest)
    })
}

#[cfg(test)]
mod tests {
    use super::super::terms::shape;
    use super::*;

    #[test]
    fn rake_specs_give_their_small_sub_expressions_one_register_wide() {
        crate::verify::solver_available("z3").unwrap_or_else(|e| panic!("{e}"));
        let backend = crate::targets::backend_from("hvx", crate::targets::RulesFrom::Hand)
            .expect("hvx builds");
        // 512 lanes of u16: four HVX registers, rebuilt at 64 lanes.
        let spec = "(define-symbolic-buffer p uint16_t)
(define-symbolic-buffer q uint16_t)
(define-symbolic-var k uint16_t)
(define halide-expr
  (vec-absd
    (vec-add (load p (ramp 0 1 512) (aligned 0 0)) (x512 k))
    (vec-add (load q (ramp 0 1 512) (aligned 0 0)) (x512 k))))";
        let src = Source::new("spec.sexp", spec.to_string());
        let e = crate::syntax::rake::import(&src).expect("imports").expr;
        let terms = spec_terms(&[("s".into(), e)], &backend);
        let texts: Vec<String> = terms.iter().map(|t| t.expr.to_string()).collect();
        // `p + k` and `q + k` are one shape; the whole absd has three operations.
        assert_eq!(
            texts,
            ["(a + b)", "(uint16x64)absd((a + b), (c + b))"],
            "{texts:?}"
        );
        assert_eq!(terms[0].name, "rake_s_0");
        let vars = crate::ir::visit::free_vars(&terms[1].expr);
        assert!(vars.values().all(|t| t.to_string() == "u16x64"), "{vars:?}");
    }

    #[test]
    fn shapes_forget_numbers_but_not_types() {
        let decls = crate::syntax::elab::Decls::new()
            .var(
                "a",
                crate::types::Type::parse("u8x16", false).expect("a type"),
            )
            .var(
                "b",
                crate::types::Type::parse("u16x16", false).expect("a type"),
            );
        let p = |t: &str| crate::syntax::halide::parse_str(t, &decls).expect("parses");
        assert_eq!(shape(&p("a + u8(3)")), shape(&p("a + u8(200)")));
        assert_ne!(shape(&p("a >> u8(3)")), shape(&p("a + u8(3)")));
        assert_ne!(shape(&p("u16(a) + u16(3)")), shape(&p("b + u16(3)")));
        assert!(
            !shape(&p("b + u16(3)")).contains("x#"),
            "{}",
            shape(&p("b + u16(3)"))
        );
    }
}
