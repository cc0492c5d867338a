//! The stages of a kernel's top level, each a closure of its own
//! ([`outline`]), and their code written on several threads.
//!
//! The walk over the lowered statement ([`Gen::stmt`]) leaves each
//! top-level stage as a placeholder, with what the walk knew at its start
//! (a [`Job`]: the values readable there, the buffers allocated so far and
//! how they fold, the stages open around it). [`Gen::emit_stages`] then
//! writes the stages, spread over threads, each thread with a generator of
//! its own, and puts their code where the placeholders are. A stage's code
//! depends only on its statement and that snapshot; what the rest of the
//! pipeline needs from it is what it asks of the instruction-set levels
//! ([`Needs`]), joined afterwards, and its hoisted values are numbered
//! from zero in each stage: the text is the same on one thread or many,
//! whichever thread writes which stage. The stages' code is most of an
//! expansion's work, and rustc leaves the other cores idle while a macro
//! runs.

use super::captures::{Name, Readable};
use super::*;

/// A top-level stage left for [`Gen::emit_stages`], with what the walk
/// knew at its start.
pub(super) struct Job<'a> {
    s: &'a Stmt,
    f: FuncId,
    readable: Readable,
    origins: HashMap<FuncId, Code>,
    folds: HashMap<FuncId, Vec<Option<i64>>>,
    open: Vec<FuncId>,
}

impl<'a> Gen<'a> {
    /// A statement of a block: stages of a func with a buffer of its own get
    /// its writer view around them and refresh its reader view after them.
    pub(super) fn stage(&self, s: &'a Stmt) -> Code {
        let Some(f) = s.stage_func() else {
            return self.stmt(s);
        };
        // Inside `f`'s own stage (the body of a loop that hosts other funcs)
        // its writer is already open.
        if self.open_stages.borrow().contains(&f) {
            return self.stmt(s);
        }
        let code = if self.loop_depth.get() > 0 {
            self.inner_stage(s, f)
        } else if let Some(jobs) = &self.stages {
            let mut jobs = jobs.borrow_mut();
            let k = jobs.len();
            jobs.push(Job {
                s,
                f,
                readable: self.readable.borrow().clone(),
                origins: self.origins.borrow().clone(),
                folds: self.folds.borrow().clone(),
                open: self.open_stages.borrow().clone(),
            });
            Code::placeholder(k)
        } else {
            let (code, needs) = self.outlined(s, f);
            self.needs.set(self.needs.get().join(needs));
            code
        };
        let w = self.writer(f);
        if w != word!("__w{}", f) {
            return code;
        }
        let (buf, r) = (word!("__buf{}", f), ident(reader_name(f)));
        let lo = self.origin(f);
        let reader = Name::Reader(f);
        if !self.readable.borrow().contains(&reader) {
            self.readable.borrow_mut().push(reader);
        }
        code! {
            {
                let mut #w = #buf.view_mut().with_origin(#lo);
                #code
            }
            let #r = #buf.view().with_origin(#lo);
        }
    }

    /// The code of stage `s` of func `f`, whose writer it opens; what it
    /// binds lives in its block.
    fn inner_stage(&self, s: &'a Stmt, f: FuncId) -> Code {
        let scope = self.readable.borrow().len();
        self.open_stages.borrow_mut().push(f);
        let code = self.stmt(s);
        self.open_stages.borrow_mut().pop();
        self.readable.borrow_mut().truncate(scope);
        code
    }

    /// Top-level stage `s` of func `f` as a closure ([`outline`]), and what
    /// it asks of the instruction-set levels.
    fn outlined(&self, s: &'a Stmt, f: FuncId) -> (Code, Needs) {
        // A closure of its own: its hoisted values are numbered from zero.
        let hoisted = std::mem::take(&mut *self.hoisted.borrow_mut());
        let outside = self.needs.take();
        let code = self.inner_stage(s, f);
        let needs = self.needs.replace(outside);
        *self.hoisted.borrow_mut() = hoisted;
        let narrow = needs.narrow();
        let code = outline(code, &self.writer(f), self.local_copies(s, f), narrow);
        // A stage at the narrow level asks nothing of the levels above.
        (code, if narrow { Needs::default() } else { needs })
    }

    /// `code`, the walk's, with the stages it left written in place of
    /// their placeholders, on up to `threads` threads (this one among
    /// them); what they ask of the levels joins [`Gen::needs`].
    pub(super) fn emit_stages(&self, code: Code, threads: usize) -> Code {
        let Some(jobs) = &self.stages else {
            return code;
        };
        let jobs = std::mem::take(&mut *jobs.borrow_mut());
        if jobs.is_empty() {
            return code;
        }
        // What a generator of the stages shares with this one (a `Gen`
        // itself, with its cells, stays on its thread).
        let (p, b, strides) = (self.p, self.b, &self.input_strides[..]);
        let parts = crate::par::map(
            jobs,
            threads,
            || Gen::new(p, b, strides),
            |g, job| g.emit_job(&job),
        );
        let mut codes = Vec::with_capacity(parts.len());
        for (code, needs) in parts {
            self.needs.set(self.needs.get().join(needs));
            codes.push(code);
        }
        code.fill(&codes)
    }

    /// A job's stage, written as the walk would have at its start.
    fn emit_job(&self, job: &Job<'a>) -> (Code, Needs) {
        *self.readable.borrow_mut() = job.readable.clone();
        *self.origins.borrow_mut() = job.origins.clone();
        *self.folds.borrow_mut() = job.folds.clone();
        *self.open_stages.borrow_mut() = job.open.clone();
        self.outlined(job.s, job.f)
    }
}

/// A stage at the top level of the kernel as a function of its own (a
/// closure that the level's `outline` calls and never inlines, compiled
/// with the level's features: `pipeline::rt::simd::Level`), with
/// `locals`, its own copies of what it reads (but for `f`'s reader, which
/// the stage reads through its writer `w`). One function per stage keeps
/// each loop nest's registers to itself: in one function for the whole
/// pipeline, LLVM spilled the bilateral grid's strides and addresses in its
/// serial scatter, and compile time grows faster than the function.
///
/// A `narrow` stage ([`Needs::narrow`]) runs at its level's
/// [`Narrow`](pipeline::rt::simd::Level::Narrow) one: in an AVX-512 kernel
/// (which a wider stage of the pipeline asks for) it is compiled for AVX2.
fn outline(code: Code, w: &Code, locals: Code, narrow: bool) -> Code {
    let code = code! {
        __isa.outline(#[inline(always)] || {
            let mut #w = #w.reborrow();
            #locals
            #code
            ::core::result::Result::Ok(())
        })?;
    };
    if !narrow {
        return code;
    }
    code! {
        {
            let __isa = __isa.narrow();
            #code
        }
    }
}
