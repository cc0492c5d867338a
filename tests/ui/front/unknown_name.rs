use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = inptu(x, y);
        out
    }
}

fn main() {}
