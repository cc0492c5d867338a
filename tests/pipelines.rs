//! Differential tests: every pipeline here runs through its generated code
//! and through the reference interpreter, at degenerate, odd and cropped
//! sizes, and the results must agree bit for bit (or both fail).

mod common;

use common::*;
use pipeline::{pipeline, Buffer, Error, View, ViewMut};
use pipeline_core::interp::Value;

/// Runs a one-input, one-output pipeline at every size in [`SIZES`], over a
/// padded input with a negative origin, for the full output and a cropped
/// output with a non-zero origin.
fn check_1_1<T: Scalar, U: Scalar>(
    source: &str,
    name: &str,
    params: &[Value],
    run: impl Fn(&View<'_, T, 2>, &mut ViewMut<'_, U, 2>) -> Result<(), Error>,
    gen: impl Fn(u64) -> T,
) {
    for (k, &[w, h]) in SIZES.iter().enumerate() {
        for pad in [0usize, 4] {
            let input = noise([w + 2 * pad, h + 2 * pad], k as u64 + 1, &gen);
            let view = input.view().with_origin([-(pad as i64), -(pad as i64)]);
            let regions = [
                ([0i64, 0i64], [w, h]),
                ([(w / 3) as i64, (h / 2) as i64], [w - w / 3, h - h / 2]),
                ([0, 0], [0, h]),
            ];
            for (origin, shape) in regions {
                let mut want = [region_image::<U, 2>(origin, shape)];
                let expected = interpret(source, name, &[image_of(&view)], params, &mut want);
                for_each_isa(|isa| {
                    let mut out = Buffer::<U, 2>::new(shape);
                    let mut out_view = out.view_mut().with_origin(origin);
                    let got = run(&view, &mut out_view);
                    let what =
                        format!("{name} at {w}x{h}, pad {pad}, output {origin:?}+{shape:?}, {isa}");
                    match (got, &expected) {
                        (Ok(()), Ok(())) => {
                            assert_matches(&out.view().with_origin(origin), &want[0], &what)
                        }
                        (Err(Error::InputTooSmall { .. }), Err(_)) => {}
                        (g, e) => panic!("{what}: generated {g:?}, interpreter {e:?}"),
                    }
                });
            }
        }
    }
}

macro_rules! differential {
    ($test:ident, $name:ident, $in:ty, $out:ty, $gen:expr) => {
        #[test]
        fn $test() {
            check_1_1::<$in, $out>(
                $name::__SOURCE,
                stringify!($name),
                &[],
                |i, o| $name(i, o),
                $gen,
            );
        }
    };
}

pipeline! {
    /// Integer arithmetic with wrapping, Euclidean division and remainder.
    fn int_arith(input: Image<i16, 2>) -> Image<i16, 2> {
        a(x, y) = input(x, y) * 3 - 7;
        b(x, y) = a(x, y) / (input(x, y) % 5) + a(x, y) % -3;
        out(x, y) = b(x, y) + (x - y) as i16 / 2 - (y % 3) as i16;
        out
    }
}
differential!(
    integer_arithmetic_wraps_and_divides_euclidean,
    int_arith,
    i16,
    i16,
    |s| s as i16
);

pipeline! {
    /// Every boundary condition on a u8 input.
    fn borders(input: Image<u8, 2>) -> Image<u16, 2> {
        let e = input.clamp_edge();
        let m = input.mirror();
        let mi = input.mirror_interior();
        let w = input.wrap();
        let c = input.constant(7);
        out(x, y) = e(x - 3, y + 2) as u16 + m(x + 5, y - 4) as u16 + mi(x - 6, y + 7) as u16
            + w(x + 9, y - 11) as u16 + c(x - 2, y + 2) as u16;
        out
    }
}
differential!(
    boundary_conditions_at_the_point_of_use,
    borders,
    u8,
    u16,
    |s| s as u8
);

pipeline! {
    /// Loads at fixed coordinates in a vectorized loop: those evaluated in
    /// every iteration move out of the loop; those under a select or a
    /// `constant` boundary condition (which may lie outside the input) stay.
    fn fixed_taps(input: Image<u16, 2>) -> Image<u32, 2> {
        let e = input.clamp_edge();
        let c = input.constant(3);
        lut(i) = e(i, 0) as u32 * 2 + 1;
        out(x, y) = lut(2) * e(x, y) as u32 + lut(0) * e(x + 1, y) as u32
            + c(-1, 1) as u32 + c(0, 0) as u32
            + select(x > 2, input(0, 0) as u32, c(x, 5) as u32);
        out
    }

    schedule fixed_taps {
        out.vectorize(x, 8);
        lut.compute_root();
    }
}
differential!(
    fixed_coordinate_loads_move_out_of_loops_only_when_always_evaluated,
    fixed_taps,
    u16,
    u32,
    |s| s as u16
);

pipeline! {
    /// A stencil without a boundary condition: needs a padded input.
    fn unpadded(input: Image<u16, 2>) -> Image<u32, 2> {
        out(x, y) = sum((-1..=1, -2..=2), |(i, j)| input(x + i, y + j) as u32);
        out
    }
}
differential!(
    stencils_without_boundaries_read_padding,
    unpadded,
    u16,
    u32,
    |s| s as u16
);

pipeline! {
    /// Floats: math built-ins, select, casts both ways, saturating casts.
    fn floats(input: Image<f32, 2>) -> Image<u8, 2> {
        v(x, y) = input(x, y) * 300.0 - 20.0;
        g(x, y) = if v(x, y) > 100.0 { sqrt(abs(v(x, y))) } else { floor(v(x, y) / 3.0) + 0.5 };
        h(x, y) = lerp(g(x, y), exp(input(x, y)), 0.25) + atan2(input(x, y), 2.0) - round(v(x, y) * 0.01);
        out(x, y) = saturating_cast::<u8>(h(x, y) * 4.0) / 2 + (max(v(x, y), 0.0) as u8) / 2;
        out
    }
}
differential!(
    float_math_and_conversions,
    floats,
    f32,
    u8,
    |s| (s % 10_000) as f32 / 10_000.0
);

pipeline! {
    /// A lookup table read at data-dependent, bounded coordinates.
    fn lut_remap(input: Image<u8, 2>) -> Image<u8, 2> {
        lut(i) = saturating_cast::<u8>(i * i / 200);
        out(x, y) = lut(input(x, y) as i32);
        out
    }
}
differential!(
    lookup_tables_at_data_dependent_coordinates,
    lut_remap,
    u8,
    u8,
    |s| s as u8
);

pipeline! {
    /// Clamps of unsigned values as coordinates: a clamp of a u64 and of a
    /// bitwise not are bounded like any other (the front end used to refuse
    /// them; found by the random pipelines test).
    fn unsigned_clamps(input: Image<u8, 2>) -> Image<u16, 2> {
        lut(i) = (i * 7) as u16;
        out(x, y) = lut(clamp(input(x, y) as u64, 0, 9) as i32)
            + lut(clamp(!(input(x, y) as u32), 0, 3) as i32);
        out
    }
}
differential!(
    clamps_of_unsigned_values_are_bounded_coordinates,
    unsigned_clamps,
    u8,
    u16,
    |s| s as u8
);

pipeline! {
    fn pair_sum(f: Func) -> Func {
        s(x, y) = f(2 * x, y) as u16 + f(2 * x + 1, y) as u16;
        s
    }

    /// A template called in place, under the automatic schedule, and an
    /// update that reads a func defined after its func. Both made a func
    /// read one computed after it (the interpreter found it unread), and the
    /// in-place template's funcs, which no schedule can name, broke the
    /// automatic schedule. Found by the random pipelines test.
    fn in_place(input: Image<u8, 2>) -> Image<u16, 2> {
        out(x, y) = pair_sum(input.clamp_edge())(x, y) + 1;
        late(x, y) = input(x, y) as u16 * 3;
        out(x, y) = out(x, y) + late(x, y);
        out
    }
}
differential!(
    templates_in_place_and_updates_reading_later_funcs,
    in_place,
    u8,
    u16,
    |s| s as u8
);

pipeline! {
    /// A func read through a boundary condition and inlined: the input's own
    /// boundary condition nests inside the func's (`mirror(wrap(x) + 2)`),
    /// and loop partitioning dropped both where only the inner one is the
    /// identity, reading past the input. Found by the random pipelines test.
    fn nested_boundaries(input: Image<u16, 2>) -> Image<u16, 2> {
        let m = input.mirror();
        shifted(x, y) = m(x + 2, y);
        let w = shifted.wrap();
        out(x, y) = w(x, y) + w(x - 3, y + 1);
        out
    }

    schedule nested_boundaries {
        shifted.compute_inline();
        out.vectorize(x, 8);
    }
}
differential!(
    nested_boundary_conditions_after_inlining,
    nested_boundaries,
    u16,
    u16,
    |s| s as u16
);

pipeline! {
    /// Coordinates computed in narrow or unsigned types, read through
    /// boundary conditions: `((x - 3) as u16) as i32` is 65533 at x = 0, and
    /// `(6 - (h as u8)) as i32` is 253 for h = 9. Loop partitioning took them
    /// for `x - 3` and `6 - h`, and dropped the boundary conditions where
    /// they are not the identity. Found by the random pipelines test.
    fn narrow_coordinates(input: Image<u16, 2>) -> Image<u16, 2> {
        let m = input.mirror_interior();
        let e = input.clamp_edge();
        out(x, y) = m(((x - 3) as u16) as i32, y) + e(x + (6 - (input.height() as u8)) as i32, y);
        out
    }

    schedule narrow_coordinates {
        out.vectorize(x, 8);
    }
}
differential!(
    coordinates_in_narrow_types_keep_their_boundary_conditions,
    narrow_coordinates,
    u16,
    u16,
    |s| s as u16
);

pipeline! {
    /// Updates with pure variables: running sums along rows (a scan whose
    /// rows are independent), column sums (an integer reduction per column)
    /// and a pointwise update over its own rows.
    fn scans(input: Image<u16, 2>) -> Image<u16, 2> {
        ps(x, y) = input(x, y) as u32;
        for r in rdom(1..input.width()) {
            ps(r, y) = ps(r - 1, y) + ps(r, y);
        }
        colsum(x) = 0u32;
        for r in rdom(0..input.height()) {
            colsum(x) += input(x, r) as u32;
        }
        g(x, y) = ps(x, y) ^ colsum(x);
        for r in rdom(0..input.height()) {
            g(x, r) = g(x, r) * 3 + 1;
        }
        out(x, y) = (g(x, y) >> 3) as u16;
        out
    }
}
differential!(updates_with_pure_variables, scans, u16, u16, |s| s as u16);

pipeline! {
    /// A gather (a bilateral grid's construction in Halide's form): each
    /// cell of 4x4 pixels adds its pixels into the column of levels of its
    /// own, at a level computed from each pixel, so the update's pure
    /// variables `x` and `y` are also read by its computed coordinate.
    fn gathered(input: Image<u8, 2>) -> Image<u16, 2> {
        let c = input.clamp_edge();
        cells(x, y, z) = 0u16;
        for (rx, ry) in rdom(0..4, 0..4) {
            cells(x, y, (c(4 * x + rx, 4 * y + ry) / 64) as i32) +=
                c(4 * x + rx, 4 * y + ry) as u16 + (x - y) as u16;
        }
        out(x, y) = cells(x / 4, y / 4, (input(x, y) / 64) as i32) * 2
            + cells(x / 4 + 1, y / 4 - 1, 3);
        out
    }
}
differential!(
    gather_updates_read_their_pure_variables,
    gathered,
    u8,
    u16,
    |s| s as u8
);

pipeline! {
    /// Histogram by a scattering update, cumulative sum by a scan, remap.
    fn equalize(input: Image<u8, 2>) -> Image<u8, 2> {
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(input(rx, ry) as i32) += 1;
        }
        cdf(i) = 0u32;
        for r in rdom(0..256) {
            cdf(r) = cdf(r - 1) + hist(r);
        }
        out(x, y) = (cdf(input(x, y) as i32) * 255 / max(cdf(255), 1)) as u8;
        out
    }
}

#[test]
fn histogram_and_scan_updates() {
    // Reads the whole input through an rdom: the output region must not
    // change what the input must cover, so crop the output only.
    for &[w, h] in SIZES {
        let input = noise([w, h], 3, |s| (s % 97) as u8);
        let mut out = Buffer::<u8, 2>::new([w, h]);
        equalize(&input, &mut out).unwrap();
        let mut want = [region_image::<u8, 2>([0, 0], [w, h])];
        interpret(
            equalize::__SOURCE,
            "equalize",
            &[image_of(&input.view())],
            &[],
            &mut want,
        )
        .unwrap();
        assert_matches(&out.view(), &want[0], "equalize");
    }
}

pipeline! {
    /// A stencil template instantiated twice and a compile-time loop.
    fn down2(f: Func) -> Func {
        d(x, y) = (f(2 * x - 1, y) + 2 * f(2 * x, y) + f(2 * x + 1, y)) / 4;
        d
    }
    fn pyramid3(input: Image<i32, 2>) -> Image<i32, 2> {
        level[0](x, y) = input.mirror()(x, y);
        for l in 1..3 {
            level[l] = down2(level[l - 1]);
        }
        out(x, y) = level[2](x, y) + level[1](x / 2, y) - level[0](x / 4, y);
        out
    }
}
differential!(
    templates_and_compile_time_loops,
    pyramid3,
    i32,
    i32,
    |s| (s % 1000) as i32 - 500
);

pipeline! {
    /// A scalar parameter, bitwise operators and shifts.
    fn bits(input: Image<u32, 2>, shift: u32, mask: u32) -> Image<u32, 2> {
        out(x, y) = ((input(x, y) << shift) ^ (input(x, y) >> 3)) & mask | (x as u32 & 1);
        out
    }
}

#[test]
fn scalar_parameters_and_bit_operations() {
    let params = [Value::Int(5), Value::Int(0xF0F0_F0F0)];
    check_1_1::<u32, u32>(
        bits::__SOURCE,
        "bits",
        &params,
        |i, o| bits(i, 5, 0xF0F0_F0F0, o),
        |s| s as u32,
    );
    check_1_1::<u32, u32>(
        bits::__SOURCE,
        "bits",
        &[Value::Int(37), Value::Int(u32::MAX as i128)],
        |i, o| bits(i, 37, u32::MAX, o),
        |s| s as u32,
    );
}

pipeline! {
    /// Division and remainder by powers of two (shifts and masks in the
    /// scalar code) of negative and positive values and coordinates.
    fn pow2_division(input: Image<i32, 2>) -> Image<i32, 2> {
        out(x, y) = {
            let p = input(x, y);
            let c = x - 3 * y;
            p / 1 ^ p % 1 * 3 ^ p / 2 * 5 ^ p % 2 * 7 ^ p / 8 * 9 ^ p % 8 * 11
                ^ p / 1073741824 * 13 ^ p % 1073741824 * 15 ^ c / 2 * 17 ^ c % 4 * 19
                ^ ((p as i8) / 64) as i32 * 21 ^ ((p as i8) % 64) as i32 * 23
                ^ ((p as u16) / 256) as i32 * 25 ^ ((p as u16) % 256) as i32 * 27
        };
        out
    }
    // Scalar loops (vector_ops covers the vector division by constants).
    schedule pow2_division {}
}

#[test]
fn division_by_powers_of_two_is_euclidean() {
    check_1_1::<i32, i32>(
        pow2_division::__SOURCE,
        "pow2_division",
        &[],
        |i, o| pow2_division(i, o),
        |s| s as i32,
    );
    // Plain Rust on the values the shifts and masks get wrong if any.
    let input = Buffer::<i32, 2>::from_fn([6, 1], |[x, _]| [i32::MIN, -9, -1, 0, 7, i32::MAX][x]);
    let mut out = Buffer::<i32, 2>::new([6, 1]);
    pow2_division(&input, &mut out).unwrap();
    for (x, &p) in input.as_slice().iter().enumerate() {
        let c = x as i32;
        let want = p.div_euclid(1)
            ^ p.rem_euclid(1).wrapping_mul(3)
            ^ p.div_euclid(2).wrapping_mul(5)
            ^ p.rem_euclid(2).wrapping_mul(7)
            ^ p.div_euclid(8).wrapping_mul(9)
            ^ p.rem_euclid(8).wrapping_mul(11)
            ^ p.div_euclid(1 << 30).wrapping_mul(13)
            ^ p.rem_euclid(1 << 30).wrapping_mul(15)
            ^ c.div_euclid(2).wrapping_mul(17)
            ^ c.rem_euclid(4).wrapping_mul(19)
            ^ ((p as i8).div_euclid(64) as i32).wrapping_mul(21)
            ^ ((p as i8).rem_euclid(64) as i32).wrapping_mul(23)
            ^ (((p as u16) / 256) as i32).wrapping_mul(25)
            ^ (((p as u16) % 256) as i32).wrapping_mul(27);
        assert_eq!(out.as_slice()[x], want, "at {p}");
    }
}

pipeline! {
    /// Two outputs of different types, one also read by the other.
    fn two_outputs(input: Image<u16, 2>) -> (Image<u16, 2>, Image<f64, 2>) {
        a(x, y) = input.clamp_edge()(x + 1, y) / 2 + 1;
        b(x, y) = (a(x, y - 1) as f64 + a(x, y + 1) as f64) * 0.5;
        (a, b)
    }
}

#[test]
fn several_outputs_share_producers() {
    for &[w, h] in SIZES {
        let input = noise([w, h], 9, |s| s as u16);
        let mut a = Buffer::<u16, 2>::new([w, h]);
        let mut b = Buffer::<f64, 2>::new([w, h]);
        two_outputs(&input, &mut a, &mut b).unwrap();
        let mut want = [
            region_image::<u16, 2>([0, 0], [w, h]),
            region_image::<f64, 2>([0, 0], [w, h]),
        ];
        interpret(
            two_outputs::__SOURCE,
            "two_outputs",
            &[image_of(&input.view())],
            &[],
            &mut want,
        )
        .unwrap();
        assert_matches(&a.view(), &want[0], "two_outputs.a");
        assert_matches(&b.view(), &want[1], "two_outputs.b");
    }
}

pipeline! {
    /// Three-dimensional images: per-channel weights and a channel reduction.
    fn channels(input: Image<f32, 3>) -> Image<f32, 2> {
        w(c) = (c + 1) as f32 * 0.25;
        out(x, y) = sum(0..3, |c| input(x, y, c) * w(c));
        out
    }
}

#[test]
fn three_dimensional_inputs() {
    for &[w, h] in SIZES {
        let input = noise([w, h, 3], 4, |s| (s % 1000) as f32 / 7.0);
        let mut out = Buffer::<f32, 2>::new([w, h]);
        channels(&input, &mut out).unwrap();
        let mut want = [region_image::<f32, 2>([0, 0], [w, h])];
        interpret(
            channels::__SOURCE,
            "channels",
            &[image_of(&input.view())],
            &[],
            &mut want,
        )
        .unwrap();
        assert_matches(&out.view(), &want[0], "channels");
    }
}

pipeline! {
    /// Stride-2 reads (one dense span per vector, deinterleaved) of an input
    /// exactly as wide as they need: the last vector's span ends at the
    /// input's last column.
    fn halve(input: Image<u16, 2>) -> (Image<u16, 2>, Image<u16, 2>) {
        even(x, y) = input(2 * x, y);
        both(x, y) = ((input(2 * x, y) as u32 + 3 * input(2 * x + 1, y) as u32 + 2) >> 2) as u16;
        (even, both)
    }
    schedule halve {
        even.vectorize(x, 16);
        both.vectorize(x, 16);
    }
}

#[test]
fn stride_two_loads_end_at_the_last_column() {
    for w in [1usize, 5, 16, 17, 37, 64] {
        // `even` alone reads 2w - 1 columns; `both` reads 2w.
        for (k, in_w) in [(0, 2 * w - 1), (1, 2 * w)] {
            let input = noise([in_w, 3], w as u64, |s| s as u16);
            let shapes = [[w, 3], [w * k, 3]];
            let mut want = shapes.map(|s| region_image::<u16, 2>([0, 0], s));
            interpret(
                halve::__SOURCE,
                "halve",
                &[image_of(&input.view())],
                &[],
                &mut want,
            )
            .unwrap();
            for_each_isa(|isa| {
                let [mut even, mut both] = shapes.map(Buffer::<u16, 2>::new);
                halve(&input, &mut even, &mut both).unwrap();
                let what = format!("an input {in_w} wide, {isa}");
                assert_matches(&even.view(), &want[0], &what);
                assert_matches(&both.view(), &want[1], &what);
            });
        }
    }
}

pipeline! {
    /// The 5x5 binomial Gaussian rounded after each pass (libblur's
    /// arithmetic): both passes are sums of weighted bytes narrowed back to
    /// u8, computed in the x86 registers' block order (`U8Blocks`), the
    /// first into a sliding window.
    fn gauss_rounded(input: Image<u8, 2>) -> Image<u8, 2> {
        let c = input.clamp_edge();
        gx(x, y) = ((c(x - 2, y) as u16 + 4 * (c(x - 1, y) as u16) + 6 * (c(x, y) as u16)
            + 4 * (c(x + 1, y) as u16) + c(x + 2, y) as u16 + 8) >> 4) as u8;
        out(x, y) = ((gx(x, y - 2) as u16 + 4 * (gx(x, y - 1) as u16) + 6 * (gx(x, y) as u16)
            + 4 * (gx(x, y + 1) as u16) + gx(x, y + 2) as u16 + 8) >> 4) as u8;
        out
    }

    schedule gauss_rounded {
        out.split(y, yo, yi, 8).parallel(yo).vectorize(x, 32);
        gx.store_at(out, yo).compute_at(out, yi).vectorize(x, 32);
    }

    /// Weights that pair and one that cannot (150 > 127), in vectors of 64
    /// bytes: one AVX-512 register, two of AVX2, four of SSE4.1.
    fn weighted_bytes(input: Image<u8, 2>) -> Image<u8, 2> {
        let c = input.mirror();
        out(x, y) = ((c(x - 1, y) as u16 * 77 + c(x, y) as u16 * 150 + c(x + 1, y + 1) as u16 * 29
            + 128) >> 8) as u8;
        out
    }

    schedule weighted_bytes {
        out.vectorize(x, 64);
    }

    /// Minima, maxima, products of non-constant values, shifts and a
    /// division in block order, in vectors of 16 bytes (below one AVX2
    /// register: the level below computes them).
    fn byte_ops(input: Image<u8, 2>) -> Image<u8, 2> {
        let c = input.clamp_edge();
        out(x, y) = (((max(c(x, y) as u16 * 3 + c(x + 1, y) as u16, c(x, y + 1) as u16 * 4)
            + min(c(x - 1, y) as u16, c(x, y - 1) as u16) * 2) >> 1) / 4) as u8;
        out
    }

    schedule byte_ops {
        out.vectorize(x, 16).parallel(y);
    }
}
differential!(
    a_gaussian_rounded_per_pass_in_block_order,
    gauss_rounded,
    u8,
    u8,
    |s| s as u8
);
differential!(
    weighted_bytes_pair_where_their_weights_allow,
    weighted_bytes,
    u8,
    u8,
    |s| s as u8
);
differential!(lane_wise_operations_in_block_order, byte_ops, u8, u8, |s| s
    as u8);
