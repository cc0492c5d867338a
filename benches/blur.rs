//! The 3x3 box blur of the README at 1920x1080: generated code against a
//! straightforward two-pass Rust loop over the same data (same arithmetic,
//! same clamped edges). `cargo bench --bench blur`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pipeline::{pipeline, Buffer};

pipeline! {
    pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }
}

/// The naive loop a person would write: a clamped horizontal pass into a
/// temporary, then a clamped vertical pass.
fn naive(input: &[u16], w: usize, h: usize, tmp: &mut [u32], out: &mut [u16]) {
    for y in 0..h {
        for x in 0..w {
            let xl = x.saturating_sub(1);
            let xr = (x + 1).min(w - 1);
            let row = &input[y * w..];
            tmp[y * w + x] = (row[xl] as u32 + row[x] as u32 + row[xr] as u32) / 3;
        }
    }
    for y in 0..h {
        let (yu, yd) = (y.saturating_sub(1), (y + 1).min(h - 1));
        for x in 0..w {
            out[y * w + x] = ((tmp[yu * w + x] + tmp[y * w + x] + tmp[yd * w + x]) / 3) as u16;
        }
    }
}

fn bench(c: &mut Criterion) {
    let (w, h) = (1920, 1080);
    let input = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| ((x * 7 + y * 13) % 65536) as u16);
    let mut out = Buffer::<u16, 2>::new([w, h]);
    let mut reference = Buffer::<u16, 2>::new([w, h]);
    let mut tmp = vec![0u32; w * h];
    naive(input.as_slice(), w, h, &mut tmp, reference.as_mut_slice());
    blur3x3(&input, &mut out).unwrap();
    assert_eq!(
        out.as_slice(),
        reference.as_slice(),
        "the two agree before they are timed"
    );

    let mut g = c.benchmark_group("blur3x3_u16_1920x1080");
    g.bench_function("pipeline", |b| {
        b.iter(|| blur3x3(black_box(&input), &mut out).unwrap())
    });
    g.bench_function("naive_rust", |b| {
        b.iter(|| {
            naive(
                black_box(input.as_slice()),
                w,
                h,
                &mut tmp,
                reference.as_mut_slice(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
