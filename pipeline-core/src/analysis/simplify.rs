//! A small algebraic simplifier for integer expressions, used mainly on the
//! `i64` bound expressions of bounds inference so that generated bounds read
//! like `out.min.y - 1` rather than `min(out.min.y + -1, out.min.y + 0)`.
//!
//! Rules (each applied bottom-up, children first):
//! - constant folding of integer and boolean operations with the DSL's
//!   semantics (wrapping, Euclidean division, x / 0 == 0);
//! - `x + 0 -> x`, `x * 1 -> x`, `x * 0 -> 0`, `0 + x -> x`, `c + x -> x + c`;
//! - `(x + c1) + c2 -> x + (c1 + c2)` and `(x + c1) - c2 -> x + (c1 - c2)`;
//! - `(x + c1) - (y + c2) -> (x - y) + (c1 - c2)`, same for `+`;
//! - `min(x + c1, x + c2) -> x + min(c1, c2)` (also with `x` alone), same for max,
//!   and `min((x + c1) / k, (x + c2) / k) -> (x + min(c1, c2)) / k` for `k > 0`,
//!   also between any two operands of a chain of the same operation;
//! - `min(x, x) -> x`, `select(true, a, b) -> a`, `select(c, a, a) -> a`;
//! - `cast` of a constant folds.
//!
//! Only `i64` and `i32` additions are reassociated: bounds are computed as
//! mathematical integers (coordinates stay far from the type limits,
//! and the entry function checks every region fits in `i32`).

use crate::ir::{BinOp, Expr, ExprKind, Type};
use std::sync::Arc;

/// Simplifies an expression (see the module docs for the rules).
pub fn simplify(e: &Expr) -> Expr {
    e.simplify_with(&mut |n| simplify_node(n, false))
}

/// Applies only the rules that are exact under wrapping arithmetic (constant
/// folding, `select` on a constant, casts of constants): safe on the values
/// a pipeline computes, not just on bounds.
pub fn fold_constants(e: &Expr) -> Expr {
    e.rewrite(&mut |n| simplify_node(n, true))
}

/// Splits `x + c` into `(Some(x), c)`, a constant into `(None, c)`, anything
/// else into `(Some(e), 0)`.
fn split_offset(e: &Expr) -> (Option<&Expr>, i128) {
    match &e.kind {
        ExprKind::Int(c) => (None, *c),
        ExprKind::Binary(BinOp::Add, a, b) if b.as_int().is_some() => {
            (Some(&**a), b.as_int().unwrap())
        }
        _ => (Some(e), 0),
    }
}

fn add_offset(base: Option<Expr>, c: i128, ty: Type) -> Expr {
    match base {
        None => Expr::int(ty, c),
        Some(b) if c == 0 => b,
        Some(b) => Expr::binary(BinOp::Add, b, Expr::int(ty, c)),
    }
}

fn reassociates(ty: Type) -> bool {
    matches!(ty, Type::I64 | Type::I32)
}

/// Folds a binary integer operation on constants with the DSL's semantics.
pub fn fold_int(op: BinOp, ty: Type, a: i128, b: i128) -> Option<i128> {
    let v = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a.checked_mul(b)?,
        BinOp::Div => {
            if b == 0 {
                0
            } else {
                a.div_euclid(b)
            }
        }
        BinOp::Rem => {
            if b == 0 {
                0
            } else {
                a.rem_euclid(b)
            }
        }
        BinOp::Min => a.min(b),
        BinOp::Max => a.max(b),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        _ => return None,
    };
    Some(ty.wrap(v))
}

/// Folds a comparison of two integer constants; `None` for an operator
/// that is not a comparison.
pub fn fold_comparison(op: BinOp, x: i128, y: i128) -> Option<bool> {
    Some(match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        BinOp::Ge => x >= y,
        _ => return None,
    })
}

/// `op(x + c1, x + c2) -> x + op(c1, c2)` and `op((x + c1) / k, (x + c2) / k)
/// -> (x + op(c1, c2)) / k` (`op` min or max, `k > 0`: the division is
/// monotonic), also between any two operands of a chain of `op`, as the
/// bounds of a stencil's taps are; `op(x, x) -> x`.
fn merge_extremum(op: BinOp, a: &Expr, b: &Expr, ty: Type) -> Option<Expr> {
    let pick = |c1: i128, c2: i128| {
        if op == BinOp::Min {
            c1.min(c2)
        } else {
            c1.max(c2)
        }
    };
    let merge = |p: &Expr, q: &Expr| -> Option<Expr> {
        let ((xp, cp), (xq, cq)) = (split_offset(p), split_offset(q));
        if xp == xq {
            return Some(add_offset(xp.cloned(), pick(cp, cq), ty));
        }
        match (&p.kind, &q.kind) {
            (ExprKind::Binary(BinOp::Div, np, kp), ExprKind::Binary(BinOp::Div, nq, kq))
                if kp.as_int().is_some_and(|k| k > 0) && kp == kq =>
            {
                let ((xp, cp), (xq, cq)) = (split_offset(np), split_offset(nq));
                (xp == xq).then(|| {
                    let n = add_offset(xp.cloned(), pick(cp, cq), ty);
                    Expr::binary(BinOp::Div, n, (**kp).clone())
                })
            }
            _ => None,
        }
    };
    // The operands of the chain of `op` (`a` and `b` are simplified: their own
    // operands have been merged already), then each merged into the first
    // it merges with.
    fn operands<'e>(op: BinOp, e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match &e.kind {
            ExprKind::Binary(o, p, q) if *o == op => {
                operands(op, p, out);
                operands(op, q, out);
            }
            _ => out.push(e),
        }
    }
    let mut all = Vec::new();
    operands(op, a, &mut all);
    let from_b = all.len();
    operands(op, b, &mut all);
    // `a` is simplified, so no two of its operands merge: only a pair with
    // an operand of `b` can. Checking that first keeps a chain of n
    // operands that do not merge (the union of a sum's many taps, each
    // bound to a symbol of its own) linear per node, where merging into
    // copies was cubic over the chain: 774 taps took 30 s to expand.
    let mergeable = (from_b..all.len()).any(|j| (0..j).any(|i| merge(all[i], all[j]).is_some()));
    if !mergeable {
        return None;
    }
    let mut merged: Vec<Expr> = Vec::new();
    for e in &all {
        match merged
            .iter()
            .enumerate()
            .find_map(|(i, m)| Some((i, merge(m, e)?)))
        {
            Some((i, m)) => merged[i] = m,
            None => merged.push((*e).clone()),
        }
    }
    (merged.len() < all.len()).then(|| {
        merged
            .into_iter()
            .reduce(|x, y| Expr::binary(op, x, y))
            .expect("a chain has operands")
    })
}

fn simplify_node(mut e: Expr, exact: bool) -> Expr {
    let ty = e.ty;
    // Operands stay shared unless a rule takes one apart.
    let take = Arc::unwrap_or_clone;
    match std::mem::replace(&mut e.kind, ExprKind::Int(0)) {
        ExprKind::Binary(op, a, b) => {
            if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
                if ty.is_int() {
                    if let Some(v) = fold_int(op, ty, x, y) {
                        return Expr::int(ty, v);
                    }
                }
                if let Some(v) = fold_comparison(op, x, y).filter(|_| a.ty.is_int()) {
                    return Expr::bool(v);
                }
            }
            if ty == Type::Bool {
                if let (ExprKind::Bool(x), ExprKind::Bool(y)) = (&a.kind, &b.kind) {
                    match op {
                        BinOp::And => return Expr::bool(*x && *y),
                        BinOp::Or => return Expr::bool(*x || *y),
                        _ => {}
                    }
                }
                match (op, &a.kind, &b.kind) {
                    (BinOp::And, ExprKind::Bool(true), _) => return take(b),
                    (BinOp::And, _, ExprKind::Bool(true)) => return take(a),
                    (BinOp::Or, ExprKind::Bool(false), _) => return take(b),
                    (BinOp::Or, _, ExprKind::Bool(false)) => return take(a),
                    _ => {}
                }
            }
            if a.ty.is_int() && op.is_comparison() {
                // `x <= x` and, for bounds, `x + 1 <= x + 3`.
                let (xa, ca) = if exact {
                    (Some(&*a), 0)
                } else {
                    split_offset(&a)
                };
                let (xb, cb) = if exact {
                    (Some(&*b), 0)
                } else {
                    split_offset(&b)
                };
                if xa == xb && (exact || reassociates(a.ty)) {
                    return Expr::bool(match op {
                        BinOp::Eq => ca == cb,
                        BinOp::Ne => ca != cb,
                        BinOp::Lt => ca < cb,
                        BinOp::Le => ca <= cb,
                        BinOp::Gt => ca > cb,
                        _ => ca >= cb,
                    });
                }
            }
            if ty.is_int() {
                // The identities of min and max.
                match (op, a.as_int(), b.as_int()) {
                    (BinOp::Min, Some(v), _) if v == ty.int_max() => return take(b),
                    (BinOp::Min, _, Some(v)) if v == ty.int_max() => return take(a),
                    (BinOp::Max, Some(v), _) if v == ty.int_min() => return take(b),
                    (BinOp::Max, _, Some(v)) if v == ty.int_min() => return take(a),
                    _ => {}
                }
            }
            if !exact && reassociates(ty) {
                match op {
                    BinOp::Add | BinOp::Sub => {
                        let (xa, ca) = split_offset(&a);
                        let (xb, cb) = split_offset(&b);
                        let sign = if op == BinOp::Add { 1 } else { -1 };
                        match (xa, xb) {
                            (base, None) => return add_offset(base.cloned(), ca + sign * cb, ty),
                            (None, Some(xb)) if op == BinOp::Add => {
                                return add_offset(Some(xb.clone()), ca + cb, ty)
                            }
                            (Some(xa), Some(xb)) if op == BinOp::Sub && xa == xb => {
                                return Expr::int(ty, ca - cb)
                            }
                            // The offsets move out: `a - (x + 1)` and
                            // `a - x` then differ by a constant.
                            (Some(xa), Some(xb)) if ca != 0 || cb != 0 => {
                                let base = Expr::binary(op, xa.clone(), xb.clone());
                                return add_offset(Some(base), ca + sign * cb, ty);
                            }
                            _ => {}
                        }
                    }
                    BinOp::Mul => match (a.as_int(), b.as_int()) {
                        (Some(1), _) => return take(b),
                        (_, Some(1)) => return take(a),
                        (Some(0), _) | (_, Some(0)) => return Expr::int(ty, 0),
                        _ => {}
                    },
                    BinOp::Div if b.as_int() == Some(1) => return take(a),
                    BinOp::Min | BinOp::Max => {
                        if let Some(e) = merge_extremum(op, &a, &b, ty) {
                            return e;
                        }
                    }
                    _ => {}
                }
            } else if matches!(op, BinOp::Min | BinOp::Max) && a == b {
                return take(a);
            }
            Expr::new(ExprKind::Binary(op, a, b), ty)
        }
        ExprKind::Select(c, a, b) => match c.kind {
            ExprKind::Bool(true) => take(a),
            ExprKind::Bool(false) => take(b),
            _ if a == b => take(a),
            _ => Expr::new(ExprKind::Select(c, a, b), ty),
        },
        ExprKind::Cast(a) => match a.kind {
            ExprKind::Int(v) if ty.is_int() => Expr::int(ty, v),
            _ if a.ty == ty => take(a),
            _ => Expr::new(ExprKind::Cast(a), ty),
        },
        ExprKind::Unary(crate::ir::UnOp::Neg, a) if ty.is_int() && a.as_int().is_some() => {
            Expr::int(ty, -a.as_int().unwrap())
        }
        kind => Expr::new(kind, ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(s: usize) -> Expr {
        Expr::sym(s)
    }
    fn add(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Add, a, b)
    }

    #[test]
    fn offsets_collapse_under_min_and_max() {
        let e = Expr::binary(
            BinOp::Min,
            add(sym(0), Expr::i64(-1)),
            Expr::binary(BinOp::Min, sym(0), add(sym(0), Expr::i64(1))),
        );
        assert_eq!(simplify(&e), add(sym(0), Expr::i64(-1)));
        let e = Expr::binary(BinOp::Max, add(sym(1), Expr::i64(2)), sym(1));
        assert_eq!(simplify(&e), add(sym(1), Expr::i64(2)));
    }

    #[test]
    fn taps_of_a_stencil_merge_through_divisions() {
        let div = |e: Expr, k: i128| Expr::binary(BinOp::Div, e, Expr::i64(k));
        let sub = |a: Expr, b: Expr| Expr::binary(BinOp::Sub, a, b);
        let max = |a: Expr, b: Expr| Expr::binary(BinOp::Max, a, b);
        let min = |a: Expr, b: Expr| Expr::binary(BinOp::Min, a, b);
        // The first vector of a loop whose taps x - 1, x, x + 1 read from
        // `sym(0)`: max(0, (s0 - (s1 - 1) + 15) / 16, (s0 - s1 + 15) / 16,
        // (s0 - (s1 + 1) + 15) / 16) is the largest tap alone.
        let tap = |c: i128| {
            div(
                add(sub(sym(0), add(sym(1), Expr::i64(c))), Expr::i64(15)),
                16,
            )
        };
        let e = max(max(max(Expr::i64(0), tap(-1)), tap(0)), tap(1));
        let want = max(
            Expr::i64(0),
            div(add(sub(sym(0), sym(1)), Expr::i64(16)), 16),
        );
        assert_eq!(simplify(&e), want);
        // Operands anywhere in a chain; unrelated ones stay, in order.
        let e = min(min(sym(2), tap(1)), min(sym(3), tap(-1)));
        let want = min(
            min(sym(2), div(add(sub(sym(0), sym(1)), Expr::i64(14)), 16)),
            sym(3),
        );
        assert_eq!(simplify(&e), want);
        // Not through a division by a negative or a variable divisor.
        let e = max(
            Expr::binary(BinOp::Div, add(sym(0), Expr::i64(1)), Expr::i64(-2)),
            Expr::binary(BinOp::Div, sym(0), Expr::i64(-2)),
        );
        assert_eq!(simplify(&e), e);
        let e = max(
            Expr::binary(BinOp::Div, add(sym(0), Expr::i64(1)), sym(4)),
            Expr::binary(BinOp::Div, sym(0), sym(4)),
        );
        assert_eq!(simplify(&e), e);
    }

    #[test]
    fn constants_fold_with_euclidean_division() {
        let e = Expr::binary(BinOp::Div, Expr::i64(-7), Expr::i64(2));
        assert_eq!(simplify(&e), Expr::i64(-4));
        let e = Expr::binary(BinOp::Rem, Expr::i64(-7), Expr::i64(0));
        assert_eq!(simplify(&e), Expr::i64(0));
        let e = Expr::binary(
            BinOp::Add,
            Expr::int(Type::U8, 200),
            Expr::int(Type::U8, 100),
        );
        assert_eq!(simplify(&e), Expr::int(Type::U8, 44));
    }

    #[test]
    fn chains_of_offsets_merge() {
        let e = Expr::binary(
            BinOp::Sub,
            add(add(sym(2), Expr::i64(3)), Expr::i64(4)),
            Expr::i64(10),
        );
        assert_eq!(simplify(&e), add(sym(2), Expr::i64(-3)));
        let e = Expr::binary(BinOp::Sub, add(sym(2), Expr::i64(3)), sym(2));
        assert_eq!(simplify(&e), Expr::i64(3));
    }
}
