//! The `pipeline!` procedural macro. All compiler logic lives in `pipeline-core`;
//! this crate only moves tokens across the proc-macro boundary, and reads
//! the crate's schedule cache file (pipeline-core does no I/O).

use proc_macro::TokenStream;
use std::time::Instant;

/// Compiles a pipeline written in the `pipeline` DSL into Rust (see the `pipeline` crate).
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    let start = Instant::now();
    let cache = pipeline_core::schedule::cache::location().and_then(|at| {
        let text = std::fs::read_to_string(&at.path);
        at.read(text)
    });
    // `pipeline`'s `cuda` feature turns this one on: each pipeline gets
    // its GPU entry, `NAME::cuda`.
    let options = pipeline_core::ExpandOptions {
        cuda: cfg!(feature = "cuda"),
        lex: Some(lex),
        memo: memo::dir().is_some().then_some(pipeline_core::memo::Memo {
            get: memo::get,
            put: memo::put,
        }),
    };
    let out: TokenStream = pipeline_core::expand_with_options(input.into(), cache, options).into();
    // The whole expansion, token conversions across the compiler's bridge
    // included: what a build pays for this invocation.
    if std::env::var("PIPELINE_DEBUG")
        .is_ok_and(|v| v.split(',').any(|p| p == "time" || p == "all"))
    {
        eprintln!(
            "pipeline!: expanded in {:.1?} ({} bytes of generated code{})",
            start.elapsed(),
            out.to_string().len(),
            if memo::HIT.get() {
                ", remembered from an earlier build"
            } else {
                ""
            }
        );
    }
    out
}

/// The compiler's lexer, for code the macro hands over as text.
fn lex(text: &str) -> Option<proc_macro2::TokenStream> {
    text.parse::<TokenStream>().ok().map(Into::into)
}

/// Expansions remembered across builds (`pipeline_core::memo` says what
/// the key holds): a file each, in `pipeline-expansions/` beside the
/// `deps/` directory of the build's target directory (so `cargo clean`
/// removes them), found from the compiler's `--out-dir`. Where there is
/// none (the macro run by an IDE's server), or with `PIPELINE_MEMO=off`,
/// nothing is remembered. Every failure to read or write is a miss, never
/// an error.
mod memo {
    use std::cell::Cell;
    use std::hash::{Hash, Hasher};
    use std::path::PathBuf;
    use std::sync::OnceLock;

    thread_local! {
        /// Whether the last expansion found its code in the memo.
        pub static HIT: Cell<bool> = const { Cell::new(false) };
    }

    /// At most this many expansions, and this many bytes of them, are
    /// kept; the least recently used go first.
    const KEEP: usize = 1024;
    const KEEP_BYTES: u64 = 256 << 20;

    /// The directory, if expansions are remembered.
    pub fn dir() -> Option<&'static PathBuf> {
        static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
        DIR.get_or_init(|| {
            if std::env::var("PIPELINE_MEMO").is_ok_and(|v| v == "off") {
                return None;
            }
            let mut args = std::env::args();
            let out_dir = loop {
                let arg = args.next()?;
                if arg == "--out-dir" {
                    break args.next()?;
                }
                if let Some(dir) = arg.strip_prefix("--out-dir=") {
                    break dir.to_string();
                }
            };
            Some(PathBuf::from(out_dir).parent()?.join("pipeline-expansions"))
        })
        .as_ref()
    }

    /// The file of `key`: 128 bits of its hash.
    fn file(key: &str) -> Option<PathBuf> {
        let half = |salt: u8| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            salt.hash(&mut h);
            key.hash(&mut h);
            h.finish()
        };
        Some(dir()?.join(format!("{:016x}{:016x}", half(0), half(1))))
    }

    /// The record stored under `key`: the file holds the key's length, the
    /// key and the record, and the key must be the same.
    pub fn get(key: &str) -> Option<String> {
        HIT.set(false);
        let path = file(key)?;
        let text = std::fs::read_to_string(&path).ok()?;
        let (len, rest) = text.split_once('\n')?;
        let len: usize = len.parse().ok()?;
        if rest.get(..len)? != key {
            return None;
        }
        HIT.set(true);
        // Used now: the last to be pruned.
        let _ = std::fs::File::options()
            .append(true)
            .open(&path)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
        Some(rest[len..].to_string())
    }

    /// Stores `record` under `key`: written to a file of its own, then
    /// renamed into place, so that a reader never sees half of it.
    pub fn put(key: &str, record: &str) {
        let (Some(dir), Some(file)) = (dir(), file(key)) else {
            return;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = dir.join(format!(".{}-{nanos}.tmp", std::process::id()));
        let text = format!("{}\n{key}{record}", key.len());
        if std::fs::write(&tmp, text).is_err() || std::fs::rename(&tmp, &file).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        prune(dir);
    }

    /// Removes the least recently used files beyond [`KEEP`] files or
    /// [`KEEP_BYTES`] bytes.
    fn prune(dir: &PathBuf) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .filter_map(|e| {
                let e = e.ok()?;
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        let mut bytes = 0;
        for (k, (_, len, path)) in files.iter().enumerate() {
            bytes += len;
            if k >= KEEP || bytes > KEEP_BYTES {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}
