//! How a consumer reads a producer (the reuse analysis of Sioutas et al.:
//! per edge, per dimension, the offsets at which it reads), and what a
//! definition costs.

use crate::ir::{BinOp, Expr, ExprKind, FuncId, Pipeline, Source};

/// One coordinate of a read, as a function of the consumer's variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coord {
    /// `v + k` (under a boundary condition or not).
    Shift {
        /// The consumer's dimension.
        var: usize,
        /// The offset.
        k: i64,
    },
    /// `a * v + k` or `v / a`: another resolution.
    Scaled,
    /// A constant.
    Const,
    /// Anything else: a reduction variable, a data-dependent coordinate.
    Other,
}

/// Classifies one coordinate expression.
pub fn coord(e: &Expr) -> Coord {
    match &e.kind {
        ExprKind::Boundary { coord: c, .. } => coord(c),
        ExprKind::Var(v) => Coord::Shift { var: *v, k: 0 },
        ExprKind::Int(_) => Coord::Const,
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let (inner, k) = match (coord(a), b.as_int(), a.as_int()) {
                (c, Some(k), _) => (c, if *op == BinOp::Add { k } else { -k }),
                (_, None, Some(k)) if *op == BinOp::Add => (coord(b), k),
                _ => return Coord::Other,
            };
            match inner {
                Coord::Shift { var, k: k0 } => Coord::Shift {
                    var,
                    k: k0.saturating_add(i64::try_from(k).unwrap_or(i64::MAX)),
                },
                Coord::Const => Coord::Const,
                Coord::Scaled => Coord::Scaled,
                Coord::Other => Coord::Other,
            }
        }
        ExprKind::Binary(BinOp::Mul | BinOp::Div | BinOp::Shl | BinOp::Shr, a, b)
            if b.as_int().is_some() || a.as_int().is_some() =>
        {
            match (coord(a), coord(b)) {
                (Coord::Shift { .. } | Coord::Scaled, _)
                | (_, Coord::Shift { .. } | Coord::Scaled) => Coord::Scaled,
                (Coord::Const, Coord::Const) => Coord::Const,
                _ => Coord::Other,
            }
        }
        _ => Coord::Other,
    }
}

/// How a consumer's pure definition reads a producer.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The consumer.
    pub consumer: FuncId,
    /// How many reads of the producer it makes.
    pub reads: usize,
    /// Per producer dimension, the range of offsets `[lo, hi]` when every
    /// read's coordinate there is the consumer's own variable of that
    /// dimension plus a constant; `None` if any read is otherwise.
    pub shifts: Vec<Option<(i64, i64)>>,
    /// The consumer reads it from an update definition.
    pub in_update: bool,
    /// Every read's coordinate in each dimension is a function of the
    /// consumer's own variable of that dimension alone: shifted, or at
    /// another resolution (`2 * y + k`, `y / 2 + k`).
    pub resampled: bool,
}

impl Edge {
    /// Every read is at the consumer's own point.
    pub fn pointwise(&self) -> bool {
        !self.in_update && self.shifts.iter().all(|s| *s == Some((0, 0)))
    }

    /// Every read is the consumer's point shifted by constants, dimension
    /// for dimension: the producer can be computed a row at a time beside
    /// the consumer.
    pub fn stencil(&self) -> bool {
        !self.in_update && self.shifts.iter().all(Option::is_some)
    }

    /// Every read is the consumer's point, shifted or at another
    /// resolution, dimension for dimension (a pyramid level's passes):
    /// the producer can be computed for each of the consumer's strips,
    /// the rows the strip reads.
    pub fn resampled(&self) -> bool {
        !self.in_update && self.resampled
    }

    /// How many more rows (in dimension `d`) than the consumer's a read needs.
    pub fn overlap(&self, d: usize) -> i64 {
        match self.shifts.get(d).copied().flatten() {
            Some((lo, hi)) => hi - lo,
            None => 0,
        }
    }
}

/// The one pure variable `e` names, if it names exactly one.
fn only_var(e: &Expr) -> Option<usize> {
    let mut found: Option<Option<usize>> = None;
    e.visit(&mut |n| {
        if let ExprKind::Var(v) = n.kind {
            found = match found {
                None => Some(Some(v)),
                Some(Some(w)) if w == v => Some(Some(v)),
                _ => Some(None),
            };
        }
    });
    found.flatten()
}

/// Every consumer of `f` with how it reads `f`.
pub fn edges(p: &Pipeline, f: FuncId, consumers: &[FuncId]) -> Vec<Edge> {
    consumers
        .iter()
        .map(|&c| {
            let dims = p.funcs[f].dims();
            let mut edge = Edge {
                consumer: c,
                reads: 0,
                shifts: vec![Some((i64::MAX, i64::MIN)); dims],
                in_update: false,
                resampled: true,
            };
            for (update, e) in p.definition_exprs(c) {
                e.visit(&mut |n| {
                    let ExprKind::Load { source, args, .. } = &n.kind else {
                        return;
                    };
                    if *source != Source::Func(f) {
                        return;
                    }
                    edge.reads += 1;
                    edge.in_update |= update.is_some();
                    for (d, a) in args.iter().enumerate() {
                        edge.resampled &= match coord(a) {
                            Coord::Shift { var, .. } => var == d,
                            Coord::Scaled => only_var(a) == Some(d),
                            _ => false,
                        };
                        edge.shifts[d] = match (edge.shifts[d], coord(a)) {
                            (Some((lo, hi)), Coord::Shift { var, k }) if var == d => {
                                Some((lo.min(k), hi.max(k)))
                            }
                            _ => None,
                        };
                    }
                });
            }
            edge
        })
        .collect()
}

/// Reads `f`'s definition makes of funcs and inputs, all at its own point
/// (or at constants, such as a channel): a pointwise func.
pub fn reads_pointwise(p: &Pipeline, f: FuncId) -> bool {
    let mut ok = p.funcs[f].updates.is_empty();
    p.funcs[f].pure.visit(&mut |n| {
        if let ExprKind::Load { args, .. } = &n.kind {
            ok &= args.iter().enumerate().all(|(d, a)| match coord(a) {
                Coord::Shift { var, k } => var == d && k == 0,
                Coord::Const => true,
                _ => false,
            });
        }
    });
    ok
}

/// `f`'s definition reads some func or input at a coordinate that is not
/// its own variable shifted or scaled (one computed from data, as a
/// bilateral grid's slice or a lookup table does): each lane may load from
/// its own address, a load per lane or a gather instruction, neither of
/// which goes faster in wider registers: such a func keeps 32-byte
/// vectors. Measured at the AVX-512 level on a Xeon (3840x2160, `cargo
/// pipeline tune --report` unless said): a u8 image through a 256-entry u8
/// table, 64 lanes against 32, ran 1.15-1.16x slower while each lane was
/// one load, and since the gathers of 8-bit elements use the gather
/// instruction, 0.95 on noise and 1.11 on a smooth ramp (a bench of its
/// own); an f32 table read at u16 indices, 16 lanes against 8, 1.00-1.01;
/// the bilateral grid's slice, 16 lanes against 8, 1.00-1.01 while its
/// taps went a load a lane (the same schedule against itself 0.99-1.00),
/// since they are gathered in whole registers (7474f03) 0.86 on the
/// tuner's inputs, but 23.0-23.9 ms against 23.0-23.5 on compare.py's
/// (`halide_compare`). A wash, not a loss: kept.
pub fn gathers(p: &Pipeline, f: FuncId) -> bool {
    let mut found = false;
    p.funcs[f].pure.visit(&mut |n| {
        if let ExprKind::Load { args, .. } = &n.kind {
            found |= args.iter().any(|a| coord(a) == Coord::Other);
        }
    });
    found
}

/// The work of evaluating an expression once, in rough units of one
/// vector operation: a load or an arithmetic operation counts 1, a
/// transcendental function 20.
pub fn cost(e: &Expr) -> usize {
    let mut n = 0usize;
    e.visit(&mut |x| {
        n += match &x.kind {
            ExprKind::Load { .. }
            | ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Select(..)
            | ExprKind::Cast(_)
            | ExprKind::SaturatingCast(_) => 1,
            ExprKind::Math(m, _) => match m {
                crate::ir::MathFn::Floor
                | crate::ir::MathFn::Ceil
                | crate::ir::MathFn::Round
                | crate::ir::MathFn::Trunc
                | crate::ir::MathFn::Sqrt
                | crate::ir::MathFn::Fma => 1,
                _ => 20,
            },
            _ => 0,
        }
    });
    n
}

/// The arithmetic of an expression: [`cost`] less its loads and the casts
/// that only widen them.
pub fn arithmetic(e: &Expr) -> usize {
    let mut loads = 0usize;
    e.visit(&mut |x| {
        if matches!(x.kind, ExprKind::Load { .. }) {
            loads += 1;
        }
        if let ExprKind::Cast(a) = &x.kind {
            if matches!(a.kind, ExprKind::Load { .. }) {
                loads += 1;
            }
        }
    });
    cost(e).saturating_sub(loads)
}
