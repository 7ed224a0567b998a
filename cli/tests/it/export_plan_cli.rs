//! End-to-end: what the export plan refuses or lists before any lock, and the
//! region rule export shares with destroy, through the binary against the emulator. Each
//! test starts from `export_support::real_stack`: an SQS queue (`WorkQueue`) and an SNS
//! topic (`AlertsTopic`) with their record; the template is varied per test.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e export_plan_cli -- --test-threads=1`.

use std::path::PathBuf;

use crate::export_support::{real_stack, uniq, RealStack};
use cdkd_tests as h;
use serde_json::{json, Value};

/// `template` written to a fresh file; its path.
fn write_template(s: &RealStack, template: &Value) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("export_plan_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}-{}.json", s.stack, uniq("t")));
    std::fs::write(&path, serde_json::to_vec(template).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// The stack's template as written by `real_stack`.
fn template_of(s: &RealStack) -> Value {
    serde_json::from_slice(&std::fs::read(&s.template).unwrap()).unwrap()
}

/// `export <stack> --template <template> --local --fast <extra> --run-id <fresh>`.
fn export(s: &RealStack, template: &str, extra: &[&str]) -> h::CliRun {
    let run_id = uniq("export-plan");
    let mut args = vec!["--state-bucket", &s.bucket, "export", &s.stack];
    args.extend(["--template", template, "--local", "--fast"]);
    args.extend_from_slice(extra);
    args.extend(["--run-id", &run_id]);
    crate::run_cli_env(&args, &[])
}

/// The stack's record replaced by `rec`.
async fn rewrite(s: &RealStack, rec: &Value) {
    let s3 = h::s3().await;
    h::put_raw(
        &s3,
        &s.bucket,
        &s.state_key(),
        serde_json::to_vec(rec).unwrap(),
    )
    .await;
}

/// The record as `real_stack` wrote it, no lock, no CloudFormation stack: nothing was
/// locked or submitted.
async fn untouched(s: &RealStack) {
    untouched_as(s, &s.record).await
}

/// [`untouched`], the record being `record`.
async fn untouched_as(s: &RealStack, record: &Value) {
    let s3 = h::s3().await;
    let body = h::get_raw(&s3, &s.bucket, &s.state_key())
        .await
        .expect("the record is still there")
        .0;
    let now: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(&now, record, "the record is unchanged");
    let lock = s.state_key().replace("state.json", "lock.json");
    assert!(h::get_raw(&s3, &s.bucket, &lock).await.is_none(), "no lock");
    assert!(
        cdkd_tests::cfn::described(&s.stack).await.is_none(),
        "no CloudFormation stack"
    );
}

/// `AlertsTopic` declared as an SQS queue over a record holding an SNS
/// topic: a real run is refused at the plan, naming the id and both types, before any
/// lock or change set.
#[tokio::test]
async fn type_mismatch_export_is_refused_before_any_lock_naming_the_id_and_both_types() {
    let s = real_stack("TypeMismatch").await;
    let mut t = template_of(&s);
    t["Resources"]["AlertsTopic"] = json!({"Type": "AWS::SQS::Queue"});
    let path = write_template(&s, &t);
    let r = export(&s, &path, &["-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("AlertsTopic (AWS::SQS::Queue)") && r.stdout.contains("AWS::SNS::Topic"),
        "{r:?}"
    );
    untouched(&s).await;
}

/// A template without `AlertsTopic`. The plan lists it as left
/// unmanaged; a real run without `--leave-unmanaged` is refused before the question and
/// any lock; with it the stack migrates and the report names the topic and the import
/// that brings it back under management.
#[tokio::test]
async fn left_unmanaged_rows_refuse_a_real_run_without_the_flag_and_the_report_names_them_with_it()
{
    let s = real_stack("LeftOut").await;
    let mut t = template_of(&s);
    t["Resources"]
        .as_object_mut()
        .unwrap()
        .remove("AlertsTopic");
    let path = write_template(&s, &t);

    let dry = export(&s, &path, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(dry.stdout.contains("  Left unmanaged ("), "{}", dry.stdout);
    assert!(
        dry.stdout.contains(&format!(
            "    AlertsTopic (AWS::SNS::Topic) {}",
            s.topic_arn
        )),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout
            .contains("a real run without --leave-unmanaged is refused"),
        "{}",
        dry.stdout
    );

    let refused = export(&s, &path, &["-y"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("error: export")
            && refused.stderr.contains("--leave-unmanaged")
            && refused.stderr.contains("AlertsTopic (AWS::SNS::Topic)"),
        "{refused:?}"
    );
    untouched(&s).await;

    let run = export(&s, &path, &["-y", "--leave-unmanaged"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("Left unmanaged (1 resource(s)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("[{}] AlertsTopic (AWS::SNS::Topic)", s.stack))
            && run.stdout.contains(&format!("cdk import {}", s.stack)),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("--change-set-type IMPORT")
            && run
                .stdout
                .contains(&format!("\"TopicArn\":\"{}\"", s.topic_arn)),
        "{}",
        run.stdout
    );
    // Migrated: the queue is CloudFormation's, the record is gone, the topic still runs.
    assert!(cdkd_tests::cfn::described(&s.stack).await.is_some());
    let s3 = h::s3().await;
    assert!(h::get_raw(&s3, &s.bucket, &s.state_key()).await.is_none());
    let sdk = h::sdk().await;
    aws_sdk_sns::Client::new(&sdk)
        .get_topic_attributes()
        .topic_arn(&s.topic_arn)
        .send()
        .await
        .expect("the topic left unmanaged still exists");
}

/// Refusals that name the way out, before any lock. An oversized
/// template names its largest resources by logical id and type; a composite physical id
/// of the wrong shape names the parts expected and the re-deploy.
#[tokio::test]
async fn refusals_name_the_way_out_oversized_template_and_wrong_shape_physical_id() {
    let s = real_stack("WayOut").await;
    let mut t = template_of(&s);
    t["Resources"]["WorkQueue"]["Properties"]["Tags"] =
        json!([{"Key": "blob", "Value": "x".repeat(1_100_000)}]);
    let path = write_template(&s, &t);
    let r = export(&s, &path, &["-y"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("template of stack")
            && r.stderr.contains("WorkQueue (AWS::SQS::Queue, ")
            && r.stderr.contains("nothing was locked or submitted"),
        "{}",
        r.stderr
    );
    untouched(&s).await;

    // An Elastic IP recorded by its allocation id alone.
    let mut rec = s.record.clone();
    rec["resources"]["Ip"] = json!({"resourceType": "AWS::EC2::EIP", "physicalId": "eipalloc-0a1b",
        "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"});
    rewrite(&s, &rec).await;
    let mut t = template_of(&s);
    t["Resources"]["Ip"] = json!({"Type": "AWS::EC2::EIP"});
    let path = write_template(&s, &t);
    let r = export(&s, &path, &["--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("Ip (AWS::EC2::EIP)")
            && r.stdout.contains("(2 part(s))")
            && r.stdout.contains("re-deploy the resource with cdkd"),
        "{}",
        r.stdout
    );
}

/// One rule for a record whose body names another region than its
/// key: export refuses it (dry run too) as destroy does, naming the kind of the value,
/// never the value.
#[tokio::test]
async fn region_conflict_export_and_destroy_both_refuse_a_record_whose_body_names_another_region() {
    let s = real_stack("RegionConflict").await;
    let mut rec = s.record.clone();
    rec["region"] = json!("eu-west-1");
    rewrite(&s, &rec).await;
    let r = export(&s, &s.template, &["--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("different region (a string) than its key (us-east-1)")
            && r.stderr.contains("as destroy does"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("eu-west-1"), "{}", r.stderr);

    let d = crate::run_cli_env(
        &[
            "--state-bucket",
            &s.bucket,
            "destroy",
            &s.stack,
            "--local",
            "--fast",
            "-y",
        ],
        &[],
    );
    assert_eq!(d.code, 1, "{d:?}");
    assert!(
        d.stderr
            .contains("different region (a string) than its key (us-east-1)"),
        "{}",
        d.stderr
    );
    // Nothing deleted, nothing locked, nothing submitted.
    untouched_as(&s, &rec).await;
}

/// Statement 17 (docs/export.md, "Checks"): a Custom Resource without
/// `--include-non-importable`. The dry run warns; a real run (whose plan run is a dry
/// run) is refused before the question and any lock, naming the flag.
#[tokio::test]
async fn custom_resource_without_the_flag_refuses_a_real_run_before_any_lock() {
    let s = real_stack("CrGate").await;
    let token = "arn:aws:sns:us-east-1:123456789012:cr-gate-provider";
    let mut rec = s.record.clone();
    rec["resources"]["Thing"] = json!({"resourceType": "Custom::Thing", "physicalId": "thing-1",
        "properties": {"ServiceToken": token}, "provisionedBy": "custom"});
    rewrite(&s, &rec).await;
    let mut t = template_of(&s);
    t["Resources"]["Thing"] =
        json!({"Type": "Custom::Thing", "Properties": {"ServiceToken": token}});
    let path = write_template(&s, &t);
    let gate = "1 Custom Resource(s) cannot be imported; phase 2 creates them again, which re-runs their create handlers. Pass --include-non-importable to accept that";

    let dry = export(&s, &path, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(
        dry.stdout.contains(&format!("Warning: {gate}")),
        "{}",
        dry.stdout
    );

    let refused = export(&s, &path, &["-y"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains(&format!("error: export {} refused: {gate}", s.stack)),
        "{refused:?}"
    );
    untouched_as(&s, &rec).await;
}
