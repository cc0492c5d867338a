use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 1>) -> Image<u32, 1> {
        cdf(i) = input(i) as u32;
        for r in rdom(1..input.width()) {
            cdf(r) = cdf(r - 1) + cdf(r);
        }
        out(x) = cdf(x);
        out
    }
    schedule p {
        cdf.compute_root().update(0).vectorize(r, 8);
    }
}

fn main() {}
