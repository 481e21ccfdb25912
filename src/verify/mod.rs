//! Proving rules with an SMT solver.
//!
//! Every instantiation of every rule is proved at full bit width: first at the smallest lane
//! count its pattern needs (one lane for lane-wise rules), then confirmed at the width of a
//! 128-bit register. Each query's text is hashed; proved queries are recorded in a cache file
//! kept in the repository (`verify/cache.txt`), so unchanged proofs replay without the
//! solver. A counterexample is re-run on the reference interpreter before it is reported,
//! which also checks the encoding.

pub mod cache;
pub mod cases;
pub mod crosscheck;
pub mod exhaust;
pub mod obligation;
pub mod smt;
pub mod split;
pub mod uf;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use easy_smt::{Context, ContextBuilder, Response, SExpr};

use crate::interp::{Env, Value, eval, lane};
use crate::rules::{Inst, Rule, cexpr};
use crate::types::Elem;
pub use cache::Cache;
pub use obligation::{Obligation, Slot};

/// How a proof attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Both sides agree for every input satisfying the predicate.
    Proved,
    /// They differ on the inputs it gives.
    Counterexample(Counterexample),
    /// The solver gave up (timeout or `unknown`).
    Unknown(String),
    /// Something else went wrong (the solver is missing, the encoding failed, ...).
    Error(String),
}

/// Inputs on which a rule's two sides differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// The inputs and the two results, readable.
    pub text: String,
    /// The rule's variables with their values, at the lane count of the query that failed
    /// (for a search that learns from it, as synthesis does).
    pub inputs: Vec<(String, Value)>,
    /// The values of the rule's constant wildcards (`c0`, ...).
    pub constants: Vec<(String, i128)>,
}

/// The result for one instantiation.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Rule name.
    pub rule: String,
    /// `file:line` of the rule.
    pub location: String,
    /// The type instantiation.
    pub instantiation: String,
    /// Lane counts checked.
    pub lanes: Vec<u32>,
    /// The verdict.
    pub verdict: Verdict,
    /// True when every query was answered from the cache.
    pub cached: bool,
    /// Solver time spent.
    pub seconds: f64,
}

/// Options of a verification run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Per-query solver timeout in milliseconds.
    pub timeout_ms: u64,
    /// Parallel solver processes.
    pub jobs: usize,
    /// Also confirm at the width of a 128-bit register.
    pub full_width: bool,
    /// The solver program (`z3`).
    pub solver: String,
    /// Write every query the solver runs to this folder (`<rule>-<n>.smt2`).
    pub dump: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout_ms: 60_000,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            full_width: true,
            solver: "z3".into(),
            dump: None,
        }
    }
}

/// The solvers harrow can drive, with their command-line arguments for SMT-LIB2 on
/// standard input and a per-query time limit in milliseconds.
pub const SOLVERS: &[&str] = &["z3", "cvc5"];

fn solver_args(solver: &str, timeout_ms: u64) -> Result<Vec<String>, String> {
    match solver {
        "z3" => Ok(vec![
            "-smt2".into(),
            "-in".into(),
            "-v:0".into(),
            format!("-t:{timeout_ms}"),
        ]),
        "cvc5" => Ok(vec![
            "--lang=smt2".into(),
            "--incremental".into(),
            "--produce-models".into(),
            format!("--tlimit-per={timeout_ms}"),
        ]),
        other => Err(format!(
            "unknown solver `{other}`; harrow drives {}",
            SOLVERS.join(" and ")
        )),
    }
}

/// Checks that the solver can be started, with a message saying how to install it.
pub fn solver_available(solver: &str) -> Result<(), String> {
    solver_args(solver, 1)?;
    match std::process::Command::new(solver).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => match std::process::Command::new(solver).arg("-version").output() {
            Ok(o) if o.status.success() => Ok(()),
            _ => Err(format!(
                "the SMT solver `{solver}` is not installed; install it with `apt-get install {solver}` (or run scripts/install-deps.sh)"
            )),
        },
    }
}

fn new_context(opts: &Options) -> Result<Context, String> {
    let mut ctx = ContextBuilder::new()
        .solver(&opts.solver)
        .solver_args(solver_args(&opts.solver, opts.timeout_ms)?)
        .build()
        .map_err(|e| format!("cannot start {}: {e}", opts.solver))?;
    if opts.solver == "cvc5" {
        // Without a logic cvc5 picks one at the first declaration and, after
        // `(reset-assertions)`, no longer knows `true`; ALL keeps every theory in scope.
        ctx.set_logic("ALL")
            .map_err(|e| format!("cannot configure {}: {e}", opts.solver))?;
    }
    Ok(ctx)
}

/// Returns the solver to its initial state. Each proof query then runs in z3's
/// non-incremental mode: after `push`, z3 switches to an incremental solver without the
/// bit-vector preprocessing that makes identities such as 64-bit averaging easy (seconds
/// instead of minutes). cvc5 answers nothing to `(reset)` (it forgets `:print-success`
/// first), so it gets `(reset-assertions)`, which keeps the options and drops the
/// declarations just the same.
fn reset(ctx: &mut Context, solver: &str) -> std::io::Result<()> {
    let full = solver != "cvc5";
    let word = if full { "reset" } else { "reset-assertions" };
    let cmd = ctx.list(vec![ctx.atom(word)]);
    ctx.raw_send(cmd)?;
    let r = ctx.raw_recv()?;
    if ctx.display(r).to_string() != "success" {
        return Err(std::io::Error::other(format!(
            "unexpected answer to ({word}): {}",
            ctx.display(r)
        )));
    }
    if full {
        ctx.set_option(":print-success", ctx.true_())?;
        ctx.set_option(":produce-models", ctx.true_())?;
    }
    Ok(())
}

/// The lane counts to check an instantiation at.
fn lane_counts(inst: &Inst, full_width: bool) -> Vec<u32> {
    // A rule over fixed vector types (a lowering rule) is checked at exactly that width.
    if let Some(n) = inst.lhs.lanes {
        return vec![n];
    }
    let widest = inst
        .vars
        .iter()
        .map(|e| e.bits())
        .chain(pattern_bits(&inst.lhs))
        .max()
        .unwrap_or(8);
    let full = (128 / widest.max(1)).max(1);
    if full_width && full > 1 {
        vec![1, full]
    } else {
        vec![1]
    }
}

fn pattern_bits(p: &crate::rules::Pat) -> Vec<u32> {
    let mut v = vec![p.elem.bits()];
    if let crate::rules::PatKind::Op(_, args) = &p.kind {
        for a in args {
            v.extend(pattern_bits(a));
        }
    }
    v
}

/// The query text of an obligation: declarations and the assertion. Its hash is the cache key.
fn query_text(ctx: &Context, ob: &Obligation) -> String {
    let mut t = String::new();
    for (name, w, _) in &ob.consts {
        t.push_str(&format!("(declare-const {name} (_ BitVec {w}))\n"));
    }
    t.push_str(&format!("(assert {})\n", ctx.display(ob.assertion)));
    t
}

/// Reads a bit-vector literal `#b...`, `#x...` or `(_ bvN w)`.
fn parse_bv(s: &str) -> Option<u128> {
    let s = s.trim();
    if let Some(b) = s.strip_prefix("#b") {
        u128::from_str_radix(b, 2).ok()
    } else if let Some(x) = s.strip_prefix("#x") {
        u128::from_str_radix(x, 16).ok()
    } else {
        let inner = s.strip_prefix("(_ bv")?;
        inner.split_whitespace().next()?.parse().ok()
    }
}

fn halide_const(v: i128, elem: Elem) -> String {
    if elem == Elem::I32 {
        v.to_string()
    } else {
        format!("({}){v}", elem.halide_name())
    }
}

/// Turns a model into a readable counterexample, confirmed on the interpreter.
fn explain(
    rule: &Rule,
    inst: &Inst,
    ob: &Obligation,
    model: &BTreeMap<String, u128>,
) -> Result<Counterexample, String> {
    let n = ob.lanes as usize;
    let mut vars: BTreeMap<usize, Vec<u128>> = BTreeMap::new();
    let mut free = crate::ir::visit::free_vars(&ob.lhs);
    free.extend(crate::ir::visit::free_vars(&ob.rhs));
    let var_n = |i: usize| ob.var_lanes.get(i).map_or(n, |&k| k as usize);
    let mut wild: BTreeMap<u32, i128> = BTreeMap::new();
    let mut bounds: BTreeMap<String, (i128, i128)> = BTreeMap::new();
    for (name, _, slot) in &ob.consts {
        let v = *model
            .get(name)
            .ok_or_else(|| format!("the model has no value for {name}"))?;
        match slot {
            Slot::Var { var, lane, elem } => {
                vars.entry(*var).or_insert_with(|| vec![0; var_n(*var)])[*lane] = v & elem.mask();
            }
            Slot::Wild(id, dom) => {
                wild.insert(*id, dom.value(v));
            }
            Slot::Product { .. } => {}
            Slot::Bound { var, upper } => {
                let e = bounds.entry(var.clone()).or_insert((0, 0));
                if *upper {
                    e.1 = v as i128;
                } else {
                    e.0 = v as i128;
                }
            }
        }
    }
    let mut env = Env::new();
    for (i, e) in inst.vars.iter().enumerate() {
        let lanes = vars.get(&i).cloned().unwrap_or_else(|| vec![0; var_n(i)]);
        env.set(
            format!("v{i}"),
            Value {
                ty: crate::types::Type::vec(*e, var_n(i) as u32),
                lanes,
            },
        );
    }
    for x in crate::ir::visit::free_vars(&ob.lhs)
        .into_iter()
        .chain(crate::ir::visit::free_vars(&ob.rhs))
    {
        let (name, ty) = x;
        if let Some(rest) = name.strip_prefix('c') {
            let id: u32 = rest
                .split(':')
                .next()
                .unwrap_or("")
                .parse()
                .unwrap_or(u32::MAX);
            let v = wild.get(&id).copied().unwrap_or(0);
            env.set(
                name.clone(),
                Value {
                    ty,
                    lanes: vec![lane::from_i128(v, ty.elem); ty.lanes as usize],
                },
            );
        }
    }
    for (j, (ast, elem)) in ob.computed.iter().enumerate() {
        let wf = |id: u32| wild.get(&id).copied();
        let mut bf = |v: &str| bounds.get(v).copied();
        let mut cenv = cexpr::CEnv {
            scope: &inst.scope,
            wild: &wf,
            bounds: &mut bf,
        };
        let v = cexpr::eval(ast, &mut cenv).map_err(|e| e.0)?;
        let name = format!("k{j}");
        let kn = free.get(name.as_str()).map_or(n, |t| t.lanes as usize);
        env.set(
            name,
            Value {
                ty: crate::types::Type::vec(*elem, kn as u32),
                lanes: vec![lane::from_i128(v, *elem); kn],
            },
        );
    }
    let left = eval(&ob.lhs, &env).map_err(|e| e.to_string())?;
    let right = eval(&ob.rhs, &env).map_err(|e| e.to_string())?;
    if left == right {
        return Err(format!(
            "the solver reports a counterexample that the interpreter does not confirm (an encoding bug): {model:?}"
        ));
    }
    let show = |v: &Value| -> String {
        let lanes: Vec<String> = v
            .to_ints()
            .iter()
            .map(|x| halide_const(*x, v.ty.elem))
            .collect();
        if lanes.len() == 1 {
            lanes[0].clone()
        } else {
            format!("[{}]", lanes.join(", "))
        }
    };
    let mut parts = Vec::new();
    for (i, name) in rule.vars.iter().enumerate() {
        let e = inst.vars[i];
        let vals: Vec<String> = vars.get(&i).map_or(vec![], |l| {
            l.iter()
                .map(|b| halide_const(lane::to_i128(*b, e), e))
                .collect()
        });
        parts.push(if vals.len() == 1 {
            format!("{name} = {}", vals[0])
        } else {
            format!("{name} = [{}]", vals.join(", "))
        });
    }
    for (id, v) in &wild {
        parts.push(format!("c{id} = {v}"));
    }
    for (var, (lo, hi)) in &bounds {
        parts.push(format!("bounds of {var} = [{lo}, {hi}]"));
    }
    let text = format!(
        "{}\n    left-hand side gives {}, right-hand side gives {}",
        parts.join(", "),
        show(&left),
        show(&right)
    );
    let inputs = rule
        .vars
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let v = env.vars.get(format!("v{i}").as_str())?;
            Some((name.to_string(), v.clone()))
        })
        .collect();
    let constants = wild.iter().map(|(id, v)| (format!("c{id}"), *v)).collect();
    Ok(Counterexample {
        text,
        inputs,
        constants,
    })
}

/// At most this many constant assignments are listed by the solver, model by model.
const ENUM_LIMIT: usize = 256;

/// The constant assignments under which the rule can fire, when there are few enough to
/// prove one by one. Proving each case with concrete constants is far easier for the solver
/// than one symbolic query (a division by a symbolic power of two, or by any divisor whose
/// reciprocal a predicate checks). Small domains are listed by evaluation; otherwise the solver lists models of the assumptions
/// (projected on the wildcards) until none is left. `None` when the rule has no wildcards,
/// when there are too many cases, or when the solver gives up listing them.
fn enumerate(
    ctx: &mut Context,
    rule: &Rule,
    inst: &Inst,
    opts: &Options,
    cache: &Mutex<Cache>,
) -> Result<Option<Vec<cache::Assignment>>, String> {
    let ob = obligation::build(ctx, rule, inst, 1, None, false)?;
    let wilds: Vec<(String, obligation::WildDomain, u32)> = ob
        .consts
        .iter()
        .filter_map(|(n, _, s)| match s {
            Slot::Wild(id, d) => Some((n.clone(), d.clone(), *id)),
            _ => None,
        })
        .collect();
    if wilds.is_empty() {
        return Ok(None);
    }
    let mut text = format!(
        "enumerate up to {ENUM_LIMIT}, or {} by evaluation narrowed per wildcard\n",
        cases::CASE_LIMIT
    );
    for (name, w, _) in &ob.consts {
        text.push_str(&format!("(declare-const {name} (_ BitVec {w}))\n"));
    }
    text.push_str(&format!("(assert {})\n", ctx.display(ob.assumptions)));
    let key = Cache::key(&opts.solver, &text);
    if let Some(r) = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .enumeration(&key)
    {
        return Ok(r);
    }
    if let Some(list) = cases::list_natively(rule, inst, &ob) {
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert_enumeration(key, Some(list.clone()));
        return Ok(Some(list));
    }
    let io = |e: std::io::Error| format!("solver I/O failed: {e}");
    reset(ctx, &opts.solver).map_err(io)?;
    ctx.push().map_err(io)?;
    for (name, w, _) in &ob.consts {
        let s = smt::sort(ctx, *w);
        ctx.declare_const(name, s).map_err(io)?;
    }
    ctx.assert(ob.assumptions).map_err(io)?;
    let mut found: Vec<cache::Assignment> = Vec::new();
    let result = loop {
        match ctx.check().map_err(io)? {
            Response::Unsat => break Some(found),
            Response::Unknown => break None,
            Response::Sat => {
                if found.len() >= ENUM_LIMIT {
                    break None;
                }
                let names: Vec<SExpr> = wilds.iter().map(|(n, ..)| ctx.atom(n)).collect();
                let values = ctx.get_value(names).map_err(io)?;
                let mut a = cache::Assignment::new();
                let mut block = Vec::new();
                for ((k, v), (_, dom, id)) in values.into_iter().zip(&wilds) {
                    let bits =
                        parse_bv(&ctx.display(v).to_string()).ok_or("cannot read a model value")?;
                    a.insert(*id, dom.value(bits));
                    block.push(ctx.eq(k, smt::konst(ctx, dom.width, bits)));
                }
                found.push(a);
                let same = block
                    .into_iter()
                    .reduce(|x, y| ctx.and(x, y))
                    .unwrap_or(ctx.true_());
                ctx.assert(ctx.not(same)).map_err(io)?;
            }
        }
    };
    ctx.pop().map_err(io)?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert_enumeration(key, result.clone());
    Ok(result)
}

/// What the solver said about one query.
enum Answer {
    Unsat,
    Unknown,
    /// A model, by original constant name.
    Sat(BTreeMap<String, u128>),
}

/// Sends one query: `consts` are (declared name, width, original name).
fn solve(
    ctx: &mut Context,
    consts: &[(String, u32, String)],
    funs: &std::collections::BTreeSet<u32>,
    assertion: SExpr,
    text: &str,
    label: &str,
    opts: &Options,
) -> Result<Answer, String> {
    if let Some(dir) = &opts.dump {
        let _ = std::fs::create_dir_all(dir);
        let key = Cache::key(&opts.solver, text);
        let _ = std::fs::write(
            dir.join(format!("{label}-{}.smt2", &key[..12])),
            format!("(set-option :produce-models true)\n{text}(check-sat)\n"),
        );
    }
    // Few input bits: try them all (exact, and faster than bit-blasting a divider).
    if funs.is_empty() {
        let inputs: Vec<(String, u32)> = consts.iter().map(|(n, w, _)| (n.clone(), *w)).collect();
        if let Some(p) = exhaust::compile(ctx, &inputs, assertion) {
            return Ok(match p.search() {
                None => Answer::Unsat,
                Some(vals) => Answer::Sat(
                    consts
                        .iter()
                        .zip(vals)
                        .map(|((_, _, original), v)| (original.clone(), v))
                        .collect(),
                ),
            });
        }
    }
    let io = |e: std::io::Error| format!("solver I/O failed: {e}");
    reset(ctx, &opts.solver).map_err(io)?;
    for (name, w, _) in consts {
        let s = smt::sort(ctx, *w);
        ctx.declare_const(name, s).map_err(io)?;
    }
    for w in funs {
        let s = smt::sort(ctx, *w);
        ctx.declare_fun(uf::mul_name(*w), vec![s, s], s)
            .map_err(io)?;
    }
    ctx.assert(assertion).map_err(io)?;
    match ctx.check().map_err(io)? {
        Response::Unsat => Ok(Answer::Unsat),
        Response::Unknown => Ok(Answer::Unknown),
        Response::Sat => {
            let names: Vec<SExpr> = consts.iter().map(|(n, ..)| ctx.atom(n)).collect();
            let values = ctx.get_value(names).map_err(io)?;
            let mut model = BTreeMap::new();
            for ((_, v), (name, _, original)) in values.into_iter().zip(consts) {
                let x = parse_bv(&ctx.display(v).to_string())
                    .ok_or_else(|| format!("cannot read the solver's value for {name}"))?;
                model.insert(original.clone(), x);
            }
            Ok(Answer::Sat(model))
        }
    }
}

/// Runs one obligation on the solver: lane by lane when it splits (see [`split`]).
fn run_query(
    ctx: &mut Context,
    rule: &Rule,
    inst: &Inst,
    ob: &Obligation,
    opts: &Options,
    case: Option<&cache::Assignment>,
    proved: &mut std::collections::HashSet<String>,
) -> Verdict {
    if ob.open_lanes == 0 {
        return Verdict::Proved;
    }
    let label = format!(
        "{}-{}",
        rule.decl.name.replace([' ', '(', ')'], ""),
        inst.describe().replace([' ', ',', '=', '(', ')'], "")
    );
    let queries: Vec<split::LaneQuery> = split::lane_queries(ctx, ob).unwrap_or_else(|| {
        vec![split::LaneQuery {
            consts: ob
                .consts
                .iter()
                .map(|(n, w, _)| (n.clone(), *w, n.clone()))
                .collect(),
            assertion: ob.assertion,
            text: query_text(ctx, ob),
        }]
    });
    let none = std::collections::BTreeSet::new();
    for split::LaneQuery {
        consts,
        assertion,
        text,
    } in &queries
    {
        if proved.contains(text) {
            continue;
        }
        // Products as uninterpreted functions first (see [`uf`]): a proof of that proves
        // this query; anything else means asking the exact query.
        let widths: std::collections::HashMap<String, u32> =
            consts.iter().map(|(n, w, _)| (n.clone(), *w)).collect();
        if let Some((abs, funs)) = uf::abstract_products(ctx, *assertion, &widths) {
            // The text is only for `--dump-queries`.
            let mut t = String::new();
            for w in funs.iter().filter(|_| opts.dump.is_some()) {
                t.push_str(&format!(
                    "(declare-fun {} ((_ BitVec {w}) (_ BitVec {w})) (_ BitVec {w}))\n",
                    uf::mul_name(*w)
                ));
            }
            if opts.dump.is_some() {
                t.push_str(&text.replace(
                    &format!("(assert {})", ctx.display(*assertion)),
                    &format!("(assert {})", ctx.display(abs)),
                ));
            }
            if let Ok(Answer::Unsat) = solve(ctx, consts, &funs, abs, &t, &label, opts) {
                proved.insert(text.clone());
                continue;
            }
        }
        match solve(ctx, consts, &none, *assertion, text, &label, opts) {
            Err(e) => return Verdict::Error(e),
            Ok(Answer::Unsat) => {
                proved.insert(text.clone());
            }
            Ok(Answer::Unknown) => {
                return Verdict::Unknown(format!(
                    "the solver gave up ({} ms limit)",
                    opts.timeout_ms
                ));
            }
            Ok(Answer::Sat(mut model)) => {
                // A lane query leaves the other lanes' inputs free: any value will do. Pinned
                // wildcards keep their case's value.
                for (n, w, slot) in &ob.consts {
                    let pinned = match slot {
                        Slot::Wild(id, _) => case.and_then(|c| c.get(id)),
                        _ => None,
                    };
                    let bits = pinned.map_or(0, |v| *v as u128 & exhaust::mask(*w));
                    model.entry(n.clone()).or_insert(bits);
                }
                return match explain(rule, inst, ob, &model) {
                    Ok(c) => Verdict::Counterexample(c),
                    Err(e) => Verdict::Error(e),
                };
            }
        }
    }
    Verdict::Proved
}

/// Proves one instantiation in `ctx`. Its cache key covers every query it needs (each lane
/// count and each case of an enumerated constant domain), so one entry records the proof.
fn prove_inst(
    ctx: &mut Context,
    rule: &Rule,
    inst: &Inst,
    opts: &Options,
    cache: &Mutex<Cache>,
) -> Outcome {
    let start = Instant::now();
    let lanes = lane_counts(inst, opts.full_width);
    let mut cached = false;
    let verdict = (|| -> Verdict {
        // Both sides the same terms in every lane (a rule derived from an instruction's
        // semantics, say): proved by construction, with no solver and no case split.
        let mut plain = Vec::new();
        for &n in &lanes {
            match obligation::build(ctx, rule, inst, n, None, false) {
                Ok(o) => plain.push(o),
                Err(e) => return Verdict::Error(format!("cannot encode: {e}")),
            }
        }
        if plain.iter().all(|o| o.open_lanes == 0) {
            return Verdict::Proved;
        }
        let cases: Vec<Option<cache::Assignment>> = match enumerate(ctx, rule, inst, opts, cache) {
            Ok(Some(list)) => list.into_iter().map(Some).collect(),
            Ok(None) => vec![None],
            Err(e) => return Verdict::Error(e),
        };
        let mut queries = Vec::new();
        let mut all_text = String::new();
        if cases == [None] {
            for (&n, o) in lanes.iter().zip(plain) {
                all_text.push_str(&query_text(ctx, &o));
                queries.push((n, None, o));
            }
        } else {
            for &n in &lanes {
                for case in &cases {
                    match obligation::build(ctx, rule, inst, n, case.as_ref(), false) {
                        Ok(o) => {
                            all_text.push_str(&query_text(ctx, &o));
                            queries.push((n, case.clone(), o));
                        }
                        Err(e) => return Verdict::Error(format!("cannot encode: {e}")),
                    }
                }
            }
        }
        let key = Cache::key(&opts.solver, &all_text);
        if cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&key)
        {
            cached = true;
            return Verdict::Proved;
        }
        // Lane queries proved once need no second proof (the one-lane and the
        // full-register obligations of a lane-wise rule ask the same thing).
        let mut proved = std::collections::HashSet::new();
        for (n, case, ob) in &queries {
            // First with shared products abstracted to their intervals (cheap when it
            // works); a failure there proves nothing, so then the exact query.
            if let Ok(abs) = obligation::build(ctx, rule, inst, *n, case.as_ref(), true)
                && abs.abstracted > 0
                && run_query(ctx, rule, inst, &abs, opts, case.as_ref(), &mut proved)
                    == Verdict::Proved
            {
                continue;
            }
            let v = run_query(ctx, rule, inst, ob, opts, case.as_ref(), &mut proved);
            if v != Verdict::Proved {
                return v;
            }
        }
        cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
        Verdict::Proved
    })();
    Outcome {
        rule: rule.decl.name.clone(),
        location: rule.decl.location(),
        instantiation: inst.describe(),
        lanes,
        verdict,
        cached,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Proves every instantiation of every rule, in parallel, consulting and extending `cache`.
/// `progress` is called after each instantiation with (done, total).
pub fn verify_rules(
    rules: &[Rule],
    opts: &Options,
    cache: &Mutex<Cache>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Outcome> {
    let items: Vec<(&Rule, &Inst)> = rules
        .iter()
        .flat_map(|r| r.insts.iter().map(move |i| (r, i)))
        .collect();
    let total = items.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; total]);
    let start_error: Mutex<Option<String>> = Mutex::new(None);
    rayon::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|_| {
                let mut ctx = match new_context(opts) {
                    Ok(c) => c,
                    Err(e) => {
                        *start_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        return;
                    }
                };
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= total {
                        break;
                    }
                    let (r, i) = items[k];
                    let out = prove_inst(&mut ctx, r, i, opts, cache);
                    results.lock().unwrap_or_else(|p| p.into_inner())[k] = Some(out);
                    progress(done.fetch_add(1, Ordering::SeqCst) + 1, total);
                }
            });
        }
    });
    let err = start_error.into_inner().unwrap_or_else(|p| p.into_inner());
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .enumerate()
        .map(|(k, o)| {
            o.unwrap_or_else(|| Outcome {
                rule: items[k].0.decl.name.clone(),
                location: items[k].0.decl.location(),
                instantiation: items[k].1.describe(),
                lanes: vec![],
                verdict: Verdict::Error(err.clone().unwrap_or_else(|| "not attempted".into())),
                cached: false,
                seconds: 0.0,
            })
        })
        .collect()
}
