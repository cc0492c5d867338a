//! Vector code against the reference interpreter, bit for bit: every
//! operation of the DSL on every element type, in loops vectorized so that a
//! vector is 128, 256 or 512 bits of the type, run at every instruction-set
//! level this processor has (`for_each_isa`). The inputs hold each type's
//! edge values (0, ±1, MIN, MAX, ... for integers; ±0, ±1, infinities, NaN,
//! MIN_POSITIVE, MAX, subnormal, out-of-range ... for floats) at every lane
//! position and in every pair `(a, b)`, among ordinary noise; outputs are
//! widths that no vector width divides, one narrower than every vector, and
//! crops with a non-zero origin.

mod common;

use common::*;
use pipeline::{pipeline, Buffer, Error, View};
use pipeline_core::interp::{Image, Value};

/// Padding of the inputs on every side (stencils read it); inputs are also
/// four times as wide as the output, for strided reads.
const PAD: usize = 2;

/// Output sizes: widths that no vector width divides, and one narrower than
/// most vectors (those loops stay scalar).
const OUTPUT_SIZES: [[usize; 2]; 3] = [[37, 11], [64, 6], [5, 2]];

/// An element type with its edge values and a noise generator.
trait Edges: Scalar {
    /// Values that corner cases of the operations hinge on.
    fn edges() -> Vec<Self>;
    /// An ordinary value from random bits.
    fn noise(bits: u64) -> Self;
}

macro_rules! int_edges {
    ($($t:ident)*) => {$(
        impl Edges for $t {
            fn edges() -> Vec<$t> {
                let neg = |v: $t| v.wrapping_neg();
                vec![
                    0, 1, 2, 7, <$t>::BITS as $t - 1, <$t>::MAX, <$t>::MIN, <$t>::MAX - 1,
                    <$t>::MIN + 1, neg(1), neg(2), neg(7), <$t>::MAX / 2 + 1,
                ]
            }
            fn noise(bits: u64) -> $t {
                bits as $t
            }
        }
    )*};
}
int_edges!(u8 i8 u16 i16 u32 i32 u64 i64);

macro_rules! float_edges {
    ($($t:ident: $bits:ident, $mantissa:literal, $bias:literal;)*) => {$(
        impl Edges for $t {
            fn edges() -> Vec<$t> {
                vec![
                    0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 255.5, -128.5, 65535.9, -3e9, 5e9, 1e20,
                    <$t>::MIN_POSITIVE, -<$t>::MIN_POSITIVE / 4.0, <$t>::MAX, -<$t>::MAX,
                    <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::NAN,
                ]
            }
            /// Sign and mantissa at random, magnitude between 2^-27 and 2^27.
            fn noise(bits: u64) -> $t {
                let sign: $bits = 1 << (<$bits>::BITS - 1);
                let mantissa: $bits = (1 << $mantissa) - 1;
                let exponent = ($bias - 27 + (bits >> 56) % 55) as $bits;
                <$t>::from_bits(bits as $bits & (sign | mantissa) | exponent << $mantissa)
            }
        }
    )*};
}
float_edges! {
    f32: u32, 23, 127;
    f64: u64, 52, 1023;
}

/// Inputs `a` and `b` for an output of `w` x `h`: noise, with every pair of
/// edge values `(a, b)` once at the first points of the output region. The
/// pairs run row after row with a period of 13 (integers) or 19 (floats)
/// that no vector width divides, so each edge value lands in many lanes.
fn inputs<T: Edges>(w: usize, h: usize) -> [Buffer<T, 2>; 2] {
    let shape = [4 * w + 2 * PAD, h + 2 * PAD];
    let mut a = noise(shape, w as u64, T::noise);
    let mut b = noise(shape, h as u64 + 100, T::noise);
    let edges = T::edges();
    let k = edges.len();
    for j in 0..(w * h).min(k * k) {
        let (x, y) = (j % w + PAD, j / w + PAD);
        a[[x, y]] = edges[j % k];
        b[[x, y]] = edges[j / k];
    }
    [a, b]
}

/// The outputs of one run of generated code, by name, as interpreter images.
type Outputs = Vec<(&'static str, Image)>;

/// Runs the two-input pipeline `ops` of `source` (`run` calls its generated
/// code on an output region) at every size in [`OUTPUT_SIZES`], on the full
/// output and on a crop with a non-zero origin, at every instruction-set
/// level, and compares every output with the interpreter's, bit for bit.
fn check<T: Edges>(
    name: &str,
    source: &str,
    run: impl Fn(&View<'_, T, 2>, &View<'_, T, 2>, [i64; 2], [usize; 2]) -> Result<Outputs, Error>,
) {
    for [w, h] in OUTPUT_SIZES {
        let [a, b] = inputs::<T>(w, h);
        let origin = [-(PAD as i64); 2];
        let (a, b) = (a.view().with_origin(origin), b.view().with_origin(origin));
        let inputs = [image_of(&a), image_of(&b)];
        for (origin, shape) in [
            ([0, 0], [w, h]),
            ([(w / 3) as i64, (h / 2) as i64], [w - w / 3, h - h / 2]),
        ] {
            let mut want: Option<Vec<Image>> = None;
            for_each_isa(|isa| {
                let got = run(&a, &b, origin, shape).expect("the inputs are large enough");
                let want = want.get_or_insert_with(|| {
                    let mut want: Vec<Image> = got
                        .iter()
                        .map(|(_, g)| Image::new(g.ty, g.min.clone(), g.shape.clone()))
                        .collect();
                    interpret(source, "ops", &inputs, &[], &mut want)
                        .expect("the interpreter runs");
                    want
                });
                let mut mismatches = 0;
                for ((out, got), want) in got.iter().zip(want.iter()) {
                    for_each(origin, shape, |c| {
                        let (g, w) = (got.get(&c).unwrap(), want.get(&c).unwrap());
                        if !same_bits(g, w) {
                            mismatches += 1;
                            if mismatches <= 10 {
                                eprintln!(
                                    "{name}.{out} ({isa}, output {origin:?}+{shape:?}) at {c:?}: \
                                     a = {:?}, b = {:?}: generated {g:?}, interpreter {w:?}",
                                    a.at(c),
                                    b.at(c),
                                );
                            }
                        }
                    });
                }
                assert_eq!(
                    mismatches, 0,
                    "{name} at {isa} differs from the interpreter"
                );
            });
        }
    }
}

/// Equal values; floats by their bits, but any NaN matches any NaN: Rust
/// leaves the sign and payload of a NaN that arithmetic produces to the
/// compiler (an optimized build gave `fma(a, b, -(a * b))` of `inf * 0`
/// the other sign), as the simd_ops tests do.
fn same_bits(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
        (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
        (a, b) => a == b,
    }
}

/// Pipeline `$group` with inputs `a` and `b` of type `$t` and the named
/// outputs, once per vector width `$w` (module `$width`): each output
/// vectorized by `$w` in x, plus the directives in `extra`. Each width is a
/// test `$group::$width::bit_exact`.
macro_rules! vectorized {
    ($group:ident($t:ident) -> $outputs:tt $body:tt widths $($rest:tt)*) => {
        vectorized!($group($t) -> $outputs $body extra {} widths $($rest)*);
    };
    (
        $group:ident($t:ident) -> $outputs:tt $body:tt
        extra $extra:tt
        widths $($width:ident = $w:tt),*
    ) => {
        mod $group {
            use super::*;
            $( vectorized!(@one $width $w $t $outputs $body $extra); )*
        }
    };
    (@one $width:ident $w:tt $t:ident ($($out:ident: $o:ident),* $(,)?)
        { $($def:tt)* } { $($extra:tt)* }) => {
        mod $width {
            use super::*;
            pipeline! {
                fn ops(a: Image<$t, 2>, b: Image<$t, 2>) -> ($(Image<$o, 2>),*) {
                    $($def)*
                    ($($out),*)
                }
                schedule ops {
                    $( $out.vectorize(x, $w); )*
                    $($extra)*
                }
            }

            #[test]
            fn bit_exact() {
                check::<$t>(module_path!(), ops::__SOURCE, |a, b, origin, shape| {
                    $( let mut $out = Buffer::<$o, 2>::new(shape); )*
                    ops(a, b, $(&mut $out.view_mut().with_origin(origin)),*)?;
                    Ok(vec![$((stringify!($out), image_of(&$out.view().with_origin(origin)))),*])
                });
            }
        }
    };
}

// One output per loop nest is what costs compile time, so integer results
// share outputs: each result times a distinct odd constant (a bijection),
// combined by `^`, so that any one wrong result changes the output.

/// Integer arithmetic; division by varying values (0 and -1 among them) and
/// by constants (`signed`: negative ones too); bitwise operators, shifts by
/// constants and by varying amounts; unary operators, min, max, absd;
/// comparisons, a select with a varying condition and loads in its
/// branches, casts of coordinates.
macro_rules! int_ops {
    (@ $group:ident($t:ident) [$($negative:tt)*] $($width:ident = $w:tt),*) => {
        vectorized! {
            $group($t) -> (arith: $t, division: $t, bits: $t, compare_select: $t) {
                arith(x, y) = {
                    let p = a(x, y);
                    let q = b(x, y);
                    (p + q) ^ (p - q) * 3 ^ p * q * 5 ^ -p * 7 ^ abs(p) * 9 ^ absd(p, q) as $t * 11
                };
                division(x, y) = {
                    let p = a(x, y);
                    let q = b(x, y);
                    p / q ^ p % q * 3 ^ p / 7 * 5 ^ p % 7 * 7 ^ p / 16 * 9 ^ p % 16 * 11
                        $($negative)*
                };
                bits(x, y) = {
                    let p = a(x, y);
                    let q = b(x, y);
                    (p & q) ^ (p | q) * 3 ^ !p * 5 ^ (p << 3) * 7 ^ (p >> 3) * 9 ^ (p << q) * 11
                        ^ (p >> q) * 13
                };
                compare_select(x, y) = {
                    let p = a(x, y);
                    let q = b(x, y);
                    let mask = select(p < q, 1, 0) | select(p <= q, 2, 0) | select(p == q, 4, 0)
                        | select(p != q, 8, 0) | select(p > q, 16, 0) | select(p >= q, 32, 0);
                    mask as $t ^ min(p, q) * 3 ^ max(p, q) * 5
                        ^ (if (p & 3) == 1 { b(x, y) / a(x, y) } else { p * 5 }) * 7
                        ^ (x * 3 - y) as $t * 9 ^ (7 - 2 * x) as $t * 11
                };
            }
            widths $($width = $w),*
        }
    };
    ($group:ident($t:ident), $($rest:tt)*) => {
        int_ops!(@ $group($t) [] $($rest)*);
    };
    ($group:ident($t:ident) signed, $($rest:tt)*) => {
        int_ops!(@ $group($t) [^ p / -3 * 13 ^ p % -3 * 15 ^ p / -1 * 17 ^ p % -1] $($rest)*);
    };
}

// Vectors of 128 and 512 bits.
int_ops!(u8_ops(u8), v128 = 16, v512 = 64);
int_ops!(i8_ops(i8) signed, v128 = 16, v512 = 64);
int_ops!(u16_ops(u16), v128 = 8, v512 = 32);
int_ops!(i16_ops(i16) signed, v128 = 8, v512 = 32);
int_ops!(u32_ops(u32), v128 = 4, v512 = 16);
int_ops!(i32_ops(i32) signed, v128 = 4, v512 = 16);
int_ops!(u64_ops(u64), v128 = 2, v512 = 8);
int_ops!(i64_ops(i64) signed, v128 = 2, v512 = 8);

/// Float arithmetic (`%` floored), min, max and sqrt, comparisons, and a
/// select with a varying condition and a load in a branch.
macro_rules! float_arith {
    ($group:ident($t:ident), $($width:ident = $w:tt),*) => {
        vectorized! {
            $group($t) -> (
                add: $t, sub: $t, mul: $t, div: $t, rem: $t, min_ab: $t, max_ab: $t,
                sqrt_a: $t, compare: i32, sel: $t,
            ) {
                add(x, y) = a(x, y) + b(x, y);
                sub(x, y) = a(x, y) - b(x, y);
                mul(x, y) = a(x, y) * b(x, y);
                div(x, y) = a(x, y) / b(x, y);
                rem(x, y) = a(x, y) % b(x, y);
                min_ab(x, y) = min(a(x, y), b(x, y));
                max_ab(x, y) = max(a(x, y), b(x, y));
                sqrt_a(x, y) = sqrt(a(x, y));
                compare(x, y) = select(a(x, y) < b(x, y), 1, 0) | select(a(x, y) <= b(x, y), 2, 0)
                    | select(a(x, y) == b(x, y), 4, 0) | select(a(x, y) != b(x, y), 8, 0)
                    | select(a(x, y) > b(x, y), 16, 0) | select(a(x, y) >= b(x, y), 32, 0);
                sel(x, y) = if a(x, y) < b(x, y) {
                    b(x, y)
                } else {
                    a(x, y) * 0.5 + (x - 3 * y) as $t
                };
            }
            widths $($width = $w),*
        }
    };
}

// Vectors of 128 and 512 bits.
float_arith!(f32_arith(f32), v128 = 4, v512 = 16);
float_arith!(f64_arith(f64), v128 = 2, v512 = 8);

/// Unary float operators and the other built-ins (rounding, lerp, fma, and
/// the calls: exp, log, pow, trigonometry).
macro_rules! float_math {
    ($group:ident($t:ident), $($width:ident = $w:tt),*) => {
        vectorized! {
            $group($t) -> (
                neg: $t, abs_a: $t, floor_a: $t, ceil_a: $t, round_a: $t, trunc_a: $t,
                lerp_ab: $t, exp_a: $t, log_a: $t, pow_ab: $t, sin_a: $t, cos_a: $t, tan_a: $t,
                atan2_ab: $t, fast_exp_a: $t, fast_log_a: $t, fma_ab: $t, fma_error: $t,
            ) {
                neg(x, y) = -a(x, y);
                abs_a(x, y) = abs(a(x, y));
                floor_a(x, y) = floor(a(x, y));
                ceil_a(x, y) = ceil(a(x, y));
                round_a(x, y) = round(a(x, y));
                trunc_a(x, y) = trunc(a(x, y));
                lerp_ab(x, y) = lerp(a(x, y), b(x, y), 0.25);
                exp_a(x, y) = exp(a(x, y));
                log_a(x, y) = log(a(x, y));
                pow_ab(x, y) = pow(a(x, y), b(x, y));
                sin_a(x, y) = sin(a(x, y));
                cos_a(x, y) = cos(a(x, y));
                tan_a(x, y) = tan(a(x, y));
                atan2_ab(x, y) = atan2(a(x, y), b(x, y));
                fast_exp_a(x, y) = fast_exp(a(x, y));
                fast_log_a(x, y) = fast_log(a(x, y));
                fma_ab(x, y) = fma(a(x, y), b(x, y), a(x + 1, y));
                // The product's rounding error: zero unless fused.
                fma_error(x, y) = fma(a(x, y), b(x, y), -(a(x, y) * b(x, y)));
            }
            widths $($width = $w),*
        }
    };
}

// Vectors of 256 bits.
float_math!(f32_math(f32), v256 = 8);
float_math!(f64_math(f64), v256 = 4);

/// `as` (int to int wraps, float to int saturates with NaN to 0, int to
/// float rounds to nearest) and `saturating_cast` (clamps) to every type;
/// the integer targets share two outputs. `saturating_to_f32` adds the one
/// float `saturating_cast` that is not `as` (from f64).
macro_rules! casts {
    (@ $group:ident($t:ident) [$($more:tt)*] $($width:ident = $w:tt),*) => {
        vectorized! {
            $group($t) -> (
                to_unsigned: u64, to_signed: i64, to_f32: f32, to_f64: f64,
                $($more: f32)*
            ) {
                to_unsigned(x, y) = {
                    let p = a(x, y);
                    let q = b(x, y);
                    (p as u8 ^ saturating_cast::<u8>(q) * 3) as u64
                        ^ (p as u16 ^ saturating_cast::<u16>(q) * 3) as u64 * 5
                        ^ (p as u32 ^ saturating_cast::<u32>(q) * 3) as u64 * 7
                        ^ (p as u64 ^ saturating_cast::<u64>(q) * 3) * 9
                };
                to_signed(x, y) = {
                    let p = a(x, y);
                    let q = b(x, y);
                    (p as i8 ^ saturating_cast::<i8>(q) * 3) as i64
                        ^ (p as i16 ^ saturating_cast::<i16>(q) * 3) as i64 * 5
                        ^ (p as i32 ^ saturating_cast::<i32>(q) * 3) as i64 * 7
                        ^ (p as i64 ^ saturating_cast::<i64>(q) * 3) * 9
                };
                to_f32(x, y) = a(x, y) as f32;
                to_f64(x, y) = a(x, y) as f64;
                $($more(x, y) = saturating_cast::<f32>(a(x, y));)*
            }
            widths $($width = $w),*
        }
    };
    ($group:ident($t:ident), $($rest:tt)*) => {
        casts!(@ $group($t) [] $($rest)*);
    };
    ($group:ident($t:ident) saturating_to_f32, $($rest:tt)*) => {
        casts!(@ $group($t) [saturating_to_f32] $($rest)*);
    };
}

// Vectors of 256 bits of the source type.
casts!(u8_casts(u8), v256 = 32);
casts!(i8_casts(i8), v256 = 32);
casts!(u16_casts(u16), v256 = 16);
casts!(i16_casts(i16), v256 = 16);
casts!(u32_casts(u32), v256 = 8);
casts!(i32_casts(i32), v256 = 8);
casts!(u64_casts(u64), v256 = 4);
casts!(i64_casts(i64), v256 = 4);
casts!(f32_casts(f32), v256 = 8);
casts!(f64_casts(f64) saturating_to_f32, v256 = 4);

/// Rounding averages `(a + b + 1) >> 1` (`pavgb`/`pavgw` where the sum
/// cannot wrap): operands widened with the average narrowed back, widened
/// operands with the average kept wide, operands small enough for the sum
/// to fit, and a sum that can wrap (and must wrap as the scalar code does).
macro_rules! averages {
    ($group:ident($t:ident => $wide:ident), $($width:ident = $w:tt),*) => {
        vectorized! {
            $group($t) -> (narrowed: $t, wide: $wide, bounded: $t, wrapping: $t) {
                narrowed(x, y) = ((a(x, y) as $wide + b(x, y) as $wide + 1) >> 1) as $t;
                wide(x, y) = (1 + a(x, y) as $wide + b(x + 1, y) as $wide) / 2;
                bounded(x, y) = ((a(x, y) >> 1) + 1 + (b(x, y) >> 1)) >> 1;
                wrapping(x, y) = (a(x, y) + b(x, y) + 1) >> 1;
            }
            widths $($width = $w),*
        }
    };
}

// Vectors of 128 and 512 bits.
averages!(u8_averages(u8 => u16), v128 = 16, v512 = 64);
averages!(u16_averages(u16 => u32), v128 = 8, v512 = 32);

/// Loads and stores of 1, 2, 4 and 8-byte elements: neighbours at unaligned
/// offsets; strided reads (strides 2, 3, 4 and -1); reads at data-dependent
/// coordinates (gathers) of an input and of a lookup table func, and at
/// constant distances from such coordinates (taps); boundary
/// conditions on varying and on uniform coordinates; a vectorized update;
/// loads at `x / 2 + k` (upsampling, from even and odd first lanes) of an
/// input and of a func, in both branches of a select that varies by lane,
/// beside a load through `constant` that only its branch may evaluate.
macro_rules! memory {
    ($group:ident($t:ident), $($width:ident = $w:tt),*) => {
        vectorized! {
            $group($t) -> (
                neighbours: $t, strided: $t, gathered: $t, bordered: $t, updated: $t,
                upsampled: $t,
            ) {
                let clamped = a.clamp_edge();
                let mirrored = b.mirror();
                let fenced = b.constant(9 as $t);
                half(x, y) = a(x, y) ^ b(x + 1, y) * 3;
                upsampled(x, y) = select(x % 2 == 0,
                    a(x / 2 - 1, y) ^ a(x / 2, y) * 3 ^ half(x / 2 + 1, y) * 5,
                    b(x / 2, y) * 7 ^ half((x + 1) / 2, y))
                    ^ select(x % 3 == 0, fenced(4 * x - 9, y), a(x, y));
                lut(i) = (i * 37 % 101) as $t;
                acc(x, y) = a(x, y);
                for r in rdom(0..3) {
                    acc(x, y) = acc(x, y) * 3 + b(x + r, y);
                }
                neighbours(x, y) = a(x - 1, y) ^ a(x + 1, y) * 3 ^ a(x + 2, y - 1) * 5;
                strided(x, y) = a(2 * x, y) ^ a(2 * x + 1, y) * 3 ^ a(3 * x + 2, y) * 5
                    ^ a(a.width() - 5 - x, y) * 7 ^ a(4 * x + 1, y) * 9;
                gathered(x, y) = {
                    let i = clamp(a(x, y) as i32, -1, 11);
                    b(i, y) ^ lut(a(x, y) as u8 as i32) * 3 ^ b(i + 1, y + 1) * 5
                        ^ b(i - 1, y - 1) * 7 ^ a(clamp(b(x, y) as i32, 0, 5), y) * 9
                };
                bordered(x, y) =
                    clamped(x - 3, y) ^ clamped(x + 40, y) * 3 ^ mirrored(x + 1, y - 4) * 5;
                updated(x, y) = acc(x, y);
            }
            extra {
                lut.compute_root().vectorize(i, 8);
                acc.compute_root().update(0).reorder(x, r).vectorize(x, 16);
                half.compute_root();
            }
            widths $($width = $w),*
        }
    };
}

// Vectors of 128 and 512 bits.
memory!(u8_memory(u8), v128 = 16, v512 = 64);
memory!(i16_memory(i16), v128 = 8, v512 = 32);
memory!(u32_memory(u32), v128 = 4, v512 = 16);
memory!(i64_memory(i64), v128 = 2, v512 = 8);
