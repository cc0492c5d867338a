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
            sites: Vec::new(),
        },
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

impl Elab<'_> {
    fn is_family(&self, name: &str) -> bool {
        self.family_scopes
            .last()
            .is_some_and(|m| m.contains_key(name))
    }

    fn site(&mut self, call: &syn::ExprCall) -> usize {
        self.pipe.sites.push(Site {
            call: call.to_token_stream(),
            args: call.args.iter().map(|a| a.to_token_stream()).collect(),
        });
        self.pipe.sites.len() - 1
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
        tail: &syn::Expr,
        decls: &[OutputDecl],
        env: &Env,
        ret: &syn::ReturnType,
    ) -> Result<()> {
        let items: Vec<&syn::Expr> = match tail {
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

    // ----------------------------------------------------------------------
    // Statements

    /// Elaborates the statements of a pipeline or template body; returns the
    /// tail expression.
    fn body<'s>(
        &mut self,
        stmts: &'s [syn::Stmt],
        env: &mut Env,
        prefix: &str,
    ) -> Option<&'s syn::Expr> {
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            if let syn::Stmt::Expr(e, None) = stmt {
                if last && !matches!(e, syn::Expr::ForLoop(_)) {
                    return Some(e);
                }
            }
            if let Err(e) = self.stmt(stmt, env, prefix) {
                self.errors.push(e);
            }
        }
        None
    }

    fn stmt(&mut self, stmt: &syn::Stmt, env: &mut Env, prefix: &str) -> Result<()> {
        match stmt {
            syn::Stmt::Local(local) => self.let_stmt(local, env),
            syn::Stmt::Expr(e, semi) => {
                if semi.is_none() && !matches!(e, syn::Expr::ForLoop(_)) {
                    return err(
                        e,
                        "only the last statement may be the output; end this statement with `;`",
                    );
                }
                match e {
                    syn::Expr::Assign(a) => self.assign(&a.left, None, &a.right, env, prefix, None),
                    syn::Expr::Binary(b) if compound_op(&b.op).is_some() => self.assign(
                        &b.left,
                        compound_op(&b.op),
                        &b.right,
                        env,
                        prefix,
                        None,
                    ),
                    syn::Expr::ForLoop(f) => self.for_loop(f, env, prefix),
                    other => err(
                        other,
                        "expected a definition `f(x, y) = ...;`, an update `f(..) += ...;`, a `let`, or a `for` loop",
                    ),
                }
            }
            syn::Stmt::Item(item) => err(item, "items cannot be declared inside a pipeline body"),
            syn::Stmt::Macro(m) => err(m, "macros cannot be used inside a pipeline body"),
        }
    }

    fn let_stmt(&mut self, local: &syn::Local, env: &mut Env) -> Result<()> {
        let syn::Pat::Ident(pi) = &local.pat else {
            return err(&local.pat, "`let` binds a single name");
        };
        let Some(init) = &local.init else {
            return err(local, "`let` needs a value: `let g = input.clamp_edge();`");
        };
        if let Some((_, d)) = &init.diverge {
            return err(d, "`let ... else` is not part of the DSL");
        }
        let name = pi.ident.to_string();
        let binding = match self.func_value(&init.expr, env) {
            Ok(Some(f)) => {
                self.name_template_result(&f, &name);
                Ok(Binding::Func(f))
            }
            Ok(None) => {
                let ctx = Ctx { defining: None };
                self.expr(&init.expr, env, &ctx).map(Binding::Scalar)
            }
            Err(e) => Err(e),
        };
        match binding {
            Ok(b) => {
                env.insert(name, b);
                Ok(())
            }
            Err(e) => {
                env.insert(name, Binding::Poisoned);
                Err(e)
            }
        }
    }

    /// Resolves a func-valued expression: a name bound to a func or input, a
    /// family member `g[i]`, a boundary condition `f.clamp_edge()`, or a
    /// template call. `Ok(None)` when the expression is not func-shaped.
    fn func_value(&mut self, e: &syn::Expr, env: &Env) -> Result<Option<FuncRef>> {
        match e {
            syn::Expr::Paren(p) => self.func_value(&p.expr, env),
            syn::Expr::Path(_) => {
                let Some(id) = ident_of(e) else {
                    return Ok(None);
                };
                match env.get(&id.to_string()) {
                    Some(Binding::Func(f)) => Ok(Some(f.clone())),
                    Some(Binding::Poisoned) => Err(cascade()),
                    None if self.is_family(&id.to_string()) => err(
                        id,
                        format!("`{id}` is a family of funcs; pick one with an index: `{id}[0]`"),
                    ),
                    _ => Ok(None),
                }
            }
            syn::Expr::Index(ix) => {
                let Some(fam) = ident_of(&ix.expr) else {
                    return err(
                        &ix.expr,
                        "expected the name of a func family, as in `gauss[l - 1]`",
                    );
                };
                let key = match self.family_scopes.last().and_then(|m| m.get(&fam.to_string())) {
                    Some(k) => *k,
                    None => return err(fam, format!("unknown func family `{fam}`; define a member first, e.g. `{fam}[0](x, y) = ...;`")),
                };
                let idx = self.const_int(&ix.index, env)?;
                match self.families[key].get(&idx) {
                    Some(f) => Ok(Some(f.clone())),
                    None => err(ix, format!("`{fam}[{idx}]` is not defined (yet)")),
                }
            }
            syn::Expr::MethodCall(m) => {
                let mode = match m.method.to_string().as_str() {
                    "clamp_edge" => BoundaryMode::ClampEdge,
                    "mirror" => BoundaryMode::Mirror,
                    "mirror_interior" => BoundaryMode::MirrorInterior,
                    "wrap" => BoundaryMode::Wrap,
                    "constant" => BoundaryMode::GuardedClamp,
                    _ => return Ok(None),
                };
                let Some(inner) = self.func_value(&m.receiver, env)? else {
                    return err(
                        &m.receiver,
                        format!("`.{}()` applies to an input or a func", m.method),
                    );
                };
                if self.source_extents(&inner).is_none() {
                    return err(
                        &m.receiver,
                        "a boundary condition needs a source with a known extent: an input, or a func whose size follows from the inputs (like `f(x, y) = input(2 * x, y)`)",
                    );
                }
                let constant = if mode == BoundaryMode::GuardedClamp {
                    if m.args.len() != 1 {
                        return err(m, "`constant(v)` takes the value used outside the source");
                    }
                    let ty = self.value_type(&inner);
                    let ctx = Ctx { defining: None };
                    let v = self.expr(&m.args[0], env, &ctx)?;
                    Some(self.coerce(v, ty, &m.args[0])?)
                } else {
                    if let Some(a) = m.args.first() {
                        return err(a, format!("`.{}()` takes no arguments", m.method));
                    }
                    None
                };
                Ok(Some(FuncRef::Bounded {
                    inner: Box::new(inner),
                    mode,
                    constant,
                }))
            }
            syn::Expr::Call(c) => {
                let Some(name) = ident_of(&c.func) else {
                    return Ok(None);
                };
                let Some(t) = self.templates.iter().position(|t| t.sig.ident == *name) else {
                    return Ok(None);
                };
                if env.contains_key(&name.to_string()) {
                    return Ok(None);
                }
                self.instantiate(t, c, env).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn instantiate(&mut self, t: usize, call: &syn::ExprCall, env: &Env) -> Result<FuncRef> {
        let template = &self.templates[t];
        let params: Vec<&syn::PatType> = template
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(p) => Some(p),
                _ => None,
            })
            .collect();
        if params.len() != call.args.len() {
            return err(
                call,
                format!(
                    "template `{}` takes {} argument(s) but {} were given",
                    template.sig.ident,
                    params.len(),
                    call.args.len()
                ),
            );
        }
        if self.depth > 32 {
            return err(
                call,
                "templates nest more than 32 deep; is a template calling itself?",
            );
        }
        let mut inner_env = Env::default();
        for (p, arg) in params.iter().zip(&call.args) {
            let syn::Pat::Ident(pi) = &*p.pat else {
                return err(&p.pat, "expected a parameter name");
            };
            let is_func = matches!(&*p.ty, syn::Type::Path(tp) if tp.path.is_ident("Func"));
            let binding = if is_func {
                match self.func_value(arg, env)? {
                    Some(f) => Binding::Func(f),
                    None => return err(arg, format!("parameter `{}` of `{}` is a Func: pass a func, an input or e.g. `input.clamp_edge()`", pi.ident, template.sig.ident)),
                }
            } else if let Some(ty) = scalar_type(&p.ty) {
                let ctx = Ctx { defining: None };
                let v = self.expr(arg, env, &ctx)?;
                let e = self.coerce(v, ty, arg)?;
                if e.any(&mut |n| matches!(n.kind, ExprKind::Var(_) | ExprKind::RVar(_))) {
                    return err(
                        arg,
                        "a template's scalar argument cannot use pure or reduction variables",
                    );
                }
                Binding::Scalar(Val::Typed(e))
            } else {
                return err(&p.ty, "a template parameter is `Func` or a scalar type");
            };
            inner_env.insert(pi.ident.to_string(), binding);
        }
        self.instance += 1;
        let prefix = format!("{}#{}.", template.sig.ident, self.instance);
        self.depth += 1;
        let templates = self.templates;
        let template = &templates[t];
        let errors_before = self.errors.len();
        self.family_scopes.push(HashMap::default());
        let tail = self.body(&template.block.stmts, &mut inner_env, &prefix);
        self.depth -= 1;
        if self.errors.len() > errors_before {
            self.family_scopes.pop();
            let inner: Vec<Error> = self.errors.drain(errors_before..).collect();
            let mut e = Error::new_spanned(
                call,
                format!("in this use of template `{}`:", template.sig.ident),
            );
            for i in inner {
                e.combine(i);
            }
            return Err(e);
        }
        let result = match tail {
            None => err(
                &template.block,
                "a template ends with the func it returns as its tail expression",
            ),
            Some(tail) => match self.func_value(tail, &inner_env) {
                Ok(Some(f)) => Ok(f),
                Ok(None) => err(tail, "a template must return a func"),
                Err(e) => Err(e),
            },
        };
        self.family_scopes.pop();
        result
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop, env: &mut Env, prefix: &str) -> Result<()> {
        if let syn::Expr::Call(c) = &*f.expr {
            if ident_of(&c.func).is_some_and(|i| i == "rdom") {
                return self.rdom_loop(f, c, env, prefix);
            }
        }
        let syn::Expr::Range(range) = &*f.expr else {
            return err(&f.expr, "a `for` loop runs over `rdom(..)` (an update) or a constant range like `1..4` (a compile-time loop)");
        };
        let syn::Pat::Ident(pi) = &*f.pat else {
            return err(&f.pat, "a compile-time loop binds one name");
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return err(range, "a compile-time loop needs both ends: `1..4`");
        };
        let lo = self.const_int(start, env)?;
        let mut hi = self.const_int(end, env)?;
        if matches!(range.limits, syn::RangeLimits::Closed(_)) {
            hi += 1;
        }
        if hi - lo > 64 {
            return err(range, "compile-time loops unroll at most 64 iterations");
        }
        for i in lo..hi {
            let mut inner = env.clone();
            inner.insert(pi.ident.to_string(), Binding::Scalar(Val::IntLit(i)));
            for stmt in &f.body.stmts {
                if let Err(e) = self.stmt(stmt, &mut inner, prefix) {
                    self.errors.push(e);
                }
            }
        }
        Ok(())
    }

    fn rdom_loop(
        &mut self,
        f: &syn::ExprForLoop,
        call: &syn::ExprCall,
        env: &mut Env,
        prefix: &str,
    ) -> Result<()> {
        let names: Vec<&syn::Ident> = match &*f.pat {
            syn::Pat::Ident(pi) => vec![&pi.ident],
            syn::Pat::Tuple(t) => t
                .elems
                .iter()
                .map(|p| match p {
                    syn::Pat::Ident(pi) => Ok(&pi.ident),
                    other => err(other, "expected a reduction variable name"),
                })
                .collect::<Result<_>>()?,
            other => return err(other, "bind the reduction variables: `for r in rdom(..)` or `for (rx, ry) in rdom(.., ..)`"),
        };
        if names.len() != call.args.len() {
            return err(
                &f.pat,
                format!(
                    "rdom has {} dimension(s) but the pattern binds {} name(s)",
                    call.args.len(),
                    names.len()
                ),
            );
        }
        if call.args.is_empty() {
            return err(call, "rdom needs at least one range, e.g. `rdom(0..256)`");
        }
        let mut rdom = Vec::new();
        let ctx = Ctx { defining: None };
        for (name, arg) in names.iter().zip(&call.args) {
            let syn::Expr::Range(r) = arg else {
                return err(
                    arg,
                    "each rdom dimension is a range `min..end` or `min..=max`",
                );
            };
            let (Some(start), Some(end)) = (&r.start, &r.end) else {
                return err(r, "an rdom range needs both ends");
            };
            let lo = self.expr(start, env, &ctx)?;
            let lo = self.coerce(lo, Type::I32, start)?;
            let hi = self.expr(end, env, &ctx)?;
            let hi = self.coerce(hi, Type::I32, end)?;
            let mut extent = Expr::binary(BinOp::Sub, hi, lo.clone());
            if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                extent = Expr::binary(BinOp::Add, extent, Expr::i32(1));
            }
            for e in [&lo, &extent] {
                if e.any(&mut |n| {
                    matches!(
                        n.kind,
                        ExprKind::Var(_) | ExprKind::RVar(_) | ExprKind::Load { .. }
                    )
                }) {
                    return err(
                        r,
                        "rdom bounds may use scalar parameters, input extents and constants only",
                    );
                }
            }
            rdom.push(RDomDim {
                name: name.to_string(),
                min: lo,
                extent: crate::analysis::simplify::simplify(&extent),
            });
            self.rvar_names.push(name.to_string());
        }
        let mut inner = env.clone();
        for (i, name) in names.iter().enumerate() {
            inner.insert(name.to_string(), Binding::RVar(i));
        }
        for stmt in &f.body.stmts {
            let r = match stmt {
                syn::Stmt::Expr(syn::Expr::Assign(a), Some(_)) => {
                    self.assign(&a.left, None, &a.right, &mut inner, prefix, Some(&rdom))
                }
                syn::Stmt::Expr(syn::Expr::Binary(b), Some(_)) if compound_op(&b.op).is_some() => self.assign(
                    &b.left,
                    compound_op(&b.op),
                    &b.right,
                    &mut inner,
                    prefix,
                    Some(&rdom),
                ),
                syn::Stmt::Local(l) => self.let_stmt(l, &mut inner),
                syn::Stmt::Expr(syn::Expr::ForLoop(fl), _) => err(
                    fl,
                    "rdom loops do not nest; use one rdom with several dimensions: `for (rx, ry) in rdom(a..b, c..d)`",
                ),
                other => err(other, "an rdom loop body holds updates like `f(r) += ...;` (each ending with `;`)"),
            };
            if let Err(e) = r {
                self.errors.push(e);
            }
        }
        Ok(())
    }

    /// `lhs = rhs` or `lhs op= rhs`: a pure definition, an update, or the
    /// binding of a family member to a func value.
    #[allow(clippy::too_many_arguments)]
    fn assign(
        &mut self,
        lhs: &syn::Expr,
        op: Option<BinOp>,
        rhs: &syn::Expr,
        env: &mut Env,
        prefix: &str,
        rdom: Option<&Vec<RDomDim>>,
    ) -> Result<()> {
        match lhs {
            syn::Expr::Call(call) => {
                let target = self.definition_target(&call.func, env)?;
                match target {
                    Target::Existing(id) => self.update(
                        id,
                        call,
                        op,
                        rhs,
                        env,
                        rdom.map(|r| r.as_slice()).unwrap_or(&[]),
                    ),
                    Target::New { name, family } => {
                        if op.is_some() || rdom.is_some() {
                            if family.is_none() {
                                env.insert(name.clone(), Binding::Poisoned);
                            }
                            let what = if op.is_some() {
                                "updated"
                            } else {
                                "updated in an rdom loop"
                            };
                            return err(
                                lhs,
                                format!("`{name}` is {what} before it is defined; give it a pure definition first, e.g. `{name}(i) = 0;`"),
                            );
                        }
                        let id = self.pipe.funcs.len();
                        let result = self.pure_definition(
                            &format!("{prefix}{name}"),
                            &name,
                            family,
                            call,
                            rhs,
                            env,
                        );
                        if self.pipe.funcs.len() > id {
                            // Bind the name even when its definition failed, so
                            // that later uses do not report it as unknown.
                            if result.is_err() {
                                self.poisoned.push(id);
                            }
                            match family {
                                Some((key, idx)) => {
                                    self.families[key].insert(idx, FuncRef::Func(id));
                                }
                                None => {
                                    env.insert(name, Binding::Func(FuncRef::Func(id)));
                                }
                            }
                        }
                        result.map(|_| ())
                    }
                }
            }
            syn::Expr::Index(ix) => {
                if op.is_some() || rdom.is_some() {
                    return err(
                        lhs,
                        "a func family member is bound with `g[i] = template(..);`",
                    );
                }
                let (key, idx, name) = self.family_slot(ix, env)?;
                if self.families[key].contains_key(&idx) {
                    return err(lhs, format!("`{name}[{idx}]` is already defined"));
                }
                let Some(f) = self.func_value(rhs, env)? else {
                    return err(rhs, "the right-hand side must be a func, e.g. a template call `down2(gauss[l - 1])`");
                };
                self.name_template_result(&f, &format!("{prefix}{name}[{idx}]"));
                self.families[key].insert(idx, f);
                Ok(())
            }
            syn::Expr::Path(_) => {
                let name = ident_of(lhs).map(|i| i.to_string()).unwrap_or_default();
                err(lhs, format!("to name a func value write `let {name} = ...;`; to define a func write `{name}(x, y) = ...;`"))
            }
            other => err(other, "expected a func definition like `f(x, y) = ...`"),
        }
    }

    /// Gives the result func of a template instance the name it is bound to,
    /// and the instance's other funcs names under it (`gauss[1].reduce_x` for
    /// `reduce_x` of the `down2` call bound to `gauss[1]`), so that a
    /// schedule can name them.
    fn name_template_result(&mut self, f: &FuncRef, name: &str) {
        let FuncRef::Func(id) = f else {
            return;
        };
        let old = self.pipe.funcs[*id].name.clone();
        if !old.contains('#') || self.pipe.funcs.iter().any(|g| g.name == name) {
            return;
        }
        // The instance's prefix: `down2#3.` of `down2#3.reduce`.
        let instance = match old.find('.') {
            Some(dot) => old[..=dot].to_string(),
            None => old.clone(),
        };
        for g in &mut self.pipe.funcs {
            if g.name == old {
                g.name = name.to_string();
            } else if let Some(rest) = g.name.strip_prefix(&instance) {
                g.name = format!("{name}.{rest}");
            }
        }
    }

    fn family_slot(&mut self, ix: &syn::ExprIndex, env: &Env) -> Result<(usize, i128, String)> {
        let Some(fam) = ident_of(&ix.expr) else {
            return err(&ix.expr, "expected a func family name, as in `gauss[0]`");
        };
        let name = fam.to_string();
        let idx = self.const_int(&ix.index, env)?;
        let key = match env.get(&name) {
            Some(_) => {
                return err(
                    fam,
                    format!("`{name}` is already a func or value, not a family"),
                )
            }
            None => match self.family_scopes.last().and_then(|m| m.get(&name)) {
                Some(k) => *k,
                None => {
                    self.families.push(HashMap::default());
                    self.family_names.push(name.clone());
                    if let Some(m) = self.family_scopes.last_mut() {
                        m.insert(name.clone(), self.families.len() - 1);
                    }
                    self.families.len() - 1
                }
            },
        };
        Ok((key, idx, name))
    }

    fn definition_target(&mut self, callee: &syn::Expr, env: &Env) -> Result<Target> {
        match callee {
            syn::Expr::Index(ix) => {
                let (key, idx, name) = self.family_slot(ix, env)?;
                Ok(match self.families[key].get(&idx) {
                    Some(FuncRef::Func(id)) => Target::Existing(*id),
                    Some(_) => {
                        return err(
                            callee,
                            "this family member is not a func that can be updated",
                        )
                    }
                    None => Target::New {
                        name: format!("{name}[{idx}]"),
                        family: Some((key, idx)),
                    },
                })
            }
            _ => {
                let Some(id) = ident_of(callee) else {
                    return err(callee, "expected a func name");
                };
                let name = id.to_string();
                match env.get(&name) {
                    Some(Binding::Func(FuncRef::Func(f))) => Ok(Target::Existing(*f)),
                    Some(Binding::Func(FuncRef::Input(_))) => err(
                        id,
                        format!("`{name}` is an input image and cannot be defined"),
                    ),
                    Some(Binding::Func(_)) => err(
                        id,
                        format!(
                            "`{name}` is a view through a boundary condition and cannot be defined"
                        ),
                    ),
                    Some(Binding::Scalar(_)) | Some(Binding::Var(_)) | Some(Binding::RVar(_)) => {
                        err(id, format!("`{name}` is a scalar value, not a func"))
                    }
                    Some(Binding::Poisoned) => Err(cascade()),
                    None if self.is_family(&name) => err(
                        id,
                        format!(
                            "`{name}` is a func family; define a member: `{name}[0](x, y) = ...`"
                        ),
                    ),
                    None => {
                        if is_reserved(&name) {
                            return err(
                                id,
                                format!("`{name}` is a built-in and cannot name a func"),
                            );
                        }
                        Ok(Target::New { name, family: None })
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pure_definition(
        &mut self,
        name: &str,
        local: &str,
        family: Option<(usize, i128)>,
        call: &syn::ExprCall,
        rhs: &syn::Expr,
        env: &Env,
    ) -> Result<FuncId> {
        let mut vars = Vec::new();
        let mut inner = env.clone();
        for arg in &call.args {
            let Some(v) = ident_of(arg) else {
                return err(
                    arg,
                    "the arguments of a pure definition are distinct variable names, as in `f(x, y) = ...`; to set particular points use an update over an rdom",
                );
            };
            let vname = v.to_string();
            if vars.contains(&vname) {
                return err(v, format!("variable `{vname}` appears twice"));
            }
            if matches!(env.get(&vname), Some(Binding::Func(_))) || self.is_family(&vname) {
                return err(
                    v,
                    format!("`{vname}` names a func; pick another variable name"),
                );
            }
            inner.insert(vname.clone(), Binding::Var(vars.len()));
            vars.push(vname);
        }
        if vars.len() > 4 {
            return err(call, "funcs have at most 4 dimensions");
        }
        let id = self.pipe.funcs.len();
        self.pipe.funcs.push(Func {
            name: name.to_string(),
            natural_extent: vec![None; vars.len()],
            vars,
            ty: Type::I32,
            pure: Expr::i32(0),
            updates: Vec::new(),
        });
        // The func is visible in its own definition, so that using it there
        // is reported as recursion rather than as an unknown name.
        match family {
            Some((key, idx)) => {
                self.families[key].insert(idx, FuncRef::Func(id));
            }
            None => {
                inner.insert(local.to_string(), Binding::Func(FuncRef::Func(id)));
            }
        }
        let ctx = Ctx {
            defining: Some((id, false)),
        };
        let value = self.expr(rhs, &inner, &ctx)?;
        let value = fold_constants(&self.default(value, rhs)?);
        self.pipe.funcs[id].ty = value.ty;
        self.pipe.funcs[id].pure = value;
        self.pipe.funcs[id].natural_extent = self.natural_extents(id);
        Ok(id)
    }

    fn update(
        &mut self,
        id: FuncId,
        call: &syn::ExprCall,
        op: Option<BinOp>,
        rhs: &syn::Expr,
        env: &Env,
        rdom: &[RDomDim],
    ) -> Result<()> {
        let func = self.pipe.funcs[id].clone();
        if call.args.len() != func.dims() {
            return err(
                call,
                format!(
                    "`{}` has {} dimension(s) but is given {} coordinate(s)",
                    func.name,
                    func.dims(),
                    call.args.len()
                ),
            );
        }
        let mut inner = env.clone();
        let ctx = Ctx {
            defining: Some((id, true)),
        };
        // Unbound plain names on the left are the update's pure variables.
        for (d, arg) in call.args.iter().enumerate() {
            if let Some(v) = ident_of(arg) {
                inner.entry(v.to_string()).or_insert(Binding::Var(d));
            }
        }
        // A plain name on the left is a pure variable of the update, at its
        // position: the update runs for each of its values, and each writes
        // only its own slice of the func. A computed coordinate may read
        // them (a gather: `grid(x, y, level(8 * x + rx, 8 * y + ry)) += ..`
        // writes only column `(x, y)` of `grid`).
        let mut args = Vec::new();
        for (d, arg) in call.args.iter().enumerate() {
            let v = self.expr(arg, &inner, &ctx)?;
            let e = self.coordinate(v, arg)?;
            if let ExprKind::Var(k) = e.kind {
                if k != d {
                    return err(
                        arg,
                        format!(
                            "this pure variable is already the coordinate of position {k}: a pure variable of an update appears by itself at one position (use a reduction variable to write along a diagonal)"
                        ),
                    );
                }
            }
            args.push(e);
        }
        let site = self.site(call);
        let v = self.expr(rhs, &inner, &ctx)?;
        let value = match op {
            None => self.coerce(v, func.ty, rhs)?,
            Some(op) => {
                let old = Expr::new(
                    ExprKind::Load {
                        source: Source::Func(id),
                        args: args.clone(),
                        site,
                    },
                    func.ty,
                );
                let rhs_e = self.coerce(v, func.ty, rhs)?;
                Expr::binary(op, old, rhs_e)
            }
        };
        // A pure variable's iterations must be independent (so that loops
        // over it can be reordered and run in parallel): the func itself is
        // read only at that variable in its own dimension.
        let mut shifted = None;
        value.visit(&mut |n| {
            if let ExprKind::Load {
                source: Source::Func(g),
                args: read,
                site,
            } = &n.kind
            {
                for (d, a) in args.iter().enumerate() {
                    if *g == id && matches!(a.kind, ExprKind::Var(_)) && read[d] != *a {
                        shifted.get_or_insert((*site, d));
                    }
                }
            }
        });
        if let Some((site, d)) = shifted {
            let s = &self.pipe.sites[site];
            return err(
                s.args.get(d).unwrap_or(&s.call),
                format!(
                    "an update reads `{}` at pure variable `{}` of the left-hand side only as `{}` itself (its points are updated independently); to read other points make it a reduction variable",
                    func.name, func.vars[d], func.vars[d]
                ),
            );
        }
        self.pipe.funcs[id].updates.push(Update {
            rdom: rdom.to_vec(),
            args: args.iter().map(fold_constants).collect(),
            value: fold_constants(&value),
            site,
        });
        Ok(())
    }

    // ----------------------------------------------------------------------
    // Expressions

    fn expr(&mut self, e: &syn::Expr, env: &Env, ctx: &Ctx) -> Result<Val> {
        crate::deep(|| self.expr_here(e, env, ctx))
    }

    fn expr_here(&mut self, e: &syn::Expr, env: &Env, ctx: &Ctx) -> Result<Val> {
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit),
            syn::Expr::Paren(p) => self.expr(&p.expr, env, ctx),
            syn::Expr::Group(g) => self.expr(&g.expr, env, ctx),
            syn::Expr::Path(_) => self.name(e, env),
            syn::Expr::Unary(u) => {
                let v = self.expr(&u.expr, env, ctx)?;
                match u.op {
                    syn::UnOp::Neg(_) => match v {
                        Val::IntLit(i) => Ok(Val::IntLit(-i)),
                        Val::FloatLit(f) => Ok(Val::FloatLit(-f)),
                        Val::Typed(t) if t.ty == Type::Bool => err(u, "cannot negate a bool; use `!`"),
                        Val::Typed(t) => Ok(Val::Typed(Expr::new(ExprKind::Unary(UnOp::Neg, Box::new(t.clone())), t.ty))),
                    },
                    syn::UnOp::Not(_) => match v {
                        Val::IntLit(i) => Ok(Val::IntLit(!i)),
                        Val::FloatLit(_) => err(u, "`!` applies to bools and integers"),
                        Val::Typed(t) if t.ty.is_float() => err(u, "`!` applies to bools and integers"),
                        Val::Typed(t) => Ok(Val::Typed(Expr::new(ExprKind::Unary(UnOp::Not, Box::new(t.clone())), t.ty))),
                    },
                    _ => err(u, "this operator is not part of the DSL"),
                }
            }
            syn::Expr::Binary(b) => self.binary(b, env, ctx),
            syn::Expr::Cast(c) => {
                let Some(ty) = scalar_type(&c.ty) else {
                    return err(&c.ty, "cast to a scalar type: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64");
                };
                let v = self.expr(&c.expr, env, ctx)?;
                self.cast(v, ty, c)
            }
            syn::Expr::Call(c) => self.call(c, env, ctx),
            syn::Expr::MethodCall(m) => self.method(m, env, ctx),
            syn::Expr::If(i) => {
                let cond = self.expr(&i.cond, env, ctx)?;
                let cond = self.coerce(cond, Type::Bool, &i.cond)?;
                let a = self.block_value(&i.then_branch.stmts, env, ctx, &i.then_branch)?;
                let Some((_, else_e)) = &i.else_branch else {
                    return err(i, "`if` needs an `else` branch: both branches give the value");
                };
                let b = self.expr(else_e, env, ctx)?;
                let (a, b, _) = self.unify(a, b, i)?;
                Ok(Val::Typed(Expr::select(cond, a, b)))
            }
            syn::Expr::Block(b) => self.block_value(&b.block.stmts, env, ctx, b),
            syn::Expr::Index(ix) => err(ix, "a func family member must be called with coordinates: `g[1](x, y)`"),
            syn::Expr::Range(r) => err(r, "a range can only appear in `rdom(..)`, an inline reduction like `sum(-1..=1, |i| ..)` or a compile-time `for` loop"),
            syn::Expr::Closure(c) => err(c, "closures can only appear as the body of an inline reduction: `sum(-1..=1, |i| ..)`"),
            other => err(other, "this kind of expression is not part of the DSL"),
        }
    }

    fn block_value(
        &mut self,
        stmts: &[syn::Stmt],
        env: &Env,
        ctx: &Ctx,
        whole: impl ToTokens,
    ) -> Result<Val> {
        let mut inner = env.clone();
        // Typed values are bound once (a `Let` node), not substituted at every
        // use, so nested lets cannot grow the code exponentially.
        let mut bound: Vec<(usize, Expr)> = Vec::new();
        for (i, s) in stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => {
                    let syn::Pat::Ident(pi) = &l.pat else {
                        return err(&l.pat, "`let` binds a single name");
                    };
                    let Some(init) = &l.init else {
                        return err(l, "`let` needs a value");
                    };
                    let v = match self.expr(&init.expr, &inner, ctx)? {
                        Val::Typed(e) if !is_leaf(&fold_constants(&e)) => {
                            let id = self.next_let();
                            let var = Expr::new(ExprKind::LetVar(id), e.ty);
                            bound.push((id, e));
                            Val::Typed(var)
                        }
                        other => other,
                    };
                    inner.insert(pi.ident.to_string(), Binding::Scalar(v));
                }
                syn::Stmt::Expr(e, None) if i + 1 == stmts.len() => {
                    let value = self.expr(e, &inner, ctx)?;
                    if bound.is_empty() {
                        return Ok(value);
                    }
                    let mut body = self.default(value, e)?;
                    for (id, v) in bound.into_iter().rev() {
                        let ty = body.ty;
                        body = Expr::new(
                            ExprKind::Let {
                                id,
                                value: Box::new(v),
                                body: Box::new(body),
                            },
                            ty,
                        );
                    }
                    return Ok(Val::Typed(body));
                }
                other => return err(other, "a block holds `let` bindings followed by its value"),
            }
        }
        err(whole, "this block has no value; end it with an expression")
    }

    fn next_let(&mut self) -> usize {
        self.lets += 1;
        self.lets
    }

    fn literal(&mut self, lit: &syn::Lit) -> Result<Val> {
        match lit {
            syn::Lit::Int(i) => {
                let v: i128 = match i.base10_parse::<u128>() {
                    Ok(v) if v <= i128::MAX as u128 => v as i128,
                    _ => return err(i, "integer literal is too large"),
                };
                match i.suffix() {
                    "" => Ok(Val::IntLit(v)),
                    s => match Type::from_name(s) {
                        Some(t) if t.is_int() => {
                            if v > t.int_max() {
                                return err(
                                    i,
                                    format!(
                                        "literal {v} does not fit in {t} (max {})",
                                        t.int_max()
                                    ),
                                );
                            }
                            Ok(Val::Typed(Expr::int(t, v)))
                        }
                        Some(t) if t.is_float() => Ok(Val::Typed(Expr::float(t, v as f64))),
                        _ => err(i, format!("unknown literal suffix `{s}`")),
                    },
                }
            }
            syn::Lit::Float(f) => {
                let v: f64 = f
                    .base10_parse()
                    .map_err(|_| Error::new_spanned(f, "bad float literal"))?;
                match f.suffix() {
                    "" => Ok(Val::FloatLit(v)),
                    "f32" => Ok(Val::Typed(Expr::float(Type::F32, v))),
                    "f64" => Ok(Val::Typed(Expr::float(Type::F64, v))),
                    s => err(f, format!("unknown literal suffix `{s}`")),
                }
            }
            syn::Lit::Bool(b) => Ok(Val::Typed(Expr::bool(b.value))),
            other => err(
                other,
                "only numbers and `true`/`false` are literals in the DSL",
            ),
        }
    }

    fn name(&mut self, e: &syn::Expr, env: &Env) -> Result<Val> {
        let Some(id) = ident_of(e) else {
            return err(e, "expected a name; paths are not part of the DSL");
        };
        let name = id.to_string();
        match env.get(&name) {
            Some(Binding::Var(d)) => Ok(Val::Typed(Expr::new(ExprKind::Var(*d), Type::I32))),
            Some(Binding::RVar(r)) => Ok(Val::Typed(Expr::new(ExprKind::RVar(*r), Type::I32))),
            Some(Binding::Scalar(v)) => Ok(v.clone()),
            Some(Binding::Poisoned) => Err(cascade()),
            None if self.is_family(&name) => err(
                id,
                format!("`{name}` is a func family; call a member: `{name}[0](x, y)`"),
            ),
            Some(Binding::Func(_)) => err(
                id,
                format!("`{name}` is a func; call it with coordinates, e.g. `{name}(x, y)`"),
            ),
            None => {
                if self.rvar_names.contains(&name) {
                    err(id, format!("`{name}` is a reduction variable and is only visible inside its `for .. in rdom(..)` loop"))
                } else if self.templates.iter().any(|t| t.sig.ident == name) {
                    err(
                        id,
                        format!("`{name}` is a template; call it with funcs: `{name}(f)`"),
                    )
                } else {
                    err(id, format!("unknown name `{name}`"))
                }
            }
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary, env: &Env, ctx: &Ctx) -> Result<Val> {
        use syn::BinOp as S;
        let op = match b.op {
            S::Add(_) => BinOp::Add,
            S::Sub(_) => BinOp::Sub,
            S::Mul(_) => BinOp::Mul,
            S::Div(_) => BinOp::Div,
            S::Rem(_) => BinOp::Rem,
            S::BitAnd(_) | S::And(_) => BinOp::And,
            S::BitOr(_) | S::Or(_) => BinOp::Or,
            S::BitXor(_) => BinOp::Xor,
            S::Shl(_) => BinOp::Shl,
            S::Shr(_) => BinOp::Shr,
            S::Eq(_) => BinOp::Eq,
            S::Ne(_) => BinOp::Ne,
            S::Lt(_) => BinOp::Lt,
            S::Le(_) => BinOp::Le,
            S::Gt(_) => BinOp::Gt,
            S::Ge(_) => BinOp::Ge,
            _ => return err(b, "compound assignment is a statement: `f(x) += 1;`"),
        };
        let logical = matches!(b.op, S::And(_) | S::Or(_));
        let a = self.expr(&b.left, env, ctx)?;
        let c = self.expr(&b.right, env, ctx)?;
        if logical {
            let a = self.coerce(a, Type::Bool, &b.left)?;
            let c = self.coerce(c, Type::Bool, &b.right)?;
            return Ok(Val::Typed(Expr::binary(op, a, c)));
        }
        self.apply(op, a, c, b)
    }

    /// Applies a binary operator with the typing rules (the guide's *Expressions and types*).
    fn apply(&mut self, op: BinOp, a: Val, c: Val, at: &dyn ToTokens) -> Result<Val> {
        // Literal with literal: fold, keeping the result untyped.
        match (&a, &c) {
            (Val::IntLit(x), Val::IntLit(y)) => {
                let (x, y) = (*x, *y);
                let v = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => Some(if y == 0 { 0 } else { x.div_euclid(y) }),
                    BinOp::Rem => Some(if y == 0 { 0 } else { x.rem_euclid(y) }),
                    BinOp::Min => Some(x.min(y)),
                    BinOp::Max => Some(x.max(y)),
                    BinOp::And => Some(x & y),
                    BinOp::Or => Some(x | y),
                    BinOp::Xor => Some(x ^ y),
                    _ => None,
                };
                if let Some(v) = v {
                    return Ok(Val::IntLit(v));
                }
            }
            (Val::IntLit(_) | Val::FloatLit(_), Val::IntLit(_) | Val::FloatLit(_))
                if matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max
                ) =>
            {
                let f = |v: &Val| match v {
                    Val::IntLit(i) => *i as f64,
                    Val::FloatLit(f) => *f,
                    _ => 0.0,
                };
                let (x, y) = (f(&a), f(&c));
                return Ok(Val::FloatLit(match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x / y,
                    BinOp::Min => x.min(y),
                    _ => x.max(y),
                }));
            }
            _ => {}
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            let a = match a {
                Val::Typed(t) => t,
                other => self.default(other, at)?,
            };
            if !a.ty.is_int() {
                return err(at, format!("shifts apply to integers, not {}", a.ty));
            }
            let c = match c {
                Val::IntLit(i) => Expr::int(a.ty, i),
                Val::Typed(t) if t.ty.is_int() => t,
                _ => return err(at, "the shift amount must be an integer"),
            };
            return Ok(Val::Typed(Expr::binary(op, a, c)));
        }
        let (x, y, ty) = self.unify(a, c, at)?;
        let bad = match op {
            BinOp::And | BinOp::Or | BinOp::Xor => ty.is_float(),
            BinOp::Eq | BinOp::Ne => false,
            _ if op.is_comparison() => ty == Type::Bool,
            _ => ty == Type::Bool,
        };
        if bad {
            return err(
                at,
                format!("operator `{}` does not apply to {}", op.symbol(), ty),
            );
        }
        Ok(Val::Typed(Expr::binary(op, x, y)))
    }

    /// Brings two values to a common type (the guide's *Expressions and types*).
    fn unify(&mut self, a: Val, b: Val, at: &dyn ToTokens) -> Result<(Expr, Expr, Type)> {
        let ty = match (&a, &b) {
            (Val::Typed(x), Val::Typed(y)) => match Type::unify(x.ty, y.ty) {
                Some(t) => t,
                None => {
                    return err(
                        at,
                        format!(
                            "mismatched types {} and {}; convert one side with `as`",
                            x.ty, y.ty
                        ),
                    )
                }
            },
            (Val::Typed(x), Val::IntLit(_)) | (Val::IntLit(_), Val::Typed(x)) => x.ty,
            (Val::Typed(x), Val::FloatLit(_)) | (Val::FloatLit(_), Val::Typed(x)) => {
                if x.ty.is_float() {
                    x.ty
                } else if x.ty == Type::Bool {
                    return err(at, "mismatched types bool and a float literal");
                } else {
                    Type::F32
                }
            }
            (Val::FloatLit(_), _) | (_, Val::FloatLit(_)) => Type::F32,
            _ => Type::I32,
        };
        let x = self.coerce_promote(a, ty, at)?;
        let y = self.coerce_promote(b, ty, at)?;
        Ok((x, y, ty))
    }

    /// Like [`Self::coerce`] but allows the implicit promotions of `unify`.
    fn coerce_promote(&mut self, v: Val, ty: Type, at: &dyn ToTokens) -> Result<Expr> {
        match v {
            Val::Typed(e) if e.ty != ty => Ok(Expr::cast(ty, e)),
            other => self.coerce(other, ty, at),
        }
    }

    /// Gives a value exactly type `ty`: literals take it (if they fit), typed
    /// values must already have it.
    fn coerce(&mut self, v: Val, ty: Type, at: &dyn ToTokens) -> Result<Expr> {
        match v {
            Val::IntLit(i) => {
                if ty == Type::Bool {
                    err(at, "expected a bool, found an integer")
                } else if ty.is_float() {
                    Ok(Expr::float(ty, i as f64))
                } else if i < ty.int_min() || i > ty.int_max() {
                    err(
                        at,
                        format!(
                            "literal {i} does not fit in {ty} ({}..={})",
                            ty.int_min(),
                            ty.int_max()
                        ),
                    )
                } else {
                    Ok(Expr::int(ty, i))
                }
            }
            Val::FloatLit(f) => {
                if ty.is_float() {
                    Ok(Expr::float(ty, f))
                } else {
                    err(at, format!("expected {ty}, found a float literal"))
                }
            }
            Val::Typed(e) => {
                if e.ty == ty {
                    Ok(e)
                } else {
                    err(
                        at,
                        format!("expected {ty}, found {}; convert with `as {ty}`", e.ty),
                    )
                }
            }
        }
    }

    /// A lone value: integer literals are i32, float literals f32.
    fn default(&mut self, v: Val, at: &dyn ToTokens) -> Result<Expr> {
        match v {
            Val::IntLit(i) => {
                if i < i32::MIN as i128 || i > i32::MAX as i128 {
                    err(at, format!("literal {i} does not fit in i32; give it a type with a suffix such as `{i}i64`"))
                } else {
                    Ok(Expr::i32(i))
                }
            }
            Val::FloatLit(f) => Ok(Expr::float(Type::F32, f)),
            Val::Typed(e) => Ok(e),
        }
    }

    fn coordinate(&mut self, v: Val, at: &dyn ToTokens) -> Result<Expr> {
        let e = self.default(v, at)?;
        if e.ty.is_int() {
            Ok(Expr::cast(Type::I32, e))
        } else {
            err(
                at,
                format!(
                    "a coordinate must be an integer, found {}; convert with `as i32`",
                    e.ty
                ),
            )
        }
    }

    fn cast(&mut self, v: Val, ty: Type, at: &dyn ToTokens) -> Result<Val> {
        let e = match v {
            Val::IntLit(i) if ty.is_int() => return Ok(Val::Typed(Expr::int(ty, i))),
            Val::IntLit(i) if ty.is_float() => return Ok(Val::Typed(Expr::float(ty, i as f64))),
            Val::FloatLit(f) if ty.is_float() => return Ok(Val::Typed(Expr::float(ty, f))),
            other => self.default(other, at)?,
        };
        if ty == Type::Bool && e.ty != Type::Bool {
            return err(at, "cannot cast to bool; compare instead, e.g. `v != 0`");
        }
        if e.ty == Type::Bool && ty.is_float() {
            return err(at, "cannot cast bool to a float; cast to an integer first");
        }
        Ok(Val::Typed(Expr::cast(ty, e)))
    }

    fn call(&mut self, c: &syn::ExprCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        // A call of a func value: `f(x, y)`, `g[1](x, y)`, `input.mirror()(x, y)`, `t(f)(x, y)`.
        let callee_name = match &*c.func {
            // `saturating_cast::<u8>` carries generic arguments, so it is no plain ident.
            syn::Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
                Some(p.path.segments[0].ident.to_string())
            }
            _ => None,
        };
        let is_local = callee_name.as_ref().is_some_and(|n| env.contains_key(n));
        if is_local || !matches!(&*c.func, syn::Expr::Path(_)) {
            if let Some(f) = self.func_value(&c.func, env)? {
                return self.load(&f, c, env, ctx);
            }
            if is_local {
                let n = callee_name.unwrap();
                return err(&c.func, format!("`{n}` is not a func and cannot be called"));
            }
            return err(&c.func, "expected a func to call");
        }
        let Some(name) = callee_name else {
            return err(&c.func, "expected a func or built-in name");
        };
        if let syn::Expr::Path(p) = &*c.func {
            if name.is_empty() || p.path.segments.len() != 1 {
                return err(&c.func, "expected a func or built-in name");
            }
        }
        if self.templates.iter().any(|t| t.sig.ident == name) {
            if let Some(f) = self.func_value(&c.func, env)? {
                return self.load(&f, c, env, ctx);
            }
            return err(c, format!("`{name}(..)` returns a func; call the result with coordinates: `{name}(..)(x, y)`"));
        }
        self.builtin(&name, c, env, ctx)
    }

    fn builtin(&mut self, name: &str, c: &syn::ExprCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let want = |n: usize| -> Result<()> {
            if args.len() != n {
                err(
                    c,
                    format!("`{name}` takes {n} argument(s), found {}", args.len()),
                )
            } else {
                Ok(())
            }
        };
        match name {
            "min" | "max" => {
                want(2)?;
                let op = if name == "min" {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                let a = self.expr(args[0], env, ctx)?;
                let b = self.expr(args[1], env, ctx)?;
                let (x, y, ty) = self.unify(a, b, c)?;
                if ty == Type::Bool {
                    return err(c, format!("`{name}` applies to numbers"));
                }
                Ok(Val::Typed(Expr::binary(op, x, y)))
            }
            "clamp" => {
                want(3)?;
                let v = self.expr(args[0], env, ctx)?;
                let lo = self.expr(args[1], env, ctx)?;
                let hi = self.expr(args[2], env, ctx)?;
                let lo_v = self.apply(BinOp::Max, v, lo, c)?;
                self.apply(BinOp::Min, lo_v, hi, c)
            }
            "abs" => {
                want(1)?;
                let v = self.expr(args[0], env, ctx)?;
                match v {
                    Val::IntLit(i) => Ok(Val::IntLit(i.abs())),
                    Val::FloatLit(f) => Ok(Val::FloatLit(f.abs())),
                    Val::Typed(e) if e.ty == Type::Bool => err(args[0], "`abs` applies to numbers"),
                    Val::Typed(e) => Ok(Val::Typed(Expr::new(
                        ExprKind::Unary(UnOp::Abs, Box::new(e.clone())),
                        e.ty,
                    ))),
                }
            }
            "absd" => {
                want(2)?;
                let a = self.expr(args[0], env, ctx)?;
                let b = self.expr(args[1], env, ctx)?;
                let (x, y, ty) = self.unify(a, b, c)?;
                if ty == Type::Bool {
                    return err(c, "`absd` applies to numbers");
                }
                if ty.is_float() {
                    let d = Expr::binary(BinOp::Sub, x, y);
                    return Ok(Val::Typed(Expr::new(
                        ExprKind::Unary(UnOp::Abs, Box::new(d)),
                        ty,
                    )));
                }
                let u = ty.to_unsigned();
                let (ia, ib) = (self.next_let(), self.next_let());
                Ok(Val::Typed(Expr::bind(ia, x, |x| {
                    Expr::bind(ib, y, |y| {
                        let gt = Expr::binary(BinOp::Gt, x.clone(), y.clone());
                        let (ux, uy) = (Expr::cast(u, x), Expr::cast(u, y));
                        Expr::select(
                            gt,
                            Expr::binary(BinOp::Sub, ux.clone(), uy.clone()),
                            Expr::binary(BinOp::Sub, uy, ux),
                        )
                    })
                })))
            }
            "lerp" => {
                want(3)?;
                let a = self.expr(args[0], env, ctx)?;
                let b = self.expr(args[1], env, ctx)?;
                let t = self.expr(args[2], env, ctx)?;
                let (x, y, ty) = self.unify(a, b, c)?;
                if !ty.is_float() {
                    return err(
                        c,
                        format!("`lerp` interpolates floats, found {ty}; convert with `as f32`"),
                    );
                }
                let t = self.coerce(t, ty, args[2])?;
                let d = Expr::binary(BinOp::Sub, y, x.clone());
                Ok(Val::Typed(Expr::binary(
                    BinOp::Add,
                    x,
                    Expr::binary(BinOp::Mul, d, t),
                )))
            }
            "select" => {
                want(3)?;
                let cond = self.expr(args[0], env, ctx)?;
                let cond = self.coerce(cond, Type::Bool, args[0])?;
                let a = self.expr(args[1], env, ctx)?;
                let b = self.expr(args[2], env, ctx)?;
                let (x, y, _) = self.unify(a, b, c)?;
                Ok(Val::Typed(Expr::select(cond, x, y)))
            }
            "saturating_cast" => {
                want(1)?;
                let ty = match &*c.func {
                    syn::Expr::Path(p) => match &p.path.segments[0].arguments {
                        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => {
                            match &a.args[0] {
                                syn::GenericArgument::Type(t) => {
                                    scalar_type(t).filter(|t| *t != Type::Bool)
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    },
                    _ => None,
                };
                let Some(ty) = ty else {
                    return err(&c.func, "write the target type: `saturating_cast::<u8>(v)`");
                };
                let v = self.expr(args[0], env, ctx)?;
                let e = self.default(v, args[0])?;
                if e.ty == Type::Bool {
                    return err(args[0], "`saturating_cast` converts numbers");
                }
                Ok(Val::Typed(Expr::new(
                    ExprKind::SaturatingCast(Box::new(e)),
                    ty,
                )))
            }
            "sum" | "product" | "maximum" | "minimum" => self.inline_reduction(name, c, env, ctx),
            "rdom" => err(
                c,
                "`rdom(..)` can only appear in `for r in rdom(..) { ... }`",
            ),
            _ => {
                if let Some(m) = MathFn::from_name(name) {
                    want(m.arity())?;
                    let mut vals = Vec::new();
                    for a in &args {
                        vals.push(self.expr(a, env, ctx)?);
                    }
                    let ty = vals
                        .iter()
                        .filter_map(|v| match v {
                            Val::Typed(e) => Some(e.ty),
                            _ => None,
                        })
                        .next()
                        .unwrap_or(Type::F32);
                    if !ty.is_float() {
                        return err(
                            c,
                            format!("`{name}` takes floats, found {ty}; convert with `as f32`"),
                        );
                    }
                    let mut es = Vec::new();
                    for (v, a) in vals.into_iter().zip(&args) {
                        es.push(self.coerce(v, ty, a)?);
                    }
                    return Ok(Val::Typed(Expr::new(ExprKind::Math(m, es), ty)));
                }
                err(
                    &c.func,
                    format!("unknown name `{name}`: not a func, template or built-in"),
                )
            }
        }
    }

    fn inline_reduction(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
        env: &Env,
        ctx: &Ctx,
    ) -> Result<Val> {
        if c.args.len() != 2 {
            return err(
                c,
                format!("`{name}` takes a domain and a closure: `{name}(-1..=1, |i| f(x + i, y))`"),
            );
        }
        let ranges: Vec<&syn::Expr> = match &c.args[0] {
            syn::Expr::Tuple(t) => t.elems.iter().collect(),
            syn::Expr::Paren(p) => vec![&*p.expr],
            e => vec![e],
        };
        let mut domain = Vec::new();
        for r in &ranges {
            let syn::Expr::Range(range) = r else {
                return err(r, "the domain of an inline reduction is a constant range `a..b` / `a..=b` or a tuple of them");
            };
            let (Some(s), Some(e)) = (&range.start, &range.end) else {
                return err(range, "the range needs both ends");
            };
            let lo = self.const_int(s, env)?;
            let mut hi = self.const_int(e, env)?;
            if matches!(range.limits, syn::RangeLimits::Closed(_)) {
                hi += 1;
            }
            if hi <= lo {
                return err(range, "the domain of an inline reduction is empty");
            }
            domain.push((lo, hi));
        }
        let count: i128 = domain.iter().map(|(a, b)| b - a).product();
        if count > 4096 {
            return err(&c.args[0], "inline reductions unroll at most 4096 points; use an rdom update for larger domains");
        }
        let syn::Expr::Closure(cl) = &c.args[1] else {
            return err(
                &c.args[1],
                "the second argument is a closure: `|i| ...` or `|(i, j)| ...`",
            );
        };
        let names: Vec<String> = match cl.inputs.iter().collect::<Vec<_>>().as_slice() {
            [syn::Pat::Ident(pi)] => vec![pi.ident.to_string()],
            [syn::Pat::Tuple(t)] => t
                .elems
                .iter()
                .map(|p| match p {
                    syn::Pat::Ident(pi) => Ok(pi.ident.to_string()),
                    o => err(o, "expected a name"),
                })
                .collect::<Result<_>>()?,
            _ => return err(&cl.inputs, "the closure takes one name or a tuple of names"),
        };
        if names.len() != domain.len() {
            return err(
                &cl.inputs,
                format!(
                    "the domain has {} dimension(s) but the closure binds {}",
                    domain.len(),
                    names.len()
                ),
            );
        }
        let op = match name {
            "sum" => BinOp::Add,
            "product" => BinOp::Mul,
            "maximum" => BinOp::Max,
            _ => BinOp::Min,
        };
        // Lexicographic order, first component innermost; a left fold.
        let mut point: Vec<i128> = domain.iter().map(|d| d.0).collect();
        let mut acc: Option<Val> = None;
        loop {
            let mut inner = env.clone();
            for (n, v) in names.iter().zip(&point) {
                inner.insert(n.clone(), Binding::Scalar(Val::IntLit(*v)));
            }
            let term = self.expr(&cl.body, &inner, ctx)?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.apply(op, a, term, &cl.body)?,
            });
            let mut d = 0;
            loop {
                if d == point.len() {
                    return Ok(acc.unwrap());
                }
                point[d] += 1;
                if point[d] < domain[d].1 {
                    break;
                }
                point[d] = domain[d].0;
                d += 1;
            }
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        let method = m.method.to_string();
        match method.as_str() {
            "width" | "height" | "extent" => {
                let Some(f) = self.func_value(&m.receiver, env)? else {
                    return err(&m.receiver, format!("`.{method}()` applies to an input image"));
                };
                let dim = match method.as_str() {
                    "width" => 0,
                    "height" => 1,
                    _ => {
                        if m.args.len() != 1 {
                            return err(m, "`.extent(d)` takes the dimension");
                        }
                        self.const_int(&m.args[0], env)? as usize
                    }
                };
                if method != "extent" && !m.args.is_empty() {
                    return err(m, format!("`.{method}()` takes no arguments"));
                }
                let Some(ext) = self.source_extents(&f) else {
                    return err(&m.receiver, "this func has no known extent");
                };
                match ext.get(dim) {
                    Some((_, e)) => Ok(Val::Typed(e.clone())),
                    None => err(m, format!("dimension {dim} is out of range: the source has {} dimension(s)", ext.len())),
                }
            }
            "clamp_edge" | "mirror" | "mirror_interior" | "wrap" | "constant" => err(
                m,
                format!("`.{method}()` gives a func; call it with coordinates: `{}.{method}()(x, y)`, or bind it: `let b = ....{method}();`", m.receiver.to_token_stream()),
            ),
            _ => {
                let _ = ctx;
                err(&m.method, format!("unknown method `{method}`; methods are `width`, `height`, `extent` and the boundary conditions"))
            }
        }
    }

    fn load(&mut self, f: &FuncRef, c: &syn::ExprCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        if let FuncRef::Func(id) = f {
            if self.poisoned.contains(id) {
                return Err(cascade());
            }
        }
        let dims = self.dims_of(f);
        if c.args.len() != dims {
            return err(
                c,
                format!(
                    "`{}` has {} dimension(s) but is called with {} coordinate(s)",
                    c.func.to_token_stream(),
                    dims,
                    c.args.len()
                ),
            );
        }
        if let (FuncRef::Func(id), Some((def, in_update))) = (f, &ctx.defining) {
            if id == def && !in_update {
                return err(
                    c,
                    format!(
                        "`{}` is used in its own pure definition; a recursive definition needs an update: define it first, then `for r in rdom(..) {{ {}(r) = ... }}`",
                        self.pipe.funcs[*id].name, self.pipe.funcs[*id].name
                    ),
                );
            }
        }
        let mut args = Vec::new();
        for a in &c.args {
            let v = self.expr(a, env, ctx)?;
            args.push(self.coordinate(v, a)?);
        }
        let site = self.site(c);
        Ok(Val::Typed(self.load_ref(f, args, site)))
    }

    fn load_ref(&self, f: &FuncRef, args: Vec<Expr>, site: usize) -> Expr {
        match f {
            FuncRef::Func(id) => Expr::new(
                ExprKind::Load {
                    source: Source::Func(*id),
                    args,
                    site,
                },
                self.pipe.funcs[*id].ty,
            ),
            FuncRef::Input(i) => Expr::new(
                ExprKind::Load {
                    source: Source::Input(*i),
                    args,
                    site,
                },
                self.pipe.inputs[*i].ty,
            ),
            FuncRef::Bounded {
                inner,
                mode,
                constant,
            } => {
                let ext = self
                    .source_extents(inner)
                    .expect("checked when the boundary condition was made");
                let wrap = |m: BoundaryMode| -> Vec<Expr> {
                    args.iter()
                        .zip(&ext)
                        .map(|(a, (min, extent))| {
                            Expr::new(
                                ExprKind::Boundary {
                                    mode: m,
                                    coord: Box::new(a.clone()),
                                    min: Box::new(min.clone()),
                                    extent: Box::new(extent.clone()),
                                },
                                Type::I32,
                            )
                        })
                        .collect()
                };
                match constant {
                    None => self.load_ref(inner, wrap(*mode), site),
                    Some(v) => {
                        let inside = args
                            .iter()
                            .zip(&ext)
                            .map(|(a, (min, extent))| {
                                Expr::binary(
                                    BinOp::And,
                                    Expr::binary(BinOp::Ge, a.clone(), min.clone()),
                                    Expr::binary(
                                        BinOp::Lt,
                                        Expr::binary(BinOp::Sub, a.clone(), min.clone()),
                                        extent.clone(),
                                    ),
                                )
                            })
                            .reduce(|x, y| Expr::binary(BinOp::And, x, y))
                            .unwrap_or_else(|| Expr::bool(true));
                        let load = self.load_ref(inner, wrap(BoundaryMode::GuardedClamp), site);
                        Expr::select(inside, load, v.clone())
                    }
                }
            }
        }
    }

    fn dims_of(&self, f: &FuncRef) -> usize {
        match f {
            FuncRef::Func(id) => self.pipe.funcs[*id].dims(),
            FuncRef::Input(i) => self.pipe.inputs[*i].dims,
            FuncRef::Bounded { inner, .. } => self.dims_of(inner),
        }
    }

    fn value_type(&self, f: &FuncRef) -> Type {
        match f {
            FuncRef::Func(id) => self.pipe.funcs[*id].ty,
            FuncRef::Input(i) => self.pipe.inputs[*i].ty,
            FuncRef::Bounded { inner, .. } => self.value_type(inner),
        }
    }

    /// `(min, extent)` of each dimension of a source, as i32 expressions.
    fn source_extents(&self, f: &FuncRef) -> Option<Vec<(Expr, Expr)>> {
        match f {
            FuncRef::Input(i) => Some(
                (0..self.pipe.inputs[*i].dims)
                    .map(|d| {
                        (
                            Expr::new(ExprKind::InputMin(*i, d), Type::I32),
                            Expr::new(ExprKind::InputExtent(*i, d), Type::I32),
                        )
                    })
                    .collect(),
            ),
            FuncRef::Func(id) => self.pipe.funcs[*id]
                .natural_extent
                .iter()
                .map(|e| e.clone().map(|e| (Expr::i32(0), e)))
                .collect(),
            FuncRef::Bounded { inner, .. } => self.source_extents(inner),
        }
    }

    /// The natural extent of each dimension of a func (the guide's *Sizes*): from
    /// the first read whose coordinate is `a * v + k`, `v / a` or `v + k` of
    /// that dimension's variable.
    fn natural_extents(&self, id: FuncId) -> Vec<Option<Expr>> {
        let func = &self.pipe.funcs[id];
        (0..func.dims())
            .map(|d| {
                let mut found = None;
                func.pure.visit(&mut |e| {
                    if found.is_some() {
                        return;
                    }
                    if let ExprKind::Load { source, args, .. } = &e.kind {
                        for (k, a) in args.iter().enumerate() {
                            let Some(scale) = affine_in(a, d) else {
                                continue;
                            };
                            let src = match source {
                                Source::Input(i) => {
                                    Some(Expr::new(ExprKind::InputExtent(*i, k), Type::I32))
                                }
                                Source::Func(g) if *g != id => {
                                    self.pipe.funcs[*g].natural_extent[k].clone()
                                }
                                _ => None,
                            };
                            if let Some(src) = src {
                                found = Some(match scale {
                                    Scale::Same => src,
                                    Scale::Down(a) => Expr::binary(
                                        BinOp::Div,
                                        Expr::binary(BinOp::Add, src, Expr::i32(a - 1)),
                                        Expr::i32(a),
                                    ),
                                    Scale::Up(a) => Expr::binary(BinOp::Mul, src, Expr::i32(a)),
                                });
                                return;
                            }
                        }
                    }
                });
                found.map(|e| crate::analysis::simplify::simplify(&e))
            })
            .collect()
    }

    /// Evaluates a compile-time integer (family indices, loop ranges).
    fn const_int(&mut self, e: &syn::Expr, env: &Env) -> Result<i128> {
        let ctx = Ctx { defining: None };
        match self.expr(e, env, &ctx)? {
            Val::IntLit(i) => Ok(i),
            Val::Typed(t) if t.as_int().is_some() => Ok(t.as_int().unwrap()),
            _ => err(e, "expected a compile-time integer (literals, compile-time loop variables and arithmetic on them)"),
        }
    }

    /// Renumbers the funcs so that each reads only funcs before it (the IR's
    /// invariant, `ir::pipeline`). Definition order is such an order, except
    /// that a template called in place inside a definition makes its funcs
    /// after the func being defined, and an update may read a func defined
    /// after its func's pure definition: those readers move after what they
    /// read, the other funcs keep their order. Only updates can make a
    /// cycle, which is an error.
    fn order_funcs(&mut self) -> Result<()> {
        let p = &mut self.pipe;
        let n = p.funcs.len();
        let reads: Vec<Vec<FuncId>> = (0..n).map(|f| p.callees(f)).collect();
        let mut placed = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let next = (0..n).find(|&f| !placed[f] && reads[f].iter().all(|&g| placed[g]));
            let Some(f) = next else {
                // Each func left reads another one left: an update reads a
                // func that reads the update's func.
                for f in (0..n).filter(|&f| !placed[f]) {
                    for u in &p.funcs[f].updates {
                        let mut later = None;
                        let mut find = |e: &Expr| {
                            e.visit(&mut |n| {
                                if let ExprKind::Load {
                                    source: Source::Func(g),
                                    ..
                                } = n.kind
                                {
                                    if g != f && !placed[g] {
                                        later.get_or_insert(g);
                                    }
                                }
                            })
                        };
                        u.args.iter().for_each(&mut find);
                        find(&u.value);
                        if let Some(g) = later {
                            let (f, g) = (&p.funcs[f].name, &p.funcs[g].name);
                            return err(
                                &p.sites[u.site].call,
                                format!("this update of `{f}` reads `{g}`, which reads `{f}`: a func can read itself only in its own updates"),
                            );
                        }
                    }
                }
                unreachable!("a cycle of funcs without updates");
            };
            placed[f] = true;
            order.push(f);
        }
        if order.iter().enumerate().all(|(i, &f)| i == f) {
            return Ok(());
        }
        let mut new_id = vec![0; n];
        for (i, &f) in order.iter().enumerate() {
            new_id[f] = i;
        }
        let renumber = |e: &Expr| {
            e.rewrite(&mut |mut e: Expr| {
                if let ExprKind::Load {
                    source: Source::Func(g),
                    ..
                } = &mut e.kind
                {
                    *g = new_id[*g];
                }
                e
            })
        };
        let mut funcs: Vec<Option<Func>> = p.funcs.drain(..).map(Some).collect();
        p.funcs = order.iter().map(|&f| funcs[f].take().unwrap()).collect();
        for func in &mut p.funcs {
            func.pure = renumber(&func.pure);
            for u in &mut func.updates {
                u.args = u.args.iter().map(renumber).collect();
                u.value = renumber(&u.value);
                for r in &mut u.rdom {
                    r.min = renumber(&r.min);
                    r.extent = renumber(&r.extent);
                }
            }
        }
        for o in &mut p.outputs {
            *o = new_id[*o];
        }
        Ok(())
    }

    /// Every coordinate must be bounded for bounds inference (the guide's *Calls and coordinates*).
    fn check_bounded_coordinates(&mut self) {
        let values = crate::analysis::bounds::func_value_bounds(&self.pipe);
        let value_of = |g: FuncId| values[g].clone();
        let placeholder = |k: usize| Interval::new(Expr::sym(k), Expr::sym(k + 1));
        let mut errors = Vec::new();
        for func in &self.pipe.funcs {
            let vars: Vec<Interval> = (0..func.dims()).map(|d| placeholder(2 * d)).collect();
            let check = |e: &Expr, rvars: &[Interval], errors: &mut Vec<(usize, usize)>| {
                let scope = Scope::new(vars.clone(), rvars.to_vec(), &value_of);
                visit_loads(e, &scope, &mut |n| {
                    if let ExprKind::Load { args, site, .. } = &n.kind {
                        for (d, a) in args.iter().enumerate() {
                            if !bounds_of(a, &scope).is_bounded() {
                                errors.push((*site, d));
                            }
                        }
                    }
                });
            };
            check(&func.pure, &[], &mut errors);
            for u in &func.updates {
                let rvars: Vec<Interval> =
                    (0..u.rdom.len()).map(|r| placeholder(16 + 2 * r)).collect();
                check(&u.value, &rvars, &mut errors);
                for a in &u.args {
                    check(a, &rvars, &mut errors);
                }
                let scope = Scope::new(vars.clone(), rvars.clone(), &value_of);
                for (d, a) in u.args.iter().enumerate() {
                    if !bounds_of(a, &scope).is_bounded() {
                        errors.push((u.site, d));
                    }
                }
            }
        }
        errors.sort();
        errors.dedup();
        for (site, d) in errors {
            let s = &self.pipe.sites[site];
            self.errors.push(Error::new_spanned(
                s.args.get(d).unwrap_or(&s.call),
                format!(
                    "coordinate {} ({}) is data-dependent and unbounded, so the region to compute cannot be inferred; bound it with `clamp(v, lo, hi)` or read through a boundary condition such as `.clamp_edge()`",
                    d,
                    coord_name(d)
                ),
            ));
        }
    }
}

enum Target {
    Existing(FuncId),
    New {
        name: String,
        family: Option<(usize, i128)>,
    },
}

enum Scale {
    Same,
    Down(i128),
    Up(i128),
}

/// Recognizes `v`, `v + k`, `k + v`, `v - k`, `a * v + k`, `v / a` (and the
/// same under a boundary condition) for the pure variable of dimension `d`.
fn affine_in(e: &Expr, d: usize) -> Option<Scale> {
    let only_var = |e: &Expr| {
        let mut ok = true;
        e.visit(&mut |n| {
            if matches!(n.kind, ExprKind::Var(k) if k != d)
                || matches!(
                    n.kind,
                    ExprKind::RVar(_) | ExprKind::Load { .. } | ExprKind::Param(_)
                )
            {
                ok = false;
            }
        });
        ok
    };
    match &e.kind {
        ExprKind::Var(k) if *k == d => Some(Scale::Same),
        ExprKind::Boundary { coord, .. } => affine_in(coord, d),
        ExprKind::Cast(a) => affine_in(a, d),
        ExprKind::Binary(BinOp::Add | BinOp::Sub, a, b) if b.as_int().is_some() && only_var(a) => {
            affine_in(a, d)
        }
        ExprKind::Binary(BinOp::Add, a, b) if a.as_int().is_some() && only_var(b) => {
            affine_in(b, d)
        }
        ExprKind::Binary(BinOp::Mul, a, b) => match (a.as_int(), b.as_int()) {
            (Some(k), None) if k > 0 && matches!(b.kind, ExprKind::Var(v) if v == d) => {
                Some(Scale::Down(k))
            }
            (None, Some(k)) if k > 0 && matches!(a.kind, ExprKind::Var(v) if v == d) => {
                Some(Scale::Down(k))
            }
            _ => None,
        },
        ExprKind::Binary(BinOp::Div, a, b) => match b.as_int() {
            Some(k) if k > 0 && matches!(a.kind, ExprKind::Var(v) if v == d) => Some(Scale::Up(k)),
            _ => None,
        },
        _ => None,
    }
    .map(|s| match s {
        Scale::Same => Scale::Same,
        other => other,
    })
}

fn is_leaf(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Var(_)
            | ExprKind::RVar(_)
            | ExprKind::Param(_)
            | ExprKind::LetVar(_)
    )
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitAndAssign(_) => BinOp::And,
        syn::BinOp::BitOrAssign(_) => BinOp::Or,
        syn::BinOp::BitXorAssign(_) => BinOp::Xor,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "min"
            | "max"
            | "clamp"
            | "abs"
            | "absd"
            | "lerp"
            | "select"
            | "saturating_cast"
            | "sum"
            | "product"
            | "maximum"
            | "minimum"
            | "rdom"
    ) || MathFn::from_name(name).is_some()
}
