use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, x) = input(x, x);
        out
    }
}

fn main() {}
