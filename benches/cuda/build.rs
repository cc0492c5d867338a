fn main() {
    pipeline_build::cuda().compile();
}
