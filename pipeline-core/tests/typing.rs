//! The typing rules (the guide's *Expressions and types*), checked on the elaborated IR.

use pipeline_core::ir::Type;

/// The type of func `f` in `fn p(input: Image<u8, 2>) -> Image<u8, 2> { f(x) = <expr>; .. }`.
fn type_of(expr: &str) -> Result<Type, String> {
    let src = format!(
        "fn p(input: Image<u8, 2>, k: f64, n: u16) -> Image<u8, 2> {{ f(x) = {expr}; out(x, y) = input(x, y); out }}"
    );
    let p = pipeline_core::pipeline_from_source(&src, "p")?;
    Ok(p.funcs.iter().find(|f| f.name == "f").unwrap().ty)
}

#[test]
fn literals_take_the_other_operands_type() {
    assert_eq!(type_of("2"), Ok(Type::I32));
    assert_eq!(type_of("0.5"), Ok(Type::F32));
    assert_eq!(type_of("x as u8 + 255"), Ok(Type::U8));
    assert_eq!(type_of("x as f32 * 2"), Ok(Type::F32));
    assert_eq!(type_of("k * 2.5"), Ok(Type::F64));
    assert_eq!(type_of("3u8"), Ok(Type::U8));
    assert_eq!(type_of("0.5f64"), Ok(Type::F64));
    assert_eq!(type_of("5000000000i64"), Ok(Type::I64));
}

#[test]
fn literals_that_do_not_fit_are_errors() {
    assert!(type_of("x as u8 + 256")
        .unwrap_err()
        .contains("does not fit in u8"));
    assert!(type_of("x as i8 - 129")
        .unwrap_err()
        .contains("does not fit in i8"));
    assert!(type_of("5000000000").unwrap_err().contains("i64"));
    assert!(
        type_of("x as u8 + 0.5").is_ok(),
        "a float literal promotes the int to f32"
    );
    assert!(type_of("300u8").unwrap_err().contains("does not fit"));
}

#[test]
fn mixed_operands_promote_by_the_rules() {
    assert_eq!(type_of("x as u8 + x as u16"), Ok(Type::U16));
    assert_eq!(type_of("x as i8 + x as u16"), Ok(Type::U16));
    assert_eq!(type_of("x as u32 + x"), Ok(Type::I32));
    assert_eq!(type_of("x as u8 + x as i8"), Ok(Type::I8));
    assert_eq!(type_of("n as i64 * x as f32"), Ok(Type::F32));
    assert_eq!(type_of("x as f32 + k"), Ok(Type::F64));
    assert_eq!(type_of("x * 0.5"), Ok(Type::F32));
    assert_eq!(type_of("x as u8 * 0.5f64"), Ok(Type::F64));
}

#[test]
fn nothing_else_converts_implicitly() {
    assert!(type_of("(x > 0) + 1").unwrap_err().contains("bool"));
    assert!(type_of("x as f32 & 1")
        .unwrap_err()
        .contains("does not apply to f32"));
    assert!(type_of("sqrt(x)").unwrap_err().contains("as f32"));
    assert!(type_of("select(x > 0, 1, true)").is_err());
    assert_eq!(type_of("select(x > 0, 1u8, 2)"), Ok(Type::U8));
    assert_eq!(type_of("x > 0 && x < 9"), Ok(Type::Bool));
}

#[test]
fn built_ins_keep_or_define_their_types() {
    assert_eq!(type_of("abs(x as i16)"), Ok(Type::I16));
    assert_eq!(type_of("absd(x as i16, 3)"), Ok(Type::U16));
    assert_eq!(type_of("absd(x as u8, 3)"), Ok(Type::U8));
    assert_eq!(type_of("saturating_cast::<u8>(x * 1000)"), Ok(Type::U8));
    assert_eq!(type_of("clamp(x, 0, 255) as u8"), Ok(Type::U8));
    assert_eq!(type_of("min(x as u8, 3)"), Ok(Type::U8));
    assert_eq!(type_of("sum(-2..=2, |i| x + i)"), Ok(Type::I32));
    assert_eq!(
        type_of("maximum((0..2, 0..3), |(i, j)| (i * j) as f32)"),
        Ok(Type::F32)
    );
    assert_eq!(type_of("input.width() / 2"), Ok(Type::I32));
    assert_eq!(type_of("{ let t = x * 2; t as u16 + n }"), Ok(Type::U16));
    assert_eq!(type_of("if x > 3 { 1.0 } else { 2.0 }"), Ok(Type::F32));
}

#[test]
fn constant_folding_of_literals_is_exact_and_euclidean() {
    let src = "fn p(input: Image<i32, 1>) -> Image<i32, 1> { out(x) = input(x) + (-7 / 2) * 10 + (-7 % 2); out }";
    let p = pipeline_core::pipeline_from_source(src, "p").unwrap();
    let text = format!("{:?}", p.funcs[0].pure);
    assert!(
        text.contains("Int(-40)") && text.contains("Int(1)"),
        "{text}"
    );
}
