use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u16, 2>) -> Image<u16, 2> {
        bx(x, y) = input(x, y) / 2 + input(x + 1, y) / 2;
        out(x, y) = bx(x, y) / 2 + bx(x, y + 1) / 2;
        out
    }
    schedule p for cuda {
        bx.compute_at(out, xo);
        out.split(x, xo, xi, 256).split(y, yo, yi, 128).reorder(xi, yi, xo, yo).gpu_blocks(xo, yo).gpu_threads(xi);
    }
}

fn main() {}
