//! Expansions remembered across builds.
//!
//! The compiler expands every `pipeline!` again on every build of the
//! crate, whatever changed, and a proc macro runs unoptimized in a default
//! build: a 100-func pipeline paid its whole expansion again on a rebuild
//! for an edit elsewhere in the crate. The expansion is a function of the
//! invocation's text, the `PIPELINE_*` settings, the schedule cache file
//! and the macro's own build; where all of them are the same as on an
//! earlier expansion, the memo gives back that expansion's code.
//!
//! The memo's storage is the macro's (pipeline-macros keeps it in files
//! under the build's target directory); this module says what the key
//! holds, records an expansion as text, and replays it. Replayed, the code
//! is lexed from its text as on the first expansion, and the user's own
//! tokens in it (each pipeline's attributes, visibility and name, whose
//! spans errors and editors point at) are taken from the invocation at
//! hand by `scan`, whose reading of the invocation was checked against
//! the parser's when the expansion was recorded. An expansion with an
//! error is never recorded.

use crate::codegen::code::Code;
use crate::codegen::rust::{text, Lexer};
use crate::front::check::CheckedPipeline;
use crate::schedule::cache::CacheSource;
use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};
use quote::ToTokens;

/// The storage of a memo, given by the macro: `get` returns what `put`
/// stored under the same key, or `None`.
#[derive(Clone, Copy, Debug)]
pub struct Memo {
    /// What was stored under a key.
    pub get: fn(&str) -> Option<String>,
    /// Stores a value under a key.
    pub put: fn(&str, &str),
}

/// The first line of every key and record: a change of their format or
/// meaning changes it.
const FORMAT: &str = "pipeline expansion memo 1";

/// A number new to each compilation of pipeline-core: a macro built from
/// other sources expands differently, and must not reuse what an earlier
/// build of it recorded.
const BUILD: u64 = pipeline_code::build_nonce!();

/// The key of an expansion: everything it depends on. `None` where
/// expansions must not be remembered: under `PIPELINE_DEBUG` (whose
/// printouts come from expanding), but for `time`.
pub(crate) fn key(source: &str, cache: Option<&CacheSource>, cuda: bool) -> Option<String> {
    let mut settings: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with("PIPELINE_"))
        .collect();
    settings.sort();
    if settings
        .iter()
        .any(|(k, v)| k == "PIPELINE_DEBUG" && v.split(',').any(|p| p != "time"))
    {
        return None;
    }
    let mut key = format!("{FORMAT}\nbuild {BUILD}\ncuda {cuda}\n");
    for (k, v) in settings {
        key += &format!("env {} {k}={v}\n", k.len() + v.len() + 1);
    }
    if let Some(c) = cache {
        let path = c.path.to_string_lossy();
        let text = match &c.text {
            Ok(t) => format!("ok {}\n{t}", t.len()),
            Err(e) => format!("error {}\n{e}", e.len()),
        };
        key += &format!("cache {} {path}\n{text}\n", path.len());
    }
    key += &format!("input {}\n{source}", source.len());
    Some(key)
}

/// One piece of a recorded expansion.
#[derive(Debug, PartialEq)]
enum Piece {
    /// A pipeline's entry and module ([`crate::codegen::rust::wrap`]):
    /// the index of its `fn` item among the invocation's ([`scan`]), its
    /// `cfg` predicate, and its generated code.
    Pipeline {
        item: usize,
        cfg: Option<String>,
        params: String,
        body: String,
        items: String,
    },
    /// Tokens of the macro's own, as text.
    Tokens(String),
}

/// An expansion as it is built: its tokens and, for the memo, its record
/// (`None` once something in it cannot be replayed: an error, a pipeline
/// `scan` reads otherwise than the parser). Everything the expansion
/// outputs goes through here, so nothing reaches it unrecorded, and an
/// error can never be left out of a replay.
pub(crate) struct Output {
    tokens: TokenStream,
    pieces: Option<Vec<Piece>>,
    items: Option<Vec<Item>>,
}

impl Output {
    /// The expansion of `input`, recorded if `record` (there is a memo to
    /// keep it).
    pub(crate) fn new(input: &TokenStream, record: bool) -> Output {
        Output {
            tokens: TokenStream::new(),
            pieces: record.then(Vec::new),
            items: if record { scan(input) } else { None },
        }
    }

    /// A compile error: the expansion is not kept.
    pub(crate) fn error(&mut self, error: TokenStream) {
        self.pieces = None;
        self.tokens.extend(error);
    }

    /// Pipeline `c`'s entry and module around its generated code, under
    /// `cfg` ([`crate::codegen::rust::wrap`]).
    pub(crate) fn pipeline(
        &mut self,
        c: &CheckedPipeline,
        cfg: Option<TokenStream>,
        generated: crate::codegen::rust::Generated,
        lex: Option<Lexer>,
    ) {
        let attrs = attr_tokens(&c.attrs);
        let vis = c.vis.to_token_stream();
        if let (Some(pieces), Some(items)) = (&mut self.pieces, &self.items) {
            let found = items.iter().position(|i| {
                i.name == c.ident
                    && i.attrs.to_string() == attrs.to_string()
                    && i.vis.to_string() == vis.to_string()
            });
            match found {
                Some(item) => pieces.push(Piece::Pipeline {
                    item,
                    cfg: cfg.as_ref().map(|c| c.to_string()),
                    params: generated.params.as_str().to_string(),
                    body: generated.body.as_str().to_string(),
                    items: generated.items.as_str().to_string(),
                }),
                None => self.pieces = None,
            }
        }
        self.tokens.extend(crate::codegen::rust::wrap(
            generated, lex, cfg, &attrs, &vis, &c.ident,
        ));
    }

    /// Tokens of the macro's own.
    pub(crate) fn tokens(&mut self, tokens: TokenStream) {
        if let Some(pieces) = &mut self.pieces {
            pieces.push(Piece::Tokens(tokens.to_string()));
        }
        self.tokens.extend(tokens);
    }

    /// The expansion, and its record if the whole of it can be replayed.
    pub(crate) fn finish(self) -> (TokenStream, Option<String>) {
        (self.tokens, self.pieces.map(|p| encode(&p)))
    }
}

/// A pipeline's attributes as tokens.
fn attr_tokens(attrs: &[syn::Attribute]) -> TokenStream {
    let mut out = TokenStream::new();
    for a in attrs {
        a.to_tokens(&mut out);
    }
    out
}

/// The expansion that `record` holds, with the user's tokens from
/// `input`; `None` where the record is not one or does not fit `input`.
pub(crate) fn replay(record: &str, input: &TokenStream, lex: Option<Lexer>) -> Option<TokenStream> {
    let pieces = decode(record)?;
    let items = scan(input)?;
    let lexed = |s: &str| -> Option<TokenStream> {
        let t = text::tokens(lex, &Code::from_text(s.to_string()));
        (!t.to_string().contains("compile_error")).then_some(t)
    };
    let mut out = TokenStream::new();
    for piece in pieces {
        match piece {
            Piece::Pipeline {
                item,
                cfg,
                params,
                body,
                items: module,
            } => {
                let it = items.get(item)?;
                let cfg = match cfg {
                    Some(c) => Some(c.parse::<TokenStream>().ok()?),
                    None => None,
                };
                let generated = crate::codegen::rust::Generated {
                    params: Code::from_text(params),
                    body: Code::from_text(body),
                    items: Code::from_text(module),
                };
                out.extend(crate::codegen::rust::wrap(
                    generated, lex, cfg, &it.attrs, &it.vis, &it.name,
                ));
            }
            Piece::Tokens(t) => out.extend(lexed(&t)?),
        }
    }
    Some(out)
}

/// A `fn` item of the invocation, as [`scan`] reads it.
#[derive(Clone)]
struct Item {
    attrs: TokenStream,
    vis: TokenStream,
    name: Ident,
}

/// The `fn` items of an invocation (pipelines and templates, in order)
/// read from its tokens without the parser: attributes, visibility, `fn`,
/// the name, and everything up to the body's braces; `schedule` blocks
/// are passed over. `None` where the tokens are not laid out so. Only
/// used where the parser read the same tokens and agreed
/// ([`Recording::pipeline`]).
fn scan(input: &TokenStream) -> Option<Vec<Item>> {
    let trees: Vec<TokenTree> = input.clone().into_iter().collect();
    let is_word = |t: Option<&TokenTree>, w: &str| matches!(t, Some(TokenTree::Ident(i)) if i == w);
    let is_group = |t: Option<&TokenTree>, d: Delimiter| matches!(t, Some(TokenTree::Group(g)) if g.delimiter() == d);
    let mut items = Vec::new();
    let mut k = 0;
    while k < trees.len() {
        let mut attrs = TokenStream::new();
        while matches!(trees.get(k), Some(TokenTree::Punct(p)) if p.as_char() == '#')
            && is_group(trees.get(k + 1), Delimiter::Bracket)
        {
            attrs.extend(trees[k..k + 2].iter().cloned());
            k += 2;
        }
        if is_word(trees.get(k), "schedule") {
            k += 2;
            if is_word(trees.get(k), "for") {
                k += 2;
            }
            if !is_group(trees.get(k), Delimiter::Brace) {
                return None;
            }
            k += 1;
            continue;
        }
        let mut vis = TokenStream::new();
        if is_word(trees.get(k), "pub") {
            vis.extend([trees[k].clone()]);
            k += 1;
            if is_group(trees.get(k), Delimiter::Parenthesis) {
                vis.extend([trees[k].clone()]);
                k += 1;
            }
        }
        if !is_word(trees.get(k), "fn") {
            return None;
        }
        let Some(TokenTree::Ident(name)) = trees.get(k + 1) else {
            return None;
        };
        items.push(Item {
            attrs,
            vis,
            name: name.clone(),
        });
        k += 2;
        while !is_group(trees.get(k), Delimiter::Brace) {
            if k >= trees.len() {
                return None;
            }
            k += 1;
        }
        k += 1;
    }
    Some(items)
}

/// A record as text: its format line, then each piece as a line of its
/// kind and the lengths of its texts, each text after it.
fn encode(pieces: &[Piece]) -> String {
    let mut out = format!("{FORMAT}\n");
    for p in pieces {
        match p {
            Piece::Pipeline {
                item,
                cfg,
                params,
                body,
                items,
            } => {
                let cfg_len = cfg
                    .as_ref()
                    .map_or("-".to_string(), |c| c.len().to_string());
                out += &format!(
                    "pipeline {item} {cfg_len} {} {} {}\n",
                    params.len(),
                    body.len(),
                    items.len()
                );
                for t in [cfg.as_deref().unwrap_or(""), params, body, items] {
                    out += t;
                }
                out.push('\n');
            }
            Piece::Tokens(t) => {
                out += &format!("tokens {}\n{t}\n", t.len());
            }
        }
    }
    out
}

/// The pieces of a record; `None` for anything else.
fn decode(record: &str) -> Option<Vec<Piece>> {
    let mut rest = record.strip_prefix(FORMAT)?.strip_prefix('\n')?;
    let mut pieces = Vec::new();
    let take = |rest: &mut &str, n: usize| -> Option<String> {
        let t = rest.get(..n)?.to_string();
        *rest = &rest[n..];
        Some(t)
    };
    while !rest.is_empty() {
        let (line, after) = rest.split_once('\n')?;
        rest = after;
        let words: Vec<&str> = line.split(' ').collect();
        let piece = match words[..] {
            ["pipeline", item, cfg, params, body, items] => {
                let cfg = match cfg {
                    "-" => None,
                    n => Some(take(&mut rest, n.parse().ok()?)?),
                };
                Piece::Pipeline {
                    item: item.parse().ok()?,
                    cfg,
                    params: take(&mut rest, params.parse().ok()?)?,
                    body: take(&mut rest, body.parse().ok()?)?,
                    items: take(&mut rest, items.parse().ok()?)?,
                }
            }
            ["tokens", n] => Piece::Tokens(take(&mut rest, n.parse().ok()?)?),
            _ => return None,
        };
        rest = rest.strip_prefix('\n')?;
        pieces.push(piece);
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record decodes to the pieces it encodes, texts with newlines and
    /// every length included; a damaged one decodes to nothing.
    #[test]
    fn records_round_trip() {
        let pieces = vec![
            Piece::Pipeline {
                item: 2,
                cfg: Some("target_arch = \"x86_64\"".into()),
                params: "a: &u8,\nb".into(),
                body: String::new(),
                items: "pub const X: &str = \"é\n\";".into(),
            },
            Piece::Tokens("const _: u8 = 1;\n".into()),
            Piece::Pipeline {
                item: 0,
                cfg: None,
                params: "x".into(),
                body: "{}".into(),
                items: "y".into(),
            },
        ];
        let text = encode(&pieces);
        assert_eq!(decode(&text), Some(pieces));
        for cut in [1, FORMAT.len() + 3, text.len() / 2, text.len() - 1] {
            assert_eq!(decode(&text[..cut]), None, "cut at {cut}");
        }
        assert_eq!(decode(&text.replacen("pipeline 2", "pipeline x", 1)), None);
        assert_eq!(decode(&text.replacen("tokens 17", "tokens 99", 1)), None);
    }

    /// The scan finds each `fn` item's attributes, visibility and name, and
    /// passes over schedule blocks.
    #[test]
    fn scan_reads_the_items() {
        let input: TokenStream = "
            /// A blur.
            #[inline] pub(crate) fn blur(input: Image<u8, 2>) -> Image<u8, 2> { f(x, y) = 1; f }
            schedule blur { f.parallel(y); }
            schedule blur for cuda { f.gpu_tile(x, y, xo, yo, xi, yi, 32, 8); }
            fn t(f: Func) -> Func { g(x) = f(x); g }
            pub fn two(a: Image<f32, 2>) -> (Image<f32, 2>, Image<f32, 2>) { a }
        "
        .parse()
        .unwrap();
        let items = scan(&input).unwrap();
        let got: Vec<(String, String, String)> = items
            .iter()
            .map(|i| (i.attrs.to_string(), i.vis.to_string(), i.name.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "# [doc = \" A blur.\"] # [inline]".into(),
                    "pub (crate)".into(),
                    "blur".into()
                ),
                (String::new(), String::new(), "t".into()),
                (String::new(), "pub".into(), "two".into()),
            ]
        );
        for bad in ["fn", "pub fn f()", "schedule s", "struct S;", "fn f() -> X"] {
            assert!(scan(&bad.parse().unwrap()).is_none(), "{bad}");
        }
    }
}
