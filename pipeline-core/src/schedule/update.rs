//! The loops of an update stage and what a schedule may do with them.
//!
//! An update's variables are its reduction variables (first rdom dimension
//! innermost) followed by the pure variables of its left-hand side. The front
//! end guarantees that a pure variable `x` of an update reads the func itself
//! only at `x` in its own dimension, so the iterations of a pure variable are
//! independent: they can be reordered, vectorized and run in parallel.
//!
//! The iterations of a reduction variable `r` are applied in order by
//! definition; they may be reordered (and so vectorized) only when the result
//! cannot depend on their order:
//!
//! - the update is an integer reduction `f(a) = f(a) op e` with `op` one of
//!   `+ - * min max & | ^` (wrapping arithmetic: associative and commutative;
//!   `e` does not read `f`), or
//! - `r` is itself a coordinate of the left-hand side and the update reads
//!   `f` only at the point it writes: each iteration of `r` owns its points.
//!
//! Only the second kind may run in parallel (the first would race on the
//! points several iterations share).
//!
//! ```text
//! hist(input(rx, ry)) += 1      rx, ry reorderable (integer +), not parallel
//! cdf(r) = cdf(r - 1) + h(r)    r fixed in order
//! sums(x, ry) += g(x, ry)       x parallel; ry reorderable
//! ```

use crate::ir::{BinOp, ExprKind, FuncId, Pipeline, Source, Update};

/// A variable of an update stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateVar {
    /// Reduction variable `r` of the rdom.
    Reduction(usize),
    /// The pure variable of dimension `d`.
    Pure(usize),
}

/// The variables of update `k` of `f`, innermost first, with their names.
pub fn update_vars(p: &Pipeline, f: FuncId, k: usize) -> Vec<(String, UpdateVar)> {
    let func = &p.funcs[f];
    let u = &func.updates[k];
    let mut out: Vec<(String, UpdateVar)> = u
        .rdom
        .iter()
        .enumerate()
        .map(|(r, dim)| (dim.name.clone(), UpdateVar::Reduction(r)))
        .collect();
    for (d, a) in u.args.iter().enumerate() {
        if matches!(a.kind, ExprKind::Var(_)) {
            out.push((func.vars[d].clone(), UpdateVar::Pure(d)));
        }
    }
    out
}

/// The dimension of `f` that variable `v` of update `u` writes with its own
/// value, if any: then distinct iterations write distinct slabs.
pub fn written_dim(u: &Update, v: UpdateVar) -> Option<usize> {
    match v {
        UpdateVar::Pure(d) => Some(d),
        UpdateVar::Reduction(r) => u
            .args
            .iter()
            .position(|a| matches!(a.kind, ExprKind::RVar(k) if k == r)),
    }
}

/// True when update `u` of `f` reads `f` only at the point it writes.
fn pointwise(f: FuncId, u: &Update) -> bool {
    !u.value.any(&mut |n| {
        matches!(&n.kind, ExprKind::Load { source: Source::Func(g), args, .. } if *g == f && *args != u.args)
    })
}

/// True when `u` is `f(a) = f(a) op e` with an associative and commutative
/// integer `op` and `e` free of `f`.
pub fn associative(f: FuncId, u: &Update) -> bool {
    let reads_f = |e: &crate::ir::Expr| {
        e.any(&mut |n| matches!(&n.kind, ExprKind::Load { source: Source::Func(g), .. } if *g == f))
    };
    let is_old = |e: &crate::ir::Expr| matches!(&e.kind, ExprKind::Load { source: Source::Func(g), args, .. } if *g == f && *args == u.args);
    if !u.value.ty.is_int() {
        return false;
    }
    match &u.value.kind {
        ExprKind::Binary(op, a, b) => match op {
            BinOp::Add
            | BinOp::Mul
            | BinOp::Min
            | BinOp::Max
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor => (is_old(a) && !reads_f(b)) || (is_old(b) && !reads_f(a)),
            // (f - a) - b == (f - b) - a in wrapping arithmetic.
            BinOp::Sub => is_old(a) && !reads_f(b),
            _ => false,
        },
        _ => false,
    }
}

/// Whether the iterations of `v` may run in any order (see the module docs).
pub fn reorderable(f: FuncId, u: &Update, v: UpdateVar) -> bool {
    match v {
        UpdateVar::Pure(_) => true,
        UpdateVar::Reduction(_) => {
            associative(f, u) || (written_dim(u, v).is_some() && pointwise(f, u))
        }
    }
}

/// Whether the iterations of `v` may run at the same time on several threads.
pub fn parallelizable(f: FuncId, u: &Update, v: UpdateVar) -> bool {
    match v {
        UpdateVar::Pure(_) => true,
        UpdateVar::Reduction(_) => written_dim(u, v).is_some() && pointwise(f, u),
    }
}
