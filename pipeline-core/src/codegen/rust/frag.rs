//! Tokens that are interpolated by moving them.
//!
//! `quote!`'s `#code` of a `TokenStream` copies it (through the proc-macro
//! bridge, a clone and a concatenation; outside it, every token again) and
//! the original is then dropped. The shell [`super::wrap`] puts around
//! the lexed code takes it as [`Frag`]s, which `quote!` interpolates by
//! moving their tokens.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::cell::Cell;

/// Tokens, interpolated (once) by moving them.
pub(crate) struct Frag(Cell<Option<TokenStream>>);

impl Frag {
    pub(crate) fn new(code: TokenStream) -> Frag {
        Frag(Cell::new(Some(code)))
    }
}

impl ToTokens for Frag {
    fn to_tokens(&self, out: &mut TokenStream) {
        let code = self.0.take().expect("a fragment is interpolated once");
        out.extend(std::iter::once(code));
    }
}
