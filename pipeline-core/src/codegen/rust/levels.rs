//! A pipeline compiled once per instruction-set level (and processor) that
//! has a schedule of its own in the cache, and once more for the other
//! levels: each in a hidden module of the pipeline's (`__avx2`, ...,
//! `__auto`), and the entry, `required_region` and `schedule()`
//! dispatching on `pipeline::rt::isa()`, the level the processor runs
//! kernels at, and, where an entry names a processor, on
//! `pipeline::rt::processor()` too.
//!
//! ```text
//! fn blur(input, out) { match isa() { Avx2 => blur::__avx2::__run(input, out), _ => blur::__auto::__run(input, out) } }
//! (with a processor's entry: match (isa(), processor()) { (Avx2, "AuthenticAMD family 25 model 17") => .., (Avx2, _) => .., _ => .. })
//! mod blur { output_shape, required_region (dispatching), SCHEDULE (every
//!            variant's), schedule(), LOWERED, mod __avx2 { __run, required_region, SCHEDULE, __bounds }, mod __auto { .. } }
//! ```

use super::*;
use crate::codegen::kernels::LEVELS;

/// A schedule of the cache's: the level and processor it serves.
#[derive(Clone, Copy)]
pub struct Level<'a> {
    /// The level (`pipeline::rt::Isa::name`).
    pub isa: &'a str,
    /// The processor (`pipeline::rt::processor()`), or empty: every
    /// processor at the level without a schedule of its own.
    pub processor: &'a str,
    /// The schedule, lowered.
    pub lowered: &'a crate::Lowered,
}

impl Level<'_> {
    /// How `SCHEDULE` and `LOWERED` head its section.
    fn heading(&self) -> String {
        match self.processor {
            "" => format!("// at {}:", self.isa),
            p => format!("// at {} on {p}:", self.isa),
        }
    }
}

/// The entry and module of `input.checked` where `levels` have cache
/// entries of their own and `input.lowered` serves the other levels.
pub fn generate_levels(input: &Input, levels: &[Level]) -> Generated {
    let cp = input.checked;
    let name = Code::word(cp.ident.to_string());
    // A processor's schedule is matched before its level's.
    let mut levels = levels.to_vec();
    levels.sort_by_key(|l| l.processor.is_empty());
    let by_processor = levels.iter().any(|l| !l.processor.is_empty());
    // The variants, each with its module's name, the pattern it serves
    // (`None`: the others), its kernels and whether it runs the
    // auto-scheduler's code: a level's variant runs at that level only, so
    // it has the one kernel the level runs (ARCHITECTURE.md, *The schedule
    // cache*: what an entry adds to a build). An entry whose lowering is
    // the auto-scheduler's (the tuner found nothing faster) runs the
    // auto-scheduler's module and only says its own `SCHEDULE`.
    struct Variant<'a> {
        module: Code,
        pattern: Option<Code>,
        level: Option<Level<'a>>,
        lowered: &'a crate::Lowered,
        kernels: KernelLevels,
        shared: bool,
    }
    let mut variants: Vec<Variant> = Vec::new();
    for l in &levels {
        // (The cache's parser admits only the names of `LEVELS`.)
        let Some(v) = LEVELS.iter().find(|(n, _)| *n == l.isa).map(|(_, v)| *v) else {
            continue;
        };
        let isa = word!("::pipeline::rt::Isa::{v}");
        let mut module = format!("__{}", l.isa.replace('.', "_"));
        let pattern = match (by_processor, l.processor) {
            (false, _) => isa,
            (true, "") => code!((#isa, _)),
            (true, p) => {
                module = format!("{module}_{}", sanitize(p).to_lowercase());
                // (Two names that differ only where sanitized.)
                if variants.iter().any(|v| v.module.as_str() == module) {
                    module += &format!("_{}", variants.len());
                }
                let p = p.to_string();
                code!((#isa, #p))
            }
        };
        variants.push(Variant {
            module: Code::word(module),
            pattern: Some(pattern),
            level: Some(*l),
            lowered: l.lowered,
            kernels: input.kernels.only_at(l.isa),
            shared: l.lowered.same_code(input.lowered),
        });
    }
    // The auto-scheduler's serves the other levels: the kernels only
    // levels whose every processor runs code of its own would run are
    // left out.
    let entries = || variants.iter().filter_map(|v| Some((v.level?, v.shared)));
    let runs_auto = |isa: &str| entries().any(|(l, shared)| l.isa == isa && shared);
    let names: Vec<&str> = entries()
        .filter(|&(l, shared)| l.processor.is_empty() && !shared && !runs_auto(l.isa))
        .map(|(l, _)| l.isa)
        .collect();
    let others = input.kernels.except_at(&names);
    let auto = Code::word("__auto");
    variants.push(Variant {
        module: auto.clone(),
        pattern: None,
        level: None,
        lowered: input.lowered,
        kernels: others,
        shared: false,
    });
    let parts: Vec<Option<Parts>> = variants
        .iter()
        .map(|v| {
            let one = Input {
                lowered: v.lowered,
                kernels: v.kernels,
                extra: Code::new(),
                ..*input
            };
            (!v.shared).then(|| generate_parts(&one, true))
        })
        .collect();

    // A `match` on the level (and processor) whose arms are
    // `then(module, lowered, shared)` of each variant.
    type Arm<'a> = &'a dyn Fn(&Code, &crate::Lowered, bool) -> Code;
    let dispatch = |then: Arm| -> Code {
        let arms = variants.iter().map(|v| {
            let call = then(&v.module, v.lowered, v.shared);
            match &v.pattern {
                Some(isa) => code!(#isa => #call,),
                None => code!(_ => #call,),
            }
        });
        match by_processor {
            false => code!(match ::pipeline::rt::isa() { #(#arms)* }),
            true => code!(match (::pipeline::rt::isa(), ::pipeline::rt::processor()) { #(#arms)* }),
        }
    };
    let last = parts[parts.len() - 1]
        .as_ref()
        .expect("the auto-scheduler's code");
    let args = &last.args;
    // The code a variant runs: its module's, or the auto-scheduler's.
    let runs = |m: &Code, shared: bool| if shared { auto.clone() } else { m.clone() };
    let body = dispatch(&|m, _, shared| {
        let m = runs(m, shared);
        code!(#name::#m::__run(#(#args),*))
    });
    let region = dispatch(&|m, _, shared| {
        let m = runs(m, shared);
        code!(#m::required_region(#(#args),*))
    });
    // `schedule()`: a variant's own, also where it runs another's code.
    let schedule = dispatch(&|m, lowered, shared| match shared {
        true => {
            let text = lowered.schedule.clone();
            code!(#text)
        }
        false => code!(#m::SCHEDULE),
    });

    // What every variant serves, as `SCHEDULE` and `LOWERED` say it.
    let headed = |text: &dyn Fn(&crate::Lowered) -> &str| -> String {
        let mut s = String::new();
        for l in &levels {
            s += &format!("{}\n{}\n", l.heading(), text(l.lowered));
        }
        let others = match by_processor {
            false => "the other levels",
            true => "the other levels and processors",
        };
        s += &format!("// at {others}:\n{}", text(input.lowered));
        s
    };
    let all_schedules = format!(
        "// one schedule per instruction-set level (or level and processor) with an entry in the \
         cache, the other levels the auto-scheduler's; `{}::schedule()` is the one this processor \
         runs\n{}",
        cp.ident,
        headed(&|l| l.schedule.trim_end())
    );
    let all_lowered = raw_string(&headed(&|l| l.text()));

    let modules = variants.iter().zip(&parts).filter_map(|(v, p)| {
        let module = &v.module;
        let Parts {
            params,
            body,
            required_region,
            schedule,
            bounds,
            ..
        } = p.as_ref()?;
        Some(code! {
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
        })
    });
    let Parts {
        params,
        region_params,
        region_ty,
        output_shape,
        ..
    } = last;
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
