//! Vector code for vectorized loops.
//!
//! A loop the schedule vectorizes has a constant extent `W` (the factor of
//! its split) wherever its iterations are all present, which is everywhere but
//! in the ragged part of a split that is not shifted. Its body, a store under
//! coordinate bindings and conditions, becomes one iteration over all `W`
//! lanes. Each expression is classified as in the Halide paper:
//!
//! - *uniform*: the same in every lane (does not depend on the loop);
//! - *ramp* `base + i * stride` in lane `i`, for integers affine in the loop
//!   with a constant stride: coordinates;
//! - *varying*: anything else.
//!
//! A load evaluated in every lane whose first coordinate is a ramp of stride 1
//! and whose other coordinates are uniform is one dense vector load
//! ([`pipeline::View::load_dense`]) before the lanes are computed; with stride
//! 2 to 4 a dense load of the span deinterleaved, with stride -1 one
//! reversed, with another constant stride a strided load. The stride that
//! counts is the one in memory: the ramp's times that of the input's
//! dimension 0 when the schedule declares it (`rgb.dim(0).set_stride(3)`
//! makes `rgb(x, y, c)` a load of stride 3); at `x / 2 + k`, a dense load
//! of half as many elements, each doubled in registers. Other loads are
//! gathers. A `select` whose test varies by lane is a blend of both
//! branches computed in every lane (bounds inference covers both), unless
//! a branch loads through `constant(v)` at coordinates its test does not
//! also load: that select stays in the lane loop. The value is then
//! computed by one loop over the lanes of straight-line scalar code on those
//! arrays, which the kernel's instruction-set level (one instance of the
//! generic kernel per level, compiled with its `#[target_feature]`) compiles
//! to vector instructions of that level, and stored
//! as one dense vector store when the store's first coordinate is a ramp of
//! stride 1 (else one store per lane, in lane order).
//!
//! A split's inner loop whose extent is `select(c, W - 1, ..) + 1` (the
//! extent is at least `W`, so the last vector is shifted back to end at the
//! extent) runs as one vector iteration when `c` holds, its body taken with
//! `c` true, and as a scalar loop otherwise (an image narrower than a
//! vector). Its guard, `min(W x, e - W) + lane < e`, then provably holds in
//! every lane and is dropped. So the ragged last vector of a row, and the
//! edges of a loop partitioned on `clamp_edge`, are vector code too: a load
//! through `clamp_edge` along a ramp is one dense load when no lane is
//! clamped, else one load per lane ([`pipeline::View::load_dense_clamped`]).
//! As scalar code, those edges took a third of the blur's time at 1024
//! pixels a row (profiled on one thread).
//!
//! A narrowing to `u8` of `u16` arithmetic on widened bytes, such as a
//! binomial filter's pass rounded back to bytes, runs in the x86
//! registers' block order, with weighted taps in pairs (`blocks.rs`).
//!
//! The loop stays scalar when its body is anything else: a loop inside, a
//! condition that varies by lane and is not such a guard, or an update that
//! may read what another lane writes. Other boundary conditions (`mirror`,
//! `wrap`, `constant`) on a varying coordinate load lane by lane.

mod blocks;
mod classify;
mod loads;
mod patterns;

use super::{
    float_lit, ident, input_name, int_lit, let_binding, let_var, operand, reader_name, rust_type,
    Gen, Name,
};
use crate::analysis::lanes::*;
use crate::codegen::code::{parenthesized, suffixed_lit, unsuffixed_lit, word, Code};
use crate::hash::{HashMap, HashSet, Table};
use crate::ir::*;
use pipeline_code::code;
use std::cell::{Cell, RefCell};

/// The most lanes a vectorized loop is emitted with; wider loops stay scalar.
pub const MAX_LANES: usize = 64;

/// First id of the names this module binds (`__t{id}`), above every `Let`
/// id of a definition.
const FIRST_TEMP: usize = 1 << 40;

/// How a coordinate varies across the lanes.
#[derive(Clone)]
enum Lane {
    /// The same in every lane.
    Uni(Code),
    /// `base + i * stride` in lane `i`.
    Ramp(Code, i128),
    /// An array of the lanes' values.
    Array(Code),
}

/// Loads of one stride `S` in memory whose elements are every phase of
/// the same `S N` elements ([`Lanes::plan_phases`]).
struct PhaseGroup {
    /// The load at phase 0.
    anchor: Expr,
    /// `S`.
    step: usize,
    /// The arrays of the phases, once the read is emitted.
    names: Option<Vec<Code>>,
}

/// Loads of one source at coordinates that differ by constants only,
/// read at the offsets of one of them ([`Lanes::tap`]).
#[derive(Clone)]
struct TapGroup {
    source: Source,
    /// The coordinates' non-constant parts (`None`: constant).
    rests: Vec<Option<Expr>>,
    /// The constants of the load whose offsets are bound.
    base: Vec<i128>,
    /// The array of those offsets.
    offsets: Code,
}

/// The gathers and tap loads bound in [`Lanes::loads`]; a scope (a
/// `select` arm, a coordinate's lanes) saves and restores them.
#[derive(Clone, Default)]
struct Bound {
    /// Gathers and tap loads by source and coordinates: `lerp(a, b, t)`
    /// is `a + (b - a) * t`, whose `a` a trilinear interpolation reads
    /// twice, and LLVM does not always merge two gathers of the same
    /// lanes.
    reads: Vec<(Source, Vec<Expr>, Code)>,
    /// The groups of taps whose offsets are bound.
    taps: Vec<TapGroup>,
}

/// Why a loop stays scalar (not reported: the scalar loop is always right).
struct Scalar;

type R<T> = Result<T, Scalar>;

/// The state of one vectorized loop's emission.
struct Lanes<'g, 'a> {
    g: &'g Gen<'a>,
    var: &'g LoopVar,
    /// The loop's first value: lane `i` runs iteration `first + i`.
    first: i128,
    w: usize,
    /// The stage whose store is being emitted.
    stage: Cell<(Option<FuncId>, Option<usize>)>,
    coords: RefCell<HashMap<Coord, Lane>>,
    /// Whether each `Let` id binds a uniform value.
    let_uniform: RefCell<HashMap<usize, bool>>,
    /// Whether each expression node (by address) is uniform.
    uniform: RefCell<Table<*const Expr, bool>>,
    /// The arrays of the store being emitted (vector loads, operations,
    /// lane loops), before its final lane loop or vector store.
    loads: RefCell<Vec<Code>>,
    /// The array bound for each `Let` id whose value is computed as a
    /// vector.
    vector_lets: RefCell<HashMap<usize, Code>>,
    /// The gathers and taps bound in `loads`.
    gathers: RefCell<Bound>,
    /// The loads of the store being emitted (by node) that read as taps
    /// ([`Lanes::plan_taps`]).
    tapped: RefCell<HashSet<*const Expr>>,
    /// The rows (view and coordinates past the first) whose next row the
    /// store being emitted prefetches.
    prefetched: RefCell<Vec<String>>,
    /// Loads of stride 2, 3 or 4 read together with the others of their
    /// group ([`Lanes::plan_phases`]): the group and phase of each, by node.
    phase_of: RefCell<HashMap<*const Expr, (usize, usize)>>,
    /// The groups of loads read together.
    phase_groups: RefCell<Vec<PhaseGroup>>,
    next_temp: Cell<usize>,
    /// The widest vector, in bytes, computed so far: loads, stores and the
    /// values between them, not the coordinates of dense loads and stores
    /// (which stay scalar); `u16` arithmetic in the bytes' block order
    /// counts as bytes (`vector/blocks.rs`).
    computed: Cell<usize>,
}

impl Gen<'_> {
    /// The body of vectorized loop `var` of `w` lanes from `first` as one
    /// vector iteration, with the loop's variable bound to lane 0, or `None`
    /// when it must stay a scalar loop.
    pub(super) fn vector_body(
        &self,
        var: &LoopVar,
        first: i128,
        w: usize,
        body: &Stmt,
    ) -> Option<Code> {
        if !(2..=MAX_LANES).contains(&w) {
            return None;
        }
        let lanes = Lanes {
            g: self,
            var,
            first,
            w,
            stage: Cell::new((None, None)),
            coords: Default::default(),
            let_uniform: Default::default(),
            uniform: Default::default(),
            loads: Default::default(),
            vector_lets: Default::default(),
            gathers: Default::default(),
            tapped: Default::default(),
            prefetched: Default::default(),
            phase_of: Default::default(),
            phase_groups: Default::default(),
            next_temp: Cell::new(FIRST_TEMP),
            computed: Cell::new(0),
        };
        let code = lanes.stmt(body).ok()?;
        let needs = self.needs.get();
        self.needs.set(super::Needs {
            widest: needs.widest.max(lanes.computed.get()),
            ..needs
        });
        Some(code)
    }
}

/// The zero of a type, to initialize arrays of it.
fn zero(t: Type) -> Code {
    match t {
        Type::Bool => code!(false),
        t if t.is_float() => float_lit(t, 0.0),
        t => int_lit(t, 0),
    }
}

impl Lanes<'_, '_> {
    /// Notes a vector of `ty` computed (see `computed`).
    fn computes(&self, ty: Type) {
        if ty != Type::Bool {
            let bytes = self.w * (ty.bits() as usize / 8);
            self.computed.set(self.computed.get().max(bytes));
        }
    }

    fn temp(&self) -> (usize, Code) {
        let id = self.next_temp.get();
        self.next_temp.set(id + 1);
        (id, word!("__t{}", id))
    }

    /// Binds `value`, an array `[ty; W]`, to a fresh name among the code
    /// before the lanes; the name.
    fn bind_array(&self, ty: Code, value: Code) -> R<Code> {
        let w = self.lanes_lit();
        let (_, name) = self.temp();
        self.loads
            .borrow_mut()
            .push(code!(let #name: [#ty; #w] = #value;));
        Ok(code!(#name))
    }

    fn lanes_lit(&self) -> Code {
        unsuffixed_lit!(self.w)
    }

    fn stmt(&self, s: &Stmt) -> R<Code> {
        match s {
            Stmt::LetCoord { coord, value, body } => {
                let id = self.g.named(Name::Coord(*coord));
                let (bind, lane) = match self.ramp(value) {
                    Some((base, 0)) => {
                        (code!(let #id: i32 = (#base) as i32;), Lane::Uni(code!(#id)))
                    }
                    Some((base, s)) => (
                        code!(let #id: i32 = (#base) as i32;),
                        Lane::Ramp(code!(#id), s),
                    ),
                    None => {
                        let w = self.lanes_lit();
                        // The lanes' value may bind vectors of its parts
                        // (`loads`), which the store below starts afresh
                        // from: they go before the coordinate.
                        let outer = std::mem::take(&mut *self.loads.borrow_mut());
                        let gathers = std::mem::take(&mut *self.gathers.borrow_mut());
                        let v = self.lane(value, false);
                        let parts = std::mem::replace(&mut *self.loads.borrow_mut(), outer);
                        *self.gathers.borrow_mut() = gathers;
                        let v = v?;
                        let bind = code! {
                            #(#parts)*
                            let mut #id = [0i32; #w];
                            for __i in 0..#w { #id[__i] = (#v) as i32; }
                        };
                        (bind, Lane::Array(id))
                    }
                };
                self.coords.borrow_mut().insert(*coord, lane);
                let b = self.stmt(body)?;
                Ok(code!(#bind #b))
            }
            Stmt::LetSym { sym, value, body } if self.is_uniform(value) => {
                let id = self.g.named(Name::LocalSym(*sym));
                let v = self.g.expr(value, None, None);
                let b = self.stmt(body)?;
                Ok(code!(let #id: i64 = #v; #b))
            }
            // Tests that are the same in every lane stay an `if` (an
            // outer split's guard on the rows); a split's guard on its
            // shifted last vector, which holds in every lane once all lanes
            // run, is dropped.
            Stmt::If { cond, body } => {
                let mut rest = Vec::new();
                for c in cond.conjuncts() {
                    if self.is_uniform(c) {
                        rest.push(self.g.expr(c, None, None));
                    } else if !self.holds_in_every_lane(c) {
                        return Err(Scalar);
                    }
                }
                let b = self.stmt(body)?;
                Ok(if rest.is_empty() {
                    b
                } else {
                    code!(if #(#rest)&&* { #b })
                })
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => self.store(*func, *update, args, value),
            _ => Err(Scalar),
        }
    }

    fn store(&self, func: FuncId, update: Option<usize>, args: &[Expr], value: &Expr) -> R<Code> {
        self.stage.set((Some(func), update));
        if self.g.p.funcs[func].ty == Type::Bool {
            // Stored as bytes (`rust::buffer_type`): a scalar loop.
            return Err(Scalar);
        }
        let folds = self
            .g
            .folds
            .borrow()
            .get(&func)
            .cloned()
            .unwrap_or_default();
        let fold = |d: usize| folds.get(d).copied().flatten();
        let ramps: Vec<Option<(Code, i128)>> = args.iter().map(|a| self.ramp(a)).collect();
        let dense = matches!(ramps[0], Some((_, 1)))
            && fold(0).is_none()
            && ramps[1..].iter().all(|r| matches!(r, Some((_, 0))));
        if update.is_some() {
            // Lanes write distinct points along dimension 0; an update may
            // read its own func only at the point each lane writes.
            let mut own_reads_elsewhere = false;
            value.visit(&mut |n| {
                if let ExprKind::Load {
                    source: Source::Func(g),
                    args: a,
                    ..
                } = &n.kind
                {
                    own_reads_elsewhere |= *g == func && a[0] != args[0];
                }
            });
            if !dense || own_reads_elsewhere {
                return Err(Scalar);
            }
        }
        self.loads.borrow_mut().clear();
        *self.gathers.borrow_mut() = Bound::default();
        self.prefetched.borrow_mut().clear();
        self.plan_phases(value);
        self.plan_taps(value);
        let ty = rust_type(value.ty);
        let w = self.lanes_lit();
        let writer = self.g.writer(func);
        if dense {
            let v = self.vec(value)?;
            let loads = std::mem::take(&mut *self.loads.borrow_mut());
            let c = self.lane0(args, &ramps, &fold);
            // The output's next row is prefetched like the input rows,
            // except under loads of an input at a stride of 2 or more in
            // memory: those loops stream the input from memory, and on
            // Zen 4 the prefetch made grey-from-RGB 40-50% slower (at
            // 3840x2160 and at 7680x4320) where it made the stencils'
            // output loops, which read from the caches, 5-20% faster.
            let mut strided_input = false;
            visit_every_lane(value, &mut |n| {
                if let ExprKind::Load {
                    source: source @ Source::Input(_),
                    args,
                    ..
                } = &n.kind
                {
                    strided_input |= self
                        .memory_step(*source, args)
                        .is_some_and(|(r, s)| r * s as i128 != 1);
                }
            });
            let prefetch = (self.g.writes_caller_output(func) && args.len() > 1 && !strided_input)
                .then(|| code!(#writer.prefetch_next_row(__c);));
            // SAFETY (of the generated block): every lane is an iteration of
            // the loop, whose stores loop synthesis keeps inside the buffer.
            let loads = loads.into_iter();
            return Ok(code! {{
                #(#loads)*
                let __c = #c;
                #prefetch
                unsafe { #writer.store_dense(__c, #v) }
            }});
        }
        let v = self.lane(value, false)?;
        let loads = std::mem::take(&mut *self.loads.borrow_mut());
        // One store per lane, in lane order (a pure definition never reads
        // what it writes).
        let c = args
            .iter()
            .enumerate()
            .map(|(d, a)| {
                // Lane code, unlike the scalar emitter's (`operand`), may be a
                // block or an indexing: only a leaf's is an operand as it is.
                let v = self.lane(a, false)?;
                let leaf =
                    a.is_leaf() && !matches!(a.kind, ExprKind::Load { .. } | ExprKind::Math(..));
                let v = if leaf { v } else { parenthesized(v) };
                Ok(wrap_fold(code!(#v as i64), fold(d)))
            })
            .collect::<R<Vec<Code>>>()?;
        let loads = [loads, std::mem::take(&mut *self.loads.borrow_mut())].concat();
        let store = self.g.element_store(func, &writer, code!(__c), code!(__v));
        let loads = loads.into_iter();
        let c = c.into_iter();
        Ok(code! {{
            #(#loads)*
            for __i in 0..#w {
                let __v: #ty = #v;
                let __c = [#(#c),*];
                #store
            }
        }})
    }

    /// `e`'s value in lane `__i`, as scalar code inside the lane loop.
    /// `guarded`: under a `select` branch, which only some lanes evaluate,
    /// so its loads stay in the lane loop.
    fn lane(&self, e: &Expr, guarded: bool) -> R<Code> {
        crate::deep(|| self.lane_here(e, guarded))
    }

    fn lane_here(&self, e: &Expr, guarded: bool) -> R<Code> {
        let (f, k) = self.stage.get();
        if self.is_uniform(e) {
            return Ok(self.g.expr(e, f, k));
        }
        // Evaluated in every lane: a vector operation when there is one.
        if !guarded && self.explicit(e) {
            let v = self.vec(e)?;
            return Ok(code!(#v[__i]));
        }
        let coord = |c: Coord| -> R<Code> {
            Ok(match self.coords.borrow().get(&c).ok_or(Scalar)? {
                Lane::Uni(t) => t.clone(),
                Lane::Ramp(b, s) => ramp_lane(b, *s, Type::I32),
                Lane::Array(a) => code!(#a[__i]),
            })
        };
        Ok(match &e.kind {
            ExprKind::Loop(_) => {
                let id = self.g.named(Name::Loop(self.var.clone()));
                ramp_lane(&code!(#id), 1, Type::I64)
            }
            ExprKind::Var(d) => coord(Coord::Pure(f.ok_or(Scalar)?, *d))?,
            ExprKind::RVar(r) => coord(Coord::Reduction(f.ok_or(Scalar)?, k.ok_or(Scalar)?, *r))?,
            ExprKind::LetVar(id) => match self.vector_lets.borrow().get(id) {
                Some(a) => code!(#a[__i]),
                None => let_var(*id),
            },
            ExprKind::Let { id, value, body } => {
                self.vector_lets.borrow_mut().remove(id);
                let (x, b) = (self.lane(value, guarded)?, self.lane(body, guarded)?);
                let_binding(*id, value.ty, x, b)
            }
            ExprKind::Select(c, a, b) => {
                let c = self.lane(c, guarded)?;
                let (a, b) = (self.lane(a, true)?, self.lane(b, true)?);
                code!((if #c { #a } else { #b }))
            }
            ExprKind::Load { source, args, .. } => self.load(e, *source, args, guarded)?,
            _ => {
                // The node's scalar operation on its operands' lane values.
                let mut binds = Vec::new();
                let mut placeholders = Vec::new();
                for c in children(e) {
                    let (id, name) = self.temp();
                    let (cty, v) = (rust_type(c.ty), self.lane(c, guarded)?);
                    binds.push(code!(let #name: #cty = #v;));
                    placeholders.push(Expr::new(ExprKind::LetVar(id), c.ty));
                }
                let op = self.g.expr(&e.with_children(placeholders), f, k);
                code!({ #(#binds)* #op })
            }
        })
    }

    /// Whether node `e`, evaluated in every lane, is computed as a vector
    /// by [`Lanes::vec`] (an operation of `pipeline::rt::simd`, a `let`, or
    /// a select whose test is the same in every lane) rather than in a lane
    /// loop.
    fn explicit(&self, e: &Expr) -> bool {
        if self.rounding_average(e).is_some() {
            return true;
        }
        let num = |t: Type| t != Type::Bool;
        match &e.kind {
            ExprKind::Binary(op, a, b) => {
                num(a.ty)
                    && match op {
                        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => true,
                        BinOp::Min | BinOp::Max => true,
                        BinOp::And | BinOp::Or | BinOp::Xor => a.ty.is_int(),
                        BinOp::Shl | BinOp::Shr => a.ty.is_int() && self.is_uniform(b),
                        _ => false,
                    }
            }
            ExprKind::Unary(UnOp::Neg | UnOp::Abs, a) => num(a.ty),
            ExprKind::Unary(UnOp::Not, a) => a.ty.is_int(),
            ExprKind::Cast(a) | ExprKind::SaturatingCast(a) => num(a.ty) && num(e.ty),
            ExprKind::Math(
                MathFn::Sqrt | MathFn::Floor | MathFn::Ceil | MathFn::Trunc | MathFn::Fma,
                _,
            ) => e.ty.is_float(),
            ExprKind::Let { .. } => true,
            ExprKind::Select(c, a, b) if self.is_uniform(c) => [c, a, b].iter().all(|e| closed(e)),
            // A comparison choosing between values computed in every lane:
            // a blend. Bounds inference takes no select's test into account,
            // so a load under a branch is in range in every lane, except
            // through `constant(v)`'s clamp, whose demand is only what lies
            // inside the source (`BoundaryMode::GuardedClamp`): such a load
            // must also be in the test, else it stays in the lane loop.
            ExprKind::Select(c, a, b) => {
                // Loads as (source, coordinates): call sites differ.
                let mut tested = Vec::new();
                c.visit(&mut |n| {
                    if let ExprKind::Load { source, args, .. } = &n.kind {
                        tested.push((*source, args.clone()));
                    }
                });
                let guarded_clamp = |args: &[Expr]| {
                    args.iter().any(|a| {
                        a.any(&mut |n| {
                            matches!(
                                n.kind,
                                ExprKind::Boundary {
                                    mode: BoundaryMode::GuardedClamp,
                                    ..
                                }
                            )
                        })
                    })
                };
                let safe = |x: &Expr| {
                    !x.any(&mut |n| match &n.kind {
                        ExprKind::Load { source, args, .. } => {
                            guarded_clamp(args)
                                && !tested.iter().any(|(s, a)| s == source && a == args)
                        }
                        _ => false,
                    })
                };
                num(e.ty)
                    && safe(a)
                    && safe(b)
                    && matches!(&c.kind, ExprKind::Binary(op, p, _) if op.is_comparison() && num(p.ty))
            }
            _ => false,
        }
    }

    /// `e`, evaluated in every lane, as an array `[T; W]` of its lanes
    /// (code bound before the lanes, in `loads`): vector loads, operations
    /// of `pipeline::rt::simd` at the kernel's level (`__isa`), and lane
    /// loops for the rest.
    fn vec(&self, e: &Expr) -> R<Code> {
        crate::deep(|| self.vec_here(e))
    }

    fn vec_here(&self, e: &Expr) -> R<Code> {
        let (f, k) = self.stage.get();
        let w = self.lanes_lit();
        let ty = rust_type(e.ty);
        if self.is_uniform(e) {
            let v = self.g.expr(e, f, k);
            return Ok(code!([#v; #w]));
        }
        self.computes(e.ty);
        // `rt::simd`, imported under this name by the entry (`generate`).
        let simd = code!(__simd);
        let bind = |v: Code| {
            let (_, name) = self.temp();
            self.loads
                .borrow_mut()
                .push(code!(let #name: [#ty; #w] = #v;));
            Ok(code!(#name))
        };
        let uni = |x: &Expr| self.g.expr(x, f, k);
        if let Some((a, b)) = self.rounding_average(e) {
            let t = rust_type(a.ty);
            let (x, y) = (self.vec(a)?, self.vec(b)?);
            let avg = code!(#simd::Average::<#t>::avg_round(__isa, #x, #y));
            if a.ty == e.ty {
                return bind(avg);
            }
            let (_, name) = self.temp();
            self.loads
                .borrow_mut()
                .push(code!(let #name: [#t; #w] = #avg;));
            return bind(code!(#simd::Convert::<#t, #ty>::cast(__isa, #name)));
        }
        match &e.kind {
            ExprKind::Load { source, args, .. } => {
                if let Some(name) = self.vector_load(e, *source, args) {
                    return Ok(code!(#name));
                }
                if let Some((.., name)) = self
                    .gathers
                    .borrow()
                    .reads
                    .iter()
                    .find(|(s, a, _)| s == source && a.as_slice() == args.as_slice())
                {
                    return Ok(name.clone());
                }
                if let Some(gather) = self.gather(e, *source, args)? {
                    let name = bind(gather)?;
                    self.gathers
                        .borrow_mut()
                        .reads
                        .push((*source, args.clone(), name.clone()));
                    return Ok(name);
                }
            }
            ExprKind::LetVar(id) => {
                if let Some(a) = self.vector_lets.borrow().get(id) {
                    return Ok(code!(#a));
                }
            }
            ExprKind::Let { id, value, body } => {
                if self.is_uniform(value) {
                    let (v, vty, name) = (uni(value), rust_type(value.ty), let_var(*id));
                    self.loads.borrow_mut().push(code!(let #name: #vty = #v;));
                } else {
                    let v = self.vec(value)?;
                    let (_, name) = self.temp();
                    let vty = rust_type(value.ty);
                    self.loads
                        .borrow_mut()
                        .push(code!(let #name: [#vty; #w] = #v;));
                    self.vector_lets.borrow_mut().insert(*id, name);
                }
                return self.vec(body);
            }
            // The same branch in every lane (the test of `constant(v)` in
            // a row, once partitioning has dropped the column's half): the
            // branch taken is computed as a vector, with vector loads.
            ExprKind::Select(c, a, b) if self.explicit(e) && !self.is_uniform(c) => {
                let ExprKind::Binary(op, p, q) = &c.kind else {
                    unreachable!("explicit() admits comparisons only")
                };
                let cmp = word!("{op:?}");
                let (ct, p, q) = (rust_type(p.ty), self.vec(p)?, self.vec(q)?);
                let (x, y) = (self.vec(a)?, self.vec(b)?);
                return bind(code!(
                    #simd::Select::<#ct, #ty>::select(__isa, #simd::Cmp::#cmp, #p, #q, #x, #y)
                ));
            }
            ExprKind::Select(c, a, b) if self.explicit(e) => {
                let cond = uni(c);
                let arm = |x: &Expr| -> R<Code> {
                    let outer = std::mem::take(&mut *self.loads.borrow_mut());
                    let gathers = self.gathers.borrow().clone();
                    let v = self.vec(x);
                    let loads = std::mem::replace(&mut *self.loads.borrow_mut(), outer);
                    // What the arm binds is not visible after it.
                    *self.gathers.borrow_mut() = gathers;
                    let v = v?;
                    Ok(code!({ #(#loads)* #v }))
                };
                let (x, y) = (arm(a)?, arm(b)?);
                return bind(code!(if #cond { #x } else { #y }));
            }
            _ if self.explicit(e) => {
                // SAFETY (of the generated blocks): `__isa` is the token of
                // the kernel's level, which the entry dispatched on.
                return match &e.kind {
                    ExprKind::Binary(op, a, b) => {
                        let t = rust_type(a.ty);
                        let x = self.vec(a)?;
                        let f = lane_op(*op).expect("explicit() admits no other operator");
                        let call = match op {
                            BinOp::Shl | BinOp::Shr => {
                                let s = uni(b);
                                code!(#f(__isa, #x, (#s) as u32))
                            }
                            BinOp::Div if self.is_uniform(b) => match self.f32_reciprocal(a, b) {
                                Some(m) => {
                                    let (d, bits) = (uni(b), suffixed_lit!(u32, m.to_bits()));
                                    let m = code!(f32::from_bits(#bits));
                                    code!(#simd::DivSmall::<#t>::div_small(__isa, #x, #d, #m))
                                }
                                None => {
                                    let d = uni(b);
                                    code!(__A::div_by(__isa, #x, #d))
                                }
                            },
                            _ => {
                                let y = self.vec(b)?;
                                code!(#f(__isa, #x, #y))
                            }
                        };
                        bind(call)
                    }
                    ExprKind::Unary(op, a) => {
                        let x = self.vec(a)?;
                        bind(match op {
                            UnOp::Neg => code!(__A::neg(__isa, #x)),
                            UnOp::Abs => code!(__A::abs(__isa, #x)),
                            UnOp::Not => code!(__B::not(__isa, #x)),
                        })
                    }
                    ExprKind::Cast(a) | ExprKind::SaturatingCast(a) if a.ty == e.ty => self.vec(a),
                    ExprKind::SaturatingCast(a) => {
                        let (from, x) = (rust_type(a.ty), self.vec(a)?);
                        bind(code!(#simd::SatConvert::<#from, #ty>::saturating_cast(__isa, #x)))
                    }
                    ExprKind::Cast(a)
                        if e.ty == Type::U8
                            && self.narrows_fitting(a, e.ty)
                            && self.narrows_in_blocks(a) =>
                    {
                        self.narrow_in_blocks(a)
                    }
                    ExprKind::Cast(a) if self.narrows_fitting(a, e.ty) => {
                        let (from, x) = (rust_type(a.ty), self.vec(a)?);
                        bind(code!(#simd::NarrowFitting::<#from, #ty>::narrow_fitting(__isa, #x)))
                    }
                    ExprKind::Cast(a) => {
                        let (from, x) = (rust_type(a.ty), self.vec(a)?);
                        bind(code!(#simd::Convert::<#from, #ty>::cast(__isa, #x)))
                    }
                    ExprKind::Math(MathFn::Fma, args) => {
                        let (x, y, z) = (
                            self.vec(&args[0])?,
                            self.vec(&args[1])?,
                            self.vec(&args[2])?,
                        );
                        bind(code!(#simd::MulAdd::<#ty>::mul_add(__isa, #x, #y, #z)))
                    }
                    ExprKind::Math(m, args) => {
                        let x = self.vec(&args[0])?;
                        let m = word!(
                            "{}",
                            match m {
                                MathFn::Sqrt => "sqrt",
                                MathFn::Floor => "floor",
                                MathFn::Ceil => "ceil",
                                _ => "trunc",
                            }
                        );
                        bind(code!(#simd::Round::<#ty>::#m(__isa, #x)))
                    }
                    _ => unreachable!("explicit() admits no other node"),
                };
            }
            _ => {}
        }
        // A lane loop.
        let (v, zero) = (self.lane(e, false)?, zero(e.ty));
        bind(code!({
            let mut __a: [#ty; #w] = [#zero; #w];
            for __i in 0..#w { __a[__i] = #v; }
            __a
        }))
    }

    /// Lane 0 of coordinate `e` computed in `i64` where it cannot wrap, and a
    /// bound `b` on every intermediate (`|v| < 2^b`), when `e` is sums,
    /// differences and constant multiples of 32-bit leaves that cannot
    /// overflow `i64`. That is `e`'s mathematical value, which equals its
    /// `i32` value wherever the access is in range (bounds inference proves
    /// the mathematical value inside the buffer). The point: `x + 1`,
    /// `x + 2`, ... then differ by constants, and the loads at them share one
    /// address computation instead of one sign extension each.
    fn wide(&self, e: &Expr) -> Option<(Code, u32)> {
        const MAX_BITS: u32 = 62;
        if !e.ty.is_int() || e.ty.bits() > 32 {
            return None;
        }
        let (f, k) = self.stage.get();
        // Each piece is a method call's receiver as it is: a cast in
        // parentheses, a literal (a negative one in parentheses), or a
        // chain of method calls. `leaf` takes an operand of `as`.
        let leaf = |code: Code| Some((parenthesized(code!(#code as i64)), e.ty.bits()));
        let coord = |c: Coord| match self.coords.borrow().get(&c)? {
            Lane::Uni(t) | Lane::Ramp(t, _) => leaf(t.clone()),
            Lane::Array(_) => None,
        };
        let out = match &e.kind {
            ExprKind::Int(v) => {
                let v = i64::try_from(*v).ok()?;
                let lit = suffixed_lit!(i64, v);
                let lit = if v < 0 { parenthesized(lit) } else { lit };
                Some((lit, 65 - v.unsigned_abs().leading_zeros()))
            }
            ExprKind::Var(d) => coord(Coord::Pure(f?, *d)),
            ExprKind::RVar(r) => coord(Coord::Reduction(f?, k?, *r)),
            ExprKind::Unary(UnOp::Neg, a) => {
                let (a, b) = self.wide(a)?;
                Some((code!(#a.wrapping_neg()), b))
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let ((x, bx), (y, by)) = (self.wide(a)?, self.wide(b)?);
                let bits = bx.max(by) + 1;
                Some(if *op == BinOp::Add {
                    (code!(#x.wrapping_add(#y)), bits)
                } else {
                    (code!(#x.wrapping_sub(#y)), bits)
                })
            }
            ExprKind::Binary(BinOp::Mul, a, b) => {
                let ((x, bx), (y, by)) = (self.wide(a)?, self.wide(b)?);
                if a.as_int().is_none() && b.as_int().is_none() {
                    return None;
                }
                Some((code!(#x.wrapping_mul(#y)), bx + by))
            }
            _ if self.is_uniform(e) => leaf(operand(e, self.g.expr(e, f, k))),
            _ => None,
        };
        out.filter(|(_, bits)| *bits <= MAX_BITS)
    }
}

/// Lane `__i` of the ramp `base + i * stride` of type `t`.
fn ramp_lane(base: &Code, stride: i128, t: Type) -> Code {
    let ty = rust_type(t);
    // `base` is a name.
    if stride == 1 {
        return code!(#base.wrapping_add(__i as #ty));
    }
    let s = int_lit(t, t.wrap(stride));
    code!(#base.wrapping_add((__i as #ty).wrapping_mul(#s)))
}

/// A coordinate `c` (i64) of a folded dimension wraps into the fold.
fn wrap_fold(c: Code, fold: Option<i64>) -> Code {
    match fold {
        Some(n) => {
            let (n, c) = (suffixed_lit!(i64, n), parenthesized(c));
            code!(#c.rem_euclid(#n))
        }
        None => c,
    }
}

/// The operation of `rt::simd` that computes `op` in every lane, through
/// the names the entry imports `Arith` and `Bits` under (`__A::add`,
/// `__B::shl`); the lanes' type picks the impl. A path, not a method of the
/// level token: on the generic kernel's token, method calls took rustc
/// twice as long to type-check.
fn lane_op(op: BinOp) -> Option<Code> {
    Some(match op {
        BinOp::Add => code!(__A::add),
        BinOp::Sub => code!(__A::sub),
        BinOp::Mul => code!(__A::mul),
        BinOp::Div => code!(__A::div),
        BinOp::Min => code!(__A::min),
        BinOp::Max => code!(__A::max),
        BinOp::And => code!(__B::and),
        BinOp::Or => code!(__B::or),
        BinOp::Xor => code!(__B::xor),
        BinOp::Shl => code!(__B::shl),
        BinOp::Shr => code!(__B::shr),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i128) -> Expr {
        Expr::int(Type::I64, v)
    }

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::binary(op, a, b)
    }

    /// The guard of a split's shifted last vector, `min(16 x, e - 16) + i
    /// < e`, at lane `i` (`x` and `e` symbols).
    fn guard(lane: i128) -> Expr {
        let (x, e) = (Expr::sym(0), Expr::sym(1));
        let start = bin(
            BinOp::Min,
            bin(BinOp::Mul, x, int(16)),
            bin(BinOp::Sub, e.clone(), int(16)),
        );
        bin(BinOp::Lt, bin(BinOp::Add, start, int(lane)), e)
    }

    #[test]
    fn a_shifted_vectors_guard_holds_in_its_sixteen_lanes_only() {
        assert!(provably_true(&guard(0)));
        assert!(provably_true(&guard(15)));
        assert!(!provably_true(&guard(16)));
        // Without the shift, the last vector may pass the end.
        let unshifted = bin(
            BinOp::Lt,
            bin(BinOp::Add, bin(BinOp::Mul, Expr::sym(0), int(16)), int(15)),
            Expr::sym(1),
        );
        assert!(!provably_true(&unshifted));
    }
}
