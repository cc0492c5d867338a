//! `pipeline_build::cuda()` end to end, in a crate of its own with the
//! two-line build script: with nvcc (found as the build script finds it)
//! the crate builds with `cfg(pipeline_cuda)` and its `NAME::cuda` runs
//! the kernels on a GPU, giving the CPU entry's outputs (also chained on
//! device buffers through `NAME::cuda_device`), or, on a machine
//! without one, returns `Error::CudaUnavailable`; without nvcc the crate
//! still builds, with a warning, and `NAME::cuda` says it was built
//! without its GPU version.

use std::path::Path;
use std::process::Command;

const MAIN: &str = r#"
use pipeline::cuda::DeviceBuffer;
use pipeline::{pipeline, Buffer, Error};

pipeline! {
    /// A 3x3 blur of a u16 image, and a pointwise map.
    pub fn blur3(input: Image<u16, 2>) -> Image<u16, 2> {
        let c = input.clamp_edge();
        bx(x, y) = c(x - 1, y) as u32 + c(x, y) as u32 * 2 + c(x + 1, y) as u32;
        by(x, y) = ((bx(x, y - 1) + bx(x, y) * 2 + bx(x, y + 1) + 8) / 16) as u16;
        by
    }
    schedule blur3 for cuda {
        bx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
        by.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
    /// Its CPU schedule computes `scaled` at root, the GPU's inlines it:
    /// the GPU entries have a bounds program of their own (with the
    /// clamps of the boundary condition, so it takes mins and maxes).
    pub fn scale(input: Image<f32, 2>, k: f32) -> Image<f32, 2> {
        let c = input.clamp_edge();
        scaled(x, y) = c(x + 1, y) * k;
        out(x, y) = scaled(x, y) + 0.5;
        out
    }
    schedule scale {
        scaled.compute_root();
    }
}

fn main() {
    let input = Buffer::<u16, 2>::from_fn([67, 45], |[x, y]| ((x * 37 + y * 1013) % 65521) as u16);
    let mut cpu = Buffer::<u16, 2>::new([67, 45]);
    let mut gpu = Buffer::<u16, 2>::new([67, 45]);
    blur3(&input, &mut cpu).unwrap();
    match blur3::cuda(&input, &mut gpu) {
        Ok(()) => println!("ran: {}", if cpu.as_slice() == gpu.as_slice() { "same" } else { "DIFFERENT" }),
        Err(Error::CudaUnavailable { reason }) => println!("unavailable: {reason}"),
        Err(e) => println!("failed: {e}"),
    }
    let f = Buffer::<f32, 2>::from_fn([19, 7], |[x, y]| x as f32 * 0.25 - y as f32);
    let (mut a, mut b) = (Buffer::<f32, 2>::new([19, 7]), Buffer::<f32, 2>::new([19, 7]));
    scale(&f, 3.0, &mut a).unwrap();
    match scale::cuda(&f, 3.0, &mut b) {
        Ok(()) => println!("ran: {}", if a.as_slice() == b.as_slice() { "same" } else { "DIFFERENT" }),
        Err(Error::CudaUnavailable { reason }) => println!("unavailable: {reason}"),
        Err(e) => println!("failed: {e}"),
    }
    // Two blurs chained on the device, the input uploaded once and the
    // result downloaded once.
    let mut twice = Buffer::<u16, 2>::new([67, 45]);
    blur3(&cpu, &mut twice).unwrap();
    let chained = || -> Result<Buffer<u16, 2>, Error> {
        let on_gpu = DeviceBuffer::upload(&input)?;
        let mut once = DeviceBuffer::<u16, 2>::new([67, 45])?;
        blur3::cuda_device(&on_gpu, &mut once)?;
        let mut again = DeviceBuffer::<u16, 2>::new([67, 45])?;
        blur3::cuda_device(&once, &mut again)?;
        again.download()
    };
    match chained() {
        Ok(b) => println!("ran: {}", if b == twice { "same" } else { "DIFFERENT" }),
        Err(Error::CudaUnavailable { reason }) => println!("unavailable: {reason}"),
        Err(e) => println!("failed: {e}"),
    }
}
"#;

fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let build = root.join("pipeline-build");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"gpu\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {root:?}, features = [\"cuda\"] }}\n\n[build-dependencies]\npipeline-build = {{ path = {build:?} }}\n\n[profile.dev]\ndebug = 0\nincremental = false\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() {\n    pipeline_build::cuda().compile();\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
}

/// `cargo run` of the crate in `dir` with `env`: its build's stderr and
/// the program's output.
fn run(dir: &Path, env: &[(&str, Option<&str>)]) -> (String, String) {
    let mut c = Command::new(env!("CARGO"));
    c.args(["run", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env_remove("RUSTFLAGS")
        // The crates share one target directory, so that the second build
        // reuses what the first compiled.
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-build-target"),
        );
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "the crate does not build or run:\n{stderr}"
    );
    (stderr, String::from_utf8_lossy(&out.stdout).to_string())
}

#[test]
fn a_crate_builds_with_and_without_nvcc_and_its_gpu_entries_answer() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    // Without nvcc: a warning, a CPU-only crate, and entries that say why.
    let without = tmp.join("cuda-build-without");
    write_crate(&without);
    let path = std::env::var("PATH").unwrap_or_default();
    let no_nvcc: String = std::env::split_paths(&path)
        .filter(|d| !d.join("nvcc").exists())
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let (stderr, stdout) = run(
        &without,
        &[
            ("NVCC", None),
            ("CUDA_HOME", None),
            ("CUDA_PATH", None),
            ("PATH", Some(&no_nvcc)),
        ],
    );
    assert!(stderr.contains("nvcc was not found"), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for l in &lines[..2] {
        assert!(
            l.starts_with("unavailable: ") && l.contains("built without its GPU version"),
            "{l}"
        );
    }
    assert!(
        lines[2].starts_with("unavailable: ") && lines[2].contains("without the CUDA runtime"),
        "{}",
        lines[2]
    );

    // With nvcc: the kernels are compiled and linked; on a machine without
    // a GPU the entries say so, on one with a GPU they give the CPU's
    // results.
    let Some(nvcc) = pipeline_build::cuda::nvcc() else {
        eprintln!(
            "nvcc not found (NVCC, CUDA_HOME, CUDA_PATH, PATH): the build with CUDA is skipped"
        );
        return;
    };
    let with = tmp.join("cuda-build-with");
    write_crate(&with);
    let (stderr, stdout) = run(&with, &[]);
    assert!(
        !stderr.contains("are not built"),
        "nvcc at {} did not build the kernels:\n{stderr}",
        nvcc.display()
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for l in &lines {
        assert!(
            *l == "ran: same"
                || (l.starts_with("unavailable: ") && l.contains("no usable CUDA device")),
            "{l}"
        );
    }
    eprintln!("with nvcc: {}", lines.join("; "));
}
