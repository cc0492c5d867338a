//! The `pipeline!` procedural macro. All compiler logic lives in `pipeline-core`;
//! this crate only moves tokens across the proc-macro boundary.

use proc_macro::TokenStream;

/// Compiles a pipeline written in the `pipeline` DSL into Rust (see the `pipeline` crate).
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    pipeline_core::expand(input.into()).into()
}
