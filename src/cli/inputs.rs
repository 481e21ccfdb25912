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
    /// Values, if given.
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
        for &v in vals {
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
                env.set(self.name.as_str(), Value::from_ints(t.elem, &lanes));
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

/// Parses `NAME:TYPE[=VALUES]`.
pub fn parse_input(s: &str) -> Result<InputSpec, String> {
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
        let t = Type::parse(ty, false).ok_or_else(|| {
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
        let s = parse_input("a:u8x2=250,0").unwrap();
        assert_eq!(s.ty, Some(Type::vec(Elem::U8, 2)));
        assert_eq!(s.values, Some(vec![250, 0]));
        let b = parse_input("img:i16[]=-1,0x10").unwrap();
        assert_eq!(b.ty, None);
        assert_eq!(b.elem, Elem::I16);
        assert_eq!(b.values, Some(vec![-1, 16]));
        assert!(parse_input("a=3").is_err());
        assert!(parse_input("a:f32").unwrap_err().contains("unknown type"));
        let mut env = Env::new();
        assert!(
            parse_input("a:u8x2=1,2,3")
                .unwrap()
                .bind(&mut env)
                .unwrap_err()
                .contains("2 lanes")
        );
        assert!(
            parse_input("a:u8=300")
                .unwrap()
                .bind(&mut env)
                .unwrap_err()
                .contains("does not fit")
        );
    }
}
