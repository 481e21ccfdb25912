//! Instantiated rule tables as bytes, so that a process can read what an earlier one built.
//!
//! Every compilation needs the lifting rules and its target's lowering rules and
//! instructions, instantiated at every type. Building them (parsing, expanding templates,
//! elaborating both sides of thousands of instantiations) takes most of a small kernel's
//! compile time, and gives the same tables every time for one build of harrow. A snapshot
//! is those tables written with serde (`postcard`), read back in a fraction of the time.
//!
//! Sources and instructions are shared by many rules; a snapshot writes each once, in a
//! table at its start, and refers to it by index (see [`source_ref`] and
//! [`crate::ir::instr::instr_ref`]). Expressions are rebuilt through `Expr::build`, so a
//! snapshot cannot produce an ill-typed node. Anything a snapshot cannot say (an
//! instruction outside its table, an unknown index, trailing bytes) is an error, and the
//! caller builds the tables instead: a snapshot is only ever a faster way to the same data.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Pat, PatKind, Rule, RuleKind, RuleSet};
use crate::ir::Op;
use crate::ir::instr::Instr;
use crate::ir::instr::instr_ref::{self, InstrList};

/// Rule sets and instructions read from a snapshot.
#[derive(Debug)]
pub struct Tables {
    /// The rule sets, in the order written.
    pub rule_sets: Vec<RuleSet>,
    /// The instructions given to [`encode`] as the table, in order.
    pub instrs: Vec<Arc<Instr>>,
}

/// What precedes the instructions: the sources, and how many instructions follow.
#[derive(Serialize, Deserialize)]
struct Head {
    sources: Vec<(String, String)>,
    instrs: u32,
    table: u32,
}

/// Writes `rule_sets` and the instruction table `instrs` (plus every instruction their
/// patterns name).
pub fn encode(rule_sets: &[&RuleSet], instrs: &[Arc<Instr>]) -> Result<Vec<u8>, String> {
    let mut sources = source_ref::new_list();
    let mut list = instr_ref::new_list();
    for i in instrs {
        list.add(i);
    }
    for set in rule_sets {
        for r in &set.rules {
            sources.add(&r.decl.src);
            for inst in &r.insts {
                named_instrs(&inst.lhs, &mut list);
                named_instrs(&inst.rhs, &mut list);
            }
        }
    }
    let head = Head {
        sources: sources
            .list
            .iter()
            .map(|s| (s.name.clone(), s.text.clone()))
            .collect(),
        instrs: list.list.len() as u32,
        table: instrs.len() as u32,
    };
    let mut out = postcard::to_stdvec(&head).map_err(|e| e.to_string())?;
    let bodies: Vec<Arc<Instr>> = list.list.clone();
    let sets: Vec<(Option<RuleKind>, &Vec<Rule>)> =
        rule_sets.iter().map(|s| (s.kind, &s.rules)).collect();
    let (written, _) = source_ref::with_source_list(sources, || {
        instr_ref::with_instr_list(list, || -> Result<Vec<u8>, postcard::Error> {
            for i in &bodies {
                out = postcard::to_extend(&**i, std::mem::take(&mut out))?;
            }
            postcard::to_extend(&sets, std::mem::take(&mut out))
        })
        .0
    });
    written.map_err(|e| e.to_string())
}

/// Reads what [`encode`] wrote.
pub fn decode(bytes: &[u8]) -> Result<Tables, String> {
    let (head, mut rest) = postcard::take_from_bytes::<Head>(bytes).map_err(|e| e.to_string())?;
    if head.table > head.instrs {
        return Err("the instruction table is longer than the instructions".into());
    }
    let sources = source_ref::from_pairs(head.sources);
    let (read, _) = source_ref::with_source_list(sources, || {
        let (sets, list) = instr_ref::with_instr_list(instr_ref::new_list(), || {
            for _ in 0..head.instrs {
                let (i, more) =
                    postcard::take_from_bytes::<Instr>(rest).map_err(|e| e.to_string())?;
                rest = more;
                instr_ref::push(Arc::new(i))?;
            }
            let (sets, more) =
                postcard::take_from_bytes::<Vec<(Option<RuleKind>, Vec<Rule>)>>(rest)
                    .map_err(|e| e.to_string())?;
            if !more.is_empty() {
                return Err(format!("{} bytes after the tables", more.len()));
            }
            Ok(sets)
        });
        sets.map(|sets| (sets, list))
    });
    let (sets, list) = read?;
    if list.list.len() != head.instrs as usize {
        return Err("instructions are repeated".into());
    }
    let rule_sets = sets
        .into_iter()
        .map(|(kind, rules)| {
            let kind = kind.ok_or("a rule set has no kind")?;
            Ok(RuleSet::from_rules(rules, kind))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Tables {
        rule_sets,
        instrs: list.list[..head.table as usize].to_vec(),
    })
}

/// The tables stored in the cache as `name` by this build of harrow, or else built by
/// `build` and stored (see `util::disk_cache`; a cache that cannot be read or written only
/// costs the time to build).
pub fn cached<E>(name: &str, build: impl FnOnce() -> Result<Tables, E>) -> Result<Tables, E> {
    if let Some(t) = crate::util::disk_cache::read(name).and_then(|b| decode(&b).ok()) {
        return Ok(t);
    }
    let t = build()?;
    if crate::util::disk_cache::dir().is_some() {
        let sets: Vec<&RuleSet> = t.rule_sets.iter().collect();
        if let Ok(bytes) = encode(&sets, &t.instrs) {
            crate::util::disk_cache::write(name, &bytes);
        }
    }
    Ok(t)
}

/// Adds the instructions `p` names to `list`.
fn named_instrs(p: &Pat, list: &mut InstrList) {
    if let PatKind::Op(op, args) = &p.kind {
        if let Op::Instr(i) = op {
            list.add(i);
        }
        for a in args {
            named_instrs(a, list);
        }
    }
}

/// Sources written as indices into a list while rules are (de)serialized: every rule of a
/// file shares the file's source.
pub mod source_ref {
    use std::sync::Arc;

    use serde::{Deserializer, Serializer};

    use crate::diag::Source;
    use crate::util::ref_list::{self, Installed, RefList};

    /// The sources being written or read, told apart by address.
    pub type SourceList = RefList<Source, usize>;

    /// An empty list of sources.
    pub fn new_list() -> SourceList {
        RefList::new(|s| Arc::as_ptr(s) as usize)
    }

    /// A list of sources made from (name, text) pairs.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> SourceList {
        let mut l = new_list();
        for (name, text) in pairs {
            l.add(&Source::new(name, text));
        }
        l
    }

    thread_local! {
        static CURRENT: Installed<Source, usize> = const { std::cell::RefCell::new(None) };
    }

    /// Runs `f` with `list` installed for this thread, and gives the list back.
    pub fn with_source_list<R>(list: SourceList, f: impl FnOnce() -> R) -> (R, SourceList) {
        ref_list::with_list(&CURRENT, list, f)
    }

    /// Writes a source as its index in the installed list.
    pub fn serialize<S: Serializer>(src: &Arc<Source>, s: S) -> Result<S::Ok, S::Error> {
        ref_list::write(&CURRENT, src, &format!("source {}", src.name), s)
    }

    /// Reads an index into the installed list.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Source>, D::Error> {
        ref_list::read(&CURRENT, "source", d)
    }
}

/// Every instantiation of every rule, with where it comes from, as text (for tests that
/// compare rule sets).
#[cfg(test)]
pub fn dump(set: &RuleSet) -> String {
    let mut s = format!("{:?}\n", set.kind);
    for r in &set.rules {
        let d = &r.decl;
        s.push_str(&format!(
            "{} {} {} {:?} {:?} {:?} {} {:?} {:?} {:?} {:?} {:?} {:?}\n",
            d.name,
            d.location(),
            d.src.text.len(),
            d.span,
            r.vars,
            d.params,
            d.doc,
            d.derived,
            d.type_preds,
            d.priority,
            d.pred,
            d.lhs,
            d.rhs
        ));
        for i in &r.insts {
            s.push_str(&format!(
                "  {} {:?} {:?} {:?}\n",
                i.describe(),
                i.vars,
                i.lhs,
                i.rhs
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lifting_rules_read_back_as_written() {
        let built = &crate::lift::build_builtin_rules().expect("built-in rules load");
        let bytes = encode(&[built], &[]).expect("the rules can be written");
        let read = decode(&bytes).expect("and read back");
        assert_eq!(read.rule_sets.len(), 1);
        assert_eq!(dump(&read.rule_sets[0]), dump(built));
        // A truncated snapshot is refused, never half read.
        for cut in [1, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).unwrap_err().contains("after the tables"));
    }
}
