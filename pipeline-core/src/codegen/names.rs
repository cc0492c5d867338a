//! The names generated code gives to what it binds, the same in every
//! emitter (so that generated sources read alike, and a name in one is
//! found in the other): a definition's coordinates, loop variables, `let`
//! values.

use crate::ir::{BoundaryMode, Coord, LoopVar};

/// A definition's coordinate inside a stage: `__x{func}_{dim}`, or
/// `__rv{func}_{update}_{dim}` for a reduction variable.
pub(crate) fn coord(c: Coord) -> String {
    match c {
        Coord::Pure(f, d) => format!("__x{f}_{d}"),
        Coord::Reduction(f, k, r) => format!("__rv{f}_{k}_{r}"),
    }
}

/// A loop variable: `__l{func}_{stage}_{name}`.
pub(crate) fn loop_var(v: &LoopVar) -> String {
    format!(
        "__l{}_{}_{}",
        v.func,
        v.stage,
        sanitize(&v.name).replace('#', "_")
    )
}

/// The value of `let` binding `id`: `__t{id}`.
pub(crate) fn let_value(id: usize) -> String {
    format!("__t{id}")
}

/// Scalar parameter `i` of the pipeline: `__p{i}`.
pub(crate) fn param(i: usize) -> String {
    format!("__p{i}")
}

/// The first coordinate of dimension `d` of input `i`: `__in{i}_min{d}`.
pub(crate) fn input_min(i: usize, d: usize) -> String {
    format!("__in{i}_min{d}")
}

/// The extent of dimension `d` of input `i`: `__in{i}_ext{d}`.
pub(crate) fn input_extent(i: usize, d: usize) -> String {
    format!("__in{i}_ext{d}")
}

/// The runtime's map of a coordinate under boundary condition `mode`
/// (`pipeline::rt::` in Rust, `pl::` in CUDA: the same name and meaning).
pub(crate) fn boundary_map(mode: BoundaryMode) -> &'static str {
    match mode {
        BoundaryMode::ClampEdge | BoundaryMode::GuardedClamp => "clamp_coord",
        BoundaryMode::Mirror => "mirror_coord",
        BoundaryMode::MirrorInterior => "mirror_interior_coord",
        BoundaryMode::Wrap => "wrap_coord",
    }
}

/// A func's name as an identifier: `gauss[2]` -> `gauss_2`.
pub fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_end_matches('_').to_string()
}
