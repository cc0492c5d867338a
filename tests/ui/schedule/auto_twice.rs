use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        blur(x, y) = input.clamp_edge()(x, y - 1) / 2 + input.clamp_edge()(x, y + 1) / 2;
        out(x, y) = blur(x, y);
        out
    }
    schedule p {
        auto;
        out.parallel(y);
        auto;
    }
}

fn main() {}
