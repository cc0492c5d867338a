//! Compile-fail tests: every kind of mistake in the DSL is a compile error at
//! the user's tokens (one diagnostic per file; `.stderr` files are blessed
//! with `TRYBUILD=overwrite`).

#[test]
fn dsl_errors_point_at_the_users_tokens() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/front/*.rs");
    t.compile_fail("tests/ui/schedule/*.rs");
}
