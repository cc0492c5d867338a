//! The parts of a pipeline's entry that its CPU and CUDA entries share:
//! the signature (inputs and parameters in declaration order, then the
//! outputs), the views made of the arguments, the bounds program as a
//! function, and the checks of the inputs before any work.

use super::*;

/// The parts of an entry, as tokens.
pub(super) struct Entry {
    /// The entry's parameters.
    pub params: Vec<TokenStream>,
    /// Views of the arguments, with their coordinates checked.
    pub prologue: Vec<TokenStream>,
    /// The same with `pipeline::cuda::DeviceBuffer`s for the images.
    pub device_params: Vec<TokenStream>,
    pub device_prologue: Vec<TokenStream>,
    /// `__bounds`' parameters, and the entry's arguments to it.
    pub bounds_params: Vec<TokenStream>,
    pub bounds_args: Vec<TokenStream>,
    /// `required_region`'s parameters, and its arguments to `__bounds`.
    pub region_params: Vec<TokenStream>,
    pub region_args: Vec<TokenStream>,
    /// `output_shape`'s parameters, and the input extents it binds.
    pub shape_params: Vec<TokenStream>,
    pub shape_locals: Vec<TokenStream>,
    /// Whether each output is empty (nothing to do).
    pub empty_checks: Vec<TokenStream>,
    /// The number of symbols.
    pub nsyms: Literal,
    /// The checks of the inputs (and bounded funcs) before any work.
    pub checks: Vec<TokenStream>,
}

/// The entry's parts for `g`'s pipeline and bounds program.
pub(super) fn entry(g: &Gen, cp: &CheckedPipeline, input_strides: &[Vec<Option<usize>>]) -> Entry {
    let (p, b) = (g.p, g.b);
    // Parameters of the entry, in declaration order, then the outputs.
    let mut params = Vec::new();
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
            let user = Ident::new(&inp.name, Span::call_site());
            let (ty, n) = (rust_type(inp.ty), Literal::usize_unsuffixed(inp.dims));
            let v = format_ident!("__in{}", i);
            let (mn, sh) = (
                format_ident!("__in{}_min", i),
                format_ident!("__in{}_shape", i),
            );
            let label = &inp.name;
            let coords = quote! {
                ::pipeline::rt::check_coords(#label, #v.origin(), ::pipeline::rt::region_max(#v.origin(), #v.shape()))?;
            };
            params.push(quote!(#user: &impl ::pipeline::AsView<#ty, #n>));
            prologue.push(quote! {
                let #v: ::pipeline::View<'_, #ty, #n> = ::pipeline::AsView::as_view(#user);
                #coords
            });
            device_params.push(quote!(#user: &::pipeline::cuda::DeviceBuffer<#ty, #n>));
            device_prologue.push(quote!(let #v = #user; #coords));
            bounds_params.push(quote!(#mn: [i64; #n], #sh: [usize; #n]));
            bounds_args.push(quote!(#v.origin(), #v.shape()));
            region_params.push(quote!(#user: ::pipeline::Region<#n>));
            region_args.push(quote!(#user.min, #user.shape));
            shape_params.push(quote!(#user: [usize; #n]));
            for d in 0..inp.dims {
                let (e, dd) = (
                    ident(names::input_extent(i, d)),
                    Literal::usize_unsuffixed(d),
                );
                let m = ident(names::input_min(i, d));
                shape_locals.push(quote!(let #e: i32 = #user[#dd] as i32; let #m: i32 = 0;));
            }
        } else {
            let par = &p.params[i];
            let user = Ident::new(&par.name, Span::call_site());
            let ty = rust_type(par.ty);
            let v = ident(names::param(i));
            params.push(quote!(#user: #ty));
            prologue.push(quote!(let #v: #ty = #user;));
            device_params.push(quote!(#user: #ty));
            device_prologue.push(quote!(let #v: #ty = #user;));
            bounds_params.push(quote!(#v: #ty));
            bounds_args.push(quote!(#v));
            region_params.push(quote!(#user: #ty));
            region_args.push(quote!(#user));
        }
    }
    let mut out_names = Vec::new();
    let mut empty_checks = Vec::new();
    for (k, &f) in p.outputs.iter().enumerate() {
        let decl = &cp.outputs[k];
        let (ty, n) = (rust_type(decl.ty), Literal::usize_unsuffixed(decl.dims));
        let mut pname = sanitize(&p.funcs[f].name);
        if p.inputs.iter().any(|i| i.name == pname)
            || p.params.iter().any(|i| i.name == pname)
            || out_names.contains(&pname)
        {
            pname = format!("{pname}_out{k}");
        }
        out_names.push(pname.clone());
        let user = Ident::new(&pname, Span::call_site());
        let v = format_ident!("__out{}", k);
        let (mn, sh) = (
            format_ident!("__out{}_min", k),
            format_ident!("__out{}_shape", k),
        );
        let label = &p.funcs[f].name;
        let coords = quote! {
            ::pipeline::rt::check_coords(#label, #v.origin(), ::pipeline::rt::region_max(#v.origin(), #v.shape()))?;
        };
        params.push(quote!(#user: &mut impl ::pipeline::AsViewMut<#ty, #n>));
        prologue.push(quote! {
            let mut #v: ::pipeline::ViewMut<'_, #ty, #n> = ::pipeline::AsViewMut::as_view_mut(#user);
            #coords
        });
        device_params.push(quote!(#user: &mut ::pipeline::cuda::DeviceBuffer<#ty, #n>));
        device_prologue.push(quote!(let #v = #user; #coords));
        empty_checks.push(quote!(#v.shape().contains(&0)));
        bounds_params.push(quote!(#mn: [i64; #n], #sh: [usize; #n]));
        bounds_args.push(quote!(#v.origin(), #v.shape()));
        region_params.push(quote!(#user: ::pipeline::Region<#n>));
        region_args.push(quote!(#user.min, #user.shape));
    }

    let nsyms = Literal::usize_unsuffixed(b.syms.len().max(1));

    // Input checks before any work.
    let mut checks = Vec::new();
    for (i, inp) in p.inputs.iter().enumerate() {
        let v = format_ident!("__in{}", i);
        let name = &inp.name;
        let lo = b.inputs[i].iter().map(|&(l, _)| sym(l));
        let hi = b.inputs[i].iter().map(|&(_, h)| sym(h));
        checks.push(quote!(::pipeline::rt::check_input(#name, &#v, [#(#lo),*], [#(#hi),*])?;));
        let declared = &input_strides[i];
        if declared.iter().any(Option::is_some) {
            let s = declared.iter().map(|s| match s {
                Some(s) => quote!(::core::option::Option::Some(#s)),
                None => quote!(::core::option::Option::None),
            });
            checks.push(quote!(::pipeline::rt::check_strides(#name, &#v, [#(#s),*])?;));
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
            checks.push(quote!(
                ::pipeline::rt::check_output_bound(#name, #var, #omin, #omax, #bmin, #bmax)?;
            ));
        }
        let (lo, hi) = (sym(lo), sym(hi));
        checks.push(quote!(::pipeline::rt::check_bound(#name, #var, #lo, #hi, #bmin, #bmax)?;));
    }
    for (i, inp) in p.inputs.iter().enumerate() {
        let v = format_ident!("__in{}", i);
        for d in 0..inp.dims {
            let dd = Literal::usize_unsuffixed(d);
            let (m, e) = (
                ident(names::input_min(i, d)),
                ident(names::input_extent(i, d)),
            );
            checks.push(quote!(let #m: i32 = #v.origin()[#dd] as i32; let #e: i32 = #v.shape()[#dd] as i32;));
        }
    }

    Entry {
        params,
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
pub(super) fn bounds_body(g: &Gen) -> Vec<TokenStream> {
    let (p, b) = (g.p, g.b);
    let mut bounds_body = Vec::new();
    for (i, inp) in p.inputs.iter().enumerate() {
        let (mn, sh) = (
            format_ident!("__in{}_min", i),
            format_ident!("__in{}_shape", i),
        );
        for d in 0..inp.dims {
            let dd = Literal::usize_unsuffixed(d);
            let (m, e) = (
                ident(names::input_min(i, d)),
                ident(names::input_extent(i, d)),
            );
            bounds_body.push(quote!(let #m: i32 = #mn[#dd] as i32; let #e: i32 = #sh[#dd] as i32;));
        }
    }
    for (k, region) in b.outputs.iter().enumerate() {
        let (mn, sh) = (
            format_ident!("__out{}_min", k),
            format_ident!("__out{}_shape", k),
        );
        for (d, &(lo, hi)) in region.iter().enumerate() {
            let dd = Literal::usize_unsuffixed(d);
            let (l, h) = (sym(lo), sym(hi));
            bounds_body.push(quote! {
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
        let e = Frag::new(g.expr(&v, None, None));
        bounds_body.push(if s < b.syms.len() {
            let l = sym(s);
            quote!(#l = #e;)
        } else {
            let (l, ty) = (ident(local_sym_name(s)), rust_type(v.ty));
            quote!(let #l: #ty = #e;)
        });
    }
    bounds_body
}
