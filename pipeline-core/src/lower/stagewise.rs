//! The passes after loop synthesis that rewrite each top-level stage on
//! its own, run stage by stage side by side on threads
//! ([`crate::par::map`]), with the same result as over the whole
//! statement.
//!
//! The top-level stages are what codegen outlines: the statements under
//! the top-level chain of allocations, and of blocks and bindings around
//! several funcs. [`tails_and_cse`] also makes new symbols, which the
//! passes over the whole statement number in its order: each stage numbers
//! its own from a base of its own, and they are numbered again, in order,
//! once every stage is done.

use super::{cse, tails};
use crate::ir::{Expr, ExprKind, Pipeline, Stmt, SymId};

/// `s` with `f` applied to each of its top-level stages on up to
/// `threads` threads: for a pass that rewrites each stage on its own (and
/// leaves the chain above them alone), the same as the pass over `s`.
pub(crate) fn map_stages(mut s: Stmt, threads: usize, f: impl Fn(Stmt) -> Stmt + Sync) -> Stmt {
    let mut places = Vec::new();
    stages(&mut s, &mut places);
    let taken = take(&mut places);
    let done = crate::par::map(taken, threads, || (), |_, stage| f(stage));
    put(places, done);
    s
}

/// `tails::join_tails` and then `cse::cse` over `s`, as those two passes
/// would rewrite it and number the symbols they make (after `names`, the
/// local symbols so far, which follow the `global` ones; the new ones'
/// names are added), each top-level stage on its own on up to `threads`
/// threads. Where the chain above the stages binds symbols itself (a run
/// of bindings that `cse` would share across stages), or two stages side
/// by side are of one func (whose loops `tails` could join), the passes
/// run over the whole.
pub(crate) fn tails_and_cse(
    mut s: Stmt,
    pipeline: &Pipeline,
    global: usize,
    names: &mut Vec<String>,
    threads: usize,
) -> Stmt {
    let whole = |s, names: &mut Vec<String>| {
        let s = tails::join_tails(s, pipeline, global, names);
        cse::cse(s, global, names)
    };
    if threads <= 1 || !plain_chain(&s) {
        return whole(s, names);
    }
    let mut places = Vec::new();
    stages(&mut s, &mut places);
    // Each stage's own symbols from a base of its own: `tails`' at
    // `bases(k).0`, `cse`'s at `bases(k).1`, above every symbol so far.
    let first = global + names.len();
    let n = places.len();
    let stride = stride(first, 2 * n);
    let bases = |k: usize| (first + 2 * k * stride, first + (2 * k + 1) * stride);
    let taken: Vec<(usize, Stmt)> = take(&mut places).into_iter().enumerate().collect();
    let done = crate::par::map(
        taken,
        threads,
        || (),
        |_, (k, stage)| {
            let (t, c) = bases(k);
            let (mut t_names, mut c_names) = (Vec::new(), Vec::new());
            let stage = tails::join_tails(stage, pipeline, t, &mut t_names);
            let stage = cse::cse(stage, c, &mut c_names);
            assert!(
                t_names.len().max(c_names.len()) < stride,
                "a stage's symbols fit its stride"
            );
            (stage, t_names, c_names.len())
        },
    );
    // The numbers the passes over the whole would have given: every
    // stage's `tails` symbols in order, then every stage's `cse` ones.
    let t_total: usize = done.iter().map(|(_, t, _)| t.len()).sum();
    let mut jobs = Vec::with_capacity(n);
    let (mut t_before, mut c_before) = (0, 0);
    for (k, (stage, t_names, c_count)) in done.into_iter().enumerate() {
        let (t, c) = bases(k);
        let r = Renumber(vec![
            (t, first + t_before, t_names.len()),
            (c, first + t_total + c_before, c_count),
        ]);
        jobs.push((stage, r));
        t_before += t_names.len();
        c_before += c_count;
        names.extend(t_names);
    }
    names.extend((0..c_before).map(|i| format!("cse.{i}")));
    let done = crate::par::map(jobs, threads, || (), |_, (stage, r)| renumbered(stage, &r));
    put(places, done);
    s
}

/// The distance between the bases from which `parts` parts number
/// their own symbols, above `first`: as far apart as the numbers allow,
/// at most 2^32.
fn stride(first: SymId, parts: usize) -> usize {
    ((usize::MAX - first) / (parts + 1)).min(1 << 32)
}

/// How a part's symbols are numbered again: each `(from, to, count)`
/// moves `count` symbols from `from` on to `to` on.
struct Renumber(Vec<(SymId, SymId, usize)>);

impl Renumber {
    fn apply(&self, s: SymId) -> SymId {
        for &(from, to, count) in &self.0 {
            if (from..from + count).contains(&s) {
                return to + (s - from);
            }
        }
        s
    }
}

/// `s` with every symbol numbered again as `r` says.
fn renumbered(mut s: Stmt, r: &Renumber) -> Stmt {
    if let Stmt::LetSym { sym, .. } = &mut s {
        *sym = r.apply(*sym);
    }
    for e in s.own_exprs_mut() {
        *e = e.rewrite(&mut |n| match n.kind {
            ExprKind::Sym(x) if r.apply(x) != x => Expr::new(ExprKind::Sym(r.apply(x)), n.ty),
            _ => n,
        });
    }
    s.map_children(|c| renumbered(c, r))
}

/// Whether the chain above the stages of `s` binds no symbol and has no
/// two stages of one func side by side (see [`tails_and_cse`]).
fn plain_chain(s: &Stmt) -> bool {
    let one = s.stage_func().is_some();
    match s {
        Stmt::Allocate { body, .. } | Stmt::LetCoord { body, .. } if !one => plain_chain(body),
        Stmt::LetSym { .. } if !one => false,
        Stmt::Block(stmts) if !one => {
            stmts.iter().all(plain_chain)
                && stmts
                    .windows(2)
                    .all(|w| w[0].stage_func().is_none() || w[0].stage_func() != w[1].stage_func())
        }
        _ => true,
    }
}

/// The top-level stages of `s`, in order: what lies under the chain of
/// allocations, and of blocks and bindings that are not one func's.
fn stages<'s>(s: &'s mut Stmt, out: &mut Vec<&'s mut Stmt>) {
    let chain = match s {
        Stmt::Allocate { .. } => true,
        Stmt::LetSym { .. } | Stmt::LetCoord { .. } | Stmt::Block(_) => s.stage_func().is_none(),
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

/// The stages out of their places (an empty block left in each).
fn take(places: &mut [&mut Stmt]) -> Vec<Stmt> {
    places
        .iter_mut()
        .map(|place| std::mem::replace(&mut **place, Stmt::Block(Vec::new())))
        .collect()
}

/// The stages back in their places, in order.
fn put(places: Vec<&mut Stmt>, stages: Vec<Stmt>) {
    for (place, stage) in places.into_iter().zip(stages) {
        *place = stage;
    }
}

#[cfg(test)]
mod tests {
    /// A chain of 3-tap stencils, which the auto-scheduler fuses into
    /// groups: top-level stages with symbols of `tails` and `cse` each.
    fn chain(n: usize) -> String {
        let mut body = String::from(
            "let c = input.clamp_edge();\nf0(x, y) = c(x - 1, y) + c(x, y) + c(x + 1, y);\n",
        );
        for k in 1..n {
            let (p, (dx, dy)) = (k - 1, if k % 2 == 0 { (1, 0) } else { (0, 1) });
            body += &format!(
                "f{k}(x, y) = (f{p}(x - {dx}, y - {dy}) + f{p}(x, y) + f{p}(x + {dx}, y + {dy})) * 0.25;\n"
            );
        }
        format!(
            "fn chain(input: Image<f32, 2>) -> Image<f32, 2> {{\n{body}f{}\n}}\n",
            n - 1
        )
    }

    /// Stage by stage on several threads, the passes give what they give
    /// over the whole statement on one: the same loop nest, symbols
    /// numbered the same.
    #[test]
    fn stage_by_stage_is_the_whole() {
        let (p, sched) = crate::scheduled_from_source(&chain(24), "chain").unwrap();
        let lower = |threads| {
            crate::lower_for(&p, &sched, crate::Target::Cpu, None, threads)
                .ok()
                .unwrap()
        };
        let (whole, staged) = (lower(1), lower(3));
        let mut body = staged.body.clone();
        let mut places = Vec::new();
        super::stages(&mut body, &mut places);
        assert!(places.len() >= 3, "{} stages", places.len());
        assert!(super::plain_chain(&staged.body));
        assert!(staged.body == whole.body);
        assert_eq!(staged.text(), whole.text());
        assert_eq!(staged.local_syms, whole.local_syms);
        // Each stage made symbols of both passes.
        let text = whole.text();
        assert!(text.matches(".base = ").count() >= 3, "{text}");
        assert!(text.contains("cse.") && text.contains("cse.1"), "{text}");
    }
}
