//! A thread's vector lanes: a `vectorize`d loop of a constant count of
//! lanes around one store. Every lane's value is computed into registers
//! before the stores, as Halide's vector lanes are. The loads that lanes
//! share (a stencil's neighbours, the channels of interleaved pixels) are
//! read once, as a window of elements; and wherever a window's or the
//! store's addresses turn out contiguous and aligned at run time (an
//! image's interior, rows of a dense buffer), they are read and written
//! in accesses of 4, 8 or 16 bytes, one where each element took one: more
//! bytes in flight a thread, which a memory-bound kernel needs to
//! approach the device's bandwidth (not yet measured on a GPU). Elsewhere (an edge where a clamp repeats a coordinate, odd
//! strides) the same elements are read one by one.

use super::kernel::residual;
use super::*;
use crate::analysis::lanes::visit_evaluated;
use crate::lower::loops::linear_difference;

/// The most bytes one access moves (a `uint4`).
const ACCESS_BYTES: i128 = 16;
/// The most elements, and bytes, a window holds in a thread's registers.
const MAX_WINDOW: i128 = 64;
const MAX_WINDOW_BYTES: i128 = 256;

/// A lane loop's body: bindings around one store, under a guard or not.
struct Body<'s> {
    /// The lanes' loop and its last lane.
    var: &'s LoopVar,
    last: i128,
    bindings: Vec<&'s Stmt>,
    guard: Option<&'s Expr>,
    func: FuncId,
    update: Option<usize>,
    args: &'s [Expr],
    value: &'s Expr,
}

fn body_of<'s>(s: &'s Stmt, var: &'s LoopVar, last: i128) -> Option<Body<'s>> {
    let mut bindings = Vec::new();
    let mut s = s;
    while let Stmt::LetCoord { body, .. } | Stmt::LetSym { body, .. } = s {
        bindings.push(s);
        s = body;
    }
    let (guard, store) = match s {
        Stmt::If { cond, body } => (Some(cond), &**body),
        other => (None, other),
    };
    let Stmt::Store {
        func,
        update,
        args,
        value,
    } = store
    else {
        return None;
    };
    Some(Body {
        var,
        last,
        bindings,
        guard,
        func: *func,
        update: *update,
        args,
        value,
    })
}

impl Body<'_> {
    /// The lanes' loop variable in C++.
    fn v(&self) -> String {
        names::loop_var(self.var)
    }

    /// `e` with the coordinates and symbols the bindings give in terms of
    /// loops.
    fn resolved(&self, e: &Expr) -> Expr {
        e.rewrite(&mut |n| {
            let coord = match n.kind {
                ExprKind::Var(d) => Some(Coord::Pure(self.func, d)),
                ExprKind::RVar(r) => self.update.map(|u| Coord::Reduction(self.func, u, r)),
                _ => None,
            };
            let bound = self.bindings.iter().find_map(|b| match (b, &n.kind) {
                (
                    Stmt::LetCoord {
                        coord: c, value, ..
                    },
                    _,
                ) if Some(*c) == coord => Some(value),
                (Stmt::LetSym { sym, value, .. }, ExprKind::Sym(s)) if sym == s => Some(value),
                _ => None,
            });
            match bound {
                Some(value) => self.resolved(value),
                None => n,
            }
        })
    }

    /// How much `e` grows from one lane to the next, where that is a
    /// constant.
    fn step(&self, e: &Expr) -> Option<i128> {
        let at = self.resolved(e);
        let next = at.with_loop(
            self.var,
            &Expr::binary(
                BinOp::Add,
                Expr::new(ExprKind::Loop(self.var.clone()), Type::I64),
                Expr::i64(1),
            ),
        );
        linear_difference(&next, &at)
    }
}

/// Loads of one source that the lanes share: dimension 0 at `inner + c`
/// (through the same clamp, if any) for a few constants `c`, growing by
/// `step` a lane, the other dimensions the same in every lane. Element `j`
/// is the point at `inner + lo + j` of the first lane.
struct Window {
    /// The first load found: its source, site and other dimensions.
    load: Expr,
    /// Dimension 0's clamp (`clamp_edge`, or a constant boundary's
    /// guarded clamp), which maps neighbours to neighbours or to the same
    /// point: contiguous addresses then mean unclamped ones.
    clamp: Option<(BoundaryMode, Expr, Expr)>,
    /// Dimension 0 of `load` inside its clamp.
    inner: Expr,
    step: i128,
    /// Each load and its `c`.
    members: Vec<(Expr, i128)>,
    lo: i128,
    /// Elements.
    len: i128,
}

/// Dimension 0 of a load: inside its clamp, and the clamp.
fn split_clamp(arg: &Expr) -> (Option<(BoundaryMode, Expr, Expr)>, &Expr) {
    match &arg.kind {
        ExprKind::Boundary {
            mode: mode @ (BoundaryMode::ClampEdge | BoundaryMode::GuardedClamp),
            coord,
            min,
            extent,
        } => (Some((*mode, (**min).clone(), (**extent).clone())), coord),
        _ => (None, arg),
    }
}

/// The windows of the loads of `body`'s value that every lane evaluates
/// (loads that fit none are left as they are).
fn windows(body: &Body) -> Vec<Window> {
    let mut found: Vec<Window> = Vec::new();
    visit_evaluated(body.value, true, &mut |n| {
        let ExprKind::Load { args, .. } = &n.kind else {
            return;
        };
        // A `let`'s variable may differ by lane in ways the bindings do
        // not say: such loads are left as they are.
        let bound_by_let = |a: &Expr| a.any(&mut |x| matches!(x.kind, ExprKind::LetVar(_)));
        if n.ty == Type::Bool || args.is_empty() || args.iter().any(bound_by_let) {
            return;
        }
        let (clamp, inner) = split_clamp(&args[0]);
        let Some(step) = body.step(inner).filter(|s| (1..=4).contains(s)) else {
            return;
        };
        if args[1..].iter().any(|a| body.step(a) != Some(0)) {
            return;
        }
        let same = |w: &Window| {
            let ExprKind::Load {
                source: ws,
                args: wargs,
                ..
            } = &w.load.kind
            else {
                unreachable!("a window's load")
            };
            let ExprKind::Load { source, .. } = &n.kind else {
                unreachable!("a load")
            };
            if ws != source || w.step != step || w.clamp != clamp || wargs[1..] != args[1..] {
                return None;
            }
            linear_difference(&body.resolved(inner), &body.resolved(&w.inner))
        };
        match found.iter_mut().find_map(|w| same(w).map(|c| (c, w))) {
            Some((c, w)) => {
                if !w.members.iter().any(|(m, _)| m == n) {
                    w.members.push((n.clone(), c));
                }
            }
            None => found.push(Window {
                load: n.clone(),
                clamp,
                inner: inner.clone(),
                step,
                members: vec![(n.clone(), 0)],
                lo: 0,
                len: 0,
            }),
        }
    });
    for w in &mut found {
        let lo = w.members.iter().map(|m| m.1).min().unwrap_or(0);
        let hi = w.members.iter().map(|m| m.1).max().unwrap_or(0);
        w.lo = lo;
        w.len = w.step * body.last + hi - lo + 1;
    }
    found.retain(|w| w.len <= MAX_WINDOW && w.len * elem_bytes(w.load.ty) <= MAX_WINDOW_BYTES);
    found
}

fn elem_bytes(t: Type) -> i128 {
    (t.bits().max(8) / 8) as i128
}

/// The elements of one access of a `t` for `n` of them: the most, a power
/// of two, of at least 4 and at most 16 bytes; `None` if 4 bytes are more.
fn access_elems(t: Type, n: i128) -> Option<i128> {
    let size = elem_bytes(t);
    let mut e = ACCESS_BYTES / size;
    while e > n {
        e /= 2;
    }
    (e >= 2 && e * size >= 4).then_some(e)
}

impl Program<'_> {
    /// Opens `body`'s bindings for lane `lane` (a C++ constant, or `None`:
    /// the unrolled loop over all lanes), then `inner`'s code, then closes
    /// them.
    fn in_lane(
        &mut self,
        body: &Body,
        lane: Option<&str>,
        out: &mut String,
        depth: usize,
        inner: impl FnOnce(&mut Self, &mut String, &str),
    ) {
        let pad = "  ".repeat(depth);
        let (v, last) = (body.v(), body.last);
        match lane {
            Some(l) => {
                let _ = writeln!(out, "{pad}{{ const I {v} = {l};");
            }
            None => {
                let _ = writeln!(
                    out,
                    "{pad}#pragma unroll\n{pad}for (I {v} = 0; {v} <= {last}; {v}++) {{"
                );
            }
        }
        let mut d = depth + 1;
        for b in &body.bindings {
            self.bind(b);
            let (open, _) = self.scope(b).expect("a binding");
            let _ = writeln!(out, "{}{open}", "  ".repeat(d));
            d += 1;
        }
        inner(self, out, &"  ".repeat(d));
        for _ in &body.bindings {
            d -= 1;
            let _ = writeln!(out, "{}}}", "  ".repeat(d));
        }
        let _ = writeln!(out, "{pad}}}");
    }

    /// A vectorized loop `s` of lanes from 0 to a constant, around
    /// bindings and one store: its lanes at once ([`Program::lanes_at_once`])
    /// where their loads may run in every lane, all guarded or all
    /// unguarded; else (loads only valid under the guard) at once where
    /// every lane passes the guard, lane by lane elsewhere. False (nothing
    /// written) for another loop.
    pub(super) fn vector_lanes(
        &mut self,
        s: &Stmt,
        out: &mut String,
        depth: usize,
    ) -> Result<bool, Unsupported> {
        let Stmt::For {
            var,
            min,
            max,
            body,
            ..
        } = s
        else {
            return Ok(false);
        };
        let Some(last) = self.lanes_last(min, max) else {
            return Ok(false);
        };
        let Some(b) = body_of(body, var, last) else {
            return Ok(false);
        };
        let pad = "  ".repeat(depth);
        let speculate = in_range_anywhere(b.value) && b.guard.is_none_or(in_range_anywhere);
        let Some(guard) = b.guard.and_then(|g| residual(g, &self.thread_bounds)) else {
            self.lanes_at_once(&b, None, out, depth);
            return Ok(true);
        };
        // Whether every lane passes the guard.
        let _ = writeln!(out, "{pad}{{ bool __all = true;");
        self.in_lane(&b, None, out, depth + 1, |p, out, ipad| {
            let g = p.exprs(Some((b.func, b.update))).expr(&guard);
            let _ = writeln!(out, "{ipad}__all = __all && ({g});");
        });
        if speculate {
            self.lanes_at_once(&b, Some(&guard), out, depth + 1);
        } else {
            let _ = writeln!(out, "{pad}if (__all) {{");
            self.lanes_at_once(&b, None, out, depth + 1);
            let _ = writeln!(out, "{pad}}} else {{");
            self.serial_loop(s, out, depth + 1)?;
            let _ = writeln!(out, "{pad}}}");
        }
        let _ = writeln!(out, "{pad}}}");
        Ok(true)
    }

    /// Every lane's value into `__lane`, its shared loads through windows,
    /// then the stores: at once where contiguous and aligned (and, with a
    /// `guard` that some lanes may fail, where `__all` says none does),
    /// else lane by lane, each under `guard`.
    fn lanes_at_once(&mut self, b: &Body, guard: Option<&Expr>, out: &mut String, depth: usize) {
        let pad = "  ".repeat(depth);
        let (v, lanes) = (&b.v(), b.last + 1);
        let ty = self.p().funcs[b.func].ty;
        let c_ty = buffer_type(ty);
        let windows = windows(b);
        let _ = writeln!(out, "{pad}{{ {c_ty} __lane[{lanes}];");
        for (k, w) in windows.iter().enumerate() {
            let _ = writeln!(out, "{pad}  {} __w{k}[{}];", buffer_type(w.load.ty), w.len);
        }
        if !windows.is_empty() {
            self.in_lane(b, Some("0"), out, depth + 1, |p, out, ipad| {
                for (k, w) in windows.iter().enumerate() {
                    p.fill_window(b, w, k, out, ipad);
                }
            });
        }
        let replaced: Vec<(Expr, String)> = windows
            .iter()
            .enumerate()
            .flat_map(|(k, w)| {
                w.members.iter().map(move |(m, c)| {
                    (
                        m.clone(),
                        format!("__w{k}[{} * {v} + {}]", w.step, c - w.lo),
                    )
                })
            })
            .collect();
        self.in_lane(b, None, out, depth + 1, |p, out, ipad| {
            let e = Exprs {
                loads: &replaced,
                ..p.exprs(Some((b.func, b.update)))
            };
            let mut x = e.expr(b.value);
            if ty == Type::Bool {
                x = format!("(uint8_t)({x})");
            }
            let _ = writeln!(out, "{ipad}__lane[{v}] = {x};");
        });
        self.store_lanes(b, guard, out, depth + 1);
        let _ = writeln!(out, "{pad}}}");
    }

    /// Reads window `w` (`__w{k}`) at the first lane: each run of
    /// elements that one access covers at an aligned point of the store
    /// (or of the first lane's load) at once where its addresses are
    /// contiguous and aligned, the rest one by one.
    fn fill_window(&self, b: &Body, w: &Window, k: usize, out: &mut String, pad: &str) {
        let ExprKind::Load { source, args, site } = &w.load.kind else {
            unreachable!("a window's load")
        };
        let e = self.exprs(Some((b.func, b.update)));
        // Element j's load.
        let load_at = |j: i128| -> Expr {
            let shift = w.lo + j;
            let inner = match shift {
                0 => w.inner.clone(),
                _ => Expr::binary(BinOp::Add, w.inner.clone(), Expr::i32(shift)),
            };
            let arg0 = match &w.clamp {
                Some((mode, min, extent)) => Expr::new(
                    ExprKind::Boundary {
                        mode: *mode,
                        coord: std::sync::Arc::new(inner),
                        min: std::sync::Arc::new(min.clone()),
                        extent: std::sync::Arc::new(extent.clone()),
                    },
                    Type::I32,
                ),
                None => inner,
            };
            let mut a = args.clone();
            a[0] = arg0;
            Expr::new(
                ExprKind::Load {
                    source: *source,
                    args: a,
                    site: *site,
                },
                w.load.ty,
            )
        };
        let offset_of = |x: &Expr| match &x.kind {
            ExprKind::Load { source, args, .. } => e.offset(*source, args),
            _ => unreachable!("a load"),
        };
        let mut used = vec![false; w.len as usize];
        for (_, c) in &w.members {
            for l in 0..=b.last {
                used[(w.step * l + c - w.lo) as usize] = true;
            }
        }
        let mut done = vec![false; w.len as usize];
        if let Some(n) = access_elems(w.load.ty, w.len) {
            // Element j is aligned where the store's first point is and
            // `base + j` is a multiple of `n`; with no store to align to,
            // where the first lane's load is.
            let store_dim0 = b.args.first().map(|a| b.resolved(a));
            let base = store_dim0
                .and_then(|s| linear_difference(&b.resolved(&w.inner), &s))
                .unwrap_or(0)
                + w.lo;
            let mut j = (-base).rem_euclid(n);
            let (ptr, read) = match source {
                Source::Input(i) => (format!("__in{i}"), "ldg_vec"),
                Source::Func(g) => (format!("__f{g}"), "ld_vec"),
            };
            let c_ty = buffer_type(w.load.ty);
            while j + n <= w.len {
                let run = j as usize..(j + n) as usize;
                if used[run.clone()].iter().all(|&u| u) {
                    let (a, z) = (offset_of(&load_at(j)), offset_of(&load_at(j + n - 1)));
                    let bytes = n * elem_bytes(w.load.ty);
                    let _ = writeln!(
                        out,
                        "{pad}{{ const I __a = {a}; const I __z = {z};\n{pad}  if (__z - __a == {} && pl::aligned<{bytes}>({ptr} + __a)) pl::{read}<{c_ty}, {n}>({ptr} + __a, &__w{k}[{j}]);\n{pad}  else {{",
                        n - 1
                    );
                    for i in run.clone() {
                        let _ = writeln!(
                            out,
                            "{pad}    __w{k}[{i}] = {};",
                            e.expr(&load_at(i as i128))
                        );
                        done[i] = true;
                    }
                    let _ = writeln!(out, "{pad}  }}\n{pad}}}");
                }
                j += n;
            }
        }
        for i in 0..w.len as usize {
            if used[i] && !done[i] {
                let _ = writeln!(out, "{pad}__w{k}[{i}] = {};", e.expr(&load_at(i as i128)));
            }
        }
    }

    /// The stores of `__lane`: at once where the store's dimension 0 grows
    /// by one a lane and the others stay, and its addresses are contiguous
    /// and aligned (and, under a `guard`, `__all` holds); else lane by lane.
    fn store_lanes(&mut self, b: &Body, guard: Option<&Expr>, out: &mut String, depth: usize) {
        let pad = "  ".repeat(depth);
        let (v, last) = (b.v(), b.last);
        let lanes = last + 1;
        let ty = self.p().funcs[b.func].ty;
        let f = b.func;
        let dense = !b.args.is_empty()
            && b.step(&b.args[0]) == Some(1)
            && b.args[1..].iter().all(|a| b.step(a) == Some(0));
        let access =
            access_elems(ty, lanes).filter(|n| dense && ty != Type::Bool && lanes % n == 0);
        if let Some(n) = access {
            let offset = |p: &Self, out: &mut String, ipad: &str, to: &str| {
                let at = p
                    .exprs(Some((b.func, b.update)))
                    .offset(Source::Func(f), b.args);
                let _ = writeln!(out, "{ipad}{to} = {at};");
            };
            let _ = writeln!(out, "{pad}{{ I __s0, __sl;");
            self.in_lane(b, Some("0"), out, depth + 1, |p, out, ipad| {
                offset(p, out, ipad, "__s0")
            });
            self.in_lane(
                b,
                Some(&last.to_string()),
                out,
                depth + 1,
                |p, out, ipad| offset(p, out, ipad, "__sl"),
            );
            let all = if guard.is_some() { "__all && " } else { "" };
            let bytes = n * elem_bytes(ty);
            let c_ty = buffer_type(ty);
            let _ = writeln!(
                out,
                "{pad}  if ({all}__sl - __s0 == {last} && pl::aligned<{bytes}>(__f{f} + __s0)) {{"
            );
            for c in (0..lanes).step_by(n as usize) {
                let _ = writeln!(
                    out,
                    "{pad}    pl::st_vec<{c_ty}, {n}>(__f{f} + __s0 + {c}, __lane + {c});"
                );
            }
            let _ = writeln!(out, "{pad}  }} else {{");
        }
        let lane_depth = if access.is_some() { depth + 2 } else { depth };
        self.in_lane(b, None, out, lane_depth, |p, out, ipad| {
            let e = p.exprs(Some((b.func, b.update)));
            let at = e.offset(Source::Func(f), b.args);
            let store = format!("__f{f}[{at}] = __lane[{v}];");
            match guard {
                Some(g) => {
                    let _ = writeln!(out, "{ipad}if ({}) {store}", e.expr(g));
                }
                None => {
                    let _ = writeln!(out, "{ipad}{store}");
                }
            }
        });
        if access.is_some() {
            let _ = writeln!(out, "{pad}  }}\n{pad}}}");
        }
    }

    /// The last lane of a vectorized loop from `min` to `max` as a
    /// constant ([`Program::constant_max`]), with at most 16 lanes from
    /// a constant `min` of 0.
    fn lanes_last(&self, min: &Expr, max: &Expr) -> Option<i128> {
        let last = self.constant_max(max)?;
        (min.as_int() == Some(0) && (0..16).contains(&last)).then_some(last)
    }
}

/// Whether every load in `e` is in range at any coordinate: only loads of
/// inputs, through their `clamp_edge` in every dimension (the input is not
/// empty where it is read at all).
fn in_range_anywhere(e: &Expr) -> bool {
    !e.any(&mut |n| match &n.kind {
        ExprKind::Load {
            source: Source::Input(i),
            args,
            ..
        } => !args.iter().enumerate().all(|(d, a)| {
            matches!(&a.kind, ExprKind::Boundary {
                mode: BoundaryMode::ClampEdge,
                min,
                extent,
                ..
            } if matches!(min.kind, ExprKind::InputMin(j, k) if j == *i && k == d)
                && matches!(extent.kind, ExprKind::InputExtent(j, k) if j == *i && k == d))
        }),
        ExprKind::Load { .. } => true,
        _ => false,
    })
}
