//! Every step runs with its own role's rights, as the emulator enforces them: a
//! statement taken out of a role makes the step that needs it fail by name
//! (AccessDenied naming the action), and putting it back makes the same run pass.

use super::{backend, uniq};
use cdkd_tests as h;
use serde_json::Value;

/// `%XX`-decoding of a policy document as IAM returns it (URL-encoded).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The role of the backend's function `logical`, and the inline policy (name, document)
/// holding `action`.
async fn inline_policy_with(logical: &str, action: &str) -> (String, String, Value) {
    let b = backend();
    let sdk = h::sdk().await;
    let function = b.function_named(logical).await;
    let role_arn = aws_sdk_lambda::Client::new(&sdk)
        .get_function_configuration()
        .function_name(&function)
        .send()
        .await
        .unwrap()
        .role
        .unwrap();
    let role = role_arn.rsplit('/').next().unwrap().to_string();
    let iam = aws_sdk_iam::Client::new(&sdk);
    let names = iam
        .list_role_policies()
        .role_name(&role)
        .send()
        .await
        .unwrap();
    for name in names.policy_names() {
        let got = iam
            .get_role_policy()
            .role_name(&role)
            .policy_name(name)
            .send()
            .await
            .unwrap();
        let raw = got.policy_document;
        let text = if raw.trim_start().starts_with('{') {
            raw
        } else {
            percent_decoded(&raw)
        };
        if text.contains(action) {
            let doc: Value = serde_json::from_str(&text).unwrap();
            return (role, name.to_string(), doc);
        }
    }
    panic!("no inline policy of {role} ({logical}) holds {action}");
}

async fn put_policy(role: &str, name: &str, doc: &Value) {
    aws_sdk_iam::Client::new(&h::sdk().await)
        .put_role_policy()
        .role_name(role)
        .policy_name(name)
        .policy_document(doc.to_string())
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn deployed_a_step_whose_role_lacks_a_statement_fails_access_denied_naming_the_action() {
    let b = backend();
    // The plan's write of plan.json: a call every plan makes (a DescribeType refused
    // falls back to the registry table, and the CLI hands over the destinations it
    // described, docs/export.md §10.9).
    let action = "s3:PutObject";
    let (role, name, doc) = inline_policy_with("ExportPlanFunction", action).await;
    let mut cut = doc.clone();
    let statements = cut["Statement"].as_array_mut().unwrap();
    let taken: Vec<Value> = statements
        .iter()
        .filter(|s| s.to_string().contains(action))
        .cloned()
        .collect();
    assert_eq!(taken.len(), 1, "one statement taken out: {doc:#}");
    statements.retain(|s| !s.to_string().contains(action));
    // The actions it granted (the step's first call that needs one of them fails).
    let actions: Vec<String> = match &taken[0]["Action"] {
        Value::String(a) => vec![a.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    put_policy(&role, &name, &cut).await;

    let s = super::export::policy_stack(&b, "DeployedDenied").await;
    let plan = |run_id: &str| {
        b.cli(&[
            "export",
            &s.stack,
            "--template",
            &s.template,
            "--dry-run",
            "--run-id",
            run_id,
        ])
    };
    let denied = plan(&uniq("plan"));
    put_policy(&role, &name, &doc).await;
    assert_ne!(denied.code, 0, "{}\n{}", denied.stdout, denied.stderr);
    let all = format!("{}\n{}", denied.stdout, denied.stderr);
    assert!(
        all.contains("AccessDenied")
            && actions
                .iter()
                .any(|a| all.contains(&format!("not authorized to perform: {a}"))),
        "the failure names AccessDenied and an action of the statement taken out ({actions:?}): {all}"
    );

    let allowed = plan(&uniq("plan"));
    assert_eq!(
        allowed.code, 0,
        "with the statement back: {}\n{}",
        allowed.stdout, allowed.stderr
    );
}
