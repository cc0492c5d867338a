//! The `pipeline!` procedural macro. All compiler logic lives in `pipeline-core`;
//! this crate only moves tokens across the proc-macro boundary, and reads
//! the crate's schedule cache file (pipeline-core does no I/O).

use proc_macro::TokenStream;

/// Compiles a pipeline written in the `pipeline` DSL into Rust (see the `pipeline` crate).
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    let cache = pipeline_core::schedule::cache::location().and_then(|at| {
        let text = std::fs::read_to_string(&at.path);
        at.read(text)
    });
    pipeline_core::expand_with_cache(input.into(), cache).into()
}
