use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::Type;

const BLUR: &str = r#"
    pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }
    schedule blur3x3 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 16);
    }
"#;

#[test]
fn blur_lowers_and_interprets() {
    let p = pipeline_core::pipeline_from_source(BLUR, "blur3x3").unwrap();
    let l = pipeline_core::lower_pipeline(&p, &pipeline_core::schedule::Schedule::default_for(&p))
        .ok()
        .unwrap();
    println!("{}\n{}", l.schedule, l.text());
    let (w, h) = (7usize, 5usize);
    let mut input = Image::new(Type::U16, vec![0, 0], vec![w, h]);
    for y in 0..h {
        for x in 0..w {
            input.set(
                &[x as i64, y as i64],
                Value::Int(((x * 7 + y * 13) % 65536) as i128),
            );
        }
    }
    let mut out = Image::new(Type::U16, vec![0, 0], vec![w, h]);
    interp::run(&p, &[input.clone()], &[], std::slice::from_mut(&mut out)).unwrap();
    let at = |x: i64, y: i64| -> u32 {
        match input
            .get(&[x.clamp(0, w as i64 - 1), y.clamp(0, h as i64 - 1)])
            .unwrap()
        {
            Value::Int(v) => v as u32,
            _ => unreachable!(),
        }
    };
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let bx = |y| (at(x - 1, y) + at(x, y) + at(x + 1, y)) / 3;
            let want = ((bx(y - 1) + bx(y) + bx(y + 1)) / 3) as i128;
            assert_eq!(out.get(&[x, y]), Some(Value::Int(want)), "at {x},{y}");
        }
    }
}

#[test]
fn expansion_is_generated() {
    let tokens: proc_macro2::TokenStream = BLUR.parse().unwrap();
    let out = pipeline_core::expand(tokens).to_string();
    assert!(out.contains("fn blur3x3"), "{out}");
    println!("{out}");
}

/// The blur's divisions by 3 have dividends below 2^18 (sums of three
/// `u16`): they go through `f32`. The same sums of `u32` inputs may wrap:
/// a multiply-high.
#[test]
fn small_divisions_go_through_f32_only_when_bounded() {
    let expand = |src: &str| pipeline_core::expand(src.parse().unwrap()).to_string();
    let blur = expand(BLUR);
    assert!(blur.contains("DivSmall :: < u32 > :: div_small"), "{blur}");
    assert!(!blur.contains("div_by"), "{blur}");
    let wide = BLUR
        .replace("Image<u16, 2>", "Image<u32, 2>")
        .replace(") / 3) as u16;", ") / 3);");
    let wide = expand(&wide);
    assert!(wide.contains("AsView < u32"), "{wide}");
    assert!(!wide.contains("DivSmall"), "{wide}");
    assert!(
        wide.contains(": [u32 ; 16] = __A :: div_by (__isa ,"),
        "{wide}"
    );
}

/// The blur's quotients are at most 65535: narrowing them to `u16` is a
/// pack alone. Halved instead of divided by 3, the sums may not fit: the
/// cast truncates.
#[test]
fn narrowings_of_values_that_fit_are_packs() {
    let expand = |src: &str| pipeline_core::expand(src.parse().unwrap()).to_string();
    let fitting = "NarrowFitting :: < u32 , u16 > :: narrow_fitting";
    let blur = expand(BLUR);
    assert!(blur.contains(fitting), "{blur}");
    assert!(!blur.contains("Convert :: < u32 , u16 >"), "{blur}");
    let halved = expand(&BLUR.replace(") / 3) as u16;", ") / 2) as u16;"));
    assert!(!halved.contains("NarrowFitting"), "{halved}");
    assert!(
        halved.contains("Convert :: < u32 , u16 > :: cast"),
        "{halved}"
    );
}

/// The edges of the blur's loops partitioned on `clamp_edge` are vector
/// code too: in every kernel, `blur_x`'s first and last vectors of a row
/// are one vector store each (with its steady state, three), `out`'s last,
/// shifted vector runs in its steady state's loop (one store for both:
/// `lower::tails`), and `blur_x`'s edges load their three taps through
/// `load_dense_clamped`.
///
/// The blur's u32 vectors of 16 lanes are wider than 256 bits: it gets the
/// default kernels (unless `PIPELINE_KERNELS` says otherwise), scalar, AVX2
/// and AVX-512.
#[test]
fn the_edges_of_partitioned_loops_are_vectorized() {
    let blur = pipeline_core::expand(BLUR.parse().unwrap()).to_string();
    assert_eq!(kernel_levels(&blur), ["Scalar", "Avx2", "Avx512"], "{blur}");
    assert_eq!(blur.matches("store_dense").count(), 4, "{blur}");
    assert_eq!(blur.matches("load_dense_clamped").count(), 6, "{blur}");
}

/// A 5x5 Gaussian on u8 with u16 intermediates, vectorized by 32: every
/// operation of its vector loops has a vector form (widening, multiplies,
/// adds, shift, narrowing), so no loop over the lanes is left.
#[test]
fn vectorized_integer_stencils_have_no_lane_loops() {
    const GAUSS: &str = r#"
        pub fn gauss5x5(input: Image<u8, 2>) -> Image<u8, 2> {
            let clamped = input.clamp_edge();
            gauss_x(x, y) = (clamped(x - 2, y) as u16) + 4 * (clamped(x - 1, y) as u16)
                + 6 * (clamped(x, y) as u16) + 4 * (clamped(x + 1, y) as u16)
                + (clamped(x + 2, y) as u16);
            out(x, y) = ((gauss_x(x, y - 2) + 4 * gauss_x(x, y - 1) + 6 * gauss_x(x, y)
                + 4 * gauss_x(x, y + 1) + gauss_x(x, y + 2) + 128) >> 8) as u8;
            out
        }
        schedule gauss5x5 {
            out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 32);
            gauss_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 32);
        }
    "#;
    for src in [GAUSS, BLUR] {
        let out = pipeline_core::expand(src.parse().unwrap()).to_string();
        assert!(out.contains("store_dense"), "{out}");
        assert!(out.contains("Convert :: <"), "{out}");
        assert!(!out.contains("for __i in"), "{out}");
        // One prefetch of the input's next row per vector iteration (not
        // one per tap) in the steady state, and one of the output's there
        // (the row's last, shifted vector of `out` runs in the same loop);
        // scalar-level, AVX2 and AVX-512 kernels.
        assert_eq!(kernel_levels(&out), ["Scalar", "Avx2", "Avx512"], "{out}");
        assert_eq!(out.matches("__in0 . prefetch_next_row").count(), 1);
        assert_eq!(out.matches("__out0 . prefetch_next_row").count(), 1);
    }
}

/// Interleaved RGB read at stride 3 (and a downsample at stride 2): one
/// read of each group of phases, no prefetch of the output's next row
/// (see `vector_store`), and a fourth kernel, AVX-512 with VBMI, only
/// where a stride is 3 or 4.
#[test]
fn strided_input_loops_read_phases_once_and_do_not_prefetch_the_output() {
    const GREY: &str = r#"
        pub fn grey(rgb: Image<u8, 3>) -> Image<u8, 2> {
            out(x, y) = ((rgb(x, y, 0) as u16 * 77 + rgb(x, y, 1) as u16 * 150
                + rgb(x, y, 2) as u16 * 29) >> 8) as u8;
            out
        }
        schedule grey {
            rgb.dim(0).set_stride(3).dim(2).set_stride(1);
            out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 32);
        }
    "#;
    const DOWN2: &str = r#"
        pub fn down2(input: Image<u16, 2>) -> Image<u16, 2> {
            out(x, y) = ((input(2 * x, 2 * y) as u32 + input(2 * x + 1, 2 * y) as u32
                + input(2 * x, 2 * y + 1) as u32 + input(2 * x + 1, 2 * y + 1) as u32 + 2) >> 2) as u16;
            out
        }
        schedule down2 {
            out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 16);
        }
    "#;
    // 32 lanes of grey compute no vector wider than 256 bits (the `u16`
    // sums are bytes' blocks): no AVX-512 kernel; at 64 lanes, both.
    let grey64 = GREY.replace("vectorize(x, 32)", "vectorize(x, 64)");
    for (src, stride, kernels) in [(GREY, 3, 2), (grey64.as_str(), 3, 4), (DOWN2, 2, 3)] {
        let out = pipeline_core::expand(src.parse().unwrap()).to_string();
        assert_eq!(kernel_levels(&out).len(), kernels, "{out}");
        assert_eq!(
            kernel_levels(&out).contains(&"Avx512Vbmi"),
            kernels == 4,
            "{out}"
        );
        // Every load of the steady state is one of a group read at once:
        // one group of 3 phases, or two of 2 (the rows 2 y and 2 y + 1).
        let groups = if stride == 3 { 1 } else { 2 };
        let n: usize = [16, 32, 64]
            .map(|w| {
                out.matches(&format!("load_phases :: < {w} , {stride} >"))
                    .count()
            })
            .iter()
            .sum();
        assert!(n >= groups, "{n} groups: {out}");
        assert_eq!(out.matches("load_every").count(), 0, "{out}");
        assert_eq!(
            out.matches("__out0 . prefetch_next_row").count(),
            0,
            "{out}"
        );
    }
}

#[test]
fn rounding_averages_use_pavg_only_where_the_sum_cannot_wrap() {
    let expand = |def: &str| {
        let src = format!(
            "fn avg(a: Image<u8, 2>, b: Image<u8, 2>) -> Image<u8, 2> {{ out(x, y) = {def}; out }} \
             schedule avg {{ out.vectorize(x, 32); }}"
        );
        pipeline_core::expand(src.parse().unwrap()).to_string()
    };
    let narrowed = expand("((a(x, y) as u16 + b(x, y) as u16 + 1) >> 1) as u8");
    assert!(narrowed.contains("Average :: < u8 >"), "{narrowed}");
    assert!(!narrowed.contains("Convert :: <"), "{narrowed}");
    let bounded = expand("((a(x, y) >> 1) + 1 + (b(x, y) >> 1)) / 2");
    assert!(bounded.contains("Average :: < u8 >"), "{bounded}");
    let wrapping = expand("(a(x, y) + b(x, y) + 1) >> 1");
    assert!(!wrapping.contains("Average"), "{wrapping}");
}

#[test]
fn strided_loads_are_deinterleaved_spans() {
    let src = "fn halve(a: Image<u16, 2>) -> Image<u16, 2> { \
               out(x, y) = a(2 * x, y) / 2 + a(2 * x + 1, y) / 2 + a(2 * x + 5, y) \
               + a(3 * x, y) + a(5 * x, y); out } \
               schedule halve { out.vectorize(x, 16); }";
    let out = pipeline_core::expand(src.parse().unwrap()).to_string();
    // In the vector loop (the steady state's vectors and the shifted last
    // one of a row) of the kernels' one body: the two phases of stride 2
    // from one read of 32 elements, a third stride-2 load of a span of 31,
    // one stride-3 load of a span of 46 picked by a constant stride;
    // stride 5 loads lane by lane.
    let bodies = 1;
    assert_eq!(
        out.matches("load_phases :: < 16 , 2 > (__isa , __in0 . dense_ptr (__c , 32))")
            .count(),
        bodies,
        "{out}"
    );
    assert_eq!(
        out.matches("load_every_2nd :: < 16 > (__isa , __in0 . dense_ptr (__c , 31) ,)")
            .count(),
        bodies,
        "{out}"
    );
    assert_eq!(
        out.matches("load_every :: < 16 , 46 , 3 > (__isa , __in0 . dense_ptr (__c , 46)")
            .count(),
        bodies,
        "{out}"
    );
    assert_eq!(
        out.matches("load_strided :: < 16 > ([").count(),
        bodies,
        "{out}"
    );
    assert_eq!(out.matches("] , 5i64) }").count(), bodies, "{out}");
}

#[test]
fn the_channels_of_interleaved_pixels_are_read_once() {
    let src = "fn grey(rgb: Image<u8, 3>) -> Image<u8, 2> { \
               out(x, y) = rgb(x, y, 0) / 3 + rgb(x, y, 1) / 3 + rgb(x, y, 2) / 3 + rgb(x + 1, y, 1); out } \
               schedule grey { rgb.dim(0).set_stride(3).dim(2).set_stride(1); out.vectorize(x, 32); }";
    let out = pipeline_core::expand(src.parse().unwrap()).to_string();
    // In the vector loop (the steady state's vectors and the shifted last
    // one of a row) of the kernels' one body: one read of the three
    // channels' 96 elements; the next pixel's green alone, by a constant
    // stride.
    let bodies = 1;
    assert_eq!(
        out.matches("load_phases :: < 32 , 3 > (__isa , __in0 . lanes_ptr (__c , 1i64 , 32))")
            .count(),
        bodies,
        "{out}"
    );
    assert_eq!(
        out.matches("load_every :: < 32 , 94 , 3 >").count(),
        bodies,
        "{out}"
    );
}

/// A sum of weighted bytes narrowed back to `u8` is computed in block
/// order: weighted taps in pairs through `mul_add_pairs` (`pmaddubsw`),
/// the odd one widened within blocks, the result packed back; not when a
/// `u16` value enters the sum, or when nothing pairs.
#[test]
fn byte_sums_narrowed_back_are_computed_in_blocks() {
    let source = |name: &str, value: &str| {
        format!(
            "fn {name}(input: Image<u8, 2>) -> Image<u8, 2> {{
                let c = input.clamp_edge();
                out(x, y) = {value};
                out
            }}
            schedule {name} {{ out.vectorize(x, 32); }}"
        )
    };
    let expand = |s: String| pipeline_core::expand(s.parse().unwrap()).to_string();
    let gauss = expand(source(
        "gauss_row",
        "((c(x - 2, y) as u16 + 4 * (c(x - 1, y) as u16) + 6 * (c(x, y) as u16) \
          + 4 * (c(x + 1, y) as u16) + c(x + 2, y) as u16 + 8) >> 4) as u8",
    ));
    assert_eq!(
        gauss.matches("U8Blocks :: mul_add_pairs").count() % 2,
        0,
        "{gauss}"
    );
    assert!(
        gauss.contains("U8Blocks :: mul_add_pairs (__isa"),
        "{gauss}"
    );
    assert!(gauss.contains("U8Blocks :: widen_blocks"), "{gauss}");
    assert!(gauss.contains("U8Blocks :: narrow_blocks"), "{gauss}");
    assert!(
        gauss.contains("1u8 , 4u8"),
        "the first two taps pair: {gauss}"
    );
    // A weight of 150 cannot go through pmaddubsw; 77 and 29 pair.
    let grey = expand(source(
        "grey_like",
        "((c(x, y) as u16 * 77 + c(x + 1, y) as u16 * 150 + c(x + 2, y) as u16 * 29) >> 8) as u8",
    ));
    assert!(grey.contains("77u8 , 29u8"), "{grey}");
    // A u16 value in the sum: the blocks' order would reach it.
    let mixed = expand(source(
        "mixed",
        "((c(x, y) as u16 + c(x + 1, y) as u16 + x as u16) >> 2) as u8",
    ));
    assert!(!mixed.contains("U8Blocks"), "{mixed}");
    // One byte, nothing to pair: the plain widening.
    let single = expand(source("single", "((c(x, y) as u16 * 3) >> 2) as u8"));
    assert!(!single.contains("U8Blocks"), "{single}");
}

/// The levels whose instance of the generic kernel the entry calls, lowest
/// first (the body itself is written once).
fn kernel_levels(out: &str) -> Vec<&'static str> {
    ["Scalar", "Sse41", "Avx2", "Avx512", "Avx512Vbmi"]
        .into_iter()
        .filter(|l| {
            out.contains(&format!("__kernel (:: pipeline :: rt :: simd :: {l} ,"))
                || out.contains(&format!(
                    "__kernel (unsafe {{ :: pipeline :: rt :: simd :: {l} :: new_unchecked () }}"
                ))
        })
        .collect()
}

/// A stage whose vectors are at most 256 bits runs at its level's narrow
/// one (AVX2 inside an AVX-512 kernel), a wider stage at the kernel's own.
#[test]
fn stages_of_narrow_vectors_run_at_the_narrow_level() {
    const SRC: &str = r#"
        pub fn two(input: Image<f32, 2>) -> Image<f32, 2> {
            wide(x, y) = input(x, y) * 2.0;
            out(x, y) = wide(x, y) + 1.0;
            out
        }
        schedule two {
            wide.compute_root().vectorize(x, 16);
            out.vectorize(x, NARROW);
        }
    "#;
    let expand = |lanes: usize| {
        let src = SRC.replace("NARROW", &lanes.to_string());
        pipeline_core::expand(src.parse().unwrap()).to_string()
    };
    let narrow = "let __isa = __isa . narrow () ;";
    // `out` at 8 lanes of f32 (256 bits): its stage narrows, `wide`'s
    // does not; the kernel has AVX-512 instances for `wide`.
    let mixed = expand(8);
    assert_eq!(mixed.matches(narrow).count(), 1, "{mixed}");
    assert!(kernel_levels(&mixed).contains(&"Avx512"), "{mixed}");
    let at = mixed.find(narrow).unwrap();
    // out's stage writes the caller's buffer, wide's its own.
    assert!(
        mixed[at..].starts_with(&format!(
            "{narrow} __isa . outline (# [inline (always)] || {{ let mut __out0"
        )),
        "{mixed}"
    );
    assert!(
        mixed[..at].contains("let mut __w0 = __w0 . reborrow ()"),
        "{mixed}"
    );
    // Both at 16 lanes: no stage narrows.
    let wide = expand(16);
    assert_eq!(wide.matches(narrow).count(), 0, "{wide}");
}

mod corpus;

/// The stages' code is written on several threads, and the expansion is
/// the same whatever their number: every invocation of the repository,
/// under its schedules and under the auto-scheduler's.
#[test]
fn expansions_do_not_depend_on_the_number_of_threads() {
    let mut seen = std::collections::HashSet::new();
    let mut compared = 0;
    for (source, _) in corpus::sources() {
        if !seen.insert(source.clone()) {
            continue;
        }
        for text in [source.clone(), corpus::without_schedules(&source)] {
            let expand = |threads| {
                let options = pipeline_core::ExpandOptions {
                    threads: Some(threads),
                    ..Default::default()
                };
                pipeline_core::expand_with_options(text.parse().unwrap(), None, options).to_string()
            };
            let one = expand(1);
            for threads in [2, 3, 8] {
                assert!(expand(threads) == one, "{threads} threads:\n{text}");
            }
            compared += 1;
        }
    }
    assert!(compared > 60, "{compared} invocations");
}
