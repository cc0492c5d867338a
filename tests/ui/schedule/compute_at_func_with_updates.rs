use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 2> {
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(input(rx, ry) as i32) += 1;
        }
        out(x, y) = hist(input(x, y) as i32);
        out
    }
    schedule p {
        hist.compute_at(out, y);
    }
}

fn main() {}
