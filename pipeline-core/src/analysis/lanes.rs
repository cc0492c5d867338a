//! What the emitters (and `lower::tails`) know of a lowered loop body
//! beyond its syntax: when a vectorized loop runs all its lanes, which
//! nodes every lane evaluates, the body in the case a split's condition
//! holds, and the traversals they share. Pure functions of the lowered IR: the Rust emitter's vector
//! code uses them, and so can any other emitter.

use crate::analysis::simplify::simplify;
use crate::ir::*;

/// When a vectorized loop runs all its lanes ([`lanes_of`]).
pub(crate) enum AllLanes<'e> {
    /// Always: `max` is constant (the steady state of a partitioned loop).
    Always,
    /// When this condition holds: `max` is a split's `select(c, w - 1, ..)`,
    /// whose last vector is shifted back to end at the extent when the
    /// extent is at least the width.
    When(&'e Expr),
    /// When the extent is the width: `max` is `min(w - 1, ..)`, a split
    /// whose last vector is ragged.
    ExtentIsWidth,
}

/// The first iteration and the vector width of a vectorized loop
/// `min..=max`, which needs a constant `min` and a `max` of the form `c`,
/// `min(c, ..)` or `select(.., c, ..)` (a split's inner loop), and when it
/// runs all its lanes.
pub(crate) fn lanes_of<'e>(min: &Expr, max: &'e Expr) -> Option<(i128, usize, AllLanes<'e>)> {
    let lo = min.as_int()?;
    let (hi, all) = match &max.kind {
        ExprKind::Int(v) => (*v, AllLanes::Always),
        ExprKind::Binary(BinOp::Min, a, b) => {
            (a.as_int().or_else(|| b.as_int())?, AllLanes::ExtentIsWidth)
        }
        ExprKind::Select(c, a, _) => (a.as_int()?, AllLanes::When(c)),
        _ => return None,
    };
    Some((lo, usize::try_from(hi - lo + 1).ok()?, all))
}

/// Whether `c` simplifies to true, or is a comparison `a < b` (`<=`) that
/// holds because one arm of a `min` in `a` is below `b`:
/// `min(16 x, e - 16) + 15 < e`, the guard of a split's shifted last
/// vector at its last lane.
pub(crate) fn provably_true(c: &Expr) -> bool {
    let c = simplify(c);
    match &c.kind {
        ExprKind::Bool(b) => *b,
        ExprKind::Binary(BinOp::And, a, b) => provably_true(a) && provably_true(b),
        ExprKind::Binary(op @ (BinOp::Lt | BinOp::Le), a, b) => {
            min_arms(a).into_iter().any(|arm| {
                let arm = Expr::binary(*op, arm, (**b).clone());
                matches!(simplify(&arm).kind, ExprKind::Bool(true))
            })
        }
        _ => false,
    }
}

/// Whether `c` provably holds in the first and the last lane of the vector
/// loop `v` (`first..first + w`): in every lane, where `c` is linear in
/// `v` (the callers' part).
pub(crate) fn holds_in_first_and_last(c: &Expr, v: &LoopVar, first: i128, w: usize) -> bool {
    let at = |lane: i128| c.with_loop(v, &Expr::i64(lane));
    provably_true(&at(first)) && provably_true(&at(first + w as i128 - 1))
}

/// The arms of the `min`s that bound `e` from above, with the constants
/// added to the `min` moved inside: `[16 x + 15, e - 1]` for
/// `min(16 x, e - 16) + 15`. `e` is at most each arm.
pub(crate) fn min_arms(e: &Expr) -> Vec<Expr> {
    let shifted = |x: &Expr, k: &Expr, op: BinOp| -> Vec<Expr> {
        min_arms(x)
            .into_iter()
            .map(|arm| Expr::binary(op, arm, k.clone()))
            .collect()
    };
    match &e.kind {
        ExprKind::Binary(BinOp::Min, a, b) => {
            let mut arms = min_arms(a);
            arms.extend(min_arms(b));
            arms
        }
        ExprKind::Binary(BinOp::Add, a, k) if k.as_int().is_some() => shifted(a, k, BinOp::Add),
        ExprKind::Binary(BinOp::Add, k, a) if k.as_int().is_some() => shifted(a, k, BinOp::Add),
        ExprKind::Binary(BinOp::Sub, a, k) if k.as_int().is_some() => shifted(a, k, BinOp::Sub),
        _ => vec![e.clone()],
    }
}

/// `s` in the case where `c` holds: every `select(c, a, b)` in it is `a`.
/// The copy's nodes are its own (`Expr::unshared`): the Rust emitter tells
/// them from the loop body's by address.
pub(crate) fn assuming(s: &Stmt, c: &Expr) -> Stmt {
    s.clone()
        .map_exprs(&mut |e| resolving(e, c, true).unshared())
}

/// `s` with every `select(c, a, b)` in it `a` where `c` `holds`, else `b`.
pub(crate) fn resolving_stmt(s: Stmt, c: &Expr, holds: bool) -> Stmt {
    s.map_exprs(&mut |e| resolving(e, c, holds))
}

/// `e` with every `select(c, a, b)` in it `a` where `c` `holds`, else `b`.
pub(crate) fn resolving(e: &Expr, c: &Expr, holds: bool) -> Expr {
    e.rewrite(&mut |n| match n.kind {
        ExprKind::Select(ref t, ref a, ref b) if **t == *c => {
            if holds {
                (**a).clone()
            } else {
                (**b).clone()
            }
        }
        _ => n,
    })
}

/// Whether every `LetVar` in `e` is bound by a `Let` inside `e` (so that `e`
/// can be emitted away from the lane code around it).
pub(crate) fn closed(e: &Expr) -> bool {
    let mut bound = Vec::new();
    e.visit(&mut |n| {
        if let ExprKind::Let { id, .. } = &n.kind {
            bound.push(*id);
        }
    });
    !e.any(&mut |n| matches!(&n.kind, ExprKind::LetVar(id) if !bound.contains(id)))
}

/// Calls `f` on the nodes of `e` that every lane evaluates: all but those
/// under a `select`'s branches.
pub(crate) fn visit_every_lane<'e>(e: &'e Expr, f: &mut impl FnMut(&'e Expr)) {
    visit_evaluated(e, false, f)
}

/// Calls `f` on the nodes of `e` that every evaluation of `e` evaluates:
/// all but those under a `select`'s branches and, where `&&` and `||`
/// short-circuit (`short_circuit`: the CUDA emitter's C++), their second
/// operands. A load there may be out of range where it is not evaluated.
pub(crate) fn visit_evaluated<'e>(e: &'e Expr, short_circuit: bool, f: &mut impl FnMut(&'e Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Select(c, _, _) => visit_evaluated(c, short_circuit, f),
        ExprKind::Binary(BinOp::And | BinOp::Or, a, _) if short_circuit && e.ty == Type::Bool => {
            visit_evaluated(a, short_circuit, f)
        }
        _ => e.for_each_child(|c| visit_evaluated(c, short_circuit, f)),
    }
}

/// `e` as a sum of a non-constant part (`None` for a constant) and a
/// constant: `x + 1` is `(x, 1)`, `3 * x - 2` is `(3 * x, -2)`.
pub(crate) fn split_constant(e: &Expr) -> (Option<&Expr>, i128) {
    match &e.kind {
        ExprKind::Int(v) => (None, *v),
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => match b.as_int() {
            Some(k) => {
                let (rest, c) = split_constant(a);
                (rest, if *op == BinOp::Add { c + k } else { c - k })
            }
            None => (Some(e), 0),
        },
        _ => (Some(e), 0),
    }
}

/// The direct children of `e`, in [`Expr::for_each_child`] order.
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    e.for_each_child(|c| out.push(c));
    out
}
