//! The custom-resource Delete (docs/destroy.md, "Custom resources"): the request sent to the handler, the
//! ids and keys it carries, how long the answer is waited for, and the reading of the
//! answer, as pure functions. Sending, presigning and polling S3 live in
//! `cdkd-deleters` (`custom.rs`), which calls these.

use crate::js::js_number;
use serde_json::{json, Map, Value};

/// The presigned response URL's validity (docs/destroy.md, "The Delete request").
pub const RESPONSE_URL_EXPIRY_SECS: u64 = 7200;
/// How long a Lambda-backed handler may take to answer (docs/destroy.md, "The answer").
pub const LAMBDA_DEADLINE_MS: u64 = 60 * 60 * 1000;
/// How long an SNS-backed handler may take to answer (docs/destroy.md, "The answer").
pub const SNS_DEADLINE_MS: u64 = 30 * 1000;
/// Response polls: 2 s growing ×1.5 up to 30 s apart (docs/destroy.md, "The answer").
pub const POLL_FIRST_MS: u64 = 2000;
pub const POLL_CAP_MS: u64 = 30_000;

/// Inputs of the Delete request that are not in the record.
#[derive(Debug, Clone, Copy)]
pub struct DeleteRequestInput<'a> {
    pub logical_id: &'a str,
    pub resource_type: &'a str,
    pub physical_id: &'a str,
    /// The recorded properties (including `ServiceToken`).
    pub properties: &'a Map<String, Value>,
    pub request_id: &'a str,
    /// Presigned S3 PUT URL for [`response_key`].
    pub response_url: &'a str,
    pub stack_id: &'a str,
}

/// The JSON object sent to the handler (docs/destroy.md, "The Delete request"). No `OldResourceProperties`, no
/// `ServiceTimeout`.
pub fn delete_request(input: DeleteRequestInput<'_>) -> Value {
    json!({
        "RequestType": "Delete",
        "RequestId": input.request_id,
        "ResponseURL": input.response_url,
        "ResourceType": input.resource_type,
        "LogicalResourceId": input.logical_id,
        "PhysicalResourceId": input.physical_id,
        "StackId": input.stack_id,
        "ResourceProperties": stringify_scalars(&Value::Object(input.properties.clone())),
    })
}

/// Every boolean and number turned into its JavaScript string, recursively through
/// nested objects; arrays (and everything inside them) are left as they are.
pub fn stringify_scalars(v: &Value) -> Value {
    match v {
        Value::Bool(b) => Value::String(b.to_string()),
        Value::Number(n) => Value::String(js_number(n)),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), stringify_scalars(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `arn:<partition>:cloudformation:<region>:<account>:stack/cdkd-<logicalId>/cdkd`;
/// account `000000000000` when unknown.
pub fn stack_id(partition: &str, region: &str, account: Option<&str>, logical_id: &str) -> String {
    format!(
        "arn:{partition}:cloudformation:{region}:{}:stack/cdkd-{logical_id}/cdkd",
        account.unwrap_or("000000000000")
    )
}

/// `cdkd-<epoch ms>-<random base-36>`; `random` comes from the caller (fresh per attempt).
pub fn request_id(now_ms: u64, random: u64) -> String {
    format!("cdkd-{now_ms}-{}", base36(random))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The response object of a run's custom resource, in the state bucket:
/// `<prefix>/_runs/<run-id>/cr/<logicalId>.json` (docs/destroy.md, "The Delete request").
pub fn response_key(prefix: &str, run_id: &str, logical_id: &str) -> String {
    let prefix = prefix.trim_end_matches('/');
    let tail = format!("_runs/{run_id}/cr/{logical_id}.json");
    if prefix.is_empty() {
        tail
    } else {
        format!("{prefix}/{tail}")
    }
}

/// An SNS service token (`arn:<partition>:sns:...`, any partition); anything else is
/// invoked as a Lambda function.
pub fn is_sns_token(token: &str) -> bool {
    let mut parts = token.split(':');
    parts.next() == Some("arn") && parts.next().is_some() && parts.next() == Some("sns")
}

/// How long the handler behind `token` may take to answer.
pub fn deadline_ms(token: &str) -> u64 {
    if is_sns_token(token) {
        SNS_DEADLINE_MS
    } else {
        LAMBDA_DEADLINE_MS
    }
}

/// What the response object says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// No answer yet (missing, empty, or written for another request id).
    NotYet,
    Success,
    Failed {
        reason: String,
    },
    Unreadable(String),
}

/// Reads a response body written by the handler (docs/destroy.md, "The answer"): empty → not yet;
/// an answer to another request id (an earlier attempt's) → not yet; `Status` `SUCCESS`
/// or `FAILED` → the answer; anything else → unreadable.
pub fn read_response(body: &[u8], request_id: &str) -> Response {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Response::NotYet;
    }
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(body) else {
        return Response::Unreadable("the response is not a JSON object".into());
    };
    if let Some(id) = obj.get("RequestId").and_then(Value::as_str) {
        if id != request_id {
            return Response::NotYet;
        }
    }
    match obj.get("Status").and_then(Value::as_str) {
        Some("SUCCESS") => Response::Success,
        Some("FAILED") => Response::Failed {
            reason: obj
                .get("Reason")
                .and_then(Value::as_str)
                .unwrap_or("(no reason given)")
                .to_owned(),
        },
        _ => Response::Unreadable("the response has no Status SUCCESS or FAILED".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_request_stringifies_scalars_but_not_arrays_statement_43() {
        let props = json!({"ServiceToken": "t", "Enabled": true, "N": 3,
                           "Nested": {"X": false}, "List": [1, true]});
        let req = delete_request(DeleteRequestInput {
            logical_id: "Cr",
            resource_type: "Custom::Thing",
            physical_id: "phys",
            properties: props.as_object().unwrap(),
            request_id: "cdkd-1-a",
            response_url: "https://u",
            stack_id: "arn:aws:cloudformation:us-east-1:1:stack/cdkd-Cr/cdkd",
        });
        assert_eq!(
            req["ResourceProperties"],
            json!({"ServiceToken": "t", "Enabled": "true", "N": "3",
                   "Nested": {"X": "false"}, "List": [1, true]})
        );
        assert_eq!(req["RequestType"], "Delete");
        for k in [
            "PhysicalResourceId",
            "LogicalResourceId",
            "ResourceType",
            "RequestId",
            "ResponseURL",
            "StackId",
        ] {
            assert!(req.get(k).is_some(), "{k}");
        }
        assert!(req.get("OldResourceProperties").is_none());
        assert!(req.get("ServiceTimeout").is_none());
    }

    #[test]
    fn numbers_stringify_like_javascript() {
        assert_eq!(stringify_scalars(&json!(1.5)), json!("1.5"));
        assert_eq!(stringify_scalars(&json!(1e21)), json!("1e+21"));
        assert_eq!(stringify_scalars(&json!(3.0)), json!("3"));
    }

    #[test]
    fn ids_and_keys_have_cdkd_flow_shapes_rule_4_2() {
        assert_eq!(request_id(1700, 35), "cdkd-1700-z");
        assert_eq!(request_id(1, 36), "cdkd-1-10");
        assert_eq!(
            response_key("cdkd/", "destroy-a-1", "Cr"),
            "cdkd/_runs/destroy-a-1/cr/Cr.json"
        );
        assert_eq!(response_key("", "r", "Cr"), "_runs/r/cr/Cr.json");
        assert_eq!(
            stack_id("aws", "us-east-1", None, "Cr"),
            "arn:aws:cloudformation:us-east-1:000000000000:stack/cdkd-Cr/cdkd"
        );
    }

    #[test]
    fn sns_tokens_any_partition_rule_4_1() {
        assert!(is_sns_token("arn:aws:sns:us-east-1:1:t"));
        assert!(is_sns_token("arn:aws-cn:sns:cn-north-1:1:t"));
        assert!(!is_sns_token("arn:aws:lambda:us-east-1:1:function:f"));
        assert!(!is_sns_token("sns"));
        assert_eq!(deadline_ms("arn:aws:sns:us-east-1:1:t"), SNS_DEADLINE_MS);
        assert_eq!(
            deadline_ms("arn:aws:lambda:us-east-1:1:function:f"),
            LAMBDA_DEADLINE_MS
        );
    }

    #[test]
    fn response_success_failed_stale_and_unreadable_rule_4_4() {
        assert_eq!(read_response(b"", "r1"), Response::NotYet);
        assert_eq!(read_response(b"  \n", "r1"), Response::NotYet);
        assert_eq!(
            read_response(br#"{"Status":"SUCCESS","RequestId":"r1"}"#, "r1"),
            Response::Success
        );
        assert_eq!(
            read_response(br#"{"Status":"SUCCESS"}"#, "r1"),
            Response::Success
        );
        assert_eq!(
            read_response(br#"{"Status":"SUCCESS","RequestId":"old"}"#, "r1"),
            Response::NotYet
        );
        assert_eq!(
            read_response(br#"{"Status":"FAILED","Reason":"boom"}"#, "r1"),
            Response::Failed {
                reason: "boom".into()
            }
        );
        assert!(matches!(
            read_response(b"nope", "r1"),
            Response::Unreadable(_)
        ));
        assert!(matches!(
            read_response(br#"{"Status":"MAYBE"}"#, "r1"),
            Response::Unreadable(m) if m.contains("no Status SUCCESS or FAILED")
        ));
    }
}
