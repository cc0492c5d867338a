//! Rust code generation: a lowered pipeline into the tokens of its entry
//! function and its companion module (`pipeline::guide::generated_api`).
//!
//! The entry converts its arguments to views, returns early when every output
//! is empty, checks that all coordinates fit `i32`, evaluates the bounds
//! program (shared with `required_region` through the hidden `__bounds`),
//! checks every input against the region it must cover and allocates every
//! intermediate buffer, all before the first store, so an error never leaves
//! a partly written output. Stores and loads use the unchecked
//! `ViewMut::store` and `View::load` at coordinates bounds inference proved
//! in range (asserted in debug builds): see ARCHITECTURE.md, invariants.

mod captures;
mod cuda_entry;
mod entry;
mod frag;
mod hoist;
mod levels;
mod scalar;
mod stages;
pub(crate) mod text;
mod vector;

pub use cuda_entry::cuda_entry;
pub use levels::{generate_levels, Level};

use super::code::{parenthesized, suffixed_lit, unsuffixed_lit, word, Code};
use super::kernels::{kernels, KernelLevels, Vectors};
use super::names;
pub use super::names::sanitize;
use crate::analysis::bounds::BoundsProgram;
use crate::analysis::lanes::{self, AllLanes};
use crate::front::check::CheckedPipeline;
use crate::hash::{HashMap, Table};
use crate::ir::*;
use crate::lower::loops::writes_output_directly;
use crate::schedule::LoopKind;
use captures::Name;
use entry::{entry, Entry};
use frag::Frag;
use pipeline_code::code;
use proc_macro2::TokenStream;
use quote::quote;
use scalar::{operand, sym};

/// Everything the generator needs about one lowered pipeline.
pub struct Input<'a> {
    /// The checked pipeline (signature, names).
    pub checked: &'a CheckedPipeline,
    /// The pipeline lowered: after inlining, its bounds, its loop nest,
    /// its schedule's text and declared strides, and the `LOWERED` text
    /// (printed on another thread while the code is written).
    pub lowered: &'a crate::Lowered,
    /// The whole macro input, for the interpreter in tests.
    pub source: &'a str,
    /// The levels that get a kernel of their own.
    pub kernels: KernelLevels,
    /// More items of the pipeline's module (its CUDA entry).
    pub extra: Code,
    /// How many threads may write its stages (the code is the same for
    /// any number).
    pub threads: usize,
}

/// A lexer of Rust source into tokens of the compiler, where the macro runs
/// inside it: `None` where the text does not lex.
pub type Lexer = fn(&str) -> Option<TokenStream>;

pub(crate) fn rust_type(t: Type) -> Code {
    Code::word(t.name())
}

/// The element type of a func's buffer: its own, but for `bool`, which is
/// stored as a byte of 0 or 1 (`bool` is no `pipeline::Element`: not every
/// byte is a `bool`).
pub(super) fn buffer_type(t: Type) -> Code {
    match t {
        Type::Bool => code!(u8),
        _ => rust_type(t),
    }
}

/// `value`, of type `t`, as its func's buffer stores it.
pub(super) fn to_buffer(t: Type, value: Code) -> Code {
    match t {
        Type::Bool => code!(((#value) as u8)),
        _ => value,
    }
}

/// `value`, read from a buffer of type `t`'s func, as a `t`.
pub(super) fn from_buffer(t: Type, value: Code) -> Code {
    match t {
        Type::Bool => code!((#value != 0u8)),
        _ => value,
    }
}

pub(super) fn int_lit(t: Type, v: i128) -> Code {
    let lit = match t {
        Type::Bool => return if v != 0 { code!(true) } else { code!(false) },
        Type::U8 => suffixed_lit!(u8, v as u8),
        Type::U16 => suffixed_lit!(u16, v as u16),
        Type::U32 => suffixed_lit!(u32, v as u32),
        Type::U64 => suffixed_lit!(u64, v as u64),
        Type::I8 => suffixed_lit!(i8, v.unsigned_abs() as i8),
        Type::I16 => suffixed_lit!(i16, v.unsigned_abs() as i16),
        Type::I32 => suffixed_lit!(i32, v.unsigned_abs() as i32),
        Type::I64 => suffixed_lit!(i64, v.unsigned_abs() as i64),
        Type::F32 | Type::F64 => unreachable!("int_lit of a float type"),
    };
    // The magnitude of MIN does not fit its type: write it as MIN.
    if t.is_signed() && v == t.int_min() {
        let ty = rust_type(t);
        return code!(#ty::MIN);
    }
    if v < 0 {
        code!((-#lit))
    } else {
        code!(#lit)
    }
}

pub(super) fn float_lit(t: Type, v: f64) -> Code {
    let ty = rust_type(t);
    if v.is_nan() {
        return code!(#ty::NAN);
    }
    if v.is_infinite() {
        return if v > 0.0 {
            code!(#ty::INFINITY)
        } else {
            code!(#ty::NEG_INFINITY)
        };
    }
    let lit = if t == Type::F32 {
        suffixed_lit!(f32, (v as f32).abs())
    } else {
        suffixed_lit!(f64, v.abs())
    };
    if v.is_sign_negative() {
        code!((-#lit))
    } else {
        code!(#lit)
    }
}

pub(super) struct Gen<'a> {
    pub(super) p: &'a Pipeline,
    b: &'a BoundsProgram,
    /// Every value a loop body may read: syms, params, inputs and the reader
    /// views of funcs computed so far (grows as code is generated, and
    /// shrinks back at the end of each loop).
    readable: std::cell::RefCell<captures::Readable>,
    /// The first coordinate of the buffer of each func allocated so far.
    origins: std::cell::RefCell<HashMap<FuncId, Code>>,
    /// The storage folding of each func allocated so far.
    pub(super) folds: std::cell::RefCell<HashMap<FuncId, Vec<Option<i64>>>>,
    /// The funcs whose stage is being generated (innermost last).
    open_stages: std::cell::RefCell<Vec<FuncId>>,
    /// How many loops enclose the statement being generated.
    loop_depth: std::cell::Cell<usize>,
    /// Loads moved out of their loop (see [`Gen::hoist_loads`]), by node,
    /// and the local each one was bound to.
    hoisted: std::cell::RefCell<HashMap<*const Expr, Code>>,
    /// The values each enclosing loop hoisted ([`Gen::hoist_loads`]),
    /// innermost last, for [`Gen::hoisted_value`].
    hoisted_scopes: std::cell::RefCell<Vec<Vec<(Expr, Code)>>>,
    /// The enclosing loops of constant range (`lo`, `hi`), as an unrolled
    /// loop has: a vector loop's guard may be proved for each of their
    /// values.
    pub(super) constant_loops: std::cell::RefCell<Vec<(LoopVar, i128, i128)>>,
    /// What the vector loops emitted so far (outside the stages that run
    /// at the narrow level) ask of the instruction-set levels.
    pub(super) needs: std::cell::Cell<Needs>,
    /// Upper bounds on unsigned values (for divisions through `f32`).
    pub(super) values: crate::analysis::values::ValueBounds<'a>,
    /// The `f32` reciprocal found exact for each (divisor, dividend bound),
    /// or `None` (see `Lanes::f32_reciprocal`).
    pub(super) f32_reciprocals: std::cell::RefCell<HashMap<(u32, u32), Option<f32>>>,
    /// The strides the schedule declares of each input's dimensions.
    pub(super) input_strides: Vec<Vec<Option<usize>>>,
    /// Per output, whether its func is computed straight into the caller's
    /// buffer ([`writes_output_directly`], which scans every func's reads:
    /// asked at every store).
    direct_outputs: Vec<bool>,
    /// The identifiers of local symbols, loop variables and coordinates,
    /// made once each: a symbol is named at every use, and making an
    /// identifier formats and checks its name (48K times for the 100-func
    /// chain; kept, its expansion took 1.5% fewer instructions).
    names: std::cell::RefCell<Table<Name, Code>>,
    /// The outlined stages left for [`Gen::emit_stages`] to emit, on
    /// several threads, where the walk wrote placeholders; `None` in the
    /// generators that emit them.
    stages: Option<std::cell::RefCell<Vec<stages::Job<'a>>>>,
}

/// What vector loops ask of the instruction-set levels.
#[derive(Clone, Copy, Default)]
pub(super) struct Needs {
    /// The widest vector computed, in bytes (`vector::Lanes::computed`).
    pub(super) widest: usize,
    /// Whether a loop loads at a stride of 3 or 4 in memory
    /// (`Deinterleave::load_every` or `load_phases`).
    pub(super) byte_permutes: bool,
}

impl Gen<'_> {
    /// Notes a loop that loads at a stride of 3 or 4.
    pub(super) fn permutes_bytes(&self) {
        self.needs.set(Needs {
            byte_permutes: true,
            ..self.needs.get()
        });
    }
}

impl Needs {
    fn join(self, other: Needs) -> Needs {
        Needs {
            widest: self.widest.max(other.widest),
            byte_permutes: self.byte_permutes || other.byte_permutes,
        }
    }

    /// Whether such loops run best at the narrow level
    /// ([`pipeline::rt::simd::Level::Narrow`], AVX2 below the AVX-512
    /// levels): no vector computed is wider than 256 bits. Compiled for
    /// AVX-512 (which a wider stage of its pipeline asked for), the 8-lane
    /// slice of the bilateral grid's automatic schedule read its taps by
    /// 512-bit gathers of 64-bit offsets and converted its coordinates a
    /// lane at a time: the pipeline took 1.18x its AVX2 time at the
    /// AVX-512 levels, 1.02x with the slice at AVX2 (medians of five
    /// rounds, Xeon, 2 threads). The widest
    /// vector is what the loop computes, not the type of every node: the
    /// coordinates of dense loads and stores stay scalar, and `u16`
    /// arithmetic on 32 bytes in their block order is two 256-bit
    /// registers at every level, which an AVX-512 kernel joins into one
    /// and splits again around each operation. In cache on one thread
    /// (Xeon), the grey conversion of interleaved RGB (32 lanes of `u8`)
    /// took 13.2-13.9 us at AVX2 against 16.1-16.6 at AVX-512 and
    /// 14.6-14.7 with VBMI, and a dense two-tap mix 4.5-4.7 against
    /// 5.3-5.6; `u8` in and out with `f32` arithmetic (four times as wide,
    /// in registers of its own) ran 22.5-23.5 at AVX-512 against 31.7-32.0
    /// at AVX2, and `u16` with `u32` arithmetic 1.72-1.90 ms against
    /// 2.0-2.3 for a whole 5x5 Gaussian: those keep their AVX-512 kernels.
    pub(super) fn narrow(self) -> bool {
        self.widest <= 32
    }
}

/// `text` as a literal, raw (`r#"..."#`) where it can be: a raw string
/// needs no escaping, which (a character at a time, in the macro) was a
/// measurable part of expanding a large pipeline, whose `LOWERED` text is
/// hundreds of KB.
fn raw_string(text: &str) -> Code {
    if text.contains('\r') {
        return word!("{text:?}");
    }
    // More `#` than follow any `"` inside.
    let hashes = text
        .match_indices('"')
        .map(|(i, _)| text[i + 1..].bytes().take_while(|&b| b == b'#').count() + 1)
        .max()
        .unwrap_or(0);
    let h = "#".repeat(hashes);
    word!("r{h}\"{text}\"{h}")
}

/// The view that reads func `f`'s buffer: `__r{f}`.
pub(super) fn reader_name(f: FuncId) -> String {
    format!("__r{f}")
}

/// A bounds symbol bound in the code (not the bounds program's `__s[i]`):
/// `__q{s}`.
pub(super) fn local_sym_name(s: SymId) -> String {
    format!("__q{s}")
}

/// The view of input `i`: `__in{i}`.
pub(super) fn input_name(i: usize) -> String {
    format!("__in{i}")
}

/// An identifier of the generated code.
pub(super) fn ident(name: String) -> Code {
    Code::word(&name)
}

/// The name of the value of `let` binding `id`.
pub(super) fn let_var(id: usize) -> Code {
    let v = ident(names::let_value(id));
    code!(#v)
}

/// `let` binding `id` of `value` (of type `ty`) around `body`.
pub(super) fn let_binding(id: usize, ty: Type, value: Code, body: Code) -> Code {
    let (v, vty) = (let_var(id), rust_type(ty));
    code!({ let #v: #vty = #value; #body })
}

impl<'a> Gen<'a> {
    /// The stride of dimension 0 of input `i` as the kernels see it: the
    /// schedule's declaration (`set_stride`), else 1 (the entry makes a
    /// dense copy of an input that is not dense).
    pub(super) fn input_stride0(&self, i: usize) -> usize {
        self.input_strides[i]
            .first()
            .copied()
            .flatten()
            .unwrap_or(1)
    }

    pub(super) fn writer(&self, f: FuncId) -> Code {
        match self.p.outputs.iter().position(|&o| o == f) {
            Some(k) if self.direct_outputs[k] => word!("__out{}", k),
            _ => word!("__w{}", f),
        }
    }

    /// Whether func `f`'s stores go straight to the caller's output buffer
    /// (which the pipeline only writes; its rows are not in cache yet).
    pub(super) fn writes_caller_output(&self, f: FuncId) -> bool {
        let k = self.p.outputs.iter().position(|&o| o == f);
        k.is_some_and(|k| self.direct_outputs[k])
    }

    /// The load of one element of type `ty` at coordinates `c` (an
    /// `[i64; N]` expression) from `view`, the view of `source`: a func's
    /// own buffer has stride 1 in dimension 0 (`load_unit`) and holds a
    /// `bool` as a byte.
    pub(super) fn element_load(&self, source: Source, ty: Type, view: &Code, c: Code) -> Code {
        let load = match source {
            Source::Func(g) if !self.writes_caller_output(g) => code!(load_unit),
            _ => code!(load),
        };
        // SAFETY (of the generated block): bounds inference proved the
        // coordinate inside the region the entry checked for an input, or
        // allocated for a func; debug builds check it. The coordinate's
        // arithmetic is safe code; written inside the block, it saves the
        // `let` of a block around it, 7 tokens a load.
        from_buffer(ty, code!(unsafe { #view.#load(#c) }))
    }

    /// The store of `v` (already as the buffer holds it) at `c` through
    /// writer `w` of func `f`: at stride 1 in dimension 0 into a buffer of
    /// its own (`store_unit`).
    pub(super) fn element_store(&self, f: FuncId, w: &Code, c: Code, v: Code) -> Code {
        // SAFETY (of the generated block): every store lies in the region
        // allocated for its func (loop synthesis guarantees it); debug
        // builds check it.
        if self.writes_caller_output(f) {
            code!(unsafe { #w.store(#c, #v) })
        } else {
            code!(unsafe { #w.store_unit(#c, #v) })
        }
    }
}

impl<'a> Gen<'a> {
    /// The code of `s`. An allocation or binding scopes over the rest of
    /// its block, so its body follows it in the same stream: nesting it
    /// (`code!(let a = ..; #rest)`) copied the rest of the block once per
    /// binding, quadratic in the length of a run of bindings.
    fn stmt(&self, s: &'a Stmt) -> Code {
        let mut out = Code::new();
        let mut s = s;
        // Coordinates are readable until the end of the run.
        let mut coords_from = None;
        loop {
            s = match s {
                Stmt::Allocate {
                    func,
                    region,
                    fold,
                    body,
                } => {
                    out.extend(std::iter::once(self.allocate(*func, region, fold)));
                    body
                }
                Stmt::LetSym { sym, value, body } => {
                    let id = ident(local_sym_name(*sym));
                    let v = self.expr(value, None, None);
                    self.readable.borrow_mut().push(Name::LocalSym(*sym));
                    out.extend(std::iter::once(code!(let #id: i64 = #v;)));
                    body
                }
                Stmt::LetCoord { coord, value, body } => {
                    let id = self.named(Name::Coord(*coord));
                    let v = operand(value, self.expr(value, None, None));
                    let mut readable = self.readable.borrow_mut();
                    coords_from.get_or_insert(readable.len());
                    readable.push(Name::Coord(*coord));
                    out.extend(std::iter::once(code!(let #id: i32 = #v as i32;)));
                    body
                }
                _ => {
                    out.extend(std::iter::once(self.stmt_here(s)));
                    break;
                }
            };
        }
        if let Some(scope) = coords_from {
            self.readable.borrow_mut().truncate(scope);
        }
        out
    }

    /// The allocation of `func`'s buffer over `region`, folded as `fold` says.
    fn allocate(&self, func: FuncId, region: &[(Expr, Expr)], fold: &[Option<i64>]) -> Code {
        self.folds.borrow_mut().insert(func, fold.to_vec());
        let f = &self.p.funcs[func];
        let ty = buffer_type(f.ty);
        let n = unsuffixed_lit!(f.dims());
        let name = &f.name;
        let pipeline = &self.p.name;
        let buf = word!("__buf{}", func);
        let lo = region.iter().map(|(l, _)| self.expr(l, None, None));
        let lo = code!([#(#lo),*]);
        let hi = region.iter().map(|(_, h)| self.expr(h, None, None));
        let hi = code!([#(#hi),*]);
        self.origins.borrow_mut().insert(func, lo.clone());
        // SAFETY (of the generated block): loop synthesis computes every
        // point of the region before any is read.
        code! {
            let mut #buf = unsafe { __alloc::<#ty, #n>(#pipeline, #name, #lo, #hi) }?;
        }
    }

    /// The code of a statement other than an allocation or a binding.
    fn stmt_here(&self, s: &'a Stmt) -> Code {
        match s {
            Stmt::Allocate { .. } | Stmt::LetSym { .. } | Stmt::LetCoord { .. } => {
                unreachable!("Gen::stmt emits allocations and bindings itself")
            }
            Stmt::Block(stmts) => stmts.iter().map(|s| self.stage(s)).collect(),
            Stmt::For {
                var,
                min,
                max,
                slab,
                body,
                kind,
            } => {
                let id = self.named(Name::Loop(var.clone()));
                let (hoists, scope) = if slab.is_none() && *kind == LoopKind::Serial {
                    self.hoist_loads(body)
                } else {
                    Default::default()
                };
                self.hoisted_scopes.borrow_mut().push(scope);
                // Values bound inside the loop are not readable after it.
                // The loop's variable is readable inside (a parallel loop
                // inside copies it into its closure, see below).
                let scope = self.readable.borrow().len();
                self.readable.borrow_mut().push(Name::Loop(var.clone()));
                let constant = (*kind != LoopKind::Vectorized)
                    .then(|| min.as_int().zip(max.as_int()))
                    .flatten();
                if let Some((lo, hi)) = constant {
                    self.constant_loops.borrow_mut().push((var.clone(), lo, hi));
                }
                self.loop_depth.set(self.loop_depth.get() + 1);
                let inner = self.stmt(body);
                self.loop_depth.set(self.loop_depth.get() - 1);
                if constant.is_some() {
                    self.constant_loops.borrow_mut().pop();
                }
                self.readable.borrow_mut().truncate(scope);
                self.hoisted_scopes.borrow_mut().pop();
                let (lo, hi) = (self.expr(min, None, None), self.expr(max, None, None));
                // A vectorized loop runs as one vector iteration when all
                // its lanes run, else (the ragged end of a split, an image
                // narrower than a vector) as the scalar loop. With a split's
                // shifted last vector the lanes all run when `c` holds, and
                // the vector body is the loop's body in that case.
                let vector = match (kind, slab, lanes::lanes_of(min, max)) {
                    (LoopKind::Vectorized, None, Some((first, w, all))) => {
                        let (test, vbody) = match all {
                            AllLanes::Always => (None, self.vector_body(var, first, w, body)),
                            AllLanes::When(c) => (
                                Some(self.expr(c, None, None)),
                                self.vector_body(var, first, w, &lanes::assuming(body, c)),
                            ),
                            AllLanes::ExtentIsWidth => {
                                let width = suffixed_lit!(i64, w as i64);
                                let test = code!(__hi - __lo + 1 == #width);
                                (Some(test), self.vector_body(var, first, w, body))
                            }
                        };
                        vbody.map(|v| (test, v))
                    }
                    _ => None,
                };
                match slab {
                    None if matches!(vector, Some((None, _))) => {
                        let (_, vbody) = vector.expect("just matched");
                        code! {
                            let #id: i64 = #lo;
                            #vbody
                        }
                    }
                    None if vector.is_some() => {
                        let (test, vbody) = vector.expect("just matched");
                        code! {
                            let (__lo, __hi): (i64, i64) = (#lo, #hi);
                            if #test {
                                let #id: i64 = __lo;
                                #vbody
                            } else {
                                for #id in __lo..__hi + 1 {
                                    #inner
                                }
                            }
                        }
                    }
                    // Loads that do not vary are done once, when the loop
                    // runs at all.
                    None if !hoists.is_empty() => {
                        let hoists = hoists.into_iter();
                        code! {
                            let (__lo, __hi): (i64, i64) = (#lo, #hi);
                            if __lo <= __hi {
                                #(#hoists)*
                                for #id in __lo..__hi + 1 {
                                    #inner
                                }
                            }
                        }
                    }
                    // Unrolled loops are left to the compiler, whose
                    // unroller sees their constant extent.
                    None => {
                        let (lo, hi) = (operand(min, lo), operand(max, hi));
                        code! {
                            for #id in #lo..#hi + 1 {
                                #inner
                            }
                        }
                    }
                    Some(slab) => {
                        let w = self.writer(slab.func);
                        let d = unsuffixed_lit!(slab.dim);
                        let start = self.expr(&slab.start, None, None);
                        let step = suffixed_lit!(i64, slab.step);
                        // Copies of what the body reads (enclosing loops'
                        // variables and coordinates included): the unsharp
                        // mask reloaded its channel from the stack in every
                        // vector iteration through the captured reference.
                        let locals = self.local_copies(body, slab.func);
                        let (start, lo, hi, inner) = ((start), (lo), (hi), (inner));
                        code! {
                            ::pipeline::rt::par_slabs(__isa, #w.reborrow(), #d, #start, #step, #lo, #hi, #[inline(always)] |#id: i64, mut #w| {
                                #locals
                                #inner
                                ::core::result::Result::Ok(())
                            })?;
                        }
                    }
                }
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                let w = self.writer(*func);
                let c = self.coords(args, Some(*func), Some(*func), *update);
                let v = to_buffer(
                    self.p.funcs[*func].ty,
                    self.expr(value, Some(*func), *update),
                );
                let store = self.element_store(*func, &w, c, v);
                code!(#store;)
            }
            Stmt::If { cond, body } => {
                let c = self.expr(cond, None, None);
                let b = self.stmt(body);
                code!(if #c { #b })
            }
            Stmt::CopyToOutput { func, output } => {
                let out = word!("__out{}", output);
                let r = ident(reader_name(*func));
                code! {
                    {
                        let (__o, __sh) = (#out.origin(), #out.shape());
                        #out.copy_from(&#r.crop(__o, __sh)?)?;
                    }
                }
            }
        }
    }

    /// The first coordinate of the buffer allocated for `f`.
    fn origin(&self, f: FuncId) -> Code {
        self.origins
            .borrow()
            .get(&f)
            .cloned()
            .expect("a func's buffer is allocated before its stages")
    }

    /// Local copies, for a closure whose body is the code of `s` and which
    /// writes func `f`, of the readable values that `s` may read, but for
    /// `f`'s reader (the body reads `f` through its writer). The closure
    /// captures by reference, and LLVM cannot keep values behind a
    /// reference in registers across the stores through the writer's raw
    /// pointer. Only what the body names is copied: copying every readable
    /// value made a chain of `n` stages `n^2` statements for rustc to check.
    fn local_copies(&self, s: &Stmt, f: FuncId) -> Code {
        let used = captures::names_read(s, self.b);
        let own = Name::Reader(f);
        let readable = self.readable.borrow();
        let copies = readable.copies(&used, &own).map(|n| ident(n.spelt()));
        code!(#(let #copies = #copies;)*)
    }
}

impl<'a> Gen<'a> {
    /// The generator of pipeline `p` with bounds program `b`.
    fn new(p: &'a Pipeline, b: &'a BoundsProgram, input_strides: &[Vec<Option<usize>>]) -> Gen<'a> {
        let mut readable = captures::Readable::default();
        readable.push(Name::Syms);
        for (i, inp) in p.inputs.iter().enumerate() {
            readable.push(Name::Input(i));
            for d in 0..inp.dims {
                readable.push(Name::InputMin(i, d));
                readable.push(Name::InputExtent(i, d));
            }
        }
        (0..p.params.len()).for_each(|i| readable.push(Name::Param(i)));
        Gen {
            p,
            b,
            readable: std::cell::RefCell::new(readable),
            origins: Default::default(),
            folds: Default::default(),
            open_stages: Default::default(),
            loop_depth: Default::default(),
            hoisted: Default::default(),
            hoisted_scopes: Default::default(),
            constant_loops: Default::default(),
            needs: Default::default(),
            values: crate::analysis::values::ValueBounds::new(p),
            f32_reciprocals: Default::default(),
            input_strides: input_strides.to_vec(),
            direct_outputs: p
                .outputs
                .iter()
                .map(|&f| writes_output_directly(p, f))
                .collect(),
            names: Default::default(),
            stages: None,
        }
    }

    /// The identifier of a value the code binds (a local symbol, a loop
    /// variable, a coordinate), spelt once.
    fn named(&self, n: Name) -> Code {
        if let Some(id) = self.names.borrow().get(&n) {
            return id.clone();
        }
        let id = ident(n.spelt());
        self.names.borrow_mut().insert(n, id.clone());
        id
    }
}

/// A pipeline's generated code as text: the entry's parameters and body,
/// and its module's items. The bulk of the code (every part that is not
/// the user's) is written as text and handed to the compiler to lex
/// (`text.rs`); `wrap` puts the shell around it, with the user's name,
/// visibility and attributes, which keep their spans.
pub struct Generated {
    /// The entry's parameters.
    pub params: Code,
    /// The entry's body.
    pub body: Code,
    /// The items of the pipeline's module.
    pub items: Code,
}

/// The code of one pipeline's entry and module (see [`Generated`]).
pub fn generate_text(input: &Input) -> Generated {
    let parts = generate_parts(input, false);
    let Parts {
        params,
        body,
        output_shape,
        required_region,
        schedule,
        lowered,
        bounds,
        ..
    } = parts;
    let source = input.source;
    let mut items = code! {
        use ::core::cmp::{max as __max, min as __min};
        #output_shape
        #required_region
        /// The schedule this pipeline was compiled with, in `schedule` block syntax.
        pub const SCHEDULE: &str = #schedule;
        /// The schedule this processor runs: [`SCHEDULE`], which is its only one.
        pub fn schedule() -> &'static str {
            SCHEDULE
        }
        /// The lowered loop nest, as readable pseudo-code.
        pub const LOWERED: &str = #lowered;
        #[doc(hidden)]
        pub const __SOURCE: &str = #source;
        #bounds
    };
    items.push(&input.extra);
    Generated {
        params,
        body,
        items,
    }
}

/// The entry `#vis fn #name` and the module `#vis mod #name` around
/// `code`, under `cfg` where there is one, with the user's `attrs` on the
/// entry.
pub(crate) fn wrap(
    code: Generated,
    lex: Option<Lexer>,
    cfg: Option<TokenStream>,
    attrs: &TokenStream,
    vis: &TokenStream,
    name: &proc_macro2::Ident,
) -> TokenStream {
    let [params, body, items] =
        [code.params, code.body, code.items].map(|c| Frag::new(text::tokens(lex, &c)));
    let cfg = cfg.map(|c| quote!(#[cfg(#c)]));
    quote! {
        #cfg
        #attrs
        #[allow(unused_parens, unused_variables, unused_mut, unused_braces, unused_imports, unused_unsafe, non_snake_case, clippy::all)]
        #vis fn #name(#params) -> ::core::result::Result<(), ::pipeline::Error> {
            #body
        }

        #cfg
        #[allow(unused_parens, unused_variables, unused_mut, unused_braces, unused_imports, unused_unsafe, non_snake_case, clippy::all, dead_code)]
        #vis mod #name {
            #items
        }
    }
}

/// One lowering's code, in the pieces the entry and its module are built
/// from ([`generate_text`], and per level [`generate_levels`]).
pub(super) struct Parts {
    /// The entry's parameters.
    params: Code,
    /// Their names, in order (the arguments of a call that passes them on;
    /// `required_region`'s parameters have the same names).
    args: Vec<Code>,
    /// `required_region`'s parameters.
    region_params: Vec<Code>,
    /// `required_region`'s result type.
    region_ty: Code,
    /// The entry's body.
    body: Code,
    /// The item `output_shape`.
    output_shape: Code,
    /// The item `required_region` (calling `__bounds`).
    required_region: Code,
    /// The schedule's text, a literal.
    schedule: Code,
    /// The `LOWERED` text, a literal (empty for a nested module, whose
    /// pipeline's `LOWERED` joins every variant's).
    lowered: Code,
    /// The item `__bounds`, the bounds program.
    bounds: Code,
}

/// The pieces of `input`'s code; `nested`: for a module inside the
/// pipeline's, whose entry body calls the `__bounds` beside it.
fn generate_parts(input: &Input, nested: bool) -> Parts {
    let l = input.lowered;
    let (p, b) = (&l.pipeline, &l.bounds);
    let cp = input.checked;
    let name = &Code::word(cp.ident.to_string());
    // The emitter's memos key nodes by address, and the passes share
    // nodes between the copies they make (a partitioned loop's parts):
    // each place gets nodes of its own.
    let body = l.body.clone().map_exprs(&mut Expr::unshared);
    let strides = &l.input_strides[..];
    // What the walk does not need, written beside it on a thread of its
    // own: the bounds program's code and the `LOWERED` text (printed once
    // and kept in `l`; a literal unless nested, where the module's
    // `LOWERED` joins every variant's).
    let ((bounds_body, lowered), (g, entry, loops)) = crate::par::both(
        input.threads,
        move || {
            let g = Gen::new(p, b, strides);
            let text = l.text();
            let literal = if nested {
                Code::new()
            } else {
                raw_string(text)
            };
            (entry::bounds_body(&g), literal)
        },
        || {
            let mut g = Gen::new(p, b, strides);
            g.stages = Some(Default::default());
            let entry = entry(&g, cp, strides);
            let loops = g.stmt(&body);
            let loops = g.emit_stages(loops, input.threads);
            (g, entry, loops)
        },
    );
    let Entry {
        params,
        args,
        prologue,
        bounds_params,
        bounds_args,
        region_params,
        region_args,
        shape_params,
        shape_locals,
        empty_checks,
        nsyms,
        checks,
        ..
    } = entry;
    let needs = g.needs.get();
    let vectors = if !has_vector_loop(&l.body) {
        Vectors::None
    } else if needs.narrow() {
        Vectors::UpTo256
    } else if needs.byte_permutes {
        Vectors::WiderStrided
    } else {
        Vectors::Wider
    };
    let stride0: Vec<usize> = (0..p.inputs.len()).map(|i| g.input_stride0(i)).collect();
    let body = kernels(p, b, &loops, vectors, input.kernels, &stride0);

    // required_region: one region per input.
    let regions: Vec<Code> = p
        .inputs
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let lo: Vec<Code> = b.inputs[i].iter().map(|&(l, _)| sym(l)).collect();
            let hi: Vec<Code> = b.inputs[i].iter().map(|&(_, h)| sym(h)).collect();
            code!(::pipeline::rt::region_from_bounds([#(#lo),*], [#(#hi),*]))
        })
        .collect();
    let region_ret: Vec<Code> = p
        .inputs
        .iter()
        .map(|i| {
            let n = unsuffixed_lit!(i.dims);
            code!(::pipeline::Region<#n>)
        })
        .collect();
    let (region_ty, region_val) = tuple_or_single(region_ret, regions);

    // output_shape: the natural extent of each output.
    let mut shapes = Vec::new();
    let mut shape_tys = Vec::new();
    for (k, &f) in p.outputs.iter().enumerate() {
        let func = &input.checked.pipeline.funcs[f];
        let dims: Vec<Code> = (0..cp.outputs[k].dims)
            .map(|d| match func.natural_extent.get(d).cloned().flatten() {
                Some(e) => {
                    let e = g.expr(&e, None, None);
                    code!(::core::cmp::max(#e, 0) as usize)
                }
                None => match p.inputs.iter().position(|i| i.dims > d) {
                    Some(i) => {
                        let e = ident(names::input_extent(i, d));
                        code!(::core::cmp::max(#e, 0) as usize)
                    }
                    None => code!(0usize),
                },
            })
            .collect();
        let n = unsuffixed_lit!(cp.outputs[k].dims);
        shapes.push(code!([#(#dims),*]));
        shape_tys.push(code!([usize; #n]));
    }
    let (shape_ty, shape_val) = tuple_or_single(shape_tys, shapes);

    let schedule = Code::from_text(format!("{:?}", l.schedule));
    let doc_shape = format!("The natural output size of [`{name}`](fn@super::{name}) for the given input sizes (the rules: *Sizes* in `pipeline::guide::language`).");
    let doc_region = region_doc(&cp.ident.to_string());
    // A nested module is hidden, and its items' documentation would link
    // to the wrong place.
    let (bounds_at, doc) = match nested {
        true => (code!(self::__bounds), Code::new()),
        false => (code!(#name::__bounds), code!(#[doc = #doc_region])),
    };
    let body = code! {
        // Short names for what the loop nests use most.
        use ::core::cmp::{max as __max, min as __min};
        use ::pipeline::rt::simd as __simd;
        use ::pipeline::rt::simd::{Arith as __A, Bits as __B, Level as _};
        use ::pipeline::rt::alloc as __alloc;
        #(#prologue)*
        if true #(&& #empty_checks)* {
            return ::core::result::Result::Ok(());
        }
        let __s: [i64; #nsyms] = #bounds_at(#(#bounds_args),*);
        #(#checks)*
        #body
    };
    Parts {
        params: code!(#(#params),*),
        args,
        body,
        output_shape: code! {
            #[doc = #doc_shape]
            pub fn output_shape(#(#shape_params),*) -> #shape_ty {
                #(#shape_locals)*
                #shape_val
            }
        },
        required_region: code! {
            #doc
            pub fn required_region(#(#region_params),*) -> #region_ty {
                let __s: [i64; #nsyms] = __bounds(#(#region_args),*);
                #region_val
            }
        },
        region_params,
        region_ty,
        schedule,
        lowered,
        bounds: code! {
            #[doc(hidden)]
            pub fn __bounds(#(#bounds_params),*) -> [i64; #nsyms] {
                let mut __s = [0i64; #nsyms];
                #(#bounds_body)*
                __s
            }
        },
    }
}

/// The documentation of `required_region` in pipeline `name`'s module.
pub(super) fn region_doc(name: &str) -> String {
    format!("The region of each input that [`{name}`](fn@super::{name}) reads to compute the given output region(s).")
}

/// Whether a loop of `s` is vectorized.
fn has_vector_loop(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::For {
            kind: LoopKind::Vectorized,
            ..
        }
    ) || s.children().iter().any(has_vector_loop)
}

fn tuple_or_single(tys: Vec<Code>, vals: Vec<Code>) -> (Code, Code) {
    if tys.len() == 1 {
        (tys[0].clone(), vals[0].clone())
    } else {
        (code!((#(#tys),*)), code!((#(#vals),*)))
    }
}

#[cfg(test)]
mod tests {
    use super::raw_string;

    #[test]
    fn raw_strings_hold_any_text() {
        for text in [
            "",
            "plain",
            "a \"quote\" and \\ a backslash",
            "ends in a quote\"",
            "\"# and \"## inside",
            "a line\nand a tab\t",
            "a carriage\rreturn",
        ] {
            let lit = raw_string(text).to_string();
            let back: syn::LitStr = syn::parse_str(&lit).expect("a string literal");
            assert_eq!(back.value(), text, "{lit}");
            assert_eq!(lit.starts_with('r'), !text.contains('\r'), "{lit}");
        }
    }
}
