//! Statements: the lowered loop nests that code generation emits.
//!
//! Loop variables are `i64` while iterating (so an empty range `[i64::MAX,
//! i64::MIN]` never runs) and are seen by expressions as `i32` coordinates:
//! `Var(d)` inside the statements of func `f` is the loop variable
//! `LoopVar::Pure(f, d)`, `RVar(r)` is `LoopVar::Reduction(f, k, r)`.

use super::expr::{Expr, FuncId};

/// A loop variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoopVar {
    /// Pure dimension `d` of func `f`.
    Pure(FuncId, usize),
    /// Reduction dimension `r` of update `k` of func `f`.
    Reduction(FuncId, usize, usize),
}

impl LoopVar {
    /// The func whose stage the loop belongs to.
    pub fn func(self) -> FuncId {
        match self {
            LoopVar::Pure(f, _) | LoopVar::Reduction(f, _, _) => f,
        }
    }
}

/// How a loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForKind {
    /// In order.
    Serial,
    /// Iterations in parallel on rayon; the body writes only to the loop's
    /// func, whose buffer is split along the loop's dimension.
    Parallel,
}

/// A lowered statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// A buffer for `func` over its realized region, live during `body`.
    Allocate {
        /// The func stored.
        func: FuncId,
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
        /// Serial or parallel.
        kind: ForKind,
        /// The body.
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
