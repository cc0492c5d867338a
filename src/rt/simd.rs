//! Vector operations of the DSL, one implementation per instruction-set level.
//!
//! A vectorized loop of `N` lanes computes each expression node as an array
//! `[T; N]` of its lanes. The generated kernel of each level binds a *level
//! token* (`Scalar`, and on x86-64 `Sse41`, `Avx2`, `Avx512`) and calls the
//! node's operation through the traits here:
//!
//! ```text
//! let __isa = unsafe { Avx2::new_unchecked() };      // the AVX2 kernel
//! let s: [u16; 32] = Arith::<u16>::add(__isa, a, b);  // two vpaddw
//! let v: [u8; 32] = Convert::<u16, u8>::cast(__isa, s);
//! ```
//!
//! Every level implements every operation for every element type: the
//! traits' default methods are loops over the lanes with the DSL's scalar
//! semantics (which LLVM vectorizes at the kernel's level as it can), and the
//! x86 levels override them with `core::arch` code, register by register,
//! where the instruction set has the operation (`x86.rs`). A logical vector
//! wider than a register is several registers; lanes beyond the last whole
//! register use the scalar semantics. Inlined into a kernel, the arrays are
//! the registers (LLVM's SROA removes them), so `[u16; 32]` on AVX2 is two
//! `ymm` registers.
//!
//! Results are the same at every level, bit for bit (`tests/simd_ops.rs`
//! checks each operation of each level against the scalar semantics with edge
//! values).
//!
//! A token of an x86 level exists only where the processor has the level
//! (`new` checks; `new_unchecked` is for kernels that the entry dispatched on
//! `rt::isa`), which is what makes the operations safe to call.

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512, Avx512Vbmi, Sse41};

use crate::rt::SaturatingCast;

/// The scalar level: the traits' default methods, loops over the lanes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scalar;

/// The scalar semantics of one element type's arithmetic (the guide's
/// *Expressions and types*): integers wrap, division is Euclidean and by zero gives zero, float
/// `min`/`max` ignore a NaN operand and give the first on ties
/// ([`crate::rt::FloatOps::min_f`]).
pub trait Num: Copy + Default + PartialOrd + 'static {
    /// `a + b`, wrapping.
    fn add(a: Self, b: Self) -> Self;
    /// `a - b`, wrapping.
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b`, wrapping.
    fn mul(a: Self, b: Self) -> Self;
    /// `a / b`: Euclidean for integers, 0 when `b` is 0.
    fn div(a: Self, b: Self) -> Self;
    /// The smaller of `a` and `b`.
    fn min(a: Self, b: Self) -> Self;
    /// The larger of `a` and `b`.
    fn max(a: Self, b: Self) -> Self;
    /// `-a`, wrapping.
    fn neg(a: Self) -> Self;
    /// `|a|`, wrapping (`MIN` stays `MIN`).
    fn abs(a: Self) -> Self;
}

/// The scalar semantics of an integer type's bitwise operations.
pub trait Int: Num {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
    /// `!a`.
    fn not(a: Self) -> Self;
    /// `a << s`, the amount taken modulo the width.
    fn shl(a: Self, s: u32) -> Self;
    /// `a >> s`, the amount taken modulo the width; arithmetic for signed
    /// types.
    fn shr(a: Self, s: u32) -> Self;
}

/// The scalar semantics of a float type's rounding functions.
pub trait Float: Num {
    /// The square root.
    fn sqrt(a: Self) -> Self;
    /// The largest integer not above `a`.
    fn floor(a: Self) -> Self;
    /// The smallest integer not below `a`.
    fn ceil(a: Self) -> Self;
    /// `a` rounded toward zero.
    fn trunc(a: Self) -> Self;
    /// `a * b + c` rounded once.
    fn mul_add(a: Self, b: Self, c: Self) -> Self;
}

/// Rust's `as`, which is the DSL's cast between numeric types.
pub trait CastTo<B>: Copy {
    /// `self as B`.
    fn cast(self) -> B;
}

macro_rules! int_num {
    ($($t:ident: $abs:expr;)*) => {$(
        impl Num for $t {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn add(a: $t, b: $t) -> $t { a.wrapping_add(b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sub(a: $t, b: $t) -> $t { a.wrapping_sub(b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn div(a: $t, b: $t) -> $t { <$t as crate::rt::IntOps>::div_e(a, b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn min(a: $t, b: $t) -> $t { core::cmp::min(a, b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn max(a: $t, b: $t) -> $t { core::cmp::max(a, b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn neg(a: $t) -> $t { a.wrapping_neg() }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn abs(a: $t) -> $t { let f: fn($t) -> $t = $abs; f(a) }
        }
        impl Int for $t {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn and(a: $t, b: $t) -> $t { a & b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn or(a: $t, b: $t) -> $t { a | b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn xor(a: $t, b: $t) -> $t { a ^ b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn not(a: $t) -> $t { !a }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn shl(a: $t, s: u32) -> $t { a.wrapping_shl(s) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn shr(a: $t, s: u32) -> $t { a.wrapping_shr(s) }
        }
    )*};
}
int_num! {
    u8: |a| a; u16: |a| a; u32: |a| a; u64: |a| a;
    i8: i8::wrapping_abs; i16: i16::wrapping_abs; i32: i32::wrapping_abs; i64: i64::wrapping_abs;
}

macro_rules! float_num {
    ($($t:ident)*) => {$(
        impl Num for $t {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn add(a: $t, b: $t) -> $t { a + b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sub(a: $t, b: $t) -> $t { a - b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul(a: $t, b: $t) -> $t { a * b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn div(a: $t, b: $t) -> $t { a / b }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn min(a: $t, b: $t) -> $t { crate::rt::FloatOps::min_f(a, b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn max(a: $t, b: $t) -> $t { crate::rt::FloatOps::max_f(a, b) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn neg(a: $t) -> $t { -a }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn abs(a: $t) -> $t { a.abs() }
        }
        impl Float for $t {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sqrt(a: $t) -> $t { a.sqrt() }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn floor(a: $t) -> $t { a.floor() }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn ceil(a: $t) -> $t { a.ceil() }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn trunc(a: $t) -> $t { a.trunc() }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul_add(a: $t, b: $t, c: $t) -> $t { a.mul_add(b, c) }
        }
    )*};
}
float_num!(f32 f64);

macro_rules! cast_to {
    ($($a:ident)*) => {$( cast_to!(@to $a; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64); )*};
    (@to $a:ident; $($b:ident)*) => {$(
        impl CastTo<$b> for $a {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast(self) -> $b { self as $b }
        }
    )*};
}
cast_to!(u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);

/// `[f(a[i], b[i])]`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn zip<T: Copy, const N: usize>(a: [T; N], b: [T; N], f: impl Fn(T, T) -> T) -> [T; N] {
    let mut o = a;
    for i in 0..N {
        o[i] = f(a[i], b[i]);
    }
    o
}

/// `[f(a[i])]`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn map<A: Copy, B: Copy + Default, const N: usize>(
    a: [A; N],
    f: impl Fn(A) -> B,
) -> [B; N] {
    let mut o = [B::default(); N];
    for i in 0..N {
        o[i] = f(a[i]);
    }
    o
}

/// Arithmetic on vectors of `T` at one level.
pub trait Arith<T: Num>: Copy {
    /// Lane-wise [`Num::add`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn add<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::add)
    }
    /// Lane-wise [`Num::sub`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn sub<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::sub)
    }
    /// Lane-wise [`Num::mul`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn mul<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::mul)
    }
    /// Lane-wise [`Num::div`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn div<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::div)
    }
    /// Every lane divided by one divisor ([`Num::div`]): for integers, a
    /// multiply-high by a reciprocal where the level has one, computed from
    /// `d` once (constant-folded when `d` is a constant).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn div_by<const N: usize>(self, a: [T; N], d: T) -> [T; N] {
        map(a, |x| T::div(x, d))
    }
    /// Lane-wise [`Num::min`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn min<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::min)
    }
    /// Lane-wise [`Num::max`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn max<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::max)
    }
    /// Lane-wise [`Num::neg`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn neg<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::neg)
    }
    /// Lane-wise [`Num::abs`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn abs<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::abs)
    }
}

/// Bitwise operations on vectors of integers `T` at one level.
pub trait Bits<T: Int>: Copy {
    /// Lane-wise [`Int::and`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn and<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::and)
    }
    /// Lane-wise [`Int::or`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn or<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::or)
    }
    /// Lane-wise [`Int::xor`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn xor<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::xor)
    }
    /// Lane-wise [`Int::not`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn not<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::not)
    }
    /// Every lane shifted left by one amount ([`Int::shl`]).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn shl<const N: usize>(self, a: [T; N], s: u32) -> [T; N] {
        map(a, |x| T::shl(x, s))
    }
    /// Every lane shifted right by one amount ([`Int::shr`]).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn shr<const N: usize>(self, a: [T; N], s: u32) -> [T; N] {
        map(a, |x| T::shr(x, s))
    }
}

/// Rounding functions on vectors of floats `T` at one level.
pub trait Round<T: Float>: Copy {
    /// Lane-wise [`Float::sqrt`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn sqrt<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::sqrt)
    }
    /// Lane-wise [`Float::floor`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn floor<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::floor)
    }
    /// Lane-wise [`Float::ceil`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn ceil<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::ceil)
    }
    /// Lane-wise [`Float::trunc`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn trunc<const N: usize>(self, a: [T; N]) -> [T; N] {
        map(a, T::trunc)
    }
}

/// `(a + b + 1) >> 1` of unsigned integers, computed without wrapping: the
/// rounding average (`pavgb`/`pavgw` on x86).
pub trait RoundingAverage: Copy {
    /// The average of `a` and `b`, halves rounded up.
    fn avg_round(a: Self, b: Self) -> Self;
}

macro_rules! rounding_average {
    ($($t:ident)*) => {$(
        impl RoundingAverage for $t {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn avg_round(a: $t, b: $t) -> $t {
                ((a as u32 + b as u32 + 1) >> 1) as $t
            }
        }
    )*};
}
rounding_average!(u8 u16);

/// Rounding averages of vectors of `T` at one level. Generated code uses
/// them for `(a + b + 1) >> 1` (or `/ 2`) where that cannot wrap: operands
/// widened from `T`, or bounded so that the sum fits.
pub trait Average<T: RoundingAverage>: Copy {
    /// Lane-wise [`RoundingAverage::avg_round`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn avg_round<const N: usize>(self, a: [T; N], b: [T; N]) -> [T; N] {
        zip(a, b, T::avg_round)
    }
}

/// Loads of a small constant stride (`f(2 * x)`, `f(3 * x + 1)`) at one
/// level, as one dense load of the span from the first lane to the last and
/// a deinterleaving: shuffles instead of a load per lane.
pub trait Deinterleave<T: Copy + Default>: Copy {
    /// Lanes `p[0], p[2], ..., p[2 N - 2]`, read straight into registers.
    ///
    /// # Safety
    ///
    /// The `2 N - 1` elements from `p` must be readable.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn load_every_2nd<const N: usize>(self, p: *const T) -> [T; N] {
        // SAFETY: the caller makes the span readable.
        core::array::from_fn(|i| unsafe { p.add(2 * i).read_unaligned() })
    }

    /// Lanes `p[0], p[S], ..., p[(N - 1) S]` for a constant stride `S`,
    /// from the `M = (N - 1) S + 1` elements they span. By default one
    /// read of the span and picks from it, which the
    /// compiler turns into vector loads and permutes where the level has
    /// them (`vpermt2w` for `u16` at AVX-512) and else into the load per
    /// lane it replaces; the x86 levels shuffle bytes for strides 3 and 4.
    ///
    /// # Safety
    ///
    /// The `M` elements from `p` must be readable.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn load_every<const N: usize, const M: usize, const S: usize>(
        self,
        p: *const T,
    ) -> [T; N] {
        debug_assert!(
            N >= 1 && M == (N - 1) * S + 1,
            "a span of {M} for {N} lanes by {S}"
        );
        // SAFETY: the caller makes the span readable.
        unsafe { pick_every::<T, N, M, S>(p) }
    }

    /// All `S` phases of the `S N` elements from `p`: phase `j` holds
    /// lanes `p[j], p[j + S], ..., p[j + (N - 1) S]`. The channels of an
    /// interleaved image from one read of their pixels, where `S` loads of
    /// stride `S` would each read the span again.
    ///
    /// # Safety
    ///
    /// The `S N` elements from `p` must be readable.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn load_phases<const N: usize, const S: usize>(self, p: *const T) -> [[T; N]; S] {
        // SAFETY: the caller makes the elements readable.
        unsafe { pick_phases::<T, N, S>(p) }
    }
}

/// [`Deinterleave::load_phases`] in plain Rust, one element at a time.
///
/// # Safety
///
/// The `S N` elements from `p` must be readable.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn pick_phases<T: Copy, const N: usize, const S: usize>(
    p: *const T,
) -> [[T; N]; S] {
    // SAFETY: the caller makes the `S N` elements readable.
    core::array::from_fn(|j| core::array::from_fn(|i| unsafe { p.add(S * i + j).read_unaligned() }))
}

/// [`Deinterleave::load_every`] in plain Rust: the span read as an array,
/// the lanes picked from it.
///
/// # Safety
///
/// The `M` elements from `p` must be readable.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn pick_every<T: Copy, const N: usize, const M: usize, const S: usize>(
    p: *const T,
) -> [T; N] {
    // SAFETY: the caller makes the span readable.
    let span: [T; M] = unsafe { core::ptr::read_unaligned(p.cast()) };
    core::array::from_fn(|i| span[S * i])
}

/// The lanes of a vector in reverse order at one level: with a dense load
/// of the same lanes, a load of stride -1 (`f(c - x)`, a mirror image), as
/// shuffles instead of a load per lane.
pub trait Reverse<T: Copy + Default>: Copy {
    /// `[a[N - 1], a[N - 2], ..., a[0]]`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn reverse<const N: usize>(self, a: [T; N]) -> [T; N] {
        core::array::from_fn(|i| a[N - 1 - i])
    }
}

/// Loads of each element twice, at one level: a load at `x / 2 + k` along a
/// vectorized `x` (the EXPAND of a pyramid, any upsampling by two) reads the
/// `N / 2` or so elements its lanes cover once and doubles them in
/// registers, instead of a load a lane. The x86 levels double half a
/// register's elements with a permute and an unpack, and take the odd
/// lanes of a second such read one element on when the first lane is odd.
pub trait Upsample<T: Copy + Default>: Copy {
    /// `[p[odd / 2], p[(1 + odd) / 2], ..., p[(N - 1 + odd) / 2]]`, with
    /// `odd` as 0 or 1: the elements at `x / 2` for `x` from an even
    /// (`odd == false`) or odd first lane on. Reads
    /// `p[0..=(N - 1 + odd) / 2]` only.
    ///
    /// # Safety
    ///
    /// Those elements must be readable.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn load_doubled<const N: usize>(self, p: *const T, odd: bool) -> [T; N] {
        // SAFETY: the caller makes the span readable.
        core::array::from_fn(|i| unsafe { p.add((i + odd as usize) / 2).read() })
    }
}

/// Loads of one element a lane from offsets computed in a vector, at one
/// level: a gather (`grid(x / 8, y / 8, z)` in a bilateral grid, a lookup
/// table at computed indices). By default one load a lane, reading each
/// offset out of its vector; the AVX2 and AVX-512 levels use their gather
/// instructions for 32- and 64-bit elements, and for 8- and 16-bit ones
/// read the 32 bits around each element (within `p[..len]`) and shift it
/// out.
pub trait Gather<T: Copy + Default>: Copy {
    /// The register width, in bytes, in whose multiples
    /// [`crate::View::taps`] reads a tap by [`Gather::gather`]; a tap of
    /// another width goes a load a lane (and every tap, where this is 0:
    /// at levels without gathers, and where the token says that taps are
    /// read a load a lane, [`crate::rt::tap_gathers`]).
    #[inline(always)]
    fn tap_bytes(self) -> usize {
        0
    }

    /// `[p[o[0]], p[o[1]], ..., p[o[N - 1]]]`, reading nothing outside
    /// `p[..len]`.
    ///
    /// # Safety
    ///
    /// `p[..len]` must be readable, and every `o[i]` in `0..len`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn gather<const N: usize>(self, p: *const T, len: usize, o: [i32; N]) -> [T; N] {
        let _ = len;
        // SAFETY: the caller makes every lane's element readable.
        core::array::from_fn(|i| unsafe { p.offset(o[i] as isize).read() })
    }
}

/// Fused multiply-add on vectors of floats `T` at one level: the DSL's
/// `fma(a, b, c)`, `a * b + c` with one rounding. Levels without the
/// instruction compute each lane with Rust's `mul_add` (the C library's
/// `fma`, exact but slow).
pub trait MulAdd<T: Float>: Copy {
    /// Lane-wise [`Float::mul_add`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn mul_add<const N: usize>(self, a: [T; N], b: [T; N], c: [T; N]) -> [T; N] {
        core::array::from_fn(|i| T::mul_add(a[i], b[i], c[i]))
    }
}

/// The DSL's cast (Rust's `as`) from vectors of `A` to vectors of `B` at one
/// level.
pub trait Convert<A: CastTo<B>, B: Copy + Default>: Copy {
    /// Lane-wise `a as B`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn cast<const N: usize>(self, a: [A; N]) -> [B; N] {
        map(a, A::cast)
    }
}

/// The DSL's saturating cast (`saturating_cast::<B>(a)`) from vectors of `A`
/// to vectors of `B` at one level.
pub trait SatConvert<A: SaturatingCast<B> + Copy, B: Copy + Default>: Copy {
    /// Lane-wise `a` clamped to `B`'s range and converted.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn saturating_cast<const N: usize>(self, a: [A; N]) -> [B; N] {
        map(a, A::saturating_cast)
    }
}

/// A comparison of the DSL (`a == b`, ...; every comparison with a NaN is
/// false except `!=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
}

impl Cmp {
    /// Whether `a` and `b` compare so.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn test<C: PartialOrd>(self, a: C, b: C) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// `select(a cmp b, x, y)` on vectors at one level: a comparison of `C`s
/// choosing between `T`s lane by lane.
pub trait Select<C: Num, T: Num>: Copy {
    /// Lane `i` is `x[i]` where `a[i] cmp b[i]`, else `y[i]`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn select<const N: usize>(
        self,
        cmp: Cmp,
        a: [C; N],
        b: [C; N],
        x: [T; N],
        y: [T; N],
    ) -> [T; N] {
        let mut o = x;
        for i in 0..N {
            if !cmp.test(a[i], b[i]) {
                o[i] = y[i];
            }
        }
        o
    }
}

/// Division of `u32` lanes that stay small by a constant `d`, through
/// `f32` on the x86 levels: `trunc(x * recip)`, a conversion, a multiply and
/// a truncation instead of a multiply-high in 64-bit halves. Generated code
/// uses it only where it has checked, for every value the lanes can hold
/// (all below 2^20), that this is `x / d`; the scalar level divides.
pub trait DivSmall<T>: Copy {
    /// Lane-wise `a / d`, given `recip` with `trunc(x * recip) == x / d`
    /// for every lane `x`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn div_small<const N: usize>(self, a: [T; N], d: T, recip: f32) -> [T; N]
    where
        T: Num,
    {
        let _ = recip;
        map(a, |x| T::div(x, d))
    }
}

impl DivSmall<u32> for Scalar {}

/// Unsigned narrowing casts of lanes whose values all fit in the narrower
/// type, so that truncating and saturating agree: `(sum / 3) as u16` of a
/// `u32` sum of three `u16`. The x86 levels narrow with their saturating
/// packs alone (`packusdw`, `packuswb`), without first masking off the high
/// halves (a truncation) or clamping (a saturating cast). Generated code
/// uses it only where value bounds (`analysis/values.rs`) prove that every
/// value fits; for one that does not, the result is unspecified.
pub trait NarrowFitting<A: CastTo<B>, B: Copy + Default>: Copy {
    /// Lane-wise `a as B`, given that every lane of `a` fits in `B`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn narrow_fitting<const N: usize>(self, a: [A; N]) -> [B; N] {
        map(a, A::cast)
    }
}

impl NarrowFitting<u16, u8> for Scalar {}
impl NarrowFitting<u32, u16> for Scalar {}
impl NarrowFitting<u32, u8> for Scalar {}

/// Arithmetic on `u8` lanes widened to `u16` and narrowed back, in a lane
/// order the level chooses: `((a as u16 * 4 + b as u16 + 8) >> 4) as u8`
/// and the like, where every operation between the widening and the
/// narrowing treats all lanes alike.
///
/// Widening a register of bytes in order takes a permute across its
/// 128-bit blocks at AVX2 and AVX-512 (`vpmovzxbw` reads half a register),
/// and so does the saturating pack back to bytes (`vpackuswb` packs within
/// blocks, then `vpermq` restores the order). The x86 levels instead widen
/// within the blocks (`punpcklbw`/`punpckhbw`), which leaves the lanes of a
/// register permuted, compute on them in that order, and pack within the
/// blocks, which puts them back: no permute at all. They also multiply and
/// add two widened vectors by constant weights in one instruction
/// (`pmaddubsw`), in the same order. The order is the same for the three
/// operations at one level and length `N` (whole registers of bytes in
/// block order, the lanes past the last whole register, and vectors
/// shorter than a register, in order), so any lane-wise computation
/// between [`widen_blocks`](U8Blocks::widen_blocks) and
/// [`narrow_blocks`](U8Blocks::narrow_blocks) gives the lanes in order.
/// Nothing else may read or produce the `u16` vectors in between: a load,
/// a ramp or a store there would see the permuted lanes (generated code
/// uses these only on expression trees checked to be lane-wise, with
/// uniform values and widened bytes as leaves; `codegen/rust/vector.rs`).
/// The scalar level keeps the order.
pub trait U8Blocks: Copy {
    /// `a as u16`, in the level's order.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn widen_blocks<const N: usize>(self, a: [u8; N]) -> [u16; N] {
        map(a, |v| v as u16)
    }

    /// `a as u16 * wa + b as u16 * wb`, in the level's order, for weights
    /// of at most 127 that sum to at most 128 (so that no sum passes
    /// `i16::MAX`, where `pmaddubsw` saturates). Other weights give an
    /// unspecified result.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn mul_add_pairs<const N: usize>(self, a: [u8; N], b: [u8; N], wa: u8, wb: u8) -> [u16; N] {
        core::array::from_fn(|i| {
            (a[i] as u16)
                .wrapping_mul(wa as u16)
                .wrapping_add((b[i] as u16).wrapping_mul(wb as u16))
        })
    }

    /// `a as u8` of lanes in the level's order, back in order, for lanes
    /// that all fit in `u8` (a larger lane gives an unspecified result).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn narrow_blocks<const N: usize>(self, a: [u16; N]) -> [u8; N] {
        map(a, |v| v as u8)
    }
}

impl U8Blocks for Scalar {}

/// Implements, for `$level`, every trait above for every type with the
/// default methods.
macro_rules! defaults {
    ($level:ty) => {
        defaults!(@num $level; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
        defaults!(@int $level; u8 u16 u32 u64 i8 i16 i32 i64);
        defaults!(@float $level; f32 f64);
        defaults!(@cast $level; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
        defaults!(@deinterleave $level; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
        impl $crate::rt::simd::Average<u8> for $level {}
        impl $crate::rt::simd::Average<u16> for $level {}
    };
    (@num $level:ty; $($t:ident)*) => {$( impl $crate::rt::simd::Arith<$t> for $level {} )*};
    (@int $level:ty; $($t:ident)*) => {$( impl $crate::rt::simd::Bits<$t> for $level {} )*};
    (@float $level:ty; $($t:ident)*) => {$(
        impl $crate::rt::simd::Round<$t> for $level {}
        impl $crate::rt::simd::MulAdd<$t> for $level {}
    )*};
    (@deinterleave $level:ty; $($t:ident)*) => {$(
        impl $crate::rt::simd::Deinterleave<$t> for $level {}
        impl $crate::rt::simd::Reverse<$t> for $level {}
        impl $crate::rt::simd::Gather<$t> for $level {}
        impl $crate::rt::simd::Upsample<$t> for $level {}
    )*};
    (@cast $level:ty; $($a:ident)*) => {$(
        defaults!(@castto $level; $a; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    )*};
    (@castto $level:ty; $a:ident; $($b:ident)*) => {$(
        impl $crate::rt::simd::Convert<$a, $b> for $level {}
        impl $crate::rt::simd::SatConvert<$a, $b> for $level {}
        impl $crate::rt::simd::Select<$a, $b> for $level {}
    )*};
}

defaults!(Scalar);

/// Declares [`Level`] with every operation trait of every element type (and
/// pair of them) as a supertrait, so that a kernel generic over its level
/// can call them all.
macro_rules! level_trait {
    (@pairs [$($acc:tt)*] [] $all:tt) => {
        level_trait!(@emit $($acc)*);
    };
    (@pairs [$($acc:tt)*] [$a:ident $($rest:ident)*] [$($b:ident)*]) => {
        level_trait!(@pairs
            [$($acc)* $(+ Convert<$a, $b> + SatConvert<$a, $b> + Select<$a, $b>)*]
            [$($rest)*]
            [$($b)*]
        );
    };
    (@emit $($bounds:tt)*) => {
        /// An instruction-set level: its token implements every vector
        /// operation, and runs code compiled with its features.
        ///
        /// A pipeline's loop nests are one generic function over the level,
        /// type-checked once and compiled once per level that gets a kernel.
        /// Code of a function generic over the level is compiled without the
        /// level's features, and so are the closures inside it; the loop
        /// nests therefore run through [`run`](Level::run) or
        /// [`outline`](Level::outline), whose functions have the level's
        /// features and into which the closure given is inlined (with the
        /// operations it calls).
        pub trait Level: Copy + Send + Sync $($bounds)* {
            /// The level for a loop nest whose vectors are at most 256 bits
            /// wide: AVX2 for the AVX-512 levels, the level itself below.
            /// Compiled with AVX-512's features, such a loop nest gains
            /// nothing from them, and what LLVM vectorizes there on its own
            /// (lane loops, edges) may take 512-bit gathers and scalar
            /// conversions instead.
            type Narrow: Level;
            /// This level's [`Narrow`](Level::Narrow) one.
            fn narrow(self) -> Self::Narrow;
            /// `f()`, inlined into a function compiled with the level's
            /// features.
            fn run<R>(self, f: impl FnOnce() -> R) -> R;
            /// `f()` as a function of its own, compiled with the level's
            /// features and never inlined, so that each loop nest gets the
            /// processor's registers to itself (and LLVM's time per function
            /// stays that of one loop nest).
            fn outline<R>(self, f: impl FnOnce() -> R) -> R;
        }
    };
    ($($t:ident)*) => {
        level_trait!(@pairs
            [
                $(+ Arith<$t> + Deinterleave<$t> + Reverse<$t> + Gather<$t> + Upsample<$t>)*
                + Bits<u8> + Bits<u16> + Bits<u32> + Bits<u64>
                + Bits<i8> + Bits<i16> + Bits<i32> + Bits<i64>
                + Round<f32> + Round<f64> + MulAdd<f32> + MulAdd<f64>
                + Average<u8> + Average<u16> + DivSmall<u32> + U8Blocks
                + NarrowFitting<u16, u8> + NarrowFitting<u32, u16> + NarrowFitting<u32, u8>
            ]
            [$($t)*]
            [$($t)*]
        );
    };
}
level_trait!(u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);

impl Level for Scalar {
    type Narrow = Scalar;

    #[inline(always)]
    fn narrow(self) -> Scalar {
        self
    }

    #[inline(always)]
    fn run<R>(self, f: impl FnOnce() -> R) -> R {
        f()
    }

    #[inline(never)]
    fn outline<R>(self, f: impl FnOnce() -> R) -> R {
        f()
    }
}
