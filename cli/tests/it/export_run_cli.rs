//! End-to-end: `cdkd-flow export --local --fast -y` (the binary) migrating a flat stack
//! of real emulator resources into CloudFormation (docs/export.md, "Workflow"): the stack holds
//! the very resources the record names, with its Outputs; the record and its lock are
//! gone; report.json says migrated. A failed import leaves the record and releases the
//! lock; a lock held by someone else refuses before anything is submitted.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 export_run_cli`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";

pub(crate) fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

/// `export <stack> --template <path> --local --fast -y`.
fn migrate(bucket: &str, stack: &str, template: &std::path::Path) -> h::CliRun {
    let path = template.to_string_lossy();
    cli(
        bucket,
        &[
            "export",
            stack,
            "--template",
            &path,
            "--local",
            "--fast",
            "-y",
        ],
    )
}

use cdkd_tests::cfn::{client as cfn, stack_resources};

/// Real emulator resources: (logical id, type, physical id, identifier-bearing template
/// properties).
pub(crate) struct Made {
    pub(crate) queue_url: String,
    pub(crate) topic_arn: String,
    pub(crate) param: String,
}

pub(crate) async fn make_resources(tag: &str) -> Made {
    let sdk = h::sdk().await;
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let q = sqs
        .create_queue()
        .queue_name(format!("{tag}-work"))
        .send()
        .await
        .unwrap();
    let sns = aws_sdk_sns::Client::new(&sdk);
    let t = sns
        .create_topic()
        .name(format!("{tag}-alerts"))
        .send()
        .await
        .unwrap();
    let ssm = aws_sdk_ssm::Client::new(&sdk);
    let param = format!("/{tag}/queue-url");
    ssm.put_parameter()
        .name(&param)
        .value(q.queue_url().unwrap())
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    Made {
        queue_url: q.queue_url().unwrap().to_string(),
        topic_arn: t.topic_arn().unwrap().to_string(),
        param,
    }
}

pub(crate) fn record(stack: &str, m: &Made) -> Value {
    json!({
        "version": 10, "stackName": stack, "region": REGION,
        "resources": {
            "WorkQueue": {"resourceType": "AWS::SQS::Queue", "physicalId": m.queue_url, "properties": {},
                          "attributes": {}, "dependencies": [], "provisionedBy": "sdk"},
            "AlertsTopic": {"resourceType": "AWS::SNS::Topic", "physicalId": m.topic_arn, "properties": {},
                            "attributes": {}, "dependencies": [], "provisionedBy": "sdk"},
            "QueueUrlParam": {"resourceType": "AWS::SSM::Parameter", "physicalId": m.param,
                              "properties": {"Name": m.param, "Type": "String"}, "attributes": {},
                              "dependencies": ["WorkQueue"], "provisionedBy": "sdk"}
        },
        "outputs": {"QueueUrl": m.queue_url},
        "lastModified": 1777458225000i64
    })
}

pub(crate) fn template(m: &Made) -> Value {
    let queue_name = m.queue_url.rsplit('/').next().unwrap().to_string();
    json!({
        "Resources": {
            "WorkQueue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": queue_name}},
            "AlertsTopic": {"Type": "AWS::SNS::Topic"},
            "QueueUrlParam": {"Type": "AWS::SSM::Parameter",
                              "Properties": {"Name": m.param, "Type": "String", "Value": {"Ref": "WorkQueue"}}},
            "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2:deflate64:x"}}
        },
        "Outputs": {"QueueUrl": {"Value": {"Ref": "WorkQueue"}}, "TopicArn": {"Value": {"Ref": "AlertsTopic"}}}
    })
}

pub(crate) fn write_template(name: &str, t: &Value) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("export_run_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.template.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(t).unwrap()).unwrap();
    path
}

pub(crate) async fn seeded(stack: &str, rec: &Value) -> String {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/{REGION}/state.json"),
        serde_json::to_vec(rec).unwrap(),
    )
    .await;
    bucket
}

#[tokio::test]
async fn export_migrates_a_flat_stack_into_cloudformation_with_its_outputs() {
    let stack = uniq("ExportRun");
    let m = make_resources(&stack.to_lowercase()).await;
    let bucket = seeded(&stack, &record(&stack, &m)).await;
    let tpl = write_template(&stack, &template(&m));
    let run = migrate(&bucket, &stack, &tpl);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.contains("migrated; cdkd record deleted"),
        "{}",
        run.stdout
    );

    // CloudFormation holds the very resources the record named.
    let res = stack_resources(&stack).await;
    assert_eq!(res.get("WorkQueue"), Some(&m.queue_url), "{res:?}");
    assert_eq!(res.get("AlertsTopic"), Some(&m.topic_arn), "{res:?}");
    assert_eq!(res.get("QueueUrlParam"), Some(&m.param), "{res:?}");
    let d = cfn()
        .await
        .describe_stacks()
        .stack_name(&stack)
        .send()
        .await
        .unwrap();
    let s = &d.stacks()[0];
    assert_eq!(
        s.stack_status().map(|x| x.as_str()),
        Some("UPDATE_COMPLETE")
    );
    let outputs: BTreeMap<_, _> = s
        .outputs()
        .iter()
        .map(|o| {
            (
                o.output_key().unwrap_or_default().to_string(),
                o.output_value().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        outputs.get("QueueUrl"),
        Some(&m.queue_url),
        "phase 2 restores the Outputs: {outputs:?}"
    );
    assert_eq!(outputs.get("TopicArn"), Some(&m.topic_arn));

    // The record and its lock are gone; report.json says migrated.
    let s3 = h::s3().await;
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(
        !keys
            .iter()
            .any(|k| k == &format!("cdkd/{stack}/{REGION}/state.json")),
        "{keys:?}"
    );
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    let report_key = keys
        .iter()
        .find(|k| k.ends_with("/report.json") && !k.contains("-plan/"))
        .expect("report.json");
    let (body, _) = h::get_raw(&s3, &bucket, report_key).await.unwrap();
    let report: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(report["outcome"], "migrated");
}

#[tokio::test]
async fn a_failed_import_keeps_the_record_releases_the_lock_and_reports_what_to_redo() {
    let stack = uniq("ExportFail");
    let mut m = make_resources(&stack.to_lowercase()).await;
    // The record names a queue that does not exist: the IMPORT change set fails.
    m.queue_url = format!("{}-gone", m.queue_url);
    let rec = record(&stack, &m);
    let bucket = seeded(&stack, &rec).await;
    let tpl = write_template(&stack, &template(&m));
    let run = migrate(&bucket, &stack, &tpl);
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.contains(&format!(
            "its phase-1 IMPORT failed, and the run deleted the empty CloudFormation stack {stack} it had created"
        )),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("delete-stack"), "{}", run.stdout);
    assert!(
        run.stdout.contains("the cdkd record is unchanged"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(&format!("export {stack} failed")),
        "{}",
        run.stderr
    );
    let s3 = h::s3().await;
    let (body, _) = h::get_raw(&s3, &bucket, &format!("cdkd/{stack}/{REGION}/state.json"))
        .await
        .expect("record kept");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), rec);
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    // Nothing is left in the way: the same command runs a new export (which fails the
    // same way while the queue is gone), never refused for an existing stack.
    let again = migrate(&bucket, &stack, &tpl);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(!again.stderr.contains("already exists"), "{}", again.stderr);
    assert!(!again.stderr.contains("resuming"), "{}", again.stderr);
}

/// A flat stack of real resources whose lock someone else holds until `expires_at`
/// (epoch ms), migrated; returns the stack's name, the bucket, the lock and the run.
async fn migrate_under_a_foreign_lock(
    tag: &str,
    expires_at: i64,
) -> (String, String, Value, h::CliRun) {
    let stack = uniq(tag);
    let m = make_resources(&stack.to_lowercase()).await;
    let bucket = seeded(&stack, &record(&stack, &m)).await;
    let s3 = h::s3().await;
    let lock = json!({"owner": "someone@host:1", "timestamp": 1, "expiresAt": expires_at, "operation": "deploy"});
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/{REGION}/lock.json"),
        serde_json::to_vec(&lock).unwrap(),
    )
    .await;
    let tpl = write_template(&stack, &template(&m));
    let run = migrate(&bucket, &stack, &tpl);
    (stack, bucket, lock, run)
}

/// Statement 71: a lock whose holder let it expire is taken over; the export migrates.
#[tokio::test]
async fn statement_71_an_expired_lock_is_taken_over_and_the_export_migrates() {
    let (stack, _, _, run) = migrate_under_a_foreign_lock("ExportExpired", 1).await;
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        cfn()
            .await
            .describe_stacks()
            .stack_name(&stack)
            .send()
            .await
            .is_ok(),
        "the stack migrated"
    );
}

#[tokio::test]
async fn statement_70_a_held_lock_refuses_the_export_before_anything_is_submitted() {
    let (stack, bucket, lock, run) =
        migrate_under_a_foreign_lock("ExportHeld", 99999999999999).await;
    let s3 = h::s3().await;
    assert_ne!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.contains("someone@host:1"), "{}", run.stderr);
    let exists = cfn()
        .await
        .describe_stacks()
        .stack_name(&stack)
        .send()
        .await;
    assert!(
        exists.is_err(),
        "no CloudFormation stack may be created: {exists:?}"
    );
    let (body, _) = h::get_raw(&s3, &bucket, &format!("cdkd/{stack}/{REGION}/lock.json"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap(),
        lock,
        "the other holder's lock is left alone"
    );
}

#[tokio::test]
async fn export_pre_deletes_an_import_unsupported_policy_and_phase2_recreates_it() {
    pre_delete_then_recreate(true, false).await;
}

/// A stack with a Custom Resource and an IMPORT-unsupported row (docs/export.md, "Phases (export-import, export-execute, export-phase2)"):
/// with `--include-non-importable`, phase 1 imports the role, the inline policy is
/// pre-deleted, and phase 2 re-creates it and runs the Custom Resource's create: the
/// request reaches the provider (the SNS topic of its ServiceToken; this test answers
/// for the provider), the stack waits for the answer, and CloudFormation holds the
/// resource under the physical id the provider gave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_phase2_runs_a_custom_resource_and_recreates_a_pre_deleted_row() {
    pre_delete_then_recreate(true, true).await;
}

/// Statement 66 (docs/export.md, "Checks"): the pre-delete of an IMPORT-unsupported row that
/// is already gone (here the role's inline policy, deleted by hand since cdkd recorded
/// it) is done, and phase 2 creates it.
#[tokio::test]
async fn export_statement_66_a_pre_delete_answered_not_found_is_done_and_phase2_creates_the_row() {
    pre_delete_then_recreate(false, false).await;
}

/// A role with an inline policy recorded as an `AWS::IAM::Policy` row (on the role when
/// `policy_exists`), migrated: phase 1 imports the role, the policy row is pre-deleted
/// (or found gone) and phase 2 puts it on the role as a CloudFormation resource. With
/// `custom_resource`, the stack also has an SNS-backed `Custom::Thing` that phase 2
/// creates (`--include-non-importable`), answered by `cdkd_tests::provider`.
async fn pre_delete_then_recreate(policy_exists: bool, custom_resource: bool) {
    let stack = uniq("ExportPolicy");
    let sdk = h::sdk().await;
    let iam = aws_sdk_iam::Client::new(&sdk);
    let role = format!("{stack}-role");
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(trust.to_string())
        .send()
        .await
        .unwrap();
    let doc = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]});
    if policy_exists {
        iam.put_role_policy()
            .role_name(&role)
            .policy_name("Send")
            .policy_document(doc.to_string())
            .send()
            .await
            .unwrap();
    }
    let rec = json!({"version": 10, "stackName": stack, "region": REGION, "resources": {
        "Role": {"resourceType": "AWS::IAM::Role", "physicalId": role, "properties": {"RoleName": role},
                 "attributes": {"Arn": format!("arn:aws:iam::123456789012:role/{role}")}, "provisionedBy": "sdk"},
        "SendPolicy": {"resourceType": "AWS::IAM::Policy", "physicalId": "Send",
                       "properties": {"PolicyName": "Send", "PolicyDocument": doc, "Roles": [role]},
                       "dependencies": ["Role"], "provisionedBy": "sdk"}
    }});
    let tpl = json!({"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": role, "AssumeRolePolicyDocument": trust}},
        "SendPolicy": {"Type": "AWS::IAM::Policy",
                       "Properties": {"PolicyName": "Send", "PolicyDocument": doc, "Roles": [{"Ref": "Role"}]}}
    }, "Outputs": {"RoleName": {"Value": {"Ref": "Role"}}}});
    let (mut rec, mut tpl) = (rec, tpl);
    let mut provider = None;
    if custom_resource {
        let (topic, queue) = h::provider::sns_provider(&stack).await;
        rec["resources"]["Thing"] = json!({"resourceType": "Custom::Thing", "physicalId": "thing-old",
            "properties": {"ServiceToken": topic, "Size": "3"}, "provisionedBy": "custom"});
        tpl["Resources"]["Thing"] =
            json!({"Type": "Custom::Thing", "Properties": {"ServiceToken": topic, "Size": "3"}});
        provider = Some(tokio::spawn(h::provider::answer_requests(queue, 1)));
    }
    let bucket = seeded(&stack, &rec).await;
    let path = write_template(&stack, &tpl);
    let run = if custom_resource {
        let (bucket, stack) = (bucket.clone(), stack.clone());
        let ran = tokio::task::spawn_blocking(move || {
            let path = path.to_string_lossy().into_owned();
            cli(
                &bucket,
                &[
                    "export",
                    &stack,
                    "--template",
                    &path,
                    "--local",
                    "--fast",
                    "-y",
                    "--include-non-importable",
                ],
            )
        });
        // Without the provider's answer the stack would wait for an hour.
        tokio::time::timeout(std::time::Duration::from_secs(180), ran)
            .await
            .expect("the export ended within 3 minutes")
            .unwrap()
    } else {
        migrate(&bucket, &stack, &path)
    };
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    // Phase 1 imported the role; the pre-delete removed the inline policy, phase 2 put it
    // back as a CloudFormation resource.
    let res = stack_resources(&stack).await;
    if let Some(provider) = provider {
        let events = provider.await.unwrap();
        assert_eq!(events[0]["RequestType"], "Create", "{events:?}");
        assert_eq!(events[0]["LogicalResourceId"], "Thing", "{events:?}");
        assert_eq!(
            res.get("Thing").map(String::as_str),
            Some("Thing-new"),
            "CloudFormation holds the resource the provider created: {res:?}"
        );
    }
    assert_eq!(res.get("Role"), Some(&role), "{res:?}");
    assert!(
        res.contains_key("SendPolicy"),
        "phase 2 re-creates the policy: {res:?}"
    );
    let policies = iam
        .list_role_policies()
        .role_name(&role)
        .send()
        .await
        .unwrap();
    assert_eq!(
        policies.policy_names(),
        ["Send"],
        "the policy is on the role again"
    );
    let s3 = h::s3().await;
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(
        !keys
            .iter()
            .any(|k| k == &format!("cdkd/{stack}/{REGION}/state.json")),
        "{keys:?}"
    );
    let progress_key = keys
        .iter()
        .find(|k| k.ends_with("/progress.json"))
        .expect("progress.json");
    let (body, _) = h::get_raw(&s3, &bucket, progress_key).await.unwrap();
    let progress: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        progress["stacks"][0]["preDeleted"],
        json!(["SendPolicy"]),
        "{progress}"
    );
}

/// docs/runs.md, "Continuing in a new execution", for the export: with the history limit
/// lowered to 150 events (`CDKD_FLOW_HISTORY_LIMIT`, read by the engine and the steps:
/// 7 routed steps an execution), a custom resource whose provider (this test) answers only
/// once the run has continued twice keeps phase 2's UPDATE in progress, the run polling
/// it past the limit. Each execution hands the run over to a new one (`<run>--2`,
/// `<run>--3`, ...: recorded in progress.json's `continuedAs`, the locks and what is in
/// flight carried along), and `cdkd-flow export --local` follows it to the migration.
/// Without continuing, the first execution would fail with States.Runtime at event 150.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_continues_in_a_new_execution_before_the_history_limit() {
    let stack = uniq("ExportLong");
    let m = make_resources(&stack.to_lowercase()).await;
    let (topic, queue) = h::provider::sns_provider(&stack).await;
    let mut rec = record(&stack, &m);
    rec["resources"]["Thing"] = json!({"resourceType": "Custom::Thing", "physicalId": "thing-old",
        "properties": {"ServiceToken": topic, "Size": "3"}, "provisionedBy": "custom"});
    let mut tpl = template(&m);
    tpl["Resources"]["Thing"] =
        json!({"Type": "Custom::Thing", "Properties": {"ServiceToken": topic, "Size": "3"}});
    let bucket = seeded(&stack, &rec).await;
    let path = write_template(&stack, &tpl);

    // The provider answers once progress.json names the run's third execution or a later
    // one (or after two minutes, when the assertions below fail).
    let provider = {
        let bucket = bucket.clone();
        tokio::spawn(async move {
            let s3 = h::s3().await;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            let mut seen = Value::Null;
            while std::time::Instant::now() < deadline {
                let keys = h::list_all_keys(&s3, &bucket).await;
                for k in keys.iter().filter(|k| k.ends_with("/progress.json")) {
                    if let Some(body) = h::get_text(&s3, &bucket, k).await {
                        let v: Value = serde_json::from_str(&body).unwrap_or_default();
                        // The third execution or a later one: the run may continue
                        // again between two reads of this loop.
                        let turn = v["continuedAs"]
                            .as_str()
                            .and_then(|n| n.rsplit_once("--"))
                            .and_then(|(_, n)| n.parse::<u32>().ok());
                        if turn.is_some_and(|n| n >= 3) {
                            seen = v;
                        }
                    }
                }
                if !seen.is_null() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            }
            (seen, h::provider::answer_requests(queue, 1).await)
        })
    };
    let ran = {
        let (bucket, stack) = (bucket.clone(), stack.clone());
        tokio::task::spawn_blocking(move || {
            let path = path.to_string_lossy().into_owned();
            crate::run_cli_env(
                &[
                    "--state-bucket",
                    &bucket,
                    "export",
                    &stack,
                    "--template",
                    &path,
                    "--local",
                    "--fast",
                    "-y",
                    "--include-non-importable",
                ],
                &[("CDKD_FLOW_HISTORY_LIMIT", "150")],
            )
        })
    };
    let run = tokio::time::timeout(std::time::Duration::from_secs(240), ran)
        .await
        .expect("the export ended within 4 minutes")
        .unwrap();
    let (seen, events) = provider.await.unwrap();
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
    assert!(
        run.stderr
            .contains("continue: the run goes on in execution"),
        "the run's log says where it went on:\n{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("migrated; cdkd record deleted"),
        "{}",
        run.stdout
    );
    assert_eq!(events[0]["LogicalResourceId"], "Thing", "{events:?}");
    let res = stack_resources(&stack).await;
    assert_eq!(res.get("WorkQueue"), Some(&m.queue_url), "{res:?}");
    assert_eq!(res.get("Thing").map(String::as_str), Some("Thing-new"));
    let s3 = h::s3().await;
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    assert!(
        !keys
            .iter()
            .any(|k| k == &format!("cdkd/{stack}/{REGION}/state.json")),
        "{keys:?}"
    );
    let progress_key = keys
        .iter()
        .find(|k| k.ends_with("/progress.json") && !k.contains("-plan/"))
        .expect("progress.json");
    let progress: Value =
        serde_json::from_str(&h::get_text(&s3, &bucket, progress_key).await.unwrap()).unwrap();
    let run_id = progress["runId"].as_str().unwrap_or_default();
    let latest = progress["continuedAs"].as_str().unwrap_or_default();
    let n: u32 = latest
        .strip_prefix(&format!("{run_id}--"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("continuedAs names an execution of run {run_id}: {progress}"));
    assert!(n >= 3, "{progress}");
}
