//! Gathers: lookup tables read at indices computed from the image, against
//! a copy of the same image (what the memory system allows). A tone curve
//! of 256 u8 entries on a u8 image, a 4096-entry u16 table on a 12-bit
//! u16 image, and an f32 table read at u16 indices; 3840x2160, vectorized
//! as the auto-scheduler vectorizes a func that gathers (32 bytes of the
//! output a vector).
//! `cargo bench --bench gathers` (`PIPELINE_ISA=avx2` and so on to time a
//! lower level; SSE4.1 has no gather instruction and loads a lane at a
//! time).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pipeline::{pipeline, Buffer};

pipeline! {
    pub fn copy_u8(a: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = a(x, y);
        out
    }
    schedule copy_u8 {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

pipeline! {
    pub fn tone_u8(a: Image<u8, 2>) -> Image<u8, 2> {
        lut(i) = (sqrt(clamp(i, 0, 255) as f32 / 255.0) * 255.0 + 0.5) as u8;
        out(x, y) = lut(a(x, y) as i32);
        out
    }
    schedule tone_u8 {
        lut.compute_root().vectorize(i, 16);
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

pipeline! {
    pub fn tone_u16(a: Image<u16, 2>) -> Image<u16, 2> {
        lut(i) = (sqrt(clamp(i, 0, 4095) as f32 / 4095.0) * 65535.0 + 0.5) as u16;
        out(x, y) = lut(a(x, y) as i32 & 4095);
        out
    }
    schedule tone_u16 {
        lut.compute_root().vectorize(i, 16);
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 16);
    }
}

pipeline! {
    pub fn tone_f32(a: Image<u16, 2>) -> Image<f32, 2> {
        lut(i) = sqrt(clamp(i, 0, 4095) as f32 / 4095.0);
        out(x, y) = lut(a(x, y) as i32 & 4095);
        out
    }
    schedule tone_f32 {
        lut.compute_root().vectorize(i, 16);
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 8);
    }
}

/// Noise: neighbouring pixels read far-apart entries.
fn noise(x: usize, y: usize) -> u32 {
    let mut h = (x as u32).wrapping_mul(0x9e37_79b9) ^ (y as u32).wrapping_mul(0x85eb_ca6b);
    h ^= h >> 15;
    h.wrapping_mul(0x2c1b_3c6d) >> 8
}

fn bench(c: &mut Criterion) {
    let (w, h) = (3840, 2160);
    let u8s = Buffer::<u8, 2>::from_fn([w, h], |[x, y]| noise(x, y) as u8);
    let u16s = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| (noise(x, y) & 4095) as u16);
    let mut out8 = Buffer::<u8, 2>::new([w, h]);
    let mut out16 = Buffer::<u16, 2>::new([w, h]);
    let mut outf = Buffer::<f32, 2>::new([w, h]);
    let mut g = c.benchmark_group("gathers");
    g.bench_function("copy_u8", |b| {
        b.iter(|| copy_u8(black_box(&u8s), &mut out8).unwrap())
    });
    g.bench_function("tone_u8", |b| {
        b.iter(|| tone_u8(black_box(&u8s), &mut out8).unwrap())
    });
    g.bench_function("tone_u16", |b| {
        b.iter(|| tone_u16(black_box(&u16s), &mut out16).unwrap())
    });
    g.bench_function("tone_f32", |b| {
        b.iter(|| tone_f32(black_box(&u16s), &mut outf).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
