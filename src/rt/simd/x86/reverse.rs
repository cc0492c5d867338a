//! [`Reverse`](crate::rt::simd::Reverse) at the x86 levels: a register's
//! lanes reversed by shuffles ([`Reversal`]), register by register from
//! the end.

use super::*;

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
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn shuffle_mask(bytes: usize) -> __m128i {
    // SAFETY: 16 bytes are read from a 16-byte array.
    unsafe { _mm_loadu_si128(reversed_bytes(bytes).as_ptr().cast()) }
}

impl Reversal for Sse41 {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev8(a: __m128i) -> __m128i {
        _mm_shuffle_epi8(a, shuffle_mask(1))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev16(a: __m128i) -> __m128i {
        _mm_shuffle_epi8(a, shuffle_mask(2))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev32(a: __m128i) -> __m128i {
        _mm_shuffle_epi32::<0b00_01_10_11>(a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev64(a: __m128i) -> __m128i {
        _mm_shuffle_epi32::<0b01_00_11_10>(a)
    }
}

/// Lanes of `bytes` bytes of an AVX2 register in reverse order: reversed in
/// each 128-bit half, then the halves swapped.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn avx2_rev_in_halves(a: __m256i, bytes: usize) -> __m256i {
    let m = _mm256_broadcastsi128_si256(shuffle_mask(bytes));
    _mm256_permute4x64_epi64::<0b01_00_11_10>(_mm256_shuffle_epi8(a, m))
}

impl Reversal for Avx2 {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev8(a: __m256i) -> __m256i {
        avx2_rev_in_halves(a, 1)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev16(a: __m256i) -> __m256i {
        avx2_rev_in_halves(a, 2)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev32(a: __m256i) -> __m256i {
        _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev64(a: __m256i) -> __m256i {
        _mm256_permute4x64_epi64::<0b00_01_10_11>(a)
    }
}

impl Reversal for Avx512 {
    // Bytes: reversed in each 128-bit lane, then the lanes reversed
    // (`vpermb` would need VBMI).
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev8(a: __m512i) -> __m512i {
        let m = _mm512_broadcast_i32x4(shuffle_mask(1));
        let t = _mm512_shuffle_epi8(a, m);
        _mm512_shuffle_i64x2::<0b00_01_10_11>(t, t)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev16(a: __m512i) -> __m512i {
        let i = _mm512_set_epi16(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 26, 27, 28, 29, 30, 31,
        );
        _mm512_permutexvar_epi16(i, a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev32(a: __m512i) -> __m512i {
        let i = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        _mm512_permutexvar_epi32(i, a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev64(a: __m512i) -> __m512i {
        _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), a)
    }
}

impl Reversal for Avx512Vbmi {
    /// One `vpermb`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev8(a: __m512i) -> __m512i {
        let mut i = [0u8; 64];
        let mut k = 0;
        while k < 64 {
            i[k] = 63 - k as u8;
            k += 1;
        }
        _mm512_permutexvar_epi8(_mm512_loadu_si512(i.as_ptr().cast()), a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev16(a: __m512i) -> __m512i {
        Avx512::rev16(a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev32(a: __m512i) -> __m512i {
        Avx512::rev32(a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn rev64(a: __m512i) -> __m512i {
        Avx512::rev64(a)
    }
}

/// Lanes `from..` of `a` reversed into `o` (`o[i] = a[n - 1 - i]`), a
/// register of level `X` at a time, each reversed by `rev`. Returns the
/// first lane not written.
#[cfg_attr(not(debug_assertions), inline(always))]
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
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn reverse<const N: usize>(self, a: [f64; N]) -> [f64; N] {
                Reverse::<u64>::reverse(self, a.map(f64::to_bits)).map(f64::from_bits)
            }
        }
    )*};
    (@types $level:ident $below:tt; $($rev:ident: $($t:ident)*;)*) => {$($(
        impl Reverse<$t> for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
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
    Avx512Vbmi then Avx2 then Sse41;
}
