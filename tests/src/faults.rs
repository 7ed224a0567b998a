//! Fault injection on the emulator (docs/emulator.md, "Fault injection"): a test facility
//! of the project's emulator, not AWS behaviour. A fault registered here makes the
//! emulator refuse the requests it matches, with the status asked for and the error body
//! of the request's protocol (S3's XML error, or the query protocol's `ErrorResponse`
//! for a fault on a CloudFormation action), before moto sees them (nothing changes), so a
//! test can exercise a failure the emulator would otherwise never produce (S3 refusing
//! one `DeleteObject`, CloudFormation refusing one `CreateChangeSet` or `UpdateStack`).
//!
//! The registry is emulator-wide: tests that register faults run one at a time (the e2e
//! binary runs with `--test-threads=1`) and match narrowly (one bucket's key, one
//! stack's name). The requests are plain HTTP/1.1 over a `std::net::TcpStream` to
//! [`crate::endpoint`] (127.0.0.1 only), so the helpers work in sync and async tests
//! alike.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

/// The emulator's reserved path for faults (no AWS API uses it).
pub const CONTROL: &str = "/_cdkd_emulator/faults";

/// A fault to register. An S3 fault: requests whose method is `method` (any when
/// `None`) and whose decoded path (`/<bucket>/<key>` for the path-style S3 requests of
/// the product) contains a match of the regular expression `path` are refused with
/// `status` and S3's error `code` / `message`. A query-protocol fault (`action` or
/// `params` set): the query-protocol requests (CloudFormation's) whose `Action` is
/// `action` and each of whose `params` (form parameter name, regular expression)
/// matches are refused with the query protocol's error. `times` times (until cleared
/// when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub method: Option<String>,
    pub path: Option<String>,
    pub query: Option<String>,
    pub action: Option<String>,
    pub params: Vec<(String, String)>,
    pub status: u16,
    pub code: String,
    pub message: String,
    pub times: Option<u32>,
}

impl Fault {
    /// A fault on `method` requests whose path matches the regular expression `path`.
    pub fn new(method: &str, path: &str, status: u16, code: &str) -> Fault {
        Fault {
            method: Some(method.to_owned()),
            path: Some(path.to_owned()),
            query: None,
            action: None,
            params: Vec::new(),
            status,
            code: code.to_owned(),
            message: format!("{code}: a fault injected by the emulator"),
            times: None,
        }
    }

    /// S3 refusing the `DeleteObject` of exactly `key` in `bucket` with 403
    /// `AccessDenied` ("Access Denied"), until cleared.
    pub fn s3_delete_denied(bucket: &str, key: &str) -> Fault {
        Fault::new("DELETE", &exact_path(bucket, key), 403, "AccessDenied").message("Access Denied")
    }

    /// CloudFormation (any query-protocol service) refusing its `action` requests whose
    /// form parameters each match: `params` pairs a parameter name as the form spells it
    /// (`StackName`, `ChangeSetType`, `ChangeSetName`) with a regular expression searched
    /// for in its value (anchor it: `("StackName", "^App-Db$")`, see [`exact`]). Refused
    /// with 400 and the query protocol's error `code` / `message`, until cleared.
    pub fn cfn(action: &str, params: &[(&str, &str)], code: &str, message: &str) -> Fault {
        Fault {
            method: None,
            path: None,
            query: None,
            action: Some(action.to_owned()),
            params: params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            status: 400,
            code: code.to_owned(),
            message: message.to_owned(),
            times: None,
        }
    }

    pub fn message(mut self, message: &str) -> Fault {
        self.message = message.to_owned();
        self
    }

    /// Answers with `status` (400-599).
    pub fn status(mut self, status: u16) -> Fault {
        self.status = status;
        self
    }

    /// Refuses `n` matching requests, then is gone.
    pub fn times(mut self, n: u32) -> Fault {
        self.times = Some(n);
        self
    }

    /// Only requests whose raw query string matches the regular expression `query`.
    pub fn query(mut self, query: &str) -> Fault {
        self.query = Some(query.to_owned());
        self
    }

    /// The registration the emulator receives at `/_cdkd_emulator/faults`.
    pub fn body(&self) -> Value {
        let mut v = json!({"status": self.status, "code": self.code, "message": self.message});
        if let Some(p) = &self.path {
            v["path"] = json!(p);
        }
        if let Some(m) = &self.method {
            v["method"] = json!(m);
        }
        if let Some(q) = &self.query {
            v["query"] = json!(q);
        }
        if let Some(a) = &self.action {
            v["action"] = json!(a);
        }
        if !self.params.is_empty() {
            let params: serde_json::Map<String, Value> = self
                .params
                .iter()
                .map(|(k, r)| (k.clone(), json!(r)))
                .collect();
            v["params"] = Value::Object(params);
        }
        if let Some(n) = self.times {
            v["times"] = json!(n);
        }
        v
    }
}

/// The anchored regular expression matching exactly `value` (a stack name, a change set
/// type).
pub fn exact(value: &str) -> String {
    format!("^{}$", regex_escape(value))
}

/// The anchored regular expression matching exactly the path-style path of `key` in
/// `bucket`.
pub fn exact_path(bucket: &str, key: &str) -> String {
    format!("^/{}/{}$", regex_escape(bucket), regex_escape(key))
}

/// `s` with the regular-expression metacharacters escaped (Python's `re` syntax).
pub fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.^$*+?{}[]|()".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A registered fault; dropping it removes it from the emulator.
#[derive(Debug)]
#[must_use = "the fault is removed when the guard is dropped"]
pub struct FaultGuard {
    id: String,
}

impl FaultGuard {
    /// The fault's id in the emulator's registry.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The fault as the emulator lists it now (`remaining`, `hits`); `None` once spent
    /// or removed.
    pub fn state(&self) -> Option<Value> {
        list_faults()
            .into_iter()
            .find(|f| f["id"] == self.id.as_str())
    }
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        // Never panics (a test may be unwinding); a spent fault is already gone.
        let path = format!("{CONTROL}/{}", self.id);
        if let Err(e) = request("DELETE", &path, None) {
            eprintln!("fault {} not removed: {e}", self.id);
        }
    }
}

/// Registers `fault`; panics unless the emulator accepts it.
pub fn inject_fault(fault: &Fault) -> FaultGuard {
    let body = fault.body().to_string();
    let (status, answer) = request("POST", CONTROL, Some(&body))
        .unwrap_or_else(|e| panic!("register fault {body}: {e}"));
    assert_eq!(status, 201, "register fault {body}: {answer}");
    let v: Value = serde_json::from_str(&answer).expect("the emulator answers JSON");
    FaultGuard {
        id: v["id"].as_str().expect("the fault's id").to_owned(),
    }
}

/// Removes every fault; returns how many there were.
pub fn clear_faults() -> u64 {
    let (status, answer) =
        request("DELETE", CONTROL, None).unwrap_or_else(|e| panic!("clear faults: {e}"));
    assert_eq!(status, 200, "clear faults: {answer}");
    let v: Value = serde_json::from_str(&answer).expect("the emulator answers JSON");
    v["cleared"].as_u64().unwrap_or_default()
}

/// Every fault still registered, as the emulator lists it.
pub fn list_faults() -> Vec<Value> {
    let (status, answer) =
        request("GET", CONTROL, None).unwrap_or_else(|e| panic!("list faults: {e}"));
    assert_eq!(status, 200, "list faults: {answer}");
    let v: Value = serde_json::from_str(&answer).expect("the emulator answers JSON");
    v["faults"].as_array().cloned().unwrap_or_default()
}

/// One unsigned HTTP/1.1 request to the emulator: (status, body).
fn request(method: &str, path: &str, body: Option<&str>) -> Result<(u16, String), String> {
    let url = crate::endpoint();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let body = body.unwrap_or("");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(&addr).map_err(|e| format!("connect {addr}: {e}"))?;
    let timeout = Some(Duration::from_secs(30));
    s.set_read_timeout(timeout).map_err(|e| e.to_string())?;
    s.set_write_timeout(timeout).map_err(|e| e.to_string())?;
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).map_err(|e| e.to_string())?;
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let (head, answer) = resp
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{method} {path}: no HTTP answer: {resp}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{method} {path}: no status line: {head}"))?;
    Ok((status, answer.to_owned()))
}
