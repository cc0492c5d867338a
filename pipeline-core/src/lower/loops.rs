//! Loop synthesis: every live func is computed over its whole realized
//! region before its consumers run (Halide's `compute_root`), its pure stage
//! with the loop nest its schedule asks for (splits, order, parallel,
//! vectorized and unrolled loops), its updates serially in definition order.
//!
//! Runs after inlining and bounds inference; the loops' bounds come from the
//! bounds program's symbols. A split of a dimension of extent `e` by `n` runs
//! `ceil(e / n)` outer iterations; the last one is shifted inwards (it
//! recomputes a few points) when the stage is pure, `e >= n` and no loop of
//! that dimension runs in parallel, and every store is guarded by its
//! coordinate lying inside the region otherwise.
//!
//! **Guarantee:** every store of a stage lies in the func's realized region,
//! and the iterations of a parallel loop write disjoint slabs of one
//! dimension.
//!
//! ```text
//! out.split(y, yo, yi, 32).parallel(yo)
//!   => parallel for out.yo in 0..=ceil(e / 32) - 1 {   // slab of 32 rows each
//!        for out.yi in 0..=31 { for out.x in .. {
//!          let y = out.min.y + out.yo * 32 + out.yi; if y - out.min.y < e { out(x, y) = .. } } } }
//! ```

use crate::analysis::bounds::BoundsProgram;
use crate::analysis::simplify::simplify;
use crate::ir::*;
use crate::schedule::{LoopKind, Schedule, StageSchedule};
use std::collections::HashMap;

/// Whether an output func is computed straight into the caller's buffer
/// (pure, and read by no other func) or into a buffer of its own and copied.
pub fn writes_output_directly(p: &Pipeline, f: FuncId) -> bool {
    p.funcs[f].updates.is_empty() && p.consumers(f).is_empty()
}

/// Builds the loop nest of the whole pipeline.
pub fn synthesize(p: &Pipeline, b: &BoundsProgram, sched: &Schedule) -> Stmt {
    let live = p.live_funcs();
    let mut stages = Vec::new();
    for &f in &live {
        stages.push(pure_stage(p, b, f, &sched.funcs[f].pure));
        for k in 0..p.funcs[f].updates.len() {
            stages.push(update_stage(p, b, f, k));
        }
    }
    for (k, &f) in p.outputs.iter().enumerate() {
        if !writes_output_directly(p, f) {
            stages.push(Stmt::CopyToOutput { func: f, output: k });
        }
    }
    let mut body = Stmt::Block(stages);
    for &f in live.iter().rev() {
        if !p.outputs.contains(&f) || !writes_output_directly(p, f) {
            body = Stmt::Allocate {
                func: f,
                body: Box::new(body),
            };
        }
    }
    body
}

fn i64c(v: i64) -> Expr {
    Expr::i64(v as i128)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::binary(op, a, b)
}

/// The number of points of `[lo, hi]`, 0 when empty (never wraps).
fn extent_of(lo: &Expr, hi: &Expr) -> Expr {
    Expr::select(
        bin(BinOp::Ge, hi.clone(), lo.clone()),
        bin(BinOp::Add, bin(BinOp::Sub, hi.clone(), lo.clone()), i64c(1)),
        i64c(0),
    )
}

fn pure_stage(p: &Pipeline, b: &BoundsProgram, f: FuncId, st: &StageSchedule) -> Stmt {
    let func = &p.funcs[f];
    let region: Vec<(Expr, Expr)> = b.realized[f]
        .iter()
        .map(|&(lo, hi)| (Expr::sym(lo), Expr::sym(hi)))
        .collect();
    let loop_var = |name: &str| LoopVar {
        func: f,
        stage: 0,
        name: name.to_string(),
    };
    let root_dim = |name: &str| st.roots.iter().position(|r| r == name);

    // Extents of every variable, roots first, then through the splits.
    let mut extent: HashMap<&str, Expr> = HashMap::new();
    for (d, r) in st.roots.iter().enumerate() {
        extent.insert(r, extent_of(&region[d].0, &region[d].1));
    }
    for s in &st.splits {
        let e = extent[s.old.as_str()].clone();
        let n = i64c(s.factor);
        extent.insert(
            &s.outer,
            bin(
                BinOp::Div,
                bin(BinOp::Add, e, i64c(s.factor - 1)),
                n.clone(),
            ),
        );
        extent.insert(&s.inner, n);
    }
    let kind_of = |name: &str| st.dims.iter().find(|d| d.name == name).map(|d| d.kind);

    // A variable's value: a loop's own value, or the sum its split defines.
    // Roots are absolute coordinates, every other variable counts from 0.
    let mut guards = Vec::new();
    fn value(
        name: &str,
        st: &StageSchedule,
        region: &[(Expr, Expr)],
        extent: &HashMap<&str, Expr>,
        kind_of: &dyn Fn(&str) -> Option<LoopKind>,
        loop_var: &dyn Fn(&str) -> LoopVar,
        guards: &mut Vec<Expr>,
    ) -> Expr {
        if kind_of(name).is_some() {
            return Expr::new(ExprKind::Loop(loop_var(name)), Type::I64);
        }
        let s = st
            .splits
            .iter()
            .find(|s| s.old == name)
            .expect("a variable is a loop or was split");
        let outer = value(&s.outer, st, region, extent, kind_of, loop_var, guards);
        let inner = value(&s.inner, st, region, extent, kind_of, loop_var, guards);
        let e = extent[name].clone();
        let n = i64c(s.factor);
        let plain = bin(BinOp::Mul, outer, n.clone());
        let parallel_below = descendants(st, name).any(|v| kind_of(v) == Some(LoopKind::Parallel));
        let offset = if parallel_below {
            plain
        } else {
            // Shift the last iteration inwards when the extent allows it.
            Expr::select(
                bin(BinOp::Ge, e.clone(), n.clone()),
                bin(BinOp::Min, plain.clone(), bin(BinOp::Sub, e.clone(), n)),
                plain,
            )
        };
        let rel = bin(BinOp::Add, offset, inner);
        guards.push(bin(BinOp::Lt, rel.clone(), e));
        match st.roots.iter().position(|r| r == name) {
            Some(d) => bin(BinOp::Add, region[d].0.clone(), rel),
            None => rel,
        }
    }

    let args: Vec<Expr> = (0..func.dims())
        .map(|d| Expr::new(ExprKind::Var(d), Type::I32))
        .collect();
    let coords: Vec<Expr> = st
        .roots
        .iter()
        .map(|r| {
            simplify(&value(
                r,
                st,
                &region,
                &extent,
                &kind_of,
                &loop_var,
                &mut guards,
            ))
        })
        .collect();
    let mut body = Stmt::Store {
        func: f,
        update: None,
        args,
        value: func.pure.clone(),
    };
    if let Some(g) = guards.into_iter().reduce(|a, b| bin(BinOp::And, a, b)) {
        body = Stmt::If {
            cond: simplify(&g),
            body: Box::new(body),
        };
    }
    for (d, c) in coords.into_iter().enumerate().rev() {
        body = Stmt::LetCoord {
            coord: Coord::Pure(f, d),
            value: c,
            body: Box::new(body),
        };
    }
    for dim in &st.dims {
        let (min, max, slab) = match root_dim(&dim.name) {
            Some(d) => (
                region[d].0.clone(),
                region[d].1.clone(),
                Slab {
                    func: f,
                    dim: d,
                    start: region[d].0.clone(),
                    step: 1,
                },
            ),
            None => {
                let e = extent[dim.name.as_str()].clone();
                let parent = st.split_creating_outer(&dim.name);
                let slab = parent.and_then(|s| root_dim(&s.old)).map(|d| Slab {
                    func: f,
                    dim: d,
                    start: region[d].0.clone(),
                    step: parent.unwrap().factor,
                });
                (
                    i64c(0),
                    simplify(&bin(BinOp::Sub, e, i64c(1))),
                    slab.unwrap_or(Slab {
                        func: f,
                        dim: 0,
                        start: i64c(0),
                        step: 0,
                    }),
                )
            }
        };
        let parallel = dim.kind == LoopKind::Parallel && slab.step > 0;
        body = Stmt::For {
            var: loop_var(&dim.name),
            min,
            max,
            kind: if parallel || dim.kind != LoopKind::Parallel {
                dim.kind
            } else {
                LoopKind::Serial
            },
            slab: parallel.then_some(slab),
            body: Box::new(body),
        };
    }
    body
}

/// The variables a split tree produces below `name`.
fn descendants<'a>(st: &'a StageSchedule, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let mut out = vec![name];
    let mut i = 0;
    while i < out.len() {
        for s in &st.splits {
            if s.old == out[i] {
                out.push(&s.outer);
                out.push(&s.inner);
            }
        }
        i += 1;
    }
    out.into_iter()
}

fn update_stage(p: &Pipeline, b: &BoundsProgram, f: FuncId, k: usize) -> Stmt {
    let func = &p.funcs[f];
    let u = &func.updates[k];
    let loop_var = |name: String| LoopVar {
        func: f,
        stage: k + 1,
        name,
    };
    let rname = |r: usize| {
        let n = &u.rdom[r].name;
        if func.vars.contains(n) {
            format!("{n}_r")
        } else {
            n.clone()
        }
    };
    let mut body = Stmt::Store {
        func: f,
        update: Some(k),
        args: u.args.clone(),
        value: u.value.clone(),
    };
    for r in (0..u.rdom.len()).rev() {
        body = Stmt::LetCoord {
            coord: Coord::Reduction(f, k, r),
            value: Expr::new(ExprKind::Loop(loop_var(rname(r))), Type::I64),
            body: Box::new(body),
        };
    }
    let pure_dims: Vec<usize> = (0..func.dims())
        .filter(|&d| matches!(u.args[d].kind, ExprKind::Var(_)))
        .collect();
    for &d in pure_dims.iter().rev() {
        body = Stmt::LetCoord {
            coord: Coord::Pure(f, d),
            value: Expr::new(ExprKind::Loop(loop_var(func.vars[d].clone())), Type::I64),
            body: Box::new(body),
        };
    }
    // Reduction variables innermost (first rdom dimension innermost), then
    // the pure variables that appear on the left-hand side.
    for (r, dim) in u.rdom.iter().enumerate() {
        let lo = Expr::cast(Type::I64, dim.min.clone());
        let hi = bin(
            BinOp::Sub,
            bin(
                BinOp::Add,
                lo.clone(),
                Expr::cast(Type::I64, dim.extent.clone()),
            ),
            i64c(1),
        );
        body = Stmt::For {
            var: loop_var(rname(r)),
            min: simplify(&lo),
            max: simplify(&hi),
            kind: LoopKind::Serial,
            slab: None,
            body: Box::new(body),
        };
    }
    for &d in &pure_dims {
        let (lo, hi) = b.consumed[f][d];
        body = Stmt::For {
            var: loop_var(func.vars[d].clone()),
            min: Expr::sym(lo),
            max: Expr::sym(hi),
            kind: LoopKind::Serial,
            slab: None,
            body: Box::new(body),
        };
    }
    body
}
