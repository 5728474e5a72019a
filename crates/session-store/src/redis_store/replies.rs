//! Reading the replies of the store's scripts and `HMGET`s: the meta hash and the script reply
//! shapes, and the fence arguments the scripts take.

use super::*;

/// The state in the meta fields `g`, `v`, `n`, `t` (`None`: no session).
pub(super) fn parse_meta(
    path: &Path,
    fields: Vec<Option<Vec<u8>>>,
) -> Result<Option<RedisVersion>, RedisStoreError> {
    let [g, v, n, t] = <[Option<Vec<u8>>; 4]>::try_from(fields)
        .map_err(|f| reply_err(path, format!("HMGET gave {} fields", f.len())))?;
    if g.is_none() {
        return Ok(None);
    }
    let num = |f: Option<Vec<u8>>, name: &str| -> Result<u64, RedisStoreError> {
        f.as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| reply_err(path, format!("meta field {name} is not a number")))
    };
    Ok(Some(RedisVersion {
        generation: num(g, "g")?,
        version: num(v, "v")?,
        len: num(n, "n")?,
        torn: num(t, "t")? == 1,
    }))
}

/// The fence as script arguments: generation (`''` any), version and length (-1 any).
pub(super) fn fence_args(fence: Option<&Fence>) -> (String, i64, i64) {
    let num = |v: Option<u64>| v.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX));
    match fence {
        None => (String::new(), -1, -1),
        Some(f) => (f.generation.to_string(), num(f.version), num(f.len)),
    }
}

/// A session script's reply `{status, g, v, n, t, extra...}`.
pub(super) struct ScriptReply {
    pub(super) status: i64,
    pub(super) items: Vec<Value>,
}

impl ScriptReply {
    pub(super) fn parse(path: &Path, reply: Value) -> Result<Self, RedisStoreError> {
        let Value::Array(mut items) = reply else {
            return Err(reply_err(path, format!("expected an array, got {reply:?}")));
        };
        if items.is_empty() {
            return Err(reply_err(path, "empty reply".to_owned()));
        }
        let status = match items.remove(0) {
            Value::Int(s) => s,
            other => return Err(reply_err(path, format!("status {other:?}"))),
        };
        Ok(ScriptReply { status, items })
    }

    /// Item `i` of the reply (1 = the generation, right after the status) as an integer.
    pub(super) fn take_int(&self, path: &Path, i: usize) -> Result<i64, RedisStoreError> {
        match self.items.get(i - 1) {
            Some(Value::Int(n)) => Ok(*n),
            other => Err(reply_err(
                path,
                format!("item {i}: expected an integer, got {other:?}"),
            )),
        }
    }

    /// `count` strings from item `from` (1-based as in [`ScriptReply::take_int`]) on.
    pub(super) fn take_strings(
        &mut self,
        path: &Path,
        from: usize,
        count: usize,
    ) -> Result<Vec<Vec<u8>>, RedisStoreError> {
        let got = self.items.len().saturating_sub(from - 1);
        if got != count {
            return Err(reply_err(
                path,
                format!("expected {count} ranges, got {got}"),
            ));
        }
        self.items
            .drain(from - 1..)
            .map(|v| match v {
                Value::BulkString(b) => Ok(b),
                other => Err(reply_err(path, format!("expected bytes, got {other:?}"))),
            })
            .collect()
    }

    /// The state in items 1–4.
    pub(super) fn state(&self, path: &Path) -> Result<RedisVersion, RedisStoreError> {
        self.state_at(path, 1)
    }

    /// The state in items `at`..`at + 3` (generation, version, length, torn), `None` when the
    /// reply ends before `at`.
    pub(super) fn state_opt(
        &self,
        path: &Path,
        at: usize,
    ) -> Result<Option<RedisVersion>, RedisStoreError> {
        if self.items.len() < at {
            return Ok(None);
        }
        self.state_at(path, at).map(Some)
    }

    /// The state in items `at`..`at + 3` (generation, version, length, torn).
    pub(super) fn state_at(&self, path: &Path, at: usize) -> Result<RedisVersion, RedisStoreError> {
        let generation = match self.items.get(at - 1) {
            Some(Value::BulkString(b)) => std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()),
            _ => None,
        }
        .ok_or_else(|| reply_err(path, format!("generation {:?}", self.items.get(at - 1))))?;
        let num = |i: usize| -> Result<u64, RedisStoreError> {
            u64::try_from(self.take_int(path, i)?)
                .map_err(|_| reply_err(path, format!("item {i} is negative")))
        };
        Ok(RedisVersion {
            generation,
            version: num(at + 1)?,
            len: num(at + 2)?,
            torn: num(at + 3)? == 1,
        })
    }
}
