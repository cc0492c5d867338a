//! Loop synthesis: the loop nests of every stage, following the schedule.
//!
//! Funcs computed at root get their whole realized region before their
//! consumers run. A func scheduled `compute_at(g, v)` is computed inside loop
//! `v` of `g`'s pure stage, over the region that one iteration of `v` needs:
//! interval analysis of `g`'s reads with the loops inside `v` ranging over
//! their bounds and the loops outside fixed, clipped to the func's global
//! region (so no input is read beyond what the entry checked). The region is
//! bound to fresh symbols at the top of `v`'s body, followed by an allocation
//! and the func's own loop nest (which may host further funcs).
//!
//! Each stage's loops follow its schedule: a split of a dimension of extent
//! `e` by `n` runs `ceil(e / n)` outer iterations; the last is shifted inwards
//! (recomputing a few points) when the stage is pure, `e >= n` and no loop of
//! that dimension runs in parallel; every store is guarded by its coordinate
//! lying inside the region otherwise. Updates run serially, reduction
//! variables innermost.
//!
//! **Guarantee:** every store lies in the region allocated for its func, and
//! the iterations of a parallel loop write disjoint slabs of one dimension.
//!
//! ```text
//! blur_x.compute_at(out, yo); out.split(y, yo, yi, 8)
//!   => for out.yo { let blur_x.min.y = ..; allocate blur_x { for blur_x.y { .. }
//!                   for out.yi { for out.x { out(x, y) = blur_x(..) } } } }
//! ```

mod sliding;
mod validate;

use sliding::{at_previous_step, slide_loop, window};
use validate::validate;

use crate::analysis::bounds::BoundsProgram;
use crate::analysis::interval::{visit_loads, Interval, Scope};
use crate::analysis::simplify::simplify;
use crate::hash::HashMap;
use crate::ir::*;
use crate::schedule::update::{update_vars, written_dim, UpdateVar};
use crate::schedule::{ComputeLevel, LoopKind, Schedule, StageSchedule};

/// Whether an output func is computed straight into the caller's buffer
/// (pure, and read by no other func) or into a buffer of its own and copied.
pub fn writes_output_directly(p: &Pipeline, f: FuncId) -> bool {
    p.funcs[f].updates.is_empty() && p.consumers(f).is_empty()
}

/// A schedule that cannot be honoured: the message and the directive's tokens.
pub struct ScheduleError {
    /// The `compute_at` directive at fault.
    pub tokens: Option<proc_macro2::TokenStream>,
    /// What is wrong and what to do.
    pub message: String,
}

/// The loop nest of the whole pipeline, and the names of the symbols it
/// binds beyond the global bounds program.
pub struct Synthesized {
    /// The statement tree.
    pub body: Stmt,
    /// Names of the local symbols, numbered from `b.syms.len()`.
    pub local_syms: Vec<String>,
}

/// Builds the loop nest of the whole pipeline.
pub fn synthesize(
    p: &Pipeline,
    b: &BoundsProgram,
    sched: &Schedule,
) -> Result<Synthesized, ScheduleError> {
    validate(p, sched)?;
    let mut l = Lowerer {
        p,
        b,
        sched,
        local_syms: Vec::new(),
        sliding: HashMap::default(),
        values: std::sync::Arc::new(crate::analysis::bounds::func_value_bounds(p)),
        live: p.live_funcs().into(),
    };
    let live = l.live.to_vec();
    let at_root: Vec<FuncId> = live
        .iter()
        .copied()
        .filter(|&f| !matches!(sched.funcs[f].compute, ComputeLevel::At { .. }))
        .collect();
    let mut stages = Vec::new();
    for &f in &at_root {
        let region = global_region(b, f);
        stages.extend(l.stages(f, &region));
    }
    for (k, &f) in p.outputs.iter().enumerate() {
        if !writes_output_directly(p, f) {
            stages.push(Stmt::CopyToOutput { func: f, output: k });
        }
    }
    let mut body = Stmt::Block(stages);
    for &f in at_root.iter().rev() {
        if !p.outputs.contains(&f) || !writes_output_directly(p, f) {
            body = Stmt::Allocate {
                func: f,
                region: global_region(b, f),
                fold: vec![None; p.funcs[f].dims()],
                body: Box::new(body),
            };
        }
    }
    Ok(Synthesized {
        body,
        local_syms: l.local_syms,
    })
}

fn global_region(b: &BoundsProgram, f: FuncId) -> Vec<(Expr, Expr)> {
    b.realized[f]
        .iter()
        .map(|&(lo, hi)| (Expr::sym(lo), Expr::sym(hi)))
        .collect()
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

/// One loop of a stage, before it wraps its body.
struct Loop {
    var: LoopVar,
    min: Expr,
    max: Expr,
    /// An upper bound of `max` that uses no other loop of the stage (for
    /// the interval analysis of what the loops inside a level need).
    bound: Expr,
    kind: LoopKind,
    slab: Option<Slab>,
}

struct Lowerer<'a> {
    p: &'a Pipeline,
    b: &'a BoundsProgram,
    sched: &'a Schedule,
    local_syms: Vec<String>,
    /// Funcs computed with a sliding window: the dimension that slides and
    /// the extent one iteration reads in it, when constant.
    sliding: HashMap<FuncId, (usize, Option<i128>)>,
    /// The value range of every func (for data-dependent coordinates).
    values: std::sync::Arc<Vec<Interval>>,
    /// `p.live_funcs()`, which every loop of every stage consults.
    live: std::sync::Arc<[FuncId]>,
}

impl Lowerer<'_> {
    fn new_sym(&mut self, name: String) -> SymId {
        self.local_syms.push(name);
        self.b.syms.len() + self.local_syms.len() - 1
    }

    /// The stages of `f` computed over `region`.
    fn stages(&mut self, f: FuncId, region: &[(Expr, Expr)]) -> Vec<Stmt> {
        (0..=self.p.funcs[f].updates.len())
            .map(|k| self.stage(f, k, region))
            .collect()
    }

    /// Stage `k` of `f` (0: the pure definition, else update `k - 1`) over
    /// `region`: the pure variables range over it, reduction variables over
    /// their domain.
    fn stage(&mut self, f: FuncId, k: usize, region: &[(Expr, Expr)]) -> Stmt {
        let p = self.p;
        let func = &p.funcs[f];
        let st = self.sched.funcs[f].stage(k).with_nested_splits_merged();
        let st = &*st;
        let loop_var = |name: &str| LoopVar {
            func: f,
            stage: k,
            name: name.into(),
        };
        let root_dim = |name: &str| st.roots.iter().position(|r| r == name);
        // What each root variable is: its range, the coordinate it binds and
        // the dimension of `f` it writes (for parallel slabs).
        struct Root {
            range: (Expr, Expr),
            coord: Coord,
            writes: Option<usize>,
        }
        let roots: Vec<Root> = match k {
            0 => (0..func.dims())
                .map(|d| Root {
                    range: region[d].clone(),
                    coord: Coord::Pure(f, d),
                    writes: Some(d),
                })
                .collect(),
            _ => {
                let u = &func.updates[k - 1];
                update_vars(p, f, k - 1)
                    .into_iter()
                    .map(|(_, v)| match v {
                        // The update's pure variables range over what the
                        // consumers need (not what the updates themselves
                        // widen the region by), as in the interpreter.
                        UpdateVar::Pure(d) => Root {
                            range: (
                                simplify(&bin(
                                    BinOp::Max,
                                    region[d].0.clone(),
                                    Expr::sym(self.b.consumed[f][d].0),
                                )),
                                simplify(&bin(
                                    BinOp::Min,
                                    region[d].1.clone(),
                                    Expr::sym(self.b.consumed[f][d].1),
                                )),
                            ),
                            coord: Coord::Pure(f, d),
                            writes: Some(d),
                        },
                        UpdateVar::Reduction(r) => {
                            let lo = simplify(&Expr::cast(Type::I64, u.rdom[r].min.clone()));
                            let n = Expr::cast(Type::I64, u.rdom[r].extent.clone());
                            let hi =
                                simplify(&bin(BinOp::Sub, bin(BinOp::Add, lo.clone(), n), i64c(1)));
                            Root {
                                range: (lo, hi),
                                coord: Coord::Reduction(f, k - 1, r),
                                writes: written_dim(u, v),
                            }
                        }
                    })
                    .collect()
            }
        };
        let ranges: Vec<(Expr, Expr)> = roots.iter().map(|r| r.range.clone()).collect();

        // Extents of every variable, roots first (bound to symbols at the top
        // of the stage), then through the splits.
        let mut extent: HashMap<&str, Expr> = HashMap::default();
        let mut extent_syms = Vec::new();
        for (i, r) in st.roots.iter().enumerate() {
            let label = match k {
                0 => func.vars[i].clone(),
                _ => format!("update{}.{}", k - 1, r.split('#').next().unwrap_or(r)),
            };
            let s = self.new_sym(format!("{}.extent.{label}", func.name));
            extent_syms.push((s, simplify(&extent_of(&ranges[i].0, &ranges[i].1))));
            extent.insert(r, Expr::sym(s));
        }
        for s in &st.splits {
            let e = extent[s.old.as_str()].clone();
            extent.insert(
                &s.outer,
                bin(
                    BinOp::Div,
                    bin(BinOp::Add, e, i64c(s.factor - 1)),
                    i64c(s.factor),
                ),
            );
            extent.insert(&s.inner, i64c(s.factor));
        }
        let kind_of = |name: &str| st.dims.iter().find(|d| d.name == name).map(|d| d.kind);
        let mut guards = Vec::new();
        let mut tails: HashMap<String, Tail> = HashMap::default();
        let split = Split {
            st,
            region: &ranges,
            shift: k == 0,
            extent: &extent,
            kind_of: &kind_of,
            loop_var: &loop_var,
        };
        let coords: Vec<Expr> = st
            .roots
            .iter()
            .map(|r| simplify(&value(r, &split, &mut guards, &mut tails)))
            .collect();

        let loops: Vec<Loop> = st
            .dims
            .iter()
            .map(|dim| {
                // No slabs of a dimension whose storage is folded (a
                // sliding window's): a slab is a range of coordinates, which
                // folding wraps around. A parallel loop over it runs serial.
                let folded =
                    |d: usize| matches!(self.sliding.get(&f), Some(&(s, Some(_))) if s == d);
                let slab = |i: usize, step: i64| {
                    roots[i].writes.filter(|&d| !folded(d)).map(|d| Slab {
                        func: f,
                        dim: d,
                        start: ranges[i].0.clone(),
                        step,
                    })
                };
                let (min, max, slab, bound) = match root_dim(&dim.name) {
                    Some(i) => (ranges[i].0.clone(), ranges[i].1.clone(), slab(i, 1), None),
                    None => {
                        let e = extent[dim.name.as_str()].clone();
                        let parent = st.split_creating_outer(&dim.name);
                        let slab =
                            parent.and_then(|s| root_dim(&s.old).and_then(|i| slab(i, s.factor)));
                        let e_static = e.clone();
                        let mut max = bin(BinOp::Sub, e, i64c(1));
                        // The inner loop of a split stops at the end of the
                        // region when its outer loop encloses it (the guard
                        // then never fails, and empty tails cost nothing).
                        if let Some(tail) = tails.get(&dim.name) {
                            let here = st.position(&dim.name);
                            let outside = tail.outside.iter().all(
                                |o| matches!((st.position(o), here), (Some(o), Some(i)) if o > i),
                            );
                            if outside {
                                let left = |offset: &Expr| {
                                    bin(
                                        BinOp::Sub,
                                        bin(BinOp::Sub, tail.extent.clone(), i64c(1)),
                                        offset.clone(),
                                    )
                                };
                                max = match &tail.offset.kind {
                                    // A shifted split: every iteration is whole
                                    // when the extent allows it (`select(e >=
                                    // n, n - 1, ..)`, which loop partitioning
                                    // reduces to `n - 1` in the steady state).
                                    ExprKind::Select(c, _, plain) => Expr::select(
                                        (**c).clone(),
                                        max.clone(),
                                        bin(BinOp::Min, max, left(&tail.before(plain))),
                                    ),
                                    _ => bin(BinOp::Min, max, left(&tail.before(&tail.offset))),
                                };
                            }
                        }
                        (
                            i64c(0),
                            simplify(&max),
                            slab,
                            Some(simplify(&bin(BinOp::Sub, e_static, i64c(1)))),
                        )
                    }
                };
                let parallel = dim.kind == LoopKind::Parallel && slab.is_some();
                Loop {
                    var: loop_var(&dim.name),
                    min,
                    bound: bound.unwrap_or_else(|| max.clone()),
                    max,
                    kind: if dim.kind == LoopKind::Parallel && !parallel {
                        LoopKind::Serial
                    } else {
                        dim.kind
                    },
                    slab: if parallel { slab } else { None },
                }
            })
            .collect();

        let mut body = match k {
            0 => Stmt::Store {
                func: f,
                update: None,
                args: (0..func.dims())
                    .map(|d| Expr::new(ExprKind::Var(d), Type::I32))
                    .collect(),
                value: func.pure.clone(),
            },
            _ => Stmt::Store {
                func: f,
                update: Some(k - 1),
                args: func.updates[k - 1].args.clone(),
                value: func.updates[k - 1].value.clone(),
            },
        };
        if let Some(g) = guards.into_iter().reduce(|a, b| bin(BinOp::And, a, b)) {
            body = Stmt::If {
                cond: simplify(&g),
                body: Box::new(body),
            };
        }
        for (root, c) in roots.iter().zip(&coords).rev() {
            body = Stmt::LetCoord {
                coord: root.coord,
                value: c.clone(),
                body: Box::new(body),
            };
        }
        for (i, lp) in loops.iter().enumerate() {
            // Funcs are computed and stored only at pure loops.
            let hosts = k == 0
                && self.live.iter().any(|&h| {
                    matches!(&self.sched.funcs[h].compute, ComputeLevel::At { func, var } if *func == f && **var == *lp.var.name)
                        || matches!(&self.sched.funcs[h].store, Some((g, w)) if *g == f && **w == *lp.var.name)
                });
            // A serial loop of one iteration (`split(x, xo, xi, 64)
            // .vectorize(xi, 32).unroll(xi, 2)` leaves `xi` one) is its
            // body at that iteration, which later passes see through.
            let once = matches!((lp.min.as_int(), lp.max.as_int()), (Some(a), Some(b)) if a == b)
                && matches!(lp.kind, LoopKind::Serial | LoopKind::Unrolled);
            if once && !hosts {
                let at = lp.min.clone();
                body = body.map_exprs(&mut |e| match e.uses_loop(&lp.var) {
                    true => simplify(&e.with_loop(&lp.var, &at)),
                    false => e.clone(),
                });
                continue;
            }
            // Funcs computed at this loop come first in its body.
            if hosts {
                body = self.host(f, &coords, &loops, i, body);
            }
            body = Stmt::For {
                var: lp.var.clone(),
                min: lp.min.clone(),
                max: lp.max.clone(),
                kind: lp.kind,
                slab: lp.slab.clone(),
                body: Box::new(body),
            };
        }
        body = let_syms(extent_syms, body);
        body
    }

    /// The region of each of `funcs` that the loops inside one of `f`'s loops
    /// need (`inner`: those loops and their ranges; every other loop is
    /// fixed), bound to fresh symbols: `(lets, regions, boxes)`. Consumers
    /// are `f` and the other funcs of `funcs` (computed at the same loop).
    ///
    /// Each func's demand is kept as a few boxes in terms of the loops (one
    /// per read, merged where they are translates of each other, as the taps
    /// of a stencil are), so that sliding windows and folds see how the
    /// region moves with a loop even through funcs computed in between. The
    /// region is their hull, clipped to the func's global region.
    #[allow(clippy::type_complexity)]
    fn regions(
        &mut self,
        f: FuncId,
        coords: &[Expr],
        inner: &[(LoopVar, Interval)],
        funcs: &[FuncId],
        label: &str,
    ) -> (
        Vec<(SymId, Expr)>,
        HashMap<FuncId, Vec<(SymId, SymId)>>,
        HashMap<FuncId, Vec<Region>>,
    ) {
        let p = self.p;
        let values = std::sync::Arc::clone(&self.values);
        let value_of = |g: FuncId| values[g].clone();
        let loop_scope = Scope {
            loops: inner.to_vec(),
            ..Scope::new(vec![], vec![], &value_of)
        };
        let consumer: Region = coords
            .iter()
            .map(|c| {
                let b = crate::analysis::interval::bounds_of(c, &loop_scope);
                (
                    b.min.expect("loops are bounded"),
                    b.max.expect("loops are bounded"),
                )
            })
            .collect();
        let mut regions: HashMap<FuncId, Vec<(SymId, SymId)>> = HashMap::default();
        let mut boxes: HashMap<FuncId, Vec<Region>> = HashMap::default();
        let mut lets: Vec<(SymId, Expr)> = Vec::new();
        for &h in funcs.iter().rev() {
            let dims = p.funcs[h].dims();
            let mut demands: Vec<Region> = Vec::new();
            let mut collect = |reader: FuncId, vars: &Region| {
                let vars: Vec<Interval> = vars
                    .iter()
                    .map(|(lo, hi)| Interval::new(lo.clone(), hi.clone()))
                    .collect();
                // Its pure definition and its updates (pure variables over
                // the same region, reduction variables over their domain).
                let rfunc = &p.funcs[reader];
                let mut reads: Vec<(&Expr, Vec<Interval>)> = vec![(&rfunc.pure, vec![])];
                for u in &rfunc.updates {
                    let rvars = crate::analysis::bounds::rdom_intervals(u);
                    reads.extend(u.args.iter().chain([&u.value]).map(|e| (e, rvars.clone())));
                }
                for (e, rvars) in reads {
                    let scope = Scope::new(vars.clone(), rvars, &value_of);
                    visit_loads(e, &scope, &mut |n| {
                        if let ExprKind::Load {
                            source: Source::Func(g),
                            args,
                            ..
                        } = &n.kind
                        {
                            if *g == h {
                                // No emptiness guard: the result is clipped to the
                                // global region, and an inverted one computes nothing.
                                demands.push(
                                    args.iter()
                                        .map(|a| {
                                            let b = crate::analysis::interval::bounds_of(a, &scope);
                                            // (`bounds_of` simplifies them.)
                                            (
                                                b.min.expect("checked: bounded"),
                                                b.max.expect("checked: bounded"),
                                            )
                                        })
                                        .collect(),
                                );
                            }
                        }
                    });
                }
            };
            collect(f, &consumer);
            // Only the funcs of this level that read `h` add to its region
            // (the analysis of each read is what costs), in a fixed order
            // (the order of the bounds' terms, so of the generated code).
            for &g in funcs.iter().rev().take_while(|&&g| g != h) {
                if !p.callees(g).contains(&h) {
                    continue;
                }
                for b in &boxes[&g] {
                    collect(g, b);
                }
            }
            let global = &self.b.realized[h];
            // A dimension an update writes at computed coordinates is
            // realized whole: the update may touch any of it.
            let whole: Vec<bool> = (0..dims)
                .map(|d| {
                    p.funcs[h]
                        .updates
                        .iter()
                        .any(|u| !matches!(u.args[d].kind, ExprKind::Var(_)))
                })
                .collect();
            for b in &mut demands {
                for d in (0..dims).filter(|&d| whole[d]) {
                    b[d] = (Expr::sym(global[d].0), Expr::sym(global[d].1));
                }
            }
            let merged = merge_translates(demands);
            let mut syms = Vec::new();
            for d in 0..dims {
                let lo = merged
                    .iter()
                    .map(|b| b[d].0.clone())
                    .reduce(|a, b| bin(BinOp::Min, a, b))
                    .unwrap_or(Expr::i64(i64::MAX as i128));
                let hi = merged
                    .iter()
                    .map(|b| b[d].1.clone())
                    .reduce(|a, b| bin(BinOp::Max, a, b))
                    .unwrap_or(Expr::i64(i64::MIN as i128));
                // Never more than the global region, which the entry checked.
                let lo = simplify(&bin(BinOp::Max, lo, Expr::sym(global[d].0)));
                let hi = simplify(&bin(BinOp::Min, hi, Expr::sym(global[d].1)));
                let var = &p.funcs[h].vars[d];
                let (slo, shi) = (
                    self.new_sym(format!("{}.{label}.min.{var}", p.funcs[h].name)),
                    self.new_sym(format!("{}.{label}.max.{var}", p.funcs[h].name)),
                );
                lets.push((slo, lo));
                lets.push((shi, hi));
                syms.push((slo, shi));
            }
            regions.insert(h, syms);
            boxes.insert(h, merged);
        }
        (lets, regions, boxes)
    }

    /// Wraps `body`, the inside of loop `loops[i]` of `f`, with what the
    /// schedule puts there: the computation of the funcs computed at this
    /// loop, and the storage of those stored here.
    fn host(
        &mut self,
        f: FuncId,
        coords: &[Expr],
        loops: &[Loop],
        i: usize,
        mut body: Stmt,
    ) -> Stmt {
        let p = self.p;
        let here: &str = &loops[i].var.name;
        let live = self.live.clone();
        let computed: Vec<FuncId> = live
            .iter()
            .copied()
            .filter(|&h| matches!(&self.sched.funcs[h].compute, ComputeLevel::At { func, var } if *func == f && var == here))
            .collect();
        let stored_outside =
            |h: FuncId| matches!(&self.sched.funcs[h].store, Some((g, w)) if *g == f && w != here);
        let stored: Vec<FuncId> = live
            .iter()
            .copied()
            .filter(|&h| matches!(&self.sched.funcs[h].store, Some((g, w)) if *g == f && w == here))
            .filter(|&h| !computed.contains(&h))
            .collect();
        let inner: Vec<(LoopVar, Interval)> = loops[..i]
            .iter()
            .map(|l| (l.var.clone(), Interval::new(l.min.clone(), l.bound.clone())))
            .collect();
        if !computed.is_empty() {
            let (lets, regions, boxes) = self.regions(f, coords, &inner, &computed, "iteration");
            let mut lets = lets;
            // Sliding window: when a func is stored outside this loop and its
            // region moves monotonically with a serial loop between the two,
            // each iteration computes only what earlier iterations have not.
            let mut compute_region: HashMap<FuncId, Vec<(Expr, Expr)>> = HashMap::default();
            for &h in &computed {
                let mut region: Vec<(Expr, Expr)> = regions[&h]
                    .iter()
                    .map(|&(lo, hi)| (Expr::sym(lo), Expr::sym(hi)))
                    .collect();
                // (Not for a func with updates: they rerun over the whole
                // region each iteration.)
                let store = self.sched.funcs[h].store.as_ref();
                let slide = if p.funcs[h].updates.is_empty() {
                    slide_loop(loops, i, store, f, &boxes[&h])
                } else {
                    None
                };
                if let Some((k, d)) = slide {
                    let this = Expr::new(ExprKind::Loop(loops[k].var.clone()), Type::I64);
                    // What the previous iteration computed up to.
                    let hi_sym = regions[&h][d].1;
                    let hi = &lets
                        .iter()
                        .find(|(s, _)| *s == hi_sym)
                        .expect("bound above")
                        .1;
                    let previous = at_previous_step(hi, &loops[k].var);
                    let lo = Expr::select(
                        bin(BinOp::Eq, this.clone(), loops[k].min.clone()),
                        Expr::sym(regions[&h][d].0),
                        bin(
                            BinOp::Max,
                            Expr::sym(regions[&h][d].0),
                            bin(BinOp::Add, previous, i64c(1)),
                        ),
                    );
                    let s = self.new_sym(format!(
                        "{}.slide.min.{}",
                        p.funcs[h].name, p.funcs[h].vars[d]
                    ));
                    lets.push((s, simplify(&lo)));
                    region[d].0 = Expr::sym(s);
                    self.sliding.insert(h, (d, window(&boxes[&h], d)));
                }
                compute_region.insert(h, region);
            }
            let mut stages = Vec::new();
            for &h in &computed {
                stages.extend(self.stages(h, &compute_region[&h]));
            }
            stages.push(body);
            body = Stmt::Block(stages);
            for &h in computed.iter().rev() {
                if !stored_outside(h) {
                    body = Stmt::Allocate {
                        func: h,
                        region: regions[&h]
                            .iter()
                            .map(|&(lo, hi)| (Expr::sym(lo), Expr::sym(hi)))
                            .collect(),
                        fold: vec![None; p.funcs[h].dims()],
                        body: Box::new(body),
                    };
                }
            }
            // Regions were computed consumers first; the sliding minima last.
            body = let_syms(lets, body);
        }
        if !stored.is_empty() {
            // Storage for every iteration of the loops inside, folded along a
            // sliding dimension to the power of two that covers one window.
            // The funcs computed at the loops inside read the stored ones
            // too: their regions over those loops are part of the demand.
            let mut readers: Vec<FuncId> = live
                .iter()
                .copied()
                .filter(|&h| {
                    stored.contains(&h)
                        || matches!(&self.sched.funcs[h].compute, ComputeLevel::At { func, var }
                            if *func == f && loops[..i].iter().any(|l| *l.var.name == **var))
                })
                .collect();
            readers.sort();
            let (lets, regions, _) = self.regions(f, coords, &inner, &readers, "stored");
            for &h in stored.iter().rev() {
                let mut region: Vec<(Expr, Expr)> = regions[&h]
                    .iter()
                    .map(|&(lo, hi)| (Expr::sym(lo), Expr::sym(hi)))
                    .collect();
                let mut fold = vec![None; p.funcs[h].dims()];
                if let Some(&(d, Some(window))) = self.sliding.get(&h) {
                    let factor = (window as u64).next_power_of_two() as i64;
                    fold[d] = Some(factor);
                    region[d] = (i64c(0), i64c(factor - 1));
                }
                body = Stmt::Allocate {
                    func: h,
                    region,
                    fold,
                    body: Box::new(body),
                };
            }
            body = let_syms(lets, body);
        }
        body
    }
}

/// `body` inside bindings of `lets`, the first outermost.
fn let_syms(lets: Vec<(SymId, Expr)>, body: Stmt) -> Stmt {
    lets.into_iter()
        .rev()
        .fold(body, |body, (sym, value)| Stmt::LetSym {
            sym,
            value,
            body: Box::new(body),
        })
}

/// A region: the bounds of each dimension.
type Region = Vec<(Expr, Expr)>;

/// Merges regions that are translates of each other (every bound differs
/// from the other's by a constant) into their hull, which keeps the form of
/// one of them: the taps of a stencil become one region.
fn merge_translates(regions: Vec<Region>) -> Vec<Region> {
    let mut out: Vec<Region> = Vec::new();
    'next: for r in regions {
        for m in &mut out {
            let diffs: Option<Vec<(i128, i128)>> = m
                .iter()
                .zip(&r)
                .map(|(a, b)| {
                    Some((
                        linear_difference(&b.0, &a.0)?,
                        linear_difference(&b.1, &a.1)?,
                    ))
                })
                .collect();
            if let Some(diffs) = diffs {
                for (d, (dlo, dhi)) in diffs.into_iter().enumerate() {
                    if dlo < 0 {
                        m[d].0 = r[d].0.clone();
                    }
                    if dhi > 0 {
                        m[d].1 = r[d].1.clone();
                    }
                }
                continue 'next;
            }
        }
        out.push(r);
    }
    out
}

/// `a - b` when it is a constant: both are sums of the same terms with
/// constant coefficients, up to a constant.
pub(crate) fn linear_difference(a: &Expr, b: &Expr) -> Option<i128> {
    fn terms<'e>(e: &'e Expr, scale: i128, out: &mut Vec<(&'e Expr, i128)>, c: &mut i128) {
        match &e.kind {
            ExprKind::Int(v) => *c += scale * v,
            ExprKind::Binary(BinOp::Add, x, y) => {
                terms(x, scale, out, c);
                terms(y, scale, out, c);
            }
            ExprKind::Binary(BinOp::Sub, x, y) => {
                terms(x, scale, out, c);
                terms(y, -scale, out, c);
            }
            ExprKind::Binary(BinOp::Mul, x, y) if y.as_int().is_some() => {
                terms(x, scale * y.as_int().unwrap(), out, c)
            }
            ExprKind::Binary(BinOp::Mul, x, y) if x.as_int().is_some() => {
                terms(y, scale * x.as_int().unwrap(), out, c)
            }
            ExprKind::Cast(x) if e.ty.bits() >= x.ty.bits() && x.ty.is_int() => {
                terms(x, scale, out, c)
            }
            _ => match out.iter_mut().find(|(k, _)| *k == e) {
                Some((_, w)) => *w += scale,
                None => out.push((e, scale)),
            },
        }
    }
    let (mut ts, mut c) = (Vec::new(), 0i128);
    terms(a, 1, &mut ts, &mut c);
    terms(b, -1, &mut ts, &mut c);
    ts.iter().all(|(_, w)| *w == 0).then_some(c)
}

/// Where the last loop of a split's inner part starts (a split's inner
/// loop, or the innermost loop of a block of merged nested splits), so
/// that it stops at the end of the region instead of being guarded.
struct Tail {
    /// The split's offset: `select(e >= n, min(xo * n, e - n), xo * n)` for
    /// a shifted split.
    offset: Expr,
    /// The block's loops outside this one, as `x_u * 32` (none for a
    /// split's inner loop).
    within: Vec<Expr>,
    /// The extent of the split variable.
    extent: Expr,
    /// The loops `offset` and `within` name, which must enclose this one.
    outside: Vec<String>,
}

impl Tail {
    /// Where this loop starts given the split's offset.
    fn before(&self, offset: &Expr) -> Expr {
        self.within
            .iter()
            .fold(offset.clone(), |acc, w| bin(BinOp::Add, acc, w.clone()))
    }
}

/// A variable's value: a loop's own value, or the sum its split defines.
/// Roots are absolute coordinates, every other variable counts from 0.
/// What the value of a stage's variables depends on.
struct Split<'a> {
    st: &'a StageSchedule,
    /// The range of each root variable.
    region: &'a [(Expr, Expr)],
    /// Whether the last iteration of a split may shift inwards (recomputing
    /// points): only pure stages may compute a point twice.
    shift: bool,
    extent: &'a HashMap<&'a str, Expr>,
    kind_of: &'a dyn Fn(&str) -> Option<LoopKind>,
    loop_var: &'a dyn Fn(&str) -> LoopVar,
}

/// The value of variable `name` (see [`Split`]); records the guard of each
/// split and, for the loop of a split's last lanes, its [`Tail`].
fn value(
    name: &str,
    sp: &Split,
    guards: &mut Vec<Expr>,
    tails: &mut HashMap<String, Tail>,
) -> Expr {
    let Split {
        st,
        region,
        shift,
        extent,
        kind_of,
        loop_var,
    } = *sp;
    if kind_of(name).is_some() {
        return Expr::new(ExprKind::Loop(loop_var(name)), Type::I64);
    }
    let s = st
        .splits
        .iter()
        .find(|s| s.old == name)
        .expect("a variable is a loop or was split");
    let outer = value(&s.outer, sp, guards, tails);
    let inner = value(&s.inner, sp, guards, tails);
    let e = extent[name].clone();
    let n = i64c(s.factor);
    let plain = bin(BinOp::Mul, outer, n.clone());
    let exact = divides(s, extent);
    let parallel_below =
        descendants(st, name).any(|v| kind_of(v).is_some_and(LoopKind::is_concurrent));
    let offset = if exact || parallel_below || !shift {
        plain
    } else {
        // Shift the last iteration inwards when the extent allows it.
        Expr::select(
            bin(BinOp::Ge, e.clone(), n.clone()),
            bin(BinOp::Min, plain.clone(), bin(BinOp::Sub, e.clone(), n)),
            plain,
        )
    };
    if !exact {
        // The loop of the last lanes: the inner one, or, when the last
        // iteration shifts inwards, through the exact splits of the inner
        // part by unrolled loops, their innermost (which runs whole
        // vectors once the extent allows the shift).
        let mut last = &s.inner;
        let mut within = Vec::new();
        let mut outside = vec![s.outer.clone()];
        let shifted = matches!(offset.kind, ExprKind::Select(..));
        while let Some(b) = st
            .splits
            .iter()
            .find(|b| shifted && b.old == *last && divides(b, extent))
        {
            // Through unrolled loops and loops of one iteration only: loop
            // partitioning finds where a serial loop's guard holds itself.
            let once = simplify(&extent[b.outer.as_str()]).as_int() == Some(1);
            if !(kind_of(&b.outer) == Some(LoopKind::Unrolled)
                || once && kind_of(&b.outer).is_some())
            {
                break;
            }
            within.push(bin(
                BinOp::Mul,
                Expr::new(ExprKind::Loop(loop_var(&b.outer)), Type::I64),
                i64c(b.factor),
            ));
            outside.push(b.outer.clone());
            last = &b.inner;
        }
        if kind_of(last).is_some() {
            tails.insert(
                last.clone(),
                Tail {
                    offset: offset.clone(),
                    within,
                    extent: e.clone(),
                    outside,
                },
            );
        }
    }
    let rel = bin(BinOp::Add, offset, inner);
    if !exact {
        guards.push(bin(BinOp::Lt, rel.clone(), e));
    }
    match st.roots.iter().position(|r| r == name) {
        Some(d) => bin(BinOp::Add, region[d].0.clone(), rel),
        None => rel,
    }
}

/// Whether split `s`, one of merged nested splits, cuts a constant extent
/// into whole pieces: then it has no tail and needs no guard. (A user's
/// split of a constant extent keeps its shift and guard, which loop
/// partitioning resolves.)
fn divides(s: &crate::schedule::Split, extent: &HashMap<&str, Expr>) -> bool {
    StageSchedule::is_merged(s)
        && simplify(&extent[s.old.as_str()])
            .as_int()
            .is_some_and(|c| c % i128::from(s.factor) == 0)
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
