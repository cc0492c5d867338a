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
use crate::analysis::lanes::lanes_of;
use crate::analysis::simplify::simplify;
use crate::codegen::names;
use crate::ir::*;
use crate::lower::loops::writes_output_directly;
use crate::schedule::LoopKind;
use crate::Lowered;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

mod kernel;
mod lanes;
use kernel::Nest;

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
    let hash = crate::schedule::cache::fnv1a(l.text().as_bytes());
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
        in_kernel: false,
        host_syms: Vec::new(),
        thread_bounds: Vec::new(),
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
    /// The values of the local symbols bound so far, as bound (for the
    /// constant bounds of shared and local buffers).
    sym_values: HashMap<SymId, Expr>,
    /// Whether a thread loop in serial code runs serially (it is part of a
    /// stage the block's threads share out among themselves).
    threads_serial: bool,
    /// Whether kernel code is being emitted: index arithmetic is then in
    /// the kernel's index type `I`.
    in_kernel: bool,
    /// The local symbols the host's statements bind around the statement
    /// being emitted.
    host_syms: Vec<SymId>,
    /// The thread loops around the device code being emitted, and the
    /// serial loops inside them, each with its largest value (their
    /// guards hold inside).
    thread_bounds: Vec<(LoopVar, Expr)>,
}

/// The C++ type a func's buffer stores (`bool` as a byte).
fn buffer_type(t: Type) -> &'static str {
    match t {
        Type::Bool => "uint8_t",
        t => c_type(t),
    }
}

/// `text`'s lines, each after `pad`.
fn indent(text: &str, pad: &str) -> String {
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

fn has_gpu_loop(s: &Stmt) -> bool {
    matches!(s, Stmt::For { kind, .. } if kind.is_gpu()) || s.children().iter().any(has_gpu_loop)
}

impl Program<'_> {
    fn p(&self) -> &Pipeline {
        &self.l.pipeline
    }

    /// The launch of kernel `k` (the statement `s`): with 32-bit
    /// offsets and index arithmetic, as Halide's kernels compute them,
    /// where every buffer so far has fewer than `PL_NARROW_LIMIT` (2^31)
    /// elements (`narrow`, which the launcher keeps) and every symbol and
    /// host loop the kernel reads passes `pl::index_narrow` (within 2^24 of
    /// 0, or one of the bounds' infinities); else with 64-bit
    /// ones, or, without large buffers, an error.
    fn launch(&self, k: usize, s: &Stmt, grid: &str, block: &str) -> String {
        let wide = match self.options.large_buffers {
            true => format!("PL_LAUNCH((k{k}<int64_t, false>), {grid}, {block}, env);"),
            false => format!("{{ err = (cudaError_t){TOO_LARGE}; goto done; }}"),
        };
        let mut narrow = String::from("narrow");
        for value in self
            .symbols_read(s)
            .into_iter()
            .chain((0..self.host_loops.len()).map(|k| format!("env.l[{k}]")))
        {
            let _ = write!(narrow, " && pl::index_narrow({value})");
        }
        format!("if ({narrow}) {{ if (dense) PL_LAUNCH((k{k}<int32_t, true>), {grid}, {block}, env); else PL_LAUNCH((k{k}<int32_t, false>), {grid}, {block}, env); }} else {wide}")
    }

    /// The host's names of the symbols that statement `s`, a kernel, reads:
    /// `__s[k]` (global) and `__qN` (bound by the host's statements around
    /// it; the kernel's own are computed from these).
    fn symbols_read(&self, s: &Stmt) -> BTreeSet<String> {
        fn walk(s: &Stmt, out: &mut BTreeSet<SymId>) {
            for e in s.own_exprs() {
                e.any(&mut |n| {
                    if let ExprKind::Sym(k) = n.kind {
                        out.insert(k);
                    }
                    false
                });
            }
            s.children().iter().for_each(|c| walk(c, out));
        }
        let mut read = BTreeSet::new();
        walk(s, &mut read);
        read.into_iter()
            .filter_map(|k| match k < self.n_global() {
                true => Some(format!("__s[{k}]")),
                false => self.host_syms.contains(&k).then(|| format!("__q{k}")),
            })
            .collect()
    }

    fn n_global(&self) -> usize {
        self.l.bounds.syms.len()
    }

    fn exprs(&self, stage: Option<(FuncId, Option<usize>)>) -> Exprs<'_> {
        Exprs {
            func: stage.map(|s| s.0),
            update: stage.and_then(|s| s.1),
            index: if self.in_kernel { "I" } else { "int64_t" },
            ..self.host_exprs()
        }
    }

    /// Expressions as the host computes them, in kernel code too (a
    /// kernel's grid).
    fn host_exprs(&self) -> Exprs<'_> {
        Exprs {
            p: self.p(),
            func: None,
            update: None,
            n_global: self.n_global(),
            folds: &self.folds,
            index: "int64_t",
            loads: &[],
        }
    }

    /// `struct Env`: what every kernel reads.
    fn env_struct(&self) -> String {
        let p = self.p();
        // The symbols travel in the parameters (the constant bank, read
        // at once by every thread), not in device memory.
        // Beside each symbol its value for the 32-bit kernels (`pl::sym`).
        let n = self.n_global().max(1);
        let mut s = format!("struct Env {{\n  int64_t s[{n}];\n  int32_t sn[{n}];\n");
        for (i, input) in p.inputs.iter().enumerate() {
            let n = input.dims;
            let _ = writeln!(
                s,
                "  const {}* in{i}; int64_t in{i}_min[{n}]; int64_t in{i}_stride[{n}]; int32_t in{i}_ext[{n}]; int32_t in{i}_last[{n}];",
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
        let q = self.l.local_syms().max(1);
        let _ = writeln!(
            s,
            "  int64_t q[{q}];\n  int32_t qn[{q}];\n  int64_t l[{MAX_HOST_LOOPS}];\n}};"
        );
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
        // The stride of an image's dimension `d` read from `field`: 1 in
        // the kernels for dense images (`D`, where the launcher found
        // every input's and output's dimension 0 at stride 1, or of one
        // point), so that neighbouring points are neighbouring addresses.
        let stride0 = |d: usize, field: String| match d {
            0 => format!("D ? 1 : {field}"),
            _ => field,
        };
        let mut s = String::from(
            "  const int64_t* __s = env.s; (void)__s; const int32_t* __sn = env.sn; (void)__sn;\n",
        );
        for (i, input) in p.inputs.iter().enumerate() {
            let _ = write!(
                s,
                "  const {}* __in{i} = env.in{i}; (void)__in{i};",
                c_type(input.ty)
            );
            for d in 0..input.dims {
                let _ = write!(
                    s,
                    " const int64_t __in{i}_min{d} = env.in{i}_min[{d}]; const int64_t __in{i}_stride{d} = {}; const int32_t {} = env.in{i}_ext[{d}]; const int32_t __in{i}_last{d} = env.in{i}_last[{d}]; (void)__in{i}_min{d}; (void)__in{i}_stride{d}; (void){}; (void)__in{i}_last{d};",
                    stride0(d, format!("env.in{i}_stride[{d}]")),
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
                // A buffer the launcher allocates is dense along dimension
                // 0 (`layout`): a stride the compiler knows, so that
                // neighbouring points are neighbouring addresses.
                let stride = if d == 0 && !p.outputs.contains(&f) {
                    "1".to_string()
                } else {
                    stride0(d, format!("env.f{f}_stride[{d}]"))
                };
                let _ = write!(
                    s,
                    " const int64_t __f{f}_min{d} = env.f{f}_min[{d}]; const int64_t __f{f}_stride{d} = {stride}; (void)__f{f}_min{d}; (void)__f{f}_stride{d};"
                );
            }
            s += "\n";
        }
        for k in 0..self.l.local_syms() {
            let q = self.n_global() + k;
            let _ = writeln!(
                s,
                "  const int64_t __q{q} = env.q[{k}]; (void)__q{q}; const I __qn{q} = pl::pick<I>(env.q[{k}], env.qn[{k}]); (void)__qn{q};"
            );
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
            p.inputs.len() + p.outputs.len() + p.funcs.len()
        );
        // Everything up to `done:` is in that block, so that no `goto`
        // jumps over an initialization in the scope of the label.
        // Every buffer below PL_NARROW_LIMIT elements so far: kernels with
        // 32-bit offsets.
        h += "  bool narrow = true, dense = true;\n";
        // The symbols in the kernels' parameters, and on the host as `__s`.
        let _ = writeln!(
            h,
            "  const int64_t* __s = syms;\n  memcpy(env.s, syms, {n} * 8);\n  for (int k = 0; k < {n}; k++) env.sn[k] = pl::sym<int32_t>(syms[k]);",
            n = self.n_global()
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
                    "    const int64_t __in{i}_min{d} = input_dims[{k}]; const int32_t {} = (int32_t)input_dims[{}]; const int64_t __in{i}_stride{d} = input_dims[{}];\n    env.in{i}_min[{d}] = __in{i}_min{d}; env.in{i}_ext[{d}] = {}; env.in{i}_stride[{d}] = __in{i}_stride{d}; env.in{i}_last[{d}] = pl::last_coord(__in{i}_min{d}, input_dims[{k} + 1]);\n    if ({} <= 0) span = 0; else if (span > 0) span += ({} - 1) * __in{i}_stride{d};{}",
                    names::input_extent(i, d),
                    k + 1,
                    k + 2,
                    names::input_extent(i, d),
                    names::input_extent(i, d),
                    names::input_extent(i, d),
                    if d == 0 {
                        format!(" if ({} > 1 && __in{i}_stride0 != 1) dense = false;", names::input_extent(i, d))
                    } else {
                        String::new()
                    }
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
                    "  const int64_t __out{k}_min{d} = output_dims[{j}], __out{k}_ext{d} = output_dims[{}], __out{k}_stride{d} = output_dims[{}];\n  if (__out{k}_ext{d} <= 0) __out{k}_span = 0; else if (__out{k}_span > 0) __out{k}_span += (__out{k}_ext{d} - 1) * __out{k}_stride{d};{}",
                    j + 1,
                    j + 2,
                    if d == 0 {
                        format!(" if (__out{k}_ext0 > 1 && __out{k}_stride0 != 1) dense = false;")
                    } else {
                        String::new()
                    }
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
                    "{pad}{{ const int64_t __q{sym} = {v}; env.q[{k}] = __q{sym}; env.qn[{k}] = pl::sym<int32_t>(__q{sym});"
                );
                self.host_syms.push(*sym);
                self.host_stmt(body, h, depth + 1)?;
                self.host_syms.pop();
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
                self.in_kernel = true;
                let done = self.device_stmt(s, &mut body, 2);
                self.in_kernel = false;
                done?;
                let _ = writeln!(
                    self.kernels,
                    "template <typename I, bool D>\n__global__ void k{k}(Env env) {{\n{}{body}}}",
                    self.unpack()
                );
                let _ = writeln!(
                    h,
                    "{pad}{}\n{pad}if ((err = cudaGetLastError()) != cudaSuccess) goto done;",
                    self.launch(k, s, "dim3(1)", "dim3(1)")
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
        self.in_kernel = true;
        let nested = self.nest(s, &mut nest, &mut code, 1);
        self.in_kernel = false;
        nested?;
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
        // The block's shape is the launch's, a constant the compiler may
        // fold (a phase's loops step by it).
        for axis_name in ["x", "y", "z"] {
            let width = (0..nt)
                .find(|&j| axis(j, nt) == axis_name)
                .map_or(1, |j| nest.block[j].1);
            code = code.replace(&format!("blockDim.{axis_name}"), &width.to_string());
        }
        let _ = writeln!(
            self.kernels,
            "template <typename I, bool D>\n__global__ void k{k}(Env env) {{\n{}{code}}}",
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
                s,
                &format!("dim3({})", grid.join(", ")),
                &format!("dim3({})", block.join(", "))
            )
        );
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
            // In kernels, also as index arithmetic reads it (`__qnN`).
            Stmt::LetSym { sym, value, body } if self.in_kernel && super::is_index(value) => (
                format!(
                    "{{ const I __qn{sym} = {}; const int64_t __q{sym} = __qn{sym};",
                    e.expr(value)
                ),
                &**body,
            ),
            Stmt::LetSym { sym, value, body } if self.in_kernel => (
                format!(
                    "{{ const int64_t __q{sym} = {}; const I __qn{sym} = pl::sym<I>(__q{sym});",
                    e.expr(value)
                ),
                &**body,
            ),
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

    /// The C++ type of a range's bounds: the kernel's index type `I` for
    /// index arithmetic in a kernel, else 64 bits.
    fn range_type(&self, lo: &Expr, hi: &Expr) -> &'static str {
        match self.in_kernel && super::is_index(lo) && super::is_index(hi) {
            true => "I",
            false => "int64_t",
        }
    }

    /// Func `f`'s buffer over `region`, dense with dimension 0 fastest (a
    /// folded dimension from 0): per dimension, its first coordinate and
    /// its stride assigned to what `names(d)` gives (a field, or a
    /// declaration), and the element count multiplied into `count`
    /// (which starts at 1: the kernels take dimension 0's stride to be 1).
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
            // Index arithmetic in a kernel: bounds and extent in its index
            // type, the count (checked against the buffer's capacity) in 64
            // bits.
            let ix = self.range_type(lo, hi);
            let _ = writeln!(
                out,
                "const {ix} __lo{f}_{d} = {}, __hi{f}_{d} = {}; {min} = __lo{f}_{d}; {stride} = {count}; {count} *= (int64_t)(__hi{f}_{d} >= __lo{f}_{d} ? __hi{f}_{d} - __lo{f}_{d} + 1 : 0);",
                e.expr(lo),
                e.expr(hi)
            );
        }
        out
    }
}
