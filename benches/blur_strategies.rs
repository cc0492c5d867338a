//! The Halide paper's five schedules of the 3x3 blur (u16, 6400x4800), a
//! sixth that slides down strips computed a chunk of columns at a time, and
//! the two sliding ones again with `vectorize`; same algorithm, measured side
//! by side: `cargo bench --bench blur_strategies`.
//! Each strategy's intermediate storage is printed once before timing.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pipeline::{pipeline, record_allocations, Buffer};

macro_rules! blur {
    ($name:ident, { $($schedule:tt)* }) => {
        pipeline! {
            pub fn $name(input: Image<u16, 2>) -> Image<u16, 2> {
                let clamped = input.clamp_edge();
                blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
                out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
                out
            }
            schedule $name { $($schedule)* }
        }
    };
}

blur!(breadth_first, {
    blur_x.compute_root().parallel(y);
    out.parallel(y);
});
blur!(full_fusion, {
    blur_x.compute_inline();
    out.parallel(y);
});
blur!(sliding_window, {
    out.split(y, yo, yi, 1048576);
    blur_x.store_at(out, yo).compute_at(out, yi);
});
blur!(tiles, {
    out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo);
    blur_x.compute_at(out, xo);
});
blur!(sliding_in_strips, {
    out.split(y, yo, yi, 32).parallel(yo);
    blur_x.store_at(out, yo).compute_at(out, yi);
});
// Stored per strip, computed per chunk of 512 columns: the window slides down
// the strip's rows (a loop outside the compute level), and the chunk of a row
// that blur_x has just written is still in L1 when out reads it.
blur!(sliding_in_chunks, {
    out.split(y, yo, yi, 32).split(x, xo, xi, 512).parallel(yo);
    blur_x.store_at(out, yo).compute_at(out, xo);
});
blur!(sliding_in_strips_simd, {
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
    blur_x
        .store_at(out, yo)
        .compute_at(out, yi)
        .vectorize(x, 16);
});
blur!(sliding_in_chunks_simd, {
    out.split(y, yo, yi, 32)
        .split(x, xo, xi, 512)
        .parallel(yo)
        .vectorize(xi, 16);
    blur_x
        .store_at(out, yo)
        .compute_at(out, xo)
        .vectorize(x, 16);
});

type Blur = fn(&Buffer<u16, 2>, &mut Buffer<u16, 2>) -> Result<(), pipeline::Error>;

fn bench(c: &mut Criterion) {
    let (w, h) = (6400, 4800);
    let input = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| ((x * 7 + y * 13) % 65536) as u16);
    let mut reference = Buffer::<u16, 2>::new([w, h]);
    breadth_first(&input, &mut reference).unwrap();
    let strategies: [(&str, Blur); 8] = [
        ("breadth_first", |i, o| breadth_first(i, o)),
        ("full_fusion", |i, o| full_fusion(i, o)),
        ("sliding_window", |i, o| sliding_window(i, o)),
        ("tiles", |i, o| tiles(i, o)),
        ("sliding_in_strips", |i, o| sliding_in_strips(i, o)),
        ("sliding_in_chunks", |i, o| sliding_in_chunks(i, o)),
        ("sliding_in_strips_simd", |i, o| {
            sliding_in_strips_simd(i, o)
        }),
        ("sliding_in_chunks_simd", |i, o| {
            sliding_in_chunks_simd(i, o)
        }),
    ];
    let mut g = c.benchmark_group("blur3x3_u16_6400x4800");
    g.sample_size(10);
    for (name, run) in strategies {
        let mut out = Buffer::<u16, 2>::new([w, h]);
        let (r, allocs) = record_allocations(|| run(&input, &mut out));
        r.unwrap();
        assert_eq!(
            out.as_slice(),
            reference.as_slice(),
            "{name} agrees with breadth-first"
        );
        let largest = allocs.iter().map(|a| a.elements).max().unwrap_or(0);
        let total: usize = allocs.iter().map(|a| a.elements).sum();
        println!(
            "{name}: {} allocations of blur_x, largest {} elements ({} KiB), {} KiB in all",
            allocs.len(),
            largest,
            largest * 4 / 1024,
            total * 4 / 1024
        );
        g.bench_function(name, |b| {
            b.iter(|| run(black_box(&input), &mut out).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
