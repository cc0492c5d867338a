//! The passes after loop synthesis, top-level stage by top-level stage
//! ([`map_stages`], [`tails_and_cse`]) side by side on threads
//! ([`crate::par::map`]), with the same result as over the whole
//! statement. The top-level stages are what codegen outlines: the
//! statements under the top-level chain of allocations, and of blocks and
//! bindings around several funcs.
//!
//! A pass that makes symbols numbers each stage's from a base of its own
//! ([`Parts`]); once every stage is done they are numbered again in the
//! order that the pass over the whole gives them, so the lowered
//! statement, `LOWERED` and the code are the same on any number of
//! threads. (Loop synthesis root by root was tried the same way: on two
//! cores its 8.5 ms became 5.3-6.6 ms, and numbering again took 1.9-2.9
//! ms of the gain.)

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
    // Stage `k` numbers `tails`' symbols from part `k`'s base and `cse`'s
    // from part `n + k`'s: parts in order are the passes' order.
    let n = places.len();
    let parts = Parts::new(global + names.len(), 2 * n);
    let taken: Vec<(usize, Stmt)> = take(&mut places).into_iter().enumerate().collect();
    let done = crate::par::map(
        taken,
        threads,
        || (),
        |_, (k, stage)| {
            let (mut t_names, mut c_names) = (Vec::new(), Vec::new());
            let stage = tails::join_tails(stage, pipeline, parts.base(k), &mut t_names);
            let stage = cse::cse(stage, parts.base(n + k), &mut c_names);
            (stage, t_names, c_names.len())
        },
    );
    let mut counts: Vec<usize> = done.iter().map(|(_, t, _)| t.len()).collect();
    counts.extend(done.iter().map(|(_, _, c)| *c));
    let to = parts.targets(&counts);
    let mut jobs = Vec::with_capacity(n);
    for (k, (stage, t_names, c_count)) in done.into_iter().enumerate() {
        let r = Renumber(vec![
            (parts.base(k), to[k], t_names.len()),
            (parts.base(n + k), to[n + k], c_count),
        ]);
        jobs.push((stage, r));
        names.extend(t_names);
    }
    names.extend((0..counts[n..].iter().sum()).map(|i| format!("cse.{i}")));
    let done = renumbered_all(jobs, threads);
    put(places, done);
    s
}

/// Parts of a statement that number the symbols they make from bases of
/// their own, all above `first` and far apart, to be numbered again in the
/// parts' order: part `k`'s after part `k - 1`'s, from `first` on.
struct Parts {
    first: SymId,
    stride: usize,
}

impl Parts {
    /// `count` parts above `first`, as far apart as the numbers allow
    /// (at most 2^32).
    fn new(first: SymId, count: usize) -> Parts {
        let stride = ((usize::MAX - first) / (count + 1)).min(1 << 32);
        Parts { first, stride }
    }

    /// The number of part `k`'s first symbol.
    fn base(&self, k: usize) -> SymId {
        self.first + k * self.stride
    }

    /// The final number of each part's first symbol, given how many each
    /// made.
    fn targets(&self, counts: &[usize]) -> Vec<SymId> {
        let mut next = self.first;
        counts
            .iter()
            .map(|&c| {
                assert!(
                    c < self.stride,
                    "a part's symbols fit below the next part's"
                );
                next += c;
                next - c
            })
            .collect()
    }
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

/// Each job's statement numbered again as its [`Renumber`] says, side by
/// side on up to `threads` threads.
fn renumbered_all(jobs: Vec<(Stmt, Renumber)>, threads: usize) -> Vec<Stmt> {
    crate::par::map(jobs, threads, || (), |_, (s, r)| renumbered(s, &r))
}

/// `s` with every symbol numbered again as `r` says.
fn renumbered(mut s: Stmt, r: &Renumber) -> Stmt {
    if let Stmt::LetSym { sym, .. } = &mut s {
        *sym = r.apply(*sym);
    }
    for e in s.own_exprs_mut() {
        *e = e.rewrite(&mut |n| match n.kind {
            ExprKind::Sym(x) => match r.apply(x) {
                y if y != x => Expr::new(ExprKind::Sym(y), n.ty),
                _ => n,
            },
            _ => n,
        });
    }
    s.map_children(|c| renumbered(c, r))
}

/// Whether `s` belongs to the chain above the top-level stages: an
/// allocation, or a block or binding that is not one func's (a block of
/// one func's stages is a partitioned loop's parts, one stage).
fn in_chain(s: &Stmt) -> bool {
    match s {
        Stmt::Allocate { .. } => true,
        Stmt::LetSym { .. } | Stmt::LetCoord { .. } | Stmt::Block(_) => s.stage_func().is_none(),
        _ => false,
    }
}

/// Whether the chain above the stages of `s` binds no symbol and has no
/// two stages of one func side by side (see [`tails_and_cse`]).
fn plain_chain(s: &Stmt) -> bool {
    if !in_chain(s) {
        return true;
    }
    match s {
        Stmt::LetSym { .. } => false,
        Stmt::Block(stmts) => {
            stmts.iter().all(plain_chain)
                && stmts
                    .windows(2)
                    .all(|w| w[0].stage_func().is_none() || w[0].stage_func() != w[1].stage_func())
        }
        _ => s.children().iter().all(plain_chain),
    }
}

/// The top-level stages of `s`, in order: what lies under the chain
/// ([`in_chain`]).
fn stages<'s>(s: &'s mut Stmt, out: &mut Vec<&'s mut Stmt>) {
    if !in_chain(s) {
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
        assert_eq!(staged.local_syms(), whole.local_syms());
        // Each stage made symbols of both passes.
        let text = whole.text();
        assert!(text.matches(".base = ").count() >= 3, "{text}");
        assert!(text.contains("cse.") && text.contains("cse.1"), "{text}");
    }
}
