//! The benchmark crate of one tuning round: every candidate schedule of one
//! pipeline compiled into one binary (the build, not the run, is what a
//! round costs), each in a module of its own with the same harness.
//!
//! The harness makes the inputs (deterministic pseudo-random values, the
//! layout the block declares), sizes the outputs with the generated
//! `output_shape`, crops them with `required_region` until the inputs cover
//! what they need, and then either runs each candidate once at a small size
//! and writes its inputs and outputs (`verify DIR W H`: the tuner compares
//! them with the interpreter) or times each candidate at the size class
//! (`time W H ROUNDS MILLIS [K,K..]`: each candidate, or those listed, runs
//! for MILLIS per round and
//! the candidates alternate, round by round, so that a slow moment of the
//! machine falls on all of them; it prints each one's median and fastest
//! run).

use pipeline_core::interp::Value;
use pipeline_core::ir::{Pipeline, Type};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The extent of input dimensions after the first two (channels), unless a
/// declared stride asks for another.
const EXTRA_EXTENT: usize = 3;

/// What a benchmark crate needs to know of the pipeline.
pub struct Harness<'a> {
    /// The pipeline (types, inputs, parameters, outputs).
    pub pipeline: &'a Pipeline,
    /// The strides the block declares of each input's dimensions.
    pub strides: &'a [Vec<Option<usize>>],
    /// A value for each scalar parameter, in declaration order.
    pub params: &'a [Value],
}

/// How input `k`'s memory is laid out: dimensions innermost first, and the
/// extent of every dimension after the first two.
struct Layout {
    order: Vec<usize>,
    extra: usize,
}

/// A layout of `dims` dimensions that gives every declared stride, with
/// the first two dimensions of any extent (at least 16): the identity
/// order unless a stride asks for an interleaved one (`dim(0)` of stride 3
/// puts a 3-channel dimension innermost).
fn layout(dims: usize, declared: &[Option<usize>]) -> Result<Layout, String> {
    let extra = declared
        .iter()
        .flatten()
        .copied()
        .find(|&s| s > 1 && dims > 2)
        .unwrap_or(EXTRA_EXTENT);
    let extent = |d: usize| if d < 2 { None } else { Some(extra) };
    // Every order of the dimensions (at most 4! = 24), identity first.
    let mut orders: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..dims {
        let mut longer = Vec::new();
        for o in &orders {
            for d in (0..dims).filter(|d| !o.contains(d)) {
                let mut n = o.clone();
                n.push(d);
                longer.push(n);
            }
        }
        orders = longer;
    }
    for order in orders {
        // The stride of each dimension when the first two are wide (None:
        // depends on the image size).
        let mut stride = vec![None; dims];
        let mut acc = Some(1usize);
        for &d in &order {
            stride[d] = acc;
            acc = match (acc, extent(d)) {
                (Some(a), Some(e)) => Some(a * e),
                _ => None,
            };
        }
        let fits = declared
            .iter()
            .enumerate()
            .all(|(d, s)| s.is_none() || *s == stride[d]);
        if fits {
            return Ok(Layout { order, extra });
        }
    }
    Err(format!(
        "no layout of {dims} dimensions gives the declared strides {declared:?}"
    ))
}

/// A Rust literal of `v`, of type `ty`.
pub fn literal(v: &Value, ty: Type) -> String {
    match v {
        Value::F32(x) => format!("f32::from_bits({:#x})", x.to_bits()),
        Value::F64(x) => format!("f64::from_bits({:#x})", x.to_bits()),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => format!("{i}{}", ty.name()),
    }
}

/// The expression of input value number `i` of input `k`, of type `ty`,
/// from the harness's hash `__val`.
fn value_expr(ty: Type, k: usize) -> String {
    match ty {
        Type::Bool => format!("__val(i, {k}) & 1 == 1"),
        Type::F32 => format!("(__val(i, {k}) >> 40) as f32 / (1u64 << 24) as f32"),
        Type::F64 => format!("(__val(i, {k}) >> 11) as f64 / (1u64 << 53) as f64"),
        t => format!("__val(i, {k}) as {}", t.name()),
    }
}

impl Harness<'_> {
    /// The body of each candidate's `run(w, h, rounds, dump)`: it refers to
    /// the pipeline by `$name`, so one `macro_rules!` serves all modules.
    fn run_body(&self) -> Result<String, String> {
        let p = self.pipeline;
        let mut s = String::new();
        let mut entry_args = Vec::new();
        let mut shapes = Vec::new();
        let mut regions = Vec::new();
        for (k, input) in p.inputs.iter().enumerate() {
            let n = input.dims;
            let declared = self.strides.get(k).cloned().unwrap_or_default();
            let l = layout(n, &declared).map_err(|e| format!("input `{}`: {e}", input.name))?;
            let extents: Vec<String> = (0..n)
                .map(|d| match d {
                    0 => "w".to_string(),
                    1 => "h".to_string(),
                    _ => l.extra.to_string(),
                })
                .collect();
            writeln!(
                s,
                "        let shape{k}: [usize; {n}] = [{}];",
                extents.join(", ")
            )
            .unwrap();
            writeln!(s, "        let mut strides{k} = [0usize; {n}];").unwrap();
            writeln!(s, "        let mut len{k} = 1usize;").unwrap();
            for &d in &l.order {
                writeln!(
                    s,
                    "        strides{k}[{d}] = len{k}; len{k} *= shape{k}[{d}];"
                )
                .unwrap();
            }
            // Allocated as a `Buffer` is (large ones advised to huge
            // pages), so that candidates are timed reading memory as the
            // user's and the comparison's buffers are read: from a plain
            // `Vec` on 4 KiB pages, the 3x3 blur's automatic schedule ran
            // 1.2x slower than from a `Buffer`, and its tuned one won by
            // 0.82x where the comparison measured 1.01x.
            writeln!(
                s,
                "        let data{k} = Buffer::<{}, 1>::from_fn([len{k}], |[i]| {});",
                input.ty.name(),
                value_expr(input.ty, k)
            )
            .unwrap();
            writeln!(
                s,
                "        let in{k} = View::with_strides(data{k}.as_slice(), shape{k}, strides{k}).map_err(|e| e.to_string())?;"
            )
            .unwrap();
            entry_args.push(format!("&in{k}"));
            shapes.push(format!("shape{k}"));
            regions.push(format!("in{k}.region()"));
        }
        for (q, param) in p.params.iter().enumerate() {
            let v = self
                .params
                .get(q)
                .ok_or_else(|| format!("no value for parameter `{}`", param.name))?;
            entry_args.push(literal(v, param.ty));
            regions.push(literal(v, param.ty));
        }
        let outs = p.outputs.len();
        let names: Vec<String> = (0..outs).map(|k| format!("oshape{k}")).collect();
        let pattern = if outs == 1 {
            names[0].clone()
        } else {
            format!("({})", names.join(", "))
        };
        writeln!(
            s,
            "        let {pattern} = $name::output_shape({});",
            shapes.join(", ")
        )
        .unwrap();
        for (k, &f) in p.outputs.iter().enumerate() {
            let n = p.funcs[f].dims();
            writeln!(
                s,
                "        let mut r{k} = Region::new([0i64; {n}], oshape{k});"
            )
            .unwrap();
        }
        // Crop the outputs until the inputs cover what they read: each
        // input's overhang in a dimension is taken off the outputs' same
        // dimension, on the same side.
        let out_regions: Vec<String> = (0..outs).map(|k| format!("r{k}")).collect();
        let needs: Vec<String> = (0..p.inputs.len()).map(|k| format!("need{k}")).collect();
        let need_pattern = match needs.len() {
            0 => "_".to_string(),
            1 => needs[0].clone(),
            _ => format!("({})", needs.join(", ")),
        };
        writeln!(
            s,
            "        let mut covered = false;\n        for _ in 0..8 {{"
        )
        .unwrap();
        let mut all_args = regions.clone();
        all_args.extend(out_regions.iter().cloned());
        writeln!(
            s,
            "            let {need_pattern} = $name::required_region({});\n            let mut ok = true;",
            all_args.join(", ")
        )
        .unwrap();
        for (k, input) in p.inputs.iter().enumerate() {
            for d in 0..input.dims {
                let shrink: String = p
                    .outputs
                    .iter()
                    .enumerate()
                    .filter(|&(_, &f)| p.funcs[f].dims() > d)
                    .map(|(o, _)| {
                        format!("__shrink(&mut r{o}.min[{d}], &mut r{o}.shape[{d}], lo, hi);")
                    })
                    .collect();
                writeln!(
                    s,
                    "            if !need{k}.is_empty() {{ let lo = (in{k}.region().min[{d}] - need{k}.min[{d}]).max(0); let hi = (need{k}.max({d}) - in{k}.region().max({d})).max(0); if lo > 0 || hi > 0 {{ ok = false; {shrink} }} }}"
                )
                .unwrap();
            }
        }
        writeln!(
            s,
            "            if ok {{ covered = true; break; }}\n        }}"
        )
        .unwrap();
        writeln!(s, "        if !covered {{ return Err(\"the outputs could not be sized so that the inputs cover what they read\".into()); }}").unwrap();
        for (k, &f) in p.outputs.iter().enumerate() {
            let func = &p.funcs[f];
            writeln!(
                s,
                "        let mut out{k} = Buffer::<{}, {}>::new(r{k}.shape);",
                func.ty.name(),
                func.dims()
            )
            .unwrap();
        }
        let mut call_args = entry_args.clone();
        for k in 0..outs {
            call_args.push(format!("&mut out{k}.view_mut().with_origin(r{k}.min)"));
        }
        let call = format!(
            "$name({}).map_err(|e| e.to_string())?;",
            call_args.join(", ")
        );
        // Verify: one run, everything written for the tuner.
        writeln!(s, "        if let Some(dir) = dump {{\n            {call}").unwrap();
        for k in 0..p.inputs.len() {
            writeln!(s, "            __dump(dir, &format!(\"in{k}\"), &in{k}.region().min, &in{k}.region().shape, &__logical(&in{k}));").unwrap();
        }
        for k in 0..outs {
            writeln!(s, "            __dump(dir, &format!(\"{{tag}}_out{k}\"), &r{k}.min, &r{k}.shape, out{k}.as_slice());").unwrap();
        }
        writeln!(s, "            return Ok(Vec::new());\n        }}").unwrap();
        // Time: a warm-up call, then calls until `millis` have passed (at
        // least two).
        writeln!(
            s,
            "        {call}\n        let mut times = Vec::new();\n        let start = Instant::now();\n        while times.len() < 2 || start.elapsed().as_millis() < millis as u128 {{\n            let t = Instant::now();\n            {call}\n            times.push(t.elapsed().as_nanos());\n        }}\n        Ok(times)"
        )
        .unwrap();
        Ok(s)
    }

    /// The crate's `main.rs` for `invocations` (one per candidate, each the
    /// whole invocation with that candidate's schedule block).
    pub fn main_rs(&self, name: &str, invocations: &[String]) -> Result<String, String> {
        let body = self.run_body()?;
        let mut s = String::from(PRELUDE);
        writeln!(
            s,
            "macro_rules! __harness {{\n    ($name:ident) => {{\n    pub fn run(w: usize, h: usize, millis: usize, dump: Option<&str>, tag: usize) -> Result<Vec<u128>, String> {{\n{body}    }}\n    }};\n}}\n"
        )
        .unwrap();
        for (k, inv) in invocations.iter().enumerate() {
            writeln!(
                s,
                "mod c{k} {{\n    use super::*;\n    pipeline! {{\n{inv}\n    }}\n    __harness!({name});\n}}\n"
            )
            .unwrap();
        }
        let runs: Vec<String> = (0..invocations.len())
            .map(|k| format!("c{k}::run"))
            .collect();
        writeln!(
            s,
            "const RUNS: [Run; {}] = [{}];\n{MAIN}",
            runs.len(),
            runs.join(", ")
        )
        .unwrap();
        Ok(s)
    }
}

/// What every harness shares.
const PRELUDE: &str = r#"#![allow(unused, non_snake_case, unused_parens, clippy::all)]
use pipeline::{pipeline, Buffer, Region, View};
use std::io::Write;
use std::time::Instant;

type Run = fn(usize, usize, usize, Option<&str>, usize) -> Result<Vec<u128>, String>;

/// Input value number `i` of input `k` (splitmix64).
fn __val(i: usize, k: usize) -> u64 {
    let mut z = (i as u64) ^ ((k as u64) << 48) ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Takes `lo` off the start and `hi` off the end of one dimension.
fn __shrink(min: &mut i64, shape: &mut usize, lo: i64, hi: i64) {
    let cut = (lo + hi) as usize;
    *min += lo;
    *shape = shape.saturating_sub(cut);
}

/// The elements of a view in coordinate order, dimension 0 fastest.
fn __logical<T: pipeline::Element, const N: usize>(v: &View<'_, T, N>) -> Vec<T> {
    let r = v.region();
    let count: usize = r.shape.iter().product();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let mut c = r.min;
        let mut rest = i;
        for d in 0..N {
            c[d] += (rest % r.shape[d]) as i64;
            rest /= r.shape[d];
        }
        out.push(v.at(c));
    }
    out
}

trait __Bytes { fn put(&self, out: &mut Vec<u8>); }
macro_rules! __bytes { ($($t:ty),*) => { $(impl __Bytes for $t { fn put(&self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()); } })* }; }
__bytes!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
impl __Bytes for bool { fn put(&self, out: &mut Vec<u8>) { out.push(*self as u8); } }

/// Writes `values` to `DIR/NAME.bin` and its region to `DIR/NAME.region`.
fn __dump<T: __Bytes>(dir: &str, name: &str, min: &[i64], shape: &[usize], values: &[T]) {
    let mut bytes = Vec::new();
    for v in values { v.put(&mut bytes); }
    std::fs::write(format!("{dir}/{name}.bin"), bytes).expect("the dump is writable");
    let region = format!("{}\n{}\n",
        min.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" "),
        shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" "));
    std::fs::write(format!("{dir}/{name}.region"), region).expect("the dump is writable");
}
"#;

const MAIN: &str = r#"
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: usize| -> usize { args[k].parse().expect("a number") };
    println!("isa {}", pipeline::rt::isa().name());
    println!("processor {}", pipeline::rt::processor());
    match args[1].as_str() {
        "verify" => {
            let (dir, w, h) = (args[2].as_str(), arg(3), arg(4));
            for (k, run) in RUNS.iter().enumerate() {
                match run(w, h, 0, Some(dir), k) {
                    Ok(_) => println!("cand {k} ran"),
                    Err(e) => println!("cand {k} error {}", e.replace('\n', " ")),
                }
                let _ = std::io::stdout().flush();
            }
        }
        _ => {
            let (w, h, rounds, millis) = (arg(2), arg(3), arg(4), arg(5));
            // Optionally only some candidates: `0,3`.
            let only: Option<Vec<usize>> = args.get(6).map(|l| l.split(',').map(|k| k.parse().expect("a number")).collect());
            let mut times: Vec<Vec<u128>> = vec![Vec::new(); RUNS.len()];
            let mut failed = vec![false; RUNS.len()];
            for _ in 0..rounds {
                for (k, run) in RUNS.iter().enumerate() {
                    if failed[k] || only.as_ref().is_some_and(|o| !o.contains(&k)) { continue; }
                    match run(w, h, millis, None, k) {
                        Ok(t) => times[k].extend(t),
                        Err(e) => { failed[k] = true; println!("cand {k} error {}", e.replace('\n', " ")); }
                    }
                }
            }
            for (k, t) in times.iter_mut().enumerate() {
                if failed[k] || t.is_empty() { continue; }
                t.sort();
                println!("cand {k} time {} {}", t[t.len() / 2], t[0]);
            }
        }
    }
}
"#;

/// A benchmark crate on disk, built and run by cargo.
pub struct Crate {
    /// Its directory.
    pub dir: PathBuf,
    /// The target directory all rounds share (the runtime is built once).
    pub target: PathBuf,
}

impl Crate {
    /// Writes the crate: `pipeline` is the directory of the `pipeline`
    /// crate the user's crate depends on.
    pub fn write(dir: &Path, target: &Path, pipeline: &Path, main: &str) -> std::io::Result<Crate> {
        std::fs::create_dir_all(dir.join("src"))?;
        let manifest = format!(
            "[package]\nname = \"pipeline-tune-bench\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n[profile.release]\nincremental = false\ndebug = false\n\n[profile.release.build-override]\nopt-level = 2\n\n[workspace]\n",
            pipeline
        );
        std::fs::write(dir.join("Cargo.toml"), manifest)?;
        std::fs::write(dir.join("src/main.rs"), main)?;
        Ok(Crate {
            dir: dir.to_path_buf(),
            target: target.to_path_buf(),
        })
    }

    /// Builds it in release mode: the compiler's errors on failure.
    pub fn build(&self) -> Result<(), String> {
        let out = self
            .cargo()
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(self.dir.join("Cargo.toml"))
            .output()
            .map_err(|e| format!("cargo does not start: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// Runs the built binary with `args`: its standard output.
    pub fn run(&self, args: &[String]) -> Result<String, String> {
        let exe = self.target.join("release").join(format!(
            "pipeline-tune-bench{}",
            std::env::consts::EXE_SUFFIX
        ));
        let out = Command::new(&exe)
            .args(args)
            .output()
            .map_err(|e| format!("{} does not start: {e}", exe.display()))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "the benchmark crashed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn cargo(&self) -> Command {
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.env("CARGO_TARGET_DIR", &self.target)
            // The candidates carry their own blocks; other pipelines of the
            // invocation take the auto-scheduler's choice.
            .env(pipeline_core::schedule::cache::CACHE_ENV, "")
            .env_remove("RUSTFLAGS")
            .env_remove("PIPELINE_SCHEDULE")
            // Only the kernel this processor runs (at its PIPELINE_ISA): the
            // code a default build runs here, in a fraction of the build.
            .env(
                pipeline_core::codegen::kernels::KERNELS_ENV,
                format!("only:{}", pipeline::rt::isa().name()),
            );
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_declared_strides() {
        assert_eq!(layout(2, &[]).unwrap().order, [0, 1]);
        // Interleaved channels: dim(0) of stride 3 puts dim 2 innermost.
        let l = layout(3, &[Some(3), None, Some(1)]).unwrap();
        assert_eq!((l.order[0], l.extra), (2, 3));
        let l = layout(3, &[Some(4)]).unwrap();
        assert_eq!((l.order, l.extra), (vec![2, 0, 1], 4));
        assert!(layout(2, &[Some(3)]).is_err());
    }
}
