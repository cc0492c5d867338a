use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 2> {
        f(x, y) = input(x, y) as u32;
        for r in rdom(0..3) {
            f(x, x) += r as u32;
        }
        f
    }
}

fn main() {}
