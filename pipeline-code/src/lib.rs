//! `code!`, for the emitter of `pipeline-core`: Rust source text written
//! the way `quote!` writes tokens, with the same interpolations (`#var`,
//! `#(...)*`, `#(...),*`), but into one `String`.
//!
//! The `pipeline!` macro hands its generated code to the compiler as text
//! it lexes in one call. Built as tokens first, every token was an
//! allocation, every fragment a vector that its parent copied, and the
//! tokens were then printed: most of the emitter's time. Here a run of
//! literal tokens becomes one string fixed when pipeline-core is compiled,
//! and an interpolation appends its text.
//!
//! The expansion is a block whose value is `crate::codegen::code::Code`.
//! A run of literal tokens is written by `crate::codegen::code::push`, an
//! interpolation `#var` by `crate::codegen::code::Emit::emit(&var, ..)`;
//! both put a space before their text where it and the text before it
//! need one (`spacing.rs`, which pipeline-core gets from [`spacing_rule!`]), and
//! inside a run the spaces are fixed here. The compiler lexes back the
//! tokens `quote!` would build, their spacing (joint or alone) included:
//! marks are separated but inside an operator (`::`, `->`, split from its
//! neighbours as `quote!` splits them: `:: <`).
//!
//! A repetition iterates every variable interpolated in it, in step (a
//! vector, array or slice by reference, an iterator by value:
//! `crate::codegen::code::{RepSlice, RepIter}`), and stops at the
//! shortest.

use proc_macro::{Delimiter, Spacing, TokenStream, TokenTree};
use std::fmt::Write;

/// See the crate's documentation.
#[proc_macro]
pub fn code(input: TokenStream) -> TokenStream {
    let mut w = Writer::default();
    let body = match w.tokens(input) {
        Ok(()) => w.finish(),
        Err(message) => {
            return format!("::core::compile_error!({message:?})")
                .parse()
                .unwrap()
        }
    };
    format!(
        "{{ let mut __code = ::std::string::String::with_capacity({}); {body} \
         crate::codegen::code::Code::from_text(__code) }}",
        w.capacity
    )
    .parse()
    .unwrap()
}

/// A number new to each compilation of the crate that uses it: the
/// time, the process and a counter, mixed. pipeline-core keys the
/// expansions its macro remembers across builds with it, so that a macro
/// built from other sources never reuses an earlier build's code.
#[proc_macro]
pub fn build_nonce(_: TokenStream) -> TokenStream {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = time
        ^ (u64::from(std::process::id()) << 32)
        ^ CALLS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // A 64-bit mix (splitmix64's finalizer), so that close times differ
    // in every bit.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    format!("{x}u64").parse().unwrap()
}

mod spacing {
    include!("spacing.rs");
}
use spacing::needs_space;

/// pipeline-core's copy of [`needs_space`], for the text it joins at run
/// time: the same source, so the two halves cannot disagree.
#[proc_macro]
pub fn spacing_rule(_: TokenStream) -> TokenStream {
    include_str!("spacing.rs").parse().unwrap()
}

/// The statements that write one `code!`'s text into `__code`.
#[derive(Default)]
struct Writer {
    /// Statements so far.
    out: String,
    /// Literal text not yet written by a statement.
    text: String,
    /// Bytes of literal text, and a guess for each interpolation.
    capacity: usize,
    /// Repetitions so far (each names its iterators apart).
    repetitions: usize,
}

impl Writer {
    fn tokens(&mut self, input: TokenStream) -> Result<(), String> {
        let mut tokens = input.into_iter().peekable();
        while let Some(t) = tokens.next() {
            match t {
                TokenTree::Punct(p) if p.as_char() == '#' => match tokens.peek() {
                    Some(TokenTree::Ident(_)) => {
                        let Some(TokenTree::Ident(var)) = tokens.next() else {
                            unreachable!()
                        };
                        self.interpolate(&var.to_string());
                    }
                    Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                        let Some(TokenTree::Group(g)) = tokens.next() else {
                            unreachable!()
                        };
                        let mut separator = Vec::new();
                        loop {
                            match tokens.next() {
                                Some(TokenTree::Punct(p)) if p.as_char() == '*' => break,
                                Some(t) => separator.push(t),
                                None => return Err("code!: `#(...)` without its `*`".into()),
                            }
                        }
                        self.repetition(g.stream(), separator)?;
                    }
                    _ => self.word("#"),
                },
                // A lifetime: its mark and name, one word.
                TokenTree::Punct(p) if p.as_char() == '\'' && p.spacing() == Spacing::Joint => {
                    match tokens.next() {
                        Some(TokenTree::Ident(name)) => self.word(&format!("'{name}")),
                        _ => return Err("code!: a `'` that starts no lifetime".into()),
                    }
                }
                TokenTree::Punct(p) => {
                    // The marks written together, then one operator at a
                    // time, as `quote!` writes them.
                    let mut run = String::from(p.as_char());
                    let mut joint = p.spacing() == Spacing::Joint;
                    while joint {
                        match tokens.peek() {
                            Some(TokenTree::Punct(q)) if !matches!(q.as_char(), '#' | '\'') => {
                                run.push(q.as_char());
                                joint = q.spacing() == Spacing::Joint;
                                tokens.next();
                            }
                            _ => break,
                        }
                    }
                    let mut rest = run.as_str();
                    while !rest.is_empty() {
                        let len = OPERATORS
                            .iter()
                            .find(|op| rest.starts_with(*op))
                            .map_or(1, |op| op.len());
                        self.word(&rest[..len]);
                        rest = &rest[len..];
                    }
                }
                TokenTree::Ident(i) => self.word(&i.to_string()),
                TokenTree::Literal(l) => self.word(&l.to_string()),
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::None => ("", ""),
                    };
                    self.word(open);
                    self.tokens(g.stream())?;
                    self.word(close);
                }
            }
        }
        Ok(())
    }

    /// One token's text, after a space where it and the one before need
    /// one (decided at run time at the start of a run).
    fn word(&mut self, word: &str) {
        if let (Some(&a), Some(&b)) = (self.text.as_bytes().last(), word.as_bytes().first()) {
            if needs_space(a, b) {
                self.text.push(' ');
            }
        }
        self.text.push_str(word);
    }

    /// Writes the literal text so far.
    fn flush(&mut self) {
        if !self.text.is_empty() {
            self.capacity += self.text.len() + 1;
            let _ = write!(
                self.out,
                "crate::codegen::code::push(&mut __code, {:?});",
                self.text
            );
            self.text.clear();
        }
    }

    fn interpolate(&mut self, var: &str) {
        self.flush();
        self.capacity += 16;
        let _ = write!(
            self.out,
            "crate::codegen::code::Emit::emit(&{var}, &mut __code);"
        );
    }

    /// `#( body ) separator *`: `body` once per item of the variables it
    /// interpolates, `separator` between.
    fn repetition(&mut self, body: TokenStream, separator: Vec<TokenTree>) -> Result<(), String> {
        let mut vars = Vec::new();
        interpolated(body.clone(), &mut vars);
        if vars.is_empty() {
            return Err("code!: a repetition that interpolates nothing".into());
        }
        self.flush();
        let r = self.repetitions;
        self.repetitions += 1;
        let mut head = String::from("{ use crate::codegen::code::{RepIter as _, RepSlice as _};");
        for (k, v) in vars.iter().enumerate() {
            let _ = write!(head, "let mut __r{r}_{k} = {v}.rep();");
        }
        let _ = write!(head, "let mut __first{r} = true; loop {{");
        for (k, v) in vars.iter().enumerate() {
            let _ = write!(
                head,
                "let {v} = match ::core::iter::Iterator::next(&mut __r{r}_{k}) \
                 {{ ::core::option::Option::Some(v) => v, ::core::option::Option::None => break }};"
            );
        }
        self.out.push_str(&head);
        // The separator, before every item but the first.
        let mut sep = Writer::default();
        sep.tokens(separator.into_iter().collect())?;
        sep.flush();
        let _ = write!(
            self.out,
            "if !__first{r} {{ {} }} __first{r} = false;",
            sep.out
        );
        self.capacity += sep.capacity;
        // The body, as its own text.
        let mut inner = Writer {
            repetitions: self.repetitions,
            ..Writer::default()
        };
        inner.tokens(body)?;
        inner.flush();
        self.repetitions = inner.repetitions;
        self.capacity += inner.capacity;
        let _ = write!(self.out, "{} }} }}", inner.out);
        Ok(())
    }

    fn finish(&mut self) -> String {
        self.flush();
        std::mem::take(&mut self.out)
    }
}

/// Rust's operators of more than one mark, longest first.
const OPERATORS: [&str; 24] = [
    "<<=", ">>=", "...", "..=", "::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>", "..",
];

/// The variables `#var` interpolates in `body`, each once, in order.
fn interpolated(body: TokenStream, vars: &mut Vec<String>) {
    let mut tokens = body.into_iter().peekable();
    while let Some(t) = tokens.next() {
        match t {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Ident(i)) = tokens.peek() {
                    let name = i.to_string();
                    if !vars.contains(&name) {
                        vars.push(name);
                    }
                    tokens.next();
                }
            }
            TokenTree::Group(g) => interpolated(g.stream(), vars),
            _ => {}
        }
    }
}
