use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 1> {
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(input(rx, ry) as i32) += 1;
        }
        out(x) = hist(x);
        out
    }
    schedule p {
        hist.compute_root().update(1).reorder(ry, rx);
    }
}

fn main() {}
