use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = input(x, y);
        out
    }
    schedule p for cuda {
        out.gpu_blocks(y).gpu_threads(x);
    }
}

fn main() {}
