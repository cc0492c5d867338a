//! Edge-preserving smoothing with a bilateral grid (Chen, Paris and Durand 2007).
//!
//! Every pixel of a gray image is added into a coarse 3-D grid indexed by position
//! (8x8-pixel cells) and intensity (10 levels): the grid accumulates the intensities and
//! the number of pixels that fall into each node (each column of nodes gathers the pixels
//! nearest to it, so the columns are built in parallel). The grid is blurred in z, x and y, and
//! every output pixel reads it back at its own position and intensity by trilinear
//! interpolation ("slicing"), dividing the blurred intensity by the blurred count.
//! Pixels across an edge sit far apart in z, so the blur does not mix them.
//! `cargo run --release --example bilateral_grid` smooths a noisy procedural 1024x768
//! image and writes `out/bilateral_grid_input.png` and `out/bilateral_grid_output.png`.
#![allow(dead_code)]

#[path = "support/mod.rs"]
mod support;
use pipeline::{pipeline, Buffer};
use support::{noise, save_gray};

/// The side of a grid cell in pixels (the spatial sigma). The pipeline and its templates
/// write it, and `LEVELS`, as literals (`/ 8`, `* 10.0`); the reference uses these.
pub const CELL: usize = 8;
/// The number of intensity steps of the grid (1 / the range sigma); z runs over
/// `0..=LEVELS`.
pub const LEVELS: usize = 10;

pipeline! {
    /// Blurs a 3-D grid with `[1 4 6 4 1]` along z, then x, then y. The kernel is left
    /// unnormalized: slicing divides a blurred sum by a blurred count, so the scale cancels.
    fn blur_grid(grid: Func) -> Func {
        blur_z(x, y, z) = grid(x, y, z - 2) + 4.0 * grid(x, y, z - 1)
            + 6.0 * grid(x, y, z)
            + 4.0 * grid(x, y, z + 1) + grid(x, y, z + 2);
        blur_zx(x, y, z) = blur_z(x - 2, y, z) + 4.0 * blur_z(x - 1, y, z)
            + 6.0 * blur_z(x, y, z)
            + 4.0 * blur_z(x + 1, y, z) + blur_z(x + 2, y, z);
        blur_zxy(x, y, z) = blur_zx(x, y - 2, z) + 4.0 * blur_zx(x, y - 1, z)
            + 6.0 * blur_zx(x, y, z)
            + 4.0 * blur_zx(x, y + 1, z) + blur_zx(x, y + 2, z);
        blur_zxy
    }

    /// Reads `grid` at every pixel's own grid position `(x / 8, y / 8, intensity * 10)`
    /// by trilinear interpolation between the 8 surrounding nodes.
    fn trilinear(grid: Func, intensity: Func) -> Func {
        sliced(x, y) = {
            let zv = intensity(x, y) * 10.0;
            let zi = clamp(zv as i32, 0, 9);
            let zf = zv - zi as f32;
            let xi = x / 8;
            let yi = y / 8;
            let xf = (x % 8) as f32 / 8.0;
            let yf = (y % 8) as f32 / 8.0;
            lerp(
                lerp(lerp(grid(xi, yi, zi), grid(xi + 1, yi, zi), xf),
                     lerp(grid(xi, yi + 1, zi), grid(xi + 1, yi + 1, zi), xf), yf),
                lerp(lerp(grid(xi, yi, zi + 1), grid(xi + 1, yi, zi + 1), xf),
                     lerp(grid(xi, yi + 1, zi + 1), grid(xi + 1, yi + 1, zi + 1), xf), yf),
                zf)
        };
        sliced
    }

    /// Bilateral filter of a gray image with values in [0, 1] (values outside are clamped)
    /// through a bilateral grid of 8x8-pixel cells and 10 intensity levels.
    ///
    /// Pixel `(x, y)` of intensity `v` adds `v` and a count of 1 to the grid node
    /// `((x + 4) / 8, (y + 4) / 8, round(10 v))`, the node nearest to it. The grid is
    /// built as a *gather*: node column `(x, y)` adds up the 8x8 pixels nearest to it
    /// (those inside the image), row by row, so the columns are independent of each
    /// other and each sums its pixels in the order a scatter over the image would.
    pub fn bilateral_grid(input: Image<f32, 2>) -> Image<f32, 2> {
        let clamped = input.clamp_edge();
        intensity(x, y) = clamp(clamped(x, y), 0.0, 1.0);
        level(x, y) = (intensity(x, y) * 10.0 + 0.5) as i32;
        grid_value(x, y, z) = 0.0;
        for (rx, ry) in rdom(0..8, 0..8) {
            grid_value(x, y, clamp(level(8 * x + rx - 4, 8 * y + ry - 4), 0, 10)) += {
                let px = 8 * x + rx - 4;
                let py = 8 * y + ry - 4;
                let inside = px >= 0 && px < input.width() && py >= 0 && py < input.height();
                select(inside, intensity(px, py), 0.0)
            };
        }
        grid_weight(x, y, z) = 0.0;
        for (rx, ry) in rdom(0..8, 0..8) {
            grid_weight(x, y, clamp(level(8 * x + rx - 4, 8 * y + ry - 4), 0, 10)) += {
                let px = 8 * x + rx - 4;
                let py = 8 * y + ry - 4;
                let inside = px >= 0 && px < input.width() && py >= 0 && py < input.height();
                select(inside, 1.0, 0.0)
            };
        }
        let blurred_value = blur_grid(grid_value);
        let blurred_weight = blur_grid(grid_weight);
        let value = trilinear(blurred_value, intensity);
        let weight = trilinear(blurred_weight, intensity);
        out(x, y) = value(x, y) / weight(x, y);
        out
    }


    // Build the grid's columns in parallel rows, blur it in parallel over
    // its intensity levels, then slice in strips.
    schedule bilateral_grid {
        grid_value.compute_root().update(0).parallel(y);
        grid_weight.compute_root().update(0).parallel(y);
        blurred_value.compute_root().parallel(z);
        blurred_weight.compute_root().parallel(z);
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
    }

    // On the GPU (the `cuda` feature, `NAME::cuda`): every stage at root in
    // tiles of threads, the grid's columns one thread each (the levels z
    // run on the host around the 3-D stages' kernels).
    schedule bilateral_grid for cuda {
        intensity.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        level.compute_inline();
        grid_value.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        grid_value.update(0).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        grid_weight.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        grid_weight.update(0).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blurred_value.blur_z.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blurred_value.blur_zx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blurred_value.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blurred_weight.blur_z.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blurred_weight.blur_zx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blurred_weight.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
}

/// A 3-D grid of f32 over the box `origin + [0, shape)` of the infinite integer grid,
/// zero everywhere outside the box (as a func whose pure definition is `0.0` is).
struct Grid {
    origin: [i64; 3],
    shape: [usize; 3],
    data: Vec<f32>,
}

impl Grid {
    /// Evaluates `f` at every node of the box, x fastest.
    fn from_fn(origin: [i64; 3], shape: [usize; 3], f: impl Fn(i64, i64, i64) -> f32) -> Grid {
        let mut data = Vec::with_capacity(shape.iter().product());
        for z in 0..shape[2] as i64 {
            for y in 0..shape[1] as i64 {
                for x in 0..shape[0] as i64 {
                    data.push(f(origin[0] + x, origin[1] + y, origin[2] + z));
                }
            }
        }
        Grid {
            origin,
            shape,
            data,
        }
    }

    /// The position of node `(x, y, z)` in `data`, or `None` outside the box.
    fn index(&self, x: i64, y: i64, z: i64) -> Option<usize> {
        let local = [x - self.origin[0], y - self.origin[1], z - self.origin[2]];
        let inside = (0..3).all(|d| local[d] >= 0 && (local[d] as usize) < self.shape[d]);
        inside.then(|| {
            local[0] as usize
                + self.shape[0] * (local[1] as usize + self.shape[1] * local[2] as usize)
        })
    }

    fn get(&self, x: i64, y: i64, z: i64) -> f32 {
        self.index(x, y, z).map_or(0.0, |i| self.data[i])
    }

    fn add(&mut self, x: i64, y: i64, z: i64, value: f32) {
        let i = self
            .index(x, y, z)
            .expect("the scatter stays inside the grid box");
        self.data[i] += value;
    }
}

/// The `[1 4 6 4 1]` blur along z, x and y of the reference. Every stage is computed over
/// the same box as its source; reading outside the box gives 0, which is exact because
/// the box reaches 2 nodes beyond the scattered nodes on every side and each stage
/// widens the non-zero region by 2 nodes along one axis only.
fn blur_grid(grid: &Grid) -> Grid {
    let (origin, shape) = (grid.origin, grid.shape);
    let blur_z = Grid::from_fn(origin, shape, |x, y, z| {
        grid.get(x, y, z - 2)
            + 4.0 * grid.get(x, y, z - 1)
            + 6.0 * grid.get(x, y, z)
            + 4.0 * grid.get(x, y, z + 1)
            + grid.get(x, y, z + 2)
    });
    let blur_zx = Grid::from_fn(origin, shape, |x, y, z| {
        blur_z.get(x - 2, y, z)
            + 4.0 * blur_z.get(x - 1, y, z)
            + 6.0 * blur_z.get(x, y, z)
            + 4.0 * blur_z.get(x + 1, y, z)
            + blur_z.get(x + 2, y, z)
    });
    Grid::from_fn(origin, shape, |x, y, z| {
        blur_zx.get(x, y - 2, z)
            + 4.0 * blur_zx.get(x, y - 1, z)
            + 6.0 * blur_zx.get(x, y, z)
            + 4.0 * blur_zx.get(x, y + 1, z)
            + blur_zx.get(x, y + 2, z)
    })
}

/// `lerp(a, b, t)` as the reference reads it: `a + (b - a) * t`, exact at `t = 0` and
/// within an ulp or two of `a * (1 - t) + b * t` elsewhere.
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// Trilinear interpolation of `grid` at the grid position of pixel `(x, y)` of
/// intensity `v`, as the pipeline's `trilinear` template computes it.
fn trilinear(grid: &Grid, x: i64, y: i64, v: f32) -> f32 {
    let zv = v * LEVELS as f32;
    let zi = (zv as i64).clamp(0, LEVELS as i64 - 1);
    let zf = zv - zi as f32;
    let cell = CELL as i64;
    let (xi, yi) = (x / cell, y / cell);
    let (xf, yf) = (
        (x % cell) as f32 / cell as f32,
        (y % cell) as f32 / cell as f32,
    );
    let g = |dx, dy, dz| grid.get(xi + dx, yi + dy, zi + dz);
    lerp(
        lerp(
            lerp(g(0, 0, 0), g(1, 0, 0), xf),
            lerp(g(0, 1, 0), g(1, 1, 0), xf),
            yf,
        ),
        lerp(
            lerp(g(0, 0, 1), g(1, 0, 1), xf),
            lerp(g(0, 1, 1), g(1, 1, 1), xf),
            yf,
        ),
        zf,
    )
}

/// The same bilateral grid as plain loops, written without the DSL: scatter every pixel
/// (rows in order, x innermost, as the reduction domain runs), blur both grids, slice.
pub fn reference(input: &Buffer<f32, 2>) -> Buffer<f32, 2> {
    let [w, h] = input.shape();
    let src = input.as_slice();
    let intensity = |x: usize, y: usize| src[x + w * y].clamp(0.0, 1.0);

    // Pixel x lands in node (x + CELL / 2) / CELL, so nodes 0 ..= (w - 1 + 4) / 8 receive
    // pixels; the box adds 2 nodes on every side for the blur.
    let nodes = [
        (w - 1 + CELL / 2) / CELL + 1,
        (h - 1 + CELL / 2) / CELL + 1,
        LEVELS + 1,
    ];
    let origin = [-2, -2, -2];
    let shape = nodes.map(|n| n + 4);
    let mut value = Grid::from_fn(origin, shape, |_, _, _| 0.0);
    let mut weight = Grid::from_fn(origin, shape, |_, _, _| 0.0);
    for y in 0..h {
        for x in 0..w {
            let v = intensity(x, y);
            let z = ((v * LEVELS as f32 + 0.5) as i64).clamp(0, LEVELS as i64);
            let (gx, gy) = (
                ((x + CELL / 2) / CELL) as i64,
                ((y + CELL / 2) / CELL) as i64,
            );
            value.add(gx, gy, z, v);
            weight.add(gx, gy, z, 1.0);
        }
    }
    let (value, weight) = (blur_grid(&value), blur_grid(&weight));

    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let v = intensity(x, y);
            out.push(
                trilinear(&value, x as i64, y as i64, v)
                    / trilinear(&weight, x as i64, y as i64, v),
            );
        }
    }
    Buffer::from_vec(out, [w, h]).expect("the output vector has w * h elements")
}

/// A noisy gray test image with values in [0, 1]: flat regions with hard edges (a
/// background ramp, a bright disc, a dark bar, a mid-gray ring) plus strong noise, which
/// the filter should remove while keeping the edges.
pub fn make_input(w: usize, h: usize) -> Buffer<f32, 2> {
    let size = w.min(h).max(1) as f32;
    Buffer::from_fn([w, h], |[x, y]| {
        let (fx, fy) = (x as f32, y as f32);
        let (u, v) = (fx / w as f32, fy / h as f32);
        let mut value = 0.35 + 0.2 * u;
        let (dx, dy) = (fx - 0.3 * w as f32, fy - 0.45 * h as f32);
        let r = (dx * dx + dy * dy).sqrt() / size;
        if r < 0.22 {
            value = 0.85;
        } else if r > 0.3 && r < 0.36 {
            value = 0.55;
        }
        if u > 0.6 && u < 0.85 && v > 0.15 && v < 0.85 {
            value = 0.12;
        }
        // Roughly Gaussian noise: the sum of four uniform values, centred.
        let n = (0..4).map(|k| noise(x, y, k)).sum::<f32>() - 2.0;
        (value + 0.08 * n).clamp(0.0, 1.0)
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1024, 768);
    let input = make_input(w, h);
    let mut output = Buffer::<f32, 2>::new(bilateral_grid::output_shape(input.shape()));

    // The first call also starts the thread pool and picks the SIMD kernels: time the
    // second one.
    bilateral_grid(&input, &mut output)?;
    let start = std::time::Instant::now();
    bilateral_grid(&input, &mut output)?;
    let pipeline_time = start.elapsed();
    let start = std::time::Instant::now();
    let expected = reference(&input);
    let reference_time = start.elapsed();
    println!(
        "bilateral_grid {w}x{h}: pipeline {pipeline_time:?}, \
         plain Rust reference {reference_time:?}"
    );
    let max_difference = output
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("largest difference from the reference: {max_difference:e}");

    std::fs::create_dir_all("out")?;
    save_gray(&input, "out/bilateral_grid_input.png", |v| v)?;
    save_gray(&output, "out/bilateral_grid_output.png", |v| v)?;
    Ok(())
}
