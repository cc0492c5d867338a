fn main() {
    // The bilateral grid is the example's own pipeline, with its `for cuda`
    // block, included by src/main.rs.
    pipeline_build::cuda()
        .file("../../examples/bilateral_grid.rs")
        .compile();
}
