//! The `pipeline!` procedural macro. All compiler logic lives in `pipeline-core`;
//! this crate only moves tokens across the proc-macro boundary, and reads
//! the crate's schedule cache file (pipeline-core does no I/O).

use proc_macro::TokenStream;
use std::time::Instant;

/// Compiles a pipeline written in the `pipeline` DSL into Rust (see the `pipeline` crate).
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    let start = Instant::now();
    let cache = pipeline_core::schedule::cache::location().and_then(|at| {
        let text = std::fs::read_to_string(&at.path);
        at.read(text)
    });
    // `pipeline`'s `cuda` feature turns this one on: each pipeline gets
    // its GPU entry, `NAME::cuda`.
    let options = pipeline_core::ExpandOptions {
        cuda: cfg!(feature = "cuda"),
        lex: Some(lex),
    };
    let out: TokenStream = pipeline_core::expand_with_options(input.into(), cache, options).into();
    // The whole expansion, token conversions across the compiler's bridge
    // included: what a build pays for this invocation.
    if std::env::var("PIPELINE_DEBUG")
        .is_ok_and(|v| v.split(',').any(|p| p == "time" || p == "all"))
    {
        eprintln!(
            "pipeline!: expanded in {:.1?} ({} bytes of generated code)",
            start.elapsed(),
            out.to_string().len()
        );
    }
    out
}

/// The compiler's lexer, for code the macro hands over as text.
fn lex(text: &str) -> Option<proc_macro2::TokenStream> {
    text.parse::<TokenStream>().ok().map(Into::into)
}
