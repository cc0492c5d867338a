//! A checked pipeline: the DAG of funcs that the front end produces and every
//! later stage (interpreter, bounds inference, lowering) consumes.
//!
//! **Invariant:** funcs are stored in definition order and a func only reads
//! funcs defined before it (or itself, in an update), so the index order is a
//! topological order of the DAG.

use super::expr::{Expr, FuncId};
use super::types::Type;

/// An input image parameter `name: Image<T, N>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The parameter name.
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// Number of dimensions (1..=4).
    pub dims: usize,
}

/// A scalar parameter `name: T`.
#[derive(Clone, Debug)]
pub struct Param {
    /// The parameter name.
    pub name: String,
    /// Its type.
    pub ty: Type,
}

/// One dimension of a reduction domain: `min .. min + extent`.
#[derive(Clone, Debug, PartialEq)]
pub struct RDomDim {
    /// The reduction variable's name.
    pub name: String,
    /// First value (i32, may use params and input extents).
    pub min: Expr,
    /// Number of values (i32).
    pub extent: Expr,
}

/// An update definition `f(args) = value` applied over a reduction domain in
/// lexicographic order, first dimension innermost. Pure variables may appear
/// in `args` only as themselves at their own position; they range over the
/// region the func's consumers need.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The reduction domain (empty for an update without one).
    pub rdom: Vec<RDomDim>,
    /// The coordinates written (i32).
    pub args: Vec<Expr>,
    /// The new value (may read the func itself).
    pub value: Expr,
    /// The user's tokens of the left-hand side, for the checker's messages
    /// (an index into its table of call sites).
    pub site: usize,
}

/// A func: a pure definition over pure variables plus update definitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Name for messages and generated identifiers (`gauss[2]` for families).
    pub name: String,
    /// Names of the pure variables, one per dimension.
    pub vars: Vec<String>,
    /// Value type.
    pub ty: Type,
    /// The pure definition.
    pub pure: Expr,
    /// Update definitions, applied in order after the pure one.
    pub updates: Vec<Update>,
    /// The natural extent of each dimension (the guide's *Sizes*, `pipeline::guide::language`) as an i32
    /// expression of input extents, when the definition determines one.
    pub natural_extent: Vec<Option<Expr>>,
}

impl Func {
    /// Number of dimensions.
    pub fn dims(&self) -> usize {
        self.vars.len()
    }
}

/// A checked pipeline.
#[derive(Clone, Debug)]
pub struct Pipeline {
    /// The pipeline's name (the generated function's name).
    pub name: String,
    /// Input images, in declaration order.
    pub inputs: Vec<Input>,
    /// Scalar parameters, in declaration order.
    pub params: Vec<Param>,
    /// The order in which inputs and scalars were declared: `(is_input, index)`.
    pub arg_order: Vec<(bool, usize)>,
    /// All funcs in definition order (a topological order).
    pub funcs: Vec<Func>,
    /// The output funcs, in the order of the tail expression.
    pub outputs: Vec<FuncId>,
}

impl Pipeline {
    /// The funcs each func reads (each consumer once per producer), by id.
    pub fn callees(&self, f: FuncId) -> Vec<FuncId> {
        let mut out = Vec::new();
        let func = &self.funcs[f];
        let mut add = |e: &Expr| {
            e.visit(&mut |n| {
                if let super::ExprKind::Load {
                    source: super::Source::Func(g),
                    ..
                } = n.kind
                {
                    if g != f && !out.contains(&g) {
                        out.push(g);
                    }
                }
            })
        };
        add(&func.pure);
        for u in &func.updates {
            u.args.iter().for_each(&mut add);
            add(&u.value);
            for r in &u.rdom {
                add(&r.min);
                add(&r.extent);
            }
        }
        out
    }

    /// Every expression of a func's definitions, with the update index (None
    /// for the pure definition).
    pub fn definition_exprs(&self, f: FuncId) -> Vec<(Option<usize>, &Expr)> {
        let func = &self.funcs[f];
        let mut out = vec![(None, &func.pure)];
        for (k, u) in func.updates.iter().enumerate() {
            for a in &u.args {
                out.push((Some(k), a));
            }
            out.push((Some(k), &u.value));
            for r in &u.rdom {
                out.push((Some(k), &r.min));
                out.push((Some(k), &r.extent));
            }
        }
        out
    }

    /// Funcs reachable from the outputs, in topological order (producers first).
    pub fn live_funcs(&self) -> Vec<FuncId> {
        let mut live = vec![false; self.funcs.len()];
        let mut stack: Vec<FuncId> = self.outputs.clone();
        while let Some(f) = stack.pop() {
            if !live[f] {
                live[f] = true;
                stack.extend(self.callees(f));
            }
        }
        (0..self.funcs.len()).filter(|&f| live[f]).collect()
    }

    /// The funcs that read `f` (not counting `f` itself).
    pub fn consumers(&self, f: FuncId) -> Vec<FuncId> {
        self.live_funcs()
            .into_iter()
            .filter(|&c| c != f && self.callees(c).contains(&f))
            .collect()
    }

    /// [`Pipeline::consumers`] of every func at once, indexed by func,
    /// counting only the readers among `live` (each once): one pass over
    /// the reads, where `consumers` scans them all per call.
    pub fn consumer_lists(&self, live: &[FuncId]) -> Vec<Vec<FuncId>> {
        let mut out = vec![Vec::new(); self.funcs.len()];
        for &c in live {
            for g in self.callees(c) {
                out[g].push(c);
            }
        }
        out
    }
}
