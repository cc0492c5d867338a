//! Gaussian and Laplacian pyramids of a floating-point gray image.
//!
//! Four Gaussian levels, each the previous one blurred with the 5-tap binomial kernel
//! `[1 4 6 4 1] / 16` and subsampled by two (Burt and Adelson's REDUCE, the stencil
//! template `down2`), and three Laplacian levels, each a Gaussian level minus the next
//! coarser one upsampled back (EXPAND, the template `up2`). The Laplacian levels hold
//! the detail of one octave of frequencies each; together with the coarsest Gaussian
//! level they describe the whole image. `cargo run --release --example pyramid` writes
//! every level of a procedural 1024x768 image to `out/pyramid_*.png`.
#![allow(dead_code)]

#[path = "support/mod.rs"]
mod support;
use pipeline::{pipeline, Buffer};
use support::{noise, save_gray};

pipeline! {
    /// REDUCE: blur with `[1 4 6 4 1] / 16` in x and in y, keeping every other sample.
    fn down2(f: Func) -> Func {
        reduce_x(x, y) = (f(2 * x - 2, y) + 4.0 * f(2 * x - 1, y) + 6.0 * f(2 * x, y)
            + 4.0 * f(2 * x + 1, y) + f(2 * x + 2, y)) * 0.0625;
        reduce(x, y) = (reduce_x(x, 2 * y - 2) + 4.0 * reduce_x(x, 2 * y - 1)
            + 6.0 * reduce_x(x, 2 * y)
            + 4.0 * reduce_x(x, 2 * y + 1) + reduce_x(x, 2 * y + 2)) * 0.0625;
        reduce
    }

    /// EXPAND: upsample by two with the same kernel (zeros between the samples, then the
    /// blur scaled by 2 in each direction). An even output sample mixes three input
    /// samples `(1 6 1) / 8`, an odd one the two around it `(1 1) / 2`.
    fn up2(f: Func) -> Func {
        expand_x(x, y) = select(x % 2 == 0,
            (f(x / 2 - 1, y) + 6.0 * f(x / 2, y) + f(x / 2 + 1, y)) * 0.125,
            (f(x / 2, y) + f(x / 2 + 1, y)) * 0.5);
        expand(x, y) = select(y % 2 == 0,
            (expand_x(x, y / 2 - 1) + 6.0 * expand_x(x, y / 2) + expand_x(x, y / 2 + 1)) * 0.125,
            (expand_x(x, y / 2) + expand_x(x, y / 2 + 1)) * 0.5);
        expand
    }

    /// Gaussian and Laplacian pyramids of a gray image: the outputs are the Laplacian
    /// levels 0, 1 and 2 and the Gaussian level 3. Level `l` has `ceil(extent / 2^l)`
    /// samples in each dimension (halving and rounding up `l` times). The input is read
    /// through `mirror()`, so the borders of every level see a mirrored image.
    pub fn pyramid(
        input: Image<f32, 2>,
    ) -> (Image<f32, 2>, Image<f32, 2>, Image<f32, 2>, Image<f32, 2>) {
        gauss[0](x, y) = input.mirror()(x, y);
        for l in 1..4 {
            gauss[l] = down2(gauss[l - 1]);
        }
        for l in 0..3 {
            expanded[l] = up2(gauss[l + 1]);
            lap[l](x, y) = gauss[l](x, y) - expanded[l](x, y);
        }
        (lap[0], lap[1], lap[2], gauss[3])
    }


    // Every level at root in parallel strips; each Laplacian level fuses its
    // expansion.
    schedule pyramid {
        gauss[1].compute_root().split(y, yo, yi, 16).parallel(yo);
        gauss[2].compute_root().split(y, yo, yi, 16).parallel(yo);
        lap[0].split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
        lap[1].split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
        lap[2].parallel(y);
        gauss[3].parallel(y);
    }
}

/// The extent of pyramid level `level` for an extent of `extent` at level 0.
pub fn level_extent(extent: usize, level: usize) -> usize {
    (0..level).fold(extent, |e, _| e.div_ceil(2))
}

/// The shape of pyramid level `level` for an input of shape `shape`.
pub fn level_shape(shape: [usize; 2], level: usize) -> [usize; 2] {
    shape.map(|e| level_extent(e, level))
}

/// A rectangle `[x0, x1) x [y0, y1)` of the infinite integer grid.
#[derive(Clone, Copy, Debug)]
struct Rect {
    x0: i64,
    y0: i64,
    x1: i64,
    y1: i64,
}

/// A plane of f32 values over a `Rect`; reading outside it is a bug in the reference and
/// panics.
struct Plane {
    rect: Rect,
    data: Vec<f32>,
}

impl Plane {
    /// Evaluates `f` at every point of `rect`, row by row.
    fn from_fn(rect: Rect, f: impl Fn(i64, i64) -> f32) -> Plane {
        let mut data = Vec::new();
        for y in rect.y0..rect.y1 {
            for x in rect.x0..rect.x1 {
                data.push(f(x, y));
            }
        }
        Plane { rect, data }
    }

    fn get(&self, x: i64, y: i64) -> f32 {
        let r = self.rect;
        assert!(
            x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1,
            "({x}, {y}) lies outside {r:?}"
        );
        self.data[(x - r.x0) as usize + (r.x1 - r.x0) as usize * (y - r.y0) as usize]
    }

    fn to_buffer(&self) -> Buffer<f32, 2> {
        let r = self.rect;
        assert!(
            r.x0 == 0 && r.y0 == 0,
            "only planes that start at the origin become buffers"
        );
        Buffer::from_vec(self.data.clone(), [r.x1 as usize, r.y1 as usize])
            .expect("the plane has w * h elements")
    }
}

/// `mirror()` (cba|abc): the coordinate of the sample that `coordinate` reads in an
/// extent of `extent`, repeating with period `2 * extent`.
fn mirror(coordinate: i64, extent: usize) -> usize {
    let period = 2 * extent as i64;
    let m = coordinate.rem_euclid(period);
    (if m < extent as i64 { m } else { period - 1 - m }) as usize
}

/// Gaussian level `level` over `rect`, computed from the mirrored input. Each REDUCE reads
/// the level below at `2x - 2 ..= 2x + 2`, so the rectangle asked of the level below is
/// `[2 x0 - 2, 2 (x1 - 1) + 2]` in each dimension: a plain version of bounds inference.
fn gauss(input: &Buffer<f32, 2>, level: usize, rect: Rect) -> Plane {
    if level == 0 {
        let [w, h] = input.shape();
        return Plane::from_fn(rect, |x, y| input[[mirror(x, w), mirror(y, h)]]);
    }
    let below = gauss(
        input,
        level - 1,
        Rect {
            x0: 2 * rect.x0 - 2,
            y0: 2 * rect.y0 - 2,
            x1: 2 * rect.x1 + 1,
            y1: 2 * rect.y1 + 1,
        },
    );
    let f = |x, y| below.get(x, y);
    let reduce_x = Plane::from_fn(
        Rect {
            y0: below.rect.y0,
            y1: below.rect.y1,
            ..rect
        },
        |x, y| {
            (f(2 * x - 2, y)
                + 4.0 * f(2 * x - 1, y)
                + 6.0 * f(2 * x, y)
                + 4.0 * f(2 * x + 1, y)
                + f(2 * x + 2, y))
                * 0.0625
        },
    );
    let g = |x, y| reduce_x.get(x, y);
    Plane::from_fn(rect, |x, y| {
        (g(x, 2 * y - 2)
            + 4.0 * g(x, 2 * y - 1)
            + 6.0 * g(x, 2 * y)
            + 4.0 * g(x, 2 * y + 1)
            + g(x, 2 * y + 2))
            * 0.0625
    })
}

/// The rectangle of the coarser level that EXPAND reads for `rect`: `x / 2 - 1 ..= x / 2 + 1`
/// (division rounding toward negative infinity) in each dimension.
fn expand_source(rect: Rect) -> Rect {
    Rect {
        x0: rect.x0.div_euclid(2) - 1,
        y0: rect.y0.div_euclid(2) - 1,
        x1: (rect.x1 - 1).div_euclid(2) + 2,
        y1: (rect.y1 - 1).div_euclid(2) + 2,
    }
}

/// EXPAND of `coarse` over `rect` (which `coarse` must cover as `expand_source` says).
fn expand(coarse: &Plane, rect: Rect) -> Plane {
    let f = |x, y| coarse.get(x, y);
    let expand_x = Plane::from_fn(
        Rect {
            y0: coarse.rect.y0,
            y1: coarse.rect.y1,
            ..rect
        },
        |x: i64, y| {
            let k = x.div_euclid(2);
            if x.rem_euclid(2) == 0 {
                (f(k - 1, y) + 6.0 * f(k, y) + f(k + 1, y)) * 0.125
            } else {
                (f(k, y) + f(k + 1, y)) * 0.5
            }
        },
    );
    let g = |x, y| expand_x.get(x, y);
    Plane::from_fn(rect, |x, y: i64| {
        let k = y.div_euclid(2);
        if y.rem_euclid(2) == 0 {
            (g(x, k - 1) + 6.0 * g(x, k) + g(x, k + 1)) * 0.125
        } else {
            (g(x, k) + g(x, k + 1)) * 0.5
        }
    })
}

/// The same pyramids as plain loops over explicit rectangles, written without the DSL:
/// returns `(lap[0], lap[1], lap[2], gauss[3])`, each of its natural size.
///
/// Every level is computed over exactly the rectangle the levels above it read, from the
/// mirrored input; a Gaussian level is never re-mirrored at its own border (the pipeline
/// reads the mirrored input beyond it instead). The f32 operations are those of the
/// templates in the same order; the weights are powers of two or small integers.
pub fn reference(
    input: &Buffer<f32, 2>,
) -> (
    Buffer<f32, 2>,
    Buffer<f32, 2>,
    Buffer<f32, 2>,
    Buffer<f32, 2>,
) {
    let shape = input.shape();
    let rect_of = |level: usize| {
        let [w, h] = level_shape(shape, level);
        Rect {
            x0: 0,
            y0: 0,
            x1: w as i64,
            y1: h as i64,
        }
    };
    let laplacian = |level: usize| {
        let rect = rect_of(level);
        let fine = gauss(input, level, rect);
        let coarse = gauss(input, level + 1, expand_source(rect));
        let expanded = expand(&coarse, rect);
        Plane::from_fn(rect, |x, y| fine.get(x, y) - expanded.get(x, y)).to_buffer()
    };
    (
        laplacian(0),
        laplacian(1),
        laplacian(2),
        gauss(input, 3, rect_of(3)).to_buffer(),
    )
}

/// A gray test image with values in [0, 1]: a zone plate (rings whose frequency rises
/// away from the centre, so each Laplacian level picks out its own band of rings), a
/// bright square with hard edges and a little noise.
pub fn make_input(w: usize, h: usize) -> Buffer<f32, 2> {
    let (cx, cy) = (0.4 * w as f32, 0.5 * h as f32);
    // The phase grows as r^2 * scale, so the ring frequency 2 r scale reaches the Nyquist
    // limit (pi per pixel) only at the farthest corner.
    let farthest = ((0.6 * w as f32).powi(2) + (0.5 * h as f32).powi(2))
        .sqrt()
        .max(1.0);
    let scale = std::f32::consts::PI / (2.0 * farthest);
    Buffer::from_fn([w, h], |[x, y]| {
        let (dx, dy) = (x as f32 - cx, y as f32 - cy);
        let mut value = 0.5 + 0.4 * ((dx * dx + dy * dy) * scale).cos();
        let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
        if u > 0.75 && u < 0.92 && v > 0.2 && v < 0.45 {
            value = 0.95;
        }
        (value + 0.04 * (noise(x, y, 0) - 0.5)).clamp(0.0, 1.0)
    })
}

/// The largest absolute difference between two buffers of the same shape.
fn max_difference(a: &Buffer<f32, 2>, b: &Buffer<f32, 2>) -> f32 {
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1024, 768);
    let input = make_input(w, h);
    let (shape0, shape1, shape2, shape3) = pyramid::output_shape(input.shape());
    let mut lap0 = Buffer::<f32, 2>::new(shape0);
    let mut lap1 = Buffer::<f32, 2>::new(shape1);
    let mut lap2 = Buffer::<f32, 2>::new(shape2);
    let mut gauss3 = Buffer::<f32, 2>::new(shape3);

    // The first call also starts the thread pool and picks the SIMD kernels: time the
    // second one.
    pyramid(&input, &mut lap0, &mut lap1, &mut lap2, &mut gauss3)?;
    let start = std::time::Instant::now();
    pyramid(&input, &mut lap0, &mut lap1, &mut lap2, &mut gauss3)?;
    let pipeline_time = start.elapsed();
    let start = std::time::Instant::now();
    let expected = reference(&input);
    let reference_time = start.elapsed();
    println!(
        "pyramid {w}x{h}: pipeline {pipeline_time:?}, plain Rust reference {reference_time:?}"
    );
    let differences = [
        max_difference(&lap0, &expected.0),
        max_difference(&lap1, &expected.1),
        max_difference(&lap2, &expected.2),
        max_difference(&gauss3, &expected.3),
    ];
    println!("largest difference from the reference per output: {differences:?}");

    std::fs::create_dir_all("out")?;
    save_gray(&input, "out/pyramid_input.png", |v| v)?;
    // Laplacian levels are signed: zero is mid-gray.
    for (level, lap) in [&lap0, &lap1, &lap2].into_iter().enumerate() {
        save_gray(lap, &format!("out/pyramid_laplacian{level}.png"), |v| {
            0.5 + v
        })?;
    }
    save_gray(&gauss3, "out/pyramid_gaussian3.png", |v| v)?;
    Ok(())
}
