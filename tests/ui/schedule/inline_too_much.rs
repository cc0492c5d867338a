use pipeline::pipeline;

pipeline! {
    fn p(input: Image<f32, 2>) -> Image<f32, 2> {
        let c = input.clamp_edge();
        a(x, y) = sum((-2..=2, -2..=2), |(i, j)| c(x + i, y + j));
        b(x, y) = sum((-2..=2, -2..=2), |(i, j)| a(x + i, y + j));
        d(x, y) = sum((-2..=2, -2..=2), |(i, j)| b(x + i, y + j));
        out(x, y) = sum((-2..=2, -2..=2), |(i, j)| d(x + i, y + j));
        out
    }
    schedule p {
        a.compute_inline();
        b.compute_inline();
        d.compute_inline();
    }
}

fn main() {}
