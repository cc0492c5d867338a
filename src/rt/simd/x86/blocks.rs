//! [`U8Blocks`] at the x86 levels: bytes widened within 128-bit blocks
//! (`punpcklbw`/`punpckhbw` with zero, or with a second vector for
//! `pmaddubsw`), and packed back within them (`packuswb`), so that no
//! operation moves lanes across blocks.
//!
//! A register of `B` bytes `a[i..i + B]` becomes two registers of `u16`:
//! `o[i..i + B / 2]` holds the low 8 bytes of each block and
//! `o[i + B / 2..i + B]` the high 8, which is the order of the lanes only
//! when a register is one block (SSE4.1). Packing `o[i..i + B / 2]` with
//! `o[i + B / 2..i + B]` block by block restores it. Lanes past the last
//! whole register keep their order, and a vector shorter than one register
//! of the level goes to the level below, so the three operations agree on
//! the order at every length.

use super::{Avx2, Avx512, Avx512Vbmi, Below, Sse41};
use crate::rt::simd::U8Blocks;
use core::arch::x86_64::*;

/// The weights of [`U8Blocks::mul_add_pairs`] as `pmaddubsw` reads them
/// after `punpck*bw(a, b)`: `wa` for the even bytes, `wb` for the odd.
#[cfg_attr(not(debug_assertions), inline(always))]
fn pair_weights(wa: u8, wb: u8) -> i16 {
    i16::from_le_bytes([wa, wb])
}

macro_rules! blocks {
    ($($level:ident)*, $bytes:expr, $reg:ty, load: $load:expr, store: $store:expr,
     zero: $zero:ident, splat16: $splat16:ident, lo: $lo:ident, hi: $hi:ident,
     maddubs: $maddubs:ident, packus: $packus:ident) => {$(
        impl U8Blocks for $level {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn widen_blocks<const N: usize>(self, a: [u8; N]) -> [u16; N] {
                if N < $bytes {
                    return U8Blocks::widen_blocks(self.below(), a);
                }
                let mut o = [0u16; N];
                let mut i = 0;
                while i + $bytes <= N {
                    // SAFETY: the token proves the level (module docs of
                    // x86.rs); bytes i..i + B of `a` and lanes i..i + B of
                    // `o` are inside the arrays (i + B <= N).
                    unsafe {
                        let r: $reg = $load(a.as_ptr().add(i));
                        let z = $zero();
                        $store(o.as_mut_ptr().add(i).cast::<u8>(), $lo(r, z));
                        $store(o.as_mut_ptr().add(i + $bytes / 2).cast::<u8>(), $hi(r, z));
                    }
                    i += $bytes;
                }
                while i < N {
                    o[i] = a[i] as u16;
                    i += 1;
                }
                o
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn mul_add_pairs<const N: usize>(
                self,
                a: [u8; N],
                b: [u8; N],
                wa: u8,
                wb: u8,
            ) -> [u16; N] {
                if N < $bytes {
                    return U8Blocks::mul_add_pairs(self.below(), a, b, wa, wb);
                }
                let mut o = [0u16; N];
                let mut i = 0;
                while i + $bytes <= N {
                    // SAFETY: as in `widen_blocks`; `b` has `a`'s length.
                    unsafe {
                        let w = $splat16(pair_weights(wa, wb));
                        let (x, y): ($reg, $reg) =
                            ($load(a.as_ptr().add(i)), $load(b.as_ptr().add(i)));
                        $store(o.as_mut_ptr().add(i).cast::<u8>(), $maddubs($lo(x, y), w));
                        $store(
                            o.as_mut_ptr().add(i + $bytes / 2).cast::<u8>(),
                            $maddubs($hi(x, y), w),
                        );
                    }
                    i += $bytes;
                }
                while i < N {
                    o[i] = (a[i] as u16)
                        .wrapping_mul(wa as u16)
                        .wrapping_add((b[i] as u16).wrapping_mul(wb as u16));
                    i += 1;
                }
                o
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn narrow_blocks<const N: usize>(self, a: [u16; N]) -> [u8; N] {
                if N < $bytes {
                    return U8Blocks::narrow_blocks(self.below(), a);
                }
                let mut o = [0u8; N];
                let mut i = 0;
                while i + $bytes <= N {
                    // SAFETY: as in `widen_blocks`: lanes i..i + B of `a`,
                    // bytes i..i + B of `o`.
                    unsafe {
                        let (x, y): ($reg, $reg) = (
                            $load(a.as_ptr().add(i).cast::<u8>()),
                            $load(a.as_ptr().add(i + $bytes / 2).cast::<u8>()),
                        );
                        $store(o.as_mut_ptr().add(i), $packus(x, y));
                    }
                    i += $bytes;
                }
                while i < N {
                    o[i] = a[i] as u8;
                    i += 1;
                }
                o
            }
        }
    )*};
}

blocks!(Sse41, 16, __m128i,
    load: |p: *const u8| _mm_loadu_si128(p.cast()),
    store: |p: *mut u8, v| _mm_storeu_si128(p.cast(), v),
    zero: _mm_setzero_si128, splat16: _mm_set1_epi16,
    lo: _mm_unpacklo_epi8, hi: _mm_unpackhi_epi8,
    maddubs: _mm_maddubs_epi16, packus: _mm_packus_epi16);

blocks!(Avx2, 32, __m256i,
    load: |p: *const u8| _mm256_loadu_si256(p.cast()),
    store: |p: *mut u8, v| _mm256_storeu_si256(p.cast(), v),
    zero: _mm256_setzero_si256, splat16: _mm256_set1_epi16,
    lo: _mm256_unpacklo_epi8, hi: _mm256_unpackhi_epi8,
    maddubs: _mm256_maddubs_epi16, packus: _mm256_packus_epi16);

blocks!(Avx512 Avx512Vbmi, 64, __m512i,
    load: |p: *const u8| _mm512_loadu_si512(p.cast()),
    store: |p: *mut u8, v| _mm512_storeu_si512(p.cast(), v),
    zero: _mm512_setzero_si512, splat16: _mm512_set1_epi16,
    lo: _mm512_unpacklo_epi8, hi: _mm512_unpackhi_epi8,
    maddubs: _mm512_maddubs_epi16, packus: _mm512_packus_epi16);
