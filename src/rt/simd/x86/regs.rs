//! [`Regs`] of each x86 level: its registers and the intrinsics the
//! operations of `level!` are written over, one (or a few) each.

use super::*;

/// One-line methods of [`Regs`] that are one intrinsic each.
macro_rules! direct {
    ($($name:ident($($arg:ident: $t:ty),*) -> $r:ty = $f:path;)*) => {$(
        #[cfg_attr(not(debug_assertions), inline(always))]
        unsafe fn $name($($arg: $t),*) -> $r { $f($($arg),*) }
    )*};
}

/// Shift methods of [`Regs`]: one intrinsic each, the amount in a register.
macro_rules! shifts {
    ($i:ty; $($name:ident = $f:path;)*) => {$(
        #[cfg_attr(not(debug_assertions), inline(always))]
        unsafe fn $name(a: $i, s: u32) -> $i { $f(a, _mm_cvtsi32_si128(s as i32)) }
    )*};
}

/// Compare-and-blend methods of [`Regs`] for SSE4.1 and AVX2: the
/// comparison's mask picks `x` over `y` byte by byte.
macro_rules! blends {
    ($i:ty; $blend:path; $($name:ident = $cmp:path;)*) => {$(
        #[cfg_attr(not(debug_assertions), inline(always))]
        unsafe fn $name(a: $i, b: $i, x: $i, y: $i) -> $i { $blend(y, x, $cmp(a, b)) }
    )*};
}

/// Compare-and-blend methods of [`Regs`] for AVX-512: the comparison gives
/// a mask register, which picks `x` over `y` lane by lane.
macro_rules! mask_blends {
    ($($name:ident = $cmp:path, $blend:path;)*) => {$(
        #[cfg_attr(not(debug_assertions), inline(always))]
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

            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn li(p: *const u8) -> $i {
                $li(p.cast())
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn si(p: *mut u8, v: $i) {
                $si(p.cast(), v)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn lh(p: *const u8) -> $h {
                ($lh)(p)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn lq(p: *const u8) -> __m128i {
                ($lq)(p)
            }
            direct! {
                lf(p: *const f32) -> $f = $lf;
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
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
            #[cfg_attr(not(debug_assertions), inline(always))]
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
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn selectf(cmp: Cmp, a: $f, b: $f, x: $i, y: $i) -> $i {
                $blendv8(y, x, $cast_fi(($cmpf)(cmp, a, b)))
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn sat16_u8(a: $i, b: $i) -> $i {
                ($sat16_u8)(a, b)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn sat16_i8(a: $i, b: $i) -> $i {
                ($sat16_i8)(a, b)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn sat32_u16(a: $i, b: $i) -> $i {
                ($sat32_u16)(a, b)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
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
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn trunc16_8(a: $i, b: $i) -> $i {
                ($trunc16_8)(a, b)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn trunc32_16(a: $i, b: $i) -> $i {
                ($trunc32_16)(a, b)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
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
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn floorf(a: $f) -> $f {
                $round::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn ceilf(a: $f) -> $f {
                $round::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(a)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn truncf(a: $f) -> $f {
                $round::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a)
            }
            direct! {
                minps(a: $f, b: $f) -> $f = $minps;
                maxps(a: $f, b: $f) -> $f = $maxps;
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn minnum(a: $f, b: $f) -> $f {
                $blendv($minps(b, a), b, ($unord)(a, a))
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn maxnum(a: $f, b: $f) -> $f {
                $blendv($maxps(b, a), b, ($unord)(a, a))
            }
            direct! {
                as_bits(a: $f) -> $i = $cast_fi;
                from_bits(a: $i) -> $f = $cast_if;
                i32_f32(a: $i) -> $f = $cvt_if;
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn cvtt(a: $f) -> $i {
                $cvtt_fi(a)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
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
/// The registers of the AVX-512 levels, with and without VBMI (whose own
/// instructions only the strided loads use).
macro_rules! avx512_regs {
    ($($level:ident)*) => {$(
impl Regs for $level {
    const BYTES: usize = 64;
    type I = __m512i;
    type F = __m512;
    type H = __m256i;

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn li(p: *const u8) -> __m512i {
        _mm512_loadu_si512(p.cast())
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn si(p: *mut u8, v: __m512i) {
        _mm512_storeu_si512(p.cast(), v)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn lh(p: *const u8) -> __m256i {
        _mm256_loadu_si256(p.cast())
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn lq(p: *const u8) -> __m128i {
        _mm_loadu_si128(p.cast())
    }
    direct! {
        lf(p: *const f32) -> __m512 = _mm512_loadu_ps;
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn sat16_u8(a: __m512i, b: __m512i) -> __m512i {
        let z = _mm512_setzero_si512();
        let lo = _mm512_castsi256_si512(_mm512_cvtusepi16_epi8(_mm512_max_epi16(a, z)));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtusepi16_epi8(_mm512_max_epi16(b, z)))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn sat16_i8(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtsepi16_epi8(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtsepi16_epi8(b))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn sat32_u16(a: __m512i, b: __m512i) -> __m512i {
        let z = _mm512_setzero_si512();
        let lo = _mm512_castsi256_si512(_mm512_cvtusepi32_epi16(_mm512_max_epi32(a, z)));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtusepi32_epi16(_mm512_max_epi32(b, z)))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn trunc16_8(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtepi16_epi8(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtepi16_epi8(b))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn trunc32_16(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(a));
        _mm512_inserti64x4::<1>(lo, _mm512_cvtepi32_epi16(b))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn floorf(a: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn ceilf(a: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn truncf(a: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a)
    }
    direct! {
        minps(a: __m512, b: __m512) -> __m512 = _mm512_min_ps;
        maxps(a: __m512, b: __m512) -> __m512 = _mm512_max_ps;
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn minnum(a: __m512, b: __m512) -> __m512 {
        let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a);
        _mm512_mask_blend_ps(nan, _mm512_min_ps(b, a), b)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn maxnum(a: __m512, b: __m512) -> __m512 {
        let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a);
        _mm512_mask_blend_ps(nan, _mm512_max_ps(b, a), b)
    }
    direct! {
        as_bits(a: __m512) -> __m512i = _mm512_castps_si512;
        from_bits(a: __m512i) -> __m512 = _mm512_castsi512_ps;
        i32_f32(a: __m512i) -> __m512 = _mm512_cvtepi32_ps;
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn cvtt(a: __m512) -> __m512i {
        _mm512_cvttps_epi32(a)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn f32_i32(a: __m512) -> __m512i {
        let t = _mm512_cvttps_epi32(a);
        let over = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, _mm512_set1_ps(2147483648.0));
        let ordered = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(a, a);
        let t = _mm512_mask_mov_epi32(t, over, _mm512_set1_epi32(i32::MAX));
        _mm512_maskz_mov_epi32(ordered, t)
    }
}
    )*};
}
avx512_regs!(Avx512 Avx512Vbmi);
