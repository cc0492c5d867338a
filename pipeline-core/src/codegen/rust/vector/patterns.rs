//! Arithmetic the vector code computes by cheaper instructions than its
//! operations spelt out, when value bounds allow: a `u32` division by a
//! constant as an `f32` multiply, unsigned narrowings of values that fit
//! (packs alone), and rounding averages (`pavgb`/`pavgw`).

use super::*;

impl Lanes<'_, '_> {
    /// For `a / b` of `u32` by a constant `b` that is not a power of two,
    /// where `a` stays below 2^20: the `f32` just above `1 / b` when
    /// `trunc(a * it)` is `a / b` for every value `a` can take (checked
    /// here, one by one). The division is then a conversion, a multiply
    /// and a truncation instead of two 64-bit multiplies, shifts and a
    /// blend (the 3x3 blur divides sums of three `u16` by 3).
    pub(super) fn f32_reciprocal(&self, a: &Expr, b: &Expr) -> Option<f32> {
        const MAX_CHECKED: u128 = 1 << 20;
        let d = u32::try_from(b.as_int()?).ok()?;
        if a.ty != Type::U32 || d < 3 || d.is_power_of_two() {
            return None;
        }
        let bound = self.g.values.max(a).filter(|&m| m < MAX_CHECKED)? as u32;
        // Partitioned loops emit the same division several times: check
        // each divisor and bound once.
        let mut checked = self.g.f32_reciprocals.borrow_mut();
        *checked.entry((d, bound)).or_insert_with(|| {
            let mut m = 1.0f32 / d as f32;
            if (m as f64) * (d as f64) < 1.0 {
                m = f32::from_bits(m.to_bits() + 1);
            }
            (0..=bound)
                .all(|x| ((x as f32) * m) as u32 == x / d)
                .then_some(m)
        })
    }

    /// Whether `a as to` is an unsigned narrowing (`u32` to `u16` or `u8`,
    /// `u16` to `u8`) of values that all fit in `to`, by `a`'s value
    /// bounds: truncating is then saturating, and the x86 levels narrow
    /// with their packs alone (rt::simd::NarrowFitting).
    pub(super) fn narrows_fitting(&self, a: &Expr, to: Type) -> bool {
        matches!(
            (a.ty, to),
            (Type::U16, Type::U8) | (Type::U32, Type::U16) | (Type::U32, Type::U8)
        ) && self
            .g
            .values
            .max(a)
            .is_some_and(|m| m <= to.int_max() as u128)
    }

    /// The operands `(a, b)` of a rounding average `(a + b + 1) >> 1` that
    /// `e` computes without wrapping, with `a` and `b` of type `u8` or `u16`
    /// (`pavgb`/`pavgw`): operands widened from that type, the average
    /// maybe narrowed back (`((a as u16 + b as u16 + 1) >> 1) as u8`), or
    /// operands of that type whose value bounds keep the sum from wrapping.
    /// The average is computed in the operands' type, then widened to `e`'s.
    pub(super) fn rounding_average<'e>(&self, e: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
        let small = |t: Type| matches!(t, Type::U8 | Type::U16);
        let widened = |x: &'e Expr, y: &'e Expr, wide: Type| match (&x.kind, &y.kind) {
            (ExprKind::Cast(a), ExprKind::Cast(b))
                if a.ty == b.ty && small(a.ty) && a.ty.bits() < wide.bits() =>
            {
                Some((&**a, &**b))
            }
            _ => None,
        };
        if let ExprKind::Cast(inner) = &e.kind {
            if let Some((x, y)) = average_operands(inner) {
                if let Some((a, b)) = widened(x, y, inner.ty).filter(|(a, _)| a.ty == e.ty) {
                    return Some((a, b));
                }
            }
        }
        let (x, y) = average_operands(e)?;
        if let Some(ab) = widened(x, y, e.ty) {
            return Some(ab);
        }
        if !small(e.ty) {
            return None;
        }
        let (mx, my) = (self.g.values.max(x)?, self.g.values.max(y)?);
        (mx + my < e.ty.int_max() as u128).then_some((x, y))
    }
}

/// The operands `a` and `b` of unsigned `e` of the form `(a + b + 1) >> 1`
/// or `(a + b + 1) / 2`, the three terms in any order and grouping.
fn average_operands(e: &Expr) -> Option<(&Expr, &Expr)> {
    fn terms<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match &e.kind {
            ExprKind::Binary(BinOp::Add, a, b) if out.len() < 4 => {
                terms(a, out);
                terms(b, out);
            }
            _ => out.push(e),
        }
    }
    if !e.ty.is_int() || e.ty.is_signed() {
        return None;
    }
    let ExprKind::Binary(op, sum, k) = &e.kind else {
        return None;
    };
    if !matches!(
        (op, k.as_int()),
        (BinOp::Shr, Some(1)) | (BinOp::Div, Some(2))
    ) {
        return None;
    }
    let mut t = Vec::new();
    terms(sum, &mut t);
    let one = t.iter().position(|x| x.as_int() == Some(1))?;
    t.remove(one);
    match t.as_slice() {
        [a, b] => Some((a, b)),
        _ => None,
    }
}
