//! Generated code handed to the compiler as text.
//!
//! The emitter writes its code as text (`codegen::code`, the `code!`
//! macro), and the compiler lexes it in one call. Inside the compiler,
//! every token a proc macro builds crosses the proc-macro bridge: in the
//! expansion of a 100-func chain (1.1 MB of code), the bridge's calls
//! alone took 183 M of the macro's 584 M instructions, when the emitter
//! built the compiler's tokens (callgrind of rustc, macro optimized). Built
//! as proc-macro2's own tokens, printed and lexed, the same code took 501
//! M; written as text, without tokens, see `codegen::code`. What comes
//! from the user's tokens (a pipeline's name, visibility and attributes,
//! whose spans errors and editors point at) stays out of the text.

use super::Lexer;
use crate::codegen::code::Code;
use proc_macro2::TokenStream;

/// `code` as tokens: lexed by the compiler (`lex`, inside a proc macro),
/// else by proc-macro2 (tests, benches, tools).
pub(crate) fn tokens(lex: Option<Lexer>, code: &Code) -> TokenStream {
    let lexed = match lex {
        Some(lex) => lex(code.as_str()),
        None => code.as_str().parse().ok(),
    };
    match lexed {
        Some(tokens) => tokens,
        // `code!` writes tokens that lex again: a failure is the emitter's
        // bug, reported where the macro is invoked rather than as a panic.
        None => syn::Error::new(
            proc_macro2::Span::call_site(),
            "pipeline: internal error, the generated code does not lex; please report it",
        )
        .to_compile_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lexer that shows it was called: the text's tokens after a
    /// marker.
    fn lex(text: &str) -> Option<TokenStream> {
        format!("lexed {text}").parse().ok()
    }

    /// Code goes through the compiler's lexer where there is one, and is
    /// lexed by proc-macro2 where there is none.
    #[test]
    fn code_is_handed_over_through_the_lexer_given() {
        let code = Code::word("let __x: i64 = -3i64.wrapping_add(0x10); a::<u8, 2>(&b[..], \"s\\\"t\", 'c', 0.25f32)?;");
        let own: TokenStream = code.as_str().parse().unwrap();
        assert_eq!(tokens(Some(lex), &code).to_string(), format!("lexed {own}"));
        assert_eq!(tokens(None, &code).to_string(), own.to_string());
    }

    /// Text that does not lex is an error at the invocation, not a panic.
    #[test]
    fn text_that_does_not_lex_is_a_compile_error() {
        let bad = Code::word("a \"b");
        let got = tokens(Some(|_| None), &bad);
        assert!(got.to_string().contains("compile_error"), "{got}");
        let got = tokens(None, &bad);
        assert!(got.to_string().contains("compile_error"), "{got}");
    }
}
