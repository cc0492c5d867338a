//! Generated Rust as text: what the `code!` macro (the `pipeline-code`
//! crate) builds, the way `quote!` builds tokens.
//!
//! The emitter writes the pipeline's code as text, and the macro hands it
//! to the compiler, which lexes it in one call
//! (`codegen::rust::text`). Tokens are what the compiler wants in the
//! end, but a token of `proc_macro2` is an allocation, a fragment is a
//! vector its parent copies token by token, and inside the compiler every
//! token also crosses the proc-macro bridge: written as tokens, the
//! 100-func chain's code took most of its expansion.

use std::fmt;

/// The code of one identifier or literal, `format!`ted.
macro_rules! word {
    ($($t:tt)*) => {
        $crate::codegen::code::Code::word(format!($($t)*))
    };
}

/// A number literal with its type's suffix (`3i64`, `0.5f32`).
macro_rules! suffixed_lit {
    ($t:ident, $v:expr) => {
        $crate::codegen::code::Code::word(format!(concat!("{}", stringify!($t)), $v))
    };
}

/// A number literal without a suffix.
macro_rules! unsuffixed_lit {
    ($v:expr) => {
        $crate::codegen::code::Code::word(($v).to_string())
    };
}

pub(crate) use {suffixed_lit, unsuffixed_lit, word};

/// A fragment of generated Rust source: tokens written as text, separated
/// so that they lex back as themselves.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Code(String);

impl Code {
    /// The code `text` (which must lex as Rust tokens).
    pub fn from_text(text: String) -> Code {
        Code(text)
    }

    /// The code of one identifier, keyword or literal.
    pub fn word(text: impl Into<String>) -> Code {
        Code(text.into())
    }

    pub fn new() -> Code {
        Code(String::new())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Appends `more`, as `quote!`'s `extend` appends tokens.
    pub fn extend(&mut self, more: impl IntoIterator<Item = Code>) {
        for c in more {
            self.push(&c);
        }
    }

    /// Appends `more`.
    pub fn push(&mut self, more: &Code) {
        push(&mut self.0, &more.0);
    }

    /// A mark for code written later, number `k`: [`Code::fill`] puts
    /// that code in its place. It is bounded by a byte that no code it is
    /// used in holds (a kernel's loop nests: the only user text there is
    /// names of funcs and inputs, identifiers without control characters;
    /// `SCHEDULE`, `LOWERED` and the source are never filled) and that
    /// needs no space beside any other ([`needs_space`]).
    pub(crate) fn placeholder(k: usize) -> Code {
        Code(format!("{PLACE}{k}{PLACE}"))
    }

    /// This code with each [`Code::placeholder`] `k` replaced by
    /// `parts[k]`, spaced as if `parts[k]` had been written in its place.
    pub(crate) fn fill(&self, parts: &[Code]) -> Code {
        let mut out = String::with_capacity(
            self.0.len() + parts.iter().map(|p| p.0.len() + 2).sum::<usize>(),
        );
        let mut rest = self.0.as_str();
        while let Some(at) = rest.find(PLACE) {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let end = after.find(PLACE).expect("a placeholder ends");
            let k: usize = after[..end].parse().expect("a placeholder's number");
            push(&mut out, &parts[k].0);
            rest = &after[end + 1..];
            if let Some(&b) = rest.as_bytes().first() {
                space_before(&mut out, b);
            }
        }
        out.push_str(rest);
        Code(out)
    }
}

/// The bounds of a [`Code::placeholder`].
const PLACE: char = '\u{1}';

pipeline_code::spacing_rule!();

/// A space at the end of `out` if its last token and one that starts with
/// `first` need one ([`needs_space`]).
fn space_before(out: &mut String, first: u8) {
    if out
        .as_bytes()
        .last()
        .is_some_and(|&a| needs_space(a, first))
    {
        out.push(' ');
    }
}

/// Appends `text` (whole tokens) to `out`, after a space where they need
/// one.
pub fn push(out: &mut String, text: &str) {
    if let Some(&b) = text.as_bytes().first() {
        space_before(out, b);
        out.push_str(text);
    }
}

/// `code` in parentheses.
pub(crate) fn parenthesized(code: Code) -> Code {
    let mut s = String::with_capacity(code.0.len() + 2);
    s.push('(');
    s.push_str(&code.0);
    s.push(')');
    Code(s)
}

impl FromIterator<Code> for Code {
    fn from_iter<I: IntoIterator<Item = Code>>(iter: I) -> Code {
        let mut c = Code::new();
        c.extend(iter);
        c
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "code!({})", self.0)
    }
}

/// What `code!` interpolates: `#var` writes `var`'s text.
pub trait Emit {
    fn emit(&self, out: &mut String);
}

impl Emit for Code {
    fn emit(&self, out: &mut String) {
        push(out, &self.0);
    }
}

impl<T: Emit + ?Sized> Emit for &T {
    fn emit(&self, out: &mut String) {
        (**self).emit(out);
    }
}

/// Nothing, or the value (as `quote!` interpolates an `Option`).
impl<T: Emit> Emit for Option<T> {
    fn emit(&self, out: &mut String) {
        if let Some(v) = self {
            v.emit(out);
        }
    }
}

/// A number as `quote!` writes one: a literal with its type's suffix.
macro_rules! suffixed {
    ($($t:ident)*) => {$(
        impl Emit for $t {
            fn emit(&self, out: &mut String) {
                use fmt::Write;
                #[allow(unused_comparisons)]
                space_before(out, if *self < 0 { b'-' } else { b'0' });
                let _ = write!(out, concat!("{}", stringify!($t)), self);
            }
        }
    )*};
}
suffixed!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize);

/// A string literal, as `quote!` interpolates a string.
impl Emit for str {
    fn emit(&self, out: &mut String) {
        use fmt::Write;
        space_before(out, b'"');
        let _ = write!(out, "{self:?}");
    }
}

/// A string literal, as `quote!` interpolates a string.
impl Emit for String {
    fn emit(&self, out: &mut String) {
        self.as_str().emit(out);
    }
}

impl Emit for bool {
    fn emit(&self, out: &mut String) {
        push(out, if *self { "true" } else { "false" });
    }
}

/// What a repetition of `code!` iterates, where it is an iterator: the
/// iterator itself (a vector's, a slice's or an array's items are
/// iterated by reference, [`RepSlice`], as `quote!` does).
pub trait RepIter: Iterator + Sized {
    fn rep(self) -> Self {
        self
    }
}

impl<T: Iterator> RepIter for T {}

/// What a repetition of `code!` iterates, where it is a vector, a slice or
/// an array: its items, by reference.
pub trait RepSlice<'a> {
    type Iter: Iterator;
    fn rep(&'a self) -> Self::Iter;
}

impl<'a, T: 'a> RepSlice<'a> for [T] {
    type Iter = std::slice::Iter<'a, T>;
    fn rep(&'a self) -> Self::Iter {
        self.iter()
    }
}

impl<'a, T: 'a> RepSlice<'a> for Vec<T> {
    type Iter = std::slice::Iter<'a, T>;
    fn rep(&'a self) -> Self::Iter {
        self.iter()
    }
}

impl<'a, T: 'a, const N: usize> RepSlice<'a> for [T; N] {
    type Iter = std::slice::Iter<'a, T>;
    fn rep(&'a self) -> Self::Iter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline_code::code;

    /// The tokens of `t`, delimiters as tokens.
    fn flat(t: proc_macro2::TokenStream, out: &mut Vec<String>) {
        use proc_macro2::{Delimiter, TokenTree};
        for t in t {
            match t {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::None => ("", ""),
                    };
                    out.push(open.into());
                    flat(g.stream(), out);
                    out.push(close.into());
                }
                proc_macro2::TokenTree::Punct(p) => {
                    out.push(format!("{}{:?}", p.as_char(), p.spacing()))
                }
                t => out.push(t.to_string()),
            }
        }
    }

    fn tokens(t: proc_macro2::TokenStream) -> Vec<String> {
        let mut out = Vec::new();
        flat(t, &mut out);
        out
    }

    /// `code!` writes what `quote!` builds: the same tokens, interpolations
    /// and repetitions included.
    #[test]
    fn code_lexes_as_the_tokens_quote_builds() {
        let (a, b) = (Code::word("__a"), Code::word("x.min(y)"));
        let xs = vec![Code::word("1u8"), Code::word("2u8"), Code::word("3u8")];
        let names = ["p", "q", "r"].map(Code::word);
        let (n, no, yes) = (5usize, None::<Code>, Some(Code::word("z")));
        let got = code! {
            #[inline(always)]
            fn f<'a>(v: &'a [u8; #n]) -> ::core::result::Result<(), ()> {
                let #a: i64 = (#b + -3i64) as i64 .. = 4; #no #yes
                g::<u8, 2>([#(#xs),*], #(#names = #xs;)*);
                'outer: loop { x >>= 1; y && !z || w != 0; break 'outer; }
                "s\"t"; 'c'; 0.25f32; r#"raw"#
            }
        };
        let want = quote::quote! {
            #[inline(always)]
            fn f<'a>(v: &'a [u8; 5usize]) -> ::core::result::Result<(), ()> {
                let __a: i64 = (x.min(y) + -3i64) as i64 .. = 4; z
                g::<u8, 2>([1u8, 2u8, 3u8], p = 1u8; q = 2u8; r = 3u8;);
                'outer: loop { x >>= 1; y && !z || w != 0; break 'outer; }
                "s\"t"; 'c'; 0.25f32; r#"raw"#
            }
        };
        let lexed = got.as_str().parse().unwrap();
        assert_eq!(tokens(lexed), tokens(want), "{}", got.as_str());
    }

    /// The spacing rule, looked up by class, is its definition on every
    /// pair of bytes.
    #[test]
    fn spacing_is_its_definition() {
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        let quote = |c: u8| c == b'"' || c == b'\'';
        let mark = |c: u8| {
            c.is_ascii_punctuation()
                && !quote(c)
                && !matches!(c, b'(' | b')' | b'[' | b']' | b'{' | b'}')
        };
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let defined = ((word(a) || quote(a)) && (word(b) || quote(b) || b == b'#'))
                    || (mark(a) && (mark(b) || b == b'\''))
                    || (a.is_ascii_digit() && b == b'.');
                assert_eq!(needs_space(a, b), defined, "{a} {b}");
            }
        }
    }

    /// Code written later in a placeholder's place is spaced as if written
    /// there: between words, marks, groups, at either end, nested in a
    /// fragment its parent takes, and next to another placeholder.
    #[test]
    fn filled_placeholders_are_code_written_in_place() {
        let parts = [
            "x", "-1i64", "{ a }", "as u8", "'a", "r#\"s\"#", "..", "f(y)?;",
        ]
        .map(Code::word);
        let build = |part: &dyn Fn(usize) -> Code| {
            let (p0, p1, p2, p3, p4) = (part(0), part(1), part(2), part(3), part(4));
            let (p5, p6, p7) = (part(5), part(6), part(7));
            let inner = code!(#p0 #p1);
            let both = code!(#p2 #p3);
            code!(#p7 let y = #inner; #p3 z #both & #p4 = #p5 #p6 1 #p6 #p1 #p0)
        };
        let direct = build(&|k| parts[k].clone());
        let later = build(&|k| Code::placeholder(k)).fill(&parts);
        assert_eq!(later.as_str(), direct.as_str());
        assert_eq!(Code::placeholder(3).fill(&parts).as_str(), "as u8");
    }

    /// Spaces go only where a token needs one to stay itself.
    #[test]
    fn code_is_spaced_only_where_tokens_need_it() {
        let v = Code::word("v");
        let args = [Code::word("a"), Code::word("b")];
        let got = code!(f(#v, [#(#args),*]) :: g ->h; x.y[0]);
        assert_eq!(got.as_str(), "f(v,[a,b])::g->h;x.y[0]");
        let n = -1i64;
        let got = code!(a::<u8>(&#v, 'a, &&x, x=-1, y..=z, &'a u8, #n, 1 as u8, #[inline] r#"s"#));
        assert_eq!(
            got.as_str(),
            "a:: <u8>(&v, 'a, &&x,x= -1,y..=z, & 'a u8, -1i64,1 as u8, #[inline]r#\"s\"#)"
        );
    }
}
