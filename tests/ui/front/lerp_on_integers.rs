use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = lerp(input(x, y), input(x + 1, y), 0.5);
        out
    }
}

fn main() {}
