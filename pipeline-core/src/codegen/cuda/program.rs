//! A lowered pipeline as CUDA C++: its kernels and the `extern "C"` host
//! launcher that allocates device memory, copies the inputs in, launches
//! the kernels in order and copies the outputs back.
//!
//! The lowered statements split at the GPU loops. Host code runs the
//! statements above them: allocations (device memory, pooled across calls
//! by `pl::device_alloc`, of the region bounds
//! inference gives, dense), bounds symbols, and loops or conditions around
//! kernels. Each nest of GPU loops (`gpu_tile`'s blocks and threads) is a
//! kernel: its block loops are the grid, sized on the host from their
//! bounds; its thread loops the block, sized by their constant extent (a
//! split's factor), each thread guarded by its loop's bound. A func
//! computed at a block loop is in shared memory, sized by a constant bound
//! of its region; its stages are phases whose points the block's threads
//! share out, each ending at a barrier before the threads that read it
//! (`PL_PHASE` marks thread code: the host emulation runs each phase for
//! every thread before the next). A statement
//! with no GPU loop in it (an update, a func left serial) is a kernel of
//! one thread. Copies of a func into an output not written in place are a
//! kernel over the output.
//!
//! Every kernel takes the pipeline's environment by value ([`Env`]'s
//! layout: the host's symbols, each input's and func buffer's pointer,
//! origin and strides, the parameters, the host's loop variables and
//! local symbols) and binds the names [`super::Exprs`] reads from it.
//!
//! The launcher: `int pipeline_NAME_cuda(const int64_t* syms,
//! const void* const* inputs, const int64_t* input_dims, const void* const*
//! params, void* const* outputs, const int64_t* output_dims, int
//! on_device)`, where an image's dims are `min, extent, stride` per
//! dimension, inputs' then outputs' in order, and `syms` the values of the
//! bounds program the Rust entry computes. The images' pointers are their
//! origins' elements in host memory, copied to the device and back; with
//! `on_device`, in device memory (`pipeline::cuda::DeviceBuffer`), read
//! and written where they are, and the launcher waits for the kernels
//! before it returns. It returns 0, or the CUDA error that stopped it.

use super::{c_type, Exprs};
use crate::analysis::simplify::simplify;
use crate::codegen::lanes::lanes_of;
use crate::codegen::names;
use crate::ir::*;
use crate::lower::loops::writes_output_directly;
use crate::schedule::LoopKind;
use crate::Lowered;
use std::collections::HashMap;
use std::fmt::Write;

/// What the CUDA emitter cannot do with a pipeline, and the func whose
/// directive is at fault, if one is: its GPU loops (`gpu_tile`, ...), or
/// with `placement` where it is computed (`compute_at`).
#[derive(Clone, Debug)]
pub struct Unsupported {
    /// What is wrong and what to do.
    pub message: String,
    /// The func at fault.
    pub func: Option<FuncId>,
    /// Whether its placement, rather than its GPU loops, is at fault.
    pub placement: bool,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Unsupported {
    fn from(message: String) -> Self {
        Unsupported {
            message,
            func: None,
            placement: false,
        }
    }
}

impl From<&str> for Unsupported {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}

/// An error of func `f`'s GPU loops.
fn of_loops(f: impl Into<Option<FuncId>>, message: String) -> Unsupported {
    Unsupported {
        message,
        func: f.into(),
        placement: false,
    }
}

/// An error of where func `f` is computed.
fn placed(f: FuncId, message: String) -> Unsupported {
    Unsupported {
        message,
        func: Some(f),
        placement: true,
    }
}

/// The most threads a CUDA block may have.
pub const MAX_THREADS: i128 = 1024;

/// The most shared memory a CUDA block may declare statically, in bytes.
pub const MAX_SHARED_BYTES: i128 = 48 * 1024;

/// The largest buffer a thread keeps in a local array, in bytes; larger
/// ones come from the device heap.
const MAX_LOCAL_BYTES: i128 = 4096;

/// How many host loops may enclose a kernel.
const MAX_HOST_LOOPS: usize = 8;

/// The C name of pipeline `name`'s launcher under lowering `l`:
/// `pipeline_{name}_{hash}_cuda`, the hash of the GPU program (its lowered
/// loop nest), so that the same name in two modules, or two versions of
/// one pipeline, never share a symbol. The macro's `NAME::cuda` and
/// `pipeline_build::cuda` agree on it.
pub fn launcher_name(l: &Lowered, name: &str) -> String {
    format!("pipeline_{}_cuda", unique(l, name))
}

fn unique(l: &Lowered, name: &str) -> String {
    let hash = crate::schedule::cache::fnv1a(l.text.as_bytes());
    format!("{}_{hash:016x}", names::sanitize(name))
}

/// How the kernels are built.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Kernels with 64-bit offsets beside the 32-bit ones, for buffers of
    /// 2^31 elements or more (`PIPELINE_CUDA_LARGE_BUFFERS=1` in
    /// `pipeline_build::cuda`, as Halide's `large_buffers`). Without them,
    /// such a call fails with [`TOO_LARGE`], and nvcc compiles each kernel
    /// once instead of twice.
    pub large_buffers: bool,
}

/// What a launcher built without [`Options::large_buffers`] returns for a
/// buffer of 2^31 elements or more (not a `cudaError_t`).
pub const TOO_LARGE: i32 = 1_000_001;

/// The CUDA C++ of pipeline `l`, its launcher named by [`launcher_name`];
/// `Err` says what the emitter cannot do yet.
pub fn generate(l: &Lowered, name: &str) -> Result<String, Unsupported> {
    generate_with(l, name, Options::default())
}

/// [`generate`] with `options`.
pub fn generate_with(l: &Lowered, name: &str, options: Options) -> Result<String, Unsupported> {
    let mut g = Program {
        options,
        l,
        name: unique(l, name),
        kernels: String::new(),
        host: String::new(),
        count: 0,
        host_loops: Vec::new(),
        folds: vec![Vec::new(); l.pipeline.funcs.len()],
        sym_values: HashMap::new(),
        threads_serial: false,
    };
    g.launcher()?;
    let mut out = String::new();
    let _ = writeln!(out, "// Generated by pipeline for `{name}`: do not edit.");
    let _ = writeln!(out, "namespace pipeline_{} {{", g.name);
    out += &g.env_struct();
    out += &g.kernels;
    let _ = writeln!(out, "}} // namespace pipeline_{}", g.name);
    out += &g.host;
    Ok(out)
}

struct Program<'a> {
    l: &'a Lowered,
    options: Options,
    name: String,
    kernels: String,
    host: String,
    /// Kernels emitted so far.
    count: usize,
    /// The host loops around the statement being emitted.
    host_loops: Vec<LoopVar>,
    /// Storage folding of each func buffer (known at its allocation).
    folds: Vec<Vec<Option<i64>>>,
    /// The values of the local symbols bound around the statement being
    /// emitted, in terms of loops and global symbols (for the constant
    /// bounds of shared memory).
    sym_values: HashMap<SymId, Expr>,
    /// Whether a thread loop in serial code runs serially (it is part of a
    /// stage the block's threads share out among themselves).
    threads_serial: bool,
}

/// The C++ type a func's buffer stores (`bool` as a byte).
fn buffer_type(t: Type) -> &'static str {
    match t {
        Type::Bool => "uint8_t",
        t => c_type(t),
    }
}

/// What a kernel's nest binds.
#[derive(Default)]
struct Nest {
    /// The func whose loops they are (for messages).
    func_name: String,
    func: Option<FuncId>,
    /// The block loops' bounds (host expressions), outermost first.
    grid: Vec<(String, String)>,
    /// The thread loops' names and widths, outermost first.
    block: Vec<(String, i128)>,
    /// Every loop of the kernel so far.
    bound: Vec<LoopVar>,
    /// Whether the code being emitted is thread code (inside a phase).
    in_phase: bool,
    /// The thread loops around the code being emitted, in its phase.
    thread_depth: usize,
    /// Shared allocations around the code being emitted: the phases in
    /// their scope end at a barrier.
    shared_scopes: usize,
    /// Bytes of shared memory the kernel declares.
    shared_bytes: i128,
    /// Whether the code being emitted follows other code of the block in
    /// a sequence (no more block loops may open there).
    in_sequence: bool,
}

/// `text`'s lines, each after `pad`.
fn indent(text: &str, pad: &str) -> String {
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

/// Whether `s` computes an update stage.
fn has_update(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::Store {
            update: Some(_),
            ..
        }
    ) || s.children().into_iter().any(has_update)
}

/// Two nests of GPU loops where one kernel needs one.
fn several(nest: &Nest) -> Unsupported {
    of_loops(nest.func, format!(
        "several GPU loop nests under one loop of `{}`: put each func's blocks and threads outermost",
        nest.func_name
    ))
}

fn has_gpu_loop(s: &Stmt) -> bool {
    matches!(s, Stmt::For { kind, .. } if kind.is_gpu())
        || s.children().into_iter().any(has_gpu_loop)
}

impl Program<'_> {
    fn p(&self) -> &Pipeline {
        &self.l.pipeline
    }

    /// The launch of kernel `k`: with 32-bit offsets, as Halide's kernels
    /// compute them, where every buffer so far has fewer than
    /// `PL_NARROW_LIMIT` (2^31) elements (`narrow`, which the launcher
    /// keeps); else with 64-bit ones, or, without large buffers, an error.
    fn launch(&self, k: usize, grid: &str, block: &str) -> String {
        let wide = match self.options.large_buffers {
            true => format!("PL_LAUNCH(k{k}<int64_t>, {grid}, {block}, env);"),
            false => format!("{{ err = (cudaError_t){TOO_LARGE}; goto done; }}"),
        };
        format!("if (narrow) PL_LAUNCH(k{k}<int32_t>, {grid}, {block}, env); else {wide}")
    }

    fn n_global(&self) -> usize {
        self.l.bounds.syms.len()
    }

    fn exprs(&self, stage: Option<(FuncId, Option<usize>)>) -> Exprs<'_> {
        Exprs {
            p: self.p(),
            func: stage.map(|s| s.0),
            update: stage.and_then(|s| s.1),
            n_global: self.n_global(),
            folds: &self.folds,
        }
    }

    /// `struct Env`: what every kernel reads.
    fn env_struct(&self) -> String {
        let p = self.p();
        let mut s = String::from("struct Env {\n  const int64_t* s;\n");
        for (i, input) in p.inputs.iter().enumerate() {
            let n = input.dims;
            let _ = writeln!(
                s,
                "  const {}* in{i}; int64_t in{i}_min[{n}]; int64_t in{i}_stride[{n}]; int32_t in{i}_ext[{n}];",
                c_type(input.ty)
            );
        }
        for (i, param) in p.params.iter().enumerate() {
            let _ = writeln!(s, "  {} p{i};", c_type(param.ty));
        }
        for (f, func) in p.funcs.iter().enumerate() {
            let n = func.dims().max(1);
            let _ = writeln!(
                s,
                "  {}* f{f}; int64_t f{f}_min[{n}]; int64_t f{f}_stride[{n}];",
                buffer_type(func.ty)
            );
        }
        let q = self.l.local_syms.max(1);
        let _ = writeln!(s, "  int64_t q[{q}];\n  int64_t l[{MAX_HOST_LOOPS}];\n}};");
        // Kernels take it by value: a pipeline of many funcs can pass the
        // limit on a kernel's parameters (4 KB before CUDA 12.1, 32 KB
        // since), which nvcc then says here rather than at a launch.
        let _ = writeln!(
            s,
            "#ifdef __CUDACC__\nstatic_assert(sizeof(Env) <= ((__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 1)) ? 32764 : 4096), \"the kernels' parameters (struct Env: every func's buffer, every symbol) exceed CUDA's limit: fewer funcs computed at root, or a newer CUDA\");\n#endif"
        );
        s
    }

    /// The names a kernel reads, bound from `env` (and the host loops
    /// around it).
    fn unpack(&self) -> String {
        let p = self.p();
        let mut s = String::from("  const int64_t* __s = env.s; (void)__s;\n");
        for (i, input) in p.inputs.iter().enumerate() {
            let _ = write!(
                s,
                "  const {}* __in{i} = env.in{i}; (void)__in{i};",
                c_type(input.ty)
            );
            for d in 0..input.dims {
                let _ = write!(
                    s,
                    " const int64_t __in{i}_min{d} = env.in{i}_min[{d}]; const int64_t __in{i}_stride{d} = env.in{i}_stride[{d}]; const int32_t {} = env.in{i}_ext[{d}]; (void)__in{i}_min{d}; (void)__in{i}_stride{d}; (void){};",
                    names::input_extent(i, d),
                    names::input_extent(i, d)
                );
            }
            s += "\n";
        }
        for (i, param) in p.params.iter().enumerate() {
            let _ = writeln!(
                s,
                "  const {} {} = env.p{i}; (void){};",
                c_type(param.ty),
                names::param(i),
                names::param(i)
            );
        }
        for (f, func) in p.funcs.iter().enumerate() {
            let _ = write!(
                s,
                "  {}* __f{f} = env.f{f}; (void)__f{f};",
                buffer_type(func.ty)
            );
            for d in 0..func.dims() {
                let _ = write!(
                    s,
                    " const int64_t __f{f}_min{d} = env.f{f}_min[{d}]; const int64_t __f{f}_stride{d} = env.f{f}_stride[{d}]; (void)__f{f}_min{d}; (void)__f{f}_stride{d};"
                );
            }
            s += "\n";
        }
        for k in 0..self.l.local_syms {
            let q = self.n_global() + k;
            let _ = writeln!(s, "  const int64_t __q{q} = env.q[{k}]; (void)__q{q};");
        }
        for (k, v) in self.host_loops.iter().enumerate() {
            let _ = writeln!(s, "  const int64_t {} = env.l[{k}];", names::loop_var(v));
        }
        s
    }

    /// The launcher's body from the lowered statements.
    fn launcher(&mut self) -> Result<(), Unsupported> {
        let p = self.p().clone();
        let mut h = String::new();
        let _ = writeln!(
            h,
            "extern \"C\" int pipeline_{}_cuda(const int64_t* syms, const void* const* inputs, const int64_t* input_dims, const void* const* params, void* const* outputs, const int64_t* output_dims, int on_device) {{",
            self.name
        );
        let _ = writeln!(
            h,
            "  using namespace pipeline_{};\n  Env env;\n  memset(&env, 0, sizeof env);\n  cudaError_t err = cudaSuccess;\n  void* owned[{}] = {{0}}; int n_owned = 0;\n  {{",
            self.name,
            p.inputs.len() + p.outputs.len() + p.funcs.len() + 1
        );
        // Everything up to `done:` is in that block, so that no `goto`
        // jumps over an initialization in the scope of the label.
        // Every buffer below PL_NARROW_LIMIT elements so far: kernels with
        // 32-bit offsets.
        h += "  bool narrow = true;\n";
        // The symbols on the device, and on the host as `__s`.
        let n = self.n_global().max(1);
        let _ = writeln!(
            h,
            "  const int64_t* __s = syms;\n  {{ void* d = 0; if ((err = pl::device_alloc(&d, {n} * 8)) != cudaSuccess) goto done; owned[n_owned++] = d; if ((err = cudaMemcpy(d, syms, {} * 8, cudaMemcpyHostToDevice)) != cudaSuccess) goto done; env.s = (const int64_t*)d; }}",
            self.n_global()
        );
        // Inputs: the span of each, copied as it lies (strides kept).
        let mut dim = 0;
        for (i, input) in p.inputs.iter().enumerate() {
            let ty = c_type(input.ty);
            let _ = writeln!(h, "  {{ int64_t span = 1;");
            for d in 0..input.dims {
                let k = 3 * (dim + d);
                let _ = writeln!(
                    h,
                    "    const int64_t __in{i}_min{d} = input_dims[{k}]; const int32_t {} = (int32_t)input_dims[{}]; const int64_t __in{i}_stride{d} = input_dims[{}];\n    env.in{i}_min[{d}] = __in{i}_min{d}; env.in{i}_ext[{d}] = {}; env.in{i}_stride[{d}] = __in{i}_stride{d};\n    if ({} <= 0) span = 0; else if (span > 0) span += ({} - 1) * __in{i}_stride{d};",
                    names::input_extent(i, d),
                    k + 1,
                    k + 2,
                    names::input_extent(i, d),
                    names::input_extent(i, d),
                    names::input_extent(i, d)
                );
            }
            let _ = writeln!(
                h,
                "    if (span > PL_NARROW_LIMIT) narrow = false;\n    if (on_device) env.in{i} = (const {ty}*)inputs[{i}];\n    else {{\n      void* d = 0; if ((err = pl::device_alloc(&d, span * sizeof({ty}))) != cudaSuccess) goto done; owned[n_owned++] = d;\n      if ((err = cudaMemcpy(d, inputs[{i}], span * sizeof({ty}), cudaMemcpyHostToDevice)) != cudaSuccess) goto done;\n      env.in{i} = (const {ty}*)d;\n    }}\n  }}"
            );
            dim += input.dims;
        }
        // The host's copies of the bounds names the host code reads.
        dim = 0;
        for (i, input) in p.inputs.iter().enumerate() {
            for d in 0..input.dims {
                let k = 3 * (dim + d);
                let _ = writeln!(
                    h,
                    "  const int64_t __in{i}_min{d} = input_dims[{k}]; const int32_t {} = (int32_t)input_dims[{}]; (void)__in{i}_min{d}; (void){};",
                    names::input_extent(i, d),
                    k + 1,
                    names::input_extent(i, d)
                );
            }
            dim += input.dims;
        }
        for (i, param) in p.params.iter().enumerate() {
            let ty = c_type(param.ty);
            let _ = writeln!(
                h,
                "  {ty} {}; memcpy(&{}, params[{i}], sizeof({ty})); env.p{i} = {};",
                names::param(i),
                names::param(i),
                names::param(i)
            );
        }
        // Outputs: device copies of their spans (copied in first, so that
        // the gaps of a strided output come back as they were).
        dim = 0;
        for (k, &f) in p.outputs.iter().enumerate() {
            let func = &p.funcs[f];
            let ty = buffer_type(func.ty);
            let _ = writeln!(h, "  {ty}* __out{k} = 0; int64_t __out{k}_span = 1;");
            for d in 0..func.dims() {
                let j = 3 * (dim + d);
                let _ = writeln!(
                    h,
                    "  const int64_t __out{k}_min{d} = output_dims[{j}], __out{k}_ext{d} = output_dims[{}], __out{k}_stride{d} = output_dims[{}];\n  if (__out{k}_ext{d} <= 0) __out{k}_span = 0; else if (__out{k}_span > 0) __out{k}_span += (__out{k}_ext{d} - 1) * __out{k}_stride{d};",
                    j + 1,
                    j + 2
                );
            }
            let _ = writeln!(
                h,
                "  if (__out{k}_span > PL_NARROW_LIMIT) narrow = false;\n  if (on_device) __out{k} = ({ty}*)outputs[{k}];\n  else {{ void* d = 0; if ((err = pl::device_alloc(&d, __out{k}_span * sizeof({ty}))) != cudaSuccess) goto done; owned[n_owned++] = d; __out{k} = ({ty}*)d;\n    if ((err = cudaMemcpy(d, outputs[{k}], __out{k}_span * sizeof({ty}), cudaMemcpyHostToDevice)) != cudaSuccess) goto done; }}"
            );
            if writes_output_directly(&p, f) {
                let _ = writeln!(h, "  env.f{f} = __out{k};");
                for d in 0..func.dims() {
                    let _ = writeln!(
                        h,
                        "  env.f{f}_min[{d}] = __out{k}_min{d}; env.f{f}_stride[{d}] = __out{k}_stride{d};"
                    );
                }
            }
            dim += func.dims();
        }
        h += "  {\n";
        let body = self.l.body.clone();
        self.host_stmt(&body, &mut h, 2)?;
        h += "  }\n";
        // The outputs back (which waits for the kernels), or a wait for
        // the kernels, whose errors it reports.
        h += "  if (on_device) {\n    if ((err = cudaDeviceSynchronize()) != cudaSuccess) goto done;\n  } else {\n";
        for (k, &f) in p.outputs.iter().enumerate() {
            let ty = buffer_type(p.funcs[f].ty);
            let _ = writeln!(
                h,
                "    if ((err = cudaMemcpy(outputs[{k}], __out{k}, __out{k}_span * sizeof({ty}), cudaMemcpyDeviceToHost)) != cudaSuccess) goto done;"
            );
        }
        h += "  }\n";
        h += "  }\ndone:\n  while (n_owned > 0) pl::device_release(owned[--n_owned]);\n  return (int)err;\n}\n";
        self.host = h;
        Ok(())
    }

    /// Host code for `s`, at `depth` of indentation.
    fn host_stmt(&mut self, s: &Stmt, h: &mut String, depth: usize) -> Result<(), Unsupported> {
        let pad = "  ".repeat(depth);
        match s {
            Stmt::Block(stmts) => {
                for s in stmts {
                    self.host_stmt(s, h, depth)?;
                }
            }
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } => {
                let f = *func;
                let ty = buffer_type(self.p().funcs[f].ty);
                let _ = writeln!(h, "{pad}{{ int64_t n = 1;");
                let layout = self.layout(f, region, fold, "n", |d| {
                    (
                        format!("env.f{f}_min[{d}]"),
                        format!("env.f{f}_stride[{d}]"),
                    )
                });
                let _ = write!(h, "{}", indent(&layout, &format!("{pad}  ")));
                let _ = writeln!(
                    h,
                    "{pad}  if (n > PL_NARROW_LIMIT) narrow = false;\n{pad}  void* d = 0; if ((err = pl::device_alloc(&d, n * sizeof({ty}))) != cudaSuccess) goto done; owned[n_owned++] = d; env.f{f} = ({ty}*)d;\n{pad}}}"
                );
                self.host_stmt(body, h, depth)?;
                // Released where its scope ends (it may be inside a host
                // loop): allocations nest, so it is the last one owned.
                let _ = writeln!(
                    h,
                    "{pad}pl::device_release(owned[--n_owned]); env.f{f} = 0;"
                );
            }
            Stmt::LetSym { sym, value, body } => {
                self.bind(s);
                let v = self.exprs(None).expr(value);
                let k = sym - self.n_global();
                let _ = writeln!(
                    h,
                    "{pad}{{ const int64_t __q{sym} = {v}; env.q[{k}] = __q{sym};"
                );
                self.host_stmt(body, h, depth + 1)?;
                let _ = writeln!(h, "{pad}}}");
            }
            Stmt::If { cond, body } if has_gpu_loop(body) => {
                let c = self.exprs(None).expr(cond);
                let _ = writeln!(h, "{pad}if ({c}) {{");
                self.host_stmt(body, h, depth + 1)?;
                let _ = writeln!(h, "{pad}}}");
            }
            Stmt::For {
                var,
                min,
                max,
                kind,
                body,
                ..
            } if !kind.is_gpu() && has_gpu_loop(body) => {
                if self.host_loops.len() == MAX_HOST_LOOPS {
                    return Err(Unsupported::from(format!(
                        "more than {MAX_HOST_LOOPS} host loops around a kernel"
                    )));
                }
                let e = self.exprs(None);
                let v = names::loop_var(var);
                let k = self.host_loops.len();
                let _ = writeln!(
                    h,
                    "{pad}for (int64_t {v} = {}; {v} <= {}; {v}++) {{\n{pad}  env.l[{k}] = {v};",
                    e.expr(min),
                    e.expr(max)
                );
                self.host_loops.push(var.clone());
                self.host_stmt(body, h, depth + 1)?;
                self.host_loops.pop();
                let _ = writeln!(h, "{pad}}}");
            }
            Stmt::For { kind, .. } if kind.is_gpu() => self.gpu_kernel(s, h, &pad)?,
            Stmt::CopyToOutput { func, output } => self.copy_kernel(*func, *output, h, &pad),
            // Anything else without GPU loops: one thread.
            _ => {
                let k = self.count;
                self.count += 1;
                let mut body = String::new();
                self.device_stmt(s, &mut body, 2)?;
                let _ = writeln!(
                    self.kernels,
                    "template <typename I>\n__global__ void k{k}(Env env) {{\n{}{body}}}",
                    self.unpack()
                );
                let _ = writeln!(
                    h,
                    "{pad}{}\n{pad}if ((err = cudaGetLastError()) != cudaSuccess) goto done;",
                    self.launch(k, "dim3(1)", "dim3(1)")
                );
            }
        }
        Ok(())
    }

    /// The kernel of the nest of GPU loops `s`, and its launch.
    fn gpu_kernel(&mut self, s: &Stmt, h: &mut String, pad: &str) -> Result<(), Unsupported> {
        let k = self.count;
        self.count += 1;
        let mut nest = Nest::default();
        let mut code = String::new();
        self.nest(s, &mut nest, &mut code, 1)?;
        let threads_total: i128 = nest.block.iter().map(|b| b.1).product();
        if threads_total > MAX_THREADS {
            return Err(of_loops(nest.func, format!(
                "a kernel of `{}` has {threads_total} threads a block; a CUDA block has at most {MAX_THREADS}",
                nest.func_name
            )));
        }
        // Axes: the innermost loop of each kind is x.
        let axis = |j: usize, n: usize| ["x", "y", "z"][n - 1 - j];
        if nest.grid.len() > 3 || nest.block.len() > 3 {
            return Err(of_loops(
                nest.func,
                format!(
                    "a kernel of `{}` has more than three block or thread dimensions",
                    nest.func_name
                ),
            ));
        }
        let (nb, nt) = (nest.grid.len(), nest.block.len());
        for j in 0..nb {
            code = code.replace(
                &format!("blockIdx.@{j}"),
                &format!("blockIdx.{}", axis(j, nb)),
            );
        }
        for j in 0..nt {
            code = code.replace(
                &format!("threadIdx.@{j}"),
                &format!("threadIdx.{}", axis(j, nt)),
            );
        }
        let _ = writeln!(
            self.kernels,
            "template <typename I>\n__global__ void k{k}(Env env) {{\n{}{code}}}",
            self.unpack()
        );
        // The launch: the grid from the block loops' bounds (nothing to do
        // when one is empty), the block from the thread loops' widths.
        let mut grid = ["1".to_string(), "1".to_string(), "1".to_string()];
        let mut block = ["1".to_string(), "1".to_string(), "1".to_string()];
        let _ = writeln!(h, "{pad}{{");
        let mut nonempty = vec!["true".to_string()];
        for (j, (lo, hi)) in nest.grid.iter().enumerate() {
            let a = axis(j, nb);
            let limit = if a == "x" { "2147483647" } else { "65535" };
            let _ = writeln!(
                h,
                "{pad}  const int64_t g{j} = ({hi}) - ({lo}) + 1;\n{pad}  if (g{j} > {limit}) {{ err = cudaErrorInvalidConfiguration; goto done; }}"
            );
            grid[["x", "y", "z"].iter().position(|x| *x == a).unwrap()] = format!("(unsigned)g{j}");
            nonempty.push(format!("g{j} > 0"));
        }
        for (j, (_, w)) in nest.block.iter().enumerate() {
            let a = axis(j, nt);
            block[["x", "y", "z"].iter().position(|x| *x == a).unwrap()] = w.to_string();
        }
        let _ = writeln!(
            h,
            "{pad}  if ({}) {{ {} if ((err = cudaGetLastError()) != cudaSuccess) goto done; }}\n{pad}}}",
            nonempty.join(" && "),
            self.launch(
                k,
                &format!("dim3({})", grid.join(", ")),
                &format!("dim3({})", block.join(", "))
            )
        );
        Ok(())
    }

    /// Device code of a kernel's nest from `s` down to the statements
    /// without GPU loops: block and thread loops bind their variables from
    /// `blockIdx` and `threadIdx` (axes numbered outermost first, `@j`,
    /// fixed once all are known), guarded by their bounds; serial loops,
    /// bindings and conditions on the way run in every thread.
    ///
    /// Code inside the blocks and outside the kernel func's thread loops
    /// is the block's: every thread runs it alike. There, a nest of thread
    /// loops is a phase (`PL_PHASE`), and so is each stage of another func
    /// computed per block, its points shared out among the block's threads
    /// ([`Program::shared_out`]); such a func's buffer is in shared memory
    /// (its size bounded by a constant), and each phase in its scope ends
    /// at a barrier, so that readers see its points and the next writers
    /// wait for the readers.
    fn nest(
        &mut self,
        s: &Stmt,
        nest: &mut Nest,
        code: &mut String,
        depth: usize,
    ) -> Result<(), Unsupported> {
        if !has_gpu_loop(s) {
            return if nest.in_phase {
                self.device_stmt(s, code, depth)
            } else {
                self.shared_out(s, code, depth)
            };
        }
        let pad = "  ".repeat(depth);
        match s {
            Stmt::For {
                var,
                min,
                max,
                kind,
                body,
                ..
            } => {
                if nest.func.is_none() {
                    nest.func = Some(var.func);
                    nest.func_name = self.p().funcs[var.func].name.clone();
                }
                // Thread loops of a func computed per block: that func's
                // stage is the block's to share out.
                if !nest.in_phase && nest.func != Some(var.func) && *kind != LoopKind::GpuBlock {
                    return self.shared_out(s, code, depth);
                }
                let e = self.exprs(None);
                let v = names::loop_var(var);
                let (lo, hi) = (e.expr(min), e.expr(max));
                let mut opened = false;
                match kind {
                    LoopKind::GpuBlock => {
                        let bound = &nest.bound;
                        let inner = |x: &Expr| x.any(&mut |n| matches!(&n.kind, ExprKind::Loop(l) if bound.contains(l)));
                        if inner(min) || inner(max) {
                            return Err(of_loops(var.func, format!(
                                "the blocks of loop `{}` of `{}` depend on a loop of the kernel: make the outer loops of its tiles the blocks",
                                var.name, nest.func_name
                            )));
                        }
                        if nest.in_phase || nest.in_sequence {
                            return Err(several(nest));
                        }
                        let j = nest.grid.len();
                        nest.grid.push((lo.clone(), hi.clone()));
                        let _ = writeln!(
                            code,
                            "{pad}const int64_t {v} = ({lo}) + (int64_t)blockIdx.@{j};\n{pad}if ({v} <= ({hi})) {{"
                        );
                    }
                    LoopKind::GpuThread => {
                        let width = match (lanes_of(min, max), min.as_int(), max.as_int()) {
                            (Some((_, w, _)), ..) => w as i128,
                            (None, Some(a), Some(b)) => b - a + 1,
                            _ => {
                                return Err(of_loops(var.func, format!(
                                    "the threads of loop `{}` of `{}` have no constant extent: split it (`gpu_tile`) and put the inner loop on threads",
                                    var.name, nest.func_name
                                )))
                            }
                        };
                        let width = width.max(1);
                        // The block's shape is its first phase's; a later
                        // phase of the same func's threads must fit it.
                        let j = nest.thread_depth;
                        match nest.block.get(j) {
                            None => nest.block.push((v.clone(), width)),
                            Some(&(_, w)) if w == width => {}
                            Some(_) => return Err(several(nest)),
                        }
                        if !nest.in_phase {
                            let _ = writeln!(code, "{pad}PL_PHASE {{");
                            nest.in_phase = true;
                            opened = true;
                        }
                        nest.thread_depth += 1;
                        let _ = writeln!(
                            code,
                            "{pad}const int64_t {v} = ({lo}) + (int64_t)threadIdx.@{j};\n{pad}if ({v} <= ({hi})) {{"
                        );
                    }
                    _ => {
                        // A serial loop around GPU loops: every thread runs it.
                        let _ = writeln!(code, "{pad}for (int64_t {v} = {lo}; {v} <= {hi}; {v}++) {{");
                    }
                }
                nest.bound.push(var.clone());
                self.nest(body, nest, code, depth + 1)?;
                let _ = writeln!(code, "{pad}}}");
                if *kind == LoopKind::GpuThread {
                    nest.thread_depth -= 1;
                }
                if opened {
                    let _ = writeln!(code, "{pad}}}");
                    nest.in_phase = false;
                    self.barrier(nest, code, &pad);
                }
            }
            Stmt::LetSym { .. } | Stmt::LetCoord { .. } | Stmt::If { .. } => {
                self.bind(s);
                let (open, body) = self.scope(s).expect("a binding or a condition");
                let _ = writeln!(code, "{pad}{open}");
                self.nest(body, nest, code, depth + 1)?;
                let _ = writeln!(code, "{pad}}}");
            }
            Stmt::Block(stmts) => {
                let before = nest.in_sequence;
                nest.in_sequence |= stmts.len() > 1;
                for s in stmts {
                    self.nest(s, nest, code, depth)?;
                }
                nest.in_sequence = before;
            }
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } if !nest.in_phase => {
                // A func computed per block: in shared memory, as large as
                // the most any block computes (checked: a bound wrong by
                // mistake stops the kernel, never writes past the array).
                let f = *func;
                let ty = self.p().funcs[f].ty;
                let (c_ty, elem) = (buffer_type(ty), (ty.bits().max(8) / 8) as i128);
                let Some(capacity) = self.capacity(region, fold) else {
                    let d = (0..region.len())
                        .find(|&d| self.capacity(&region[d..=d], &fold[d..=d]).is_none())
                        .unwrap_or(0);
                    return Err(placed(f, format!(
                        "`{}` is computed per block of `{}`, in shared memory, but no constant bounds how much of its dimension {d} a block computes: compute it at the blocks of tiles of constant size (`gpu_tile`)",
                        self.p().funcs[f].name,
                        nest.func_name
                    )));
                };
                nest.shared_bytes += capacity * elem;
                if nest.shared_bytes > MAX_SHARED_BYTES {
                    let others = if nest.shared_bytes > capacity * elem {
                        format!(", {} with the kernel's other funcs per block", nest.shared_bytes)
                    } else {
                        String::new()
                    };
                    return Err(placed(f, format!(
                        "`{}` is computed per block of `{}` in {} bytes of shared memory{others}; a block has at most {MAX_SHARED_BYTES} (48 KiB): make the tiles smaller",
                        self.p().funcs[f].name,
                        nest.func_name,
                        capacity * elem,
                    )));
                }
                *code += &self.kernel_layout(f, region, fold, &pad);
                let _ = writeln!(
                    code,
                    "{pad}  if (__n{f} > {capacity}) PL_TRAP();\n{pad}  __shared__ {c_ty} __sh{f}[{capacity}];\n{pad}  {c_ty}* __f{f} = __sh{f};"
                );
                nest.shared_scopes += 1;
                self.nest(body, nest, code, depth + 1)?;
                nest.shared_scopes -= 1;
                let _ = writeln!(code, "{pad}}}");
            }
            Stmt::Allocate { func, .. } => {
                return Err(placed(*func, format!(
                    "`{}` is computed inside the threads of `{}` but outside some of them: compute it at the blocks, at the innermost thread loop, or inside it",
                    self.p().funcs[*func].name,
                    nest.func_name
                )))
            }
            _ => return Err(several(nest)),
        }
        Ok(())
    }

    /// A barrier after a phase of thread loops, where shared memory is in
    /// scope.
    fn barrier(&self, nest: &Nest, code: &mut String, pad: &str) {
        if nest.shared_scopes > 0 {
            let _ = writeln!(code, "{pad}__syncthreads();");
        }
    }

    /// Records the value of a local symbol `s` binds, in terms of loops
    /// and global symbols.
    fn bind(&mut self, s: &Stmt) {
        if let Stmt::LetSym { sym, value, .. } = s {
            let value = self.resolved(value);
            self.sym_values.insert(*sym, value);
        }
    }

    /// `e` with the local symbols bound around it replaced by their values.
    fn resolved(&self, e: &Expr) -> Expr {
        e.rewrite(&mut |n| match &n.kind {
            ExprKind::Sym(s) => self.sym_values.get(s).cloned().unwrap_or(n),
            _ => n,
        })
    }

    /// A constant bound of the elements of a buffer over `region` (folded
    /// as `fold` says) wherever the loops around are, if there is one.
    fn capacity(&self, region: &[(Expr, Expr)], fold: &[Option<i64>]) -> Option<i128> {
        let mut n: i128 = 1;
        for (d, (lo, hi)) in region.iter().enumerate() {
            let bound = match fold[d] {
                Some(factor) => factor as i128,
                None => self.extent_bound(lo, hi)?,
            };
            n = n.saturating_mul(bound.max(1));
        }
        Some(n)
    }

    /// A constant bound of the extent `hi - lo + 1` wherever the loops
    /// around are: `min(a + 31, m) - max(a, n) + 1` is at most 32.
    fn extent_bound(&self, lo: &Expr, hi: &Expr) -> Option<i128> {
        fn operands<'e>(e: &'e Expr, op: BinOp, out: &mut Vec<&'e Expr>) {
            match &e.kind {
                ExprKind::Binary(o, a, b) if *o == op => {
                    operands(a, op, out);
                    operands(b, op, out);
                }
                _ => out.push(e),
            }
        }
        let (lo, hi) = (simplify(&self.resolved(lo)), simplify(&self.resolved(hi)));
        let (mut highs, mut lows) = (Vec::new(), Vec::new());
        operands(&hi, BinOp::Min, &mut highs);
        operands(&lo, BinOp::Max, &mut lows);
        let mut best: Option<i128> = None;
        for h in &highs {
            for l in &lows {
                let extent = Expr::binary(
                    BinOp::Add,
                    Expr::binary(BinOp::Sub, (*h).clone(), (*l).clone()),
                    Expr::i64(1),
                );
                if let Some(c) = simplify(&extent).as_int() {
                    best = Some(best.map_or(c, |b| b.min(c)));
                }
            }
        }
        best.map(|b| b.max(0))
    }

    /// A stage at the block level of a kernel (a func computed per block,
    /// or the kernel's own code outside thread loops): one phase whose
    /// points the block's threads share out, consecutive threads at
    /// consecutive points of the innermost loop. Only a pure definition's
    /// loops are shared out, those of its outer loops whose bounds do not
    /// depend on each other; what is inside runs in the thread, and a stage
    /// with nothing to share (an update, whose points may depend on each
    /// other) runs in the block's first thread.
    fn shared_out(&mut self, s: &Stmt, code: &mut String, depth: usize) -> Result<(), Unsupported> {
        let pad = "  ".repeat(depth);
        // Bindings and conditions first: every thread evaluates them alike.
        if let Some((open, body)) = self.scope(s) {
            self.bind(s);
            let _ = writeln!(code, "{pad}{open}");
            self.shared_out(body, code, depth + 1)?;
            let _ = writeln!(code, "{pad}}}");
            return Ok(());
        }
        if let Stmt::Block(stmts) = s {
            for s in stmts {
                self.shared_out(s, code, depth)?;
            }
            return Ok(());
        }
        let mut loops: Vec<(&LoopVar, &Expr, &Expr)> = Vec::new();
        let mut body = s;
        if !has_update(s) {
            while let Stmt::For {
                var,
                min,
                max,
                kind,
                body: inner,
                ..
            } = body
            {
                let outer = |x: &Expr| {
                    x.any(&mut |n| matches!(&n.kind, ExprKind::Loop(l) if loops.iter().any(|(v, _, _)| *v == l)))
                };
                if !matches!(
                    kind,
                    LoopKind::Serial | LoopKind::GpuThread | LoopKind::Parallel
                ) || outer(min)
                    || outer(max)
                {
                    break;
                }
                loops.push((var, min, max));
                body = inner;
            }
        }
        let _ = writeln!(
            code,
            "{pad}PL_PHASE {{\n{pad}  const int64_t __tid = threadIdx.x + (int64_t)blockDim.x * (threadIdx.y + (int64_t)blockDim.y * threadIdx.z);"
        );
        self.threads_serial = true;
        if loops.is_empty() {
            let _ = writeln!(code, "{pad}  if (__tid == 0) {{");
            self.device_stmt(s, code, depth + 2)?;
            let _ = writeln!(code, "{pad}  }}");
        } else {
            let e = self.exprs(None);
            let mut total = Vec::new();
            for (k, (_, lo, hi)) in loops.iter().enumerate() {
                let _ = writeln!(
                    code,
                    "{pad}  const int64_t __plo{k} = {}, __pext{k} = ({}) - __plo{k} + 1;",
                    e.expr(lo),
                    e.expr(hi)
                );
                total.push(format!("(__pext{k} > 0 ? __pext{k} : 0)"));
            }
            let _ = writeln!(
                code,
                "{pad}  const int64_t __threads = (int64_t)blockDim.x * blockDim.y * blockDim.z, __points = {};\n{pad}  for (int64_t __i = __tid; __i < __points; __i += __threads) {{\n{pad}    int64_t __r = __i; (void)__r;",
                total.join(" * ")
            );
            for (k, (var, _, _)) in loops.iter().enumerate().rev() {
                let v = names::loop_var(var);
                if k > 0 {
                    let _ = writeln!(
                        code,
                        "{pad}    const int64_t {v} = __plo{k} + __r % __pext{k}; __r /= __pext{k};"
                    );
                } else {
                    let _ = writeln!(code, "{pad}    const int64_t {v} = __plo0 + __r;");
                }
            }
            self.device_stmt(body, code, depth + 2)?;
            let _ = writeln!(code, "{pad}  }}");
        }
        self.threads_serial = false;
        // The next phase may read what this one wrote, or write what
        // it read.
        let _ = writeln!(code, "{pad}}}\n{pad}__syncthreads();");
        Ok(())
    }

    /// A kernel copying func `f`'s buffer into output `k` over the
    /// output's region, one point a thread.
    fn copy_kernel(&mut self, f: FuncId, k: usize, h: &mut String, pad: &str) {
        let n = self.p().funcs[f].dims();
        let ty = buffer_type(self.p().funcs[f].ty);
        let kk = self.count;
        self.count += 1;
        let mut params = format!("{ty}* out");
        let mut code = String::from("  PL_PHASE {\n  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < total) {\n  int64_t src = 0, dst = 0;\n");
        for d in 0..n {
            let _ = write!(
                params,
                ", int64_t min{d}, int64_t ext{d}, int64_t stride{d}"
            );
            let _ = writeln!(
                code,
                "  {{ const int64_t c = min{d} + i % ext{d}; i /= ext{d}; dst += (c - min{d}) * stride{d}; src += (c - env.f{f}_min[{d}]) * env.f{f}_stride[{d}]; }}"
            );
        }
        let _ = writeln!(
            self.kernels,
            "__global__ void k{kk}(Env env, {params}, int64_t total) {{\n{code}  out[dst] = env.f{f}[src];\n  }}\n  }}\n}}"
        );
        let mut args = format!("__out{k}");
        let mut total = String::from("1");
        for d in 0..n {
            let _ = write!(
                args,
                ", __out{k}_min{d}, __out{k}_ext{d}, __out{k}_stride{d}"
            );
            let _ = write!(total, " * __out{k}_ext{d}");
        }
        let _ = writeln!(
            h,
            "{pad}{{ const int64_t total = {total};\n{pad}  if (total > 0) {{ PL_LAUNCH(k{kk}, dim3((unsigned)((total + 255) / 256)), dim3(256), env, {args}, total); if ((err = cudaGetLastError()) != cudaSuccess) goto done; }} }}"
        );
    }

    /// The opening line of a binding or condition `s` (closed by `}`) and
    /// the statement inside it; `None` for other statements.
    fn scope<'s>(&self, s: &'s Stmt) -> Option<(String, &'s Stmt)> {
        let e = self.exprs(None);
        Some(match s {
            Stmt::LetSym { sym, value, body } => (
                format!("{{ const int64_t __q{sym} = {};", e.expr(value)),
                &**body,
            ),
            Stmt::LetCoord { coord, value, body } => (
                format!(
                    "{{ const int32_t {} = (int32_t)({});",
                    names::coord(*coord),
                    e.expr(value)
                ),
                &**body,
            ),
            Stmt::If { cond, body } => (format!("if ({}) {{", e.expr(cond)), &**body),
            _ => return None,
        })
    }

    /// Func `f`'s buffer over `region`, dense with dimension 0 fastest (a
    /// folded dimension from 0): per dimension, its first coordinate and
    /// its stride assigned to what `names(d)` gives (a field, or a
    /// declaration), and the element count multiplied into `count`.
    fn layout(
        &mut self,
        f: FuncId,
        region: &[(Expr, Expr)],
        fold: &[Option<i64>],
        count: &str,
        names: impl Fn(usize) -> (String, String),
    ) -> String {
        self.folds[f] = fold.to_vec();
        let e = self.exprs(None);
        let mut out = String::new();
        for (d, (lo, hi)) in region.iter().enumerate() {
            let (min, stride) = names(d);
            let _ = writeln!(
                out,
                "const int64_t __lo{f}_{d} = {}, __hi{f}_{d} = {}; {min} = __lo{f}_{d}; {stride} = {count}; {count} *= __hi{f}_{d} >= __lo{f}_{d} ? __hi{f}_{d} - __lo{f}_{d} + 1 : 0;",
                e.expr(lo),
                e.expr(hi)
            );
        }
        out
    }

    /// Opens the scope of func `f`'s buffer inside a kernel (closed by
    /// `}`): its layout over `region`, bound as the names loads and stores
    /// read, and its element count `__n{f}`.
    fn kernel_layout(
        &mut self,
        f: FuncId,
        region: &[(Expr, Expr)],
        fold: &[Option<i64>],
        pad: &str,
    ) -> String {
        let layout = self.layout(f, region, fold, &format!("__n{f}"), |d| {
            (
                format!("const int64_t __f{f}_min{d}"),
                format!("const int64_t __f{f}_stride{d}"),
            )
        });
        format!(
            "{pad}{{ int64_t __n{f} = 1;\n{}",
            indent(&layout, &format!("{pad}  "))
        )
    }

    /// Device code for `s` inside a kernel.
    fn device_stmt(&mut self, s: &Stmt, out: &mut String, depth: usize) -> Result<(), Unsupported> {
        let pad = "  ".repeat(depth);
        match s {
            Stmt::Block(stmts) => {
                for s in stmts {
                    self.device_stmt(s, out, depth)?;
                }
            }
            Stmt::For {
                var,
                min,
                max,
                kind,
                body,
                ..
            } => {
                if kind.is_gpu() && !(self.threads_serial && *kind == LoopKind::GpuThread) {
                    return Err("a GPU loop inside a kernel's serial code".into());
                }
                let e = self.exprs(None);
                let v = names::loop_var(var);
                if matches!(kind, LoopKind::Unrolled | LoopKind::Vectorized) {
                    let _ = writeln!(out, "{pad}#pragma unroll");
                }
                let _ = writeln!(
                    out,
                    "{pad}for (int64_t {v} = {}; {v} <= {}; {v}++) {{",
                    e.expr(min),
                    e.expr(max)
                );
                self.device_stmt(body, out, depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::LetSym { .. } | Stmt::LetCoord { .. } | Stmt::If { .. } => {
                self.bind(s);
                let (open, body) = self.scope(s).expect("a binding or a condition");
                let _ = writeln!(out, "{pad}{open}");
                self.device_stmt(body, out, depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                let e = self.exprs(Some((*func, *update)));
                let at = e.offset(Source::Func(*func), args);
                let mut v = e.expr(value);
                if self.p().funcs[*func].ty == Type::Bool {
                    v = format!("(uint8_t)({v})");
                }
                let _ = writeln!(out, "{pad}__f{func}[{at}] = {v};");
            }
            // A func computed inside a kernel: a buffer of each thread's
            // own, a local array where a constant bounds it (registers or
            // the cached local memory, as Halide's), else from the device
            // heap.
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } => {
                let f = *func;
                let ty = self.p().funcs[f].ty;
                let c_ty = buffer_type(ty);
                let elem = (ty.bits().max(8) / 8) as i128;
                let local = self
                    .capacity(region, fold)
                    .filter(|&n| n * elem <= MAX_LOCAL_BYTES);
                *out += &self.kernel_layout(f, region, fold, &pad);
                match local {
                    // Checked as shared memory is: a wrong bound stops the
                    // kernel.
                    Some(n) => {
                        let _ = writeln!(
                            out,
                            "{pad}  if (__n{f} > {n}) PL_TRAP();\n{pad}  {c_ty} __loc{f}[{n}];\n{pad}  {c_ty}* __f{f} = __loc{f};\n{pad}  {{"
                        );
                        self.device_stmt(body, out, depth + 2)?;
                        let _ = writeln!(out, "{pad}  }}\n{pad}}}");
                    }
                    // Out of device heap, the kernel stops (the launch
                    // fails): never a result computed from a missing buffer.
                    None => {
                        let _ = writeln!(
                            out,
                            "{pad}  {c_ty}* __f{f} = ({c_ty}*)malloc((__n{f} > 0 ? __n{f} : 1) * sizeof({c_ty}));\n{pad}  if (!__f{f}) PL_TRAP();\n{pad}  {{"
                        );
                        self.device_stmt(body, out, depth + 2)?;
                        let _ = writeln!(out, "{pad}  }}\n{pad}  free(__f{f});\n{pad}}}");
                    }
                }
            }
            Stmt::CopyToOutput { .. } => {
                return Err("a copy into an output inside a kernel".into());
            }
        }
        Ok(())
    }
}
