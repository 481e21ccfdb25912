//! Bottom-up enumeration of instruction sequences, pruned by observational equivalence.
//!
//! Values are built level by level: level 0 holds the term's variables and a few vector
//! constants; level `n` applies one target instruction to values whose instruction counts
//! sum to `n - 1`. Each value is evaluated on a fixed set of random and edge-case
//! environments (its *fingerprint*); of the values of one type that agree on every
//! environment only the first is kept, since any sequence using another could use it
//! instead (Pitchfork, MISAAL). A value whose type cannot reach the term's type within the
//! instructions left is not built (the distance comes from the instructions' operand and
//! result types). Values of the term's type that agree with the term on every environment
//! are *matches*: candidates for the prover, never results on their own.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use crate::interp::{Env, Value, eval};
use crate::ir::instr::{Instr, param_name};
use crate::ir::{Expr, Op};
use crate::types::Type;

/// One enumerated value: an expression of instructions over the term's leaves.
#[derive(Clone)]
struct Cand {
    expr: Expr,
    /// True for values that read no variable (a vector constant).
    constant: bool,
    /// Its value on each environment.
    values: Arc<[Value]>,
}

/// What a search found and how far it got.
pub struct Search {
    /// Expressions equal to the term on every environment, in the order found (fewest
    /// instructions first).
    pub matches: Vec<Expr>,
    /// Values kept (distinct by fingerprint).
    pub kept: usize,
    /// Values built and evaluated.
    pub built: usize,
    /// A leaf equal to the term on every environment (the term is one of its operands or
    /// a constant), if there is one.
    pub leaf: Option<Expr>,
    /// The deepest level completed.
    pub levels_done: u32,
    /// True when the time or value budget stopped the search early.
    pub stopped: bool,
}

/// Limits of one search.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most instructions in a sequence.
    pub max_instrs: u32,
    /// Stop when this instant passes.
    pub deadline: Instant,
    /// Most values kept.
    pub max_values: usize,
}

/// The enumerator for one term.
pub struct Enumerator<'a> {
    instrs: &'a [Arc<Instr>],
    envs: &'a [Env],
    target: Type,
    target_values: Vec<Value>,
    cands: Vec<Cand>,
    /// Values by type and size.
    by_type_size: BTreeMap<(Type, u32), Vec<usize>>,
    /// Fingerprint hashes seen, per type: indices of the values with that hash.
    seen: HashMap<(Type, u64), Vec<usize>>,
    /// Fewest instructions from a type to the target's type.
    distance: HashMap<Type, u32>,
    /// Constants immediates may take.
    immediates: Vec<i128>,
    /// Kept values by node id.
    by_id: HashMap<usize, usize>,
    /// The types instructions read or the term has, by total width: a value of one is
    /// also a value of the other signedness of its lanes (a free reinterpretation).
    views: HashMap<u64, Vec<Type>>,
}

fn fingerprint(values: &[Value]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in values {
        for &l in &v.lanes {
            h = (h ^ (l as u64) ^ ((l >> 64) as u64).rotate_left(17)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

impl<'a> Enumerator<'a> {
    /// An enumerator for `term` over `instrs`, with fingerprints on `envs` (which bind the
    /// term's variables) and `immediates` as the constants instruction immediates may take.
    pub fn new(
        term: &Expr,
        leaves: &[Expr],
        instrs: &'a [Arc<Instr>],
        envs: &'a [Env],
        immediates: Vec<i128>,
    ) -> Result<Self, String> {
        let target_values = envs
            .iter()
            .map(|env| eval(term, env).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut en = Enumerator {
            instrs,
            envs,
            target: term.ty(),
            target_values,
            cands: Vec::new(),
            by_type_size: BTreeMap::new(),
            seen: HashMap::new(),
            distance: distances(instrs, term.ty()),
            immediates,
            by_id: HashMap::new(),
            views: HashMap::new(),
        };
        let mut types: Vec<Type> = instrs
            .iter()
            .flat_map(|i| {
                i.params
                    .iter()
                    .zip(&i.imm)
                    .filter(|(_, imm)| !**imm)
                    .map(|(t, _)| *t)
            })
            .chain([term.ty()])
            .filter(|t| !t.is_scalar())
            .collect();
        types.sort();
        types.dedup();
        for t in types {
            en.views.entry(t.total_bits()).or_default().push(t);
        }
        for leaf in leaves {
            let values = envs
                .iter()
                .map(|env| eval(leaf, env).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()?;
            en.keep_with_views(leaf.clone(), 0, values.into());
        }
        Ok(en)
    }

    /// Keeps a value and its reinterpretations as the other types of its width (at the
    /// same instruction count: reinterpreting costs nothing).
    fn keep_with_views(&mut self, expr: Expr, size: u32, values: Arc<[Value]>) {
        let ty = expr.ty();
        if !self.keep(expr.clone(), size, values.clone()) || ty.is_scalar() {
            return;
        }
        let views = self
            .views
            .get(&ty.total_bits())
            .cloned()
            .unwrap_or_default();
        for t in views {
            // Only the other signedness of the same lanes: reinterpreting across element
            // widths multiplies the values of every level by the number of widths.
            if t == ty || t.lanes != ty.lanes {
                continue;
            }
            let Ok(e) = Expr::build(Op::Reinterpret, Some(t), vec![expr.clone()]) else {
                continue;
            };
            let Some(vs) = values
                .iter()
                .map(|v| reinterpret(v, t))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            self.keep(e, size, vs.into());
        }
    }

    /// Keeps a value unless one of its type with the same fingerprint is kept; returns
    /// whether it was new.
    fn keep(&mut self, expr: Expr, size: u32, values: Arc<[Value]>) -> bool {
        let ty = expr.ty();
        let key = (ty, fingerprint(&values));
        if let Some(same) = self.seen.get(&key)
            && same.iter().any(|&i| self.cands[i].values == values)
        {
            return false;
        }
        let k = self.cands.len();
        self.seen.entry(key).or_default().push(k);
        self.by_type_size.entry((ty, size)).or_default().push(k);
        self.by_id.insert(expr.id(), k);
        let constant = crate::ir::visit::free_vars(&expr).is_empty();
        self.cands.push(Cand {
            expr,
            constant,
            values,
        });
        true
    }

    /// Searches up to `limits.max_instrs` instructions.
    pub fn run(mut self, limits: Limits) -> Search {
        let mut matches = Vec::new();
        let mut built = 0usize;
        let mut stopped = false;
        let mut levels_done = 0;
        // A leaf may already be the answer (the term is one of its variables).
        let leaf = self
            .cands
            .iter()
            .find(|c| c.expr.ty() == self.target && *c.values == self.target_values[..])
            .map(|c| c.expr.clone());
        'levels: for level in 1..=limits.max_instrs {
            let left = limits.max_instrs - level;
            let mut new: Vec<(Expr, Arc<[Value]>)> = Vec::new();
            for ins in self.instrs {
                if self.distance.get(&ins.result).is_none_or(|&d| d > left) {
                    continue;
                }
                let commutes = self.commutes(ins);
                for args in self.operand_choices(ins, level - 1) {
                    // An instruction of constants is a constant (a leaf already has it);
                    // of a commuting pair, one order is enough.
                    let mut values = args.iter().filter(|a| !matches!(a.op(), Op::Const(_)));
                    if values.clone().all(|a| {
                        self.by_id
                            .get(&a.id())
                            .is_none_or(|&i| self.cands[i].constant)
                    }) {
                        continue;
                    }
                    if commutes
                        && let (Some(x), Some(y)) = (values.next(), values.next())
                        && self.by_id.get(&x.id()) > self.by_id.get(&y.id())
                    {
                        continue;
                    }
                    built += 1;
                    if built.is_multiple_of(256)
                        && (Instant::now() > limits.deadline
                            || self.cands.len() + new.len() > limits.max_values)
                    {
                        stopped = true;
                        self.commit(new, level);
                        break 'levels;
                    }
                    // On the last level only a match is of use: stop at the first
                    // environment where the value differs from the term's.
                    let Some(values) =
                        self.apply(ins, &args, (left == 0).then_some(&self.target_values[..]))
                    else {
                        continue;
                    };
                    let Ok(expr) = Expr::build(Op::Instr(ins.clone()), None, args) else {
                        continue;
                    };
                    if ins.result == self.target && values == self.target_values {
                        matches.push(expr.clone());
                    } else if self.is_view_of_target(ins.result)
                        && let Some(read) = self.read_as_target(&values)
                        && read == self.target_values
                        && let Ok(e) =
                            Expr::build(Op::Reinterpret, Some(self.target), vec![expr.clone()])
                    {
                        matches.push(e);
                    }
                    // The last level's values can only be matches.
                    if left > 0 {
                        new.push((expr, values.into()));
                    }
                }
            }
            self.commit(new, level);
            levels_done = level;
        }
        Search {
            matches,
            leaf,
            kept: self.cands.len(),
            built,
            levels_done,
            stopped,
        }
    }

    fn commit(&mut self, new: Vec<(Expr, Arc<[Value]>)>, level: u32) {
        for (e, v) in new {
            self.keep_with_views(e, level, v);
        }
    }

    /// The operand lists of `ins` whose instruction counts sum to `size`: values of each
    /// operand's type, immediates from the pool.
    fn operand_choices(&self, ins: &Instr, size: u32) -> Vec<Vec<Expr>> {
        let mut out = Vec::new();
        self.choose(ins, 0, size, &mut Vec::new(), &mut out);
        out
    }

    fn choose(
        &self,
        ins: &Instr,
        k: usize,
        left: u32,
        args: &mut Vec<Expr>,
        out: &mut Vec<Vec<Expr>>,
    ) {
        if k == ins.params.len() {
            if left == 0 {
                out.push(args.clone());
            }
            return;
        }
        let ty = ins.params[k];
        if ins.imm[k] {
            let range = ins.imm_range.get(k).copied().flatten();
            for &c in &self.immediates {
                if range.is_some_and(|(lo, hi)| c < lo || c > hi) {
                    continue;
                }
                let Ok(konst) = Expr::int(ty.elem, c) else {
                    continue;
                };
                args.push(konst);
                self.choose(ins, k + 1, left, args, out);
                args.pop();
            }
            return;
        }
        // The last value operand takes what is left.
        let more_values = ins.imm[k + 1..].iter().any(|&i| !i);
        let first = if more_values { 0 } else { left };
        for s in first..=left {
            let Some(ids) = self.by_type_size.get(&(ty, s)) else {
                continue;
            };
            for &i in ids {
                args.push(self.cands[i].expr.clone());
                self.choose(ins, k + 1, left - s, args, out);
                args.pop();
            }
        }
    }

    /// The values of `ins` applied to `args` on every environment, or `None` when it does
    /// not evaluate (an immediate out of range).
    fn apply(
        &self,
        ins: &Instr,
        args: &[Expr],
        must_equal: Option<&[Value]>,
    ) -> Option<Vec<Value>> {
        if must_equal.is_some() && ins.result != self.target && !self.is_view_of_target(ins.result)
        {
            return None;
        }
        let mut out = Vec::with_capacity(self.envs.len());
        for (n, env) in self.envs.iter().enumerate() {
            let mut inner = Env::new();
            for (i, a) in args.iter().enumerate() {
                let v = match a.op() {
                    Op::Const(_) => eval(a, env).ok()?,
                    _ => self.value_of(a, n)?,
                };
                inner.set(param_name(i), v);
            }
            let v = eval(&ins.semantics, &inner).ok()?;
            if let Some(t) = must_equal {
                let read = if v.ty == self.target {
                    Some(v.clone())
                } else {
                    reinterpret(&v, self.target)
                };
                if read.as_ref() != Some(&t[n]) {
                    return None;
                }
            }
            out.push(v);
        }
        Some(out)
    }

    /// Whether `t` is the term's type read with the other signedness.
    fn is_view_of_target(&self, t: Type) -> bool {
        t != self.target && t.lanes == self.target.lanes && t.elem.bits() == self.target.elem.bits()
    }

    /// Values of a view of the term's type, read as the term's type.
    fn read_as_target(&self, values: &[Value]) -> Option<Vec<Value>> {
        values.iter().map(|v| reinterpret(v, self.target)).collect()
    }

    /// Whether `ins` has two value operands of one type that it treats alike (tried on
    /// the fingerprint environments' values of the leaves).
    fn commutes(&self, ins: &Instr) -> bool {
        let operands: Vec<usize> = (0..ins.params.len()).filter(|&k| !ins.imm[k]).collect();
        let [x, y] = operands[..] else {
            return false;
        };
        if ins.params[x] != ins.params[y] || ins.imm.iter().any(|&i| i) {
            return false;
        }
        let t = ins.params[x];
        let leaves: Vec<&Cand> = self
            .by_type_size
            .get(&(t, 0))
            .map(|ids| ids.iter().map(|&i| &self.cands[i]).collect())
            .unwrap_or_default();
        let [a, b, ..] = leaves[..] else {
            return false;
        };
        (0..self.envs.len()).all(|n| {
            let run = |p: &Value, q: &Value| {
                let mut inner = Env::new();
                inner.set(param_name(x), p.clone());
                inner.set(param_name(y), q.clone());
                eval(&ins.semantics, &inner).ok()
            };
            let ab = run(&a.values[n], &b.values[n]);
            ab.is_some() && ab == run(&b.values[n], &a.values[n])
        })
    }

    /// The value of the kept operand `a` on environment `n`.
    fn value_of(&self, a: &Expr, n: usize) -> Option<Value> {
        let &i = self.by_id.get(&a.id())?;
        Some(self.cands[i].values[n].clone())
    }
}

/// `v`'s bits read as type `t` of the same lanes and element width (canonical lane bits
/// are the same for both signednesses), or `None` for any other type.
fn reinterpret(v: &Value, t: Type) -> Option<Value> {
    (t.lanes == v.ty.lanes && t.elem.bits() == v.ty.elem.bits()).then(|| Value {
        ty: t,
        lanes: v.lanes.clone(),
    })
}

/// Fewest instructions from each type to `target` (0 for `target` itself), over the
/// instructions' operand and result types.
fn distances(instrs: &[Arc<Instr>], target: Type) -> HashMap<Type, u32> {
    // The other signedness of the target's lanes is the target, read differently.
    let mut d: HashMap<Type, u32> = HashMap::from([(target, 0)]);
    for ins in instrs {
        let r = ins.result;
        if r.lanes == target.lanes && r.elem.bits() == target.elem.bits() {
            d.insert(r, 0);
        }
    }
    loop {
        let mut changed = false;
        for ins in instrs {
            let Some(&r) = d.get(&ins.result) else {
                continue;
            };
            for (&p, &imm) in ins.params.iter().zip(&ins.imm) {
                if imm {
                    continue;
                }
                if d.get(&p).is_none_or(|&old| old > r + 1) {
                    d.insert(p, r + 1);
                    changed = true;
                }
            }
        }
        if !changed {
            return d;
        }
    }
}
