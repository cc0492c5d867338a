//! [`Gather`](crate::rt::simd::Gather) at the x86 levels: the AVX2 and
//! AVX-512 gather instructions for 32- and 64-bit elements (`vpgatherdd`,
//! `vpgatherdq`), register by register, the lanes past the last whole
//! register one load each. Narrower elements, and SSE4.1, which has no
//! gather, keep the default load per lane.

use super::{Avx2, Avx512, Avx512Vbmi, Sse41};
use crate::rt::simd::Gather;
use core::arch::x86_64::*;
use core::mem::size_of;

/// How a level gathers 32- and 64-bit elements.
trait Gathers {
    /// Lanes `i..` of `o`, 32-bit elements from `p` into `out`, while a
    /// whole register of lanes remains: the next lane.
    ///
    /// # Safety
    ///
    /// The processor has the level; every `p + o[j]` is readable.
    unsafe fn gather32<const N: usize>(
        p: *const i32,
        o: &[i32; N],
        out: *mut i32,
        i: usize,
    ) -> usize;
    /// As `gather32`, for 64-bit elements.
    ///
    /// # Safety
    ///
    /// As for `gather32`.
    unsafe fn gather64<const N: usize>(
        p: *const i64,
        o: &[i32; N],
        out: *mut i64,
        i: usize,
    ) -> usize;
}

impl Gathers for Avx2 {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn gather32<const N: usize>(
        p: *const i32,
        o: &[i32; N],
        out: *mut i32,
        mut i: usize,
    ) -> usize {
        while i + 8 <= N {
            // SAFETY: lanes i..i + 8 are inside `o` and `out`; the caller
            // gives the level and the elements.
            unsafe {
                let at = _mm256_loadu_si256(o.as_ptr().add(i).cast());
                _mm256_storeu_si256(out.add(i).cast(), _mm256_i32gather_epi32::<4>(p, at));
            }
            i += 8;
        }
        i
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn gather64<const N: usize>(
        p: *const i64,
        o: &[i32; N],
        out: *mut i64,
        mut i: usize,
    ) -> usize {
        while i + 4 <= N {
            // SAFETY: as above.
            unsafe {
                let at = _mm_loadu_si128(o.as_ptr().add(i).cast());
                _mm256_storeu_si256(out.add(i).cast(), _mm256_i32gather_epi64::<8>(p, at));
            }
            i += 4;
        }
        i
    }
}

/// AVX-512: 16 (or 8) lanes a register, then AVX2 for what remains.
macro_rules! avx512_gathers {
    ($($level:ident)*) => {$(
        impl Gathers for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn gather32<const N: usize>(p: *const i32, o: &[i32; N], out: *mut i32, mut i: usize) -> usize {
                while i + 16 <= N {
                    // SAFETY: lanes i..i + 16 are inside `o` and `out`; the
                    // caller gives the level and the elements.
                    unsafe {
                        let at = _mm512_loadu_si512(o.as_ptr().add(i).cast());
                        _mm512_storeu_si512(out.add(i).cast(), _mm512_i32gather_epi32::<4>(at, p.cast()));
                    }
                    i += 16;
                }
                // SAFETY: the level includes AVX2.
                unsafe { Avx2::gather32(p, o, out, i) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn gather64<const N: usize>(p: *const i64, o: &[i32; N], out: *mut i64, mut i: usize) -> usize {
                while i + 8 <= N {
                    // SAFETY: as above.
                    unsafe {
                        let at = _mm256_loadu_si256(o.as_ptr().add(i).cast());
                        _mm512_storeu_si512(out.add(i).cast(), _mm512_i32gather_epi64::<8>(at, p.cast()));
                    }
                    i += 8;
                }
                // SAFETY: as above.
                unsafe { Avx2::gather64(p, o, out, i) }
            }
        }
    )*};
}
avx512_gathers!(Avx512 Avx512Vbmi);

/// `T`'s lanes by the level's gathers where `T` has 32 or 64 bits, the rest
/// one load each.
///
/// # Safety
///
/// The processor has level `L`; every `p + o[i]` is readable.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn gather<L: Gathers, T: Copy + Default, const N: usize>(
    p: *const T,
    o: [i32; N],
) -> [T; N] {
    let mut out = [T::default(); N];
    let q = out.as_mut_ptr();
    // SAFETY: the caller gives the level and the elements; `T` has the
    // size of the integer each branch reads it as (elements are plain
    // numbers, any bits of which are a value).
    let mut i = unsafe {
        match size_of::<T>() {
            4 => L::gather32(p.cast(), &o, q.cast(), 0),
            8 => L::gather64(p.cast(), &o, q.cast(), 0),
            _ => 0,
        }
    };
    while i < N {
        // SAFETY: as above.
        out[i] = unsafe { p.offset(o[i] as isize).read() };
        i += 1;
    }
    out
}

macro_rules! gathers {
    ($($level:ident)*) => {$(
        gathers!(@types $level; u32 i32 f32 u64 i64 f64);
        gathers!(@lanes $level; u8 i8 u16 i16);
    )*};
    // The default load per lane.
    (@lanes $level:ident; $($t:ident)*) => {$( impl Gather<$t> for $level {} )*};
    (@types $level:ident; $($t:ident)*) => {$(
        impl Gather<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn gather<const N: usize>(self, p: *const $t, o: [i32; N]) -> [$t; N] {
                // SAFETY: the token proves the level; the caller gives the
                // elements.
                unsafe { gather::<$level, $t, N>(p, o) }
            }
        }
    )*};
}
gathers!(Avx2 Avx512 Avx512Vbmi);
gathers!(@lanes Sse41; u8 i8 u16 i16 u32 i32 f32 u64 i64 f64);
