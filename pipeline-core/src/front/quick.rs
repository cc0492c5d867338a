//! The common forms of a pipeline's body parsed without syn's parser, into
//! the trees syn would build, with the user's tokens and spans.
//!
//! A default build runs the macro unoptimized, and syn's expression
//! parser, which tries every form of Rust at every token, was most of the
//! parse of a long pipeline (and inside the compiler each keyword it
//! tries on a name is a call across the proc-macro bridge). Bodies are
//! mostly `f(x, y) = expr;` and `let c = expr;` over calls, arithmetic,
//! casts and method calls: [`block`] reads those, and gives up (`None`,
//! and syn parses the body as before) at the first token of anything else,
//! so what it accepts is exactly what syn would have built
//! (`tests::the_trees_are_syns`, and the fuzz test compares the two on
//! every mutated invocation).

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenTree};
use syn::punctuated::Punctuated;
use syn::{BinOp, Expr, Stmt, UnOp};

/// The body in the braces of `group` as syn's `Block`, if every statement
/// is of a form read here.
pub fn block(group: &Group) -> Option<syn::Block> {
    if group.delimiter() != Delimiter::Brace {
        return None;
    }
    let trees: Vec<TokenTree> = group.stream().into_iter().collect();
    let mut p = Parser { trees, at: 0 };
    let mut stmts = Vec::new();
    while !p.done() {
        stmts.push(p.stmt()?);
    }
    // Only the last statement may lack its `;` (the body's value).
    let n = stmts.len();
    for (k, s) in stmts.iter().enumerate() {
        if matches!(s, Stmt::Expr(_, None)) && k + 1 != n {
            return None;
        }
    }
    Some(syn::Block {
        brace_token: syn::token::Brace {
            span: group.delim_span(),
        },
        stmts,
    })
}

struct Parser {
    trees: Vec<TokenTree>,
    at: usize,
}

/// How tightly a binary operator binds, as syn ranks them (higher binds
/// tighter); assignment and ranges are not read here.
fn precedence(op: &BinOp) -> u8 {
    match op {
        BinOp::Or(_) => 1,
        BinOp::And(_) => 2,
        BinOp::Eq(_) | BinOp::Ne(_) | BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) => {
            3
        }
        BinOp::BitOr(_) => 4,
        BinOp::BitXor(_) => 5,
        BinOp::BitAnd(_) => 6,
        BinOp::Shl(_) | BinOp::Shr(_) => 7,
        BinOp::Add(_) | BinOp::Sub(_) => 8,
        _ => 9,
    }
}

/// The precedence of `as`: above every binary operator.
const CAST: u8 = 10;

impl Parser {
    fn done(&self) -> bool {
        self.at >= self.trees.len()
    }

    fn peek(&self, k: usize) -> Option<&TokenTree> {
        self.trees.get(self.at + k)
    }

    fn punct(&self, k: usize) -> Option<&Punct> {
        match self.peek(k) {
            Some(TokenTree::Punct(p)) => Some(p),
            _ => None,
        }
    }

    /// The punctuation at the cursor as one operator: its characters and
    /// spans, if they form one of the operators read here and nothing
    /// joins on after it.
    fn operator(&self) -> Option<(String, Vec<Span>)> {
        let mut text = String::new();
        let mut spans = Vec::new();
        let mut k = 0;
        loop {
            let p = self.punct(k)?;
            text.push(p.as_char());
            spans.push(p.span());
            k += 1;
            if p.spacing() == Spacing::Alone || k == 3 {
                break;
            }
            // A joint mark followed by something that is not a mark (a
            // lifetime's `'`): not an operator read here.
            self.punct(k)?;
        }
        if self.punct(k - 1)?.spacing() == Spacing::Joint {
            return None;
        }
        Some((text, spans))
    }

    /// The binary operator at the cursor and its width in tokens.
    fn binary(&self) -> Option<(BinOp, usize)> {
        let (text, s) = self.operator()?;
        let op = match text.as_str() {
            "+" => BinOp::Add(syn::Token![+](s[0])),
            "-" => BinOp::Sub(syn::Token![-](s[0])),
            "*" => BinOp::Mul(syn::Token![*](s[0])),
            "/" => BinOp::Div(syn::Token![/](s[0])),
            "%" => BinOp::Rem(syn::Token![%](s[0])),
            "^" => BinOp::BitXor(syn::Token![^](s[0])),
            "&" => BinOp::BitAnd(syn::Token![&](s[0])),
            "|" => BinOp::BitOr(syn::Token![|](s[0])),
            "<" => BinOp::Lt(syn::Token![<](s[0])),
            ">" => BinOp::Gt(syn::Token![>](s[0])),
            "&&" => BinOp::And(syn::Token![&&]([s[0], s[1]])),
            "||" => BinOp::Or(syn::Token![||]([s[0], s[1]])),
            "<<" => BinOp::Shl(syn::Token![<<]([s[0], s[1]])),
            ">>" => BinOp::Shr(syn::Token![>>]([s[0], s[1]])),
            "==" => BinOp::Eq(syn::Token![==]([s[0], s[1]])),
            "!=" => BinOp::Ne(syn::Token![!=]([s[0], s[1]])),
            "<=" => BinOp::Le(syn::Token![<=]([s[0], s[1]])),
            ">=" => BinOp::Ge(syn::Token![>=]([s[0], s[1]])),
            _ => return None,
        };
        Some((op, text.len()))
    }

    /// A statement: `let NAME = expr;`, `expr = expr;`, `expr op= expr;`,
    /// `expr;`, or the body's final `expr`.
    fn stmt(&mut self) -> Option<Stmt> {
        if let Some(TokenTree::Ident(i)) = self.peek(0) {
            if i == "let" {
                return self.local();
            }
        }
        let left = self.expr(0)?;
        let expr = match self.operator() {
            Some((text, s)) if text == "=" => {
                self.at += 1;
                let right = self.expr(0)?;
                Expr::Assign(syn::ExprAssign {
                    attrs: Vec::new(),
                    left: Box::new(left),
                    eq_token: syn::Token![=](s[0]),
                    right: Box::new(right),
                })
            }
            Some((text, s)) if text.len() == 2 && text.ends_with('=') => {
                let op = match text.as_str() {
                    "+=" => BinOp::AddAssign(syn::Token![+=]([s[0], s[1]])),
                    "-=" => BinOp::SubAssign(syn::Token![-=]([s[0], s[1]])),
                    "*=" => BinOp::MulAssign(syn::Token![*=]([s[0], s[1]])),
                    "/=" => BinOp::DivAssign(syn::Token![/=]([s[0], s[1]])),
                    "%=" => BinOp::RemAssign(syn::Token![%=]([s[0], s[1]])),
                    "^=" => BinOp::BitXorAssign(syn::Token![^=]([s[0], s[1]])),
                    "&=" => BinOp::BitAndAssign(syn::Token![&=]([s[0], s[1]])),
                    "|=" => BinOp::BitOrAssign(syn::Token![|=]([s[0], s[1]])),
                    _ => return None,
                };
                self.at += 2;
                let right = self.expr(0)?;
                Expr::Binary(syn::ExprBinary {
                    attrs: Vec::new(),
                    left: Box::new(left),
                    op,
                    right: Box::new(right),
                })
            }
            _ => left,
        };
        match self.operator() {
            Some((text, s)) if text == ";" => {
                self.at += 1;
                Some(Stmt::Expr(expr, Some(syn::Token![;](s[0]))))
            }
            None if self.done() => Some(Stmt::Expr(expr, None)),
            _ => None,
        }
    }

    /// `let NAME = expr;`
    fn local(&mut self) -> Option<Stmt> {
        let let_token = syn::Token![let](self.ident(0)?.span());
        let name = self.ident(1)?.clone();
        if is_keyword(&name) {
            return None;
        }
        self.at += 2;
        let eq = match self.operator()? {
            (text, s) if text == "=" => syn::Token![=](s[0]),
            _ => return None,
        };
        self.at += 1;
        let value = self.expr(0)?;
        let semi = match self.operator()? {
            (text, s) if text == ";" => syn::Token![;](s[0]),
            _ => return None,
        };
        self.at += 1;
        Some(Stmt::Local(syn::Local {
            attrs: Vec::new(),
            let_token,
            pat: syn::Pat::Ident(syn::PatIdent {
                attrs: Vec::new(),
                by_ref: None,
                mutability: None,
                ident: name,
                subpat: None,
            }),
            init: Some(syn::LocalInit {
                eq_token: eq,
                expr: Box::new(value),
                diverge: None,
            }),
            semi_token: semi,
        }))
    }

    fn ident(&self, k: usize) -> Option<&Ident> {
        match self.peek(k) {
            Some(TokenTree::Ident(i)) => Some(i),
            _ => None,
        }
    }

    /// An expression of binary operators binding tighter than `min`, by
    /// precedence climbing: left to right within a precedence, as syn;
    /// comparisons do not chain.
    fn expr(&mut self, min: u8) -> Option<Expr> {
        let mut left = self.unary()?;
        let mut compared = false;
        loop {
            if matches!(self.peek(0), Some(TokenTree::Ident(i)) if i == "as") {
                if CAST <= min {
                    break;
                }
                left = self.cast(left)?;
                continue;
            }
            let Some((op, width)) = self.binary() else {
                break;
            };
            let prec = precedence(&op);
            if prec <= min {
                break;
            }
            if prec == 3 {
                if compared {
                    return None;
                }
                compared = true;
            }
            self.at += width;
            let right = self.expr(prec)?;
            left = Expr::Binary(syn::ExprBinary {
                attrs: Vec::new(),
                left: Box::new(left),
                op,
                right: Box::new(right),
            });
        }
        Some(left)
    }

    /// `expr as T`, `T` a name.
    fn cast(&mut self, expr: Expr) -> Option<Expr> {
        let as_token = syn::Token![as](self.ident(0)?.span());
        let ty = self.ident(1)?.clone();
        if is_keyword(&ty) {
            return None;
        }
        self.at += 2;
        // `x as T < y` reads as generic arguments to Rust, `x as T::U` as a
        // path: syn's business.
        if let Some(p) = self.punct(0) {
            if matches!(p.as_char(), '<' | ':') {
                return None;
            }
        }
        Some(Expr::Cast(syn::ExprCast {
            attrs: Vec::new(),
            expr: Box::new(expr),
            as_token,
            ty: Box::new(syn::Type::Path(syn::TypePath {
                qself: None,
                path: ty.into(),
            })),
        }))
    }

    /// `-x`, `!x`, or a postfix expression.
    fn unary(&mut self) -> Option<Expr> {
        if let Some(p) = self.punct(0) {
            let op = match p.as_char() {
                '-' if p.spacing() == Spacing::Alone => UnOp::Neg(syn::Token![-](p.span())),
                '!' if p.spacing() == Spacing::Alone => UnOp::Not(syn::Token![!](p.span())),
                _ => return None,
            };
            self.at += 1;
            let expr = self.unary()?;
            return Some(Expr::Unary(syn::ExprUnary {
                attrs: Vec::new(),
                op,
                expr: Box::new(expr),
            }));
        }
        self.postfix()
    }

    /// A primary expression followed by calls and method calls.
    fn postfix(&mut self) -> Option<Expr> {
        let mut e = self.primary()?;
        loop {
            match self.peek(0) {
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    let g = g.clone();
                    self.at += 1;
                    e = Expr::Call(syn::ExprCall {
                        attrs: Vec::new(),
                        func: Box::new(e),
                        paren_token: syn::token::Paren {
                            span: g.delim_span(),
                        },
                        args: arguments(&g)?,
                    });
                }
                Some(TokenTree::Punct(p))
                    if p.as_char() == '.' && p.spacing() == Spacing::Alone =>
                {
                    let dot = syn::Token![.](p.span());
                    let method = self.ident(1)?.clone();
                    if is_keyword(&method) {
                        return None;
                    }
                    let Some(TokenTree::Group(g)) = self.peek(2) else {
                        return None;
                    };
                    if g.delimiter() != Delimiter::Parenthesis {
                        return None;
                    }
                    let g = g.clone();
                    self.at += 3;
                    e = Expr::MethodCall(syn::ExprMethodCall {
                        attrs: Vec::new(),
                        receiver: Box::new(e),
                        dot_token: dot,
                        method,
                        turbofish: None,
                        paren_token: syn::token::Paren {
                            span: g.delim_span(),
                        },
                        args: arguments(&g)?,
                    });
                }
                _ => return Some(e),
            }
        }
    }

    /// A name, a literal, or an expression in parentheses.
    fn primary(&mut self) -> Option<Expr> {
        let e = match self.peek(0)? {
            TokenTree::Ident(i) if i == "true" || i == "false" => Expr::Lit(syn::ExprLit {
                attrs: Vec::new(),
                lit: syn::Lit::Bool(syn::LitBool {
                    value: i == "true",
                    span: i.span(),
                }),
            }),
            TokenTree::Ident(i) => {
                if is_keyword(i) {
                    return None;
                }
                // `a::b` and `m!(..)`: syn's.
                if let Some(p) = self.punct(1) {
                    if p.as_char() == ':' || (p.as_char() == '!' && p.spacing() == Spacing::Alone) {
                        return None;
                    }
                }
                Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: i.clone().into(),
                })
            }
            TokenTree::Literal(l) => {
                let lit = syn::Lit::new(l.clone());
                if matches!(lit, syn::Lit::Verbatim(_)) {
                    return None;
                }
                Expr::Lit(syn::ExprLit {
                    attrs: Vec::new(),
                    lit,
                })
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
                let paren_token = syn::token::Paren {
                    span: g.delim_span(),
                };
                // One expression in parentheses, or a tuple of two or more.
                let elems = arguments(g)?;
                match elems.len() {
                    0 => return None,
                    1 => Expr::Paren(syn::ExprParen {
                        attrs: Vec::new(),
                        paren_token,
                        expr: Box::new(elems.into_iter().next()?),
                    }),
                    _ => Expr::Tuple(syn::ExprTuple {
                        attrs: Vec::new(),
                        paren_token,
                        elems,
                    }),
                }
            }
            _ => return None,
        };
        self.at += 1;
        Some(e)
    }
}

/// The comma-separated expressions in the parentheses `g` (none, or
/// without a trailing comma).
fn arguments(g: &Group) -> Option<Punctuated<Expr, syn::Token![,]>> {
    let trees: Vec<TokenTree> = g.stream().into_iter().collect();
    let mut p = Parser { trees, at: 0 };
    let mut args = Punctuated::new();
    if p.done() {
        return Some(args);
    }
    args.push_value(p.expr(0)?);
    while !p.done() {
        let (text, s) = p.operator()?;
        if text != "," {
            return None;
        }
        p.at += 1;
        args.push_punct(syn::Token![,](s[0]));
        args.push_value(p.expr(0)?);
    }
    Some(args)
}

/// Whether `i` is a word syn reads as a keyword (or `_`), not a name.
fn is_keyword(i: &Ident) -> bool {
    is_keyword_word(&i.to_string())
}

/// Whether `word` is one syn reads as a keyword (or `_`), not a name.
pub(super) fn is_keyword_word(word: &str) -> bool {
    matches!(
        word,
        "_" | "as"
            | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;

    /// The body of `text` (a braced block) read here, and by syn.
    fn both(text: &str) -> (Option<syn::Block>, syn::Result<syn::Block>) {
        let stream: TokenStream = text.parse().unwrap();
        let Some(TokenTree::Group(g)) = stream.clone().into_iter().next() else {
            panic!("{text} is not a group")
        };
        (block(&g), syn::parse2(stream))
    }

    /// What is read here is the tree syn builds, precedence and
    /// associativity included; what is not, syn reads (or rejects).
    #[test]
    fn the_trees_are_syns() {
        for text in [
            "{ f(x, y) = a + b * c - d / e % 2; f }",
            "{ let c = input.clamp_edge(); out(x, y) = c(x - 1, y) + c(x, y); out }",
            "{ g(x) = -x as f32 * 2.5f32 + !b as u8 as f32; h(x) = (a, b); (g, h) }",
            "{ f(x) = a << 2 >> 1 | b & c ^ d; g(x) = a == b && c < d || e >= f; f }",
            "{ h(x) += 1; h(x) -= (x); h(x) *= x.min(3).max(y); h }",
            "{ f(x, y) = select(x < 0, 0u8, 255u8); f(x, y) = f(x, y) != 3; f }",
            "{ f(x) = - - x - -1 - 1.0e3 + true as i32; f }",
            "{ f(x) = a - b - c; g(x) = a / b * c; h(x) = a as u8 + b; f }",
            "{ f() = 1; }",
            "{}",
            "{ f0.compute_root().split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);\n\
               f1.store_at(f9, yo).compute_at(f9, yi); input.dim(0).set_stride(3); auto; \
               estimate(out, 1920, 1080); out.update(0).reorder(x, r_x); }",
        ] {
            let (quick, syn) = both(text);
            let quick = quick.unwrap_or_else(|| panic!("read here: {text}"));
            assert_eq!(quick, syn.unwrap(), "{text}");
        }
        for text in [
            "{ let mut x = 1; x }",
            "{ let x: u8 = 1; x }",
            "{ f(x) = a < b < c; f }",
            "{ f(x) = a as u8 < b; f }",
            "{ f(x) = v[0]; f }",
            "{ f(x) = a.b; f }",
            "{ f(x) = m!(a); f }",
            "{ f(x) = a::b(x); f }",
            "{ f(x) = if c { a } else { b }; f }",
            "{ for i in 0..3 { f(x) += i; } f }",
            "{ f(x) = (a, b,); f }",
            "{ f(x) = g(a,); f }",
            "{ f(x) = |a| a; f }",
            "{ f(x) = a..b; f }",
            "{ f g }",
            "{ f(x) = a; f g }",
            "{ #[attr] f(x) = a; f }",
            "{ f(x) = *a; f }",
            "{ f(x) = a.await; f }",
            "{ f(x) = a?; f }",
            "{ f.vectorize(x, 8u8 + 1).split(y, yo, yi, -(1)); f.compute_at(g, x)b; }",
            "{ f.for(x); }",
        ] {
            let (quick, syn) = both(text);
            assert!(quick.is_none(), "left to syn: {text}");
            let _ = syn;
        }
    }
}
