//! An export continuing in new executions through the deployed backend: the history
//! limit lowered in the emulator's interpreter and in the export functions.

use std::collections::HashMap;
use std::time::Duration;

use super::{backend, history, set_sfn_config, sfn_config, status, uniq, Backend};
use crate::export_run_cli::{make_resources, record, template, write_template};
use cdkd_tests as h;
use serde_json::{json, Value};

/// The backend's export functions (logical id `Export...Function`), by physical name.
async fn export_functions(b: &Backend) -> Vec<String> {
    h::cfn::stack_resources(&b.stack)
        .await
        .into_iter()
        .filter(|(logical, _)| logical.starts_with("Export") && logical.ends_with("Function"))
        .map(|(_, physical)| physical)
        .collect()
}

async fn environment(lambda: &aws_sdk_lambda::Client, f: &str) -> HashMap<String, String> {
    lambda
        .get_function_configuration()
        .function_name(f)
        .send()
        .await
        .unwrap_or_else(|e| panic!("configuration of {f}: {e:?}"))
        .environment
        .and_then(|e| e.variables)
        .unwrap_or_default()
}

async fn set_environment(lambda: &aws_sdk_lambda::Client, f: &str, v: HashMap<String, String>) {
    lambda
        .update_function_configuration()
        .function_name(f)
        .environment(
            aws_sdk_lambda::types::Environment::builder()
                .set_variables(Some(v))
                .build(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("environment of {f}: {e:?}"));
}

/// The turn of the run's latest execution (`<run>--<n>`) progress.json names, if any.
fn turn_of(progress: &Value) -> Option<u32> {
    progress["continuedAs"]
        .as_str()
        .and_then(|n| n.rsplit_once("--"))
        .and_then(|(_, n)| n.parse().ok())
}

/// docs/runs.md, "Continuing in a new execution", for the export, deployed: with the
/// history limit lowered to 150 events (the emulator's interpreter, and every export
/// function's `CDKD_FLOW_HISTORY_LIMIT`), a custom resource whose provider (this test)
/// answers only once the run has continued twice keeps phase 2's UPDATE in progress. The
/// definition's own `ContinueAsNew` (run-continue, under its role) and
/// `StartContinuation` (`states:startExecution` under the state machine's role) hand the
/// run from execution to execution, each under the limit; `cdkd-flow export` follows it
/// to the migration.
#[tokio::test]
async fn deployed_export_continues_in_new_executions_before_the_history_limit() {
    let b = backend();
    let stack = uniq("DeployedExpLong");
    let m = make_resources(&stack.to_lowercase()).await;
    let (topic, queue) = h::provider::sns_provider(&stack).await;
    let mut rec = record(&stack, &m);
    rec["resources"]["Thing"] = json!({"resourceType": "Custom::Thing", "physicalId": "thing-old",
        "properties": {"ServiceToken": topic, "Size": "3"}, "provisionedBy": "custom"});
    let mut tpl = template(&m);
    tpl["Resources"]["Thing"] =
        json!({"Type": "Custom::Thing", "Properties": {"ServiceToken": topic, "Size": "3"}});
    let s3 = h::s3().await;
    h::put_raw(
        &s3,
        &b.bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        serde_json::to_vec_pretty(&rec).unwrap(),
    )
    .await;
    let path = write_template(&stack, &tpl);
    let run_id = uniq("export");

    // The limit: the interpreter's (for executions started from now on) and the export
    // functions'; both put back at the end.
    let limit = 150;
    let before = sfn_config().await;
    let mut lowered = before.clone();
    lowered["history_limit"] = json!(limit);
    lowered["time_scale"] = json!(0.05);
    set_sfn_config(&lowered).await;
    let lambda = aws_sdk_lambda::Client::new(&h::sdk().await);
    let functions = export_functions(&b).await;
    assert!(functions.len() >= 5, "{functions:?}");
    let mut saved = Vec::new();
    for f in &functions {
        let vars = environment(&lambda, f).await;
        let mut with_limit = vars.clone();
        with_limit.insert("CDKD_FLOW_HISTORY_LIMIT".into(), limit.to_string());
        set_environment(&lambda, f, with_limit).await;
        saved.push((f.clone(), vars));
    }

    // The provider answers once progress.json names the run's third execution or a later
    // one (or after three minutes, when the assertions below fail).
    let provider = {
        let (bucket, key) = (
            b.bucket.clone(),
            format!("cdkd/_runs/{run_id}/progress.json"),
        );
        tokio::spawn(async move {
            let s3 = h::s3().await;
            let deadline = std::time::Instant::now() + Duration::from_secs(180);
            let mut seen = Value::Null;
            while std::time::Instant::now() < deadline {
                if let Some(body) = h::get_text(&s3, &bucket, &key).await {
                    let v: Value = serde_json::from_str(&body).unwrap_or_default();
                    if turn_of(&v).is_some_and(|n| n >= 3) {
                        seen = v;
                        break;
                    }
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            (seen, h::provider::answer_requests(queue, 1).await)
        })
    };
    let ran = {
        let (b, stack, run_id) = (
            Backend {
                stack: b.stack.clone(),
                bucket: b.bucket.clone(),
            },
            stack.clone(),
            run_id.clone(),
        );
        let path = path.to_string_lossy().into_owned();
        tokio::task::spawn_blocking(move || {
            b.cli(&[
                "export",
                &stack,
                "--template",
                &path,
                "-y",
                "--include-non-importable",
                "--run-id",
                &run_id,
            ])
        })
    };
    let run = tokio::time::timeout(Duration::from_secs(300), ran).await;
    let answered = provider.await;
    for (f, vars) in saved {
        set_environment(&lambda, &f, vars).await;
    }
    set_sfn_config(&before).await;
    let run = run.expect("the export ended within 5 minutes").unwrap();
    let (seen, events) = answered.unwrap();

    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        !seen.is_null(),
        "the run continued twice while phase 2 waited:\n{}",
        run.stderr
    );
    assert_eq!(events[0]["LogicalResourceId"], "Thing", "{events:?}");
    let res = h::cfn::stack_resources(&stack).await;
    assert_eq!(res.get("WorkQueue"), Some(&m.queue_url), "{res:?}");
    assert_eq!(res.get("Thing").map(String::as_str), Some("Thing-new"));

    // Each execution stayed under the limit; the first handed the run on through the
    // definition's own states, and the last one migrated it.
    let first = b.execution_arn("ExportStateMachineArn", &run_id).await;
    assert_eq!(status(&first).await, "SUCCEEDED");
    assert!(
        history(&first).await.iter().all(|e| e.id <= limit as i64),
        "the first execution stayed under the limit"
    );
    // Its tasks: the steps' functions, run-continue among them, and the one
    // `states:startExecution` that started the next execution.
    let tasks: Vec<(String, String)> = history(&first)
        .await
        .iter()
        .filter_map(|e| e.task_scheduled_event_details())
        .map(|d| {
            let params: Value = serde_json::from_str(d.parameters()).unwrap_or(Value::Null);
            let f = params["FunctionName"].as_str().unwrap_or(d.resource());
            (d.resource_type().to_string(), f.to_string())
        })
        .collect();
    assert!(
        tasks
            .iter()
            .any(|(kind, f)| kind == "lambda" && f.contains("RunContinueFunction")),
        "{tasks:?}"
    );
    assert_eq!(
        tasks.iter().filter(|(kind, _)| kind == "states").count(),
        1,
        "{tasks:?}"
    );
    let progress: Value = serde_json::from_str(
        &h::get_text(
            &s3,
            &b.bucket,
            &format!("cdkd/_runs/{run_id}/progress.json"),
        )
        .await
        .expect("progress.json"),
    )
    .unwrap();
    let latest = progress["continuedAs"].as_str().unwrap_or_default();
    assert!(turn_of(&progress).is_some_and(|n| n >= 3), "{progress}");
    let last = b.execution_arn("ExportStateMachineArn", latest).await;
    assert_eq!(status(&last).await, "SUCCEEDED", "{latest}");
    assert!(
        history(&last).await.iter().all(|e| e.id <= limit as i64),
        "{latest} stayed under the limit"
    );
    let keys = h::list_all_keys(&s3, &b.bucket).await;
    assert!(
        !keys
            .iter()
            .any(|k| k.starts_with(&format!("cdkd/{stack}/")) && k.ends_with("lock.json")),
        "the locks went along and were released at the end: {keys:?}"
    );
    assert!(
        !keys.contains(&format!("cdkd/{stack}/us-east-1/state.json")),
        "the migrated record is deleted"
    );
}
