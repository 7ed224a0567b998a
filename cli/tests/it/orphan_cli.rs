//! End-to-end: `cdkd-flow state orphan` (the binary) on the emulator's S3: whole stacks
//! (records and locks removed, the lock rule, the confirmation rule, `--stack-region`,
//! `--json`) and `--resource` (references rewritten under the lock, the abort without
//! `--force`, values never copied under `--force`, the refusals that save nothing).
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 orphan_cli`.

use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";

fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket, "state", "orphan"];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

fn key(stack: &str, region: &str, file: &str) -> String {
    format!("cdkd/{stack}/{region}/{file}")
}

async fn put_json(bucket: &str, key: &str, v: &Value) {
    h::put_raw(&h::s3().await, bucket, key, v.to_string()).await;
}

async fn get_json(bucket: &str, key: &str) -> Option<Value> {
    let text = h::get_text(&h::s3().await, bucket, key).await?;
    Some(serde_json::from_str(&text).expect("JSON"))
}

fn record(stack: &str, region: &str, resources: Value) -> Value {
    json!({"version": 10, "stackName": stack, "region": region, "resources": resources,
           "outputs": {}, "lastModified": 1_796_169_600_000i64})
}

fn topic(physical: &str) -> Value {
    json!({"resourceType": "AWS::SNS::Topic", "physicalId": physical, "properties": {},
           "attributes": {"TopicName": "alerts", "SecretAccessKey": "AKIA-never-copied"}})
}

/// A bucket with stack `App` in two regions and `Other` in one.
async fn two_regions() -> String {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    for (stack, region) in [("App", REGION), ("App", "eu-west-1"), ("Other", REGION)] {
        put_json(
            &bucket,
            &key(stack, region, "state.json"),
            &record(
                stack,
                region,
                json!({"T": topic("arn:aws:sns:us-east-1:1:t")}),
            ),
        )
        .await;
    }
    bucket
}

async fn keys(bucket: &str) -> Vec<String> {
    h::list_all_keys(&h::s3().await, bucket).await
}

#[tokio::test]
async fn orphan_rule_7_1_removes_every_region_of_a_stack_and_leaves_the_others() {
    let bucket = two_regions().await;
    let r = cli(&bucket, &["App", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("✓ Removed state for stack: App (eu-west-1)"),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains("✓ Removed state for stack: App (us-east-1)"),
        "{r:?}"
    );
    assert_eq!(keys(&bucket).await, [key("Other", REGION, "state.json")]);
}

#[tokio::test]
async fn orphan_rule_7_1_stack_region_removes_only_that_record_and_json_says_so() {
    let bucket = two_regions().await;
    let r = cli(
        &bucket,
        &["App", "--stack-region", "eu-west-1", "-y", "--json"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v,
        json!({"removed": [{"stack": "App", "region": "eu-west-1"}]})
    );
    assert!(keys(&bucket)
        .await
        .contains(&key("App", REGION, "state.json")));
    let r = cli(&bucket, &["App", "--stack-region", "ap-south-1", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("us-east-1"), "{r:?}");
}

#[tokio::test]
async fn orphan_rule_7_1_unknown_stack_is_skipped_with_exit_0() {
    let bucket = two_regions().await;
    let r = cli(&bucket, &["Nope", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("No state found for stack: Nope, skipping"),
        "{r:?}"
    );
    assert_eq!(keys(&bucket).await.len(), 3);
}

#[tokio::test]
async fn orphan_rule_7_1_a_locked_stack_is_refused_unless_force_and_force_removes_the_lock() {
    let bucket = two_regions().await;
    let lock = h::cdkd_lock_body(
        "bob@ci:7",
        h::now_ms(),
        h::now_ms() + 600_000,
        Some("deploy"),
    );
    h::put_raw(
        &h::s3().await,
        &bucket,
        &key("Other", REGION, "lock.json"),
        lock,
    )
    .await;
    let r = cli(&bucket, &["Other", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("Could not acquire lock for stack Other (us-east-1) — held by bob@ci:7, operation: deploy"),
        "{r:?}"
    );
    assert!(
        r.stderr
            .contains("cdkd-flow force-unlock Other --stack-region us-east-1"),
        "{r:?}"
    );
    assert!(keys(&bucket)
        .await
        .contains(&key("Other", REGION, "state.json")));
    let r = cli(&bucket, &["Other", "-f"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("LIVE lock"), "{r:?}");
    assert!(r.stderr.contains("bob@ci:7"), "{r:?}");
    let left = keys(&bucket).await;
    assert!(
        !left.iter().any(|k| k.starts_with("cdkd/Other/")),
        "{left:?}"
    );
}

#[tokio::test]
async fn orphan_rule_7_1_without_a_terminal_needs_yes() {
    let bucket = two_regions().await;
    let r = cli(&bucket, &["App"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("-y / --yes"), "{r:?}");
    assert_eq!(keys(&bucket).await.len(), 3);
}

// ------------------------------------------------------------------- --resource

/// `Shop`: a topic `T` (with a credential-named cached attribute) and a queue whose
/// properties hold a Ref, two GetAtts (one credential-named) and an Fn::Sub to it.
async fn shop() -> String {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let resources = json!({
        "T": topic("arn:aws:sns:us-east-1:1:alerts"),
        "Q": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://sqs/q", "dependencies": ["T"],
              "properties": {
                  "Target": {"Ref": "T"},
                  "Name": {"Fn::GetAtt": ["T", "TopicName"]},
                  "Key": {"Fn::GetAtt": ["T", "SecretAccessKey"]},
                  "Label": {"Fn::Sub": "topic ${T} of ${AWS::Region}"}},
              "attributes": {}}
    });
    put_json(
        &bucket,
        &key("Shop", REGION, "state.json"),
        &record("Shop", REGION, resources),
    )
    .await;
    bucket
}

#[tokio::test]
async fn orphan_rule_7_2_unresolvable_getatt_without_force_aborts_saves_nothing_and_releases_the_lock(
) {
    let bucket = shop().await;
    let before = get_json(&bucket, &key("Shop", REGION, "state.json")).await;
    let r = cli(&bucket, &["Shop", "--resource", "T", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("Orphan aborted: 2 reference(s) could not be resolved"),
        "{r:?}"
    );
    assert_eq!(
        get_json(&bucket, &key("Shop", REGION, "state.json")).await,
        before
    );
    assert!(!keys(&bucket)
        .await
        .contains(&key("Shop", REGION, "lock.json")));
}

#[tokio::test]
async fn orphan_rule_7_3_force_rewrites_references_and_never_copies_a_credential_named_attribute() {
    let bucket = shop().await;
    let r = cli(&bucket, &["Shop", "--resource", "T", "--force", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let saved = get_json(&bucket, &key("Shop", REGION, "state.json"))
        .await
        .unwrap();
    let res = &saved["resources"];
    assert!(res.get("T").is_none(), "{saved}");
    let p = &res["Q"]["properties"];
    assert_eq!(p["Target"], json!("arn:aws:sns:us-east-1:1:alerts"));
    assert_eq!(
        p["Name"],
        json!("alerts"),
        "the cached value, not credential-named"
    );
    assert_eq!(p["Key"], json!({"Fn::GetAtt": ["T", "SecretAccessKey"]}));
    assert!(!saved.to_string().contains("AKIA-never-copied"), "{saved}");
    assert_eq!(res["Q"]["dependencies"], json!([]));
    assert!(r.stderr.contains("credential-named attribute"), "{r:?}");
    assert!(!r.stderr.contains("AKIA-never-copied"), "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["removed"], json!(["T"]));
    assert_eq!(v["neverCopied"][0]["attribute"], json!("SecretAccessKey"));
    assert_eq!(v["neverCopied"][0]["source"], json!("cached"));
    assert!(!keys(&bucket)
        .await
        .contains(&key("Shop", REGION, "lock.json")));
}

#[tokio::test]
async fn orphan_rule_7_2_unknown_id_and_several_stacks_are_refused() {
    let bucket = shop().await;
    let r = cli(&bucket, &["Shop", "--resource", "Nope", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("Resource(s) not in state for Shop"),
        "{r:?}"
    );
    assert!(r.stderr.contains("Available logical IDs: "), "{r:?}");
    let r = cli(&bucket, &["Shop", "Other", "--resource", "T", "-y"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("ONE stack"), "{r:?}");
}

#[tokio::test]
async fn orphan_rule_7_2_lock_held_by_another_process_refuses_and_changes_nothing() {
    let bucket = shop().await;
    let before = get_json(&bucket, &key("Shop", REGION, "state.json")).await;
    let lock = h::cdkd_lock_body(
        "alice@laptop:42",
        h::now_ms(),
        h::now_ms() + 600_000,
        Some("deploy"),
    );
    h::put_raw(
        &h::s3().await,
        &bucket,
        &key("Shop", REGION, "lock.json"),
        lock.clone(),
    )
    .await;
    let r = cli(&bucket, &["Shop", "--resource", "T", "--force"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("alice@laptop:42"), "{r:?}");
    assert_eq!(
        get_json(&bucket, &key("Shop", REGION, "state.json")).await,
        before
    );
    let held = h::get_text(&h::s3().await, &bucket, &key("Shop", REGION, "lock.json")).await;
    assert_eq!(
        held.as_deref(),
        Some(lock.as_str()),
        "the other holder's lock is kept"
    );
}

#[tokio::test]
async fn orphan_rule_7_2_a_nested_stack_with_its_own_record_is_refused_naming_the_child_command() {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let parent = record(
        "Root",
        REGION,
        json!({"Net": {"resourceType": "AWS::CloudFormation::Stack",
                       "physicalId": "arn:aws:cloudformation:us-east-1:1:stack/n/1", "properties": {}}}),
    );
    put_json(&bucket, &key("Root", REGION, "state.json"), &parent).await;
    put_json(
        &bucket,
        &key("Root~Net", REGION, "state.json"),
        &record("Root~Net", REGION, json!({})),
    )
    .await;
    let r = cli(&bucket, &["Root", "--resource", "Net", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(
            "Drop the child with: cdkd-flow state orphan 'Root~Net' --stack-region us-east-1"
        ),
        "{r:?}"
    );
    assert!(get_json(&bucket, &key("Root", REGION, "state.json"))
        .await
        .unwrap()["resources"]["Net"]
        .is_object());
}

// ------------------------------------------------- live attribute reads (docs/repairs.md, "Live attribute reads")

/// A real queue on the emulator: (url, live ARN).
async fn live_queue() -> (String, String) {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let sqs = aws_sdk_sqs::Client::new(&h::sdk().await);
    let name = format!("orphan-live-{}", uuid::Uuid::new_v4().simple());
    let url = sqs
        .create_queue()
        .queue_name(&name)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let arn = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(A::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap()[&A::QueueArn]
        .clone();
    (url, arn)
}

/// `Live`: queue `Q` (physical id `url`, caching no ARN and a name that differs from the
/// live one) and `Keeper`, whose properties hold a Ref, a GetAtt and an Fn::Sub
/// placeholder to it.
async fn live_stack(url: &str) -> String {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let resources = json!({
        "Q": {"resourceType": "AWS::SQS::Queue", "physicalId": url, "properties": {},
              "attributes": {"QueueName": "recorded-name"}},
        "Keeper": {"resourceType": "AWS::Lambda::Function", "physicalId": "keeper",
                   "dependencies": ["Q"],
                   "properties": {
                       "Url": {"Ref": "Q"},
                       "QueueArn": {"Fn::GetAtt": ["Q", "Arn"]},
                       "Label": {"Fn::Sub": "queue ${Q.QueueName} in ${AWS::Region}"}}}
    });
    put_json(
        &bucket,
        &key("Live", REGION, "state.json"),
        &record("Live", REGION, resources),
    )
    .await;
    bucket
}

#[tokio::test]
async fn orphan_rule_7_3_getatt_is_read_live_without_force_the_recorded_value_preferred_when_servable(
) {
    let (url, arn) = live_queue().await;
    let bucket = live_stack(&url).await;
    let r = cli(&bucket, &["Live", "--resource", "Q", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    let saved = get_json(&bucket, &key("Live", REGION, "state.json"))
        .await
        .unwrap();
    let p = &saved["resources"]["Keeper"]["properties"];
    assert_eq!(p["Url"], json!(url));
    assert_eq!(
        p["QueueArn"],
        json!(arn),
        "nothing recorded: the live ARN, read without --force"
    );
    assert_eq!(
        p["Label"],
        json!({"Fn::Sub": "queue recorded-name in ${AWS::Region}"}),
        "the live read answered and the recorded name may be served: it is preferred"
    );
    assert!(saved["resources"].get("Q").is_none());
    assert!(
        r.stdout
            .contains("Removed 1 resource record(s) from state: Q"),
        "{r:?}"
    );
    assert!(!keys(&bucket)
        .await
        .contains(&key("Live", REGION, "lock.json")));
}

#[tokio::test]
async fn orphan_rule_7_3_a_live_read_of_a_gone_resource_refuses_without_force_naming_it() {
    let gone = format!(
        "{}/123456789012/orphan-gone-{}",
        h::endpoint(),
        uuid::Uuid::new_v4().simple()
    );
    let bucket = live_stack(&gone).await;
    let before = get_json(&bucket, &key("Live", REGION, "state.json")).await;
    let r = cli(&bucket, &["Live", "--resource", "Q", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("Orphan aborted: 2 reference(s) could not be resolved"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(&format!(
            "Keeper.properties.QueueArn: Q.Arn (the live read failed: Q (AWS::SQS::Queue): it no longer exists ({gone} was not found))"
        )),
        "{r:?}"
    );
    assert_eq!(
        get_json(&bucket, &key("Live", REGION, "state.json")).await,
        before,
        "nothing saved"
    );
    assert!(!keys(&bucket)
        .await
        .contains(&key("Live", REGION, "lock.json")));
}

#[tokio::test]
async fn orphan_rule_7_3_force_falls_back_to_the_cached_value_when_the_live_read_fails() {
    let gone = format!(
        "{}/123456789012/orphan-gone-{}",
        h::endpoint(),
        uuid::Uuid::new_v4().simple()
    );
    let bucket = live_stack(&gone).await;
    let r = cli(&bucket, &["Live", "--resource", "Q", "--force"]);
    assert_eq!(r.code, 0, "{r:?}");
    let saved = get_json(&bucket, &key("Live", REGION, "state.json"))
        .await
        .unwrap();
    let p = &saved["resources"]["Keeper"]["properties"];
    assert_eq!(
        p["QueueArn"],
        json!({"Fn::GetAtt": ["Q", "Arn"]}),
        "nothing cached to fall back on: the intrinsic stays"
    );
    assert_eq!(
        p["Label"],
        json!({"Fn::Sub": "queue recorded-name in ${AWS::Region}"}),
        "the cached name fills in for the failed read"
    );
}

#[tokio::test]
async fn orphan_rule_7_3_a_never_copied_live_value_keeps_the_intrinsic_even_when_the_read_works() {
    // A String parameter whose live value is itself a dynamic reference, and a
    // credential-named attribute of the same resource (never read at all).
    let ssm = aws_sdk_ssm::Client::new(&h::sdk().await);
    let name = format!("/cdkd-flow/orphan-{}", uuid::Uuid::new_v4().simple());
    let secret_ref = "{{resolve:secretsmanager:db:SecretString:pw}}";
    ssm.put_parameter()
        .name(&name)
        .value(secret_ref)
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let resources = json!({
        "P": {"resourceType": "AWS::SSM::Parameter", "physicalId": name, "properties": {},
              "attributes": {"Type": "String", "SecretValue": "cached-plaintext"}},
        "Keeper": {"resourceType": "AWS::Lambda::Function", "physicalId": "keeper",
                   "properties": {
                       "Type": {"Fn::GetAtt": ["P", "Type"]},
                       "Value": {"Fn::GetAtt": ["P", "Value"]},
                       "Secret": {"Fn::GetAtt": ["P", "SecretValue"]}}}
    });
    put_json(
        &bucket,
        &key("Cfg", REGION, "state.json"),
        &record("Cfg", REGION, resources),
    )
    .await;
    let before = get_json(&bucket, &key("Cfg", REGION, "state.json")).await;
    let r = cli(&bucket, &["Cfg", "--resource", "P", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(
            "Keeper.properties.Value: P.Value (the live value is an unresolved dynamic reference)"
        ),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(
            "Keeper.properties.Secret: P.SecretValue (a credential-named attribute is never read live)"
        ),
        "{r:?}"
    );
    assert_eq!(
        get_json(&bucket, &key("Cfg", REGION, "state.json")).await,
        before
    );
    let r = cli(&bucket, &["Cfg", "--resource", "P", "--force", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let saved = get_json(&bucket, &key("Cfg", REGION, "state.json"))
        .await
        .unwrap();
    let p = &saved["resources"]["Keeper"]["properties"];
    assert_eq!(p["Type"], json!("String"), "read live");
    assert_eq!(p["Value"], json!({"Fn::GetAtt": ["P", "Value"]}));
    assert_eq!(p["Secret"], json!({"Fn::GetAtt": ["P", "SecretValue"]}));
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["neverCopied"],
        json!([{"logicalId": "P", "attribute": "Value", "source": "live"},
               {"logicalId": "P", "attribute": "SecretValue", "source": "cached"}])
    );
    let text = format!("{saved}{}{}", r.stdout, r.stderr);
    assert!(!text.contains("secretsmanager:db"), "{text}");
    assert!(!text.contains("cached-plaintext"), "{text}");
    assert!(
        r.stderr
            .contains("--force: the live value for P.Value is an unresolved dynamic reference"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(
            "--force: the cached value for P.SecretValue is a credential-named attribute"
        ),
        "{r:?}"
    );
}

// ------------------------------------------------------- a malformed lock body

#[tokio::test]
async fn orphan_rule_7_1_a_lock_body_that_is_not_an_object_refuses_naming_the_stack_and_changes_nothing(
) {
    for body in ["[\"not\", \"a lock\"]", "42", "{not json"] {
        let bucket = two_regions().await;
        let lock_key = key("Other", REGION, "lock.json");
        h::put_raw(&h::s3().await, &bucket, &lock_key, body.to_string()).await;
        let before = get_json(&bucket, &key("Other", REGION, "state.json")).await;
        let r = cli(&bucket, &["Other", "-y"]);
        assert_eq!(r.code, 1, "{body}: {r:?}");
        assert!(
            r.stderr
                .contains("Stack 'Other' (us-east-1) has a malformed lock ("),
            "{body}: {r:?}"
        );
        assert!(
            r.stderr
                .contains("cdkd-flow force-unlock Other --stack-region us-east-1"),
            "{r:?}"
        );
        let held = h::get_text(&h::s3().await, &bucket, &lock_key).await;
        assert_eq!(held.as_deref(), Some(body), "the lock body is unchanged");
        assert_eq!(
            get_json(&bucket, &key("Other", REGION, "state.json")).await,
            before
        );
        // --force removes it with the record, as a lock.
        let r = cli(&bucket, &["Other", "-f"]);
        assert_eq!(r.code, 0, "{body}: {r:?}");
        assert!(!keys(&bucket)
            .await
            .iter()
            .any(|k| k.starts_with("cdkd/Other/")));
    }
    let bucket = two_regions().await;
    h::put_raw(
        &h::s3().await,
        &bucket,
        &key("Other", REGION, "lock.json"),
        "null".to_string(),
    )
    .await;
    let r = cli(&bucket, &["Other", "-y"]);
    assert!(
        r.stderr.contains("(the lock body is not a JSON object)"),
        "{r:?}"
    );
}

#[tokio::test]
async fn orphan_rule_7_2_a_lock_body_that_is_not_an_object_refuses_the_resource_orphan_and_changes_nothing(
) {
    let bucket = shop().await;
    let lock_key = key("Shop", REGION, "lock.json");
    h::put_raw(&h::s3().await, &bucket, &lock_key, "[]".to_string()).await;
    let before = get_json(&bucket, &key("Shop", REGION, "state.json")).await;
    for force in [false, true] {
        let mut args = vec!["Shop", "--resource", "T", "-y"];
        if force {
            args.push("--force");
        }
        let r = cli(&bucket, &args);
        assert_eq!(r.code, 1, "{r:?}");
        assert!(
            r.stderr.contains(
                "Stack 'Shop' (us-east-1) has a malformed lock (the lock body is not a JSON object); nothing was changed."
            ),
            "{r:?}"
        );
        assert!(!r.stderr.contains("pass --force"), "{r:?}");
        let held = h::get_text(&h::s3().await, &bucket, &lock_key).await;
        assert_eq!(held.as_deref(), Some("[]"));
        assert_eq!(
            get_json(&bucket, &key("Shop", REGION, "state.json")).await,
            before
        );
    }
}

/// docs/repairs.md, "Ref values by type": a `Ref` is rewritten by the type's own rule
/// (the deployment id of `<deploymentId>|<restApiId>`, the public IP of an EIP), a type
/// without a known rule refuses the run naming `--ref-value`, and `--ref-value` supplies it.
#[tokio::test]
async fn orphan_cli_ref_rule_per_type_unknown_type_refused_and_ref_value_supplies_it() {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let resources = json!({
        "Dep": {"resourceType": "AWS::ApiGateway::Deployment", "physicalId": "dep1|api1"},
        "Ip": {"resourceType": "AWS::EC2::EIP", "physicalId": "203.0.113.9|eipalloc-1"},
        "Perm": {"resourceType": "AWS::Lambda::Permission", "physicalId": "stmt-1"},
        "Stage": {"resourceType": "AWS::ApiGateway::Stage", "physicalId": "api1|prod",
                  "properties": {"DeploymentId": {"Ref": "Dep"}, "Ip": {"Ref": "Ip"},
                                 "Perm": {"Ref": "Perm"}}}
    });
    let state = key("Api", REGION, "state.json");
    put_json(&bucket, &state, &record("Api", REGION, resources)).await;
    let before = get_json(&bucket, &state).await;
    let targets = [
        "Api",
        "--resource",
        "Dep",
        "--resource",
        "Ip",
        "--resource",
        "Perm",
        "-y",
    ];
    let r = cli(&bucket, &targets);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with("error: Orphan aborted: 1 reference(s)"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("Stage.properties.Perm: Ref Perm (cdkd-flow does not know what CloudFormation's Ref returns for AWS::Lambda::Permission; pass --ref-value Perm=<the value Ref returns>, or --force to keep the Ref)"),
        "{r:?}"
    );
    assert_eq!(get_json(&bucket, &state).await, before);
    // A --ref-value for an id that is not removed is a usage error, before any lock.
    let mut bad = targets.to_vec();
    bad.extend(["--ref-value", "Stage=x"]);
    let r = cli(&bucket, &bad);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("not one of the --resource ids"), "{r:?}");
    let mut good = targets.to_vec();
    good.extend(["--ref-value", "Perm=perm-ref"]);
    let r = cli(&bucket, &good);
    assert_eq!(r.code, 0, "{r:?}");
    let saved = get_json(&bucket, &state).await.expect("saved");
    assert_eq!(
        saved["resources"]["Stage"]["properties"],
        json!({"DeploymentId": "dep1", "Ip": "203.0.113.9", "Perm": "perm-ref"})
    );
}
