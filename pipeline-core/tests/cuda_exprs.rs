//! The CUDA emitter's expressions against the interpreter: every operator,
//! conversion, built-in and boundary condition of the DSL, on every scalar
//! type, at corner values (zero, one, the type's MIN and MAX, negative
//! values, NaN, infinities, signed zeros, halves).
//!
//! The emitted C++ is compiled for the host with the system's C++
//! compiler (`CXX`, else `c++`) and the prelude the `.cu` files start
//! with, as the issue's host emulation does; the same text is what nvcc
//! compiles for the GPU. Operands reach the program through `volatile`
//! arrays, so that the compiler cannot fold them (GCC's constant folding
//! of `sinf` is correctly rounded, glibc's run-time `sinf`, which Rust's
//! `f32::sin` calls, is not always).

use pipeline_core::codegen::cuda::{c_type, Exprs, PRELUDE};
use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::print::Names;
use pipeline_core::ir::{Pipeline, Type};
use std::fmt::Write as _;
use std::process::Command;

mod cuda;

/// One expression over params `a`, `b`, `c` of one type, read at `x = 0`
/// of a one-element output.
struct Case {
    pipeline: Pipeline,
    /// The operands' type.
    ty: Type,
    /// The operand triples to evaluate it at.
    operands: Vec<[Value; 3]>,
}

/// Corner values of a type.
fn corners(t: Type) -> Vec<Value> {
    match t {
        Type::F32 => [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -2.5,
            3.75,
            1e-7,
            1e30,
            -1e30,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            300.7,
            -129.5,
            4e9,
        ]
        .map(Value::F32)
        .to_vec(),
        Type::F64 => [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -2.5,
            3.75,
            1e-300,
            1e300,
            -1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            300.7,
            -129.5,
            4e9,
            1e19,
            -9.3e18,
        ]
        .map(Value::F64)
        .to_vec(),
        t => {
            let (lo, hi) = (t.int_min(), t.int_max());
            let mut v = vec![0, 1, 2, 3, 7, 8, 13, hi, hi - 1, lo, lo + 1, hi / 2];
            if t.is_signed() {
                v.extend([-1, -2, -7, -8, -13]);
            }
            v.into_iter().map(Value::Int).collect()
        }
    }
}

/// Operand triples: every pair of corners, `c` cycling through them.
fn operands(t: Type) -> Vec<[Value; 3]> {
    let c = corners(t);
    let mut out = Vec::new();
    for (i, &a) in c.iter().enumerate() {
        for (j, &b) in c.iter().enumerate() {
            out.push([a, b, c[(i + j) % c.len()]]);
        }
    }
    out
}

/// The expressions of type `t`'s operands.
fn expressions(t: Type) -> Vec<String> {
    let mut e: Vec<String> = [
        "a + b",
        "a - b",
        "a * b",
        "a / b",
        "a % b",
        "min(a, b)",
        "max(a, b)",
        "-a",
        "abs(a)",
        "(a < b) as u8",
        "(a <= b) as u8",
        "(a == b) as u8",
        "(a != b) as u8",
        "(a > b) as u8",
        "(a >= b) as u8",
        "(a < b && b < c) as u16",
        "(a < b || !(b < c)) as i8",
        "((a < b) ^ (b < c)) as u8",
        "select(a < b, 1, 0) as u32",
        "select(a < b, b, c)",
    ]
    .map(String::from)
    .to_vec();
    if t.is_int() {
        e.extend(
            [
                "a & b", "a | b", "a ^ b", "!a", "a << b", "a >> b", "a >> 3", "a / 4", "a % 8",
            ]
            .map(String::from),
        );
    } else {
        e.extend(
            [
                "sqrt(a)",
                "exp(a)",
                "log(a)",
                "pow(a, b)",
                "sin(a)",
                "cos(a)",
                "tan(a)",
                "atan2(a, b)",
                "floor(a)",
                "ceil(a)",
                "round(a)",
                "trunc(a)",
                "fma(a, b, c)",
                "a * b + c",
            ]
            .map(String::from),
        );
    }
    for to in Type::ELEMENTS {
        e.push(format!("a as {}", to.name()));
        e.push(format!("saturating_cast::<{}>(a)", to.name()));
    }
    e
}

fn case(t: Type, expr: &str) -> Case {
    let ty = t.name();
    let source = format!(
        "fn t(input: Image<u8, 1>, a: {ty}, b: {ty}, c: {ty}) -> Image<_, 1> {{ {expr}; out }}"
    );
    let source = if expr.starts_with("let ") {
        source
    } else {
        source.replace(expr, &format!("out(x) = {expr}"))
    };
    let source = source.replace(
        "Image<_, 1>",
        &format!("Image<{}, 1>", result_type(t, expr)),
    );
    let pipeline = pipeline_core::pipeline_from_source(&source, "t")
        .unwrap_or_else(|e| panic!("{source}: {e}"));
    Case {
        pipeline,
        ty: t,
        operands: operands(t),
    }
}

/// The type of `expr` over operands of type `t`: the type it casts to
/// last (`a as f32`, `saturating_cast::<u8>(a)`, `(a < b) as u8`), `u8`
/// for a boundary case's load, else `t`.
fn result_type(t: Type, expr: &str) -> String {
    if expr.starts_with("let ") {
        return "u8".into();
    }
    expr.strip_prefix("a as ")
        .or_else(|| {
            expr.strip_prefix("saturating_cast::<")
                .map(|s| &s[..s.find('>').unwrap()])
        })
        .or_else(|| expr.rsplit_once(") as ").map(|(_, to)| to))
        .map_or_else(|| t.name().to_string(), str::to_string)
}

/// A value as the program prints it: integers in decimal, floats as their
/// bits, `bool` as 0 or 1.
fn printed(v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => (b as u8).to_string(),
        Value::F32(f) if f.is_nan() => "nan".into(),
        Value::F64(f) if f.is_nan() => "nan".into(),
        Value::F32(f) => format!("{:08x}", f.to_bits()),
        Value::F64(f) => format!("{:016x}", f.to_bits()),
    }
}

/// The bits of an operand, for the program's `volatile` table.
fn bits(v: Value, t: Type) -> u64 {
    match v {
        Value::Int(i) => t.wrap(i) as i64 as u64,
        Value::F32(f) => f.to_bits() as u64,
        Value::F64(f) => f.to_bits(),
        Value::Bool(b) => b as u64,
    }
}

/// The C++ that prints each case at each of its operand triples, the
/// interpreter's values in the same order, and the same cases as CUDA
/// device functions called by one kernel each (for nvcc).
fn program(cases: &[Case], text: &mut String, device: &mut String, expected: &mut Vec<String>) {
    for (k, c) in cases.iter().enumerate() {
        let p = &c.pipeline;
        let out = p.outputs[0];
        let e = Exprs {
            p,
            func: Some(out),
            update: None,
            n_global: 0,
            folds: &[],
            index: "int64_t",
            loads: &[],
        };
        let body = e.expr(&p.funcs[out].pure);
        let ty = c_type(c.ty);
        let rt = c_type(p.funcs[out].ty);
        let function = format!(
            "{rt} case{k}(const uint8_t* __in0, int64_t __in0_min0, int64_t __in0_stride0, int32_t __in0_ext0, {ty} __p0, {ty} __p1, {ty} __p2) {{\n  typedef int32_t I; // the kernels' narrow offsets\n  const int32_t __x{out}_0 = 0; (void)__x{out}_0; (void)__in0; (void)__in0_min0; (void)__in0_stride0; (void)__in0_ext0;\n  const int32_t __in0_last0 = pl::last_coord(__in0_min0, __in0_ext0); (void)__in0_last0;\n  return {body};\n}}"
        );
        let _ = writeln!(text, "static {function}");
        let _ = writeln!(
            device,
            "static __device__ {function}\n__global__ void kernel{k}(const uint8_t* in, const {ty}* ops, int n, {rt}* out) {{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = case{k}(in, -2, 1, 5, ops[3 * i], ops[3 * i + 1], ops[3 * i + 2]);\n}}"
        );
        let table: Vec<String> = c
            .operands
            .iter()
            .flat_map(|ops| ops.iter().map(|v| format!("{}ull", bits(*v, c.ty))))
            .collect();
        let _ = writeln!(
            text,
            "static volatile uint64_t ops{k}[] = {{{}}};\nstatic void run{k}() {{\n  for (int i = 0; i < {}; i++) {{\n    {ty} v[3];\n    for (int j = 0; j < 3; j++) {{ uint64_t b = ops{k}[3 * i + j]; memcpy(&v[j], &b, sizeof({ty})); }}\n    print(case{k}(input, -2, 1, 5, v[0], v[1], v[2]));\n  }}\n}}",
            table.join(", "),
            c.operands.len()
        );
        for ops in &c.operands {
            let mut output = [Image::new(p.funcs[out].ty, vec![0], vec![1])];
            let mut input = Image::new(Type::U8, vec![-2], vec![5]);
            for (i, v) in INPUT.iter().enumerate() {
                input.data[i] = Value::Int(*v as i128);
            }
            interp::run(p, &[input], &ops[..], &mut output).unwrap();
            expected.push(printed(output[0].data[0]));
        }
    }
}

/// The input every case may read: five elements from coordinate -2.
const INPUT: [u8; 5] = [10, 20, 30, 40, 50];

const PRINT: &str = r#"
#include <stdio.h>
static const uint8_t input[5] = {10, 20, 30, 40, 50};
static void print(bool v) { printf("%d\n", (int)v); }
static void print(uint8_t v) { printf("%llu\n", (unsigned long long)v); }
static void print(uint16_t v) { printf("%llu\n", (unsigned long long)v); }
static void print(uint32_t v) { printf("%llu\n", (unsigned long long)v); }
static void print(uint64_t v) { printf("%llu\n", (unsigned long long)v); }
static void print(int8_t v) { printf("%lld\n", (long long)v); }
static void print(int16_t v) { printf("%lld\n", (long long)v); }
static void print(int32_t v) { printf("%lld\n", (long long)v); }
static void print(int64_t v) { printf("%lld\n", (long long)v); }
static void print(float v) { uint32_t b; memcpy(&b, &v, 4); if (v != v) printf("nan\n"); else printf("%08x\n", b); }
static void print(double v) { uint64_t b; memcpy(&b, &v, 8); if (v != v) printf("nan\n"); else printf("%016llx\n", (unsigned long long)b); }
"#;

/// Compiles and runs `source` with the host's C++ compiler: its output.
fn compile_and_run(source: &str, what: &str) -> String {
    let dir = cuda::scratch(&format!("exprs-{what}"));
    let bin = cuda::cxx_compile(source, &dir);
    let run = Command::new(&bin).output().unwrap();
    assert!(run.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout).unwrap()
}

fn check(cases: Vec<Case>, what: &str) {
    let mut text = format!("{PRELUDE}\n{PRINT}\n");
    let mut device = String::new();
    let mut expected = Vec::new();
    program(&cases, &mut text, &mut device, &mut expected);
    let dir = cuda::scratch(&format!("exprs-{what}-cu"));
    cuda::nvcc_compile(&format!("{PRELUDE}\n{device}"), &dir, what);
    let _ = std::fs::remove_dir_all(&dir);
    text += "int main() {\n";
    for k in 0..cases.len() {
        let _ = writeln!(text, "  run{k}();");
    }
    text += "  return 0;\n}\n";
    let got = compile_and_run(&text, what);
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), expected.len());
    let mut k = 0;
    let mut wrong = Vec::new();
    for c in &cases {
        let out = c.pipeline.outputs[0];
        for ops in &c.operands {
            if got[k] != expected[k] {
                wrong.push(format!(
                    "{} with (a, b, c) = {ops:?}: interpreter {}, C++ {}",
                    Names {
                        pipeline: &c.pipeline,
                        syms: &[]
                    }
                    .expr(&c.pipeline.funcs[out].pure, Some(out), None),
                    expected[k],
                    got[k]
                ));
            }
            k += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        expected.len(),
        wrong[..wrong.len().min(40)].join("\n")
    );
}

/// Every expression of every element type that `which` picks.
fn cases_of(which: impl Fn(Type) -> bool) -> Vec<Case> {
    Type::ELEMENTS
        .into_iter()
        .filter(|&t| which(t))
        .flat_map(|t| expressions(t).into_iter().map(move |e| case(t, &e)))
        .collect()
}

#[test]
fn integer_expressions_agree_with_the_interpreter() {
    check(cases_of(Type::is_int), "ints");
}

#[test]
fn float_expressions_agree_with_the_interpreter() {
    check(cases_of(Type::is_float), "floats");
}

#[test]
fn boundary_conditions_and_loads_agree_with_the_interpreter() {
    let mut cases = Vec::new();
    for mode in [
        "clamp_edge()",
        "mirror()",
        "mirror_interior()",
        "wrap()",
        "constant(7)",
    ] {
        for at in ["x + a", "x - a * 3", "a / 2 + b"] {
            cases.push(case(
                Type::I32,
                &format!("let e = input.{mode}; out(x) = e({at})"),
            ));
        }
    }
    cases.push(case(
        Type::I32,
        "let e = input.clamp_edge(); out(x) = e(e(a) as i32 - 20)",
    ));
    check(cases, "boundaries");
}
