//! Element and vector types of harrow IR.
//!
//! A [`Type`] is an element type ([`Elem`]) and a lane count; one lane is a scalar, as in
//! Halide. Lane counts are not limited by any register width: `u16x256` is an ordinary type,
//! and splitting into registers is the lowering's business.
//!
//! The 128-bit element types exist only so that the definitions of FPIR operations on 64-bit
//! operands (which widen) can be written and checked; front ends reject them in user input.

use std::fmt;

/// The element type of a lane.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Elem {
    /// One-bit truth value, the result of comparisons (Halide's `uint1`).
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    /// Internal only: the widened type of 64-bit operands.
    U128,
    /// Internal only: the widened type of 64-bit operands.
    I128,
    /// IEEE-754 binary32 (`float`), stored as its bit pattern. Only the reference
    /// interpreter, the printers and the float vectorizer know it: the integer pipeline
    /// (lifting, selection, verification) never sees a float, because its front ends
    /// refuse the type (see `ElabOptions::allow_float`).
    F32,
}

/// All integer element types a user may write, narrowest first.
pub const USER_INT_ELEMS: [Elem; 8] = [
    Elem::U8,
    Elem::I8,
    Elem::U16,
    Elem::I16,
    Elem::U32,
    Elem::I32,
    Elem::U64,
    Elem::I64,
];

impl Elem {
    /// Width of one lane in bits (1 for `Bool`).
    pub fn bits(self) -> u32 {
        match self {
            Elem::Bool => 1,
            Elem::U8 | Elem::I8 => 8,
            Elem::U16 | Elem::I16 => 16,
            Elem::U32 | Elem::I32 => 32,
            Elem::U64 | Elem::I64 => 64,
            Elem::U128 | Elem::I128 => 128,
            Elem::F32 => 32,
        }
    }

    /// True for the two's-complement signed integer types.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64 | Elem::I128
        )
    }

    /// True for every integer type (everything except `Bool` and `F32`).
    pub fn is_int(self) -> bool {
        !matches!(self, Elem::Bool | Elem::F32)
    }

    /// True for the floating-point type.
    pub fn is_float(self) -> bool {
        self == Elem::F32
    }

    /// True for the internal 128-bit types that no front end accepts.
    pub fn is_internal(self) -> bool {
        matches!(self, Elem::U128 | Elem::I128)
    }

    /// The integer type with the given width and signedness, if there is one.
    pub fn from_bits(bits: u32, signed: bool) -> Option<Elem> {
        Some(match (bits, signed) {
            (8, false) => Elem::U8,
            (8, true) => Elem::I8,
            (16, false) => Elem::U16,
            (16, true) => Elem::I16,
            (32, false) => Elem::U32,
            (32, true) => Elem::I32,
            (64, false) => Elem::U64,
            (64, true) => Elem::I64,
            (128, false) => Elem::U128,
            (128, true) => Elem::I128,
            _ => return None,
        })
    }

    /// Twice the width, same signedness (`widen` in FPIR's definitions).
    pub fn widen(self) -> Option<Elem> {
        if !self.is_int() {
            return None;
        }
        Elem::from_bits(self.bits() * 2, self.is_signed())
    }

    /// Half the width, same signedness.
    pub fn narrow(self) -> Option<Elem> {
        if !self.is_int() {
            return None;
        }
        Elem::from_bits(self.bits() / 2, self.is_signed())
    }

    /// The same width with the given signedness.
    pub fn with_signed(self, signed: bool) -> Elem {
        if !self.is_int() {
            return self;
        }
        Elem::from_bits(self.bits(), signed).expect("integer widths have both signednesses")
    }

    /// The unsigned type of the same width.
    pub fn to_unsigned(self) -> Elem {
        self.with_signed(false)
    }

    /// Smallest value as an exact integer.
    pub fn min_value(self) -> i128 {
        match self {
            Elem::Bool => 0,
            Elem::I128 => i128::MIN,
            e if e.is_signed() => -(1i128 << (e.bits() - 1)),
            _ => 0,
        }
    }

    /// Largest value as an exact integer; `None` only for `U128`, whose maximum exceeds `i128`.
    pub fn max_value(self) -> Option<i128> {
        match self {
            Elem::Bool => Some(1),
            Elem::U128 => None,
            Elem::I128 => Some(i128::MAX),
            e if e.is_signed() => Some((1i128 << (e.bits() - 1)) - 1),
            e => Some((1i128 << e.bits()) - 1),
        }
    }

    /// Mask with the low `bits()` bits set.
    pub fn mask(self) -> u128 {
        if self.bits() == 128 {
            u128::MAX
        } else {
            (1u128 << self.bits()) - 1
        }
    }

    /// The short name harrow prints (`u8`, `i16`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            Elem::Bool => "bool",
            Elem::U8 => "u8",
            Elem::I8 => "i8",
            Elem::U16 => "u16",
            Elem::I16 => "i16",
            Elem::U32 => "u32",
            Elem::I32 => "i32",
            Elem::U64 => "u64",
            Elem::I64 => "i64",
            Elem::U128 => "u128",
            Elem::I128 => "i128",
            Elem::F32 => "f32",
        }
    }

    /// The name Halide prints (`uint8`, `int16`, `uint1`).
    pub fn halide_name(self) -> &'static str {
        match self {
            Elem::Bool => "uint1",
            Elem::U8 => "uint8",
            Elem::I8 => "int8",
            Elem::U16 => "uint16",
            Elem::I16 => "int16",
            Elem::U32 => "uint32",
            Elem::I32 => "int32",
            Elem::U64 => "uint64",
            Elem::I64 => "int64",
            Elem::U128 => "uint128",
            Elem::I128 => "int128",
            Elem::F32 => "float32",
        }
    }

    /// The C type of one lane (`uint8_t`); `Bool` lanes are stored as `uint8_t`.
    pub fn c_name(self) -> &'static str {
        match self {
            Elem::Bool => "uint8_t",
            Elem::U8 => "uint8_t",
            Elem::I8 => "int8_t",
            Elem::U16 => "uint16_t",
            Elem::I16 => "int16_t",
            Elem::U32 => "uint32_t",
            Elem::I32 => "int32_t",
            Elem::U64 => "uint64_t",
            Elem::I64 => "int64_t",
            Elem::U128 => "unsigned __int128",
            Elem::I128 => "__int128",
            Elem::F32 => "float",
        }
    }

    /// Parses an element name in any accepted spelling: `u8`, `uint8`, `uint8_t`, `bool`, `uint1`.
    /// The internal 128-bit types are accepted only when `internal` is set.
    pub fn parse(s: &str, internal: bool) -> Option<Elem> {
        let s = s.strip_suffix("_t").unwrap_or(s);
        let e = match s {
            "bool" | "uint1" | "u1" => Elem::Bool,
            "u8" | "uint8" => Elem::U8,
            "i8" | "int8" => Elem::I8,
            "u16" | "uint16" => Elem::U16,
            "i16" | "int16" => Elem::I16,
            "u32" | "uint32" => Elem::U32,
            "i32" | "int32" => Elem::I32,
            "u64" | "uint64" => Elem::U64,
            "i64" | "int64" => Elem::I64,
            "u128" | "uint128" if internal => Elem::U128,
            "i128" | "int128" if internal => Elem::I128,
            _ => return None,
        };
        Some(e)
    }

    /// Parses the float element's names (`f32`, `float32`, `float`), which only the front
    /// ends that accept floats call.
    pub fn parse_float(s: &str) -> Option<Elem> {
        matches!(s, "f32" | "float32" | "float").then_some(Elem::F32)
    }

    /// True when every value of `self` is representable in `other`.
    pub fn fits_in(self, other: Elem) -> bool {
        let lo_ok = self.min_value() >= other.min_value();
        let hi_ok = match (self.max_value(), other.max_value()) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a <= b,
        };
        lo_ok && hi_ok
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scalar (one lane) or vector type.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Type {
    /// Element type of each lane.
    pub elem: Elem,
    /// Number of lanes, at least 1.
    pub lanes: u32,
}

impl Type {
    /// A one-lane type.
    pub const fn scalar(elem: Elem) -> Type {
        Type { elem, lanes: 1 }
    }

    /// A vector type; `lanes` must be at least 1.
    pub const fn vec(elem: Elem, lanes: u32) -> Type {
        Type { elem, lanes }
    }

    /// The index type of loads and ramps (`i32`, as in Halide).
    pub const INDEX: Type = Type::scalar(Elem::I32);

    /// True for one lane.
    pub fn is_scalar(self) -> bool {
        self.lanes == 1
    }

    /// Same lane count, another element type.
    pub fn with_elem(self, elem: Elem) -> Type {
        Type { elem, ..self }
    }

    /// Same element type, another lane count.
    pub fn with_lanes(self, lanes: u32) -> Type {
        Type { lanes, ..self }
    }

    /// The one-lane type of the same element.
    pub fn element(self) -> Type {
        Type::scalar(self.elem)
    }

    /// Total width in bits.
    pub fn total_bits(self) -> u64 {
        self.elem.bits() as u64 * self.lanes as u64
    }

    /// The type as Halide prints it (`uint8x32`, `int32`).
    pub fn halide_name(self) -> String {
        if self.lanes == 1 {
            self.elem.halide_name().to_string()
        } else {
            format!("{}x{}", self.elem.halide_name(), self.lanes)
        }
    }

    /// Parses `u8`, `u8x32`, `uint8x32`, `uint8_t`. Returns `None` for anything else,
    /// including zero lanes.
    pub fn parse(s: &str, internal: bool) -> Option<Type> {
        if let Some(e) = Elem::parse(s, internal) {
            return Some(Type::scalar(e));
        }
        let (head, lanes) = s.rsplit_once('x')?;
        if lanes.is_empty() || !lanes.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let lanes: u32 = lanes.parse().ok()?;
        if lanes == 0 {
            return None;
        }
        let elem = Elem::parse(head, internal)?;
        Some(Type::vec(elem, lanes))
    }

    /// Parses a float type (`f32`, `f32x8`, `float32x8`), for the front ends that accept
    /// floats.
    pub fn parse_float(s: &str) -> Option<Type> {
        if let Some(e) = Elem::parse_float(s) {
            return Some(Type::scalar(e));
        }
        let (head, lanes) = s.rsplit_once('x')?;
        let elem = Elem::parse_float(head)?;
        if lanes.is_empty() || !lanes.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let lanes: u32 = lanes.parse().ok().filter(|&l| l > 0)?;
        Some(Type::vec(elem, lanes))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lanes == 1 {
            write!(f, "{}", self.elem)
        } else {
            write!(f, "{}x{}", self.elem, self.lanes)
        }
    }
}

/// Reads canonical bits as an exact integer. Exact for every type except `U128` values of
/// 2^127 and above, which callers never need (no user type is 128 bits wide).
pub fn to_i128(bits: u128, elem: Elem) -> i128 {
    if elem.is_signed() && elem.bits() < 128 {
        let shift = 128 - elem.bits();
        ((bits << shift) as i128) >> shift
    } else {
        bits as i128
    }
}

/// Truncates an exact integer to `elem` (two's-complement wrap-around).
pub fn from_i128(v: i128, elem: Elem) -> u128 {
    if elem == Elem::Bool {
        return (v != 0) as u128;
    }
    (v as u128) & elem.mask()
}

/// True for names that are type variables: an upper-case letter, then upper-case letters or
/// digits (`T`, `W`, `T2`), so that `Tx16` reads as a vector of `T`.
pub fn is_type_var(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|f| f.is_ascii_uppercase())
        && c.all(|x| x.is_ascii_uppercase() || x.is_ascii_digit())
}

/// The type variable of a (vector) type name: `T` in `T` or `Tx16`.
pub fn type_var_of(name: &str) -> Option<&str> {
    if is_type_var(name) {
        return Some(name);
    }
    let (head, lanes) = name.rsplit_once('x')?;
    (is_type_var(head) && !lanes.is_empty() && lanes.bytes().all(|b| b.is_ascii_digit()))
        .then_some(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_spellings() {
        assert_eq!(Type::parse("u8x32", false), Some(Type::vec(Elem::U8, 32)));
        assert_eq!(
            Type::parse("uint16x256", false),
            Some(Type::vec(Elem::U16, 256))
        );
        assert_eq!(Type::parse("int32_t", false), Some(Type::scalar(Elem::I32)));
        assert_eq!(Type::parse("u8x0", false), None);
        assert_eq!(Type::parse("u128", false), None);
        assert_eq!(Type::parse("u128", true), Some(Type::scalar(Elem::U128)));
        assert_eq!(Type::parse("f32", false), None);
    }

    #[test]
    fn ranges_and_widening() {
        assert_eq!(Elem::I8.min_value(), -128);
        assert_eq!(Elem::U16.max_value(), Some(65535));
        assert_eq!(Elem::U8.widen(), Some(Elem::U16));
        assert_eq!(Elem::I64.widen(), Some(Elem::I128));
        assert_eq!(Elem::I128.widen(), None);
        assert!(Elem::U8.fits_in(Elem::I16));
        assert!(!Elem::I8.fits_in(Elem::U16));
        assert!(Elem::U64.fits_in(Elem::U128));
    }
}
