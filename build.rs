//! With the `cuda` feature, links the CUDA runtime into `pipeline` for
//! `pipeline::cuda::DeviceBuffer`, where a CUDA toolkit is found as
//! `pipeline_build::cuda()` finds nvcc (`NVCC`, then `CUDA_HOME` or
//! `CUDA_PATH` + `/bin/nvcc`, then `PATH`): its `libcudart_static.a`, in
//! `lib64` or `lib` beside `bin`. Found, it sets `cfg(pipeline_cudart)`;
//! not found, device buffers answer `Error::CudaUnavailable`. Never fails
//! the build.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(pipeline_cudart)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    for var in ["NVCC", "CUDA_HOME", "CUDA_PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let Some(lib) = nvcc().and_then(|nvcc| runtime_dir(&nvcc)) else {
        return;
    };
    println!("cargo::rustc-link-search=native={}", lib.display());
    println!("cargo::rustc-link-lib=static:-bundle=cudart_static");
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo::rustc-link-lib={lib}");
    }
    println!("cargo::rustc-cfg=pipeline_cudart");
}

/// nvcc, as `pipeline_core::codegen::cuda::nvcc` finds it.
fn nvcc() -> Option<PathBuf> {
    if let Some(n) = std::env::var_os("NVCC").filter(|n| !n.is_empty()) {
        return Some(n.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var).filter(|h| !h.is_empty()) {
            let n = Path::new(&home).join("bin").join("nvcc");
            if n.exists() {
                return Some(n);
            }
        }
    }
    println!("cargo::rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nvcc"))
        .find(|n| n.exists())
}

/// The directory of the static CUDA runtime of nvcc's toolkit.
fn runtime_dir(nvcc: &Path) -> Option<PathBuf> {
    let home = nvcc.parent()?.parent()?;
    [home.join("lib64"), home.join("lib")]
        .into_iter()
        .find(|d| d.join("libcudart_static.a").exists())
}
