//! The `harrow` command line: argument definitions (clap) and the commands themselves.
//!
//! Commands return their standard output as a string and report failures as [`CliError`],
//! so tests can run them in-process; `main.rs` only prints and sets the exit code.

mod bench_plot;
pub mod bench_report;
mod compile;
pub mod float;
mod fuzz;
mod inputs;
pub mod isa;
pub mod kernel;
mod synth;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::diag::{Diag, Source};
use crate::interp::{Env, eval};
use crate::syntax::elab::{Decls, ElabOptions};
use crate::syntax::{file, halide, opcheck, rake, sexpr};

pub use inputs::{InputSpec, parse_input};

/// A command failure: the message is printed to standard error.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A diagnostic about some input text.
    #[error("{0}")]
    Diag(Box<Diag>),
    /// A tool is missing, or building or running a program failed.
    #[error("error: {0}")]
    Tool(#[from] crate::isa::toolchain::ToolError),
    /// Anything else (a missing file, a bad flag value).
    #[error("error: {0}")]
    Other(String),
    /// The command ran and found problems; the report is printed as is.
    #[error("{0}")]
    Failed(String),
}

impl From<Diag> for CliError {
    fn from(d: Diag) -> Self {
        CliError::Diag(Box::new(d))
    }
}

impl From<crate::kernel::harness::KernelError> for CliError {
    fn from(e: crate::kernel::harness::KernelError) -> Self {
        CliError::Other(e.to_string())
    }
}

impl From<crate::targets::TargetError> for CliError {
    fn from(e: crate::targets::TargetError) -> Self {
        match e {
            // A rule or description error keeps its place for the report.
            crate::targets::TargetError::Rules(d) => CliError::Diag(d),
            other => CliError::Other(other.to_string()),
        }
    }
}

/// harrow compiles portable integer and fixed-point vector code to the instructions of
/// SIMD and DSP machines, checking every rewrite against its reference interpreter.
#[derive(Parser, Debug)]
#[command(name = "harrow", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    /// What to do.
    pub command: Command,
    /// Which lowering rules selection uses besides the instructions' own: `hand` (the
    /// hand-written rules of the target's family), `synth` (the rules `harrow synth lower`
    /// found for the target), or `all`.
    #[arg(long, global = true, default_value = "all", value_parser = ["hand", "synth", "all"])]
    pub rules_from: String,
    /// The lifting engine: `greedy` (the cheapest rewrite at each node, committed to) or
    /// `eqsat` (equality saturation over the lifting rules and `rules/algebra.rules`; its
    /// form is lowered beside greedy's and kept where the target's cost model prefers it).
    #[arg(long, global = true, default_value = "greedy", value_parser = crate::lift::EngineKind::NAMES)]
    pub engine: String,
    /// Limits of equality saturation per expression: `nodes=N,iterations=N,ms=N` (any of
    /// them; defaults 4000 e-nodes, 6 rounds and no time limit, so the result does not
    /// depend on the machine's speed; `ms=N` adds one, `ms=0` removes it). The best form
    /// found when a limit stops saturation is extracted.
    #[arg(long, global = true, value_name = "LIMITS")]
    pub eqsat_limit: Option<String>,
}

/// The command line's definition, with the targets `--target` takes listed from the
/// registry (`crate::targets::REGISTRY`) rather than written into the help text.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let names = crate::targets::names().join(", ");
    let mut cmd = Cli::command().after_help(crate::targets::help());
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .filter(|sc| sc.get_name() != "verify")
        .filter(|sc| sc.get_arguments().any(|a| a.get_id() == "target"))
        .map(|sc| sc.get_name().to_string())
        .collect();
    for name in subcommands {
        let help = format!("Target: one of {names}");
        cmd = cmd.mut_subcommand(name, |sc| sc.mut_arg("target", |a| a.help(help)));
    }
    cmd
}

/// Parses the process's arguments with [`command`] (exits with clap's message on an error).
pub fn parse_args() -> Cli {
    use clap::FromArgMatches;
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Evaluate an expression with the reference interpreter and print its lanes.
    Eval(EvalArgs),
    /// Parse and type-check a file (expressions, a Rake spec, or simd_op_check expectations)
    /// and print it back in canonical form.
    Check(CheckArgs),
    /// Lift integer code to FPIR with the rewrite rules and print the result.
    Lift(LiftArgs),
    /// Prove rules correct with an SMT solver, for every type instantiation.
    Verify(VerifyArgs),
    /// Compile an expression for a target and print C, assembly or the chosen instructions.
    Compile(compile::CompileArgs),
    /// Check the compiler against a suite of expected instructions (Halide's simd_op_check).
    Conformance(compile::ConformanceArgs),
    /// Compile a kernel (`.hk`), run it on random and edge-case images and check every
    /// output against the reference interpreter.
    Run(kernel::RunArgs),
    /// Check, then time the benchmark kernels against clang -O3 (and Halide 21).
    Bench(kernel::BenchArgs),
    /// Generate random kernels, check each against the interpreter and measure it against
    /// clang -O3, printing the slowest (cliff hunting).
    FuzzKernels(fuzz::FuzzArgs),
    /// Offline rule synthesis: search for proved instruction sequences cheaper than what
    /// selection chooses today, and write them as rules.
    Synth(synth::SynthArgs),
    /// Instruction descriptions: import them from the vendors' specifications.
    Isa(isa::IsaArgs),
    /// Fixed-size float kernels written in C, vectorized by equality saturation (Diospyros).
    Float(float::FloatArgs),
}

/// `harrow verify`
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Rule files to prove instead of the built-in ones (lifting rules, or lowering rules
    /// of the family `--target` names).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Which rules: `lift`, a target family (`x86`, `arm`, `hvx`: derived and hand-written
    /// lowering rules), or `all` (every built-in rule). Default: `lift`.
    #[arg(long, value_name = "T")]
    pub target: Option<String>,
    /// Print machine-readable JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Per-query solver timeout in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    pub timeout: u64,
    /// Parallel solver processes (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Proof cache file.
    #[arg(long, default_value = "verify/cache.txt")]
    pub cache: PathBuf,
    /// Neither read nor write the proof cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Only prove at the smallest lane count, skipping the full-register confirmation.
    #[arg(long)]
    pub quick: bool,
    /// Write every query sent to the solver into this folder, for inspection.
    #[arg(long, value_name = "DIR")]
    pub dump_queries: Option<PathBuf>,
    /// The SMT solver: `z3` or `cvc5` (answers are cached per solver).
    #[arg(long, default_value = "z3")]
    pub solver: String,
}

/// `harrow lift`
#[derive(Args, Debug)]
pub struct LiftArgs {
    /// An expression, or a file: `.sexp` (Rake spec) or an expression file.
    pub expr_or_file: String,
    #[command(flatten)]
    /// Inputs.
    pub inputs: InputArgs,
    /// Print each rule application (name, file:line, before and after) to standard error.
    #[arg(long)]
    pub trace: bool,
    /// Add the rules of this file to the built-in ones (repeatable).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Print S-expressions instead of Halide syntax.
    #[arg(long)]
    pub sexpr: bool,
}

/// Declarations shared by every command that reads expressions.
#[derive(Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// Declare (and for `eval`, give values to) a free variable or buffer:
    /// `NAME:TYPE` or `NAME:TYPE=v0,v1,...` with TYPE like `u8x16`, `i32`, or `u8[]` for a
    /// buffer. One value for a vector fills every lane.
    #[arg(long = "input", short = 'i', value_name = "NAME:TYPE[=VALUES]")]
    pub inputs: Vec<String>,
    /// Treat `x` as the vectorized loop variable at this many lanes (simd_op_check style:
    /// `in_u8(x + 1)` is a dense load).
    #[arg(long, value_name = "LANES")]
    pub width: Option<u32>,
    /// Accept `f32` inputs, types and literals: set by `harrow eval` only (the other
    /// commands compile integer code).
    #[arg(skip)]
    pub allow_float: bool,
}

impl InputArgs {
    /// Parses the `--input` flags.
    pub fn specs(&self) -> Result<Vec<InputSpec>, CliError> {
        self.inputs
            .iter()
            .map(|s| parse_input(s, self.allow_float).map_err(CliError::Other))
            .collect()
    }

    /// The declarations the flags make.
    pub fn decls(&self) -> Result<Decls, CliError> {
        let mut d = Decls::new();
        for s in self.specs()? {
            s.declare(&mut d);
        }
        Ok(d)
    }

    /// Elaboration options (the lane variable).
    pub fn options(&self) -> ElabOptions {
        ElabOptions {
            lane_var: self.width.map(|w| ("x".to_string(), w)),
            allow_internal: false,
            rule: None,
            instrs: None,
            allow_float: self.allow_float,
        }
    }
}

/// `harrow eval`
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The expression, in Halide syntax (`--sexpr` for the S-expression form).
    pub expr: String,
    #[command(flatten)]
    /// Inputs.
    pub inputs: InputArgs,
    /// Read EXPR as an S-expression.
    #[arg(long)]
    pub sexpr: bool,
}

/// `harrow check`
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The file: `.sexp` is a Rake spec, a file of `[instr] w=N : expr` lines is read as
    /// simd_op_check expectations, anything else as an expression file.
    pub file: PathBuf,
    #[command(flatten)]
    /// Extra declarations for expression files.
    pub inputs: InputArgs,
    /// Print S-expressions instead of Halide syntax.
    #[arg(long)]
    pub sexpr: bool,
}

/// Runs a parsed command line, returning what to print on standard output.
pub fn run(cli: Cli) -> Result<String, CliError> {
    // The default leaves the process's choice alone (commands run in-process by tests).
    if let Some(r) = crate::targets::RulesFrom::from_name(&cli.rules_from)
        && r != crate::targets::RulesFrom::All
    {
        crate::targets::set_rules_from(r);
    }
    let engine = crate::lift::EngineKind::from_name(&cli.engine).unwrap_or_default();
    if engine != crate::lift::EngineKind::Greedy {
        crate::lift::set_engine(engine);
    }
    if let Some(text) = &cli.eqsat_limit {
        let limits = crate::rewrite::eqsat::Limits::parse(text)
            .map_err(|e| CliError::Other(format!("--eqsat-limit: {e}")))?;
        crate::lift::set_eqsat_limits(limits);
    }
    match cli.command {
        Command::Eval(a) => cmd_eval(&a),
        Command::Check(a) => cmd_check(&a),
        Command::Lift(a) => cmd_lift(&a),
        Command::Verify(a) => cmd_verify(&a),
        Command::Compile(a) => compile::cmd_compile(&a),
        Command::Conformance(a) => compile::cmd_conformance(&a),
        Command::Run(a) => kernel::cmd_run(&a),
        Command::Bench(a) => kernel::cmd_bench(&a),
        Command::FuzzKernels(a) => fuzz::cmd_fuzz(&a),
        Command::Synth(a) => synth::cmd_synth(&a),
        Command::Isa(a) => isa::cmd_isa(&a),
        Command::Float(a) => float::cmd_float(&a),
    }
}

/// Reads a file as a shared source, with a clear error when it cannot be read.
pub fn read_source(path: &std::path::Path) -> Result<std::sync::Arc<Source>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Other(format!("cannot read {}: {e}", path.display())))?;
    Ok(Source::new(path.display().to_string(), text))
}

/// Parses an expression given on the command line.
pub fn parse_cli_expr(
    text: &str,
    inputs: &InputArgs,
    as_sexpr: bool,
) -> Result<crate::ir::Expr, CliError> {
    let src = Source::new("<command line>", text);
    let decls = inputs.decls()?;
    let e = if as_sexpr {
        sexpr::parse(&src, &decls)?
    } else {
        halide::parse_expr(&src, &decls, inputs.options())?
    };
    Ok(e)
}

fn cmd_eval(a: &EvalArgs) -> Result<String, CliError> {
    let inputs = InputArgs {
        allow_float: true,
        ..a.inputs.clone()
    };
    let e = parse_cli_expr(&a.expr, &inputs, a.sexpr)?;
    let mut env = Env::new();
    for spec in inputs.specs()? {
        spec.bind(&mut env).map_err(CliError::Other)?;
    }
    let v = eval(&e, &env).map_err(|err| {
        CliError::Other(format!("{err}; give it with --input NAME:TYPE=v0,v1,..."))
    })?;
    Ok(format!("{v}\n"))
}

fn print_expr(e: &crate::ir::Expr, as_sexpr: bool) -> String {
    if as_sexpr {
        sexpr::print(e)
    } else {
        halide::print(e)
    }
}

fn cmd_check(a: &CheckArgs) -> Result<String, CliError> {
    let src = read_source(&a.file)?;
    let mut out = String::new();
    if a.file.extension().is_some_and(|x| x == "sexp") {
        let spec = rake::import(&src)?;
        for (b, e) in &spec.buffers {
            out.push_str(&format!("buffer {b}: {e}[]\n"));
        }
        for (v, t) in &spec.vars {
            out.push_str(&format!("input {v}: {t}\n"));
        }
        for f in &spec.facts {
            out.push_str(&format!("fact {} in [{}, {}]\n", f.buffer, f.lo, f.hi));
        }
        out.push_str(&format!(
            "{} : {}\n",
            print_expr(&spec.expr, a.sexpr),
            spec.expr.ty()
        ));
        return Ok(out);
    }
    let looks_like_opcheck = src
        .text
        .lines()
        .any(|l| l.trim_start().starts_with('[') && l.contains("] w="));
    if looks_like_opcheck {
        let entries = opcheck::read(&src)?;
        let (mut ok, mut skipped, mut failed) = (0, 0, Vec::new());
        for e in &entries {
            if opcheck::classify(e).is_some() {
                skipped += 1;
                continue;
            }
            match opcheck::parse_entry(&src.name, e) {
                Ok(x) => {
                    ok += 1;
                    out.push_str(&format!("[{}] {}\n", e.instr, print_expr(&x, a.sexpr)));
                }
                Err(d) => failed.push(d),
            }
        }
        out.push_str(&format!(
            "{ok} entries type-checked, {skipped} skipped (floating-point or lost body), {} failed\n",
            failed.len()
        ));
        if let Some(first) = failed.into_iter().next() {
            return Err(first.into());
        }
        return Ok(out);
    }
    let (items, _) = file::parse(&src, a.inputs.decls()?)?;
    for it in items {
        out.push_str(&format!(
            "{} : {}\n",
            print_expr(&it.expr, a.sexpr),
            it.expr.ty()
        ));
    }
    Ok(out)
}

/// Expressions named on the command line (a file's expressions, or the text itself), each
/// with the interval analysis that knows its facts (a Rake spec's value ranges).
pub fn exprs_from_arg(
    arg: &str,
    inputs: &InputArgs,
) -> Result<Vec<(crate::ir::Expr, crate::bounds::Intervals)>, CliError> {
    let path = std::path::Path::new(arg);
    if path.is_file() {
        let src = read_source(path)?;
        if path.extension().is_some_and(|x| x == "sexp") {
            let spec = rake::import(&src)?;
            let mut iv = crate::bounds::Intervals::new();
            for f in &spec.facts {
                iv.buffer_facts.insert(f.buffer.clone(), (f.lo, f.hi));
            }
            return Ok(vec![(spec.expr, iv)]);
        }
        let (items, _) = file::parse(&src, inputs.decls()?)?;
        return Ok(items
            .into_iter()
            .map(|i| (i.expr, crate::bounds::Intervals::new()))
            .collect());
    }
    Ok(vec![(
        parse_cli_expr(arg, inputs, false)?,
        crate::bounds::Intervals::new(),
    )])
}

fn cmd_lift(a: &LiftArgs) -> Result<String, CliError> {
    let extra = a
        .rules
        .iter()
        .map(|p| read_source(p))
        .collect::<Result<Vec<_>, _>>()?;
    let rules = crate::lift::rules_with(&extra)?;
    let engine = crate::lift::engine();
    if a.trace && engine == crate::lift::EngineKind::Eqsat {
        return Err(CliError::Other(
            "--trace lists the greedy engine's rewrites one by one; equality saturation keeps every form at once and has no such sequence (use --engine greedy with --trace)".into(),
        ));
    }
    let mut out = String::new();
    for (e, mut bounds) in exprs_from_arg(&a.expr_or_file, &a.inputs)? {
        let mut trace = Vec::new();
        let lifted = crate::lift::lift_with_engine(
            &e,
            &rules,
            engine,
            &mut bounds,
            a.trace.then_some(&mut trace),
        );
        for t in &trace {
            eprintln!(
                "rule {} ({}; {})\n  {}\n  => {}",
                t.rule,
                t.location,
                t.instantiation,
                halide::print(&t.before),
                halide::print(&t.after)
            );
        }
        out.push_str(&print_expr(&lifted, a.sexpr));
        out.push('\n');
    }
    Ok(out)
}

/// The rule sets `harrow verify` proves: named files (lifting rules, or lowering rules of
/// the family `target` names), or the built-in rules of `target` (`all` when `None`).
pub fn rules_to_verify(
    files: &[PathBuf],
    target: Option<&str>,
) -> Result<Vec<crate::rules::RuleSet>, CliError> {
    use crate::rules::{RuleKind, RuleSet};
    use crate::targets::{families, family, family_rules};
    let unknown = |t: &str| {
        let names: Vec<&str> = families().iter().map(|f| f.name).collect();
        CliError::Other(format!(
            "unknown target `{t}` for verify; expected `lift`, `all` or one of: {}",
            names.join(", ")
        ))
    };
    if !files.is_empty() {
        let sources = files
            .iter()
            .map(|p| read_source(p))
            .collect::<Result<Vec<_>, _>>()?;
        return match target {
            None | Some("lift") => sources
                .iter()
                .map(|s| Ok(RuleSet::load(s, RuleKind::Lift)?))
                .collect(),
            Some(t) => {
                let f = family(t).map_err(|_| unknown(t))?;
                // Only the given files: the family's own rules are proved by `--target t`.
                let all = family_rules(f, &sources)?;
                let own = family_rules(f, &[])?.rules.len();
                Ok(vec![RuleSet::from_rules(
                    all.rules[own..].to_vec(),
                    RuleKind::Lower,
                )])
            }
        };
    }
    match target.unwrap_or("lift") {
        "lift" => Ok(vec![
            crate::lift::builtin_rules()?.clone(),
            crate::lift::algebra_rules()?.clone(),
        ]),
        "all" => {
            let mut sets = vec![
                crate::lift::builtin_rules()?.clone(),
                crate::lift::algebra_rules()?.clone(),
            ];
            for f in families() {
                sets.push(family_rules(f, &[])?);
            }
            Ok(sets)
        }
        t => {
            let f = family(t).map_err(|_| unknown(t))?;
            Ok(vec![family_rules(f, &[])?])
        }
    }
}

fn cmd_verify(a: &VerifyArgs) -> Result<String, CliError> {
    use crate::verify::{Cache, Options, Verdict, verify_rules};
    crate::verify::solver_available(&a.solver).map_err(CliError::Other)?;
    let sets = rules_to_verify(&a.rules, a.target.as_deref())?;
    let rules: Vec<crate::rules::Rule> = sets.into_iter().flat_map(|s| s.rules).collect();
    let cache = if a.no_cache {
        Cache::in_memory()
    } else {
        Cache::load(&a.cache).map_err(CliError::Other)?
    };
    let cache = std::sync::Mutex::new(cache);
    let opts = Options {
        timeout_ms: a.timeout,
        jobs: a.jobs.unwrap_or_else(|| Options::default().jobs),
        full_width: !a.quick,
        solver: a.solver.clone(),
        dump: a.dump_queries.clone(),
    };
    let total: usize = rules.iter().map(|r| r.insts.len()).sum();
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "verifying {bar:40} {pos}/{len} instantiations, {elapsed}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let start = std::time::Instant::now();
    let outcomes = verify_rules(&rules, &opts, &cache, &|done, _| {
        bar.set_position(done as u64)
    });
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let cache = cache.into_inner().unwrap_or_else(|p| p.into_inner());
    if !a.no_cache {
        // A full run of the built-in rules prunes proofs of queries that no longer exist.
        cache
            .save(a.rules.is_empty() && a.target.as_deref() == Some("all"))
            .map_err(CliError::Other)?;
    }
    let proved = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Proved)
        .count();
    let from_cache = outcomes
        .iter()
        .filter(|o| o.cached && o.verdict == Verdict::Proved)
        .count();
    let failures: Vec<&crate::verify::Outcome> = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Proved)
        .collect();
    let mut out = String::new();
    if a.json {
        let items: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| {
                let (status, detail) = match &o.verdict {
                    Verdict::Proved => ("proved", String::new()),
                    Verdict::Counterexample(c) => ("counterexample", c.text.clone()),
                    Verdict::Unknown(s) => ("unknown", s.clone()),
                    Verdict::Error(s) => ("error", s.clone()),
                };
                serde_json::json!({
                    "rule": o.rule, "location": o.location, "instantiation": o.instantiation,
                    "lanes": o.lanes, "status": status, "detail": detail, "cached": o.cached, "seconds": o.seconds,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "rules": rules.len(), "instantiations": outcomes.len(), "proved": proved,
            "from_cache": from_cache, "seconds": seconds, "results": items,
        });
        out.push_str(&serde_json::to_string_pretty(&doc).unwrap_or_default());
        out.push('\n');
    } else {
        for o in &failures {
            let (what, detail) = match &o.verdict {
                Verdict::Counterexample(c) => ("counterexample", &c.text),
                Verdict::Unknown(s) => ("not proved", s),
                Verdict::Error(s) => ("error", s),
                Verdict::Proved => unreachable!(),
            };
            out.push_str(&format!(
                "{} {} ({}), {}:\n    {detail}\n",
                what, o.rule, o.location, o.instantiation
            ));
        }
        out.push_str(&format!(
            "{proved} of {} instantiations of {} rules proved ({from_cache} from the cache) in {seconds:.1} s\n",
            outcomes.len(),
            rules.len()
        ));
    }
    if !failures.is_empty() {
        return Err(CliError::Failed(out));
    }
    Ok(out)
}
