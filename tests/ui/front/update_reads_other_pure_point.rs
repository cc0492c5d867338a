use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 2> {
        f(x, y) = input(x, y) as u32;
        for r in rdom(1..input.height()) {
            f(x, r) = f(x + 1, r - 1) + f(x, r);
        }
        f
    }
}

fn main() {}
