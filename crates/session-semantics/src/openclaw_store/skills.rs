//! Skill-prompt blobs (openclaw-store.md R2.21, R2.25): a `skillsSnapshot.prompt` of at least
//! 512 UTF-16 code units and at most 512 KiB of UTF-8 is persisted as
//! `skillsSnapshot.promptRef {version: 1, algorithm: "sha256", hash, bytes}` with the prompt's
//! exact bytes in `<sessionsDir>/skills-prompts/sha256/<hash[0..2]>/<hash>.txt`; a load puts
//! the blob's text back as `prompt`, and drops the whole `skillsSnapshot` of an entry whose
//! blob is missing or does not verify.

use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsString, JsValue};
use sha2::{Digest, Sha256};

use super::LoadChange;

/// The blob directory below the sessions directory.
const BLOB_DIR: &str = "skills-prompts";
/// Prompts shorter than this (in UTF-16 code units, JavaScript's `length`) stay inline.
pub const MIN_PROMPT_BLOB_CHARS: usize = 512;
/// Prompts longer than this in UTF-8 bytes stay inline.
pub const MAX_PROMPT_BLOB_BYTES: usize = 512 * 1024;

/// A blob the save must make sure of: its path and the prompt's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PromptBlob {
    pub(super) path: PathBuf,
    pub(super) bytes: Vec<u8>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn is_sha256_hex(hash: &str) -> bool {
    hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The blob of `hash` in `sessions_dir`: `skills-prompts/sha256/<hash[0..2]>/<hash>.txt`;
/// `None` when `hash` is not 64 lowercase hex digits.
pub fn skill_prompt_blob_path(sessions_dir: &Path, hash: &str) -> Option<PathBuf> {
    is_sha256_hex(hash).then(|| {
        sessions_dir
            .join(BLOB_DIR)
            .join("sha256")
            .join(&hash[..2])
            .join(format!("{hash}.txt"))
    })
}

/// The prompt of a valid `promptRef` (version 1, sha256, a hex hash, `bytes` a finite number
/// in 0..=512 KiB) whose blob is a regular file of exactly `bytes` bytes hashing to `hash`.
fn read_valid_blob(sessions_dir: &Path, prompt_ref: &JsObject) -> Option<String> {
    let version = prompt_ref.get("version")?.as_f64()?;
    let algorithm = prompt_ref.get_str("algorithm")?;
    let hash = prompt_ref.get_str("hash")?;
    let bytes = prompt_ref.get("bytes")?.as_f64()?;
    #[allow(clippy::cast_precision_loss)]
    let max = MAX_PROMPT_BLOB_BYTES as f64;
    if version != 1.0 || algorithm != "sha256" || !(0.0..=max).contains(&bytes) {
        return None;
    }
    let path = skill_prompt_blob_path(sessions_dir, &hash)?;
    let meta = std::fs::metadata(&path).ok()?;
    #[allow(clippy::cast_precision_loss)]
    if !meta.is_file() || meta.len() as f64 != bytes {
        return None;
    }
    let content = session_store::io::read_file(&path).ok()?;
    // `readFileSync(…, "utf8")` replaces invalid UTF-8, which then fails the hash or size check.
    let text = String::from_utf8_lossy(&content).into_owned();
    (sha256_hex(text.as_bytes()) == hash && text.len() == content.len()).then_some(text)
}

/// R2.25 at load, on one entry (before the legacy migrations, R2.5): a truthy
/// `skillsSnapshot` without a string `prompt` gets its blob's text as `prompt` (last in the
/// snapshot, `promptRef` removed), or, when its `promptRef` is missing, invalid or names a
/// missing or unverifiable blob (also an empty one), the whole `skillsSnapshot` is removed.
pub(super) fn hydrate(
    sessions_dir: &Path,
    key: &str,
    fields: &mut JsObject,
    changes: &mut Vec<LoadChange>,
) {
    let Some(snapshot) = fields.get("skillsSnapshot") else {
        return;
    };
    if !snapshot.is_truthy() || matches!(snapshot.get("prompt"), Some(JsValue::String(_))) {
        return;
    }
    let prompt = match snapshot {
        JsValue::Object(s) => match s.get("promptRef") {
            Some(JsValue::Object(r)) => read_valid_blob(sessions_dir, r),
            _ => None,
        },
        _ => None,
    };
    match (prompt.filter(|p| !p.is_empty()), snapshot.as_object()) {
        (Some(prompt), Some(s)) => {
            let mut next = s.clone();
            next.remove("promptRef");
            next.insert("prompt", JsValue::String(JsString::new(prompt)));
            fields.insert("skillsSnapshot", JsValue::Object(next));
        }
        _ => {
            fields.remove("skillsSnapshot");
            changes.push(LoadChange::ChangedField {
                key: key.to_owned(),
                field: "skillsSnapshot",
            });
        }
    }
}

/// R2.21 at save, on one entry: when `skillsSnapshot.prompt` is a string of at least 512
/// UTF-16 code units and at most 512 KiB of UTF-8, the persisted entry has `promptRef`
/// (last in the snapshot) instead of `prompt`, and the blob to write is returned. The entry in
/// memory keeps its `prompt`.
pub(super) fn project(sessions_dir: &Path, fields: &JsObject) -> Option<(JsObject, PromptBlob)> {
    let snapshot = fields.get("skillsSnapshot")?.as_object()?;
    let prompt = snapshot.get("prompt")?.as_js_string()?;
    let text = prompt.to_str_lossy();
    if prompt.utf16_len() < MIN_PROMPT_BLOB_CHARS || text.len() > MAX_PROMPT_BLOB_BYTES {
        return None;
    }
    let hash = sha256_hex(text.as_bytes());
    let path = skill_prompt_blob_path(sessions_dir, &hash)?;
    let mut prompt_ref = JsObject::new();
    prompt_ref.insert("version", JsValue::Number(1.0));
    prompt_ref.insert("algorithm", JsValue::String(JsString::new("sha256")));
    prompt_ref.insert("hash", JsValue::String(JsString::new(hash)));
    #[allow(clippy::cast_precision_loss)]
    prompt_ref.insert("bytes", JsValue::Number(text.len() as f64));
    let mut next_snapshot = snapshot.clone();
    next_snapshot.remove("prompt");
    next_snapshot.insert("promptRef", JsValue::Object(prompt_ref));
    let mut next = fields.clone();
    next.insert("skillsSnapshot", JsValue::Object(next_snapshot));
    Some((
        next,
        PromptBlob {
            path,
            bytes: text.into_owned().into_bytes(),
        },
    ))
}

/// Makes sure a blob holds its prompt (R2.25, `ensurePromptBlob`): a blob with these exact
/// bytes has its mtime set to now (so maintenance sees it in use); a missing one is created
/// (mode 0600, its directories made); one with other bytes is replaced atomically. Every write
/// goes through `session_store::io`.
///
/// # Errors
/// The I/O error of the failed step.
pub(super) fn ensure_blob(blob: &PromptBlob) -> std::io::Result<()> {
    match session_store::io::read_file(&blob.path) {
        Ok(existing) if existing == blob.bytes => {
            // Setting the times needs ownership, not write access: a read-only handle does.
            let file = std::fs::File::open(&blob.path)?;
            file.set_modified(std::time::SystemTime::now())
        }
        Ok(_) => session_store::io::atomic_rewrite(&blob.path, &blob.bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = blob.path.parent() {
                session_store::io::ensure_dir(dir)?;
            }
            match session_store::io::create_new(&blob.path, &blob.bytes, Some(0o600)) {
                // Another writer made it meanwhile: content-addressed, so it is the same text
                // unless damaged; check once more.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match session_store::io::read_file(&blob.path) {
                        Ok(existing) if existing == blob.bytes => Ok(()),
                        _ => session_store::io::atomic_rewrite(&blob.path, &blob.bytes),
                    }
                }
                other => other,
            }
        }
        Err(e) => Err(e),
    }
}
