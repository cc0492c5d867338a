//! Generated code that is interpolated by moving it.
//!
//! `quote!`'s `#code` of a `TokenStream` copies it (through the proc-macro
//! bridge, a clone and a concatenation; outside it, every token again) and
//! the original is then dropped. The emitter builds each fragment once and
//! interpolates it once, so it hands fragments over as [`Frag`]s, which
//! `quote!` interpolates by moving their tokens: a fifth of the macro's
//! time, inside rustc, went to those copies.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;
use std::cell::Cell;

/// A fragment of generated code, interpolated (once) by moving it.
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

/// `code` in parentheses, as one token tree (moved, not copied).
pub(crate) fn parenthesized(code: TokenStream) -> TokenStream {
    TokenTree::Group(Group::new(Delimiter::Parenthesis, code)).into()
}
