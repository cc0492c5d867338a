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
//! The methods are `#[inline(always)]` without `#[target_feature]`: they are
//! inlined into the kernel of their level, which enables the features, and
//! the intrinsics are inlined there. A token exists only where the processor
//! has the level, which makes calling the intrinsics sound.

use super::{
    Arith, Average, Bits, Cmp, Convert, Deinterleave, DivSmall, Int, MulAdd, NarrowFitting, Num,
    Reverse, Round, RoundingAverage, SatConvert, Scalar, Select,
};

mod blocks;
use crate::rt::isa::{detected, Isa};
use crate::rt::SaturatingCast;
use core::arch::x86_64::*;
use core::mem::size_of;

/// The SSE4.1 level (the kernels compiled with `sse4.1`).
#[derive(Clone, Copy, Debug)]
pub struct Sse41(());

/// The AVX2 level (the kernels compiled with `avx2,fma`).
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

/// The AVX-512 level (F and BW; the kernels compiled with
/// `avx512f,avx512bw,avx2,fma`).
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

macro_rules! token {
    ($($level:ident: $isa:ident;)*) => {$(
        impl $level {
            /// The token, if this processor has the level.
            pub fn new() -> Option<$level> {
                (detected() >= Isa::$isa).then_some($level(()))
            }

            /// The token, without checking the processor.
            ///
            /// # Safety
            ///
            /// The processor must have the level (the generated kernel of
            /// the level runs only where [`crate::rt::isa`] reports it).
            pub unsafe fn new_unchecked() -> $level {
                $level(())
            }
        }
    )*};
}
token! {
    Sse41: Sse41;
    Avx2: Avx2;
    Avx512: Avx512;
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
            #[inline(always)]
            unsafe fn load(p: *const $t) -> X::I { X::li(p.cast()) }
            #[inline(always)]
            unsafe fn store(p: *mut $t, v: X::I) { X::si(p.cast(), v) }
            #[inline(always)]
            unsafe fn bits(v: X::I) -> X::I { v }
            #[inline(always)]
            unsafe fn from_bits(v: X::I) -> X::I { v }
        }
    )*};
}
int_reg!(u8 u16 u32 u64 i8 i16 i32 i64);

impl<X: Regs> Reg<X> for f32 {
    type R = X::F;
    #[inline(always)]
    unsafe fn load(p: *const f32) -> X::F {
        X::lf(p)
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: X::F) {
        X::sf(p, v)
    }
    #[inline(always)]
    unsafe fn bits(v: X::F) -> X::I {
        X::as_bits(v)
    }
    #[inline(always)]
    unsafe fn from_bits(v: X::I) -> X::F {
        X::from_bits(v)
    }
}

/// Lanes of `T` in a register of `X`.
#[inline(always)]
const fn lanes<X: Regs, T>() -> usize {
    X::BYTES / size_of::<T>()
}

/// `op` register by register, `tail` on the lanes past the last register.
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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

/// Lanes `o[i] = p[2 i]` for `i` from `from` up to `n`, whole registers of
/// level `X` at a time: the even lanes of the register at `p + 2 i`, then
/// the odd lanes of the one at `p + 2 i + l - 1` (so that no load passes the
/// span's last element, `p + 2 n - 2`), combined by `op`. Returns the first
/// lane not written.
#[inline(always)]
unsafe fn every_2nd_r<X: Regs, T: Reg<X>>(
    p: *const T,
    o: *mut T,
    n: usize,
    from: usize,
    op: impl Fn(X::I, X::I) -> X::I,
) -> usize {
    let l = lanes::<X, T>();
    let mut i = from;
    while i + l <= n {
        let (x, y) = (T::load(p.add(2 * i)), T::load(p.add(2 * i + l - 1)));
        T::store(o.add(i), T::from_bits(op(T::bits(x), T::bits(y))));
        i += l;
    }
    i
}

/// Both phases of stride 2, `o[0][i] = p[2 i]` and `o[1][i] = p[2 i + 1]`,
/// for `i` from `from` up to `N`, whole registers of level `X` at a time:
/// the `2 l` elements of `l` lanes read as two registers, once, and
/// narrowed as lanes twice as wide, the low halves (`even`) and the high
/// ones (`odd`). Returns the first lane not written.
#[inline(always)]
unsafe fn phases2_r<X: Regs, T: Reg<X>, const N: usize>(
    p: *const T,
    o: &mut [[T; N]; 2],
    from: usize,
    even: impl Fn(X::I, X::I) -> X::I,
    odd: impl Fn(X::I, X::I) -> X::I,
) -> usize {
    let l = lanes::<X, T>();
    let mut i = from;
    while i + l <= N {
        let (x, y) = (T::load(p.add(2 * i)), T::load(p.add(2 * i + l)));
        let (x, y) = (T::bits(x), T::bits(y));
        T::store(o[0].as_mut_ptr().add(i), T::from_bits(even(x, y)));
        T::store(o[1].as_mut_ptr().add(i), T::from_bits(odd(x, y)));
        i += l;
    }
    i
}

/// Loads of a constant stride `S` by byte shuffles: a register's lanes
/// `p[0], p[S], ...` from the bytes they span, read 16 at a time (the last
/// read ending at the span's last byte, so that none passes it), each read
/// shuffled into the lanes it holds (`pshufb`, zero elsewhere) and the
/// results ORed. `B`-byte lanes; `S` reads of 16 bytes or fewer per 16
/// bytes of lanes, where LLVM's code for the same picks loads and stores
/// one lane at a time below AVX-512.
trait Strided: Regs {
    /// Whether LLVM's code for the picks of lanes of 2 bytes or more is
    /// better (whole-register permutes).
    const PERMUTES: bool = false;
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> Self::I;
    /// The `S` phases of a register of lanes each, from the `S` registers'
    /// worth of bytes at `p`, read once.
    unsafe fn phases<const S: usize>(p: *const u8, b: usize) -> [Self::I; S];
}

/// [`picks`] for phase `phase` of the lanes: the lanes `phase`, `phase +
/// s`, ... of the 16 bytes of lanes from `start`.
#[inline(always)]
const fn phase_picks(b: usize, s: usize, phase: usize, start: usize) -> [i8; 16] {
    let mut m = [-128i8; 16];
    let mut k = 0;
    while k < 16 {
        let src = ((k / b) * s + phase) * b + k % b;
        if src >= start && src < start + 16 {
            m[k] = (src - start) as i8;
        }
        k += 1;
    }
    m
}

#[inline(always)]
unsafe fn phase_picks_reg(b: usize, s: usize, phase: usize, start: usize) -> __m128i {
    // SAFETY: 16 bytes are read from a 16-byte array.
    unsafe { _mm_loadu_si128(phase_picks(b, s, phase, start).as_ptr().cast()) }
}

/// The `pshufb` indices that move the lanes a 16-byte read at byte `start`
/// of the span holds into their places in 16 bytes of lanes of `b` bytes
/// `s` lanes apart (0x80, a zero, for the others).
#[inline(always)]
const fn picks(b: usize, s: usize, start: usize) -> [i8; 16] {
    phase_picks(b, s, 0, start)
}

/// The bytes of the span of 16 bytes of lanes of `b` bytes `s` apart.
#[inline(always)]
const fn span_bytes(b: usize, s: usize) -> usize {
    ((16 / b - 1) * s + 1) * b
}

/// The `j`-th 16-byte read of such a span starts here.
#[inline(always)]
const fn read_start(b: usize, s: usize, j: usize) -> usize {
    let last = span_bytes(b, s) - 16;
    if 16 * j < last {
        16 * j
    } else {
        last
    }
}

#[inline(always)]
unsafe fn picks_reg(b: usize, s: usize, start: usize) -> __m128i {
    // SAFETY: 16 bytes are read from a 16-byte array.
    unsafe { _mm_loadu_si128(picks(b, s, start).as_ptr().cast()) }
}

impl Strided for Sse41 {
    #[inline(always)]
    unsafe fn phases<const S: usize>(p: *const u8, b: usize) -> [__m128i; S] {
        // Loops, not closures: a closure would be compiled without the
        // kernel's target features, and the intrinsics not inlined.
        let mut reads = [_mm_setzero_si128(); S];
        for (k, r) in reads.iter_mut().enumerate() {
            *r = _mm_loadu_si128(p.add(16 * k).cast());
        }
        let mut out = [_mm_setzero_si128(); S];
        for (j, o) in out.iter_mut().enumerate() {
            for (k, &v) in reads.iter().enumerate() {
                *o = _mm_or_si128(*o, _mm_shuffle_epi8(v, phase_picks_reg(b, S, j, 16 * k)));
            }
        }
        out
    }
    #[inline(always)]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m128i {
        let reads = span_bytes(b, S).div_ceil(16);
        let mut acc = _mm_setzero_si128();
        for j in 0..reads {
            let start = read_start(b, S, j);
            let v = _mm_loadu_si128(p.add(start).cast());
            acc = _mm_or_si128(acc, _mm_shuffle_epi8(v, picks_reg(b, S, start)));
        }
        acc
    }
}

impl Strided for Avx2 {
    #[inline(always)]
    unsafe fn phases<const S: usize>(p: *const u8, b: usize) -> [__m256i; S] {
        // Loops, not closures (see `Sse41`'s).
        let mut reads = [_mm256_setzero_si256(); S];
        for (k, r) in reads.iter_mut().enumerate() {
            *r = _mm256_loadu2_m128i(p.add(16 * k + 16 * S).cast(), p.add(16 * k).cast());
        }
        let mut out = [_mm256_setzero_si256(); S];
        for (j, o) in out.iter_mut().enumerate() {
            for (k, &v) in reads.iter().enumerate() {
                let m = _mm256_broadcastsi128_si256(phase_picks_reg(b, S, j, 16 * k));
                *o = _mm256_or_si256(*o, _mm256_shuffle_epi8(v, m));
            }
        }
        out
    }
    /// Both 128-bit halves at once: each read is of the same bytes of the
    /// two halves' spans (`16 S` bytes apart), and `vpshufb` shuffles each
    /// half by the same indices.
    #[inline(always)]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m256i {
        let reads = span_bytes(b, S).div_ceil(16);
        let mut acc = _mm256_setzero_si256();
        for j in 0..reads {
            let start = read_start(b, S, j);
            let v = _mm256_loadu2_m128i(p.add(start + 16 * S).cast(), p.add(start).cast());
            let m = _mm256_broadcastsi128_si256(picks_reg(b, S, start));
            acc = _mm256_or_si256(acc, _mm256_shuffle_epi8(v, m));
        }
        acc
    }
}

impl Strided for Avx512 {
    const PERMUTES: bool = true;

    /// Two AVX2 halves.
    #[inline(always)]
    unsafe fn phases<const S: usize>(p: *const u8, b: usize) -> [__m512i; S] {
        let lo = Avx2::phases::<S>(p, b);
        let hi = Avx2::phases::<S>(p.add(32 * S), b);
        let mut out = [_mm512_setzero_si512(); S];
        for (j, o) in out.iter_mut().enumerate() {
            *o = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo[j]), hi[j]);
        }
        out
    }

    /// Two AVX2 halves.
    #[inline(always)]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m512i {
        let lo = Avx2::every::<S>(p, b);
        let hi = Avx2::every::<S>(p.add(32 * S), b);
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
    }
}

/// Lanes `o[i] = p[S i]` for `i` from `from` up to `n`, whole registers of
/// level `X` at a time, each from the span of its own lanes. Returns the
/// first lane not written.
#[inline(always)]
unsafe fn every_r<X: Strided, T, const S: usize>(
    p: *const T,
    o: *mut T,
    n: usize,
    from: usize,
) -> usize {
    let l = lanes::<X, T>();
    let mut i = from;
    while i + l <= n {
        X::si(
            o.add(i).cast(),
            X::every::<S>(p.add(S * i).cast(), size_of::<T>()),
        );
        i += l;
    }
    i
}

/// Lanes `o[j][i] = p[S i + j]` for every phase `j` and `i` from `from` up
/// to `n`, whole registers of level `X` at a time, each from the `S`
/// registers' worth of elements of its lanes. Returns the first lane not
/// written.
#[inline(always)]
unsafe fn phases_r<X: Strided, T, const N: usize, const S: usize>(
    p: *const T,
    o: &mut [[T; N]; S],
    from: usize,
) -> usize {
    let l = lanes::<X, T>();
    let mut i = from;
    while i + l <= N {
        let v = X::phases::<S>(p.add(S * i).cast(), size_of::<T>());
        for (j, r) in v.into_iter().enumerate() {
            X::si(o[j].as_mut_ptr().add(i).cast(), r);
        }
        i += l;
    }
    i
}

/// A selection between `x` and `y` by a comparison of `a` and `b` (lanes of
/// the same width), register by register.
#[inline(always)]
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
#[inline(always)]
unsafe fn mulhi_u32<X: Regs>(a: X::I, m: X::I) -> X::I {
    let even = X::srl64(X::mul_even_u32(a, m), 32);
    let odd = X::mul_even_u32(X::srl64(a, 32), m);
    X::blend_odd32(even, odd)
}

/// `x as T` of an `f32` register, clamped to `[lo, hi]` first (NaN kept,
/// then 0): Rust's saturating `as` for targets narrower than `i32`.
#[inline(always)]
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

#[inline(always)]
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
    #[inline(always)]
    fn below(self) -> Scalar {
        Scalar
    }
}

impl Below for Avx2 {
    type Level = Sse41;
    #[inline(always)]
    fn below(self) -> Sse41 {
        // A processor with AVX2 has SSE4.1 (`Isa` orders the levels).
        Sse41(())
    }
}

impl Below for Avx512 {
    type Level = Avx2;
    #[inline(always)]
    fn below(self) -> Avx2 {
        // As above: AVX-512 kernels are compiled with AVX2 and FMA too.
        Avx2(())
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
            #[inline(always)]
            fn add<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::addf(x, y), <f32 as Num>::add) }
            }
            #[inline(always)]
            fn sub<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::subf(x, y), <f32 as Num>::sub) }
            }
            #[inline(always)]
            fn mul<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::mulf(x, y), <f32 as Num>::mul) }
            }
            #[inline(always)]
            fn div<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::divf(x, y), <f32 as Num>::div) }
            }
            #[inline(always)]
            fn div_by<const N: usize>(self, a: [f32; N], d: f32) -> [f32; N] {
                self.div(a, [d; N])
            }
            #[inline(always)]
            fn min<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::minnum(x, y), <f32 as Num>::min) }
            }
            #[inline(always)]
            fn max<const N: usize>(self, a: [f32; N], b: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::maxnum(x, y), <f32 as Num>::max) }
            }
            #[inline(always)]
            fn neg<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                let sign = [f32::from_bits(1 << 31); N];
                // SAFETY: as above.
                unsafe {
                    zip_r::<$level, _, N>(a, sign, |x, s| {
                        <$level as Regs>::from_bits(<$level as Regs>::xor(<$level as Regs>::as_bits(x), <$level as Regs>::as_bits(s)))
                    }, |x, _| -x)
                }
            }
            #[inline(always)]
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
            #[inline(always)]
            fn sqrt<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::sqrtf(x), f32::sqrt) }
            }
            #[inline(always)]
            fn floor<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::floorf(x), f32::floor) }
            }
            #[inline(always)]
            fn ceil<const N: usize>(self, a: [f32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::ceilf(x), f32::ceil) }
            }
            #[inline(always)]
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
            #[inline(always)]
            fn cast<const N: usize>(self, a: [i32; N]) -> [f32; N] {
                // SAFETY: as above.
                unsafe { map_r::<$level, _, _, N>(a, |x| <$level as Regs>::i32_f32(x), |x| x as f32) }
            }
        }
        level!(@via_i32 $level; u8 i8 u16 i16);
        // f32 to integers: Rust's saturating `as`.
        impl Convert<f32, i32> for $level {
            #[inline(always)]
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
            #[inline(always)]
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
            #[inline(always)]
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
            #[inline(always)]
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
            #[inline(always)]
            fn saturating_cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                let m: [$m; N] = SatConvert::<$a, $m>::saturating_cast(self, a);
                SatConvert::<$m, $b>::saturating_cast(self, m)
            }
        }
    )*};

    (@sat_as $level:ident; $a:ident => $($b:ident)*) => {$(
        impl SatConvert<$a, $b> for $level {
            #[inline(always)]
            fn saturating_cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                Convert::<$a, $b>::cast(self, a)
            }
        }
    )*};

    (@select_int $level:ident; $eq:ident $gt:ident $splat:ident $s:ident; $($c:ident => $($t:ident)*;)*) => {$($(
        impl Select<$c, $t> for $level {
            #[inline(always)]
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
            #[inline(always)]
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
            #[inline(always)]
            fn add<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$add(x, y), <$t as Num>::add) }
            }
            #[inline(always)]
            fn sub<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$sub(x, y), <$t as Num>::sub) }
            }
            #[inline(always)]
            fn min<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$min(x, y), <$t as Num>::min) }
            }
            #[inline(always)]
            fn max<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$max(x, y), <$t as Num>::max) }
            }
            #[inline(always)]
            fn neg<const N: usize>(self, a: [$t; N]) -> [$t; N] {
                self.sub([0; N], a)
            }
            $(
            #[inline(always)]
            fn mul<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::$mul(x, y), <$t as Num>::mul) }
            }
            )?
            $(
            #[inline(always)]
            fn div_by<const N: usize>(self, a: [$t; N], d: $t) -> [$t; N] {
                level!(@$div $level, self, a, d, N)
            }
            )?
            $(
            #[inline(always)]
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
            #[inline(always)]
            fn add<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::add64(x, y), <$t as Num>::add) }
            }
            #[inline(always)]
            fn sub<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::sub64(x, y), <$t as Num>::sub) }
            }
        }
    };

    (@bits $level:ident; $t:ident; $(shl: $shl:ident;)? $(shr: $shr:ident;)?) => {
        impl Bits<$t> for $level {
            #[inline(always)]
            fn and<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: the token proves the level (module docs).
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::and(x, y), <$t as Int>::and) }
            }
            #[inline(always)]
            fn or<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::or(x, y), <$t as Int>::or) }
            }
            #[inline(always)]
            fn xor<const N: usize>(self, a: [$t; N], b: [$t; N]) -> [$t; N] {
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, b, |x, y| <$level as Regs>::xor(x, y), <$t as Int>::xor) }
            }
            #[inline(always)]
            fn not<const N: usize>(self, a: [$t; N]) -> [$t; N] {
                self.xor(a, [!0; N])
            }
            $(
            #[inline(always)]
            fn shl<const N: usize>(self, a: [$t; N], s: u32) -> [$t; N] {
                let s = s % <$t>::BITS;
                // SAFETY: as above.
                unsafe { zip_r::<$level, _, N>(a, a, |x, _| <$level as Regs>::$shl(x, s), |x, _| <$t as Int>::shl(x, s)) }
            }
            )?
            $(
            #[inline(always)]
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
            #[inline(always)]
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
            #[inline(always)]
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
            #[inline(always)]
            fn cast<const N: usize>(self, a: [$a; N]) -> [$b; N] {
                let m: [$m; N] = Convert::<$a, $m>::cast(self, a);
                Convert::<$m, $b>::cast(self, m)
            }
        }
    )*};

    (@via_i32 $level:ident; $($a:ident)*) => {$(
        impl Convert<$a, f32> for $level {
            #[inline(always)]
            fn cast<const N: usize>(self, a: [$a; N]) -> [f32; N] {
                let wide: [i32; N] = Convert::<$a, i32>::cast(self, a);
                Convert::<i32, f32>::cast(self, wide)
            }
        }
    )*};

    (@from_f32 $level:ident; $($b:ident)*) => {$(
        impl Convert<f32, $b> for $level {
            #[inline(always)]
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
            #[inline(always)]
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

/// Both phases of stride 2 at a level ([`Deinterleave::load_phases`] with
/// `S` = 2): by default the lanes picked one by one.
trait Phases2<T: Copy + Default>: Copy {
    /// # Safety
    ///
    /// The `2 N` elements from `p` must be readable, and the processor must
    /// have the level.
    #[inline(always)]
    unsafe fn phases2<const N: usize>(p: *const T) -> [[T; N]; 2] {
        // SAFETY: the caller makes the elements readable.
        unsafe { super::pick_phases::<T, N, 2>(p) }
    }
}

// Stride-2 loads: the even lanes of one register and the odd ones of the
// next (shifted down a lane), narrowed as lanes twice as wide; the lanes
// left over in whole registers of the levels below (whose instructions the
// level's kernels enable), the rest one by one.
macro_rules! every_2nd {
    ($($level:ident $(then $below:ident)*;)*) => {$(
        every_2nd!(@types $level [$($below)*]; trunc16_8, srl16, 8: u8 i8;
            trunc32_16, srl32, 16: u16 i16; trunc64_32, srl64, 32: u32 i32 f32;);
        impl Phases2<u64> for $level {}
        impl Phases2<i64> for $level {}
        impl Phases2<f64> for $level {}
        impl Deinterleave<u64> for $level { every_2nd!(@every $level [$($below)*] u64); }
        impl Deinterleave<i64> for $level { every_2nd!(@every $level [$($below)*] i64); }
        impl Deinterleave<f64> for $level { every_2nd!(@every $level [$($below)*] f64); }
    )*};
    // Strides 3 and 4 by byte shuffles (`Strided`): whole registers of the
    // level, then of the levels below, the rest one by one. Other strides
    // keep the default.
    (@every $level:ident [$($below:ident)*] $t:ident) => {
        #[inline(always)]
        unsafe fn load_phases<const N: usize, const S: usize>(
            self,
            p: *const $t,
        ) -> [[$t; N]; S] {
            if S == 2 {
                // SAFETY: the caller makes the `2 N` elements readable.
                let o = unsafe { <$level as Phases2<$t>>::phases2::<N>(p) };
                // SAFETY: `[[T; N]; 2]` is `[[T; N]; S]` when `S` is 2.
                return unsafe { core::mem::transmute_copy(&o) };
            }
            if S != 3 && S != 4 {
                // SAFETY: the caller makes the elements readable.
                return unsafe { super::pick_phases::<$t, N, S>(p) };
            }
            let mut o = [[<$t>::default(); N]; S];
            // SAFETY: the token proves the level, whose kernels enable the
            // levels below (module docs); each register's elements lie
            // inside the `S N` the caller makes readable.
            let mut i = unsafe { phases_r::<$level, $t, N, S>(p, &mut o, 0) };
            $(
                // SAFETY: as above.
                i = unsafe { phases_r::<$below, $t, N, S>(p, &mut o, i) };
            )*
            while i < N {
                for j in 0..S {
                    // SAFETY: as above.
                    o[j][i] = unsafe { p.add(S * i + j).read_unaligned() };
                }
                i += 1;
            }
            o
        }
        #[inline(always)]
        unsafe fn load_every<const N: usize, const M: usize, const S: usize>(
            self,
            p: *const $t,
        ) -> [$t; N] {
            debug_assert!(
                N >= 1 && M == (N - 1) * S + 1,
                "a span of {M} for {N} lanes by {S}"
            );
            // LLVM's own code for the picks is per lane below AVX-512, but
            // at AVX-512 it permutes lanes of 2 bytes or more in whole
            // registers (`vpermt2w`, 13-16 instructions a register against
            // 22-29 for the shuffles).
            let permutes = <$level as Strided>::PERMUTES
                && size_of::<$t>() > 1
                && (N * size_of::<$t>()) % <$level as Regs>::BYTES == 0;
            if (S != 3 && S != 4) || permutes {
                // SAFETY: the caller makes the span readable.
                return unsafe { super::pick_every::<$t, N, M, S>(p) };
            }
            let mut o = [<$t>::default(); N];
            // SAFETY: the token proves the level, whose kernels enable the
            // levels below (module docs); each register's lanes lie inside
            // the span the caller makes readable.
            let mut i = unsafe { every_r::<$level, $t, S>(p, o.as_mut_ptr(), N, 0) };
            $(
                // SAFETY: as above.
                i = unsafe { every_r::<$below, $t, S>(p, o.as_mut_ptr(), N, i) };
            )*
            while i < N {
                // SAFETY: as above.
                o[i] = unsafe { p.add(S * i).read_unaligned() };
                i += 1;
            }
            o
        }
    };
    (@types $level:ident $below:tt; $($trunc:ident, $srl:ident, $bits:literal: $($t:ident)*;)*) => {$($(
        impl Phases2<$t> for $level {
            #[inline(always)]
            unsafe fn phases2<const N: usize>(p: *const $t) -> [[$t; N]; 2] {
                let mut o = [[<$t>::default(); N]; 2];
                // SAFETY: the token proves the level, whose kernels enable
                // the levels below (module docs); each register's elements
                // lie inside the `2 N` the caller makes readable.
                let mut i = unsafe {
                    phases2_r::<$level, $t, N>(
                        p,
                        &mut o,
                        0,
                        |x, y| <$level as Regs>::$trunc(x, y),
                        |x, y| {
                            <$level as Regs>::$trunc(
                                <$level as Regs>::$srl(x, $bits),
                                <$level as Regs>::$srl(y, $bits),
                            )
                        },
                    )
                };
                every_2nd!(@below2 $below; p, o, N, i, $t, $trunc, $srl, $bits);
                while i < N {
                    // SAFETY: as above.
                    o[0][i] = unsafe { p.add(2 * i).read_unaligned() };
                    o[1][i] = unsafe { p.add(2 * i + 1).read_unaligned() };
                    i += 1;
                }
                o
            }
        }
        impl Deinterleave<$t> for $level {
            every_2nd!(@every $level $below $t);
            #[inline(always)]
            unsafe fn load_every_2nd<const N: usize>(self, p: *const $t) -> [$t; N] {
                let mut o = [<$t>::default(); N];
                // SAFETY: the token proves the level, whose kernels enable
                // the levels below (module docs); the caller makes the
                // span readable.
                let mut i = unsafe {
                    every_2nd_r::<$level, $t>(p, o.as_mut_ptr(), N, 0, |x, y| {
                        <$level as Regs>::$trunc(x, <$level as Regs>::$srl(y, $bits))
                    })
                };
                every_2nd!(@below $below; p, o, N, i, $t, $trunc, $srl, $bits);
                while i < N {
                    // SAFETY: as above.
                    o[i] = unsafe { p.add(2 * i).read_unaligned() };
                    i += 1;
                }
                o
            }
        }
    )*)*};
    (@below2 [$($below:ident)*]; $p:ident, $o:ident, $n:ident, $i:ident, $t:ident, $trunc:ident, $srl:ident, $bits:literal) => {$(
        // SAFETY: as above.
        $i = unsafe {
            phases2_r::<$below, $t, $n>(
                $p,
                &mut $o,
                $i,
                |x, y| <$below as Regs>::$trunc(x, y),
                |x, y| {
                    <$below as Regs>::$trunc(
                        <$below as Regs>::$srl(x, $bits),
                        <$below as Regs>::$srl(y, $bits),
                    )
                },
            )
        };
    )*};
    (@below [$($below:ident)*]; $p:ident, $o:ident, $n:ident, $i:ident, $t:ident, $trunc:ident, $srl:ident, $bits:literal) => {$(
        // SAFETY: as above.
        $i = unsafe {
            every_2nd_r::<$below, $t>($p, $o.as_mut_ptr(), $n, $i, |x, y| {
                <$below as Regs>::$trunc(x, <$below as Regs>::$srl(y, $bits))
            })
        };
    )*};
}
every_2nd! {
    Sse41;
    Avx2 then Sse41;
    Avx512 then Avx2 then Sse41;
}

/// The lanes of an integer register in reverse order, by lane width.
trait Reversal: Regs {
    unsafe fn rev8(a: Self::I) -> Self::I;
    unsafe fn rev16(a: Self::I) -> Self::I;
    unsafe fn rev32(a: Self::I) -> Self::I;
    unsafe fn rev64(a: Self::I) -> Self::I;
}

/// `pshufb` indices that reverse the bytes of each 16-byte lane, for lanes
/// of `bytes` bytes.
const fn reversed_bytes(bytes: usize) -> [i8; 16] {
    let mut m = [0i8; 16];
    let mut k = 0;
    while k < 16 {
        // Byte `k` of the result: byte `k % bytes` of lane `15 / bytes - k / bytes`.
        m[k] = (16 - bytes * (k / bytes + 1) + k % bytes) as i8;
        k += 1;
    }
    m
}

/// [`reversed_bytes`] as a register.
#[inline(always)]
unsafe fn shuffle_mask(bytes: usize) -> __m128i {
    // SAFETY: 16 bytes are read from a 16-byte array.
    unsafe { _mm_loadu_si128(reversed_bytes(bytes).as_ptr().cast()) }
}

impl Reversal for Sse41 {
    #[inline(always)]
    unsafe fn rev8(a: __m128i) -> __m128i {
        _mm_shuffle_epi8(a, shuffle_mask(1))
    }
    #[inline(always)]
    unsafe fn rev16(a: __m128i) -> __m128i {
        _mm_shuffle_epi8(a, shuffle_mask(2))
    }
    #[inline(always)]
    unsafe fn rev32(a: __m128i) -> __m128i {
        _mm_shuffle_epi32::<0b00_01_10_11>(a)
    }
    #[inline(always)]
    unsafe fn rev64(a: __m128i) -> __m128i {
        _mm_shuffle_epi32::<0b01_00_11_10>(a)
    }
}

/// Lanes of `bytes` bytes of an AVX2 register in reverse order: reversed in
/// each 128-bit half, then the halves swapped.
#[inline(always)]
unsafe fn avx2_rev_in_halves(a: __m256i, bytes: usize) -> __m256i {
    let m = _mm256_broadcastsi128_si256(shuffle_mask(bytes));
    _mm256_permute4x64_epi64::<0b01_00_11_10>(_mm256_shuffle_epi8(a, m))
}

impl Reversal for Avx2 {
    #[inline(always)]
    unsafe fn rev8(a: __m256i) -> __m256i {
        avx2_rev_in_halves(a, 1)
    }
    #[inline(always)]
    unsafe fn rev16(a: __m256i) -> __m256i {
        avx2_rev_in_halves(a, 2)
    }
    #[inline(always)]
    unsafe fn rev32(a: __m256i) -> __m256i {
        _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0))
    }
    #[inline(always)]
    unsafe fn rev64(a: __m256i) -> __m256i {
        _mm256_permute4x64_epi64::<0b00_01_10_11>(a)
    }
}

impl Reversal for Avx512 {
    // Bytes: reversed in each 128-bit lane, then the lanes reversed
    // (`vpermb` would need VBMI).
    #[inline(always)]
    unsafe fn rev8(a: __m512i) -> __m512i {
        let m = _mm512_broadcast_i32x4(shuffle_mask(1));
        let t = _mm512_shuffle_epi8(a, m);
        _mm512_shuffle_i64x2::<0b00_01_10_11>(t, t)
    }
    #[inline(always)]
    unsafe fn rev16(a: __m512i) -> __m512i {
        let i = _mm512_set_epi16(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 26, 27, 28, 29, 30, 31,
        );
        _mm512_permutexvar_epi16(i, a)
    }
    #[inline(always)]
    unsafe fn rev32(a: __m512i) -> __m512i {
        let i = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        _mm512_permutexvar_epi32(i, a)
    }
    #[inline(always)]
    unsafe fn rev64(a: __m512i) -> __m512i {
        _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), a)
    }
}

/// Lanes `from..` of `a` reversed into `o` (`o[i] = a[n - 1 - i]`), a
/// register of level `X` at a time, each reversed by `rev`. Returns the
/// first lane not written.
#[inline(always)]
unsafe fn reverse_r<X: Regs, T: Reg<X>>(
    a: *const T,
    o: *mut T,
    n: usize,
    from: usize,
    rev: impl Fn(X::I) -> X::I,
) -> usize {
    let l = lanes::<X, T>();
    let mut i = from;
    while i + l <= n {
        let v = T::load(a.add(n - i - l));
        T::store(o.add(i), T::from_bits(rev(T::bits(v))));
        i += l;
    }
    i
}

// Reversals: whole registers of the level, then of the levels below (whose
// instructions the level's kernels enable), the rest one by one.
macro_rules! reverse {
    ($($level:ident $(then $below:ident)*;)*) => {$(
        reverse!(@types $level [$($below)*]; rev8: u8 i8; rev16: u16 i16; rev32: u32 i32 f32;
            rev64: u64 i64;);
        impl Reverse<f64> for $level {
            #[inline(always)]
            fn reverse<const N: usize>(self, a: [f64; N]) -> [f64; N] {
                Reverse::<u64>::reverse(self, a.map(f64::to_bits)).map(f64::from_bits)
            }
        }
    )*};
    (@types $level:ident $below:tt; $($rev:ident: $($t:ident)*;)*) => {$($(
        impl Reverse<$t> for $level {
            #[inline(always)]
            fn reverse<const N: usize>(self, a: [$t; N]) -> [$t; N] {
                let mut o = a;
                let (p, q) = (a.as_ptr(), o.as_mut_ptr());
                // SAFETY: the token proves the level, whose kernels enable
                // the levels below (module docs); registers are read and
                // written inside the arrays.
                let mut i = unsafe { reverse_r::<$level, $t>(p, q, N, 0, |x| <$level as Reversal>::$rev(x)) };
                reverse!(@below $below; p, q, N, i, $t, $rev);
                while i < N {
                    o[i] = a[N - 1 - i];
                    i += 1;
                }
                o
            }
        }
    )*)*};
    (@below [$($below:ident)*]; $p:ident, $q:ident, $n:ident, $i:ident, $t:ident, $rev:ident) => {$(
        // SAFETY: as above.
        $i = unsafe { reverse_r::<$below, $t>($p, $q, $n, $i, |x| <$below as Reversal>::$rev(x)) };
    )*};
}
reverse! {
    Sse41;
    Avx2 then Sse41;
    Avx512 then Avx2 then Sse41;
}

// Fused multiply-add: one instruction from AVX2 (whose kernels enable FMA)
// up; SSE4.1 has none and computes each lane with `mul_add`.
macro_rules! mul_add {
    ($($level:ident: $fmadd:path;)*) => {$(
        impl MulAdd<f32> for $level {
            #[inline(always)]
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
}
impl MulAdd<f32> for Sse41 {}
impl MulAdd<f64> for Sse41 {}

/// One-line methods of [`Regs`] that are one intrinsic each.
macro_rules! direct {
    ($($name:ident($($arg:ident: $t:ty),*) -> $r:ty = $f:path;)*) => {$(
        #[inline(always)]
        unsafe fn $name($($arg: $t),*) -> $r { $f($($arg),*) }
    )*};
}

/// Shift methods of [`Regs`]: one intrinsic each, the amount in a register.
macro_rules! shifts {
    ($i:ty; $($name:ident = $f:path;)*) => {$(
        #[inline(always)]
        unsafe fn $name(a: $i, s: u32) -> $i { $f(a, _mm_cvtsi32_si128(s as i32)) }
    )*};
}

/// Compare-and-blend methods of [`Regs`] for SSE4.1 and AVX2: the
/// comparison's mask picks `x` over `y` byte by byte.
macro_rules! blends {
    ($i:ty; $blend:path; $($name:ident = $cmp:path;)*) => {$(
        #[inline(always)]
        unsafe fn $name(a: $i, b: $i, x: $i, y: $i) -> $i { $blend(y, x, $cmp(a, b)) }
    )*};
}

/// Compare-and-blend methods of [`Regs`] for AVX-512: the comparison gives
/// a mask register, which picks `x` over `y` lane by lane.
macro_rules! mask_blends {
    ($($name:ident = $cmp:path, $blend:path;)*) => {$(
        #[inline(always)]
        unsafe fn $name(a: __m512i, b: __m512i, x: __m512i, y: __m512i) -> __m512i {
            $blend($cmp(a, b), y, x)
        }
    )*};
}

/// The registers and instructions of one level whose intrinsics follow the
/// `_mm{width}_{op}` naming: SSE4.1 and AVX2. `$p` pastes the prefix.
macro_rules! sse_avx {
    ($level:ident, $bytes:literal, $i:ty, $f:ty, $h:ty;
     li: $li:path, si: $si:path, lh: $lh:expr, lq: $lq:expr, lf: $lf:path, sf: $sf:path,
     set8: $set8:path, set16: $set16:path, set32: $set32:path, setf: $setf:path,
     add: $add8:path, $add16:path, $add32:path, $add64:path,
     sub: $sub8:path, $sub16:path, $sub32:path, $sub64:path,
     mul: $mul16:path, $mul32:path, $mulhi16:path, $mul_epu32:path, $blend_odd32:expr,
     min: $min_i8:path, $min_u8:path, $min_i16:path, $min_u16:path, $min_i32:path, $min_u32:path,
     max: $max_i8:path, $max_u8:path, $max_i16:path, $max_u16:path, $max_i32:path, $max_u32:path,
     avg: $avg8:path, $avg16:path,
     abs: $abs8:path, $abs16:path, $abs32:path,
     bits: $and:path, $or:path, $xor:path,
     shift: $sll16:path, $sll32:path, $sll64:path, $srl16:path, $srl32:path, $srl64:path,
            $sra16:path, $sra32:path,
     widen: $zx8_16:path, $sx8_16:path, $zx16_32:path, $sx16_32:path, $zx8_32:path, $sx8_32:path,
     trunc: $trunc16_8:expr, $trunc32_16:expr, $trunc64_32:expr,
     sat: $sat16_u8:expr, $sat16_i8:expr, $sat32_u16:expr, $sat32_i16:expr,
     cmp: $cmpeq8:path, $cmpeq16:path, $cmpeq32:path, $cmpgt8:path, $cmpgt16:path, $cmpgt32:path,
          $blendv8:path, $cmpf:expr,
     float: $addf:path, $subf:path, $mulf:path, $divf:path, $sqrtf:path, $round:ident,
            $minps:path, $maxps:path, $blendv:path, $unord:expr, $ge:expr,
            $cast_fi:path, $cast_if:path, $cvt_if:path, $cvtt_fi:path) => {
        impl Regs for $level {
            const BYTES: usize = $bytes;
            type I = $i;
            type F = $f;
            type H = $h;

            #[inline(always)]
            unsafe fn li(p: *const u8) -> $i {
                $li(p.cast())
            }
            #[inline(always)]
            unsafe fn si(p: *mut u8, v: $i) {
                $si(p.cast(), v)
            }
            #[inline(always)]
            unsafe fn lh(p: *const u8) -> $h {
                ($lh)(p)
            }
            #[inline(always)]
            unsafe fn lq(p: *const u8) -> __m128i {
                ($lq)(p)
            }
            direct! {
                lf(p: *const f32) -> $f = $lf;
            }
            #[inline(always)]
            unsafe fn sf(p: *mut f32, v: $f) {
                $sf(p, v)
            }

            direct! {
                splat8(v: i8) -> $i = $set8;
                splat16(v: i16) -> $i = $set16;
                splat32(v: i32) -> $i = $set32;
                splatf(v: f32) -> $f = $setf;
            }

            direct! {
                add8(a: $i, b: $i) -> $i = $add8;
                add16(a: $i, b: $i) -> $i = $add16;
                add32(a: $i, b: $i) -> $i = $add32;
                add64(a: $i, b: $i) -> $i = $add64;
                sub8(a: $i, b: $i) -> $i = $sub8;
                sub16(a: $i, b: $i) -> $i = $sub16;
                sub32(a: $i, b: $i) -> $i = $sub32;
                sub64(a: $i, b: $i) -> $i = $sub64;
                mul16(a: $i, b: $i) -> $i = $mul16;
                mul32(a: $i, b: $i) -> $i = $mul32;
                mulhi_u16(a: $i, b: $i) -> $i = $mulhi16;
                mul_even_u32(a: $i, b: $i) -> $i = $mul_epu32;
            }
            #[inline(always)]
            unsafe fn blend_odd32(a: $i, b: $i) -> $i {
                ($blend_odd32)(a, b)
            }
            direct! {
                min_i8(a: $i, b: $i) -> $i = $min_i8;
                min_u8(a: $i, b: $i) -> $i = $min_u8;
                min_i16(a: $i, b: $i) -> $i = $min_i16;
                min_u16(a: $i, b: $i) -> $i = $min_u16;
                min_i32(a: $i, b: $i) -> $i = $min_i32;
                min_u32(a: $i, b: $i) -> $i = $min_u32;
                max_i8(a: $i, b: $i) -> $i = $max_i8;
                max_u8(a: $i, b: $i) -> $i = $max_u8;
                max_i16(a: $i, b: $i) -> $i = $max_i16;
                max_u16(a: $i, b: $i) -> $i = $max_u16;
                max_i32(a: $i, b: $i) -> $i = $max_i32;
                max_u32(a: $i, b: $i) -> $i = $max_u32;
                avg_u8(a: $i, b: $i) -> $i = $avg8;
                avg_u16(a: $i, b: $i) -> $i = $avg16;
                abs8(a: $i) -> $i = $abs8;
                abs16(a: $i) -> $i = $abs16;
                abs32(a: $i) -> $i = $abs32;
                and(a: $i, b: $i) -> $i = $and;
                or(a: $i, b: $i) -> $i = $or;
                xor(a: $i, b: $i) -> $i = $xor;
            }
            shifts! { $i;
                sll16 = $sll16;
                sll32 = $sll32;
                sll64 = $sll64;
                srl16 = $srl16;
                srl32 = $srl32;
                srl64 = $srl64;
                sra16 = $sra16;
                sra32 = $sra32;
            }

            blends! { $i; $blendv8;
                eq8 = $cmpeq8;
                eq16 = $cmpeq16;
                eq32 = $cmpeq32;
                gt8 = $cmpgt8;
                gt16 = $cmpgt16;
                gt32 = $cmpgt32;
            }
            #[inline(always)]
            unsafe fn selectf(cmp: Cmp, a: $f, b: $f, x: $i, y: $i) -> $i {
                $blendv8(y, x, $cast_fi(($cmpf)(cmp, a, b)))
            }
            #[inline(always)]
            unsafe fn sat16_u8(a: $i, b: $i) -> $i {
                ($sat16_u8)(a, b)
            }
            #[inline(always)]
            unsafe fn sat16_i8(a: $i, b: $i) -> $i {
                ($sat16_i8)(a, b)
            }
            #[inline(always)]
            unsafe fn sat32_u16(a: $i, b: $i) -> $i {
                ($sat32_u16)(a, b)
            }
            #[inline(always)]
            unsafe fn sat32_i16(a: $i, b: $i) -> $i {
                ($sat32_i16)(a, b)
            }

            direct! {
                zx8_16(a: $h) -> $i = $zx8_16;
                sx8_16(a: $h) -> $i = $sx8_16;
                zx16_32(a: $h) -> $i = $zx16_32;
                sx16_32(a: $h) -> $i = $sx16_32;
                zx8_32(a: __m128i) -> $i = $zx8_32;
                sx8_32(a: __m128i) -> $i = $sx8_32;
            }
            #[inline(always)]
            unsafe fn trunc16_8(a: $i, b: $i) -> $i {
                ($trunc16_8)(a, b)
            }
            #[inline(always)]
            unsafe fn trunc32_16(a: $i, b: $i) -> $i {
                ($trunc32_16)(a, b)
            }
            #[inline(always)]
            unsafe fn trunc64_32(a: $i, b: $i) -> $i {
                ($trunc64_32)(a, b)
            }

            direct! {
                addf(a: $f, b: $f) -> $f = $addf;
                subf(a: $f, b: $f) -> $f = $subf;
                mulf(a: $f, b: $f) -> $f = $mulf;
                divf(a: $f, b: $f) -> $f = $divf;
                sqrtf(a: $f) -> $f = $sqrtf;
            }
            #[inline(always)]
            unsafe fn floorf(a: $f) -> $f {
                $round::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a)
            }
            #[inline(always)]
            unsafe fn ceilf(a: $f) -> $f {
                $round::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(a)
            }
            #[inline(always)]
            unsafe fn truncf(a: $f) -> $f {
                $round::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a)
            }
            direct! {
                minps(a: $f, b: $f) -> $f = $minps;
                maxps(a: $f, b: $f) -> $f = $maxps;
            }
            #[inline(always)]
            unsafe fn minnum(a: $f, b: $f) -> $f {
                $blendv($minps(b, a), b, ($unord)(a, a))
            }
            #[inline(always)]
            unsafe fn maxnum(a: $f, b: $f) -> $f {
                $blendv($maxps(b, a), b, ($unord)(a, a))
            }
            direct! {
                as_bits(a: $f) -> $i = $cast_fi;
                from_bits(a: $i) -> $f = $cast_if;
                i32_f32(a: $i) -> $f = $cvt_if;
            }
            #[inline(always)]
            unsafe fn cvtt(a: $f) -> $i {
                $cvtt_fi(a)
            }
            #[inline(always)]
            unsafe fn f32_i32(a: $f) -> $i {
                // `cvttps` gives i32::MIN for NaN and out of range: flip it
                // to MAX where `a >= 2^31`, and clear it where `a` is NaN.
                let t = $cvtt_fi(a);
                let over = $cast_fi(($ge)(a, $setf(2147483648.0)));
                let nan = $cast_fi(($unord)(a, a));
                $and($xor(t, over), $xor(nan, $set32(-1)))
            }
        }
    };
}

sse_avx! {
    Sse41, 16, __m128i, __m128, __m128i;
    li: _mm_loadu_si128, si: _mm_storeu_si128,
    lh: |p: *const u8| _mm_loadl_epi64(p.cast()),
    lq: |p: *const u8| _mm_cvtsi32_si128(p.cast::<i32>().read_unaligned()),
    lf: _mm_loadu_ps, sf: _mm_storeu_ps,
    set8: _mm_set1_epi8, set16: _mm_set1_epi16, set32: _mm_set1_epi32, setf: _mm_set1_ps,
    add: _mm_add_epi8, _mm_add_epi16, _mm_add_epi32, _mm_add_epi64,
    sub: _mm_sub_epi8, _mm_sub_epi16, _mm_sub_epi32, _mm_sub_epi64,
    mul: _mm_mullo_epi16, _mm_mullo_epi32, _mm_mulhi_epu16, _mm_mul_epu32,
        |a: __m128i, b: __m128i| _mm_blend_epi16::<0b1100_1100>(a, b),
    min: _mm_min_epi8, _mm_min_epu8, _mm_min_epi16, _mm_min_epu16, _mm_min_epi32, _mm_min_epu32,
    max: _mm_max_epi8, _mm_max_epu8, _mm_max_epi16, _mm_max_epu16, _mm_max_epi32, _mm_max_epu32,
    avg: _mm_avg_epu8, _mm_avg_epu16,
    abs: _mm_abs_epi8, _mm_abs_epi16, _mm_abs_epi32,
    bits: _mm_and_si128, _mm_or_si128, _mm_xor_si128,
    shift: _mm_sll_epi16, _mm_sll_epi32, _mm_sll_epi64, _mm_srl_epi16, _mm_srl_epi32,
        _mm_srl_epi64, _mm_sra_epi16, _mm_sra_epi32,
    widen: _mm_cvtepu8_epi16, _mm_cvtepi8_epi16, _mm_cvtepu16_epi32, _mm_cvtepi16_epi32,
        _mm_cvtepu8_epi32, _mm_cvtepi8_epi32,
    trunc: |a: __m128i, b: __m128i| {
        let m = _mm_set1_epi16(0xff);
        _mm_packus_epi16(_mm_and_si128(a, m), _mm_and_si128(b, m))
    }, |a: __m128i, b: __m128i| {
        let m = _mm_set1_epi32(0xffff);
        _mm_packus_epi32(_mm_and_si128(a, m), _mm_and_si128(b, m))
    }, |a: __m128i, b: __m128i| {
        _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(_mm_castsi128_ps(a), _mm_castsi128_ps(b)))
    },
    sat: |a: __m128i, b: __m128i| _mm_packus_epi16(a, b),
        |a: __m128i, b: __m128i| _mm_packs_epi16(a, b),
        |a: __m128i, b: __m128i| _mm_packus_epi32(a, b),
        |a: __m128i, b: __m128i| _mm_packs_epi32(a, b),
    cmp: _mm_cmpeq_epi8, _mm_cmpeq_epi16, _mm_cmpeq_epi32, _mm_cmpgt_epi8, _mm_cmpgt_epi16,
        _mm_cmpgt_epi32, _mm_blendv_epi8,
        |c: Cmp, a: __m128, b: __m128| match c {
            Cmp::Eq => _mm_cmpeq_ps(a, b),
            Cmp::Ne => _mm_cmpneq_ps(a, b),
            Cmp::Lt => _mm_cmplt_ps(a, b),
            Cmp::Le => _mm_cmple_ps(a, b),
            Cmp::Gt => _mm_cmpgt_ps(a, b),
            Cmp::Ge => _mm_cmpge_ps(a, b),
        },
    float: _mm_add_ps, _mm_sub_ps, _mm_mul_ps, _mm_div_ps, _mm_sqrt_ps, _mm_round_ps,
        _mm_min_ps, _mm_max_ps, _mm_blendv_ps, |a: __m128, b: __m128| _mm_cmpunord_ps(a, b),
        |a: __m128, b: __m128| _mm_cmpge_ps(a, b),
        _mm_castps_si128, _mm_castsi128_ps, _mm_cvtepi32_ps, _mm_cvttps_epi32
}

sse_avx! {
    Avx2, 32, __m256i, __m256, __m128i;
    li: _mm256_loadu_si256, si: _mm256_storeu_si256,
    lh: |p: *const u8| _mm_loadu_si128(p.cast()),
    lq: |p: *const u8| _mm_loadl_epi64(p.cast()),
    lf: _mm256_loadu_ps, sf: _mm256_storeu_ps,
    set8: _mm256_set1_epi8, set16: _mm256_set1_epi16, set32: _mm256_set1_epi32,
    setf: _mm256_set1_ps,
    add: _mm256_add_epi8, _mm256_add_epi16, _mm256_add_epi32, _mm256_add_epi64,
    sub: _mm256_sub_epi8, _mm256_sub_epi16, _mm256_sub_epi32, _mm256_sub_epi64,
    mul: _mm256_mullo_epi16, _mm256_mullo_epi32, _mm256_mulhi_epu16, _mm256_mul_epu32,
        |a: __m256i, b: __m256i| _mm256_blend_epi32::<0b1010_1010>(a, b),
    min: _mm256_min_epi8, _mm256_min_epu8, _mm256_min_epi16, _mm256_min_epu16,
        _mm256_min_epi32, _mm256_min_epu32,
    max: _mm256_max_epi8, _mm256_max_epu8, _mm256_max_epi16, _mm256_max_epu16,
        _mm256_max_epi32, _mm256_max_epu32,
    avg: _mm256_avg_epu8, _mm256_avg_epu16,
    abs: _mm256_abs_epi8, _mm256_abs_epi16, _mm256_abs_epi32,
    bits: _mm256_and_si256, _mm256_or_si256, _mm256_xor_si256,
    shift: _mm256_sll_epi16, _mm256_sll_epi32, _mm256_sll_epi64, _mm256_srl_epi16,
        _mm256_srl_epi32, _mm256_srl_epi64, _mm256_sra_epi16, _mm256_sra_epi32,
    widen: _mm256_cvtepu8_epi16, _mm256_cvtepi8_epi16, _mm256_cvtepu16_epi32,
        _mm256_cvtepi16_epi32, _mm256_cvtepu8_epi32, _mm256_cvtepi8_epi32,
    // `packus` packs within 128-bit halves: the permutation puts the
    // quarters back in order (a.lo, a.hi, b.lo, b.hi).
    trunc: |a: __m256i, b: __m256i| {
        let m = _mm256_set1_epi16(0xff);
        let p = _mm256_packus_epi16(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
        _mm256_permute4x64_epi64::<0b11_01_10_00>(p)
    }, |a: __m256i, b: __m256i| {
        let m = _mm256_set1_epi32(0xffff);
        let p = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
        _mm256_permute4x64_epi64::<0b11_01_10_00>(p)
    }, |a: __m256i, b: __m256i| {
        let p = _mm256_shuffle_ps::<0b10_00_10_00>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
        _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_castps_si256(p))
    },
    sat: |a: __m256i, b: __m256i| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(a, b)),
        |a: __m256i, b: __m256i| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(a, b)),
        |a: __m256i, b: __m256i| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(a, b)),
        |a: __m256i, b: __m256i| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(a, b)),
    cmp: _mm256_cmpeq_epi8, _mm256_cmpeq_epi16, _mm256_cmpeq_epi32, _mm256_cmpgt_epi8,
        _mm256_cmpgt_epi16, _mm256_cmpgt_epi32, _mm256_blendv_epi8,
        |c: Cmp, a: __m256, b: __m256| match c {
            Cmp::Eq => _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b),
            Cmp::Ne => _mm256_cmp_ps::<_CMP_NEQ_UQ>(a, b),
            Cmp::Lt => _mm256_cmp_ps::<_CMP_LT_OQ>(a, b),
            Cmp::Le => _mm256_cmp_ps::<_CMP_LE_OQ>(a, b),
            Cmp::Gt => _mm256_cmp_ps::<_CMP_GT_OQ>(a, b),
            Cmp::Ge => _mm256_cmp_ps::<_CMP_GE_OQ>(a, b),
        },
    float: _mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_div_ps, _mm256_sqrt_ps,
        _mm256_round_ps, _mm256_min_ps, _mm256_max_ps, _mm256_blendv_ps,
        |a: __m256, b: __m256| _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b), |a: __m256, b: __m256| _mm256_cmp_ps::<_CMP_GE_OQ>(a, b),
        _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cvtepi32_ps, _mm256_cvttps_epi32
}

/// AVX-512 (F and BW): comparisons give mask registers, truncations are
/// single instructions.
impl Regs for Avx512 {
    const BYTES: usize = 64;
    type I = __m512i;
    type F = __m512;
    type H = __m256i;

    #[inline(always)]
    unsafe fn li(p: *const u8) -> __m512i {
        _mm512_loadu_si512(p.cast())
    }
    #[inline(always)]
    unsafe fn si(p: *mut u8, v: __m512i) {
        _mm512_storeu_si512(p.cast(), v)
    }
    #[inline(always)]
    unsafe fn lh(p: *const u8) -> __m256i {
        _mm256_loadu_si256(p.cast())
    }
    #[inline(always)]
    unsafe fn lq(p: *const u8) -> __m128i {
        _mm_loadu_si128(p.cast())
    }
    direct! {
        lf(p: *const f32) -> __m512 = _mm512_loadu_ps;
    }
    #[inline(always)]
    unsafe fn sf(p: *mut f32, v: __m512) {
        _mm512_storeu_ps(p, v)
    }

    direct! {
        splat8(v: i8) -> __m512i = _mm512_set1_epi8;
        splat16(v: i16) -> __m512i = _mm512_set1_epi16;
        splat32(v: i32) -> __m512i = _mm512_set1_epi32;
        splatf(v: f32) -> __m512 = _mm512_set1_ps;
    }

    direct! {
        add8(a: __m512i, b: __m512i) -> __m512i = _mm512_add_epi8;
        add16(a: __m512i, b: __m512i) -> __m512i = _mm512_add_epi16;
        add32(a: __m512i, b: __m512i) -> __m512i = _mm512_add_epi32;
        add64(a: __m512i, b: __m512i) -> __m512i = _mm512_add_epi64;
        sub8(a: __m512i, b: __m512i) -> __m512i = _mm512_sub_epi8;
        sub16(a: __m512i, b: __m512i) -> __m512i = _mm512_sub_epi16;
        sub32(a: __m512i, b: __m512i) -> __m512i = _mm512_sub_epi32;
        sub64(a: __m512i, b: __m512i) -> __m512i = _mm512_sub_epi64;
        mul16(a: __m512i, b: __m512i) -> __m512i = _mm512_mullo_epi16;
        mul32(a: __m512i, b: __m512i) -> __m512i = _mm512_mullo_epi32;
        mulhi_u16(a: __m512i, b: __m512i) -> __m512i = _mm512_mulhi_epu16;
        mul_even_u32(a: __m512i, b: __m512i) -> __m512i = _mm512_mul_epu32;
    }
    #[inline(always)]
    unsafe fn blend_odd32(a: __m512i, b: __m512i) -> __m512i {
        _mm512_mask_blend_epi32(0b1010_1010_1010_1010, a, b)
    }
    direct! {
        min_i8(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epi8;
        min_u8(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epu8;
        min_i16(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epi16;
        min_u16(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epu16;
        min_i32(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epi32;
        min_u32(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epu32;
        max_i8(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epi8;
        max_u8(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epu8;
        max_i16(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epi16;
        max_u16(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epu16;
        max_i32(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epi32;
        max_u32(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epu32;
        avg_u8(a: __m512i, b: __m512i) -> __m512i = _mm512_avg_epu8;
        avg_u16(a: __m512i, b: __m512i) -> __m512i = _mm512_avg_epu16;
        abs8(a: __m512i) -> __m512i = _mm512_abs_epi8;
        abs16(a: __m512i) -> __m512i = _mm512_abs_epi16;
        abs32(a: __m512i) -> __m512i = _mm512_abs_epi32;
        and(a: __m512i, b: __m512i) -> __m512i = _mm512_and_si512;
        or(a: __m512i, b: __m512i) -> __m512i = _mm512_or_si512;
        xor(a: __m512i, b: __m512i) -> __m512i = _mm512_xor_si512;
    }
    shifts! { __m512i;
        sll16 = _mm512_sll_epi16;
        sll32 = _mm512_sll_epi32;
        sll64 = _mm512_sll_epi64;
        srl16 = _mm512_srl_epi16;
        srl32 = _mm512_srl_epi32;
        srl64 = _mm512_srl_epi64;
        sra16 = _mm512_sra_epi16;
        sra32 = _mm512_sra_epi32;
    }

    mask_blends! {
        eq8 = _mm512_cmpeq_epi8_mask, _mm512_mask_blend_epi8;
        eq16 = _mm512_cmpeq_epi16_mask, _mm512_mask_blend_epi16;
        eq32 = _mm512_cmpeq_epi32_mask, _mm512_mask_blend_epi32;
        gt8 = _mm512_cmpgt_epi8_mask, _mm512_mask_blend_epi8;
        gt16 = _mm512_cmpgt_epi16_mask, _mm512_mask_blend_epi16;
        gt32 = _mm512_cmpgt_epi32_mask, _mm512_mask_blend_epi32;
    }
    #[inline(always)]
    unsafe fn selectf(cmp: Cmp, a: __m512, b: __m512, x: __m512i, y: __m512i) -> __m512i {
        let k = match cmp {
            Cmp::Eq => _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b),
            Cmp::Ne => _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(a, b),
            Cmp::Lt => _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b),
            Cmp::Le => _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b),
            Cmp::Gt => _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b),
            Cmp::Ge => _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b),
        };
        _mm512_mask_blend_epi32(k, y, x)
    }
    #[inline(always)]
    unsafe fn sat16_u8(a: __m512i, b: __m512i) -> __m512i {
        let z = _mm512_setzero_si512();
        let lo = _mm512_castsi256_si512(_mm512_cvtusepi16_epi8(_mm512_max_epi16(a, z)));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtusepi16_epi8(_mm512_max_epi16(b, z)))
    }
    #[inline(always)]
    unsafe fn sat16_i8(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtsepi16_epi8(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtsepi16_epi8(b))
    }
    #[inline(always)]
    unsafe fn sat32_u16(a: __m512i, b: __m512i) -> __m512i {
        let z = _mm512_setzero_si512();
        let lo = _mm512_castsi256_si512(_mm512_cvtusepi32_epi16(_mm512_max_epi32(a, z)));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtusepi32_epi16(_mm512_max_epi32(b, z)))
    }
    #[inline(always)]
    unsafe fn sat32_i16(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtsepi32_epi16(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtsepi32_epi16(b))
    }

    direct! {
        zx8_16(a: __m256i) -> __m512i = _mm512_cvtepu8_epi16;
        sx8_16(a: __m256i) -> __m512i = _mm512_cvtepi8_epi16;
        zx16_32(a: __m256i) -> __m512i = _mm512_cvtepu16_epi32;
        sx16_32(a: __m256i) -> __m512i = _mm512_cvtepi16_epi32;
        zx8_32(a: __m128i) -> __m512i = _mm512_cvtepu8_epi32;
        sx8_32(a: __m128i) -> __m512i = _mm512_cvtepi8_epi32;
    }
    #[inline(always)]
    unsafe fn trunc16_8(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtepi16_epi8(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtepi16_epi8(b))
    }
    #[inline(always)]
    unsafe fn trunc32_16(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtepi32_epi16(b))
    }
    #[inline(always)]
    unsafe fn trunc64_32(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtepi64_epi32(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtepi64_epi32(b))
    }

    direct! {
        addf(a: __m512, b: __m512) -> __m512 = _mm512_add_ps;
        subf(a: __m512, b: __m512) -> __m512 = _mm512_sub_ps;
        mulf(a: __m512, b: __m512) -> __m512 = _mm512_mul_ps;
        divf(a: __m512, b: __m512) -> __m512 = _mm512_div_ps;
        sqrtf(a: __m512) -> __m512 = _mm512_sqrt_ps;
    }
    #[inline(always)]
    unsafe fn floorf(a: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a)
    }
    #[inline(always)]
    unsafe fn ceilf(a: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(a)
    }
    #[inline(always)]
    unsafe fn truncf(a: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a)
    }
    direct! {
        minps(a: __m512, b: __m512) -> __m512 = _mm512_min_ps;
        maxps(a: __m512, b: __m512) -> __m512 = _mm512_max_ps;
    }
    #[inline(always)]
    unsafe fn minnum(a: __m512, b: __m512) -> __m512 {
        let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a);
        _mm512_mask_blend_ps(nan, _mm512_min_ps(b, a), b)
    }
    #[inline(always)]
    unsafe fn maxnum(a: __m512, b: __m512) -> __m512 {
        let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a);
        _mm512_mask_blend_ps(nan, _mm512_max_ps(b, a), b)
    }
    direct! {
        as_bits(a: __m512) -> __m512i = _mm512_castps_si512;
        from_bits(a: __m512i) -> __m512 = _mm512_castsi512_ps;
        i32_f32(a: __m512i) -> __m512 = _mm512_cvtepi32_ps;
    }
    #[inline(always)]
    unsafe fn cvtt(a: __m512) -> __m512i {
        _mm512_cvttps_epi32(a)
    }
    #[inline(always)]
    unsafe fn f32_i32(a: __m512) -> __m512i {
        let t = _mm512_cvttps_epi32(a);
        let over = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, _mm512_set1_ps(2147483648.0));
        let ordered = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(a, a);
        let t = _mm512_mask_mov_epi32(t, over, _mm512_set1_epi32(i32::MAX));
        _mm512_maskz_mov_epi32(ordered, t)
    }
}

#[cfg(test)]
mod tests {
    use super::{phase_picks, picks, read_start, span_bytes};

    /// Every byte of every phase of the `S` registers' worth of lanes comes
    /// from one of the `S` reads, at the right place.
    #[test]
    fn phase_loads_cover_every_lane_of_every_phase() {
        for b in [1, 2, 4, 8] {
            for s in [3, 4] {
                for phase in 0..s {
                    let mut from = [0usize; 16];
                    for k in 0..s {
                        for (byte, &m) in phase_picks(b, s, phase, 16 * k).iter().enumerate() {
                            if m >= 0 {
                                assert_eq!(
                                    16 * k + m as usize,
                                    ((byte / b) * s + phase) * b + byte % b
                                );
                                from[byte] += 1;
                            }
                        }
                    }
                    assert!(
                        from.iter().all(|&n| n == 1),
                        "{b} bytes by {s}, phase {phase}: {from:?}"
                    );
                }
            }
        }
    }

    /// Every read of a stride-3 or -4 shuffle load stays inside the span of
    /// its lanes, and every byte of the lanes comes from one of the reads,
    /// at the right place: the loads' results are checked lane by lane in
    /// tests/simd_ops.rs, but a read past the span would go unseen there.
    #[test]
    fn shuffle_loads_read_inside_their_span_and_cover_every_lane() {
        for b in [1, 2, 4, 8] {
            for s in [3, 4] {
                let span = span_bytes(b, s);
                let mut covered = [false; 16];
                for j in 0..span.div_ceil(16) {
                    let start = read_start(b, s, j);
                    assert!(
                        start + 16 <= span,
                        "lanes of {b} bytes by {s}: read {j} passes the span"
                    );
                    for (k, &m) in picks(b, s, start).iter().enumerate() {
                        if m >= 0 {
                            assert_eq!(start + m as usize, (k / b) * s * b + k % b);
                            covered[k] = true;
                        }
                    }
                }
                assert!(
                    covered.iter().all(|&c| c),
                    "lanes of {b} bytes by {s}: {covered:?}"
                );
            }
        }
    }
}
