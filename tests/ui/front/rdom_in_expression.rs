use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<i32, 2> {
        out(x, y) = rdom(0..3);
        out
    }
}

fn main() {}
