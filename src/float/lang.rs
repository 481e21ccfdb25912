//! The e-graph language of float vectorization (Diospyros' vector DSL, in egg): scalar IEEE
//! operations, `vec` (a register's lanes, each a scalar class), lane-wise vector operations,
//! `blend` (lanes from two registers by a mask) and leaves (inputs, constants, don't-care
//! lanes, masks).

use std::fmt;
use std::str::FromStr;

use egg::{Id, define_language};

/// A leaf of the vector language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Leaf {
    /// Element `index` of parameter `param` as it is on entry.
    Input(u16, u32),
    /// A float constant, by its bits.
    Const(u32),
    /// A lane whose value nobody reads.
    Any,
    /// A blend mask: bit `i` set takes lane `i` from the first register.
    Mask(u64),
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Leaf::Input(p, i) => write!(f, "in{p}.{i}"),
            Leaf::Const(b) => write!(f, "k{b:08x}"),
            Leaf::Any => write!(f, "_"),
            Leaf::Mask(m) => write!(f, "m{m:x}"),
        }
    }
}

impl FromStr for Leaf {
    type Err = String;
    fn from_str(s: &str) -> Result<Leaf, String> {
        let bad = || format!("not a leaf: {s}");
        if s == "_" {
            return Ok(Leaf::Any);
        }
        if let Some(r) = s.strip_prefix("in") {
            let (p, i) = r.split_once('.').ok_or_else(bad)?;
            return Ok(Leaf::Input(
                p.parse().map_err(|_| bad())?,
                i.parse().map_err(|_| bad())?,
            ));
        }
        if let Some(r) = s.strip_prefix('k') {
            return u32::from_str_radix(r, 16)
                .map(Leaf::Const)
                .map_err(|_| bad());
        }
        if let Some(r) = s.strip_prefix('m') {
            return u64::from_str_radix(r, 16)
                .map(Leaf::Mask)
                .map_err(|_| bad());
        }
        Err(bad())
    }
}

define_language! {
    /// Scalar and vector float operations (see the module documentation).
    pub enum VecLang {
        "+" = Add([Id; 2]),
        "-" = Sub([Id; 2]),
        "*" = Mul([Id; 2]),
        "/" = Div([Id; 2]),
        "neg" = Neg([Id; 1]),
        "sqrt" = Sqrt([Id; 1]),
        "fma" = Fma([Id; 3]),
        "vec" = Vec(Box<[Id]>),
        "v+" = VAdd([Id; 2]),
        "v-" = VSub([Id; 2]),
        "v*" = VMul([Id; 2]),
        "v/" = VDiv([Id; 2]),
        "vneg" = VNeg([Id; 1]),
        "vsqrt" = VSqrt([Id; 1]),
        "vfma" = VFma([Id; 3]),
        "blend" = Blend([Id; 3]),
        Leaf(Leaf),
    }
}

/// The kind of a scalar e-node: which lane-wise operation lifts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Sqrt,
    Fma,
}

impl Kind {
    /// Every kind, in a fixed order.
    pub const ALL: [Kind; 7] = [
        Kind::Add,
        Kind::Sub,
        Kind::Mul,
        Kind::Div,
        Kind::Neg,
        Kind::Sqrt,
        Kind::Fma,
    ];

    /// The kind of a scalar operation node and its operands.
    pub fn of(n: &VecLang) -> Option<(Kind, &[Id])> {
        Some(match n {
            VecLang::Add(c) => (Kind::Add, &c[..]),
            VecLang::Sub(c) => (Kind::Sub, &c[..]),
            VecLang::Mul(c) => (Kind::Mul, &c[..]),
            VecLang::Div(c) => (Kind::Div, &c[..]),
            VecLang::Neg(c) => (Kind::Neg, &c[..]),
            VecLang::Sqrt(c) => (Kind::Sqrt, &c[..]),
            VecLang::Fma(c) => (Kind::Fma, &c[..]),
            _ => return None,
        })
    }

    /// The operand constants that make the operation give its first operand back exactly,
    /// for every IEEE value (also zeros of either sign and NaN): `x + -0 = x`,
    /// `x - +0 = x`, `x * 1 = x`, `x / 1 = x`, `fma(x, 1, -0) = x`. `None` when there is
    /// none: such lanes are blended instead of padded.
    pub fn identity_operands(self) -> Option<&'static [f32]> {
        match self {
            Kind::Add => Some(&[-0.0]),
            Kind::Sub => Some(&[0.0]),
            Kind::Mul | Kind::Div => Some(&[1.0]),
            Kind::Fma => Some(&[1.0, -0.0]),
            Kind::Neg | Kind::Sqrt => None,
        }
    }

    /// The lane-wise vector node of this kind over `children`.
    pub fn vector(self, ch: &[Id]) -> VecLang {
        match self {
            Kind::Add => VecLang::VAdd([ch[0], ch[1]]),
            Kind::Sub => VecLang::VSub([ch[0], ch[1]]),
            Kind::Mul => VecLang::VMul([ch[0], ch[1]]),
            Kind::Div => VecLang::VDiv([ch[0], ch[1]]),
            Kind::Neg => VecLang::VNeg([ch[0]]),
            Kind::Sqrt => VecLang::VSqrt([ch[0]]),
            Kind::Fma => VecLang::VFma([ch[0], ch[1], ch[2]]),
        }
    }

    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            Kind::Neg | Kind::Sqrt => 1,
            Kind::Fma => 3,
            _ => 2,
        }
    }
}
