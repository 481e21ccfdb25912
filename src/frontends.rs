//! Every text front end of harrow behind one entry point, so that the fuzz targets
//! (`fuzz/`) and the corpus-mutation test (`tests/frontend_mutation.rs`) drive exactly
//! what the command line drives.
//!
//! A front end takes any text and either accepts it or returns a diagnostic; it must never
//! panic, overflow the stack or allocate without bound. Where the text is accepted, the
//! next phases the command line would run on it run too (lifting and lowering for
//! expressions, code generation for kernels), because "inputs never crash harrow" is about
//! the whole command, not the parser alone.

use std::sync::{Arc, LazyLock};

use crate::diag::{Diag, Source};
use crate::lower::Backend;
use crate::rules::{RuleKind, RuleSet};
use crate::syntax::elab::Decls;
use crate::syntax::{file, halide, opcheck, rake};
use crate::types::Type;

/// One front end: a kind of input file harrow reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FrontEnd {
    /// One expression in Halide's syntax (the command line's `EXPR` argument).
    HalideExpr,
    /// A file of declarations and expressions (`harrow check FILE`).
    ExprFile,
    /// A Rake spec (`.sexp`).
    RakeSpec,
    /// Halide's simd_op_check expectation file.
    OpCheck,
    /// A rule file (`.rules`).
    Rules,
    /// An instruction description file (`.isa`).
    Isa,
    /// A kernel (`.hk`).
    Kernel,
    /// A fixed-size float kernel in C (`harrow float`).
    FloatC,
}

impl FrontEnd {
    /// Every front end, in a fixed order.
    pub const ALL: [FrontEnd; 8] = [
        FrontEnd::HalideExpr,
        FrontEnd::ExprFile,
        FrontEnd::RakeSpec,
        FrontEnd::OpCheck,
        FrontEnd::Rules,
        FrontEnd::Isa,
        FrontEnd::Kernel,
        FrontEnd::FloatC,
    ];

    /// A short name (the fuzz target's name).
    pub fn name(self) -> &'static str {
        match self {
            FrontEnd::HalideExpr => "halide_expr",
            FrontEnd::ExprFile => "expr_file",
            FrontEnd::RakeSpec => "rake_spec",
            FrontEnd::OpCheck => "opcheck",
            FrontEnd::Rules => "rules",
            FrontEnd::Isa => "isa",
            FrontEnd::Kernel => "kernel",
            FrontEnd::FloatC => "float_c",
        }
    }

    /// The front end of a name given by [`FrontEnd::name`].
    pub fn from_name(name: &str) -> Option<FrontEnd> {
        FrontEnd::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What a front end made of an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted (and, where it applies, compiled).
    Accepted,
    /// Refused with this rendered diagnostic.
    Refused(String),
}

/// The backend accepted inputs are compiled for (the default target's): built once per
/// process, since building it costs far more than one input.
static BACKEND: LazyLock<Option<Arc<Backend>>> =
    LazyLock::new(|| crate::targets::backend(crate::targets::DEFAULT_TARGET).ok());

/// Every instruction of the default target's family (all features), which lowering rules
/// may call: hand-written rule files are written once for every variant of a family.
static FAMILY_INSTRS: LazyLock<Option<Arc<crate::ir::instr::InstrTable>>> = LazyLock::new(|| {
    let reg = crate::targets::lookup(crate::targets::DEFAULT_TARGET).ok()?;
    Some(Arc::new((reg.family.isa)().ok()?.table()))
});

/// Declarations for free variables of a bare expression, so that fuzzed expressions can
/// reach the type checker and the lowering rather than stop at "undeclared".
fn expr_decls() -> Decls {
    let mut d = Decls::new();
    for (name, ty) in [
        ("a", "u8x16"),
        ("b", "u8x16"),
        ("c", "u8x16"),
        ("d", "u8x16"),
        ("e", "u8x16"),
        ("f", "u8x16"),
        ("g", "u8x16"),
        ("h", "u8x16"),
        ("k", "u8x16"),
        ("l", "u8x16"),
        ("ua", "u8x16"),
        ("sa", "i8x16"),
        ("sb", "i16x16"),
        ("p", "i8x16"),
        ("q", "i8x16"),
        ("s", "i16x16"),
        ("t", "i16x16"),
        ("w", "u16x16"),
        ("v", "u16x16"),
        ("i", "i32x16"),
        ("j", "i32x16"),
        ("u", "u32x16"),
    ] {
        if let Some(t) = Type::parse(ty, false) {
            d = d.var(name, t);
        }
    }
    d
}

/// Runs one front end on `text`, and the phases after it where the text is accepted.
pub fn exercise(fe: FrontEnd, text: &str) -> Outcome {
    let src = Source::new(format!("<{}>", fe.name()), text);
    match run(fe, &src) {
        Ok(()) => Outcome::Accepted,
        // Rendering is part of the front end: a diagnostic must print, whatever its span.
        Err(d) => Outcome::Refused(d.to_string()),
    }
}

/// Runs one front end on raw bytes (what a fuzzer gives): invalid UTF-8 is refused as the
/// command line refuses it.
pub fn exercise_bytes(fe: FrontEnd, bytes: &[u8]) -> Outcome {
    match std::str::from_utf8(bytes) {
        Ok(text) => exercise(fe, text),
        Err(e) => Outcome::Refused(format!("not UTF-8: {e}")),
    }
}

fn run(fe: FrontEnd, src: &Arc<Source>) -> Result<(), Diag> {
    match fe {
        FrontEnd::HalideExpr => {
            let e = halide::parse_expr(src, &expr_decls(), Default::default())?;
            compile_expr(&e);
        }
        FrontEnd::ExprFile => {
            let (items, _) = file::parse(src, Decls::new())?;
            for it in items.iter().take(4) {
                compile_expr(&it.expr);
            }
        }
        FrontEnd::RakeSpec => {
            let spec = rake::import(src)?;
            compile_expr(&spec.expr);
        }
        FrontEnd::OpCheck => {
            for e in opcheck::read(src)? {
                if opcheck::classify(&e).is_none() {
                    // Entries are independent: a bad one is reported, the rest still read.
                    let _ = opcheck::parse_entry(&src.name, &e);
                }
            }
        }
        FrontEnd::Rules => {
            // A rule file is read as lifting rules (`harrow lift --rules`) or as lowering
            // rules that may call instructions (`harrow compile --rules`): both run, and
            // the file is accepted if either accepts it.
            let as_lift = RuleSet::load(src, RuleKind::Lift);
            let as_lower = RuleSet::load_with(src, RuleKind::Lower, FAMILY_INSTRS.as_ref());
            if as_lift.is_err() {
                as_lower?;
            }
        }
        FrontEnd::Isa => {
            // Read as the default target's family (the registry's first).
            let family = crate::targets::REGISTRY[0].family.name;
            crate::isa::Isa::load(family, std::slice::from_ref(src))?;
        }
        FrontEnd::Kernel => {
            let k = crate::kernel::parse(src)?;
            if let Some(be) = BACKEND.as_ref() {
                let _ = crate::kernel::c_file::c_file(&k, be, None, "fuzzed");
            }
        }
        FrontEnd::FloatC => {
            // Vectorized for the default target as `harrow float compile` would, with
            // short search limits: the point is that no input crashes any phase.
            let target = (crate::targets::REGISTRY[0].make)();
            let opts = crate::float::Options {
                limits: crate::float::vectorize::Limits {
                    nodes: 20_000,
                    rounds: 16,
                    time: std::time::Duration::from_millis(50),
                    switches_per_class: 1,
                },
                ..Default::default()
            };
            match crate::float::compile(src, &*target, &opts) {
                Err(crate::float::FloatError::Diag(d)) => return Err(*d),
                // A vectorization that fails its own check is a bug: the fuzzers see it.
                Err(crate::float::FloatError::Internal(m)) => panic!("{m}"),
                Err(e) => return Err(Diag::new(src, 0..0, e.to_string())),
                Ok(_) => {}
            }
        }
    }
    Ok(())
}

/// Lifts and lowers an accepted expression as `harrow compile` would.
fn compile_expr(e: &crate::ir::Expr) {
    if e.ty().elem.is_internal() {
        return;
    }
    if let Some(be) = BACKEND.as_ref() {
        let l = crate::lower::lower(e, be);
        let _ = crate::lower::c_file(&l, be.target.as_ref(), "fuzzed");
    }
}
