//! `NAME::cuda` and `NAME::cuda_device`: a pipeline's entries on an NVIDIA
//! GPU. They check their arguments as the CPU entry does, run the GPU
//! lowering's bounds program, and call the `extern "C"` launcher that
//! `pipeline_build::cuda()` compiled into the crate (`codegen::cuda`):
//! `cuda` with host views, whose spans the launcher copies to the device
//! and the outputs' back; `cuda_device` with `pipeline::cuda::DeviceBuffer`s,
//! read and written where they are.
//!
//! The launcher exists only where the crate's build script compiled it
//! (it then sets `cfg(pipeline_cuda)`); elsewhere, or where the GPU
//! lowering or the emitter cannot do the pipeline yet, the entries return
//! `Error::CudaUnavailable` saying why.

use super::*;
use crate::Lowered;

/// What the CUDA entry of a pipeline is made from: the GPU lowering and
/// the launcher's name, or why there is none.
pub type Gpu<'a> = Result<(&'a Lowered, &'a str), &'a str>;

/// What an entry takes its images as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Images {
    /// Views of host memory (`AsView`, `AsViewMut`).
    Host,
    /// `pipeline::cuda::DeviceBuffer`s.
    Device,
}

/// The entries' doc comments.
fn doc(name: &str, images: Images) -> String {
    match images {
        Images::Host => format!(
            "Runs [`{name}`](fn@super::{name}) on an NVIDIA GPU: the same arguments, checks and results, \
             computed under the pipeline's GPU schedule (its `schedule {name} for cuda` block, else one \
             kernel per computed func); the inputs are copied to the device and the outputs back. \
             Needs the crate built with `pipeline`'s `cuda` feature and \
             `pipeline_build::cuda().compile()` in its build script; without them, or without a \
             usable device, it returns `Error::CudaUnavailable`."
        ),
        Images::Device => format!(
            "Runs [`{name}`](fn@super::{name}) on an NVIDIA GPU, as [`cuda`] does, on images in device \
             memory ([`pipeline::cuda::DeviceBuffer`]), read and written where they are: no copies \
             through the host. It returns once the kernels have finished."
        ),
    }
}

/// The items `NAME::cuda` and `NAME::cuda_device` add to the pipeline's
/// module: the two entries, and what they share in `__cuda` (the
/// launcher's declaration, and the GPU lowering's bounds program unless
/// `cpu_bounds` says it is the CPU lowering's, which the module's
/// `__bounds` computes), which exists only under `cfg(pipeline_cuda)`. The
/// module allows that `cfg`, which crates that do not compile the GPU
/// versions do not declare.
pub fn cuda_entry(cp: &CheckedPipeline, gpu: Gpu, cpu_bounds: bool) -> Code {
    let name = cp.ident.to_string();
    let (l, symbol) = match gpu {
        Ok(x) => x,
        Err(reason) => return unavailable(cp, reason),
    };
    let g = Gen::new(&l.pipeline, &l.bounds, &l.input_strides);
    let Entry {
        params,
        prologue,
        device_params,
        device_prologue,
        bounds_params,
        bounds_args,
        empty_checks,
        nsyms,
        checks,
        ..
    } = entry(&g, cp, &l.input_strides);
    // The bounds program: the module's own where it is the same.
    let (bounds_fn, bounds_call) = if cpu_bounds {
        (Code::new(), code!(__bounds))
    } else {
        let body = entry::bounds_body(&g);
        let bounds = code! {
            /// The GPU lowering's bounds program (its symbols differ
            /// from the CPU lowering's where the schedules inline
            /// differently).
            #[cfg(pipeline_cuda)]
            #[allow(unused_parens, unused_variables, unused_mut, unused_braces, unused_imports, non_snake_case, clippy::all)]
            pub(super) fn bounds(#(#bounds_params),*) -> [i64; #nsyms] {
                // The short names the bounds program uses, as in the
                // module above (a module's imports do not reach its children).
                use ::core::cmp::{max as __max, min as __min};
                let mut __s = [0i64; #nsyms];
                #(#body)*
                __s
            }
        };
        (bounds, code!(__cuda::bounds))
    };
    let p = &l.pipeline;
    let launcher = Code::word(symbol);
    let label = &name;
    // The call of the launcher, with each image as the launcher reads it:
    // its origin's element, then (min, extent, stride) per dimension.
    let call = |images: Images| {
        let mut in_ptrs = Vec::new();
        let mut in_dims = Vec::new();
        for (i, inp) in p.inputs.iter().enumerate() {
            let v = word!("__in{}", i);
            in_ptrs.push(match images {
                Images::Host => code!(#v.__origin_ptr() as *const u8),
                Images::Device => code!(#v.as_device_ptr() as *const u8),
            });
            for d in 0..inp.dims {
                let d = unsuffixed_lit!(d);
                in_dims
                    .push(code!(#v.origin()[#d], #v.shape()[#d] as i64, #v.strides()[#d] as i64));
            }
        }
        let param_ptrs = (0..p.params.len()).map(|i| {
            let v = ident(names::param(i));
            code!(&#v as *const _ as *const u8)
        });
        let mut out_ptrs = Vec::new();
        let mut out_dims = Vec::new();
        for (k, &f) in p.outputs.iter().enumerate() {
            let v = word!("__out{}", k);
            out_ptrs.push(match images {
                Images::Host => code!(#v.__origin_ptr_mut() as *mut u8),
                Images::Device => code!(#v.__device_ptr_mut() as *mut u8),
            });
            for d in 0..p.funcs[f].dims() {
                let d = unsuffixed_lit!(d);
                out_dims
                    .push(code!(#v.origin()[#d], #v.shape()[#d] as i64, #v.strides()[#d] as i64));
            }
        }
        let on_device = unsuffixed_lit!((images == Images::Device) as i32);
        code! {
            if true #(&& #empty_checks)* {
                return ::core::result::Result::Ok(());
            }
            let __s: [i64; #nsyms] = #bounds_call(#(#bounds_args),*);
            #(#checks)*
            // One more element each, so that no array is empty.
            let __inputs = [#(#in_ptrs,)* ::core::ptr::null::<u8>()];
            let __input_dims = [#(#in_dims,)* 0i64];
            let __params = [#(#param_ptrs,)* ::core::ptr::null::<u8>()];
            let mut __outputs = [#(#out_ptrs,)* ::core::ptr::null_mut::<u8>()];
            let __output_dims = [#(#out_dims,)* 0i64];
            // SAFETY: every pointer is a view's origin, or a device
            // buffer's (with `on_device`), or a parameter's value, and the
            // launcher reads and writes only the images' spans by their
            // strides, which the checks above and the images' own
            // invariants keep inside their memory; `__s` is the bounds
            // program of the GPU lowering the launcher was generated from.
            let __rc = unsafe {
                __cuda::#launcher(
                    __s.as_ptr(),
                    __inputs.as_ptr(),
                    __input_dims.as_ptr(),
                    __params.as_ptr(),
                    __outputs.as_mut_ptr() as *const *mut u8,
                    __output_dims.as_ptr(),
                    #on_device,
                )
            };
            ::pipeline::rt::cuda_result(#label, __rc)
        }
    };
    let (host_call, device_call) = (call(Images::Host), call(Images::Device));
    let reason = format!(
        "pipeline `{name}` was built without its GPU version: enable `pipeline`'s `cuda` feature and call `pipeline_build::cuda().compile()` in the crate's build script, on a machine with nvcc (its warning says why it did not compile)"
    );
    let fallback = code!(::core::result::Result::Err(
        ::pipeline::Error::CudaUnavailable { reason: ::std::string::String::from(#reason) }
    ));
    let (host_doc, device_doc) = (doc(&name, Images::Host), doc(&name, Images::Device));
    code! {
        #[doc(hidden)]
        #[allow(unexpected_cfgs)]
        mod __cuda {
            #bounds_fn
            #[cfg(pipeline_cuda)]
            extern "C" {
                pub(super) fn #launcher(
                    syms: *const i64,
                    inputs: *const *const u8,
                    input_dims: *const i64,
                    params: *const *const u8,
                    outputs: *const *mut u8,
                    output_dims: *const i64,
                    on_device: i32,
                ) -> i32;
            }
        }

        #[doc = #host_doc]
        #[allow(unused_parens, unused_variables, unused_mut, unused_braces, non_snake_case, clippy::all, unexpected_cfgs)]
        pub fn cuda(#(#params),*) -> ::core::result::Result<(), ::pipeline::Error> {
            #[cfg(pipeline_cuda)]
            {
                #(#prologue)*
                #host_call
            }
            #[cfg(not(pipeline_cuda))]
            {
                #fallback
            }
        }

        #[doc = #device_doc]
        #[allow(unused_parens, unused_variables, unused_mut, unused_braces, non_snake_case, clippy::all, unexpected_cfgs)]
        pub fn cuda_device(#(#device_params),*) -> ::core::result::Result<(), ::pipeline::Error> {
            #[cfg(pipeline_cuda)]
            {
                #(#device_prologue)*
                #device_call
            }
            #[cfg(not(pipeline_cuda))]
            {
                #fallback
            }
        }
    }
}

/// `NAME::cuda` and `NAME::cuda_device` for a pipeline without a GPU
/// version: they return `CudaUnavailable` with `reason`, whatever they are
/// given.
fn unavailable(cp: &CheckedPipeline, reason: &str) -> Code {
    let name = cp.ident.to_string();
    let reason = format!("pipeline `{name}` has no GPU version: {reason}");
    let b = crate::analysis::bounds::infer(&cp.pipeline);
    let strides: Vec<Vec<Option<usize>>> = cp
        .pipeline
        .inputs
        .iter()
        .map(|i| vec![None; i.dims])
        .collect();
    let g = Gen::new(&cp.pipeline, &b, &strides);
    let Entry {
        params,
        device_params,
        ..
    } = entry(&g, cp, &strides);
    let (host_doc, device_doc) = (doc(&name, Images::Host), doc(&name, Images::Device));
    code! {
        #[doc = #host_doc]
        #[allow(unused_variables, non_snake_case, clippy::all)]
        pub fn cuda(#(#params),*) -> ::core::result::Result<(), ::pipeline::Error> {
            ::core::result::Result::Err(
                ::pipeline::Error::CudaUnavailable { reason: ::std::string::String::from(#reason) }
            )
        }

        #[doc = #device_doc]
        #[allow(unused_variables, non_snake_case, clippy::all)]
        pub fn cuda_device(#(#device_params),*) -> ::core::result::Result<(), ::pipeline::Error> {
            ::core::result::Result::Err(
                ::pipeline::Error::CudaUnavailable { reason: ::std::string::String::from(#reason) }
            )
        }
    }
}
