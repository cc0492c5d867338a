//! The kernel functions of a pipeline: its loop nests compiled once per
//! instruction-set level that gets a kernel of its own, and the dispatch on
//! the level [`pipeline::rt::isa`] reports at run time.
//!
//! The loop nests are one function, `__kernel`, generic over the level
//! (`pipeline::rt::simd::Level`), its token `__isa`: rustc type-checks and
//! borrow-checks them once, and each level's kernel is the function's
//! instance for its token. A closure is compiled with the features of the
//! function it is written in, which for a generic one are none, so each
//! stage runs through the token's `outline` and each slab of a parallel
//! loop through its `run` (in `rt::par_slabs`): functions compiled with the
//! level's `#[target_feature]`, into which the closure, marked
//! `#[inline(always)]`, is inlined (left to LLVM's cost model, a large loop
//! nest stayed a function of its own, without the features: the 5x5
//! Gaussian ran 80 times slower). A non-generic `__dispatch` calls the
//! instances, so that they are compiled with the crate that defines the
//! pipeline (the entry is generic over its `impl AsView` arguments). Each
//! instance is a full loop nest for LLVM to optimize, which is where a
//! release build's time goes, so only the levels that pay get one: by
//! default scalar (the
//! fallback every processor can run), AVX2 and, where some vector is wider
//! than 256 bits, AVX-512, and AVX-512 with VBMI where the loops also load
//! at strides 3 or 4 (whose bytes VBMI permutes across whole registers).
//! `PIPELINE_KERNELS` at build time chooses others; a processor runs the
//! highest kernel its level reaches.

use super::code::{unsuffixed_lit, word, Code};
use crate::analysis::bounds::BoundsProgram;
use crate::ir::Pipeline;
use pipeline_code::code;

use super::rust::rust_type;

/// The environment variable that lists the levels given a kernel of their
/// own beside scalar (`sse4.1`, `avx2`, `avx512`, `avx512vbmi`,
/// comma-separated; `scalar` alone for none).
pub const KERNELS_ENV: &str = "PIPELINE_KERNELS";

/// Every level, lowest first: the name `PIPELINE_KERNELS`, `PIPELINE_ISA`
/// and the schedule cache use, and the `rt::Isa` variant (above scalar,
/// also the `rt::simd` token, whose `Level` impl has the features its
/// kernel is compiled with).
pub(crate) const LEVELS: [(&str, &str); 5] = [
    ("scalar", "Scalar"),
    ("sse4.1", "Sse41"),
    ("avx2", "Avx2"),
    ("avx512", "Avx512"),
    ("avx512vbmi", "Avx512Vbmi"),
];

/// The x86-64 levels above scalar, lowest first.
const X86_LEVELS: [(&str, &str); 4] = [LEVELS[1], LEVELS[2], LEVELS[3], LEVELS[4]];

/// Which x86-64 levels may get a kernel of their own (in the order of
/// `X86_LEVELS`), and, for `only:LEVEL`, the one level whose kernel alone
/// is built (0 scalar, then `X86_LEVELS`' order plus one); `elsewhere`:
/// the levels (in `LEVELS`' order) whose calls never reach this code
/// (another variant serves them), whose kernels are left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelLevels {
    on: [bool; 4],
    only: Option<usize>,
    elsewhere: [bool; 5],
}

impl Default for KernelLevels {
    /// AVX2, AVX-512 and AVX-512 with VBMI. An SSE4.1 kernel gained
    /// 1.0-1.3x over scalar on most pipelines (whose loops LLVM vectorizes
    /// with the baseline SSE2) and cost a third of a vectorized pipeline's
    /// release build; processors with SSE4.1 and without AVX2 run the
    /// scalar kernel.
    fn default() -> Self {
        KernelLevels {
            on: [false, true, true, true],
            only: None,
            elsewhere: [false; 5],
        }
    }
}

impl KernelLevels {
    /// The levels `PIPELINE_KERNELS` lists, or the default when it is unset.
    pub fn from_env() -> Result<KernelLevels, String> {
        match std::env::var(KERNELS_ENV) {
            Ok(v) => KernelLevels::parse(&v),
            Err(_) => Ok(KernelLevels::default()),
        }
    }

    /// Parses `PIPELINE_KERNELS` syntax: level names separated by commas,
    /// or `only:LEVEL`: of the default kernels, only the one a processor
    /// at LEVEL runs (the tuner's benchmarks build nothing else).
    pub fn parse(text: &str) -> Result<KernelLevels, String> {
        if let Some(level) = text.trim().strip_prefix("only:") {
            let Some(l) = LEVELS.iter().position(|(n, _)| *n == level.trim()) else {
                return Err(format!(
                    "{KERNELS_ENV}={text}: `{level}` is not a level; the levels are scalar, sse4.1, avx2, avx512 and avx512vbmi"
                ));
            };
            return Ok(KernelLevels {
                only: Some(l),
                ..KernelLevels::default()
            });
        }
        let mut on = [false; 4];
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "scalar" {
                continue;
            }
            match X86_LEVELS.iter().position(|(n, ..)| *n == name) {
                Some(i) => on[i] = true,
                None => {
                    return Err(format!(
                        "{KERNELS_ENV}={text}: `{name}` is not a level; the levels are scalar, sse4.1, avx2, avx512 and avx512vbmi"
                    ))
                }
            }
        }
        Ok(KernelLevels {
            on,
            ..KernelLevels::default()
        })
    }

    /// Of these kernels, only the one a processor at `level` (a name of
    /// [`LEVELS`]) runs: for code that runs at that level alone (a cache
    /// entry's variant, `codegen::rust::generate_levels`).
    pub fn only_at(self, level: &str) -> KernelLevels {
        KernelLevels {
            only: LEVELS.iter().position(|(n, _)| *n == level).or(self.only),
            ..self
        }
    }

    /// These kernels but for those that only `levels` (names of
    /// [`LEVELS`]) would run, where calls at `levels` go elsewhere (the
    /// auto-scheduler's variant beside cache entries' for those levels).
    pub fn except_at(self, levels: &[&str]) -> KernelLevels {
        let mut elsewhere = self.elsewhere;
        for (e, (n, _)) in elsewhere.iter_mut().zip(LEVELS) {
            *e |= levels.contains(&n);
        }
        KernelLevels { elsewhere, ..self }
    }
}

/// What a pipeline's loop nests need of the levels.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Vectors {
    /// No vectorized loop: one kernel serves every level.
    None,
    /// No vector computed wider than 256 bits outside the stages that run at
    /// the narrow level (`rust::Needs::narrow`): no AVX-512 kernel. Its kernel would use
    /// the same vectors; what LLVM adds there is its own vectorization of the
    /// scalar edge loops, with 512-bit gathers (90 of them in the Harris
    /// kernel) that lower the core's clock: Harris and the unsharp mask ran
    /// 14% and 9% slower than with the AVX2 kernel.
    UpTo256,
    /// Some vector computed wider than 256 bits.
    Wider,
    /// Some vector computed wider than 256 bits, and loads of stride 3 or 4, which
    /// the AVX-512 level with VBMI reads by whole-register byte permutes.
    WiderStrided,
}

/// The kernel functions of the loop nest `body`, and the call of the one
/// the processor's level picks, as the statements of the entry after its
/// checks.
pub fn kernels(
    p: &Pipeline,
    b: &BoundsProgram,
    body: &Code,
    vectors: Vectors,
    levels: KernelLevels,
    input_stride0: &[usize],
) -> Code {
    let nsyms = unsuffixed_lit!(b.syms.len().max(1));
    let mut params = vec![code!(__s: [i64; #nsyms])];
    let mut args = vec![code!(__s)];
    for (i, inp) in p.inputs.iter().enumerate() {
        let (ty, n) = (rust_type(inp.ty), unsuffixed_lit!(inp.dims));
        let v = word!("__in{}", i);
        params.push(code!(#v: ::pipeline::View<'_, #ty, #n>));
        args.push(code!(#v));
        for d in 0..inp.dims {
            for v in [word!("__in{}_min{}", i, d), word!("__in{}_ext{}", i, d)] {
                params.push(code!(#v: i32));
                args.push(code!(#v));
            }
        }
    }
    for (i, par) in p.params.iter().enumerate() {
        let (v, ty) = (word!("__p{}", i), rust_type(par.ty));
        params.push(code!(#v: #ty));
        args.push(code!(#v));
    }
    for (k, &f) in p.outputs.iter().enumerate() {
        let func = &p.funcs[f];
        let (ty, n) = (rust_type(func.ty), unsuffixed_lit!(func.dims()));
        let v = word!("__out{}", k);
        params.push(code!(mut #v: ::pipeline::ViewMut<'_, #ty, #n>));
        args.push(code!(#v));
    }
    let result = code!(::core::result::Result<(), ::pipeline::Error>);
    if vectors == Vectors::None {
        return code! {
            fn __kernel(#(#params),*) -> #result {
                let __isa = ::pipeline::rt::simd::Scalar;
                #body
                ::core::result::Result::Ok(())
            }
            __kernel(#(#args),*)
        };
    }
    // One generic function, type-checked once; each level's kernel is its
    // instance for the level's token, whose `outline` (each stage) and
    // `run` (each slab of a parallel loop, in `rt::par_slabs`) compile the
    // loop nests with the level's features.
    let kernel = code! {
        fn __kernel<I: ::pipeline::rt::simd::Level>(__isa: I, #(#params),*) -> #result {
            #body
            ::core::result::Result::Ok(())
        }
    };
    // The levels with a kernel of their own.
    let mut own: Vec<usize> = (0..X86_LEVELS.len())
        .filter(|&i| {
            levels.on[i]
                && match i {
                    0 | 1 => true,
                    2 => matches!(vectors, Vectors::Wider | Vectors::WiderStrided),
                    _ => vectors == Vectors::WiderStrided,
                }
        })
        .collect();
    // `only:LEVEL`: the kernel that LEVEL runs and nothing else; below its
    // level the call is an error, not the scalar kernel.
    let mut scalar_fallback = code!(__kernel(::pipeline::rt::simd::Scalar, #(#args),*));
    if let Some(l) = levels.only {
        own.retain(|&k| k < l);
        own.drain(..own.len().saturating_sub(1));
        if let Some(&k) = own.first() {
            let (pipeline, kernel) = (&p.name, X86_LEVELS[k].0);
            scalar_fallback = code! {
                ::core::result::Result::Err(::pipeline::Error::KernelUnavailable {
                    pipeline: #pipeline,
                    kernel: #kernel,
                    running: ::pipeline::rt::isa().name(),
                })
            };
        }
    }
    // A kernel whose levels (its own, up to the next kernel's) are all
    // served elsewhere is never called.
    let all = own.clone();
    own.retain(|&k| {
        let next = all
            .iter()
            .find(|&&n| n > k)
            .map_or(X86_LEVELS.len(), |&n| n);
        (k..next).any(|l| !levels.elsewhere[l + 1])
    });
    // Each level runs the highest kernel at or below it; below the lowest,
    // the scalar one (the `_` arm).
    let mut arms = Vec::new();
    for (level, (_, variant)) in X86_LEVELS.iter().enumerate() {
        if levels.elsewhere[level + 1] {
            continue;
        }
        if let Some(&k) = own.iter().rev().find(|&&k| k <= level) {
            let (token, variant) = (Code::word(X86_LEVELS[k].1), Code::word(*variant));
            // SAFETY: `isa()` reports only levels the processor supports, and
            // each level has the features of every level below it.
            arms.push(code! {
                #[cfg(target_arch = "x86_64")]
                ::pipeline::rt::Isa::#variant => __kernel(
                    unsafe { ::pipeline::rt::simd::#token::new_unchecked() },
                    #(#args),*
                ),
            });
        }
    }
    // Vector loads and stores need dimension 0 dense, or of the stride the
    // schedule declares: an input or output that is not is copied.
    let pipeline = &p.name;
    let mut dense_inputs = Vec::new();
    for (i, inp) in p.inputs.iter().enumerate() {
        if input_stride0[i] != 1 {
            continue;
        }
        let (v, copy) = (word!("__in{}", i), word!("__copy_in{}", i));
        let name = &inp.name;
        dense_inputs.push(code! {
            let mut #copy = ::core::option::Option::None;
            let #v = ::pipeline::rt::dense_input(#pipeline, #name, #v, &mut #copy)?;
        });
    }
    let mut dense_outputs = Vec::new();
    let mut targets = Vec::new();
    let mut finish = Vec::new();
    for (k, &f) in p.outputs.iter().enumerate() {
        let (v, dense) = (word!("__out{}", k), word!("__dense_out{}", k));
        let name = &p.funcs[f].name;
        dense_outputs.push(code! {
            let mut #dense = ::pipeline::rt::dense_output(#pipeline, #name, &#v)?;
        });
        targets.push(code! {
            let #v = match &mut #dense {
                ::core::option::Option::Some(__d) => __d.view_mut().with_origin(#v.origin()),
                ::core::option::Option::None => #v.reborrow(),
            };
        });
        finish.push(code!(::pipeline::rt::finish_dense_output(&mut #v, &#dense)?;));
    }
    code! {
        #kernel
        // Not generic (unlike the entry, whose arguments are `impl AsView`),
        // so the kernels are compiled with the crate that defines the
        // pipeline, not in each crate that calls it.
        fn __dispatch(#(#params),*) -> #result {
            match ::pipeline::rt::isa() {
                #(#arms)*
                _ => #scalar_fallback,
            }
        }
        #(#dense_inputs)*
        #(#dense_outputs)*
        let __result = {
            #(#targets)*
            __dispatch(#(#args),*)
        };
        __result?;
        #(#finish)*
        ::core::result::Result::Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_levels_parse() {
        let only = |l| KernelLevels {
            only: l,
            ..KernelLevels::default()
        };
        assert_eq!(
            KernelLevels::parse("avx2,avx512,avx512vbmi"),
            Ok(KernelLevels::default())
        );
        assert_eq!(
            KernelLevels::parse("scalar"),
            Ok(KernelLevels {
                on: [false; 4],
                ..KernelLevels::default()
            })
        );
        assert_eq!(
            KernelLevels::parse(" sse4.1 , avx2,avx512,avx512vbmi "),
            Ok(KernelLevels {
                on: [true; 4],
                ..KernelLevels::default()
            })
        );
        let e = KernelLevels::parse("avx2,neon").unwrap_err();
        assert!(e.contains("`neon` is not a level"), "{e}");
        assert_eq!(KernelLevels::parse("only:avx2"), Ok(only(Some(2))));
        assert_eq!(KernelLevels::parse("only:scalar"), Ok(only(Some(0))));
        let e = KernelLevels::parse("only:neon").unwrap_err();
        assert!(e.contains("`neon` is not a level"), "{e}");
    }
}
