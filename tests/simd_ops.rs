//! The vector operations of `pipeline::rt::simd` against the scalar semantics
//! of the DSL, lane by lane and bit for bit, at every instruction-set level
//! this processor has (`Scalar`, and on x86-64 `Sse41`, `Avx2`, `Avx512`).
//!
//! The x86 levels compute whole registers with `core::arch` code and the lanes
//! past the last whole register with the scalar semantics, so each operation
//! runs on vectors of several lengths: 64 lanes (whole registers of every type
//! at every level), 131 (whole registers and a ragged tail), 37 and 3. The
//! inputs hold every type's edge values (0, ±1, MIN, MAX, values around 2^8,
//! 2^16, 2^31 for integers; ±0, infinities, NaN, subnormals, values at the
//! limits of the integer types for floats) in every pair `(a, b)`, among
//! pseudo-random noise; the 8-bit types also get every pair. Division by one
//! divisor (`div_by`, a multiply-high by a reciprocal on x86) is checked for
//! many divisors of every type, for every `u16` dividend, for every `u16`
//! divisor (with the dividends where a reciprocal goes wrong first) and for
//! many random `u32` operands; shifts for every amount up to twice the width;
//! casts for all 100 ordered pairs of types; unsigned narrowings of values
//! that fit the narrower type for every such value.
//!
//! The reference semantics are written here, independently of the library
//! (whose `Num`, `Int`, `Float` and `CastTo` traits appear only as the bounds
//! its operations require): integers wrap, division is Euclidean with
//! `x / 0 == 0`, float `min`/`max` ignore a NaN operand and give the first
//! operand on ties (so `min(0.0, -0.0)` is `0.0`, which Rust's `f32::min`
//! leaves unspecified), shifts take the amount modulo the width, casts are
//! `as`, comparisons with a NaN are false except `!=`. Saturating casts are
//! checked against `pipeline::rt::SaturatingCast`, the scalar definition
//! (with its own tests). Results must match exactly; a float result may
//! differ from the reference only in the payload of a NaN.

use pipeline::rt::simd::{
    Arith, Average, Bits, CastTo, Cmp, Convert, Deinterleave, DivSmall, Float, Gather, Int, MulAdd,
    NarrowFitting, Num, Reverse, Round, SatConvert, Scalar, Select, U8Blocks, Upsample,
};
#[cfg(target_arch = "x86_64")]
use pipeline::rt::simd::{Avx2, Avx512, Avx512Vbmi, Sse41};
use pipeline::rt::SaturatingCast;
use std::any::type_name;
use std::fmt::Debug;
use std::hint::black_box;

/// Runs `$body` once per instruction-set level this processor has, with
/// `$level` bound to the level's token.
macro_rules! each_level {
    (|$level:ident| $body:expr) => {{
        let $level = Scalar;
        $body;
        #[cfg(target_arch = "x86_64")]
        {
            match Sse41::new() {
                Some($level) => $body,
                None => skipped("Sse41"),
            }
            match Avx2::new() {
                Some($level) => $body,
                None => skipped("Avx2"),
            }
            match Avx512::new() {
                Some($level) => $body,
                None => skipped("Avx512"),
            }
            match Avx512Vbmi::new() {
                Some($level) => $body,
                None => skipped("Avx512Vbmi"),
            }
        }
    }};
}

/// Calls `$check::<$generics.., N>($args)` for every vector length `N`: a
/// tiny one, one below a 512-bit register of bytes, whole 512-bit registers
/// of every type, and whole registers with a ragged tail.
macro_rules! at_lengths {
    ($check:ident::<$($g:ty),*>($($arg:expr),*)) => {
        $check::<$($g,)* 3>($($arg),*);
        $check::<$($g,)* 37>($($arg),*);
        $check::<$($g,)* 64>($($arg),*);
        $check::<$($g,)* 131>($($arg),*);
    };
}

/// Notes a level that this processor lacks (its checks do not run).
fn skipped(level: &str) {
    eprintln!("{level}: not available on this processor, not checked");
}

/// The short name of a level or element type.
fn name<T>() -> &'static str {
    let full = type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// The checks that found wrong lanes, reported together at the end of a test.
#[derive(Default)]
struct Mismatches(Vec<String>);

impl Mismatches {
    /// Fails the test if any check found wrong lanes.
    fn assert_none(self) {
        assert!(
            self.0.is_empty(),
            "{} checks have wrong lanes (the first lanes of each are printed above):\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

/// The checks of one level and type at length `N`; `at` names them.
struct At<'a, const N: usize> {
    m: &'a mut Mismatches,
    at: String,
}

impl<'a, const N: usize> At<'a, N> {
    /// The checks of level `L` on type `ty` (a name).
    fn new<L>(m: &'a mut Mismatches, ty: &str) -> At<'a, N> {
        let at = format!("{} {ty} N={N}", name::<L>());
        At { m, at }
    }

    /// Runs `f` on `inputs`, `N` lanes at a time (the last vector wraps
    /// around to the first inputs), and compares every lane with `reference`
    /// of its input; `op` names the operation.
    fn one<I: Copy + Debug, B: Lane>(
        &mut self,
        op: &str,
        inputs: &[I],
        f: impl Fn([I; N]) -> [B; N],
        reference: impl Fn(I) -> B,
    ) {
        let mut wrong = 0;
        for start in (0..inputs.len()).step_by(N) {
            let xs: [I; N] = std::array::from_fn(|i| inputs[(start + i) % inputs.len()]);
            let got = f(xs);
            for (lane, (&x, &got)) in xs.iter().zip(&got).enumerate() {
                let want = reference(x);
                if !B::same(got, want) {
                    wrong += 1;
                    if wrong <= 5 {
                        eprintln!(
                            "{} {op}, lane {lane}: input {x:?}: got {got:?}, want {want:?}",
                            self.at
                        );
                    }
                }
            }
        }
        if wrong > 0 {
            let summary = format!("{} {op}: {wrong} wrong lanes", self.at);
            self.m.0.push(summary);
        }
    }

    /// [`At::one`] of a two-operand operation on pairs `(a, b)`.
    fn two<T: Lane>(
        &mut self,
        op: &str,
        pairs: &[(T, T)],
        f: impl Fn([T; N], [T; N]) -> [T; N],
        reference: impl Fn(T, T) -> T,
    ) {
        let f = |x: [(T, T); N]| f(x.map(|p| p.0), x.map(|p| p.1));
        self.one(op, pairs, f, |(a, b)| reference(a, b));
    }
}

/// A xorshift64* generator: deterministic noise without dependencies.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// `n` values of noise of type `T`.
    fn noise<T: Lane>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| T::noise(self.next())).collect()
    }
}

/// An element type: its edge values, noise, and bit-exact comparison.
trait Lane: Copy + Debug + Default + PartialEq + 'static {
    /// Values that corner cases of the operations hinge on.
    fn edges() -> Vec<Self>;
    /// A value from random bits.
    fn noise(bits: u64) -> Self;
    /// `got` is `want`: the same bits, or both NaN.
    fn same(got: Self, want: Self) -> bool;
}

/// The scalar semantics of arithmetic on an element type, and the divisors
/// and dividends that `div_by` is checked with.
trait Model: Lane {
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    /// Divisors for `div_by`: edge values and noise.
    fn divisors(rng: &mut Rng) -> Vec<Self>;
    /// Dividends for `div_by` by `d`: edge values, noise, and (integers)
    /// values around multiples of `d`, the largest among them.
    fn dividends(d: Self, rng: &mut Rng) -> Vec<Self>;
}

/// The scalar semantics of bitwise operations on an integer type.
trait IntModel: Model {
    const BITS: u32;
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
    fn not(a: Self) -> Self;
    fn shl(a: Self, s: u32) -> Self;
    fn shr(a: Self, s: u32) -> Self;
}

/// The scalar semantics of rounding functions on a float type.
trait FloatModel: Model {
    fn sqrt(a: Self) -> Self;
    fn floor(a: Self) -> Self;
    fn ceil(a: Self) -> Self;
    fn trunc(a: Self) -> Self;
    /// `a * b + c` rounded once: the standard library's `mul_add` (the C
    /// library's correctly rounded `fma`), the definition the vector
    /// instructions are checked against.
    fn mul_add(a: Self, b: Self, c: Self) -> Self;
}

/// Values around powers of two and the limits of the integer types, for the
/// integer types they fit (negated too); the integer edge values add them.
const AROUND_LIMITS: [i128; 19] = [
    127,
    128,
    255,
    256,
    257,
    32767,
    32768,
    65535,
    65536,
    65537,
    16_777_217,
    (1 << 31) - 1,
    1 << 31,
    (1 << 31) + 1,
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    (1 << 53) + 1,
    (1 << 63) - 1,
];

/// Divisors that `div_by` of every integer type is checked with, where they
/// fit (powers of two and their neighbours are added).
const DIVISORS: [i128; 18] = [
    0, 1, 2, 3, 5, 6, 7, 10, 11, 13, 25, 100, 255, 641, 1000, 65535, -1, -3,
];

/// `v` without repeated values (the first of each kept).
fn distinct<T: PartialEq>(v: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

macro_rules! int_model {
    ($($t:ident: $abs:expr;)*) => {$(
        impl Lane for $t {
            fn edges() -> Vec<$t> {
                let wrap = |v: i128| v as $t;
                let mut e = vec![
                    0, 1, 2, 7, <$t>::BITS as $t - 1, <$t>::MAX, <$t>::MIN, <$t>::MAX - 1,
                    <$t>::MIN + 1, wrap(-1), wrap(-2), wrap(-7), <$t>::MAX / 2 + 1,
                ];
                for v in AROUND_LIMITS {
                    e.extend(<$t>::try_from(v).ok());
                    e.extend(<$t>::try_from(-v).ok());
                    e.extend(<$t>::try_from(-v - 1).ok());
                }
                distinct(e)
            }
            fn noise(bits: u64) -> $t {
                bits as $t
            }
            fn same(got: $t, want: $t) -> bool {
                got == want
            }
        }

        impl Model for $t {
            fn add(a: $t, b: $t) -> $t { a.wrapping_add(b) }
            fn sub(a: $t, b: $t) -> $t { a.wrapping_sub(b) }
            fn mul(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
            fn div(a: $t, b: $t) -> $t {
                if b == 0 { 0 } else { a.wrapping_div_euclid(b) }
            }
            fn min(a: $t, b: $t) -> $t { core::cmp::min(a, b) }
            fn max(a: $t, b: $t) -> $t { core::cmp::max(a, b) }
            fn neg(a: $t) -> $t { a.wrapping_neg() }
            fn abs(a: $t) -> $t { let f: fn($t) -> $t = $abs; f(a) }

            fn divisors(rng: &mut Rng) -> Vec<$t> {
                let mut d: Vec<$t> =
                    DIVISORS.iter().filter_map(|&v| <$t>::try_from(v).ok()).collect();
                for k in 1..<$t>::BITS {
                    let p = 1i128 << k;
                    d.extend([p - 1, p, p + 1].into_iter().filter_map(|v| <$t>::try_from(v).ok()));
                }
                d.extend([<$t>::MAX, <$t>::MAX - 1, <$t>::MIN]);
                for _ in 0..8 {
                    let x = <$t>::noise(rng.next());
                    d.extend([x, x >> (rng.next() % u64::from(<$t>::BITS))]);
                }
                distinct(d)
            }

            fn dividends(d: $t, rng: &mut Rng) -> Vec<$t> {
                let mut n = <$t>::edges();
                n.extend(rng.noise::<$t>(64));
                let d = i128::from(d);
                if d != 0 {
                    // Quotients up to the largest one (`top`) that fits.
                    let top = i128::from(<$t>::MAX) / d.abs();
                    let mut q = vec![1, 2, 3, 7, top / 2, top - 1, top, top + 1];
                    q.extend((0..8).map(|_| (rng.next() as i128).rem_euclid(top + 1)));
                    for q in q {
                        for sign in [1, -1] {
                            for delta in -1..=1 {
                                n.extend(<$t>::try_from(sign * q * d + delta).ok());
                            }
                        }
                    }
                }
                n
            }
        }

        impl IntModel for $t {
            const BITS: u32 = <$t>::BITS;
            fn and(a: $t, b: $t) -> $t { a & b }
            fn or(a: $t, b: $t) -> $t { a | b }
            fn xor(a: $t, b: $t) -> $t { a ^ b }
            fn not(a: $t) -> $t { !a }
            fn shl(a: $t, s: u32) -> $t { a.wrapping_shl(s) }
            fn shr(a: $t, s: u32) -> $t { a.wrapping_shr(s) }
        }
    )*};
}
int_model! {
    u8: |a| a; u16: |a| a; u32: |a| a; u64: |a| a;
    i8: i8::wrapping_abs; i16: i16::wrapping_abs; i32: i32::wrapping_abs; i64: i64::wrapping_abs;
}

macro_rules! float_model {
    ($($t:ident: $bits:ident, $mantissa:literal, $bias:literal;)*) => {$(
        impl Lane for $t {
            fn edges() -> Vec<$t> {
                vec![
                    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, -2.5, 255.5, -128.5, 65535.9, -3e9, 5e9,
                    1e20, <$t>::MIN_POSITIVE, -<$t>::MIN_POSITIVE / 4.0, <$t>::from_bits(1),
                    <$t>::MAX, -<$t>::MAX, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::NAN,
                    -<$t>::NAN, 2147483648.0, -2147483904.0, 32767.5, -32768.7, 127.9,
                    -128.9, 8388607.5, 16777217.0, 4294967296.0, 9223372036854775808.0,
                    -9223372036854775808.0, 18446744073709551616.0,
                ]
            }
            /// Any bits (a quarter), multiples of 1/4 up to ±35000 (a
            /// quarter), or a sign and mantissa at random with a magnitude
            /// between 2^-27 and 2^27.
            fn noise(bits: u64) -> $t {
                match bits >> 62 {
                    0 => <$t>::from_bits(bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) as $bits),
                    1 => ((bits % 280_001) as i32 - 140_000) as $t * 0.25,
                    _ => {
                        let sign: $bits = 1 << (<$bits>::BITS - 1);
                        let mantissa: $bits = (1 << $mantissa) - 1;
                        let exponent = ($bias - 27 + (bits >> 48) % 55) as $bits;
                        <$t>::from_bits(bits as $bits & (sign | mantissa) | exponent << $mantissa)
                    }
                }
            }
            fn same(got: $t, want: $t) -> bool {
                if want.is_nan() { got.is_nan() } else { got.to_bits() == want.to_bits() }
            }
        }

        impl Model for $t {
            fn add(a: $t, b: $t) -> $t { a + b }
            fn sub(a: $t, b: $t) -> $t { a - b }
            fn mul(a: $t, b: $t) -> $t { a * b }
            fn div(a: $t, b: $t) -> $t { a / b }
            // NaN ignored, the first operand on ties (so of two zeros).
            fn min(a: $t, b: $t) -> $t { if b < a || a.is_nan() { b } else { a } }
            fn max(a: $t, b: $t) -> $t { if b > a || a.is_nan() { b } else { a } }
            fn neg(a: $t) -> $t { -a }
            fn abs(a: $t) -> $t { a.abs() }

            fn divisors(rng: &mut Rng) -> Vec<$t> {
                let mut d = <$t>::edges();
                d.extend(rng.noise::<$t>(8));
                d
            }

            fn dividends(_: $t, rng: &mut Rng) -> Vec<$t> {
                let mut n = <$t>::edges();
                n.extend(rng.noise::<$t>(64));
                n
            }
        }

        impl FloatModel for $t {
            fn sqrt(a: $t) -> $t { a.sqrt() }
            fn floor(a: $t) -> $t { a.floor() }
            fn ceil(a: $t) -> $t { a.ceil() }
            fn trunc(a: $t) -> $t { a.trunc() }
            fn mul_add(a: $t, b: $t, c: $t) -> $t { a.mul_add(b, c) }
        }
    )*};
}
float_model! {
    f32: u32, 23, 127;
    f64: u64, 52, 1023;
}

/// Inputs for one-operand operations: the edge values four times, each time
/// after one more value of noise (so each edge value lands in other lanes),
/// then noise.
fn values<T: Lane>(seed: u64) -> Vec<T> {
    let mut rng = Rng::new(seed);
    let mut v = Vec::new();
    for shift in 1..=4 {
        v.extend(rng.noise::<T>(shift));
        v.extend(T::edges());
    }
    v.extend(rng.noise::<T>(256));
    v
}

/// Inputs for two-operand operations: every pair of edge values, `a` varying
/// fastest, then (after one pair of noise, to shift the lanes) every pair
/// with `b` varying fastest, then noise.
fn pairs<T: Lane>(seed: u64) -> Vec<(T, T)> {
    let mut rng = Rng::new(seed);
    let e = T::edges();
    let k = e.len();
    let mut p: Vec<(T, T)> = (0..k * k).map(|j| (e[j % k], e[j / k])).collect();
    p.push((T::noise(rng.next()), T::noise(rng.next())));
    p.extend((0..k * k).map(|j| (e[j / k], e[j % k])));
    p.extend((0..256).map(|_| (T::noise(rng.next()), T::noise(rng.next()))));
    p
}

/// Every [`Arith`] operation of level `L` on `T` at length `N`.
fn arith<L: Arith<T>, T: Model + Num, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let (p, v) = (pairs::<T>(1), values::<T>(2));
    c.two("add", &p, |a, b| level.add(a, b), Model::add);
    c.two("sub", &p, |a, b| level.sub(a, b), Model::sub);
    c.two("mul", &p, |a, b| level.mul(a, b), Model::mul);
    c.two("div", &p, |a, b| level.div(a, b), Model::div);
    c.two("min", &p, |a, b| level.min(a, b), Model::min);
    c.two("max", &p, |a, b| level.max(a, b), Model::max);
    c.one("neg", &v, |a| level.neg(a), Model::neg);
    c.one("abs", &v, |a| level.abs(a), Model::abs);
    let mut rng = Rng::new(3);
    for d in T::divisors(&mut rng) {
        let (op, n) = (format!("div_by({d:?})"), T::dividends(d, &mut rng));
        c.one(&op, &n, |a| level.div_by(a, d), |x| Model::div(x, d));
    }
}

/// Every [`Bits`] operation of level `L` on `T` at length `N`; shifts by
/// every amount up to twice the width and by some larger ones.
fn bits<L: Bits<T>, T: IntModel + Int, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let (p, v) = (pairs::<T>(4), values::<T>(5));
    c.two("and", &p, |a, b| level.and(a, b), IntModel::and);
    c.two("or", &p, |a, b| level.or(a, b), IntModel::or);
    c.two("xor", &p, |a, b| level.xor(a, b), IntModel::xor);
    c.one("not", &v, |a| level.not(a), IntModel::not);
    for s in (0..=2 * T::BITS + 1).chain([1000, 1 << 31, u32::MAX]) {
        let (shl, shr) = (format!("shl({s})"), format!("shr({s})"));
        c.one(&shl, &v, |a| level.shl(a, s), |x| IntModel::shl(x, s));
        c.one(&shr, &v, |a| level.shr(a, s), |x| IntModel::shr(x, s));
    }
}

/// Every [`Round`] operation of level `L` on `T` at length `N`.
fn round<L: Round<T>, T: FloatModel + Float, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let v = values::<T>(6);
    c.one("sqrt", &v, |a| level.sqrt(a), FloatModel::sqrt);
    c.one("floor", &v, |a| level.floor(a), FloatModel::floor);
    c.one("ceil", &v, |a| level.ceil(a), FloatModel::ceil);
    c.one("trunc", &v, |a| level.trunc(a), FloatModel::trunc);
}

/// [`MulAdd`] of level `L` on `T` at length `N`: every triple of edge
/// values, and noise `(a, b, c)` and `(a, b, -(a * b))`, whose fused result
/// is the rounding error of the product where a separate multiply and add
/// give zero.
fn mul_add<L: MulAdd<T>, T: FloatModel + Float, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let e = T::edges();
    let mut t = Vec::new();
    for &a in &e {
        for &b in &e {
            t.extend(e.iter().map(|&x| (a, b, x)));
        }
    }
    let v = values::<T>(8);
    let n = v.len();
    for i in 0..n {
        let (a, b) = (v[i], v[(i * 7 + 3) % n]);
        t.push((a, b, v[(i * 13 + 5) % n]));
        t.push((a, b, Model::neg(Model::mul(a, b))));
    }
    c.one(
        "mul_add",
        &t,
        |x| level.mul_add(x.map(|p| p.0), x.map(|p| p.1), x.map(|p| p.2)),
        |(a, b, x)| FloatModel::mul_add(a, b, x),
    );
}

/// [`Convert`] of level `L` from `A` to `B` at length `N`; `reference` is
/// `as`.
fn cast<L: Convert<A, B>, A: Lane + CastTo<B>, B: Lane, const N: usize>(
    level: L,
    m: &mut Mismatches,
    reference: fn(A) -> B,
) {
    let types = format!("{} -> {}", name::<A>(), name::<B>());
    let mut c = At::<N>::new::<L>(m, &types);
    c.one("cast", &values::<A>(7), |a| level.cast(a), reference);
}

/// [`cast`] at every length from each type `$a` to every type.
macro_rules! casts {
    ($level:expr, $m:expr; $($a:ident)*) => {$(
        casts!(@from $level, $m; $a; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    )*};
    (@from $level:expr, $m:expr; $a:ident; $($b:ident)*) => {$(
        at_lengths!(cast::<_, $a, $b>($level, $m, |x: $a| x as $b));
    )*};
}

#[test]
fn arith_matches_scalar_semantics() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(arith::<_, u8>(level, &mut m));
        at_lengths!(arith::<_, u16>(level, &mut m));
        at_lengths!(arith::<_, u32>(level, &mut m));
        at_lengths!(arith::<_, u64>(level, &mut m));
        at_lengths!(arith::<_, i8>(level, &mut m));
        at_lengths!(arith::<_, i16>(level, &mut m));
        at_lengths!(arith::<_, i32>(level, &mut m));
        at_lengths!(arith::<_, i64>(level, &mut m));
        at_lengths!(arith::<_, f32>(level, &mut m));
        at_lengths!(arith::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

#[test]
fn bits_match_scalar_semantics() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(bits::<_, u8>(level, &mut m));
        at_lengths!(bits::<_, u16>(level, &mut m));
        at_lengths!(bits::<_, u32>(level, &mut m));
        at_lengths!(bits::<_, u64>(level, &mut m));
        at_lengths!(bits::<_, i8>(level, &mut m));
        at_lengths!(bits::<_, i16>(level, &mut m));
        at_lengths!(bits::<_, i32>(level, &mut m));
        at_lengths!(bits::<_, i64>(level, &mut m));
    });
    m.assert_none();
}

#[test]
fn rounding_matches_scalar_semantics() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(round::<_, f32>(level, &mut m));
        at_lengths!(round::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

#[test]
fn fused_multiply_add_rounds_once() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(mul_add::<_, f32>(level, &mut m));
        at_lengths!(mul_add::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

#[test]
fn casts_match_as() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        casts!(level, &mut m; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    });
    m.assert_none();
}

/// Every 8-bit pair `(a, b)`, for the two-operand operations of `u8` and
/// `i8` (the edge pairs above are a sample of these), on 64 lanes.
fn every_byte_pair<L: Arith<T>, T: IntModel + Num>(level: L, m: &mut Mismatches) {
    let mut c = At::<64>::new::<L>(m, name::<T>());
    let all: Vec<T> = (0..=255u64).map(T::noise).collect();
    assert!(T::edges().iter().all(|x| all.contains(x)));
    let p: Vec<(T, T)> = (0..1 << 16).map(|j| (all[j & 255], all[j >> 8])).collect();
    c.two("add", &p, |a, b| level.add(a, b), Model::add);
    c.two("sub", &p, |a, b| level.sub(a, b), Model::sub);
    c.two("mul", &p, |a, b| level.mul(a, b), Model::mul);
    c.two("div", &p, |a, b| level.div(a, b), Model::div);
    c.two("min", &p, |a, b| level.min(a, b), Model::min);
    c.two("max", &p, |a, b| level.max(a, b), Model::max);
}

#[test]
fn every_byte_pair_matches_scalar_semantics() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        every_byte_pair::<_, u8>(level, &mut m);
        every_byte_pair::<_, i8>(level, &mut m);
    });
    m.assert_none();
}

/// The rounding average `(a + b + 1) >> 1` without wrapping, written as a
/// division of the exact sum.
fn average<T: Copy + Into<u64> + TryFrom<u64>>(a: T, b: T) -> T {
    let sum = a.into() + b.into() + 1;
    T::try_from(sum / 2).unwrap_or_else(|_| unreachable!("the average fits"))
}

/// [`Average`] of level `L` at length `N`: every pair of `u8` values, and
/// the `u16` edge pairs and noise.
fn averages<L: Average<u8> + Average<u16>, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, "u8");
    let all: Vec<u8> = (0..=255).collect();
    let p: Vec<(u8, u8)> = (0..1 << 16).map(|j| (all[j & 255], all[j >> 8])).collect();
    c.two("avg_round", &p, |a, b| level.avg_round(a, b), average);
    let mut c = At::<N>::new::<L>(m, "u16");
    c.two(
        "avg_round",
        &pairs::<u16>(9),
        |a, b| level.avg_round(a, b),
        average,
    );
}

/// Runs of the edge values and noise of [`values`] from many starting
/// points among them, for operations that move lanes: `at(start, k)` is the
/// `k`-th value from `start`, and the inputs `(start, lane)` of [`At::one`]
/// make one vector per start, so that each lane is checked against the run.
fn cuts<T: Lane, const N: usize>() -> (impl Fn(usize, usize) -> T, Vec<(usize, usize)>) {
    let v = values::<T>(10);
    let inputs = (0..v.len())
        .step_by(7)
        .flat_map(|start| (0..N).map(move |lane| (start, lane)))
        .collect();
    (
        move |start: usize, k: usize| v[(start + k) % v.len()],
        inputs,
    )
}

/// [`Deinterleave`] of level `L` on `T` at length `N`: lanes `p[2 i]` of
/// spans of exactly `2 N - 1` values ([`cuts`]).
fn every_2nd<L: Deinterleave<T>, T: Lane + Default, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let (at, inputs) = cuts::<T, N>();
    let load = |x: [(usize, usize); N]| {
        let span: Vec<T> = (0..2 * N - 1).map(|k| at(x[0].0, k)).collect();
        // SAFETY: the span holds exactly the 2 N - 1 elements read.
        unsafe { level.load_every_2nd(span.as_ptr()) }
    };
    c.one("load_every_2nd", &inputs, load, |(start, lane)| {
        at(start, 2 * lane)
    });
}

#[test]
fn stride_two_loads_take_the_even_lanes() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(every_2nd::<_, u8>(level, &mut m));
        at_lengths!(every_2nd::<_, i8>(level, &mut m));
        at_lengths!(every_2nd::<_, u16>(level, &mut m));
        at_lengths!(every_2nd::<_, i16>(level, &mut m));
        at_lengths!(every_2nd::<_, u32>(level, &mut m));
        at_lengths!(every_2nd::<_, i32>(level, &mut m));
        at_lengths!(every_2nd::<_, f32>(level, &mut m));
        at_lengths!(every_2nd::<_, u64>(level, &mut m));
        at_lengths!(every_2nd::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

/// [`Deinterleave::load_every`] of level `L` on `T`, `N` lanes of stride
/// `S` from spans of exactly `M = (N - 1) S + 1` values, as [`every_2nd`].
fn every_sth<
    L: Deinterleave<T>,
    T: Lane + Default,
    const N: usize,
    const M: usize,
    const S: usize,
>(
    level: L,
    m: &mut Mismatches,
) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let (at, inputs) = cuts::<T, N>();
    let load = |x: [(usize, usize); N]| {
        let span: [T; M] = std::array::from_fn(|k| at(x[0].0, k));
        // SAFETY: the span holds exactly the M elements read.
        unsafe { level.load_every::<N, M, S>(span.as_ptr()) }
    };
    c.one(
        &format!("load_every by {S}"),
        &inputs,
        load,
        |(start, lane)| at(start, S * lane),
    );
}

/// [`Deinterleave::load_phases`] of level `L` on `T`: all `S` phases of
/// `S N` values read at once, each checked as its own vector of `N` lanes
/// (phase `j`, lane `i`: value `S i + j`).
fn phases<L: Deinterleave<T>, T: Lane + Default, const N: usize, const S: usize>(
    level: L,
    m: &mut Mismatches,
) {
    let (at, inputs) = cuts::<T, N>();
    for j in 0..S {
        let mut c = At::<N>::new::<L>(m, name::<T>());
        let load = |x: [(usize, usize); N]| {
            let span: Vec<T> = (0..S * N).map(|k| at(x[0].0, k)).collect();
            // SAFETY: the span holds exactly the S N elements read.
            unsafe { level.load_phases::<N, S>(span.as_ptr())[j] }
        };
        c.one(
            &format!("load_phases by {S}, phase {j}"),
            &inputs,
            load,
            |(start, lane)| at(start, S * lane + j),
        );
    }
}

/// [`every_sth`] at strides 3 and 4, at the lengths of [`at_lengths`].
macro_rules! strides_3_and_4 {
    ($t:ty, $level:expr, $m:expr) => {
        every_sth::<_, $t, 3, 7, 3>($level, $m);
        every_sth::<_, $t, 37, 109, 3>($level, $m);
        every_sth::<_, $t, 64, 190, 3>($level, $m);
        every_sth::<_, $t, 131, 391, 3>($level, $m);
        every_sth::<_, $t, 3, 9, 4>($level, $m);
        every_sth::<_, $t, 37, 145, 4>($level, $m);
        every_sth::<_, $t, 64, 253, 4>($level, $m);
        every_sth::<_, $t, 131, 521, 4>($level, $m);
    };
}

#[test]
fn phase_loads_split_interleaved_channels() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        macro_rules! all {
            ($($t:ty)*) => {$(
                phases::<_, $t, 3, 3>(level, &mut m);
                phases::<_, $t, 37, 3>(level, &mut m);
                phases::<_, $t, 64, 3>(level, &mut m);
                phases::<_, $t, 131, 3>(level, &mut m);
                phases::<_, $t, 37, 4>(level, &mut m);
                phases::<_, $t, 64, 4>(level, &mut m);
                phases::<_, $t, 2, 2>(level, &mut m);
                phases::<_, $t, 16, 2>(level, &mut m);
                phases::<_, $t, 37, 2>(level, &mut m);
                phases::<_, $t, 64, 2>(level, &mut m);
                phases::<_, $t, 131, 2>(level, &mut m);
            )*};
        }
        all!(u8 i8 u16 i16 u32 i32 f32 u64 f64);
    });
    m.assert_none();
}

#[test]
fn stride_three_and_four_loads_take_every_third_and_fourth_lane() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        strides_3_and_4!(u8, level, &mut m);
        strides_3_and_4!(i16, level, &mut m);
        strides_3_and_4!(u32, level, &mut m);
        strides_3_and_4!(f32, level, &mut m);
        strides_3_and_4!(u64, level, &mut m);
        strides_3_and_4!(f64, level, &mut m);
    });
    m.assert_none();
}

/// [`Reverse`] of level `L` on `T` at length `N` ([`cuts`]): lane `i` must
/// hold input lane `N - 1 - i`.
fn reversals<L: Reverse<T>, T: Lane + Default, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let (at, inputs) = cuts::<T, N>();
    let reverse = |x: [(usize, usize); N]| level.reverse(std::array::from_fn(|k| at(x[0].0, k)));
    c.one("reverse", &inputs, reverse, |(start, lane)| {
        at(start, N - 1 - lane)
    });
}

#[test]
fn reversals_mirror_the_lanes() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(reversals::<_, u8>(level, &mut m));
        at_lengths!(reversals::<_, i8>(level, &mut m));
        at_lengths!(reversals::<_, u16>(level, &mut m));
        at_lengths!(reversals::<_, i16>(level, &mut m));
        at_lengths!(reversals::<_, u32>(level, &mut m));
        at_lengths!(reversals::<_, i32>(level, &mut m));
        at_lengths!(reversals::<_, f32>(level, &mut m));
        at_lengths!(reversals::<_, u64>(level, &mut m));
        at_lengths!(reversals::<_, i64>(level, &mut m));
        at_lengths!(reversals::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

/// [`Upsample`] of level `L` on `T` at length `N`, from an even and from an
/// odd first lane: lane `i` must hold `p[(i + odd) / 2]`, read from spans of
/// exactly the `(N - 1 + odd) / 2 + 1` values the lanes cover ([`cuts`]).
fn doublings<L: Upsample<T>, T: Lane + Default, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let (at, inputs) = cuts::<T, N>();
    for odd in [false, true] {
        let load = |x: [(usize, usize); N]| {
            let span: Vec<T> = (0..(N - 1 + odd as usize) / 2 + 1)
                .map(|k| at(x[0].0, k))
                .collect();
            // SAFETY: the span holds exactly the elements read.
            unsafe { level.load_doubled::<N>(span.as_ptr(), odd) }
        };
        let op = if odd {
            "load_doubled (odd)"
        } else {
            "load_doubled"
        };
        c.one(op, &inputs, load, |(start, lane)| {
            at(start, (lane + odd as usize) / 2)
        });
    }
}

#[test]
fn doubled_loads_repeat_each_element() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(doublings::<_, u8>(level, &mut m));
        at_lengths!(doublings::<_, i8>(level, &mut m));
        at_lengths!(doublings::<_, u16>(level, &mut m));
        at_lengths!(doublings::<_, i16>(level, &mut m));
        at_lengths!(doublings::<_, u32>(level, &mut m));
        at_lengths!(doublings::<_, i32>(level, &mut m));
        at_lengths!(doublings::<_, f32>(level, &mut m));
        at_lengths!(doublings::<_, u64>(level, &mut m));
        at_lengths!(doublings::<_, i64>(level, &mut m));
        at_lengths!(doublings::<_, f64>(level, &mut m));
        // Whole registers at every level, odd lengths the scalar tails.
        doublings::<_, u8, 128>(level, &mut m);
        doublings::<_, f32, 16>(level, &mut m);
        doublings::<_, f32, 8>(level, &mut m);
        doublings::<_, u16, 32>(level, &mut m);
    });
    m.assert_none();
}

/// [`Gather`] of level `L` on `T` at length `N`: lane `i` must hold the
/// element at offset `o[i]` of a table, for offsets at random, the first
/// and the last element included, repeated and out of order; in tables of
/// 1031 elements and of 1 to 9 (8- and 16-bit elements are read 32 bits at
/// a time, and those among a table's last 3 bytes from its last 4 bytes,
/// or one by one in a table shorter than 4 bytes).
fn gathers<L: Gather<T>, T: Lane, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let mut rng = Rng::new(N as u64 + 7);
    for len in [1031, 1, 2, 3, 4, 5, 6, 7, 8, 9] {
        let table: Vec<T> = rng.noise(len);
        let mut offsets: Vec<i32> = (0..4 * N)
            .map(|_| (rng.next() % len as u64) as i32)
            .collect();
        offsets[0] = 0;
        offsets[1] = len as i32 - 1;
        offsets[N - 1] = len as i32 - 1;
        let gather = |o: [i32; N]| unsafe { level.gather(table.as_ptr(), table.len(), o) };
        c.one(&format!("gather (table of {len})"), &offsets, gather, |o| {
            table[o as usize]
        });
    }
}

#[test]
fn gathers_read_each_lane_at_its_offset() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(gathers::<_, u8>(level, &mut m));
        at_lengths!(gathers::<_, i8>(level, &mut m));
        at_lengths!(gathers::<_, u16>(level, &mut m));
        at_lengths!(gathers::<_, i16>(level, &mut m));
        // 8- and 16-bit elements are gathered a register's worth at a time,
        // then by 8 (16 at AVX-512), then one by one: lengths that reach
        // the middle step.
        gathers::<_, u8, 13>(level, &mut m);
        gathers::<_, u8, 61>(level, &mut m);
        gathers::<_, u16, 29>(level, &mut m);
        at_lengths!(gathers::<_, u32>(level, &mut m));
        at_lengths!(gathers::<_, i32>(level, &mut m));
        at_lengths!(gathers::<_, f32>(level, &mut m));
        at_lengths!(gathers::<_, u64>(level, &mut m));
        at_lengths!(gathers::<_, i64>(level, &mut m));
        at_lengths!(gathers::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

/// `View::gather` and `View::taps` at level `L`: the offsets they compute
/// from coordinates of a 3-D view at a non-zero origin, one with stride 1
/// in dimension 0 (told or not) and one of a crop's larger strides, match
/// `View::load`.
fn view_gathers<L: Gather<f32> + Arith<i32>, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, "f32");
    let buffer = pipeline::Buffer::<f32, 3>::from_fn([13, 7, 5], |[x, y, z]| {
        (x * 10_000 + y * 100 + z) as f32
    });
    let mut rng = Rng::new(N as u64);
    let dense = buffer.view().with_origin([-3, 40, 2]);
    let coords: Vec<[i32; 3]> = (0..4 * N)
        .map(|_| {
            let mut r = |n: u64, lo: i32| lo + (rng.next() % n) as i32;
            [r(13, -3), r(7, 40), r(5, 2)]
        })
        .collect();
    let lanes = |x: [[i32; 3]; N]| -> [[i32; N]; 3] { std::array::from_fn(|d| x.map(|p| p[d])) };
    let load = |v: &pipeline::View<'_, f32, 3>, p: [i32; 3]| unsafe { v.load(p.map(i64::from)) };
    for dense0 in [true, false] {
        let op = if dense0 { "gather (dense0)" } else { "gather" };
        let g = |x: [[i32; 3]; N]| unsafe { dense.gather(level, lanes(x), dense0) };
        c.one(op, &coords, g, |p| load(&dense, p));
    }
    // Every other column and row: strides 2, 26 and 91 in memory.
    let strided = pipeline::View::with_strides(buffer.as_slice(), [7, 4, 5], [2, 26, 91])
        .expect("a strided view")
        .with_origin([1, 1, 1]);
    let coords: Vec<[i32; 3]> = (0..4 * N)
        .map(|_| {
            [
                1 + (rng.next() % 7) as i32,
                1 + (rng.next() % 4) as i32,
                1 + (rng.next() % 5) as i32,
            ]
        })
        .collect();
    let g = |x: [[i32; 3]; N]| unsafe { strided.gather(level, lanes(x), false) };
    c.one("gather (strided)", &coords, g, |p| load(&strided, p));
    // Taps: the offsets of one set of coordinates, read at constant
    // distances from them, forwards and backwards in each dimension.
    let inner: Vec<[i32; 3]> = (0..4 * N)
        .map(|_| {
            let mut r = |n: u64, lo: i32| lo + (rng.next() % n) as i32;
            [r(11, -2), r(6, 40), r(3, 3)]
        })
        .collect();
    for k in [[0, 0, 0], [1, 0, 0], [0, 1, 1], [-1, 1, -1]] {
        let shifted = |p: [i32; 3]| std::array::from_fn(|d| p[d] + k[d]);
        for (view, dense0, name) in [(&dense, true, "dense0"), (&dense, false, "dense")] {
            let op = format!("taps {k:?} ({name})");
            let t = |x: [[i32; 3]; N]| unsafe {
                let offsets = view.tap_offsets(level, lanes(x), dense0);
                view.taps(level, &offsets, view.tap_delta(k.map(i64::from)))
            };
            c.one(&op, &inner, t, |p| load(view, shifted(p)));
        }
    }
    let inner: Vec<[i32; 3]> = coords
        .iter()
        .map(|p| [p[0].min(6), p[1].min(3), p[2].max(2)])
        .collect();
    let t = |x: [[i32; 3]; N]| unsafe {
        let offsets = strided.tap_offsets(level, lanes(x), false);
        strided.taps(level, &offsets, strided.tap_delta([1, 1, -1]))
    };
    c.one("taps (strided)", &inner, t, |p| {
        load(&strided, [p[0] + 1, p[1] + 1, p[2] - 1])
    });
}

#[test]
fn view_gathers_compute_each_lanes_offset() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(view_gathers::<_>(level, &mut m));
    });
    m.assert_none();
}

/// Taps read by the levels' gathers and a load a lane (which one a
/// processor gets is `pipeline::rt::tap_gathers`) read the same elements.
#[test]
#[cfg(target_arch = "x86_64")]
fn taps_by_gathers_and_by_loads_agree() {
    let mut m = Mismatches::default();
    for on in [false, true] {
        if let Some(level) = Avx2::new().map(|l| l.with_tap_gathers(on)) {
            assert_eq!(Gather::<f32>::tap_bytes(level), if on { 32 } else { 0 });
            at_lengths!(view_gathers::<_>(level, &mut m));
        }
        if let Some(level) = Avx512::new().map(|l| l.with_tap_gathers(on)) {
            assert_eq!(Gather::<f32>::tap_bytes(level), if on { 64 } else { 0 });
            at_lengths!(view_gathers::<_>(level, &mut m));
        }
        if let Some(level) = Avx512Vbmi::new().map(|l| l.with_tap_gathers(on)) {
            at_lengths!(view_gathers::<_>(level, &mut m));
        }
    }
    m.assert_none();
}

#[test]
fn rounding_averages_do_not_wrap() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(averages::<_>(level, &mut m));
    });
    m.assert_none();
}

/// `div_by` of `u16` for every dividend, by the divisors of
/// [`Model::divisors`], on 64 lanes (whole registers at every level).
fn every_u16_dividend<L: Arith<u16>>(level: L, m: &mut Mismatches) {
    let mut c = At::<64>::new::<L>(m, "u16");
    let all: Vec<u16> = (0..=u16::MAX).collect();
    for d in u16::divisors(&mut Rng::new(8)) {
        let op = format!("div_by({d}) of every dividend");
        c.one(&op, &all, |a| level.div_by(a, d), |x| Model::div(x, d));
    }
}

#[test]
fn div_by_u16_matches_for_every_dividend() {
    let mut m = Mismatches::default();
    each_level!(|level| every_u16_dividend(level, &mut m));
    m.assert_none();
}

/// `div_by` of `u16` by every divisor, on 64 lanes, with the dividends where
/// a multiplier slightly too large first gives a wrong quotient: the largest
/// ones, and those just below the largest multiples of the divisor.
fn every_u16_divisor<L: Arith<u16>>(level: L, m: &mut Mismatches) {
    let mut c = At::<64>::new::<L>(m, "u16");
    for d in 0..=u16::MAX {
        let top = u16::MAX / d.max(1);
        let mut n: Vec<u16> = (0..32).map(|i| u16::MAX - i).collect();
        let multiples = (0..32).filter_map(|i| top.checked_sub(i)).map(|k| k * d);
        n.extend(multiples.filter_map(|x| x.checked_sub(1)));
        let op = format!("div_by({d}) of large dividends");
        c.one(&op, &n, |a| level.div_by(a, d), |x| Model::div(x, d));
    }
}

#[test]
fn div_by_u16_matches_for_every_divisor() {
    let mut m = Mismatches::default();
    each_level!(|level| every_u16_divisor(level, &mut m));
    m.assert_none();
}

/// `div_by` of `u32` by random divisors of every magnitude, with random
/// dividends and dividends around multiples of the divisor, on 64 lanes.
fn random_u32_division<L: Arith<u32>>(level: L, m: &mut Mismatches) {
    let mut c = At::<64>::new::<L>(m, "u32");
    let mut rng = Rng::new(9);
    for _ in 0..1000 {
        let d = (rng.next() as u32) >> (rng.next() % 32);
        let mut n = u32::dividends(d, &mut rng);
        n.extend(rng.noise::<u32>(512));
        let op = format!("div_by({d}) of random dividends");
        c.one(&op, &n, |a| level.div_by(a, d), |x| Model::div(x, d));
    }
}

#[test]
fn div_by_u32_matches_for_random_operands() {
    let mut m = Mismatches::default();
    each_level!(|level| random_u32_division(level, &mut m));
    m.assert_none();
}

/// `min` and `max` of `-0.0` and `+0.0`, both ways round: the first
/// operand (operands from `black_box`, so nothing is folded).
fn signed_zeros<L: Arith<T>, T: Model + Num, const N: usize>(level: L, m: &mut Mismatches) {
    let mut c = At::<N>::new::<L>(m, name::<T>());
    let zero = black_box(T::default());
    let minus_zero = black_box(Model::neg(zero));
    let p = [(minus_zero, zero), (zero, minus_zero)];
    c.two("min of zeros", &p, |a, b| level.min(a, b), Model::min);
    c.two("max of zeros", &p, |a, b| level.max(a, b), Model::max);
}

#[test]
fn min_max_of_signed_zeros_match() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(signed_zeros::<_, f32>(level, &mut m));
        at_lengths!(signed_zeros::<_, f64>(level, &mut m));
    });
    m.assert_none();
}

/// [`SatConvert`] of level `L` from `A` to `B` at length `N`.
fn sat_cast<L: SatConvert<A, B>, A: Lane + SaturatingCast<B>, B: Lane, const N: usize>(
    level: L,
    m: &mut Mismatches,
) {
    let types = format!("{} -> {}", name::<A>(), name::<B>());
    let mut c = At::<N>::new::<L>(m, &types);
    let reference = <A as SaturatingCast<B>>::saturating_cast;
    c.one(
        "saturating_cast",
        &values::<A>(10),
        |a| level.saturating_cast(a),
        reference,
    );
}

/// [`sat_cast`] at every length from each type `$a` to every type.
macro_rules! sat_casts {
    ($level:expr, $m:expr; $($a:ident)*) => {$(
        sat_casts!(@from $level, $m; $a; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    )*};
    (@from $level:expr, $m:expr; $a:ident; $($b:ident)*) => {$(
        at_lengths!(sat_cast::<_, $a, $b>($level, $m));
    )*};
}

#[test]
fn saturating_casts_match_the_scalar_definition() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        sat_casts!(level, &mut m; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    });
    m.assert_none();
}

/// [`Select`] of level `L` by every comparison of `C`s between `T`s at
/// length `N`: every pair of edge values of `C` (with noise) as the
/// operands, noise as the choices.
fn select<L: Select<C, T>, C: Lane + Num, T: Lane + Num, const N: usize>(
    level: L,
    m: &mut Mismatches,
) {
    let types = format!("{} ? {}", name::<C>(), name::<T>());
    let mut c = At::<N>::new::<L>(m, &types);
    let mut rng = Rng::new(11);
    let inputs: Vec<(C, C, T, T)> = pairs::<C>(12)
        .into_iter()
        .map(|(a, b)| (a, b, T::noise(rng.next()), T::noise(rng.next())))
        .collect();
    let all = [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge];
    for cmp in all {
        let f = |v: [(C, C, T, T); N]| {
            let (a, b) = (v.map(|t| t.0), v.map(|t| t.1));
            level.select(cmp, a, b, v.map(|t| t.2), v.map(|t| t.3))
        };
        let reference = |(a, b, x, y): (C, C, T, T)| {
            let holds = match cmp {
                Cmp::Eq => a == b,
                Cmp::Ne => a != b,
                Cmp::Lt => a < b,
                Cmp::Le => a <= b,
                Cmp::Gt => a > b,
                Cmp::Ge => a >= b,
            };
            if holds {
                x
            } else {
                y
            }
        };
        c.one(&format!("select({cmp:?})"), &inputs, f, reference);
    }
}

/// [`select`] at every length comparing each type `$c` and choosing
/// between every type.
macro_rules! selects {
    ($level:expr, $m:expr; $($c:ident)*) => {$(
        selects!(@from $level, $m; $c; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    )*};
    (@from $level:expr, $m:expr; $c:ident; $($t:ident)*) => {$(
        at_lengths!(select::<_, $c, $t>($level, $m));
    )*};
}

#[test]
fn selects_match_the_comparisons() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        selects!(level, &mut m; u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);
    });
    m.assert_none();
}

/// [`DivSmall`] of `u32` by divisors `d`, with the reciprocal the code
/// generator picks (the `f32` just above `1 / d`), for every dividend up to
/// the largest below 2^20 that the generator would accept (all smaller
/// dividends exact through `f32`), on 64 lanes.
fn small_division<L: DivSmall<u32>>(level: L, m: &mut Mismatches) {
    let mut c = At::<64>::new::<L>(m, "u32");
    for d in [3u32, 7, 10, 255, 641, 65537] {
        let mut recip = 1.0f32 / d as f32;
        if (recip as f64) * (d as f64) < 1.0 {
            recip = f32::from_bits(recip.to_bits() + 1);
        }
        let exact = |x: u32| ((x as f32) * recip) as u32 == x / d;
        let bound = (0..1 << 20).take_while(|&x| exact(x)).last().unwrap_or(0);
        assert!(bound >= 1 << 16, "d = {d}: exact only up to {bound}");
        let n: Vec<u32> = (0..=bound).collect();
        let op = format!("div_small({d}) up to {bound}");
        c.one(&op, &n, |a| level.div_small(a, d, recip), |x| x / d);
    }
}

#[test]
fn small_divisions_through_f32_are_exact() {
    let mut m = Mismatches::default();
    each_level!(|level| small_division(level, &mut m));
    m.assert_none();
}

/// [`NarrowFitting`] of level `L` from `A` to `B` at length `N`, on every
/// value of `A` that fits in `B` (the only ones the generated code gives
/// it): each must come out as the same value in `B`.
fn narrow_fitting<L: NarrowFitting<A, B>, A, B, const N: usize>(level: L, m: &mut Mismatches)
where
    A: Lane + CastTo<B> + TryFrom<u64>,
    B: Lane + Into<u64> + TryFrom<A> + Bounded,
{
    let types = format!("{} -> {}", name::<A>(), name::<B>());
    let mut c = At::<N>::new::<L>(m, &types);
    let fitting: Vec<A> = (0..=B::MAX.into())
        .map(|x| A::try_from(x).ok().expect("B's values fit in A"))
        .collect();
    c.one(
        "narrow_fitting",
        &fitting,
        |a| level.narrow_fitting(a),
        |x| B::try_from(x).ok().expect("the value fits"),
    );
}

/// The largest value of an unsigned type.
trait Bounded {
    const MAX: Self;
}
impl Bounded for u8 {
    const MAX: u8 = u8::MAX;
}
impl Bounded for u16 {
    const MAX: u16 = u16::MAX;
}

#[test]
fn narrowings_of_fitting_values_are_casts() {
    let mut m = Mismatches::default();
    each_level!(|level| {
        at_lengths!(narrow_fitting::<_, u16, u8>(level, &mut m));
        at_lengths!(narrow_fitting::<_, u32, u16>(level, &mut m));
        at_lengths!(narrow_fitting::<_, u32, u8>(level, &mut m));
    });
    m.assert_none();
}

/// Bytes for the [`U8Blocks`] checks: every value, then noise, `n` of them
/// from `seed`.
fn bytes(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|i| {
            if i < 256 {
                (i as u32).wrapping_add(seed) as u8
            } else {
                let mut h = (i as u32).wrapping_mul(0x9E37_79B1) ^ seed;
                h ^= h >> 15;
                h.wrapping_mul(0x2C1B_3C6D) as u8
            }
        })
        .collect()
}

/// [`U8Blocks`] of level `L` at length `N`: whatever order the level
/// computes in, a lane-wise computation between `widen_blocks` or
/// `mul_add_pairs` and `narrow_blocks` must give the lanes of the scalar
/// formula, in order. Weights cover the edges of `pmaddubsw` (127 alone,
/// sums of 128, zero) and the Gaussian's and the grey conversion's.
fn u8_blocks<L: U8Blocks + Arith<u16> + Bits<u16>, const N: usize>(level: L) {
    let level_name = name::<L>();
    let (a, b, c) = (bytes(1024, 0), bytes(1024, 77), bytes(1024, 201));
    for start in (0..a.len() - N).step_by(N.max(17)) {
        let v = |s: &[u8]| -> [u8; N] { s[start..start + N].try_into().unwrap() };
        let (x, y, z) = (v(&a), v(&b), v(&c));
        let back = level.narrow_blocks(level.widen_blocks(x));
        assert_eq!(
            back, x,
            "{level_name} N={N}: narrow_blocks(widen_blocks(a))"
        );
        for (wa, wb, k) in [
            (1, 1, 254),
            (4, 4, 248),
            (77, 29, 150),
            (127, 1, 128),
            (64, 64, 128),
            (0, 127, 129),
            (1, 0, 255),
            (0, 0, 256),
        ] {
            // (a wa + b wb + c k + 128) >> 8 fits in u8: wa + wb + k = 256.
            let pairs = level.mul_add_pairs(x, y, wa, wb);
            let weighted = level.mul(level.widen_blocks(z), [k; N]);
            let sum = level.add(level.add(pairs, weighted), [128; N]);
            let got = level.narrow_blocks(level.shr(sum, 8));
            let want: [u8; N] = core::array::from_fn(|i| {
                ((x[i] as u32 * wa as u32 + y[i] as u32 * wb as u32 + z[i] as u32 * k as u32 + 128)
                    >> 8) as u8
            });
            assert_eq!(
                got, want,
                "{level_name} N={N}: weights ({wa}, {wb}) and {k}, lanes {start}.."
            );
        }
    }
}

#[test]
fn u8_blocks_give_the_lanes_in_order() {
    each_level!(|level| {
        at_lengths!(u8_blocks::<_>(level));
        u8_blocks::<_, 16>(level);
        u8_blocks::<_, 32>(level);
        u8_blocks::<_, 96>(level);
    });
}

/// Generated kernels are generic over `Level`: its supertraits give them
/// the operations (this compiles only if they do), and `run` and `outline`
/// return what their closure computes, at every level.
#[test]
fn generic_kernels_compute_through_run_and_outline() {
    use pipeline::rt::simd::Level;
    fn kernel<L: Level>(level: L, a: [u8; 32], b: [u8; 32]) -> ([u8; 32], [f32; 32]) {
        level.run(|| {
            let sum: [u8; 32] = level.add(a, b);
            let wide: [f32; 32] = level.cast(sum);
            let scaled = level.outline(|| level.mul(wide, [0.5; 32]));
            (level.avg_round(a, b), scaled)
        })
    }
    let a: [u8; 32] = std::array::from_fn(|i| (i * 37 % 256) as u8);
    let b: [u8; 32] = std::array::from_fn(|i| (255 - i * 11 % 256) as u8);
    let avg: [u8; 32] = std::array::from_fn(|i| ((a[i] as u16 + b[i] as u16 + 1) >> 1) as u8);
    let scaled: [f32; 32] = std::array::from_fn(|i| a[i].wrapping_add(b[i]) as f32 * 0.5);
    each_level!(|level| assert_eq!(
        kernel(level, black_box(a), black_box(b)),
        (avg, scaled),
        "{level:?}"
    ));
}
