//! Upper bounds on the values of unsigned integer expressions: what a
//! vector division can rely on (a `u32` sum of three `u16` values stays
//! below 2^18, so dividing it by 3 can go through `f32`).
//!
//! ```text
//! blur_x(x, y) = (in(x-1, y) as u32 + in(x, y) as u32 + in(x+1, y) as u32) / 3   // <= 65535
//! out(x, y) = (blur_x(x, y-1) + blur_x(x, y) + blur_x(x, y+1)) / 3                  // sum <= 196605
//! ```
//!
//! A bound holds for every value the expression can take, whatever the
//! inputs: arithmetic that could wrap has no bound. Loads of a func take the
//! bound of its pure definition when it has no updates.

use crate::hash::HashMap;
use crate::ir::*;
use std::cell::RefCell;

/// The value bounds of one pipeline's expressions (funcs memoized).
pub struct ValueBounds<'p> {
    p: &'p Pipeline,
    funcs: RefCell<HashMap<FuncId, Option<u128>>>,
}

impl<'p> ValueBounds<'p> {
    /// The bounds of expressions of `p`.
    pub fn new(p: &'p Pipeline) -> ValueBounds<'p> {
        ValueBounds {
            p,
            funcs: Default::default(),
        }
    }

    /// An upper bound on `e`, which must be of an unsigned integer type;
    /// `None` when there is none below the type's maximum.
    pub fn max(&self, e: &Expr) -> Option<u128> {
        let b = self.bound(e, &mut HashMap::default())?;
        (b < e.ty.int_max() as u128).then_some(b)
    }

    /// A bound of unsigned `e` (its type's maximum at worst); `None` for a
    /// type that is not unsigned. `lets` holds the bounds of enclosing
    /// `let` values.
    fn bound(&self, e: &Expr, lets: &mut HashMap<usize, u128>) -> Option<u128> {
        if !e.ty.is_int() || e.ty.is_signed() {
            return None;
        }
        let top = e.ty.int_max() as u128;
        let sub = |x: &Expr, lets: &mut HashMap<usize, u128>| {
            crate::deep(|| self.bound(x, lets)).unwrap_or(top)
        };
        let b = match &e.kind {
            ExprKind::Int(v) => u128::try_from(*v).ok()?,
            ExprKind::Cast(a) if a.ty.is_int() && !a.ty.is_signed() => sub(a, lets),
            ExprKind::Binary(op, a, b) if a.ty == e.ty => {
                let (x, y) = (sub(a, lets), sub(b, lets));
                match op {
                    BinOp::Add => x.saturating_add(y),
                    BinOp::Mul => x.saturating_mul(y),
                    BinOp::Div => match b.as_int() {
                        Some(d) if d > 0 => x / d as u128,
                        _ => x,
                    },
                    BinOp::Shr => match b.as_int() {
                        Some(s) if (0..e.ty.bits() as i128).contains(&s) => x >> s,
                        _ => x,
                    },
                    BinOp::Min | BinOp::And => x.min(y),
                    BinOp::Max => x.max(y),
                    BinOp::Rem => match b.as_int() {
                        Some(d) if d > 0 => x.min(d as u128 - 1),
                        _ => x,
                    },
                    _ => top,
                }
            }
            ExprKind::Select(_, a, b) => sub(a, lets).max(sub(b, lets)),
            ExprKind::Let { id, value, body } => {
                let v = self.bound(value, lets);
                let outer = match v {
                    Some(v) => lets.insert(*id, v),
                    None => lets.remove(id),
                };
                let b = sub(body, lets);
                match outer {
                    Some(o) => lets.insert(*id, o),
                    None => lets.remove(id),
                };
                b
            }
            ExprKind::LetVar(id) => lets.get(id).copied().unwrap_or(top),
            ExprKind::Load {
                source: Source::Func(g),
                ..
            } => self.func(*g).unwrap_or(top),
            _ => top,
        };
        // Past the type's maximum the value wrapped: no bound.
        Some(if b > top { top } else { b })
    }

    /// The bound of every value func `g` stores.
    fn func(&self, g: FuncId) -> Option<u128> {
        if let Some(&b) = self.funcs.borrow().get(&g) {
            return b;
        }
        let f = &self.p.funcs[g];
        let b = if f.updates.is_empty() {
            self.bound(&f.pure, &mut HashMap::default())
        } else {
            None
        };
        self.funcs.borrow_mut().insert(g, b);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(ty: Type) -> Expr {
        Expr::new(
            ExprKind::Load {
                source: Source::Input(0),
                args: vec![],
                site: 0,
            },
            ty,
        )
    }

    fn pipeline() -> Pipeline {
        Pipeline {
            name: "p".into(),
            inputs: vec![],
            params: vec![],
            arg_order: vec![],
            funcs: vec![],
            outputs: vec![],
        }
    }

    #[test]
    fn sums_of_widened_values_are_bounded() {
        let p = pipeline();
        let v = ValueBounds::new(&p);
        let w = || Expr::cast(Type::U32, load(Type::U16));
        let sum = Expr::binary(BinOp::Add, Expr::binary(BinOp::Add, w(), w()), w());
        assert_eq!(v.max(&sum), Some(3 * 65535));
        let third = Expr::binary(BinOp::Div, sum.clone(), Expr::int(Type::U32, 3));
        assert_eq!(v.max(&third), Some(65535));
        // A sum that may wrap has no bound.
        let big = Expr::binary(BinOp::Mul, sum, Expr::int(Type::U32, 1 << 20));
        assert_eq!(v.max(&big), None);
        // Signed values have none either.
        assert_eq!(v.max(&load(Type::I32)), None);
        assert_eq!(v.max(&load(Type::U32)), None);
    }
}
