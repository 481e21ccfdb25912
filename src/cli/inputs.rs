//! `--input NAME:TYPE[=v0,v1,...]` flags: declarations and values of free variables and
//! buffers.

use crate::interp::{Buffer, Env, Value, lane};
use crate::syntax::elab::Decls;
use crate::types::{Elem, Type};

/// One parsed `--input` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    /// The name.
    pub name: String,
    /// A variable's type, or `None` for a buffer.
    pub ty: Option<Type>,
    /// A buffer's element type.
    pub elem: Elem,
    /// Values, if given (a float's as its bit pattern).
    pub values: Option<Vec<i128>>,
}

impl InputSpec {
    /// Adds the declaration to `d`.
    pub fn declare(&self, d: &mut Decls) {
        match self.ty {
            Some(t) => {
                d.vars.insert(self.name.clone(), t);
            }
            None => {
                d.buffers.insert(self.name.clone(), self.elem);
            }
        }
    }

    /// Binds the values in `env`; an input without values is an error here.
    pub fn bind(&self, env: &mut Env) -> Result<(), String> {
        let Some(vals) = &self.values else {
            // Declared only: evaluation reports it if the expression needs it.
            return Ok(());
        };
        for &v in vals.iter().filter(|_| self.elem.is_int()) {
            let ok = v >= self.elem.min_value() && self.elem.max_value().is_none_or(|m| v <= m);
            if !ok {
                return Err(format!(
                    "value {v} of `{}` does not fit in {}",
                    self.name, self.elem
                ));
            }
        }
        match self.ty {
            Some(t) => {
                let lanes: Vec<i128> = if vals.len() == 1 {
                    vec![vals[0]; t.lanes as usize]
                } else if vals.len() == t.lanes as usize {
                    vals.clone()
                } else {
                    return Err(format!(
                        "`{}` has {} lanes but {} values were given",
                        self.name,
                        t.lanes,
                        vals.len()
                    ));
                };
                let value = if t.elem.is_float() {
                    Value {
                        ty: t,
                        lanes: lanes.iter().map(|&b| b as u128).collect(),
                    }
                } else {
                    Value::from_ints(t.elem, &lanes)
                };
                env.set(self.name.as_str(), value);
            }
            None => {
                let data = vals
                    .iter()
                    .map(|&v| lane::from_i128(v, self.elem))
                    .collect();
                env.set_buffer(
                    self.name.as_str(),
                    Buffer::Data {
                        elem: self.elem,
                        min: 0,
                        data,
                    },
                );
            }
        }
        Ok(())
    }
}

fn parse_int(s: &str) -> Option<i128> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(hex, 16).ok()?
    } else {
        body.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// A float value as `--input` writes it (`1.5`, `-0`, `inf`, `-inf`, `nan`, or `0x` and
/// the bit pattern), as its bit pattern.
fn parse_float(s: &str) -> Option<i128> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok().map(i128::from);
    }
    let x: f32 = s
        .parse()
        .or_else(|_| s.strip_suffix(['f', 'F']).unwrap_or(s).parse())
        .ok()?;
    Some(i128::from(x.to_bits()))
}

/// Parses `NAME:TYPE[=VALUES]`; `f32` types only when `allow_float`.
pub fn parse_input(s: &str, allow_float: bool) -> Result<InputSpec, String> {
    let (decl, values) = match s.split_once('=') {
        Some((d, v)) => (d, Some(v)),
        None => (s, None),
    };
    let (name, ty) = decl
        .split_once(':')
        .ok_or_else(|| format!("--input `{s}`: expected NAME:TYPE or NAME:TYPE=v0,v1,..."))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.$".contains(c))
    {
        return Err(format!("--input `{s}`: `{name}` is not a valid name"));
    }
    let ty = ty.trim();
    let (ty, elem) = if let Some(e) = ty.strip_suffix("[]") {
        let elem = Elem::parse(e, false)
            .filter(|e| e.is_int())
            .ok_or_else(|| format!("--input `{s}`: unknown element type `{e}`"))?;
        (None, elem)
    } else {
        let float = Type::parse_float(ty).filter(|_| allow_float);
        let t = Type::parse(ty, false).or(float).ok_or_else(|| {
            format!(
                "--input `{s}`: unknown type `{ty}` (write e.g. u8x16, i32, or u8[] for a buffer)"
            )
        })?;
        (Some(t), t.elem)
    };
    let values = match values {
        None => None,
        Some(v) => Some(
            v.split(',')
                .map(|x| {
                    let x = x.trim();
                    match (elem, x) {
                        (Elem::Bool, "true") => Ok(1),
                        (Elem::Bool, "false") => Ok(0),
                        (Elem::F32, _) => parse_float(x)
                            .ok_or_else(|| format!("--input `{s}`: `{x}` is not a float")),
                        _ => parse_int(x)
                            .ok_or_else(|| format!("--input `{s}`: `{x}` is not an integer")),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    Ok(InputSpec {
        name: name.to_string(),
        ty,
        elem,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_variables_and_buffers() {
        let s = parse_input("a:u8x2=250,0", false).unwrap();
        assert_eq!(s.ty, Some(Type::vec(Elem::U8, 2)));
        assert_eq!(s.values, Some(vec![250, 0]));
        let b = parse_input("img:i16[]=-1,0x10", false).unwrap();
        assert_eq!(b.ty, None);
        assert_eq!(b.elem, Elem::I16);
        assert_eq!(b.values, Some(vec![-1, 16]));
        assert!(parse_input("a=3", false).is_err());
        assert!(
            parse_input("a:f32", false)
                .unwrap_err()
                .contains("unknown type")
        );
        let f = parse_input("a:f32x3=1.5,-0,inf", true).unwrap();
        assert_eq!(f.ty, Some(Type::vec(Elem::F32, 3)));
        let bits = |x: f32| i128::from(x.to_bits());
        assert_eq!(
            f.values,
            Some(vec![bits(1.5), bits(-0.0), bits(f32::INFINITY)])
        );
        assert!(
            parse_input("a:f32=x", true)
                .unwrap_err()
                .contains("not a float")
        );
        let mut env = Env::new();
        assert!(
            parse_input("a:u8x2=1,2,3", false)
                .unwrap()
                .bind(&mut env)
                .unwrap_err()
                .contains("2 lanes")
        );
        assert!(
            parse_input("a:u8=300", false)
                .unwrap()
                .bind(&mut env)
                .unwrap_err()
                .contains("does not fit")
        );
    }
}
