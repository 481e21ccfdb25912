//! Offline rule synthesis: for a term harrow must compile well, search for the cheapest
//! sequence of target instructions that computes it, prove it, and write it as a lowering
//! rule (Pitchfork's offline rule synthesis; MISAAL's bottom-up enumeration).
//!
//! For each term (an expression over typed vector variables, at one register width):
//! 1. enumerate sequences of up to `K` instructions of the target bottom up, keeping one
//!    value per fingerprint ([`enumerate`]);
//! 2. take the sequences equal to the term on every fingerprint environment, cheapest
//!    first by what selection would pay for them (`lower::lower_unlifted`), and keep only
//!    one cheaper than what selection chooses for the term today;
//! 3. write it as a rule in the ordinary rule language, load it like any rule file and
//!    prove it with the SMT prover (`verify`); a refuted candidate is dropped and the next
//!    one tried.
//!
//! The output is deterministic for a given target, term list and `K`: instructions are
//! tried in key order, values in the order built, and the fingerprint environments come
//! from fixed seeds.

pub mod abstraction;
pub mod corpus;
pub mod enumerate;
pub mod generalize;
pub mod lift;
pub mod progress;
pub mod terms;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::diag::Source;
use crate::interp::Env;
use crate::ir::instr::Instr;
use crate::ir::{Expr, Op};
use crate::lower::Backend;
use crate::rules::{RuleKind, RuleSet};
use crate::types::{Type, USER_INT_ELEMS};

/// Settings of a synthesis run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Most instructions in a sequence.
    pub max_instrs: u32,
    /// Time allowed per term for the enumeration.
    pub budget: Duration,
    /// Fingerprint environments.
    pub environments: u64,
    /// Most values kept per term.
    pub max_values: usize,
    /// A sequence is kept only at this fraction of today's cost or less. Selection decides
    /// node by node and prices a shared value once per use, so a small local saving can
    /// raise a whole chunk's cost: a `min` of u32 20% cheaper on HVX made a fuzz kernel
    /// 14% slower (its load was split into halves for the new instruction and also kept
    /// whole for another use). Wins far above the model's error are kept.
    pub max_ratio: f64,
    /// The prover's settings.
    pub verify: crate::verify::Options,
    /// The terms of the whole run, as printed: a rule carried to another type
    /// ([`abstraction`]) is not written for a term that is searched itself.
    pub searched: Arc<std::collections::HashSet<String>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_instrs: 3,
            budget: Duration::from_secs(20),
            environments: 6,
            max_values: 60_000,
            max_ratio: 0.75,
            // Terms are searched in parallel, so each proves with one solver.
            verify: crate::verify::Options {
                timeout_ms: 30_000,
                jobs: 1,
                ..Default::default()
            },
            searched: Arc::default(),
        }
    }
}

/// A term to synthesize for, with a name for its rule.
#[derive(Clone, Debug)]
pub struct Term {
    /// A name usable in a rule name (letters, digits, `_`).
    pub name: String,
    /// The expression.
    pub expr: Expr,
}

impl Term {
    /// The term `expr` with its scalar constants folded, as selection sees them
    /// (`u16(3)` is the constant 3 of u16, not a cast): unfolded, today's price of a term
    /// would be that of its generic code.
    pub fn new(name: impl Into<String>, expr: &Expr) -> Term {
        Term {
            name: name.into(),
            expr: crate::lift::fold_scalar_constants(expr),
        }
    }
}

/// What synthesis concluded for one term.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    /// A proved sequence cheaper than today's selection.
    Found {
        /// The sequence, as the rule's right-hand side prints it.
        rhs: String,
        /// What selection pays for the sequence.
        cost: f64,
        /// The rule, as text in the rule language.
        rule: String,
    },
    /// The cheapest matching sequence is not cheaper than today's selection by the margin
    /// [`Options::max_ratio`] asks.
    NotCheaper {
        /// Its cost.
        cost: f64,
    },
    /// No sequence of up to `K` instructions matched (or every match was refuted).
    NoneFound,
    /// The term could not be searched (the message says why).
    Skipped(String),
}

/// The outcome for one term.
#[derive(Clone, Debug)]
pub struct TermReport {
    /// The term.
    pub term: Term,
    /// What selection pays for it today.
    pub today: f64,
    /// The conclusion.
    pub verdict: Verdict,
    /// How the search went.
    pub stats: SearchStats,
}

/// How one term's search went (the summary's columns, and what `--json` and the progress
/// file record).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SearchStats {
    /// Values kept by the enumeration.
    pub kept: usize,
    /// Values built.
    pub built: usize,
    /// Deepest level completed, and whether the budget cut the search.
    pub levels_done: u32,
    /// True when the time or value budget stopped the enumeration.
    pub stopped: bool,
    /// Matches the prover refuted.
    pub refuted: usize,
    /// Counterexamples added to the fingerprint environments.
    pub learned: usize,
    /// Matches ruled out by a learned counterexample without a proof.
    pub pruned: usize,
    /// Rules the found one carried to other types (proved there; [`abstraction`]).
    #[serde(default)]
    pub abstracted: usize,
    /// Enumerations run (one more per round that learned a counterexample).
    pub rounds: u32,
    /// Seconds spent.
    pub seconds: f64,
}

/// The FPIR operations (and the few plain ones targets lack) at every element type, as
/// terms over variables `a`, `b`, `c` filling one register of `register_bits`: what
/// selection is asked for most.
pub fn default_terms(register_bits: u32) -> Vec<Term> {
    use Op::*;
    let ops: [(Op, usize); 14] = [
        (WideningAdd, 2),
        (WideningSub, 2),
        (WideningMul, 2),
        (SaturatingAdd, 2),
        (SaturatingSub, 2),
        (HalvingAdd, 2),
        (HalvingSub, 2),
        (RoundingHalvingAdd, 2),
        (Absd, 2),
        (Abs, 1),
        (Mul, 2),
        (Min, 2),
        (Max, 2),
        (SaturatingCast, 1),
    ];
    let mut out = Vec::new();
    for (op, arity) in ops {
        for elem in USER_INT_ELEMS {
            let lanes = register_bits / elem.bits();
            let t = Type::vec(elem, lanes);
            let vars: Vec<Expr> = ["a", "b", "c"][..arity]
                .iter()
                .map(|n| Expr::var(*n, t))
                .collect();
            let targets: Vec<Option<Type>> = if op == SaturatingCast {
                // Narrowing to each narrower type, at the lane count of the input.
                USER_INT_ELEMS
                    .iter()
                    .filter(|e| e.bits() < elem.bits())
                    .map(|&e| Some(Type::vec(e, lanes)))
                    .collect()
            } else {
                vec![None]
            };
            for ty in targets {
                let Ok(e) = Expr::build(op.clone(), ty, vars.clone()) else {
                    continue;
                };
                if e.ty().total_bits() > u64::from(register_bits) {
                    continue;
                }
                let result = if e.ty() == t {
                    String::new()
                } else {
                    format!("_to_{}", type_name(e.ty()))
                };
                out.push(Term {
                    name: format!("{}_{}{result}", op.name(), type_name(t)),
                    expr: e,
                });
            }
        }
    }
    out
}

/// Constants an immediate may take: the term's own constants and a few that recur in
/// instruction sequences (shift amounts, lane selections).
fn immediates(term: &Expr) -> Vec<i128> {
    let mut out: Vec<i128> = vec![0, 1, 2, 4, 7, 8, 15, 16, 31, 0x4e, 0xb1, 0xd8];
    out.extend(term_constants(term));
    out.sort_unstable();
    out.dedup();
    out
}

/// The term's constants, and the values a generalized rule may write as functions of one
/// (`generalize::TEMPLATES`: `c0 - 1`, `1 << c0`, ...), so that a sequence found for one
/// constant can be written for a range of them.
fn term_constants(term: &Expr) -> Vec<i128> {
    let mut out = Vec::new();
    for n in crate::ir::visit::post_order(term) {
        if let Op::Const(bits) = n.op() {
            let k = crate::interp::lane::to_i128(*bits, n.ty().elem);
            out.push(k);
            out.extend(generalize::related_values(k));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The leaves sequences are built from: the term's variables, and vectors of their type
/// and of the term's: all zeros, all ones, and each of [`term_constants`] in every lane.
fn leaves(term: &Expr) -> Vec<Expr> {
    let mut out: Vec<Expr> = crate::ir::visit::free_vars(term)
        .into_iter()
        .map(|(n, t)| Expr::var(&*n, t))
        .collect();
    let mut types: Vec<Type> = out.iter().map(|e| e.ty()).collect();
    types.push(term.ty());
    types.sort();
    types.dedup();
    let mut values = vec![0, 1];
    values.extend(
        term_constants(term)
            .into_iter()
            .filter(|v| !(0..=1).contains(v)),
    );
    for t in types {
        for &v in &values {
            if let Ok(c) = Expr::int(t.elem, v)
                && let Ok(b) = Expr::build(Op::Broadcast, Some(t), vec![c])
            {
                out.push(b);
            }
        }
    }
    out
}

/// The fingerprint environments of a term, from fixed seeds: lanes over the whole range of
/// their type mixed with edge cases, and in every other environment lanes in the range of
/// a type of half the width (a narrowing, a saturation or a halving differs from its
/// wrapping look-alikes only on such values).
fn environments(term: &Expr, n: u64) -> Vec<Env> {
    use crate::interp::{Value, lane};
    (0..n)
        .map(|k| {
            let mut rng = crate::util::rng::SplitMix64::new(0x5e_ed00 + k);
            let mut env = Env::new();
            for (name, ty) in crate::ir::visit::free_vars(term) {
                let e = ty.elem;
                let half = (e.bits() / 2).max(1);
                let lanes = (0..ty.lanes)
                    .map(|_| {
                        if k % 2 == 0 || e.bits() < 8 {
                            rng.lane(e)
                        } else {
                            let (lo, hi) = if e.is_signed() {
                                (-(1i128 << (half - 1)), (1i128 << (half - 1)) - 1)
                            } else {
                                (0, (1i128 << half) - 1)
                            };
                            lane::from_i128(rng.range_i128(lo, hi), e)
                        }
                    })
                    .collect();
                env.set(name, Value { ty, lanes });
            }
            env
        })
        .collect()
}

/// Most enumerations per term: the first, and one more for each round that learned a
/// counterexample (CEGIS).
const MAX_ROUNDS: u32 = 4;

/// Searches, checks and proves for one term, learning from refutations: a counterexample
/// the prover finds joins the fingerprint environments, the matches it rules out are
/// dropped without a proof, and when no match is proved the enumeration runs again with
/// it (values that looked equal before may differ on it, so a match hidden behind a wrong
/// one can appear), up to [`MAX_ROUNDS`] enumerations.
pub fn synthesize(term: &Term, backend: &Backend, opts: &Options, index: usize) -> TermReport {
    let start = Instant::now();
    // Both sides priced alike: the term's selection and the sequence as DAGs over the
    // variables (no loads, no chunks).
    let today = crate::lower::select_as_is(&term.expr, backend).cost;
    let mut report = TermReport {
        term: term.clone(),
        today,
        verdict: Verdict::NoneFound,
        stats: SearchStats::default(),
    };
    if let Some((name, _)) = crate::ir::visit::buffers(&term.expr).into_iter().next() {
        report.verdict = Verdict::Skipped(format!(
            "reads the buffer `{name}`: terms are searched over vector variables (declare a \
             variable of the loaded type instead)"
        ));
        return report;
    }
    let mut instrs: Vec<Arc<Instr>> = backend.instrs.values().flatten().cloned().collect();
    instrs.sort_by(|a, b| a.key.cmp(&b.key));
    search_rounds(
        term,
        &instrs,
        immediates(&term.expr),
        opts,
        start,
        &mut report,
        &mut |search, envs, report| {
            if let Some(leaf) = &search.leaf {
                report.verdict = Verdict::Skipped(format!(
                    "equals `{leaf}` on every input tried: a simplification for lifting, not a lowering rule"
                ));
                return false;
            }
            check_matches(term, search.matches, backend, opts, index, envs, report);
            true
        },
    );
    report.stats.seconds = start.elapsed().as_secs_f64();
    report
}

/// The enumeration rounds of one term (CEGIS): each enumerates over `instrs` with the
/// fingerprint environments so far and hands its search to `check`, which sets the verdict
/// and may add learned counterexamples to the environments (and returns false to stop).
/// Another round runs while no rule is found, a counterexample was learned and the budget
/// did not cut the search, up to [`MAX_ROUNDS`].
fn search_rounds(
    term: &Term,
    instrs: &[Arc<Instr>],
    immediates: Vec<i128>,
    opts: &Options,
    start: Instant,
    report: &mut TermReport,
    check: &mut dyn FnMut(enumerate::Search, &mut Vec<Env>, &mut TermReport) -> bool,
) {
    let mut envs = environments(&term.expr, opts.environments);
    while report.stats.rounds < MAX_ROUNDS {
        report.stats.rounds += 1;
        // The last round's conclusion is the term's.
        report.verdict = Verdict::NoneFound;
        let en = match enumerate::Enumerator::new(
            &term.expr,
            &leaves(&term.expr),
            instrs,
            &envs,
            immediates.clone(),
        ) {
            Ok(en) => en,
            Err(e) => {
                report.verdict = Verdict::Skipped(e);
                return;
            }
        };
        let search = en.run(enumerate::Limits {
            max_instrs: opts.max_instrs,
            deadline: start + opts.budget,
            max_values: opts.max_values,
        });
        report.stats.kept = search.kept;
        report.stats.built += search.built;
        report.stats.levels_done = search.levels_done;
        report.stats.stopped = search.stopped;
        let learned_before = report.stats.learned;
        if !check(search, &mut envs, report)
            || !matches!(
                report.verdict,
                Verdict::NoneFound | Verdict::NotCheaper { .. }
            )
            || report.stats.learned == learned_before
            || report.stats.stopped
        {
            return;
        }
    }
}

/// Prices the matches of one enumeration and proves them cheapest first until one is
/// proved (the verdict becomes `Found`) or the rest are not cheaper by the margin. A
/// refutation's counterexample is added to `envs` and rules out the later matches that
/// differ from the term on it.
fn check_matches(
    term: &Term,
    matches: Vec<Expr>,
    backend: &Backend,
    opts: &Options,
    index: usize,
    envs: &mut Vec<Env>,
    report: &mut TermReport,
) {
    // Cheapest first; of equal cost, the fewest nodes (reinterpretations cost nothing but
    // read worse), then the first found.
    let mut priced: Vec<(f64, usize, usize, Expr)> = matches
        .into_iter()
        .enumerate()
        .map(|(k, m)| {
            let nodes = crate::ir::visit::post_order(&m).len();
            (sequence_cost(&m, backend), nodes, k, m)
        })
        .collect();
    priced.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut learned: Vec<Env> = Vec::new();
    for (cost, _, _, rhs) in priced {
        if cost > opts.max_ratio * report.today + 1e-9 {
            if matches!(report.verdict, Verdict::NoneFound) {
                report.verdict = Verdict::NotCheaper { cost };
            }
            break;
        }
        if learned.iter().any(|env| differs(&term.expr, &rhs, env)) {
            report.stats.pruned += 1;
            continue;
        }
        let rule = rule_text(term, &rhs, cost, report.today, index);
        match prove(&rule, backend, opts) {
            Ok(None) => {
                // A term with a constant: the rule for a range of it, where one is proved.
                let rule = generalize::generalize(
                    term,
                    &rhs,
                    &rule_comment(term, &rhs, cost, report.today, true),
                    &format!("synth_{}_{index}", term.name),
                    &|r: &str| prove(r, backend, opts),
                )
                .unwrap_or(rule);
                let carried = abstraction::abstract_rule(
                    term,
                    &rhs,
                    index,
                    &abstraction::Classes::of(backend),
                    backend,
                    opts,
                );
                report.stats.abstracted = carried.len();
                let rule = std::iter::once(rule).chain(carried).collect::<String>();
                report.verdict = Verdict::Found {
                    rhs: rhs.to_string(),
                    cost,
                    rule,
                };
                break;
            }
            Ok(Some(cex)) => {
                if std::env::var_os("HARROW_SYNTH_DEBUG").is_some() {
                    eprintln!("REFUTED {rule}    {}", cex.text);
                }
                report.stats.refuted += 1;
                // The prover's inputs are at the term's lane count (a lowering rule is
                // checked at its own width); kept only where the interpreter agrees they
                // tell the two apart.
                if let Some(env) = env_of_counterexample(&term.expr, &cex)
                    && differs(&term.expr, &rhs, &env)
                {
                    report.stats.learned += 1;
                    envs.push(env.clone());
                    learned.push(env);
                }
            }
            Err(e) => {
                report.verdict = Verdict::Skipped(e);
                break;
            }
        }
    }
}

/// The environment of a counterexample's inputs, when it binds every free variable of
/// `term` at its type.
fn env_of_counterexample(term: &Expr, cex: &crate::verify::Counterexample) -> Option<Env> {
    let mut env = Env::new();
    for (name, ty) in crate::ir::visit::free_vars(term) {
        let (_, v) = cex.inputs.iter().find(|(n, _)| **n == *name)?;
        if v.ty != ty {
            return None;
        }
        env.set(name, v.clone());
    }
    Some(env)
}

/// True when `a` and `b` evaluate to different values in `env` (or one of them fails).
fn differs(a: &Expr, b: &Expr, env: &Env) -> bool {
    match (crate::interp::eval(a, env), crate::interp::eval(b, env)) {
        (Ok(x), Ok(y)) => x != y,
        _ => true,
    }
}

/// What selection pays for a sequence: its instructions (and vector constants), each node
/// once, priced as selection prices a chosen DAG.
fn sequence_cost(e: &Expr, backend: &Backend) -> f64 {
    crate::lower::select::DagCosts::new(
        backend.target.register_bits(),
        backend.target.folds_widening_loads(),
    )
    .with_pricing(crate::lower::generic_pricing(&*backend.target))
    .cost(e)
}

/// The comment line of the rule for `term => rhs`: where it comes from and what it saves;
/// `generalized` adds that the term's constant became the wildcard `c0`.
fn rule_comment(term: &Term, rhs: &Expr, cost: f64, today: f64, generalized: bool) -> String {
    let instrs = crate::ir::visit::post_order(rhs)
        .iter()
        .filter(|n| matches!(n.op(), Op::Instr(_)))
        .count();
    let range = if generalized {
        " Found at that constant; proved as `c0` over the range below."
    } else {
        ""
    };
    format!(
        ";; `{}`: {instrs} instruction(s), cost {cost:.2} (selection without this rule: {today:.2}).{range}\n",
        term.expr
    )
}

/// The rule for `term => rhs`, with a comment saying where it comes from.
fn rule_text(term: &Term, rhs: &Expr, cost: f64, today: f64, index: usize) -> String {
    let mut s = rule_comment(term, rhs, cost, today, false);
    let _ = writeln!(
        s,
        "rule synth_{}_{index}({}):\n    {} => {}",
        term.name,
        rule_params(term),
        term.expr,
        rhs
    );
    s
}

/// A rule's parameter list for `term`: its variables with their types (`a: u8x32, b: u8x32`).
fn rule_params(term: &Term) -> String {
    crate::ir::visit::free_vars(&term.expr)
        .into_iter()
        .map(|(n, t)| format!("{n}: {}", type_name(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `u8x32` for a vector type, `u8` for a scalar.
fn type_name(t: Type) -> String {
    if t.is_scalar() {
        t.elem.name().to_string()
    } else {
        format!("{}x{}", t.elem.name(), t.lanes)
    }
}

/// Proves one rule text: `Ok(None)` when proved, the counterexample when refuted, an error
/// when the prover cannot decide or the text does not load.
pub type Prover<'a> = dyn Fn(&str) -> Result<Option<crate::verify::Counterexample>, String> + 'a;

/// Loads `rule` as a rule file for the backend's instructions and proves it: `Ok(None)`
/// when proved, the counterexample when the prover refutes it.
fn prove(
    rule: &str,
    backend: &Backend,
    opts: &Options,
) -> Result<Option<crate::verify::Counterexample>, String> {
    prove_as(rule, RuleKind::Lower, Some(&backend.instrs), &opts.verify)
}

/// Loads `rule` as a rule file of `kind` (over `instrs`, for lowering rules) and proves it
/// at every instantiation: `Ok(None)` when proved, the first counterexample when refuted.
fn prove_as(
    rule: &str,
    kind: RuleKind,
    instrs: Option<&Arc<crate::ir::instr::InstrTable>>,
    verify: &crate::verify::Options,
) -> Result<Option<crate::verify::Counterexample>, String> {
    let src = Source::new("<synthesized>", rule.to_string());
    let set = RuleSet::load_with(&src, kind, instrs)
        .map_err(|d| format!("a synthesized rule does not load (a bug): {d}\n{rule}"))?;
    let cache = std::sync::Mutex::new(crate::verify::Cache::in_memory());
    let outcomes = crate::verify::verify_rules(&set.rules, verify, &cache, &|_, _| {});
    if outcomes.is_empty() {
        return Err(format!(
            "a synthesized rule has no instantiation (a bug):\n{rule}"
        ));
    }
    for o in outcomes {
        match o.verdict {
            crate::verify::Verdict::Proved => {}
            crate::verify::Verdict::Counterexample(c) => return Ok(Some(c)),
            crate::verify::Verdict::Unknown(why) | crate::verify::Verdict::Error(why) => {
                return Err(format!("the prover did not decide {}: {why}", o.rule));
            }
        }
    }
    Ok(None)
}

/// The rule file for the found rules of `reports`.
pub fn rule_file(target: &str, reports: &[TermReport], opts: &Options) -> String {
    let mut s = format!(
        ";; Lowering rules for {target} synthesized by `harrow synth lower --target {target} \
         --max-instrs {}`: each is a sequence of target instructions equal to its term (proved \
         with z3) that costs at most {:.0}% of what selection chooses without it. Generated: do \
         not edit; run the command again.\n",
        opts.max_instrs,
        opts.max_ratio * 100.0
    );
    let mut seen = std::collections::HashSet::new();
    for r in reports {
        if let Verdict::Found { rule, .. } = &r.verdict {
            s.push('\n');
            s.push_str(&without_repeats(rule, &mut seen));
        }
    }
    s
}

/// The rules of `block` (a term's rule and the ones carried to other types) whose
/// parameters and left-hand side are not in `seen`, which gains them: two terms may carry
/// their rules to the same type, and the first in term order is kept, in a run and in a
/// merge alike.
fn without_repeats(block: &str, seen: &mut std::collections::HashSet<String>) -> String {
    let lines: Vec<&str> = block.lines().collect();
    let mut out = String::new();
    let mut start = 0;
    while start < lines.len() {
        // A rule: its `;;` lines, the `rule` line, and its indented lines.
        let mut end = start;
        while end < lines.len() && lines[end].starts_with(";;") {
            end += 1;
        }
        let head = end;
        end += 1;
        while end < lines.len() && lines[end].starts_with(' ') {
            end += 1;
        }
        let end = end.min(lines.len());
        let params = lines
            .get(head)
            .and_then(|l| l.split_once('('))
            .map_or("", |(_, p)| p);
        let lhs = lines
            .get(head + 1)
            .and_then(|l| l.split_once(" => "))
            .map_or("", |(l, _)| l.trim());
        if seen.insert(format!("{params} {lhs}")) {
            for l in &lines[start..end] {
                out.push_str(l);
                out.push('\n');
            }
        }
        start = end;
    }
    if !block.ends_with('\n') {
        out.pop();
    }
    out
}

/// Merges rule files written by shards of one run (`--shard I/N`) into the file an unsharded
/// run writes: the header once, then every rule in the order of its term in the whole list
/// (the index its name ends with). Each input is `(name, text)`; an input that is not such
/// a file, or headers that differ (shards of different runs), are refused.
pub fn merge(files: &[(String, String)]) -> Result<String, String> {
    let mut header: Option<&str> = None;
    let mut blocks: Vec<(usize, String)> = Vec::new();
    for (name, text) in files {
        let (head, rest) = text.split_once("\n").unwrap_or((text, ""));
        if !head.starts_with(";; Lowering rules for ")
            && !head.starts_with(";; Lifting rules synthesized")
        {
            return Err(format!(
                "{name} is not a rule file written by `harrow synth lower` or `harrow synth lift`"
            ));
        }
        match header {
            Some(h) if h != head => {
                return Err(format!(
                    "{name} comes from another run (its first line differs)"
                ));
            }
            _ => header = Some(head),
        }
        for block in rest.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
            let index = block
                .lines()
                .find_map(|l| l.strip_prefix("rule synth_"))
                .and_then(|l| l.split('(').next())
                .and_then(|n| n.rsplit('_').next())
                .and_then(|k| k.parse::<usize>().ok())
                .ok_or_else(|| format!("{name}: a rule without a term index: {block}"))?;
            if blocks.iter().any(|(k, _)| *k == index) {
                return Err(format!("{name}: the rule of term {index} is in two shards"));
            }
            blocks.push((index, block.to_string()));
        }
    }
    let header = header.ok_or("no files to merge")?;
    blocks.sort_by_key(|(k, _)| *k);
    let mut out = format!("{header}\n");
    let mut seen = std::collections::HashSet::new();
    for (_, b) in blocks {
        out.push('\n');
        out.push_str(&without_repeats(&b, &mut seen));
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand_backend(target: &str) -> Arc<Backend> {
        crate::verify::solver_available("z3").unwrap_or_else(|e| panic!("{e}"));
        crate::targets::backend_from(target, crate::targets::RulesFrom::Hand)
            .expect("target builds")
    }

    fn term(text: &str, vars: &[(&str, &str)]) -> Term {
        let mut decls = crate::syntax::elab::Decls::new();
        for (n, t) in vars {
            decls = decls.var(n, Type::parse(t, false).expect("a type"));
        }
        Term {
            name: "t".into(),
            expr: crate::syntax::halide::parse_str(text, &decls).expect("the term parses"),
        }
    }

    /// Asserts that `r` was skipped for a reason that says `why`.
    fn assert_skipped(r: &TermReport, why: &str) {
        assert!(
            matches!(&r.verdict, Verdict::Skipped(w) if w.contains(why)),
            "{:?}",
            r.verdict
        );
    }

    #[test]
    fn finds_and_proves_the_two_instruction_saturating_subtraction_avx2_lacks() {
        let backend = hand_backend("x86-avx2");
        let t = term("saturating_sub(a, b)", &[("a", "u32x8"), ("b", "u32x8")]);
        let opts = Options {
            max_instrs: 2,
            ..Default::default()
        };
        let r = synthesize(&t, &backend, &opts, 0);
        let Verdict::Found { rhs, cost, rule } = &r.verdict else {
            panic!("{:?}", r.verdict);
        };
        assert_eq!(
            rhs,
            "(uint32x8)_mm256_sub_epi32(a, (uint32x8)_mm256_min_epu32(a, b))"
        );
        assert!(*cost <= opts.max_ratio * r.today, "{cost} vs {}", r.today);
        assert!(
            rule.contains("rule synth_t_0(a: u32x8, b: u32x8):"),
            "{rule}"
        );
        // One instruction is not enough: nothing of one instruction is kept.
        let one = synthesize(
            &t,
            &backend,
            &Options {
                max_instrs: 1,
                ..opts
            },
            0,
        );
        assert!(
            matches!(one.verdict, Verdict::NoneFound),
            "{:?}",
            one.verdict
        );
    }

    #[test]
    fn a_found_rule_is_carried_to_the_other_widths_and_proved_there() {
        let backend = hand_backend("x86-avx2");
        let t = term("halving_sub(a, b)", &[("a", "u8x32"), ("b", "u8x32")]);
        let wide16 = term("halving_sub(a, b)", &[("a", "u16x16"), ("b", "u16x16")]);
        let run = |searched: &[&Term]| {
            let opts = Options {
                max_instrs: 2,
                searched: Arc::new(searched.iter().map(|t| t.expr.to_string()).collect()),
                ..Default::default()
            };
            synthesize(&t, &backend, &opts, 7)
        };
        let r = run(&[&t]);
        let Verdict::Found { rule, .. } = &r.verdict else {
            panic!("{:?}", r.verdict);
        };
        // 128-bit bytes and 16-bit lanes, and 256-bit 16-bit lanes; no 32-bit lanes, which
        // have no average instruction.
        for want in [
            "rule synth_t_as_u8x16_7(a: u8x16, b: u8x16):",
            "_mm_sub_epi8(a, (uint8x16)_mm_avg_epu8(a, b))",
            "rule synth_t_as_u16x8_7(a: u16x8, b: u16x8):",
            "rule synth_t_as_u16x16_7(a: u16x16, b: u16x16):",
        ] {
            assert!(rule.contains(want), "{want} missing from\n{rule}");
        }
        assert!(!rule.contains("u32x"), "{rule}");
        assert_eq!(r.stats.abstracted, 3);
        assert!(matches!(
            prove(rule, &backend, &Options::default()),
            Ok(None)
        ));
        // A term the run searches itself is not carried to.
        let r = run(&[&t, &wide16]);
        assert_eq!(r.stats.abstracted, 2);
        let Verdict::Found { rule, .. } = &r.verdict else {
            panic!("{:?}", r.verdict);
        };
        assert!(!rule.contains("u16x16"), "{rule}");
    }

    #[test]
    fn a_rule_two_terms_carry_to_one_type_is_written_once() {
        let header = ";; Lowering rules for x86-avx2 synthesized by a test\n";
        let rule = |name: &str, k: usize, ty: &str| {
            format!(";; why\nrule synth_{name}_{k}(a: {ty}):\n    abs(a) => a\n")
        };
        let first = format!(
            "{header}\n{}{}",
            rule("p", 0, "u8x16"),
            rule("p_as_q", 0, "u8x8")
        );
        let second = format!(
            "{header}\n{}{}",
            rule("r", 1, "u16x8"),
            rule("r_as_q", 1, "u8x8")
        );
        let merged = merge(&[("b".into(), second), ("a".into(), first)]).unwrap();
        assert_eq!(merged.matches("rule synth_").count(), 3, "{merged}");
        assert!(merged.contains("synth_p_as_q_0"), "{merged}");
        assert!(!merged.contains("synth_r_as_q_1"), "{merged}");
    }

    #[test]
    fn the_prover_refutes_what_the_fingerprints_cannot_tell_apart() {
        let backend = hand_backend("x86-avx2");
        let opts = Options::default();
        // Equal on every input the enumerator tries except a pair 2^31 apart: only the
        // proof can tell.
        let wrong = "rule w(a: u32x8, b: u32x8):\n    saturating_sub(a, b) => (uint32x8)_mm256_sub_epi32(a, b)\n";
        assert!(matches!(prove(wrong, &backend, &opts), Ok(Some(_))));
        let right = "rule r(a: u32x8, b: u32x8):\n    saturating_sub(a, b) => (uint32x8)_mm256_sub_epi32(a, (uint32x8)_mm256_min_epu32(a, b))\n";
        assert_eq!(prove(right, &backend, &opts), Ok(None));
    }

    #[test]
    fn a_refuted_match_teaches_the_search_its_counterexample() {
        // `avg(a, b -sat 1)` equals `halving_add(a, b)` on the fingerprints but not where
        // `b` is 0 and `a` odd: the prover refutes it once, its counterexample joins the
        // fingerprints, and the second enumeration no longer offers it.
        let backend = hand_backend("x86-avx2");
        let t = term("halving_add(a, b)", &[("a", "u16x16"), ("b", "u16x16")]);
        let opts = Options {
            max_instrs: 2,
            ..Default::default()
        };
        let r = synthesize(&t, &backend, &opts, 0);
        assert_eq!(
            (r.stats.refuted, r.stats.learned, r.stats.rounds),
            (1, 1, 2),
            "{r:?}"
        );
        assert!(
            !matches!(r.verdict, Verdict::Found { .. }),
            "{:?}",
            r.verdict
        );
    }

    #[test]
    fn a_term_equal_to_its_operand_is_left_to_lifting() {
        let backend = hand_backend("x86-avx2");
        let t = term("abs(a)", &[("a", "u8x32")]);
        let r = synthesize(
            &t,
            &backend,
            &Options {
                max_instrs: 1,
                ..Default::default()
            },
            0,
        );
        assert_skipped(&r, "simplification");
    }

    #[test]
    fn a_term_reading_a_buffer_is_refused_with_the_reason() {
        let backend = hand_backend("x86-avx2");
        let decls = crate::syntax::elab::Decls::new()
            .var("a", Type::parse("u16x16", false).expect("a type"))
            .buffer("img", crate::types::Elem::U16);
        let expr = crate::syntax::halide::parse_str("a + img[ramp(0, 1, 16)]", &decls)
            .expect("the term parses");
        let t = Term {
            name: "t".into(),
            expr,
        };
        let r = synthesize(&t, &backend, &Options::default(), 0);
        assert_skipped(&r, "reads the buffer `img`");
    }

    #[test]
    fn default_terms_fill_one_register_and_have_distinct_names() {
        let terms = default_terms(256);
        assert!(terms.len() > 90, "{}", terms.len());
        let mut names: Vec<&str> = terms.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), terms.len());
        assert!(terms.iter().all(|t| t.expr.ty().total_bits() <= 256));
    }
}
