//! `u8` arithmetic in the x86 registers' block order
//! ([`pipeline::rt::simd::U8Blocks`]).
//!
//! A narrowing to `u8` of a `u16` value that fits, computed from `u8`
//! values widened to `u16` and uniform values by lane-wise operations only,
//! is emitted with the bytes widened within 128-bit blocks, the arithmetic
//! done in that order, and the result packed back within the blocks: no
//! cross-block permute, where widening and packing in order take one per
//! register at AVX2 and AVX-512. Terms of a sum that are widened bytes times
//! small constants go in pairs through `pmaddubsw` (two multiplies and
//! their sum in one instruction):
//!
//! ```text
//! ((a as u16 + 4 * (b as u16) + 6 * (c as u16) + 8) >> 4) as u8
//!   -> narrow_blocks((mul_add_pairs(a, b, 1, 4) + widen_blocks(c) * 6 + 8) >> 4)
//! ```
//!
//! A 5x5 binomial Gaussian of `u8` rounded after each pass (libblur's
//! arithmetic) is two such trees: the shape of libblur's own AVX2 loops
//! (`benches/libblur`).

use super::{lane_op, Lanes, R};
use crate::codegen::code::{suffixed_lit, Code};
use crate::ir::*;
use pipeline_code::code;

/// A term of a sum: a `u8` value widened to `u16`, times a weight that
/// `pmaddubsw` can take (at most 127).
struct Weighted<'e> {
    byte: &'e Expr,
    weight: u8,
}

impl Lanes<'_, '_> {
    /// Whether `(a as u8)`, a narrowing of `u16` values that all fit, is
    /// computed in block order: `a` takes only lane-wise operations of
    /// widened bytes and uniform values, and a sum in it has two weighted
    /// bytes to pair (else the widening within blocks costs as much as it
    /// saves).
    pub(super) fn narrows_in_blocks(&self, a: &Expr) -> bool {
        a.ty == Type::U16 && self.in_blocks(a) && self.has_pair(a)
    }

    /// The lanes of `(a as u8)` (see [`Lanes::narrows_in_blocks`]).
    pub(super) fn narrow_in_blocks(&self, a: &Expr) -> R<Code> {
        // Computed as registers of the bytes' width at every level (an
        // AVX-512 kernel would join two 256-bit halves and split them
        // again: `Needs::narrow`).
        self.computes(Type::U8);
        let v = self.vec_blocks(a)?;
        self.bind_array(
            code!(u8),
            code!(::pipeline::rt::simd::U8Blocks::narrow_blocks(__isa, #v)),
        )
    }

    /// Whether `e` (of type `u16`) is computed from widened bytes and
    /// uniform values by operations that treat every lane alike.
    fn in_blocks(&self, e: &Expr) -> bool {
        crate::deep(|| self.in_blocks_here(e))
    }

    fn in_blocks_here(&self, e: &Expr) -> bool {
        if e.ty != Type::U16 {
            return false;
        }
        if self.is_uniform(e) {
            return true;
        }
        match &e.kind {
            ExprKind::Cast(x) => x.ty == Type::U8 || (x.ty == Type::U16 && self.in_blocks(x)),
            ExprKind::Binary(op, a, b) => match op {
                BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Min
                | BinOp::Max
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor => self.in_blocks(a) && self.in_blocks(b),
                BinOp::Shl | BinOp::Shr | BinOp::Div => self.is_uniform(b) && self.in_blocks(a),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether some sum in `e` has two weighted bytes that pair. Each sum
    /// is flattened once, at its outermost addition, and the search goes
    /// on in its terms (visiting every addition of a chain would flatten
    /// the chain again at each one: quadratic in its length).
    fn has_pair(&self, e: &Expr) -> bool {
        crate::deep(|| {
            if matches!(e.kind, ExprKind::Binary(BinOp::Add, ..)) && e.ty == Type::U16 {
                let terms = add_terms(e);
                let (pairs, _, _) = pair_up(terms.iter().map(|t| (*t, weighted(t))).collect());
                !pairs.is_empty() || terms.iter().any(|t| self.has_pair(t))
            } else {
                super::children(e).into_iter().any(|c| self.has_pair(c))
            }
        })
    }

    /// `e`'s lanes in block order, as an array `[u16; W]` (for `e` that
    /// [`Lanes::in_blocks`] admits).
    fn vec_blocks(&self, e: &Expr) -> R<Code> {
        crate::deep(|| self.vec_blocks_here(e))
    }

    fn vec_blocks_here(&self, e: &Expr) -> R<Code> {
        // `rt::simd`, imported under this name by the entry (`generate`).
        let simd = code!(__simd);
        let w = self.lanes_lit();
        if self.is_uniform(e) {
            let (f, k) = self.stage.get();
            let v = self.g.expr(e, f, k);
            return Ok(code!([#v; #w]));
        }
        let u16_ = code!(u16);
        match &e.kind {
            ExprKind::Cast(x) if x.ty == Type::U8 => {
                let x = self.vec(x)?;
                self.bind_array(u16_, code!(#simd::U8Blocks::widen_blocks(__isa, #x)))
            }
            ExprKind::Cast(x) => self.vec_blocks(x),
            ExprKind::Binary(BinOp::Add, ..) => {
                let terms = add_terms(e);
                let (pairs, single, rest) =
                    pair_up(terms.iter().map(|t| (*t, weighted(t))).collect());
                let mut parts = Vec::new();
                for (p, q) in pairs {
                    let (x, y) = (self.vec(p.byte)?, self.vec(q.byte)?);
                    let (wa, wb) = (suffixed_lit!(u8, p.weight), suffixed_lit!(u8, q.weight));
                    parts.push(self.bind_array(
                        u16_.clone(),
                        code!(#simd::U8Blocks::mul_add_pairs(__isa, #x, #y, #wa, #wb)),
                    )?);
                }
                for t in single {
                    let x = self.vec(t.byte)?;
                    let widened = self.bind_array(
                        u16_.clone(),
                        code!(#simd::U8Blocks::widen_blocks(__isa, #x)),
                    )?;
                    parts.push(if t.weight == 1 {
                        widened
                    } else {
                        let c = suffixed_lit!(u16, t.weight as u16);
                        self.bind_array(u16_.clone(), code!(__A::mul(__isa, #widened, [#c; #w])))?
                    });
                }
                for t in rest {
                    parts.push(self.vec_blocks(t)?);
                }
                let mut sum = parts.remove(0);
                for p in parts {
                    sum = self.bind_array(u16_.clone(), code!(__A::add(__isa, #sum, #p)))?;
                }
                Ok(sum)
            }
            ExprKind::Binary(op, a, b) => {
                let x = self.vec_blocks(a)?;
                let (f, k) = self.stage.get();
                let call = match op {
                    BinOp::Shl | BinOp::Shr => {
                        let s = self.g.expr(b, f, k);
                        let op = lane_op(*op).expect("a shift has a lane operation");
                        code!(#op(__isa, #x, (#s) as u32))
                    }
                    BinOp::Div => {
                        let d = self.g.expr(b, f, k);
                        code!(__A::div_by(__isa, #x, #d))
                    }
                    _ => {
                        let y = self.vec_blocks(b)?;
                        let op = lane_op(*op).expect("in_blocks admits no other operator");
                        code!(#op(__isa, #x, #y))
                    }
                };
                self.bind_array(u16_, call)
            }
            _ => unreachable!("in_blocks admits no other node"),
        }
    }
}

/// The terms of a sum of `u16` values, in order, through nested additions.
fn add_terms(e: &Expr) -> Vec<&Expr> {
    fn go<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match &e.kind {
            ExprKind::Binary(BinOp::Add, a, b) if e.ty == Type::U16 => {
                go(a, out);
                go(b, out);
            }
            _ => out.push(e),
        }
    }
    let mut out = Vec::new();
    go(e, &mut out);
    out
}

/// `t` as a widened byte times a weight of at most 127: `b as u16`,
/// `c * (b as u16)` or `(b as u16) * c`, `(b as u16) << s`.
fn weighted(t: &Expr) -> Option<Weighted<'_>> {
    fn byte(x: &Expr) -> Option<&Expr> {
        match &x.kind {
            ExprKind::Cast(b) if x.ty == Type::U16 && b.ty == Type::U8 => Some(b),
            _ => None,
        }
    }
    let small = |c: i128| u8::try_from(c).ok().filter(|&c| c <= 127);
    let (b, weight) = match &t.kind {
        ExprKind::Cast(_) => (byte(t)?, 1),
        ExprKind::Binary(BinOp::Mul, p, q) => match (byte(p), byte(q)) {
            (Some(b), None) => (b, small(q.as_int()?)?),
            (None, Some(b)) => (b, small(p.as_int()?)?),
            _ => return None,
        },
        ExprKind::Binary(BinOp::Shl, p, q) => {
            let s = q.as_int().filter(|s| (0..7).contains(s))?;
            (byte(p)?, small(1 << s)?)
        }
        _ => return None,
    };
    Some(Weighted { byte: b, weight })
}

/// Pairs weighted terms, in order, whose weights sum to at most 128 (so
/// that `pmaddubsw`'s 16-bit sums cannot saturate): the pairs, the weighted
/// terms left single, and the other terms.
#[allow(clippy::type_complexity)]
fn pair_up<'e>(
    terms: Vec<(&'e Expr, Option<Weighted<'e>>)>,
) -> (
    Vec<(Weighted<'e>, Weighted<'e>)>,
    Vec<Weighted<'e>>,
    Vec<&'e Expr>,
) {
    let (mut pairs, mut single, mut rest) = (Vec::new(), Vec::<Weighted>::new(), Vec::new());
    for (t, w) in terms {
        match w {
            None => rest.push(t),
            Some(w) => match single
                .iter()
                .position(|s| s.weight as u16 + w.weight as u16 <= 128)
            {
                Some(i) => pairs.push((single.remove(i), w)),
                None => single.push(w),
            },
        }
    }
    (pairs, single, rest)
}
