//! Integer and float arithmetic with the DSL's semantics (the guide's *Expressions and types*).
//!
//! Generated code never uses Rust's `/`, `%`, `<<` or `>>` on integers, because
//! those panic (division by zero, `MIN / -1`, oversized shifts) and round toward
//! zero. The DSL's operators never panic, in any build profile:
//!
//! ```text
//! (-7).div_e(2) == -4    (-7).rem_e(2) == 1     // Euclidean: 0 <= a % b < |b|
//! 5.div_e(0) == 0        5.rem_e(0) == 0        // division by zero gives zero
//! 1u8.shl_w(9) == 2                              // the amount is taken modulo the width
//! ```

/// Integer operators of the DSL, for the eight integer element types.
pub trait IntOps: Copy {
    /// Euclidean division: `a == a.div_e(b) * b + a.rem_e(b)` with
    /// `0 <= a.rem_e(b) < |b|`. Division by zero gives 0, and `MIN / -1` wraps
    /// to `MIN`.
    fn div_e(self, rhs: Self) -> Self;
    /// Euclidean remainder, always in `0..|b|`; the remainder by zero is 0.
    fn rem_e(self, rhs: Self) -> Self;
    /// Left shift by `amount` modulo the bit width.
    fn shl_w(self, amount: u32) -> Self;
    /// Right shift by `amount` modulo the bit width: arithmetic (sign-filling) for
    /// signed types, logical for unsigned ones.
    fn shr_w(self, amount: u32) -> Self;
}

macro_rules! impl_int_ops {
    ($($ty:ty)*) => {
        $(
            impl IntOps for $ty {
                #[inline(always)]
                fn div_e(self, rhs: Self) -> Self {
                    if rhs == 0 { 0 } else { self.wrapping_div_euclid(rhs) }
                }

                #[inline(always)]
                fn rem_e(self, rhs: Self) -> Self {
                    if rhs == 0 { 0 } else { self.wrapping_rem_euclid(rhs) }
                }

                #[inline(always)]
                fn shl_w(self, amount: u32) -> Self {
                    self.wrapping_shl(amount)
                }

                #[inline(always)]
                fn shr_w(self, amount: u32) -> Self {
                    self.wrapping_shr(amount)
                }
            }
        )*
    };
}

impl_int_ops!(u8 u16 u32 u64 i8 i16 i32 i64);

/// Float operators of the DSL, for `f32` and `f64`.
pub trait FloatOps: Copy {
    /// The floored remainder `a - b * floor(a / b)`, which has the sign of `b`
    /// (like Halide's float `%`, unlike Rust's, which has the sign of `a`).
    fn rem_f(self, rhs: Self) -> Self;
    /// The smaller of `self` and `rhs`, a NaN operand ignored, and `self`
    /// when they are equal: `min_f(0.0, -0.0)` is `0.0`. Rust's `min` leaves
    /// the zero unspecified (optimized builds differ from debug builds);
    /// this is what the vector instructions give at every level.
    fn min_f(self, rhs: Self) -> Self;
    /// The larger, as [`FloatOps::min_f`].
    fn max_f(self, rhs: Self) -> Self;
}

macro_rules! impl_float_ops {
    ($($ty:ty)*) => {
        $(
            impl FloatOps for $ty {
                #[inline(always)]
                fn rem_f(self, rhs: Self) -> Self {
                    // Written out exactly so that every back end (scalar, SIMD,
                    // CUDA) rounds the same way.
                    self - rhs * (self / rhs).floor()
                }
                #[inline(always)]
                fn min_f(self, rhs: Self) -> Self {
                    if rhs < self || self.is_nan() { rhs } else { self }
                }
                #[inline(always)]
                fn max_f(self, rhs: Self) -> Self {
                    if rhs > self || self.is_nan() { rhs } else { self }
                }
            }
        )*
    };
}

impl_float_ops!(f32 f64);

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the Euclidean identities for every pair of `i8` and `u8` values,
    /// and for the interesting corners of the wider types.
    #[test]
    fn euclidean_division_identities() {
        for a in i8::MIN..=i8::MAX {
            for b in i8::MIN..=i8::MAX {
                let (q, r) = (a.div_e(b), a.rem_e(b));
                if b == 0 {
                    assert_eq!((q, r), (0, 0));
                    continue;
                }
                assert_eq!(a, q.wrapping_mul(b).wrapping_add(r), "{a} / {b}");
                assert!(0 <= r && (r as i32) < (b as i32).abs(), "{a} % {b} = {r}");
            }
        }
        for a in 0..=u8::MAX {
            for b in 0..=u8::MAX {
                // For unsigned types Euclidean division is Rust's, except by zero.
                let expected = (a.checked_div(b).unwrap_or(0), a.checked_rem(b).unwrap_or(0));
                assert_eq!((a.div_e(b), a.rem_e(b)), expected, "{a} / {b}");
            }
        }
    }

    #[test]
    fn float_min_max_ignore_nan_and_keep_the_first_zero() {
        assert_eq!(1.0f32.min_f(f32::NAN), 1.0);
        assert_eq!(f32::NAN.max_f(-1.0), -1.0);
        assert!(f64::NAN.min_f(f64::NAN).is_nan());
        assert_eq!(0.0f32.min_f(-0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!((-0.0f32).min_f(0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(0.0f64.max_f(-0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(2.5f64.max_f(3.0), 3.0);
        assert_eq!(f32::NEG_INFINITY.min_f(-1.0), f32::NEG_INFINITY);
    }

    #[test]
    fn division_corners_of_wide_types() {
        assert_eq!(i32::MIN.div_e(-1), i32::MIN);
        assert_eq!(i32::MIN.rem_e(-1), 0);
        assert_eq!(i64::MIN.div_e(-1), i64::MIN);
        assert_eq!(i16::MIN.div_e(-1), i16::MIN);
        assert_eq!(7i32.div_e(0), 0);
        assert_eq!(7i32.rem_e(0), 0);
        assert_eq!(u64::MAX.div_e(0), 0);
        assert_eq!((-7i32).div_e(2), -4);
        assert_eq!((-7i32).rem_e(2), 1);
        assert_eq!((-7i32).div_e(-2), 4);
        assert_eq!((-7i32).rem_e(-2), 1);
        assert_eq!(7i32.div_e(-2), -3);
        assert_eq!(7i32.rem_e(-2), 1);
        for (a, b) in [
            (i64::MIN, 3),
            (i64::MAX, -3),
            (-1, i64::MIN),
            (i64::MIN, i64::MIN),
        ] {
            let (q, r) = (a.div_e(b), a.rem_e(b));
            assert_eq!(a, q.wrapping_mul(b).wrapping_add(r));
            assert!(0 <= r && (r as i128) < (b as i128).abs());
        }
    }

    #[test]
    fn shifts_take_the_amount_modulo_the_width() {
        assert_eq!(1u8.shl_w(9), 2);
        assert_eq!(1u8.shl_w(8), 1);
        assert_eq!(0x80u8.shr_w(7), 1);
        assert_eq!((-128i8).shr_w(7), -1);
        assert_eq!((-128i8).shr_w(15), -1);
        assert_eq!((-16i32).shr_w(2), -4);
        assert_eq!((-16i32).shr_w(34), -4);
        assert_eq!(u32::MAX.shr_w(31), 1);
        assert_eq!(1i64.shl_w(63), i64::MIN);
        assert_eq!(1i64.shl_w(64), 1);
        assert_eq!(3u16.shl_w(u32::MAX), 3u16 << 15);
        for amount in 0..200u32 {
            assert_eq!(0x1234u16.shl_w(amount), 0x1234u16 << (amount % 16));
            assert_eq!((-0x1234i16).shr_w(amount), -0x1234i16 >> (amount % 16));
        }
    }

    #[test]
    fn float_remainder_is_floored() {
        assert_eq!(7.5f32.rem_f(2.0), 1.5);
        assert_eq!((-7.5f32).rem_f(2.0), 0.5);
        assert_eq!(7.5f64.rem_f(-2.0), -0.5);
        assert_eq!((-1.0f64).rem_f(3.0), 2.0);
        assert!(1.0f32.rem_f(0.0).is_nan());
        assert!(f64::INFINITY.rem_f(2.0).is_nan());
    }
}
