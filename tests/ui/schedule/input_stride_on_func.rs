use pipeline::pipeline;

pipeline! {
    fn grey(rgb: Image<u8, 3>) -> Image<u8, 2> {
        out(x, y) = rgb(x, y, 0) / 2 + rgb(x, y, 1) / 2;
        out
    }
    schedule grey {
        out.dim(0).set_stride(3);
    }
}

fn main() {}
