//! A reader of the simplest `schedule` block bodies, straight from their
//! text: statements that are chains of directives on a func, as the
//! auto-scheduler's plans (`f.store_at(g, yo).compute_at(g, yi);`, read
//! back and checked on every expansion that has no block of its own) and
//! the schedule cache's entries are written.
//!
//! Inside the compiler, text becomes tokens through the compiler's lexer
//! and every group is read back through its bridge: for the 100-func
//! chain's plan (6 KB) that took 2.3 ms. Here the text is read character by
//! character and the syn trees are built directly, with the call site's
//! span, as the lexer gives text that is no user's tokens. Anything else
//! (a comment, a literal with a suffix or leading zeros, a keyword, a name
//! with spaces) is left to the readers of general bodies: [`body`] returns
//! `None` and reads nothing.

use proc_macro2::{Ident, Literal, Span};
use syn::{Expr, Stmt};

/// The body of a block whose statements are all directive chains, each
/// ending in `;`, or `None`.
pub fn body(text: &str) -> Option<syn::Block> {
    let mut r = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let mut stmts = Vec::new();
    while !r.done() {
        let chain = r.chain()?;
        r.expect(b';')?;
        stmts.push(Stmt::Expr(chain, Some(syn::Token![;](span()))));
    }
    Some(syn::Block {
        brace_token: syn::token::Brace::default(),
        stmts,
    })
}

fn span() -> Span {
    Span::call_site()
}

struct Reader<'t> {
    text: &'t [u8],
    at: usize,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn done(&mut self) -> bool {
        self.skip_space();
        self.at == self.text.len()
    }

    /// Whether the next character (after spaces) is `c`; if so, past it.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        let here = self.text.get(self.at) == Some(&c);
        self.at += usize::from(here);
        here
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.eat(c).then_some(())
    }

    /// A run of characters after spaces, while `ok` holds.
    fn run(&mut self, ok: impl Fn(u8) -> bool) -> &str {
        self.skip_space();
        let start = self.at;
        while self.text.get(self.at).is_some_and(|&c| ok(c)) {
            self.at += 1;
        }
        // Only ASCII was taken, so the run is whole characters.
        std::str::from_utf8(&self.text[start..self.at]).unwrap_or("")
    }

    /// An identifier that is not a keyword.
    fn ident(&mut self) -> Option<Ident> {
        let word = self.run(|c| c.is_ascii_alphanumeric() || c == b'_');
        let first = *word.as_bytes().first()?;
        if first.is_ascii_digit() || super::quick::is_keyword_word(word) {
            return None;
        }
        Some(Ident::new(word, span()))
    }

    /// A decimal integer written as its value prints (no leading zero: the
    /// literal would print as written); a suffix or a `_` after it is left
    /// unread, and no directive's grammar takes it.
    fn int(&mut self) -> Option<Expr> {
        let digits = self.run(|c| c.is_ascii_digit());
        if digits.len() > 1 && digits.starts_with('0') {
            return None;
        }
        let value: u64 = digits.parse().ok()?;
        Some(Expr::Lit(syn::ExprLit {
            attrs: Vec::new(),
            lit: syn::Lit::Int(Literal::u64_unsuffixed(value).into()),
        }))
    }

    fn starts_with_digit(&mut self) -> bool {
        self.skip_space();
        self.text.get(self.at).is_some_and(u8::is_ascii_digit)
    }

    /// `name`, `name[k]`, then `.member` and `.method(args)` in any number.
    fn chain(&mut self) -> Option<Expr> {
        let name = self.ident()?;
        let mut e = Expr::Path(syn::ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: name.into(),
        });
        if self.eat(b'[') {
            let index = self.int()?;
            self.expect(b']')?;
            e = Expr::Index(syn::ExprIndex {
                attrs: Vec::new(),
                expr: Box::new(e),
                bracket_token: syn::token::Bracket::default(),
                index: Box::new(index),
            });
        }
        while self.eat(b'.') {
            let name = self.ident()?;
            if !self.eat(b'(') {
                e = Expr::Field(syn::ExprField {
                    attrs: Vec::new(),
                    base: Box::new(e),
                    dot_token: syn::Token![.](span()),
                    member: syn::Member::Named(name),
                });
                continue;
            }
            let mut args = syn::punctuated::Punctuated::new();
            if !self.eat(b')') {
                loop {
                    let arg = match self.starts_with_digit() {
                        true => self.int()?,
                        false => self.chain()?,
                    };
                    args.push_value(arg);
                    if self.eat(b')') {
                        break;
                    }
                    self.expect(b',')?;
                    args.push_punct(syn::Token![,](span()));
                }
            }
            e = Expr::MethodCall(syn::ExprMethodCall {
                attrs: Vec::new(),
                receiver: Box::new(e),
                dot_token: syn::Token![.](span()),
                method: name,
                turbofish: None,
                paren_token: syn::token::Paren::default(),
                args,
            });
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;

    /// What syn reads from the text as a block's body, printed.
    fn by_syn(text: &str) -> String {
        let block: syn::Block = syn::parse_str(&format!("{{\n{text}\n}}")).unwrap();
        block.to_token_stream().to_string()
    }

    /// Bodies of directive chains are read as syn reads them.
    #[test]
    fn chains_are_read_as_syn_reads_them() {
        for text in [
            "f0.compute_root().split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);\n\
             f1.store_at(f9, yo).compute_at(f9, yi).vectorize(x, 16);\n",
            "gauss[0].compute_inline();\ngauss[1].reduce_x.compute_at(gauss[1], yo).vectorize(x, 16);",
            "blurred_value.blur_z.store_at(blurred_value, yo).compute_at(blurred_value, yi);",
            "grid.compute_root().update(0).reorder(x, rx, ry).vectorize(x, 8).parallel(y);",
            "out.split(x, xo, xi, 8192).parallel(xo).vectorize(xi, 64).update(0);",
            "  a . b ( c , 7 ) ;b.c();",
            "auto;",
            "",
        ] {
            let block = super::body(text).unwrap_or_else(|| panic!("not read: {text}"));
            assert_eq!(block.to_token_stream().to_string(), by_syn(text), "{text}");
        }
    }

    /// Random directive chains, some of them with a piece inserted or
    /// removed: the reader never panics, and what it reads, syn reads the
    /// same.
    #[test]
    fn random_chains_are_read_as_syn_reads_them_or_left() {
        const NAMES: [&str; 8] = ["f", "g1", "_x", "yo", "rx", "x2", "blur_x", "in"];
        const PIECES: [&str; 12] = [
            ".", "(", ")", "[", "]", ",", ";", " ", "7", "0x1", "f", "\n",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as usize % n
        };
        let (mut read, mut left) = (0, 0);
        for _ in 0..20_000 {
            let mut pieces: Vec<String> = Vec::new();
            for _ in 0..1 + next(3) {
                pieces.push(NAMES[next(8)].into());
                if next(4) == 0 {
                    pieces.push(format!("[{}]", next(3)));
                }
                for _ in 0..next(4) {
                    pieces.push(format!(".{}", NAMES[next(8)]));
                    if next(3) > 0 {
                        let args: Vec<String> = (0..next(4))
                            .map(|_| match next(3) {
                                0 => next(100).to_string(),
                                _ => NAMES[next(8)].to_string(),
                            })
                            .collect();
                        pieces.push(format!("({})", args.join(", ")));
                    }
                }
                pieces.push(";\n".into());
            }
            match next(3) {
                0 => pieces.insert(next(pieces.len() + 1), PIECES[next(12)].into()),
                1 => drop(pieces.remove(next(pieces.len()))),
                _ => {}
            }
            let text = pieces.concat();
            match super::body(&text) {
                Some(block) => {
                    assert_eq!(
                        block.to_token_stream().to_string(),
                        by_syn(&text),
                        "{text:?}"
                    );
                    read += 1;
                }
                None => left += 1,
            }
        }
        assert!(read > 4_000 && left > 10_000, "{read} read, {left} left");
    }

    /// What is not a directive chain, or is written in a way the trees
    /// built here might not match, is left to the other readers.
    #[test]
    fn other_bodies_are_left_to_the_other_readers() {
        for text in [
            "f.compute_root()",
            "f.vectorize(x, 16u32);",
            "f.split(y, yo, yi, 0x20);",
            "f.split(y, yo, yi, 1_000);",
            "f.split(y, yo, yi, 032);",
            "f.split(y, yo, yi, 99999999999999999999999);",
            "// a comment\nf.compute_root();",
            "estimate(out, 1920, 1080);",
            "fn.compute_root();",
            "f.compute_at(g, 3x);",
            "f(x).compute_root();",
            "f.vectorize(x, -1);",
            "f..compute_root();",
            "t(f).compute_root();",
            "r#f.compute_root();",
            "f.compute_root(),",
        ] {
            assert!(super::body(text).is_none(), "{text}");
        }
    }
}
