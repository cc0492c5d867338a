//! Inlining, the first fusion pass (in the spirit of Forma): a pure func read
//! by exactly one consumer, and only at the consumer's own point (no stencil
//! offset, no boundary condition), is substituted into that consumer.
//!
//! Runs on a checked pipeline before bounds inference. Outputs and funcs with
//! updates are never inlined, funcs scheduled `compute_root` neither; funcs
//! scheduled `compute_inline` always are, into every consumer. Inlining never
//! changes results: expressions are pure, so substitution is exact.
//!
//! A func read at many points and inlined into a func read at many points
//! multiplies expression sizes (a pyramid inlined level into level grows as
//! 25^levels); an inlining that would make a definition larger than
//! [`MAX_NODES`] is an error at its `compute_inline` directive.
//!
//! ```text
//! gray(x, y) = 0.3 * r(x, y) + ...;  out(x, y) = gray(x, y) * 2.0;
//!   => out(x, y) = (0.3 * r(x, y) + ...) * 2.0;   (gray is gone)
//! ```

use crate::ir::*;
use crate::lower::loops::ScheduleError;
use crate::schedule::{ComputeLevel, Schedule};

/// The largest definition inlining may create, in expression nodes.
pub const MAX_NODES: usize = 50_000;

/// Inlines every func that qualifies; returns the new pipeline and the
/// inlined funcs.
pub fn inline(p: &Pipeline, sched: &Schedule) -> Result<(Pipeline, Vec<FuncId>), ScheduleError> {
    let mut p = p.clone();
    let mut inlined = Vec::new();
    loop {
        let live = p.live_funcs();
        let candidate = live
            .iter()
            .copied()
            .find(|&f| match sched.funcs[f].compute {
                ComputeLevel::Inline => !p.outputs.contains(&f) && p.funcs[f].updates.is_empty(),
                ComputeLevel::Root | ComputeLevel::At { .. } => false,
                // A func whose loops host another func's computation keeps them.
                ComputeLevel::Default => qualifies(&p, f) && !sched.is_compute_target(f),
            });
        let Some(f) = candidate else { break };
        let body = p.funcs[f].pure.clone();
        let body_size = size(&body);
        for consumer in p.consumers(f) {
            let c = &p.funcs[consumer];
            let exprs = std::iter::once(&c.pure).chain(
                c.updates
                    .iter()
                    .flat_map(|u| u.args.iter().chain([&u.value])),
            );
            for e in exprs {
                let (mut nodes, mut reads) = (0usize, 0usize);
                e.visit(&mut |n| {
                    nodes += 1;
                    if let ExprKind::Load {
                        source: Source::Func(g),
                        args,
                        ..
                    } = &n.kind
                    {
                        if *g == f {
                            reads += 1;
                            nodes += body_size * args.iter().map(size).max().unwrap_or(1);
                        }
                    }
                });
                if nodes > MAX_NODES {
                    let (fname, cname) = (&p.funcs[f].name, &c.name);
                    return Err(ScheduleError {
                        tokens: sched.funcs[f].compute_tokens.clone(),
                        message: format!(
                            "inlining `{fname}` into `{cname}` would make `{cname}` an expression of about {nodes} nodes ({reads} reads of `{fname}`, whose definition has {body_size}, after what was inlined into it): compute `{fname}` or the funcs inlined into it at root or at a loop instead"
                        ),
                    });
                }
            }
            substitute_func(&mut p.funcs[consumer], f, &body);
        }
        inlined.push(f);
    }
    Ok((p, inlined))
}

/// Replaces every read of func `f` in `consumer`'s definitions with `body`,
/// `f`'s pure definition, at the coordinates read.
pub fn substitute_func(consumer: &mut Func, f: FuncId, body: &Expr) {
    let subst = |e: &Expr| -> Expr {
        e.rewrite(&mut |n| match &n.kind {
            ExprKind::Load {
                source: Source::Func(g),
                args,
                ..
            } if *g == f => substitute_vars(body, args),
            _ => n,
        })
    };
    consumer.pure = subst(&consumer.pure);
    for u in &mut consumer.updates {
        u.value = subst(&u.value);
        u.args = u.args.iter().map(subst).collect();
    }
}

/// The number of nodes of an expression.
pub fn size(e: &Expr) -> usize {
    let mut n = 0;
    e.visit(&mut |_| n += 1);
    n
}

/// Replaces `Var(d)` with `args[d]`.
pub fn substitute_vars(e: &Expr, args: &[Expr]) -> Expr {
    e.rewrite(&mut |n| match n.kind {
        ExprKind::Var(d) => args[d].clone(),
        _ => n,
    })
}

fn qualifies(p: &Pipeline, f: FuncId) -> bool {
    let func = &p.funcs[f];
    if p.outputs.contains(&f) || !func.updates.is_empty() {
        return false;
    }
    let consumers = p.consumers(f);
    if consumers.len() != 1 {
        return false;
    }
    let mut same_point = true;
    for (_, e) in p.definition_exprs(consumers[0]) {
        e.visit(&mut |n| {
            if let ExprKind::Load {
                source: Source::Func(g),
                args,
                ..
            } = &n.kind
            {
                if *g == f {
                    let at_point = args
                        .iter()
                        .enumerate()
                        .all(|(d, a)| matches!(a.kind, ExprKind::Var(k) if k == d));
                    same_point &= at_point;
                }
            }
        });
    }
    same_point
}
