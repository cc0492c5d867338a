//! The 5x5 binomial Gaussian of the Halide comparison, which the libblur
//! comparison times too: one definition, included by both benches.

use pipeline::pipeline;

// A 5x5 binomial Gaussian ([1 4 6 4 1] in x, then in y) of a u8 image with u16
// intermediates: the largest sum is 256 * 255 + 128 = 65408, which fits in u16,
// so nothing wraps. The output rounds to nearest: (sum + 128) >> 8.
pipeline! {
    pub fn gauss5x5(input: Image<u8, 2>) -> Image<u8, 2> {
        let clamped = input.clamp_edge();
        gauss_x(x, y) = (clamped(x - 2, y) as u16)
            + 4 * (clamped(x - 1, y) as u16)
            + 6 * (clamped(x, y) as u16)
            + 4 * (clamped(x + 1, y) as u16)
            + (clamped(x + 2, y) as u16);
        out(x, y) = ((gauss_x(x, y - 2)
            + 4 * gauss_x(x, y - 1)
            + 6 * gauss_x(x, y)
            + 4 * gauss_x(x, y + 1)
            + gauss_x(x, y + 2)
            + 128) >> 8) as u8;
        out
    }

    schedule gauss5x5 {
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 32);
        gauss_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 32);
    }
}
