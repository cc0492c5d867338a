use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = input(x, y) + 300;
        out
    }
}

fn main() {}
