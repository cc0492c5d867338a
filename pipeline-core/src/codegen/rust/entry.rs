//! The parts of a pipeline's entry that its CPU and CUDA entries share:
//! the signature (inputs and parameters in declaration order, then the
//! outputs), the views made of the arguments, the bounds program as a
//! function, and the checks of the inputs before any work.

use super::*;

/// The parts of an entry, as tokens.
pub(super) struct Entry {
    /// The entry's parameters.
    pub params: Vec<Code>,
    /// The names of `params` (and of `region_params`, in the same order),
    /// for a call that passes the arguments on.
    pub args: Vec<Code>,
    /// Views of the arguments, with their coordinates checked.
    pub prologue: Vec<Code>,
    /// The same with `pipeline::cuda::DeviceBuffer`s for the images.
    pub device_params: Vec<Code>,
    pub device_prologue: Vec<Code>,
    /// `__bounds`' parameters, and the entry's arguments to it.
    pub bounds_params: Vec<Code>,
    pub bounds_args: Vec<Code>,
    /// `required_region`'s parameters, and its arguments to `__bounds`.
    pub region_params: Vec<Code>,
    pub region_args: Vec<Code>,
    /// `output_shape`'s parameters, and the input extents it binds.
    pub shape_params: Vec<Code>,
    pub shape_locals: Vec<Code>,
    /// Whether each output is empty (nothing to do).
    pub empty_checks: Vec<Code>,
    /// The number of symbols.
    pub nsyms: Code,
    /// The checks of the inputs (and bounded funcs) before any work.
    pub checks: Vec<Code>,
}

/// The entry's parts for `g`'s pipeline and bounds program.
pub(super) fn entry(g: &Gen, cp: &CheckedPipeline, input_strides: &[Vec<Option<usize>>]) -> Entry {
    let (p, b) = (g.p, g.b);
    // Parameters of the entry, in declaration order, then the outputs.
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut prologue = Vec::new();
    let mut device_params = Vec::new();
    let mut device_prologue = Vec::new();
    let mut bounds_params = Vec::new();
    let mut bounds_args = Vec::new();
    let mut region_params = Vec::new();
    let mut region_args = Vec::new();
    let mut shape_params = Vec::new();
    let mut shape_locals = Vec::new();
    for &(is_input, i) in &p.arg_order {
        if is_input {
            let inp = &p.inputs[i];
            let user = Code::word(&inp.name);
            let (ty, n) = (rust_type(inp.ty), unsuffixed_lit!(inp.dims));
            let v = word!("__in{}", i);
            let (mn, sh) = (word!("__in{}_min", i), word!("__in{}_shape", i));
            let label = &inp.name;
            let coords = code! {
                ::pipeline::rt::check_coords(#label, #v.origin(), ::pipeline::rt::region_max(#v.origin(), #v.shape()))?;
            };
            params.push(code!(#user: &impl ::pipeline::AsView<#ty, #n>));
            args.push(user.clone());
            prologue.push(code! {
                let #v: ::pipeline::View<'_, #ty, #n> = ::pipeline::AsView::as_view(#user);
                #coords
            });
            device_params.push(code!(#user: &::pipeline::cuda::DeviceBuffer<#ty, #n>));
            device_prologue.push(code!(let #v = #user; #coords));
            bounds_params.push(code!(#mn: [i64; #n], #sh: [usize; #n]));
            bounds_args.push(code!(#v.origin(), #v.shape()));
            region_params.push(code!(#user: ::pipeline::Region<#n>));
            region_args.push(code!(#user.min, #user.shape));
            shape_params.push(code!(#user: [usize; #n]));
            for d in 0..inp.dims {
                let (e, dd) = (ident(names::input_extent(i, d)), unsuffixed_lit!(d));
                let m = ident(names::input_min(i, d));
                shape_locals.push(code!(let #e: i32 = #user[#dd] as i32; let #m: i32 = 0;));
            }
        } else {
            let par = &p.params[i];
            let user = Code::word(&par.name);
            let ty = rust_type(par.ty);
            let v = ident(names::param(i));
            params.push(code!(#user: #ty));
            args.push(user.clone());
            prologue.push(code!(let #v: #ty = #user;));
            device_params.push(code!(#user: #ty));
            device_prologue.push(code!(let #v: #ty = #user;));
            bounds_params.push(code!(#v: #ty));
            bounds_args.push(code!(#v));
            region_params.push(code!(#user: #ty));
            region_args.push(code!(#user));
        }
    }
    let mut out_names = Vec::new();
    let mut empty_checks = Vec::new();
    for (k, &f) in p.outputs.iter().enumerate() {
        let decl = &cp.outputs[k];
        let (ty, n) = (rust_type(decl.ty), unsuffixed_lit!(decl.dims));
        let mut pname = sanitize(&p.funcs[f].name);
        if p.inputs.iter().any(|i| i.name == pname)
            || p.params.iter().any(|i| i.name == pname)
            || out_names.contains(&pname)
        {
            pname = format!("{pname}_out{k}");
        }
        out_names.push(pname.clone());
        let user = Code::word(&pname);
        let v = word!("__out{}", k);
        let (mn, sh) = (word!("__out{}_min", k), word!("__out{}_shape", k));
        let label = &p.funcs[f].name;
        let coords = code! {
            ::pipeline::rt::check_coords(#label, #v.origin(), ::pipeline::rt::region_max(#v.origin(), #v.shape()))?;
        };
        params.push(code!(#user: &mut impl ::pipeline::AsViewMut<#ty, #n>));
        args.push(user.clone());
        prologue.push(code! {
            let mut #v: ::pipeline::ViewMut<'_, #ty, #n> = ::pipeline::AsViewMut::as_view_mut(#user);
            #coords
        });
        device_params.push(code!(#user: &mut ::pipeline::cuda::DeviceBuffer<#ty, #n>));
        device_prologue.push(code!(let #v = #user; #coords));
        empty_checks.push(code!(#v.shape().contains(&0)));
        bounds_params.push(code!(#mn: [i64; #n], #sh: [usize; #n]));
        bounds_args.push(code!(#v.origin(), #v.shape()));
        region_params.push(code!(#user: ::pipeline::Region<#n>));
        region_args.push(code!(#user.min, #user.shape));
    }

    let nsyms = unsuffixed_lit!(b.syms.len().max(1));

    // Input checks before any work.
    let mut checks = Vec::new();
    for (i, inp) in p.inputs.iter().enumerate() {
        let v = word!("__in{}", i);
        let name = &inp.name;
        let lo = b.inputs[i].iter().map(|&(l, _)| sym(l));
        let hi = b.inputs[i].iter().map(|&(_, h)| sym(h));
        checks.push(code!(::pipeline::rt::check_input(#name, &#v, [#(#lo),*], [#(#hi),*])?;));
        let declared = &input_strides[i];
        if declared.iter().any(Option::is_some) {
            let s = declared.iter().map(|s| match s {
                Some(s) => code!(::core::option::Option::Some(#s)),
                None => code!(::core::option::Option::None),
            });
            checks.push(code!(::pipeline::rt::check_strides(#name, &#v, [#(#s),*])?;));
        }
    }
    for &(f, d, (lo, hi), bmin, bmax) in &b.bounded {
        let (name, var) = (&p.funcs[f].name, &p.funcs[f].vars[d]);
        // An output computes its whole bound into the caller's buffer,
        // which must hold it; this check comes first, so that a buffer
        // smaller than the bound is named as such.
        if let Some(k) = p.outputs.iter().position(|&o| o == f) {
            let (omin, omax) = b.outputs[k][d];
            let (omin, omax) = (sym(omin), sym(omax));
            checks.push(code!(
                ::pipeline::rt::check_output_bound(#name, #var, #omin, #omax, #bmin, #bmax)?;
            ));
        }
        let (lo, hi) = (sym(lo), sym(hi));
        checks.push(code!(::pipeline::rt::check_bound(#name, #var, #lo, #hi, #bmin, #bmax)?;));
    }
    for (i, inp) in p.inputs.iter().enumerate() {
        let v = word!("__in{}", i);
        for d in 0..inp.dims {
            let dd = unsuffixed_lit!(d);
            let (m, e) = (
                ident(names::input_min(i, d)),
                ident(names::input_extent(i, d)),
            );
            checks.push(
                code!(let #m: i32 = #v.origin()[#dd] as i32; let #e: i32 = #v.shape()[#dd] as i32;),
            );
        }
    }

    Entry {
        params,
        args,
        prologue,
        device_params,
        device_prologue,
        bounds_params,
        bounds_args,
        region_params,
        region_args,
        shape_params,
        shape_locals,
        empty_checks,
        nsyms,
        checks,
    }
}

/// The body of `__bounds`, the bounds program of `g` (shared by the entry
/// and required_region): the inputs' regions bound, the outputs' set, then
/// every symbol in order.
pub(super) fn bounds_body(g: &Gen) -> Vec<Code> {
    let (p, b) = (g.p, g.b);
    let mut bounds_body = Vec::new();
    for (i, inp) in p.inputs.iter().enumerate() {
        let (mn, sh) = (word!("__in{}_min", i), word!("__in{}_shape", i));
        for d in 0..inp.dims {
            let dd = unsuffixed_lit!(d);
            let (m, e) = (
                ident(names::input_min(i, d)),
                ident(names::input_extent(i, d)),
            );
            bounds_body.push(code!(let #m: i32 = #mn[#dd] as i32; let #e: i32 = #sh[#dd] as i32;));
        }
    }
    for (k, region) in b.outputs.iter().enumerate() {
        let (mn, sh) = (word!("__out{}_min", k), word!("__out{}_shape", k));
        for (d, &(lo, hi)) in region.iter().enumerate() {
            let dd = unsuffixed_lit!(d);
            let (l, h) = (sym(lo), sym(hi));
            bounds_body.push(code! {
                #l = #mn[#dd];
                #h = #mn[#dd] + #sh[#dd] as i64 - 1;
            });
        }
    }
    // The values, with what they share computed once (as `__qN`, numbered
    // after the program's symbols, like a kernel's local symbols).
    let values = b.syms.iter().enumerate();
    let values = values.filter_map(|(s, def)| Some((s, def.value.clone()?)));
    let mut next = b.syms.len();
    let mut new_sym = || {
        next += 1;
        next - 1
    };
    for (s, v) in crate::lower::cse::share(values.collect(), &mut new_sym, &|_| true) {
        let e = g.expr(&v, None, None);
        bounds_body.push(if s < b.syms.len() {
            let l = sym(s);
            code!(#l = #e;)
        } else {
            let (l, ty) = (ident(local_sym_name(s)), rust_type(v.ty));
            code!(let #l: #ty = #e;)
        });
    }
    bounds_body
}
