//! Coordinate maps of the boundary conditions (the guide's *Boundary conditions*).
//!
//! Each maps any `i32` coordinate `c` to one inside `min..min + extent`, so that
//! a func read through a boundary condition is defined everywhere. Callers pass a
//! range of `i32` coordinates (`min + extent - 1 <= i32::MAX`) with `extent >= 1`.
//! Arithmetic is done in `i64`, so coordinates far outside never overflow, and
//! nothing panics: an `extent <= 0` gives `min`.
//!
//! ```text
//! extent 3 at 0, c = -3 -2 -1 | 0 1 2 | 3 4 5
//! clamp_coord               0  0  0 | 0 1 2 | 2 2 2     aaa|abc
//! mirror_coord              2  1  0 | 0 1 2 | 2 1 0     cba|abc
//! mirror_interior_coord     1  2  1 | 0 1 2 | 1 0 1     cb|abc
//! wrap_coord                0  1  2 | 0 1 2 | 0 1 2     abc|abc
//! ```

/// `d.rem_euclid(period)` (`period > 0`), without its division for `d`
/// within one period either side of `[0, period)`: every coordinate a
/// stencil reads near an edge.
#[inline(always)]
fn rem_near(d: i64, period: i64) -> i64 {
    if (0..period).contains(&d) {
        d
    } else if (-period..0).contains(&d) {
        d + period
    } else {
        d.rem_euclid(period)
    }
}

/// Repeats the edge element: `aaa|abc`.
#[inline(always)]
pub fn clamp_coord(c: i32, min: i32, extent: i32) -> i32 {
    if extent <= 0 {
        return min;
    }
    let max = min as i64 + extent as i64 - 1;
    (c as i64).clamp(min as i64, max) as i32
}

/// Reflects at the edges, repeating the edge element: `cba|abc` (period
/// `2 * extent`).
#[inline(always)]
pub fn mirror_coord(c: i32, min: i32, extent: i32) -> i32 {
    if extent <= 0 {
        return min;
    }
    let n = extent as i64;
    let m = rem_near(c as i64 - min as i64, 2 * n);
    let m = if m < n { m } else { 2 * n - 1 - m };
    (min as i64 + m) as i32
}

/// Reflects at the edges without repeating the edge element: `cb|abc` (period
/// `2 * extent - 2`); an extent of 1 gives `min` everywhere.
#[inline(always)]
pub fn mirror_interior_coord(c: i32, min: i32, extent: i32) -> i32 {
    if extent <= 1 {
        return min;
    }
    let n = extent as i64;
    let period = 2 * n - 2;
    let m = rem_near(c as i64 - min as i64, period);
    let m = if m < n { m } else { period - m };
    (min as i64 + m) as i32
}

/// Repeats the whole range: `abc|abc` (period `extent`).
#[inline(always)]
pub fn wrap_coord(c: i32, min: i32, extent: i32) -> i32 {
    if extent <= 0 {
        return min;
    }
    let m = rem_near(c as i64 - min as i64, extent as i64);
    (min as i64 + m) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    type CoordMap = fn(i32, i32, i32) -> i32;

    const MAPS: [(&str, CoordMap); 4] = [
        ("clamp", clamp_coord),
        ("mirror", mirror_coord),
        ("mirror_interior", mirror_interior_coord),
        ("wrap", wrap_coord),
    ];

    /// The maps written as the pattern they repeat, for `c` from `min - 2 * extent`.
    fn reference(name: &str, c: i64, min: i64, n: i64) -> i64 {
        let r = c - min;
        let m = match name {
            "clamp" => r.clamp(0, n - 1),
            "wrap" => r.rem_euclid(n),
            "mirror" => {
                let k = r.div_euclid(n);
                let i = r.rem_euclid(n);
                if k % 2 == 0 {
                    i
                } else {
                    n - 1 - i
                }
            }
            "mirror_interior" if n == 1 => 0,
            "mirror_interior" => {
                // Walk outward one step at a time, bouncing off both ends.
                let (mut pos, mut step) = (0i64, if r >= 0 { 1 } else { -1 });
                for _ in 0..r.abs() {
                    if pos + step < 0 || pos + step > n - 1 {
                        step = -step;
                    }
                    pos += step;
                }
                pos
            }
            _ => unreachable!(),
        };
        min + m
    }

    #[test]
    fn the_pictures_in_the_module_docs() {
        let row = |f: CoordMap| (-3..6).map(|c| f(c, 0, 3)).collect::<Vec<_>>();
        assert_eq!(row(clamp_coord), [0, 0, 0, 0, 1, 2, 2, 2, 2]);
        assert_eq!(row(mirror_coord), [2, 1, 0, 0, 1, 2, 2, 1, 0]);
        assert_eq!(row(mirror_interior_coord), [1, 2, 1, 0, 1, 2, 1, 0, 1]);
        assert_eq!(row(wrap_coord), [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn small_extents_match_the_reference() {
        for (name, f) in MAPS {
            for extent in [1, 2, 5] {
                for min in [-7, 0, 3] {
                    for c in (min - 4 * extent)..(min + 5 * extent) {
                        let expected = reference(name, c as i64, min as i64, extent as i64);
                        assert_eq!(
                            f(c, min, extent) as i64,
                            expected,
                            "{name}({c}, {min}, {extent})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn extent_one_gives_the_single_element() {
        for (name, f) in MAPS {
            for c in [i32::MIN, -1000, -1, 0, 1, 4, 1000, i32::MAX] {
                assert_eq!(f(c, 4, 1), 4, "{name}({c})");
            }
        }
    }

    #[test]
    fn far_coordinates_stay_inside_without_overflow() {
        for (name, f) in MAPS {
            for extent in [1, 2, 5, i32::MAX] {
                for min in [i32::MIN, -5, 0, 7] {
                    if min as i64 + extent as i64 - 1 > i32::MAX as i64 {
                        // Not a region of i32 coordinates; callers never ask.
                        continue;
                    }
                    for c in [
                        i32::MIN,
                        i32::MIN + 1,
                        -1_000_000_007,
                        0,
                        999_999_937,
                        i32::MAX,
                    ] {
                        let m = f(c, min, extent) as i64;
                        let (lo, hi) = (min as i64, min as i64 + extent as i64);
                        assert!(lo <= m && m < hi, "{name}({c}, {min}, {extent}) = {m}");
                    }
                }
            }
        }
        assert_eq!(
            mirror_coord(i32::MIN, 0, 5),
            reference("mirror", i32::MIN as i64, 0, 5) as i32
        );
        assert_eq!(
            wrap_coord(i32::MAX, -5, 5),
            -5 + (i32::MAX as i64 + 5).rem_euclid(5) as i32
        );
    }

    #[test]
    fn non_positive_extents_give_min() {
        for (name, f) in MAPS {
            for extent in [0, -1, i32::MIN] {
                assert_eq!(f(123, -9, extent), -9, "{name}");
            }
        }
    }
}
