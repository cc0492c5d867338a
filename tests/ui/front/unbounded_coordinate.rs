use pipeline::pipeline;

pipeline! {
    fn p(input: Image<i32, 2>) -> Image<i32, 2> {
        out(x, y) = input(input(x, y), y);
        out
    }
}

fn main() {}
