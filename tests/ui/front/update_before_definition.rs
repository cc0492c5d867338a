use pipeline::pipeline;

pipeline! {
    fn p(input: Image<u8, 2>) -> Image<u32, 1> {
        for r in rdom(0..input.width()) {
            h(input(r, 0) as i32) += 1;
        }
        h
    }
}

fn main() {}
