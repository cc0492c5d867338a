//! The checks of a schedule that need the inlined pipeline: every
//! `compute_at` can be honoured.

use super::ScheduleError;
use crate::ir::*;
use crate::schedule::{ComputeLevel, Schedule};

/// Checks that every `compute_at` can be honoured on the inlined pipeline.
pub(super) fn validate(p: &Pipeline, sched: &Schedule) -> Result<(), ScheduleError> {
    // Storage inside a consumer's loops holds what those loops compute:
    // without a `compute_at` there, nothing would be computed into it.
    for (f, fs) in sched.funcs.iter().enumerate() {
        let Some((g, w)) = &fs.store else { continue };
        if !matches!(fs.compute, ComputeLevel::At { .. }) {
            let (fname, gname) = (&p.funcs[f].name, &p.funcs[*g].name);
            return Err(ScheduleError {
                tokens: fs.store_tokens.clone(),
                message: format!(
                    "`{fname}` is stored at loop `{w}` of `{gname}` but not computed inside it: add `{fname}.compute_at({gname}, {w})`, or compute it at a loop inside `{w}`"
                ),
            });
        }
    }
    let live = p.live_funcs();
    let consumers = p.consumer_lists(&live);
    for &f in &live {
        let fs = &sched.funcs[f];
        let ComputeLevel::At { func: g, var } = &fs.compute else {
            continue;
        };
        let fail = |message: String| ScheduleError {
            tokens: fs.compute_tokens.clone(),
            message,
        };
        let (fname, gname) = (&p.funcs[f].name, &p.funcs[*g].name);
        if !live.contains(g) || matches!(sched.funcs[*g].compute, ComputeLevel::Inline) {
            return Err(fail(format!("`{gname}` is inlined, so it has no loops to compute `{fname}` in; schedule `{gname}.compute_root()`")));
        }
        if p.outputs.contains(&f) {
            return Err(fail(format!(
                "`{fname}` is an output: it is computed at root"
            )));
        }
        if sched.funcs[*g].pure.position(var).is_none() {
            let loops: Vec<&str> = sched.funcs[*g]
                .pure
                .dims
                .iter()
                .map(|d| d.name.as_str())
                .collect();
            return Err(fail(format!(
                "`{var}` is not a loop of `{gname}` (its loops, innermost first: {})",
                loops.join(", ")
            )));
        }
        for &c in &consumers[f] {
            let same_level = matches!(&sched.funcs[c].compute, ComputeLevel::At { func, var: v } if func == g && v == var);
            if c != *g && !same_level {
                return Err(fail(format!(
                    "`{fname}` is also read by `{}`, which does not run inside loop `{var}` of `{gname}`: compute `{fname}` at root, or compute `{}` at the same loop",
                    p.funcs[c].name, p.funcs[c].name
                )));
            }
        }
        // What an update reads, its value or the coordinates it writes.
        let reads_f = |e: &Expr| {
            e.any(
                &mut |n| matches!(n.kind, ExprKind::Load { source: Source::Func(h), .. } if h == f),
            )
        };
        if p.funcs[*g]
            .updates
            .iter()
            .any(|u| reads_f(&u.value) || u.args.iter().any(reads_f))
        {
            return Err(fail(format!("an update of `{gname}` reads `{fname}`, but updates run outside `{gname}`'s pure loops: compute `{fname}` at root")));
        }
        if let Some((h, w)) = &fs.store {
            let enclosing = h == g && {
                let st = &sched.funcs[*g].pure;
                matches!((st.position(w), st.position(var)), (Some(a), Some(b)) if a >= b)
            };
            if enclosing {
                let st = &sched.funcs[*g].pure;
                let (inner_pos, outer_pos) = (st.position(var).unwrap(), st.position(w).unwrap());
                if let Some(par) = st.dims[inner_pos..outer_pos]
                    .iter()
                    .find(|d| d.kind.is_concurrent())
                {
                    return Err(ScheduleError {
                        tokens: fs.store_tokens.clone(),
                        message: format!(
                            "loop `{}` runs in parallel between where `{fname}` is stored (`{w}`) and where it is computed (`{var}`): its iterations would share the storage; store `{fname}` inside `{}` or make the loop serial",
                            par.name, par.name
                        ),
                    });
                }
            }
            if !enclosing {
                return Err(ScheduleError {
                    tokens: fs.store_tokens.clone(),
                    message: format!(
                    "store_at must name `{gname}` and a loop at or outside `{var}`: storage cannot live inside the loop that computes `{fname}`"
                    ),
                });
            }
        }
    }
    Ok(())
}
