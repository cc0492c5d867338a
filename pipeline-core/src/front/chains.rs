//! The auto-scheduler's plans, and cache entries written the same way, as
//! syntax trees without the parser: the plan of every pipeline without a
//! schedule block is checked as a user's block on every expansion, and
//! syn, unoptimized as a default build runs the macro, spent more parsing
//! the plan again than the check spent checking it.

/// The statements of `text` where every one is a plain chain,
/// `name.directive(arg, ..).directive(..);` with names and unsigned
/// integers for arguments (what the auto-scheduler writes), built as the
/// syntax trees syn would parse them into; `None` for anything else
/// (comments, other expressions, an error to report), which takes the
/// parser.
pub(crate) fn plain_chains(text: &str) -> Option<Vec<syn::Stmt>> {
    let span = proc_macro2::Span::call_site();
    let name = |s: &str| -> Option<syn::Expr> {
        let s = s.trim();
        let mut chars = s.chars();
        let first = chars.next()?;
        let plain = (first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && s != "_"
            && !is_keyword(s);
        plain.then(|| {
            syn::Expr::Path(syn::ExprPath {
                attrs: Vec::new(),
                qself: None,
                path: syn::Ident::new(s, span).into(),
            })
        })
    };
    let arg = |s: &str| -> Option<syn::Expr> {
        let s = s.trim();
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            let v: u64 = s.parse().ok()?;
            let lit = proc_macro2::Literal::u64_unsuffixed(v);
            return Some(syn::Expr::Lit(syn::ExprLit {
                attrs: Vec::new(),
                lit: syn::Lit::Int(lit.into()),
            }));
        }
        name(s)
    };
    let mut stmts = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (stmt, after) = rest.split_once(';')?;
        rest = after.trim_start();
        let mut parts = stmt.split(").");
        let first = parts.next()?;
        let (receiver, first) = first.split_once('.')?;
        let mut expr = name(receiver)?;
        let mut calls = std::iter::once(first).chain(parts).peekable();
        while let Some(call) = calls.next() {
            let call = if calls.peek().is_none() {
                call.trim_end().strip_suffix(')')?
            } else {
                call
            };
            let (method, args) = call.split_once('(')?;
            let syn::Expr::Path(method) = name(method)? else {
                return None;
            };
            let mut list = syn::punctuated::Punctuated::new();
            if !args.trim().is_empty() {
                for a in args.split(',') {
                    list.push(arg(a)?);
                }
            }
            expr = syn::Expr::MethodCall(syn::ExprMethodCall {
                attrs: Vec::new(),
                receiver: Box::new(expr),
                dot_token: Default::default(),
                method: method.path.get_ident()?.clone(),
                turbofish: None,
                paren_token: Default::default(),
                args: list,
            });
        }
        stmts.push(syn::Stmt::Expr(expr, Some(Default::default())));
    }
    Some(stmts)
}

/// Whether `s` is a Rust keyword (which syn parses as one, not as a name).
pub(super) fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "as" | "break"
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
    use super::plain_chains;
    use quote::ToTokens;

    /// The statements of a schedule body as syn parses them, as text.
    fn parsed(text: &str) -> Vec<String> {
        let block: syn::Block = syn::parse_str(&format!("{{ {text} }}")).unwrap();
        block
            .stmts
            .iter()
            .map(|s| s.to_token_stream().to_string())
            .collect()
    }

    /// Plain chains are built into the trees syn parses them into; anything
    /// else is left to syn.
    #[test]
    fn plain_chains_are_the_trees_syn_parses() {
        for text in [
            "",
            "f.compute_root();",
            "f0.compute_root().split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);\n\
             f1.store_at(f9, yo).compute_at(f9, yi).vectorize(x, 16);\n",
            "  out.update(0).reorder(x, r_x).vectorize(x, 8) ;  hist.compute_root();",
            "input.dim(0).set_stride(3);",
            "_g2.unroll(x, 0);",
        ] {
            let built = plain_chains(text).unwrap_or_else(|| panic!("{text:?} is plain"));
            let built: Vec<String> = built
                .iter()
                .map(|s| s.to_token_stream().to_string())
                .collect();
            assert_eq!(built, parsed(text), "{text:?}");
        }
        for text in [
            "auto;",
            "// a comment\nf.compute_root();",
            "f.compute_root()",
            "f.split(y, yo, yi, 32 + 1);",
            "f.vectorize(x, 8u8);",
            "f.compute_at(g, x).vectorize((x), 8);",
            "f.compute_at(g, x)b.vectorize(x, 8);",
            "f.for(x);",
            "f.compute_root(;",
            "estimate(out, 1920, 1080);",
            "f.vectorize(x, 99999999999999999999999);",
            "f .é();",
        ] {
            assert!(plain_chains(text).is_none(), "{text:?} is not plain");
        }
    }
}
