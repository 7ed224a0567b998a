//! A destroy through the deployed backend: real emulator resources recorded in a cdkd
//! record of the backend's state bucket, `cdkd-flow destroy <stack> -y` (no `--local`)
//! watched to the end.

use super::{backend, invocations, lambda_steps, status, uniq};
use cdkd_tests as h;
use serde_json::json;

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
