//! `pipeline-core`: the compiler behind the `pipeline!` macro.
//!
//! A normal library (no `proc_macro` dependency), so every pass is unit
//! testable and usable from build scripts and tools. The whole compiler on
//! one screen:
//!
//! ```text
//! tokens --front::parse--> syn trees --front::check--> Pipeline (typed IR)
//!        --lower::inline--> Pipeline --analysis::bounds--> BoundsProgram
//!        --lower::loops--> Stmt --codegen::rust--> tokens
//! ```
//!
//! `PIPELINE_DEBUG=lower` prints the IR after each pass and its time to
//! stderr during expansion.

#![deny(missing_docs)]

pub mod analysis;
pub mod codegen;
pub mod exec;
pub mod front;
pub mod interp;
pub mod ir;
pub mod lower;
pub mod schedule;
pub mod tune;

mod hash;
pub mod memo;
mod par;
mod source;
mod stack;

pub(crate) use source::with_cpu_block;
pub use source::{
    cache_key_from_source, cuda_lowered_from_source, cuda_programs_from_source,
    pipeline_from_source, scheduled_from_source, variants_from_source, GpuProgram,
};
pub(crate) use stack::{deep, on_big_stack};

use analysis::bounds::BoundsProgram;
use front::check::{check_pipeline, combine, CheckedPipeline};
use front::parse::Program;
use ir::{FuncId, Pipeline, Stmt};
use proc_macro2::TokenStream;
use std::time::Instant;

/// A pipeline after all lowering passes.
pub struct Lowered {
    /// The pipeline after inlining.
    pub pipeline: Pipeline,
    /// Funcs inlined into their consumer.
    pub inlined: Vec<FuncId>,
    /// Regions of every live func and input.
    pub bounds: BoundsProgram,
    /// The loop nest.
    pub body: Stmt,
    /// The schedule in `schedule` block syntax.
    pub schedule: String,
    /// The loop nest as text ([`Lowered::text`]), once printed.
    text: std::sync::OnceLock<String>,
    /// The names of the symbols the loop nest binds beyond the bounds
    /// program's.
    local_names: Vec<String>,
    /// The strides the schedule declares of each input's dimensions.
    pub input_strides: Vec<Vec<Option<usize>>>,
}

fn debug_enabled() -> bool {
    std::env::var("PIPELINE_DEBUG").is_ok_and(|v| v.split(',').any(|p| p == "lower" || p == "all"))
}

/// How many threads an expansion may use where its work splits (each
/// top-level stage's passes and code) unless [`ExpandOptions::threads`]
/// says:
/// `PIPELINE_THREADS` where it is set, else the processor's parallelism,
/// at most 8. rustc leaves the other cores idle while a macro runs.
fn default_threads() -> usize {
    const MOST: usize = 8;
    match std::env::var("PIPELINE_THREADS").map(|v| v.parse::<usize>()) {
        Ok(Ok(n)) => n.max(1),
        _ => std::thread::available_parallelism().map_or(1, |n| n.get().min(MOST)),
    }
}

/// Runs one named pass, timing it and printing its result when asked.
fn pass<T>(name: &str, show: impl Fn(&T) -> String, run: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = run();
    if debug_enabled() {
        eprintln!("== {name} ({:.2?})\n{}", start.elapsed(), show(&out));
    }
    out
}

/// The lowering passes, in order.
pub fn lower_pipeline(
    checked: &Pipeline,
    sched: &schedule::Schedule,
) -> Result<Lowered, lower::loops::ScheduleError> {
    lower_for(checked, sched, Target::Cpu, None, default_threads())
}

/// What a lowering is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Cpu,
    Cuda,
}

/// `earlier`: bounds the auto-scheduler inferred, used when they are of
/// the pipeline the schedule's inlining leaves; `threads`: how many the
/// passes that work stage by stage may use ([`default_threads`]).
fn lower_for(
    checked: &Pipeline,
    sched: &schedule::Schedule,
    target: Target,
    earlier: Option<analysis::bounds::Inferred>,
    threads: usize,
) -> Result<Lowered, lower::loops::ScheduleError> {
    let (pipeline, inlined) = pass(
        "inline",
        |r: &Result<(Pipeline, Vec<FuncId>), _>| match r {
            Ok((_, inl)) => format!(
                "inlined: {:?}",
                inl.iter()
                    .map(|&f| &checked.funcs[f].name)
                    .collect::<Vec<_>>()
            ),
            Err(_) => "cannot be honoured".into(),
        },
        || lower::inline::inline(checked, sched),
    )?;
    let bounds = pass(
        "bounds",
        |b: &BoundsProgram| format!("{} symbols", b.syms.len()),
        || {
            let fixed: Vec<Vec<(usize, i64, i64)>> =
                sched.funcs.iter().map(|f| f.bounds.clone()).collect();
            analysis::bounds::Inferred::reuse_or_infer(earlier, &pipeline, &fixed)
        },
    );
    let synthesized = pass(
        "loops",
        |_| String::new(),
        || lower::loops::synthesize(&pipeline, &bounds, sched),
    )?;
    let body = pass(
        "hoist",
        |_| String::new(),
        || lower::hoist::hoist(synthesized.body),
    );
    // Partitioning serves the CPU's vector loops (steady vectors, scalar
    // edges); on the GPU each copy would be a kernel of its own.
    let body = match target {
        Target::Cpu => pass(
            "partition",
            |_| String::new(),
            || lower::map_stages(body, threads, lower::partition::partition),
        ),
        Target::Cuda => body,
    };
    let mut local_names = synthesized.local_syms;
    let body = match target {
        Target::Cpu => pass(
            "tails, cse",
            |_| String::new(),
            || {
                let global = bounds.syms.len();
                lower::tails_and_cse(body, &pipeline, global, &mut local_names, threads)
            },
        ),
        Target::Cuda => body,
    };
    let schedule = schedule_text(&pipeline, &inlined, checked, sched);
    let lowered = Lowered {
        pipeline,
        inlined,
        bounds,
        body,
        schedule,
        text: Default::default(),
        local_names,
        input_strides: sched.input_strides.clone(),
    };
    if debug_enabled() {
        eprintln!("== lowered {}\n{}", lowered.pipeline.name, lowered.text());
    }
    Ok(lowered)
}

impl Lowered {
    /// Whether `other`, a lowering of the same pipeline, generates the same
    /// code: the same funcs inlined, loop nest, bounds program and input
    /// layout (its schedule's text, which says where it came from, may
    /// differ).
    pub fn same_code(&self, other: &Lowered) -> bool {
        self.inlined == other.inlined
            && self.body == other.body
            && self.bounds == other.bounds
            && self.local_names == other.local_names
            && self.input_strides == other.input_strides
    }

    /// How many symbols the loop nest binds beyond the bounds program.
    pub fn local_syms(&self) -> usize {
        self.local_names.len()
    }

    /// The loop nest as text (`NAME::LOWERED`), printed when first asked
    /// for (the macro prints it on a thread of its own while it writes
    /// the code).
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let mut syms: Vec<String> = self.bounds.syms.iter().map(|s| s.name.clone()).collect();
            syms.extend(self.local_names.iter().cloned());
            let names = ir::print::Names {
                pipeline: &self.pipeline,
                syms: &syms,
            };
            let mut text = String::new();
            names.stmt(&self.body, 0, &mut text);
            text
        })
    }
}

fn schedule_text(
    p: &Pipeline,
    inlined: &[FuncId],
    checked: &Pipeline,
    sched: &schedule::Schedule,
) -> String {
    let mut s = format!("schedule {} {{\n", p.name);
    for line in sched.note.iter().flat_map(|n| n.lines()) {
        s += &format!("    // {line}\n");
    }
    for (input, strides) in p.inputs.iter().zip(&sched.input_strides) {
        let chain: Vec<String> = strides
            .iter()
            .enumerate()
            .filter_map(|(d, s)| s.map(|s| format!("dim({d}).set_stride({s})")))
            .collect();
        if !chain.is_empty() {
            s += &format!("    {}.{};\n", input.name, chain.join("."));
        }
    }
    for f in p.live_funcs() {
        let func = &p.funcs[f];
        let fs = &sched.funcs[f];
        let mut chain: Vec<String> = Vec::new();
        let placed = fs.written.iter().any(|d| d.starts_with("compute_"));
        if !p.outputs.contains(&f) && !placed {
            chain.push("compute_root()".into());
        }
        if fs.written.is_empty() {
            if let Some(v) = func.vars.last() {
                chain.push(format!("parallel({v})"));
            }
        } else {
            chain.extend(
                fs.written
                    .iter()
                    .filter(|d| !d.starts_with("update("))
                    .cloned(),
            );
        }
        if !chain.is_empty() {
            s += &format!("    {}.{};\n", func.name, chain.join("."));
        }
        // Directives of update stages: one chain per update.
        for k in 0..func.updates.len() {
            let prefix = format!("update({k}).");
            let stage: Vec<&str> = fs
                .written
                .iter()
                .filter_map(|d| d.strip_prefix(&prefix))
                .collect();
            if !stage.is_empty() {
                s += &format!("    {}.update({k}).{};\n", func.name, stage.join("."));
            }
        }
    }
    for &f in inlined {
        s += &format!("    {}.compute_inline();\n", checked.funcs[f].name);
    }
    s += "}\n";
    s
}

/// Expands a `pipeline!` invocation. Errors become `compile_error!`s at the
/// user's tokens; this function never panics on any input.
///
/// It runs on a stack segment of its own: syn parses nested groups (`((..))`)
/// by recursion, and drops the trees it built by recursion too, neither on
/// our `deep` segments; 10,000 nested parentheses overflowed rustc's 8 MiB.
/// The segment is reserved, not touched: pages are taken as the recursion
/// reaches them.
pub fn expand(input: TokenStream) -> TokenStream {
    expand_with_cache(input, None)
}

/// [`expand`] with the crate's schedule cache, as the macro read it
/// (`schedule::cache::location`); `None` where there is none.
pub fn expand_with_cache(
    input: TokenStream,
    cache: Option<schedule::cache::CacheSource>,
) -> TokenStream {
    expand_with_options(input, cache, ExpandOptions::default())
}

/// What the macro generates besides each pipeline's CPU entry, and how it
/// hands its code over.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpandOptions {
    /// `NAME::cuda`, the GPU entry (`pipeline`'s `cuda` feature).
    pub cuda: bool,
    /// The compiler's lexer, where the macro runs inside the compiler: the
    /// bulk of the generated code is then handed to it as text where that
    /// is faster (`codegen::rust::text`). pipeline-core itself never
    /// touches `proc_macro`.
    pub lex: Option<codegen::rust::Lexer>,
    /// Where the macro remembers expansions across builds ([`memo`]).
    pub memo: Option<memo::Memo>,
    /// How many threads may lower and write the top-level stages (the
    /// code is the same for any number); `None`: `PIPELINE_THREADS` where
    /// it is set, else the processor's parallelism, at most 8.
    pub threads: Option<usize>,
}

/// [`expand_with_cache`] with options.
pub fn expand_with_options(
    input: TokenStream,
    cache: Option<schedule::cache::CacheSource>,
    options: ExpandOptions,
) -> TokenStream {
    on_big_stack(|| expand_here(input, cache, options))
}

fn expand_here(
    input: TokenStream,
    cache: Option<schedule::cache::CacheSource>,
    options: ExpandOptions,
) -> TokenStream {
    let source = input.to_string();
    let memo_key = options
        .memo
        .and_then(|_| memo::key(&source, cache.as_ref(), options.cuda));
    if let (Some(m), Some(key)) = (options.memo, &memo_key) {
        if let Some(out) = (m.get)(key).and_then(|r| memo::replay(&r, &input, options.lex)) {
            return out;
        }
    }
    let mut out = memo::Output::new(&input, memo_key.is_some());
    let threads = options.threads.unwrap_or_else(default_threads);
    // The user's tokens, for the algorithm's hash (syn's trees print
    // tokens of their own, and by recursion).
    let tokens = match cache {
        Some(_) => input.clone(),
        None => TokenStream::new(),
    };
    let program: Program = match pass("parse", |_| String::new(), || syn::parse2(input)) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Vec::new();
    let mut checked: Vec<CheckedPipeline> = Vec::new();
    for item in &program.pipelines {
        if checked.iter().any(|c| c.ident == item.sig.ident) {
            errors.push(syn::Error::new_spanned(
                &item.sig.ident,
                "a pipeline with this name is already defined",
            ));
            continue;
        }
        match pass(
            "check",
            |_| String::new(),
            || check_pipeline(&program, item),
        ) {
            Ok(c) => checked.push(c),
            Err(e) => errors.push(e),
        }
    }
    let mut schedules: Vec<schedule::Schedule> = checked
        .iter()
        .map(|c| schedule::Schedule::default_for(&c.pipeline))
        .collect();
    let mut blocks: Vec<Option<front::schedule::BlockOptions>> = vec![None; checked.len()];
    let mut gpu_blocks: Vec<Option<&front::parse::ScheduleItem>> = vec![None; checked.len()];
    let mut seen = Vec::new();
    for s in &program.schedules {
        match checked.iter().position(|c| c.ident == s.name) {
            Some(k) => {
                let key = (s.name.to_string(), s.target.is_some());
                if seen.contains(&key) {
                    errors.push(syn::Error::new_spanned(
                        &s.name,
                        format!("`{}` already has a schedule block for this target", s.name),
                    ));
                    continue;
                }
                seen.push(key);
                if s.target.is_some() {
                    // Checked against the GPU schedule it would start from;
                    // the GPU path lowers it again (`cuda_lowered_from_source`).
                    let mut gpu = schedule::Schedule::gpu_default(&checked[k].pipeline);
                    if let Err(e) = front::schedule::check_schedule(s, &checked[k], &mut gpu) {
                        errors.push(e);
                    }
                    gpu_blocks[k] = Some(s);
                    continue;
                }
                match front::schedule::check_schedule(s, &checked[k], &mut schedules[k]) {
                    Ok(options) => blocks[k] = Some(options),
                    Err(e) => errors.push(e),
                }
            }
            None => {
                if !program.pipelines.iter().any(|p| p.sig.ident == s.name) {
                    errors.push(syn::Error::new_spanned(
                        &s.name,
                        format!("no pipeline named `{}` in this pipeline! block", s.name),
                    ));
                }
            }
        }
    }
    if let Some(e) = combine(errors) {
        return e.to_compile_error();
    }
    // `PIPELINE_SCHEDULE=auto`: every pipeline as if its block said only
    // `auto;` (with its input layouts and estimates), to compare the
    // auto-scheduler with the hand schedules of a whole crate.
    let override_auto = schedule_env() == Some("auto");
    for ((c, sched), block) in checked.iter().zip(&mut schedules).zip(&mut blocks) {
        schedule_override(c, sched, block.as_mut());
    }
    let kernel_levels = match codegen::kernels::KernelLevels::from_env() {
        Ok(k) => k,
        Err(e) => {
            let at = checked.first().map(|c| &c.ident);
            return match at {
                Some(ident) => syn::Error::new_spanned(ident, e).to_compile_error(),
                None => syn::Error::new(proc_macro2::Span::call_site(), e).to_compile_error(),
            };
        }
    };
    // The cache, parsed once; read only for the pipelines that consult it.
    let parsed = cache.as_ref().map(|src| (parse_cache(src), src.shown()));
    let mut cache_error_reported = false;
    let mut tracks_cache = false;
    let mut uses_auto = false;
    for (((c, user), block), gpu_block) in
        checked.iter().zip(&schedules).zip(&blocks).zip(&gpu_blocks)
    {
        // With the `cuda` feature, the GPU lowering and launcher (its
        // entries are made per CPU variant below), or the entries that say
        // why there is none. A `for cuda` block that cannot be honoured is
        // the user's error, with the `cuda` feature or without.
        let mut gpu_program_of = None;
        let mut extra = codegen::code::Code::new();
        if options.cuda || gpu_block.is_some() {
            let gpu = gpu_program(c, *gpu_block);
            match (gpu, gpu_block) {
                // At the directive at fault where there is one.
                (Err((e, Some(tokens))), Some(_)) => {
                    out.error(syn::Error::new_spanned(tokens, e).to_compile_error());
                    continue;
                }
                (Err((e, None)), Some(block)) => {
                    out.error(syn::Error::new_spanned(&block.name, e).to_compile_error());
                    continue;
                }
                _ if !options.cuda => {}
                (Ok(program), _) => gpu_program_of = Some(program),
                (Err((e, _)), None) => extra = codegen::rust::cuda_entry(c, Err(e.as_str()), false),
            }
        }
        let consults = !override_auto && consults_cache(block.as_ref());
        let mut file = None;
        if let (true, Some((parsed, shown))) = (consults, &parsed) {
            match parsed {
                Ok(f) => {
                    tracks_cache = true;
                    file = Some((f, shown.as_str()));
                }
                // A malformed file is one error, at the first pipeline that
                // reads it; the pipelines are still generated (by the
                // auto-scheduler), so that no error follows from it.
                Err(message) if !cache_error_reported => {
                    cache_error_reported = true;
                    out.error(syn::Error::new_spanned(&c.ident, message).to_compile_error());
                }
                Err(_) => {}
            }
        }
        uses_auto |= block.as_ref().is_none_or(|b| b.auto);
        let variants = match choose_and_lower(&tokens, c, user, block.as_ref(), file, threads) {
            Ok(v) => v,
            Err(e) => {
                out.error(e.to_compile_error());
                continue;
            }
        };
        // Each architecture with an entry gets its own copy of the
        // pipeline, every other one the auto-scheduler's: the macro runs on
        // the host and cannot know the target. On x86_64 the copy holds
        // the pipeline once per level with an entry and once (the
        // auto-scheduler's) for the others, and dispatches on the level
        // (ARCHITECTURE.md, *The schedule cache*).
        let mut arches: Vec<&str> = Vec::new();
        for served in &variants.cached {
            if !arches.contains(&served.arch.as_str()) {
                arches.push(&served.arch);
            }
        }
        let others =
            (!arches.is_empty()).then(|| quote::quote!(not(any(#(target_arch = #arches),*))));
        // (cfg, the lowering, and the levels and processors with one of
        // their own.)
        let mut all: Vec<(_, &Lowered, Vec<codegen::rust::Level>)> = arches
            .iter()
            .map(|&arch| {
                let cfg = Some(quote::quote!(target_arch = #arch));
                let mut levels = variants.cached.iter().filter(|s| s.arch == arch).map(|s| {
                    codegen::rust::Level {
                        isa: &s.isa,
                        processor: &s.processor,
                        lowered: &s.lowered,
                    }
                });
                match arch {
                    "x86_64" => (cfg, &variants.fallback, levels.collect()),
                    // Elsewhere an entry is at the only level, scalar.
                    _ => {
                        let l = levels.next().map_or(&variants.fallback, |l| l.lowered);
                        (cfg, l, Vec::new())
                    }
                }
            })
            .collect();
        all.push((others, &variants.fallback, Vec::new()));
        for (cfg, lowered, levels) in all {
            // The GPU entries call the variant's own bounds program where
            // the GPU lowering's is the same (most pipelines) and there is
            // one variant.
            let extra = match &gpu_program_of {
                Some((l, symbol)) => codegen::rust::cuda_entry(
                    c,
                    Ok((l, symbol.as_str())),
                    levels.is_empty() && l.bounds == lowered.bounds,
                ),
                None => extra.clone(),
            };
            let generated = pass(
                "codegen",
                |_| String::new(),
                || {
                    let input = codegen::rust::Input {
                        checked: c,
                        lowered,
                        source: &source,
                        kernels: kernel_levels,
                        extra,
                        threads,
                    };
                    match levels.is_empty() {
                        true => codegen::rust::generate_text(&input),
                        false => codegen::rust::generate_levels(&input, &levels),
                    }
                },
            );
            // Under `cfg`: a schedule from the cache is for one
            // `target_arch`.
            out.pipeline(c, cfg, generated, options.lex);
        }
    }
    // Cargo rebuilds when these change.
    let tracked = [
        uses_auto.then_some(schedule::auto::MACHINE_ENV),
        Some(SCHEDULE_ENV),
        Some(codegen::kernels::KERNELS_ENV),
        Some(schedule::cache::CACHE_ENV),
    ];
    for var in tracked.into_iter().flatten() {
        let t = quote::quote! {
            const _: ::core::option::Option<&str> = ::core::option_env!(#var);
        };
        out.tokens(t);
    }
    // Stable Rust has no tracked paths: the file's bytes in a constant that
    // nothing uses make it an input of the crate, and cargo rebuilds when
    // it changes (ARCHITECTURE.md, *The schedule cache*).
    if let (true, Some(src)) = (tracks_cache, &cache) {
        if let Some(path) = src.path.to_str() {
            let t = quote::quote! {
                const _: &[u8] = ::core::include_bytes!(#path);
            };
            out.tokens(t);
        }
    }
    let (out, record) = out.finish();
    if let (Some(m), Some(key), Some(record)) = (options.memo, &memo_key, record) {
        (m.put)(key, &record);
    }
    out
}

/// A pipeline's schedules, lowered: one for each `target_arch` and level
/// with a usable cache entry, and one for every other target and level.
pub struct Variants {
    /// Each usable cache entry, lowered.
    pub cached: Vec<schedule::cache::choose::Served>,
    /// The block's schedule or the auto-scheduler's, for every target and
    /// level without an entry (`SCHEDULE` says why no entry serves it).
    pub fallback: Lowered,
}

/// The text of `src` parsed, or the compile error that names the file and
/// the line.
fn parse_cache(src: &schedule::cache::CacheSource) -> Result<schedule::cache::CacheFile, String> {
    let path = src.path.display();
    match &src.text {
        Ok(text) => schedule::cache::CacheFile::parse(text)
            .map_err(|(line, message)| format!("schedule cache {path}:{line}: {message}")),
        Err(e) => Err(format!("schedule cache {path}: {e}")),
    }
}

/// Chooses and lowers pipeline `c`'s schedules: `user` and `block` are
/// what its CPU block says, `cache` the parsed cache file and the name to
/// show, when the pipeline consults it ([`consults_cache`]). The choice:
/// a block that names funcs; else the usable cache entries; else (and for
/// the targets without one) the auto-scheduler, completing a block with
/// `auto;`.
fn choose_and_lower(
    invocation: &TokenStream,
    c: &CheckedPipeline,
    user: &schedule::Schedule,
    block: Option<&front::schedule::BlockOptions>,
    cache: Option<(&schedule::cache::CacheFile, &str)>,
    threads: usize,
) -> Result<Variants, syn::Error> {
    let cached = cache.map(|(file, shown)| {
        let estimates = block.map(|b| &b.estimates);
        let key = schedule::cache::key_for(
            invocation,
            &c.pipeline,
            estimates,
            &user.input_strides,
            ("", ""),
        );
        pass(
            "cache",
            |_| String::new(),
            || schedule::cache::choose::cached(c, user, file, &key, shown),
        )
    });
    let (used, notes) = cached.map_or((Vec::new(), Vec::new()), |k| (k.used, k.notes));
    let auto = block.is_none_or(|b| b.auto);
    // The auto-scheduler's choice, and, should it ever fail to lower,
    // the same without fusion (every computed func at root).
    let attempt = |fuse: bool| -> Result<(schedule::Schedule, Option<_>), syn::Error> {
        if !auto {
            return Ok((user.clone(), None));
        }
        let m = schedule::auto::Machine::from_env()
            .map_err(|e| syn::Error::new_spanned(&c.ident, e))?;
        let (mut sched, plan) = auto_complete(c, user, block, &m, fuse)?;
        if !notes.is_empty() {
            let mut lines = notes.clone();
            lines.extend(sched.note.take());
            sched.note = Some(lines.join("\n"));
        }
        Ok((sched, Some(plan.bounds)))
    };
    let lower = |(sched, bounds): (schedule::Schedule, _)| {
        lower_for(&c.pipeline, &sched, Target::Cpu, bounds, threads).map_err(|e| match &e.tokens {
            Some(t) => syn::Error::new_spanned(t, e.message),
            None => syn::Error::new_spanned(&c.ident, e.message),
        })
    };
    let fallback = match attempt(true).and_then(lower) {
        Ok(l) => l,
        Err(e) if auto => attempt(false).and_then(lower).map_err(|_| e)?,
        Err(e) => return Err(e),
    };
    Ok(Variants {
        cached: used,
        fallback,
    })
}

/// Whether a pipeline with this block (if any) takes its schedule from the
/// cache when an entry matches: without a block, or with a block that
/// names no func and says `auto;` (it states only facts: estimates, input
/// layouts). A block that schedules any func wins over the cache.
pub(crate) fn consults_cache(block: Option<&front::schedule::BlockOptions>) -> bool {
    block.is_none_or(|b| b.auto && !b.named.iter().any(|&n| n))
}

/// The environment variable that, set at build time, replaces every
/// schedule block's directives: with the auto-scheduler's choice (`auto`),
/// or with the cache's entry where there is one (`tuned`), to compare hand
/// schedules with either across a whole crate.
pub const SCHEDULE_ENV: &str = "PIPELINE_SCHEDULE";

/// `auto` or `tuned` when [`SCHEDULE_ENV`] says so.
pub(crate) fn schedule_env() -> Option<&'static str> {
    match std::env::var(SCHEDULE_ENV).as_deref() {
        Ok("auto") => Some("auto"),
        Ok("tuned") => Some("tuned"),
        _ => None,
    }
}

/// `PIPELINE_SCHEDULE=auto` or `tuned`: the pipeline as if its block said
/// only `auto;` (with its input layouts and estimates). Under `auto` the
/// cache is not read either (`expand_here`).
pub(crate) fn schedule_override(
    c: &CheckedPipeline,
    sched: &mut schedule::Schedule,
    block: Option<&mut front::schedule::BlockOptions>,
) {
    if schedule_env().is_none() {
        return;
    }
    let strides = std::mem::take(&mut sched.input_strides);
    *sched = schedule::Schedule::default_for(&c.pipeline);
    sched.input_strides = strides;
    if let Some(b) = block {
        b.auto = true;
        b.named.iter_mut().for_each(|n| *n = false);
    }
}

/// Completes a pipeline's schedule with the auto-scheduler: `user` holds
/// what its block (if any) says; the funcs the block does not name get the
/// auto-scheduler's choice.
pub fn auto_complete(
    c: &CheckedPipeline,
    user: &schedule::Schedule,
    block: Option<&front::schedule::BlockOptions>,
    machine: &schedule::auto::Machine,
    fuse: bool,
) -> Result<(schedule::Schedule, schedule::auto::Plan), syn::Error> {
    let p = &c.pipeline;
    // The plan is applied as schedule text, so a func that no schedule can
    // name (one of a template called in place, `t(f)(x, y)`, is
    // `t#1.name`) keeps the plain default, as a func the block names keeps
    // what the block says.
    let pinned: Vec<bool> = (0..p.funcs.len())
        .map(|f| block.is_some_and(|b| b.named[f]) || p.funcs[f].name.contains('#'))
        .collect();
    let default_estimates = schedule::auto::Estimates::default();
    let opts = schedule::auto::Options {
        machine,
        estimates: block.map_or(&default_estimates, |b| &b.estimates),
        pinned: &pinned,
        fuse,
    };
    let plan = pass(
        "auto-schedule",
        |_| String::new(),
        || schedule::auto::choose(p, user, &opts),
    );
    if std::env::var("PIPELINE_DEBUG")
        .is_ok_and(|v| v.split(',').any(|p| p == "schedule" || p == "all"))
    {
        eprintln!("{}", plan.report);
    }
    let mut sched = user.clone();
    pass(
        "auto-schedule checked",
        |_| String::new(),
        || front::schedule::apply_text(&plan.text(p), c, &mut sched),
    )
    .map_err(|e| {
        syn::Error::new_spanned(
            &c.ident,
            format!("internal error: the auto-scheduler chose a schedule that does not check ({e}); please report it with this pipeline"),
        )
    })?;
    sched.note = Some(format!(
        "chosen by the auto-scheduler v{} for PIPELINE_MACHINE={}{}",
        schedule::auto::VERSION,
        machine.describe(),
        if block.is_some() {
            ", with the funcs the block names as written"
        } else {
            ""
        }
    ));
    Ok((sched, plan))
}

fn gpu_schedule(
    checked: &CheckedPipeline,
    block: Option<&front::parse::ScheduleItem>,
) -> Result<schedule::Schedule, String> {
    let mut sched = schedule::Schedule::gpu_default(&checked.pipeline);
    if let Some(s) = block {
        front::schedule::check_schedule(s, checked, &mut sched).map_err(|e| e.to_string())?;
    }
    Ok(sched)
}

/// A checked pipeline's GPU lowering, with its launcher's name, as the CUDA
/// emitter takes it; or why not, with the tokens of the directive at
/// fault where one is.
fn gpu_program(
    checked: &CheckedPipeline,
    block: Option<&front::parse::ScheduleItem>,
) -> Result<(Lowered, String), (String, Option<TokenStream>)> {
    let sched = gpu_schedule(checked, block).map_err(|e| (e, None))?;
    let l = lower_for(&checked.pipeline, &sched, Target::Cuda, None, 1)
        .map_err(|e| (e.message, e.tokens))?;
    let name = checked.ident.to_string();
    if let Err(u) = codegen::cuda::generate(&l, &name) {
        let tokens = u.func.and_then(|f| {
            let fs = &sched.funcs[f];
            match u.placement {
                true => fs.compute_tokens.clone(),
                false => fs.gpu_tokens.clone(),
            }
        });
        return Err((u.message, tokens));
    }
    let symbol = codegen::cuda::launcher_name(&l, &name);
    Ok((l, symbol))
}
