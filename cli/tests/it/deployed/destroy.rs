//! A destroy through the deployed backend: real emulator resources recorded in a cdkd
//! record of the backend's state bucket, `cdkd-flow destroy <stack> -y` (no `--local`)
//! watched to the end.

use super::{
    backend, history, invocations, lambda_steps, set_sfn_config, sfn_config, status, uniq,
};
use cdkd_tests as h;
use serde_json::{json, Value};

/// A topic, a queue that depends on it and an SSM parameter, recorded in the backend's
/// bucket under `stack`; (topic, queue url, parameter name).
pub async fn seeded_destroy(bucket: &str, stack: &str) -> (String, String, String) {
    let sdk = h::sdk().await;
    let name = stack.to_lowercase();
    let topic = h::fixtures::topic(&sdk, &format!("{name}-t")).await;
    let queue = h::fixtures::queue(&sdk, &format!("{name}-q")).await;
    let param = format!("/{name}/setting");
    aws_sdk_ssm::Client::new(&sdk)
        .put_parameter()
        .name(&param)
        .value("v")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    let record = json!({
        "version": 10, "stackName": stack, "region": "us-east-1",
        "resources": {
            "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {}, "dependencies": [], "provisionedBy": "sdk"},
            "Queue": {"physicalId": queue, "resourceType": "AWS::SQS::Queue", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"},
            "Setting": {"physicalId": param, "resourceType": "AWS::SSM::Parameter", "properties": {"Type": "String", "Value": "v"}, "dependencies": [], "provisionedBy": "sdk"},
            "CDKMetadata": {"physicalId": "meta", "resourceType": "AWS::CDK::Metadata", "properties": {}, "dependencies": []}
        },
        "outputs": {}, "lastModified": 1777458225000i64
    });
    h::put_raw(
        &h::s3().await,
        bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .await;
    (topic, queue, param)
}

#[tokio::test]
async fn deployed_destroy_deletes_the_recorded_resources_each_step_a_lambda_of_the_backend() {
    let b = backend();
    let stack = uniq("DeployedDestroy");
    let (topic, queue, param) = seeded_destroy(&b.bucket, &stack).await;
    let run_id = uniq("destroy");
    let run = b.cli(&["destroy", &stack, "-y", "--run-id", &run_id]);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );

    let sdk = h::sdk().await;
    assert!(
        !h::fixtures::topic_exists(&sdk, &topic).await,
        "topic deleted"
    );
    assert!(
        !h::fixtures::queue_exists(&sdk, &queue).await,
        "queue deleted"
    );
    assert!(
        !h::fixtures::parameter_exists(&sdk, &param).await,
        "parameter deleted"
    );
    let key = format!("cdkd/{stack}/us-east-1/state.json");
    assert!(
        h::get_text(&h::s3().await, &b.bucket, &key).await.is_none(),
        "the record is deleted"
    );

    // The run was the deployed state machine's, its steps Lambda invocations of the
    // backend's functions, each of which the emulator ran as a process.
    let arn = b.execution_arn("DestroyStateMachineArn", &run_id).await;
    assert_eq!(status(&arn).await, "SUCCEEDED");
    let steps = lambda_steps(&arn).await;
    for step in [
        "DestroyPlanFunction",
        "DestroyWaveFunction",
        "DestroyFinishFunction",
    ] {
        assert!(
            steps.iter().any(|s| s.contains(step)),
            "{step} ran as a Lambda task: {steps:?}"
        );
    }
    let ran = invocations().await;
    for step in &steps {
        assert!(
            ran.iter()
                .any(|i| i["function"].as_str() == Some(step.as_str()) && i["error"].is_null()),
            "{step} was invoked by the emulator's Lambda and succeeded: {ran:#?}"
        );
    }
}

/// One `runs list` for every run: with the backend deployed, its executions (this
/// destroy) and, under "local runs:", the local runs of the same bucket (a local export
/// that ran on another host, from its `run.json`), each with its id.
#[tokio::test]
async fn deployed_runs_list_shows_deployed_and_local_runs_together() {
    let b = backend();
    let stack = uniq("DeployedList");
    seeded_destroy(&b.bucket, &stack).await;
    let run_id = uniq("destroy");
    let run = b.cli(&["destroy", &stack, "-y", "--run-id", &run_id]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let local_id = uniq("export-LocalBeside");
    h::put_raw(
        &h::s3().await,
        &b.bucket,
        &format!("cdkd/_runs/{local_id}/run.json"),
        serde_json::to_vec(&json!({"runId": local_id, "kind": "export", "stack": "LocalBeside",
            "args": ["export", "LocalBeside", "--local", "-y"], "host": "build-agent-7", "pid": 4242,
            "startedMs": 1_795_965_752_000i64}))
        .unwrap(),
    )
    .await;

    let list = b.cli(&["runs", "list", "--limit", "100"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let (deployed, local) = list
        .stdout
        .split_once("\nlocal runs:\n")
        .unwrap_or_else(|| panic!("no local section:\n{}", list.stdout));
    assert!(
        deployed.lines().any(|l| l.starts_with(&run_id)),
        "{}",
        list.stdout
    );
    assert!(
        local.lines().any(|l| l.starts_with(&local_id)),
        "{}",
        list.stdout
    );
    let json = b.cli(&["runs", "list", "--limit", "100", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert!(rows.iter().any(|r| r["name"] == run_id.as_str()), "{v:#}");
    assert!(
        rows.iter()
            .any(|r| r["runId"] == local_id.as_str() && r["local"] == true),
        "{v:#}"
    );
}

/// The config of the emulator's Step Functions interpreter now.
/// docs/runs.md, "Continuing in a new execution", through the deployed backend: with
/// the history limit lowered to 60 events (the emulator's interpreter, and the wave
/// function's `CDKD_FLOW_HISTORY_LIMIT`: one wave an execution), a bucket whose delete S3
/// always refuses (503 SlowDown) keeps the destroy unsettled past its first wave (its
/// third attempt is due 8 s later). The run continues in `<run>--2`, started by the
/// state machine itself under its role, which retries the delete until the attempts run
/// out and ends the run DestroyIncomplete; `cdkd-flow destroy` follows it to that end and
/// exits 1 with the run's report; `runs list` shows the run once and `runs show` its
/// latest execution with the report.
#[tokio::test]
async fn deployed_destroy_continues_in_a_new_execution_and_the_watch_follows_it() {
    use cdkd_tests::faults::{inject_fault, Fault};
    let b = backend();
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let stack = uniq("DeployedLong");
    let slow = h::unique_bucket_name("slow");
    s3.create_bucket().bucket(&slow).send().await.unwrap();
    let record = json!({
        "version": 10, "stackName": stack, "region": "us-east-1",
        "resources": {
            "Slow": {"physicalId": slow, "resourceType": "AWS::S3::Bucket", "properties": {}, "dependencies": [], "provisionedBy": "sdk"}
        },
        "outputs": {}
    });
    h::put_raw(
        &s3,
        &b.bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .await;

    // The limit: the interpreter's (for executions started from now on) and the wave
    // function's; both put back at the end.
    let limit = 60;
    let before = sfn_config().await;
    let mut lowered = before.clone();
    lowered["history_limit"] = json!(limit);
    lowered["time_scale"] = json!(0.05);
    set_sfn_config(&lowered).await;
    let lambda = aws_sdk_lambda::Client::new(&sdk);
    let wave = h::cfn::stack_resources(&b.stack)
        .await
        .remove("DestroyWaveFunction")
        .expect("the backend has DestroyWaveFunction");
    let vars = lambda
        .get_function_configuration()
        .function_name(&wave)
        .send()
        .await
        .unwrap()
        .environment
        .and_then(|e| e.variables)
        .unwrap_or_default();
    let mut with_limit = vars.clone();
    with_limit.insert("CDKD_FLOW_HISTORY_LIMIT".into(), limit.to_string());
    let set_env = |v: std::collections::HashMap<String, String>| {
        lambda
            .update_function_configuration()
            .function_name(&wave)
            .environment(
                aws_sdk_lambda::types::Environment::builder()
                    .set_variables(Some(v))
                    .build(),
            )
            .send()
    };
    set_env(with_limit).await.unwrap();
    let fault = inject_fault(&Fault::new(
        "DELETE",
        &format!("^/{slow}/?$"),
        503,
        "SlowDown",
    ));

    let run_id = uniq("destroy");
    let run = b.cli(&["destroy", &stack, "-y", "--run-id", &run_id]);
    let listed = b.cli(&["runs", "list", "--json", "--limit", "50"]);
    let shown = b.cli(&["runs", "show", &run_id]);
    let hits = cdkd_tests::faults::list_faults();
    drop(fault);
    set_env(vars).await.unwrap();
    set_sfn_config(&before).await;

    assert_eq!(
        run.code, 1,
        "the run ends DestroyIncomplete:\nstdout:\n{}\nstderr:\n{}\nfaults: {hits:?}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("run continues in execution {run_id}--2")),
        "the watch followed the run into its second execution:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("DestroyIncomplete"),
        "the watch showed the run's final outcome:\n{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("Slow"),
        "the run's report:\n{}",
        run.stdout
    );
    let first = b.execution_arn("DestroyStateMachineArn", &run_id).await;
    let second = b
        .execution_arn("DestroyStateMachineArn", &format!("{run_id}--2"))
        .await;
    assert_eq!(status(&first).await, "SUCCEEDED");
    assert!(
        history(&first).await.iter().all(|e| e.id < limit as i64),
        "the first execution stayed under the limit"
    );
    assert_ne!(status(&second).await, "RUNNING");
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
    // Each execution runs one wave: the run took as many as its attempts needed.
    let latest = progress["continuedAs"].as_str().unwrap_or_default();
    assert!(latest.starts_with(&format!("{run_id}--")), "{progress}");
    let last = b.execution_arn("DestroyStateMachineArn", latest).await;
    assert_eq!(
        status(&last).await,
        "FAILED",
        "the run's last execution, {latest}"
    );
    assert!(
        h::get_text(
            &s3,
            &b.bucket,
            &format!("cdkd/{stack}/us-east-1/state.json")
        )
        .await
        .is_some(),
        "the record keeps the bucket"
    );
    assert!(
        !h::list_all_keys(&s3, &b.bucket)
            .await
            .iter()
            .any(|k| k.starts_with(&format!("cdkd/{stack}/")) && k.ends_with("lock.json")),
        "the lock went along and was released at the end"
    );

    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let rows: Value = serde_json::from_str(&listed.stdout).unwrap();
    let names: Vec<String> = rows
        .pointer("/executions")
        .or(Some(&rows))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert!(names.contains(&run_id), "{}", listed.stdout);
    assert!(
        !names.iter().any(|n| n.starts_with(&format!("{run_id}--"))),
        "one row per run: {names:?}"
    );
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.contains("FAILED"), "{}", shown.stdout);
    assert!(
        shown.stdout.contains("Slow"),
        "the run's report:\n{}",
        shown.stdout
    );
}
