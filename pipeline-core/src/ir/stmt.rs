//! Statements: the lowered loop nests that code generation emits.
//!
//! Loops run over inclusive `i64` bounds (so the canonical empty range
//! `[i64::MAX, i64::MIN]` never runs). A definition's coordinates `Var(d)` and
//! `RVar(r)` are bound from loop variables by [`Stmt::LetCoord`] just above
//! the stores that use them.

use super::expr::{Expr, FuncId, LoopVar};
use crate::schedule::LoopKind;

/// A coordinate of a definition bound from loop variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coord {
    /// `Var(d)` of func `f`'s definitions.
    Pure(FuncId, usize),
    /// `RVar(r)` of update `k` of func `f`.
    Reduction(FuncId, usize, usize),
}

/// The part of a func's buffer that one iteration of a parallel loop writes:
/// iteration `i` (counting from the loop's min) writes coordinates
/// `[start + i * step, start + i * step + step - 1]` of dimension `dim`.
#[derive(Clone, Debug, PartialEq)]
pub struct Slab {
    /// The func written.
    pub func: FuncId,
    /// The dimension the iterations split.
    pub dim: usize,
    /// The first coordinate of the first slab (i64).
    pub start: Expr,
    /// Coordinates per iteration.
    pub step: i64,
}

/// A lowered statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// A buffer for `func` over `region`, live during `body`.
    Allocate {
        /// The func stored.
        func: FuncId,
        /// Inclusive `(min, max)` per dimension (i64); `(0, n - 1)` for a
        /// folded dimension.
        region: Vec<(Expr, Expr)>,
        /// Per dimension, `Some(n)` when storage is folded: coordinate `c` is
        /// stored at `c mod n` (a power of two).
        fold: Vec<Option<i64>>,
        /// Where it is used.
        body: Box<Stmt>,
    },
    /// `for var in min..=max` (inclusive i64 bounds).
    For {
        /// The variable.
        var: LoopVar,
        /// First value.
        min: Expr,
        /// Last value.
        max: Expr,
        /// How the loop runs.
        kind: LoopKind,
        /// For a parallel loop: what each iteration writes.
        slab: Option<Slab>,
        /// The body.
        body: Box<Stmt>,
    },
    /// Binds a bounds symbol (i64) for `body`.
    LetSym {
        /// The symbol (numbered after the global bounds program's).
        sym: super::expr::SymId,
        /// Its value.
        value: Expr,
        /// Where it is visible.
        body: Box<Stmt>,
    },
    /// Binds a definition's coordinate (as i32) for `body`.
    LetCoord {
        /// The coordinate.
        coord: Coord,
        /// Its value (i64, from loop variables).
        value: Expr,
        /// Where it is visible.
        body: Box<Stmt>,
    },
    /// `func(args) = value` (the stage is `update`, `None` for the pure one).
    Store {
        /// The func written.
        func: FuncId,
        /// Which definition: `None` pure, `Some(k)` update k.
        update: Option<usize>,
        /// Coordinates (i32).
        args: Vec<Expr>,
        /// The value.
        value: Expr,
    },
    /// Runs `body` when `cond` holds.
    If {
        /// The condition.
        cond: Expr,
        /// The body.
        body: Box<Stmt>,
    },
    /// Copies the output region of a func's buffer into the caller's output.
    CopyToOutput {
        /// The func computed.
        func: FuncId,
        /// Index of the output.
        output: usize,
    },
    /// Statements in order.
    Block(Vec<Stmt>),
}

impl Stmt {
    /// The statement with `f` applied to each statement directly inside it
    /// (the body of a loop, allocation, binding or conditional; each
    /// statement of a block): the one traversal the lowering passes share.
    pub fn map_children(self, mut f: impl FnMut(Stmt) -> Stmt) -> Stmt {
        match self {
            Stmt::For {
                var,
                min,
                max,
                kind,
                slab,
                body,
            } => Stmt::For {
                var,
                min,
                max,
                kind,
                slab,
                body: Box::new(f(*body)),
            },
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } => Stmt::Allocate {
                func,
                region,
                fold,
                body: Box::new(f(*body)),
            },
            Stmt::LetSym { sym, value, body } => Stmt::LetSym {
                sym,
                value,
                body: Box::new(f(*body)),
            },
            Stmt::LetCoord { coord, value, body } => Stmt::LetCoord {
                coord,
                value,
                body: Box::new(f(*body)),
            },
            Stmt::If { cond, body } => Stmt::If {
                cond,
                body: Box::new(f(*body)),
            },
            Stmt::Block(stmts) => Stmt::Block(stmts.into_iter().map(f).collect()),
            s @ (Stmt::Store { .. } | Stmt::CopyToOutput { .. }) => s,
        }
    }

    /// The statement with `f` applied to every expression in it, in this
    /// statement and in those inside it.
    pub fn map_exprs(mut self, f: &mut impl FnMut(&Expr) -> Expr) -> Stmt {
        for e in self.own_exprs_mut() {
            *e = f(e);
        }
        self.map_children(|c| c.map_exprs(f))
    }

    /// The expressions of this statement itself (not of those inside it).
    pub(crate) fn own_exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Stmt::For { min, max, slab, .. } => {
                let mut exprs = vec![min, max];
                exprs.extend(slab.as_mut().map(|s| &mut s.start));
                exprs
            }
            Stmt::Allocate { region, .. } => {
                region.iter_mut().flat_map(|(lo, hi)| [lo, hi]).collect()
            }
            Stmt::LetSym { value, .. } | Stmt::LetCoord { value, .. } => vec![value],
            Stmt::Store { args, value, .. } => args.iter_mut().chain([value]).collect(),
            Stmt::If { cond, .. } => vec![cond],
            Stmt::Block(_) | Stmt::CopyToOutput { .. } => Vec::new(),
        }
    }

    /// The expressions of this statement itself, read-only (the
    /// counterpart of `own_exprs_mut`).
    pub fn own_exprs(&self) -> Vec<&Expr> {
        match self {
            Stmt::For { min, max, slab, .. } => {
                let mut exprs = vec![min, max];
                exprs.extend(slab.as_ref().map(|s| &s.start));
                exprs
            }
            Stmt::Allocate { region, .. } => region.iter().flat_map(|(lo, hi)| [lo, hi]).collect(),
            Stmt::LetSym { value, .. } | Stmt::LetCoord { value, .. } => vec![value],
            Stmt::Store { args, value, .. } => args.iter().chain([value]).collect(),
            Stmt::If { cond, .. } => vec![cond],
            Stmt::Block(_) | Stmt::CopyToOutput { .. } => Vec::new(),
        }
    }

    /// The statements directly inside this one, in order (the read-only
    /// counterpart of [`Stmt::map_children`]).
    pub fn children(&self) -> &[Stmt] {
        match self {
            Stmt::For { body, .. }
            | Stmt::Allocate { body, .. }
            | Stmt::LetSym { body, .. }
            | Stmt::LetCoord { body, .. }
            | Stmt::If { body, .. } => std::slice::from_ref(&**body),
            Stmt::Block(stmts) => stmts,
            Stmt::Store { .. } | Stmt::CopyToOutput { .. } => &[],
        }
    }

    /// The func whose stage this statement computes, if it is a stage.
    pub fn stage_func(&self) -> Option<FuncId> {
        match self {
            Stmt::For { var, .. } => Some(var.func),
            Stmt::Store { func, .. } => Some(*func),
            Stmt::LetCoord { body, .. } | Stmt::If { body, .. } | Stmt::LetSym { body, .. } => {
                body.stage_func()
            }
            // The parts of one partitioned loop.
            Stmt::Block(stmts) => {
                let first = stmts.first()?.stage_func()?;
                stmts
                    .iter()
                    .all(|s| s.stage_func() == Some(first))
                    .then_some(first)
            }
            _ => None,
        }
    }
}
