//! [`Upsample`](crate::rt::simd::Upsample) at the x86 levels: half a
//! register's elements, each twice ([`Doubling::doubled`]: a permute that
//! puts each quarter of the register in both halves of a 128-bit lane,
//! then an unpack of the lane's low half with itself), register by
//! register; from an odd first lane, the odd lanes come from the same read
//! one element on ([`Doubling::odd_from`], a blend).

use super::*;

/// Elements doubled, by lane width in bytes (1, 2, 4 or 8; a constant once
/// inlined).
trait Doubling: Regs {
    /// The `BYTES / 2` bytes at `p`, each lane of `bytes` bytes twice:
    /// `[p0, p0, p1, p1, ...]`.
    unsafe fn doubled(p: *const u8, bytes: usize) -> Self::I;
    /// The even lanes of `a` and the odd ones of `b`.
    unsafe fn odd_from(a: Self::I, b: Self::I, bytes: usize) -> Self::I;
}

impl Doubling for Sse41 {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn doubled(p: *const u8, bytes: usize) -> __m128i {
        let v = _mm_loadl_epi64(p.cast());
        match bytes {
            1 => _mm_unpacklo_epi8(v, v),
            2 => _mm_unpacklo_epi16(v, v),
            4 => _mm_unpacklo_epi32(v, v),
            _ => _mm_unpacklo_epi64(v, v),
        }
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn odd_from(a: __m128i, b: __m128i, bytes: usize) -> __m128i {
        match bytes {
            1 => _mm_blendv_epi8(a, b, _mm_set1_epi16(0xFF00u16 as i16)),
            2 => _mm_blend_epi16::<0b1010_1010>(a, b),
            4 => _mm_blend_epi16::<0b1100_1100>(a, b),
            _ => _mm_blend_epi16::<0b1111_0000>(a, b),
        }
    }
}

impl Doubling for Avx2 {
    /// Quarters 0 and 1 into both halves of the low and the high lane.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn doubled(p: *const u8, bytes: usize) -> __m256i {
        let v = _mm256_castsi128_si256(_mm_loadu_si128(p.cast()));
        let t = _mm256_permute4x64_epi64::<0b01_01_00_00>(v);
        match bytes {
            1 => _mm256_unpacklo_epi8(t, t),
            2 => _mm256_unpacklo_epi16(t, t),
            4 => _mm256_unpacklo_epi32(t, t),
            _ => _mm256_unpacklo_epi64(t, t),
        }
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn odd_from(a: __m256i, b: __m256i, bytes: usize) -> __m256i {
        match bytes {
            1 => _mm256_blendv_epi8(a, b, _mm256_set1_epi16(0xFF00u16 as i16)),
            2 => _mm256_blend_epi16::<0b1010_1010>(a, b),
            4 => _mm256_blend_epi32::<0b1010_1010>(a, b),
            _ => _mm256_blend_epi32::<0b1100_1100>(a, b),
        }
    }
}

macro_rules! avx512_doubling {
    ($($level:ident)*) => {$(
        impl Doubling for $level {
            /// Quarter `j` (64 bits) into both halves of 128-bit lane `j`.
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn doubled(p: *const u8, bytes: usize) -> __m512i {
                let v = _mm512_castsi256_si512(_mm256_loadu_si256(p.cast()));
                let t = _mm512_permutexvar_epi64(_mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0), v);
                match bytes {
                    1 => _mm512_unpacklo_epi8(t, t),
                    2 => _mm512_unpacklo_epi16(t, t),
                    4 => _mm512_unpacklo_epi32(t, t),
                    _ => _mm512_unpacklo_epi64(t, t),
                }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn odd_from(a: __m512i, b: __m512i, bytes: usize) -> __m512i {
                match bytes {
                    1 => _mm512_mask_blend_epi8(0xAAAA_AAAA_AAAA_AAAA, a, b),
                    2 => _mm512_mask_blend_epi16(0xAAAA_AAAA, a, b),
                    4 => _mm512_mask_blend_epi32(0xAAAA, a, b),
                    _ => _mm512_mask_blend_epi64(0xAA, a, b),
                }
            }
        }
    )*};
}
avx512_doubling!(Avx512 Avx512Vbmi);

/// Lanes `from..n` of the load (`o[i] = p[(i + odd) / 2]`), a register of
/// level `X` at a time; `from` is even. Returns the first lane not written.
///
/// Lane `i + j` of the register from lane `i` reads `p[i / 2 + (j + odd) /
/// 2]`: `doubled(p + i / 2)` in lane `j` when `j + odd` is even, else
/// `doubled(p + i / 2 + 1)`, which reads one element further on; both lie
/// inside `p[0..=(n - 1 + odd) / 2]`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn doubled_r<X: Doubling, T: Reg<X>>(
    p: *const T,
    o: *mut T,
    n: usize,
    from: usize,
    odd: bool,
) -> usize {
    let (l, bytes) = (lanes::<X, T>(), size_of::<T>());
    let mut i = from;
    while i + l <= n {
        let q = p.add(i / 2);
        let mut v = X::doubled(q.cast(), bytes);
        if odd {
            v = X::odd_from(v, X::doubled(q.add(1).cast(), bytes), bytes);
        }
        T::store(o.add(i), T::from_bits(v));
        i += l;
    }
    i
}

// Whole registers of the level, then of the levels below (whose
// instructions the level's kernels enable), the rest one by one.
macro_rules! upsample {
    ($($level:ident $(then $below:ident)*;)*) => {$(
        upsample!(@types $level [$($below)*]; u8 i8 u16 i16 u32 i32 f32 u64 i64);
        impl Upsample<f64> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn load_doubled<const N: usize>(self, p: *const f64, odd: bool) -> [f64; N] {
                // SAFETY: u64 and f64 have one size; the caller's span.
                let v: [u64; N] = unsafe { Upsample::<u64>::load_doubled(self, p.cast(), odd) };
                v.map(f64::from_bits)
            }
        }
    )*};
    (@types $level:ident $below:tt; $($t:ident)*) => {$(
        impl Upsample<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn load_doubled<const N: usize>(self, p: *const $t, odd: bool) -> [$t; N] {
                let mut o = [<$t>::default(); N];
                let q = o.as_mut_ptr();
                // SAFETY: the token proves the level, whose kernels enable
                // the levels below (module docs); registers read inside the
                // caller's span and are written inside the array.
                let mut i = unsafe { doubled_r::<$level, $t>(p, q, N, 0, odd) };
                upsample!(@below $below; p, q, N, i, odd, $t);
                while i < N {
                    // SAFETY: inside the caller's span.
                    o[i] = unsafe { p.add((i + odd as usize) / 2).read() };
                    i += 1;
                }
                o
            }
        }
    )*};
    (@below [$($below:ident)*]; $p:ident, $q:ident, $n:ident, $i:ident, $odd:ident, $t:ident) => {$(
        // SAFETY: as above.
        $i = unsafe { doubled_r::<$below, $t>($p, $q, $n, $i, $odd) };
    )*};
}
upsample! {
    Sse41;
    Avx2 then Sse41;
    Avx512 then Avx2 then Sse41;
    Avx512Vbmi then Avx2 then Sse41;
}
