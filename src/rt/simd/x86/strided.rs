//! Loads of a constant stride at the x86 levels
//! ([`Deinterleave`](crate::rt::simd::Deinterleave)): stride 2 by the
//! narrowings of lanes twice as wide, strides 3 and 4 by byte shuffles
//! ([`Strided`]), and all the phases of a stride from one read of their
//! elements.

use super::*;

/// Lanes `o[i] = p[2 i]` for `i` from `from` up to `n`, whole registers of
/// level `X` at a time: the even lanes of the register at `p + 2 i`, then
/// the odd lanes of the one at `p + 2 i + l - 1` (so that no load passes the
/// span's last element, `p + 2 n - 2`), combined by `op`. Returns the first
/// lane not written.
#[cfg_attr(not(debug_assertions), inline(always))]
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
#[cfg_attr(not(debug_assertions), inline(always))]
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
    /// After the whole registers of [`phases_r`], the lanes of half a
    /// register when they remain and the level has a better way to read
    /// them than the level below; returns the first lane not written.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn phases_half<T, const N: usize, const S: usize>(
        _p: *const T,
        _o: &mut [[T; N]; S],
        from: usize,
    ) -> usize {
        from
    }
    /// As `phases_half`, after [`every_r`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn every_half<T, const S: usize>(
        _p: *const T,
        _o: *mut T,
        _n: usize,
        from: usize,
    ) -> usize {
        from
    }
}

/// [`picks`] for phase `phase` of the lanes: the lanes `phase`, `phase +
/// s`, ... of the 16 bytes of lanes from `start`.
#[cfg_attr(not(debug_assertions), inline(always))]
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

#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn phase_picks_reg(b: usize, s: usize, phase: usize, start: usize) -> __m128i {
    // SAFETY: 16 bytes are read from a 16-byte array.
    unsafe { _mm_loadu_si128(phase_picks(b, s, phase, start).as_ptr().cast()) }
}

/// The `pshufb` indices that move the lanes a 16-byte read at byte `start`
/// of the span holds into their places in 16 bytes of lanes of `b` bytes
/// `s` lanes apart (0x80, a zero, for the others).
#[cfg_attr(not(debug_assertions), inline(always))]
const fn picks(b: usize, s: usize, start: usize) -> [i8; 16] {
    phase_picks(b, s, 0, start)
}

/// The bytes of the span of `reg` bytes of lanes of `b` bytes `s` apart
/// (16 for the shuffles, 32 or 64 for the VBMI permutes).
#[cfg_attr(not(debug_assertions), inline(always))]
const fn span_bytes(reg: usize, b: usize, s: usize) -> usize {
    ((reg / b - 1) * s + 1) * b
}

/// The `j`-th 16-byte read of such a span starts here.
#[cfg_attr(not(debug_assertions), inline(always))]
const fn read_start(b: usize, s: usize, j: usize) -> usize {
    let last = span_bytes(16, b, s) - 16;
    if 16 * j < last {
        16 * j
    } else {
        last
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn picks_reg(b: usize, s: usize, start: usize) -> __m128i {
    // SAFETY: 16 bytes are read from a 16-byte array.
    unsafe { _mm_loadu_si128(picks(b, s, start).as_ptr().cast()) }
}

impl Strided for Sse41 {
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m128i {
        let reads = span_bytes(16, b, S).div_ceil(16);
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
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m256i {
        let reads = span_bytes(16, b, S).div_ceil(16);
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
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m512i {
        let lo = Avx2::every::<S>(p, b);
        let hi = Avx2::every::<S>(p.add(32 * S), b);
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
    }
}

/// Where each byte of a VBMI strided load comes from, for lanes of `b`
/// bytes `s` apart, read as `s` registers of 64 bytes starting at
/// `start(r)`: byte `k` of phase `j` is byte `((k / b) s + j) b + k % b` of
/// the span, taken from the first read that holds it. `lo[j]` indexes the
/// first two reads (`vpermt2b`: bit 6 picks the second), `hi[j]` the
/// others (as `vpermb` of the third, or `vpermt2b` of the third and
/// fourth), for the bytes that `mask[j]` marks.
struct VbmiPicks {
    lo: [[u8; 64]; 4],
    hi: [[u8; 64]; 4],
    mask: [u64; 4],
}

/// [`VbmiPicks`] for `phases` phases (1 for a load of one phase), the reads
/// at `64 r`, or ending at the span's last byte where `span` is shorter
/// than the `s` registers (so that none passes it).
const fn vbmi_picks(b: usize, s: usize, phases: usize, span: usize) -> VbmiPicks {
    let mut picks = VbmiPicks {
        lo: [[0; 64]; 4],
        hi: [[0; 64]; 4],
        mask: [0; 4],
    };
    let mut j = 0;
    while j < phases {
        let mut k = 0;
        while k < 64 {
            let src = ((k / b) * s + j) * b + k % b;
            let mut r = 0;
            loop {
                let start = vbmi_read_start(r, span);
                if src < start + 64 {
                    let at = src - start;
                    if r < 2 {
                        picks.lo[j][k] = (at + 64 * r) as u8;
                    } else {
                        picks.hi[j][k] = (at + 64 * (r - 2)) as u8;
                        picks.mask[j] |= 1 << k;
                    }
                    break;
                }
                r += 1;
            }
            k += 1;
        }
        j += 1;
    }
    picks
}

/// The `vpermt2b` indices of half a register of lanes of `b` bytes `s`
/// apart (its 32 low bytes; the rest 0) for `phases` phases, from two
/// reads: the span's first 64 bytes and its bytes from 64 on, so that the
/// index of a byte is its place in the span.
const fn vbmi_half_picks(b: usize, s: usize, phases: usize) -> [[u8; 64]; 4] {
    let mut idx = [[0; 64]; 4];
    let mut j = 0;
    while j < phases {
        let mut k = 0;
        while k < 32 {
            idx[j][k] = (((k / b) * s + j) * b + k % b) as u8;
            k += 1;
        }
        j += 1;
    }
    idx
}

/// The start of read `r` of [`vbmi_picks`].
#[cfg_attr(not(debug_assertions), inline(always))]
const fn vbmi_read_start(r: usize, span: usize) -> usize {
    if 64 * r + 64 <= span {
        64 * r
    } else {
        span - 64
    }
}

/// `$table`, an expression of the element size `$b`, as a constant of the
/// program for each size there is, picked by `$bytes`: the VBMI pick
/// tables ([`vbmi_picks`], [`vbmi_half_picks`]). Computed where they are
/// used, the tables took the loop its time: the grey conversion of 64
/// lanes of u8 ran 33 times slower at the VBMI level than at the AVX-512
/// one (25 against 0.78 ms, 3840x2160, Xeon, 2026-11-28).
macro_rules! for_size {
    ($bytes:expr, $b:ident => $table:expr) => {
        for_size!(@ $bytes, $b, $table, 1 2 4 8)
    };
    (@ $bytes:expr, $b:ident, $table:expr, $($n:literal)*) => {
        match $bytes {
            $($n => {
                const $b: usize = $n;
                const { &$table }
            })*
            _ => unreachable!("elements of 1, 2, 4 or 8 bytes"),
        }
    };
}

/// The bytes of `reads` that `lo`, `hi` and `mask` pick ([`VbmiPicks`]),
/// from 3 or 4 reads (strides 3 and 4).
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn vbmi_pick<const R: usize>(
    reads: &[__m512i; R],
    lo: [u8; 64],
    hi: [u8; 64],
    mask: u64,
) -> __m512i {
    let lo = _mm512_loadu_si512(lo.as_ptr().cast());
    let hi = _mm512_loadu_si512(hi.as_ptr().cast());
    let t = _mm512_permutex2var_epi8(reads[0], lo, reads[1]);
    match R {
        3 => _mm512_mask_permutexvar_epi8(t, mask, hi, reads[2]),
        _ => _mm512_mask_blend_epi8(mask, t, _mm512_permutex2var_epi8(reads[2], hi, reads[3])),
    }
}

/// Whole-register byte permutes: `S` reads of 64 bytes, and each register
/// of lanes picked from them by two permutes (and a blend at stride 4),
/// where [`Avx512`] shuffles 16 bytes at a time (`9` shuffles and `9` ORs
/// per 32 lanes at stride 3).
impl Strided for Avx512Vbmi {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn phases<const S: usize>(p: *const u8, b: usize) -> [__m512i; S] {
        let mut reads = [_mm512_setzero_si512(); S];
        for (r, v) in reads.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(p.add(64 * r).cast());
        }
        let picks = for_size!(b, B => vbmi_picks(B, S, S, 64 * S));
        let mut out = [_mm512_setzero_si512(); S];
        for (j, o) in out.iter_mut().enumerate() {
            *o = vbmi_pick(&reads, picks.lo[j], picks.hi[j], picks.mask[j]);
        }
        out
    }

    /// Half a register (the 32 lanes of u8 of a vector of 256 bits) from
    /// two reads of 64 bytes, by one `vpermt2b` a phase.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn phases_half<T, const N: usize, const S: usize>(
        p: *const T,
        o: &mut [[T; N]; S],
        from: usize,
    ) -> usize {
        let (b, l) = (size_of::<T>(), 32 / size_of::<T>());
        if from + l > N {
            return from;
        }
        let q = p.add(S * from).cast::<u8>();
        // The span's bytes from 64 on come from a read at 64, not from one
        // ending at the span's end, which at stride 3 would start 32 bytes
        // in and cross a cache line wherever the span starts on one. A
        // plain read, since it ends at the span's end: `every_half`'s
        // masked read here ran the grey conversion 6% slower.
        let second = if S == 3 {
            _mm512_zextsi256_si512(_mm256_loadu_si256(q.add(64).cast()))
        } else {
            _mm512_loadu_si512(q.add(64).cast())
        };
        let reads = [_mm512_loadu_si512(q.cast()), second];
        let picks = for_size!(b, B => vbmi_half_picks(B, S, S));
        for (j, o) in o.iter_mut().enumerate() {
            let idx = _mm512_loadu_si512(picks[j].as_ptr().cast());
            let v = _mm512_permutex2var_epi8(reads[0], idx, reads[1]);
            _mm256_storeu_si256(o.as_mut_ptr().add(from).cast(), _mm512_castsi512_si256(v));
        }
        from + l
    }

    /// As `phases_half`, of one phase, from the span of its lanes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn every_half<T, const S: usize>(
        p: *const T,
        o: *mut T,
        n: usize,
        from: usize,
    ) -> usize {
        let (b, l) = (size_of::<T>(), 32 / size_of::<T>());
        if from + l > n {
            return from;
        }
        // The bytes from 64 on by a masked read of the span's rest (as
        // `phases_half`: no read that starts inside a cache line the first
        // one holds, and nothing read past the span).
        let span = span_bytes(32, b, S);
        let q = p.add(S * from).cast::<u8>();
        let rest = u64::MAX >> (128 - span);
        let reads = [
            _mm512_loadu_si512(q.cast()),
            _mm512_maskz_loadu_epi8(rest, q.add(64).cast()),
        ];
        let picks = for_size!(b, B => vbmi_half_picks(B, S, 1));
        let idx = _mm512_loadu_si512(picks[0].as_ptr().cast());
        let v = _mm512_permutex2var_epi8(reads[0], idx, reads[1]);
        _mm256_storeu_si256(o.add(from).cast(), _mm512_castsi512_si256(v));
        from + l
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn every<const S: usize>(p: *const u8, b: usize) -> __m512i {
        let span = span_bytes(64, b, S);
        let mut reads = [_mm512_setzero_si512(); S];
        for (r, v) in reads.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(p.add(vbmi_read_start(r, span)).cast());
        }
        let picks = for_size!(b, B => vbmi_picks(B, S, 1, span_bytes(64, B, S)));
        vbmi_pick(&reads, picks.lo[0], picks.hi[0], picks.mask[0])
    }
}

/// Lanes `o[i] = p[S i]` for `i` from `from` up to `n`, whole registers of
/// level `X` at a time, each from the span of its own lanes. Returns the
/// first lane not written.
#[cfg_attr(not(debug_assertions), inline(always))]
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
#[cfg_attr(not(debug_assertions), inline(always))]
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

/// Both phases of stride 2 at a level ([`Deinterleave::load_phases`] with
/// `S` = 2): by default the lanes picked one by one.
trait Phases2<T: Copy + Default>: Copy {
    /// # Safety
    ///
    /// The `2 N` elements from `p` must be readable, and the processor must
    /// have the level.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn phases2<const N: usize>(p: *const T) -> [[T; N]; 2] {
        // SAFETY: the caller makes the elements readable.
        unsafe { crate::rt::simd::pick_phases::<T, N, 2>(p) }
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
        #[cfg_attr(not(debug_assertions), inline(always))]
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
                return unsafe { crate::rt::simd::pick_phases::<$t, N, S>(p) };
            }
            let mut o = [[<$t>::default(); N]; S];
            // SAFETY: the token proves the level, whose kernels enable the
            // levels below (module docs); each register's elements lie
            // inside the `S N` the caller makes readable.
            let mut i = unsafe { phases_r::<$level, $t, N, S>(p, &mut o, 0) };
            // SAFETY: as above.
            i = unsafe { <$level as Strided>::phases_half::<$t, N, S>(p, &mut o, i) };
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
        #[cfg_attr(not(debug_assertions), inline(always))]
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
                return unsafe { crate::rt::simd::pick_every::<$t, N, M, S>(p) };
            }
            let mut o = [<$t>::default(); N];
            // SAFETY: the token proves the level, whose kernels enable the
            // levels below (module docs); each register's lanes lie inside
            // the span the caller makes readable.
            let mut i = unsafe { every_r::<$level, $t, S>(p, o.as_mut_ptr(), N, 0) };
            // SAFETY: as above.
            i = unsafe { <$level as Strided>::every_half::<$t, S>(p, o.as_mut_ptr(), N, i) };
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
            #[cfg_attr(not(debug_assertions), inline(always))]
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
            #[cfg_attr(not(debug_assertions), inline(always))]
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
    Avx512Vbmi then Avx2 then Sse41;
}

#[cfg(test)]
mod tests {
    use super::{
        phase_picks, picks, read_start, span_bytes, vbmi_half_picks, vbmi_picks, vbmi_read_start,
    };

    /// Every byte of every VBMI strided load comes from the right byte of
    /// the span, through a read inside it.
    #[test]
    fn vbmi_picks_take_every_byte_from_its_place() {
        for b in [1, 2, 4, 8] {
            for s in [3, 4] {
                let every = span_bytes(64, b, s);
                for (phases, span) in [(s, 64 * s), (1, every)] {
                    let picks = vbmi_picks(b, s, phases, span);
                    for j in 0..phases {
                        for k in 0..64 {
                            let from_hi = picks.mask[j] >> k & 1 == 1;
                            let (r, at) = if from_hi {
                                let i = picks.hi[j][k] as usize;
                                assert!(i < if s == 3 { 64 } else { 128 });
                                (2 + i / 64, i % 64)
                            } else {
                                let i = picks.lo[j][k] as usize;
                                assert!(i < 128);
                                (i / 64, i % 64)
                            };
                            assert!(r < s && vbmi_read_start(r, span) + 64 <= span);
                            assert_eq!(
                                vbmi_read_start(r, span) + at,
                                ((k / b) * s + j) * b + k % b,
                                "{b} bytes by {s}, phase {j}, byte {k}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Every byte of half a register of a VBMI strided load comes from the
    /// right byte of the span, through a read inside it.
    #[test]
    fn vbmi_half_picks_take_every_byte_from_its_place() {
        for b in [1, 2, 4, 8] {
            for s in [3, 4] {
                // `phases_half` reads `32 s` bytes, `every_half` the span
                // of one phase's lanes; an index past them would pick a
                // byte the masked read left zero.
                for (phases, read) in [(s, 32 * s), (1, span_bytes(32, b, s))] {
                    assert!((65..=128).contains(&read));
                    let idx = vbmi_half_picks(b, s, phases);
                    for (j, idx) in idx.iter().enumerate().take(phases) {
                        for (k, &i) in idx.iter().enumerate().take(32) {
                            assert_eq!(i as usize, ((k / b) * s + j) * b + k % b);
                            assert!((i as usize) < read, "b {b}, s {s}, lane byte {k}");
                        }
                    }
                }
            }
        }
    }

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
                let span = span_bytes(16, b, s);
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
