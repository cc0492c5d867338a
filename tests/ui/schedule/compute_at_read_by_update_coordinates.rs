use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 1> {
        bin(x, y) = input(x, y) / 64;
        hist(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            hist(bin(rx, ry) as i32) += 1;
        }
        hist
    }
    schedule p {
        bin.compute_at(hist, i);
    }
}

fn main() {}
