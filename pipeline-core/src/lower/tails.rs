//! A split's shifted last vector runs in the steady state's loop.
//!
//! A vectorized split of extent `e` shifts its last vector back to end at
//! the extent (`min(xo * w, e - w)`), and partitioning leaves the loop
//! over the vectors as two: the steady state, where the shift is the
//! identity, and the iterations after it, which hold the shifted vector
//! and, for an extent below the width, a scalar loop. Most of the time the
//! vector body after the steady state, once the extent is known to be at
//! least the width, is the steady state's body at another first column:
//! emitted as it was, it was a third copy of every vectorized loop
//! (steady vector, shifted vector, scalar), which each kernel of the crate
//! carried, and which the macro built and rustc checked and compiled.
//! Here the two become one loop over the first columns of the vectors, in
//! two runs of consecutive vectors, and the scalar loop keeps only the
//! case of an extent below the width:
//!
//! ```text
//! for xo in a..=b { vectorized for xv in 0..=15 { out(xo * 16 + xv) = .. } }
//! for xo in c..=d { vectorized for xv in 0..=select(e >= 16, 15, ..) {
//!     out(select(e >= 16, min(xo * 16, e - 16), xo * 16) + xv) = .. } }
//!   =>
//! for xo.part in 0..=1 {
//!   for xo in select(xo.part == 0, a, 0)..=select(xo.part == 0, b, once) {
//!     let xo.base = select(xo.part == 0, 0, e - 16) + xo * 16
//!     vectorized for xv in 0..=15 { out(xo.base + xv) = .. } } }
//! if !(e >= 16) { for xo in c..=d { for xv in 0..=.. { ..scalar.. } } }
//! ```
//!
//! The runs: the steady state's vectors, then the shifted one, once
//! (`once` is 0 when `e >= 16` and an iteration follows the steady state,
//! else -1). Each run steps by the width from its first column, so the
//! vector loop keeps the one induction variable it had: nothing is added
//! per vector.
//!
//! The two bodies must be equal once the first column is named, or
//! nothing changes: a body with clamps at the right edge (the steady
//! state dropped them) keeps its own loop.

use crate::analysis::interval::{bounds_of, Interval, Scope};
use crate::analysis::lanes::{self, AllLanes};
use crate::analysis::simplify::simplify;
use crate::ir::{BinOp, Expr, ExprKind, LoopVar, Pipeline, Stmt, SymId, Type, UnOp};
use crate::schedule::LoopKind;

/// Joins each split's shifted last vector to its steady state in `s`.
/// `names` are the names of the local symbols, numbered after the
/// `global` ones of the bounds program; the new ones (a loop's first
/// column, `xo.base`) are appended to it.
pub fn join_tails(s: Stmt, pipeline: &Pipeline, global: usize, names: &mut Vec<String>) -> Stmt {
    Tails {
        pipeline,
        global,
        names,
    }
    .stmt(s)
}

struct Tails<'a> {
    pipeline: &'a Pipeline,
    global: usize,
    names: &'a mut Vec<String>,
}

impl Tails<'_> {
    fn stmt(&mut self, s: Stmt) -> Stmt {
        let Stmt::Block(parts) = s else {
            return s.map_children(|c| self.stmt(c));
        };
        let mut out = Vec::with_capacity(parts.len());
        let mut parts = parts.into_iter().peekable();
        while let Some(p) = parts.next() {
            let joined = parts.peek().and_then(|next| self.join(&p, next));
            match joined {
                Some(j) => {
                    parts.next();
                    out.push(j);
                }
                None => out.push(self.stmt(p)),
            }
        }
        Stmt::Block(out)
    }

    /// The loop over the steady state's vectors and the one after it as
    /// one, when their vector bodies are the same but for the first column.
    fn join(&mut self, steady: &Stmt, after: &Stmt) -> Option<Stmt> {
        let (xo, m1, max1, b1) = loop_of(steady, LoopKind::Serial)?;
        let (xo2, m2, max2, b2) = loop_of(after, LoopKind::Serial)?;
        if xo != xo2 {
            return None;
        }
        let (xv, v0, vmax, vbody2) = loop_of(b2, LoopKind::Vectorized)?;
        let (first, w, AllLanes::When(c)) = lanes::lanes_of(v0, vmax)? else {
            return None;
        };
        let (xv1, v1, vmax1, vbody1) = loop_of(b1, LoopKind::Vectorized)?;
        if xv1 != xv || v1 != v0 || vmax1.as_int() != Some(first + w as i128 - 1) {
            return None;
        }
        if c.uses_loop(xo) || c.uses_loop(xv) {
            return None;
        }
        // The vector body after the steady state where all lanes run, with
        // the split guards that hold in every lane dropped.
        let shifted = lanes::resolving_stmt(vbody2.clone(), c, true);
        let shifted = drop_lane_guards(shifted, xv, first, w);
        // Its first column `min(xo * f, e)`, and the steady state's `xo * f`.
        let mut column: Option<(i128, Expr)> = None;
        let mut consistent = true;
        each_expr(&shifted, &mut |e| {
            e.visit(&mut |n| {
                if let Some(found) = shifted_column(n, xo) {
                    match &column {
                        None => column = Some(found),
                        Some(c) => consistent &= *c == found,
                    }
                }
            })
        });
        let (factor, last) = column?;
        if !consistent || factor <= 0 {
            return None;
        }
        // The steady state must end at the last vector that is not shifted
        // (`xo * f <= e`), and the loop after it start after it, as
        // partitioning leaves them: then every iteration after it is the
        // shifted vector.
        let unshifted_end = Expr::binary(
            BinOp::Min,
            max2.clone(),
            Expr::binary(BinOp::Div, last.clone(), Expr::i64(factor)),
        );
        let next = Expr::binary(
            BinOp::Max,
            m1.clone(),
            Expr::binary(BinOp::Add, max1.clone(), Expr::i64(1)),
        );
        if simplify(&unshifted_end) != *max1 || simplify(&next) != *m2 {
            return None;
        }
        // The symbol the joined body reads its first column from: the next
        // local one, named (`sym`) once the join is sure.
        let base = self.global + self.names.len();
        let named = |e: &Expr, pattern: &dyn Fn(&Expr) -> bool| {
            e.rewrite(&mut |n| if pattern(&n) { Expr::sym(base) } else { n })
        };
        let named_shifted =
            shifted.map_exprs(&mut |e| named(e, &|n| shifted_column(n, xo).is_some()));
        let named_steady = vbody1
            .clone()
            .map_exprs(&mut |e| named(e, &|n| column_of(n, xo) == Some(factor)));
        if stmt_uses_loop(&named_steady, xo) || named_steady != named_shifted {
            return None;
        }
        let named = self.sym(xo, "base");
        debug_assert_eq!(named, base);
        Some(self.joined(Joined {
            xo: xo.clone(),
            xv: xv.clone(),
            steady: (m1.clone(), max1.clone()),
            after: (m2.clone(), max2.clone()),
            c: c.clone(),
            base,
            factor,
            last,
            first,
            w,
            body: named_steady,
            narrow: vbody2.clone(),
            narrow_max: vmax.clone(),
        }))
    }

    /// A new local symbol, `func.loop.what`.
    fn sym(&mut self, xo: &LoopVar, what: &str) -> SymId {
        let s = self.global + self.names.len();
        let func = &self.pipeline.funcs[xo.func].name;
        self.names.push(format!("{func}.{}.{what}", xo.name));
        s
    }

    fn joined(&mut self, j: Joined) -> Stmt {
        let i64c = Expr::i64;
        let bin = Expr::binary;
        let select = Expr::select;
        let (m1, max1) = j.steady.clone();
        let (m2, max2) = j.after.clone();
        let f = i64c(j.factor);
        // Two runs of consecutive vectors: the vector of iteration `xo` of
        // a run `(offset, lo, hi)`, `lo <= xo <= hi`, starts at column
        // `offset + xo * f`. The steady state's, then the shifted vector
        // once where any iteration follows the steady state (all of them
        // are shifted: the steady state ends at the last that is not).
        let shifted_runs = bin(
            BinOp::And,
            j.c.clone(),
            bin(BinOp::Ge, max2.clone(), m2.clone()),
        );
        let part = LoopVar {
            name: format!("{}.part", j.xo.name).into(),
            ..j.xo.clone()
        };
        let first_run = bin(
            BinOp::Eq,
            Expr::new(ExprKind::Loop(part.clone()), Type::I64),
            i64c(0),
        );
        let of_part = |steady: Expr, shifted: Expr| select(first_run.clone(), steady, shifted);
        let offsets = of_part(i64c(0), j.last.clone());
        let los = of_part(m1, i64c(0));
        let his = of_part(max1, select(shifted_runs, i64c(0), i64c(-1)));
        let xo_now = Expr::new(ExprKind::Loop(j.xo.clone()), Type::I64);
        let vectors = Stmt::For {
            var: j.xv.clone(),
            min: i64c(j.first),
            max: i64c(j.first + j.w as i128 - 1),
            kind: LoopKind::Vectorized,
            slab: None,
            body: Box::new(j.body),
        };
        let runs = Stmt::For {
            var: part,
            min: i64c(0),
            max: i64c(1),
            kind: LoopKind::Serial,
            slab: None,
            body: Box::new(Stmt::For {
                var: j.xo.clone(),
                min: simplify(&los),
                max: simplify(&his),
                kind: LoopKind::Serial,
                slab: None,
                body: Box::new(Stmt::LetSym {
                    sym: j.base,
                    value: simplify(&bin(BinOp::Add, offsets, bin(BinOp::Mul, xo_now, f))),
                    body: Box::new(vectors),
                }),
            }),
        };
        // An extent below the width: the scalar loop the vector loop was
        // in that case, as a plain loop; a loop over the columns of the
        // one vector where that is all it was.
        let not_c = simplify(&Expr::new(
            ExprKind::Unary(UnOp::Not, j.c.clone().into()),
            Type::Bool,
        ));
        let narrow_max = simplify(&lanes::resolving(&j.narrow_max, &j.c, false));
        let narrow_body = lanes::resolving_stmt(j.narrow, &j.c, false);
        let narrow = match first_vector_only(&j.c, &m2, &max2, &j.xo) {
            true => {
                let zero = i64c(0);
                let last = simplify(&narrow_max.with_loop(&j.xo, &zero));
                let body = narrow_body.map_exprs(&mut |e| simplify(&e.with_loop(&j.xo, &zero)));
                let body = drop_column_guards(body, &j.xv, &last);
                Stmt::If {
                    cond: bin(
                        BinOp::And,
                        not_c,
                        simplify(&bin(BinOp::Ge, max2, zero.clone())),
                    ),
                    body: Box::new(Stmt::For {
                        var: j.xv,
                        min: i64c(j.first),
                        max: last,
                        kind: LoopKind::Serial,
                        slab: None,
                        body: Box::new(body),
                    }),
                }
            }
            false => Stmt::If {
                cond: not_c,
                body: Box::new(Stmt::For {
                    var: j.xo,
                    min: m2,
                    max: max2,
                    kind: LoopKind::Serial,
                    slab: None,
                    body: Box::new(Stmt::For {
                        var: j.xv,
                        min: i64c(j.first),
                        max: narrow_max,
                        kind: LoopKind::Serial,
                        slab: None,
                        body: Box::new(narrow_body),
                    }),
                }),
            },
        };
        Stmt::Block(vec![runs, narrow])
    }
}

/// What [`Tails::join`] found of the two loops.
struct Joined {
    xo: LoopVar,
    xv: LoopVar,
    /// The steady state's iterations, then those after it.
    steady: (Expr, Expr),
    after: (Expr, Expr),
    /// When all lanes of the vectors after the steady state run.
    c: Expr,
    /// The symbol of a vector's first column, which `body` reads.
    base: SymId,
    /// A vector's first column is `xo * factor`, the shifted one's `last`.
    factor: i128,
    last: Expr,
    /// The vector loop's first iteration and width.
    first: i128,
    w: usize,
    /// The vector body, reading its first column from `base`.
    body: Stmt,
    /// The vector loop after the steady state: its body and last
    /// iteration (the scalar loop of an extent below the width).
    narrow: Stmt,
    narrow_max: Expr,
}

/// Whether the loop `xo` over `m2..=max2`, where `c` does not hold, runs
/// at most its iteration 0: `c` is `e >= w` and, over every `e` below
/// `w`, `m2` is 0 and `max2` at most 0 (interval analysis, with `e` a
/// variable below `w`; anything else in them leaves the bounds symbolic,
/// and the answer no). `e` is a split loop's extent, a difference of i32
/// coordinates in i64: its bound below, -2^40, keeps the analysis from
/// seeing `e + 15` wrap. The scalar loop of an extent below a
/// vector's width is then a loop over one vector's columns: its header
/// was more of its code than its body (27K of the 100-func chain's 200K
/// token trees).
fn first_vector_only(c: &Expr, m2: &Expr, max2: &Expr, xo: &LoopVar) -> bool {
    let ExprKind::Binary(BinOp::Ge, e, w) = &c.kind else {
        return false;
    };
    let Some(w) = w.as_int() else {
        return false;
    };
    let v = LoopVar {
        name: format!("{}.narrow", xo.name).into(),
        ..xo.clone()
    };
    let var = Expr::new(ExprKind::Loop(v.clone()), e.ty);
    let of_e = |x: &Expr| x.rewrite(&mut |n| if n == **e { var.clone() } else { n });
    let scope = Scope {
        loops: vec![(v, Interval::constant(-(1 << 40), w - 1))],
        ..Scope::new(vec![], vec![], Scope::no_funcs())
    };
    let (lo, hi) = (bounds_of(&of_e(m2), &scope), bounds_of(&of_e(max2), &scope));
    let int = |b: &Option<Expr>| b.as_ref().and_then(Expr::as_int);
    int(&lo.min) == Some(0) && int(&lo.max) == Some(0) && int(&hi.max).is_some_and(|h| h <= 0)
}

/// `s` without the split's guards `xv + k < b` (or `<=`) that hold at the
/// loop's last iteration `last`, so at every one before it.
fn drop_column_guards(s: Stmt, xv: &LoopVar, last: &Expr) -> Stmt {
    let holds = |c: &Expr| match &c.kind {
        ExprKind::Binary(BinOp::Lt | BinOp::Le, a, b) => {
            additive_in(a, xv)
                && a.uses_loop(xv)
                && !b.uses_loop(xv)
                && lanes::provably_true(&c.with_loop(xv, last))
        }
        _ => false,
    };
    drop_guards(s, &holds)
}

/// The variable, bounds and body of a loop of kind `kind` that is not a
/// parallel slab.
fn loop_of(s: &Stmt, kind: LoopKind) -> Option<(&LoopVar, &Expr, &Expr, &Stmt)> {
    match s {
        Stmt::For {
            var,
            min,
            max,
            kind: k,
            slab: None,
            body,
        } if *k == kind => Some((var, min, max, body)),
        _ => None,
    }
}

fn stmt_uses_loop(s: &Stmt, v: &LoopVar) -> bool {
    let mut uses = false;
    each_expr(s, &mut |e| uses = uses || e.uses_loop(v));
    uses
}

/// Calls `f` on every expression of `s` and of the statements inside it.
fn each_expr(s: &Stmt, f: &mut impl FnMut(&Expr)) {
    s.own_exprs().into_iter().for_each(&mut *f);
    s.children().iter().for_each(|c| each_expr(c, f));
}

/// `f` if `e` is `xo * f`.
fn column_of(e: &Expr, xo: &LoopVar) -> Option<i128> {
    match &e.kind {
        ExprKind::Binary(BinOp::Mul, a, b) => match (&a.kind, b.as_int()) {
            (ExprKind::Loop(v), Some(f)) if v == xo => Some(f),
            _ => None,
        },
        _ => None,
    }
}

/// `(f, e)` if `n` is `min(xo * f, e)`, the first column of a split's
/// vector whose last one is shifted back to end at the extent.
fn shifted_column(n: &Expr, xo: &LoopVar) -> Option<(i128, Expr)> {
    match &n.kind {
        ExprKind::Binary(BinOp::Min, a, b) if !b.uses_loop(xo) => {
            column_of(a, xo).map(|f| (f, (**b).clone()))
        }
        _ => None,
    }
}

/// `s` without the conjuncts of its conditions that hold in every lane of
/// the vector loop `xv` (`first..first + w`): comparisons whose sides are
/// sums in which `xv` appears as a term, so that holding at the first and
/// the last lane means holding in all.
fn drop_lane_guards(s: Stmt, xv: &LoopVar, first: i128, w: usize) -> Stmt {
    let holds = |c: &Expr| {
        matches!(
            &c.kind,
            ExprKind::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, a, b)
                if additive_in(a, xv) && additive_in(b, xv)
        ) && c.uses_loop(xv)
            && lanes::holds_in_first_and_last(c, xv, first, w)
    };
    drop_guards(s, &holds)
}

/// `s` without the conjuncts of its conditions that `holds`.
fn drop_guards(s: Stmt, holds: &dyn Fn(&Expr) -> bool) -> Stmt {
    match s {
        Stmt::If { cond, body } => {
            let body = drop_guards(*body, holds);
            let kept: Vec<Expr> = cond
                .conjuncts()
                .into_iter()
                .filter(|c| !holds(c))
                .cloned()
                .collect();
            match kept
                .into_iter()
                .reduce(|a, b| Expr::binary(BinOp::And, a, b))
            {
                Some(cond) => Stmt::If {
                    cond,
                    body: Box::new(body),
                },
                None => body,
            }
        }
        s => s.map_children(|c| drop_guards(c, holds)),
    }
}

/// Whether `xv` appears in `e` only as a term of sums and differences
/// (`a + xv - 1`, not `2 * xv` or `min(xv, a)`): `e` grows with it.
fn additive_in(e: &Expr, xv: &LoopVar) -> bool {
    match &e.kind {
        ExprKind::Loop(v) if v == xv => true,
        ExprKind::Binary(BinOp::Add, a, b) => additive_in(a, xv) && additive_in(b, xv),
        ExprKind::Binary(BinOp::Sub, a, b) => additive_in(a, xv) && !b.uses_loop(xv),
        _ => !e.uses_loop(xv),
    }
}

#[cfg(test)]
mod tests {
    use crate::interp::{self, Image, Value};
    use crate::ir::Type;

    /// A blur whose `blur_x` reads a clamped input (its last vectors clamp
    /// columns: they keep their own loop) and whose `out` reads `blur_x`
    /// only inside what it computed (its shifted vector joins the steady
    /// state).
    const BLUR: &str = r#"
        pub fn blur(input: Image<u16, 2>) -> Image<u16, 2> {
            let c = input.clamp_edge();
            blur_x(x, y) = (c(x - 1, y) as u32 + c(x, y) as u32 + c(x + 1, y) as u32) / 3;
            out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
            out
        }
        schedule blur {
            out.split(y, yo, yi, 8).parallel(yo).vectorize(x, 16);
            blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
        }
    "#;

    fn lowered() -> (crate::ir::Pipeline, crate::Lowered) {
        let (p, s) = crate::scheduled_from_source(BLUR, "blur").unwrap();
        let l = crate::lower_pipeline(&p, &s).ok().unwrap();
        (p, l)
    }

    #[test]
    fn a_shifted_last_vector_runs_in_the_steady_states_loop() {
        let (_, l) = lowered();
        let text = l.text();
        assert_eq!(text.matches("vectorized for out.x_v").count(), 1, "{text}");
        assert!(text.contains("for out.x.part in 0..=1"), "{text}");
        assert!(text.contains("let out.x.base"), "{text}");
        // Below the width, a scalar loop over the columns of one vector,
        // without the split's guard of each column.
        assert!(text.contains("if (!(out.extent.x >= 16) && "), "{text}");
        assert!(
            text.contains("for out.x_v in 0..=min(15, (out.extent.x - 1))"),
            "{text}"
        );
        assert!(
            !text.contains("(((out.x * 16) + out.x_v) < out.extent.x)"),
            "{text}"
        );
        // Clamped at both edges, `blur_x` keeps its three loops.
        assert_eq!(
            text.matches("vectorized for blur_x.x_v").count(),
            3,
            "{text}"
        );
        assert!(!text.contains("blur_x.x.part"), "{text}");
    }

    /// Every width from below the vector to several vectors, ragged or
    /// not: the joined loops compute what the interpreter does.
    #[test]
    fn joined_loops_compute_every_column() {
        let (p, l) = lowered();
        for w in [1usize, 2, 15, 16, 17, 31, 32, 33, 47, 50] {
            for h in [1usize, 3, 9] {
                let mut input = Image::new(Type::U16, vec![0, 0], vec![w, h]);
                for y in 0..h {
                    for x in 0..w {
                        let v = (x * 7919 + y * 104729) % 65536;
                        input.set(&[x as i64, y as i64], Value::Int(v as i128));
                    }
                }
                let mut want = Image::new(Type::U16, vec![0, 0], vec![w, h]);
                interp::run(&p, &[input.clone()], &[], std::slice::from_mut(&mut want)).unwrap();
                let mut got = Image::new(Type::U16, vec![0, 0], vec![w, h]);
                crate::exec::run_lowered(&l, &[input], &[], std::slice::from_mut(&mut got))
                    .unwrap();
                for y in 0..h as i64 {
                    for x in 0..w as i64 {
                        assert_eq!(got.get(&[x, y]), want.get(&[x, y]), "{w}x{h} at {x},{y}");
                    }
                }
            }
        }
    }
}
