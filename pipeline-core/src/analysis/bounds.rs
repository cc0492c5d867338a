//! Bounds inference: the region of every func and input that the outputs need.
//!
//! Runs on a checked (and possibly inlined) [`Pipeline`]. Walks the funcs from
//! the outputs back to the inputs; for every read of a producer inside a
//! consumer's definition, the interval of each coordinate under the
//! consumer's loop domain is one *demand*. A producer's region is the union of
//! its demands; a func with updates also covers what its updates write and
//! read of itself. The result is a straight-line [`BoundsProgram`] of `i64`
//! symbols that the generated entry function and the interpreter both
//! evaluate at run time, so regions follow the actual buffer sizes.
//!
//! **Invariant:** an empty region is `[i64::MAX, i64::MIN]`; every demand is
//! guarded by its consumer's loop domain being non-empty and canonicalized, so
//! unions are plain `min`/`max` and never widen because of an empty part.
//!
//! ```text
//! out(x, y) = blur_x(x, y - 1) + blur_x(x, y + 1)   with out over [x0, x1] x [y0, y1]
//!   => blur_x over [x0, x1] x [y0 - 1, y1 + 1]
//! ```

use super::interval::{bounds_of, visit_loads, Interval, Scope};
use super::simplify::simplify;
use crate::ir::*;

/// One `i64` value of the bounds program.
#[derive(Clone, Debug, PartialEq)]
pub struct SymDef {
    /// Readable name for the lowered listing (`blur_x.min.y`).
    pub name: String,
    /// Its definition; `None` for the output regions, which the entry sets.
    pub value: Option<Expr>,
}

/// Inclusive `[min, max]` symbols of one dimension.
pub type DimSyms = (SymId, SymId);

/// The result of bounds inference.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundsProgram {
    /// Symbols in evaluation order.
    pub syms: Vec<SymDef>,
    /// Per output (in pipeline order), the region the caller's buffer covers.
    pub outputs: Vec<Vec<DimSyms>>,
    /// Per func: the region it is computed over (empty vector if not live).
    pub realized: Vec<Vec<DimSyms>>,
    /// Per func: the region its consumers need, over which the pure
    /// variables of its updates range.
    pub consumed: Vec<Vec<DimSyms>>,
    /// Per input: the region that must be readable.
    pub inputs: Vec<Vec<DimSyms>>,
    /// Dimensions fixed by `bound`: (func, dimension, the region needed, the
    /// bound's first and last coordinate). The entry checks need within bound.
    pub bounded: Vec<(FuncId, usize, DimSyms, i64, i64)>,
}

/// Inclusive bounds of each reduction variable of an update, as i64 exprs.
pub fn rdom_intervals(u: &Update) -> Vec<Interval> {
    u.rdom
        .iter()
        .map(|r| {
            let lo = Expr::cast(Type::I64, r.min.clone());
            let hi = Expr::binary(
                BinOp::Sub,
                Expr::binary(
                    BinOp::Add,
                    lo.clone(),
                    Expr::cast(Type::I64, r.extent.clone()),
                ),
                Expr::i64(1),
            );
            Interval::new(simplify(&lo), simplify(&hi))
        })
        .collect()
}

/// The value range of each func, where its pure definition bounds it by
/// constants and it has no updates (used for data-dependent coordinates such
/// as `lut(f(x))`).
pub fn func_value_bounds(p: &Pipeline) -> Vec<Interval> {
    let mut values: Vec<Interval> = Vec::with_capacity(p.funcs.len());
    for func in &p.funcs {
        let v = if func.updates.is_empty() {
            let value_of = |g: FuncId| values.get(g).cloned().unwrap_or_else(Interval::everything);
            let scope = Scope::new(vec![Interval::everything(); func.dims()], vec![], &value_of);
            let b = bounds_of(&func.pure, &scope);
            let constant = |e: &Option<Expr>| e.as_ref().and_then(|e| e.as_int()).is_some();
            if constant(&b.min) && constant(&b.max) {
                b
            } else {
                Interval::everything()
            }
        } else {
            Interval::everything()
        };
        values.push(v);
    }
    values
}

struct Builder<'p> {
    p: &'p Pipeline,
    values: Vec<Interval>,
    prog: BoundsProgram,
}

impl Builder<'_> {
    fn sym(&mut self, name: String, value: Option<Expr>) -> SymId {
        self.prog.syms.push(SymDef {
            name,
            value: value.map(|v| simplify(&v)),
        });
        self.prog.syms.len() - 1
    }

    fn dim_name(&self, f: FuncId, d: usize) -> String {
        self.p.funcs[f]
            .vars
            .get(d)
            .cloned()
            .unwrap_or_else(|| d.to_string())
    }

    /// The demands that `consumer`'s definitions make on `source`, as
    /// canonical guarded `(min, max)` exprs per dimension.
    fn demands(&self, consumer: FuncId, source: Source, dims: usize) -> Vec<Vec<(Expr, Expr)>> {
        let func = &self.p.funcs[consumer];
        let value_of = |g: FuncId| self.values[g].clone();
        let mut out = Vec::new();
        let pure_scope: Vec<Interval> = self.prog.realized[consumer]
            .iter()
            .map(|&(lo, hi)| Interval::new(Expr::sym(lo), Expr::sym(hi)))
            .collect();
        let nonempty_pure = nonempty(&self.prog.realized[consumer]);
        let mut collect = |e: &Expr, vars: &[Interval], rvars: &[Interval], guard: &Expr| {
            let scope = Scope::new(vars.to_vec(), rvars.to_vec(), &value_of);
            visit_loads(e, &scope, &mut |n| {
                if let ExprKind::Load {
                    source: s, args, ..
                } = &n.kind
                {
                    if *s == source {
                        out.push(demand(args, &scope, guard, dims));
                    }
                }
            });
        };
        collect(&func.pure, &pure_scope, &[], &nonempty_pure);
        for u in &func.updates {
            let (vars, rvars, guard) = self.update_scope(consumer, u);
            for a in &u.args {
                collect(a, &vars, &rvars, &guard);
            }
            collect(&u.value, &vars, &rvars, &guard);
        }
        out
    }

    /// Loop domain of an update: pure variables over the consumed region,
    /// reduction variables over the rdom; and the condition that it runs.
    fn update_scope(&self, f: FuncId, u: &Update) -> (Vec<Interval>, Vec<Interval>, Expr) {
        let consumed = &self.prog.consumed[f];
        let vars: Vec<Interval> = consumed
            .iter()
            .map(|&(lo, hi)| Interval::new(Expr::sym(lo), Expr::sym(hi)))
            .collect();
        let rvars = rdom_intervals(u);
        let mut guard = Expr::bool(true);
        for (d, a) in u.args.iter().enumerate() {
            if matches!(a.kind, ExprKind::Var(_)) {
                let (lo, hi) = consumed[d];
                guard = Expr::binary(
                    BinOp::And,
                    guard,
                    Expr::binary(BinOp::Le, Expr::sym(lo), Expr::sym(hi)),
                );
            }
        }
        for r in &u.rdom {
            guard = Expr::binary(
                BinOp::And,
                guard,
                Expr::binary(BinOp::Gt, r.extent.clone(), Expr::i32(0)),
            );
        }
        (vars, rvars, guard)
    }

    /// Replaces the realized region of the dimensions a `bound` fixes,
    /// remembering what was needed for the entry's check.
    fn fix(&mut self, f: FuncId, fixed: &[(usize, i64, i64)]) {
        for &(d, min, extent) in fixed {
            let needed = self.prog.realized[f][d];
            let var = self.dim_name(f, d);
            let name = &self.p.funcs[f].name;
            let lo = self.sym(
                format!("{name}.bound.min.{var}"),
                Some(Expr::i64(min as i128)),
            );
            let hi = self.sym(
                format!("{name}.bound.max.{var}"),
                Some(Expr::i64((min + extent - 1) as i128)),
            );
            self.prog.realized[f][d] = (lo, hi);
            self.prog
                .bounded
                .push((f, d, needed, min, min + extent - 1));
        }
    }

    /// Binds the union of demands to fresh symbols, one pair per dimension.
    /// Demands under the same guard (a stencil's taps) are one demand of
    /// their union: `min(select(ok, a, MAX), select(ok, b, MAX))` is
    /// `select(ok, min(a, b), MAX)`, one pair of symbols where each tap had
    /// its own (a chain of 3-tap stencils had 16 symbols a func).
    fn union(
        &mut self,
        label: &str,
        names: &[String],
        demands: &[Vec<(Expr, Expr)>],
    ) -> Vec<DimSyms> {
        let max = || Expr::i64(i64::MAX as i128);
        let min = || Expr::i64(i64::MIN as i128);
        (0..names.len())
            .map(|d| {
                // (guard, min, max) of each guard's union; a demand of
                // another form stands alone, unguarded.
                let mut groups: Vec<(Option<&Expr>, Expr, Expr)> = Vec::new();
                for dem in demands {
                    let (lo, hi) = &dem[d];
                    let Some((ok, a, b)) = guarded(lo, hi) else {
                        groups.push((None, lo.clone(), hi.clone()));
                        continue;
                    };
                    match groups.iter_mut().find(|g| g.0 == Some(ok)) {
                        Some((_, lo, hi)) => {
                            *lo = Expr::binary(BinOp::Min, lo.clone(), a.clone());
                            *hi = Expr::binary(BinOp::Max, hi.clone(), b.clone());
                        }
                        None => groups.push((Some(ok), a.clone(), b.clone())),
                    }
                }
                let single = groups.len() == 1;
                let mut parts = groups.into_iter().map(|(ok, a, b)| match ok {
                    Some(ok) => (
                        Expr::select(ok.clone(), a, max()),
                        Expr::select(ok.clone(), b, min()),
                    ),
                    None => (a, b),
                });
                let (lo, hi) = match parts.next() {
                    // One demand is the union: no symbols that only copy it.
                    Some((a, b)) if single => (a, b),
                    first => {
                        let (mut lo, mut hi) = (max(), min());
                        for (a, b) in first.into_iter().chain(parts) {
                            let sa = self.sym(format!("{label}.demand.min.{}", names[d]), Some(a));
                            let sb = self.sym(format!("{label}.demand.max.{}", names[d]), Some(b));
                            lo = Expr::binary(BinOp::Min, lo, Expr::sym(sa));
                            hi = Expr::binary(BinOp::Max, hi, Expr::sym(sb));
                        }
                        (lo, hi)
                    }
                };
                let lo = self.sym(format!("{label}.min.{}", names[d]), Some(lo));
                let hi = self.sym(format!("{label}.max.{}", names[d]), Some(hi));
                (lo, hi)
            })
            .collect()
    }
}

/// The guard and bounds of a demand `(select(ok, a, MAX), select(ok, b,
/// MIN))`, as [`demand`] makes them, or none for a demand of another form.
fn guarded<'e>(lo: &'e Expr, hi: &'e Expr) -> Option<(&'e Expr, &'e Expr, &'e Expr)> {
    let (ExprKind::Select(c1, a, e1), ExprKind::Select(c2, b, e2)) = (&lo.kind, &hi.kind) else {
        return None;
    };
    (c1 == c2 && e1.as_int() == Some(i64::MAX as i128) && e2.as_int() == Some(i64::MIN as i128))
        .then_some((&**c1, &**a, &**b))
}

/// `min <= max` for every dimension of a region.
pub fn nonempty(region: &[DimSyms]) -> Expr {
    region.iter().fold(Expr::bool(true), |acc, &(lo, hi)| {
        Expr::binary(
            BinOp::And,
            acc,
            Expr::binary(BinOp::Le, Expr::sym(lo), Expr::sym(hi)),
        )
    })
}

/// One read's demand (used by loop synthesis for per-iteration regions too): per dimension, `[min, max]` if `guard` holds and the
/// interval is non-empty, else the canonical empty interval.
pub fn demand(args: &[Expr], scope: &Scope, guard: &Expr, dims: usize) -> Vec<(Expr, Expr)> {
    let bounds: Vec<Interval> = args.iter().map(|a| bounds_of(a, scope)).collect();
    // The extents `guard` says are not negative: a coordinate's interval
    // of the same extent (`x + k` over `x`'s) is not empty where it holds,
    // and testing it again would give each tap a guard of its own.
    let mut held = Vec::new();
    conjuncts(guard, &mut |c| {
        if let ExprKind::Binary(BinOp::Le, lo, hi) = &c.kind {
            held.push(simplify(&Expr::binary(
                BinOp::Sub,
                (**hi).clone(),
                (**lo).clone(),
            )));
        }
    });
    let mut ok = guard.clone();
    for b in &bounds {
        let (lo, hi) = (
            b.min.clone().expect("checked: bounded"),
            b.max.clone().expect("checked: bounded"),
        );
        if ordered(&lo, &hi, &held) {
            continue;
        }
        ok = Expr::binary(BinOp::And, ok, Expr::binary(BinOp::Le, lo, hi));
    }
    let ok = simplify(&ok);
    (0..dims)
        .map(|d| {
            let b = &bounds[d];
            (
                Expr::select(
                    ok.clone(),
                    b.min.clone().unwrap(),
                    Expr::i64(i64::MAX as i128),
                ),
                Expr::select(
                    ok.clone(),
                    b.max.clone().unwrap(),
                    Expr::i64(i64::MIN as i128),
                ),
            )
        })
        .collect()
}

/// Whether `lo <= hi` wherever the extents `held` are not negative: their
/// difference is a constant at least 0 or one of those extents, or both
/// are the same monotone function (`min`, `max`, adding a constant,
/// widening an i32) of
/// operands so ordered (a clamped tap: `min(max(a + k, m), n)` and
/// `min(max(b + k, m), n)` where `a <= b`). Exact arithmetic: what holds
/// is that regions of coordinates are not empty, so nothing wraps.
fn ordered(lo: &Expr, hi: &Expr, held: &[Expr]) -> bool {
    if lo == hi {
        return true;
    }
    let extent = simplify(&Expr::binary(BinOp::Sub, hi.clone(), lo.clone()));
    if extent.as_int().is_some_and(|e| e >= 0) || held.contains(&extent) {
        return true;
    }
    match (&lo.kind, &hi.kind) {
        (ExprKind::Binary(op1, a1, b1), ExprKind::Binary(op2, a2, b2))
            if op1 == op2 && matches!(op1, BinOp::Min | BinOp::Max) =>
        {
            ordered(a1, a2, held) && ordered(b1, b2, held)
        }
        // In i64, where coordinates of i32 plus a constant do not wrap.
        (ExprKind::Binary(BinOp::Add, a1, b1), ExprKind::Binary(BinOp::Add, a2, b2))
            if b1 == b2 && b1.as_int().is_some() && lo.ty == Type::I64 =>
        {
            ordered(a1, a2, held)
        }
        // i32 coordinates widened to i64.
        (ExprKind::Cast(a1), ExprKind::Cast(a2))
            if lo.ty == Type::I64
                && hi.ty == Type::I64
                && a1.ty == Type::I32
                && a2.ty == Type::I32 =>
        {
            ordered(a1, a2, held)
        }
        _ => false,
    }
}

/// Calls `f` with each operand of the `&&`s of `e`.
fn conjuncts(e: &Expr, f: &mut impl FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            conjuncts(a, f);
            conjuncts(b, f);
        }
        _ => f(e),
    }
}

/// A bounds program with the pipeline and fixed regions it was inferred
/// from: the auto-scheduler infers the bounds of the pipeline it will
/// have inlined, which lowering, given the same pipeline, need not infer
/// again (a quarter of lowering's time for a chain of stencils).
#[derive(Clone, Debug)]
pub struct Inferred {
    pipeline: Pipeline,
    fixed: Vec<Vec<(usize, i64, i64)>>,
    /// The bounds.
    pub program: BoundsProgram,
}

impl Inferred {
    /// [`infer_bounded`], kept with what it was inferred from.
    pub fn new(p: &Pipeline, fixed: &[Vec<(usize, i64, i64)>]) -> Inferred {
        Inferred {
            pipeline: p.clone(),
            fixed: fixed.to_vec(),
            program: infer_bounded(p, fixed),
        }
    }

    /// The bounds of `p` with `fixed` regions: `earlier`'s program when it
    /// was inferred from the same funcs, inputs, outputs and fixed regions.
    pub fn reuse_or_infer(
        earlier: Option<Inferred>,
        p: &Pipeline,
        fixed: &[Vec<(usize, i64, i64)>],
    ) -> BoundsProgram {
        match earlier {
            Some(e)
                if e.fixed == fixed
                    && e.pipeline.funcs == p.funcs
                    && e.pipeline.inputs == p.inputs
                    && e.pipeline.outputs == p.outputs
                    && e.pipeline.params.len() == p.params.len() =>
            {
                e.program
            }
            _ => infer_bounded(p, fixed),
        }
    }
}

/// Infers the regions of all live funcs and inputs.
pub fn infer(p: &Pipeline) -> BoundsProgram {
    infer_bounded(p, &vec![Vec::new(); p.funcs.len()])
}

/// [`infer`], with the regions of some dimensions fixed by the schedule's
/// `bound(var, min, extent)`: per func, `(dimension, min, extent)`.
pub fn infer_bounded(p: &Pipeline, fixed: &[Vec<(usize, i64, i64)>]) -> BoundsProgram {
    let mut b = Builder {
        p,
        values: func_value_bounds(p),
        prog: BoundsProgram {
            syms: Vec::new(),
            outputs: Vec::new(),
            realized: vec![Vec::new(); p.funcs.len()],
            consumed: vec![Vec::new(); p.funcs.len()],
            inputs: Vec::new(),
            bounded: Vec::new(),
        },
    };
    for (k, &f) in p.outputs.iter().enumerate() {
        let region = (0..p.funcs[f].dims())
            .map(|d| {
                let n = b.dim_name(f, d);
                let lo = b.sym(format!("output{k}.min.{n}"), None);
                let hi = b.sym(format!("output{k}.max.{n}"), None);
                (lo, hi)
            })
            .collect();
        b.prog.outputs.push(region);
    }
    let live = p.live_funcs();
    let readers = p.consumer_lists(&live);
    for &f in live.iter().rev() {
        let func = &p.funcs[f];
        let names: Vec<String> = (0..func.dims()).map(|d| b.dim_name(f, d)).collect();
        let mut demands: Vec<Vec<(Expr, Expr)>> = Vec::new();
        if let Some(k) = p.outputs.iter().position(|&o| o == f) {
            // An empty output demands nothing, even of a func others also read.
            let ok = nonempty(&b.prog.outputs[k]);
            demands.push(
                b.prog.outputs[k]
                    .iter()
                    .map(|&(lo, hi)| {
                        (
                            Expr::select(ok.clone(), Expr::sym(lo), Expr::i64(i64::MAX as i128)),
                            Expr::select(ok.clone(), Expr::sym(hi), Expr::i64(i64::MIN as i128)),
                        )
                    })
                    .collect(),
            );
        }
        // Only the funcs that read `f` demand anything of it (asking all
        // of them made this pass quadratic in the funcs).
        for &c in live.iter().filter(|&&c| c > f && readers[f].contains(&c)) {
            demands.extend(b.demands(c, Source::Func(f), func.dims()));
        }
        let label = if func.updates.is_empty() {
            func.name.clone()
        } else {
            format!("{}.consumed", func.name)
        };
        let consumed = b.union(&label, &names, &demands);
        b.prog.consumed[f] = consumed.clone();
        if func.updates.is_empty() {
            b.prog.realized[f] = consumed;
            b.fix(f, &fixed[f]);
            continue;
        }
        // The updates' own reads and writes of f widen its realized region.
        let mut own: Vec<Vec<(Expr, Expr)>> = vec![consumed
            .iter()
            .map(|&(lo, hi)| (Expr::sym(lo), Expr::sym(hi)))
            .collect()];
        let value_of = |g: FuncId| b.values[g].clone();
        for u in &func.updates {
            let (vars, rvars, guard) = b.update_scope(f, u);
            let scope = Scope::new(vars, rvars, &value_of);
            own.push(demand(&u.args, &scope, &guard, func.dims()));
            let mut reads = Vec::new();
            for e in u.args.iter().chain(std::iter::once(&u.value)) {
                visit_loads(e, &scope, &mut |n| {
                    if let ExprKind::Load {
                        source: Source::Func(g),
                        args,
                        ..
                    } = &n.kind
                    {
                        if *g == f {
                            reads.push(demand(args, &scope, &guard, func.dims()));
                        }
                    }
                });
            }
            own.extend(reads);
        }
        b.prog.realized[f] = b.union(&func.name, &names, &own);
        b.fix(f, &fixed[f]);
    }
    for (i, input) in p.inputs.iter().enumerate() {
        let names: Vec<String> = (0..input.dims)
            .map(|d| ["x", "y", "c", "w"][d].to_string())
            .collect();
        let mut demands = Vec::new();
        for &c in &live {
            demands.extend(b.demands(c, Source::Input(i), input.dims));
        }
        let region = b.union(&input.name, &names, &demands);
        b.prog.inputs.push(region);
    }
    b.prog
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipeline(taps: &str) -> Pipeline {
        let src = format!(
            "fn blur(input: Image<f32, 2>) -> Image<f32, 2> {{
                let c = input.clamp_edge();
                out(x, y) = {taps};
                out
            }}"
        );
        crate::pipeline_from_source(&src, "blur").unwrap()
    }

    /// An earlier program serves only the pipeline and fixed regions it
    /// was inferred from; anything else is inferred afresh.
    #[test]
    fn earlier_bounds_serve_only_what_they_were_inferred_from() {
        let wide = pipeline("c(x - 2, y) + c(x + 2, y)");
        let narrow = pipeline("c(x - 1, y) + c(x + 1, y)");
        let free = vec![Vec::new(); wide.funcs.len()];
        let earlier = || Some(Inferred::new(&wide, &free));
        let reused = Inferred::reuse_or_infer(earlier(), &wide, &free);
        assert_eq!(reused, infer_bounded(&wide, &free));
        let other = Inferred::reuse_or_infer(earlier(), &narrow, &free);
        assert_eq!(other, infer_bounded(&narrow, &free));
        assert_ne!(other, reused);
        let fixed = vec![vec![(0, 0, 16)]; wide.funcs.len()];
        let bounded = Inferred::reuse_or_infer(earlier(), &wide, &fixed);
        assert_eq!(bounded, infer_bounded(&wide, &fixed));
        assert_ne!(bounded, reused);
    }

    /// A stencil's taps under one guard are one demand: a func read only
    /// at `x + k` and `y + k` gets its region as one pair of symbols per
    /// dimension, and the region is the union of its taps; so does an
    /// input read through `clamp_edge`.
    #[test]
    fn a_stencils_taps_are_one_demand() {
        let src = "fn blur(input: Image<f32, 2>) -> Image<f32, 2> {
            let c = input.clamp_edge();
            bx(x, y) = c(x - 1, y) + c(x, y) + c(x + 1, y);
            out(x, y) = bx(x, y - 2) + bx(x, y) + bx(x, y + 1);
            out
        }";
        let p = crate::pipeline_from_source(src, "blur").unwrap();
        let b = infer(&p);
        let bx = p.funcs.iter().position(|f| f.name == "bx").unwrap();
        let named = |f: &dyn Fn(&str) -> bool| b.syms.iter().filter(|s| f(&s.name)).count();
        assert_eq!(named(&|n| n.starts_with("bx.")), 4);
        assert_eq!(named(&|n| n.starts_with("bx.demand.")), 0);
        // The clamped taps of the input too: the same clamp of ordered
        // operands is ordered.
        assert_eq!(named(&|n| n.starts_with("input.demand.")), 0);
        assert_eq!(named(&|n| n.starts_with("input.")), 4);
        let est = crate::schedule::auto::model::Estimates {
            inputs: vec![None],
            funcs: (0..p.funcs.len())
                .map(|f| p.outputs.contains(&f).then(|| vec![100, 50]))
                .collect(),
        };
        let regions = crate::schedule::auto::model::estimate_regions(&p, &b, &est);
        assert_eq!(regions.extents[bx], vec![100, 53]);
    }
}
