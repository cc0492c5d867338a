//! The x86-64 levels: SSE4.1 (128-bit registers), AVX2 (256) and AVX-512 F+BW
//! (512).
//!
//! Each level implements [`Regs`], its registers and the instructions the
//! operations use, one intrinsic (or a few) each; the `level!` macro then
//! writes the public traits' methods once for all three levels on top of
//! `Regs`, register by register over the lanes, with the scalar semantics for
//! lanes past the last whole register. Operations a level lacks an
//! instruction for (8-bit multiplies, 64-bit multiplies and minima, ...) keep
//! the traits' default lane loops.
//!
//! Submodules: `regs` (each level's [`Regs`]), `strided` (loads of a
//! constant stride), `reverse` (mirrored loads), `upsample` (loads at
//! `x / 2`), `gather` (loads at offsets computed in vectors) and `blocks`
//! (u8 arithmetic in the registers' block order).
//!
//! The methods are `#[cfg_attr(not(debug_assertions), inline(always))]` without `#[target_feature]`: they are
//! inlined into the kernel of their level, which enables the features, and
//! the intrinsics are inlined there. A token exists only where the processor
//! has the level, which makes calling the intrinsics sound.

use super::{
    Arith, Average, Bits, Cmp, Convert, Deinterleave, DivSmall, Int, MulAdd, NarrowFitting, Num,
    Reverse, Round, RoundingAverage, SatConvert, Scalar, Select, Upsample,
};

mod blocks;
mod gather;
mod regs;
mod reverse;
mod strided;
mod upsample;
use crate::rt::isa::{detected, tap_gathers, Isa};
use crate::rt::SaturatingCast;
use core::arch::x86_64::*;
use core::mem::size_of;

/// The SSE4.1 level (the kernels compiled with `sse4.1`).
#[derive(Clone, Copy, Debug)]
pub struct Sse41 {
    /// Groups of taps read by gathers ([`crate::rt::simd::Gather::tap_bytes`]).
    gather_taps: bool,
}

/// The AVX2 level (the kernels compiled with `avx2,fma`).
#[derive(Clone, Copy, Debug)]
pub struct Avx2 {
    /// Groups of taps read by gathers ([`crate::rt::simd::Gather::tap_bytes`]).
    gather_taps: bool,
}

/// The AVX-512 level (F and BW; the kernels compiled with
/// `avx512f,avx512bw,avx2,fma`).
#[derive(Clone, Copy, Debug)]
pub struct Avx512 {
    /// Groups of taps read by gathers ([`crate::rt::simd::Gather::tap_bytes`]).
    gather_taps: bool,
}

/// The AVX-512 level with VBMI (the kernels compiled with
/// `avx512f,avx512bw,avx512vbmi,avx2,fma`): everything of [`Avx512`], and
/// loads of strides 3 and 4 by byte permutes across the whole register
/// (`vpermt2b`, `vpermb`).
#[derive(Clone, Copy, Debug)]
pub struct Avx512Vbmi {
    /// Groups of taps read by gathers ([`crate::rt::simd::Gather::tap_bytes`]).
    gather_taps: bool,
}

/// Each x86 level's token, and its [`super::Level`]: `run` and `outline`
/// call the closure from a function compiled with the level's features
/// (those its kernel needs: FMA with AVX2, AVX2 and BW with AVX-512), into
/// which LLVM inlines it; the `outline` one is never inlined itself.
macro_rules! token {
    ($($level:ident: $isa:ident, $features:literal, $narrow:ident;)*) => {$(
        impl $level {
            /// The token, if this processor has the level.
            pub fn new() -> Option<$level> {
                (detected() >= Isa::$isa).then(|| $level { gather_taps: tap_gathers() })
            }

            /// The token, without checking the processor.
            ///
            /// # Safety
            ///
            /// The processor must have the level (the generated kernel of
            /// the level runs only where [`crate::rt::isa`] reports it).
            pub unsafe fn new_unchecked() -> $level {
                $level { gather_taps: tap_gathers() }
            }

            /// The token, reading groups of taps by gathers if `on` (where
            /// the level has them) and a load a lane if not, whatever
            /// [`crate::rt::tap_gathers`] says: for tests of both ways.
            #[doc(hidden)]
            pub fn with_tap_gathers(self, on: bool) -> $level {
                $level { gather_taps: on }
            }
        }

        impl super::Level for $level {
            type Narrow = $narrow;

            #[inline(always)]
            fn narrow(self) -> $narrow {
                // Every level has the features of those below it
                // (`crate::rt::isa::detected`).
                $narrow { gather_taps: self.gather_taps }
            }

            #[inline(always)]
            fn run<R>(self, f: impl FnOnce() -> R) -> R {
                #[target_feature(enable = $features)]
                #[inline]
                unsafe fn run<R>(f: impl FnOnce() -> R) -> R {
                    f()
                }
                // SAFETY: the token exists only where the processor has the
                // level.
                unsafe { run(f) }
            }

            #[inline(always)]
            fn outline<R>(self, f: impl FnOnce() -> R) -> R {
                #[target_feature(enable = $features)]
                #[inline(never)]
                unsafe fn outline<R>(f: impl FnOnce() -> R) -> R {
                    f()
                }
                // SAFETY: as for `run`.
                unsafe { outline(f) }
            }
        }
    )*};
}
token! {
    Sse41: Sse41, "sse4.1", Sse41;
    Avx2: Avx2, "avx2,fma", Avx2;
    Avx512: Avx512, "avx512f,avx512bw,avx2,fma", Avx2;
    Avx512Vbmi: Avx512Vbmi, "avx512f,avx512bw,avx512vbmi,avx2,fma", Avx2;
}

/// One level's registers and instructions. Every method requires the
/// processor to have the level (the caller holds the level's token).
pub(super) trait Regs: Copy {
    /// Bytes in a register.
    const BYTES: usize;
    /// An integer register.
    type I: Copy;
    /// An `f32` register.
    type F: Copy;
    /// Half an integer register (the source of a widening by two).
    type H: Copy;

    unsafe fn li(p: *const u8) -> Self::I;
    unsafe fn si(p: *mut u8, v: Self::I);
    /// `BYTES / 2` bytes.
    unsafe fn lh(p: *const u8) -> Self::H;
    /// `BYTES / 4` bytes, in the low lanes.
    unsafe fn lq(p: *const u8) -> __m128i;
    unsafe fn lf(p: *const f32) -> Self::F;
    unsafe fn sf(p: *mut f32, v: Self::F);

    unsafe fn splat8(v: i8) -> Self::I;
    unsafe fn splat16(v: i16) -> Self::I;
    unsafe fn splat32(v: i32) -> Self::I;
    unsafe fn splatf(v: f32) -> Self::F;

    unsafe fn add8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn add16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn add32(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn add64(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sub8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sub16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sub32(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sub64(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn mul16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn mul32(a: Self::I, b: Self::I) -> Self::I;
    /// The high 16 bits of each unsigned 16-bit product.
    unsafe fn mulhi_u16(a: Self::I, b: Self::I) -> Self::I;
    /// The 64-bit products of the even unsigned 32-bit lanes.
    unsafe fn mul_even_u32(a: Self::I, b: Self::I) -> Self::I;
    /// The even 32-bit lanes of `a` and the odd ones of `b`.
    unsafe fn blend_odd32(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_i8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_u8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_i16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_u16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_i32(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_u32(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_i8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_u8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_i16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_u16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_i32(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_u32(a: Self::I, b: Self::I) -> Self::I;
    /// `(a + b + 1) >> 1` of unsigned 8- and 16-bit lanes, without wrapping.
    unsafe fn avg_u8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn avg_u16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn abs8(a: Self::I) -> Self::I;
    unsafe fn abs16(a: Self::I) -> Self::I;
    unsafe fn abs32(a: Self::I) -> Self::I;
    unsafe fn and(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn or(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn xor(a: Self::I, b: Self::I) -> Self::I;
    /// Shifts by `s` (below the width).
    unsafe fn sll16(a: Self::I, s: u32) -> Self::I;
    unsafe fn sll32(a: Self::I, s: u32) -> Self::I;
    unsafe fn sll64(a: Self::I, s: u32) -> Self::I;
    unsafe fn srl16(a: Self::I, s: u32) -> Self::I;
    unsafe fn srl32(a: Self::I, s: u32) -> Self::I;
    unsafe fn srl64(a: Self::I, s: u32) -> Self::I;
    unsafe fn sra16(a: Self::I, s: u32) -> Self::I;
    unsafe fn sra32(a: Self::I, s: u32) -> Self::I;

    /// `x` where `a == b`, else `y` (lanes of 8, 16, 32 bits).
    unsafe fn eq8(a: Self::I, b: Self::I, x: Self::I, y: Self::I) -> Self::I;
    unsafe fn eq16(a: Self::I, b: Self::I, x: Self::I, y: Self::I) -> Self::I;
    unsafe fn eq32(a: Self::I, b: Self::I, x: Self::I, y: Self::I) -> Self::I;
    /// `x` where `a > b` (signed), else `y`.
    unsafe fn gt8(a: Self::I, b: Self::I, x: Self::I, y: Self::I) -> Self::I;
    unsafe fn gt16(a: Self::I, b: Self::I, x: Self::I, y: Self::I) -> Self::I;
    unsafe fn gt32(a: Self::I, b: Self::I, x: Self::I, y: Self::I) -> Self::I;
    /// `x` where `a cmp b` (`f32`), else `y`.
    unsafe fn selectf(cmp: Cmp, a: Self::F, b: Self::F, x: Self::I, y: Self::I) -> Self::I;
    /// The lanes of `a` then `b`, narrowed with saturation: signed 16-bit
    /// to unsigned and signed 8-bit, signed 32-bit to unsigned and signed
    /// 16-bit.
    unsafe fn sat16_u8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sat16_i8(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sat32_u16(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sat32_i16(a: Self::I, b: Self::I) -> Self::I;

    /// Widening by zero (`zx`) or sign (`sx`) extension.
    unsafe fn zx8_16(a: Self::H) -> Self::I;
    unsafe fn sx8_16(a: Self::H) -> Self::I;
    unsafe fn zx16_32(a: Self::H) -> Self::I;
    unsafe fn sx16_32(a: Self::H) -> Self::I;
    unsafe fn zx8_32(a: __m128i) -> Self::I;
    unsafe fn sx8_32(a: __m128i) -> Self::I;
    /// The low bytes of the 16-bit lanes of `a` then `b`.
    unsafe fn trunc16_8(a: Self::I, b: Self::I) -> Self::I;
    /// The low halves of the 32-bit lanes of `a` then `b`.
    unsafe fn trunc32_16(a: Self::I, b: Self::I) -> Self::I;
    /// The low halves of the 64-bit lanes of `a` then `b`.
    unsafe fn trunc64_32(a: Self::I, b: Self::I) -> Self::I;

    unsafe fn addf(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn subf(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn mulf(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn divf(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn sqrtf(a: Self::F) -> Self::F;
    unsafe fn floorf(a: Self::F) -> Self::F;
    unsafe fn ceilf(a: Self::F) -> Self::F;
    unsafe fn truncf(a: Self::F) -> Self::F;
    /// The instructions: `b` where unordered (as `minps a, b`).
    unsafe fn minps(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn maxps(a: Self::F, b: Self::F) -> Self::F;
    /// The DSL's `min`/`max` (`rt::FloatOps::min_f`): the other operand
    /// where one is NaN, the first on ties.
    unsafe fn minnum(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn maxnum(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn as_bits(a: Self::F) -> Self::I;
    unsafe fn from_bits(a: Self::I) -> Self::F;
    /// `i32 as f32`.
    unsafe fn i32_f32(a: Self::I) -> Self::F;
    /// `f32 as i32`: saturating, NaN to 0.
    unsafe fn f32_i32(a: Self::F) -> Self::I;
    /// `f32 as i32` for values in range (the instruction alone).
    unsafe fn cvtt(a: Self::F) -> Self::I;
}

/// An element type's register at level `X`.
pub(super) trait Reg<X: Regs>: Copy {
    type R: Copy;
    unsafe fn load(p: *const Self) -> Self::R;
    unsafe fn store(p: *mut Self, v: Self::R);
    /// The register's bits as an integer register, and back.
    unsafe fn bits(v: Self::R) -> X::I;
    unsafe fn from_bits(v: X::I) -> Self::R;
}

macro_rules! int_reg {
    ($($t:ident)*) => {$(
        impl<X: Regs> Reg<X> for $t {
            type R = X::I;
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn load(p: *const $t) -> X::I { X::li(p.cast()) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn store(p: *mut $t, v: X::I) { X::si(p.cast(), v) }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn bits(v: X::I) -> X::I { v }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn from_bits(v: X::I) -> X::I { v }
        }
    )*};
}
int_reg!(u8 u16 u32 u64 i8 i16 i32 i64);

impl<X: Regs> Reg<X> for f32 {
    type R = X::F;
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn load(p: *const f32) -> X::F {
        X::lf(p)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn store(p: *mut f32, v: X::F) {
        X::sf(p, v)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn bits(v: X::F) -> X::I {
        X::as_bits(v)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn from_bits(v: X::I) -> X::F {
        X::from_bits(v)
    }
}

/// Lanes of `T` in a register of `X`.
#[cfg_attr(not(debug_assertions), inline(always))]
const fn lanes<X: Regs, T>() -> usize {
    X::BYTES / size_of::<T>()
}

/// `op` register by register, `tail` on the lanes past the last register.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn zip_r<X: Regs, T: Reg<X>, const N: usize>(
    a: [T; N],
    b: [T; N],
    op: impl Fn(T::R, T::R) -> T::R,
    tail: impl Fn(T, T) -> T,
) -> [T; N] {
    let l = lanes::<X, T>();
    let mut o = a;
    let mut i = 0;
    while i + l <= N {
        let r = op(T::load(a.as_ptr().add(i)), T::load(b.as_ptr().add(i)));
        T::store(o.as_mut_ptr().add(i), r);
        i += l;
    }
    while i < N {
        o[i] = tail(a[i], b[i]);
        i += 1;
    }
    o
}

/// A lane-wise operation on three vectors, register by register (`tail`
/// for the lanes after the last whole register).
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn zip3_r<X: Regs, T: Reg<X>, const N: usize>(
    [a, b, c]: [[T; N]; 3],
    op: impl Fn(T::R, T::R, T::R) -> T::R,
    tail: impl Fn(T, T, T) -> T,
) -> [T; N] {
    let l = lanes::<X, T>();
    let mut o = a;
    let mut i = 0;
    while i + l <= N {
        let (x, y, z) = (
            T::load(a.as_ptr().add(i)),
            T::load(b.as_ptr().add(i)),
            T::load(c.as_ptr().add(i)),
        );
        T::store(o.as_mut_ptr().add(i), op(x, y, z));
        i += l;
    }
    while i < N {
        o[i] = tail(a[i], b[i], c[i]);
        i += 1;
    }
    o
}

/// A conversion of one register of `A` to one of `B` (same lane width).
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn map_r<X: Regs, A: Reg<X>, B: Reg<X> + Default, const N: usize>(
    a: [A; N],
    op: impl Fn(A::R) -> B::R,
    tail: impl Fn(A) -> B,
) -> [B; N] {
    let l = lanes::<X, B>();
    let mut o = [B::default(); N];
    let mut i = 0;
    while i + l <= N {
        B::store(o.as_mut_ptr().add(i), op(A::load(a.as_ptr().add(i))));
        i += l;
    }
    while i < N {
        o[i] = tail(a[i]);
        i += 1;
    }
    o
}

/// A widening: each register of `B` from the lanes of `A` that `load` reads
/// at a pointer.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn widen_r<X: Regs, A: Copy, B: Reg<X> + Default, S, const N: usize>(
    a: [A; N],
    load: impl Fn(*const u8) -> S,
    op: impl Fn(S) -> B::R,
    tail: impl Fn(A) -> B,
) -> [B; N] {
    let l = lanes::<X, B>();
    let mut o = [B::default(); N];
    let mut i = 0;
    while i + l <= N {
        B::store(o.as_mut_ptr().add(i), op(load(a.as_ptr().add(i).cast())));
        i += l;
    }
    while i < N {
        o[i] = tail(a[i]);
        i += 1;
    }
    o
}

/// A narrowing by two: each register of `B` from two of `A`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn narrow_r<X: Regs, A: Reg<X>, B: Reg<X> + Default, const N: usize>(
    a: [A; N],
    op: impl Fn(A::R, A::R) -> B::R,
    tail: impl Fn(A) -> B,
) -> [B; N] {
    let l = lanes::<X, B>();
    let mut o = [B::default(); N];
    let mut i = 0;
    while i + l <= N {
        let (x, y) = (
            A::load(a.as_ptr().add(i)),
            A::load(a.as_ptr().add(i + l / 2)),
        );
        B::store(o.as_mut_ptr().add(i), op(x, y));
        i += l;
    }
    while i < N {
        o[i] = tail(a[i]);
        i += 1;
    }
    o
}

/// A selection between `x` and `y` by a comparison of `a` and `b` (lanes of
/// the same width), register by register.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn select_r<X: Regs, C: Reg<X>, T: Reg<X>, const N: usize>(
    [a, b]: [[C; N]; 2],
    [x, y]: [[T; N]; 2],
    op: impl Fn(C::R, C::R, X::I, X::I) -> X::I,
    tail: impl Fn(C, C, T, T) -> T,
) -> [T; N] {
    let l = lanes::<X, T>();
    let mut o = x;
    let mut i = 0;
    while i + l <= N {
        let (p, q) = (C::load(a.as_ptr().add(i)), C::load(b.as_ptr().add(i)));
        let (u, v) = (T::load(x.as_ptr().add(i)), T::load(y.as_ptr().add(i)));
        T::store(
            o.as_mut_ptr().add(i),
            T::from_bits(op(p, q, T::bits(u), T::bits(v))),
        );
        i += l;
    }
    while i < N {
        o[i] = tail(a[i], b[i], x[i], y[i]);
        i += 1;
    }
    o
}

/// The high 32 bits of each unsigned 32-bit product `a * m`, for `m` the
/// same in every lane.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn mulhi_u32<X: Regs>(a: X::I, m: X::I) -> X::I {
    let even = X::srl64(X::mul_even_u32(a, m), 32);
    let odd = X::mul_even_u32(X::srl64(a, 32), m);
    X::blend_odd32(even, odd)
}

/// `x as T` of an `f32` register, clamped to `[lo, hi]` first (NaN kept,
/// then 0): Rust's saturating `as` for targets narrower than `i32`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn f32_clamped<X: Regs>(x: X::F, lo: f32, hi: f32) -> X::I {
    // `maxps(lo, x)` and `minps(hi, x)` give `x` where it is NaN.
    X::f32_i32(X::minps(X::splatf(hi), X::maxps(X::splatf(lo), x)))
}

/// How to divide unsigned `BITS`-bit lanes by a divisor `d >= 3` that is
/// not a power of two (Granlund and Montgomery, "Division by invariant
/// integers using multiplication"): with `t = mulhi(n, m)`, the quotient is
/// `t >> shift`, or with `fixup`, `(t + ((n - t) >> 1)) >> shift`.
struct Reciprocal {
    m: u64,
    shift: u32,
    fixup: bool,
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn reciprocal<const BITS: u32>(d: u64) -> Reciprocal {
    // l = ceil(log2 d). With s = l - 1, m = ceil(2^(BITS + s) / d) fits in
    // BITS bits; it gives the exact quotient of every BITS-bit n when
    // m * d - 2^(BITS + s) <= 2^s (their theorem 4.2; if any smaller s
    // works, this one does). Otherwise the BITS + 1-bit multiplier's top
    // bit is handled by the fixup (their figure 4.1).
    let l = 64 - (d - 1).leading_zeros();
    let p = 1u64 << (BITS + l - 1);
    let m = p.div_ceil(d);
    if m * d - p <= 1 << (l - 1) {
        return Reciprocal {
            m,
            shift: l - 1,
            fixup: false,
        };
    }
    Reciprocal {
        m: ((((1u64 << l) - d) << BITS) / d + 1) & ((1u64 << BITS) - 1),
        shift: l - 1,
        fixup: true,
    }
}

/// The level below a level, whose registers a level's conversions use for
/// vectors narrower than one of its own registers. Their lanes would
/// otherwise be a lane loop, which LLVM compiles well for most operations
/// but not for narrowings, where it moves the lanes one by one (a u16 to u8
/// narrowing of 32 lanes in an AVX-512 kernel: 46 `vpextrb`/`vpinsrb`).
trait Below: Copy {
    type Level: Copy;
    fn below(self) -> Self::Level;
}

impl Below for Sse41 {
    type Level = Scalar;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn below(self) -> Scalar {
        Scalar
    }
}

impl Below for Avx2 {
    type Level = Sse41;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn below(self) -> Sse41 {
        // A processor with AVX2 has SSE4.1 (`Isa` orders the levels).
        Sse41 {
            gather_taps: self.gather_taps,
        }
    }
}

impl Below for Avx512 {
    type Level = Avx2;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn below(self) -> Avx2 {
        // As above: AVX-512 kernels are compiled with AVX2 and FMA too.
        Avx2 {
            gather_taps: self.gather_taps,
        }
    }
}

impl Below for Avx512Vbmi {
    type Level = Avx2;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn below(self) -> Avx2 {
        // As above: AVX-512 kernels are compiled with AVX2 and FMA too.
        Avx2 {
            gather_taps: self.gather_taps,
        }
    }
}

macro_rules! level {
    ($level:ident) => {
        level!(@arith $level; u8: add8 sub8 min_u8 max_u8;);
        level!(@arith $level; i8: add8 sub8 min_i8 max_i8; abs: abs8;);
        level!(@arith $level; u16: add16 sub16 min_u16 max_u16; mul: mul16; div_by: div_u16;);
        level!(@arith $level; i16: add16 sub16 min_i16 max_i16; mul: mul16; abs: abs16;);
        level!(@arith $level; u32: add32 sub32 min_u32 max_u32; mul: mul32; div_by: div_u32;);
        level!(@arith $level; i32: add32 sub32 min_i32 max_i32; mul: mul32; abs: abs32;);
        level!(@arith64 $level; u64);
        level!(@arith64 $level; i64);
        impl Arith<f64> for $level {}
        level!(@avg $level; u8: avg_u8; u16: avg_u16;);

        level!(@bits $level; u8;);
        level!(@bits $level; i8;);
        level!(@bits $level; u16; shl: sll16; shr: srl16;);
        level!(@bits $level; i16; shl: sll16; shr: sra16;);
        level!(@bits $level; u32; shl: sll32; shr: srl32;);
        level!(@bits $level; i32; shl: sll32; shr: sra32;);
        level!(@bits $level; u64; shl: sll64; shr: srl64;);
        level!(@bits $level; i64; shl: sll64;);

        impl Arith<f32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn add<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::addf(x, y), <f32 as Num>::add) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sub<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::subf(x, y), <f32 as Num>::sub) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::mulf(x, y), <f32 as Num>::mul) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn div<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::divf(x, y), <f32 as Num>::div) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn div_by<const N: usize>(self, a: [f32; N], d: f32) -> [f32; N] {
                self.div(a, [d; N])
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn min<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::minnum(x, y), <f32 as Num>::min) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn max<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::maxnum(x, y), <f32 as Num>::max) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn neg<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                let sign = [f32::from_bits(1 << 31); N];
                // SAFETY: as above.
                unsafe {
                    zip_r::<$level, _, N>(a, sign, |x, s| {
                        <$level as Regs>::from_bits(<$level as Regs>::xor(<$level as Regs>::as_bits(x), <$level as Regs>::as_bits(s)))
                    }, |x, _| -x)
                }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn abs<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                let magnitude = [f32::from_bits(!(1 << 31)); N];
                // SAFETY: as above.
                unsafe {
                    zip_r::<$level, _, N>(a, magnitude, |x, m| {
                        <$level as Regs>::from_bits(<$level as Regs>::and(<$level as Regs>::as_bits(x), <$level as Regs>::as_bits(m)))
                    }, |x, _| x.abs())
                }
            }
        }
        impl Round<f32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sqrt<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::sqrtf(x), f32::sqrt) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn floor<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::floorf(x), f32::floor) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn ceil<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::ceilf(x), f32::ceil) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn trunc<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::truncf(x), f32::trunc) }
            }
        }
        impl Round<f64> for $level {}

        // Widening integer casts: zero or sign extension by the source.
        level!(@widen $level; lh; u8 => u16, zx8_16; u8 => i16, zx8_16; i8 => i16, sx8_16;
            i8 => u16, sx8_16; u16 => u32, zx16_32; u16 => i32, zx16_32; i16 => i32, sx16_32;
            i16 => u32, sx16_32;);
        level!(@widen $level; lq; u8 => u32, zx8_32; u8 => i32, zx8_32; i8 => i32, sx8_32;
            i8 => u32, sx8_32;);
        // Truncating integer casts.
        level!(@narrow $level; Convert::cast, trunc16_8; u16 => u8; u16 => i8; i16 => u8; i16 => i8;);
        level!(@narrow $level; Convert::cast, trunc32_16; u32 => u16; u32 => i16; i32 => u16;
            i32 => i16;);
        level!(@narrow4 $level; u32 => u8 via u16; u32 => i8 via u16; i32 => u8 via u16;
            i32 => i8 via u16;);
        // Integers to f32: through i32 where every value fits.
        impl Convert<i32, f32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast<const N: usize>(self, a: [i32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::i32_f32(x), |x| x as f32) }
            }
        }
        level!(@via_i32 $level; u8 i8 u16 i16);
        // f32 to integers: Rust's saturating `as`.
        impl Convert<f32, i32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast<const N: usize>(self, a: [f32; N]) -> [i32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::f32_i32(x), |x| x as i32) }
            }
        }
        level!(@from_f32 $level; u8 i8 u16 i16);
        level!(@defaults $level; Convert;
            u8: u8 u64 i8 i64 f64; i8: u8 u64 i8 i64 f64;
            u16: u16 u64 i16 i64 f64; i16: u16 u64 i16 i64 f64;
            u32: u32 u64 i32 i64 f32 f64; i32: u32 u64 i32 i64 f64;
            u64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64; i64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
            f32: u32 u64 i64 f32 f64; f64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
        );

        // Saturating narrowing: `packus`/`packs`, unsigned sources clamped
        // to the signed range first.
        level!(@sat $level; i16 => u8, sat16_u8, |x| x; i16 => i8, sat16_i8, |x| x;
            i32 => u16, sat32_u16, |x| x; i32 => i16, sat32_i16, |x| x;
            u16 => u8, sat16_u8, |x| <$level as Regs>::min_u16(x, <$level as Regs>::splat16(255));
            u32 => u16, sat32_u16,
                |x| <$level as Regs>::min_u32(x, <$level as Regs>::splat32(65535));
        );
        level!(@sat_via $level; i32 => u8 via i16; i32 => i8 via i16; u32 => u8 via u16;);
        // Values known to fit: the packs alone (unsigned values that fit
        // the narrower type are below the signed range the packs read).
        level!(@narrow $level; NarrowFitting::narrow_fitting, sat16_u8; u16 => u8;);
        level!(@narrow $level; NarrowFitting::narrow_fitting, sat32_u16; u32 => u16;);
        impl NarrowFitting<u32, u8> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn narrow_fitting<const N: usize>(self, a: [u32; N]) -> [u8; N] {
                let m: [u16; N] = NarrowFitting::<u32, u16>::narrow_fitting(self, a);
                NarrowFitting::<u16, u8>::narrow_fitting(self, m)
            }
        }
        // Float to integer casts saturate already.
        level!(@sat_as $level; f32 => u8 i8 u16 i16 i32);
        level!(@defaults $level; SatConvert;
            u8: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64; u16: u16 u32 u64 i8 i16 i32 i64 f32 f64;
            u32: u32 u64 i8 i16 i32 i64 f32 f64; u64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
            i8: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64; i16: u16 u32 u64 i16 i32 i64 f32 f64;
            i32: u32 u64 i32 i64 f32 f64; i64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
            f32: u32 u64 i64 f32 f64; f64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
        );

        impl DivSmall<u32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn div_small<const N: usize>(self, a: [u32; N], d: u32, recip: f32) -> [u32; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe {
                    let r = <$level as Regs>::splatf(recip);
                    zip_r::<$level, _, N>(a, a, |x, _| {
                        let q = <$level as Regs>::mulf(<$level as Regs>::i32_f32(x), r);
                        <$level as Regs>::cvtt(q)
                    }, |x, _| x / d)
                }
            }
        }

        // Compare and select in lanes of one width.
        level!(@select_int $level; eq8 gt8 splat8 i8; u8 => u8 i8; i8 => u8 i8;);
        level!(@select_int $level; eq16 gt16 splat16 i16; u16 => u16 i16; i16 => u16 i16;);
        level!(@select_int $level; eq32 gt32 splat32 i32; u32 => u32 i32 f32; i32 => u32 i32 f32;);
        level!(@select_f32 $level; u32 i32 f32);
        level!(@defaults $level; Select;
            u8: u16 u32 u64 i16 i32 i64 f32 f64; u16: u8 u32 u64 i8 i32 i64 f32 f64;
            u32: u8 u16 u64 i8 i16 i64 f64; u64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
            i8: u16 u32 u64 i16 i32 i64 f32 f64; i16: u8 u32 u64 i8 i32 i64 f32 f64;
            i32: u8 u16 u64 i8 i16 i64 f64; i64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
            f32: u8 u16 u64 i8 i16 i64 f64; f64: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64;
        );
    };

    (@sat $level:ident; $($a:ident => $b:ident, $op:ident, $clamp:expr;)*) => {$(
        impl SatConvert<$a, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn saturating_cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                if N * size_of::<$b>() < <$level as Regs>::BYTES {
                    return SatConvert::<$a, $b>::saturating_cast(self.below(), a);
                }
                // SAFETY: the token proves the level (module docs).
                unsafe {
                    narrow_r::<$level, $a, $b, N>(a, |x, y| {
                        <$level as Regs>::$op(($clamp)(x), ($clamp)(y))
                    }, <$a as SaturatingCast<$b>>::saturating_cast)
                }
            }
        }
    )*};

    (@sat_via $level:ident; $($a:ident => $b:ident via $m:ident;)*) => {$(
        impl SatConvert<$a, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn saturating_cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                let m: [$m; N] = SatConvert::<$a, $m>::saturating_cast(self, a);
                SatConvert::<$m, $b>::saturating_cast(self, m)
            }
        }
    )*};

    (@sat_as $level:ident; $a:ident => $($b:ident)*) => {$(
        impl SatConvert<$a, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn saturating_cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                Convert::<$a, $b>::cast(self, a)
            }
        }
    )*};

    (@select_int $level:ident; $eq:ident $gt:ident $splat:ident $s:ident; $($c:ident => $($t:ident)*;)*) => {$($(
        impl Select<$c, $t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn select<const N: usize>(
                self,
                cmp: Cmp,
                a: [$c; N],
                b: [$c; N],
                x: [$t; N],
                y: [$t; N],
            ) -> [$t; N] {
                // Only == and > are instructions: the other comparisons
                // swap the operands or the choices.
                let (a, b, x, y, eq) = match cmp {
                    Cmp::Eq => (a, b, x, y, true),
                    Cmp::Ne => (a, b, y, x, true),
                    Cmp::Gt => (a, b, x, y, false),
                    Cmp::Le => (a, b, y, x, false),
                    Cmp::Lt => (b, a, x, y, false),
                    Cmp::Ge => (b, a, y, x, false),
                };
                // Unsigned order is the signed order of the values with
                // their top bits flipped.
                let flip: $s = if <$c>::MIN == 0 { <$s>::MIN } else { 0 };
                // SAFETY: the token proves the level (module docs).
                unsafe {
                    let f = <$level as Regs>::$splat(flip);
                    select_r::<$level, $c, $t, N>([a, b], [x, y], |a, b, x, y| {
                        if eq {
                            <$level as Regs>::$eq(a, b, x, y)
                        } else {
                            let (a, b) = (<$level as Regs>::xor(a, f), <$level as Regs>::xor(b, f));
                            <$level as Regs>::$gt(a, b, x, y)
                        }
                    }, |a, b, x, y| if (eq && a == b) || (!eq && a > b) { x } else { y })
                }
            }
        }
    )*)*};

    (@select_f32 $level:ident; $($t:ident)*) => {$(
        impl Select<f32, $t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn select<const N: usize>(
                self,
                cmp: Cmp,
                a: [f32; N],
                b: [f32; N],
                x: [$t; N],
                y: [$t; N],
            ) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe {
                    select_r::<$level, f32, $t, N>([a, b], [x, y], |a, b, x, y| {
                        <$level as Regs>::selectf(cmp, a, b, x, y)
                    }, |a, b, x, y| if cmp.test(a, b) { x } else { y })
                }
            }
        }
    )*};

    (@arith $level:ident; $t:ident: $add:ident $sub:ident $min:ident $max:ident;
        $(mul: $mul:ident;)? $(div_by: $div:ident;)? $(abs: $abs:ident;)?) => {
        impl Arith<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn add<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$add(x, y), <$t as Num>::add) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sub<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$sub(x, y), <$t as Num>::sub) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn min<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$min(x, y), <$t as Num>::min) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn max<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$max(x, y), <$t as Num>::max) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn neg<const N: usize>(self, a: [$t; N]) -> [$t; N] {
                self.sub([0; N], a)
            }
            $(
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$mul(x, y), <$t as Num>::mul) }
            }
            )?
            $(
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn div_by<const N: usize>(self, a: [$t; N], d: $t) -> [$t; N] {
                level!(@$div $level, self, a, d, N)
            }
            )?
            $(
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn abs<const N: usize>(self, a: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, a, |x, _| <$level as Regs>::$abs(x), |x, _| <$t as Num>::abs(x)) }
            }
            )?
        }
    };

    (@div_u16 $level:ident, $self:ident, $a:ident, $d:ident, $n:ident) => {
        level!(@div $level, $self, $a, $d, $n; u16, 16, |m: u64| <$level as Regs>::splat16(m as u16 as i16),
            |x, m| <$level as Regs>::mulhi_u16(x, m), add16, sub16, srl16)
    };

    (@div_u32 $level:ident, $self:ident, $a:ident, $d:ident, $n:ident) => {
        level!(@div $level, $self, $a, $d, $n; u32, 32, |m: u64| <$level as Regs>::splat32(m as u32 as i32),
            |x, m| mulhi_u32::<$level>(x, m), add32, sub32, srl32)
    };

    (@div $level:ident, $self:ident, $a:ident, $d:ident, $n:ident; $t:ident, $bits:literal,
        $splat:expr, $mulhi:expr, $add:ident, $sub:ident, $srl:ident) => {{
        if $d <= 1 || $d.is_power_of_two() {
            return if $d == 0 { [0; $n] } else { Bits::<$t>::shr($self, $a, $d.trailing_zeros()) };
        }
        let r = reciprocal::<$bits>($d as u64);
        let (m, shift) = (r.m, r.shift);
        // SAFETY: the token proves the level (module docs).
        unsafe {
            let m = ($splat)(m);
            if r.fixup {
                zip_r::<$level, _, $n>($a, $a, |x, _| {
                    let t = ($mulhi)(x, m);
                    let half = <$level as Regs>::$srl(<$level as Regs>::$sub(x, t), 1);
                    <$level as Regs>::$srl(<$level as Regs>::$add(t, half), shift)
                }, |x, _| x / $d)
            } else {
                zip_r::<$level, _, $n>($a, $a, |x, _| {
                    <$level as Regs>::$srl(($mulhi)(x, m), shift)
                }, |x, _| x / $d)
            }
        }
    }};

    (@arith64 $level:ident; $t:ident) => {
        impl Arith<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn add<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::add64(x, y), <$t as Num>::add) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn sub<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::sub64(x, y), <$t as Num>::sub) }
            }
        }
    };

    (@bits $level:ident; $t:ident; $(shl: $shl:ident;)? $(shr: $shr:ident;)?) => {
        impl Bits<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn and<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::and(x, y), <$t as Int>::and) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn or<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::or(x, y), <$t as Int>::or) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn xor<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::xor(x, y), <$t as Int>::xor) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn not<const N: usize>(self, a: [$t; N]) -> [$t; N] {
                self.xor(a, [!0; N])
            }
            $(
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn shl<const N: usize>(self, a: [$t; N], s: u32) -> [$t; N] {
                let s = s % <$t>::BITS;
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, a, |x, _| <$level as Regs>::$shl(x, s), |x, _| <$t as Int>::shl(x, s)) }
            }
            )?
            $(
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn shr<const N: usize>(self, a: [$t; N], s: u32) -> [$t; N] {
                let s = s % <$t>::BITS;
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, a, |x, _| <$level as Regs>::$shr(x, s), |x, _| <$t as Int>::shr(x, s)) }
            }
            )?
        }
    };

    (@widen $level:ident; $load:ident; $($a:ident => $b:ident, $op:ident;)*) => {$(
        impl Convert<$a, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                if N * size_of::<$b>() < <$level as Regs>::BYTES {
                    return Convert::<$a, $b>::cast(self.below(), a);
                }
                // SAFETY: the token proves the level (module docs); `widen_r`
                // reads the lanes of one register of the result.
                unsafe {
                    widen_r::<$level, $a, $b, _, N>(a, |p| <$level as Regs>::$load(p), |x| <$level as Regs>::$op(x), |x| x as $b)
                }
            }
        }
    )*};

    // Narrowing by one pack of two registers per register, as `$trait`'s
    // `$method`.
    (@narrow $level:ident; $trait:ident::$method:ident, $op:ident; $($a:ident => $b:ident;)*) => {$(
        impl $trait<$a, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn $method<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                if N * size_of::<$b>() < <$level as Regs>::BYTES {
                    return $trait::<$a, $b>::$method(self.below(), a);
                }
                // SAFETY: the token proves the level (module docs).
                unsafe { narrow_r::<$level, $a, $b, N>(a, |x, y| <$level as Regs>::$op(x, y), |x| x as $b) }
            }
        }
    )*};

    (@narrow4 $level:ident; $($a:ident => $b:ident via $m:ident;)*) => {$(
        impl Convert<$a, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                let m: [$m; N] = Convert::<$a, $m>::cast(self, a);
                Convert::<$m, $b>::cast(self, m)
            }
        }
    )*};

    (@via_i32 $level:ident; $($a:ident)*) => {$(
        impl Convert<$a, f32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast<const N: usize>(self, a: [$a; N]) -> [f32; N] {
                let wide: [i32; N] = Convert::<$a, i32>::cast(self, a);
                Convert::<i32, f32>::cast(self, wide)
            }
        }
    )*};

    (@from_f32 $level:ident; $($b:ident)*) => {$(
        impl Convert<f32, $b> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn cast<const N: usize>(self, a: [f32; N]) -> [$b; N] {
                let (lo, hi) = (<$b>::MIN as f32, <$b>::MAX as f32);
                // SAFETY: the token proves the level (module docs).
                let wide: [i32; N] = unsafe {
                    map_r::<$level, f32, i32, N>(a, |x| f32_clamped::<$level>(x, lo, hi), |x| x as $b as i32)
                };
                Convert::<i32, $b>::cast(self, wide)
            }
        }
    )*};

    (@avg $level:ident; $($t:ident: $avg:ident;)*) => {$(
        impl Average<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn avg_round<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the processor has the level.
                unsafe { zip_r::<$level, $t, N>(a, b, |x, y| <$level as Regs>::$avg(x, y), RoundingAverage::avg_round) }
            }
        }
    )*};

    (@defaults $level:ident; $tr:ident; $($a:ident: $($b:ident)*;)*) => {$($(
        impl $tr<$a, $b> for $level {}
    )*)*};
}

level!(Sse41);
level!(Avx2);
level!(Avx512);
level!(Avx512Vbmi);

// Fused multiply-add: one instruction from AVX2 (whose kernels enable FMA)
// up; SSE4.1 has none and computes each lane with `mul_add`.
macro_rules! mul_add {
    ($($level:ident: $fmadd:path;)*) => {$(
        impl MulAdd<f32> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul_add<const N: usize>(self, a: [f32; N], b: [f32; N], c: [f32; N]) -> [f32; N] {
                // SAFETY: the token proves the processor has the level, whose
                // kernels enable FMA (see `Avx2`).
                unsafe { zip3_r::<$level, f32, N>([a, b, c], |x, y, z| $fmadd(x, y, z), f32::mul_add) }
            }
        }
        impl MulAdd<f64> for $level {}
    )*};
}
mul_add! {
    Avx2: _mm256_fmadd_ps;
    Avx512: _mm512_fmadd_ps;
    Avx512Vbmi: _mm512_fmadd_ps;
}
impl MulAdd<f32> for Sse41 {}
impl MulAdd<f64> for Sse41 {}
