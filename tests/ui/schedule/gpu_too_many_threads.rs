use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = input(x, y);
        out
    }
    schedule p for cuda {
        out.gpu_tile(x, y, xo, yo, xi, yi, 64, 64);
    }
}

fn main() {}
