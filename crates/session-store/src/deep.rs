//! Depth-safe helpers for JSON values: payloads come from files and callers, and nothing in
//! this crate may recurse on their nesting depth (a recursive clone of a deeply nested payload
//! overflows a thread stack and aborts the process).

use session_format::json::{JsObject, JsString, JsValue};

enum Frame<'a> {
    Array(std::slice::Iter<'a, JsValue>, Vec<JsValue>),
    Object(
        Box<dyn Iterator<Item = (&'a JsString, &'a JsValue)> + 'a>,
        JsObject,
        Option<JsString>,
    ),
}

/// A deep copy of `value`, built with an explicit stack (any depth).
pub(crate) fn clone_value(value: &JsValue) -> JsValue {
    clone_value_with(value, &mut |_| None)
}

/// As [`clone_value`], with every string value (not key) replaced by `map(s)` when that is
/// `Some`.
pub(crate) fn clone_value_with(
    value: &JsValue,
    map: &mut dyn FnMut(&JsString) -> Option<JsValue>,
) -> JsValue {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next: Option<&JsValue> = Some(value);
    let mut done: Option<JsValue> = None;
    loop {
        if let Some(v) = next.take() {
            match v {
                JsValue::Array(items) => {
                    stack.push(Frame::Array(items.iter(), Vec::with_capacity(items.len())));
                }
                JsValue::Object(obj) => {
                    stack.push(Frame::Object(Box::new(obj.iter()), JsObject::new(), None));
                }
                JsValue::String(s) => {
                    done = Some(map(s).unwrap_or_else(|| JsValue::String(s.clone())));
                }
                scalar => done = Some(scalar.clone()),
            }
        }
        if let Some(v) = done.take() {
            match stack.last_mut() {
                None => return v,
                Some(Frame::Array(_, out)) => out.push(v),
                Some(Frame::Object(_, out, key)) => {
                    if let Some(k) = key.take() {
                        out.insert(k, v);
                    }
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            return JsValue::Null;
        };
        match top {
            Frame::Array(iter, _) => {
                if let Some(item) = iter.next() {
                    next = Some(item);
                    continue;
                }
            }
            Frame::Object(iter, _, key) => {
                if let Some((k, item)) = iter.next() {
                    *key = Some(k.clone());
                    next = Some(item);
                    continue;
                }
            }
        }
        done = match stack.pop() {
            Some(Frame::Array(_, out)) => Some(JsValue::Array(out)),
            Some(Frame::Object(_, out, _)) => Some(JsValue::Object(out)),
            None => None,
        };
    }
}

/// `value[key]` taken out of an owned object (no copy), `None` when absent or not an object.
pub(crate) fn take(value: &mut JsValue, key: &str) -> Option<JsValue> {
    value.as_object_mut()?.remove(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use session_format::json::{parse_value, to_json_string};

    #[test]
    fn clone_value_copies_any_shape_exactly() {
        let text = r#"{"2":1,"a":[1,{"b":[],"1":null,"c":"\ud800x"},[[["d"]]]],"e":{}}"#;
        let v = parse_value(text.as_bytes()).unwrap();
        let c = clone_value(&v);
        assert_eq!(c, v);
        assert_eq!(to_json_string(&c), to_json_string(&v));
        assert_eq!(clone_value(&JsValue::from(1.5)), JsValue::from(1.5));
    }

    #[test]
    fn clone_value_survives_deep_nesting_on_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let mut v = JsValue::from(1.0);
                for _ in 0..100_000 {
                    v = JsValue::Array(vec![v]);
                }
                let c = clone_value(&v);
                assert_eq!(to_json_string(&c), to_json_string(&v));
                // Dropping is recursive in `JsValue` itself: leak the test values.
                std::mem::forget(c);
                std::mem::forget(v);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
