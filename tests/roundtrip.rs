//! Print-then-parse is the identity on random well-typed expressions, in both the Halide
//! syntax and the S-expression form.

use harrow::diag::Source;
use harrow::syntax::exprgen::{Gen, decls_for};
use harrow::syntax::{elab::ElabOptions, halide, sexpr};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn halide_print_then_parse_is_identity(seed in any::<u64>(), depth in 1u32..9) {
        let mut g = Gen::new(seed);
        let t = g.ty();
        let e = g.expr(t, depth);
        let decls = decls_for(&e);
        let text = halide::print(&e);
        let parsed = halide::parse_expr(&Source::new("<printed>", text.as_str()), &decls, ElabOptions::default());
        match parsed {
            Ok(p) => prop_assert!(p == e, "printed {}\nreparsed {}\nas sexpr {:?}\nvs       {:?}", text, halide::print(&p), e, p),
            Err(d) => prop_assert!(false, "printed {} but it does not parse:\n{}", text, d),
        }
    }

    #[test]
    fn sexpr_print_then_parse_is_identity(seed in any::<u64>(), depth in 1u32..9) {
        let mut g = Gen::new(seed);
        let t = g.ty();
        let e = g.expr(t, depth);
        let decls = decls_for(&e);
        let text = sexpr::print(&e);
        match sexpr::parse(&Source::new("<printed>", text.as_str()), &decls) {
            Ok(p) => prop_assert!(p == e, "printed {}\nreparsed {}", text, sexpr::print(&p)),
            Err(d) => prop_assert!(false, "printed {} but it does not parse:\n{}", text, d),
        }
    }
}
