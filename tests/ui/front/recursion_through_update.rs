use pipeline::pipeline;

pipeline! {
    fn p(input: Image<i32, 1>) -> Image<i32, 1> {
        f(x) = input(x);
        g(x) = f(x) + 1;
        f(x) = f(x) + g(x);
        f
    }
}

fn main() {}
