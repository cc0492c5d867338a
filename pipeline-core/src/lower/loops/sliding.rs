//! Sliding windows: the loop a func computed inside its consumer's loops
//! slides over (each step computes only what the previous one did not),
//! and the dimension that slides.

use super::{bin, i64c, linear_difference, Loop, Region};
use crate::ir::*;

/// The loop that a func computed at `loops[compute]` slides over, and the
/// dimension that slides: a serial loop from the compute level out to (not
/// including) the loop that stores the func, over which its `regions` move
/// monotonically in one dimension. The innermost loop over which consecutive
/// regions overlap is taken (there sliding saves work), else the innermost
/// over which they move.
///
/// A loop outside the compute level qualifies only when the loops inside it,
/// down to the compute level, run the same iterations at each of its steps,
/// are serial and do not move the sliding dimension: then what the previous
/// step computed at the same inner iteration is what this one has already
/// (its region in the other dimensions does not move), and nothing else
/// writes that storage.
pub(super) fn slide_loop(
    loops: &[Loop],
    compute: usize,
    store: Option<&(FuncId, String)>,
    f: FuncId,
    regions: &[Region],
) -> Option<(usize, usize)> {
    let (g, w) = store?;
    let store = loops.iter().position(|l| *g == f && *l.var.name == **w)?;
    let mut candidates = Vec::new();
    for k in compute..store {
        if loops[k].kind.is_concurrent() {
            break;
        }
        let v = &loops[k].var;
        let uses = |e: &Expr| e.uses_loop(v);
        if loops[compute..k]
            .iter()
            .any(|l| uses(&l.min) || uses(&l.max))
        {
            break;
        }
        // The loops inside, down to the compute level, must leave the
        // sliding dimension alone: where they move it too (x = xo * 8 + xi
        // with `xo` inside `xi`), the previous step of this loop computed
        // that dimension for every one of their iterations, which storage
        // folded to one window does not hold.
        let moved_inside = |d: usize| {
            loops[compute..k].iter().any(|l| {
                let uses =
                    |e: &Expr| e.any(&mut |n| matches!(&n.kind, ExprKind::Loop(x) if *x == l.var));
                regions.iter().any(|r| uses(&r[d].0) || uses(&r[d].1))
            })
        };
        if let Some(d) = sliding_dim(regions, v).filter(|&d| !moved_inside(d)) {
            candidates.push((k, d));
        }
    }
    let overlaps = |&&(k, d): &&(usize, usize)| {
        let v = &loops[k].var;
        let width = window(regions, d);
        regions.iter().all(|r| {
            let step = linear_difference(&r[d].1, &at_previous_step(&r[d].1, v));
            matches!((step, width), (Some(s), Some(w)) if s >= 0 && s < w)
        })
    };
    candidates
        .iter()
        .find(overlaps)
        .or(candidates.first())
        .copied()
}

/// The one dimension whose bounds depend on loop `v`, if all the regions'
/// bounds in it grow monotonically with `v` and no other dimension depends
/// on it.
fn sliding_dim(regions: &[Region], v: &LoopVar) -> Option<usize> {
    let uses = |e: &Expr| e.uses_loop(v);
    let dims = regions.first()?.len();
    let moving: Vec<usize> = (0..dims)
        .filter(|&d| regions.iter().any(|r| uses(&r[d].0) || uses(&r[d].1)))
        .collect();
    match moving.as_slice() {
        [d] if regions
            .iter()
            .all(|r| increasing(&r[*d].0, v) && increasing(&r[*d].1, v)) =>
        {
            Some(*d)
        }
        _ => None,
    }
}

/// The extent of the hull of `regions` in dimension `d`, when it is a
/// constant (their bounds differ by constants).
pub(super) fn window(regions: &[Region], d: usize) -> Option<i128> {
    let first = regions.first()?;
    let (mut lo_off, mut hi_off) = (0i128, 0i128);
    for r in regions {
        lo_off = lo_off.min(linear_difference(&r[d].0, &first[d].0)?);
        hi_off = hi_off.max(linear_difference(&r[d].1, &first[d].1)?);
    }
    let width = linear_difference(&first[d].1, &first[d].0)? + hi_off - lo_off + 1;
    (width > 0).then_some(width)
}

/// True when `e` never decreases as loop `v` grows (other loops fixed).
fn increasing(e: &Expr, v: &LoopVar) -> bool {
    let constant = |e: &Expr| !e.uses_loop(v);
    if constant(e) {
        return true;
    }
    match &e.kind {
        ExprKind::Loop(l) => l == v,
        ExprKind::Binary(BinOp::Add | BinOp::Min | BinOp::Max, a, b) => {
            increasing(a, v) && increasing(b, v)
        }
        ExprKind::Binary(BinOp::Sub, a, b) => increasing(a, v) && constant(b),
        ExprKind::Binary(BinOp::Mul, a, b) => match (a.as_int(), b.as_int()) {
            (Some(c), _) if c >= 0 => increasing(b, v),
            (_, Some(c)) if c >= 0 => increasing(a, v),
            _ => false,
        },
        ExprKind::Binary(BinOp::Div, a, b) => b.as_int().is_some_and(|c| c > 0) && increasing(a, v),
        ExprKind::Select(c, a, b) => constant(c) && increasing(a, v) && increasing(b, v),
        ExprKind::Cast(a) => e.ty.bits() >= a.ty.bits() && increasing(a, v),
        _ => false,
    }
}

/// `e` at the previous iteration of loop `v` (`v` replaced by `v - 1`).
pub(super) fn at_previous_step(e: &Expr, v: &LoopVar) -> Expr {
    let back = bin(
        BinOp::Sub,
        Expr::new(ExprKind::Loop(v.clone()), Type::I64),
        i64c(1),
    );
    e.with_loop(v, &back)
}
