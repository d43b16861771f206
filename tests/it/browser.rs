//! Headless Chromium driven through the DevTools protocol, as a reader's
//! browser: the system's `chromium` (Debian package `chromium`), never a
//! downloaded one, talking over `--remote-debugging-pipe` (JSON messages
//! ended by NUL on file descriptors 3 and 4, here the child's standard input
//! and output moved there by `sh`), so no port and no crate is needed.
//!
//! Without `chromium` the tests that use it say they were skipped and pass,
//! unless `XMEM_REQUIRE_BROWSER=1`, as CI sets it.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

pub const BROWSER: &str = "chromium";

/// How long one call may take before the test fails instead of hanging.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether `chromium` can be run; fails the test when CI requires it and it cannot.
pub fn browser_available() -> bool {
    let found = Command::new(BROWSER).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("XMEM_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "XMEM_REQUIRE_BROWSER=1 but `{BROWSER}` cannot be run (apt-get install chromium)"
        );
        eprintln!("skipped: `{BROWSER}` is not installed (apt-get install chromium to run this test)");
    }
    found
}

/// The flags that make headless Chromium quiet and self-contained here.
pub const FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
];

/// One browser with one page, and the protocol's events seen so far.
pub struct Browser {
    child: Child,
    to_browser: ChildStdin,
    from_browser: Receiver<Value>,
    next_id: u64,
    session: String,
    pub events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium with a fresh profile and a window of `width` × `height`,
    /// and opens a blank page with its network, page and runtime events on.
    pub fn start(width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#)
            .arg(BROWSER)
            .args(FLAGS)
            .arg("--remote-debugging-pipe")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--window-size={width},{height}"))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("running chromium");
        let to_browser = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (sender, from_browser) = mpsc::channel();
        std::thread::spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut chunk = vec![0; 1 << 16];
            while let Ok(n @ 1..) = stdout.read(&mut chunk) {
                pending.extend_from_slice(&chunk[..n]);
                while let Some(end) = pending.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    let Ok(value) = serde_json::from_slice(&message[..end]) else { continue };
                    if sender.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            to_browser,
            from_browser,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = browser.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
        let attached =
            browser.call(None, "Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }));
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Page", "Runtime", "Network"] {
            browser.page(&format!("{domain}.enable"), json!({}));
        }
        browser
    }

    /// Sends a command (to the page's session, or the browser's) and waits for its answer.
    fn call(&mut self, session: Option<String>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = Value::String(session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to_browser.write_all(&bytes).expect("writing to chromium");
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from_browser.recv_timeout(left) {
                Ok(answer) if answer["id"] == id => {
                    assert!(answer.get("error").is_none(), "{method}: {}", answer["error"]);
                    return answer["result"].clone();
                }
                Ok(event) => self.events.push(event),
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer from chromium in {CALL_TIMEOUT:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: chromium exited"),
            }
        }
    }

    /// A command to the page.
    pub fn page(&mut self, method: &str, params: Value) -> Value {
        let session = Some(self.session.clone());
        self.call(session, method, params)
    }

    /// Opens a file and waits until the page's script is ready (or the page
    /// has loaded, for a page without it).
    pub fn open(&mut self, path: &Path) {
        self.page("Page.navigate", json!({ "url": format!("file://{}", path.display()) }));
        let deadline = Instant::now() + CALL_TIMEOUT;
        while self.eval("document.readyState === 'complete'") != json!(true) {
            assert!(Instant::now() < deadline, "{}: not loaded in {CALL_TIMEOUT:?}", path.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The value of a JavaScript expression (awaited when a promise); a
    /// thrown exception fails the test.
    pub fn eval(&mut self, expression: &str) -> Value {
        let params = json!({ "expression": expression, "returnByValue": true, "awaitPromise": true });
        let result = self.page("Runtime.evaluate", params);
        assert!(result.get("exceptionDetails").is_none(), "{expression}: {}", result["exceptionDetails"]);
        result["result"]["value"].clone()
    }

    /// A key pressed and released, as a reader's keyboard sends it.
    pub fn key(&mut self, key: &str, code: &str, key_code: u32) {
        for kind in ["keyDown", "keyUp"] {
            let params = json!({ "type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code });
            self.page("Input.dispatchKeyEvent", params);
        }
    }

    /// Text typed into the focused element.
    pub fn type_text(&mut self, text: &str) {
        self.page("Input.insertText", json!({ "text": text }));
    }

    /// A left click at a point of the viewport, after moving there.
    pub fn click(&mut self, x: f64, y: f64) {
        self.page("Input.dispatchMouseEvent", json!({ "type": "mouseMoved", "x": x, "y": y }));
        for kind in ["mousePressed", "mouseReleased"] {
            let params = json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 });
            self.page("Input.dispatchMouseEvent", params);
        }
    }

    /// Every URL the page asked for since it started.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .map(|e| e["params"]["request"]["url"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Exceptions the page's scripts threw.
    pub fn exceptions(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Runtime.exceptionThrown")
            .map(|e| e["params"].to_string())
            .collect()
    }

    /// A PNG of the page's region `clip` (`x`, `y`, `width`, `height` in CSS pixels) at `scale`.
    pub fn screenshot(&mut self, clip: [f64; 4], scale: f64) -> Vec<u8> {
        let [x, y, width, height] = clip;
        let params = json!({
            "format": "png",
            "captureBeyondViewport": true,
            "clip": { "x": x, "y": y, "width": width, "height": height, "scale": scale },
        });
        let data = self.page("Page.captureScreenshot", params)["data"].as_str().unwrap().to_string();
        base64::engine::general_purpose::STANDARD.decode(data).expect("a PNG in base64")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let mut message = serde_json::to_vec(&json!({ "id": 0, "method": "Browser.close" })).unwrap();
        message.push(0);
        let _ = self.to_browser.write_all(&message);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
