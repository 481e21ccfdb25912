//! Importing instruction semantics from vendors' specifications (`harrow isa import`).
//!
//! A target family that can read its vendor's data provides an [`Importer`]
//! (`Family::importer`); this module holds what every importer shares: the lane-expression
//! model the pseudocode is evaluated into ([`lanes`]), the entries and skip reasons of a
//! report, the `.isa` text they are written as, and the cross-check of imported entries
//! against the hand-written descriptions of the same intrinsics.

pub mod bits;
pub mod classes;
pub mod lanes;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::ir::Expr;
use crate::types::Type;

/// Why a vendor entry was not imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Floating-point lanes (harrow is integer and fixed point).
    FloatingPoint,
    /// Reads or writes memory.
    Memory,
    /// Takes or produces a predicate mask register.
    Masks,
    /// Reads or changes state outside its operands (flags, control registers, random numbers).
    SystemState,
    /// An immediate operand the importer does not model yet.
    Immediate,
    /// A scalar operand or result (harrow's descriptions are about vector registers).
    Scalar,
    /// Registers no harrow target has (MMX's 64-bit registers).
    Registers,
    /// Needs a CPU feature no harrow target has.
    Feature,
    /// The pseudocode uses a construct the importer does not translate.
    Unsupported,
    /// The imported semantics disagree with the hardware (the vendor text, or its reading,
    /// is wrong); listed, not imported.
    FailedCheck,
}

impl SkipReason {
    /// The reason as the report prints it.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::FloatingPoint => "floating point",
            SkipReason::Memory => "memory",
            SkipReason::Masks => "masks",
            SkipReason::SystemState => "system state",
            SkipReason::Immediate => "immediate operand",
            SkipReason::Scalar => "scalar operand or result",
            SkipReason::Registers => "registers no target has",
            SkipReason::Feature => "CPU feature no target has",
            SkipReason::Unsupported => "unsupported construct",
            SkipReason::FailedCheck => "failed the hardware check",
        }
    }
}

/// One imported description.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Assembly mnemonic.
    pub mnemonic: String,
    /// C intrinsic.
    pub intrinsic: String,
    /// Operands: name and type (an immediate's type is `i32`).
    pub params: Vec<(String, Type)>,
    /// For each operand, its range if it is an immediate.
    pub imms: Vec<Option<(i128, i128)>>,
    /// Result type.
    pub result: Type,
    /// CPU features (harrow's names).
    pub features: Vec<String>,
    /// Latency and reciprocal throughput.
    pub cost: (f32, f32),
    /// Where the cost comes from (a hand-written description, or the default).
    pub cost_from_hand: bool,
    /// Semantics over the operand names.
    pub semantics: Expr,
}

/// A vendor entry that was not imported.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Skip {
    /// The vendor's name for it.
    pub name: String,
    /// Why.
    pub reason: SkipReason,
    /// Details (the construct, the feature, ...).
    pub detail: String,
}

/// What an import produced.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Entries read from the vendor data.
    pub vendor_entries: usize,
    /// Imported descriptions, in the vendor's order.
    pub entries: Vec<Entry>,
    /// Entries not imported.
    pub skipped: Vec<Skip>,
}

impl Report {
    /// Skips counted by reason.
    pub fn counts(&self) -> BTreeMap<SkipReason, usize> {
        let mut m = BTreeMap::new();
        for s in &self.skipped {
            *m.entry(s.reason).or_insert(0) += 1;
        }
        m
    }

    /// The summary table `harrow isa import` prints.
    pub fn summary(&self, vendor: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{vendor}: {} vendor entries", self.vendor_entries);
        let intrinsics: std::collections::BTreeSet<&str> =
            self.entries.iter().map(|e| e.intrinsic.as_str()).collect();
        let _ = writeln!(
            s,
            "  imported: {} descriptions of {} intrinsics",
            self.entries.len(),
            intrinsics.len()
        );
        for (r, n) in self.counts() {
            let _ = writeln!(s, "  skipped, {}: {n}", r.name());
        }
        s
    }
}

/// The cost of each intrinsic the hand-written descriptions `hand` price (the first
/// instantiation's): imported descriptions of the same intrinsics take it.
pub fn hand_costs(hand: &crate::isa::Isa) -> BTreeMap<String, (f32, f32)> {
    let mut costs = BTreeMap::new();
    for i in &hand.instrs {
        costs
            .entry(i.intrinsic.clone())
            .or_insert((i.cost.latency, i.cost.throughput));
    }
    costs
}

/// An entry no hand-written description prices costs what the same instruction costs where
/// one does (`vmlal_n_s16` is `smlal` as `vmlal_s16` is; a masked AVX-512 form is its
/// unmasked instruction): the first such price, in the vendor's order, among the entries of
/// the same `key` (the mnemonic on Arm; on x86 also the result and operand types, which
/// change the price).
/// Entries with no such price keep theirs (the importer's documented default).
pub fn price_by_instruction<K: Eq + std::hash::Hash>(
    entries: &mut [Entry],
    key: impl Fn(&Entry) -> K,
) {
    let mut by_key: std::collections::HashMap<K, (f32, f32)> = Default::default();
    for e in entries.iter().filter(|e| e.cost_from_hand) {
        by_key.entry(key(e)).or_insert(e.cost);
    }
    for e in entries.iter_mut().filter(|e| !e.cost_from_hand) {
        if let Some(c) = by_key.get(&key(e)) {
            e.cost = *c;
            e.cost_from_hand = true;
        }
    }
}

/// What a family's importer is given.
pub struct ImportContext<'a> {
    /// The `shared/vendor` folder.
    pub vendor_dir: &'a Path,
}

/// A family's importer: reads its vendor's data and returns the report.
pub type Importer = fn(&ImportContext) -> Result<Report, String>;

/// `u8x16` for a vector type, `i32` for a scalar.
pub fn type_text(t: Type) -> String {
    if t.is_scalar() {
        t.elem.name().to_string()
    } else {
        format!("{}x{}", t.elem.name(), t.lanes)
    }
}

/// The `.isa` text of `entries`, under a header saying how it was made.
pub fn write_isa(header: &str, entries: &[Entry]) -> String {
    let mut s = String::new();
    for line in header.lines() {
        let _ = writeln!(s, ";; {line}");
    }
    s.push('\n');
    for e in entries {
        let params: Vec<String> = e
            .params
            .iter()
            .zip(&e.imms)
            .map(|((n, t), imm)| match imm {
                Some((lo, hi)) => format!("{n}: imm({lo}..{hi})"),
                None => format!("{n}: {}", type_text(*t)),
            })
            .collect();
        let _ = writeln!(
            s,
            "instr {} {}({}) -> {} features {} cost {} {} = {}",
            e.mnemonic,
            e.intrinsic,
            params.join(", "),
            type_text(e.result),
            e.features.join(" "),
            e.cost.0,
            e.cost.1,
            e.semantics
        );
    }
    s
}

/// The list of skipped entries as text: one line each, by reason then name.
pub fn write_skips(skipped: &[Skip]) -> String {
    let mut v: Vec<&Skip> = skipped.iter().collect();
    v.sort_by(|a, b| (a.reason, &a.name).cmp(&(b.reason, &b.name)));
    let mut s = String::new();
    for k in v {
        let _ = writeln!(s, "{}\t{}\t{}", k.reason.name(), k.name, k.detail);
    }
    s
}
