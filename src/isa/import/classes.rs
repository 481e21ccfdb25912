//! Similarity classes of descriptions (Hydride's "AutoLLVM" idea): descriptions that are the
//! same function up to element width, lane count, signedness, constants (immediates, lane
//! indices, shift amounts) and operand order form one parameterized class.
//!
//! The class of a description is its semantics with those parameters abstracted: operands
//! renamed in order of first use, every vector or scalar type written `T` (`B` for `bool`
//! lanes), every broadcast `xN`, and every number `c`. Two descriptions are in one class
//! exactly when these texts are equal, so `vpaddb` .. `vpaddq` at 128, 256 and 512 bits are
//! one class, and `vpunpcklbw` .. `vpunpckhqdq` another (a shuffle whose indices are the
//! parameter).

use std::collections::BTreeMap;

use crate::ir::instr::Instr;

/// One class and its members (intrinsic names, in the order given).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Class {
    /// The abstracted semantics every member shares.
    pub shape: String,
    /// Members: intrinsic and its result type.
    pub members: Vec<String>,
}

/// The abstracted semantics of `i` (see the module comment).
pub fn shape(i: &Instr) -> String {
    let text = i.semantics.to_string();
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut names: Vec<String> = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let c = b[k] as char;
        if c == '#' || c.is_ascii_alphabetic() || c == '_' {
            let start = k;
            k += 1;
            while k < b.len() && ((b[k] as char).is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            let word = &text[start..k];
            out.push_str(&abstract_word(word, &mut names));
        } else if c.is_ascii_digit() {
            while k < b.len() && (b[k] as char).is_ascii_alphanumeric() {
                k += 1;
            }
            out.push('c');
        } else {
            out.push(c);
            k += 1;
        }
    }
    out
}

/// One word of the printed semantics, abstracted.
fn abstract_word(word: &str, names: &mut Vec<String>) -> String {
    if let Some(n) = word.strip_prefix('#') {
        let _ = n;
        let pos = names.iter().position(|x| x == word).unwrap_or_else(|| {
            names.push(word.to_string());
            names.len() - 1
        });
        return format!("v{pos}");
    }
    let head = word.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'x');
    let is_type = |h: &str| matches!(h, "int" | "uint" | "bool");
    if word.starts_with("uint1x") || word == "bool" || word.starts_with("boolx") {
        return "B".into();
    }
    if is_type(head)
        || is_type(
            word.split('x')
                .next()
                .unwrap_or("")
                .trim_end_matches(|c: char| c.is_ascii_digit()),
        )
    {
        return "T".into();
    }
    if word.len() > 1 && word.starts_with('x') && word[1..].chars().all(|c| c.is_ascii_digit()) {
        return "xN".into();
    }
    word.to_string()
}

/// The classes of `instrs`, largest first (then by shape).
pub fn classes(instrs: &[std::sync::Arc<Instr>]) -> Vec<Class> {
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in instrs {
        by.entry(shape(i))
            .or_default()
            .push(format!("{} -> {}", i.intrinsic, i.result));
    }
    let mut out: Vec<Class> = by
        .into_iter()
        .map(|(shape, members)| Class { shape, members })
        .collect();
    out.sort_by(|a, b| {
        b.members
            .len()
            .cmp(&a.members.len())
            .then(a.shape.cmp(&b.shape))
    });
    out
}
