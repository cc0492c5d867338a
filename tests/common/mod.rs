//! Test support: run a pipeline both through its generated code and through
//! the reference interpreter (`pipeline_core::interp`) and compare bit for bit.

#![allow(dead_code)]

use pipeline::{Buffer, Element, View};
use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::Type;

/// Element types as interpreter values.
pub trait Scalar: Element {
    const TY: Type;
    fn to_value(self) -> Value;
}

macro_rules! int_scalar {
    ($($t:ty => $ty:ident),*) => {$(
        impl Scalar for $t {
            const TY: Type = Type::$ty;
            fn to_value(self) -> Value { Value::Int(self as i128) }
        }
    )*};
}
int_scalar!(u8 => U8, u16 => U16, u32 => U32, u64 => U64, i8 => I8, i16 => I16, i32 => I32, i64 => I64);
impl Scalar for f32 {
    const TY: Type = Type::F32;
    fn to_value(self) -> Value {
        Value::F32(self)
    }
}
impl Scalar for f64 {
    const TY: Type = Type::F64;
    fn to_value(self) -> Value {
        Value::F64(self)
    }
}

/// An interpreter image holding a view's values over the view's region.
pub fn image_of<T: Scalar, const N: usize>(v: &View<'_, T, N>) -> Image {
    let mut img = Image::new(T::TY, v.origin().to_vec(), v.shape().to_vec());
    for_each(v.origin(), v.shape(), |c| {
        img.set(&c, v.at(c).to_value());
    });
    img
}

/// An empty interpreter image describing an output region.
pub fn region_image<T: Scalar, const N: usize>(origin: [i64; N], shape: [usize; N]) -> Image {
    Image::new(T::TY, origin.to_vec(), shape.to_vec())
}

pub fn for_each<const N: usize>(origin: [i64; N], shape: [usize; N], mut f: impl FnMut([i64; N])) {
    if shape.contains(&0) {
        return;
    }
    let mut c = origin;
    loop {
        f(c);
        let mut d = 0;
        loop {
            if d == N {
                return;
            }
            c[d] += 1;
            if c[d] < origin[d] + shape[d] as i64 {
                break;
            }
            c[d] = origin[d];
            d += 1;
        }
    }
}

/// Runs the interpreter on the pipeline `name` of `source`.
pub fn interpret(
    source: &str,
    name: &str,
    inputs: &[Image],
    params: &[Value],
    outputs: &mut [Image],
) -> Result<(), String> {
    let p = pipeline_core::pipeline_from_source(source, name).expect("the source checks");
    interp::run(&p, inputs, params, outputs)
}

/// Asserts that a view equals an interpreter image over the view's region,
/// bit for bit (floats compared by their bits, so NaNs must match too).
pub fn assert_matches<T: Scalar, const N: usize>(got: &View<'_, T, N>, want: &Image, what: &str) {
    let mut mismatches = 0;
    for_each(got.origin(), got.shape(), |c| {
        let (g, w) = (
            got.at(c).to_value(),
            want.get(&c).expect("interpreter covers the output"),
        );
        let same = match (g, w) {
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            (a, b) => a == b,
        };
        if !same {
            mismatches += 1;
            if mismatches <= 5 {
                eprintln!("{what}: at {c:?} generated {g:?}, interpreter {w:?}");
            }
        }
    });
    assert_eq!(
        mismatches, 0,
        "{what}: generated code differs from the interpreter"
    );
}

/// A deterministic pseudo-random buffer (xorshift), covering the whole range of T.
pub fn noise<T: Element, const N: usize>(
    shape: [usize; N],
    seed: u64,
    f: impl Fn(u64) -> T,
) -> Buffer<T, N> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let n: usize = shape.iter().product();
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.push(f(s));
    }
    Buffer::from_vec(v, shape).unwrap()
}

/// Sizes every single-output test runs at: degenerate, odd, prime, larger.
pub const SIZES: &[[usize; 2]] = &[[1, 1], [2, 1], [1, 3], [7, 5], [37, 23], [64, 17], [101, 3]];

/// Runs `f` once per instruction-set level this processor has (kernels
/// dispatch on [`pipeline::rt::isa`]), passing the level's name for messages;
/// a failure also prints the level it ran at.
pub fn for_each_isa(mut f: impl FnMut(&str)) {
    struct Level(&'static str);
    impl Drop for Level {
        fn drop(&mut self) {
            if std::thread::panicking() {
                eprintln!("(at instruction-set level {})", self.0);
            }
        }
    }
    for isa in pipeline::rt::Isa::available() {
        let _level = Level(isa.name());
        pipeline::rt::with_isa(isa, || f(isa.name()));
    }
}
