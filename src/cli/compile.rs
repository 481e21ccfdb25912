//! `harrow compile` and `harrow conformance`.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, InputArgs, exprs_from_arg, read_source};
use crate::isa::target::Purpose;
use crate::isa::toolchain;
use crate::lower;

/// `harrow compile`
#[derive(Args, Debug)]
pub struct CompileArgs {
    /// An expression, a file of expressions, or a kernel (`.hk`).
    pub expr_or_file: String,
    #[command(flatten)]
    /// Inputs.
    pub inputs: InputArgs,
    /// Target (the list is read from the target registry when the command line is built).
    #[arg(long, default_value = crate::targets::DEFAULT_TARGET)]
    pub target: String,
    /// What to print: `c` (a C function), `asm` (clang-19's assembly of it), or `ir` (the
    /// selected instructions); for kernels also `scalar-c` (the plain C baseline) and
    /// `footprint` (the input ranges callers must provide).
    #[arg(long, default_value = "c")]
    pub emit: String,
    /// Add the lowering rules of this file to the built-in ones (repeatable).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Name of the generated function.
    #[arg(long, default_value = "harrow_kernel")]
    pub name: String,
    /// Also print, for every node no instruction covers, how it is written and why.
    #[arg(long)]
    pub explain: bool,
}

/// `harrow conformance`
#[derive(Args, Debug)]
pub struct ConformanceArgs {
    /// The suite: `halide-simd-op-check`.
    pub suite: String,
    /// Target (the list is read from the target registry when the command line is built).
    #[arg(long)]
    pub target: String,
    /// The expectation file (default: the target's file under
    /// `../shared/peer/halide-simd-op-check/`).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

fn backend(target: &str, rules: &[PathBuf]) -> Result<std::sync::Arc<lower::Backend>, CliError> {
    if rules.is_empty() {
        return Ok(crate::targets::backend(target)?);
    }
    let extra = rules
        .iter()
        .map(|p| read_source(p))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(std::sync::Arc::new(crate::targets::backend_with(
        target, &extra,
    )?))
}

/// Runs `harrow compile`.
pub fn cmd_compile(a: &CompileArgs) -> Result<String, CliError> {
    if a.expr_or_file.ends_with(".hk") {
        // Extra rules apply to kernels as to expressions.
        let be = backend(&a.target, &a.rules)?;
        let mut out = super::kernel::compile(
            std::path::Path::new(&a.expr_or_file),
            &be,
            &a.emit,
            &a.name,
            a.inputs.width,
        )?;
        if a.explain {
            out.push_str(&super::kernel::explain(
                std::path::Path::new(&a.expr_or_file),
                &be,
                &a.target,
                a.inputs.width,
            )?);
        }
        return Ok(out);
    }
    let be = backend(&a.target, &a.rules)?;
    if !matches!(a.emit.as_str(), "c" | "asm" | "ir") {
        return Err(CliError::Other(format!(
            "unknown --emit `{}`; expected c, asm or ir",
            a.emit
        )));
    }
    let mut out = String::new();
    for (e, _) in exprs_from_arg(&a.expr_or_file, &a.inputs)? {
        if e.ty().elem.is_internal() {
            return Err(CliError::Other("128-bit results cannot be compiled".into()));
        }
        let l = lower::lower(&e, &be);
        let target = be.target.as_ref();
        match a.emit.as_str() {
            "ir" => out.push_str(&lower::listing(&l)),
            "c" => out.push_str(&lower::c_file(&l, target, &a.name)),
            _ => out.push_str(&toolchain::assembly(
                target,
                Purpose::Assembly,
                &lower::c_file(&l, target, &a.name),
            )?),
        }
        if a.explain {
            out.push_str(&lower::explain(&l, &a.target));
        }
    }
    Ok(out)
}

/// Runs `harrow conformance`.
pub fn cmd_conformance(a: &ConformanceArgs) -> Result<String, CliError> {
    if a.suite != "halide-simd-op-check" {
        return Err(CliError::Other(format!(
            "unknown suite `{}`; expected halide-simd-op-check",
            a.suite
        )));
    }
    let reg = crate::targets::lookup(&a.target)?;
    let suite = reg.spec.op_check.as_ref().ok_or_else(|| {
        CliError::Other(format!(
            "no simd_op_check section for target `{}`",
            a.target
        ))
    })?;
    let path = match &a.file {
        Some(p) => p.clone(),
        None => crate::util::shared::shared_dir()
            .ok_or_else(|| {
                CliError::Other("../shared not found; give the expectation file with --file".into())
            })?
            .join("peer/halide-simd-op-check")
            .join(suite.file),
    };
    let src = read_source(&path)?;
    let be = backend(&a.target, &[])?;
    toolchain::require_toolchain(be.target.as_ref())?;
    let dir = std::env::temp_dir().join(format!(
        "harrow-conformance-{}-{}",
        a.target,
        std::process::id()
    ));
    let results = lower::conformance::run(&src, &be, &dir).map_err(CliError::Other)?;
    let _ = std::fs::remove_dir_all(&dir);
    let (_, _, wrong, error) = lower::conformance::counts(&results.results);
    let not_run = be.target.cannot_run_here();
    let text = if a.json {
        serde_json::to_string_pretty(&lower::conformance::json(
            &a.target,
            &results,
            not_run.as_deref(),
        ))
        .unwrap_or_default()
            + "\n"
    } else {
        lower::conformance::report(&a.target, &results, not_run.as_deref())
    };
    if wrong + error > 0 {
        return Err(CliError::Failed(text));
    }
    Ok(text)
}
