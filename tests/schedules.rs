//! Schedules never change results: the same algorithms under many schedules,
//! each compiled, against the reference interpreter at odd sizes and on
//! cropped outputs.

mod common;

use common::*;
use pipeline::{pipeline, Buffer, Error, View, ViewMut};

/// Runs a one-input, one-output u16 pipeline at several sizes and output
/// regions and compares it with the interpreter.
fn check(
    source: &str,
    name: &str,
    run: impl Fn(&View<'_, u16, 2>, &mut ViewMut<'_, u16, 2>) -> Result<(), Error>,
) {
    for &[w, h] in &[[1usize, 1usize], [5, 3], [37, 23], [64, 33], [97, 70]] {
        let input = noise([w, h], (w * h) as u64, |s| s as u16);
        // The same image with every other element of its rows (stride 2):
        // kernels with vector loops read a dense copy of it.
        let mut spaced = vec![0u16; 2 * w * h];
        for (i, v) in input.as_slice().iter().enumerate() {
            spaced[2 * i] = *v;
        }
        let strided = View::with_strides(&spaced, [w, h], [2, 2 * w]).unwrap();
        for (origin, shape) in [
            ([0i64, 0i64], [w, h]),
            ([(w / 4) as i64, (h / 3) as i64], [w - w / 4, h - h / 3]),
        ] {
            let mut want = [region_image::<u16, 2>(origin, shape)];
            interpret(source, name, &[image_of(&input.view())], &[], &mut want).unwrap();
            for_each_isa(|isa| {
                let what = format!("{name} {w}x{h} at {origin:?}, {isa}");
                let mut out = Buffer::<u16, 2>::new(shape);
                run(&input.view(), &mut out.view_mut().with_origin(origin)).unwrap();
                assert_matches(&out.view().with_origin(origin), &want[0], &what);
                // Strided input and output (every other element of the rows).
                let mut spaced_out = vec![7u16; 2 * shape[0] * shape[1]];
                let mut out_view =
                    ViewMut::with_strides(&mut spaced_out, shape, [2, 2 * shape[0]]).unwrap();
                run(&strided, &mut out_view.reborrow().with_origin(origin)).unwrap();
                assert_matches(
                    &out_view.as_view().with_origin(origin),
                    &want[0],
                    &format!("{what}, strided views"),
                );
                assert!(
                    spaced_out.iter().skip(1).step_by(2).all(|&v| v == 7),
                    "{what}: wrote between the output's elements"
                );
            });
        }
    }
}

/// The element counts of the buffers that pipeline `name` allocates while
/// `run` runs (which must succeed).
fn allocations_of(name: &str, run: impl FnOnce() -> Result<(), Error>) -> Vec<usize> {
    let (r, allocs) = pipeline::record_allocations(run);
    r.unwrap();
    allocs
        .iter()
        .filter(|a| a.pipeline == name)
        .map(|a| a.elements)
        .collect()
}

/// The 3x3 blur of the README as pipeline `$name` under a schedule.
macro_rules! blur {
    ($name:ident, { $($schedule:tt)* }) => {
        pipeline! {
            fn $name(input: Image<u16, 2>) -> Image<u16, 2> {
                let clamped = input.clamp_edge();
                blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
                out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
                out
            }
            schedule $name { $($schedule)* }
        }
    };
}

/// The blur under a schedule, against the interpreter; one test per schedule.
macro_rules! blur_with_schedule {
    ($test:ident, { $($schedule:tt)* }) => {
        #[test]
        fn $test() {
            blur!(blur, { $($schedule)* });
            check(blur::__SOURCE, "blur", |i, o| blur(i, o));
        }
    };
}

blur_with_schedule!(breadth_first_serial, {
    blur_x.compute_root();
    out.compute_root();
});
blur_with_schedule!(breadth_first_parallel_rows, {
    blur_x.compute_root().parallel(y);
    out.parallel(y);
});
blur_with_schedule!(full_fusion_by_inlining, {
    blur_x.compute_inline();
    out.parallel(y);
});
blur_with_schedule!(strips_of_rows_in_parallel_with_vectors, {
    out.split(y, yo, yi, 8).parallel(yo).vectorize(x, 16);
    blur_x
        .compute_root()
        .split(y, yo, yi, 5)
        .parallel(yo)
        .vectorize(x, 8);
});
blur_with_schedule!(tiles_with_reordered_loops, {
    out.tile(x, y, xo, yo, xi, yi, 16, 8).parallel(yo);
    blur_x
        .compute_root()
        .tile(x, y, xo, yo, xi, yi, 7, 3)
        .reorder(yi, xi, xo, yo);
});
blur_with_schedule!(parallel_columns_and_unrolled_rows, {
    out.split(x, xo, xi, 9).parallel(xo).unroll(y, 4);
    blur_x.compute_root().parallel(x).unroll(x, 2);
});
blur_with_schedule!(unrolled_vectors, {
    out.split(y, yo, yi, 8)
        .parallel(yo)
        .vectorize(x, 16)
        .unroll(x, 2);
    blur_x
        .store_at(out, yo)
        .compute_at(out, yi)
        .vectorize(x, 8)
        .unroll(x, 2)
        .unroll(x, 2);
});
blur_with_schedule!(split_vectorized_and_unrolled, {
    out.split(x, xo, xi, 32)
        .vectorize(xi, 16)
        .unroll(xi, 2)
        .parallel(y);
    blur_x
        .compute_at(out, y)
        .split(x, xo, xi, 24)
        .vectorize(xi, 8)
        .unroll(xi, 3);
});
blur_with_schedule!(nested_splits, {
    out.split(y, yo, yi, 16)
        .split(yi, yio, yii, 4)
        .split(x, xo, xi, 10)
        .reorder(xi, yii, yio, xo, yo)
        .parallel(yo);
    blur_x.compute_root().vectorize(x, 4).vectorize(x, 2);
});
// A parallel loop over the dimension a sliding window folds runs serially:
// its iterations would own slabs of coordinates that the fold wraps around.
blur_with_schedule!(parallel_loop_over_a_folded_dimension, {
    out.split(y, yo, yi, 8).parallel(yo);
    blur_x
        .store_at(out, yo)
        .compute_at(out, yi)
        .parallel(y)
        .vectorize(x, 8);
});

pipeline! {
    /// A histogram (an update) consumed by a scheduled output.
    fn equalized(input: Image<u16, 2>) -> Image<u16, 2> {
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(input(rx, ry) as i32 / 4096) += 1;
        }
        out(x, y) = (input(x, y) / 2 + hist(input(x, y) as i32 / 4096) as u16) ;
        out
    }
    schedule equalized {
        hist.compute_root().split(i, io, ii, 3);
        out.tile(x, y, xo, yo, xi, yi, 5, 4).parallel(yo);
    }
}

#[test]
fn updates_with_scheduled_pure_stages() {
    for &[w, h] in &[[1usize, 1usize], [5, 3], [37, 23]] {
        let input = noise([w, h], 7, |s| s as u16);
        let mut out = Buffer::<u16, 2>::new([w, h]);
        equalized(&input, &mut out).unwrap();
        let mut want = [region_image::<u16, 2>([0, 0], [w, h])];
        interpret(
            equalized::__SOURCE,
            "equalized",
            &[image_of(&input.view())],
            &[],
            &mut want,
        )
        .unwrap();
        assert_matches(&out.view(), &want[0], "equalized");
    }
}

// A gather: each cell of 4x4 pixels sums its pixels per intensity level
// into a column of its own (a bilateral grid's construction, Halide's
// form). The update's pure variables `x` and `y` are its own coordinates and
// also feed the computed one, so the cells are independent and their loops
// may run in parallel; the levels are written at data-dependent points.
macro_rules! gather {
    ($name:ident, { $($schedule:tt)* }) => {
        pipeline! {
            fn $name(input: Image<u16, 2>) -> Image<u16, 2> {
                let c = input.clamp_edge();
                level(x, y) = (c(x, y) >> 14) as i32;
                cells(x, y, z) = 0u16;
                for (rx, ry) in rdom(0..4, 0..4) {
                    cells(x, y, level(4 * x + rx, 4 * y + ry)) +=
                        (c(4 * x + rx, 4 * y + ry) >> 12) + x as u16;
                }
                out(x, y) = cells(x / 4, y / 4, 0) + 2 * cells(x / 4 + 1, y / 4, 3)
                    + cells(x / 4, y / 4 - 1, level(x, y));
                out
            }
            schedule $name { $($schedule)* }
        }
    };
}

macro_rules! gather_with_schedule {
    ($test:ident, { $($schedule:tt)* }) => {
        #[test]
        fn $test() {
            gather!(gather, { $($schedule)* });
            check(gather::__SOURCE, "gather", |i, o| gather(i, o));
        }
    };
}

gather_with_schedule!(gather_update_by_default, {});
gather_with_schedule!(gather_update_parallel_over_its_pure_variables, {
    cells.compute_root().update(0).parallel(y).vectorize(x, 8);
    out.parallel(y).vectorize(x, 8);
});
gather_with_schedule!(gather_update_in_tiles_of_cells, {
    cells
        .compute_root()
        .update(0)
        .split(y, yo, yi, 3)
        .split(x, xo, xi, 5)
        .reorder(rx, ry, xi, yi, xo, yo)
        .parallel(yo);
    level
        .compute_root()
        .split(y, yo, yi, 8)
        .parallel(yo)
        .vectorize(x, 8);
});
gather_with_schedule!(gather_update_per_strip_of_its_consumer, {
    out.split(y, yo, yi, 8).parallel(yo);
    cells.compute_at(out, yo);
});
gather_with_schedule!(gather_update_chosen_automatically, {
    auto;
});

#[test]
fn schedule_text_shows_the_directives_that_ran() {
    pipeline! {
        fn tiled(input: Image<u8, 2>) -> Image<u8, 2> {
            out(x, y) = input(x, y) / 2;
            out
        }
        schedule tiled {
            out.tile(x, y, xo, yo, xi, yi, 8, 8).parallel(yo);
        }
    }
    assert!(
        tiled::SCHEDULE.contains("out.tile(x, y, xo, yo, xi, yi, 8, 8).parallel(yo);"),
        "{}",
        tiled::SCHEDULE
    );
    assert!(
        tiled::LOWERED.contains("parallel for out.yo"),
        "{}",
        tiled::LOWERED
    );
    assert!(tiled::LOWERED.contains("for out.xi"), "{}", tiled::LOWERED);
}

/// `vectorize(x, 16).unroll(x, 2)` runs as blocks of two whole vectors:
/// one split of 32 (the last block shifted inwards), its inner part cut
/// in two exactly, so the steady state has no guard and the last block
/// runs as vectors whenever the row holds one block (`select(e >= 32,
/// 15, ..)`). Each split shifting on its own, the ends were guarded lane
/// by lane and ran 15 to 37 times slower than without the unroll.
#[test]
fn unrolled_vectors_run_as_blocks_of_whole_vectors() {
    blur!(unrolled, {
        out.split(y, yo, yi, 8)
            .parallel(yo)
            .vectorize(x, 16)
            .unroll(x, 2);
        blur_x.compute_at(out, yi).vectorize(x, 16);
    });
    let lowered = unrolled::LOWERED;
    let steady = "for out.x in 0..=min((((out.extent.x + 31) / 32) - 1), ((out.extent.x - 32) / 32)) {\n        unrolled for out.x_u in 0..=1 {\n          vectorized for out.x_v in 0..=15 {";
    assert!(lowered.contains(steady), "{lowered}");
    // The steady state's body, up to the next loop over `out.x`.
    let after_steady = &lowered[lowered.find(steady).unwrap() + steady.len()..];
    let body = &after_steady[..after_steady
        .find("for out.x in")
        .unwrap_or(after_steady.len())];
    assert!(body.contains("out(x, y) ="), "{body}");
    assert!(!body.contains("< out.extent.x"), "{body}");
    assert!(
        lowered.contains("vectorized for out.x_v in 0..=select((out.extent.x >= 32), 15, min(15, ((out.extent.x - ((out.x * 32) + (out.x_u * 16))) - 1))) {"),
        "{lowered}"
    );
}

#[test]
fn selects_with_the_same_test_in_every_lane_run_as_vectors() {
    pipeline! {
        fn framed(input: Image<u16, 2>) -> Image<u16, 2> {
            let c = input.constant(7);
            let e = input.clamp_edge();
            out(x, y) = c(x - 1, y) + c(x + 1, y - 2) * 2 + select(y > 4, e(x, y), 1u16);
            out
        }
        schedule framed {
            out.vectorize(x, 16);
        }
    }
    // In the columns' interior only the rows' half of `constant`'s test is
    // left, the same in every lane.
    let lowered = framed::LOWERED;
    assert!(
        lowered.contains("select(((y >= input.min(1)) && ((y - input.min(1)) < input.extent(1))), input((x - 1), clamp_edge(y)), 7u16)"),
        "{lowered}"
    );
    for [w, h] in [[1usize, 1usize], [37, 5], [64, 3]] {
        let input = noise([w, h], (w + h) as u64, |s| s as u16);
        // The image itself, and a frame reaching far outside it on every side.
        for (origin, shape) in [([0i64, 0i64], [w, h]), ([-20, -10], [w + 45, h + 20])] {
            let mut want = [region_image::<u16, 2>(origin, shape)];
            let source = framed::__SOURCE;
            interpret(source, "framed", &[image_of(&input.view())], &[], &mut want).unwrap();
            for_each_isa(|isa| {
                let mut out = Buffer::<u16, 2>::new(shape);
                framed(&input.view(), &mut out.view_mut().with_origin(origin)).unwrap();
                let what = format!("framed {w}x{h}, output {origin:?}+{shape:?}, {isa}");
                assert_matches(&out.view().with_origin(origin), &want[0], &what);
            });
        }
    }
}

#[test]
fn only_loops_whose_iterations_clamp_are_partitioned() {
    pipeline! {
        fn box2(input: Image<u16, 2>) -> Image<u16, 2> {
            let e = input.clamp_edge();
            out(x, y) = e(x - 1, y - 1) + e(x + 1, y + 1);
            out
        }
        schedule box2 {
            out.vectorize(x, 8);
        }
    }
    // The columns' loop splits into left edge, interior and right edge; the
    // rows' clamp does not vary inside a row, so the rows' loop stays whole
    // (partitioning it would copy the columns' three loops twice more).
    let lowered = box2::LOWERED;
    assert_eq!(lowered.matches("for out.y ").count(), 1, "{lowered}");
    assert_eq!(lowered.matches("for out.x ").count(), 3, "{lowered}");
    assert!(
        lowered.contains("input((x - 1), clamp_edge((y - 1)))"),
        "the interior keeps only the rows' clamp:\n{lowered}"
    );
    let input = Buffer::<u16, 2>::from_fn([21, 4], |c| (c[0] * 7 + c[1] * 3) as u16);
    for_each_isa(|isa| {
        let mut out = Buffer::<u16, 2>::new([21, 4]);
        box2(&input, &mut out).unwrap();
        let want = Buffer::<u16, 2>::from_fn([21, 4], |c| {
            let at =
                |x: i64, y: i64| input.as_slice()[(x.clamp(0, 20) + 21 * y.clamp(0, 3)) as usize];
            let (x, y) = (c[0] as i64, c[1] as i64);
            at(x - 1, y - 1) + at(x + 1, y + 1)
        });
        assert_eq!(out.as_slice(), want.as_slice(), "{isa}");
    });
}

blur_with_schedule!(full_fusion_by_compute_at_every_pixel, {
    blur_x.compute_at(out, x);
});
blur_with_schedule!(overlapping_tiles, {
    out.tile(x, y, xo, yo, xi, yi, 16, 8).parallel(yo);
    blur_x.compute_at(out, xo).vectorize(x, 8);
});
blur_with_schedule!(rows_computed_per_output_row_within_parallel_strips, {
    out.split(y, yo, yi, 8).parallel(yo).vectorize(x, 8);
    blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 8);
});
blur_with_schedule!(strips_computed_per_strip, {
    out.split(y, yo, yi, 16).parallel(yo);
    blur_x.compute_at(out, yo).split(y, yo, yi, 4).parallel(yo);
});

pipeline! {
    /// Three stages, each computed inside the next one's loops.
    fn chain(input: Image<u16, 2>) -> Image<u16, 2> {
        let c = input.mirror();
        a(x, y) = c(x - 1, y) / 2 + c(x + 2, y) / 2;
        b(x, y) = a(x, y - 2) / 2 + a(x + 1, y + 1) / 2;
        out(x, y) = b(x - 1, y) / 2 + b(x, y + 3) / 2;
        out
    }
    schedule chain {
        out.split(y, yo, yi, 7).parallel(yo);
        b.compute_at(out, yo).split(x, xo, xi, 5);
        a.compute_at(b, xo);
    }
}

#[test]
fn nested_compute_at() {
    check(chain::__SOURCE, "chain", |i, o| chain(i, o));
    assert!(
        chain::LOWERED.contains("allocate a[u16]"),
        "{}",
        chain::LOWERED
    );
}

blur!(rows_at_root, {
    blur_x.compute_root();
});
blur!(rows_per_row, {
    blur_x.compute_at(out, y);
});

#[test]
fn compute_at_allocates_what_one_iteration_needs() {
    let (w, h) = (40usize, 12usize);
    let input = noise([w, h], 5, |s| s as u16);
    let mut out = Buffer::<u16, 2>::new([w, h]);

    let mine = allocations_of("rows_at_root", || rows_at_root(&input, &mut out));
    assert_eq!(
        mine,
        vec![w * (h + 2)],
        "at root: one buffer with a row of halo above and below"
    );

    let mine = allocations_of("rows_per_row", || rows_per_row(&input, &mut out));
    assert_eq!(mine.len(), h, "one buffer per output row");
    assert!(
        mine.iter().all(|&n| n == 3 * w),
        "three rows each: {mine:?}"
    );
}

blur!(sliding, {
    out.split(y, yo, yi, 16).parallel(yo);
    blur_x.store_at(out, yo).compute_at(out, yi);
});

blur!(sliding_serial, {
    out.split(y, yo, yi, 1048576);
    blur_x.store_at(out, yo).compute_at(out, yi);
});

#[test]
fn sliding_window_over_the_whole_image() {
    // One strip taller than the image: the split's tail is not shifted, and
    // the window must still be the three rows around each output row.
    let (w, h) = (29usize, 31usize);
    let input = noise([w, h], 13, |s| s as u16);
    let mut out = Buffer::<u16, 2>::new([w, h]);
    let mine = allocations_of("sliding_serial", || sliding_serial(&input, &mut out));
    assert_eq!(mine, vec![4 * w], "one folded buffer of 4 rows");
    check(sliding_serial::__SOURCE, "sliding_serial", |i, o| {
        sliding_serial(i, o)
    });
}

#[test]
fn sliding_window_with_folded_storage() {
    // Each strip of 16 rows keeps blur_x in 4 rows (the 3-row window rounded up
    // to a power of two), computing each row once.
    assert!(
        sliding::LOWERED.contains("folded mod 4"),
        "{}",
        sliding::LOWERED
    );
    assert!(
        sliding::LOWERED.contains("blur_x.slide.min.y"),
        "{}",
        sliding::LOWERED
    );
    let (w, h) = (33usize, 40usize);
    let input = noise([w, h], 11, |s| s as u16);
    let mut out = Buffer::<u16, 2>::new([w, h]);
    let mine = allocations_of("sliding", || sliding(&input, &mut out));
    assert_eq!(
        mine,
        vec![4 * w; h.div_ceil(16)],
        "one folded buffer of 4 rows per strip"
    );
    check(sliding::__SOURCE, "sliding", |i, o| sliding(i, o));
}

blur!(sliding_chunks, {
    out.split(y, yo, yi, 16)
        .split(x, xo, xi, 16)
        .parallel(yo)
        .vectorize(xi, 8);
    blur_x.store_at(out, yo).compute_at(out, xo).vectorize(x, 8);
});

#[test]
fn sliding_window_over_a_loop_outside_the_compute_level() {
    // blur_x is computed per chunk of 16 columns (at xo) but stored per strip
    // (at yo): it slides down the rows (yi, the loop outside xo), so each
    // chunk of each row is computed once and the strip keeps 4 rows.
    let lowered = sliding_chunks::LOWERED;
    assert!(lowered.contains("blur_x.slide.min.y"), "{lowered}");
    assert!(lowered.contains("folded mod 4"), "{lowered}");
    // Every chunk's full vectors, those of the last chunk (shifted back to end
    // at the image's edge) included, run without the split's guard.
    let lines: Vec<&str> = lowered.lines().map(str::trim).collect();
    let mut full_vectors = 0;
    for (i, line) in lines.iter().enumerate() {
        if *line != "vectorized for out.xi_v in 0..=7 {" {
            continue;
        }
        full_vectors += 1;
        for body in lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("out(x, y) ="))
        {
            assert!(
                !(body.starts_with("if ") && body.contains("< out.extent.x")),
                "a full vector of out keeps the guard `{body}`:\n{lowered}"
            );
        }
    }
    assert!(full_vectors >= 2, "{lowered}");
    let (w, h) = (45usize, 40usize);
    let input = noise([w, h], 17, |s| s as u16);
    let mut out = Buffer::<u16, 2>::new([w, h]);
    let mine = allocations_of("sliding_chunks", || sliding_chunks(&input, &mut out));
    assert_eq!(
        mine,
        vec![4 * w; h.div_ceil(16)],
        "one folded buffer of 4 rows per strip"
    );
    check(sliding_chunks::__SOURCE, "sliding_chunks", |i, o| {
        sliding_chunks(i, o)
    });
}

pipeline! {
    fn lut_bounded(input: Image<u8, 2>) -> Image<u16, 2> {
        lut(i) = (i * i / 4) as u16;
        out(x, y) = lut(input(x, y) as i32) + lut(input(x, y) as i32 / 2);
        out
    }
    schedule lut_bounded {
        lut.compute_root().bound(i, 0, 256);
    }

    fn lut_too_tight(input: Image<u8, 2>) -> Image<u16, 2> {
        lut(i) = (i * i / 4) as u16;
        out(x, y) = lut(input(x, y) as i32);
        out
    }
    schedule lut_too_tight {
        lut.compute_root().bound(i, 0, 100);
    }
}

#[test]
fn bound_fixes_a_funcs_region() {
    let input = noise([9usize, 7usize], 3, |s| (s % 40) as u8);
    let mut out = Buffer::<u16, 2>::new([9, 7]);
    let mine = allocations_of("lut_bounded", || lut_bounded(&input, &mut out));
    assert_eq!(
        mine,
        vec![256],
        "the lut is computed over exactly its bound"
    );
    let mut want = [region_image::<u16, 2>([0, 0], [9, 7])];
    interpret(
        lut_bounded::__SOURCE,
        "lut_bounded",
        &[image_of(&input.view())],
        &[],
        &mut want,
    )
    .unwrap();
    assert_matches(&out.view(), &want[0], "lut_bounded");

    // A bound smaller than what the pipeline may read is an error, before any work.
    out.as_mut_slice().fill(7);
    let err = lut_too_tight(&input, &mut out).unwrap_err();
    assert!(
        matches!(&err, Error::BoundTooSmall { func: "lut", needed, .. } if *needed == (0..256)),
        "{err:?}"
    );
    assert!(err.to_string().contains("widen the bound"), "{err}");
    assert!(
        out.as_slice().iter().all(|&v| v == 7),
        "the output is untouched"
    );
}

// Update stages under schedules: reordered, split and vectorized reduction
// loops where the result cannot depend on their order, parallel pure loops,
// and funcs with updates computed inside their consumer's loops.

/// One algorithm under several schedules, each a test against the
/// interpreter.
macro_rules! update_schedule_tests {
    ($algorithm:tt $($test:ident: $name:ident { $($schedule:tt)* })*) => {$(
        #[test]
        fn $test() {
            pipeline! {
                fn $name(input: Image<u16, 2>) -> Image<u16, 2> $algorithm
                schedule $name { $($schedule)* }
            }
            check($name::__SOURCE, stringify!($name), |i, o| $name(i, o));
        }
    )*};
}

update_schedule_tests!(
    {
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(input(rx, ry) as i32 / 4096) += 1;
        }
        out(x, y) = input(x, y) / 2 + hist(input(x, y) as i32 / 4096) as u16;
        out
    }
    histogram_with_reordered_split_vectorized_rdom: hist_reordered {
        hist.compute_root()
            .update(0)
            .reorder(ry, rx)
            .split(rx, rxo, rxi, 7)
            .vectorize(ry, 4);
        out.parallel(y);
    }
    histogram_computed_per_output_row: hist_per_row {
        hist.compute_at(out, y);
        out.parallel(y);
    }
);

update_schedule_tests!(
    {
        colsum(x) = 0u32;
        for r in rdom(0..input.height()) {
            colsum(x) += input(x, r) as u32;
        }
        out(x, y) = (colsum(x) % 65536) as u16 ^ input(x, y);
        out
    }
    column_sums_with_vectorized_pure_loop_computed_per_strip: column_sums {
        colsum.compute_at(out, xo).update().reorder(x, r).vectorize(x, 4);
        out.split(x, xo, xi, 8).reorder(xi, y, xo).parallel(xo);
    }
);

update_schedule_tests!(
    {
        ps(x, y) = input(x, y) as u32;
        for r in rdom(1..input.width()) {
            ps(r, y) = ps(r - 1, y) + ps(r, y);
        }
        out(x, y) = (ps(x, y) / 8) as u16;
        out
    }
    row_scans_in_parallel_rows: row_scans {
        ps.compute_root()
            .parallel(y)
            .update(0)
            .split(y, yo, yi, 3)
            .parallel(yo)
            .unroll(r, 2);
        out.parallel(y);
    }
    row_scans_vectorized_across_rows: row_scans_across {
        ps.compute_root().update(0).reorder(y, r).vectorize(y, 4);
    }
    row_scans_computed_per_output_strip: row_scans_per_strip {
        ps.compute_at(out, yo);
        out.split(y, yo, yi, 4).parallel(yo);
    }
);

update_schedule_tests!(
    {
        g(x, y) = input(x, y) as u32;
        for r in rdom(0..input.height()) {
            g(x, r) = g(x, r) * 3 + 1;
        }
        out(x, y) = g(x, y) as u16;
        out
    }
    pointwise_update_over_its_own_rows_in_parallel: own_rows {
        g.compute_root()
            .update(0)
            .split(r, ro, ri, 4)
            .parallel(ro)
            .vectorize(x, 8);
    }
);

pipeline! {
    /// A template's own funcs are named after the func its call is bound to.
    fn down2(f: Func) -> Func {
        dx(x, y) = (f(2 * x - 1, y) + 2 * f(2 * x, y) + f(2 * x + 1, y)) / 4;
        d(x, y) = (dx(x, 2 * y - 1) + 2 * dx(x, 2 * y) + dx(x, 2 * y + 1)) / 4;
        d
    }
    fn two_levels(input: Image<u16, 2>) -> Image<u16, 2> {
        level[0](x, y) = input.clamp_edge()(x, y) as u32;
        for l in 1..3 {
            level[l] = down2(level[l - 1]);
        }
        out(x, y) = (level[2](x, y) + level[1](x / 2, y / 2)) as u16;
        out
    }
    schedule two_levels {
        level[1].compute_root().split(y, yo, yi, 4).parallel(yo);
        level[1].dx.store_at(level[1], yo).compute_at(level[1], yi);
        level[2].dx.compute_root().parallel(y);
        level[2].compute_at(out, y);
    }
}

#[test]
fn template_funcs_scheduled_by_their_instance_name() {
    assert!(two_levels::SCHEDULE.contains("level[1].dx.store_at(level[1], yo)"));
    assert!(two_levels::LOWERED.contains("allocate level[1].dx"));
    check(two_levels::__SOURCE, "two_levels", |i, o| two_levels(i, o));
}

pipeline! {
    /// The horizontal pass slides through a vertical pass computed at the same
    /// loop (as in the unsharp example): its storage folds to the 5 rows that
    /// the vertical pass reads per output row, rounded up to 8.
    fn sliding_through(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        bx(x, y) = clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32;
        by(x, y) = bx(x, y - 2) + bx(x, y) + bx(x, y + 2);
        out(x, y) = (by(x, y) / 9) as u16;
        out
    }
    schedule sliding_through {
        out.split(y, yo, yi, 16).parallel(yo);
        by.compute_at(out, yi);
        bx.store_at(out, yo).compute_at(out, yi);
    }
}

#[test]
fn sliding_window_through_a_func_computed_inside() {
    let lowered = sliding_through::LOWERED;
    assert!(lowered.contains("bx.slide.min.y"), "{lowered}");
    assert!(lowered.contains("folded mod 8"), "{lowered}");
    let (w, h) = (21usize, 37usize);
    let input = noise([w, h], 5, |s| s as u16);
    let mut out = Buffer::<u16, 2>::new([w, h]);
    let (r, allocs) = pipeline::record_allocations(|| sliding_through(&input, &mut out));
    r.unwrap();
    let bx: Vec<usize> = allocs
        .iter()
        .filter(|a| a.func == "bx")
        .map(|a| a.elements)
        .collect();
    assert_eq!(
        bx,
        vec![8 * w; h.div_ceil(16)],
        "one folded buffer of 8 rows per strip"
    );
    check(sliding_through::__SOURCE, "sliding_through", |i, o| {
        sliding_through(i, o)
    });
}

pipeline! {
    /// Clamped reads in x, a split with a ragged tail.
    fn clamped_rows(input: Image<u16, 2>) -> Image<u16, 2> {
        let c = input.clamp_edge();
        out(x, y) = c(x - 1, y) / 2 + c(x + 1, y) / 2;
        out
    }
    schedule clamped_rows {
        out.split(x, xo, xi, 8).parallel(y);
    }
}

#[test]
fn loop_partitioning_drops_clamps_and_guards_in_the_steady_state() {
    let lowered = clamped_rows::LOWERED;
    // The edges keep the boundary condition; the steady state reads the
    // input directly and has no tail guard (y runs in parallel: kept).
    assert!(
        lowered.contains("input(clamp_edge((x - 1)), clamp_edge(y))"),
        "{lowered}"
    );
    assert!(
        lowered.contains("input((x - 1), clamp_edge(y))"),
        "{lowered}"
    );
    // (The edge tiles' inner loops are partitioned too: the steady tiles
    // are the part with no clamp in x.)
    let steady = lowered
        .split("for out.xo")
        .find(|part| {
            part.contains("input((x - 1), clamp_edge(y))") && !part.contains("clamp_edge((x - 1))")
        })
        .unwrap();
    assert!(!steady.contains("if ("), "{lowered}");
    check(clamped_rows::__SOURCE, "clamped_rows", |i, o| {
        clamped_rows(i, o)
    });
}
