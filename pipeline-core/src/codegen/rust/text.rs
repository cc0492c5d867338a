//! Generated code handed to the compiler as text.
//!
//! Inside the compiler, every token a proc macro builds crosses the
//! proc-macro bridge, whose work took about half of the macro's
//! instructions in the expansion of a 100-func chain (1.1 MB of code).
//! Built in proc-macro2's own tokens instead, printed, and lexed by the
//! compiler in one call, the same code expanded in 54 ms where it took
//! 64-66 (macro optimized, Xeon, 2026-11-28). Without optimization (a
//! build's default for proc macros) proc-macro2's own tokens are slower
//! than the bridge, in the optimized compiler: 176-196 ms against 158-168.
//! So the text route is taken where this crate is optimized
//! (`cfg(pipeline_optimized)`, from its build script), the compiler's
//! tokens elsewhere. What comes from the user's tokens (a pipeline's name,
//! visibility and attributes, whose spans errors and editors point at)
//! stays out of the text either way.

extern crate proc_macro;

use proc_macro2::TokenStream;

/// The token streams `f` makes, in the current tokens: inside a proc macro
/// where this crate is optimized, made in proc-macro2's own tokens and
/// lexed by the compiler from their text; elsewhere (outside a proc
/// macro the tokens are proc-macro2's own anyway) made as they are.
pub(crate) fn built_as_text<const N: usize>(
    f: impl FnOnce() -> [TokenStream; N],
) -> [TokenStream; N] {
    if cfg!(pipeline_optimized) && proc_macro::is_available() {
        own_tokens(|| f().map(|t| t.to_string())).map(|t| compiler_tokens(&t))
    } else {
        f()
    }
}

/// Runs `f` with proc-macro2's own tokens in place of the compiler's (where
/// a proc macro runs: elsewhere they are its own anyway). Tokens made
/// inside must not leave it but as text: they cannot mix with the
/// compiler's.
///
/// proc-macro2 decides which tokens to make process-wide, and rustc
/// expands proc macros one at a time, on one thread.
fn own_tokens<R>(f: impl FnOnce() -> R) -> R {
    /// Back to the compiler's tokens however `f` ends.
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            proc_macro2::fallback::unforce();
        }
    }
    proc_macro2::fallback::force();
    let _restore = Restore;
    f()
}

/// `text`, printed by [`own_tokens`]' tokens, as the compiler's tokens,
/// lexed by the compiler (proc-macro2's own parse would lex it twice,
/// first to check it).
fn compiler_tokens(text: &str) -> TokenStream {
    let lexed = text
        .parse::<proc_macro::TokenStream>()
        .map(TokenStream::from);
    match lexed {
        Ok(tokens) => tokens,
        // Printed tokens always lex again: a failure is the emitter's bug,
        // reported where the macro is invoked rather than as a panic.
        Err(e) => syn::Error::new(
            proc_macro2::Span::call_site(),
            format!("pipeline: internal error, generated code does not lex again ({e}); please report it"),
        )
        .to_compile_error(),
    }
}
