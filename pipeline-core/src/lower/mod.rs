//! Lowering passes, one per file, in pipeline order (see [`crate::lower_pipeline`]).

pub mod cse;
pub mod hoist;
pub mod inline;
pub mod loops;
pub mod partition;
pub mod tails;

use crate::ir::Stmt;

/// `s` with `f` applied to each of its top-level stages, side by side on
/// up to `threads` threads ([`crate::par::map`]). The stages are what lies
/// under the top-level chain of allocations, bindings and blocks of
/// several funcs: a pass that rewrites each stage on its own (and leaves
/// that chain alone) gives the same statement this way as on the whole.
pub(crate) fn map_stages(mut s: Stmt, threads: usize, f: impl Fn(Stmt) -> Stmt + Sync) -> Stmt {
    let mut places = Vec::new();
    stages(&mut s, &mut places);
    let taken = places
        .iter_mut()
        .map(|place| std::mem::replace(&mut **place, Stmt::Block(Vec::new())))
        .collect();
    let done = crate::par::map(taken, threads, || (), |_, stage| f(stage));
    for (place, stage) in places.into_iter().zip(done) {
        *place = stage;
    }
    s
}

/// The top-level stages of `s`, in order (see [`map_stages`]).
fn stages<'s>(s: &'s mut Stmt, out: &mut Vec<&'s mut Stmt>) {
    let chain = match s {
        Stmt::Allocate { .. } | Stmt::LetSym { .. } | Stmt::LetCoord { .. } => true,
        // A block of one func's stages (a partitioned loop's parts) is one.
        Stmt::Block(_) => s.stage_func().is_none(),
        _ => false,
    };
    if !chain {
        out.push(s);
        return;
    }
    match s {
        Stmt::Allocate { body, .. } | Stmt::LetSym { body, .. } | Stmt::LetCoord { body, .. } => {
            stages(body, out)
        }
        Stmt::Block(stmts) => stmts.iter_mut().for_each(|c| stages(c, out)),
        _ => unreachable!("a statement of the chain"),
    }
}
