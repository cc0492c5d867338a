//! Inputs read where they lie: a schedule's `input.dim(d).set_stride(s)`
//! (Halide's `set_stride`) declares an input's layout, the entry checks the
//! buffer against it, and vector code reads dimension 0 by the declared
//! stride (interleaved RGB, RGBA, pairs) instead of a dense copy. Every
//! pipeline runs at every instruction-set level and equals the interpreter
//! bit for bit, on outputs of widths no vector divides, crops included.

mod common;

use common::*;
use pipeline::{pipeline, record_allocations, Buffer, Element, Error, View};
use pipeline_core::interp::Image;

pipeline! {
    /// Grey from interleaved RGB: each channel is a load of stride 3.
    fn grey(rgb: Image<u8, 3>) -> Image<u8, 2> {
        out(x, y) = ((rgb(x, y, 0) as u16 * 77 + rgb(x, y, 1) as u16 * 150
            + rgb(x, y, 2) as u16 * 29) >> 8) as u8;
        out
    }
    schedule grey {
        rgb.dim(0).set_stride(3).dim(2).set_stride(1);
        out.vectorize(x, 32).parallel(y);
    }

    /// A horizontal stencil on interleaved RGBA through a boundary
    /// condition (edge loops and an interior at full width), planar out.
    fn soften(rgba: Image<f32, 3>) -> Image<f32, 3> {
        let c = rgba.clamp_edge();
        out(x, y, ch) = (c(x - 1, y, ch) + c(x, y, ch) * 2.0 + c(x + 1, y, ch)) * 0.25;
        out
    }
    schedule soften {
        rgba.dim(0).set_stride(4);
        out.vectorize(x, 8);
    }

    /// Pairs of u16 side by side (stride 2), read in steps of 2 (`x`), 4
    /// (`2 * x + 1`), 6 (`3 * x`, one load per lane) and backwards.
    fn pairs(p: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = p(x, y) ^ p(2 * x + 1, y) * 3 ^ p(3 * x, y) * 5
            ^ p(p.width() - 1 - x, y) * 7;
        out
    }
    schedule pairs {
        p.dim(0).set_stride(2);
        out.vectorize(x, 16);
    }

    /// All four channels of interleaved RGBA, read in one go, and the next
    /// pixel's first channel, read apart.
    fn rgba_phases(rgba: Image<u16, 3>) -> Image<u16, 2> {
        out(x, y) = rgba(x, y, 0) ^ rgba(x, y, 1) * 3 ^ rgba(x, y, 2) * 5 ^ rgba(x, y, 3) * 7
            ^ rgba(x + 1, y, 0) * 9;
        out
    }
    schedule rgba_phases {
        rgba.dim(0).set_stride(4).dim(2).set_stride(1);
        out.vectorize(x, 16);
    }

    /// Every phase of stride 3 from the third element on, in a dense image;
    /// one more read in the test of a `select` and one in its branch.
    fn flat_phases(flat: Image<f32, 2>) -> Image<f32, 2> {
        out(x, y) = flat(3 * x + 2, y) + flat(3 * x + 3, y) * 2.0 + flat(3 * x + 4, y) * 4.0
            + select(flat(3 * x, y) > 0.5, flat(3 * x + 1, y), 0.0);
        out
    }
    schedule flat_phases {
        out.vectorize(x, 8);
    }

    /// No vector loop: the declaration is still the contract.
    fn scalar_grey(rgb: Image<u8, 3>) -> Image<u8, 2> {
        out(x, y) = rgb(x, y, 0) / 3 + rgb(x, y, 1) / 3 + rgb(x, y, 2) / 3;
        out
    }
    schedule scalar_grey {
        rgb.dim(0).set_stride(3);
    }
}

/// Noise in an image of 2 or 3 dimensions whose dimension 0 has stride
/// `stride0`, with rows packed and dimension 2 (channels) of stride 1:
/// interleaved pixels.
fn interleaved<T: Element, const N: usize>(
    shape: [usize; N],
    stride0: usize,
    seed: u64,
    noise_of: impl Fn(u64) -> T,
) -> (Vec<T>, [usize; N]) {
    assert!(N == 2 || N == 3);
    let mut strides = [1; N];
    strides[0] = stride0;
    strides[1] = stride0 * shape[0];
    let len = if shape.contains(&0) {
        0
    } else {
        (0..N).map(|d| (shape[d] - 1) * strides[d]).sum::<usize>() + 1
    };
    let data = noise([len], seed, noise_of).as_slice().to_vec();
    (data, strides)
}

/// Output regions: widths no vector width divides, one narrower than every
/// vector, a single column, and a crop with a non-zero origin.
const REGIONS: [([i64; 2], [usize; 2]); 5] = [
    ([0, 0], [37, 5]),
    ([0, 0], [64, 3]),
    ([0, 0], [5, 2]),
    ([0, 0], [1, 4]),
    ([11, 1], [53, 3]),
];

/// Runs `run` at every instruction-set level and compares its output with
/// the interpreter's run of pipeline `name` on `inputs`.
fn check<T: Scalar, const N: usize>(
    name: &str,
    source: &str,
    inputs: &[Image],
    origin: [i64; N],
    shape: [usize; N],
    run: impl Fn(&mut Buffer<T, N>) -> Result<(), Error>,
) {
    let mut want = [region_image::<T, N>(origin, shape)];
    interpret(source, name, inputs, &[], &mut want).expect("the interpreter runs");
    for_each_isa(|isa| {
        let mut got = Buffer::<T, N>::new(shape);
        run(&mut got).expect("the input has the declared layout");
        assert_matches(
            &got.view().with_origin(origin),
            &want[0],
            &format!("{name} at {isa}, output {origin:?}+{shape:?}"),
        );
    });
}

#[test]
fn interleaved_rgb_is_read_in_place() {
    for (origin, [w, h]) in REGIONS {
        let shape = [origin[0] as usize + w, origin[1] as usize + h, 3];
        let (data, strides) = interleaved(shape, 3, 7, |b| b as u8);
        let rgb = View::with_strides(&data, shape, strides).unwrap();
        check::<u8, 2>(
            "grey",
            grey::__SOURCE,
            &[image_of(&rgb)],
            origin,
            [w, h],
            |out| {
                let (result, allocations) =
                    record_allocations(|| grey(&rgb, &mut out.view_mut().with_origin(origin)));
                assert!(
                    allocations.iter().all(|a| a.pipeline != "grey"),
                    "the input is read in place, not copied: {allocations:?}"
                );
                result
            },
        );
    }
}

#[test]
fn interleaved_rgba_stencil_reads_in_place_up_to_the_edges() {
    for (origin, [w, h]) in REGIONS {
        let shape = [origin[0] as usize + w, origin[1] as usize + h, 4];
        let (data, strides) = interleaved(shape, 4, 11, |b| (b >> 40) as f32 / 3.0 - 1e6);
        let rgba = View::with_strides(&data, shape, strides).unwrap();
        let (o, s) = ([origin[0], origin[1], 0], [w, h, 4]);
        check::<f32, 3>(
            "soften",
            soften::__SOURCE,
            &[image_of(&rgba)],
            o,
            s,
            |out| soften(&rgba, &mut out.view_mut().with_origin(o)),
        );
    }
}

#[test]
fn pairs_are_read_in_steps_of_the_declared_stride() {
    for (origin, [w, h]) in REGIONS {
        let shape = [3 * (origin[0] as usize + w), origin[1] as usize + h];
        let (data, strides) = interleaved(shape, 2, 13, |b| b as u16);
        let p = View::with_strides(&data, shape, strides).unwrap();
        check::<u16, 2>(
            "pairs",
            pairs::__SOURCE,
            &[image_of(&p)],
            origin,
            [w, h],
            |out| pairs(&p, &mut out.view_mut().with_origin(origin)),
        );
    }
}

#[test]
fn channels_read_together_equal_the_interpreter() {
    for (origin, [w, h]) in REGIONS {
        let shape = [origin[0] as usize + w + 1, origin[1] as usize + h, 4];
        let (data, strides) = interleaved(shape, 4, 17, |b| b as u16);
        let rgba = View::with_strides(&data, shape, strides).unwrap();
        check::<u16, 2>(
            "rgba_phases",
            rgba_phases::__SOURCE,
            &[image_of(&rgba)],
            origin,
            [w, h],
            |out| rgba_phases(&rgba, &mut out.view_mut().with_origin(origin)),
        );
        let flat = noise(
            [3 * (origin[0] as usize + w) + 5, origin[1] as usize + h],
            19,
            |b| (b >> 40) as f32 / (1u64 << 24) as f32,
        );
        check::<f32, 2>(
            "flat_phases",
            flat_phases::__SOURCE,
            &[image_of(&flat.view())],
            origin,
            [w, h],
            |out| flat_phases(&flat, &mut out.view_mut().with_origin(origin)),
        );
    }
}

#[test]
fn a_buffer_of_another_layout_is_an_error_before_any_work() {
    // A dense (planar) image where the schedule declares interleaved RGB.
    let planar = Buffer::<u8, 3>::from_fn([8, 4, 3], |[x, y, c]| (x + y + c) as u8);
    for run in [grey, scalar_grey] {
        let mut out = Buffer::<u8, 2>::new([8, 4]);
        out.as_mut_slice().fill(0xA5);
        let err = run(&planar, &mut out).unwrap_err();
        assert_eq!(
            err,
            Error::StrideMismatch {
                input: "rgb",
                dim: 0,
                declared: 3,
                strides: vec![1, 8, 32],
            }
        );
        let msg = err.to_string();
        assert!(msg.contains("declares `rgb.dim(0).set_stride(3)`"), "{msg}");
        assert!(
            out.as_slice().iter().all(|&v| v == 0xA5),
            "the output is untouched"
        );
    }
    // Interleaved, but with the channels apart from each other: dimension 2
    // is declared dense too.
    let (data, _) = interleaved([8, 4, 3], 3, 1, |b| b as u8);
    let apart = View::with_strides(&data[..], [8, 4, 3], [3, 24, 0]).unwrap();
    let err = grey(&apart, &mut Buffer::<u8, 2>::new([8, 4])).unwrap_err();
    assert!(
        matches!(
            err,
            Error::StrideMismatch {
                dim: 2,
                declared: 1,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_dimension_of_one_element_may_have_any_stride() {
    // One column: no two elements are addressed through dimension 0's stride.
    let data: Vec<u8> = (0..12).collect();
    let column = View::with_strides(&data, [1, 4, 3], [1, 3, 1]).unwrap();
    let mut out = Buffer::<u8, 2>::new([1, 4]);
    grey(&column, &mut out).unwrap();
    let mut want = [region_image::<u8, 2>([0, 0], [1, 4])];
    interpret(grey::__SOURCE, "grey", &[image_of(&column)], &[], &mut want).unwrap();
    assert_matches(&out.view(), &want[0], "grey of one column");
    // An empty input passes too.
    let empty = View::<u8, 3>::with_strides(&[], [0, 4, 3], [1, 1, 1]).unwrap();
    grey(&empty, &mut Buffer::<u8, 2>::new([0, 4])).unwrap();
}

#[test]
fn the_schedule_text_shows_the_declared_layout() {
    assert!(
        grey::SCHEDULE.contains("    rgb.dim(0).set_stride(3).dim(2).set_stride(1);\n"),
        "{}",
        grey::SCHEDULE
    );
    assert!(
        pairs::SCHEDULE.contains("    p.dim(0).set_stride(2);\n"),
        "{}",
        pairs::SCHEDULE
    );
}

/// `image::RgbImage` is interleaved: strides `[3, 3w, 1]`.
#[cfg(feature = "image")]
#[test]
fn an_rgb_image_of_the_image_crate_is_read_in_place() {
    let img = image::RgbImage::from_fn(45, 7, |x, y| image::Rgb([x as u8, (y * 30) as u8, 200]));
    let mut out = Buffer::<u8, 2>::new([45, 7]);
    let ((), allocations) = record_allocations(|| grey(&img, &mut out).unwrap());
    assert!(allocations.iter().all(|a| a.pipeline != "grey"));
    for (x, y, p) in img.enumerate_pixels() {
        let [r, g, b] = p.0.map(u16::from);
        let want = ((r * 77 + g * 150 + b * 29) >> 8) as u8;
        assert_eq!(out[[x as usize, y as usize]], want, "at ({x}, {y})");
    }
}
