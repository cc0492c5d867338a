//! A pipeline compiled once per instruction-set level that has a schedule
//! of its own in the cache, and once more for the other levels: each in a
//! hidden module of the pipeline's (`__avx2`, ..., `__auto`), and the
//! entry, `required_region` and `schedule()` dispatching on
//! `pipeline::rt::isa()`, the level the processor runs kernels at.
//!
//! ```text
//! fn blur(input, out) { match isa() { Avx2 => blur::__avx2::__run(input, out), _ => blur::__auto::__run(input, out) } }
//! mod blur { output_shape, required_region (dispatching), SCHEDULE (every
//!            variant's), schedule(), LOWERED, mod __avx2 { __run, required_region, SCHEDULE, __bounds }, mod __auto { .. } }
//! ```

use super::*;
use crate::codegen::kernels::LEVELS;

/// The entry and module of `input.checked` where `levels` (level name,
/// lowering) have cache entries of their own and `input.lowered` serves
/// the other levels.
pub fn generate_levels(input: &Input, levels: &[(&str, &crate::Lowered)]) -> Generated {
    let cp = input.checked;
    let name = Code::word(cp.ident.to_string());
    // The variants, each with its module's name, the `rt::Isa` it serves
    // (`None`: the others) and its kernels: a level's variant runs at that
    // level only, so it has the one kernel the level runs (ARCHITECTURE.md,
    // *The schedule cache*: what an entry adds to a build).
    let mut variants: Vec<(Code, Option<Code>, &crate::Lowered, KernelLevels)> = Vec::new();
    for &(level, l) in levels {
        let variant = LEVELS.iter().find(|(n, _)| *n == level).map(|(_, v)| *v);
        // (The cache's parser admits only these names.)
        if let Some(v) = variant {
            let module = word!("__{}", level.replace('.', "_"));
            let isa = Some(word!("::pipeline::rt::Isa::{v}"));
            variants.push((module, isa, l, input.kernels.only_at(level)));
        }
    }
    // The auto-scheduler's serves the other levels: the kernels only
    // those with entries would run are left out.
    let names: Vec<&str> = levels.iter().map(|(l, _)| *l).collect();
    let others = input.kernels.except_at(&names);
    variants.push((Code::word("__auto"), None, input.lowered, others));
    let parts: Vec<Parts> = variants
        .iter()
        .map(|&(_, _, lowered, kernels)| {
            let one = Input {
                lowered,
                kernels,
                extra: Code::new(),
                ..*input
            };
            generate_parts(&one, true)
        })
        .collect();

    // A `match` on the level whose arms are `then(module)`.
    let dispatch = |then: &dyn Fn(&Code) -> Code| -> Code {
        let arms = variants.iter().map(|(module, isa, ..)| {
            let call = then(module);
            match isa {
                Some(isa) => code!(#isa => #call,),
                None => code!(_ => #call,),
            }
        });
        code!(match ::pipeline::rt::isa() { #(#arms)* })
    };
    let args = &parts[0].args;
    let body = dispatch(&|m| code!(#name::#m::__run(#(#args),*)));
    let region = dispatch(&|m| code!(#m::required_region(#(#args),*)));
    let schedule = dispatch(&|m| code!(#m::SCHEDULE));

    // What every variant serves, as `SCHEDULE` and `LOWERED` say it.
    let headed = |text: &dyn Fn(&crate::Lowered) -> &str| -> String {
        let mut s = String::new();
        for (level, l) in levels {
            s += &format!("// at {level}:\n{}\n", text(l));
        }
        s += &format!("// at the other levels:\n{}", text(input.lowered));
        s
    };
    let all_schedules = format!(
        "// one schedule per instruction-set level with an entry in the cache, the other levels \
         the auto-scheduler's; `{}::schedule()` is the one this processor runs\n{}",
        cp.ident,
        headed(&|l| l.schedule.trim_end())
    );
    let all_lowered = raw_string(&headed(&|l| l.text()));

    let modules = variants.iter().zip(&parts).map(|((module, ..), p)| {
        let Parts {
            params,
            body,
            required_region,
            schedule,
            bounds,
            ..
        } = p;
        code! {
            #[doc(hidden)]
            pub mod #module {
                use ::core::cmp::{max as __max, min as __min};
                pub fn __run(#params) -> ::core::result::Result<(), ::pipeline::Error> {
                    #body
                }
                #required_region
                pub const SCHEDULE: &str = #schedule;
                #bounds
            }
        }
    });
    let Parts {
        params,
        region_params,
        region_ty,
        output_shape,
        ..
    } = &parts[parts.len() - 1];
    let doc_region = region_doc(&cp.ident.to_string());
    let source = input.source;
    let mut items = code! {
        use ::core::cmp::{max as __max, min as __min};
        #output_shape
        #[doc = #doc_region]
        pub fn required_region(#(#region_params),*) -> #region_ty {
            #region
        }
        /// The schedules this pipeline was compiled with, in `schedule` block syntax: one per
        /// instruction-set level with a tuned entry, and the one of the other levels.
        pub const SCHEDULE: &str = #all_schedules;
        /// The schedule this processor runs (of those in [`SCHEDULE`]).
        pub fn schedule() -> &'static str {
            #schedule
        }
        /// The lowered loop nests, as readable pseudo-code.
        pub const LOWERED: &str = #all_lowered;
        #[doc(hidden)]
        pub const __SOURCE: &str = #source;
        #(#modules)*
    };
    items.push(&input.extra);
    Generated {
        params: params.clone(),
        body,
        items,
    }
}
