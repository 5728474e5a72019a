//! Races between a full rewrite and another gateway's appends, shared by the fenced-rewrite
//! tests on [`session_store::MemStorage`] (`storage_fenced_rewrite.rs`) and on Redis
//! (`redis_manager.rs`): [`RacingStorage`] wraps a storage and lets "another gateway" append
//! just before the rewrite's replace lands, after the rewrite's pre-check read the session
//! (once: the rewrite adopts the line and lands; before every replace: it gives up, losing
//! nothing).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use session_format::json::parse_value;
use session_store::io::{AppendToExistingError, Durability, KnownFile, VerifiedAppend};
use session_store::lock::{LockError, LockOptions};
use session_store::{OpenParams, SessionFileSnapshot, SessionManager, Storage};
use session_store::{Replace, SnapshotRead};

/// What runs just before a replace.
type Hook = Box<dyn FnMut() + Send>;

/// `inner` with a one-shot hook run just before [`Storage::replace`] or
/// [`Storage::replace_if`] reaches it; every other call goes straight through.
pub struct RacingStorage {
    inner: Arc<dyn Storage>,
    /// The hook, and whether it runs before every replace (else once).
    before_replace: Mutex<Option<(Hook, bool)>>,
    /// Replaces that reached `inner`: `(fenced, refused)`.
    replaces: Mutex<Vec<(bool, bool)>>,
}

impl fmt::Debug for RacingStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RacingStorage")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl RacingStorage {
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        RacingStorage {
            inner,
            before_replace: Mutex::new(None),
            replaces: Mutex::new(Vec::new()),
        }
    }

    /// Runs `hook` just before the next replace, and forgets the replaces so far.
    pub fn arm(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hook = Some(hook);
        self.replaces.lock().unwrap().clear();
        *self.before_replace.lock().unwrap() = Some((
            Box::new(move || {
                if let Some(h) = hook.take() {
                    h();
                }
            }),
            false,
        ));
    }

    /// Runs `hook` just before every replace from now on, and forgets the replaces so far.
    pub fn arm_each(&self, hook: impl FnMut() + Send + 'static) {
        self.replaces.lock().unwrap().clear();
        *self.before_replace.lock().unwrap() = Some((Box::new(hook), true));
    }

    /// The replaces so far: `(fenced, refused)` each.
    pub fn replaces(&self) -> Vec<(bool, bool)> {
        self.replaces.lock().unwrap().clone()
    }

    fn fire(&self) {
        let hook = self.before_replace.lock().unwrap().take();
        if let Some((mut h, each)) = hook {
            h();
            if each {
                *self.before_replace.lock().unwrap() = Some((h, each));
            }
        }
    }
}

impl Storage for RacingStorage {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        self.inner.stat(path)
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn read_snapshot(&self, path: &Path) -> io::Result<SnapshotRead> {
        self.inner.read_snapshot(path)
    }
    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        self.inner.read_from(path, offset)
    }
    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        self.inner.read_ranges(path, ranges)
    }
    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        self.inner.read_head(path)
    }
    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.inner.create_new(path, contents)
    }
    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.fire();
        self.replaces.lock().unwrap().push((false, false));
        self.inner.replace(path, contents)
    }
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        self.fire();
        let done = self.inner.replace_if(path, contents, expected)?;
        self.replaces
            .lock()
            .unwrap()
            .push((true, done == Replace::Refused));
        Ok(done)
    }
    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        self.inner.append_line(path, line, durability, expected)
    }
    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.inner.append_raw(path, bytes)
    }
    fn backup_copy(&self, source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        self.inner.backup_copy(source, backup, original)
    }
    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        self.inner.sync(path, durability)
    }
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.ensure_dir(dir)
    }
    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.list_sessions(dir)
    }
    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.list_dirs(root)
    }
    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        self.inner.with_write_lock(path, options, run)
    }
}

fn message(text: &str) -> session_format::json::JsValue {
    let json = match text.strip_prefix('a') {
        Some(_) => format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"t","provider":"t","model":"m","stopReason":"stop","timestamp":2}}"#
        ),
        None => format!(r#"{{"role":"user","content":"{text}","timestamp":1}}"#),
    };
    parse_value(json.as_bytes()).unwrap()
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Gateway A writes `u1 a2 u3 a4` to `<dir>/race.jsonl` through a [`RacingStorage`] over
/// `inner`; gateway B opens the session on `inner` and appends `from B` just before A's
/// `remove_trailing_entries` (dropping `a4`) replaces the session, after A's pre-rewrite
/// check read it. B's append is acknowledged, so it must survive: the session ends as the
/// header, `u1 a2 u3`, B's line byte for byte, and the leaf control that puts A's leaf back
/// on `u3`; A's first (fenced) replace was refused and its second one landed. (Neither
/// manager takes the write lock: the fence alone must keep the line.)
pub fn acknowledged_append_survives_a_full_rewrite(inner: Arc<dyn Storage>, dir: &Path) {
    let path = dir.join("race.jsonl");
    let racing = Arc::new(RacingStorage::new(Arc::clone(&inner)));
    let params = OpenParams {
        fallback_cwd: Some("/work".to_owned()),
        ..OpenParams::default()
    };
    let mut a = SessionManager::on(racing.clone())
        .open_with(&path, &params)
        .unwrap();
    let u1 = a.append_message(message("u1")).unwrap();
    let a2 = a.append_message(message("a2")).unwrap();
    let u3 = a.append_message(message("u3")).unwrap();
    let a4 = a.append_message(message("a4")).unwrap();
    let before = lines(&inner.read_all(&path).unwrap());
    assert_eq!(before.len(), 5);

    let mut b = SessionManager::on(Arc::clone(&inner))
        .open_with(&path, &params)
        .unwrap();
    let from_b: Arc<Mutex<Option<(String, String)>>> = Arc::default();
    let slot = Arc::clone(&from_b);
    let (inner_b, path_b) = (Arc::clone(&inner), path.clone());
    racing.arm(move || {
        let id = b.append_message(message("from B")).unwrap();
        let written = lines(&inner_b.read_all(&path_b).unwrap());
        *slot.lock().unwrap() = Some((id, written.last().unwrap().clone()));
    });

    let removed = a.remove_trailing_entries(|e| e.id() == a4, None).unwrap();
    assert_eq!(removed, 1);
    let (b_id, b_line) = from_b.lock().unwrap().clone().expect("B appended");
    assert!(b_line.contains(&format!(r#""id":"{b_id}""#)), "{b_line}");
    assert!(
        b_line.contains(&format!(r#""parentId":"{a4}""#)),
        "{b_line}"
    );

    let after = lines(&inner.read_all(&path).unwrap());
    assert_eq!(after.len(), 6, "{after:#?}");
    assert_eq!(after[..4], before[..4]);
    assert_eq!(after[4], b_line);
    let leaf = parse_value(after[5].as_bytes()).unwrap();
    let field = |k: &str| {
        leaf.get(k)
            .and_then(|v| v.as_str_lossy())
            .map(|s| s.into_owned())
    };
    assert_eq!(field("type").as_deref(), Some("leaf"));
    assert_eq!(field("parentId"), Some(b_id.clone()));
    assert_eq!(field("targetId"), Some(u3.clone()));
    let ids: Vec<String> = a.get_entries().map(|e| e.id().to_owned()).collect();
    assert_eq!(ids, [u1, a2, u3.clone(), b_id]);
    assert_eq!(a.get_leaf_id(), Some(u3.as_str()));
    assert!(a.diagnostics().conflict_backups.is_empty());
    // The first fenced replace was refused (B had appended), the second one landed.
    assert_eq!(racing.replaces(), [(true, true), (true, false)]);
}

/// As [`acknowledged_append_survives_a_full_rewrite`], but B appends before every replace A
/// tries: after [`session_store::FENCED_REWRITE_ATTEMPTS`] refused replaces A gives
/// up with an error saying so, its session in memory as before the call (`a4` still there),
/// and the stored session holds every line B appended.
pub fn a_rewrite_that_keeps_losing_the_race_gives_up_and_loses_nothing(
    inner: Arc<dyn Storage>,
    dir: &Path,
) {
    let path = dir.join("busy.jsonl");
    let racing = Arc::new(RacingStorage::new(Arc::clone(&inner)));
    let params = OpenParams {
        fallback_cwd: Some("/work".to_owned()),
        ..OpenParams::default()
    };
    let mut a = SessionManager::on(racing.clone())
        .open_with(&path, &params)
        .unwrap();
    let mut ids = Vec::new();
    for m in ["u1", "a2", "u3", "a4"] {
        ids.push(a.append_message(message(m)).unwrap());
    }
    let before = inner.read_all(&path).unwrap();
    let mut b = SessionManager::on(Arc::clone(&inner))
        .open_with(&path, &params)
        .unwrap();
    let appended: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&appended);
    racing.arm_each(move || {
        let n = log.lock().unwrap().len();
        let id = b.append_message(message(&format!("B{n}"))).unwrap();
        log.lock().unwrap().push(id);
    });

    let a4 = ids[3].clone();
    let err = a
        .remove_trailing_entries(|e| e.id() == a4, None)
        .unwrap_err();
    let attempts = session_store::FENCED_REWRITE_ATTEMPTS;
    assert_eq!(
        err.to_string(),
        format!("cannot rewrite session file {}", path.display())
    );
    let source = std::error::Error::source(&err).expect("the cause");
    assert_eq!(
        source.to_string(),
        format!(
            "{} kept changing (other writers) during {attempts} fenced full rewrites in {}; \
             nothing was written",
            path.display(),
            inner.name()
        )
    );
    let failure = source
        .downcast_ref::<session_store::WriteFailure>()
        .expect("a write failure");
    assert_eq!(failure.path, path);
    assert_eq!(failure.kind(), io::ErrorKind::ResourceBusy);
    let b_ids = appended.lock().unwrap().clone();
    assert_eq!(b_ids.len(), attempts as usize);
    assert_eq!(
        racing.replaces(),
        vec![(true, true); attempts as usize],
        "every replace was fenced and refused"
    );
    // A: as before the call.
    let now: Vec<String> = a.get_entries().map(|e| e.id().to_owned()).collect();
    assert_eq!(now, ids);
    assert_eq!(a.get_leaf_id(), Some(ids[3].as_str()));
    // The store: A's bytes, then every line B appended, in order.
    let stored = inner.read_all(&path).unwrap();
    assert!(stored.starts_with(&before));
    let tail = lines(&stored[before.len()..]);
    assert_eq!(tail.len(), b_ids.len());
    for (line, id) in tail.iter().zip(&b_ids) {
        assert!(line.contains(&format!(r#""id":"{id}""#)), "{line}");
    }
}
