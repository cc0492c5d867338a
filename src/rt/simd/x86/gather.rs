//! [`Gather`](crate::rt::simd::Gather) at the x86 levels: the AVX2 and
//! AVX-512 gather instructions (`vpgatherdd`, `vpgatherdq`), register by
//! register, the lanes past the last whole register one load each. 32-
//! and 64-bit elements are read as they are; 8- and 16-bit ones as the 32
//! bits from each element on (or, for an element among the table's last 3
//! bytes, the table's last 4 bytes), shifted down to the element and
//! packed. SSE4.1, which has no gather, keeps the default load per lane.

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
    /// As `gather32`, for elements of `S` bytes (1 or 2) at element
    /// offsets `o`, of which the first `bytes` bytes of `p` are readable
    /// (at least 4, at most `i32::MAX`); reads nothing outside them.
    ///
    /// # Safety
    ///
    /// The processor has the level; `p[..bytes]` is readable, and every
    /// element `o[j]` lies inside it.
    unsafe fn gather_narrow<const S: usize, const N: usize>(
        p: *const u8,
        bytes: usize,
        o: &[i32; N],
        out: *mut u8,
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn gather_narrow<const S: usize, const N: usize>(
        p: *const u8,
        bytes: usize,
        o: &[i32; N],
        out: *mut u8,
        mut i: usize,
    ) -> usize {
        // SAFETY: lanes i.. of a step are inside `o` and `out` (`S` bytes
        // a lane); each lane reads the 4 bytes at `min(its byte offset,
        // bytes - 4)`, inside `p[..bytes]`, which hold its element; the
        // caller gives the level.
        unsafe {
            let last = _mm256_set1_epi32(bytes as i32 - 4);
            let mask = _mm256_set1_epi32(if S == 1 { 0xff } else { 0xffff });
            // Eight lanes' elements, each in the low bits of its 32-bit
            // lane, the rest zero.
            let eight = |i: usize| {
                let at = _mm256_loadu_si256(o.as_ptr().add(i).cast());
                let byte = if S == 1 { at } else { _mm256_add_epi32(at, at) };
                let base = _mm256_min_epi32(byte, last);
                let shift = _mm256_slli_epi32::<3>(_mm256_sub_epi32(byte, base));
                let words = _mm256_i32gather_epi32::<1>(p.cast(), base);
                _mm256_and_si256(_mm256_srlv_epi32(words, shift), mask)
            };
            // A register's worth at a time, packed in registers (the packs
            // work within each 128-bit half: the permutes restore the
            // order). Storing each gather's lanes apart made LLVM extract
            // some of them byte by byte.
            let per = 32 / S;
            while i + per <= N {
                let a = _mm256_packus_epi32(eight(i), eight(i + 8));
                let v = if S == 1 {
                    let b = _mm256_packus_epi32(eight(i + 16), eight(i + 24));
                    let v = _mm256_packus_epi16(a, b);
                    _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
                } else {
                    _mm256_permute4x64_epi64::<0b11_01_10_00>(a)
                };
                _mm256_storeu_si256(out.add(S * i).cast(), v);
                i += per;
            }
            while i + 8 <= N {
                let a = _mm256_packus_epi32(eight(i), _mm256_setzero_si256());
                if S == 1 {
                    let v = _mm256_packus_epi16(a, _mm256_setzero_si256());
                    let v =
                        _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
                    _mm_storel_epi64(out.add(i).cast(), _mm256_castsi256_si128(v));
                } else {
                    let v = _mm256_permute4x64_epi64::<0b11_01_10_00>(a);
                    _mm_storeu_si128(out.add(2 * i).cast(), _mm256_castsi256_si128(v));
                }
                i += 8;
            }
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
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn gather_narrow<const S: usize, const N: usize>(
                p: *const u8,
                bytes: usize,
                o: &[i32; N],
                out: *mut u8,
                mut i: usize,
            ) -> usize {
                // SAFETY: as for AVX2's, 16 lanes a register; the
                // truncating moves keep each lane's low `S` bytes.
                unsafe {
                    let last = _mm512_set1_epi32(bytes as i32 - 4);
                    while i + 16 <= N {
                        let at = _mm512_loadu_si512(o.as_ptr().add(i).cast());
                        let byte = if S == 1 { at } else { _mm512_add_epi32(at, at) };
                        let base = _mm512_min_epi32(byte, last);
                        let shift = _mm512_slli_epi32::<3>(_mm512_sub_epi32(byte, base));
                        let words = _mm512_i32gather_epi32::<1>(base, p.cast());
                        let v = _mm512_srlv_epi32(words, shift);
                        if S == 1 {
                            _mm_storeu_si128(out.add(i).cast(), _mm512_cvtepi32_epi8(v));
                        } else {
                            _mm256_storeu_si256(out.add(2 * i).cast(), _mm512_cvtepi32_epi16(v));
                        }
                        i += 16;
                    }
                    Avx2::gather_narrow::<S, N>(p, bytes, o, out, i)
                }
            }
        }
    )*};
}
avx512_gathers!(Avx512 Avx512Vbmi);

/// `T`'s lanes by the level's gathers, those past the last whole register
/// (and all of a table of 8- or 16-bit elements shorter than 4 bytes or
/// longer than `i32::MAX` bytes) one load each.
///
/// # Safety
///
/// The processor has level `L`; `p[..len]` is readable and every `o[i]`
/// in `0..len`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn gather<L: Gathers, T: Copy + Default, const N: usize>(
    p: *const T,
    len: usize,
    o: [i32; N],
) -> [T; N] {
    let mut out = [T::default(); N];
    let q = out.as_mut_ptr();
    let bytes = len.saturating_mul(size_of::<T>());
    let narrow = (4..=i32::MAX as usize).contains(&bytes);
    // SAFETY: the caller gives the level and the elements; `T` has the
    // size of the integer each branch reads it as (elements are plain
    // numbers, any bits of which are a value), and the narrow branches
    // get the table's readable bytes.
    let i = unsafe {
        match size_of::<T>() {
            1 if narrow => L::gather_narrow::<1, N>(p.cast(), bytes, &o, q.cast(), 0),
            2 if narrow => L::gather_narrow::<2, N>(p.cast(), bytes, &o, q.cast(), 0),
            4 => L::gather32(p.cast(), &o, q.cast(), 0),
            8 => L::gather64(p.cast(), &o, q.cast(), 0),
            _ => 0,
        }
    };
    if i < N {
        // SAFETY: as above.
        unsafe { one_by_one(p, &o, &mut out, i) };
    }
    out
}

/// Lanes `i..` of `o`, one load each, into `out`. Out of line: inlined,
/// where a table may be too short for the narrow gathers, LLVM joined its
/// lanes with the gathered ones in scalar registers and stored them byte
/// by byte (an 8-bit table ran at a third of its speed at AVX2).
///
/// # Safety
///
/// Every `p + o[j]`, `j >= i`, is a readable element.
#[inline(never)]
#[cold]
unsafe fn one_by_one<T: Copy, const N: usize>(
    p: *const T,
    o: &[i32; N],
    out: &mut [T; N],
    i: usize,
) {
    for j in i..N {
        // SAFETY: the caller's promise.
        out[j] = unsafe { p.offset(o[j] as isize).read() };
    }
}

macro_rules! gathers {
    ($($level:ident: $taps:literal)*) => {$(
        gathers!(@types $level $taps; u8 i8 u16 i16 u32 i32 f32 u64 i64 f64);
    )*};
    // The default load per lane.
    (@lanes $level:ident; $($t:ident)*) => {$( impl Gather<$t> for $level {} )*};
    (@types $level:ident $taps:literal; $($t:ident)*) => {$(
        impl Gather<$t> for $level {
            #[inline(always)]
            fn tap_bytes(self) -> usize {
                if self.gather_taps { $taps } else { 0 }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn gather<const N: usize>(self, p: *const $t, len: usize, o: [i32; N]) -> [$t; N] {
                // SAFETY: the token proves the level; the caller gives the
                // elements.
                unsafe { gather::<$level, $t, N>(p, len, o) }
            }
        }
    )*};
}
// Taps by gather in whole registers: in an AVX-512 kernel the bilateral
// grid's slice ran 1.3x slower with 8-lane taps by gather than a load a
// lane (a masked 512-bit gather of 8 lanes, slower still), and 1.2x faster
// with 16-lane ones; at AVX2, 8 lanes 1.2x faster (Xeon, 2026-11-28). On
// AMD's processors taps go a load a lane (`crate::rt::tap_gathers`).
gathers!(Avx2: 32 Avx512: 64 Avx512Vbmi: 64);
gathers!(@lanes Sse41; u8 i8 u16 i16 u32 i32 f32 u64 i64 f64);
