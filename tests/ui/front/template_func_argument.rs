use pipeline::pipeline;

pipeline! {
    fn blur(f: Func) -> Func {
        g(x, y) = f(x - 1, y) + f(x + 1, y);
        g
    }
    fn p(input: Image<f32, 2>) -> Image<f32, 2> {
        let b = blur(2.0);
        out(x, y) = b(x, y);
        out
    }
}

fn main() {}
