use pipeline::pipeline;

pipeline! {
    fn p(input: Image<i32, 1>) -> Image<i32, 1> {
        f(x) = f(x - 1) + input(x);
        f
    }
}

fn main() {}
