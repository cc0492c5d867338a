//! Checking and elaboration: syn syntax trees of one pipeline into a typed
//! [`Pipeline`].
//!
//! This pass resolves names, checks arities and applies the typing rules of
//! the guide's *Expressions and types* (`pipeline::guide::language`: literal typing, promotion, no other implicit conversion). It
//! also removes the DSL's compile-time conveniences: stencil templates are
//! instantiated at each use, compile-time `for` loops are unrolled, inline
//! reductions (`sum(-1..=1, |i| ..)`) are expanded, and boundary conditions
//! become [`ExprKind::Boundary`] coordinates. Every error carries the user's
//! tokens; errors are collected per statement, so one run reports many.
//!
//! The elaborator's parts: statements and definitions (`stmt`), expressions
//! and their typing (`expr`), loads, built-ins and inline reductions
//! (`call`), and the checks of the whole pipeline that follow (`order`).
//!
//! ```text
//! let c = input.clamp_edge();            // no func: c is a view of input
//! blur_x(x, y) = sum(-1..=1, |i| c(x + i, y) as u32);
//!   => blur_x: u32 = (input(clamp(x-1)..) as u32 + input(clamp(x)..) as u32) + ..
//! ```

use super::parse::{FnItem, Program};
use crate::analysis::interval::{bounds_of, visit_loads, Interval, Scope};
use crate::analysis::simplify::fold_constants;
use crate::hash::HashMap;
use crate::ir::*;
use proc_macro2::Span;
use quote::ToTokens;
use syn::Error;

/// Coordinate argument `d` of the user's call `f(a, b)`, or the whole call
/// if it has no such argument: where a message about that coordinate
/// points.
fn coordinate_tokens(call: &syn::ExprCall, d: usize) -> &dyn ToTokens {
    match call.args.iter().nth(d) {
        Some(a) => a,
        None => call,
    }
}

mod call;
mod expr;
mod order;
mod stmt;

type Result<T> = std::result::Result<T, Error>;

fn err<T>(tokens: impl ToTokens, msg: impl std::fmt::Display) -> Result<T> {
    Err(Error::new_spanned(tokens, msg))
}

/// The declared type of one output.
#[derive(Clone, Debug)]
pub struct OutputDecl {
    /// Element type.
    pub ty: Type,
    /// Dimensions.
    pub dims: usize,
}

/// A checked pipeline with what code generation needs of its signature.
pub struct CheckedPipeline {
    /// The pipeline IR.
    pub pipeline: Pipeline,
    /// The function name with its span.
    pub ident: syn::Ident,
    /// Doc comments and other attributes of the pipeline fn.
    pub attrs: Vec<syn::Attribute>,
    /// Visibility of the pipeline fn.
    pub vis: syn::Visibility,
    /// Declared outputs.
    pub outputs: Vec<OutputDecl>,
}

/// A value during elaboration: a typed expression or a literal whose type is
/// decided by its context.
#[derive(Clone, Debug)]
enum Val {
    Typed(Expr),
    IntLit(i128),
    FloatLit(f64),
}

/// A callable func value: a func, an input, or either seen through a boundary
/// condition.
#[derive(Clone, Debug)]
enum FuncRef {
    Func(FuncId),
    Input(InputId),
    Bounded {
        inner: Box<FuncRef>,
        mode: BoundaryMode,
        constant: Option<Expr>,
    },
}

#[derive(Clone, Debug)]
enum Binding {
    Func(FuncRef),
    /// A name whose definition failed; uses of it report nothing more.
    Poisoned,
    Scalar(Val),
    Var(usize),
    RVar(usize),
}

type Env = HashMap<String, Binding>;

/// What an expression may refer to besides the environment.
struct Ctx {
    /// The func being defined, and whether this is one of its updates.
    defining: Option<(FuncId, bool)>,
}

struct Elab<'p> {
    templates: &'p [FnItem],
    pipe: Pipeline,
    /// The user's calls, indexed by `ExprKind::Load::site` and
    /// `Update::site`, for messages: borrowed from the parsed program and
    /// made tokens only for a message (inside the compiler every token
    /// made is a call across its bridge: copying each call's tokens up
    /// front was a third of the checker's time). The checker's alone: the
    /// IR holds no tokens, so the passes after it may run on several
    /// threads.
    sites: Vec<&'p syn::ExprCall>,
    errors: Vec<Error>,
    families: Vec<HashMap<i128, FuncRef>>,
    family_names: Vec<String>,
    /// Func families visible in the body being elaborated (one map per pipeline or template instance).
    family_scopes: Vec<HashMap<String, usize>>,
    /// Names of funcs the current body defined (to tell updates from new funcs).
    instance: usize,
    depth: usize,
    rvar_names: Vec<String>,
    /// Funcs whose definition failed: uses of them report nothing more.
    poisoned: Vec<FuncId>,
    /// The last `let` id given out.
    lets: usize,
}

/// Checks one pipeline of the program.
pub fn check_pipeline(
    program: &Program,
    item: &FnItem,
) -> std::result::Result<CheckedPipeline, Error> {
    let mut elab = Elab {
        templates: &program.templates,
        pipe: Pipeline {
            name: item.sig.ident.to_string(),
            inputs: Vec::new(),
            params: Vec::new(),
            arg_order: Vec::new(),
            funcs: Vec::new(),
            outputs: Vec::new(),
        },
        sites: Vec::new(),
        errors: Vec::new(),
        families: Vec::new(),
        family_names: Vec::new(),
        family_scopes: vec![HashMap::default()],
        instance: 0,
        depth: 0,
        rvar_names: Vec::new(),
        poisoned: Vec::new(),
        lets: 0,
    };
    let mut env = Env::default();
    let outputs = elab.signature(item, &mut env)?;
    let tail = elab.body(&item.block.stmts, &mut env, "");
    if let Some(tail) = tail {
        if let Err(e) = elab.outputs(tail, &outputs, &env, &item.sig.output) {
            elab.errors.push(e);
        }
    } else if elab.errors.is_empty() {
        elab.errors.push(Error::new(
            item.block.brace_token.span.close(),
            "a pipeline ends with the output func(s) as its tail expression, e.g. `out` or `(a, b)`",
        ));
    }
    if elab.errors.is_empty() {
        if let Err(e) = elab.order_funcs() {
            elab.errors.push(e);
        }
    }
    if elab.errors.is_empty() {
        elab.check_bounded_coordinates();
    }
    if let Some(e) = combine(elab.errors) {
        return Err(e);
    }
    Ok(CheckedPipeline {
        pipeline: elab.pipe,
        ident: item.sig.ident.clone(),
        attrs: item.attrs.clone(),
        vis: item.vis.clone(),
        outputs,
    })
}

/// Joins errors into one (syn reports each at its own span).
pub fn combine(errors: Vec<Error>) -> Option<Error> {
    let mut it = errors.into_iter().filter(|e| !e.to_string().is_empty());
    let mut first = it.next()?;
    for e in it {
        first.combine(e);
    }
    Some(first)
}

/// An error that only follows from an earlier one; `combine` drops it.
fn cascade() -> Error {
    Error::new(Span::call_site(), "")
}

fn ident_of(e: &syn::Expr) -> Option<&syn::Ident> {
    match e {
        syn::Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident(),
        _ => None,
    }
}

fn scalar_type(ty: &syn::Type) -> Option<Type> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            Type::from_name(&p.path.get_ident()?.to_string())
        }
        _ => None,
    }
}

/// Parses `Image<T, N>` (N defaults to 2).
fn image_type(ty: &syn::Type) -> Result<Option<(Type, usize)>> {
    let syn::Type::Path(p) = ty else {
        return Ok(None);
    };
    let Some(seg) = p.path.segments.last() else {
        return Ok(None);
    };
    if seg.ident != "Image" || p.path.segments.len() != 1 {
        return Ok(None);
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return err(ty, "write the element type and dimensions: `Image<u8, 2>`");
    };
    let mut it = args.args.iter();
    let elem = match it.next() {
        Some(syn::GenericArgument::Type(t)) => match scalar_type(t) {
            Some(t) if t != Type::Bool => t,
            _ => {
                return err(
                    t,
                    "an image's element type is one of u8 u16 u32 u64 i8 i16 i32 i64 f32 f64",
                )
            }
        },
        _ => return err(args, "write the element type first: `Image<u8, 2>`"),
    };
    let dims = match it.next() {
        None => 2,
        Some(syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }))) => match n.base10_parse::<usize>() {
            Ok(d) if (1..=4).contains(&d) => d,
            _ => return err(n, "an image has 1 to 4 dimensions"),
        },
        Some(other) => {
            return err(
                other,
                "the dimension count must be an integer literal from 1 to 4",
            )
        }
    };
    if let Some(extra) = it.next() {
        return err(extra, "`Image` takes an element type and a dimension count");
    }
    Ok(Some((elem, dims)))
}

fn coord_name(d: usize) -> &'static str {
    ["x", "y", "c", "w"].get(d).copied().unwrap_or("dim")
}

impl<'p> Elab<'p> {
    fn is_family(&self, name: &str) -> bool {
        self.family_scopes
            .last()
            .is_some_and(|m| m.contains_key(name))
    }

    fn site(&mut self, call: &'p syn::ExprCall) -> usize {
        self.sites.push(call);
        self.sites.len() - 1
    }

    // ----------------------------------------------------------------------
    // Signature and outputs

    fn signature(&mut self, item: &FnItem, env: &mut Env) -> Result<Vec<OutputDecl>> {
        let sig = &item.sig;
        if let Some(g) = sig.generics.params.first() {
            return err(g, "pipelines take no generic parameters");
        }
        if let Some(a) = &sig.asyncness {
            return err(a, "a pipeline cannot be async");
        }
        for arg in &sig.inputs {
            let syn::FnArg::Typed(pt) = arg else {
                return err(arg, "a pipeline has no `self` parameter");
            };
            let syn::Pat::Ident(pi) = &*pt.pat else {
                return err(&pt.pat, "expected a parameter name");
            };
            let name = pi.ident.to_string();
            if env.contains_key(&name) {
                return err(&pi.ident, format!("parameter `{name}` is declared twice"));
            }
            if let Some((ty, dims)) = image_type(&pt.ty)? {
                self.pipe.arg_order.push((true, self.pipe.inputs.len()));
                env.insert(
                    name.clone(),
                    Binding::Func(FuncRef::Input(self.pipe.inputs.len())),
                );
                self.pipe.inputs.push(Input { name, ty, dims });
            } else if let Some(ty) = scalar_type(&pt.ty) {
                if ty == Type::Bool {
                    return err(
                        &pt.ty,
                        "scalar parameters are numbers (u8 .. f64); pass a bool as u8",
                    );
                }
                let e = Expr::new(ExprKind::Param(self.pipe.params.len()), ty);
                self.pipe.arg_order.push((false, self.pipe.params.len()));
                env.insert(name.clone(), Binding::Scalar(Val::Typed(e)));
                self.pipe.params.push(Param { name, ty });
            } else {
                return err(
                    &pt.ty,
                    "a pipeline parameter is an image `Image<T, N>` or a scalar (u8 u16 u32 u64 i8 i16 i32 i64 f32 f64)",
                );
            }
        }
        let syn::ReturnType::Type(_, ret) = &sig.output else {
            return err(sig, "a pipeline returns its output image(s): `-> Image<u8, 2>` or `-> (Image<u8, 2>, Image<f32, 2>)`");
        };
        let tys: Vec<&syn::Type> = match &**ret {
            syn::Type::Tuple(t) => t.elems.iter().collect(),
            t => vec![t],
        };
        if tys.is_empty() {
            return err(ret, "a pipeline has at least one output image");
        }
        let mut outs = Vec::new();
        for t in tys {
            match image_type(t)? {
                Some((ty, dims)) => outs.push(OutputDecl { ty, dims }),
                None => return err(t, "an output is an image type `Image<T, N>`"),
            }
        }
        Ok(outs)
    }

    fn outputs(
        &mut self,
        tail: &'p syn::Expr,
        decls: &[OutputDecl],
        env: &Env,
        ret: &syn::ReturnType,
    ) -> Result<()> {
        let items: Vec<&'p syn::Expr> = match tail {
            syn::Expr::Tuple(t) => t.elems.iter().collect(),
            syn::Expr::Paren(p) => vec![&*p.expr],
            e => vec![e],
        };
        if items.len() != decls.len() {
            return err(
                tail,
                format!(
                    "the pipeline declares {} output(s) but its tail expression names {}",
                    decls.len(),
                    items.len()
                ),
            );
        }
        for (e, decl) in items.iter().zip(decls) {
            let fref = match self.func_value(e, env)? {
                Some(f) => f,
                // After other errors, an unknown output is most likely one of their consequences.
                None if !self.errors.is_empty() => return Err(cascade()),
                None => {
                    return err(
                        e,
                        "an output must name a func defined in this pipeline, e.g. `out`",
                    )
                }
            };
            let FuncRef::Func(id) = fref else {
                return err(
                    e,
                    "an output must be a func defined in this pipeline; define one, e.g. `out(x, y) = input(x, y);`",
                );
            };
            if self.poisoned.contains(&id) {
                return Err(cascade());
            }
            if self.pipe.outputs.contains(&id) {
                return err(e, "this func is already an output");
            }
            let f = &self.pipe.funcs[id];
            if f.dims() != decl.dims {
                return err(
                    e,
                    format!(
                        "func `{}` has {} dimension(s) but the output is declared with {}",
                        f.name,
                        f.dims(),
                        decl.dims
                    ),
                );
            }
            if f.ty != decl.ty {
                let _ = ret;
                return err(
                    e,
                    format!(
                        "func `{}` computes {} but the output is declared as Image<{}, {}>; convert in the definition, e.g. `{}(..) = (..) as {}`, or declare Image<{}, {}>",
                        f.name, f.ty, decl.ty, decl.dims, f.name, decl.ty, f.ty, decl.dims
                    ),
                );
            }
            self.pipe.outputs.push(id);
        }
        Ok(())
    }
}
