//! Interval analysis, by example.

use super::*;
use std::sync::Arc;

fn var(d: usize) -> Expr {
    Expr::new(ExprKind::Var(d), Type::I32)
}
fn i32c(v: i128) -> Expr {
    Expr::i32(v)
}
fn scope(vars: Vec<Interval>) -> Scope<'static> {
    Scope::new(vars, vec![], Scope::no_funcs())
}
fn consts(i: &Interval) -> (i128, i128) {
    i.constants().expect("constant bounds")
}

#[test]
fn stencil_offsets_widen_the_interval() {
    let s = scope(vec![Interval::constant(0, 99)]);
    let e = Expr::binary(BinOp::Sub, var(0), i32c(1));
    assert_eq!(consts(&bounds_of(&e, &s)), (-1, 98));
    let e = Expr::binary(
        BinOp::Add,
        Expr::binary(BinOp::Mul, i32c(2), var(0)),
        i32c(1),
    );
    assert_eq!(consts(&bounds_of(&e, &s)), (1, 199));
}

#[test]
fn division_and_remainder_are_euclidean() {
    let s = scope(vec![Interval::constant(-5, 9)]);
    let e = Expr::binary(BinOp::Div, var(0), i32c(2));
    assert_eq!(consts(&bounds_of(&e, &s)), (-3, 4));
    let e = Expr::binary(BinOp::Div, var(0), i32c(-2));
    assert_eq!(consts(&bounds_of(&e, &s)), (-4, 3));
    let e = Expr::binary(BinOp::Rem, var(0), i32c(-4));
    assert_eq!(consts(&bounds_of(&e, &s)), (0, 3));
}

#[test]
fn clamp_bounds_an_unbounded_value() {
    let s = scope(vec![Interval::everything()]);
    let clamped = Expr::binary(
        BinOp::Min,
        Expr::binary(BinOp::Max, var(0), i32c(0)),
        i32c(255),
    );
    assert_eq!(consts(&bounds_of(&clamped, &s)), (0, 255));
    assert!(!bounds_of(&var(0), &s).is_bounded());
}

#[test]
fn narrow_loads_are_bounded_by_their_type_and_wide_ones_are_not() {
    let s = scope(vec![]);
    let load = |ty| {
        Expr::new(
            ExprKind::Load {
                source: Source::Input(0),
                args: vec![],
                site: 0,
            },
            ty,
        )
    };
    let widened = Expr::cast(Type::I32, load(Type::U8));
    assert_eq!(consts(&bounds_of(&widened, &s)), (0, 255));
    assert!(!bounds_of(&load(Type::I32), &s).is_bounded());
    let narrowed = Expr::cast(Type::U8, load(Type::I32));
    assert_eq!(consts(&bounds_of(&narrowed, &s)), (0, 255));
}

#[test]
fn wrapped_constant_bounds_are_no_bounds() {
    // `(v as u32) - 7` of a u8 `v` wraps to about 2^32 for v < 7: its
    // bounds [-7, 248] are not those of the u32 values.
    let s = scope(vec![]);
    let byte = Expr::new(
        ExprKind::Load {
            source: Source::Input(0),
            args: vec![],
            site: 0,
        },
        Type::U8,
    );
    let wrapped = Expr::binary(
        BinOp::Sub,
        Expr::cast(Type::U32, byte.clone()),
        Expr::int(Type::U32, 7),
    );
    let floor = Expr::binary(BinOp::Max, wrapped, Expr::int(Type::U32, 3));
    assert!(bounds_of(&floor, &s).max.is_none());
    let exact = Expr::binary(
        BinOp::Add,
        Expr::cast(Type::I32, byte),
        Expr::int(Type::I32, -7),
    );
    assert_eq!(consts(&bounds_of(&exact, &s)), (-7, 248));
}

#[test]
fn a_wrapped_coordinate_is_rejected() {
    // Found by the random pipelines test: bounds inference computed `f`
    // over [3, 248] and the read below it fell outside.
    let src = "fn p(input: Image<u8, 1>) -> Image<i16, 1> {
        f(u) = u as i16;
        out(x) = f(max(input(x) as u32 - 7u32, 3u32) as i32);
        out
    }";
    let e = crate::pipeline_from_source(src, "p").unwrap_err();
    assert!(e.contains("unbounded"), "{e}");
}

#[test]
fn clamps_of_unsigned_values_are_bounded() {
    // `clamp(v, 0, 3)` of an unsigned `v` is `min(v, 3)` once
    // `max(v, 0)` is simplified away: the lower bound is the type's.
    let s = scope(vec![]);
    for ty in [Type::U32, Type::U64] {
        let word = Expr::new(
            ExprKind::Load {
                source: Source::Input(0),
                args: vec![],
                site: 0,
            },
            ty,
        );
        let not = Expr::new(ExprKind::Unary(UnOp::Not, Arc::new(word.clone())), ty);
        for v in [word, not] {
            let clamped = Expr::binary(BinOp::Min, v, Expr::int(ty, 3));
            assert_eq!(consts(&bounds_of(&clamped, &s)), (0, 3), "{ty}");
        }
    }
}

#[test]
fn unsigned_values_that_may_wrap_below_zero_are_unbounded() {
    // `-v` and `0 - v` of an unsigned `v` wrap to large values: their
    // upper bound 0 is no bound (the interpreter found reads outside the
    // regions computed).
    let s = scope(vec![]);
    let word = Expr::new(
        ExprKind::Load {
            source: Source::Input(0),
            args: vec![],
            site: 0,
        },
        Type::U32,
    );
    let neg = Expr::new(
        ExprKind::Unary(UnOp::Neg, Arc::new(word.clone())),
        Type::U32,
    );
    let sub = Expr::binary(BinOp::Sub, Expr::int(Type::U32, 0), word);
    for e in [neg, sub] {
        assert!(bounds_of(&e, &s).max.is_none(), "{e:?}");
        let clamped = Expr::binary(BinOp::Min, e, Expr::int(Type::U32, 2));
        assert_eq!(consts(&bounds_of(&clamped, &s)), (0, 2));
    }
}

#[test]
fn a_clamp_of_a_variable_bounds_a_narrowing_cast() {
    // `clamp(saturating_cast::<u32>(x), 2, 5) as i32`: the clamp's bounds
    // are in terms of `x`, between 2 and 5, so the cast is exact.
    let s = scope(vec![Interval::new(Expr::sym(0), Expr::sym(1))]);
    let wide = Expr::new(ExprKind::SaturatingCast(Arc::new(var(0))), Type::U32);
    let clamped = Expr::binary(
        BinOp::Min,
        Expr::binary(BinOp::Max, wide, Expr::int(Type::U32, 2)),
        Expr::int(Type::U32, 5),
    );
    assert!(bounds_of(&Expr::cast(Type::I32, clamped), &s).is_bounded());
    // The front end refused this clamped coordinate (found by the random
    // pipelines test).
    let src = "fn p(input: Image<u8, 3>) -> Image<u8, 3> {
        out(x, y, c) = input(x, y, clamp(saturating_cast::<u32>(c), 0, 2) as i32);
        out
    }";
    assert!(crate::pipeline_from_source(src, "p").is_ok());
    // A clamp of an unsigned value whose lower bound is in terms of
    // variables (`clamp(v, 0, 5)` is `min(v, 5)` for an unsigned `v`).
    let src = "fn p(input: Image<u8, 3>, n: Image<u32, 1>) -> Image<u8, 3> {
        out(x, y, c) = input(x, y, clamp(saturating_cast::<u32>(c) / n(x), 0, 2) as i32);
        out
    }";
    assert!(crate::pipeline_from_source(src, "p").is_ok());
}

#[test]
fn shift_amounts_wrap_at_the_bit_width() {
    // `v >> 9` of an i8 shifts by 1: [-128, 127] becomes [-64, 63], not
    // [-1, 0] (the interpreter read outside a region computed from that).
    let s = scope(vec![]);
    let byte = Expr::new(
        ExprKind::Load {
            source: Source::Input(0),
            args: vec![],
            site: 0,
        },
        Type::I8,
    );
    let e = Expr::binary(BinOp::Shr, byte.clone(), Expr::int(Type::I8, 9));
    assert_eq!(consts(&bounds_of(&e, &s)), (-64, 63));
    let e = Expr::binary(
        BinOp::Shl,
        Expr::cast(Type::I32, byte),
        Expr::int(Type::I32, 33),
    );
    assert_eq!(consts(&bounds_of(&e, &s)), (-256, 254));
}

#[test]
fn sums_with_an_unbounded_operand_may_wrap() {
    // `3 + (y as u32)` of a negative `y` wraps to near 0: its lower
    // bound 3 does not hold, and a clamp of it to [0, 1] can be 0 (the
    // interpreter read below the region computed from [1, 1]).
    let s = scope(vec![Interval::new(Expr::sym(0), Expr::sym(1))]);
    let y = Expr::cast(Type::U32, var(0));
    let sum = Expr::binary(BinOp::Add, Expr::int(Type::U32, 3), y);
    let clamped = Expr::binary(BinOp::Min, sum, Expr::int(Type::U32, 1));
    assert_eq!(consts(&bounds_of(&clamped, &s)), (0, 1));
}

#[test]
fn saturating_cast_bounds_to_the_target_range() {
    let s = scope(vec![Interval::everything()]);
    let e = Expr::new(ExprKind::SaturatingCast(Arc::new(var(0))), Type::U8);
    assert_eq!(consts(&bounds_of(&e, &s)), (0, 255));
}

#[test]
fn boundary_conditions_stay_inside_the_source() {
    let s = scope(vec![Interval::constant(-10, 200)]);
    for mode in [
        BoundaryMode::ClampEdge,
        BoundaryMode::Mirror,
        BoundaryMode::Wrap,
    ] {
        let e = Expr::new(
            ExprKind::Boundary {
                mode,
                coord: Arc::new(var(0)),
                min: Arc::new(i32c(0)),
                extent: Arc::new(i32c(100)),
            },
            Type::I32,
        );
        assert_eq!(consts(&bounds_of(&e, &s)), (0, 99), "{mode:?}");
    }
    let s = scope(vec![Interval::constant(150, 200)]);
    let guarded = Expr::new(
        ExprKind::Boundary {
            mode: BoundaryMode::GuardedClamp,
            coord: Arc::new(var(0)),
            min: Arc::new(i32c(0)),
            extent: Arc::new(i32c(100)),
        },
        Type::I32,
    );
    let (lo, hi) = consts(&bounds_of(&guarded, &s));
    assert!(
        lo > hi,
        "a read entirely outside the source demands nothing"
    );
}

#[test]
fn a_fixed_condition_selects_its_branchs_bounds() {
    // select(e >= 8, min(o * 8, e - 8), o * 8) with o and e fixed: the
    // hull of both branches would reach down to e - 8.
    let s = scope(vec![]);
    let (o, e) = (Expr::sym(0), Expr::sym(1));
    let sel = Expr::select(
        Expr::binary(BinOp::Ge, e.clone(), Expr::i64(8)),
        Expr::binary(
            BinOp::Min,
            Expr::binary(BinOp::Mul, o.clone(), Expr::i64(8)),
            Expr::binary(BinOp::Sub, e, Expr::i64(8)),
        ),
        Expr::binary(BinOp::Mul, o, Expr::i64(8)),
    );
    let b = bounds_of(&sel, &s);
    assert!(
        matches!(b.min.unwrap().kind, ExprKind::Select(..)),
        "bounds follow the condition"
    );
}

#[test]
fn products_of_two_intervals_take_all_corners() {
    let s = scope(vec![Interval::constant(-2, 3), Interval::constant(-5, 4)]);
    let e = Expr::binary(BinOp::Mul, var(0), var(1));
    assert_eq!(consts(&bounds_of(&e, &s)), (-15, 12));
}

/// A chain of 20,000 additions, the kind a 2,000-term sum of
/// tests/large_expressions.rs is: each node used to simplify both its
/// operands to see whether they were constants, which made the analysis
/// quadratic in the chain's length (that sum took 6 s to expand). The
/// bound is wide: the quadratic version takes well over a minute here.
#[test]
fn a_chain_of_additions_takes_linear_time() {
    let s = scope(vec![Interval::constant(0, 99)]);
    let mut e = var(0);
    for _ in 0..20_000 {
        e = Expr::binary(BinOp::Add, e, i32c(1));
    }
    let start = std::time::Instant::now();
    assert_eq!(consts(&bounds_of(&e, &s)), (20_000, 20_099));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
}
