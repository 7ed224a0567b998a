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
    // described, docs/export.md, "Requests: read once, and the benchmark").
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

/// The export's writes to CloudFormation are allowed only on stacks carrying the run tags
/// (infra/template.yaml: `aws:ResourceTag/cdkd-flow:record` and `.../cdkd-flow:run`,
/// which the run's IMPORT change set sets): a destination stack whose tags are replaced
/// after its import (while phase 2's CreateChangeSet is held by a throttling fault, which
/// the step retries) is refused AccessDenied on `cloudformation:CreateChangeSet`, and no
/// UPDATE change set reaches it.
#[tokio::test]
async fn deployed_a_stack_without_the_run_tags_is_refused_access_denied() {
    let b = backend();
    let s = super::export::policy_stack(&b, "DeployedUntagged").await;
    let held = h::faults::inject_fault(
        &h::faults::Fault::cfn(
            "CreateChangeSet",
            &[
                ("StackName", &h::faults::exact(&s.stack)),
                ("ChangeSetType", "^UPDATE$"),
            ],
            "Throttling",
            "Rate exceeded (held by the test)",
        )
        .status(400),
    );
    let run_id = uniq("export");
    let started = b.export(&s, &run_id, &["-y", "--detach"]);
    assert_eq!(
        started.code, 0,
        "export -y --detach\n{}\n{}",
        started.stdout, started.stderr
    );
    super::wait_until(
        "phase 2's CreateChangeSet held",
        std::time::Duration::from_secs(180),
        || async {
            held.state()
                .is_some_and(|f| f["hits"].as_u64().unwrap_or_default() >= 1)
        },
    )
    .await;
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    let tagged = h::cfn::described(&s.stack)
        .await
        .expect("the imported stack");
    assert!(
        tagged
            .tags()
            .iter()
            .any(|t| t.key() == Some("cdkd-flow:run") && t.value() == Some(run_id.as_str())),
        "the import tagged the stack with its run: {tagged:?}"
    );
    // Someone else's tags replace the run's (a tag-only update by the administrator).
    cfn.update_stack()
        .stack_name(&s.stack)
        .use_previous_template(true)
        .capabilities(aws_sdk_cloudformation::types::Capability::CapabilityNamedIam)
        .tags(
            aws_sdk_cloudformation::types::Tag::builder()
                .key("owner")
                .value("someone-else")
                .build(),
        )
        .send()
        .await
        .unwrap();
    super::wait_until(
        "the stack's tags replaced",
        std::time::Duration::from_secs(60),
        || async {
            h::cfn::described(&s.stack).await.is_some_and(|d| {
                d.stack_status().map(|s| s.as_str()) == Some("UPDATE_COMPLETE")
                    && !d.tags().iter().any(|t| t.key() == Some("cdkd-flow:run"))
            })
        },
    )
    .await;
    drop(held);

    let watched = b.cli(&["runs", "watch", &run_id]);
    let arn = b.execution_arn("ExportStateMachineArn", &run_id).await;
    assert_eq!(super::status(&arn).await, "FAILED");
    let report = h::get_text(
        &h::s3().await,
        &b.bucket,
        &format!("cdkd/_runs/{run_id}/report.json"),
    )
    .await
    .unwrap_or_default();
    let all = format!("{}\n{}\n{report}", watched.stdout, watched.stderr);
    assert!(
        all.contains("not authorized to perform: cloudformation:CreateChangeSet"),
        "the run failed AccessDenied on cloudformation:CreateChangeSet: {all}"
    );
    let change_sets = cfn
        .list_change_sets()
        .stack_name(&s.stack)
        .send()
        .await
        .unwrap();
    assert!(
        !change_sets.summaries().iter().any(|c| c
            .change_set_name()
            .is_some_and(|n| n.starts_with("cdkd-phase2-"))),
        "no UPDATE change set was submitted: {change_sets:?}"
    );
}
