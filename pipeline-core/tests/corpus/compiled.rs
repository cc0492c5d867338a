//! Pipelines compiled by the macro: each case is expanded into a module of
//! a generated crate (built with cargo in the test's temporary directory),
//! run at every instruction-set level on the same inputs as the
//! interpreter, and its outputs compared bit for bit.

use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::{Pipeline, Type};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// One random schedule of one pipeline, with its inputs and outputs.
pub struct Case {
    pub name: String,
    pub source: String,
    pub schedule: String,
    pub pipeline: Pipeline,
    pub inputs: Vec<Image>,
    pub params: Vec<Value>,
    pub outputs: Vec<Image>,
}

/// A Rust literal of a value of type `ty`.
fn literal(v: &Value, ty: Type) -> String {
    match v {
        Value::F32(x) => format!("f32::from_bits({:#x})", x.to_bits()),
        Value::F64(x) => format!("f64::from_bits({:#x})", x.to_bits()),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => format!("{i}{}", ty.name()),
    }
}

/// How the harness prints a value, and how the test reads it back.
fn printed(v: &Value) -> String {
    match v {
        Value::F32(x) => format!("{:#x}", x.to_bits()),
        Value::F64(x) => format!("{:#x}", x.to_bits()),
        Value::Bool(b) => (*b as u8).to_string(),
        Value::Int(i) => i.to_string(),
    }
}

/// The harness code of case `i`: its module, and a function that runs it and
/// prints `case i ok` and each output's values, or `case i err`.
fn harness(i: usize, c: &Case) -> String {
    // The run function lives in the case's module: the pipeline may be private.
    let mut s = format!(
        "mod case{i} {{\n    #![allow(dead_code, unused_parens)]\n    use pipeline::{{pipeline, Buffer}};\n    pipeline! {{\n{}\n{}\n    }}\n",
        c.source, c.schedule
    );
    s += "pub fn run() {\n";
    let mut args = Vec::new();
    for (k, img) in c.inputs.iter().enumerate() {
        let ty = img.ty.name();
        let n = img.shape.len();
        let values: Vec<String> = img.data.iter().map(|v| literal(v, img.ty)).collect();
        writeln!(
            s,
            "    let in{k} = Buffer::<{ty}, {n}>::from_vec(vec![{}], {:?}).unwrap();",
            values.join(", "),
            img.shape
        )
        .unwrap();
        args.push(format!("&in{k}.view().with_origin({:?})", img.min));
    }
    for (q, v) in c.params.iter().enumerate() {
        args.push(literal(v, c.pipeline.params[q].ty));
    }
    for (k, img) in c.outputs.iter().enumerate() {
        let ty = img.ty.name();
        let n = img.shape.len();
        writeln!(
            s,
            "    let mut out{k} = Buffer::<{ty}, {n}>::new({:?});",
            img.shape
        )
        .unwrap();
    }
    for (k, img) in c.outputs.iter().enumerate() {
        writeln!(
            s,
            "    let mut view{k} = out{k}.view_mut().with_origin({:?});",
            img.min
        )
        .unwrap();
        args.push(format!("&mut view{k}"));
    }
    writeln!(
        s,
        "    match {}({}) {{\n        Ok(()) => println!(\"case {i} ok\"),\n        Err(e) => {{ println!(\"case {i} err {{e}}\"); return; }}\n    }}",
        c.name,
        args.join(", ")
    )
    .unwrap();
    for (k, img) in c.outputs.iter().enumerate() {
        let bits = match img.ty {
            Type::F32 | Type::F64 => "format!(\"{:#x}\", v.to_bits())",
            Type::Bool => "(*v as u8).to_string()",
            _ => "v.to_string()",
        };
        writeln!(
            s,
            "    let _ = view{k};\n    let v{k}: Vec<String> = out{k}.as_slice().iter().map(|v| {bits}).collect();\n    println!(\"case {i} out {k} {{}}\", v{k}.join(\" \"));"
        )
        .unwrap();
    }
    s + "}\n}\n"
}

/// Builds the crate of `cases` in `dir` (one module per case, and a main
/// that runs them all), runs it at every instruction-set level and compares
/// each case's outputs with the interpreter's: how many cases compared (at
/// all levels together), or the first disagreement, with the index of its
/// case where it has one. The crates of all tests share one target
/// directory, so the runtime and the macro are built once.
pub fn run_compiled(dir: &Path, cases: &[Case]) -> Result<usize, (Option<usize>, String)> {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let package = dir.file_name().unwrap().to_string_lossy();
    let manifest = format!(
        "[package]\nname = \"{package}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n[profile.dev]\ndebug = 0\nincremental = false\n\n# The macro optimized (it expands every case), the kernels not.\n[profile.dev.build-override]\nopt-level = 2\n\n[workspace]\n",
        root.canonicalize().unwrap()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let mut main = String::from("#![allow(clippy::all)]\n");
    // The line each case's module starts at, to tell which case an error is in.
    let mut starts = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        starts.push(main.lines().count() + 1);
        main += &harness(i, c);
    }
    main += "fn main() {\n";
    for i in 0..cases.len() {
        main += &format!("    case{i}::run();\n");
    }
    main += "}\n";
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-target");
    // Each instruction-set level the kernels dispatch to (PIPELINE_ISA lowers
    // the level; one the processor lacks runs as the best it has).
    let mut compared = 0;
    for isa in ["scalar", "sse4.1", "avx2", "avx512", "avx512vbmi"] {
        let out = Command::new(env!("CARGO"))
            .args(["run", "--quiet", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTFLAGS")
            .env("PIPELINE_ISA", isa)
            // A kernel for every level, not only the default ones.
            .env("PIPELINE_KERNELS", "sse4.1,avx2,avx512,avx512vbmi")
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            // The case of the first error's line, if rustc gave one.
            let line = stderr.split("src/main.rs:").nth(1).and_then(|s| {
                let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<usize>().ok()
            });
            let case = line.map(|l| starts.partition_point(|&s| s <= l).saturating_sub(1));
            return Err((
                case,
                format!("the generated crate in {} failed:\n{stderr}", dir.display()),
            ));
        }
        for (i, c) in cases.iter().enumerate() {
            let mut want = c.outputs.clone();
            let expected = interp::run(&c.pipeline, &c.inputs, &c.params, &mut want);
            let Some(status) = stdout
                .lines()
                .find(|l| l.starts_with(&format!("case {i} ")) && !l.contains(" out "))
            else {
                return Err((Some(i), format!("case {i} printed nothing")));
            };
            let schedule = match c.schedule.as_str() {
                "" => "its automatic schedule",
                s => s,
            };
            let what = format!("{} (case {i}, {isa}) under\n{schedule}", c.name);
            match (expected, status.ends_with(" ok")) {
                (Ok(()), true) => {
                    for (k, e) in want.iter().enumerate() {
                        let prefix = format!("case {i} out {k} ");
                        let line = stdout
                            .lines()
                            .find_map(|l| l.strip_prefix(&prefix))
                            .unwrap_or("");
                        let got: Vec<&str> = line.split_whitespace().collect();
                        let expected: Vec<String> = e.data.iter().map(printed).collect();
                        if got.len() != expected.len() {
                            return Err((
                                Some(i),
                                format!(
                                    "output {k} of {what}: {} values, not {}",
                                    got.len(),
                                    expected.len()
                                ),
                            ));
                        }
                        if let Some(j) = got.iter().zip(&expected).position(|(g, e)| g != e) {
                            return Err((
                                Some(i),
                                format!(
                                    "output {k} of {what} differs from the interpreter at element {j}: {} vs {}",
                                    got[j], expected[j]
                                ),
                            ));
                        }
                    }
                    compared += 1;
                }
                (Err(_), false) => {}
                (e, _) => {
                    return Err((
                        Some(i),
                        format!("{what}: interpreter {e:?}, compiled: {status}"),
                    ))
                }
            }
        }
    }
    Ok(compared)
}
