//! Loop partitioning: boundary conditions and split-tail guards cost nothing
//! in the interior of a loop.
//!
//! A boundary condition maps a coordinate `a * v + r` (`v` the loop, `a > 0`,
//! `r` fixed while the loop runs) into `[min, min + extent)`; it is the
//! identity while the coordinate is inside. A guard `a * v + r < e` holds up to
//! some `v`. Each gives a range of `v` where it can be dropped; their
//! intersection is the loop's steady state. The loop becomes three: the
//! iterations before the steady state and those after it run the body as it
//! is, the steady state runs it without those clamps and guards.
//!
//! ```text
//! for x in 0..=w-1 { out(x) = in(clamp(x - 1, 0, w - 1)) + in(clamp(x + 1, 0, w - 1)) }
//!   => for x in 0..=min(w-1, 0) { ..clamped.. }
//!      for x in 1..=w-2 { out(x) = in(x - 1) + in(x + 1) }
//!      for x in max(1, w-1)..=w-1 { ..clamped.. }
//! ```
//!
//! Only conditions that vary with the innermost loop around them count: a
//! row's clamp inside the loop over its columns is computed once per row
//! (and is a uniform value in vector code), so partitioning the rows on it
//! would buy nothing and copy every loop inside (with clamps in every
//! dimension, 3^depth copies of the innermost loop: the unsharp mask's
//! kernels were 9 times larger).
//!
//! Only serial and vectorized loops are partitioned: parallel loops keep one
//! range per slab, unrolled loops have constant extents. Loops are
//! partitioned outermost first: a condition on the coordinate `a * v + r`
//! where `r` depends on loops inside `v` holds over the range that suits
//! every value `r` takes (interval analysis over those loops), so the tiles of
//! a split loop run clamp-free as a whole; the parts that keep conditions
//! are then partitioned on their inner loops.

use crate::analysis::interval::{bounds_of, Interval, Scope};
use crate::analysis::simplify::simplify;
use crate::hash::HashMap;
use crate::ir::*;
use crate::schedule::LoopKind;
use std::sync::Arc;

/// Partitions every loop whose body has boundary conditions or guards that
/// are the identity over a range of it.
pub fn partition(s: Stmt) -> Stmt {
    match s {
        Stmt::For {
            var,
            min,
            max,
            kind,
            slab,
            body,
        } => match split_loop(var, min, max, kind, slab, *body) {
            // The three parts' bodies, each partitioned on the loops inside.
            Stmt::Block(parts) => Stmt::Block(
                parts
                    .into_iter()
                    .map(|p| p.map_children(partition))
                    .collect(),
            ),
            whole => whole.map_children(partition),
        },
        s => s.map_children(partition),
    }
}

/// The coordinate values bound around an expression (`Var(d)` and `RVar(r)`
/// of the innermost stage).
#[derive(Clone, Default)]
struct Coords {
    pure: HashMap<usize, Expr>,
    reduction: HashMap<usize, Expr>,
}

/// What one loop's body allows: the bounds of its steady state.
struct Steady<'a> {
    var: &'a LoopVar,
    /// Loops inside the one partitioned, with bounds that do not depend on
    /// it when they have some.
    inner: HashMap<LoopVar, Option<Interval>>,
    lower: Vec<Expr>,
    upper: Vec<Expr>,
    /// Whether the partitioned loop starts at a constant `>= 0`.
    from_zero: bool,
    /// Whether the partitioned loop is a vector loop.
    vector: bool,
    /// Rewrites that hold in the steady state, found with the bounds above:
    /// `min(16 * v, e - 16) -> 16 * v` (its side condition bounds the
    /// steady state) and then `e >= 16 -> true`.
    facts: std::cell::RefCell<Vec<(Expr, Expr)>>,
}

/// Where a coordinate stays inside a range (see [`Steady::inside`]).
struct Inside {
    first: Expr,
    last: Option<Expr>,
    facts: Vec<(Expr, Expr)>,
}

fn i64c(v: i128) -> Expr {
    Expr::i64(v)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::binary(op, a, b)
}

impl Steady<'_> {
    /// `e` (with coordinates substituted) as `a * var + rest`, `rest` free of
    /// `var`; `side` receives upper bounds of the loop under which the form
    /// holds (`min(16 * v, e - 16)`, a split's shifted tail, is `16 * v`
    /// while `v <= (e - 16) / 16`).
    fn linear(
        &self,
        e: &Expr,
        side: &mut Vec<Expr>,
        facts: &mut Vec<(Expr, Expr)>,
    ) -> Option<(i128, Expr)> {
        let uses_var = |e: &Expr| e.uses_loop(self.var);
        // Arithmetic in i32 and i64 (coordinates, bounds) stays far from the
        // limits of its type; in narrower or unsigned types it wraps (a
        // coordinate `(6 - (h as u8)) as i32` is 255 for h = 7), and a
        // cast to one changes the value (`(x as u16) as i32` of -2 is
        // 65534): those are not linear, though fixed when they do not use
        // the loop.
        let wide = matches!(e.ty, Type::I32 | Type::I64);
        match &e.kind {
            ExprKind::Loop(l) if l == self.var => Some((1, i64c(0))),
            _ if !wide && uses_var(e) => None,
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) if wide => {
                let (ca, ra) = self.linear(a, side, facts)?;
                let (cb, rb) = self.linear(b, side, facts)?;
                Some(match op {
                    BinOp::Add => (ca + cb, bin(BinOp::Add, ra, rb)),
                    _ => (ca - cb, bin(BinOp::Sub, ra, rb)),
                })
            }
            ExprKind::Binary(BinOp::Mul, a, b) if wide && b.as_int().is_some() => {
                let (c, r) = self.linear(a, side, facts)?;
                let k = b.as_int()?;
                Some((c * k, bin(BinOp::Mul, r, i64c(k))))
            }
            ExprKind::Binary(BinOp::Mul, a, b) if wide && a.as_int().is_some() => {
                let (c, r) = self.linear(b, side, facts)?;
                let k = a.as_int()?;
                Some((c * k, bin(BinOp::Mul, r, i64c(k))))
            }
            ExprKind::Binary(BinOp::Min, p, q) if uses_var(p) && !uses_var(q) => {
                let (c, r) = self.linear(p, side, facts)?;
                let (_, bound) = self.linear(q, side, facts)?;
                if c <= 0 || !self.fixed(&r) {
                    return None;
                }
                side.push(div_floor(bin(BinOp::Sub, bound, r.clone()), c));
                facts.push((e.clone(), (**p).clone()));
                Some((c, r))
            }
            // A select that does not use the loop is a constant, such as an
            // outer split's shifted tail: the inner loop of a split's last,
            // shifted tile then runs guard-free too. Not for a vector loop:
            // there it would cut the vectors of every edge part of the outer
            // loop into partial ones (twice the code) for iterations that
            // are rare.
            ExprKind::Select(cond, a, b) if !uses_var(cond) && (uses_var(e) || self.vector) => {
                let before = facts.len();
                let (ca, ra) = self.linear(a, side, facts)?;
                let (cb, rb) = self.linear(b, side, facts)?;
                // A shifted split: `select(e >= n, min(n * v, e - n), n * v)`;
                // `n * v <= e - n` with `v >= 0` makes `e >= n` hold.
                if let ExprKind::Binary(BinOp::Ge, x, y) = &cond.kind {
                    let gap = simplify(&bin(BinOp::Sub, (**x).clone(), (**y).clone()));
                    let implied = facts[before..].iter().any(|(from, _)| {
                        matches!(&from.kind, ExprKind::Binary(BinOp::Min, p, q)
                            if simplify(q) == gap && self.scaled_var(p))
                    });
                    if implied && self.from_zero {
                        facts.push((cond.as_ref().clone(), Expr::bool(true)));
                    }
                }
                (ca == cb && simplify(&ra) == simplify(&rb)).then_some((ca, ra))
            }
            ExprKind::Cast(a) if wide && a.ty.is_int() => self.linear(a, side, facts),
            _ if !uses_var(e) => {
                let known = !e.any(&mut |n| match &n.kind {
                    ExprKind::Loop(l) => self.inner.get(l).is_some_and(|b| b.is_none()),
                    ExprKind::Var(_)
                    | ExprKind::RVar(_)
                    | ExprKind::LetVar(_)
                    | ExprKind::Load { .. } => true,
                    _ => false,
                });
                known.then(|| (0, Expr::cast(Type::I64, e.clone())))
            }
            _ => None,
        }
    }

    /// True when `e` is `k * v` (`v` the partitioned loop, `k > 0`).
    fn scaled_var(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Binary(BinOp::Mul, a, k)
            if matches!(&a.kind, ExprKind::Loop(l) if l == self.var)
                && k.as_int().is_some_and(|k| k > 0))
    }

    /// `e` with the steady state's facts applied, simplified as a bound.
    fn settle(&self, e: &Expr) -> Expr {
        simplify(&self.apply_facts(e))
    }

    /// `e` with the steady state's facts applied (exact: only a rewrite of
    /// what the facts say and constant folding).
    fn apply_facts(&self, e: &Expr) -> Expr {
        let facts = self.facts.borrow();
        if facts.is_empty() {
            return e.clone();
        }
        let e = e.rewrite(&mut |n| {
            facts
                .iter()
                .find(|(from, _)| *from == n)
                .map(|(_, to)| to.clone())
                .unwrap_or(n)
        });
        crate::analysis::simplify::fold_constants(&e)
    }

    /// True when `e` uses no loop inside the partitioned one.
    fn fixed(&self, e: &Expr) -> bool {
        !e.any(&mut |n| matches!(&n.kind, ExprKind::Loop(l) if self.inner.contains_key(l)))
    }

    /// The bounds of `r` over the loops inside the partitioned one.
    fn range(&self, r: &Expr) -> Option<(Expr, Expr)> {
        let none = |_: FuncId| Interval::everything();
        let scope = Scope {
            loops: self
                .inner
                .iter()
                .filter_map(|(l, b)| b.clone().map(|b| (l.clone(), b)))
                .collect(),
            ..Scope::new(vec![], vec![], &none)
        };
        let b = bounds_of(r, &scope);
        Some((b.min?, b.max?))
    }

    /// The range of the loop where boundary condition `b` is the identity,
    /// if it depends on the loop in a way this pass understands.
    fn boundary(&self, b: &Expr, coords: &Coords) -> Option<(Expr, Expr)> {
        let ExprKind::Boundary {
            coord, min, extent, ..
        } = &b.kind
        else {
            return None;
        };
        let inside = self.inside(coord, min, Some(extent), coords)?;
        self.facts.borrow_mut().extend(inside.facts);
        Some((inside.first, inside.last?))
    }

    /// For `coord = a * v + r` (`a > 0`): the first iteration from which
    /// `min <= coord`, and with an extent the last up to which
    /// `coord <= min + extent - 1`, for every `r` the loops inside take; and
    /// the facts the form relies on.
    fn inside(
        &self,
        coord: &Expr,
        min: &Expr,
        extent: Option<&Expr>,
        coords: &Coords,
    ) -> Option<Inside> {
        let (mut side, mut facts) = (Vec::new(), Vec::new());
        let (a, r) = self.linear(&substitute(coord, coords), &mut side, &mut facts)?;
        let (0, lo) = self.linear(&substitute(min, coords), &mut side, &mut facts)? else {
            return None;
        };
        if a <= 0 || !self.fixed(&lo) {
            return None;
        }
        let n = match extent {
            Some(e) => match self.linear(&substitute(e, coords), &mut side, &mut facts)? {
                (0, n) if self.fixed(&n) => Some(n),
                _ => return None,
            },
            None => None,
        };
        let (r_min, r_max) = self.range(&r)?;
        let first = div_ceil(bin(BinOp::Sub, lo.clone(), r_min), a);
        let last = n.map(|n| {
            let top = bin(BinOp::Sub, bin(BinOp::Add, lo, n), i64c(1));
            let last = div_floor(bin(BinOp::Sub, top, r_max), a);
            side.into_iter().fold(last, |a, b| bin(BinOp::Min, a, b))
        });
        Some(Inside { first, last, facts })
    }

    /// The last iteration for which guard conjunct `c` holds, if it is
    /// `a * v + r < e` with `a > 0`.
    fn guard(&self, c: &Expr) -> Option<Expr> {
        let ExprKind::Binary(BinOp::Lt, p, q) = &c.kind else {
            return None;
        };
        let (mut side, mut facts) = (Vec::new(), Vec::new());
        let (a, r) = self.linear(p, &mut side, &mut facts)?;
        let (b, e) = self.linear(q, &mut side, &mut facts)?;
        if a <= 0 || b != 0 || !self.fixed(&e) {
            return None;
        }
        let (_, r_max) = self.range(&r)?;
        let last = div_floor(bin(BinOp::Sub, bin(BinOp::Sub, e, r_max), i64c(1)), a);
        self.facts.borrow_mut().extend(facts);
        Some(side.into_iter().fold(last, |a, b| bin(BinOp::Min, a, b)))
    }

    /// [`Steady::boundary`] for a boundary condition that varies with the
    /// innermost loop around it, `innermost`. One that does not (a row's
    /// clamp inside the loop over its columns) costs nothing per iteration
    /// once the compiler moves it out of that loop, and vector code keeps it
    /// as a uniform value; partitioning on it would only copy the loops
    /// inside (3^depth copies of the innermost loop for clamps on every
    /// dimension) for no speed.
    fn droppable_boundary(
        &self,
        b: &Expr,
        coords: &Coords,
        innermost: &LoopVar,
    ) -> Option<(Expr, Expr)> {
        let ExprKind::Boundary { coord, .. } = &b.kind else {
            return None;
        };
        if !substitute(coord, coords).uses_loop(innermost) {
            return None;
        }
        self.boundary(b, coords)
    }

    /// Whether `e` is one half of the test that coordinate `c` lies in
    /// `[min, min + extent)` (`c >= min` or `c - min < extent`, as
    /// `constant(v)` writes it) and the steady state's bounds include the
    /// bound that half gives, so that it holds throughout.
    fn inside_test_holds(&self, e: &Expr, coords: &Coords, innermost: &LoopVar) -> bool {
        let (c, min, extent) = match &e.kind {
            ExprKind::Binary(BinOp::Ge, c, min) => (c, min, None),
            ExprKind::Binary(BinOp::Lt, d, extent) => match &d.kind {
                ExprKind::Binary(BinOp::Sub, c, min) => (c, min, Some(extent)),
                _ => return false,
            },
            _ => return false,
        };
        if !c.ty.is_int() || !substitute(c, coords).uses_loop(innermost) {
            return false;
        }
        match self.inside(c, min, extent.map(|n| &**n), coords) {
            Some(Inside {
                last: Some(last), ..
            }) => {
                let last = simplify(&last);
                self.upper.iter().any(|u| simplify(u) == last)
            }
            Some(Inside { first, .. }) => {
                let first = simplify(&first);
                self.lower.iter().any(|l| simplify(l) == first)
            }
            None => false,
        }
    }

    /// [`Steady::guard`] for a guard that varies with the innermost loop
    /// around it (see [`Steady::droppable_boundary`]).
    fn droppable_guard(&self, c: &Expr, coords: &Coords, innermost: &LoopVar) -> Option<Expr> {
        if !substitute(c, coords).uses_loop(innermost) {
            return None;
        }
        self.guard(c)
    }

    /// `e` without the boundary conditions that vary with `innermost` and
    /// are the identity over a range of the loop, each range added to
    /// `ranges`; with `tests`, also without the halves of `constant(v)`'s
    /// test that the steady state decides. Bottom up, so that a condition
    /// whose coordinate holds another (`mirror(wrap(x) + 2)`, from an
    /// inlined func read through a boundary condition) is judged with the
    /// inner one dropped: [`Steady::collect`] and [`Steady::strip`] must
    /// agree on every condition the steady state drops.
    fn unclamp(
        &self,
        e: &Expr,
        coords: &Coords,
        innermost: &LoopVar,
        ranges: &mut Vec<(Expr, Expr)>,
        tests: bool,
    ) -> Expr {
        e.rewrite(&mut |mut n| {
            if let Some(range) = self.droppable_boundary(&n, coords, innermost) {
                if let ExprKind::Boundary { coord, .. } =
                    std::mem::replace(&mut n.kind, ExprKind::Int(0))
                {
                    ranges.push(range);
                    return Arc::unwrap_or_clone(coord);
                }
            }
            if tests && self.inside_test_holds(&n, coords, innermost) {
                return Expr::bool(true);
            }
            n
        })
    }

    /// Collects the steady-state bounds every boundary condition and guard of
    /// `s` allows.
    /// `innermost`: the innermost loop around `s` (the partitioned one at
    /// first).
    fn collect(&mut self, s: &Stmt, coords: &Coords, innermost: &LoopVar) {
        match s {
            Stmt::For { var, body, .. } => self.collect(body, coords, var),
            Stmt::Allocate { body, .. } | Stmt::LetSym { body, .. } => {
                self.collect(body, coords, innermost)
            }
            Stmt::LetCoord { coord, value, body } => {
                let mut inner = coords.clone();
                bind(&mut inner, *coord, value);
                self.collect(body, &inner, innermost);
            }
            Stmt::If { cond, body } => {
                for c in cond.conjuncts() {
                    if let Some(last) = self.droppable_guard(c, coords, innermost) {
                        self.upper.push(last);
                    }
                }
                self.collect(body, coords, innermost);
            }
            Stmt::Block(stmts) => stmts
                .iter()
                .for_each(|s| self.collect(s, coords, innermost)),
            Stmt::Store { args, value, .. } => {
                let mut ranges = Vec::new();
                for e in args.iter().chain([value]) {
                    self.unclamp(e, coords, innermost, &mut ranges, false);
                }
                for (first, last) in ranges {
                    self.lower.push(first);
                    self.upper.push(last);
                }
            }
            Stmt::CopyToOutput { .. } => {}
        }
    }

    /// The body of the steady state: without the boundary conditions and
    /// guards [`Steady::collect`] accounted for.
    fn strip(&self, s: Stmt, coords: &Coords, innermost: &LoopVar) -> Stmt {
        match s {
            Stmt::LetCoord { coord, value, body } => {
                let mut inner = coords.clone();
                bind(&mut inner, coord, &value);
                Stmt::LetCoord {
                    coord,
                    value: self.settle(&value),
                    body: Box::new(self.strip(*body, &inner, innermost)),
                }
            }
            Stmt::For {
                var,
                min,
                max,
                kind,
                slab,
                body,
            } => {
                let body = Box::new(self.strip(*body, coords, &var));
                Stmt::For {
                    var,
                    min: self.settle(&min),
                    max: self.settle(&max),
                    kind,
                    slab,
                    body,
                }
            }
            Stmt::If { cond, body } => {
                let kept: Vec<&Expr> = cond
                    .conjuncts()
                    .into_iter()
                    .filter(|c| self.droppable_guard(c, coords, innermost).is_none())
                    .collect();
                let body = self.strip(*body, coords, innermost);
                match kept
                    .into_iter()
                    .map(|c| self.settle(c))
                    .reduce(|a, b| bin(BinOp::And, a, b))
                {
                    Some(cond) => Stmt::If {
                        cond,
                        body: Box::new(body),
                    },
                    None => body,
                }
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                // Without the clamps the steady state drops, and without the
                // tests of `constant(v)`'s select that the same ranges decide
                // (`c >= min`, `c - min < extent`).
                let unclamp = |e: &Expr| {
                    let e = self.unclamp(e, coords, innermost, &mut Vec::new(), true);
                    crate::analysis::simplify::fold_constants(&e)
                };
                Stmt::Store {
                    func,
                    update,
                    args: args.iter().map(|a| self.apply_facts(&unclamp(a))).collect(),
                    value: self.apply_facts(&unclamp(&value)),
                }
            }
            s => s.map_children(|c| self.strip(c, coords, innermost)),
        }
    }
}

fn bind(coords: &mut Coords, c: Coord, value: &Expr) {
    match c {
        Coord::Pure(_, d) => coords.pure.insert(d, value.clone()),
        Coord::Reduction(_, _, r) => coords.reduction.insert(r, value.clone()),
    };
}

/// `e` with the coordinates bound around it replaced by their values.
fn substitute(e: &Expr, coords: &Coords) -> Expr {
    e.rewrite(&mut |n| match &n.kind {
        ExprKind::Var(d) => coords.pure.get(d).cloned().unwrap_or(n),
        ExprKind::RVar(r) => coords.reduction.get(r).cloned().unwrap_or(n),
        _ => n,
    })
}

/// `floor(e / a)` for `a > 0` (division is Euclidean).
fn div_floor(e: Expr, a: i128) -> Expr {
    if a == 1 {
        e
    } else {
        bin(BinOp::Div, e, i64c(a))
    }
}

/// `ceil(e / a)` for `a > 0`.
fn div_ceil(e: Expr, a: i128) -> Expr {
    div_floor(bin(BinOp::Add, e, i64c(a - 1)), a)
}

/// The loops inside `s` with bounds free of loop `v` and of each other,
/// where they have some: a split's inner loop `0..=min(15, ..)` is `[0, 15]`.
fn loops_in(s: &Stmt, v: &LoopVar) -> HashMap<LoopVar, Option<Interval>> {
    fn all<'a>(s: &'a Stmt, out: &mut Vec<(&'a LoopVar, &'a Expr, &'a Expr)>) {
        if let Stmt::For { var, min, max, .. } = s {
            out.push((var, min, max));
        }
        s.children().iter().for_each(|c| all(c, out));
    }
    let mut loops = Vec::new();
    all(s, &mut loops);
    let fixed = |e: &Expr| {
        !e.any(&mut |n| {
            matches!(&n.kind, ExprKind::Loop(l) if l == v || loops.iter().any(|(w, _, _)| *w == l))
        })
    };
    loops
        .iter()
        .map(|&(var, min, max)| {
            let upper = upper_bound(max, &fixed);
            let lower = fixed(min).then(|| min.clone());
            let bounds = lower.zip(upper).map(|(lo, hi)| Interval::new(lo, hi));
            (var.clone(), bounds)
        })
        .collect()
}

/// An upper bound of `e` made of what `fixed` accepts: `min(15, ..)` is at
/// most 15, `select(c, 15, min(15, ..))` too.
fn upper_bound(e: &Expr, fixed: &dyn Fn(&Expr) -> bool) -> Option<Expr> {
    match &e.kind {
        _ if fixed(e) => Some(e.clone()),
        ExprKind::Binary(BinOp::Min, a, b) => {
            upper_bound(a, fixed).or_else(|| upper_bound(b, fixed))
        }
        ExprKind::Select(_, a, b) => {
            let (a, b) = (upper_bound(a, fixed)?, upper_bound(b, fixed)?);
            Some(if simplify(&a) == simplify(&b) {
                a
            } else {
                bin(BinOp::Max, a, b)
            })
        }
        _ => None,
    }
}

fn split_loop(
    var: LoopVar,
    min: Expr,
    max: Expr,
    kind: LoopKind,
    slab: Option<Slab>,
    body: Stmt,
) -> Stmt {
    let whole = |min: Expr, max: Expr, body: Stmt| Stmt::For {
        var: var.clone(),
        min,
        max,
        kind,
        slab: slab.clone(),
        body: Box::new(body),
    };
    if !matches!(kind, LoopKind::Serial | LoopKind::Vectorized) || slab.is_some() {
        return whole(min, max, body);
    }
    let inner = loops_in(&body, &var);
    let mut steady = Steady {
        var: &var,
        inner,
        lower: Vec::new(),
        upper: Vec::new(),
        from_zero: min.as_int().is_some_and(|m| m >= 0),
        vector: kind == LoopKind::Vectorized,
        facts: Default::default(),
    };
    steady.collect(&body, &Coords::default(), &var);
    if steady.lower.is_empty() && steady.upper.is_empty() {
        return whole(min, max, body);
    }
    // The same condition often appears at several reads.
    for bounds in [&mut steady.lower, &mut steady.upper] {
        let mut unique: Vec<Expr> = Vec::new();
        for b in bounds.drain(..) {
            let b = simplify(&b);
            if !unique.contains(&b) {
                unique.push(b);
            }
        }
        *bounds = unique;
    }
    let first = steady
        .lower
        .iter()
        .cloned()
        .fold(min.clone(), |a, b| bin(BinOp::Max, a, b));
    let last = steady
        .upper
        .iter()
        .cloned()
        .fold(max.clone(), |a, b| bin(BinOp::Min, a, b));
    let (first, last) = (simplify(&first), simplify(&last));
    let stripped = steady.strip(body.clone(), &Coords::default(), &var);
    // Without a lower bound the steady state starts at the loop's first
    // iteration, and without an upper bound it ends at its last: no part
    // before or after it (a split's guard bounds only the last iterations).
    let (no_before, no_after) = (steady.lower.is_empty(), steady.upper.is_empty());
    // Before the steady state, the steady state, after it: each iteration
    // exactly once whether or not the steady state is empty.
    let before = whole(
        min.clone(),
        simplify(&bin(
            BinOp::Min,
            max.clone(),
            bin(BinOp::Sub, first.clone(), i64c(1)),
        )),
        body.clone(),
    );
    let during = whole(first.clone(), last.clone(), stripped);
    let after = whole(
        simplify(&bin(BinOp::Max, first, bin(BinOp::Add, last, i64c(1)))),
        max,
        body,
    );
    let mut parts = Vec::with_capacity(3);
    if !no_before {
        parts.push(before);
    }
    parts.push(during);
    if !no_after {
        parts.push(after);
    }
    Stmt::Block(parts)
}
