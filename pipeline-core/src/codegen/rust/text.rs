//! Generated code handed to the compiler as text.
//!
//! Inside the compiler, every token a proc macro builds crosses the
//! proc-macro bridge: in the expansion of a 100-func chain (1.1 MB of
//! code), the compiler's dispatch of the bridge's calls alone took 183 M
//! of the macro's 584 M instructions (callgrind of rustc, macro
//! optimized). Built in proc-macro2's own tokens instead, printed, and
//! lexed by the compiler in one call, the same code took 501 M
//! instructions and expanded in 52-57 ms where it took 64-66 (Xeon,
//! 2026-11-28). Without optimization (a
//! build's default for proc macros) proc-macro2's own tokens are slower
//! than the bridge, in the optimized compiler: 176-196 ms against 158-168.
//! So the text route is taken where this crate is optimized
//! (`cfg(pipeline_optimized)`, from its build script), the compiler's
//! tokens elsewhere. What comes from the user's tokens (a pipeline's name,
//! visibility and attributes, whose spans errors and editors point at)
//! stays out of the text either way.

use super::Lexer;
use proc_macro2::TokenStream;

/// The token streams `f` makes, in the current tokens: with the
/// compiler's lexer `lex` (inside a proc macro) where this crate is
/// optimized, made in proc-macro2's own tokens and lexed by the compiler
/// from their text; elsewhere made as they are.
pub(crate) fn built_as_text<const N: usize>(
    lex: Option<Lexer>,
    f: impl FnOnce() -> [TokenStream; N],
) -> [TokenStream; N] {
    match lex {
        Some(lex) if cfg!(pipeline_optimized) => {
            own_tokens(|| f().map(|t| t.to_string())).map(|t| compiler_tokens(lex, &t))
        }
        _ => f(),
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

/// `text`, printed by [`own_tokens`]' tokens, lexed by the compiler
/// (proc-macro2's own parse would lex it twice, first to check it).
fn compiler_tokens(lex: Lexer, text: &str) -> TokenStream {
    let lexed = lex(text);
    match lexed {
        Some(tokens) => tokens,
        // Printed tokens always lex again: a failure is the emitter's bug,
        // reported where the macro is invoked rather than as a panic.
        None => syn::Error::new(
            proc_macro2::Span::call_site(),
            "pipeline: internal error, the generated code does not lex again; please report it",
        )
        .to_compile_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn lex(text: &str) -> Option<TokenStream> {
        text.parse().ok()
    }

    /// Code handed over as text is the same code, and so is code built as
    /// it is, without a lexer.
    #[test]
    fn code_handed_over_as_text_is_the_same_code() {
        let make = || {
            [
                quote!(let __x: i64 = -3i64.wrapping_add(0x10); x..=y),
                quote!(
                    #[inline(always)]
                    || {
                        a::<u8, 2>(&b[..], "s\"t", 'c', 0.25f32)?;
                    }
                ),
            ]
        };
        let want = make().map(|t| t.to_string());
        let as_text =
            own_tokens(|| make().map(|t| t.to_string())).map(|t| compiler_tokens(lex, &t));
        assert_eq!(as_text.map(|t| t.to_string()), want);
        assert_eq!(built_as_text(None, make).map(|t| t.to_string()), want);
    }

    /// Text the compiler cannot lex is an error at the invocation, not a
    /// panic.
    #[test]
    fn text_that_does_not_lex_is_a_compile_error() {
        let got = compiler_tokens(|_| None, "a b c");
        assert!(got.to_string().contains("compile_error"), "{got}");
    }
}
