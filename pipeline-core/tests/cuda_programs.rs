//! The CUDA emitter's programs against the interpreter, without a GPU:
//! every pipeline of the repository under its default GPU schedule, and
//! hand-written `for cuda` blocks, emitted as CUDA C++ and compiled as
//! host C++ after the emulation header (blocks and threads one after
//! another), run at odd sizes through the `extern "C"` launcher, outputs
//! compared bit for bit with the interpreter's. With nvcc (found as
//! `tests/cuda_exprs.rs` finds it), the same programs compile for sm_80.

use pipeline_core::codegen::cuda::{generate_with, Options, EMULATION, PRELUDE, TOO_LARGE};
use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::{Pipeline, Type};
use pipeline_core::Lowered;
use std::fmt::Write as _;
use std::process::Command;

mod corpus;
use corpus::*;
mod cuda;

/// The reader that drives the launchers from a file (see `request`).
const DRIVER: &str = r#"
#include <stdio.h>
#include <vector>
static FILE* in;
static int64_t num() { int64_t v; if (fread(&v, 8, 1, in) != 1) exit(3); return v; }
struct Img { std::vector<int64_t> dims; std::vector<unsigned char> data; };
static Img image() {
    Img m;
    int64_t n = num();
    for (int64_t d = 0; d < 3 * n; d++) m.dims.push_back(num());
    int64_t bytes = num();
    m.data.resize(bytes > 0 ? bytes : 1);
    if (bytes > 0 && fread(m.data.data(), 1, bytes, in) != (size_t)bytes) exit(3);
    return m;
}
int main(int argc, char** argv) {
    in = fopen(argv[1], "rb");
    if (!in) return 2;
    for (;;) {
        int64_t which;
        if (fread(&which, 8, 1, in) != 1) break;
        std::vector<int64_t> syms(num());
        for (auto& s : syms) s = num();
        std::vector<Img> ins(num());
        for (auto& m : ins) m = image();
        std::vector<int64_t> params(num());
        for (auto& p : params) p = num();
        std::vector<Img> given(num());
        for (auto& m : given) m = image();
        // With copies to the device and back, then on images in device
        // memory (copied there and back here), from the same outputs.
        for (int on_device = 0; on_device < 2; on_device++) {
            std::vector<Img> outs = given;
            std::vector<const void*> in_ptr, param_ptr; std::vector<void*> out_ptr;
            std::vector<int64_t> in_dims, out_dims;
            std::vector<void*> on_gpu;
            int rc = 0;
            auto place = [&](Img& m) -> void* {
                if (!on_device) return m.data.data();
                void* d = 0;
                if (cudaMalloc(&d, m.data.size()) != cudaSuccess || cudaMemcpy(d, m.data.data(), m.data.size(), cudaMemcpyHostToDevice) != cudaSuccess) rc = -1;
                on_gpu.push_back(d);
                return d;
            };
            for (auto& m : ins) { in_ptr.push_back(place(m)); in_dims.insert(in_dims.end(), m.dims.begin(), m.dims.end()); }
            for (auto& p : params) param_ptr.push_back(&p);
            for (auto& m : outs) { out_ptr.push_back(place(m)); out_dims.insert(out_dims.end(), m.dims.begin(), m.dims.end()); }
            in_dims.push_back(0); out_dims.push_back(0); in_ptr.push_back(0); param_ptr.push_back(0); out_ptr.push_back(0);
            if (rc == 0) rc = LAUNCHERS[which](syms.data(), in_ptr.data(), in_dims.data(), param_ptr.data(), out_ptr.data(), out_dims.data(), on_device);
            if (on_device) {
                for (size_t k = 0; k < outs.size(); k++)
                    if (rc == 0 && cudaMemcpy(outs[k].data.data(), out_ptr[k], outs[k].data.size(), cudaMemcpyDeviceToHost) != cudaSuccess) rc = -1;
                for (void* d : on_gpu) cudaFree(d);
            }
            printf("rc %d\n", rc);
            for (auto& m : outs) {
                for (size_t i = 0; i < m.data.size(); i++) printf("%02x", m.data[i]);
                printf("\n");
            }
        }
    }
    return 0;
}
"#;

fn push(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A value's bytes as its type stores them (`bool`: one byte).
fn bytes(v: Value, ty: Type) -> Vec<u8> {
    let n = match ty {
        Type::Bool | Type::U8 | Type::I8 => 1,
        Type::U16 | Type::I16 => 2,
        Type::U32 | Type::I32 | Type::F32 => 4,
        _ => 8,
    };
    let bits: u64 = match v {
        Value::Int(i) => i as u64,
        Value::Bool(b) => b as u64,
        Value::F32(f) => f.to_bits() as u64,
        Value::F64(f) => f.to_bits(),
    };
    bits.to_le_bytes()[..n].to_vec()
}

/// How the images of a request lie in memory: dense with dimension 0
/// fastest, or (`transposed`) with the last dimension fastest, so that
/// dimension 0's stride is not 1 and the launchers take the kernels for
/// any strides.
#[derive(Clone, Copy)]
struct Layout {
    transposed: bool,
}

const DENSE: Layout = Layout { transposed: false };

impl Layout {
    /// Each dimension's stride in elements.
    fn strides(self, shape: &[usize]) -> Vec<i64> {
        let mut strides = vec![0i64; shape.len()];
        let mut stride = 1i64;
        let dims: Vec<usize> = match self.transposed {
            false => (0..shape.len()).collect(),
            true => (0..shape.len()).rev().collect(),
        };
        for d in dims {
            strides[d] = stride;
            stride *= shape[d] as i64;
        }
        strides
    }

    /// The image's elements (indices into its data, dimension 0 fastest)
    /// in memory order.
    fn order(self, img: &Image) -> Vec<usize> {
        let strides = self.strides(&img.shape);
        let mut order = vec![0usize; img.data.len()];
        for (i, slot) in (0..img.data.len()).map(|i| {
            let (mut rest, mut at) = (i, 0i64);
            for (d, &ext) in img.shape.iter().enumerate() {
                at += (rest % ext) as i64 * strides[d];
                rest /= ext;
            }
            (i, at as usize)
        }) {
            order[slot] = i;
        }
        order
    }
}

/// An image as the driver reads it: dims (min, extent, stride), then its
/// elements as `layout` lays them out.
fn image(out: &mut Vec<u8>, img: &Image, layout: Layout) {
    push(out, img.shape.len() as i64);
    for ((min, &ext), stride) in img
        .min
        .iter()
        .zip(&img.shape)
        .zip(layout.strides(&img.shape))
    {
        push(out, *min);
        push(out, ext as i64);
        push(out, stride);
    }
    let data: Vec<u8> = layout
        .order(img)
        .into_iter()
        .flat_map(|i| bytes(img.data[i], img.ty))
        .collect();
    push(out, data.len() as i64);
    out.extend(data);
}

/// One run of launcher `which` for the driver, and what the interpreter
/// gives for it.
struct Run {
    what: String,
    expected: Result<Vec<Image>, String>,
    layout: Layout,
}

fn request(
    which: usize,
    l: &Lowered,
    w: usize,
    h: usize,
    rng: &mut Rng,
    file: &mut Vec<u8>,
) -> Option<Run> {
    request_at(which, l, w, h, [0, 0], DENSE, rng, file)
}

/// [`request`] with the inputs' first x coordinate moved by `shift[0]` and
/// the outputs' by `shift[1]`, laid out as `layout` says.
#[allow(clippy::too_many_arguments)]
fn request_at(
    which: usize,
    l: &Lowered,
    w: usize,
    h: usize,
    shift: [i64; 2],
    layout: Layout,
    rng: &mut Rng,
    file: &mut Vec<u8>,
) -> Option<Run> {
    let p: &Pipeline = &l.pipeline;
    let (mut inputs, mut outputs) = images(p, w, h, rng);
    for image in &mut inputs {
        image.min[0] += shift[0];
    }
    for image in &mut outputs {
        image.min[0] += shift[1];
    }
    let params = params_of(p);
    let mut want = outputs.clone();
    let expected = interp::run(p, &inputs, &params, &mut want).map(|_| want);
    // Where the interpreter refuses the sizes, the Rust entry would too:
    // the launcher is never called.
    let syms = pipeline_core::exec::global_symbols(l, &inputs, &params, &outputs).ok()?;
    push(file, which as i64);
    push(file, syms.len() as i64);
    for s in &syms {
        push(file, *s);
    }
    push(file, inputs.len() as i64);
    for i in &inputs {
        image(file, i, layout);
    }
    push(file, params.len() as i64);
    for (v, decl) in params.iter().zip(&p.params) {
        let mut b = bytes(*v, decl.ty);
        b.resize(8, 0);
        file.extend(b);
    }
    push(file, outputs.len() as i64);
    for o in &outputs {
        image(file, o, layout);
    }
    let what = match layout.transposed {
        false => format!("{} at {w}x{h}", p.name),
        true => format!("{} at {w}x{h}, its images transposed", p.name),
    };
    Some(Run {
        what,
        expected,
        layout,
    })
}

/// Emits, compiles and runs `programs` (name, lowered) at odd sizes, and
/// compares every output with the interpreter's.
///
/// For a machine with a GPU: with `PIPELINE_CUDA_KIT=DIR`, the program
/// (`DIR/WHAT.cu`, for nvcc, the driver included) and its requests
/// (`DIR/WHAT.bin`) are also written there; `nvcc -o p WHAT.cu && ./p
/// WHAT.bin > WHAT.txt` runs them on the GPU; and with
/// `PIPELINE_CUDA_RESULTS=DIR` this test checks `DIR/WHAT.txt`, the GPU's
/// output, instead of running the emulation (`scripts/gpu_check.sh` does
/// all of it).
///
/// With `large`, the programs have kernels for large buffers too, and the
/// launchers take buffers of more than 1000 elements for large (where real
/// launches take those of 2^31 elements or more), so that both versions of
/// the kernels run.
fn check(programs: Vec<(String, Lowered)>, what: &str, large: bool) {
    let source = program_source(&programs, large, large.then_some(1000));
    let dir = cuda::scratch(&format!("programs-{what}"));
    let bin = cuda::cxx_compile(&source, &dir);
    cuda::nvcc_compile(&source, &dir, what);
    let mut rng = Rng(0x5eed);
    let mut file = Vec::new();
    let mut runs = Vec::new();
    for (k, (_, l)) in programs.iter().enumerate() {
        for (w, h) in [(1usize, 1usize), (7, 5), (37, 11), (67, 45)] {
            runs.extend(request(k, l, w, h, &mut rng, &mut file));
        }
        let transposed = Layout { transposed: true };
        runs.extend(request_at(
            k,
            l,
            37,
            11,
            [0, 0],
            transposed,
            &mut rng,
            &mut file,
        ));
        // The inputs' points at the outputs' offsets in their buffers, rows
        // of 64 elements: vector lanes' loads aligned as their stores are
        // (where the boundary condition lets the inputs start there).
        runs.extend(request_at(k, l, 62, 9, [2, 0], DENSE, &mut rng, &mut file));
    }
    assert!(
        runs.len() >= 3 * programs.len()
            && 2 * runs.iter().filter(|r| r.layout.transposed).count() >= programs.len(),
        "only {} runs of {} programs: the interpreter refused the sizes",
        runs.len(),
        programs.len()
    );
    let data = dir.join("requests.bin");
    std::fs::write(&data, &file).unwrap();
    if let Some(kit) = std::env::var_os("PIPELINE_CUDA_KIT") {
        let kit = std::path::Path::new(&kit);
        std::fs::create_dir_all(kit).unwrap();
        std::fs::write(kit.join(format!("{what}.cu")), &source).unwrap();
        std::fs::write(kit.join(format!("{what}.bin")), &file).unwrap();
    }
    let text = match std::env::var_os("PIPELINE_CUDA_RESULTS") {
        Some(results) => {
            let path = std::path::Path::new(&results).join(format!("{what}.txt"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("the GPU's results {}: {e}", path.display()));
            eprintln!("checking the GPU's results in {}", path.display());
            text
        }
        None => {
            let out = Command::new(&bin).arg(&data).output().unwrap();
            assert!(
                out.status.success(),
                "the emulation failed: {:?}",
                out.status
            );
            String::from_utf8(out.stdout).unwrap()
        }
    };
    let mut lines = text.lines();
    let mut wrong = Vec::new();
    for (run, mode) in runs
        .iter()
        .flat_map(|run| [(run, "copies"), (run, "on device")])
    {
        assert_eq!(
            lines.next(),
            Some("rc 0"),
            "{} ({mode}): the launcher failed",
            run.what
        );
        let expected = run
            .expected
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", run.what));
        for (k, img) in expected.iter().enumerate() {
            let want = hex_in(img, run.layout);
            let got = lines.next().unwrap_or("");
            let got = if img.data.is_empty() { "" } else { got };
            if got != want && !same_floats(got, &want, img.ty) {
                wrong.push(format!(
                    "{} ({mode}): output {k} differs from the interpreter",
                    run.what
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The C++ of `programs` and the driver: kernels for large buffers too with
/// `large`, and `limit` for `PL_NARROW_LIMIT`, the most elements a buffer
/// may have for the kernels with 32-bit offsets.
fn program_source(programs: &[(String, Lowered)], large: bool, limit: Option<u32>) -> String {
    let mut source = String::new();
    if let Some(n) = limit {
        let _ = writeln!(source, "#define PL_NARROW_LIMIT {n}");
    }
    source += &format!("{PRELUDE}\n{EMULATION}\n");
    let options = Options {
        large_buffers: large,
    };
    let mut launchers = Vec::new();
    for (k, (name, l)) in programs.iter().enumerate() {
        let unique = format!("{name}_{k}");
        let text = generate_with(l, &unique, options)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", l.text()));
        source += &text;
        launchers.push(pipeline_core::codegen::cuda::launcher_name(l, &unique));
    }
    let _ = writeln!(
        source,
        "typedef int (*Launcher)(const int64_t*, const void* const*, const int64_t*, const void* const*, void* const*, const int64_t*, int);\nstatic Launcher LAUNCHERS[] = {{{}}};",
        launchers.join(", ")
    );
    source + DRIVER
}

/// The blur under its first hand-written GPU schedule.
fn blur_program() -> Vec<(String, Lowered)> {
    let source = format!(
        "{}\nschedule blur for cuda {{ {} }}",
        cuda::BLUR,
        cuda::BLUR_SCHEDULES[0]
    );
    let l = pipeline_core::cuda_lowered_from_source(&source, "blur").unwrap();
    vec![("blur".to_string(), l)]
}

/// Runs program `bin` on the requests of `file` (written into `dir`): its
/// output.
fn run_requests(bin: &std::path::Path, dir: &std::path::Path, file: &[u8]) -> String {
    let data = dir.join("requests.bin");
    std::fs::write(&data, file).unwrap();
    let out = Command::new(bin).arg(&data).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// An image's bytes in hexadecimal, as the programs print them.
fn hex(img: &Image) -> String {
    hex_in(img, DENSE)
}

/// [`hex`] of the image laid out as `layout` says.
fn hex_in(img: &Image, layout: Layout) -> String {
    layout
        .order(img)
        .into_iter()
        .map(|i| img.data[i])
        .flat_map(|v| bytes(v, img.ty))
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The CUDA C++ of the blur under its hand-written schedule `k`.
fn blur_emitted(k: usize) -> String {
    let source = format!(
        "{}\nschedule blur for cuda {{ {} }}",
        cuda::BLUR,
        cuda::BLUR_SCHEDULES[k]
    );
    let l = pipeline_core::cuda_lowered_from_source(&source, "blur").unwrap();
    generate_with(&l, "blur", Options::default()).unwrap()
}

/// A thread's vector lanes compute every lane's value before the stores;
/// the loads they share are read once, as windows, and both in accesses
/// of up to 16 bytes where the addresses are contiguous and aligned at
/// run time. Where every load is clamped to an input, whatever the guard
/// (the stores guarded); where the lanes read another func's buffer, only
/// where every lane passes the guard (its points beyond may lie outside
/// the buffer), lane by lane elsewhere. All run as the interpreter in
/// `hand_written_gpu_schedules_run_as_the_interpreter`.
#[test]
fn vector_lanes_read_windows_and_write_at_once() {
    let (inlined, at_root, wide) = (blur_emitted(7), blur_emitted(2), blur_emitted(8));
    for (code, read, write) in [
        (
            &inlined,
            "pl::ldg_vec<uint16_t, 4>",
            "pl::st_vec<uint16_t, 4>",
        ),
        (
            &at_root,
            "pl::ld_vec<uint32_t, 4>",
            "pl::st_vec<uint16_t, 4>",
        ),
        (&wide, "pl::ldg_vec<uint16_t, 8>", "pl::st_vec<uint16_t, 8>"),
    ] {
        assert!(
            code.contains("__lane[") && code.contains(read) && code.contains(write),
            "{code}"
        );
    }
    assert!(!inlined.contains("if (__all)"), "{inlined}");
    assert!(at_root.contains("if (__all)"), "{at_root}");
}

/// A buffer folded by a power of two (a window sliding down a thread's
/// column) is indexed by a mask, not a 64-bit remainder.
#[test]
fn a_folded_buffer_in_a_kernel_is_indexed_by_a_mask() {
    let sliding = blur_emitted(11);
    assert!(sliding.contains("& (I)3)"), "{sliding}");
}

/// A thread's column of 8 points, whose loop's bound the thread bounds
/// make a constant (`min(7, 63 - 8 yi)` with `yi <= 7`), is a loop of
/// constant bounds, fully unrolled: the sliding window's first point (3
/// rows of `blur_x`) differs from the next ones (1 row) at compile time.
#[test]
fn a_column_of_constant_length_in_a_thread_is_unrolled() {
    let sliding = blur_emitted(12);
    assert!(
        sliding.contains("#pragma unroll\n")
            && sliding.contains("__l1_0_yii <= ((int64_t)7ull); __l1_0_yii++)"),
        "{sliding}"
    );
}

/// Without kernels for large buffers, a launcher given a buffer over the
/// limit does nothing and returns `TOO_LARGE`; under it, it runs.
#[test]
fn without_large_buffer_kernels_a_large_buffer_is_an_error() {
    let programs = blur_program();
    let dir = cuda::scratch("programs-too-large");
    let bin = cuda::cxx_compile(&program_source(&programs, false, Some(1000)), &dir);
    let mut file = Vec::new();
    let mut rng = Rng(0x1a2e);
    for (w, h) in [(7, 5), (67, 45)] {
        request(0, &programs[0].1, w, h, &mut rng, &mut file).unwrap();
    }
    let text = run_requests(&bin, &dir, &file);
    let codes: Vec<&str> = text.lines().filter(|l| l.starts_with("rc ")).collect();
    let too_large = format!("rc {TOO_LARGE}");
    assert_eq!(codes, ["rc 0", "rc 0", &too_large, &too_large], "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Coordinates beyond 2^24 take the kernels with 64-bit index arithmetic:
/// without them the launcher does nothing and returns `TOO_LARGE`; with
/// them it runs, as the interpreter.
#[test]
fn far_coordinates_take_the_kernels_with_64_bit_indices() {
    let programs = blur_program();
    for large in [false, true] {
        let dir = cuda::scratch(&format!("programs-far-{large}"));
        let bin = cuda::cxx_compile(&program_source(&programs, large, None), &dir);
        let mut file = Vec::new();
        let mut rng = Rng(0xfa2);
        let mut runs = Vec::new();
        for shift in [0, 1 << 25] {
            runs.extend(request_at(
                0,
                &programs[0].1,
                7,
                5,
                [shift, shift],
                DENSE,
                &mut rng,
                &mut file,
            ));
        }
        let text = run_requests(&bin, &dir, &file);
        let _ = std::fs::remove_dir_all(&dir);
        let codes: Vec<&str> = text.lines().filter(|l| l.starts_with("rc ")).collect();
        if !large {
            let too_large = format!("rc {TOO_LARGE}");
            assert_eq!(codes, ["rc 0", "rc 0", &too_large, &too_large], "{text}");
            continue;
        }
        assert_eq!(codes, ["rc 0"; 4], "{text}");
        // Each run's two calls, then its output's bytes after each.
        let mut lines = text.lines();
        for run in &runs {
            let want = hex(&run.expected.as_ref().unwrap()[0]);
            for mode in ["copies", "on device"] {
                assert_eq!(lines.next(), Some("rc 0"));
                assert_eq!(lines.next(), Some(want.as_str()), "{} ({mode})", run.what);
            }
        }
    }
}

/// Equal but for NaN payloads (any NaN for any NaN, as the vector tests).
fn same_floats(a: &str, b: &str, ty: Type) -> bool {
    let n = match ty {
        Type::F32 => 8,
        Type::F64 => 16,
        _ => return false,
    };
    if a.len() != b.len() {
        return false;
    }
    let nan = |s: &str| {
        let bits = u64::from_str_radix(s, 16).unwrap().swap_bytes() >> (64 - 4 * n);
        match ty {
            Type::F32 => f32::from_bits(bits as u32).is_nan(),
            _ => f64::from_bits(bits).is_nan(),
        }
    };
    (0..a.len() / n).all(|i| {
        let (x, y) = (&a[i * n..(i + 1) * n], &b[i * n..(i + 1) * n]);
        x == y || (nan(x) && nan(y))
    })
}

#[test]
fn every_pipeline_under_its_default_gpu_schedule_runs_as_the_interpreter() {
    let programs = sources()
        .into_iter()
        .map(|(source, name)| {
            let bare = without_schedules(&source);
            let l = pipeline_core::cuda_lowered_from_source(&bare, &name)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, l)
        })
        .collect();
    check(programs, "default", false);
}

#[test]
fn hand_written_gpu_schedules_run_as_the_interpreter() {
    let programs = cuda::hand_written()
        .into_iter()
        .map(|(source, name, block)| {
            let l = pipeline_core::cuda_lowered_from_source(&source, name)
                .unwrap_or_else(|e| panic!("{block}: {e}"));
            (name.to_string(), l)
        })
        .collect();
    check(programs, "hand", true);
}
