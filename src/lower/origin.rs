//! Where an instruction in a selection came from, for `harrow compile --explain`: a
//! lowering rule, an instruction's own semantics read as a rule, or a strategy.
//!
//! Selection builds many more candidates than it keeps, so what it records per
//! instruction is small ([`Source`], [`Recorded`]: indices and names), and [`Origin`]s
//! are spelled out only for the instructions of the final selection.

use std::sync::Arc;

use crate::ir::{Expr, Op};
use crate::rules::RuleSet;
use crate::util::idhash::IdMap;

/// What put an instruction into a selection (`harrow compile --explain`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A lowering rule (hand-written or synthesized), by name and place.
    Rule {
        /// The rule's name.
        name: String,
        /// `file:line` of the rule.
        at: String,
    },
    /// The instruction's own semantics, read as a rule (`file:line` of its description).
    Semantics(String),
    /// A selection strategy, by name.
    Strategy(&'static str),
    /// An instruction a rule chose in the form a strategy made (pairs of taps, halves of
    /// a wide value), or chose elsewhere and the strategy rebuilt over other operands
    /// (sinking shuffles).
    Through(Box<Origin>, &'static str),
}

/// What `Selector::record` keeps of an origin: indices and names, spelled out as an
/// [`Origin`] only for the instructions of the final selection.
#[derive(Clone, Copy, Debug)]
enum Recorded {
    /// The rule of this index.
    Rule(usize),
    /// The rule of this index, inside the named strategy's proposal.
    RuleThrough(usize, &'static str),
    /// The named strategy.
    Strategy(&'static str),
}

/// An [`Origin`] before it is spelled out (selection records many more candidates than
/// it keeps).
#[derive(Clone, Copy, Debug)]
pub(super) enum Source {
    /// The rule of this index in the rule set.
    Rule(usize),
    /// The strategy of this name, which built the instruction.
    Strategy(&'static str),
    /// The strategy of this name, which rebuilt an instruction over other operands.
    Rebuilt(&'static str),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Rule { name, at } => write!(f, "rule `{name}` ({at})"),
            Origin::Semantics(at) => write!(f, "its semantics ({at})"),
            Origin::Strategy(name) => write!(f, "strategy `{name}`"),
            Origin::Through(origin, name) => write!(f, "{origin}, through strategy `{name}`"),
        }
    }
}

impl Origin {
    /// The origin of instructions built by `rule`'s right-hand side.
    fn of_rule(rule: &crate::rules::Rule) -> Origin {
        let d = &rule.decl;
        let at = format!("{}:{}", d.src.name, d.line);
        if d.src.name.ends_with(".isa") {
            Origin::Semantics(at)
        } else {
            Origin::Rule {
                name: d.name.clone(),
                at,
            }
        }
    }
}

/// The origins a selection has recorded.
#[derive(Default)]
pub(super) struct Origins {
    /// Per instruction node (by id, the node kept so the id is not reused).
    nodes: IdMap<usize, (Expr, Recorded)>,
    /// The first rule that built each instruction (by the instruction's address in the
    /// target's table): an instruction a strategy rebuilt over other operands is
    /// explained by it.
    first_rule: IdMap<usize, usize>,
}

impl Origins {
    /// Remembers `source` for the instruction node `n` (built inside the proposal of the
    /// strategy `proposing`, if any), unless an earlier origin is known.
    pub(super) fn record(&mut self, n: &Expr, source: Source, proposing: Option<&'static str>) {
        let Op::Instr(instr) = n.op() else { return };
        if self.nodes.contains_key(&n.id()) {
            return;
        }
        let instr = Arc::as_ptr(instr) as usize;
        let recorded = match source {
            Source::Rule(ri) => {
                self.first_rule.entry(instr).or_insert(ri);
                // A rule applied inside a strategy's proposal applies to the form the
                // strategy made (pairs of taps, halves of a wide value).
                match proposing {
                    Some(name) => Recorded::RuleThrough(ri, name),
                    None => Recorded::Rule(ri),
                }
            }
            Source::Strategy(name) => Recorded::Strategy(name),
            Source::Rebuilt(name) => match self.first_rule.get(&instr) {
                Some(&ri) => Recorded::RuleThrough(ri, name),
                None => Recorded::Strategy(name),
            },
        };
        self.nodes.insert(n.id(), (n.clone(), recorded));
    }

    /// Gives `to` the origin of `from` (an instruction rebuilt over selected operands
    /// keeps the origin of the node it was given as); whether `to` has one now.
    pub(super) fn inherit(&mut self, from: &Expr, to: &Expr) -> bool {
        if self.nodes.contains_key(&to.id()) {
            return true;
        }
        match self.nodes.get(&from.id()) {
            Some(&(_, recorded)) => {
                self.nodes.insert(to.id(), (to.clone(), recorded));
                true
            }
            None => false,
        }
    }

    /// The origins of the instructions in `selected`, in post-order, spelled out with the
    /// rules of `rules`.
    pub(super) fn spelled(&self, selected: &Expr, rules: &RuleSet) -> Vec<(Expr, Origin)> {
        let rule = |ri: usize| Origin::of_rule(&rules.rules[ri]);
        crate::ir::visit::post_order(selected)
            .into_iter()
            .filter_map(|n| {
                let origin = match self.nodes.get(&n.id())?.1 {
                    Recorded::Rule(ri) => rule(ri),
                    Recorded::RuleThrough(ri, name) => Origin::Through(Box::new(rule(ri)), name),
                    Recorded::Strategy(name) => Origin::Strategy(name),
                };
                Some((n, origin))
            })
            .collect()
    }
}
