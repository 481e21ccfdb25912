//! harrow IR: a typed, hash-consed expression DAG.
//!
//! Invariants (relied on everywhere else):
//! - every [`Expr`] is well typed: nodes are only built through [`Expr::build`], which runs
//!   [`typeck::infer`];
//! - structurally equal expressions are the same allocation, so `==` and hashing are O(1)
//!   (pointer identity) and shared sub-terms are shared in memory;
//! - nodes are immutable; rewriting builds new nodes.

pub mod instr;
pub mod op;
pub mod typeck;
pub mod visit;

use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex, Weak};

pub use op::{Align, Op, OpKey, Sym};

use crate::types::{Elem, Type};

/// One node: operator, result type and operands.
#[derive(Debug)]
pub struct Node {
    op: Op,
    ty: Type,
    args: Box<[Expr]>,
    /// Structural hash, stable across runs (it does not depend on addresses).
    hash: u64,
}

/// A reference to a hash-consed, well-typed IR node. Cheap to clone, compare and hash.
#[derive(Clone)]
pub struct Expr(Arc<Node>);

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Expr {}

impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

/// An expression is written as its tree (operator, type, operands); reading it builds the
/// nodes again through [`Expr::build`], so what is read is well typed and shared.
impl serde::Serialize for Expr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.op(), self.ty(), self.args()).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Expr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Expr, D::Error> {
        let (op, ty, args) = <(Op, Type, Vec<Expr>)>::deserialize(d)?;
        Expr::build(op, Some(ty), args).map_err(|e| serde::de::Error::custom(e.0))
    }
}

// `Display` (Halide syntax) and `Debug` (S-expressions) are implemented by the printers in
// `crate::syntax`, above the IR: the IR does not know its concrete syntaxes.

/// A type error from building a node: the message names the operator and the types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TypeError(pub String);

const SHARDS: usize = 16;

struct Shard {
    table: crate::util::idhash::IdMap<u64, Bucket>,
    inserts_since_sweep: usize,
}

/// The nodes of one structural hash. Almost every hash has one node, kept inline: a
/// vector per entry was an allocation (and a free) for every node interned.
enum Bucket {
    One(Weak<Node>),
    Many(Vec<Weak<Node>>),
}

impl Bucket {
    fn nodes(&self) -> &[Weak<Node>] {
        match self {
            Bucket::One(w) => std::slice::from_ref(w),
            Bucket::Many(v) => v,
        }
    }

    /// Adds `node`, in the place of a dead node where there is one.
    fn push(&mut self, node: Weak<Node>) {
        match self {
            Bucket::One(w) if w.strong_count() == 0 => *w = node,
            Bucket::One(w) => *self = Bucket::Many(vec![w.clone(), node]),
            Bucket::Many(v) => match v.iter_mut().find(|w| w.strong_count() == 0) {
                Some(dead) => *dead = node,
                None => v.push(node),
            },
        }
    }

    /// Drops dead nodes; false when none is left.
    fn retain_live(&mut self) -> bool {
        match self {
            Bucket::One(w) => w.strong_count() > 0,
            Bucket::Many(v) => {
                v.retain(|w| w.strong_count() > 0);
                !v.is_empty()
            }
        }
    }
}

static INTERNER: LazyLock<Vec<Mutex<Shard>>> = LazyLock::new(|| {
    (0..SHARDS)
        .map(|_| {
            Mutex::new(Shard {
                table: crate::util::idhash::IdMap::default(),
                inserts_since_sweep: 0,
            })
        })
        .collect()
});

/// FNV-1a style mixing; deterministic so that hashes (and anything ordered by them) are
/// reproducible from run to run.
struct StableHasher(u64);
impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        // A final avalanche so that nearby inputs land in different shards.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51afd7ed558ccd);
        x ^= x >> 33;
        x
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100000001b3);
        }
    }
    // Whole words in one step: interning hashes every node built (most of it operand
    // hashes and discriminants), and a byte at a time was most of interning's time.
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x100000001b3);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(u64::from(v));
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_i128(&mut self, v: i128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
}

fn structural_hash(op: &Op, ty: Type, args: &[Expr]) -> u64 {
    let mut h = StableHasher(0xcbf29ce484222325);
    op.hash(&mut h);
    ty.hash(&mut h);
    for a in args {
        h.write_u64(a.0.hash);
    }
    h.finish()
}

impl Expr {
    /// Builds (or finds) the node `op(args)`, checking types. `ty` is required for operators
    /// whose result type does not follow from the operands (see [`typeck::infer`]).
    pub fn build(op: Op, ty: Option<Type>, args: Vec<Expr>) -> Result<Expr, TypeError> {
        let arg_types: Vec<Type> = args.iter().map(|a| a.ty()).collect();
        let ty = typeck::infer(&op, ty, &arg_types).map_err(TypeError)?;
        Ok(Self::intern(op, ty, args))
    }

    fn intern(op: Op, ty: Type, args: Vec<Expr>) -> Expr {
        let hash = structural_hash(&op, ty, &args);
        let shard = &INTERNER[(hash as usize) % SHARDS];
        let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bucket) = shard.table.get(&hash) {
            for w in bucket.nodes() {
                if let Some(n) = w.upgrade()
                    && n.op == op
                    && n.ty == ty
                    && n.args.len() == args.len()
                    && n.args.iter().zip(&args).all(|(a, b)| a == b)
                {
                    return Expr(n);
                }
            }
        }
        let node = Arc::new(Node {
            op,
            ty,
            args: args.into_boxed_slice(),
            hash,
        });
        match shard.table.entry(hash) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                o.get_mut().push(Arc::downgrade(&node))
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Bucket::One(Arc::downgrade(&node)));
            }
        }
        shard.inserts_since_sweep += 1;
        // Dead entries are swept once the table has grown by as much as it held live, which
        // keeps the amortised cost constant per insertion.
        if shard.inserts_since_sweep > 4096 && shard.inserts_since_sweep > shard.table.len() {
            shard.table.retain(|_, b| b.retain_live());
            shard.inserts_since_sweep = 0;
        }
        drop(shard);
        Expr(node)
    }

    /// The operator.
    pub fn op(&self) -> &Op {
        &self.0.op
    }

    /// The result type.
    pub fn ty(&self) -> Type {
        self.0.ty
    }

    /// The operands.
    pub fn args(&self) -> &[Expr] {
        &self.0.args
    }

    /// Operand `i`; panics if out of range (callers know the arity of the op they matched).
    pub fn arg(&self, i: usize) -> &Expr {
        &self.0.args[i]
    }

    /// The stable structural hash.
    pub fn structural_hash(&self) -> u64 {
        self.0.hash
    }

    /// A stable identity for memo tables keyed by node, valid while `self` is alive.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether this node is a constant, given which of its operands are (`constant`, a
    /// memo's answer for nodes below): it reads no input (a variable, a load, a `let`'s
    /// binding) and every operand is constant. The one definition that selection's costs,
    /// the splat folder and the hoisting estimate share.
    pub fn is_constant_over(&self, constant: impl Fn(&Expr) -> bool) -> bool {
        !matches!(self.op(), Op::Var(_) | Op::Load(..) | Op::Let(_))
            && self.args().iter().all(constant)
    }

    /// Rebuilds this node with new operands (same operator and, where needed, type).
    pub fn with_args(&self, args: Vec<Expr>) -> Result<Expr, TypeError> {
        if args.len() == self.args().len() && args.iter().zip(self.args()).all(|(a, b)| a == b) {
            return Ok(self.clone());
        }
        Expr::build(self.op().clone(), explicit_type(self), args)
    }

    // ---- leaf constructors ----

    /// A scalar constant from an exact value; errors if it is not representable in `elem`.
    pub fn int(elem: Elem, value: i128) -> Result<Expr, TypeError> {
        if elem.is_float() {
            // An integer as a float only when it is exactly one: no silent rounding.
            let x = value as f32;
            if !x.is_finite() || x as i128 != value {
                return Err(TypeError(format!("{value} is not exactly a {elem}")));
            }
            return Ok(Self::bits(elem, x.to_bits() as u128));
        }
        let fits = value >= elem.min_value() && elem.max_value().is_none_or(|m| value <= m);
        if !fits {
            return Err(TypeError(format!("{value} does not fit in {elem}")));
        }
        Ok(Self::bits(elem, value as u128 & elem.mask()))
    }

    /// A scalar constant from a bit pattern (only the low `elem.bits()` bits are kept).
    pub fn bits(elem: Elem, bits: u128) -> Expr {
        Self::intern(Op::Const(bits & elem.mask()), Type::scalar(elem), vec![])
    }

    /// A constant broadcast to `ty` (a scalar when `ty` has one lane).
    pub fn splat(ty: Type, value: i128) -> Result<Expr, TypeError> {
        let c = Expr::int(ty.elem, value)?;
        Ok(c.broadcast(ty.lanes))
    }

    /// A named input.
    pub fn var(name: impl Into<Sym>, ty: Type) -> Expr {
        Self::intern(Op::Var(name.into()), ty, vec![])
    }

    // ---- structural helpers ----

    /// Broadcasts a scalar (or repeats a vector) to `lanes` total lanes; identity if equal.
    pub fn broadcast(&self, lanes: u32) -> Expr {
        if lanes == self.ty().lanes {
            return self.clone();
        }
        Expr::build(
            Op::Broadcast,
            Some(self.ty().with_lanes(lanes)),
            vec![self.clone()],
        )
        .expect("broadcast to a multiple of the lane count")
    }

    /// Wrapping cast to the element type `elem`, keeping lanes; identity if already `elem`.
    pub fn cast(&self, elem: Elem) -> Expr {
        if self.ty().elem == elem {
            return self.clone();
        }
        Self::intern(Op::Cast, self.ty().with_elem(elem), vec![self.clone()])
    }

    /// If this is a scalar constant or a broadcast of one, its bit pattern.
    pub fn as_const_bits(&self) -> Option<u128> {
        match self.op() {
            Op::Const(b) => Some(*b),
            Op::Broadcast => self.arg(0).as_const_bits(),
            _ => None,
        }
    }

    /// If this is a (broadcast) integer constant, its exact value in its own element type.
    pub fn as_const(&self) -> Option<i128> {
        let b = self.as_const_bits()?;
        Some(crate::types::to_i128(b, self.ty().elem))
            .filter(|_| !matches!(self.ty().elem, Elem::U128 | Elem::F32))
    }

    /// Number of distinct nodes in the DAG rooted here.
    pub fn dag_size(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![self.clone()];
        while let Some(e) = stack.pop() {
            if seen.insert(e.id()) {
                stack.extend(e.args().iter().cloned());
            }
        }
        seen.len()
    }
}

/// The result type to pass back to [`Expr::build`] when rebuilding `e` with new operands:
/// present for operators whose type is not inferred from operands.
pub fn explicit_type(e: &Expr) -> Option<Type> {
    match e.op() {
        Op::Const(_)
        | Op::Var(_)
        | Op::Load(..)
        | Op::Ramp
        | Op::Broadcast
        | Op::Cast
        | Op::Reinterpret
        | Op::SaturatingCast
        | Op::Slice { .. }
        | Op::ReduceAdd
        | Op::ReduceMin
        | Op::ReduceMax => Some(e.ty()),
        _ => None,
    }
}

/// Builds `op(args)` where the result type follows from the operands; panics on a type error.
/// For internal constructions whose types are correct by construction.
pub fn mk(op: Op, args: Vec<Expr>) -> Expr {
    match Expr::build(op, None, args) {
        Ok(e) => e,
        Err(e) => panic!("internal construction is ill-typed: {e}"),
    }
}

/// Builds `op(args)` with an explicit result type; panics on a type error.
/// For internal constructions whose types are correct by construction.
pub fn mk_typed(op: Op, ty: Type, args: Vec<Expr>) -> Expr {
    match Expr::build(op, Some(ty), args) {
        Ok(e) => e,
        Err(e) => panic!("internal construction is ill-typed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_keeps_every_live_node_of_its_hash_and_reuses_dead_places() {
        let t = Type::vec(Elem::U8, 16);
        // Names no other test uses: another test's live `a` would keep this one alive.
        let a = Expr::var("bucket_test_a", t);
        let b = Expr::var("bucket_test_b", t);
        let dead = Arc::downgrade(&Expr::var("gone_from_every_table", t).0);
        let mut bucket = Bucket::One(dead.clone());
        bucket.push(Arc::downgrade(&a.0));
        assert!(
            matches!(bucket, Bucket::One(_)),
            "a dead node's place is reused"
        );
        bucket.push(Arc::downgrade(&b.0));
        bucket.push(dead);
        let live = |bk: &Bucket| bk.nodes().iter().filter_map(Weak::upgrade).count();
        assert_eq!((bucket.nodes().len(), live(&bucket)), (3, 2));
        assert!(bucket.retain_live());
        assert_eq!(bucket.nodes().len(), 2);
        drop((a, b));
        assert!(!bucket.retain_live(), "a bucket of dead nodes is dropped");
    }

    #[test]
    fn hash_consing_shares_structure() {
        let t = Type::vec(Elem::U8, 16);
        let a = Expr::var("a", t);
        let b = Expr::var("b", t);
        let s1 = mk(Op::Add, vec![a.clone(), b.clone()]);
        let s2 = mk(Op::Add, vec![Expr::var("a", t), Expr::var("b", t)]);
        assert_eq!(s1, s2);
        assert_eq!(s1.id(), s2.id());
        let s3 = mk(Op::Add, vec![b, a]);
        assert_ne!(s1, s3);
    }

    #[test]
    fn ill_typed_nodes_are_refused() {
        let a = Expr::var("a", Type::vec(Elem::U8, 16));
        let b = Expr::var("b", Type::vec(Elem::U16, 16));
        let err = Expr::build(Op::Add, None, vec![a.clone(), b]).unwrap_err();
        assert!(err.0.contains("u8x16 and u16x16"), "{err}");
        let w = Expr::build(Op::WideningAdd, None, vec![a.clone(), a.clone()]).unwrap();
        assert_eq!(w.ty(), Type::vec(Elem::U16, 16));
        let ws = Expr::build(Op::WideningSub, None, vec![a.clone(), a]).unwrap();
        assert_eq!(ws.ty(), Type::vec(Elem::I16, 16));
    }

    #[test]
    fn constants_check_range() {
        assert!(Expr::int(Elem::U8, 256).is_err());
        assert!(Expr::int(Elem::I8, -128).is_ok());
        assert_eq!(Expr::int(Elem::I8, -1).unwrap().as_const(), Some(-1));
    }
}
