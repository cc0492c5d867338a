use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u16, 2>) -> Image<u16, 2> {
        bx(x, y) = input(x, y) / 2 + input(x + 1, y) / 2;
        out(x, y) = bx(x, y) / 2 + bx(x, y + 1) / 2;
        out
    }
    schedule p for cuda {
        bx.compute_at(out, xo);
        out.gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
    }
}

fn main() {}
