//! Finding a crate's pipelines: every `pipeline! { .. }` invocation in the
//! Rust files under `src/`, `examples/`, `benches/` and `tests/`, at any
//! depth of nesting (inside modules and functions), through the Rust
//! tokenizer, so comments and strings never look like invocations.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::path::{Path, PathBuf};

/// One pipeline of one invocation.
#[derive(Clone, Debug)]
pub struct Found {
    /// The file it is in.
    pub file: PathBuf,
    /// The text of its invocation (all of it: templates and other
    /// pipelines included).
    pub source: String,
    /// The pipeline's name.
    pub name: String,
}

/// The pipelines of the crate whose `Cargo.toml` is in `root`, in file
/// order; files that do not tokenize, and invocations that do not parse,
/// are reported in `skipped` (the build would show their errors).
pub fn pipelines(root: &Path) -> (Vec<Found>, Vec<String>) {
    let mut files = Vec::new();
    for dir in ["src", "examples", "benches", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    pipelines_in_files(files)
}

/// The pipelines of these Rust files, in order, as [`pipelines`] finds them.
pub fn pipelines_in_files(files: Vec<PathBuf>) -> (Vec<Found>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        // Cheap test first: most files have no invocation.
        if !text.contains("pipeline!") {
            continue;
        }
        match pipelines_in(&text) {
            Ok((pipelines, errors)) => {
                found.extend(pipelines.into_iter().map(|(source, name)| Found {
                    file: file.clone(),
                    source,
                    name,
                }));
                skipped.extend(
                    errors
                        .into_iter()
                        .map(|e| format!("{}: {e}", file.display())),
                );
            }
            Err(e) => skipped.push(format!("{}: {e}", file.display())),
        }
    }
    (found, skipped)
}

/// A file's pipelines, `(invocation, name)`, and why invocations were
/// skipped.
type Scanned = (Vec<(String, String)>, Vec<String>);

/// The pipelines of a Rust file's text, `(invocation, name)`, and why
/// invocations that do not parse were skipped; `Err` if the text does not
/// tokenize.
fn pipelines_in(text: &str) -> Result<Scanned, String> {
    let tokens: TokenStream = text
        .parse()
        .map_err(|e| format!("does not tokenize ({e})"))?;
    let mut invocations = Vec::new();
    invocations_in(tokens, &mut invocations);
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for inv in invocations {
        // An invocation inside a `macro_rules!` definition has `$`
        // fragments: only its expansions are pipelines.
        if has_dollar(&inv) {
            continue;
        }
        let source = inv.to_string();
        match pipeline_core::tune::pipeline_names(&source) {
            Ok(names) => found.extend(names.into_iter().map(|n| (source.clone(), n))),
            Err(e) => skipped.push(format!("a `pipeline!` invocation does not parse ({e})")),
        }
    }
    Ok((found, skipped))
}

/// Whether `tokens` hold a `$` at any depth.
fn has_dollar(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Punct(p) => p.as_char() == '$',
        TokenTree::Group(g) => has_dollar(&g.stream()),
        _ => false,
    })
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The bodies of `pipeline! { .. }` (or `path::pipeline!`) in `tokens`, at
/// any depth.
fn invocations_in(tokens: TokenStream, out: &mut Vec<TokenStream>) {
    // Groups nest as deep as the code: a stack, not recursion.
    let mut pending = vec![tokens];
    while let Some(stream) = pending.pop() {
        let trees: Vec<TokenTree> = stream.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            if let TokenTree::Group(g) = t {
                let is_call = i >= 2
                    && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '!')
                    && matches!(&trees[i - 2], TokenTree::Ident(id) if id == "pipeline")
                    && g.delimiter() != Delimiter::None;
                if is_call {
                    out.push(g.stream());
                } else {
                    pending.push(g.stream());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_invocations_at_any_depth_and_not_in_comments() {
        let text = r#"
            // pipeline! { fn commented(a: Image<u8, 2>) -> Image<u8, 2> { a } }
            const S: &str = "pipeline! { fn quoted() {} }";
            mod m {
                pipeline::pipeline! {
                    fn one(a: Image<u8, 2>) -> Image<u8, 2> { f(x, y) = a(x, y); f }
                }
                fn g() {
                    pipeline!(fn two(a: Image<u8, 2>) -> Image<u8, 2> { f(x, y) = a(x, y); f });
                }
                macro_rules! make {
                    ($name:ident) => { pipeline! { fn $name(a: Image<u8, 2>) -> Image<u8, 2> { a } } };
                }
            }
        "#;
        let (found, skipped) = pipelines_in(text).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let mut flat: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
        flat.sort();
        assert_eq!(flat, ["one", "two"]);
    }
}
