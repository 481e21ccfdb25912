//! Instruction selection: a memoized dynamic program over the chunk expression.
//!
//! For each node the candidates are: every lowering rule whose left-hand side matches the
//! node (derived rules `semantics => instruction` and the hand-written `rules/<target>.rules`),
//! with its predicate checked against interval bounds; for FPIR operations, their definition
//! in primitive operators; and always the generic fallback, which the C emitter can write
//! for any node. A candidate's cost is its instructions' costs plus the best costs of the
//! sub-expressions it leaves to select; the cheapest wins. A rule's right-hand side may
//! contain ordinary operators (`or` of two `subs_epu8`), which are selected in turn.
//!
//! Shared sub-expressions are counted once per use, which slightly over-prices DAGs but
//! never changes what is computed.

use std::sync::Arc;

pub use super::dag_cost::{DagCosts, GenericPricing, generic_cost, instr_cost};
use super::parts::{concat_part, load_part};
use super::strategy::{Context, Proposal, Strategy};
use crate::bounds::{Bounds, Intervals};
use crate::ir::instr::InstrTable;
use crate::ir::{Expr, Op};
use crate::rules::RuleSet;
use crate::util::idhash::{IdMap, IdSet};

pub use super::origin::Origin;
use super::origin::{Origins, Source};

/// What selection produced for one node.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Estimated cost in cycles of reciprocal throughput.
    pub cost: f64,
    /// The node with instructions chosen below it (instructions, generic nodes, leaves).
    pub expr: Expr,
}

/// The selector: rules, strategies, bounds and memo tables for one compilation.
pub struct Selector<'r> {
    rules: &'r RuleSet,
    register_bits: u32,
    /// The target's strategies, tried in order after the rules.
    strategies: Vec<Arc<dyn Strategy>>,
    /// The target's instructions, for strategies that build instructions.
    instrs: Arc<InstrTable>,
    /// The strategies' memo tables (parts of shared operands are built once).
    strategy_memos: IdMap<(&'static str, u8), IdMap<usize, Expr>>,
    bounds: Intervals,
    /// Sums that are operands of a larger sum: the pairwise candidate (`super::pairs`) is
    /// built for whole sums only, since each part's candidate would be re-read and selected
    /// again as part of the whole's (quadratic in the number of taps).
    inner_sums: IdMap<usize, Expr>,
    /// Nodes the expressions given to select read more than once: a strategy computing a
    /// reader of one from the node's own operands saves nothing where the node is
    /// computed for its other readers anyway.
    shared: IdSet<usize>,
    /// Operands of additive reductions, which are not split into halves.
    reduced: IdMap<usize, Expr>,
    memo: IdMap<usize, (Expr, Selected)>,
    active: IdSet<usize>,
    /// Inputs for validating checked proposals by evaluation (six random environments
    /// over the whole expression, each remembering the values it computed), when set.
    validation: Option<Vec<crate::interp::CachedEval>>,
    /// Whether checked proposals are taken on trust while searching ([`Selector::select_trusting`]).
    trusting: bool,
    /// Checked proposals taken on trust, by the node their selection built (or a part of
    /// it that a slice took): the node they are for, the form proposed (checked when the
    /// result uses that node), and the node itself (held so that its id stays its own).
    trusted: IdMap<usize, Vec<(Expr, Expr, Expr)>>,
    /// The costs of selected DAGs (whether generic widening casts of loads are priced as
    /// folded loads is its setting).
    costs: DagCosts,
    /// Where each instruction node built so far came from (`--explain`): the first rule or
    /// strategy whose candidate built it.
    origins: Origins,
    /// FPIR nodes whose cheapest form is their definition (no instruction or rule covers
    /// them whole): the operands selection also tries to see through.
    defined: IdMap<usize, Expr>,
    /// The strategy whose proposal is being selected, if any: rules applied inside it
    /// apply to the form it made.
    proposing: Option<&'static str>,
    /// The strategy splitting wide values whose halves are being selected, if any: past
    /// [`SPLIT_BOTH_WAYS_NODES`], their wide parts are split the same way again.
    splitting: Option<&'static str>,
    /// What wrote the expression being selected, if not the caller: a rule's right-hand
    /// side or a strategy's proposal (an instruction written below an ordinary operator
    /// is theirs).
    context: Option<Source>,
}

/// How many nodes a selection may have selected before the halves of a split value are
/// split again only the way it was split. Offered both splits (registers kept whole or
/// not) at every level, the parts of a value of many registers mix them into distinct
/// forms by the thousand: depthwise_conv at 64 lanes on riscv-v selected 33k nodes in
/// 130 ms, 13k with one way per split. Small selections gain from mixing (matmul_u8's
/// 135 nodes on AVX2 are 11% cheaper); none of the suite's or the fuzz seeds' outcomes
/// changes at this limit, which only the largest kernels reach (a limit of 5,000 made
/// conv_nn on AVX2 15% dearer).
const SPLIT_BOTH_WAYS_NODES: usize = 10_000;

impl<'r> Selector<'r> {
    /// A selector over `rules` for registers of `register_bits`, with `bounds` for predicates
    /// and no strategies.
    pub fn new(rules: &'r RuleSet, register_bits: u32, bounds: Intervals) -> Self {
        Selector {
            rules,
            register_bits,
            strategies: Vec::new(),
            instrs: Arc::new(InstrTable::new()),
            strategy_memos: IdMap::default(),
            bounds,
            memo: IdMap::default(),
            active: IdSet::default(),
            inner_sums: IdMap::default(),
            shared: IdSet::default(),
            reduced: IdMap::default(),
            costs: DagCosts::new(register_bits, false),
            validation: None,
            trusting: false,
            trusted: IdMap::default(),
            origins: Origins::default(),
            defined: IdMap::default(),
            proposing: None,
            splitting: None,
            context: None,
        }
    }

    /// Also tries `strategies` (in order) on every node, building instructions from
    /// `instrs`.
    pub fn with_strategies(
        mut self,
        strategies: Vec<Arc<dyn Strategy>>,
        instrs: Arc<InstrTable>,
    ) -> Self {
        self.strategies = strategies;
        self.instrs = instrs;
        self
    }

    /// Prices generic widening casts of dense loads as the folded loads clang makes of
    /// them, for targets whose widening instructions read memory directly.
    pub fn with_folded_widening_loads(mut self) -> Self {
        self.costs.fold_widening_loads = true;
        self
    }

    /// Prices generic operations as `pricing` says.
    pub fn with_pricing(mut self, pricing: super::dag_cost::GenericPricing) -> Self {
        self.costs.pricing = pricing;
        self
    }

    /// Prices the strided slices of loads in `table` as the target's compiler lowers them.
    pub fn with_deinterleaved_loads(
        mut self,
        table: &'static [crate::isa::target::DeinterleavedLoad],
    ) -> Self {
        self.costs.deinterleaved = table;
        self
    }

    /// Validates checked proposals on random inputs to `root`'s variables and buffers,
    /// evaluating each node once over all the checks (a checked proposal is otherwise
    /// evaluated from scratch with its operands: quadratic in a long sum).
    pub fn with_validation_inputs(mut self, root: &Expr) -> Self {
        self.validation = Some(
            (0..super::linear::VALIDATION_SEEDS)
                .map(|k| {
                    let env =
                        crate::interp::random_env(root, super::linear::VALIDATION_SEED + k, &[]);
                    crate::interp::CachedEval::new(env)
                })
                .collect(),
        );
        self
    }

    /// Whether `form` computes what `e` computes on the validation inputs.
    fn agrees(&mut self, e: &Expr, form: &Expr) -> bool {
        let Some(evals) = &mut self.validation else {
            return super::linear::agrees(e, form);
        };
        evals
            .iter_mut()
            .all(|ev| super::linear::agrees_in(ev, e, form))
    }

    /// [`Selector::select`], with checked proposals taken on trust while searching and
    /// checked afterwards, only those whose selection (or a part of it) the result uses:
    /// most proposals that win where they are made lose further up, and each check
    /// evaluates both forms on every validation input. Returns `None` when one of them
    /// fails: the caller then selects again with a selector that checks every proposal as
    /// it is made. Every form the result uses is checked, so the result is right; that it
    /// is the one checking as proposed would choose is measured, not guaranteed (a wrong
    /// form that loses further up still priced its node, and DAG costs are not monotone):
    /// the suite and the fuzz kernels lower to the same C either way.
    pub fn select_trusting(&mut self, e: &Expr) -> Option<Selected> {
        self.trusting = true;
        let s = self.select(e);
        self.trusting = false;
        let used: Vec<(Expr, Expr)> = crate::ir::visit::post_order(&s.expr)
            .iter()
            .filter_map(|n| self.trusted.remove(&n.id()))
            .flatten()
            .map(|(node, form, _)| (node, form))
            .collect();
        used.iter()
            .all(|(node, form)| self.agrees(node, form))
            .then_some(s)
    }

    /// Notes the nodes `root` reads more than once (by distinct readers or operands), for
    /// the strategies ([`Context::is_shared`]).
    pub fn note_shared(&mut self, root: &Expr) {
        let mut reads: IdMap<usize, u32> = IdMap::default();
        for n in crate::ir::visit::post_order(root) {
            for a in n.args() {
                *reads.entry(a.id()).or_default() += 1;
            }
        }
        self.shared
            .extend(reads.into_iter().filter(|&(_, r)| r > 1).map(|(id, _)| id));
    }

    /// The cheapest implementation of `e`.
    pub fn select(&mut self, e: &Expr) -> Selected {
        if let Some((_, s)) = self.memo.get(&e.id()) {
            return s.clone();
        }
        let s = self.compute(e);
        self.memo.insert(e.id(), (e.clone(), s.clone()));
        s
    }

    fn compute(&mut self, e: &Expr) -> Selected {
        if matches!(e.op(), Op::Add | Op::Sub) {
            for a in e.args() {
                if matches!(a.op(), Op::Add | Op::Sub) {
                    self.inner_sums.insert(a.id(), a.clone());
                }
            }
        }
        if matches!(e.op(), Op::ReduceAdd) {
            self.reduced.insert(e.arg(0).id(), e.arg(0).clone());
        }
        // Scalars (index arithmetic, parameters) and leaves stay as they are.
        if e.ty().is_scalar() || e.args().is_empty() || matches!(e.op(), Op::Load(..)) {
            return Selected {
                cost: generic_cost(e, self.register_bits),
                expr: e.clone(),
            };
        }
        // The half of a concatenation is the part: splitting leaves these behind.
        if let Op::Slice { start, stride: 1 } = e.op()
            && let Some(part) = concat_part(e.arg(0), *start, e.ty().lanes)
        {
            return self.select(&part);
        }
        // A register-sized part of a load wider than a register is a load of that part
        // (the wide load is several register loads anyway).
        if let Op::Slice { start, stride: 1 } = e.op()
            && e.arg(0).ty().total_bits() > self.register_bits as u64
            && let Some(part) = load_part(e.arg(0), *start, e.ty().lanes)
        {
            return self.select(&part);
        }
        let args: Vec<Selected> = e.args().iter().map(|a| self.select(a)).collect();
        if let Op::Slice { start, stride: 1 } = e.op()
            && let Some(part) = concat_part(&args[0].expr, *start, e.ty().lanes)
        {
            // A result that uses only this part of a form taken on trust still relies on
            // it: the check goes with the part.
            if let Some(entries) = self.trusted.get(&args[0].expr.id()).cloned() {
                self.trusted.entry(part.id()).or_default().extend(entries);
            }
            return Selected {
                cost: self.costs.cost(&part),
                expr: part,
            };
        }
        let expr = e
            .with_args(args.iter().map(|a| a.expr.clone()).collect())
            .expect("selection keeps types");
        // An instruction given to selection keeps the origin of the node it was given as
        // (a rule's right-hand side wrote it), or is a strategy's (its proposal wrote it).
        if matches!(expr.op(), Op::Instr(_))
            && !self.origins.inherit(e, &expr)
            && let Some(source) = self.context
        {
            self.record(&expr, source);
        }
        let mut best = Selected {
            cost: self.costs.cost(&expr),
            expr,
        };
        if !self.active.insert(e.id()) {
            return best;
        }
        for &(ri, ii) in self.rules.candidates(e) {
            let rule = &self.rules.rules[ri];
            let Some(rhs) = crate::rewrite::apply(rule, &rule.insts[ii], e, &mut self.bounds)
            else {
                continue;
            };
            if rhs == *e {
                continue;
            }
            let cand = self.select_rhs(&rhs, Source::Rule(ri));
            if cand.cost < best.cost {
                best = cand;
            }
        }
        for k in 0..self.strategies.len() {
            let strategy = self.strategies[k].clone();
            // The wide operand of a reduction (the products of a pairwise multiply-add)
            // is read whole by the instructions that reduce it; its halves, each split
            // two ways below, were most of the selection time of depthwise_conv.
            let splits = strategy.splits_wide_values();
            if splits && self.reduced.contains_key(&e.id()) {
                continue;
            }
            if splits
                && self.memo.len() > SPLIT_BOTH_WAYS_NODES
                && self.splitting.is_some_and(|s| s != strategy.name())
            {
                continue;
            }
            let mut cx = Context {
                register_bits: self.register_bits,
                instrs: &self.instrs,
                inner_sums: &self.inner_sums,
                shared: &self.shared,
                memos: &mut self.strategy_memos,
            };
            let (proposal, check) = match strategy.propose(e, &mut cx) {
                Some(Proposal::Checked(p)) => (*p, true),
                Some(p) => (p, false),
                None => continue,
            };
            let outer = self.proposing.replace(strategy.name());
            let outer_context = self.context.replace(Source::Rebuilt(strategy.name()));
            let outer_splitting = self.splitting;
            if splits {
                self.splitting = Some(strategy.name());
            }
            let (cand, form) = match proposal {
                Proposal::Select(x) => (self.select(&x), x),
                Proposal::Instructions(x) => {
                    (self.select_rhs(&x, Source::Strategy(strategy.name())), x)
                }
                Proposal::Checked(_) => {
                    self.proposing = outer;
                    self.context = outer_context;
                    self.splitting = outer_splitting;
                    continue;
                }
            };
            self.proposing = outer;
            self.context = outer_context;
            self.splitting = outer_splitting;
            if cand.cost < best.cost && (!check || self.trusting || self.agrees(e, &form)) {
                if check && self.trusting {
                    let entry = (e.clone(), form, cand.expr.clone());
                    self.trusted.entry(cand.expr.id()).or_default().push(entry);
                }
                best = cand;
            }
        }
        if e.op().is_fpir() {
            let def = super::cform::folded_definition_with(e, self.costs.folder());
            let cand = self.select(&def);
            if cand.cost < best.cost {
                best = cand;
                self.defined.insert(e.id(), e.clone());
            }
        }
        if let Some(seen_through) = self.fpir_operands_defined(e) {
            let cand = self.select(&seen_through);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        self.active.remove(&e.id());
        best
    }

    /// `e` with its FPIR operands that no instruction covers whole (their cheapest form is
    /// their definition) written as their definitions, when it has any: an instruction or
    /// strategy that fuses `e` with the operand's primitive form then applies. Arm's `mla`
    /// takes `acc + widening_mul(a, b)` of mixed signs, which no widening instruction
    /// covers (the product alone is a `mul` of the widened operands, the sum an `add`);
    /// x86's pairwise multiply-adds read the products of a sum of widened taps.
    fn fpir_operands_defined(&mut self, e: &Expr) -> Option<Expr> {
        if e.op().is_fpir() || !e.args().iter().any(|a| self.defined.contains_key(&a.id())) {
            return None;
        }
        // Strategies that read sums of products as written (HVX's reduction multiplies)
        // build better than the per-node estimate can tell from the seen-through form.
        if self.strategies.iter().any(|s| s.reads_sums_as_written()) {
            return None;
        }
        let folder = self.costs.folder();
        let args = e
            .args()
            .iter()
            .map(|a| {
                if self.defined.contains_key(&a.id()) {
                    super::cform::folded_definition_with(a, folder)
                } else {
                    a.clone()
                }
            })
            .collect();
        let out = e.with_args(args).ok()?;
        (out != *e).then_some(out)
    }

    /// Selects a rule's right-hand side: its instructions stay (and come from `origin`),
    /// everything else is selected.
    fn select_rhs(&mut self, e: &Expr, origin: Source) -> Selected {
        let expr = self.select_rhs_expr(e, origin);
        Selected {
            cost: self.costs.cost(&expr),
            expr,
        }
    }

    fn select_rhs_expr(&mut self, e: &Expr, origin: Source) -> Expr {
        match e.op() {
            Op::Instr(_) => {
                let args: Vec<Expr> = e
                    .args()
                    .iter()
                    .map(|a| self.select_rhs_expr(a, origin))
                    .collect();
                let out = e.with_args(args).expect("selection keeps types");
                self.record(&out, origin);
                out
            }
            _ => {
                // Instructions the right-hand side writes below ordinary operators (a
                // shuffle of a multiply) are its own too, whatever selection makes of them.
                let outer = self.context.replace(origin);
                let out = self.select(e).expr;
                self.context = outer;
                out
            }
        }
    }

    /// Remembers `origin` for the instruction node `n`, unless an earlier one is known.
    fn record(&mut self, n: &Expr, origin: Source) {
        self.origins.record(n, origin, self.proposing);
    }

    /// The origins of the instructions in `selected`, in post-order: what `--explain`
    /// reports. Instructions with no recorded origin were written by the caller.
    pub fn origins_in(&self, selected: &Expr) -> Vec<(Expr, Origin)> {
        self.origins.spelled(selected, self.rules)
    }

    /// Bounds used by predicates (exposed for reports).
    pub fn bounds(&mut self) -> &mut dyn Bounds {
        &mut self.bounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::lanes::SplatFolder;
    use crate::lower::prepare::tests::entry;

    #[test]
    fn a_folder_folds_as_fold_splats_does_when_reused() {
        let mut folder = SplatFolder::default();
        for text in [
            "(uint16)in_u16(x) + (uint16)((uint8)3 + (uint8)4)",
            "int16((uint8)in_u8(x)) * int16((int8)2)",
            "(uint16)in_u16(x) + (uint16)((uint8)3 + (uint8)4) * (uint16)in_u16(x + 1)",
        ] {
            let e = entry(text, 8);
            assert_eq!(folder.fold(&e), crate::lower::lanes::fold_splats(&e), "{e}");
            assert_eq!(folder.fold(&e), crate::lower::lanes::fold_splats(&e), "{e}");
        }
    }

    /// Proposes its second expression (to be checked) for its first.
    struct Propose(Expr, Expr);

    impl Strategy for Propose {
        fn name(&self) -> &'static str {
            "test proposal"
        }
        fn propose(&self, e: &Expr, _: &mut Context<'_>) -> Option<Proposal> {
            (*e == self.0).then(|| Proposal::Select(self.1.clone()).checked())
        }
    }

    #[test]
    fn proposals_taken_on_trust_are_checked_where_the_result_uses_them() {
        let e = entry("(uint16)in_u16(x) * (uint16)4 + (uint16)in_u16(x + 1)", 8);
        let rules = RuleSet::default();
        let with = |form: &Expr| {
            Selector::new(&rules, 128, Intervals::new())
                .with_strategies(
                    vec![Arc::new(Propose(e.clone(), form.clone()))],
                    Arc::new(InstrTable::new()),
                )
                .with_validation_inputs(&e)
        };
        // A shift is cheaper than a multiply: the right one is taken, and checked.
        let shifted = entry(
            "((uint16)in_u16(x) << (uint16)2) + (uint16)in_u16(x + 1)",
            8,
        );
        let s = with(&shifted)
            .select_trusting(&e)
            .expect("the shift is right");
        assert_eq!(s.expr, shifted);
        // The wrong one is cheaper too, so the search takes it; the check at the end
        // refuses the result, and checking as proposals are made never takes it.
        let wrong = entry(
            "((uint16)in_u16(x) << (uint16)3) + (uint16)in_u16(x + 1)",
            8,
        );
        assert!(with(&wrong).select_trusting(&e).is_none());
        assert_eq!(with(&wrong).select(&e).expr, e);
    }

    /// A result that uses only part of a form taken on trust (the low half of a wide sum,
    /// through a slice) still has that form checked.
    #[test]
    fn a_part_of_a_trusted_form_is_checked_too() {
        // Sixteen half words: two registers of 128 bits.
        let wide = entry("(uint16)in_u16(x) * (uint16)4 + (uint16)in_u16(x + 1)", 16);
        let low = crate::ir::mk_typed(
            Op::Slice {
                start: 0,
                stride: 1,
            },
            wide.ty().with_lanes(8),
            vec![wide.clone()],
        );
        // Two wrong halves (a shift by 3 for a product by 4), cheaper than the product.
        let halves = [
            "((uint16)in_u16(x) << (uint16)3) + (uint16)in_u16(x + 1)",
            "((uint16)in_u16(x + 8) << (uint16)3) + (uint16)in_u16(x + 9)",
        ]
        .map(|text| entry(text, 8));
        let wrong = Expr::build(Op::Concat, None, halves.to_vec()).expect("halves concatenate");
        let rules = RuleSet::default();
        let mut sel = Selector::new(&rules, 128, Intervals::new())
            .with_strategies(
                vec![Arc::new(Propose(wide.clone(), wrong))],
                Arc::new(InstrTable::new()),
            )
            .with_validation_inputs(&low);
        assert!(sel.select_trusting(&low).is_none());
    }

    #[test]
    fn validation_reuses_values_and_rejects_a_wrong_form() {
        let e = entry("(uint16)in_u16(x) * (uint16)4 + (uint16)in_u16(x + 1)", 8);
        let rules = RuleSet::default();
        let mut sel = Selector::new(&rules, 128, Intervals::new()).with_validation_inputs(&e);
        let shifted = entry(
            "((uint16)in_u16(x) << (uint16)2) + (uint16)in_u16(x + 1)",
            8,
        );
        let wrong = entry(
            "((uint16)in_u16(x) << (uint16)3) + (uint16)in_u16(x + 1)",
            8,
        );
        assert!(sel.agrees(&e, &shifted));
        assert!(!sel.agrees(&e, &wrong));
        assert!(
            sel.agrees(&e, &shifted),
            "asked again, from remembered values"
        );
    }
}
