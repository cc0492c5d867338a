use pipeline::pipeline;

pipeline! {
    fn blur(f: Func, k: f32) -> Func {
        g(x, y) = f(x - 1, y) * k + f(x + 1, y) * k;
        g
    }
    fn p(input: Image<f32, 2>) -> Image<f32, 2> {
        let b = blur(input.clamp_edge());
        out(x, y) = b(x, y);
        out
    }
}

fn main() {}
