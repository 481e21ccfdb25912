//! Intrinsics that call several instructions: clang's header passes HVX predicates between
//! C and the instructions as vectors (`HVX_VectorPred` is a 128-byte vector), so an
//! intrinsic taking or giving a predicate wraps its instruction in the predicate transfers
//! `vandvrt(v, -1)` (a vector's nonzero bytes become predicate bits) and `vandqrt(q, -1)`
//! (predicate bits become bytes of all ones). Each instruction of the chain is evaluated
//! with QEMU's semantics, its result passed to the next as the bytes of a register.

use std::collections::HashMap;
use std::rc::Rc;

use super::c;
use super::eval::{Eval, RegDecl};
use crate::isa::import::lanes::LaneExpr;
use crate::types::Elem;

/// A node of an intrinsic's definition.
#[derive(Debug)]
enum Node {
    /// The intrinsic's operand `k`.
    Param(usize),
    /// An integer argument.
    Const(i128),
    /// A call of an instruction's builtin (`V6_vgtb`).
    Call(String, Vec<Node>),
}

/// What a node computes: a register's bytes, or a scalar.
enum Value {
    /// The intrinsic's operand `k`, read directly.
    Operand(usize, u32),
    /// Bytes computed by an instruction.
    Bytes(Vec<Rc<LaneExpr>>),
    /// A 32-bit scalar.
    Scalar(Rc<LaneExpr>),
}

fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            cur.push(ch);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if !ch.is_whitespace() {
                out.push(ch.to_string());
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

struct Parser<'a> {
    toks: Vec<String>,
    pos: usize,
    params: &'a [(String, String)],
}

impl Parser<'_> {
    fn eat(&mut self, t: &str) -> bool {
        if self.toks.get(self.pos).is_some_and(|x| x == t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &str) -> Result<(), String> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(format!("expected `{t}` in the intrinsic's definition"))
        }
    }

    fn node(&mut self, depth: usize) -> Result<Node, String> {
        if depth > 16 {
            return Err("an intrinsic's definition nests too deeply".into());
        }
        if self.eat("(") {
            let n = self.node(depth + 1)?;
            self.expect(")")?;
            return Ok(n);
        }
        if self.eat("-") {
            return match self.node(depth + 1)? {
                Node::Const(c) => Ok(Node::Const(-c)),
                _ => Err("a negated operand".into()),
            };
        }
        let t = self
            .toks
            .get(self.pos)
            .cloned()
            .ok_or("an intrinsic's definition ends early")?;
        self.pos += 1;
        let builtin = if t == "__BUILTIN_VECTOR_WRAP" {
            self.expect("(")?;
            let b = self.toks.get(self.pos).cloned().unwrap_or_default();
            self.pos += 1;
            self.expect(")")?;
            Some(b)
        } else if t.starts_with("__builtin_HEXAGON_") {
            Some(t.clone())
        } else {
            None
        };
        if let Some(b) = builtin {
            let tag = b
                .strip_prefix("__builtin_HEXAGON_")
                .ok_or_else(|| format!("the builtin `{b}`"))?
                .trim_end_matches("_128B")
                .to_string();
            self.expect("(")?;
            let mut args = Vec::new();
            if !self.eat(")") {
                loop {
                    args.push(self.node(depth + 1)?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(Node::Call(tag, args));
        }
        if let Some(k) = self.params.iter().position(|(_, n)| *n == t) {
            return Ok(Node::Param(k));
        }
        t.parse::<i128>()
            .map(Node::Const)
            .map_err(|_| format!("`{t}` in the intrinsic's definition"))
    }
}

/// The registers of an instruction's syntax in order of first appearance: its operands in
/// the builtin's order (an accumulator first), then a destination that is only written.
fn syntax_registers(syntax: &str) -> (Vec<String>, String) {
    let mut seen: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut dest = String::new();
    let mut before_eq = true;
    for ch in syntax.chars().chain(std::iter::once(' ')) {
        if ch.is_ascii_alphanumeric() {
            cur.push(ch);
            continue;
        }
        let name: String = cur
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let is_reg = name.len() >= 2
            && name.len() <= 3
            && matches!(name.as_bytes()[0], b'V' | b'Q' | b'R')
            && name[1..].bytes().all(|b| b.is_ascii_lowercase())
            && cur.len() > name.len()
            && cur[name.len()..].bytes().all(|b| b.is_ascii_digit());
        if is_reg && !seen.contains(&name) {
            seen.push(name);
        }
        cur.clear();
        if ch == '=' && before_eq {
            before_eq = false;
            dest = seen.last().cloned().unwrap_or_default();
        }
    }
    let written_only = dest.as_bytes().get(1) == Some(&b'd');
    let operands = seen
        .into_iter()
        .filter(|r| !(written_only && *r == dest))
        .collect();
    (operands, dest)
}

/// Bytes of a register named in a syntax (`Vuu` is a pair, `Qv` a predicate, `Rt` a word).
fn register_bytes(name: &str) -> Result<u32, String> {
    match (name.as_bytes().first().copied().unwrap_or(0), name.len()) {
        (b'V', 2) => Ok(128),
        (b'V', 3) => Ok(256),
        (b'Q', 2) => Ok(16),
        (b'R', 2) => Ok(4),
        _ => Err(format!("the register {name}")),
    }
}

/// The instructions' syntax and semantics by tag.
pub struct Library<'a> {
    /// Tag to (syntax, semantics text).
    pub insns: HashMap<&'a str, (&'a str, &'a str)>,
}

/// The bytes (`result_bytes` of them) an intrinsic defined by `body` computes, as lane
/// expressions over its operands (`params`: C type and name).
pub fn result_bytes(
    body: &str,
    params: &[(String, String)],
    lib: &Library,
    result_bytes: u32,
) -> Result<Vec<Rc<LaneExpr>>, String> {
    let mut p = Parser {
        toks: tokens(body),
        pos: 0,
        params,
    };
    let root = p.node(0)?;
    match value(&root, params, lib)? {
        Value::Bytes(b) if b.len() as u32 == result_bytes => Ok(b),
        _ => Err("the definition's value is not the intrinsic's result".into()),
    }
}

fn value(n: &Node, params: &[(String, String)], lib: &Library) -> Result<Value, String> {
    match n {
        Node::Const(c) => Ok(Value::Scalar(Rc::new(LaneExpr::Const(*c)))),
        Node::Param(k) => match params[*k].0.as_str() {
            "HVX_Vector" | "HVX_VectorPred" => Ok(Value::Operand(*k, 128)),
            "HVX_VectorPair" => Ok(Value::Operand(*k, 256)),
            "Word32" => Ok(Value::Scalar(Rc::new(LaneExpr::Input {
                operand: *k,
                lane: 0,
                elem: Elem::I32,
            }))),
            t => Err(format!("an operand of type {t}")),
        },
        Node::Call(tag, args) => {
            let (syntax, sem) = lib
                .insns
                .get(tag.as_str())
                .ok_or_else(|| format!("the instruction {tag} is not in QEMU's definitions"))?;
            let (ops, dest) = syntax_registers(syntax);
            if ops.len() != args.len() {
                return Err(format!(
                    "{tag} takes {} operands, the definition passes {}",
                    ops.len(),
                    args.len()
                ));
            }
            let mut regs = Vec::new();
            for (name, arg) in ops.iter().zip(args) {
                let bytes = register_bytes(name)?;
                let mut decl = RegDecl {
                    name: format!("{name}V"),
                    bytes,
                    operand: None,
                    preset: Vec::new(),
                };
                match value(arg, params, lib)? {
                    Value::Operand(k, b) if b == bytes => decl.operand = Some(k),
                    Value::Bytes(v) if v.len() as u32 == bytes => {
                        decl.preset = v
                            .into_iter()
                            .enumerate()
                            .map(|(i, e)| (i as u32, 8, false, e))
                            .collect();
                    }
                    Value::Scalar(e) if bytes == 4 => decl.preset = vec![(0, 32, true, e)],
                    _ => return Err(format!("{tag}: an operand of the wrong kind for {name}")),
                }
                regs.push(decl);
            }
            if !ops.contains(&dest) {
                regs.push(RegDecl {
                    name: format!("{dest}V"),
                    bytes: register_bytes(&dest)?,
                    operand: None,
                    preset: Vec::new(),
                });
            }
            let out_bytes = register_bytes(&dest)?;
            if out_bytes == 4 {
                return Err(format!("{tag} gives a scalar"));
            }
            let body = c::parse_stmt(sem).map_err(|e| format!("{tag}: parse: {e}"))?;
            let mut ev = Eval::new(&regs);
            ev.run(&body).map_err(|e| format!("{tag}: {e}"))?;
            let reg = format!("{dest}V");
            let bytes = (0..out_bytes)
                .map(|j| ev.lane(&reg, j, Elem::U8))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Bytes(bytes))
        }
    }
}

/// Lane `k` of `bytes` read as `elem` (little-endian).
pub fn lanes_of(bytes: &[Rc<LaneExpr>], elem: Elem) -> Result<Vec<Rc<LaneExpr>>, String> {
    let decl = RegDecl {
        name: "R".into(),
        bytes: bytes.len() as u32,
        operand: None,
        preset: bytes
            .iter()
            .enumerate()
            .map(|(i, e)| (i as u32, 8, false, e.clone()))
            .collect(),
    };
    let ev = Eval::new(&[decl]);
    let n = bytes.len() as u32 * 8 / elem.bits();
    (0..n).map(|k| ev.lane("R", k, elem)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_registers_are_operands_in_order() {
        let (ops, dest) = syntax_registers("if (Qv4) Vx32.b+=vadd(Vx32.b,Vu32.b)");
        assert_eq!(ops, ["Qv", "Vx", "Vu"]);
        assert_eq!(dest, "Vx");
        let (ops, dest) = syntax_registers("Qd4=vcmp.gt(Vu32.b,Vv32.b)");
        assert_eq!(ops, ["Vu", "Vv"]);
        assert_eq!(dest, "Qd");
        let (ops, dest) = syntax_registers("Vdd32.h=vmpy(Vu32.ub,Rt32.b)");
        assert_eq!(ops, ["Vu", "Rt"]);
        assert_eq!(dest, "Vdd");
    }
}
