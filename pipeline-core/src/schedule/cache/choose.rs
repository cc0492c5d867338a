//! Which cache entries serve a pipeline: each entry whose key matches is
//! checked exactly like a user's block and lowered; what does not check or
//! lower is rejected, with its reason, as a stale entry is. Runs after
//! `front::schedule` (the pipeline's block, if any, gives the layout and
//! size class of the key) and before code generation.
//!
//! ```text
//! blur, x86_64 avx2 entry "blur_x.compute_at(out, y); .."  ->  used: [Served { x86_64, avx2, "", Lowered }]
//! blur, stale aarch64 entry                           ->  notes: ["cache entry .. is stale: .."]
//! ```

use super::{layout, CacheFile, Entry, Key};
use crate::front::check::CheckedPipeline;
use crate::schedule::Schedule;
use crate::Lowered;

/// What the cache offers a pipeline.
pub(crate) struct Cached {
    /// The entries that checked and lowered: at most one per `target_arch`,
    /// level and processor.
    pub used: Vec<Served>,
    /// Why the auto-scheduler chooses where no entry is used, one line
    /// each, for `SCHEDULE`.
    pub notes: Vec<String>,
}

/// A cache entry's schedule, lowered, and whom it serves.
pub struct Served {
    /// The `target_arch` it serves.
    pub arch: String,
    /// The level it serves (`pipeline::rt::isa()`).
    pub isa: String,
    /// The processor it serves (`pipeline::rt::processor()`), or empty:
    /// every processor at its level without an entry of its own.
    pub processor: String,
    /// Its schedule, lowered.
    pub lowered: Lowered,
}

/// The entries of `file` (shown as `shown`) that serve `key` (whose arch,
/// level and processor are not compared); `user` holds what the
/// pipeline's block declares.
pub(crate) fn cached(
    c: &CheckedPipeline,
    user: &Schedule,
    file: &CacheFile,
    key: &Key,
    shown: &str,
) -> Cached {
    let name = &key.name;
    let found = file.lookup(key);
    let mut notes = Vec::new();
    let mut used = Vec::new();
    let entry_name = |e: &Entry| {
        format!(
            "the {} ({}{}) entry for `{name}` ({shown} line {})",
            e.key.arch,
            e.key.isa,
            e.key.on_processor(),
            e.line
        )
    };
    for (e, why) in &found.stale {
        notes.push(format!(
            "auto-scheduler: {} is stale ({why})",
            entry_name(e)
        ));
    }
    for e in &found.fresh {
        match lowered(c, user, e, shown) {
            Ok(lowered) => used.push(Served {
                arch: e.key.arch.clone(),
                isa: e.key.isa.clone(),
                processor: e.key.processor.clone(),
                lowered,
            }),
            Err(why) => notes.push(format!(
                "auto-scheduler: {} is rejected: {why}",
                entry_name(e)
            )),
        }
    }
    if found.fresh.is_empty() && found.stale.is_empty() {
        let wanted = if key.layout.is_empty() {
            format!("size class `{}`", key.size)
        } else {
            format!("size class `{}` and layout `{}`", key.size, key.layout)
        };
        let others: Vec<String> = found
            .other
            .iter()
            .map(|e| {
                format!(
                    "`{}`{} on line {}",
                    e.key.size,
                    if e.key.layout.is_empty() {
                        String::new()
                    } else {
                        format!(" with `{}`", e.key.layout)
                    },
                    e.line
                )
            })
            .collect();
        notes.push(if others.is_empty() {
            format!("auto-scheduler: {shown} has no entry for `{name}`")
        } else {
            format!(
                "auto-scheduler: {shown} has no entry for `{name}` of {wanted} (it has {})",
                others.join(", ")
            )
        });
    }
    if !used.is_empty() {
        let serve: Vec<String> = used
            .iter()
            .map(|s| format!("{} at {}{}", s.arch, s.isa, super::on(&s.processor)))
            .collect();
        notes.push(format!(
            "auto-scheduler: {shown} has no entry for `{name}` for this target_arch, level and processor (it has {})",
            serve.join(", ")
        ));
    }
    Cached { used, notes }
}

/// The entry's schedule, checked like a block without `auto;` and lowered.
fn lowered(
    c: &CheckedPipeline,
    user: &Schedule,
    e: &Entry,
    shown: &str,
) -> Result<Lowered, String> {
    lowered_text(c, user, &e.schedule, &e.provenance(shown))
}

/// A schedule offered as a cache entry's (`text`, said in `SCHEDULE` as
/// `note`), checked like a block without `auto;` and lowered: what the
/// macro does with an entry, and the tuner with each candidate.
pub(crate) fn lowered_text(
    c: &CheckedPipeline,
    user: &Schedule,
    text: &str,
    note: &str,
) -> Result<Lowered, String> {
    let mut sched = Schedule::default_for(&c.pipeline);
    let options = crate::front::schedule::check_text(text, c, &mut sched).map_err(|errors| {
        let all: Vec<String> = errors.into_iter().map(|e| e.to_string()).collect();
        all.join("; ")
    })?;
    if options.auto {
        return Err("an entry is a whole schedule, and `auto;` belongs in blocks".into());
    }
    if sched.funcs.iter().any(|f| !f.bounds.is_empty()) {
        return Err(
            "it fixes a region with `bound`, which would make calls of other sizes fail".into(),
        );
    }
    if sched.input_strides != user.input_strides {
        let p = &c.pipeline;
        let declared = |s: &Schedule| match layout(p, &s.input_strides) {
            l if l.is_empty() => "none".to_string(),
            l => format!("`{l}`"),
        };
        return Err(format!(
            "its input layout is {}, and the pipeline's block declares {}",
            declared(&sched),
            declared(user)
        ));
    }
    sched.note = Some(note.to_string());
    crate::lower_pipeline(&c.pipeline, &sched)
        .map_err(|err| format!("it does not lower: {}", err.message))
}
