use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u8, 2> {
        blur(x, y) = input(x, y) / 2 + input(x + 1, y) / 2;
        out(x, y) = blur(x, y) / 2 + blur(x, y + 1) / 2;
        out
    }
    schedule p {
        out.split(y, yo, yi, 4);
        blur.store_at(out, yo);
    }
}

fn main() {}
