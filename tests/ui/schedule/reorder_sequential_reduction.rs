use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 1> {
        hash(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hash(0) = hash(0) * 31 + input(rx, ry) as u32;
        }
        out(x) = hash(x);
        out
    }
    schedule p {
        hash.compute_root().update(0).reorder(ry, rx);
    }
}

fn main() {}
