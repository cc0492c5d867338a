//! The example programs, tested: every pipeline in `examples/` against the plain-Rust
//! `reference` beside it, at several sizes (1x1, odd sizes, sizes that are not multiples
//! of any tile or vector width), on cropped outputs whose origin is not zero, and on a
//! few inputs whose answer is known without any reference (constant images).
//!
//! Integer pipelines (blur, histogram_equalize) must match their reference bit for bit.
//! Float pipelines must match within the tolerance stated in each assertion: the
//! references use the same f32 operations in the same order, so the tolerances only
//! absorb fused multiply-adds and the different ways of writing `lerp`.
//!
//! A cropped output must equal the same part of the full output (the pipeline computes
//! exactly the region of the buffer it is given, reading whatever input that needs) and
//! must leave the rest of the underlying buffer untouched.

// Each example is a standalone program that includes `examples/support`;
// included here together, they include it once each.
#![allow(clippy::duplicate_mod)]

mod common;

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

use pipeline::{Buffer, Element, ViewMut};

/// Image sizes every 2-D example runs at: a single pixel, thin strips, a square, odd
/// sizes, and one wider than a 64-byte vector of u8.
const SIZES: &[[usize; 2]] = &[[1, 1], [2, 3], [7, 1], [1, 6], [16, 16], [37, 23], [70, 9]];

/// The full output size and the crops the crop tests compute: an interior window, a
/// window touching the far corner, a single pixel at the origin and a full-height column.
const CROP_FULL: [usize; 2] = [37, 23];
const CROPS: &[([i64; 2], [usize; 2])] = &[
    ([5, 3], [20, 11]),
    ([30, 17], [7, 6]),
    ([0, 0], [1, 1]),
    ([36, 0], [1, 23]),
];

/// The coordinates of element `index` of a dense buffer of shape `shape` (x fastest).
fn coordinates<const N: usize>(mut index: usize, shape: [usize; N]) -> [usize; N] {
    let mut coordinates = [0; N];
    for d in 0..N {
        coordinates[d] = index % shape[d];
        index /= shape[d];
    }
    coordinates
}

/// Asserts that two buffers have the same shape and that `same` holds for every pair of
/// elements, naming the first element where it does not.
fn assert_all<T: Element, const N: usize>(
    actual: &Buffer<T, N>,
    expected: &Buffer<T, N>,
    same: impl Fn(T, T) -> bool,
    what: &str,
) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shapes differ");
    let mismatches = actual
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .filter(|&(&a, &e)| !same(a, e))
        .count();
    if let Some(index) = actual
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .position(|(&a, &e)| !same(a, e))
    {
        panic!(
            "{what}: {mismatches} of {} elements differ; \
             the first at {:?}: got {:?}, expected {:?}",
            actual.as_slice().len(),
            coordinates(index, actual.shape()),
            actual.as_slice()[index],
            expected.as_slice()[index],
        );
    }
}

/// Asserts bit-for-bit equality.
fn assert_same<T: Element, const N: usize>(
    actual: &Buffer<T, N>,
    expected: &Buffer<T, N>,
    what: &str,
) {
    assert_all(
        actual,
        expected,
        |a, e| a == e,
        &format!("{what} (bit for bit)"),
    );
}

/// Asserts `|actual - expected| <= tolerance` everywhere (a NaN never passes).
fn assert_close<const N: usize>(
    actual: &Buffer<f32, N>,
    expected: &Buffer<f32, N>,
    tolerance: f32,
    what: &str,
) {
    assert_all(
        actual,
        expected,
        |a, e| (a - e).abs() <= tolerance,
        &format!("{what} (within {tolerance:e} absolute)"),
    );
}

/// Runs `run` on the part `origin`/`shape` of a buffer of shape `full` whose elements all
/// start as `sentinel`, and returns the whole buffer.
fn run_cropped<T: Element, const N: usize>(
    full: [usize; N],
    origin: [i64; N],
    shape: [usize; N],
    sentinel: T,
    run: impl FnOnce(&mut ViewMut<'_, T, N>),
) -> Buffer<T, N> {
    let mut buffer = Buffer::from_fn(full, |_| sentinel);
    {
        let mut whole = buffer.view_mut();
        let mut cropped = whole
            .crop(origin, shape)
            .expect("the crop lies inside the buffer");
        run(&mut cropped);
    }
    buffer
}

/// Asserts that `got` satisfies `same` against `full_output` inside the crop
/// `origin`/`shape` and still holds `sentinel` everywhere outside it.
fn assert_crop<T: Element, const N: usize>(
    got: &Buffer<T, N>,
    full_output: &Buffer<T, N>,
    origin: [i64; N],
    shape: [usize; N],
    sentinel: T,
    same: impl Fn(T, T) -> bool,
    what: &str,
) {
    assert_eq!(got.shape(), full_output.shape(), "{what}: shapes differ");
    for (index, (&g, &f)) in got
        .as_slice()
        .iter()
        .zip(full_output.as_slice())
        .enumerate()
    {
        let at = coordinates(index, got.shape());
        let inside = (0..N)
            .all(|d| at[d] as i64 >= origin[d] && (at[d] as i64) < origin[d] + shape[d] as i64);
        if inside {
            assert!(
                same(g, f),
                "{what}: crop {origin:?}+{shape:?} at {at:?}: got {g:?}, the full output has {f:?}"
            );
        } else {
            assert!(
                g == sentinel,
                "{what}: crop {origin:?}+{shape:?} wrote {g:?} at {at:?}, outside the crop"
            );
        }
    }
}

/// An RGB image of `size` with every element equal to `value`.
fn constant_rgb(size: [usize; 2], value: f32) -> Buffer<f32, 3> {
    Buffer::from_fn([size[0], size[1], 3], |_| value)
}

// ---------------------------------------------------------------------------------------
// blur: u16, bit for bit.

fn run_blur(input: &Buffer<u16, 2>) -> Buffer<u16, 2> {
    let mut out = Buffer::<u16, 2>::new(blur::blur3x3::output_shape(input.shape()));
    blur::blur3x3(input, &mut out).expect("blur3x3 runs");
    out
}

#[test]
fn blur_matches_reference() {
    for &size in SIZES {
        let input = blur::make_input(size[0], size[1]);
        assert_same(
            &run_blur(&input),
            &blur::reference(&input),
            &format!("blur3x3 at {size:?}"),
        );
    }
}

#[test]
fn blur_output_shape_is_the_input_shape() {
    for &size in SIZES {
        assert_eq!(blur::blur3x3::output_shape(size), size);
    }
}

#[test]
fn blur_cropped_output_equals_part_of_the_full_output() {
    let input = blur::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_blur(&input);
    for &(origin, shape) in CROPS {
        let got = run_cropped(CROP_FULL, origin, shape, 0xABCD, |out| {
            blur::blur3x3(&input, out).expect("blur3x3 runs")
        });
        assert_crop(&got, &full, origin, shape, 0xABCD, |a, b| a == b, "blur3x3");
    }
}

#[test]
fn blur_output_buffer_with_an_origin_computes_that_window() {
    let input = blur::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_blur(&input);
    let (origin, shape) = ([9i64, 4i64], [13usize, 15usize]);
    let mut window = Buffer::<u16, 2>::new(shape);
    blur::blur3x3(&input, &mut window.view_mut().with_origin(origin)).expect("blur3x3 runs");
    for y in 0..shape[1] {
        for x in 0..shape[0] {
            let (fx, fy) = (x + origin[0] as usize, y + origin[1] as usize);
            assert_eq!(
                window[[x, y]],
                full[[fx, fy]],
                "window pixel ({x}, {y}) is full-output pixel ({fx}, {fy})"
            );
        }
    }
}

#[test]
fn blur_reads_an_input_view() {
    let input = blur::make_input(CROP_FULL[0], CROP_FULL[1]);
    let mut out = Buffer::<u16, 2>::new(CROP_FULL);
    blur::blur3x3(&input.view(), &mut out).expect("blur3x3 runs on a view");
    assert_same(&out, &blur::reference(&input), "blur3x3 of a view");
}

#[test]
fn blur_keeps_a_constant_image() {
    for value in [0u16, 1, 12345, u16::MAX] {
        let input = Buffer::<u16, 2>::from_fn([13, 9], |_| value);
        let expected = Buffer::<u16, 2>::from_fn([13, 9], |_| value);
        assert_same(
            &run_blur(&input),
            &expected,
            &format!("blur3x3 of the constant {value}"),
        );
        assert_same(
            &blur::reference(&input),
            &expected,
            &format!("reference blur of the constant {value}"),
        );
    }
}

// ---------------------------------------------------------------------------------------
// unsharp: f32 RGB.

/// Results are in [0, 1]; the weights come from `exp`, and the sums and the final mix may
/// be fused into multiply-adds, each worth an ulp or so: 1e-5 absolute covers them with a
/// wide margin.
const UNSHARP_TOLERANCE: f32 = 1e-5;
const SIGMA: f32 = 1.5;
const AMOUNT: f32 = 1.5;

fn run_unsharp(input: &Buffer<f32, 3>, sigma: f32, amount: f32) -> Buffer<f32, 3> {
    let mut out = Buffer::<f32, 3>::new(unsharp::unsharp::output_shape(input.shape()));
    unsharp::unsharp(input, sigma, amount, &mut out).expect("unsharp runs");
    out
}

#[test]
fn unsharp_matches_reference() {
    for &size in SIZES {
        let input = unsharp::make_input(size[0], size[1]);
        for (sigma, amount) in [(SIGMA, AMOUNT), (0.8, 3.0)] {
            assert_close(
                &run_unsharp(&input, sigma, amount),
                &unsharp::reference(&input, sigma, amount),
                UNSHARP_TOLERANCE,
                &format!("unsharp at {size:?}, sigma {sigma}, amount {amount}"),
            );
        }
    }
}

#[test]
fn unsharp_output_shape_is_the_input_shape() {
    for &size in SIZES {
        let shape = [size[0], size[1], 3];
        assert_eq!(unsharp::unsharp::output_shape(shape), shape);
    }
}

#[test]
fn unsharp_cropped_output_equals_part_of_the_full_output() {
    let input = unsharp::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_unsharp(&input, SIGMA, AMOUNT);
    let full_shape = [CROP_FULL[0], CROP_FULL[1], 3];
    let mut crops: Vec<([i64; 3], [usize; 3])> = CROPS
        .iter()
        .map(|&(o, s)| ([o[0], o[1], 0], [s[0], s[1], 3]))
        .collect();
    // A crop in the channel dimension too: only green and blue of a window.
    crops.push(([4, 2, 1], [10, 9, 2]));
    for (origin, shape) in crops {
        let got = run_cropped(full_shape, origin, shape, -7.0, |out| {
            unsharp::unsharp(&input, SIGMA, AMOUNT, out).expect("unsharp runs")
        });
        assert_crop(&got, &full, origin, shape, -7.0, |a, b| a == b, "unsharp");
    }
}

#[test]
fn unsharp_with_zero_amount_returns_the_input() {
    let input = unsharp::make_input(CROP_FULL[0], CROP_FULL[1]);
    assert_same(
        &run_unsharp(&input, SIGMA, 0.0),
        &input,
        "unsharp with amount 0",
    );
}

#[test]
fn unsharp_keeps_a_constant_image() {
    for value in [0.0, 0.3, 1.0] {
        let input = constant_rgb([11, 6], value);
        assert_close(
            &run_unsharp(&input, SIGMA, AMOUNT),
            &input,
            UNSHARP_TOLERANCE,
            &format!("unsharp of the constant {value}"),
        );
        assert_close(
            &unsharp::reference(&input, SIGMA, AMOUNT),
            &input,
            UNSHARP_TOLERANCE,
            &format!("reference unsharp of the constant {value}"),
        );
    }
}

// ---------------------------------------------------------------------------------------
// harris: f32 RGB in, f32 response out.

/// Responses of the test images stay below about 1 in magnitude; 1e-5 absolute leaves
/// room for fused multiply-adds in the gradients and the determinant.
const HARRIS_TOLERANCE: f32 = 1e-5;

fn run_harris(input: &Buffer<f32, 3>) -> Buffer<f32, 2> {
    let mut out = Buffer::<f32, 2>::new(harris::harris::output_shape(input.shape()));
    harris::harris(input, &mut out).expect("harris runs");
    out
}

#[test]
fn harris_matches_reference() {
    for &size in SIZES {
        let input = harris::make_input(size[0], size[1]);
        assert_close(
            &run_harris(&input),
            &harris::reference(&input),
            HARRIS_TOLERANCE,
            &format!("harris at {size:?}"),
        );
    }
}

#[test]
fn harris_output_shape_drops_the_channels() {
    for &size in SIZES {
        assert_eq!(harris::harris::output_shape([size[0], size[1], 3]), size);
    }
}

#[test]
fn harris_cropped_output_equals_part_of_the_full_output() {
    let input = harris::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_harris(&input);
    for &(origin, shape) in CROPS {
        let got = run_cropped(CROP_FULL, origin, shape, -7.0, |out| {
            harris::harris(&input, out).expect("harris runs")
        });
        assert_crop(&got, &full, origin, shape, -7.0, |a, b| a == b, "harris");
    }
}

#[test]
fn harris_of_a_constant_image_is_zero() {
    for value in [0.0, 0.6, 1.0] {
        let input = constant_rgb([12, 7], value);
        let zero = Buffer::<f32, 2>::new([12, 7]);
        assert_same(
            &run_harris(&input),
            &zero,
            &format!("harris of the constant {value}"),
        );
        assert_same(
            &harris::reference(&input),
            &zero,
            &format!("reference harris of the constant {value}"),
        );
    }
}

#[test]
fn harris_finds_the_corner_of_a_square() {
    // A bright square on black: the response must peak at its corners, not on its edges
    // or inside it. Checked on the reference and on the pipeline alike.
    let input = Buffer::<f32, 3>::from_fn([24, 24, 3], |[x, y, _]| {
        if (8..16).contains(&x) && (8..16).contains(&y) {
            1.0
        } else {
            0.0
        }
    });
    for (name, response) in [
        ("pipeline", run_harris(&input)),
        ("reference", harris::reference(&input)),
    ] {
        let corner = response[[8, 8]].max(response[[7, 7]]);
        assert!(
            corner > 0.0,
            "{name}: no positive response at the corner (8, 8)"
        );
        assert!(
            response[[12, 8]] < corner,
            "{name}: an edge responds more than the corner"
        );
        assert!(
            response[[12, 12]].abs() < 1e-6,
            "{name}: the flat inside of the square responds"
        );
    }
}

// ---------------------------------------------------------------------------------------
// histogram_equalize: u8, bit for bit.

fn run_equalize(input: &Buffer<u8, 2>) -> Buffer<u8, 2> {
    let mut out = Buffer::<u8, 2>::new(histogram_equalize::histogram_equalize::output_shape(
        input.shape(),
    ));
    histogram_equalize::histogram_equalize(input, &mut out).expect("histogram_equalize runs");
    out
}

#[test]
fn histogram_equalize_matches_reference() {
    for &size in SIZES {
        let input = histogram_equalize::make_input(size[0], size[1]);
        assert_same(
            &run_equalize(&input),
            &histogram_equalize::reference(&input),
            &format!("histogram_equalize at {size:?}"),
        );
    }
    // Every level present, including 0 and 255.
    let all_levels = Buffer::<u8, 2>::from_fn([16, 16], |[x, y]| (x + 16 * y) as u8);
    assert_same(
        &run_equalize(&all_levels),
        &histogram_equalize::reference(&all_levels),
        "histogram_equalize of all 256 levels",
    );
}

#[test]
fn histogram_equalize_output_shape_is_the_input_shape() {
    for &size in SIZES {
        assert_eq!(
            histogram_equalize::histogram_equalize::output_shape(size),
            size
        );
    }
}

#[test]
fn histogram_equalize_cropped_output_equals_part_of_the_full_output() {
    let input = histogram_equalize::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_equalize(&input);
    for &(origin, shape) in CROPS {
        let got = run_cropped(CROP_FULL, origin, shape, 0xAB, |out| {
            histogram_equalize::histogram_equalize(&input, out).expect("histogram_equalize runs")
        });
        assert_crop(
            &got,
            &full,
            origin,
            shape,
            0xAB,
            |a, b| a == b,
            "histogram_equalize",
        );
    }
}

#[test]
fn histogram_equalize_maps_a_constant_image_to_white() {
    for value in [0u8, 100, 255] {
        let input = Buffer::<u8, 2>::from_fn([9, 5], |_| value);
        let white = Buffer::<u8, 2>::from_fn([9, 5], |_| 255);
        assert_same(
            &run_equalize(&input),
            &white,
            &format!("histogram_equalize of the constant {value}"),
        );
        assert_same(
            &histogram_equalize::reference(&input),
            &white,
            &format!("reference of the constant {value}"),
        );
    }
}

#[test]
fn histogram_equalize_keeps_the_order_of_levels_and_stretches_them() {
    let input = histogram_equalize::make_input(40, 30);
    let out = run_equalize(&input);
    let (inp, outp) = (input.as_slice(), out.as_slice());
    for i in 0..inp.len() {
        for j in 0..inp.len() {
            if inp[i] < inp[j] {
                assert!(
                    outp[i] <= outp[j],
                    "levels {} < {} map to {} > {}",
                    inp[i],
                    inp[j],
                    outp[i],
                    outp[j]
                );
            }
        }
    }
    let input_span = inp.iter().max().unwrap() - inp.iter().min().unwrap();
    let output_span = outp.iter().max().unwrap() - outp.iter().min().unwrap();
    assert!(
        output_span > input_span,
        "equalization spans {output_span} levels, the input {input_span}"
    );
}

// ---------------------------------------------------------------------------------------
// pyramid: f32 gray, four outputs of decreasing size.

/// The pyramid's weights are powers of two and small integers, so the only differences
/// left are fused multiply-adds.
const PYRAMID_TOLERANCE: f32 = 1e-5;

type Pyramid = (
    Buffer<f32, 2>,
    Buffer<f32, 2>,
    Buffer<f32, 2>,
    Buffer<f32, 2>,
);

fn run_pyramid(input: &Buffer<f32, 2>) -> Pyramid {
    let (s0, s1, s2, s3) = pyramid::pyramid::output_shape(input.shape());
    let (mut lap0, mut lap1, mut lap2, mut gauss3) = (
        Buffer::new(s0),
        Buffer::new(s1),
        Buffer::new(s2),
        Buffer::new(s3),
    );
    pyramid::pyramid(input, &mut lap0, &mut lap1, &mut lap2, &mut gauss3).expect("pyramid runs");
    (lap0, lap1, lap2, gauss3)
}

fn assert_pyramids_close(actual: &Pyramid, expected: &Pyramid, tolerance: f32, what: &str) {
    assert_close(
        &actual.0,
        &expected.0,
        tolerance,
        &format!("{what}, Laplacian level 0"),
    );
    assert_close(
        &actual.1,
        &expected.1,
        tolerance,
        &format!("{what}, Laplacian level 1"),
    );
    assert_close(
        &actual.2,
        &expected.2,
        tolerance,
        &format!("{what}, Laplacian level 2"),
    );
    assert_close(
        &actual.3,
        &expected.3,
        tolerance,
        &format!("{what}, Gaussian level 3"),
    );
}

#[test]
fn pyramid_matches_reference() {
    for &size in SIZES {
        let input = pyramid::make_input(size[0], size[1]);
        assert_pyramids_close(
            &run_pyramid(&input),
            &pyramid::reference(&input),
            PYRAMID_TOLERANCE,
            &format!("pyramid at {size:?}"),
        );
    }
}

#[test]
fn pyramid_output_shapes_halve_rounding_up() {
    for &size in SIZES.iter().chain(&[[1024, 768], [33, 17]]) {
        let expected = (
            pyramid::level_shape(size, 0),
            pyramid::level_shape(size, 1),
            pyramid::level_shape(size, 2),
            pyramid::level_shape(size, 3),
        );
        assert_eq!(
            pyramid::pyramid::output_shape(size),
            expected,
            "pyramid output shapes for {size:?}"
        );
    }
    assert_eq!(pyramid::level_shape([37, 23], 3), [5, 3]);
}

#[test]
fn pyramid_cropped_outputs_equal_part_of_the_full_outputs() {
    let input = pyramid::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_pyramid(&input);
    let shapes = [0, 1, 2, 3].map(|level| pyramid::level_shape(CROP_FULL, level));
    // One crop per output, each at a non-zero origin inside its level ([37, 23], [19, 12],
    // [10, 6], [5, 3]).
    let crops: [([i64; 2], [usize; 2]); 4] = [
        ([3, 2], [30, 17]),
        ([5, 7], [9, 5]),
        ([1, 1], [8, 5]),
        ([4, 1], [1, 2]),
    ];
    let sentinel = -7.0f32;
    let mut buffers = shapes.map(|shape| Buffer::from_fn(shape, |_| sentinel));
    {
        let [b0, b1, b2, b3] = &mut buffers;
        let mut whole0 = b0.view_mut();
        let mut v0 = whole0
            .crop(crops[0].0, crops[0].1)
            .expect("crop inside level 0");
        let mut whole1 = b1.view_mut();
        let mut v1 = whole1
            .crop(crops[1].0, crops[1].1)
            .expect("crop inside level 1");
        let mut whole2 = b2.view_mut();
        let mut v2 = whole2
            .crop(crops[2].0, crops[2].1)
            .expect("crop inside level 2");
        let mut whole3 = b3.view_mut();
        let mut v3 = whole3
            .crop(crops[3].0, crops[3].1)
            .expect("crop inside level 3");
        pyramid::pyramid(&input, &mut v0, &mut v1, &mut v2, &mut v3)
            .expect("pyramid runs on crops");
    }
    let full = [&full.0, &full.1, &full.2, &full.3];
    for level in 0..4 {
        let (origin, shape) = crops[level];
        assert_crop(
            &buffers[level],
            full[level],
            origin,
            shape,
            sentinel,
            |a, b| a == b,
            &format!("pyramid output {level}"),
        );
    }
}

#[test]
fn pyramid_of_a_constant_image_has_no_detail() {
    for size in [[1, 1], [13, 6]] {
        let input = Buffer::<f32, 2>::from_fn(size, |_| 0.75);
        for (name, (lap0, lap1, lap2, gauss3)) in [
            ("pipeline", run_pyramid(&input)),
            ("reference", pyramid::reference(&input)),
        ] {
            for (level, lap) in [lap0, lap1, lap2].iter().enumerate() {
                let zero = Buffer::<f32, 2>::new(lap.shape());
                assert_close(
                    lap,
                    &zero,
                    1e-6,
                    &format!("{name}: Laplacian level {level} of a constant {size:?}"),
                );
            }
            let constant = Buffer::<f32, 2>::from_fn(gauss3.shape(), |_| 0.75);
            assert_close(
                &gauss3,
                &constant,
                1e-6,
                &format!("{name}: Gaussian level 3 of a constant {size:?}"),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// bilateral_grid: f32 gray.

/// The grid sums many f32 values and slicing is a chain of `lerp`s, whose rounding depends
/// on how `lerp` is written (the reference uses `a + (b - a) * t`; `a * (1 - t) + b * t`
/// differs by a few 1e-7 on results in [0, 1]), so 1e-5 absolute leaves a wide margin and
/// is still far below any real mistake (a grid node off by one moves results by 1e-3 or
/// more).
const BILATERAL_TOLERANCE: f32 = 1e-5;

fn run_bilateral(input: &Buffer<f32, 2>) -> Buffer<f32, 2> {
    let mut out =
        Buffer::<f32, 2>::new(bilateral_grid::bilateral_grid::output_shape(input.shape()));
    bilateral_grid::bilateral_grid(input, &mut out).expect("bilateral_grid runs");
    out
}

#[test]
fn bilateral_grid_matches_reference() {
    for &size in SIZES.iter().chain(&[[64, 40]]) {
        let input = bilateral_grid::make_input(size[0], size[1]);
        assert_close(
            &run_bilateral(&input),
            &bilateral_grid::reference(&input),
            BILATERAL_TOLERANCE,
            &format!("bilateral_grid at {size:?}"),
        );
    }
}

#[test]
fn bilateral_grid_output_shape_is_the_input_shape() {
    for &size in SIZES {
        assert_eq!(bilateral_grid::bilateral_grid::output_shape(size), size);
    }
}

#[test]
fn bilateral_grid_cropped_output_equals_part_of_the_full_output() {
    let input = bilateral_grid::make_input(CROP_FULL[0], CROP_FULL[1]);
    let full = run_bilateral(&input);
    for &(origin, shape) in CROPS {
        let got = run_cropped(CROP_FULL, origin, shape, -7.0, |out| {
            bilateral_grid::bilateral_grid(&input, out).expect("bilateral_grid runs")
        });
        assert_crop(
            &got,
            &full,
            origin,
            shape,
            -7.0,
            |a, b| a == b,
            "bilateral_grid",
        );
    }
}

#[test]
fn bilateral_grid_output_stays_within_the_input_range() {
    // Every output is a weighted average of input intensities.
    let input = bilateral_grid::make_input(45, 31);
    let lowest = input
        .as_slice()
        .iter()
        .fold(f32::INFINITY, |m, &v| m.min(v));
    let highest = input
        .as_slice()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    for (name, out) in [
        ("pipeline", run_bilateral(&input)),
        ("reference", bilateral_grid::reference(&input)),
    ] {
        for &v in out.as_slice() {
            assert!(
                v >= lowest - 1e-5 && v <= highest + 1e-5,
                "{name}: output {v} outside the input range [{lowest}, {highest}]"
            );
        }
    }
}

#[test]
fn bilateral_grid_keeps_a_constant_image() {
    for value in [0.0, 0.25, 0.7, 1.0] {
        let input = Buffer::<f32, 2>::from_fn([19, 10], |_| value);
        assert_close(
            &run_bilateral(&input),
            &input,
            1e-5,
            &format!("bilateral_grid of the constant {value}"),
        );
        assert_close(
            &bilateral_grid::reference(&input),
            &input,
            1e-5,
            &format!("reference of the constant {value}"),
        );
    }
}

#[test]
fn bilateral_grid_keeps_a_step_edge_sharp() {
    // A step from 0.2 to 0.8: smoothing across it would pull the pixels next to it
    // toward 0.5; the bilateral grid keeps them within a few hundredths of their side.
    let input = Buffer::<f32, 2>::from_fn([32, 16], |[x, _]| if x < 16 { 0.2 } else { 0.8 });
    for (name, out) in [
        ("pipeline", run_bilateral(&input)),
        ("reference", bilateral_grid::reference(&input)),
    ] {
        for y in 0..16 {
            assert!(
                (out[[15, y]] - 0.2).abs() < 0.02,
                "{name}: pixel (15, {y}) is {} next to the edge",
                out[[15, y]]
            );
            assert!(
                (out[[16, y]] - 0.8).abs() < 0.02,
                "{name}: pixel (16, {y}) is {} next to the edge",
                out[[16, y]]
            );
        }
    }
}

/// Every example's generated code against the reference interpreter, bit for bit
/// (the interpreter evaluates the same f32 operations in the same order), on full
/// and cropped outputs.
mod against_the_interpreter {
    use super::*;
    use crate::common::{assert_matches, for_each_isa, image_of, interpret, region_image};
    use pipeline_core::interp::Value;

    const SIZES: &[[usize; 2]] = &[[1, 1], [7, 5], [37, 23]];

    /// The output regions at each size: the whole image and an off-origin crop.
    fn regions([w, h]: [usize; 2]) -> [([i64; 2], [usize; 2]); 2] {
        [
            ([0, 0], [w, h]),
            ([(w / 3) as i64, (h / 2) as i64], [w - w / 3, h - h / 2]),
        ]
    }

    #[test]
    fn blur() {
        for_each_isa(|_| {
            for &[w, h] in SIZES {
                let input = blur::make_input(w, h);
                for (origin, shape) in regions([w, h]) {
                    let mut out = Buffer::<u16, 2>::new(shape);
                    blur::blur3x3(&input, &mut out.view_mut().with_origin(origin)).unwrap();
                    let mut want = [region_image::<u16, 2>(origin, shape)];
                    interpret(
                        blur::blur3x3::__SOURCE,
                        "blur3x3",
                        &[image_of(&input.view())],
                        &[],
                        &mut want,
                    )
                    .unwrap();
                    assert_matches(&out.view().with_origin(origin), &want[0], "blur");
                }
            }
        });
    }

    #[test]
    fn unsharp() {
        for_each_isa(|_| {
            for &[w, h] in SIZES {
                let input = unsharp::make_input(w, h);
                let mut out = Buffer::<f32, 3>::new([w, h, 3]);
                unsharp::unsharp(&input, 1.5, 0.8, &mut out).unwrap();
                let mut want = [region_image::<f32, 3>([0, 0, 0], [w, h, 3])];
                let params = [Value::F32(1.5), Value::F32(0.8)];
                interpret(
                    unsharp::unsharp::__SOURCE,
                    "unsharp",
                    &[image_of(&input.view())],
                    &params,
                    &mut want,
                )
                .unwrap();
                assert_matches(&out.view(), &want[0], "unsharp");
            }
        });
    }

    #[test]
    fn harris() {
        for_each_isa(|_| {
            for &[w, h] in SIZES {
                let input = harris::make_input(w, h);
                for (origin, shape) in regions([w, h]) {
                    let mut out = Buffer::<f32, 2>::new(shape);
                    harris::harris(&input, &mut out.view_mut().with_origin(origin)).unwrap();
                    let mut want = [region_image::<f32, 2>(origin, shape)];
                    interpret(
                        harris::harris::__SOURCE,
                        "harris",
                        &[image_of(&input.view())],
                        &[],
                        &mut want,
                    )
                    .unwrap();
                    assert_matches(&out.view().with_origin(origin), &want[0], "harris");
                }
            }
        });
    }

    #[test]
    fn histogram_equalize() {
        for_each_isa(|_| {
            for &[w, h] in SIZES {
                let input = histogram_equalize::make_input(w, h);
                for (origin, shape) in regions([w, h]) {
                    let mut out = Buffer::<u8, 2>::new(shape);
                    histogram_equalize::histogram_equalize(
                        &input,
                        &mut out.view_mut().with_origin(origin),
                    )
                    .unwrap();
                    let mut want = [region_image::<u8, 2>(origin, shape)];
                    let source = histogram_equalize::histogram_equalize::__SOURCE;
                    interpret(
                        source,
                        "histogram_equalize",
                        &[image_of(&input.view())],
                        &[],
                        &mut want,
                    )
                    .unwrap();
                    assert_matches(
                        &out.view().with_origin(origin),
                        &want[0],
                        "histogram_equalize",
                    );
                }
            }
        });
    }

    #[test]
    fn pyramid() {
        for_each_isa(|_| {
            for &[w, h] in SIZES {
                let input = pyramid::make_input(w, h);
                let shapes = [0, 1, 2, 3].map(|l| pyramid::level_shape([w, h], l));
                let [mut l0, mut l1, mut l2, mut g3] = shapes.map(Buffer::<f32, 2>::new);
                pyramid::pyramid(&input, &mut l0, &mut l1, &mut l2, &mut g3).unwrap();
                let mut want = shapes.map(|s| region_image::<f32, 2>([0, 0], s));
                interpret(
                    pyramid::pyramid::__SOURCE,
                    "pyramid",
                    &[image_of(&input.view())],
                    &[],
                    &mut want,
                )
                .unwrap();
                for (k, got) in [&l0, &l1, &l2, &g3].into_iter().enumerate() {
                    assert_matches(&got.view(), &want[k], &format!("pyramid output {k}"));
                }
            }
        });
    }

    #[test]
    fn bilateral_grid() {
        for_each_isa(|_| {
            for &[w, h] in SIZES {
                let input = bilateral_grid::make_input(w, h);
                for (origin, shape) in regions([w, h]) {
                    let mut out = Buffer::<f32, 2>::new(shape);
                    bilateral_grid::bilateral_grid(&input, &mut out.view_mut().with_origin(origin))
                        .unwrap();
                    let mut want = [region_image::<f32, 2>(origin, shape)];
                    let source = bilateral_grid::bilateral_grid::__SOURCE;
                    interpret(
                        source,
                        "bilateral_grid",
                        &[image_of(&input.view())],
                        &[],
                        &mut want,
                    )
                    .unwrap();
                    assert_matches(&out.view().with_origin(origin), &want[0], "bilateral_grid");
                }
            }
        });
    }
}

/// Every example's outputs as bytes, floats by their bits.
fn all_outputs(size: [usize; 2]) -> Vec<(&'static str, Vec<u64>)> {
    fn bits<T: Element + Into<f64>, const N: usize>(b: &Buffer<T, N>) -> Vec<u64> {
        b.as_slice().iter().map(|&v| v.into().to_bits()).collect()
    }
    let [w, h] = size;
    let pyramid = run_pyramid(&pyramid::make_input(w, h));
    vec![
        ("blur", bits(&run_blur(&blur::make_input(w, h)))),
        (
            "unsharp",
            bits(&run_unsharp(&unsharp::make_input(w, h), 1.5, 1.5)),
        ),
        ("harris", bits(&run_harris(&harris::make_input(w, h)))),
        (
            "histogram_equalize",
            bits(&run_equalize(&histogram_equalize::make_input(w, h))),
        ),
        (
            "bilateral_grid",
            bits(&run_bilateral(&bilateral_grid::make_input(w, h))),
        ),
        ("pyramid lap[0]", bits(&pyramid.0)),
        ("pyramid gauss[3]", bits(&pyramid.3)),
    ]
}

/// Outputs do not depend on the number of threads nor on the instruction-set
/// level, floats included (no example asks for `fast_*`): bit for bit at 1,
/// 2 and 7 threads and at every level the machine has.
#[test]
fn outputs_are_the_same_at_any_thread_count_and_level() {
    let size = [131, 77];
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let reference =
        pool(1).install(|| pipeline::rt::with_isa(pipeline::rt::Isa::Scalar, || all_outputs(size)));
    for threads in [1, 2, 7] {
        common::for_each_isa(|isa| {
            let got = pool(threads).install(|| {
                let level = pipeline::rt::Isa::from_name(isa).unwrap();
                pipeline::rt::with_isa(level, || all_outputs(size))
            });
            for ((name, want), (_, got)) in reference.iter().zip(&got) {
                assert!(
                    want == got,
                    "{name} at {threads} threads and {isa} differs from one scalar thread"
                );
            }
        });
    }
}
