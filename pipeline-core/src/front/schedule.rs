//! Checking of `schedule NAME { ... }` blocks (`pipeline::guide::scheduling`) and their
//! translation into a [`Schedule`].
//!
//! Each statement is a chain of directives on one func: `f.split(x, xo, xi,
//! 8).parallel(xo);`. This pass checks that the pipeline, the funcs, the
//! directives, their arities and the variables they name exist (variables
//! introduced by `split`/`tile` count from that point on) and that each can be
//! honoured, reporting errors at the directive's tokens. A func named in the
//! block starts from serial loops in its definition's order (as in Halide);
//! funcs not named keep the default schedule.
//!
//! Whether a `compute_at` can be honoured depends on the whole schedule and on
//! inlining, so loop synthesis checks it and reports at the directive.
//! A `for cuda` block is checked the same way and applied to the GPU
//! schedule, which starts from [`Schedule::gpu_default`]; there
//! `vectorize`, `parallel` and `unroll` make loops inside a thread.

use super::check::CheckedPipeline;
use super::parse::ScheduleItem;
use crate::schedule::auto::Estimates;
use crate::schedule::update::{parallelizable, reorderable, update_vars, UpdateVar};
use crate::schedule::{default_updates, ComputeLevel, Dim, LoopKind, Schedule, StageSchedule};
use quote::ToTokens;
use syn::Error;

/// (name, number of arguments, whether only in `for cuda` blocks)
const DIRECTIVES: &[(&str, usize, bool)] = &[
    ("split", 4, false),
    ("tile", 8, false),
    ("reorder", usize::MAX, false),
    ("vectorize", 2, false),
    ("unroll", 2, false),
    ("parallel", 1, false),
    ("compute_at", 2, false),
    ("store_at", 2, false),
    ("compute_root", 0, false),
    ("compute_inline", 0, false),
    ("bound", 3, false),
    ("gpu_tile", 8, true),
    ("gpu_blocks", usize::MAX, true),
    ("gpu_threads", usize::MAX, true),
];

/// What a block says besides its directives.
#[derive(Clone, Debug, Default)]
pub struct BlockOptions {
    /// `auto;`: the auto-scheduler chooses for the funcs the block does not name.
    pub auto: bool,
    /// `estimate(name, extents..)` of inputs and funcs.
    pub estimates: Estimates,
    /// The funcs the block names.
    pub named: Vec<bool>,
}

/// Checks a schedule block against its pipeline and applies it to `schedule`.
pub fn check_schedule(
    item: &ScheduleItem,
    pipeline: &CheckedPipeline,
    schedule: &mut Schedule,
) -> Result<BlockOptions, Error> {
    let p = &pipeline.pipeline;
    let cuda = item.target.is_some();
    let mut named = vec![false; p.funcs.len()];
    let mut errors = Vec::new();
    let mut options = BlockOptions {
        estimates: Estimates {
            inputs: vec![None; p.inputs.len()],
            funcs: vec![None; p.funcs.len()],
        },
        ..BlockOptions::default()
    };
    let mut auto_tokens: Option<&syn::Expr> = None;
    let mut estimate_tokens: Option<&syn::Expr> = None;
    // The variables each stage's directives may name so far: its own,
    // then those that splits introduce.
    let mut vars: Vec<Vec<Vec<String>>> = (0..p.funcs.len())
        .map(|f| {
            let mut stages = vec![p.funcs[f].vars.clone()];
            for k in 0..p.funcs[f].updates.len() {
                stages.push(update_vars(p, f, k).into_iter().map(|(n, _)| n).collect());
            }
            stages
        })
        .collect();
    for stmt in &item.body.stmts {
        let syn::Stmt::Expr(expr, Some(_)) = stmt else {
            errors.push(Error::new_spanned(
                stmt,
                "a schedule holds directive chains like `f.parallel(y);`, each ending with `;`",
            ));
            continue;
        };
        if let syn::Expr::Path(path) = expr {
            if path.path.is_ident("auto") {
                if cuda {
                    errors.push(Error::new_spanned(expr, "`auto;` chooses CPU schedules: it belongs in the `schedule NAME { ... }` block, not in one `for cuda`"));
                } else if auto_tokens.is_some() {
                    errors.push(Error::new_spanned(expr, "`auto;` is already in this block"));
                }
                auto_tokens = Some(expr);
                options.auto = true;
                continue;
            }
        }
        if let syn::Expr::Call(call) = expr {
            if matches!(&*call.func, syn::Expr::Path(f) if f.path.is_ident("estimate")) {
                estimate_tokens.get_or_insert(expr);
                if let Err(e) = estimate(call, p, &mut options.estimates) {
                    errors.push(e);
                }
                continue;
            }
            if matches!(&*call.func, syn::Expr::Path(f) if f.path.is_ident("auto")) {
                errors.push(Error::new_spanned(
                    expr,
                    "`auto` takes no arguments: write `auto;`",
                ));
                continue;
            }
        }
        // Unwind the chain: receiver first.
        let mut chain = Vec::new();
        let mut cur = expr;
        while let syn::Expr::MethodCall(m) = cur {
            chain.push(m);
            cur = &m.receiver;
        }
        chain.reverse();
        let fname = written(cur);
        if let Some(i) = p.inputs.iter().position(|inp| inp.name == fname) {
            if let Err(e) = input_layout(expr, &chain, &fname, p.inputs[i].dims, cuda, schedule, i)
            {
                errors.push(e);
            }
            continue;
        }
        let Some(f) = p.funcs.iter().position(|g| written_as(&g.name, &fname)) else {
            errors.push(Error::new_spanned(
                cur,
                format!("`{fname}` is not a func of pipeline `{}`", p.name),
            ));
            continue;
        };
        if chain.is_empty() {
            errors.push(Error::new_spanned(
                expr,
                "expected directives after the func name, e.g. `f.compute_root();`",
            ));
        }
        if !named[f] {
            named[f] = true;
            schedule.funcs[f].pure = StageSchedule::serial(&p.funcs[f].vars);
            schedule.funcs[f].updates = default_updates(p, f);
            schedule.funcs[f].written.clear();
        }
        // The stage the directives apply to: the pure definition until
        // `.update(k)` selects update `k`.
        let mut stage = 0;
        for m in chain {
            let name = m.method.to_string();
            if name == "update" {
                match update_index(m, p.funcs[f].updates.len(), &fname) {
                    Ok(k) => stage = k + 1,
                    Err(e) => {
                        errors.push(e);
                        break;
                    }
                }
                continue;
            }
            if stage > 0
                && !STAGE_DIRECTIVES.contains(&name.as_str())
                && DIRECTIVES.iter().any(|d| d.0 == name)
            {
                errors.push(Error::new_spanned(
                    &m.method,
                    format!("`{name}` applies to the whole func, not to one update: write it before `.update(..)`, e.g. `{fname}.{name}(..).update(0)...`"),
                ));
                continue;
            }
            if name == "dim" || name == "set_stride" {
                errors.push(Error::new_spanned(
                    directive(m),
                    format!("`dim(..).set_stride(..)` declares the layout of an input, and `{fname}` is a func (outputs may have any layout)"),
                ));
                break;
            }
            let Some(&(_, arity, gpu_only)) = DIRECTIVES.iter().find(|d| d.0 == name) else {
                errors.push(Error::new_spanned(
                    &m.method,
                    format!(
                        "unknown directive `{name}`; directives are {} (and, on their own, `auto;` and `estimate(..);`)",
                        DIRECTIVES
                            .iter()
                            .map(|d| d.0)
                            .chain(["update"])
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                continue;
            };
            if gpu_only && !cuda {
                errors.push(Error::new_spanned(
                    &m.method,
                    format!(
                        "`{name}` belongs in a `schedule {} for cuda {{ ... }}` block",
                        p.name
                    ),
                ));
                continue;
            }
            if arity != usize::MAX && m.args.len() != arity {
                errors.push(Error::new_spanned(
                    directive(m),
                    format!("`{name}` takes {arity} argument(s), found {}", m.args.len()),
                ));
                continue;
            }
            let args: Vec<String> = m.args.iter().map(written).collect();
            // Which arguments name existing variables, and which introduce new ones.
            let (uses, defines): (Vec<usize>, Vec<usize>) = match name.as_str() {
                "split" => (vec![0], vec![1, 2]),
                "tile" | "gpu_tile" => (vec![0, 1], vec![2, 3, 4, 5]),
                "reorder" | "gpu_blocks" | "gpu_threads" => ((0..args.len()).collect(), vec![]),
                "vectorize" | "unroll" | "parallel" | "bound" => (vec![0], vec![]),
                _ => (vec![], vec![]),
            };
            let mut ok = true;
            let known = &vars[f][stage];
            for &i in &uses {
                if !known.contains(&args[i]) {
                    errors.push(Error::new_spanned(
                        &m.args[i],
                        format!(
                            "`{}` is not a variable of {} (its variables: {})",
                            args[i],
                            stage_name(&fname, stage),
                            known.join(", ")
                        ),
                    ));
                    ok = false;
                }
            }
            if matches!(name.as_str(), "compute_at" | "store_at") {
                // The loop is checked after the whole block, in loop
                // synthesis: the consumer's splits may come later.
                if !p.funcs.iter().any(|g| written_as(&g.name, &args[0])) {
                    errors.push(Error::new_spanned(
                        &m.args[0],
                        format!("`{}` is not a func of pipeline `{}`", args[0], p.name),
                    ));
                    ok = false;
                }
            }
            for &i in &defines {
                vars[f][stage].push(args[i].clone());
            }
            if ok {
                match apply(&mut schedule.funcs[f], p, f, stage, &name, &args, m) {
                    Ok(()) => {
                        let prefix = match stage {
                            0 => String::new(),
                            k => format!("update({}).", k - 1),
                        };
                        schedule.funcs[f]
                            .written
                            .push(format!("{prefix}{name}({})", args.join(", ")));
                        // Loops the directive made (`x_v` of a vectorize) can be named next.
                        for d in &schedule.funcs[f].stage(stage).dims {
                            if !vars[f][stage].contains(&d.name) {
                                vars[f][stage].push(d.name.clone());
                            }
                        }
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }
    if let (Some(e), false) = (estimate_tokens, options.auto) {
        errors.push(Error::new_spanned(
            e,
            "`estimate(..)` gives the auto-scheduler sizes, and this block schedules every func by hand: add `auto;` to let it choose for the funcs the block does not name, or remove the estimate",
        ));
    }
    options.named = named;
    match super::check::combine(errors) {
        Some(e) => Err(e),
        None => Ok(options),
    }
}

/// `estimate(name, e0, e1, ..)`: the extents of an input or an output, one
/// positive integer literal per dimension.
fn estimate(
    call: &syn::ExprCall,
    p: &crate::ir::Pipeline,
    est: &mut Estimates,
) -> Result<(), Error> {
    let usage = "`estimate` takes an input or an output and its extent in each dimension, e.g. `estimate(out, 1920, 1080);`";
    let Some(first) = call.args.first() else {
        return Err(Error::new_spanned(call, usage));
    };
    let name = first.to_token_stream().to_string().replace(' ', "");
    let (dims, slot) = if let Some(i) = p.inputs.iter().position(|i| i.name == name) {
        (p.inputs[i].dims, &mut est.inputs[i])
    } else if let Some(f) = p.funcs.iter().position(|f| written_as(&f.name, &name)) {
        if !p.outputs.contains(&f) {
            return Err(Error::new_spanned(
                first,
                format!("`{name}` is not an output: estimate the sizes of inputs and outputs; the auto-scheduler infers the rest"),
            ));
        }
        (p.funcs[f].dims(), &mut est.funcs[f])
    } else {
        return Err(Error::new_spanned(
            first,
            format!(
                "`{name}` is not an input or output of pipeline `{}`",
                p.name
            ),
        ));
    };
    let sizes: Vec<&syn::Expr> = call.args.iter().skip(1).collect();
    if sizes.len() != dims {
        return Err(Error::new_spanned(
            call,
            format!("`{name}` has {dims} dimension(s), so its estimate takes {dims} extent(s), found {}", sizes.len()),
        ));
    }
    let mut extents = Vec::new();
    for e in sizes {
        match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => match n.base10_parse::<i64>() {
                Ok(v) if (1..=1 << 31).contains(&v) => extents.push(v),
                _ => {
                    return Err(Error::new_spanned(
                        n,
                        "an estimated extent is a positive integer, at most 2^31",
                    ))
                }
            },
            other => {
                return Err(Error::new_spanned(
                    other,
                    "an estimated extent is an integer literal, e.g. `1920`",
                ))
            }
        }
    }
    if slot.is_some() {
        return Err(Error::new_spanned(
            call,
            format!("`{name}` is already estimated in this block"),
        ));
    }
    *slot = Some(extents);
    Ok(())
}

/// Applies the statements of a `schedule` block given as text (the
/// auto-scheduler's choices) to `schedule`, exactly as if the user had
/// written them.
pub fn apply_text(
    text: &str,
    pipeline: &CheckedPipeline,
    schedule: &mut Schedule,
) -> Result<(), Error> {
    check_text(text, pipeline, schedule).map(|_| ())
}

/// Checks the body of a `schedule` block given as text (a cache entry, the
/// auto-scheduler's choices) exactly as a user's block, and applies it to
/// `schedule`. The text must be the body of one block and nothing else.
pub fn check_text(
    text: &str,
    pipeline: &CheckedPipeline,
    schedule: &mut Schedule,
) -> Result<BlockOptions, Error> {
    // Read as a user's block is: straight from the text where it is
    // directive chains (the auto-scheduler's plans, checked on every
    // expansion, always are), else by the parser of common bodies, else by
    // syn below.
    if let Some(body) = super::directives::body(text).or_else(|| quick_body(text)) {
        let item = ScheduleItem {
            name: pipeline.ident.clone(),
            target: None,
            body,
        };
        return check_schedule(&item, pipeline, schedule);
    }
    let block = format!("schedule {} {{\n{text}\n}}", pipeline.ident);
    let program: super::parse::Program = syn::parse_str(&block)?;
    match (
        &program.pipelines[..],
        &program.templates[..],
        &program.schedules[..],
    ) {
        ([], [], [item]) if item.target.is_none() => check_schedule(item, pipeline, schedule),
        _ => Err(Error::new(
            proc_macro2::Span::call_site(),
            "the text is not the body of one schedule block",
        )),
    }
}

/// An argument or receiver of a directive as text without spaces, as
/// names are compared: a plain name or literal directly (the common case,
/// checked for every directive of every plan), anything else printed.
fn written(e: &syn::Expr) -> String {
    match e {
        syn::Expr::Path(p) if p.attrs.is_empty() && p.qself.is_none() => {
            if let Some(id) = p.path.get_ident() {
                return id.to_string();
            }
        }
        syn::Expr::Lit(l) if l.attrs.is_empty() => {
            if let syn::Lit::Int(i) = &l.lit {
                return i.to_string();
            }
        }
        _ => {}
    }
    e.to_token_stream().to_string().replace(' ', "")
}

/// `text` as the body of a block, if it lexes as one group and
/// [`super::quick`] reads it.
fn quick_body(text: &str) -> Option<syn::Block> {
    let tokens: proc_macro2::TokenStream = format!("{{\n{text}\n}}").parse().ok()?;
    let mut trees = tokens.into_iter();
    match (trees.next(), trees.next()) {
        (Some(proc_macro2::TokenTree::Group(g)), None) => super::quick::block(&g),
        _ => None,
    }
}

/// Whether a func named `name` is written `text` in a schedule: its name
/// without the spaces that print inside a template instance's, `t(f)`.
/// (Without allocating: the auto-scheduler's plan looks up a func by name
/// for every `compute_at` and `store_at`.)
fn written_as(name: &str, text: &str) -> bool {
    if !name.contains(' ') {
        return name == text;
    }
    name.bytes().filter(|&b| b != b' ').eq(text.bytes())
}

/// A chain on input `name` of `dims` dimensions: `dim(d).set_stride(s)`
/// pairs, Halide's declaration of the buffer's layout, recorded in
/// `schedule.input_strides[i]` (checked only in `for cuda` blocks).
fn input_layout(
    expr: &syn::Expr,
    chain: &[&syn::ExprMethodCall],
    name: &str,
    dims: usize,
    cuda: bool,
    schedule: &mut Schedule,
    i: usize,
) -> Result<(), Error> {
    let example = format!("`{name}.dim(0).set_stride(3)`");
    if chain.is_empty() {
        return Err(Error::new_spanned(
            expr,
            format!("expected the layout of input `{name}` after its name, e.g. {example}"),
        ));
    }
    let mut dim: Option<(usize, &syn::ExprMethodCall)> = None;
    for m in chain {
        let literal = |what: &str, max: usize| -> Result<usize, Error> {
            match m.args.iter().collect::<Vec<_>>()[..] {
                [syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(n),
                    ..
                })] => match n.base10_parse::<usize>() {
                    Ok(v) if v < max => Ok(v),
                    _ => Err(Error::new_spanned(n, what)),
                },
                _ => Err(Error::new_spanned(directive(m), what)),
            }
        };
        match (m.method.to_string().as_str(), dim) {
            ("dim", None) => {
                let what = match dims {
                    1 => format!("`{name}` has 1 dimension: `dim(0)`"),
                    n => format!("`{name}` has {n} dimensions: `dim(0)` to `dim({})`", n - 1),
                };
                dim = Some((literal(&what, dims)?, m));
            }
            ("set_stride", Some((d, _))) => {
                let stride = literal("a stride is a positive integer literal, in elements", 1 << 31)?;
                if stride == 0 {
                    return Err(Error::new_spanned(
                        directive(m),
                        "a stride is a positive integer literal, in elements",
                    ));
                }
                if !cuda {
                    let declared = &mut schedule.input_strides[i][d];
                    if declared.is_some_and(|s| s != stride) {
                        return Err(Error::new_spanned(
                            directive(m),
                            format!("`{name}.dim({d})` already has stride {} in this schedule", declared.unwrap_or(0)),
                        ));
                    }
                    *declared = Some(stride);
                }
                dim = None;
            }
            ("dim", Some((_, prev))) => {
                return Err(Error::new_spanned(
                    directive(prev),
                    format!("`dim(..)` selects the dimension whose stride follows: {example}"),
                ))
            }
            ("set_stride", None) => {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`set_stride` follows the dimension it applies to: {example}"),
                ))
            }
            (other, _) => {
                return Err(Error::new_spanned(
                    &m.method,
                    format!("`{name}` is an input: a schedule declares only its layout, as {example}; `{other}` applies to funcs"),
                ))
            }
        }
    }
    match dim {
        Some((_, m)) => Err(Error::new_spanned(
            directive(m),
            format!("`dim(..)` selects the dimension whose stride follows: {example}"),
        )),
        None => Ok(()),
    }
}

/// The directives that apply to one stage's loops (the others place the
/// whole func).
const STAGE_DIRECTIVES: &[&str] = &[
    "split",
    "tile",
    "reorder",
    "vectorize",
    "unroll",
    "parallel",
    "gpu_tile",
    "gpu_blocks",
    "gpu_threads",
];

/// `update()` or `update(k)`: the index of the update a chain goes on with.
fn update_index(m: &syn::ExprMethodCall, count: usize, fname: &str) -> Result<usize, Error> {
    if count == 0 {
        return Err(Error::new_spanned(
            directive(m),
            format!("`{fname}` has no update definitions"),
        ));
    }
    let k = match m.args.len() {
        0 => 0,
        1 => match &m.args[0] {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => n.base10_parse::<usize>().unwrap_or(usize::MAX),
            other => return Err(Error::new_spanned(
                other,
                "an update is selected by its index, an integer literal: `update(0)` is the first",
            )),
        },
        _ => {
            return Err(Error::new_spanned(
                directive(m),
                "`update` takes at most one argument, the update's index",
            ))
        }
    };
    if k >= count {
        return Err(Error::new_spanned(
            directive(m),
            format!(
                "`{fname}` has {count} update(s): `update(0)`{}",
                if count > 1 {
                    format!(" to `update({})`", count - 1)
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(k)
}

/// How messages name stage `k` of func `fname`.
fn stage_name(fname: &str, k: usize) -> String {
    match k {
        0 => format!("`{fname}`"),
        k => format!("`{fname}.update({})`", k - 1),
    }
}

/// The tokens of one directive, `name(args)` without its receiver chain, so
/// that errors underline just that directive.
fn directive(m: &syn::ExprMethodCall) -> proc_macro2::TokenStream {
    let (method, args) = (&m.method, &m.args);
    quote::quote!(#method #args)
}

fn factor(m: &syn::ExprMethodCall, i: usize) -> Result<i64, Error> {
    match &m.args[i] {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => match n.base10_parse::<i64>() {
            Ok(v) if (1..=1 << 20).contains(&v) => Ok(v),
            _ => Err(Error::new_spanned(
                n,
                "a split factor is a positive integer",
            )),
        },
        other => Err(Error::new_spanned(
            other,
            "a split factor is an integer literal, e.g. `8`",
        )),
    }
}

fn split(
    stage: &mut StageSchedule,
    old: &str,
    outer: &str,
    inner: &str,
    n: i64,
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    stage
        .split(old, outer, inner, n)
        .map_err(|e| Error::new_spanned(directive(m), e))
}

/// Applies one checked directive to a func's schedule.
#[allow(clippy::too_many_arguments)]
fn apply(
    fs: &mut crate::schedule::FuncSchedule,
    p: &crate::ir::Pipeline,
    f: crate::ir::FuncId,
    k: usize,
    name: &str,
    args: &[String],
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    let legal = Legality { p, f, k };
    let stage = fs.stage_mut(k);
    match name {
        "split" => split(stage, &args[0], &args[1], &args[2], factor(m, 3)?, m),
        "tile" => {
            let (nx, ny) = (factor(m, 6)?, factor(m, 7)?);
            split(stage, &args[0], &args[2], &args[4], nx, m)?;
            split(stage, &args[1], &args[3], &args[5], ny, m)?;
            let before = stage.clone();
            reorder(stage, &[&args[4], &args[5], &args[2], &args[3]], m)?;
            legal.check_order(&before, stage, m)
        }
        "gpu_tile" => {
            legal.check_kind(stage, &args[0], LoopKind::Parallel, m)?;
            legal.check_kind(stage, &args[1], LoopKind::Parallel, m)?;
            apply(fs, p, f, k, "tile", args, m)?;
            fs.gpu_tokens = Some(directive(m));
            let stage = fs.stage_mut(k);
            gpu_kinds(stage, &[&args[4], &args[5]], LoopKind::GpuThread, m)?;
            gpu_kinds(stage, &[&args[2], &args[3]], LoopKind::GpuBlock, m)
        }
        "gpu_blocks" | "gpu_threads" => {
            for v in args {
                legal.check_kind(stage, v, LoopKind::Parallel, m)?;
            }
            let kind = if name == "gpu_blocks" {
                LoopKind::GpuBlock
            } else {
                LoopKind::GpuThread
            };
            let vars: Vec<&String> = args.iter().collect();
            gpu_kinds(stage, &vars, kind, m)?;
            fs.gpu_tokens = Some(directive(m));
            Ok(())
        }
        "reorder" => {
            let vars: Vec<&String> = args.iter().collect();
            let before = stage.clone();
            reorder(stage, &vars, m)?;
            legal.check_order(&before, stage, m)
        }
        "vectorize" | "unroll" => {
            if name == "vectorize" {
                legal.check_kind(stage, &args[0], LoopKind::Vectorized, m)?;
            }
            let n = factor(m, 1)?;
            let kind = if name == "vectorize" {
                LoopKind::Vectorized
            } else {
                LoopKind::Unrolled
            };
            // A fresh name for the inner loop: `x_v`, then `x_v2`, ...
            let suffix = if name == "vectorize" { "v" } else { "u" };
            let mut inner = format!("{}_{suffix}", args[0]);
            let mut k = 1;
            while stage.position(&inner).is_some() || stage.splits.iter().any(|s| s.old == inner) {
                k += 1;
                inner = format!("{}_{suffix}{k}", args[0]);
            }
            split(stage, &args[0], &args[0], &inner, n, m)?;
            let pos = stage.position(&inner).expect("just split");
            stage.dims[pos].kind = kind;
            Ok(())
        }
        "parallel" => {
            let Some(pos) = stage.position(&args[0]) else {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{}` is not a loop of this func", args[0]),
                ));
            };
            // Each iteration must write its own slab of one dimension: the
            // loop is a dimension of the func or the outer loop of a split of one.
            let var = &args[0];
            let slab = stage.roots.contains(var)
                || stage
                    .split_creating_outer(var)
                    .is_some_and(|s| stage.roots.contains(&s.old));
            if !slab {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{var}` cannot run in parallel: a parallel loop runs over a dimension of the func or the outer variable of a split of one, so that its iterations write disjoint slabs"),
                ));
            }
            legal.check_kind(stage, var, LoopKind::Parallel, m)?;
            stage.dims[pos].kind = LoopKind::Parallel;
            Ok(())
        }
        "compute_root" => {
            fs.compute = ComputeLevel::Root;
            Ok(())
        }
        "compute_at" | "store_at" => {
            let Some(g) = p.funcs.iter().position(|h| written_as(&h.name, &args[0])) else {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{}` is not a func", args[0]),
                ));
            };
            if g == f {
                return Err(Error::new_spanned(
                    directive(m),
                    "a func cannot be computed or stored inside its own loops",
                ));
            }
            if name == "compute_at" {
                fs.compute = ComputeLevel::At {
                    func: g,
                    var: args[1].clone(),
                };
                fs.compute_tokens = Some(directive(m));
            } else {
                fs.store = Some((g, args[1].clone()));
                fs.store_tokens = Some(directive(m));
            }
            Ok(())
        }
        "bound" => {
            let Some(d) = p.funcs[f].vars.iter().position(|v| *v == args[0]) else {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{}` is not a dimension of `{}`", args[0], p.funcs[f].name),
                ));
            };
            let literal = |i: usize| -> Result<i64, Error> {
                let text = args[i].replace(' ', "");
                text.parse::<i64>()
                    .map_err(|_| Error::new_spanned(&m.args[i], "a bound is an integer literal"))
            };
            let (min, extent) = (literal(1)?, literal(2)?);
            if extent < 0 {
                return Err(Error::new_spanned(
                    &m.args[2],
                    "a bound's extent cannot be negative",
                ));
            }
            fs.bounds.retain(|b| b.0 != d);
            fs.bounds.push((d, min, extent));
            Ok(())
        }
        "compute_inline" => {
            if p.outputs.contains(&f) {
                return Err(Error::new_spanned(
                    directive(m),
                    "an output cannot be inlined",
                ));
            }
            if !p.funcs[f].updates.is_empty() {
                return Err(Error::new_spanned(
                    directive(m),
                    "a func with update definitions cannot be inlined",
                ));
            }
            fs.compute = ComputeLevel::Inline;
            fs.compute_tokens = Some(directive(m));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The legality of loop transformations of an update stage (see
/// [`crate::schedule::update`]); every transformation of a pure stage is legal.
struct Legality<'a> {
    p: &'a crate::ir::Pipeline,
    f: crate::ir::FuncId,
    /// The stage: 0 for the pure definition, `k > 0` for update `k - 1`.
    k: usize,
}

impl Legality<'_> {
    /// The update variable loop `name` of `st` comes from, in an update stage.
    fn origin(&self, st: &StageSchedule, name: &str) -> Option<UpdateVar> {
        if self.k == 0 {
            return None;
        }
        let mut name = name;
        loop {
            if let Some(i) = st.roots.iter().position(|r| r == name) {
                return Some(update_vars(self.p, self.f, self.k - 1)[i].1);
            }
            name = &st
                .splits
                .iter()
                .find(|s| s.outer == name || s.inner == name)?
                .old;
        }
    }

    fn update(&self) -> &crate::ir::Update {
        &self.p.funcs[self.f].updates[self.k - 1]
    }

    /// The loops of reduction variables whose order matters, outermost last.
    fn ordered_loops(&self, st: &StageSchedule) -> Vec<String> {
        st.dims
            .iter()
            .filter(|d| {
                self.origin(st, &d.name)
                    .is_some_and(|v| !reorderable(self.f, self.update(), v))
            })
            .map(|d| d.name.clone())
            .collect()
    }

    /// A reorder may not change the order in which the iterations of a
    /// reduction variable whose order matters are applied.
    fn check_order(
        &self,
        before: &StageSchedule,
        after: &StageSchedule,
        m: &syn::ExprMethodCall,
    ) -> Result<(), Error> {
        if self.k == 0 || self.ordered_loops(before) == self.ordered_loops(after) {
            return Ok(());
        }
        Err(Error::new_spanned(
            directive(m),
            format!(
                "this reorder changes the order in which update {} of `{}` visits its reduction domain, which would change its result: the update is not an associative integer reduction like `f(i) += e`, and its reduction variables do not each write their own points; keep the reduction loops ({}) in their order, innermost first",
                self.k - 1,
                self.p.funcs[self.f].name,
                self.ordered_loops(before).join(", ")
            ),
        ))
    }

    /// `vectorize` or `parallel` of loop `var`: an error when it comes from
    /// a reduction variable whose iterations cannot run that way.
    fn check_kind(
        &self,
        st: &StageSchedule,
        var: &str,
        kind: LoopKind,
        m: &syn::ExprMethodCall,
    ) -> Result<(), Error> {
        let Some(v @ UpdateVar::Reduction(_)) = self.origin(st, var) else {
            return Ok(());
        };
        let (u, fname) = (self.update(), &self.p.funcs[self.f].name);
        let message = match kind {
            LoopKind::Vectorized if !reorderable(self.f, u, v) => format!(
                "cannot vectorize reduction variable `{var}` of `{fname}`: its iterations must run in order, because the update is not provably associative (an integer `f(a) = f(a) op e` with op one of + - * min max & | ^), and `{var}` does not write points of its own; vectorize a pure variable instead"
            ),
            LoopKind::Parallel if !parallelizable(self.f, u, v) => format!(
                "reduction variable `{var}` of `{fname}` cannot run in parallel: its iterations may update the same points; a reduction variable runs in parallel only when it is itself a coordinate of the left-hand side and the update reads the func only at the point it writes"
            ),
            _ => return Ok(()),
        };
        Err(Error::new_spanned(directive(m), message))
    }
}

/// Marks loops `vars` (innermost first) as running on GPU blocks or
/// threads: at most three of each kind in a stage (`x`, `y`, `z`).
fn gpu_kinds(
    stage: &mut StageSchedule,
    vars: &[&String],
    kind: LoopKind,
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    for v in vars {
        let Some(pos) = stage.position(v) else {
            return Err(Error::new_spanned(
                directive(m),
                format!("`{v}` is not a loop of this func"),
            ));
        };
        stage.dims[pos].kind = kind;
    }
    if stage.dims.iter().filter(|d| d.kind == kind).count() > 3 {
        return Err(Error::new_spanned(
            directive(m),
            format!(
                "a CUDA kernel has at most three {} dimensions (x, y, z)",
                if kind == LoopKind::GpuBlock {
                    "block"
                } else {
                    "thread"
                }
            ),
        ));
    }
    Ok(())
}

fn reorder(
    stage: &mut StageSchedule,
    vars: &[&String],
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    let mut positions = Vec::new();
    for v in vars {
        match stage.position(v) {
            Some(p) if !positions.contains(&p) => positions.push(p),
            Some(_) => {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{v}` appears twice in `reorder`"),
                ))
            }
            None => {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{v}` is not a loop of this func"),
                ))
            }
        }
    }
    let dims: Vec<Dim> = positions.iter().map(|&p| stage.dims[p].clone()).collect();
    positions.sort();
    for (p, d) in positions.into_iter().zip(dims) {
        stage.dims[p] = d;
    }
    Ok(())
}
