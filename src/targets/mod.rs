//! The targets: one folder per target family, and the registry that names them.
//!
//! A folder (`x86/`, `arm/`, `hvx/`) holds everything about its family: the instruction
//! descriptions (`isa/*.isa`), the hand-written lowering rules (`lower.rules`), the thin
//! [`Target`] implementation of each target of the family (C types, loads, what the
//! descriptions cannot say), its runtime files and any selection strategy only it needs.
//! Everything generic (selection, emission, kernels, the command line) reads targets
//! through [`REGISTRY`] and the [`Target`] trait, never by name: adding a target is adding
//! a folder and a line to [`REGISTRY`].

pub mod arm;
pub mod hvx;
pub mod riscv_v;
pub mod x86;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use crate::diag::{Diag, Source};
use crate::isa::Isa;
use crate::isa::target::{Target, TargetSpec};
use crate::lower::Backend;
use crate::lower::strategy::Strategy;
use crate::rules::{RuleKind, RuleSet};

/// A target family: the descriptions and hand-written rules its targets share.
pub struct Family {
    /// The family name (`x86`): `harrow verify --target` takes it.
    pub name: &'static str,
    /// Every description of the family (all features), loaded once.
    pub isa: fn() -> Result<&'static Isa, Diag>,
    /// The hand-written descriptions alone: what imported ones are cross-checked against
    /// (`isa` may also hold imported descriptions of intrinsics these do not describe).
    pub hand_isa: fn() -> Result<&'static Isa, Diag>,
    /// The hand-written lowering rules: (path shown in diagnostics, text).
    pub rules: (&'static str, &'static str),
    /// Reads the vendor's specification into descriptions (`harrow isa import`), if the
    /// family has an importer.
    pub importer: Option<crate::isa::import::Importer>,
    /// The importer's committed output: (path in the repository, text), embedded.
    pub imported: Option<(&'static str, &'static str)>,
}

/// One target of the registry.
pub struct Registration {
    /// The facts about it.
    pub spec: &'static TargetSpec,
    /// Its family.
    pub family: &'static Family,
    /// Its [`Target`] implementation.
    pub make: fn() -> Box<dyn Target>,
    /// Its selection strategies, in the order selection tries them.
    pub strategies: fn() -> Vec<Arc<dyn Strategy>>,
    /// Its synthesized lowering rules (`harrow synth lower`): (path shown in diagnostics,
    /// text).
    pub synth: (&'static str, &'static str),
}

/// Which lowering rules a backend uses besides the ones its instruction descriptions
/// derive (`harrow --rules-from`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RulesFrom {
    /// The hand-written rules of the target's family only.
    Hand,
    /// The synthesized rules of the target only.
    Synth,
    /// Both.
    #[default]
    All,
}

impl RulesFrom {
    /// The name `--rules-from` takes.
    pub fn name(self) -> &'static str {
        match self {
            RulesFrom::Hand => "hand",
            RulesFrom::Synth => "synth",
            RulesFrom::All => "all",
        }
    }

    /// The choice a name stands for.
    pub fn from_name(s: &str) -> Option<RulesFrom> {
        [RulesFrom::Hand, RulesFrom::Synth, RulesFrom::All]
            .into_iter()
            .find(|r| r.name() == s)
    }
}

/// The rules [`backend`] uses: chosen once per process by the command line.
static RULES_FROM: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(2);

/// Sets which rules [`backend`] uses from now on (the command line's `--rules-from`).
pub fn set_rules_from(r: RulesFrom) {
    RULES_FROM.store(r as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The rules [`backend`] uses.
pub fn rules_from() -> RulesFrom {
    match RULES_FROM.load(std::sync::atomic::Ordering::Relaxed) {
        0 => RulesFrom::Hand,
        1 => RulesFrom::Synth,
        _ => RulesFrom::All,
    }
}

/// Every target harrow compiles for, in the order the command line lists them.
pub static REGISTRY: &[Registration] = &[x86::AVX2, x86::AVX512, arm::NEON, hvx::HVX, riscv_v::RVV];

/// The target the command line uses when none is given: the registry's first.
pub const DEFAULT_TARGET: &str = REGISTRY[0].spec.name;

/// Why a target or family could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// No target has the name.
    #[error("unknown target `{name}`; expected one of: {}", expected.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names there are.
        expected: Vec<&'static str>,
    },
    /// No family has the name.
    #[error("unknown target family `{name}`; expected one of: {}", expected.join(", "))]
    UnknownFamily {
        /// The name asked for.
        name: String,
        /// The families there are.
        expected: Vec<&'static str>,
    },
    /// A description or rule file (built in, or given) has an error: where, and what.
    #[error("{0}")]
    Rules(Box<Diag>),
}

impl From<Diag> for TargetError {
    fn from(d: Diag) -> Self {
        TargetError::Rules(Box::new(d))
    }
}

/// The names accepted by `--target`.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|r| r.spec.name).collect()
}

/// The registry entry of a target name.
pub fn lookup(name: &str) -> Result<&'static Registration, TargetError> {
    REGISTRY
        .iter()
        .find(|r| r.spec.name == name)
        .ok_or_else(|| TargetError::Unknown {
            name: name.to_string(),
            expected: names(),
        })
}

/// The target families, each once, in registry order.
pub fn families() -> Vec<&'static Family> {
    let mut seen = BTreeSet::new();
    REGISTRY
        .iter()
        .filter(|r| seen.insert(r.family.name))
        .map(|r| r.family)
        .collect()
}

/// A few lines for `--help`: every target with its summary.
pub fn help() -> String {
    let mut s = String::from("Targets:\n");
    for r in REGISTRY {
        s.push_str(&format!("  {:<12} {}\n", r.spec.name, r.spec.summary));
    }
    s
}

/// Builds the backend of a target: its family's descriptions restricted to its features,
/// the derived and hand-written rules, and extra rule files.
fn build(reg: &Registration, extra: &[Arc<Source>], from: RulesFrom) -> Result<Backend, Diag> {
    let hand = Source::new(reg.family.rules.0, reg.family.rules.1);
    let synth = Source::new(reg.synth.0, reg.synth.1);
    let (first, more): (Arc<Source>, Vec<Arc<Source>>) = match from {
        RulesFrom::Hand => (hand, extra.to_vec()),
        RulesFrom::Synth => (synth, extra.to_vec()),
        RulesFrom::All => (
            hand,
            std::iter::once(synth)
                .chain(extra.iter().cloned())
                .collect(),
        ),
    };
    let features: BTreeSet<&str> = reg.spec.features.iter().copied().collect();
    Backend::build(
        (reg.family.isa)()?,
        &features,
        &first,
        &more,
        (reg.make)(),
        (reg.strategies)(),
    )
}

/// Builds the backend for a target name, with extra rule files.
pub fn backend_with(name: &str, extra: &[Arc<Source>]) -> Result<Backend, TargetError> {
    Ok(build(lookup(name)?, extra, rules_from())?)
}

/// [`build`] with the built-in rules, read from the tables cache when an earlier process of
/// this build of harrow wrote it there (`rules::snapshot`): the target's lowering rules and
/// its instruction table.
fn cached_build(reg: &Registration, from: RulesFrom) -> Result<Backend, TargetError> {
    let name = format!("tables-{}-{}", reg.spec.name, from.name());
    let tables = crate::rules::snapshot::cached(&name, || {
        let b = build(reg, &[], from)?;
        Ok::<_, TargetError>(crate::rules::snapshot::Tables {
            instrs: table_in_order(&b.instrs),
            rule_sets: vec![b.rules],
        })
    })?;
    let Some(rules) = tables.rule_sets.into_iter().next() else {
        return Ok(build(reg, &[], from)?);
    };
    let mut instrs = crate::ir::instr::InstrTable::new();
    for i in tables.instrs {
        instrs.entry(i.intrinsic.clone()).or_default().push(i);
    }
    Ok(Backend {
        target: (reg.make)(),
        rules,
        instrs: Arc::new(instrs),
        strategies: (reg.strategies)(),
        selections: Default::default(),
    })
}

/// The instructions of a table, by intrinsic name and then in the table's order (which
/// rebuilds the same table).
fn table_in_order(t: &crate::ir::instr::InstrTable) -> Vec<Arc<crate::ir::instr::Instr>> {
    let mut names: Vec<&String> = t.keys().collect();
    names.sort();
    names
        .into_iter()
        .flat_map(|n| t[n].iter().cloned())
        .collect()
}

static BACKENDS: LazyLock<Mutex<HashMap<String, Arc<Backend>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The backend for a target name with the built-in rules [`rules_from`] chooses (built
/// once per process).
pub fn backend(name: &str) -> Result<Arc<Backend>, TargetError> {
    backend_from(name, rules_from())
}

/// The backend for a target name with the built-in rules `from` chooses (built once per
/// process).
pub fn backend_from(name: &str, from: RulesFrom) -> Result<Arc<Backend>, TargetError> {
    let key = format!("{name}/{}", from.name());
    let mut m = BACKENDS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(b) = m.get(&key) {
        return Ok(b.clone());
    }
    // Every compilation lifts too: load the lifting rules on another core meanwhile
    // (each takes about a third of a small kernel's compile time).
    let reg = lookup(name)?;
    let (b, _) = rayon::join(|| cached_build(reg, from), crate::lift::builtin_rules);
    let b = Arc::new(b?);
    m.insert(key, b.clone());
    Ok(b)
}

/// The family of a name (`x86`), for `harrow verify --target`.
pub fn family(name: &str) -> Result<&'static Family, TargetError> {
    families()
        .into_iter()
        .find(|f| f.name == name)
        .ok_or_else(|| TargetError::UnknownFamily {
            name: name.to_string(),
            expected: families().iter().map(|f| f.name).collect(),
        })
}

/// Every lowering rule of a target family, for proving: the rules derived from all its
/// instruction descriptions (every feature), their half rules, the hand-written rules, the
/// synthesized rules of its targets and any extra rule files.
pub fn family_rules(family: &Family, extra: &[Arc<Source>]) -> Result<RuleSet, Diag> {
    let all = (family.isa)()?;
    let (path, text) = family.rules;
    let src = Source::new(path, text);
    let table = Arc::new(all.table());
    let mut rules = all.derived.clone();
    rules.extend(RuleSet::load_with(&src, RuleKind::Lower, Some(&table))?.rules);
    // The synthesized rules of each of the family's targets.
    for reg in REGISTRY.iter().filter(|r| r.family.name == family.name) {
        let src = Source::new(reg.synth.0, reg.synth.1);
        rules.extend(RuleSet::load_with(&src, RuleKind::Lower, Some(&table))?.rules);
    }
    for s in extra {
        rules.extend(RuleSet::load_with(s, RuleKind::Lower, Some(&table))?.rules);
    }
    Ok(RuleSet::from_rules(rules, RuleKind::Lower))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::target::Purpose;

    #[test]
    fn toolchains_give_the_commands_and_levels_targets_need() {
        let args = |c: std::process::Command| -> Vec<String> {
            std::iter::once(c.get_program())
                .chain(c.get_args())
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let exe = std::path::Path::new("p");
        let log = std::path::Path::new("l");
        let arm = (lookup("arm-neon").unwrap().make)();
        assert_eq!(
            args(arm.run_command(exe)),
            ["qemu-aarch64", "-cpu", "max", "p"]
        );
        assert_eq!(
            args(arm.trace_command(exe, log).unwrap()),
            [
                "qemu-aarch64",
                "-cpu",
                "max",
                "-singlestep",
                "-d",
                "exec,nochain",
                "-D",
                "l",
                "p"
            ]
        );
        let x86 = (lookup("x86-avx2").unwrap().make)();
        assert_eq!(args(x86.run_command(exe)), ["p"]);
        assert!(x86.trace_command(exe, log).is_none());
        let hvx = (lookup("hvx").unwrap().make)();
        assert_eq!(hvx.opt_level(Purpose::Kernel), "-O1");
        assert_eq!(hvx.opt_level(Purpose::Baseline), "-O3");
        assert_eq!(arm.opt_level(Purpose::Cases), "-O2");
    }

    #[test]
    fn every_target_reads_back_the_tables_it_built() {
        use crate::rules::snapshot::{decode, encode};
        for reg in REGISTRY {
            let built = build(reg, &[], RulesFrom::All).expect("built-in tables build");
            let instrs = table_in_order(&built.instrs);
            let bytes = encode(&[&built.rules], &instrs).expect("the tables can be written");
            let read = decode(&bytes).expect("and read back");
            let name = reg.spec.name;
            assert_eq!(read.rule_sets.len(), 1, "{name}");
            let dump = |set: &RuleSet| crate::rules::snapshot::dump(set);
            assert!(
                dump(&read.rule_sets[0]) == dump(&built.rules),
                "{name}: rules differ"
            );
            assert_eq!(read.instrs.len(), instrs.len(), "{name}");
            for (a, b) in read.instrs.iter().zip(&instrs) {
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
            }
        }
    }

    #[test]
    fn names_are_unique_and_specs_agree_with_their_targets() {
        let mut seen = BTreeSet::new();
        for r in REGISTRY {
            assert!(seen.insert(r.spec.name), "{} registered twice", r.spec.name);
            let t = (r.make)();
            assert_eq!(t.name(), r.spec.name);
            assert!(std::ptr::eq(t.spec(), r.spec), "{}", r.spec.name);
            assert_eq!(r.spec.family, r.family.name, "{}", r.spec.name);
        }
        let err = lookup("z80").err().unwrap();
        assert!(matches!(&err, TargetError::Unknown { name, .. } if name == "z80"));
        assert!(
            err.to_string()
                .contains("unknown target `z80`; expected one of: x86-avx2")
        );
    }
}
