//! `harrow isa import`: instruction descriptions from the vendors' specifications (see
//! `crate::isa::import`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::CliError;
use crate::isa::import::{ImportContext, Report};

/// `harrow isa`
#[derive(Args, Debug)]
pub struct IsaArgs {
    /// What to do.
    #[command(subcommand)]
    pub what: IsaCommand,
}

/// The `isa` subcommands.
#[derive(Subcommand, Debug)]
pub enum IsaCommand {
    /// Import a vendor's instruction semantics into harrow's description language.
    Import(ImportArgs),
    /// Group a family's imported descriptions into parameterized similarity classes (the
    /// same function up to widths, lane counts, signedness, constants and operand order).
    Classes(ClassesArgs),
}

/// `harrow isa classes`
#[derive(Args, Debug)]
pub struct ClassesArgs {
    /// A target or target family (`x86-avx2`, `x86`); default: every family with imported
    /// descriptions.
    #[arg(long)]
    pub target: Option<String>,
    /// Print JSON (every class with its members) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The classes of one family, as `harrow isa classes --json` prints them.
#[derive(serde::Serialize)]
pub struct FamilyClasses {
    /// The family.
    pub family: String,
    /// Imported descriptions.
    pub descriptions: usize,
    /// Their classes, largest first.
    pub classes: Vec<crate::isa::import::classes::Class>,
}

/// The classes of every family `target` names (all with imported descriptions if none).
pub fn family_classes(target: Option<&str>) -> Result<Vec<FamilyClasses>, CliError> {
    let families: Vec<&crate::targets::Family> = match target {
        None => crate::targets::families()
            .into_iter()
            .filter(|f| f.imported.is_some())
            .collect(),
        Some(t) => {
            let fam = match crate::targets::lookup(t) {
                Ok(reg) => reg.family,
                Err(_) => crate::targets::families()
                    .into_iter()
                    .find(|f| f.name == t)
                    .ok_or_else(|| CliError::Other(format!("unknown target or family `{t}`")))?,
            };
            vec![fam]
        }
    };
    let mut out = Vec::new();
    for f in families {
        let Some((path, text)) = f.imported else {
            return Err(CliError::Other(format!(
                "family `{}` has no imported descriptions yet",
                f.name
            )));
        };
        let isa = crate::isa::Isa::load(f.name, &[crate::diag::Source::new(path, text)])
            .map_err(|d| CliError::Other(d.to_string()))?;
        out.push(FamilyClasses {
            family: f.name.to_string(),
            descriptions: isa.instrs.len(),
            classes: crate::isa::import::classes::classes(&isa.instrs),
        });
    }
    Ok(out)
}

fn cmd_classes(a: &ClassesArgs) -> Result<String, CliError> {
    let all = family_classes(a.target.as_deref())?;
    if a.json {
        return serde_json::to_string_pretty(&all)
            .map(|s| s + "\n")
            .map_err(|e| CliError::Other(e.to_string()));
    }
    let mut s = String::new();
    for f in &all {
        s.push_str(&format!(
            "{}: {} imported descriptions in {} classes\n",
            f.family,
            f.descriptions,
            f.classes.len()
        ));
        for c in &f.classes {
            let first: Vec<&str> = c.members.iter().take(3).map(String::as_str).collect();
            let more = c.members.len().saturating_sub(3);
            s.push_str(&format!(
                "  {:>4}  {}\n        {}{}\n",
                c.members.len(),
                c.shape,
                first.join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    Ok(s)
}

/// `harrow isa import`
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The vendor: `intel`, `arm` or `hexagon`.
    #[arg(long)]
    pub vendor: String,
    /// Write `<family>.isa` (the descriptions) and `<family>.skipped.tsv` (every entry not
    /// imported, with its reason) into this folder, instead of printing the summary only.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The vendor data folder (default: `shared/vendor` beside the checkout, or
    /// `$HARROW_SHARED/vendor`).
    #[arg(long, value_name = "DIR")]
    pub vendor_dir: Option<PathBuf>,
    /// Prove every imported description equal to the hand-written description of the same
    /// intrinsic, where there is one (needs z3), and list each disagreement.
    #[arg(long)]
    pub cross_check: bool,
}

/// Vendors and the target family whose importer reads them.
pub const VENDORS: &[(&str, &str)] = &[("intel", "x86"), ("arm", "arm"), ("hexagon", "hvx")];

/// Runs `harrow isa`.
pub fn cmd_isa(a: &IsaArgs) -> Result<String, CliError> {
    match &a.what {
        IsaCommand::Import(a) => cmd_import(a),
        IsaCommand::Classes(a) => cmd_classes(a),
    }
}

/// Imports with the family's importer; the report and the generated text.
pub fn import(vendor: &str, vendor_dir: Option<PathBuf>) -> Result<(Report, String), CliError> {
    let Some((_, family)) = VENDORS.iter().find(|(v, _)| *v == vendor) else {
        let names: Vec<&str> = VENDORS.iter().map(|(v, _)| *v).collect();
        return Err(CliError::Other(format!(
            "unknown vendor `{vendor}`; expected one of: {}",
            names.join(", ")
        )));
    };
    let fam = crate::targets::families()
        .into_iter()
        .find(|f| f.name == *family)
        .ok_or_else(|| CliError::Other(format!("no target family `{family}`")))?;
    let Some(importer) = fam.importer else {
        return Err(CliError::Other(format!(
            "no importer for `{vendor}` yet: `intel`, `arm` and `hexagon` are imported today"
        )));
    };
    let dir = match vendor_dir {
        Some(d) => d,
        None => crate::util::shared::shared_dir()
            .map(|s| s.join("vendor"))
            .ok_or_else(|| {
                CliError::Other(
                    "the vendor data was not found: put `shared/` beside the checkout, set \
                     HARROW_SHARED, or pass --vendor-dir"
                        .into(),
                )
            })?,
    };
    let report = importer(&ImportContext { vendor_dir: &dir }).map_err(CliError::Other)?;
    let header = format!(
        "Generated by `harrow isa import --vendor {vendor}` from the vendor's data (not part \
         of this repository):\ndo not edit; run the command again. {} of {} entries imported; \
         the others are listed with their reason\nin the `.skipped.tsv` file beside this one.",
        report.entries.len(),
        report.vendor_entries
    );
    let text = crate::isa::import::write_isa(&header, &report.entries);
    Ok((report, text))
}

fn cmd_import(a: &ImportArgs) -> Result<String, CliError> {
    let (report, text) = import(&a.vendor, a.vendor_dir.clone())?;
    let mut out = report.summary(&a.vendor);
    if a.cross_check {
        out.push_str(&cross_check_text(&a.vendor, &report)?);
    }
    if let Some(dir) = &a.out {
        let family = VENDORS
            .iter()
            .find(|(v, _)| *v == a.vendor)
            .expect("checked")
            .1;
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Other(format!("{}: {e}", dir.display())))?;
        let isa = dir.join(format!("{}.isa", a.vendor));
        let skipped = dir.join(format!("{}.skipped.tsv", a.vendor));
        for (path, body) in [
            (&isa, text),
            (&skipped, crate::isa::import::write_skips(&report.skipped)),
        ] {
            std::fs::write(path, body)
                .map_err(|e| CliError::Other(format!("{}: {e}", path.display())))?;
        }
        out.push_str(&format!(
            "wrote {} and {} ({family})\n",
            isa.display(),
            skipped.display()
        ));
    }
    Ok(out)
}

/// The family whose importer reads `vendor`'s data.
fn family_of(vendor: &str) -> Result<&'static crate::targets::Family, CliError> {
    let (_, name) = VENDORS
        .iter()
        .find(|(v, _)| *v == vendor)
        .ok_or_else(|| CliError::Other(format!("unknown vendor `{vendor}`")))?;
    crate::targets::families()
        .into_iter()
        .find(|f| f.name == *name)
        .ok_or_else(|| CliError::Other(format!("no target family `{name}`")))
}

/// Proves the imported descriptions against the hand-written ones and says how it went.
fn cross_check_text(vendor: &str, report: &Report) -> Result<String, CliError> {
    crate::verify::solver_available("z3").map_err(CliError::Other)?;
    let hand = (family_of(vendor)?.hand_isa)().map_err(|d| CliError::Other(d.to_string()))?;
    let checks = crate::verify::crosscheck::cross_check(
        &report.entries,
        hand,
        &crate::verify::Options::default(),
    )
    .map_err(CliError::Other)?;
    let agree = checks
        .iter()
        .filter(|c| matches!(c.verdict, crate::verify::Verdict::Proved))
        .count();
    let mut s = format!(
        "cross-check against the hand-written descriptions: {} compared, {agree} agree\n",
        checks.len()
    );
    for c in checks
        .iter()
        .filter(|c| !matches!(c.verdict, crate::verify::Verdict::Proved))
    {
        s.push_str(&format!("  DISAGREE {}: {:?}\n", c.intrinsic, c.verdict));
    }
    Ok(s)
}
