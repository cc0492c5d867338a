use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 5>) -> Image<u8, 2> {
        out(x, y) = input(x, y, 0, 0, 0);
        out
    }
}

fn main() {}
