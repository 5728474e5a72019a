//! Every write of `session_store::io` resolves a name once and acts on what it resolved: a
//! symlink re-pointed (or a symlink swapped in over the resolved file) between the check and
//! the open or rename never redirects the write out of the store (README, "Links out of the
//! store"; docs/DEVIATIONS.md D29 (4)). The swap is made deterministically from inside the
//! write, through the `Fs` seam: the first `open_append` or `create_temp` call runs it.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use session_store::io::{self as sio, Durability, Fs, RealFs};

type Hook = Box<dyn FnOnce() + Send>;

/// [`RealFs`] that runs a hook just before its first `open_append` or `create_temp`.
struct SwapFs(Mutex<Option<Hook>>);

impl SwapFs {
    fn new(hook: impl FnOnce() + Send + 'static) -> Self {
        SwapFs(Mutex::new(Some(Box::new(hook))))
    }
    fn fire(&self) {
        if let Some(h) = self.0.lock().unwrap().take() {
            h();
        }
    }
    fn fired(&self) -> bool {
        self.0.lock().unwrap().is_none()
    }
}

impl fmt::Debug for SwapFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SwapFs")
    }
}

impl Fs for SwapFs {
    fn open_append(&self, p: &Path, create: bool) -> io::Result<std::fs::File> {
        self.fire();
        RealFs.open_append(p, create)
    }
    fn create_new_file(&self, p: &Path, mode: u32) -> io::Result<std::fs::File> {
        RealFs.create_new_file(p, mode)
    }
    fn create_temp(
        &self,
        dir: &Path,
        prefix: &str,
        suffix: &str,
    ) -> io::Result<tempfile::NamedTempFile> {
        self.fire();
        RealFs.create_temp(dir, prefix, suffix)
    }
    fn write(&self, f: &mut std::fs::File, b: &[u8]) -> io::Result<usize> {
        RealFs.write(f, b)
    }
    fn set_len(&self, f: &std::fs::File, len: u64) -> io::Result<()> {
        RealFs.set_len(f, len)
    }
    fn sync_data(&self, f: &std::fs::File) -> io::Result<()> {
        RealFs.sync_data(f)
    }
    fn sync_all(&self, f: &std::fs::File) -> io::Result<()> {
        RealFs.sync_all(f)
    }
    fn sync_dir(&self, d: &Path) -> io::Result<()> {
        RealFs.sync_dir(d)
    }
    fn persist(&self, t: tempfile::NamedTempFile, p: &Path) -> io::Result<std::fs::File> {
        RealFs.persist(t, p)
    }
    fn persist_noclobber(&self, t: tempfile::NamedTempFile, p: &Path) -> io::Result<std::fs::File> {
        RealFs.persist_noclobber(t, p)
    }
    fn hard_link(&self, a: &Path, b: &Path) -> io::Result<()> {
        RealFs.hard_link(a, b)
    }
    fn rename(&self, a: &Path, b: &Path) -> io::Result<()> {
        RealFs.rename(a, b)
    }
    fn remove_file(&self, p: &Path) -> io::Result<()> {
        RealFs.remove_file(p)
    }
}

const IN: &[u8] = b"{\"type\":\"session\",\"id\":\"in\"}\n";
const VICTIM: &[u8] = b"{\"type\":\"session\",\"id\":\"victim\"}\nnot json\n";

/// `<tmp>/store/in.jsonl`, `<tmp>/store/L.jsonl -> in.jsonl`, `<tmp>/outside/victim.jsonl`.
struct Setup {
    _tmp: tempfile::TempDir,
    store: PathBuf,
    victim: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let store = base.join("store");
        let outside = base.join("outside");
        sio::ensure_dir(&store).unwrap();
        sio::ensure_dir(&outside).unwrap();
        sio::write_raw(&store.join("in.jsonl"), IN).unwrap();
        let victim = outside.join("victim.jsonl");
        sio::write_raw(&victim, VICTIM).unwrap();
        std::os::unix::fs::symlink("in.jsonl", store.join("L.jsonl")).unwrap();
        Setup {
            _tmp: tmp,
            store,
            victim,
        }
    }

    /// A hook re-pointing `store/<name>` at the outside file (a rename over it, as an
    /// attacker would do it atomically).
    fn point_at_victim(&self, name: &str) -> impl FnOnce() + Send + 'static {
        let store = self.store.clone();
        let victim = self.victim.clone();
        let name = name.to_owned();
        move || {
            let tmp = store.join("swap.tmp");
            std::os::unix::fs::symlink(&victim, &tmp).unwrap();
            std::fs::rename(&tmp, store.join(name)).unwrap();
        }
    }

    fn victim_untouched(&self) {
        assert_eq!(std::fs::read(&self.victim).unwrap(), VICTIM);
        let outside: Vec<_> = std::fs::read_dir(self.victim.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(outside, ["victim.jsonl"]);
    }
}

#[test]
fn an_append_through_a_link_re_pointed_after_the_check_lands_in_the_checked_file() {
    let s = Setup::new();
    let fs = SwapFs::new(s.point_at_victim("L.jsonl"));
    let out = sio::on(&fs)
        .append_line(&s.store.join("L.jsonl"), b"{\"n\":1}", Durability::Buffer)
        .unwrap();
    assert!(fs.fired());
    assert_eq!(out.previous_len, IN.len() as u64);
    assert_eq!(
        std::fs::read(s.store.join("in.jsonl")).unwrap(),
        [IN, b"{\"n\":1}\n"].concat()
    );
    s.victim_untouched();
}

#[test]
fn an_append_to_an_existing_file_through_a_re_pointed_link_lands_in_the_checked_file() {
    let s = Setup::new();
    let fs = SwapFs::new(s.point_at_victim("L.jsonl"));
    let out = sio::on(&fs)
        .append_to_existing(
            &s.store.join("L.jsonl"),
            b"{\"n\":2}",
            Durability::Buffer,
            None,
        )
        .unwrap();
    assert!(fs.fired());
    assert_eq!(out.written, b"{\"n\":2}\n");
    assert_eq!(
        std::fs::read(s.store.join("in.jsonl")).unwrap(),
        [IN, b"{\"n\":2}\n"].concat()
    );
    s.victim_untouched();
}

#[test]
fn a_symlink_swapped_in_over_the_resolved_file_is_never_opened_for_an_append() {
    let s = Setup::new();
    let fs = SwapFs::new(s.point_at_victim("in.jsonl"));
    let err = sio::on(&fs)
        .append_line(&s.store.join("in.jsonl"), b"{\"n\":3}", Durability::Buffer)
        .unwrap_err();
    assert!(fs.fired());
    // O_NOFOLLOW: the open fails with ELOOP instead of following the link.
    assert_eq!(err.raw_os_error(), Some(40), "{err}");
    s.victim_untouched();
    // The name is still the swapped-in link, untouched.
    assert_eq!(
        std::fs::read_link(s.store.join("in.jsonl")).unwrap(),
        s.victim
    );
}

#[test]
fn a_rewrite_renames_over_a_symlink_swapped_in_at_the_resolved_file_instead_of_following_it() {
    let s = Setup::new();
    let fs = SwapFs::new(s.point_at_victim("in.jsonl"));
    sio::on(&fs)
        .atomic_rewrite(&s.store.join("L.jsonl"), b"{\"new\":true}\n")
        .unwrap();
    assert!(fs.fired());
    let meta = std::fs::symlink_metadata(s.store.join("in.jsonl")).unwrap();
    assert!(meta.is_file(), "the swapped-in link was replaced");
    assert_eq!(
        std::fs::read(s.store.join("in.jsonl")).unwrap(),
        b"{\"new\":true}\n"
    );
    assert_eq!(
        std::fs::read_link(s.store.join("L.jsonl")).unwrap(),
        Path::new("in.jsonl")
    );
    s.victim_untouched();
}
