//! The cache through cargo: a generated crate with a `pipeline-schedules.toml`
//! beside its `Cargo.toml` is built and run; the entry is used (SCHEDULE
//! says so) and computes what the interpreter computes; an edit of the file,
//! and its removal, rebuild the crate.

use super::*;
use pipeline_core::interp::{Image, Value};
use pipeline_core::ir::Type;
use std::path::Path;
use std::process::Command;

const W: usize = 37;
const H: usize = 23;

/// The crate: the blur on a W x H input of a fixed pattern, printing its
/// SCHEDULE and its output.
fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = format!(
        "[package]\nname = \"schedule_cache_crate\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n[profile.dev]\ndebug = 0\nincremental = false\n\n[profile.dev.build-override]\nopt-level = 2\n\n[workspace]\n",
        root.canonicalize().unwrap()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let main = format!(
        "use pipeline::{{pipeline, Buffer}};\npipeline! {{\n{BLUR}\n}}\nfn main() {{\n    let data: Vec<u16> = (0..{W} * {H}).map(|i| (i * 7919 % 1000) as u16).collect();\n    let input = Buffer::<u16, 2>::from_vec(data, [{W}, {H}]).unwrap();\n    let mut out = Buffer::<u16, 2>::new([{W}, {H}]);\n    blur3x3(&input.view(), &mut out.view_mut()).unwrap();\n    println!(\"{{:?}}\", blur3x3::SCHEDULE);\n    let values: Vec<String> = out.as_slice().iter().map(|v| v.to_string()).collect();\n    println!(\"{{}}\", values.join(\" \"));\n}}\n"
    );
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
}

/// Builds and runs the crate: its SCHEDULE and output.
fn run(dir: &Path) -> (String, Vec<String>) {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-target");
    let out = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove(CACHE_ENV)
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = stdout.lines();
    let schedule = lines.next().unwrap_or_default().replace("\\n", "\n");
    let values = lines
        .next()
        .unwrap_or_default()
        .split(' ')
        .map(String::from)
        .collect();
    (schedule, values)
}

#[test]
fn a_crate_uses_its_cache_and_rebuilds_when_the_file_changes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schedule_cache_crate");
    let _ = std::fs::remove_dir_all(&dir);
    write_crate(&dir);
    let cache = dir.join(FILE_NAME);
    let hash = hash_of(BLUR, "blur3x3");
    let write = |schedule: &str| {
        let e = entry("blur3x3", hash, std::env::consts::ARCH, schedule);
        std::fs::write(&cache, CacheFile { entries: vec![e] }.to_text()).unwrap();
    };
    // What the interpreter computes on the same input.
    let p = pipeline_core::pipeline_from_source(BLUR, "blur3x3").unwrap();
    let input = Image {
        ty: Type::U16,
        min: vec![0, 0],
        shape: vec![W, H],
        data: (0..W * H)
            .map(|i| Value::Int((i * 7919 % 1000) as i128))
            .collect(),
    };
    let mut want = vec![Image::new(Type::U16, vec![0, 0], vec![W, H])];
    interp::run(&p, &[input], &[], &mut want).unwrap();
    let want: Vec<String> = want[0]
        .data
        .iter()
        .map(|v| match v {
            Value::Int(i) => i.to_string(),
            v => panic!("{v:?}"),
        })
        .collect();

    write(TUNED);
    let (schedule, got) = run(&dir);
    assert!(
        schedule.contains("from pipeline-schedules.toml line 4")
            && schedule.contains("out.parallel(y).vectorize(x, 16);"),
        "{schedule}"
    );
    assert_eq!(got, want);

    // An edit rebuilds.
    let tiled =
        "blur_x.compute_root().parallel(y);\nout.tile(x, y, xo, yo, xi, yi, 8, 4).parallel(yo);\n";
    write(tiled);
    let (schedule, got) = run(&dir);
    assert!(
        schedule.contains("out.tile(x, y, xo, yo, xi, yi, 8, 4)"),
        "not rebuilt:\n{schedule}"
    );
    assert_eq!(got, want);

    // So does its removal: the auto-scheduler again, with no cache to name.
    std::fs::remove_file(&cache).unwrap();
    let (schedule, got) = run(&dir);
    assert!(
        schedule.contains("chosen by the auto-scheduler")
            && !schedule.contains("pipeline-schedules.toml"),
        "{schedule}"
    );
    assert_eq!(got, want);
}
