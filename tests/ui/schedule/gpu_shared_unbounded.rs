use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u16, 2>) -> Image<u16, 2> {
        bx(x, y) = input(x, y) / 2 + input(x + 1, y) / 2;
        out(x, y) = bx(x, y) / 2 + bx(x, y + 1) / 2;
        out
    }
    schedule p for cuda {
        bx.compute_at(out, y);
        out.split(x, xo, xi, 32).gpu_blocks(y).gpu_threads(xi);
    }
}

fn main() {}
