// The crate `tests/portability.rs` checks for a processor other than
// x86-64: vectorized pipelines that use every kind of vector code (loads
// of stride 1 and 2, prefetches, widening, division by constants, rounding
// averages, fma, selects, sliding windows in parallel strips).
#![allow(dead_code)]
use pipeline::pipeline;

pipeline! {
    pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }
    schedule blur3x3 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
    }
}

pipeline! {
    pub fn mixed(a: Image<u8, 2>, f: Image<f32, 3>) -> (Image<u8, 2>, Image<f32, 2>) {
        half(x, y) = ((a(2 * x, y) as u16 + a(2 * x + 1, y) as u16 + 1) >> 1) as u8;
        g(x, y) = fma(f(x, y, 0), f(x, y, 1), f(x, y, 2));
        floats(x, y) = if g(x, y) > 0.5 { sqrt(g(x, y)) } else { max(g(x, y), -1.0) };
        (half, floats)
    }
    schedule mixed {
        half.vectorize(x, 32);
        floats.split(y, yo, yi, 8).parallel(yo).vectorize(x, 16);
        g.compute_at(floats, yi).vectorize(x, 16);
    }
}

fn main() {}
