use pipeline::pipeline;

// tests/cache_ui.rs points PIPELINE_SCHEDULE_CACHE at malformed_cache.toml,
// which misspells a field on line 9.
pipeline! {
    fn brighten(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = input(x, y) / 2 + 10;
        out
    }
}

fn main() {}
