//! Every example pipeline under its hand-written schedule, against the plain
//! Rust reference beside it (a straightforward implementation of the same
//! algorithm): `cargo bench --bench examples`. The ratio pipeline/reference of
//! each pair is what to read; this machine is shared and noisy.

// Each example includes `examples/support`; included together, once each.
#![allow(clippy::duplicate_mod)]

#[path = "../examples/bilateral_grid.rs"]
mod bilateral_grid;
#[path = "../examples/blur.rs"]
mod blur;
#[path = "../examples/harris.rs"]
mod harris;
#[path = "../examples/histogram_equalize.rs"]
mod histogram_equalize;
#[path = "../examples/pyramid.rs"]
mod pyramid;
#[path = "../examples/unsharp.rs"]
mod unsharp;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pipeline::Buffer;

/// The size every example runs at.
const W: usize = 1920;
const H: usize = 1080;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group(format!("examples_{W}x{H}"));
    g.sample_size(10);

    let input = blur::make_input(W, H);
    let mut out = Buffer::new([W, H]);
    g.bench_function("blur3x3/pipeline", |b| {
        b.iter(|| blur::blur3x3(black_box(&input), &mut out).unwrap())
    });
    g.bench_function("blur3x3/reference", |b| {
        b.iter(|| blur::reference(black_box(&input)))
    });

    let input = harris::make_input(W, H);
    let mut out = Buffer::new([W, H]);
    g.bench_function("harris/pipeline", |b| {
        b.iter(|| harris::harris(black_box(&input), &mut out).unwrap())
    });
    g.bench_function("harris/reference", |b| {
        b.iter(|| harris::reference(black_box(&input)))
    });

    let input = unsharp::make_input(W, H);
    let mut out = Buffer::new([W, H, 3]);
    g.bench_function("unsharp/pipeline", |b| {
        b.iter(|| unsharp::unsharp(black_box(&input), 1.5, 1.5, &mut out).unwrap())
    });
    g.bench_function("unsharp/reference", |b| {
        b.iter(|| unsharp::reference(black_box(&input), 1.5, 1.5))
    });

    let input = histogram_equalize::make_input(W, H);
    let mut out = Buffer::new([W, H]);
    g.bench_function("histogram_equalize/pipeline", |b| {
        b.iter(|| histogram_equalize::histogram_equalize(black_box(&input), &mut out).unwrap())
    });
    g.bench_function("histogram_equalize/reference", |b| {
        b.iter(|| histogram_equalize::reference(black_box(&input)))
    });

    let input = bilateral_grid::make_input(W, H);
    let mut out = Buffer::new([W, H]);
    g.bench_function("bilateral_grid/pipeline", |b| {
        b.iter(|| bilateral_grid::bilateral_grid(black_box(&input), &mut out).unwrap())
    });
    g.bench_function("bilateral_grid/reference", |b| {
        b.iter(|| bilateral_grid::reference(black_box(&input)))
    });

    let input = pyramid::make_input(W, H);
    let (s0, s1, s2, s3) = pyramid::pyramid::output_shape(input.shape());
    let mut outs = (
        Buffer::new(s0),
        Buffer::new(s1),
        Buffer::new(s2),
        Buffer::new(s3),
    );
    g.bench_function("pyramid/pipeline", |b| {
        b.iter(|| {
            let (l0, l1, l2, g3) = &mut outs;
            pyramid::pyramid(black_box(&input), l0, l1, l2, g3).unwrap()
        })
    });
    g.bench_function("pyramid/reference", |b| {
        b.iter(|| pyramid::reference(black_box(&input)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
