//! Vector loads of constant strides against a dense copy of the same output:
//! a mirror image (stride -1), every second pixel (2), RGB to grey on u8 and
//! f32 (3), every fourth pixel (4); outputs of 1024x512, vectorized so that a
//! vector is 512 bits of the widest type. Also a pipeline on a 1920x1080 RGB
//! image given planar and given interleaved (`[3, 3 w, 1]` strides, as
//! `image::RgbImage` views are), which the entry copies to a dense buffer
//! unless the schedule declares that layout (`a.dim(0).set_stride(3)`), and
//! the same pipeline writing an interleaved output (computed densely, then
//! copied).
//! `cargo bench --bench strided_loads` (`PIPELINE_ISA=avx2` and so on to
//! time a lower level).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pipeline::{pipeline, Buffer, View, ViewMut};

pipeline! {
    pub fn copy(a: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = a(x, y);
        out
    }
    schedule copy {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

pipeline! {
    pub fn mirror(a: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = a(a.width() - 1 - x, y);
        out
    }
    schedule mirror {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

pipeline! {
    pub fn every_2nd(a: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = a(2 * x, y);
        out
    }
    schedule every_2nd {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

pipeline! {
    pub fn grey_u8(rgb: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = ((rgb(3 * x, y) as u16 * 77 + rgb(3 * x + 1, y) as u16 * 150
            + rgb(3 * x + 2, y) as u16 * 29) >> 8) as u8;
        out
    }
    schedule grey_u8 {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
    }
}

pipeline! {
    pub fn grey_f32(rgb: Image<f32, 2>) -> Image<f32, 2> {
        out(x, y) = rgb(3 * x, y) * 0.299 + rgb(3 * x + 1, y) * 0.587 + rgb(3 * x + 2, y) * 0.114;
        out
    }
    schedule grey_f32 {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 16);
    }
}

pipeline! {
    pub fn every_4th(a: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = a(4 * x, y) / 2 + a(4 * x + 2, y) / 2;
        out
    }
    schedule every_4th {
        out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 64);
    }
}

pipeline! {
    pub fn halve_rgb(a: Image<u8, 3>) -> Image<u8, 3> {
        out(x, y, c) = a(x, y, c) / 2 + 1;
        out
    }
    schedule halve_rgb {
        out.reorder(x, c, y).parallel(y).vectorize(x, 32);
    }
}

pipeline! {
    /// `halve_rgb` for interleaved input only, read where it lies.
    pub fn halve_rgb_interleaved(a: Image<u8, 3>) -> Image<u8, 3> {
        out(x, y, c) = a(x, y, c) / 2 + 1;
        out
    }
    schedule halve_rgb_interleaved {
        a.dim(0).set_stride(3).dim(2).set_stride(1);
        out.reorder(x, c, y).parallel(y).vectorize(x, 32);
    }
}

fn bench(c: &mut Criterion) {
    let (w, h) = (1024, 512);
    let u16s = Buffer::<u16, 2>::from_fn([4 * w, h], |[x, y]| (x * 7 + y * 13) as u16);
    let u8s = Buffer::<u8, 2>::from_fn([4 * w, h], |[x, y]| (x * 7 + y * 13) as u8);
    let f32s = Buffer::<f32, 2>::from_fn([3 * w, h], |[x, y]| ((x * 7 + y * 13) % 256) as f32);
    let mut out16 = Buffer::<u16, 2>::new([w, h]);
    let mut out8 = Buffer::<u8, 2>::new([w, h]);
    let mut outf = Buffer::<f32, 2>::new([w, h]);
    let small = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| (x * 7 + y * 13) as u16);

    let mut g = c.benchmark_group("strided_loads");
    g.bench_function("copy_u16", |b| {
        b.iter(|| copy(black_box(&small), &mut out16).unwrap())
    });
    g.bench_function("mirror_u16", |b| {
        b.iter(|| mirror(black_box(&small), &mut out16).unwrap())
    });
    g.bench_function("every_2nd_u16", |b| {
        b.iter(|| every_2nd(black_box(&u16s), &mut out16).unwrap())
    });
    g.bench_function("grey_u8", |b| {
        b.iter(|| grey_u8(black_box(&u8s), &mut out8).unwrap())
    });
    g.bench_function("grey_f32", |b| {
        b.iter(|| grey_f32(black_box(&f32s), &mut outf).unwrap())
    });
    g.bench_function("every_4th_u8", |b| {
        b.iter(|| every_4th(black_box(&u8s), &mut out8).unwrap())
    });

    let (w, h) = (1920, 1080);
    let value = |x: usize, y: usize, c: usize| (x * 7 + y * 13 + c * 5) as u8;
    let planar = Buffer::<u8, 3>::from_fn([w, h, 3], |[x, y, c]| value(x, y, c));
    let chunky: Vec<u8> = (0..w * h * 3)
        .map(|i| value(i / 3 % w, i / 3 / w, i % 3))
        .collect();
    let chunky = View::with_strides(&chunky[..], [w, h, 3], [3, 3 * w, 1]).unwrap();
    let mut rgb_out = Buffer::<u8, 3>::new([w, h, 3]);
    g.bench_function("rgb_planar_input", |b| {
        b.iter(|| halve_rgb(black_box(&planar), &mut rgb_out).unwrap())
    });
    g.bench_function("rgb_interleaved_input", |b| {
        b.iter(|| halve_rgb(black_box(&chunky), &mut rgb_out).unwrap())
    });
    let mut chunky_out = vec![0u8; w * h * 3];
    g.bench_function("rgb_interleaved_output", |b| {
        b.iter(|| {
            let mut out =
                ViewMut::with_strides(&mut chunky_out[..], [w, h, 3], [3, 3 * w, 1]).unwrap();
            halve_rgb(black_box(&planar), &mut out).unwrap()
        })
    });
    g.bench_function("rgb_interleaved_declared", |b| {
        b.iter(|| halve_rgb_interleaved(black_box(&chunky), &mut rgb_out).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
