use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 2> {
        h(i) = 0u32;
        for r in rdom(0..10) {
            h(r) += 1;
        }
        out(x, y) = h(r);
        out
    }
}

fn main() {}
