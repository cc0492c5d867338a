//! The compiler's entry points from the text of a `pipeline!` invocation,
//! for tests and tools (the interpreter's tests, the tuner,
//! `pipeline-build`): parse, check, schedule and lower as the macro does,
//! with errors as text.

use crate::front::check::{check_pipeline, CheckedPipeline};
use crate::front::parse::Program;
use crate::ir::Pipeline;
use crate::{
    auto_complete, choose_and_lower, consults_cache, default_threads, front, gpu_program,
    gpu_schedule, lower_for, on_big_stack, parse_cache, schedule, Lowered, Target, Variants,
};
use proc_macro2::TokenStream;

/// Parses, checks and schedules the pipeline `name` from the text of a
/// `pipeline!` invocation, schedule blocks included (for tests and tools).
pub fn scheduled_from_source(
    source: &str,
    name: &str,
) -> Result<(Pipeline, schedule::Schedule), String> {
    on_big_stack(|| scheduled_here(source, name))
}

fn scheduled_here(source: &str, name: &str) -> Result<(Pipeline, schedule::Schedule), String> {
    let (_, checked, mut sched, block) = with_cpu_block(source, name)?;
    if block.as_ref().is_none_or(|b| b.auto) {
        let machine = schedule::auto::Machine::from_env()?;
        sched = auto_complete(&checked, &sched, block.as_ref(), &machine, true)
            .map_err(|e| e.to_string())?
            .0;
    }
    Ok((checked.pipeline, sched))
}

/// What the macro compiles for pipeline `name` of the text of a `pipeline!`
/// invocation, given the crate's schedule cache (for tests and tools).
pub fn variants_from_source(
    source: &str,
    name: &str,
    cache: &schedule::cache::CacheSource,
) -> Result<(Pipeline, Variants), String> {
    on_big_stack(|| {
        let (tokens, checked, sched, block) = with_cpu_block(source, name)?;
        let file = match consults_cache(block.as_ref()) {
            true => Some(parse_cache(cache)?),
            false => None,
        };
        let shown = cache.shown();
        let variants = choose_and_lower(
            &tokens,
            &checked,
            &sched,
            block.as_ref(),
            file.as_ref().map(|f| (f, shown.as_str())),
            default_threads(),
        )
        .map_err(|e| e.to_string())?;
        Ok((checked.pipeline, variants))
    })
}

/// The key of the cache entry that would serve pipeline `name` of the text
/// of a `pipeline!` invocation on `at` (`target_arch` and level; for the
/// tuner).
pub fn cache_key_from_source(
    source: &str,
    name: &str,
    at: (&str, &str),
) -> Result<schedule::cache::Key, String> {
    on_big_stack(|| {
        let (tokens, checked, sched, block) = with_cpu_block(source, name)?;
        let estimates = block.as_ref().map(|b| &b.estimates);
        Ok(schedule::cache::key_for(
            &tokens,
            &checked.pipeline,
            estimates,
            &sched.input_strides,
            at,
        ))
    })
}

/// Pipeline `name` of the text of a `pipeline!` invocation under its GPU
/// schedule (its `for cuda` block over [`schedule::Schedule::gpu_default`]),
/// lowered for the CUDA emitter: without the CPU passes that only serve
/// vector code (loop partitioning).
pub fn cuda_lowered_from_source(source: &str, name: &str) -> Result<Lowered, String> {
    on_big_stack(|| {
        let (_, program, checked) = parsed_and_checked(source, name)?;
        let block = program
            .schedules
            .iter()
            .find(|s| s.name == name && s.target.is_some());
        gpu_lowered(&checked, block)
    })
}

/// The names of the pipelines of a `pipeline!` invocation's text that have
/// a GPU version, each with its lowering and its launcher's name, and
/// those that have none with why (for `pipeline_build::cuda`, which
/// compiles exactly the launchers the macro's `NAME::cuda` calls).
pub fn cuda_programs_from_source(source: &str) -> Result<Vec<(String, GpuProgram)>, String> {
    let tokens: TokenStream = source.parse().map_err(|e| format!("{e:?}"))?;
    let program: Program = syn::parse2(tokens).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for item in &program.pipelines {
        let name = item.sig.ident.to_string();
        let gpu = on_big_stack(|| {
            let checked = check_pipeline(&program, item).map_err(|e| e.to_string())?;
            let block = program
                .schedules
                .iter()
                .find(|s| s.name == item.sig.ident && s.target.is_some());
            gpu_program(&checked, block).map_err(|(e, _)| e)
        });
        out.push((name, gpu));
    }
    Ok(out)
}

/// A pipeline's GPU lowering and its launcher's name, or why it has none.
pub type GpuProgram = Result<(Lowered, String), String>;

/// A checked pipeline under its GPU schedule, lowered.
fn gpu_lowered(
    checked: &CheckedPipeline,
    block: Option<&front::parse::ScheduleItem>,
) -> Result<Lowered, String> {
    gpu_schedule(checked, block).and_then(|sched| {
        lower_for(&checked.pipeline, &sched, Target::Cuda, None, 1).map_err(|e| e.message)
    })
}

/// The invocation's tokens, pipeline `name` checked, and what its CPU
/// block (if any) says.
#[allow(clippy::type_complexity)]
pub(crate) fn with_cpu_block(
    source: &str,
    name: &str,
) -> Result<
    (
        TokenStream,
        CheckedPipeline,
        schedule::Schedule,
        Option<front::schedule::BlockOptions>,
    ),
    String,
> {
    let (tokens, program, checked) = parsed_and_checked(source, name)?;
    let mut sched = schedule::Schedule::default_for(&checked.pipeline);
    let mut block = None;
    for s in program
        .schedules
        .iter()
        .filter(|s| s.name == name && s.target.is_none())
    {
        block = Some(
            front::schedule::check_schedule(s, &checked, &mut sched).map_err(|e| e.to_string())?,
        );
    }
    Ok((tokens, checked, sched, block))
}

/// Parses and checks the pipeline `name` from the text of a `pipeline!`
/// invocation (for the interpreter in tests and tools).
pub fn pipeline_from_source(source: &str, name: &str) -> Result<Pipeline, String> {
    on_big_stack(|| pipeline_here(source, name))
}

fn pipeline_here(source: &str, name: &str) -> Result<Pipeline, String> {
    parsed_and_checked(source, name).map(|(_, _, c)| c.pipeline)
}

/// The text of a `pipeline!` invocation as tokens and parsed, and its
/// pipeline `name` checked.
fn parsed_and_checked(
    source: &str,
    name: &str,
) -> Result<(TokenStream, Program, CheckedPipeline), String> {
    let tokens: TokenStream = source.parse().map_err(|e| format!("{e:?}"))?;
    let program: Program = syn::parse2(tokens.clone()).map_err(|e| e.to_string())?;
    let item = program
        .pipelines
        .iter()
        .find(|p| p.sig.ident == name)
        .ok_or_else(|| format!("no pipeline named `{name}`"))?;
    let checked = check_pipeline(&program, item).map_err(|e| e.to_string())?;
    Ok((tokens, program, checked))
}
