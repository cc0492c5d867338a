//! Parsing: the tokens of a `pipeline!` invocation into syn syntax trees.
//!
//! The DSL reuses Rust's grammar wherever it can, so syn does the heavy lifting
//! and every node keeps the user's spans for diagnostics. The only item that is
//! not Rust is `schedule NAME [for cuda] { directives }`.
//!
//! ```text
//! invocation := item*
//! item       := attrs vis `fn` NAME `(` params `)` `->` outputs block   // a pipeline
//!             | attrs `fn` NAME `(` params `)` `->` `Func` block         // a stencil template
//!             | `schedule` NAME (`for` `cuda`)? `{` (directive-chain `;`)* `}`
//! ```

use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Block, Ident, Signature, Token, Visibility};

/// The parsed invocation.
pub struct Program {
    /// Pipelines (functions returning images).
    pub pipelines: Vec<FnItem>,
    /// Stencil templates (functions returning `Func`).
    pub templates: Vec<FnItem>,
    /// Schedule blocks.
    pub schedules: Vec<ScheduleItem>,
}

/// A `fn` item: a pipeline or a template.
pub struct FnItem {
    /// Outer attributes (doc comments carry over to the generated function).
    pub attrs: Vec<Attribute>,
    /// Visibility, carried over.
    pub vis: Visibility,
    /// Name, parameters and return type.
    pub sig: Signature,
    /// The body.
    pub block: Block,
}

/// `schedule NAME [for cuda] { ... }`.
pub struct ScheduleItem {
    /// The pipeline it schedules.
    pub name: Ident,
    /// `Some(cuda)` for a GPU schedule.
    pub target: Option<Ident>,
    /// The directives, each a method-call chain statement.
    pub body: Block,
}

fn is_template(sig: &Signature) -> bool {
    match &sig.output {
        syn::ReturnType::Type(_, ty) => {
            matches!(&**ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("Func"))
        }
        syn::ReturnType::Default => false,
    }
}

impl Parse for Program {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut program = Program {
            pipelines: Vec::new(),
            templates: Vec::new(),
            schedules: Vec::new(),
        };
        while !input.is_empty() {
            let attrs = input.call(Attribute::parse_outer)?;
            if input.peek(Ident) && !input.peek(Token![fn]) && !input.peek(Token![pub]) {
                let fork = input.fork();
                let word: Ident = fork.parse()?;
                if word == "schedule" {
                    if let Some(attr) = attrs.first() {
                        return Err(syn::Error::new_spanned(
                            attr,
                            "attributes are not allowed on a schedule block",
                        ));
                    }
                    input.parse::<Ident>()?;
                    let name: Ident = input.parse()?;
                    let target = if input.peek(Token![for]) {
                        input.parse::<Token![for]>()?;
                        let t: Ident = input.parse()?;
                        if t != "cuda" {
                            return Err(syn::Error::new_spanned(
                                &t,
                                format!("unknown schedule target `{t}`; the only target is `cuda` (`schedule NAME for cuda {{ ... }}`)"),
                            ));
                        }
                        Some(t)
                    } else {
                        None
                    };
                    let body = match quick_block(input) {
                        Some(b) => b,
                        None => input.parse()?,
                    };
                    program.schedules.push(ScheduleItem { name, target, body });
                    continue;
                }
                return Err(syn::Error::new(
                    word.span(),
                    format!("expected `fn` or `schedule`, found `{word}`: a pipeline! block holds pipelines (`pub fn name(...) -> Image<T, N> {{ ... }}`), templates (`fn name(f: Func) -> Func {{ ... }}`) and `schedule name {{ ... }}` blocks"),
                ));
            }
            let vis: Visibility = input.parse()?;
            if !input.peek(Token![fn]) {
                return Err(input.error(
                    "expected `fn` or `schedule`: a pipeline! block holds pipelines (`pub fn name(...) -> Image<T, N> { ... }`), templates (`fn name(f: Func) -> Func { ... }`) and `schedule name { ... }` blocks",
                ));
            }
            let sig: Signature = input.parse()?;
            let block = match quick_block(input) {
                Some(b) => b,
                None => input.parse()?,
            };
            let item = FnItem {
                attrs,
                vis,
                sig,
                block,
            };
            if is_template(&item.sig) {
                program.templates.push(item);
            } else {
                program.pipelines.push(item);
            }
        }
        Ok(program)
    }
}

/// The braced body at the start of `input`, read by [`super::quick`] where
/// it can (it is then consumed), else `None` and nothing consumed.
fn quick_block(input: ParseStream) -> Option<Block> {
    use syn::parse::discouraged::Speculative;
    let fork = input.fork();
    let group = fork
        .step(|c| match c.token_tree() {
            Some((proc_macro2::TokenTree::Group(g), rest)) => Ok((g, rest)),
            _ => Err(c.error("a body")),
        })
        .ok()?;
    let block = super::quick::block(&group)?;
    input.advance_to(&fork);
    Some(block)
}
