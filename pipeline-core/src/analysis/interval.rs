//! Interval arithmetic over symbolic expressions: the bounds of an integer
//! expression given the bounds of its variables.
//!
//! An [`Interval`] holds inclusive `i64` bound expressions; `None` means
//! unbounded on that side. The rules are sound for mathematical integers:
//! coordinates are assumed not to wrap (the entry function checks that every
//! region fits in `i32`), while narrow types (8 and 16 bits), whose arithmetic
//! wraps in practice, fall back to their whole range when a bound is not a
//! provably fitting constant.
//!
//! Example: with `x` in `[xmin, xmax]`, `clamp(x - 1, 0, w - 1)` has bounds
//! `[min(max(xmin - 1, 0), w - 1), min(max(xmax - 1, 0), w - 1)]`.

use super::simplify::simplify;
use crate::ir::{BinOp, BoundaryMode, Expr, ExprKind, FuncId, LoopVar, Source, Type, UnOp};

/// Inclusive bounds `[min, max]` as `i64` expressions; `None` is unbounded.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub min: Option<Expr>,
    /// Upper bound.
    pub max: Option<Expr>,
}

impl Interval {
    /// `[e, e]`.
    pub fn point(e: Expr) -> Interval {
        Interval {
            min: Some(e.clone()),
            max: Some(e),
        }
    }

    /// `[min, max]`.
    pub fn new(min: Expr, max: Expr) -> Interval {
        Interval {
            min: Some(min),
            max: Some(max),
        }
    }

    /// Unbounded on both sides.
    pub fn everything() -> Interval {
        Interval {
            min: None,
            max: None,
        }
    }

    /// Constant bounds.
    pub fn constant(lo: i128, hi: i128) -> Interval {
        Interval::new(Expr::i64(lo), Expr::i64(hi))
    }

    /// The whole range of an integer type, or unbounded for types whose range
    /// is too wide to be a useful bound (32 and 64 bits) and for floats.
    pub fn of_type(ty: Type) -> Interval {
        if ty == Type::Bool {
            Interval::constant(0, 1)
        } else if ty.is_int() && ty.bits() <= 16 {
            Interval::constant(ty.int_min(), ty.int_max())
        } else {
            Interval::everything()
        }
    }

    /// True when bounded on both sides.
    pub fn is_bounded(&self) -> bool {
        self.min.is_some() && self.max.is_some()
    }

    /// The hull of two intervals (not aware of emptiness).
    pub fn hull(&self, other: &Interval) -> Interval {
        Interval {
            min: both(self.min.clone(), other.min.clone(), BinOp::Min),
            max: both(self.max.clone(), other.max.clone(), BinOp::Max),
        }
    }

    fn map(self, f: impl Fn(Expr) -> Expr) -> Interval {
        Interval {
            min: self.min.map(&f),
            max: self.max.map(&f),
        }
    }

    fn simplified(self) -> Interval {
        self.map(|e| simplify(&e))
    }

    fn constants(&self) -> Option<(i128, i128)> {
        Some((self.min.as_ref()?.as_int()?, self.max.as_ref()?.as_int()?))
    }
}

/// `op` on two bounds, unbounded when either is. The bounds are taken by
/// value: the bounds of a chain `x + 1 + 1 + ...` grow with it, and a copy
/// at every node made the analysis quadratic in the chain's length.
fn both(a: Option<Expr>, b: Option<Expr>, op: BinOp) -> Option<Expr> {
    Some(bin(op, a?, b?))
}

/// `op` on bounds where a missing bound on one side is absorbed by the other
/// (e.g. the upper bound of `min(a, b)` when only `b` is bounded above).
fn either(a: Option<Expr>, b: Option<Expr>, op: BinOp) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(bin(op, a, b)),
        (Some(a), None) => Some(a),
        (None, b) => b,
    }
}

/// `op` on two bounds, folded when both are `i64` constants: a bound made of
/// constants alone is then one `Int`, which [`constant`] reads without
/// walking it (the bounds of a chain `x + 1 + 1 + ...` grow with it, and
/// walking them at every node made the analysis quadratic).
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    if let (ExprKind::Int(x), ExprKind::Int(y)) = (&a.kind, &b.kind) {
        let (x, y) = (*x, *y);
        let folded = match op {
            _ if a.ty != Type::I64 || b.ty != Type::I64 => None,
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div if y != 0 => Some(x.div_euclid(y)),
            BinOp::Min => Some(x.min(y)),
            BinOp::Max => Some(x.max(y)),
            _ => None,
        };
        if let Some(v) = folded.filter(|v| Type::I64.wrap(*v) == *v) {
            return Expr::i64(v);
        }
    }
    Expr::binary(op, a, b)
}

/// What the analysis knows about the leaves of an expression.
pub struct Scope<'a> {
    /// Bounds of each pure variable of the definition being analysed.
    pub vars: Vec<Interval>,
    /// Bounds of each reduction variable.
    pub rvars: Vec<Interval>,
    /// Bounds of the values of a func (its value range).
    pub func_value: &'a dyn Fn(FuncId) -> Interval,
    /// Bounds of the `let` bindings in scope (innermost last).
    pub lets: std::cell::RefCell<Vec<(usize, Interval)>>,
    /// Bounds of loop variables; a loop not listed is a single point.
    pub loops: Vec<(LoopVar, Interval)>,
}

impl<'a> Scope<'a> {
    /// A scope with the given variable bounds and no `let`s.
    pub fn new(
        vars: Vec<Interval>,
        rvars: Vec<Interval>,
        func_value: &'a dyn Fn(FuncId) -> Interval,
    ) -> Scope<'a> {
        Scope {
            vars,
            rvars,
            func_value,
            lets: Default::default(),
            loops: Vec::new(),
        }
    }

    /// A scope where funcs' values are bounded only by their type.
    pub fn no_funcs() -> &'static dyn Fn(FuncId) -> Interval {
        &|_| Interval::everything()
    }
}

/// The bounds of an integer (or bool) expression. Float expressions are
/// unbounded, except constants.
pub fn bounds_of(e: &Expr, scope: &Scope) -> Interval {
    bounds_raw(e, scope).simplified()
}

/// Calls `f` on every load in `e` with the `let` bindings around it in scope,
/// so that `bounds_of` its coordinates sees them.
pub fn visit_loads(e: &Expr, scope: &Scope, f: &mut impl FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Let { id, value, body } => {
            visit_loads(value, scope, f);
            let iv = if value.ty.is_float() {
                Interval::everything()
            } else {
                bounds_raw(value, scope)
            };
            scope.lets.borrow_mut().push((*id, iv));
            visit_loads(body, scope, f);
            scope.lets.borrow_mut().pop();
        }
        ExprKind::Load { .. } => {
            f(e);
            e.for_each_child(|c| visit_loads(c, scope, f));
        }
        _ => e.for_each_child(|c| visit_loads(c, scope, f)),
    }
}

fn to_i64(e: &Expr) -> Expr {
    Expr::cast(Type::I64, e.clone())
}

fn bounds_raw(e: &Expr, scope: &Scope) -> Interval {
    crate::deep(|| bounds_here(e, scope))
}

fn bounds_here(e: &Expr, scope: &Scope) -> Interval {
    use ExprKind as K;
    if e.ty.is_float() {
        return Interval::everything();
    }
    let result = match &e.kind {
        K::Int(v) => {
            if *v >= i64::MIN as i128 && *v <= i64::MAX as i128 {
                Interval::constant(*v, *v)
            } else {
                Interval::everything()
            }
        }
        K::Bool(b) => Interval::constant(*b as i128, *b as i128),
        K::Float(_) => Interval::everything(),
        K::Var(d) => scope
            .vars
            .get(*d)
            .cloned()
            .unwrap_or_else(Interval::everything),
        K::RVar(r) => scope
            .rvars
            .get(*r)
            .cloned()
            .unwrap_or_else(Interval::everything),
        K::Param(_) | K::InputMin(..) | K::InputExtent(..) => {
            if e.ty == Type::U64 {
                Interval::everything()
            } else {
                Interval::point(to_i64(e))
            }
        }
        K::Sym(_) => Interval::point(e.clone()),
        K::Loop(v) => scope
            .loops
            .iter()
            .find(|(l, _)| l == v)
            .map(|(_, iv)| iv.clone())
            .unwrap_or_else(|| Interval::point(e.clone())),
        K::LetVar(id) => scope
            .lets
            .borrow()
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, iv)| iv.clone())
            .unwrap_or_else(Interval::everything),
        K::Let { id, value, body } => {
            let iv = if value.ty.is_float() {
                Interval::everything()
            } else {
                bounds_raw(value, scope)
            };
            scope.lets.borrow_mut().push((*id, iv));
            let r = bounds_raw(body, scope);
            scope.lets.borrow_mut().pop();
            r
        }
        K::Load { source, .. } => match source {
            Source::Func(f) => {
                let v = (scope.func_value)(*f);
                if v.is_bounded() {
                    v
                } else {
                    Interval::of_type(e.ty)
                }
            }
            Source::Input(_) => Interval::of_type(e.ty),
        },
        K::Unary(op, a) => {
            let a = bounds_raw(a, scope);
            match op {
                UnOp::Neg => Interval {
                    min: a.max.map(|m| bin(BinOp::Sub, Expr::i64(0), m)),
                    max: a.min.map(|m| bin(BinOp::Sub, Expr::i64(0), m)),
                },
                UnOp::Abs => match (&a.min, &a.max) {
                    (Some(lo), Some(hi)) => Interval::new(
                        Expr::i64(0),
                        bin(
                            BinOp::Max,
                            bin(BinOp::Sub, Expr::i64(0), lo.clone()),
                            hi.clone(),
                        ),
                    ),
                    _ => Interval::everything(),
                },
                UnOp::Not if e.ty == Type::Bool => Interval::constant(0, 1),
                UnOp::Not if e.ty.is_signed() => Interval {
                    min: a.max.map(|m| bin(BinOp::Sub, Expr::i64(-1), m)),
                    max: a.min.map(|m| bin(BinOp::Sub, Expr::i64(-1), m)),
                },
                UnOp::Not => Interval::everything(),
            }
        }
        K::Binary(op, a, b) => {
            if op.is_comparison() || e.ty == Type::Bool {
                return Interval::constant(0, 1);
            }
            binary_bounds(*op, a, b, scope)
        }
        K::Select(c, a, b) => {
            let (ia, ib) = (bounds_raw(a, scope), bounds_raw(b, scope));
            // A condition fixed while the scope's variables range picks one
            // branch's bounds (split tails: `select(e >= n, min(o * n, e - n), o * n)`).
            let fixed = !c.any(&mut |n| match &n.kind {
                ExprKind::Var(_)
                | ExprKind::RVar(_)
                | ExprKind::Load { .. }
                | ExprKind::LetVar(_) => true,
                ExprKind::Loop(l) => scope.loops.iter().any(|(v, _)| v == l),
                _ => false,
            });
            match (fixed, ia.is_bounded() && ib.is_bounded()) {
                (true, true) => Interval::new(
                    Expr::select((**c).clone(), ia.min.unwrap(), ib.min.unwrap()),
                    Expr::select((**c).clone(), ia.max.unwrap(), ib.max.unwrap()),
                ),
                _ => ia.hull(&ib),
            }
        }
        K::Cast(a) => {
            if a.ty.is_float() {
                Interval::everything()
            } else {
                let inner = bounds_raw(a, scope);
                if represents_all(e.ty, a.ty) {
                    inner
                } else {
                    // Values that provably fit convert exactly. A clamp of a
                    // value in terms of variables has bounds in terms of
                    // them, but between the clamp's constants.
                    let (lo, hi) = match inner.clone().simplified().constants() {
                        Some((lo, hi)) => (Some(lo), Some(hi)),
                        None => (
                            inner.min.as_ref().and_then(|m| extremes(m).0),
                            inner.max.as_ref().and_then(|m| extremes(m).1),
                        ),
                    };
                    // An unsigned value is at least 0 whatever its bound
                    // says (a division's is that of a signed one).
                    let lo = match a.ty.is_signed() {
                        true => lo,
                        false => Some(lo.map_or(0, |lo| lo.max(0))),
                    };
                    match (lo, hi) {
                        (Some(lo), Some(hi)) if lo >= e.ty.int_min() && hi <= e.ty.int_max() => {
                            inner
                        }
                        _ => Interval::everything(),
                    }
                }
            }
        }
        K::SaturatingCast(a) => {
            let inner = if a.ty.is_float() {
                Interval::everything()
            } else {
                bounds_raw(a, scope)
            };
            if e.ty.bits() == 64 {
                inner
            } else {
                let (lo, hi) = (Expr::i64(e.ty.int_min()), Expr::i64(e.ty.int_max()));
                Interval {
                    min: Some(match inner.min {
                        Some(m) => bin(BinOp::Min, bin(BinOp::Max, m, lo.clone()), hi.clone()),
                        None => lo.clone(),
                    }),
                    max: Some(match inner.max {
                        Some(m) => bin(BinOp::Max, bin(BinOp::Min, m, hi.clone()), lo),
                        None => hi,
                    }),
                }
            }
        }
        K::Math(..) => Interval::everything(),
        K::Boundary {
            mode,
            coord,
            min,
            extent,
        } => {
            let c = bounds_raw(coord, scope);
            let lo = to_i64(min);
            let hi = bin(
                BinOp::Sub,
                bin(BinOp::Add, lo.clone(), to_i64(extent)),
                Expr::i64(1),
            );
            let top = bin(BinOp::Max, lo.clone(), hi.clone());
            let clamp = |v: Expr| bin(BinOp::Min, bin(BinOp::Max, v, lo.clone()), top.clone());
            match mode {
                BoundaryMode::ClampEdge => Interval {
                    min: Some(c.min.map(clamp).unwrap_or_else(|| lo.clone())),
                    max: Some(c.max.map(clamp).unwrap_or_else(|| top.clone())),
                },
                BoundaryMode::GuardedClamp => Interval {
                    min: Some(match c.min {
                        Some(m) => bin(BinOp::Max, m, lo.clone()),
                        None => lo.clone(),
                    }),
                    max: Some(match c.max {
                        Some(m) => bin(BinOp::Min, m, hi),
                        None => hi,
                    }),
                },
                BoundaryMode::Mirror | BoundaryMode::MirrorInterior | BoundaryMode::Wrap => {
                    Interval::new(lo.clone(), top)
                }
            }
        }
    };
    if !e.ty.is_int() {
        return result;
    }
    let fits = |(lo, hi): (i128, i128)| lo >= e.ty.int_min() && hi <= e.ty.int_max();
    // Narrow integer types wrap in practice: keep only provably fitting bounds.
    if e.ty.bits() <= 16 {
        return match result.clone().simplified().constants() {
            Some(c) if fits(c) => result,
            _ => Interval::of_type(e.ty),
        };
    }
    // Wider types wrap too. Arithmetic that can overflow, with an operand
    // unbounded on one side, has no bound on the other either (`3 + v` of
    // an unbounded u32 `v` wraps to 0).
    let overflows = matches!(
        &e.kind,
        K::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl, ..) | K::Unary(UnOp::Neg, _)
    );
    let result = match overflows && !result.is_bounded() {
        true => Interval::everything(),
        false => result,
    };
    // Constant bounds outside the type's range are no bounds (`(v as u32) -
    // 7` is near 2^32 for a small `v`). Bounds in terms of variables are
    // kept: they leave the type only on images of 2^31 pixels.
    let constants = match (&result.min, &result.max) {
        (Some(lo), Some(hi)) => constant(lo).zip(constant(hi)),
        _ => None,
    };
    let mut result = match constants {
        Some(c) if !fits(c) => Interval::everything(),
        _ => result,
    };
    if !e.ty.is_signed() {
        // u64 values beyond i64::MAX cannot be expressed as i64 bounds:
        // only constant bounds are kept (a clamp's).
        if e.ty.bits() == 64 && !constants.is_some_and(|c| fits(c) && c.1 <= i64::MAX as i128) {
            result = Interval::everything();
        }
        // Unsigned values are never negative, and one whose lower bound is
        // unknown may have wrapped (`0 - v`, `-v`), which voids its upper
        // bound: it lies in [0, +inf). That is also the lower bound a clamp
        // of it needs (`max(v, 0)` of an unsigned `v` simplifies to `v`).
        if result.min.is_none() {
            result = Interval {
                min: Some(Expr::i64(0)),
                max: None,
            };
        }
    }
    result
}

/// The exact value of a bound made of constants alone (arithmetic, `min`,
/// `max` and integer casts of them); `None` for a symbolic one. Cheaper than
/// simplifying, which the bounds of every subexpression would need: the
/// analysis folds the constant bounds it builds ([`bin`]), so this looks
/// only a few levels deep, and its cost does not grow with a bound.
fn constant(e: &Expr) -> Option<i128> {
    constant_within(e, 4)
}

fn constant_within(e: &Expr, depth: usize) -> Option<i128> {
    let depth = depth.checked_sub(1)?;
    let constant = |e: &Expr| constant_within(e, depth);
    crate::deep(|| match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Cast(a) if a.ty.is_int() && e.ty.is_int() => Some(e.ty.wrap(constant(a)?)),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (constant(a)?, constant(b)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div if b != 0 => Some(a.div_euclid(b)),
                BinOp::Min => Some(a.min(b)),
                BinOp::Max => Some(a.max(b)),
                _ => None,
            }
        }
        _ => None,
    })
}

/// The least and greatest values a bound can take whatever its symbols, where
/// its form says: `min(e, 5)` is at most 5, `max(e, 2)` at least 2. Looks
/// at most 8 levels deep (below, nothing is known), so that its cost does
/// not grow with the bound.
fn extremes(e: &Expr) -> (Option<i128>, Option<i128>) {
    extremes_within(e, 8)
}

fn extremes_within(e: &Expr, depth: usize) -> (Option<i128>, Option<i128>) {
    let Some(depth) = depth.checked_sub(1) else {
        return (None, None);
    };
    let extremes = |e: &Expr| extremes_within(e, depth);
    crate::deep(|| match &e.kind {
        ExprKind::Int(v) => (Some(*v), Some(*v)),
        ExprKind::Cast(a) if represents_all(e.ty, a.ty) => extremes(a),
        ExprKind::Binary(op, a, b) => {
            let ((alo, ahi), (blo, bhi)) = (extremes(a), extremes(b));
            let either = |x: Option<i128>, y: Option<i128>, f: fn(i128, i128) -> i128| match (x, y)
            {
                (Some(x), Some(y)) => Some(f(x, y)),
                (x, y) => x.or(y),
            };
            let both =
                |x: Option<i128>, y: Option<i128>, f: fn(i128, i128) -> Option<i128>| f(x?, y?);
            match op {
                BinOp::Min => (
                    both(alo, blo, |x, y| Some(x.min(y))),
                    either(ahi, bhi, i128::min),
                ),
                BinOp::Max => (
                    either(alo, blo, i128::max),
                    both(ahi, bhi, |x, y| Some(x.max(y))),
                ),
                BinOp::Add => (
                    both(alo, blo, i128::checked_add),
                    both(ahi, bhi, i128::checked_add),
                ),
                BinOp::Sub => (
                    both(alo, bhi, i128::checked_sub),
                    both(ahi, blo, i128::checked_sub),
                ),
                _ => (None, None),
            }
        }
        _ => (None, None),
    })
}

/// True when every value of `from` is a value of `to` (a widening conversion).
fn represents_all(to: Type, from: Type) -> bool {
    if from == Type::Bool {
        return to.is_int();
    }
    to.is_int() && from.is_int() && to.int_min() <= from.int_min() && to.int_max() >= from.int_max()
}

fn binary_bounds(op: BinOp, a: &Expr, b: &Expr, scope: &Scope) -> Interval {
    let (ia, ib) = (bounds_raw(a, scope), bounds_raw(b, scope));
    // Whether an operand folds to a constant, asked only by the operators
    // that need it: simplifying an operand at every node of a chain
    // `x + 1 + 1 + ...` simplified each prefix again, quadratic in its
    // length (2,000 terms took seconds).
    let folded = |e: &Expr| simplify(e).as_int();
    match op {
        BinOp::Add => Interval {
            min: both(ia.min, ib.min, BinOp::Add),
            max: both(ia.max, ib.max, BinOp::Add),
        },
        BinOp::Sub => Interval {
            min: both(ia.min, ib.max, BinOp::Sub),
            max: both(ia.max, ib.min, BinOp::Sub),
        },
        BinOp::Mul => {
            if let Some(c) = folded(b) {
                scale(ia, c)
            } else if let Some(c) = folded(a) {
                scale(ib, c)
            } else if ia.is_bounded() && ib.is_bounded() {
                let (a0, a1, b0, b1) = (
                    ia.min.unwrap(),
                    ia.max.unwrap(),
                    ib.min.unwrap(),
                    ib.max.unwrap(),
                );
                let p = [
                    bin(BinOp::Mul, a0.clone(), b0.clone()),
                    bin(BinOp::Mul, a0, b1.clone()),
                    bin(BinOp::Mul, a1.clone(), b0),
                    bin(BinOp::Mul, a1, b1),
                ];
                let fold = |op| {
                    p[1..]
                        .iter()
                        .fold(p[0].clone(), |acc, x| bin(op, acc, x.clone()))
                };
                Interval::new(fold(BinOp::Min), fold(BinOp::Max))
            } else {
                Interval::everything()
            }
        }
        BinOp::Div => match folded(b) {
            Some(0) => Interval::constant(0, 0),
            Some(c) if c > 0 => ia.map(|m| bin(BinOp::Div, m, Expr::i64(c))),
            Some(c) => Interval {
                min: ia
                    .max
                    .map(|m| bin(BinOp::Sub, Expr::i64(0), bin(BinOp::Div, m, Expr::i64(-c)))),
                max: ia
                    .min
                    .map(|m| bin(BinOp::Sub, Expr::i64(0), bin(BinOp::Div, m, Expr::i64(-c)))),
            },
            None => magnitude(&ia),
        },
        BinOp::Rem => match folded(b) {
            Some(0) => Interval::constant(0, 0),
            Some(c) => Interval::constant(0, c.abs() - 1),
            None => match magnitude(&ib).max {
                Some(m) => Interval::new(
                    Expr::i64(0),
                    bin(BinOp::Max, Expr::i64(0), bin(BinOp::Sub, m, Expr::i64(1))),
                ),
                None => Interval::everything(),
            },
        },
        BinOp::Min => Interval {
            min: both(ia.min, ib.min, BinOp::Min),
            max: either(ia.max, ib.max, BinOp::Min),
        },
        BinOp::Max => Interval {
            min: either(ia.min, ib.min, BinOp::Max),
            max: both(ia.max, ib.max, BinOp::Max),
        },
        BinOp::And => match (folded(a), folded(b)) {
            (_, Some(c)) | (Some(c), _) if c >= 0 => Interval::constant(0, c),
            _ if !a.ty.is_signed() && ia.is_bounded() && ib.is_bounded() => Interval {
                min: Some(Expr::i64(0)),
                max: both(ia.max, ib.max, BinOp::Min),
            },
            _ => Interval::everything(),
        },
        // The amount is taken modulo the bit width (`v >> 9` of an i8 is
        // `v >> 1`).
        BinOp::Shl => match folded(b).map(|k| k.rem_euclid(a.ty.bits() as i128)) {
            Some(k) if (0..62).contains(&k) => scale(ia, 1i128 << k),
            _ => Interval::everything(),
        },
        BinOp::Shr => match folded(b).map(|k| k.rem_euclid(a.ty.bits() as i128)) {
            Some(k) if (0..63).contains(&k) => {
                ia.map(|m| bin(BinOp::Div, m, Expr::i64(1i128 << k)))
            }
            _ => Interval::everything(),
        },
        _ => Interval::everything(),
    }
}

fn scale(i: Interval, c: i128) -> Interval {
    let m = |e: Expr| bin(BinOp::Mul, e, Expr::i64(c));
    if c >= 0 {
        i.map(m)
    } else {
        Interval {
            min: i.max.map(m),
            max: i.min.map(m),
        }
    }
}

/// `[-M, M]` where `M` bounds the magnitude of the interval's values.
fn magnitude(i: &Interval) -> Interval {
    match (&i.min, &i.max) {
        (Some(lo), Some(hi)) => {
            let m = bin(
                BinOp::Max,
                bin(BinOp::Sub, Expr::i64(0), lo.clone()),
                hi.clone(),
            );
            Interval::new(bin(BinOp::Sub, Expr::i64(0), m.clone()), m)
        }
        _ => Interval::everything(),
    }
}

#[cfg(test)]
mod tests;
