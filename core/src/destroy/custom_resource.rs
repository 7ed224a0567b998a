//! The custom-resource Delete request (docs/destroy.md §4.2) and the reading of the handler's
//! answer (docs/destroy.md §4.4), as pure functions.
//! Sending, presigning and polling S3 live in `aws`.

use super::model::CustomResourceMode;
use crate::json::js_number;
use serde_json::{json, Map, Value};

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

/// The JSON object sent to the handler (docs/destroy.md §4.2). No `OldResourceProperties`, no
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

/// Response object key at the bucket root (docs/destroy.md §1.2).
pub fn response_key(request_id: &str) -> String {
    format!("custom-resource-responses/{request_id}.json")
}

/// An SNS service token (`arn:<partition>:sns:...`, any partition); anything else is
/// invoked as a Lambda function.
pub fn is_sns_token(token: &str) -> bool {
    let mut parts = token.split(':');
    parts.next() == Some("arn") && parts.next().is_some() && parts.next() == Some("sns")
}

/// A handler's final answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandlerResponse {
    Success,
    Failed { reason: String },
}

/// What the invoke's payload tells us (docs/destroy.md §4.4 steps 1–4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvokeAnswer {
    /// The payload itself is the answer.
    Answered(HandlerResponse),
    /// Poll the response key in this mode.
    Await(CustomResourceMode),
}

/// Reads a response object (from the invoke payload or the S3 key): `Status`
/// `SUCCESS` / `FAILED`, else `None` ("not yet" for an S3 body).
pub fn parse_response(body: &[u8]) -> Option<HandlerResponse> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let obj = v.as_object()?;
    match obj.get("Status").and_then(Value::as_str) {
        Some("SUCCESS") => Some(HandlerResponse::Success),
        Some("FAILED") => Some(HandlerResponse::Failed {
            reason: obj
                .get("Reason")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }),
        _ => None,
    }
}

/// Classifies a Lambda invoke result (docs/destroy.md §4.4). `function_error`: the invoke returned
/// `FunctionError` → `Err` with the (flattened) function error text.
pub fn classify_invoke(
    function_error: Option<&str>,
    payload: &[u8],
) -> Result<InvokeAnswer, String> {
    if let Some(e) = function_error {
        return Err(format!(
            "custom resource handler raised {}",
            crate::text::flatten_str(e)
        ));
    }
    if let Some(r) = parse_response(payload) {
        return Ok(InvokeAnswer::Answered(r));
    }
    let parsed: Option<Value> = serde_json::from_slice(payload).ok();
    match parsed.as_ref().and_then(Value::as_object) {
        Some(o) if o.contains_key("PhysicalResourceId") || o.contains_key("Data") => {
            Ok(InvokeAnswer::Answered(HandlerResponse::Success))
        }
        Some(o) if !o.is_empty() => Ok(InvokeAnswer::Await(CustomResourceMode::Sync)),
        _ => Ok(InvokeAnswer::Await(CustomResourceMode::Async)),
    }
}

/// Poll budget per mode (docs/destroy.md §4.4): sync 30 s, async 60 min; SNS always sync.
pub fn await_budget_ms(mode: CustomResourceMode) -> u64 {
    match mode {
        CustomResourceMode::Sync => 30_000,
        CustomResourceMode::Async => 60 * 60_000,
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
    fn ids_and_keys_have_cdkd_shapes_rule_4_2() {
        assert_eq!(request_id(1700, 35), "cdkd-1700-z");
        assert_eq!(request_id(1, 36), "cdkd-1-10");
        assert_eq!(
            response_key("cdkd-1-a"),
            "custom-resource-responses/cdkd-1-a.json"
        );
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
    }

    #[test]
    fn invoke_answer_classification_rule_4_4() {
        assert_eq!(
            classify_invoke(None, br#"{"Status":"FAILED","Reason":"nope"}"#),
            Ok(InvokeAnswer::Answered(HandlerResponse::Failed {
                reason: "nope".into()
            }))
        );
        assert_eq!(
            classify_invoke(None, br#"{"PhysicalResourceId":"x"}"#),
            Ok(InvokeAnswer::Answered(HandlerResponse::Success))
        );
        assert_eq!(
            classify_invoke(None, br#"{"other":1}"#),
            Ok(InvokeAnswer::Await(CustomResourceMode::Sync))
        );
        for p in [&b""[..], b"null", b"\"\"", b"{}", b"[1]"] {
            assert_eq!(
                classify_invoke(None, p),
                Ok(InvokeAnswer::Await(CustomResourceMode::Async))
            );
        }
        assert!(classify_invoke(Some("Unhandled"), b"{}").is_err());
    }

    #[test]
    fn empty_payload_then_success_object_statement_44() {
        assert_eq!(
            classify_invoke(None, b""),
            Ok(InvokeAnswer::Await(CustomResourceMode::Async))
        );
        assert_eq!(parse_response(b""), None);
        assert_eq!(
            parse_response(br#"{"Status":"SUCCESS"}"#),
            Some(HandlerResponse::Success)
        );
    }
}
