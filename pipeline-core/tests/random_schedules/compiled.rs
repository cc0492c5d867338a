//! Random schedules, and every pipeline's automatic schedule, through the
//! whole compiler: each is expanded by the
//! macro into a crate of its own (built with cargo in the test's temporary
//! directory), run on the same inputs as the interpreter, and its outputs
//! compared bit for bit. The lowered-statement executor of the other test
//! covers many more schedules; this one covers code generation.
//!
//! `PIPELINE_COMPILED_SCHEDULES=N` sets the schedules per pipeline (default 2).

use super::*;
use std::fmt::Write as _;
use std::process::Command;

/// One random schedule of one pipeline, with its inputs and outputs.
struct Case {
    name: String,
    source: String,
    schedule: String,
    pipeline: Pipeline,
    inputs: Vec<Image>,
    params: Vec<Value>,
    outputs: Vec<Image>,
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

#[test]
fn random_schedules_compiled_agree_with_the_interpreter() {
    let per: usize = std::env::var("PIPELINE_COMPILED_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    if per == 0 {
        return;
    }
    let mut cases = Vec::new();
    for (k, (source, name)) in sources().iter().enumerate() {
        let bare = without_schedules(source);
        let (p, _) = pipeline_core::scheduled_from_source(&bare, name).unwrap();
        let mut rng = Rng(0xC0DE_0000 + k as u64 * 7919);
        // The automatic schedule (no block), at 1x1 and at odd sizes.
        for (w, h) in [(2usize, 2usize), (18, 11)] {
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            cases.push(Case {
                name: name.clone(),
                source: bare.clone(),
                schedule: String::new(),
                pipeline: p.clone(),
                inputs,
                params: params_of(&p),
                outputs,
            });
        }
        for _ in 0..per {
            let schedule = random_schedule(&bare, name, &p, &mut rng);
            let full = format!("{bare}\n{schedule}");
            let (checked, sched) = pipeline_core::scheduled_from_source(&full, name).unwrap();
            if pipeline_core::lower_pipeline(&checked, &sched).is_err() {
                continue; // refused as inlining too much (see the other test)
            }
            let (w, h) = (18usize, 11usize);
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            let params = params_of(&p);
            cases.push(Case {
                name: name.clone(),
                source: bare.clone(),
                schedule,
                pipeline: p.clone(),
                inputs,
                params,
                outputs,
            });
        }
    }

    // The crate: one module per case, and a main that runs them all.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("random-compiled");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = format!(
        "[package]\nname = \"random-compiled\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n# The macro optimized (it expands every case), the kernels not.\n[profile.dev.build-override]\nopt-level = 2\n\n[workspace]\n",
        root.canonicalize().unwrap()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let mut main = String::from("#![allow(clippy::all)]\n");
    for (i, c) in cases.iter().enumerate() {
        main += &harness(i, c);
    }
    main += "fn main() {\n";
    for i in 0..cases.len() {
        main += &format!("    case{i}::run();\n");
    }
    main += "}\n";
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    // Each instruction-set level the kernels dispatch to (PIPELINE_ISA lowers
    // the level; one the processor lacks runs as the best it has).
    let mut compared = 0;
    for isa in ["scalar", "sse4.1", "avx2", "avx512", "avx512vbmi"] {
        let out = Command::new(env!("CARGO"))
            .args(["run", "--quiet", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env_remove("RUSTFLAGS")
            .env("PIPELINE_ISA", isa)
            // A kernel for every level, not only the default ones.
            .env("PIPELINE_KERNELS", "sse4.1,avx2,avx512,avx512vbmi")
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "the generated crate in {} failed:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );

        for (i, c) in cases.iter().enumerate() {
            let mut want = c.outputs.clone();
            let expected = interp::run(&c.pipeline, &c.inputs, &c.params, &mut want);
            let status = stdout
                .lines()
                .find(|l| l.starts_with(&format!("case {i} ")) && !l.contains(" out "))
                .unwrap_or_else(|| panic!("case {i} printed nothing"));
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
                        assert_eq!(got.len(), expected.len(), "output {k} of {what}");
                        let first = got.iter().zip(&expected).position(|(g, e)| g != e);
                        assert!(
                        first.is_none(),
                        "output {k} of {what} differs from the interpreter at element {}: {} vs {}",
                        first.unwrap(),
                        got[first.unwrap()],
                        expected[first.unwrap()]
                    );
                    }
                    compared += 1;
                }
                (Err(_), false) => {}
                (e, _) => panic!("{what}: interpreter {e:?}, compiled: {status}"),
            }
        }
    }
    println!("{compared} compiled schedules agree with the interpreter");
    assert!(
        compared * 2 > cases.len(),
        "{compared} of {} compared",
        cases.len()
    );
}
