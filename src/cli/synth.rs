//! `harrow synth lower`: offline rule synthesis for a target (see `crate::synth`).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::CliError;
use crate::synth::{Options, Term, TermReport, Verdict};

/// `harrow synth`
#[derive(Args, Debug)]
pub struct SynthArgs {
    /// What to synthesize.
    #[command(subcommand)]
    pub what: SynthCommand,
}

/// The kinds of rules synthesis makes.
#[derive(Subcommand, Debug)]
pub enum SynthCommand {
    /// Lowering rules: sequences of target instructions for terms selection compiles.
    Lower(LowerArgs),
    /// Lifting rules: cheaper FPIR forms of corpus sub-expressions the lifting rules leave
    /// unlifted, proved, written as proposals.
    Lift(LiftArgs),
    /// Merge the rule files of a sharded run (`lower --shard I/N`) into the file an
    /// unsharded run writes.
    Merge(MergeArgs),
}

/// `harrow synth merge`
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' rule files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write the merged file here (default: print it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `harrow synth lower`
#[derive(Args, Debug)]
pub struct LowerArgs {
    /// The target: one of the registered targets (`x86-avx2`, `arm-neon`, ...).
    #[arg(long)]
    pub target: String,
    /// Expression files of terms (`input a: u8x32, b: u8x32` then one expression per
    /// line); default: every FPIR operation at every element type, one register wide.
    #[arg(long = "terms", value_name = "FILE")]
    pub terms: Vec<PathBuf>,
    /// Take the terms from a corpus instead: `simd-op-check` (the target's entries of
    /// Halide's simd_op_check under `../shared/peer/halide-simd-op-check/`, lifted, their
    /// loads made variables, deduplicated up to renaming of variables and constants), or
    /// `rake-hvx` / `rake-arm` (the Rake specs under `../shared/corpus/`: their
    /// sub-expressions of one to three operations, loads and broadcast scalars made
    /// variables, one register wide).
    #[arg(long, value_name = "CORPUS", conflicts_with_all = ["terms", "kernels"])]
    pub terms_from: Option<String>,
    /// Take the terms from kernels (`.hk`) instead: every sub-expression of one to three
    /// operations of each output's and reduction's body after lifting, its accesses and
    /// parameters made vector variables, one register wide (`--kernels benchmarks/*.hk`).
    #[arg(long = "kernels", value_name = "FILE", num_args = 1.., conflicts_with = "terms")]
    pub kernels: Vec<PathBuf>,
    /// Most instructions in a sequence.
    #[arg(long, default_value_t = 3)]
    pub max_instrs: u32,
    /// Seconds of enumeration allowed per term.
    #[arg(long, default_value_t = 20.0)]
    pub budget_s: f64,
    /// Which terms to run, where to write, how to report.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The options of a synthesis run that `synth lower` and `synth lift` share.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Only the terms whose name contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Take terms `I`, `I + N`, ... of the list (`I/N`, 0-based), for running shards as
    /// separate jobs (a Slurm job array, a Kubernetes Indexed Job); `harrow synth merge`
    /// combines their files.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write the rule file here (default: print it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Record each finished term in FILE, and take the terms FILE already holds from it
    /// instead of searching them again: resumes a run that was interrupted (a batch job
    /// past its time limit). FILE must come from a run with the same options.
    #[arg(long, value_name = "FILE")]
    pub progress: Option<PathBuf>,
    /// Print a machine-readable summary instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `harrow synth lift`
#[derive(Args, Debug)]
pub struct LiftArgs {
    /// Expression files of terms (`input a: u8x16, b: u8x16` then one expression per line),
    /// searched as written (after lifting) at any lane count.
    #[arg(long = "terms", value_name = "FILE")]
    pub terms: Vec<PathBuf>,
    /// Kernels (`.hk`) whose outputs' sub-expressions are the terms (several may follow
    /// one `--kernels`: `--kernels benchmarks/*.hk`).
    #[arg(long = "kernels", value_name = "FILE", num_args = 1..)]
    pub kernels: Vec<PathBuf>,
    /// Take the terms from a corpus: `fuzz-kernels[:SEED[:COUNT]]` (the kernels
    /// `harrow fuzz-kernels` generates, built in; default seed 1, 200 kernels), or under
    /// `../shared`: `simd-op-check` (every entry of Halide's simd_op_check files),
    /// `rake-hvx` or `rake-arm` (the Rake specs). Repeatable.
    #[arg(long, value_name = "CORPUS")]
    pub terms_from: Vec<String>,
    /// Most operations in a found expression.
    #[arg(long, default_value_t = 2)]
    pub max_ops: u32,
    /// Seconds of enumeration allowed per term.
    #[arg(long, default_value_t = 10.0)]
    pub budget_s: f64,
    /// Which terms to run, where to write, how to report.
    #[command(flatten)]
    pub run: RunArgs,
}

/// One term's line of the JSON summary.
#[derive(serde::Serialize)]
struct JsonTerm {
    term: String,
    expr: String,
    verdict: &'static str,
    today: f64,
    cost: Option<f64>,
    rhs: Option<String>,
    #[serde(flatten)]
    stats: crate::synth::SearchStats,
}

fn parse_shard(s: &str) -> Result<(usize, usize), CliError> {
    let bad = || CliError::Other(format!("--shard takes I/N with 0 <= I < N, not `{s}`"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

fn terms_of(files: &[PathBuf], register_bits: u32) -> Result<Vec<Term>, CliError> {
    if files.is_empty() {
        return Ok(crate::synth::default_terms(register_bits));
    }
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CliError::Other(format!("cannot read {}: {e}", f.display())))?;
        let src = crate::diag::Source::new(f.display().to_string(), text);
        let (items, _) = crate::syntax::file::parse(&src, crate::syntax::elab::Decls::new())?;
        for it in items {
            let (line, _) = src.line_col(it.span.start);
            let stem = f
                .file_stem()
                .map_or("terms".into(), |s| s.to_string_lossy().into_owned());
            let name = crate::synth::terms::rule_name(&format!("{stem}_{line}"));
            out.push(Term::new(name, &it.expr));
        }
    }
    Ok(out)
}

/// Runs `harrow synth`.
pub fn cmd_synth(a: &SynthArgs) -> Result<String, CliError> {
    match &a.what {
        SynthCommand::Lower(a) => cmd_lower(a),
        SynthCommand::Lift(a) => cmd_lift(a),
        SynthCommand::Merge(a) => cmd_merge(a),
    }
}

fn cmd_merge(a: &MergeArgs) -> Result<String, CliError> {
    let files = a
        .files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|t| (f.display().to_string(), t))
                .map_err(|e| CliError::Other(format!("cannot read {}: {e}", f.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let merged = crate::synth::merge(&files).map_err(CliError::Other)?;
    match &a.out {
        Some(out) => {
            std::fs::write(out, &merged)
                .map_err(|e| CliError::Other(format!("cannot write {}: {e}", out.display())))?;
            Ok(String::new())
        }
        None => Ok(merged),
    }
}

/// The Rake specs of `corpus` under `../shared` as (file stem, expression); a spec the
/// importer refuses is `harrow check`'s to report.
fn rake_specs(corpus: &str) -> Result<Vec<(String, crate::ir::Expr)>, CliError> {
    let shared = crate::util::shared::shared_dir().ok_or_else(|| {
        CliError::Other(format!(
            "skipped: ../shared not found (the {corpus} corpus lives there)"
        ))
    })?;
    let mut specs = Vec::new();
    for p in crate::syntax::corpus::spec_paths(&shared, corpus) {
        let text = std::fs::read_to_string(&p)
            .map_err(|e| CliError::Other(format!("cannot read {}: {e}", p.display())))?;
        let src = crate::diag::Source::new(p.display().to_string(), text);
        if let Ok(spec) = crate::syntax::rake::import(&src) {
            let stem = p
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned());
            specs.push((stem, spec.expr));
        }
    }
    Ok(specs)
}

fn cmd_lower(a: &LowerArgs) -> Result<String, CliError> {
    crate::verify::solver_available("z3").map_err(CliError::Other)?;
    // Sequences are compared with selection by the hand-written rules alone: measured
    // against the synthesized rules themselves, a second run would keep nothing.
    let backend = crate::targets::backend_from(&a.target, crate::targets::RulesFrom::Hand)
        .map_err(|e| CliError::Other(e.to_string()))?;
    if a.max_instrs == 0 || a.max_instrs > 4 {
        return Err(CliError::Other("--max-instrs takes 1 to 4".into()));
    }
    if !(a.budget_s > 0.0 && a.budget_s.is_finite()) {
        return Err(CliError::Other(
            "--budget-s takes a positive number of seconds".into(),
        ));
    }
    let mut terms = match a.terms_from.as_deref() {
        None if !a.kernels.is_empty() => {
            crate::synth::corpus::kernel_terms(&kernel_files(&a.kernels)?, &backend)
        }
        None => terms_of(&a.terms, backend.target.register_bits())?,
        Some("simd-op-check") => {
            let suite = backend.target.spec().op_check.as_ref().ok_or_else(|| {
                CliError::Other(format!(
                    "no simd_op_check section for target `{}`",
                    a.target
                ))
            })?;
            let path = crate::util::shared::shared_dir()
                .ok_or_else(|| {
                    CliError::Other(
                        "skipped: ../shared not found (the simd_op_check corpus lives there)"
                            .into(),
                    )
                })?
                .join("peer/halide-simd-op-check")
                .join(suite.file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CliError::Other(format!("cannot read {}: {e}", path.display())))?;
            let src = crate::diag::Source::new(path.display().to_string(), text);
            crate::synth::corpus::opcheck_terms(&src, &backend).map_err(CliError::Other)?
        }
        Some(corpus) if crate::syntax::corpus::CORPORA.contains(&corpus) => {
            let specs = rake_specs(corpus)?;
            crate::synth::corpus::spec_terms(&specs, &backend)
        }
        Some(other) => {
            return Err(CliError::Other(format!(
                "unknown corpus `{other}` for --terms-from; expected simd-op-check, {}",
                crate::syntax::corpus::CORPORA.join(", ")
            )));
        }
    };
    // Rules are not carried to a type whose own term this run searches (all shards
    // together): `--only` first, as `run_terms` will.
    if let Some(only) = &a.run.only {
        terms.retain(|t| t.name.contains(only.as_str()));
    }
    let searched: std::collections::HashSet<String> =
        terms.iter().map(|t| t.expr.to_string()).collect();
    let opts = Options {
        max_instrs: a.max_instrs,
        budget: std::time::Duration::from_secs_f64(a.budget_s),
        searched: std::sync::Arc::new(searched),
        ..Default::default()
    };
    let batch = Batch {
        key: &a.target,
        max: a.max_instrs,
        budget_s: a.budget_s,
        what: "synthesizing",
    };
    run_terms(
        terms,
        &a.run,
        &batch,
        &|t, k| crate::synth::synthesize(t, &backend, &opts, k),
        &|reports| crate::synth::rule_file(&a.target, reports, &opts),
    )
}

/// What identifies a run in its progress file, and its progress bar's label.
struct Batch<'a> {
    /// The target (or `lift`).
    key: &'a str,
    /// `--max-instrs` or `--max-ops`.
    max: u32,
    /// `--budget-s`.
    budget_s: f64,
    /// The progress bar's label.
    what: &'a str,
}

/// Runs `search` on the terms `run` selects (`--only`, `--shard`) on every core, resuming
/// from and recording in `--progress`, with a progress bar; writes `rule_file` of the
/// reports to `--out` and returns the summary table (after the file when there is no
/// `--out`) or the JSON rows.
fn run_terms(
    mut terms: Vec<Term>,
    run: &RunArgs,
    batch: &Batch,
    search: &(dyn Fn(&Term, usize) -> TermReport + Sync),
    rule_file: &dyn Fn(&[TermReport]) -> String,
) -> Result<String, CliError> {
    if let Some(only) = &run.only {
        terms.retain(|t| t.name.contains(only.as_str()));
    }
    let indexed: Vec<(usize, Term)> = match &run.shard {
        Some(s) => {
            let (i, n) = parse_shard(s)?;
            terms
                .into_iter()
                .enumerate()
                .filter(|(k, _)| k % n == i)
                .collect()
        }
        None => terms.into_iter().enumerate().collect(),
    };
    let progress = match &run.progress {
        Some(p) => {
            let key =
                crate::synth::progress::RunKey::new(batch.key, batch.max, batch.budget_s, &indexed);
            Some(crate::synth::progress::Progress::open(p, &key).map_err(CliError::Other)?)
        }
        None => None,
    };
    let resumed = progress.as_ref().map_or(0, |p| p.resumed());
    if resumed > 0
        && let Some(p) = &run.progress
    {
        eprintln!(
            "resuming: {resumed} of {} terms are finished in {}",
            indexed.len(),
            p.display()
        );
    }
    let bar = indicatif::ProgressBar::new(indexed.len() as u64);
    bar.set_position(resumed as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{} {{bar:40}} {{pos}}/{{len}} terms, {{elapsed}}",
            batch.what
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    // Terms are independent: searched on every core, reported in list order.
    let reports: Vec<TermReport> = {
        use rayon::prelude::*;
        indexed
            .par_iter()
            .map(|(k, t)| {
                if let Some(r) = progress.as_ref().and_then(|p| p.report(*k, t)) {
                    return Ok(r);
                }
                let r = search(t, *k);
                if let Some(p) = &progress {
                    p.record(*k, &r)?;
                }
                bar.inc(1);
                Ok(r)
            })
            .collect::<Result<_, String>>()
            .map_err(CliError::Other)?
    };
    bar.finish_and_clear();
    let file = rule_file(&reports);
    if let Some(out) = &run.out {
        std::fs::write(out, &file)
            .map_err(|e| CliError::Other(format!("cannot write {}: {e}", out.display())))?;
    }
    if run.json {
        let rows: Vec<JsonTerm> = reports.iter().map(json_row).collect();
        return serde_json::to_string_pretty(&rows)
            .map(|s| s + "\n")
            .map_err(|e| CliError::Other(e.to_string()));
    }
    let mut s = summary(&reports);
    if resumed > 0 {
        s += &format!("({resumed} of them taken from the progress file, not searched again)\n");
    }
    if run.out.is_none() {
        s = file + "\n" + &s;
    }
    Ok(s)
}

fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Found { .. } => "found",
        Verdict::NotCheaper { .. } => "not cheaper",
        Verdict::NoneFound => "none found",
        Verdict::Skipped(_) => "skipped",
    }
}

fn json_row(r: &TermReport) -> JsonTerm {
    let (cost, rhs) = match &r.verdict {
        Verdict::Found { rhs, cost, .. } => (Some(*cost), Some(rhs.clone())),
        Verdict::NotCheaper { cost } => (Some(*cost), None),
        _ => (None, None),
    };
    JsonTerm {
        term: r.term.name.clone(),
        expr: r.term.expr.to_string(),
        verdict: verdict_name(&r.verdict),
        today: r.today,
        cost,
        rhs,
        stats: r.stats.clone(),
    }
}

/// The summary table: one line per term, then the totals.
fn summary(reports: &[TermReport]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<34} {:<12} {:>7} {:>7} {:>9} {:>6} {:>7}",
        "term", "verdict", "today", "synth", "values", "levels", "seconds"
    );
    for r in reports {
        let cost = match &r.verdict {
            Verdict::Found { cost, .. } | Verdict::NotCheaper { cost } => format!("{cost:.2}"),
            _ => "-".into(),
        };
        let levels = format!(
            "{}{}",
            r.stats.levels_done,
            if r.stats.stopped { "+" } else { "" }
        );
        let _ = writeln!(
            s,
            "{:<34} {:<12} {:>7.2} {:>7} {:>9} {:>6} {:>7.1}",
            r.term.name,
            verdict_name(&r.verdict),
            r.today,
            cost,
            r.stats.kept,
            levels,
            r.stats.seconds
        );
        if let Verdict::Skipped(why) = &r.verdict {
            let _ = writeln!(s, "    skipped: {why}");
        }
    }
    let found = reports
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Found { .. }))
        .count();
    let refuted: usize = reports.iter().map(|r| r.stats.refuted).sum();
    let learned: usize = reports.iter().map(|r| r.stats.learned).sum();
    let pruned: usize = reports.iter().map(|r| r.stats.pruned).sum();
    let seconds: f64 = reports.iter().map(|r| r.stats.seconds).sum();
    let carried: usize = reports.iter().map(|r| r.stats.abstracted).sum();
    let _ = writeln!(
        s,
        "{} terms: {found} rules kept (proved and cheaper by the margin) and {carried} carried to other types, {refuted} candidates refuted by the prover ({learned} counterexamples learned, {pruned} candidates ruled out by them), {seconds:.1} s",
        reports.len()
    );
    s
}

/// Named expressions whose sub-expressions become terms.
type Sources = Vec<(String, crate::ir::Expr)>;

/// The sources of `harrow synth lift`'s terms: (name, expression) pairs whose
/// sub-expressions are searched, and terms given whole.
fn lift_sources(a: &LiftArgs) -> Result<(Sources, Vec<Term>), CliError> {
    let mut sources = Vec::new();
    let mut whole = Vec::new();
    let given = if a.terms.is_empty() {
        Vec::new()
    } else {
        terms_of(&a.terms, 128)?
    };
    for t in given {
        let lifted = crate::lift::lift(&t.expr);
        let term = crate::synth::terms::at_lanes(&lifted, crate::synth::lift::SEARCH_LANES)
            .ok_or_else(|| {
                CliError::Other(format!(
                    "term `{}` ({}) is not over variables and constants",
                    t.name, t.expr
                ))
            })?;
        whole.push(Term::new(t.name, &term));
    }
    sources.extend(kernel_files(&a.kernels)?);
    for corpus in &a.terms_from {
        match corpus.as_str() {
            "simd-op-check" => {
                let dir = crate::util::shared::shared_dir()
                    .ok_or_else(|| {
                        CliError::Other(
                            "skipped: ../shared not found (the simd_op_check corpus lives there)"
                                .into(),
                        )
                    })?
                    .join("peer/halide-simd-op-check");
                let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .map_err(|e| CliError::Other(format!("cannot read {}: {e}", dir.display())))?
                    .filter_map(|d| d.ok().map(|d| d.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                    .collect();
                files.sort();
                for path in files {
                    let text = std::fs::read_to_string(&path).map_err(|e| {
                        CliError::Other(format!("cannot read {}: {e}", path.display()))
                    })?;
                    let src = crate::diag::Source::new(path.display().to_string(), text);
                    let entries = crate::syntax::opcheck::read(&src)?;
                    for e in entries {
                        // An entry that does not parse is the conformance run's to report.
                        if let Ok(x) = crate::syntax::opcheck::parse_entry(&src.name, &e) {
                            sources.push((format!("opcheck_{}_{}", e.instr, e.line), x));
                        }
                    }
                }
            }
            c if c == "fuzz-kernels" || c.starts_with("fuzz-kernels:") => {
                let (seed, count) = fuzz_corpus(c)?;
                for i in 0..count {
                    let g = crate::kernel::fuzz::generate(seed, i);
                    let src = crate::diag::Source::new(format!("{}.hk", g.name), g.text);
                    let k = crate::kernel::parse::parse(&src)?;
                    sources.extend(kernel_sources(&k));
                }
            }
            c if crate::syntax::corpus::CORPORA.contains(&c) => sources.extend(rake_specs(c)?),
            other => {
                return Err(CliError::Other(format!(
                    "unknown corpus `{other}` for --terms-from; expected simd-op-check, {}",
                    crate::syntax::corpus::CORPORA.join(", ")
                )));
            }
        }
    }
    if whole.is_empty() && sources.is_empty() {
        return Err(CliError::Other(
            "no terms: give --terms FILE, --kernels FILE.hk (e.g. benchmarks/*.hk) or \
             --terms-from simd-op-check|rake-hvx|rake-arm"
                .into(),
        ));
    }
    Ok((sources, whole))
}

/// The expressions of the kernels in `files` ([`kernel_sources`]).
fn kernel_files(files: &[PathBuf]) -> Result<Sources, CliError> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CliError::Other(format!("cannot read {}: {e}", f.display())))?;
        let src = crate::diag::Source::new(f.display().to_string(), text);
        let k = crate::kernel::parse::parse(&src)?;
        out.extend(kernel_sources(&k));
    }
    Ok(out)
}

/// A kernel's expressions: its output's body, its further outputs' and its reductions'.
fn kernel_sources(k: &crate::kernel::Kernel) -> Vec<(String, crate::ir::Expr)> {
    let mut out = vec![(k.name.clone(), k.body.clone())];
    for (name, e) in &k.more_outputs {
        out.push((format!("{}_{name}", k.name), e.clone()));
    }
    for (r, red) in k.reductions.iter().enumerate() {
        out.push((format!("{}_r{r}", k.name), red.body.clone()));
    }
    out
}

/// The seed and count of `fuzz-kernels[:SEED[:COUNT]]`.
fn fuzz_corpus(c: &str) -> Result<(u64, u32), CliError> {
    let bad = || {
        CliError::Other(format!(
            "`{c}`: expected fuzz-kernels, fuzz-kernels:SEED or fuzz-kernels:SEED:COUNT"
        ))
    };
    let mut parts = c.split(':').skip(1);
    let seed = match parts.next() {
        Some(s) => s.parse().map_err(|_| bad())?,
        None => 1,
    };
    let count = match parts.next() {
        Some(s) => s.parse().map_err(|_| bad())?,
        None => 200,
    };
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok((seed, count))
}

fn cmd_lift(a: &LiftArgs) -> Result<String, CliError> {
    crate::verify::solver_available("z3").map_err(CliError::Other)?;
    if a.max_ops == 0 || a.max_ops > 3 {
        return Err(CliError::Other("--max-ops takes 1 to 3".into()));
    }
    if !(a.budget_s > 0.0 && a.budget_s.is_finite()) {
        return Err(CliError::Other(
            "--budget-s takes a positive number of seconds".into(),
        ));
    }
    let (sources, mut terms) = lift_sources(a)?;
    terms.extend(crate::synth::lift::unlifted_terms(&sources));
    let opts = Options {
        max_instrs: a.max_ops,
        budget: std::time::Duration::from_secs_f64(a.budget_s),
        ..Default::default()
    };
    let instrs = crate::synth::lift::instructions(crate::synth::lift::SEARCH_LANES);
    let batch = Batch {
        key: "lift",
        max: a.max_ops,
        budget_s: a.budget_s,
        what: "synthesizing lifting rules",
    };
    run_terms(
        terms,
        &a.run,
        &batch,
        &|t, k| crate::synth::lift::synthesize(t, &instrs, &opts, k),
        &|reports| crate::synth::lift::rule_file(reports, a.max_ops),
    )
}
