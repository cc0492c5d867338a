//! Bad input at run time: every mistake is an `Err` a person can act on,
//! checked before any work, so the output is never partly written.

use pipeline::{pipeline, Buffer, Error, View, ViewMut};

pipeline! {
    /// Reads one pixel of padding on each side: no boundary condition.
    fn box3(input: Image<u16, 2>) -> Image<u16, 2> {
        out(x, y) = ((input(x - 1, y) as u32 + input(x + 1, y) as u32 + input(x, y - 1) as u32 + input(x, y + 1) as u32) / 4) as u16;
        out
    }

    /// The same with a boundary condition: any input size works.
    fn box3_clamped(input: Image<u16, 2>) -> Image<u16, 2> {
        let c = input.clamp_edge();
        out(x, y) = ((c(x - 1, y) as u32 + c(x + 1, y) as u32 + c(x, y - 1) as u32 + c(x, y + 1) as u32) / 4) as u16;
        out
    }

    fn two(input: Image<u8, 2>) -> (Image<u8, 2>, Image<u8, 2>) {
        a(x, y) = input.clamp_edge()(x, y) + 1;
        b(x, y) = a(x + 1, y) + a(x - 1, y);
        (a, b)
    }
}

fn ramp(w: usize, h: usize) -> Buffer<u16, 2> {
    Buffer::from_fn([w, h], |[x, y]| (x * 31 + y * 7) as u16)
}

#[test]
fn too_small_input_names_the_input_and_both_regions() {
    let input = ramp(10, 8);
    let mut out = Buffer::<u16, 2>::new([10, 8]);
    out.as_mut_slice().fill(0xBEEF);
    let err = box3(&input, &mut out).unwrap_err();
    match &err {
        Error::InputTooSmall {
            input,
            needed,
            given,
        } => {
            assert_eq!(*input, "input");
            assert_eq!(needed, &vec![-1..11, -1..9]);
            assert_eq!(given, &vec![0..10, 0..8]);
        }
        other => panic!("expected InputTooSmall, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("input") && msg.contains("clamp_edge"),
        "message says what to do: {msg}"
    );
    assert!(
        out.as_slice().iter().all(|&v| v == 0xBEEF),
        "the output is untouched on error"
    );
}

#[test]
fn padded_input_or_cropped_output_satisfies_the_stencil() {
    let input = ramp(12, 10);
    // A view whose origin is -1 covers the padding the stencil needs.
    let padded = input.view().with_origin([-1, -1]);
    let mut out = Buffer::<u16, 2>::new([10, 8]);
    box3(&padded, &mut out).unwrap();
    // Cropping the output of the unpadded input to its interior also works.
    let mut interior = Buffer::<u16, 2>::new([10, 8]);
    let mut crop = interior.view_mut().with_origin([1, 1]);
    box3(&input, &mut crop).unwrap();
    assert_eq!(out.as_slice(), interior.as_slice());
    assert_eq!(
        box3::required_region(
            input.view().region(),
            pipeline::Region::new([1, 1], [10, 8])
        ),
        pipeline::Region::new([0, 0], [12, 10])
    );
}

#[test]
fn zero_size_outputs_return_ok_and_write_nothing() {
    let input = ramp(0, 0);
    for shape in [[0, 0], [0, 5], [5, 0]] {
        let mut out = Buffer::<u16, 2>::new(shape);
        box3(&input, &mut out).unwrap();
        box3_clamped(&input, &mut out).unwrap();
    }
    // One empty output of two: the other is still computed, the empty one untouched.
    let input = Buffer::<u8, 2>::from_fn([4, 3], |[x, y]| (x + 10 * y) as u8);
    let mut a = Buffer::<u8, 2>::new([0, 3]);
    let mut b = Buffer::<u8, 2>::new([4, 3]);
    two(&input, &mut a, &mut b).unwrap();
    assert_eq!(b[[1, 1]], (input[[2, 1]] + 1) + (input[[0, 1]] + 1));
}

#[test]
fn an_empty_input_read_through_clamp_edge_is_an_error() {
    let input = ramp(0, 4);
    let mut out = Buffer::<u16, 2>::new([3, 3]);
    assert!(matches!(
        box3_clamped(&input, &mut out),
        Err(Error::InputTooSmall { .. })
    ));
}

#[test]
fn strided_views_work_for_inputs_and_outputs() {
    // Every other column of a 20x6 buffer as a 10x6 input.
    let wide = Buffer::<u16, 2>::from_fn([20, 6], |[x, y]| (x * 3 + y * 100) as u16);
    let strided = View::with_strides(wide.as_slice(), [10, 6], [2, 20]).unwrap();
    let dense = Buffer::<u16, 2>::from_fn([10, 6], |[x, y]| wide[[2 * x, y]]);
    let mut want = Buffer::<u16, 2>::new([10, 6]);
    box3_clamped(&dense, &mut want).unwrap();
    // Write into the odd columns of another buffer, transposed-ish strides.
    let mut storage = vec![0u16; 20 * 6];
    {
        let mut out = ViewMut::with_strides(&mut storage, [10, 6], [2, 20]).unwrap();
        box3_clamped(&strided, &mut out).unwrap();
    }
    for y in 0..6 {
        for x in 0..10 {
            assert_eq!(storage[2 * x + 20 * y], want[[x, y]], "at {x},{y}");
            assert_eq!(storage[2 * x + 1 + 20 * y], 0, "odd columns untouched");
        }
    }
    // Column-major layout (y fastest) also works.
    let mut col_major = vec![0u16; 10 * 6];
    {
        let mut out = ViewMut::with_strides(&mut col_major, [10, 6], [6, 1]).unwrap();
        box3_clamped(&dense, &mut out).unwrap();
    }
    for y in 0..6 {
        for x in 0..10 {
            assert_eq!(col_major[x * 6 + y], want[[x, y]]);
        }
    }
}

#[test]
fn aliasing_output_strides_are_rejected_before_any_call() {
    let mut storage = vec![0u16; 16];
    let err = ViewMut::with_strides(&mut storage, [4, 4], [1, 2]).unwrap_err();
    assert!(matches!(err, Error::InvalidLayout { .. }), "{err}");
}

#[test]
fn wrong_lengths_are_errors() {
    assert!(matches!(
        Buffer::<u8, 2>::from_vec(vec![0; 5], [2, 3]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(View::<u8, 2>::from_slice(&[0; 5], [2, 3]).is_err());
}

#[test]
fn output_shape_follows_the_inputs() {
    assert_eq!(box3::output_shape([640, 480]), [640, 480]);
    assert_eq!(two::output_shape([7, 5]), ([7, 5], [7, 5]));
}

pipeline! {
    /// An output whose schedule fixes the region it computes.
    fn bounded_out(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = input.clamp_edge()(x, y) / 2;
        out
    }

    schedule bounded_out {
        out.bound(x, 0, 64);
    }
}

/// `out.bound(x, 0, 64)` computes exactly x in [0, 64): an output buffer
/// that does not cover that region is an error before any work (computing
/// the bound into it would write past it), and so is one that asks for
/// more than the bound. (Before the check, a 32-wide output was written
/// past its end in release builds.)
#[test]
fn an_output_must_cover_its_bound_exactly() {
    let input = Buffer::<u8, 2>::from_fn([64, 3], |[x, y]| (x + y) as u8);
    for (width, origin) in [(32, 0), (64, 8), (63, 1), (1, 63)] {
        let mut data = vec![7u8; width * 3];
        let mut out = ViewMut::from_slice(&mut data[..], [width, 3])
            .unwrap()
            .with_origin([origin, 0]);
        let err = bounded_out(&input, &mut out).unwrap_err();
        match &err {
            Error::OutputOutsideBound {
                output,
                dim,
                bound,
                given,
            } => {
                assert_eq!((*output, *dim, bound.clone()), ("out", "x", 0..64));
                assert_eq!(*given, origin..origin + width as i64);
            }
            other => panic!("{width} wide at {origin}: expected OutputOutsideBound, got {other:?}"),
        }
        assert!(err.to_string().contains("out.bound"), "{err}");
        assert!(data.iter().all(|&v| v == 7), "the output was written");
    }
    // An empty output computes nothing, as without the bound.
    let mut empty = Buffer::<u8, 2>::new([0, 3]);
    bounded_out(&input, &mut empty).unwrap();
    let mut wider = Buffer::<u8, 2>::new([65, 3]);
    let err = bounded_out(&input, &mut wider).unwrap_err();
    assert!(
        matches!(err, Error::BoundTooSmall { func: "out", .. }),
        "{err:?}"
    );
    let mut exact = Buffer::<u8, 2>::new([64, 3]);
    bounded_out(&input, &mut exact).unwrap();
    assert_eq!((exact[[0, 0]], exact[[63, 2]]), (0, 32));
}
