//! `saturating_cast::<T>(e)` of the DSL: conversions that clamp to the target
//! type's range instead of wrapping.
//!
//! One impl per ordered pair of the ten element types (the identity included),
//! so generated code can write `SaturatingCast::<u8>::saturating_cast(v)` for any
//! `v` without knowing which rules apply:
//!
//! ```text
//! 300i32 -> u8 == 255     -5i32 -> u32 == 0     // int to int clamps first
//! 1e10f32 -> i32 == i32::MAX   NaN -> u8 == 0   // float to int: Rust's `as` saturates
//! 1e300f64 -> f32 == f32::MAX  NaN stays NaN    // f64 to f32 clamps to the finite range
//! ```

/// A conversion to `To` that clamps values outside `To`'s range to its ends.
pub trait SaturatingCast<To> {
    /// `self` converted to `To`, clamped to `To`'s range.
    fn saturating_cast(self) -> To;
}

/// Integer to integer: clamp in `i128`, which holds every value of every element
/// type, then convert exactly.
macro_rules! int_to_int {
    ($($from:ty)*) => {
        $( int_to_int!(@to $from; u8 u16 u32 u64 i8 i16 i32 i64); )*
    };
    (@to $from:ty; $($to:ty)*) => {
        $(
            impl SaturatingCast<$to> for $from {
                #[inline(always)]
                fn saturating_cast(self) -> $to {
                    (self as i128).clamp(<$to>::MIN as i128, <$to>::MAX as i128) as $to
                }
            }
        )*
    };
}

/// Between floats and integers Rust's `as` is already what the DSL wants: float to
/// int saturates (NaN gives 0), int to float rounds to nearest.
macro_rules! with_as {
    ($($from:ty)*; $to:tt) => {
        $( with_as!(@to $from; $to); )*
    };
    (@to $from:ty; [$($to:ty)*]) => {
        $(
            impl SaturatingCast<$to> for $from {
                #[inline(always)]
                fn saturating_cast(self) -> $to {
                    self as $to
                }
            }
        )*
    };
}

int_to_int!(u8 u16 u32 u64 i8 i16 i32 i64);
with_as!(f32 f64; [u8 u16 u32 u64 i8 i16 i32 i64]);
with_as!(u8 u16 u32 u64 i8 i16 i32 i64; [f32 f64]);
with_as!(f32; [f32 f64]);
with_as!(f64; [f64]);

impl SaturatingCast<f32> for f64 {
    /// Clamps to the finite range of `f32`, so infinities become `f32::MAX` and
    /// `f32::MIN`; NaN stays NaN (`clamp` passes it through).
    #[inline(always)]
    fn saturating_cast(self) -> f32 {
        self.clamp(f32::MIN as f64, f32::MAX as f64) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::SaturatingCast;

    fn cast<To, From: SaturatingCast<To>>(v: From) -> To {
        v.saturating_cast()
    }

    #[test]
    fn int_to_int_clamps() {
        assert_eq!(cast::<u8, _>(300i32), 255);
        assert_eq!(cast::<u8, _>(-5i32), 0);
        assert_eq!(cast::<u32, _>(-5i64), 0);
        assert_eq!(cast::<i8, _>(200u8), 127);
        assert_eq!(cast::<i8, _>(i64::MIN), -128);
        assert_eq!(cast::<i64, _>(u64::MAX), i64::MAX);
        assert_eq!(cast::<u64, _>(i64::MIN), 0);
        assert_eq!(cast::<u64, _>(i64::MAX), i64::MAX as u64);
        assert_eq!(cast::<i16, _>(-300i16), -300);
        assert_eq!(cast::<u16, _>(65535u64), 65535);
        assert_eq!(cast::<u16, _>(65536u64), 65535);
    }

    #[test]
    fn float_to_int_saturates_and_maps_nan_to_zero() {
        assert_eq!(cast::<u8, _>(f32::NAN), 0);
        assert_eq!(cast::<i32, _>(f64::NAN), 0);
        assert_eq!(cast::<u8, _>(f32::INFINITY), 255);
        assert_eq!(cast::<u8, _>(-1.5f32), 0);
        assert_eq!(cast::<i16, _>(f64::NEG_INFINITY), i16::MIN);
        assert_eq!(cast::<i32, _>(1e10f32), i32::MAX);
        assert_eq!(cast::<i64, _>(-1e30f64), i64::MIN);
        assert_eq!(cast::<u64, _>(f64::MAX), u64::MAX);
        assert_eq!(cast::<i8, _>(-7.9f32), -7);
    }

    #[test]
    fn int_to_float_and_float_to_float() {
        assert_eq!(cast::<f32, _>(u64::MAX), u64::MAX as f32);
        assert_eq!(cast::<f64, _>(i64::MIN), -9.223372036854776e18);
        assert_eq!(cast::<f32, _>(1e300f64), f32::MAX);
        assert_eq!(cast::<f32, _>(-1e300f64), f32::MIN);
        assert_eq!(cast::<f32, _>(f64::INFINITY), f32::MAX);
        assert_eq!(cast::<f32, _>(f64::NEG_INFINITY), f32::MIN);
        assert!(cast::<f32, _>(f64::NAN).is_nan());
        assert_eq!(cast::<f32, _>(0.1f64), 0.1f32);
        assert_eq!(cast::<f64, _>(f32::INFINITY), f64::INFINITY);
        assert!(cast::<f64, _>(f32::NAN).is_nan());
        assert!(cast::<f32, _>(f32::NAN).is_nan());
        assert_eq!(cast::<f64, _>(-0.5f64), -0.5);
    }

    /// Every ordered pair of element types has an impl.
    #[test]
    fn every_pair_is_implemented() {
        macro_rules! all_pairs {
            ($($from:ty)*) => { $( all_pairs!(@to $from; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64); )* };
            (@to $from:ty; $($to:ty)*) => { $( let _: $to = cast::<$to, $from>(<$from>::default()); )* };
        }
        all_pairs!(u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    }
}
