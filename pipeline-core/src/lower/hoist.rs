//! Loop-invariant bounds move out of loops.
//!
//! Loop synthesis binds each region, extent and sliding minimum where it is
//! used: at the top of the loop that computes a func, or at the top of a
//! stage. Whatever does not depend on the loop moves out of it, as far out as
//! it can go, so that it is computed once rather than per iteration (the
//! extents of a reduction domain, the whole-dimension region of a func
//! computed per strip, ...).
//!
//! Symbols are bound once and their values are side-effect-free arithmetic
//! over loops, symbols, parameters and input extents, so a binding may move
//! across allocations and to the front of a block; it never leaves a
//! conditional or a loop it depends on.
//!
//! ```text
//! for y { let e = w - 1; let m = y * 4; ... }   =>   let e = w - 1; for y { let m = y * 4; ... }
//! ```

use crate::hash::HashSet;
use crate::ir::{Expr, ExprKind, LoopVar, Stmt, SymId};

/// Moves every loop-invariant symbol binding out of its loops.
pub fn hoist(s: Stmt) -> Stmt {
    let s = s.map_children(hoist);
    let Stmt::For {
        var,
        min,
        max,
        kind,
        slab,
        body,
    } = s
    else {
        return s;
    };
    let (mut kept, mut lifted) = (HashSet::default(), Vec::new());
    let body = lift(*body, &var, &mut kept, &mut lifted);
    let mut out = Stmt::For {
        var,
        min,
        max,
        kind,
        slab,
        body: Box::new(body),
    };
    for (sym, value) in lifted.into_iter().rev() {
        out = Stmt::LetSym {
            sym,
            value,
            body: Box::new(out),
        };
    }
    out
}

/// Takes out of `s` (the body of loop `var`) the bindings at its head that
/// depend neither on `var` nor on a binding that stays (`kept`), in order.
fn lift(
    s: Stmt,
    var: &LoopVar,
    kept: &mut HashSet<SymId>,
    lifted: &mut Vec<(SymId, Expr)>,
) -> Stmt {
    match s {
        Stmt::LetSym { sym, value, body } => {
            let invariant = !value.any(&mut |n| match &n.kind {
                ExprKind::Loop(l) => l == var,
                ExprKind::Sym(k) => kept.contains(k),
                _ => false,
            });
            if invariant {
                lifted.push((sym, value));
                lift(*body, var, kept, lifted)
            } else {
                kept.insert(sym);
                Stmt::LetSym {
                    sym,
                    value,
                    body: Box::new(lift(*body, var, kept, lifted)),
                }
            }
        }
        s @ (Stmt::Allocate { .. } | Stmt::Block(_)) => {
            s.map_children(|s| lift(s, var, kept, lifted))
        }
        // Loops, conditionals and coordinates stop the search: what is
        // inside them already moved as far as their own loops allow.
        s => s,
    }
}
