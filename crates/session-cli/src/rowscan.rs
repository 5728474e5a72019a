//! Allocation-free walks over rows the read-only open already validated as JSON, for the checks
//! of `sessions check` that look inside a row: each answers "certainly nothing to report" for
//! the common row, so only the rare row that may hold a problem is parsed in full (and the
//! full parse, not this walk, decides what is reported). A walk never says "clean" for a row
//! [`session_format::json::parse_value`] would refuse as too deep.

use session_format::json::MAX_DEPTH;

/// Could `parse_value` refuse `json` as too deep? It needs a non-empty container inside
/// [`MAX_DEPTH`] others: more than that many `{`/`[` bytes and more than twice as many bytes in
/// all. A `true` only sends the row down the full-parse path.
pub(crate) fn may_be_too_deep(json: &[u8]) -> bool {
    json.len() > 2 * MAX_DEPTH
        && memchr::memchr2_iter(b'{', b'[', json)
            .nth(MAX_DEPTH)
            .is_some()
}

/// A cursor over one JSON text that is known to be valid.
struct Walk<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Walk<'_> {
    #[inline]
    fn peek(&self) -> u8 {
        self.b.get(self.pos).copied().unwrap_or(0)
    }

    #[inline]
    fn skip_ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    /// At `"`: moves past the closing quote (the first `"` not preceded by an odd run of
    /// backslashes); returns the body's span.
    #[inline]
    fn string(&mut self) -> (usize, usize) {
        let start = self.pos + 1;
        let mut p = start;
        while let Some(i) = memchr::memchr(b'"', self.b.get(p..).unwrap_or_default()) {
            let q = p + i;
            let backslashes = self.b[start..q]
                .iter()
                .rev()
                .take_while(|&&c| c == b'\\')
                .count();
            if backslashes % 2 == 0 {
                self.pos = q + 1;
                return (start, q);
            }
            p = q + 1;
        }
        self.pos = self.b.len();
        (start, self.b.len())
    }

    /// Skips one value (the cursor on its first byte).
    fn value(&mut self) {
        match self.peek() {
            b'"' => {
                self.string();
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                while self.pos < self.b.len() {
                    match self.peek() {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                self.pos += 1;
                                return;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while self.pos < self.b.len()
                    && !matches!(
                        self.peek(),
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.pos += 1;
                }
            }
        }
    }

    /// Walks the members of the object at the cursor (`{`), calling `member(key, walk)` with
    /// the cursor on each value (`member` must consume it). Returns false, stopping early, when
    /// a key holds an escape (its name would need decoding) or `member` returns false.
    fn object(&mut self, mut member: impl FnMut(&[u8], &mut Self) -> bool) -> bool {
        self.pos += 1;
        loop {
            self.skip_ws();
            match self.peek() {
                b'"' => {}
                b',' => {
                    self.pos += 1;
                    continue;
                }
                _ => {
                    self.pos += 1;
                    return true;
                }
            }
            let (s, e) = self.string();
            let b = self.b;
            let key = &b[s..e];
            if memchr::memchr(b'\\', key).is_some() {
                return false;
            }
            self.skip_ws();
            self.pos += 1; // `:`
            self.skip_ws();
            if !member(key, self) {
                return false;
            }
        }
    }
}

/// True when the `message` row `json` (a JSON text the envelope scan accepted) certainly has
/// nothing `check` reports: not too deep to decode, its last top-level `message` an object
/// whose last `content` is absent, a string, or an array without a `null` block. `false`
/// means "parse it in full and look".
pub(crate) fn message_row_is_clean(json: &[u8]) -> bool {
    if may_be_too_deep(json) {
        return false;
    }
    let mut w = Walk { b: json, pos: 0 };
    w.skip_ws();
    if w.peek() != b'{' {
        return false;
    }
    // The last `message` wins: `None` = none seen yet.
    let mut message: Option<bool> = None;
    let walked = w.object(|key, w| {
        if key == b"message" {
            message = Some(message_is_clean(w));
        } else {
            w.value();
        }
        true
    });
    walked && message == Some(true)
}

/// At a `message` value: true when it is an object whose last `content` is absent, a string,
/// or an array without a `null` element (the value is consumed either way).
fn message_is_clean(w: &mut Walk<'_>) -> bool {
    if w.peek() != b'{' {
        w.value();
        return false;
    }
    // The last `content` wins: absent is clean.
    let mut content = true;
    let walked = w.object(|key, w| {
        if key == b"content" {
            content = content_is_clean(w);
        } else {
            w.value();
        }
        true
    });
    if !walked {
        // Stopped at a key with an escape: skip what is left of the object.
        skip_rest_of_object(w);
        return false;
    }
    content
}

/// After stopping inside an object (the cursor just past a key's string), moves past the
/// object's closing brace.
fn skip_rest_of_object(w: &mut Walk<'_>) {
    let mut depth = 1usize;
    while w.pos < w.b.len() {
        match w.peek() {
            b'"' => {
                w.string();
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    w.pos += 1;
                    return;
                }
            }
            _ => {}
        }
        w.pos += 1;
    }
}

/// At a `content` value: true for a string, or an array none of whose elements is `null`.
fn content_is_clean(w: &mut Walk<'_>) -> bool {
    match w.peek() {
        b'"' => {
            w.string();
            true
        }
        b'[' => {
            w.pos += 1;
            let mut clean = true;
            loop {
                w.skip_ws();
                match w.peek() {
                    b']' => {
                        w.pos += 1;
                        return clean;
                    }
                    b',' => w.pos += 1,
                    // `null` is the only element starting with `n`.
                    b'n' => {
                        clean = false;
                        w.value();
                    }
                    0 if w.pos >= w.b.len() => return false,
                    _ => w.value(),
                }
            }
        }
        _ => {
            w.value();
            false
        }
    }
}

/// True when the `session_info` row `json` (a JSON text the envelope scan accepted) certainly
/// has nothing `check` reports: not too deep to decode, and its last top-level `name` absent,
/// `null` or a string.
pub(crate) fn session_info_row_is_clean(json: &[u8]) -> bool {
    if may_be_too_deep(json) {
        return false;
    }
    let mut w = Walk { b: json, pos: 0 };
    w.skip_ws();
    if w.peek() != b'{' {
        return false;
    }
    let mut name = true;
    let walked = w.object(|key, w| {
        if key == b"name" {
            name = matches!(w.peek(), b'"' | b'n');
        }
        w.value();
        true
    });
    walked && name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_messages() {
        for j in [
            r#"{"type":"message","id":"a","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":"x\"}]\\"},{"n":null}]}}"#,
            r#" { "message" : { "content" : [ ] } , "id" : "a" } "#,
            r#"{"message":null,"message":{"content":"x"}}"#,
            r#"{"message":{"content":null,"content":"x"}}"#,
            r#"{"message":{"content":[true,false,1,"n",[null],{"a":null}]}}"#,
        ] {
            assert!(message_row_is_clean(j.as_bytes()), "{j}");
        }
    }

    #[test]
    fn suspect_messages() {
        for j in [
            r#"{"type":"message","id":"a"}"#,
            r#"{"message":null}"#,
            r#"{"message":"text"}"#,
            r#"{"message":[]}"#,
            r#"{"message":{"content":"x"},"message":null}"#,
            r#"{"message":{"content":"x","content":7}}"#,
            r#"{"message":{"content":[{"a":1},null]}}"#,
            r#"{"message":{"content":{}}}"#,
            r#"{"message":{"cont\u0065nt":7}}"#,
            r#"{"m\u0065ssage":{"content":"x"}}"#,
            "[1]",
            "null",
        ] {
            assert!(!message_row_is_clean(j.as_bytes()), "{j}");
        }
        let deep = format!(
            "{{\"message\":{{\"content\":{}1{}}}}}",
            "[".repeat(1001),
            "]".repeat(1001)
        );
        assert!(!message_row_is_clean(deep.as_bytes()));
    }

    #[test]
    fn session_info_names() {
        assert!(session_info_row_is_clean(
            br#"{"type":"session_info","name":"x"}"#
        ));
        assert!(session_info_row_is_clean(
            br#"{"type":"session_info","name":null}"#
        ));
        assert!(session_info_row_is_clean(br#"{"type":"session_info"}"#));
        assert!(session_info_row_is_clean(
            br#"{"name":7,"name":"x","other":{"name":1}}"#
        ));
        assert!(!session_info_row_is_clean(br#"{"name":"x","name":7}"#));
        assert!(!session_info_row_is_clean(br#"{"name":["x"]}"#));
        assert!(!session_info_row_is_clean(br#"{"n\u0061me":"x"}"#));
    }

    #[test]
    fn depth_filter_is_conservative() {
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(!may_be_too_deep(at_limit.as_bytes()));
        let over = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(may_be_too_deep(over.as_bytes()));
    }
}
