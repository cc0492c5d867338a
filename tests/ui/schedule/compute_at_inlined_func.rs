use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        blur(x, y) = input(x, y) / 2 + input(x + 1, y) / 2;
        mid(x, y) = blur(x, y) / 2 + blur(x, y + 1) / 2;
        out(x, y) = mid(x, y) / 2 + blur(x + 1, y) / 2;
        out
    }
    schedule p {
        blur.compute_at(mid, y);
        mid.compute_inline();
    }
}

fn main() {}
