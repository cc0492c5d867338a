//! A malformed schedule cache is a compile error that names the file and
//! the line, at the pipeline that reads it (a test binary of its own: the
//! cache's path is an environment variable of the whole trybuild build).

#[test]
fn a_malformed_schedule_cache_is_an_error_at_its_line() {
    std::env::set_var(
        "PIPELINE_SCHEDULE_CACHE",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/ui_cache/malformed_cache.toml"
        ),
    );
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_cache/*.rs");
}
