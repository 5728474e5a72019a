//! A real headless Chromium driven over the DevTools protocol (`headless_chrome`): open a page,
//! evaluate script in it, type, click, wait for a condition. The browser is the one
//! [`super::chromium`] finds (skipping the test with a printed reason when there is none),
//! started without a sandbox, with a fresh profile and no network beyond what the page asks
//! for.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::ffi::OsStr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

/// One browser at a time: `headless_chrome` picks a free debugging port by trying ports, so two
/// browsers started at once can race for one port and a test could drive the other test's
/// browser; one browser at a time is also what two cores run well.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// One browser with one tab.
pub struct Page {
    tab: Arc<Tab>,
    // Kept for the lifetime of the page (the browser closes when dropped, before the profile).
    _browser: Browser,
    _profile: tempfile::TempDir,
    _turn: MutexGuard<'static, ()>,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Page")
    }
}

/// A headless Chromium with a 1280×900 window, or `None` (printed `SKIP <test>: <reason>`) when
/// there is no Chromium.
pub fn browser(test: &str) -> Option<Page> {
    let path = super::chromium(test)?;
    // A test that failed while holding the lock poisons it; the next one may still run.
    let turn = ONE_BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let profile = tempfile::tempdir().unwrap();
    let args: Vec<&OsStr> = vec![
        OsStr::new("--no-proxy-server"),
        OsStr::new("--disable-gpu"),
        OsStr::new("--mute-audio"),
    ];
    let options = LaunchOptions::default_builder()
        .path(Some(path))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1280, 900)))
        .user_data_dir(Some(profile.path().to_path_buf()))
        .idle_browser_timeout(Duration::from_secs(180))
        .args(args)
        .build()
        .unwrap();
    let browser = Browser::new(options).expect("chromium did not start");
    let tab = browser.new_tab().expect("no tab");
    Some(Page {
        tab,
        _browser: browser,
        _profile: profile,
        _turn: turn,
    })
}

impl Page {
    /// Loads `url` afresh (from `about:blank`, so that a URL differing only in its fragment
    /// loads the page again) and waits until the document is complete.
    pub fn open(&self, url: &str) -> &Self {
        self.tab.navigate_to("about:blank").unwrap();
        self.wait_for("location.href === 'about:blank'", 30);
        self.tab.navigate_to(url).unwrap();
        let url = serde_json::to_string(url).unwrap();
        self.wait_for(
            &format!("location.href === {url} && document.readyState === 'complete'"),
            60,
        )
    }

    /// The value of `expr` (a JavaScript expression; a promise is awaited), as JSON: the
    /// expression is evaluated as `JSON.stringify(expr)` in the page.
    pub fn eval(&self, expr: &str) -> Value {
        let wrapped = format!("(async () => JSON.stringify(await ({expr})))()");
        let r = self.tab.evaluate(&wrapped, true).unwrap();
        if let Some(d) = &r.description
            && r.value.is_none()
        {
            panic!("{expr}: {d}");
        }
        match r.value {
            Some(Value::String(s)) => serde_json::from_str(&s).unwrap(),
            Some(Value::Null) | None => Value::Null,
            Some(v) => panic!("{expr}: not a JSON text: {v}"),
        }
    }

    /// Waits up to `secs` seconds for `cond` (a JavaScript expression) to be true.
    pub fn wait_for(&self, cond: &str, secs: u64) -> &Self {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if self.eval(&format!("!!({cond})")) == Value::Bool(true) {
                return self;
            }
            if Instant::now() >= deadline {
                let state = self.eval(
                    "[location.href, document.readyState, typeof window.SESSION_VIEWER, document.body ? document.body.innerText.slice(0, 300) : null]",
                );
                panic!("not true after {secs} s: {cond} (page: {state})");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Focuses the element `selector` and types `text` into it, key by key.
    pub fn type_into(&self, selector: &str, text: &str) -> &Self {
        self.tab
            .wait_for_element(selector)
            .unwrap()
            .type_into(text)
            .unwrap();
        self
    }

    /// Clicks the element `selector` (a real mouse click at its centre).
    pub fn click(&self, selector: &str) -> &Self {
        self.tab
            .wait_for_element(selector)
            .unwrap()
            .click()
            .unwrap();
        self
    }

    /// The DevTools tab, for what the helpers above do not cover.
    pub fn tab(&self) -> &Tab {
        &self.tab
    }
}
