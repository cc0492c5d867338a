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
        threads: None,
    };
    memo::HIT.set(false);
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
        /// Whether this expansion found its code in the memo (for
        /// `PIPELINE_DEBUG=time`).
        pub static HIT: Cell<bool> = const { Cell::new(false) };
    }

    /// How many expansions, and how many bytes of them, a memo keeps.
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

    /// The record stored under `key` in the build's memo.
    pub fn get(key: &str) -> Option<String> {
        let found = Store::new(dir()?.clone()).get(key);
        HIT.set(found.is_some());
        found
    }

    /// Stores `record` under `key` in the build's memo.
    pub fn put(key: &str, record: &str) {
        if let Some(dir) = dir() {
            Store::new(dir.clone()).put(key, record);
        }
    }

    /// A memo's files: one per key, named by 128 bits of its hash, holding
    /// the key's length, the key and the record.
    pub struct Store {
        dir: PathBuf,
        /// At most this many files, and this many bytes of them, are
        /// kept; the least recently used go first.
        keep: usize,
        keep_bytes: u64,
    }

    impl Store {
        pub fn new(dir: PathBuf) -> Store {
            Store {
                dir,
                keep: KEEP,
                keep_bytes: KEEP_BYTES,
            }
        }

        fn file(&self, key: &str) -> PathBuf {
            let half = |salt: u8| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                salt.hash(&mut h);
                key.hash(&mut h);
                h.finish()
            };
            self.dir.join(format!("{:016x}{:016x}", half(0), half(1)))
        }

        /// The record stored under `key`; the file must hold that very
        /// key (another with the same hash is a miss).
        pub fn get(&self, key: &str) -> Option<String> {
            let path = self.file(key);
            let text = std::fs::read_to_string(&path).ok()?;
            let (len, rest) = text.split_once('\n')?;
            let len: usize = len.parse().ok()?;
            if rest.get(..len)? != key {
                return None;
            }
            // Used now: the last to be pruned.
            let _ = std::fs::File::options()
                .append(true)
                .open(&path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()));
            Some(rest[len..].to_string())
        }

        /// Stores `record` under `key`: written to a file of its own, then
        /// renamed into place, so that a reader never sees half of it.
        pub fn put(&self, key: &str, record: &str) {
            if std::fs::create_dir_all(&self.dir).is_err() {
                return;
            }
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let tmp = self
                .dir
                .join(format!(".{}-{nanos}.tmp", std::process::id()));
            let text = format!("{}\n{key}{record}", key.len());
            if std::fs::write(&tmp, text).is_err() || std::fs::rename(&tmp, self.file(key)).is_err()
            {
                let _ = std::fs::remove_file(&tmp);
                return;
            }
            self.prune();
        }

        /// Removes the least recently used files beyond `keep` files or
        /// `keep_bytes` bytes.
        fn prune(&self) {
            let Ok(entries) = std::fs::read_dir(&self.dir) else {
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
                if k >= self.keep || bytes > self.keep_bytes {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Store;
        use std::path::PathBuf;

        fn scratch(name: &str) -> PathBuf {
            let dir = std::env::temp_dir()
                .join(format!("pipeline-memo-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            dir
        }

        /// What is put is got back under its key only; a file that is not
        /// a whole record of that key is a miss.
        #[test]
        fn records_come_back_under_their_key_only() {
            let dir = scratch("keys");
            let store = Store::new(dir.join("nested"));
            assert_eq!(store.get("k"), None, "nothing yet");
            store.put("k", "record\nwith lines");
            store.put("k2", "");
            assert_eq!(store.get("k").as_deref(), Some("record\nwith lines"));
            assert_eq!(store.get("k2").as_deref(), Some(""));
            assert_eq!(store.get("k3"), None);
            // Another key's file under this key's name (a hash collision),
            // and a damaged file: misses.
            std::fs::copy(store.file("k2"), store.file("k")).unwrap();
            assert_eq!(store.get("k"), None);
            std::fs::write(store.file("k"), "9\nk").unwrap();
            assert_eq!(store.get("k"), None);
            std::fs::write(store.file("k"), "x\nk").unwrap();
            assert_eq!(store.get("k"), None);
            // No temporary files are left behind.
            let names: Vec<String> = std::fs::read_dir(dir.join("nested"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
            let _ = std::fs::remove_dir_all(&dir);
        }

        /// Beyond its limits the store drops the least recently used
        /// records; one read is used again, and stays.
        #[test]
        fn the_least_recently_used_go_first() {
            let dir = scratch("prune");
            let mut store = Store::new(dir.clone());
            store.keep = 3;
            let old = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
            for k in 0..3 {
                store.put(&format!("k{k}"), "r");
                let f = std::fs::File::options()
                    .append(true)
                    .open(store.file(&format!("k{k}")))
                    .unwrap();
                f.set_modified(old + std::time::Duration::from_secs(k))
                    .unwrap();
            }
            assert!(store.get("k0").is_some(), "read: now the most recent");
            store.put("k3", "r");
            let kept: Vec<bool> = (0..4)
                .map(|k| store.get(&format!("k{k}")).is_some())
                .collect();
            assert_eq!(kept, [true, false, true, true]);
            store.keep = 10;
            store.keep_bytes = 12;
            store.put("k4", "a longer record");
            assert!(store.get("k4").is_none(), "over the byte limit alone");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
