//! The GPU versions of a crate's pipelines, compiled from its build
//! script:
//!
//! ```text
//! // build.rs (with `pipeline` built with its `cuda` feature)
//! fn main() {
//!     pipeline_build::cuda().compile();
//! }
//! ```
//!
//! [`Cuda::compile`] finds the crate's `pipeline!` invocations (as the tuner
//! does), lowers each pipeline under its GPU schedule exactly as the macro
//! does for `NAME::cuda`, writes one `.cu` with every kernel and launcher
//! to `OUT_DIR`, compiles it with nvcc through `cc`, links the CUDA
//! runtime statically and sets `cfg(pipeline_cuda)`, under which
//! `NAME::cuda` calls its launcher. Where that cannot be done (no nvcc, a
//! failed compile) it says why in a cargo warning and the crate builds
//! without: `NAME::cuda` then returns `Error::CudaUnavailable`. It never
//! panics and never fails the build.
//!
//! - nvcc: `NVCC`, then `CUDA_HOME` or `CUDA_PATH` + `/bin/nvcc`, then
//!   `PATH` (NVIDIA's PyPI wheels `nvidia-cuda-nvcc`, `nvidia-cuda-runtime`
//!   and `nvidia-cuda-crt` hold one: `CUDA_HOME=.../site-packages/nvidia/cu13`).
//! - GPU architectures: `PIPELINE_CUDA_ARCHS`, compute capabilities
//!   separated by commas (default `80`): machine code for each, and PTX of
//!   the newest for the driver to compile for later GPUs. Never probed on
//!   the build machine, which may have no GPU.
//! - Kernels compile without contraction into FMA (`-fmad=false`) and with
//!   IEEE division and square roots, and evaluate float transcendentals
//!   in double, rounded once: the DSL's results are the CPU's.
//! - Kernels address buffers with 32-bit offsets and compute indices in
//!   32 bits, as Halide's do; a call with a buffer of 2^31 elements or
//!   more, or coordinates beyond 2^24, fails with `Error::CudaFailed`,
//!   unless `PIPELINE_CUDA_LARGE_BUFFERS=1` (or [`Cuda::large_buffers`])
//!   also builds each kernel with 64-bit offsets and indices, which such
//!   calls then run (nvcc takes about 40% longer).
//!
//! Pipelines written inside `macro_rules!` are not found, and so have no
//! GPU version: with `cfg(pipeline_cuda)` set, their `NAME::cuda` would not
//! link. Call `NAME::cuda` only on pipelines written out in the crate.

use crate::scan;
use pipeline_core::codegen::cuda::{generate_with, Options, EMULATION, PRELUDE};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The builder [`cuda`] returns.
#[derive(Clone, Debug, Default)]
pub struct Cuda {
    root: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    archs: Option<String>,
    large_buffers: Option<bool>,
    files: Vec<PathBuf>,
    quiet: bool,
}

/// The GPU versions of the crate's pipelines, to [`compile`](Cuda::compile)
/// from its build script.
pub fn cuda() -> Cuda {
    Cuda::default()
}

/// What [`Cuda::compile`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The launchers of these pipelines are compiled and linked, and
    /// `cfg(pipeline_cuda)` is set.
    Compiled(Vec<String>),
    /// Nothing was compiled, for this reason (also a cargo warning).
    Skipped(String),
}

/// The name of the library the kernels are archived in.
const LIB: &str = "pipeline_cuda";

impl Cuda {
    /// The crate to search (default: `CARGO_MANIFEST_DIR`).
    pub fn root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    /// Where to write the `.cu` and the library (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The compute capabilities to compile for, `"80,90"` (default:
    /// `PIPELINE_CUDA_ARCHS`, else `80`).
    pub fn archs(mut self, archs: &str) -> Self {
        self.archs = Some(archs.into());
        self
    }

    /// Whether kernels for buffers of 2^31 elements or more are built too
    /// (default: `PIPELINE_CUDA_LARGE_BUFFERS=1`, else not).
    pub fn large_buffers(mut self, on: bool) -> Self {
        self.large_buffers = Some(on);
        self
    }

    /// Also compiles the pipelines of `file` (relative to the crate's
    /// root), a Rust file outside the crate's `src/`, `examples/`,
    /// `benches/` and `tests/` that the crate includes with `#[path]`: an
    /// example of another crate, for instance.
    pub fn file(mut self, file: impl Into<PathBuf>) -> Self {
        self.files.push(file.into());
        self
    }

    /// Prints no cargo directives (to use it outside a build script).
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    fn say(&self, line: &str) {
        if !self.quiet {
            println!("{line}");
        }
    }

    /// Finds, emits, compiles and links the GPU versions; never panics.
    pub fn compile(&self) -> Outcome {
        self.say("cargo::rustc-check-cfg=cfg(pipeline_cuda)");
        for var in [
            "NVCC",
            "CUDA_HOME",
            "CUDA_PATH",
            "PATH",
            "PIPELINE_CUDA_ARCHS",
            "PIPELINE_CUDA_LARGE_BUFFERS",
        ] {
            self.say(&format!("cargo::rerun-if-env-changed={var}"));
        }
        match self.try_compile() {
            Ok(names) => Outcome::Compiled(names),
            Err(reason) => {
                self.say(&format!(
                    "cargo::warning=pipeline: the GPU versions of this crate's pipelines are not built: {reason}"
                ));
                Outcome::Skipped(reason)
            }
        }
    }

    fn try_compile(&self) -> Result<Vec<String>, String> {
        let root = match &self.root {
            Some(r) => r.clone(),
            None => PathBuf::from(
                std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?,
            ),
        };
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?),
        };
        let (text, names) = self.source(&root)?;
        let nvcc = nvcc().ok_or(
            "nvcc was not found (NVCC, CUDA_HOME/bin, CUDA_PATH/bin, PATH); `pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt` provides one",
        )?;
        let cu = out_dir.join("pipeline_cuda.cu");
        std::fs::write(&cu, text).map_err(|e| format!("{}: {e}", cu.display()))?;
        let archs = self
            .archs
            .clone()
            .or_else(|| std::env::var("PIPELINE_CUDA_ARCHS").ok())
            .unwrap_or_else(|| "80".into());
        let archs: Vec<u32> = archs
            .split(',')
            .map(|a| a.trim().trim_start_matches("sm_").parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                format!("PIPELINE_CUDA_ARCHS=`{archs}` is not compute capabilities like `80,90`")
            })?;
        // `cc` takes nvcc from `NVCC` (a compiler set by path would be
        // given the host compiler's flags); this is the build script's own
        // process, with no other thread.
        std::env::set_var("NVCC", &nvcc);
        let mut build = cc::Build::new();
        build
            .cuda(true)
            .file(&cu)
            .out_dir(&out_dir)
            .cargo_metadata(!self.quiet)
            .flag("-std=c++17")
            .flag("-fmad=false")
            .flag("-prec-div=true")
            .flag("-prec-sqrt=true")
            .flag("-w");
        for a in &archs {
            build
                .flag("-gencode")
                .flag(format!("arch=compute_{a},code=sm_{a}"));
        }
        if let Some(newest) = archs.iter().max() {
            build
                .flag("-gencode")
                .flag(format!("arch=compute_{newest},code=compute_{newest}"));
        }
        build
            .try_compile(LIB)
            .map_err(|e| format!("nvcc ({}) failed: {e}", nvcc.display()))?;
        // The static CUDA runtime, where NVIDIA's wheels and installs keep
        // it, and what it needs that `cc` does not add.
        let home = nvcc.parent().and_then(Path::parent).map(Path::to_path_buf);
        for dir in home.iter().flat_map(|h| [h.join("lib64"), h.join("lib")]) {
            if dir.join("libcudart_static.a").exists() {
                self.say(&format!(
                    "cargo::rustc-link-search=native={}",
                    dir.display()
                ));
            }
        }
        for lib in ["dl", "rt", "pthread"] {
            self.say(&format!("cargo::rustc-link-lib={lib}"));
        }
        self.say("cargo::rustc-cfg=pipeline_cuda");
        Ok(names)
    }

    /// The `.cu` of the crate's pipelines under `root`, and their names;
    /// the directories searched are rerun triggers (cargo watches every
    /// file in them).
    fn source(&self, root: &Path) -> Result<(String, Vec<String>), String> {
        let (mut found, _) = scan::pipelines(root);
        let extra: Vec<PathBuf> = self.files.iter().map(|f| root.join(f)).collect();
        for f in &extra {
            if !f.is_file() {
                return Err(format!(
                    "{} (given to Cuda::file) is not a file",
                    f.display()
                ));
            }
            self.say(&format!("cargo::rerun-if-changed={}", f.display()));
        }
        found.extend(scan::pipelines_in_files(extra).0);
        let large_buffers = self.large_buffers.unwrap_or_else(|| {
            std::env::var("PIPELINE_CUDA_LARGE_BUFFERS").is_ok_and(|v| v == "1")
        });
        let options = Options { large_buffers };
        let mut text = format!("{PRELUDE}\n{EMULATION}\n");
        let mut names = Vec::new();
        let mut seen_sources = HashSet::new();
        let mut seen_symbols = HashSet::new();
        for f in &found {
            // An invocation with several pipelines is found once per name.
            if !seen_sources.insert(f.source.clone()) {
                continue;
            }
            let Ok(programs) = pipeline_core::cuda_programs_from_source(&f.source) else {
                continue; // its crate's build says why
            };
            for (name, gpu) in programs {
                match gpu {
                    Ok((lowered, symbol)) => {
                        if seen_symbols.insert(symbol) {
                            text +=
                                &generate_with(&lowered, &name, options).map_err(|e| e.message)?;
                            names.push(name);
                        }
                    }
                    Err(reason) => self.say(&format!(
                        "cargo::warning=pipeline `{name}` ({}) has no GPU version: {reason}",
                        f.file.display()
                    )),
                }
            }
        }
        for dir in ["src", "examples", "benches", "tests"] {
            let d = root.join(dir);
            if d.exists() {
                self.say(&format!("cargo::rerun-if-changed={}", d.display()));
            }
        }
        if names.is_empty() {
            return Err(format!(
                "no pipeline with a GPU version under {}",
                root.display()
            ));
        }
        Ok((text, names))
    }
}

pub use pipeline_core::codegen::cuda::nvcc;

#[cfg(test)]
mod tests {
    use super::cuda;

    /// A crate whose only pipeline lives outside its usual folders, in a
    /// file it would include with `#[path]`.
    fn crate_with_outside_file() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("pipeline-build-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("common")).unwrap();
        std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
        let pipeline = r#"
pipeline! {
    pub fn halve(input: Image<u8, 2>) -> Image<u8, 2> {
        out(x, y) = input(x, y) / 2;
        out
    }
    schedule halve for cuda {
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
}
"#;
        std::fs::write(dir.join("common/halve.rs"), pipeline).unwrap();
        dir
    }

    #[test]
    fn files_outside_the_crates_folders_are_compiled_when_named() {
        let dir = crate_with_outside_file();
        let (_, names) = cuda().quiet().source(&dir).unwrap_or_default();
        assert!(names.is_empty(), "found without being named: {names:?}");
        let (text, names) = cuda().quiet().file("common/halve.rs").source(&dir).unwrap();
        assert_eq!(names, ["halve"]);
        assert!(text.contains("pipeline_halve_"), "no launcher in the .cu");
        let missing = cuda().quiet().file("common/nothing.rs").source(&dir);
        assert!(missing.is_err_and(|e| e.contains("is not a file")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
